//! The texts of account e-mails. Links point at the front end (`FRONTEND_URL`), which posts
//! the token back to the API.

use sqlx::PgConnection;
use uuid::Uuid;

use crate::error::AppError;
use crate::platform::users::model::Email;

pub struct AccountMail {
    pub kind: &'static str,
    pub subject: String,
    pub body: String,
}

pub fn verification(frontend_url: &str, display_name: &str, token: &str) -> AccountMail {
    AccountMail {
        kind: "verify_email",
        subject: "Confirm your e-mail address for Kultiva".into(),
        body: format!(
            "Hello {display_name},\n\nplease confirm your e-mail address by opening this link \
             (valid for 48 hours):\n\n{frontend_url}/auth/verify-email?token={token}\n\n\
             If you did not create a Kultiva account, ignore this message. If someone else \
             registered this address, confirming it signs out every session and revokes every \
             API key made before; then reset the password to take the account over.\n"
        ),
    }
}

pub fn password_reset(frontend_url: &str, display_name: &str, token: &str) -> AccountMail {
    AccountMail {
        kind: "password_reset",
        subject: "Reset your Kultiva password".into(),
        body: format!(
            "Hello {display_name},\n\nsomeone asked to reset the password of your Kultiva \
             account. Open this link within one hour to choose a new one:\n\n\
             {frontend_url}/auth/reset-password?token={token}\n\n\
             Setting a new password signs out every session of the account and revokes all \
             of its API keys: log in again and create new keys afterwards.\n\n\
             If it was not you, ignore this message; your password stays as it is.\n"
        ),
    }
}

/// Queues the mail in the caller's transaction: it is sent only if the transaction commits.
/// Returns the outbox id.
pub async fn queue(
    conn: &mut PgConnection,
    to: &Email,
    mail: AccountMail,
) -> Result<Uuid, AppError> {
    let id = crate::mail::enqueue(
        conn,
        &crate::mail::OutgoingMail {
            recipient: to.as_str().to_owned(),
            subject: mail.subject,
            body_text: mail.body,
            kind: mail.kind.to_owned(),
        },
    )
    .await
    .map_err(AppError::internal)?;
    Ok(id)
}
