//! `platform.users`: SQL only, explicit columns.

use sqlx::postgres::PgRow;
use sqlx::{PgExecutor, Row};
use time::OffsetDateTime;
use uuid::Uuid;

use super::model::{AccountStatus, Credentials, Email, User};
use crate::directory::AccountType;

const USER_COLUMNS: &str = "id, email, display_name, account_type, email_verified, is_active, \
     avatar_url, locale, timezone, last_login_at, created_at";
/// The same columns of `platform.users u`, for joins (decoded by [`decode_user`] as well).
pub const USER_COLUMNS_OF_U: &str = "u.id, u.email, u.display_name, u.account_type, \
     u.email_verified, u.is_active, u.avatar_url, u.locale, u.timezone, u.last_login_at, \
     u.created_at";

fn account_type(row: &PgRow) -> Result<AccountType, sqlx::Error> {
    let raw: String = row.try_get("account_type")?;
    AccountType::parse(&raw)
        .ok_or_else(|| sqlx::Error::Decode(format!("unknown account_type {raw:?}").into()))
}

pub fn decode_user(row: &PgRow) -> Result<User, sqlx::Error> {
    Ok(User {
        key: row.try_get("id")?,
        email: row.try_get("email")?,
        display_name: row.try_get("display_name")?,
        account_type: account_type(row)?,
        email_verified: row.try_get("email_verified")?,
        is_active: row.try_get("is_active")?,
        avatar_url: row.try_get("avatar_url")?,
        locale: row.try_get("locale")?,
        timezone: row.try_get("timezone")?,
        last_login_at: row.try_get("last_login_at")?,
        created_at: row.try_get("created_at")?,
    })
}

pub struct NewAccount<'a> {
    pub email: Option<&'a Email>,
    pub display_name: &'a str,
    pub account_type: AccountType,
    pub password_hash: Option<&'a str>,
    pub email_verified: bool,
}

/// Inserts an account; `None` when the e-mail address is taken.
pub async fn insert(
    db: impl PgExecutor<'_>,
    new: &NewAccount<'_>,
) -> Result<Option<User>, sqlx::Error> {
    let sql = sqlx::AssertSqlSafe(format!(
        "INSERT INTO platform.users (id, email, display_name, account_type, password_hash, email_verified)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT DO NOTHING
         RETURNING {USER_COLUMNS}"
    ));
    let row = sqlx::query(sql)
        .bind(Uuid::now_v7())
        .bind(new.email.map(Email::as_str))
        .bind(new.display_name)
        .bind(new.account_type.as_str())
        .bind(new.password_hash)
        .bind(new.email_verified)
        .fetch_optional(db)
        .await?;
    row.as_ref().map(decode_user).transpose()
}

pub async fn get(db: impl PgExecutor<'_>, id: Uuid) -> Result<Option<User>, sqlx::Error> {
    let sql = sqlx::AssertSqlSafe(format!(
        "SELECT {USER_COLUMNS} FROM platform.users WHERE id = $1"
    ));
    let row = sqlx::query(sql).bind(id).fetch_optional(db).await?;
    row.as_ref().map(decode_user).transpose()
}

pub async fn find_by_email(
    db: impl PgExecutor<'_>,
    email: &Email,
) -> Result<Option<User>, sqlx::Error> {
    let sql = sqlx::AssertSqlSafe(format!(
        "SELECT {USER_COLUMNS} FROM platform.users WHERE email = $1"
    ));
    let row = sqlx::query(sql)
        .bind(email.as_str())
        .fetch_optional(db)
        .await?;
    row.as_ref().map(decode_user).transpose()
}

fn decode_credentials(row: &PgRow) -> Result<Credentials, sqlx::Error> {
    Ok(Credentials {
        user: decode_user(row)?,
        password_hash: row.try_get("password_hash")?,
        token_generation: row.try_get("token_generation")?,
        locked_until: row.try_get("locked_until")?,
    })
}

/// The account and its secrets, by e-mail (login).
pub async fn credentials_by_email(
    db: impl PgExecutor<'_>,
    email: &Email,
) -> Result<Option<Credentials>, sqlx::Error> {
    let sql = sqlx::AssertSqlSafe(format!(
        "SELECT {USER_COLUMNS}, password_hash, token_generation, locked_until
         FROM platform.users WHERE email = $1"
    ));
    let row = sqlx::query(sql)
        .bind(email.as_str())
        .fetch_optional(db)
        .await?;
    row.as_ref().map(decode_credentials).transpose()
}

