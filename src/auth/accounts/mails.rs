//! The texts of account e-mails. Links point at the front end (`FRONTEND_URL`), which posts
//! the token back to the API.

use std::sync::LazyLock;

use redis::Script;
use sha2::{Digest, Sha256};
use sqlx::PgConnection;
use uuid::Uuid;

use crate::directory::users::model::Email;
use crate::error::AppError;
use crate::state::AppState;

/// One fixed hour window per address: the first mail starts it.
static COUNT_MAIL: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return {n, redis.call('TTL', KEYS[1])}
",
    )
});

/// Counts one more account mail (verification, password reset, invitation) to `to` and says
/// whether it is within `MAIL_PER_ADDRESS_PER_HOUR`. Over the budget, or without Redis, the
/// mail is not sent (the caller's answer stays the same). The address is keyed by its SHA-256.
pub async fn within_hourly_budget(state: &AppState, to: &Email) -> bool {
    let digest = hex::encode(Sha256::digest(to.as_str().as_bytes()));
    match count_this_hour(state, "mailq", &digest).await {
        Ok(HourCount { n, .. }) => {
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

/// Events counted in the current hour window, and the seconds until it ends.
#[derive(Debug, Clone, Copy)]
pub struct HourCount {
    pub n: i64,
    pub seconds_left: u64,
}

/// Counts one more event of `class` for `identity` in a fixed hour window (the first event
/// starts it) and returns the count. The key is `<prefix>:<class>:{<identity>}`, one hash
/// slot per identity (cluster-safe).
pub async fn count_this_hour(
    state: &AppState,
    class: &str,
    identity: &str,
) -> Result<HourCount, redis::RedisError> {
    let key = state.redis_key(class, identity, &[]);
    let mut conn = state.shared_redis().connection().await?;
    let (n, ttl) = COUNT_MAIL
        .key(key)
        .arg(3600)
        .invoke_async::<(i64, i64)>(&mut conn)
        .await?;
    // TTL is -1/-2 only if the key lost its expiry or vanished in between: a full hour then.
    let seconds_left = u64::try_from(ttl).ok().filter(|s| *s > 0).unwrap_or(3600);
    Ok(HourCount { n, seconds_left })
}

pub struct AccountMail {
    pub kind: &'static str,
    pub subject: String,
    pub body: String,
}

// Account mails greet nobody by name: the display name was written by whoever registered the
// address, who may not own the mailbox (a squatter's text never reaches the owner this way).

pub fn verification(frontend_url: &str, token: &str) -> AccountMail {
    AccountMail {
        kind: "verify_email",
        subject: "Confirm your e-mail address for Kultiva".into(),
        body: format!(
            "Hello,\n\nplease confirm your e-mail address by opening this link \
             (valid for 48 hours):\n\n{frontend_url}/auth/verify-email?token={token}\n\n\
             If you did not create a Kultiva account, ignore this message. If someone else \
             registered this address, confirming it signs out every session and revokes every \
             API key made before, and ends everything the account set up (a mail then lists \
             what was ended); then reset the password to take the account over.\n"
        ),
    }
}

pub fn password_reset(frontend_url: &str, token: &str) -> AccountMail {
    AccountMail {
        kind: "password_reset",
        subject: "Reset your Kultiva password".into(),
        body: format!(
            "Hello,\n\nsomeone asked to reset the password of your Kultiva \
             account. Open this link within one hour to choose a new one:\n\n\
             {frontend_url}/auth/reset-password?token={token}\n\n\
             Setting a new password signs out every session of the account, revokes all of \
             its API keys and ends what the account set up: its service accounts, calendar \
             feeds, pending invitations, sign-in provider links, push subscriptions and \
             webhooks, and the members who joined through its invitations are removed. A mail \
             afterwards lists what was ended. Log in again and create new keys afterwards.\n\n\
             If it was not you, ignore this message; your password stays as it is.\n"
        ),
    }
}

/// Why an account was taken back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TakeBack {
    PasswordReset,
    FirstConfirmation,
}

/// The notice after a take-back: what was ended, kind by kind.
pub fn taken_back(why: TakeBack, ended: &crate::directory::grants::Ended) -> AccountMail {
    let (kind, subject, what) = match why {
        TakeBack::PasswordReset => (
            "password_reset_done",
            "Your Kultiva password was changed",
            "The password of your Kultiva account was just set with a reset link.",
        ),
        TakeBack::FirstConfirmation => (
            "email_confirmed",
            "Your e-mail address is confirmed on Kultiva",
            "Your e-mail address was just confirmed for your Kultiva account.",
        ),
    };
    let mut list = vec!["- every session of the account signed out".to_owned()];
    list.extend(ended.lines());
    let service_accounts = if ended.service_accounts.is_empty() {
        String::new()
    } else {
        let names: Vec<String> = ended
            .service_accounts
            .iter()
            .map(|n| format!("> {}", crate::rules::mail::quoted_user_text(n)))
            .collect();
        format!(
            "\nThe deactivated service accounts (names as their maker wrote them):\n{}\n",
            names.join("\n")
        )
    };
    AccountMail {
        kind,
        subject: subject.into(),
        body: format!(
            "Hello,\n\n{what} This is what was ended:\n\n\
             {}\n{service_accounts}\n\
             Create new API keys, service accounts, calendar feeds and webhooks where you need \
             them, and invite again the members you want in your gardens.\n",
            list.join("\n")
        ),
    }
}

/// To a member removed from a garden because it joined through an invitation from an account
/// that its owner has since taken back. The garden's name is user text: quoted.
pub fn removed_after_take_back(garden: &str) -> AccountMail {
    AccountMail {
        kind: "membership_ended_take_back",
        subject: "You were removed from a garden on Kultiva".into(),
        body: format!(
            "Hello,\n\nyou were removed from a garden on Kultiva that names itself (its words, \
             not Kultiva's):\n\n> Garden: {}\n\n\
             You had joined it through an invitation from an account that the owner of its \
             e-mail address has since taken back: whoever sent the invitation may not have \
             been that owner. What you had set up in the garden (service accounts, webhooks, \
             invitations, calendar feed) has ended with the membership. If you belong there, \
             ask the garden's admins to invite you again.\n",
            crate::rules::mail::quoted_user_text(garden)
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
