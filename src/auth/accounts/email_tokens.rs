//! One-time e-mail tokens (`platform.email_tokens`): only the digest is stored; consuming one is
//! a single statement, so a token works exactly once even under concurrent use.

use sqlx::{PgExecutor, Row};
use time::Duration;
use uuid::Uuid;

use crate::auth::secrets::{SecretHash, random_secret};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    VerifyEmail,
    PasswordReset,
    /// Confirms the erasure of an account that has no password (`DELETE /users/me`).
    ConfirmErasure,
}

impl Purpose {
    fn as_str(self) -> &'static str {
        match self {
            Self::VerifyEmail => "verify_email",
            Self::PasswordReset => "password_reset",
            Self::ConfirmErasure => "confirm_erasure",
        }
    }

    /// How long a link works.
    pub fn lifetime(self) -> Duration {
        match self {
            Self::VerifyEmail => Duration::hours(48),
            Self::PasswordReset | Self::ConfirmErasure => Duration::hours(1),
        }
    }
}

/// Stores a fresh token and returns the raw value for the link.
pub async fn issue(
    db: impl PgExecutor<'_>,
    user: Uuid,
    purpose: Purpose,
) -> Result<String, sqlx::Error> {
    let token = random_secret();
    sqlx::query(
        "INSERT INTO platform.email_tokens (token_hash, user_id, purpose, expires_at)
         VALUES ($1, $2, $3, now() + make_interval(secs => $4))",
    )
    .bind(SecretHash::of(&token).as_bytes().as_slice())
    .bind(user)
    .bind(purpose.as_str())
    .bind(purpose.lifetime().whole_seconds() as f64)
    .execute(db)
    .await?;
    Ok(token)
}

/// Uses a token up; the account it belongs to, or `None` when unknown, used or expired.
pub async fn consume(
    db: impl PgExecutor<'_>,
    token: &str,
    purpose: Purpose,
) -> Result<Option<Uuid>, sqlx::Error> {
    let row = sqlx::query(
        "UPDATE platform.email_tokens SET used_at = now()
         WHERE token_hash = $1 AND purpose = $2 AND used_at IS NULL AND expires_at > now()
         RETURNING user_id",
    )
    .bind(SecretHash::of(token).as_bytes().as_slice())
    .bind(purpose.as_str())
    .fetch_optional(db)
    .await?;
    row.map(|r| r.try_get("user_id")).transpose()
}

/// Earlier unused tokens of the same purpose stop working when a new one is sent.
pub async fn retire_unused(
    db: impl PgExecutor<'_>,
    user: Uuid,
    purpose: Purpose,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE platform.email_tokens SET used_at = now()
         WHERE user_id = $1 AND purpose = $2 AND used_at IS NULL",
    )
    .bind(user)
    .bind(purpose.as_str())
    .execute(db)
    .await?;
    Ok(())
}
