//! Where mails go: an SMTP server (`SMTP_URL`, through lettre) or, without one, the log.
//!
//! `SMTP_URL` forms: `smtp://[user:pass@]host[:port]` (plain, port 25; for a relay on the same
//! machine or network), `smtp://user:pass@host:587?tls=required` (STARTTLS, refused if the server
//! does not offer it), `smtps://user:pass@host[:465]` (TLS from the first byte). Certificates are
//! checked against the Mozilla roots. Credentials over plain SMTP are accepted only for a
//! loopback host, so a password never crosses a network in clear text.

use std::str::FromStr;
use std::time::Duration;

use lettre::message::Mailbox;
use lettre::message::header::ContentType;
use lettre::transport::smtp::AsyncSmtpTransport;
use lettre::{AsyncTransport, Message, Tokio1Executor};

use super::outbox::{Claimed, Delivered};
use crate::config::Config;
use crate::rules::mail::redacted_recipient;

/// Longest wait for any single step of an SMTP conversation.
pub const SMTP_TIMEOUT: Duration = Duration::from_secs(20);

/// Why an attempt failed.
#[derive(Debug, Clone)]
pub struct DeliveryError {
    /// The server refused for good (5xx) or the mail cannot be built: do not retry.
    pub permanent: bool,
    pub message: String,
}

impl DeliveryError {
    fn permanent(message: impl Into<String>) -> Self {
        Self {
            permanent: true,
            message: message.into(),
        }
    }
}

/// The configured way out.
pub enum Transport {
    Smtp {
        smtp: Box<AsyncSmtpTransport<Tokio1Executor>>,
        from: Mailbox,
    },
    /// No `SMTP_URL`: the mail goes to the log, its text only in debug mode (it holds links).
    Log { full_text: bool },
}

impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Smtp { from, .. } => write!(f, "Transport::Smtp(from {from})"),
            Self::Log { full_text } => write!(f, "Transport::Log(full_text {full_text})"),
        }
    }
}

impl Transport {
    /// Builds the transport from the (already validated) configuration.
    pub fn from_config(config: &Config) -> Result<Self, String> {
        let Some(url) = &config.smtp_url else {
            return Ok(Self::Log {
                full_text: config.debug,
            });
        };
        let smtp = AsyncSmtpTransport::<Tokio1Executor>::from_url(url.expose())
            .map_err(|_| "SMTP_URL is not usable as an SMTP server address".to_owned())?
            .timeout(Some(SMTP_TIMEOUT))
            .build();
        let from = Mailbox::from_str(&config.mail_from).map_err(|e| format!("MAIL_FROM: {e}"))?;
        Ok(Self::Smtp {
            smtp: Box::new(smtp),
            from,
        })
    }

    pub async fn deliver(&self, mail: &Claimed) -> Result<Delivered, DeliveryError> {
        match self {
            Self::Log { full_text } => {
                if *full_text {
                    tracing::info!(kind = %mail.kind, to = %mail.recipient, subject = %mail.subject,
                        body = %mail.body_text, "mail not sent (SMTP_URL is unset); its text follows");
                } else {
                    tracing::info!(kind = %mail.kind, to = %redacted_recipient(&mail.recipient),
                        "mail not sent (SMTP_URL is unset); set DEBUG=true to log its text");
                }
                Ok(Delivered::Logged)
            }
            Self::Smtp { smtp, from } => {
                let message = build_message(from, mail)?;
                smtp.send(message).await.map_err(|e| DeliveryError {
                    permanent: e.is_permanent(),
                    message: e.to_string(),
                })?;
                Ok(Delivered::Sent)
            }
        }
    }
}

fn build_message(from: &Mailbox, mail: &Claimed) -> Result<Message, DeliveryError> {
    let to = Mailbox::from_str(&mail.recipient)
        .map_err(|e| DeliveryError::permanent(format!("recipient address refused: {e}")))?;
    let domain = from.email.domain().to_owned();
    Message::builder()
        .from(from.clone())
        .to(to)
        .subject(mail.subject.clone())
        .message_id(Some(format!("<{}@{domain}>", mail.id.simple())))
        .header(ContentType::TEXT_PLAIN)
        .body(mail.body_text.clone())
        .map_err(|e| DeliveryError::permanent(format!("mail could not be built: {e}")))
}

#[cfg(test)]
mod tests {
    use crate::config::{check_mail_from, check_smtp_url};

    #[test]
    fn smtp_urls_are_checked() {
        let accepted = [
            "smtp://127.0.0.1:2525",
            "smtp://localhost",
            "smtp://user:pass@127.0.0.1:2525",
            "smtp://mail.example.org:25",
            "smtp://user:pass@mail.example.org:587?tls=required",
            "smtp://mail.example.org:587?tls=opportunistic",
            "smtps://user:p%40ss@mail.example.org",
            "smtps://user:pass@mail.example.org:465",
        ];
        for url in accepted {
            assert_eq!(check_smtp_url(url), Ok(()), "{url}");
        }
        let refused = [
            "mail.example.org",
            "http://mail.example.org",
            "smtp://",
            "smtp://user:s3cr3t@mail.example.org:25",
            "smtp://user:s3cr3t@mail.example.org:587?tls=opportunistic",
            "smtp://mail.example.org?tls=always",
            "smtps://mail.example.org?tls=required",
            "smtp://mail.example.org?foo=bar",
            "smtp://user@127.0.0.1",
        ];
        for url in refused {
            let err = check_smtp_url(url).expect_err(url);
            assert!(
                !err.contains("s3cr3t"),
                "{url}: the message repeats the password: {err}"
            );
        }
    }

    #[test]
    fn mail_from_is_a_mailbox() {
        for ok in [
            "Kultiva <no-reply@localhost>",
            "no-reply@example.org",
            "\"Kultiva, the garden\" <k@example.org>",
        ] {
            assert_eq!(check_mail_from(ok), Ok(()), "{ok}");
        }
        for bad in ["", "Kultiva", "<>", "a@b@c"] {
            assert!(check_mail_from(bad).is_err(), "{bad}");
        }
    }
}
