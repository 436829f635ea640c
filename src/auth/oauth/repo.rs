//! `platform.identity_providers` and `platform.federated_identities`: SQL only, explicit
//! columns.

use sqlx::postgres::PgRow;
use sqlx::{PgExecutor, Row};
use uuid::Uuid;

use super::model::{Identity, Provider};

const COLUMNS: &str = "slug, display_name, icon_url, issuer, authorize_url, token_url, jwks_url, \
     token_auth_method, client_id, scopes, enabled, trust_email, created_at, updated_at";

fn decode(row: &PgRow) -> Result<Provider, sqlx::Error> {
    Ok(Provider {
        slug: row.try_get("slug")?,
        display_name: row.try_get("display_name")?,
        icon_url: row.try_get("icon_url")?,
        issuer: row.try_get("issuer")?,
        authorize_url: row.try_get("authorize_url")?,
        token_url: row.try_get("token_url")?,
        jwks_url: row.try_get("jwks_url")?,
        token_auth_method: row.try_get("token_auth_method")?,
        client_id: row.try_get("client_id")?,
        scopes: row.try_get("scopes")?,
        enabled: row.try_get("enabled")?,
        trust_email: row.try_get("trust_email")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

/// Every provider, or only the enabled ones (the login page).
pub async fn list(
    db: impl PgExecutor<'_>,
    enabled_only: bool,
) -> Result<Vec<Provider>, sqlx::Error> {
    let sql = format!(
        "SELECT {COLUMNS} FROM platform.identity_providers \
         WHERE enabled OR NOT $1 ORDER BY display_name, slug"
    );
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(enabled_only)
        .fetch_all(db)
        .await?
        .iter()
        .map(decode)
        .collect()
}

pub async fn find(db: impl PgExecutor<'_>, slug: &str) -> Result<Option<Provider>, sqlx::Error> {
    let sql = format!("SELECT {COLUMNS} FROM platform.identity_providers WHERE slug = $1");
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(slug)
        .fetch_optional(db)
        .await?
        .as_ref()
        .map(decode)
        .transpose()
}

pub struct NewRow<'a> {
    pub slug: &'a str,
    pub display_name: &'a str,
    pub icon_url: Option<&'a str>,
    pub issuer: &'a str,
    pub authorize_url: Option<&'a str>,
    pub token_url: Option<&'a str>,
    pub jwks_url: Option<&'a str>,
    pub token_auth_method: Option<&'a str>,
    pub client_id: &'a str,
    pub client_secret_encrypted: &'a str,
    pub scopes: &'a str,
    pub trust_email: bool,
}

/// Inserts the provider; `None` when the slug is taken.
pub async fn insert(
    db: impl PgExecutor<'_>,
    new: &NewRow<'_>,
) -> Result<Option<Provider>, sqlx::Error> {
    let sql = format!(
        "INSERT INTO platform.identity_providers \
           (slug, display_name, icon_url, issuer, authorize_url, token_url, jwks_url, \
            token_auth_method, client_id, client_secret_encrypted, scopes, trust_email) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) \
         ON CONFLICT (slug) DO NOTHING RETURNING {COLUMNS}"
    );
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(new.slug)
        .bind(new.display_name)
        .bind(new.icon_url)
        .bind(new.issuer)
        .bind(new.authorize_url)
        .bind(new.token_url)
        .bind(new.jwks_url)
        .bind(new.token_auth_method)
        .bind(new.client_id)
        .bind(new.client_secret_encrypted)
        .bind(new.scopes)
        .bind(new.trust_email)
        .fetch_optional(db)
        .await?
        .as_ref()
        .map(decode)
        .transpose()
}

/// Switches new logins on or off and/or the trust in the provider's `email_verified` (`None`
/// in a field: kept); `None` when there is no such provider.
pub async fn update(
    db: impl PgExecutor<'_>,
    slug: &str,
    enabled: Option<bool>,
    trust_email: Option<bool>,
) -> Result<Option<Provider>, sqlx::Error> {
    let sql = format!(
        "UPDATE platform.identity_providers \
         SET enabled = coalesce($2, enabled), trust_email = coalesce($3, trust_email), \
             updated_at = now() \
         WHERE slug = $1 RETURNING {COLUMNS}"
    );
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(slug)
        .bind(enabled)
        .bind(trust_email)
        .fetch_optional(db)
        .await?
        .as_ref()
        .map(decode)
        .transpose()
}

/// The encrypted client secret (for the code exchange).
pub async fn encrypted_secret(
    db: impl PgExecutor<'_>,
    slug: &str,
) -> Result<Option<String>, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT client_secret_encrypted FROM platform.identity_providers WHERE slug = $1",
    )
    .bind(slug)
    .fetch_optional(db)
    .await
}

