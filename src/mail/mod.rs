//! Outgoing e-mail. Callers queue a mail in the outbox (`platform.mail_outbox`) inside their own
//! transaction, so it exists only if that transaction commits, then call
//! [`AppState::mail_wakeup`](crate::state::AppState::mail_wakeup). The delivery worker of every
//! serving process claims due mails and sends them over SMTP (`SMTP_URL`), or writes them to the
//! log when no SMTP server is configured. Failed attempts are retried with exponential backoff
//! (see [`crate::rules::mail`]) until the mail is marked `failed`.

pub mod outbox;
pub mod transport;
pub mod worker;

/// A mail to queue.
#[derive(Debug, Clone)]
pub struct OutgoingMail {
    pub recipient: String,
    pub subject: String,
    pub body_text: String,
    /// What the mail is for (`verify_email`, `password_reset`): logs and the outbox show it.
    pub kind: String,
}

pub use outbox::enqueue;
