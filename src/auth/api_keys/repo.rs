//! `platform.api_keys`: SQL only. Keys are found by the SHA-256 of the raw key.

use sqlx::postgres::PgRow;
use sqlx::{PgExecutor, Row};
use time::OffsetDateTime;
use uuid::Uuid;

use super::model::ApiKey;
use crate::auth::secrets::SecretHash;
use crate::directory::users::model::User;
use crate::directory::users::repo::{USER_COLUMNS_OF_U, decode_user};

const KEY_COLUMNS: &str = "k.id, k.label, k.key_prefix, t.slug AS scope_slug, k.created_at, \
     k.last_used_at, k.revoked_at";

fn decode(row: &PgRow) -> Result<ApiKey, sqlx::Error> {
    Ok(ApiKey {
        key: row.try_get("id")?,
        label: row.try_get("label")?,
        raw_key: None,
        key_prefix: row.try_get("key_prefix")?,
        tenant_scope: row.try_get("scope_slug")?,
        created_at: row.try_get("created_at")?,
        last_used_at: row.try_get("last_used_at")?,
        revoked_at: row.try_get("revoked_at")?,
    })
}

pub struct NewKeyRow<'a> {
    pub user: Uuid,
    pub label: &'a str,
    pub key_prefix: &'a str,
    pub hash: SecretHash,
    pub tenant_scope: Option<Uuid>,
}

pub async fn insert(db: impl PgExecutor<'_>, new: &NewKeyRow<'_>) -> Result<ApiKey, sqlx::Error> {
    let sql = sqlx::AssertSqlSafe(format!(
        "WITH k AS (
             INSERT INTO platform.api_keys (id, user_id, label, key_prefix, key_hash, tenant_scope_id)
             VALUES ($1, $2, $3, $4, $5, $6)
             RETURNING id, label, key_prefix, tenant_scope_id, created_at, last_used_at, revoked_at)
         SELECT {KEY_COLUMNS} FROM k LEFT JOIN platform.tenants t ON t.id = k.tenant_scope_id"
    ));
    let row = sqlx::query(sql)
        .bind(Uuid::now_v7())
        .bind(new.user)
        .bind(new.label)
        .bind(new.key_prefix)
        .bind(new.hash.as_bytes().as_slice())
        .bind(new.tenant_scope)
        .fetch_one(db)
        .await?;
    decode(&row)
}

/// Keys of one account, newest first (revoked ones included, marked).
pub async fn list_for_user(
    db: impl PgExecutor<'_>,
    user: Uuid,
) -> Result<Vec<ApiKey>, sqlx::Error> {
    let sql = sqlx::AssertSqlSafe(format!(
        "SELECT {KEY_COLUMNS} FROM platform.api_keys k
         LEFT JOIN platform.tenants t ON t.id = k.tenant_scope_id
         WHERE k.user_id = $1 ORDER BY k.created_at DESC, k.id"
    ));
    let rows = sqlx::query(sql).bind(user).fetch_all(db).await?;
    rows.iter().map(decode).collect()
}

/// Revokes one of the user's keys; `false` when the user has no such (unrevoked) key.
pub async fn revoke(db: impl PgExecutor<'_>, user: Uuid, key: Uuid) -> Result<bool, sqlx::Error> {
    let done = sqlx::query(
        "UPDATE platform.api_keys SET revoked_at = now()
         WHERE id = $1 AND user_id = $2 AND revoked_at IS NULL",
    )
    .bind(key)
    .bind(user)
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

pub async fn revoke_all_of(db: impl PgExecutor<'_>, user: Uuid) -> Result<u64, sqlx::Error> {
    let done = sqlx::query(
        "UPDATE platform.api_keys SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL",
    )
    .bind(user)
    .execute(db)
    .await?;
    Ok(done.rows_affected())
}

/// What authentication learns from a presented key.
#[derive(Debug, Clone)]
pub struct KeyOwner {
    pub key_id: Uuid,
    pub stored_hash: SecretHash,
    /// The owning account's record (read in the same statement).
    pub account: User,
    pub tenant_scope: Option<Uuid>,
    pub usable: bool,
    pub last_used_at: Option<OffsetDateTime>,
}

pub async fn owner_by_hash(
    db: impl PgExecutor<'_>,
    hash: &SecretHash,
) -> Result<Option<KeyOwner>, sqlx::Error> {
    let sql = sqlx::AssertSqlSafe(format!(
        "SELECT k.id AS key_id, k.key_hash, k.tenant_scope_id, k.last_used_at AS key_last_used_at,
                (k.revoked_at IS NULL AND u.is_active) AS usable, {USER_COLUMNS_OF_U}
         FROM platform.api_keys k JOIN platform.users u ON u.id = k.user_id
         WHERE k.key_hash = $1"
    ));
    let row = sqlx::query(sql)
        .bind(hash.as_bytes().as_slice())
        .fetch_optional(db)
        .await?;
    row.map(|row| {
        let stored: Vec<u8> = row.try_get("key_hash")?;
        Ok(KeyOwner {
            key_id: row.try_get("key_id")?,
            stored_hash: SecretHash::from_bytes(&stored)
                .ok_or_else(|| sqlx::Error::Decode("key hash of wrong length".into()))?,
            account: decode_user(&row)?,
            tenant_scope: row.try_get("tenant_scope_id")?,
            usable: row.try_get("usable")?,
            last_used_at: row.try_get("key_last_used_at")?,
        })
    })
    .transpose()
}

/// Records use at most once a minute per key, so a busy key does not write on every request.
pub async fn touch(db: impl PgExecutor<'_>, key: Uuid) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE platform.api_keys SET last_used_at = now()
         WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '60 seconds')",
    )
    .bind(key)
    .execute(db)
    .await?;
    Ok(())
}

/// Service accounts for the platform admin view and the CLI.
pub async fn service_accounts(
    db: impl PgExecutor<'_>,
) -> Result<Vec<ServiceAccountRow>, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT u.id, u.display_name, u.is_active, u.created_at,
                (SELECT count(*) FROM platform.api_keys k
                  WHERE k.user_id = u.id AND k.revoked_at IS NULL) AS active_keys,
                (SELECT max(k.last_used_at) FROM platform.api_keys k WHERE k.user_id = u.id) AS last_used_at
         FROM platform.users u WHERE u.account_type = 'service' ORDER BY u.created_at, u.id",
    )
    .fetch_all(db)
    .await?;
    rows.iter()
        .map(|row| {
            Ok(ServiceAccountRow {
                key: row.try_get("id")?,
                display_name: row.try_get("display_name")?,
                is_active: row.try_get("is_active")?,
                active_keys: row.try_get("active_keys")?,
                last_used_at: row.try_get("last_used_at")?,
                created_at: row.try_get("created_at")?,
            })
        })
        .collect()
}

#[derive(Debug, Clone, serde::Serialize, salvo::oapi::ToSchema)]
pub struct ServiceAccountRow {
    pub key: Uuid,
    pub display_name: String,
    pub is_active: bool,
    pub active_keys: i64,
    #[serde(with = "time::serde::rfc3339::option")]
    pub last_used_at: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
}
