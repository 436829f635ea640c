//! `platform.identity_providers`: SQL only, explicit columns.

use sqlx::postgres::PgRow;
use sqlx::{PgExecutor, Row};

use super::model::Provider;

const COLUMNS: &str =
    "slug, display_name, icon_url, authorize_url, token_url, client_id, scopes, created_at";

fn decode(row: &PgRow) -> Result<Provider, sqlx::Error> {
    Ok(Provider {
        slug: row.try_get("slug")?,
        display_name: row.try_get("display_name")?,
        icon_url: row.try_get("icon_url")?,
        authorize_url: row.try_get("authorize_url")?,
        token_url: row.try_get("token_url")?,
        client_id: row.try_get("client_id")?,
        scopes: row.try_get("scopes")?,
        created_at: row.try_get("created_at")?,
    })
}

pub async fn list(db: impl PgExecutor<'_>) -> Result<Vec<Provider>, sqlx::Error> {
    let sql =
        format!("SELECT {COLUMNS} FROM platform.identity_providers ORDER BY display_name, slug");
    sqlx::query(sqlx::AssertSqlSafe(sql))
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
    pub authorize_url: &'a str,
    pub token_url: &'a str,
    pub client_id: &'a str,
    pub client_secret_encrypted: &'a str,
    pub scopes: &'a str,
}

/// Inserts the provider; `None` when the slug is taken.
pub async fn insert(
    db: impl PgExecutor<'_>,
    new: &NewRow<'_>,
) -> Result<Option<Provider>, sqlx::Error> {
    let sql = format!(
        "INSERT INTO platform.identity_providers \
           (slug, display_name, icon_url, authorize_url, token_url, client_id, \
            client_secret_encrypted, scopes) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
         ON CONFLICT (slug) DO NOTHING RETURNING {COLUMNS}"
    );
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(new.slug)
        .bind(new.display_name)
        .bind(new.icon_url)
        .bind(new.authorize_url)
        .bind(new.token_url)
        .bind(new.client_id)
        .bind(new.client_secret_encrypted)
        .bind(new.scopes)
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

/// Removes the provider; false when there was none.
pub async fn delete(db: impl PgExecutor<'_>, slug: &str) -> Result<bool, sqlx::Error> {
    let done = sqlx::query("DELETE FROM platform.identity_providers WHERE slug = $1")
        .bind(slug)
        .execute(db)
        .await?;
    Ok(done.rows_affected() == 1)
}
