//! The texts of account e-mails. Links point at the front end (`FRONTEND_URL`), which posts
//! the token back to the API.

use std::sync::LazyLock;

use redis::Script;
use sha2::{Digest, Sha256};
use sqlx::PgConnection;
use uuid::Uuid;

use crate::error::AppError;
use crate::platform::users::model::Email;
use crate::state::AppState;

/// One fixed hour window per address: the first mail starts it.
static COUNT_MAIL: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return n
",
    )
});

/// Counts one more account mail (verification, password reset, invitation) to `to` and says
/// whether it is within `MAIL_PER_ADDRESS_PER_HOUR`. Over the budget, or without Redis, the
/// mail is not sent (the caller's answer stays the same). The address is keyed by its SHA-256.
pub async fn within_hourly_budget(state: &AppState, to: &Email) -> bool {
    let digest = hex::encode(Sha256::digest(to.as_str().as_bytes()));
    let key = state.redis_key("mailq", &digest, &[]);
    let counted = async {
        let mut conn = state.shared_redis().connection().await?;
        COUNT_MAIL
            .key(key)
            .arg(3600)
            .invoke_async::<i64>(&mut conn)
            .await
    };
    match counted.await {
        Ok(n) => {
            let allowed = n <= i64::from(state.config().mail_per_address_per_hour);
            if !allowed {
                tracing::info!("account mail not sent: the address had its hourly mails");
            }
            allowed
        }
        Err(err) => {
            crate::metrics::redis_error(crate::metrics::RedisUse::MailThrottle);
            tracing::warn!(error = %err, "account mail not sent: its throttle is unavailable");
            false
        }
    }
}

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