/// Why a provider was not deleted.
pub enum Deleted {
    Yes,
    NotFound,
    /// Accounts sign in with it.
    InUse,
}

/// Removes the provider unless accounts have identities with it.
pub async fn delete(db: impl PgExecutor<'_>, slug: &str) -> Result<Deleted, sqlx::Error> {
    let done = sqlx::query("DELETE FROM platform.identity_providers p WHERE slug = $1")
        .bind(slug)
        .execute(db)
        .await;
    match done {
        Ok(done) if done.rows_affected() == 1 => Ok(Deleted::Yes),
        Ok(_) => Ok(Deleted::NotFound),
        // An identity added meanwhile: the foreign key refuses.
        Err(sqlx::Error::Database(e)) if e.is_foreign_key_violation() => Ok(Deleted::InUse),
        Err(e) => Err(e),
    }
}

const IDENTITY_COLUMNS: &str = "i.id, i.provider, p.display_name AS provider_name, i.email, \
     i.created_at, i.last_login_at";

fn decode_identity(row: &PgRow) -> Result<Identity, sqlx::Error> {
    Ok(Identity {
        id: row.try_get("id")?,
        provider: row.try_get("provider")?,
        provider_name: row.try_get("provider_name")?,
        email: row.try_get("email")?,
        created_at: row.try_get("created_at")?,
        last_login_at: row.try_get("last_login_at")?,
    })
}

/// The account an identity signs in to.
pub async fn identity_owner(
    db: impl PgExecutor<'_>,
    provider: &str,
    subject: &str,
) -> Result<Option<Uuid>, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT user_id FROM platform.federated_identities WHERE provider = $1 AND subject = $2",
    )
    .bind(provider)
    .bind(subject)
    .fetch_optional(db)
    .await
}

/// Links an identity to an account; `false` when `(provider, subject)` is linked already.
pub async fn insert_identity(
    db: impl PgExecutor<'_>,
    user: Uuid,
    provider: &str,
    subject: &str,
    email: Option<&str>,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query(
        "INSERT INTO platform.federated_identities \
           (id, user_id, provider, subject, email, last_login_at) \
         VALUES ($1, $2, $3, $4, $5, now()) ON CONFLICT (provider, subject) DO NOTHING",
    )
    .bind(Uuid::now_v7())
    .bind(user)
    .bind(provider)
    .bind(subject)
    .bind(email)
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// A sign-in with the identity: the time and the address the provider named this time.
pub async fn touch_identity(
    db: impl PgExecutor<'_>,
    provider: &str,
    subject: &str,
    email: Option<&str>,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE platform.federated_identities SET last_login_at = now(), email = $3 \
         WHERE provider = $1 AND subject = $2",
    )
    .bind(provider)
    .bind(subject)
    .bind(email)
    .execute(db)
    .await?;
    Ok(())
}

pub async fn identities_of(
    db: impl PgExecutor<'_>,
    user: Uuid,
) -> Result<Vec<Identity>, sqlx::Error> {
    let sql = format!(
        "SELECT {IDENTITY_COLUMNS} FROM platform.federated_identities i \
         JOIN platform.identity_providers p ON p.slug = i.provider \
         WHERE i.user_id = $1 ORDER BY i.created_at, i.id"
    );
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(user)
        .fetch_all(db)
        .await?
        .iter()
        .map(decode_identity)
        .collect()
}

/// Locks the account's row (a concurrent unlink waits) and tells whether it has a password
/// and how many identities.
pub async fn sign_in_ways_for_update(
    db: impl PgExecutor<'_>,
    user: Uuid,
) -> Result<(bool, i64), sqlx::Error> {
    let row = sqlx::query(
        "SELECT u.password_hash IS NOT NULL AS has_password, \
                (SELECT count(*) FROM platform.federated_identities i WHERE i.user_id = u.id) AS identities \
         FROM platform.users u WHERE u.id = $1 FOR UPDATE",
    )
    .bind(user)
    .fetch_optional(db)
    .await?;
    match row {
        Some(row) => Ok((row.try_get("has_password")?, row.try_get("identities")?)),
        None => Ok((false, 0)),
    }
}

/// Removes one identity of the account; the provider's slug, or `None` when it has no such.
pub async fn delete_identity(
    db: impl PgExecutor<'_>,
    user: Uuid,
    id: Uuid,
) -> Result<Option<String>, sqlx::Error> {
    sqlx::query_scalar(
        "DELETE FROM platform.federated_identities WHERE user_id = $1 AND id = $2 RETURNING provider",
    )
    .bind(user)
    .bind(id)
    .fetch_optional(db)
    .await
}