pub async fn credentials_by_id(
    db: impl PgExecutor<'_>,
    id: Uuid,
) -> Result<Option<Credentials>, sqlx::Error> {
    let sql = sqlx::AssertSqlSafe(format!(
        "SELECT {USER_COLUMNS}, password_hash, token_generation, locked_until
         FROM platform.users WHERE id = $1"
    ));
    let row = sqlx::query(sql).bind(id).fetch_optional(db).await?;
    row.as_ref().map(decode_credentials).transpose()
}

/// The per-request check of an authenticated account, with its record.
pub async fn status(
    db: impl PgExecutor<'_>,
    id: Uuid,
) -> Result<Option<AccountStatus>, sqlx::Error> {
    let sql = sqlx::AssertSqlSafe(format!(
        "SELECT {USER_COLUMNS}, token_generation FROM platform.users WHERE id = $1"
    ));
    let row = sqlx::query(sql).bind(id).fetch_optional(db).await?;
    row.map(|row| {
        Ok(AccountStatus {
            user: decode_user(&row)?,
            token_generation: row.try_get("token_generation")?,
        })
    })
    .transpose()
}

/// Counts a failed login and, at the threshold, locks the account. One statement, so
/// concurrent failures cannot lose a count, and a failure that arrives while the account is
/// already locked (a concurrent guess locked it after this one read "not locked") neither
/// counts nor shortens anything. Returns the lock end when the account is locked after this
/// failure (locked by it or before it).
pub async fn record_failed_login(
    db: impl PgExecutor<'_>,
    id: Uuid,
    threshold: i32,
    lock_seconds_for: &(dyn Fn(i32) -> i64 + Sync),
) -> Result<Option<OffsetDateTime>, sqlx::Error> {
    // The lock length depends on the number of earlier locks; compute the ladder up front
    // (capped, so a short array covers every case).
    let ladder: Vec<i64> = (0..8).map(lock_seconds_for).collect();
    let row = sqlx::query(
        "UPDATE platform.users SET
             failed_logins = CASE WHEN locked_until > now() THEN failed_logins
                                  WHEN failed_logins + 1 >= $2 THEN 0 ELSE failed_logins + 1 END,
             lockouts      = CASE WHEN locked_until > now() THEN lockouts
                                  WHEN failed_logins + 1 >= $2 THEN lockouts + 1 ELSE lockouts END,
             locked_until  = CASE WHEN locked_until > now() THEN locked_until
                                  WHEN failed_logins + 1 >= $2
                                  THEN now() + make_interval(secs => ($3::bigint[])[LEAST(lockouts, 7) + 1])
                                  ELSE locked_until END,
             updated_at    = now()
         WHERE id = $1
         RETURNING CASE WHEN locked_until > now() THEN locked_until END AS lock",
    )
    .bind(id)
    .bind(threshold)
    .bind(&ladder)
    .fetch_optional(db)
    .await?;
    Ok(row.and_then(|r| r.try_get("lock").ok().flatten()))
}

/// Records a successful login unless the account got locked meanwhile (a concurrent guess
/// was the fifth failure while this password was being checked): then nothing changes and the
/// lock end is returned.
pub async fn record_login_success(
    db: &sqlx::PgPool,
    id: Uuid,
) -> Result<Result<(), OffsetDateTime>, sqlx::Error> {
    // The row lock of the UPDATE waits for a concurrent failure's UPDATE and then re-checks the
    // condition against the row as that one left it.
    let done = sqlx::query(
        "UPDATE platform.users SET failed_logins = 0, lockouts = 0, locked_until = NULL,
             last_login_at = now(), updated_at = now()
         WHERE id = $1 AND (locked_until IS NULL OR locked_until <= now())",
    )
    .bind(id)
    .execute(db)
    .await?;
    if done.rows_affected() == 1 {
        return Ok(Ok(()));
    }
    Ok(match current_lock(db, id).await? {
        Some(until) => Err(until),
        None => Ok(()),
    })
}

/// The end of the account's current lock, if it is locked now.
pub async fn current_lock(
    db: impl PgExecutor<'_>,
    id: Uuid,
) -> Result<Option<OffsetDateTime>, sqlx::Error> {
    let row = sqlx::query(
        "SELECT CASE WHEN locked_until > now() THEN locked_until END AS lock
         FROM platform.users WHERE id = $1",
    )
    .bind(id)
    .fetch_optional(db)
    .await?;
    Ok(row.and_then(|r| r.try_get("lock").ok().flatten()))
}

/// Ends every access token issued so far (logout-all, password change); returns the new
/// generation.
pub async fn bump_token_generation(db: impl PgExecutor<'_>, id: Uuid) -> Result<i32, sqlx::Error> {
    let row = sqlx::query(
        "UPDATE platform.users SET token_generation = token_generation + 1, updated_at = now()
         WHERE id = $1 RETURNING token_generation",
    )
    .bind(id)
    .fetch_one(db)
    .await?;
    row.try_get("token_generation")
}

/// Sets a new password and clears any lock. Callers end the sessions with
/// [`bump_token_generation`] (the one writer of the generation).
pub async fn set_password(
    db: impl PgExecutor<'_>,
    id: Uuid,
    password_hash: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE platform.users SET password_hash = $2, failed_logins = 0, lockouts = 0,
             locked_until = NULL, updated_at = now()
         WHERE id = $1 AND account_type = 'user'",
    )
    .bind(id)
    .bind(password_hash)
    .execute(db)
    .await?;
    Ok(())
}

/// Marks the address confirmed; `true` when this was its first confirmation.
pub async fn mark_email_verified(db: impl PgExecutor<'_>, id: Uuid) -> Result<bool, sqlx::Error> {
    let done = sqlx::query(
        "UPDATE platform.users SET email_verified = true, updated_at = now()
         WHERE id = $1 AND NOT email_verified",
    )
    .bind(id)
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

pub struct ProfileChange<'a> {
    pub display_name: Option<&'a str>,
    pub locale: Option<&'a str>,
    pub timezone: Option<&'a str>,
    /// `Some(None)` clears the avatar.
    pub avatar_url: Option<Option<&'a str>>,
}

pub async fn update_profile(
    db: impl PgExecutor<'_>,
    id: Uuid,
    change: &ProfileChange<'_>,
) -> Result<Option<User>, sqlx::Error> {
    let sql = sqlx::AssertSqlSafe(format!(
        "UPDATE platform.users SET
             display_name = COALESCE($2, display_name),
             locale = COALESCE($3, locale),
             timezone = COALESCE($4, timezone),
             avatar_url = CASE WHEN $5 THEN $6 ELSE avatar_url END,
             updated_at = now()
         WHERE id = $1
         RETURNING {USER_COLUMNS}"
    ));
    let row = sqlx::query(sql)
        .bind(id)
        .bind(change.display_name)
        .bind(change.locale)
        .bind(change.timezone)
        .bind(change.avatar_url.is_some())
        .bind(change.avatar_url.flatten())
        .fetch_optional(db)
        .await?;
    row.as_ref().map(decode_user).transpose()
}

pub async fn set_active(
    db: impl PgExecutor<'_>,
    id: Uuid,
    active: bool,
) -> Result<Option<User>, sqlx::Error> {
    let sql = sqlx::AssertSqlSafe(format!(
        "UPDATE platform.users SET is_active = $2, updated_at = now() WHERE id = $1
         RETURNING {USER_COLUMNS}"
    ));
    let row = sqlx::query(sql)
        .bind(id)
        .bind(active)
        .fetch_optional(db)
        .await?;
    row.as_ref().map(decode_user).transpose()
}

/// Platform admin search over all accounts (e-mail or display name contains `q`).
pub async fn search(
    db: &sqlx::PgPool,
    q: Option<&str>,
    account_type: Option<AccountType>,
    skip: i64,
    limit: i64,
) -> Result<(i64, Vec<User>), sqlx::Error> {
    let pattern = q.map(|q| format!("%{}%", escape_like(&q.to_lowercase())));
    const FILTER: &str = "($1::text IS NULL OR email LIKE $1 OR lower(display_name) LIKE $1)
           AND ($2::text IS NULL OR account_type = $2)";
    let count_sql = sqlx::AssertSqlSafe(format!(
        "SELECT count(*) AS total FROM platform.users WHERE {FILTER}"
    ));
    let total: i64 = sqlx::query(count_sql)
        .bind(&pattern)
        .bind(account_type.map(AccountType::as_str))
        .fetch_one(db)
        .await?
        .try_get("total")?;
    let sql = sqlx::AssertSqlSafe(format!(
        "SELECT {USER_COLUMNS} FROM platform.users WHERE {FILTER}
         ORDER BY created_at, id OFFSET $3 LIMIT $4"
    ));
    let rows = sqlx::query(sql)
        .bind(&pattern)
        .bind(account_type.map(AccountType::as_str))
        .bind(skip)
        .bind(limit)
        .fetch_all(db)
        .await?;
    let users = rows.iter().map(decode_user).collect::<Result<_, _>>()?;
    Ok((total, users))
}

/// `LIKE` wildcards in user text are literal.
pub fn escape_like(raw: &str) -> String {
    raw.replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_")
}
