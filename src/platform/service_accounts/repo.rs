//! Service accounts in `platform.users`, `platform.memberships` and `platform.api_keys`: SQL
//! only.

use std::collections::HashMap;

use sqlx::postgres::PgRow;
use sqlx::{PgExecutor, Row};
use time::OffsetDateTime;
use uuid::Uuid;

use super::model::{ServiceAccount, ServiceAccountKey};
use crate::directory::Role;

const ACCOUNT_COLUMNS: &str = "u.id, u.display_name, u.is_active, u.created_at, m.role";

fn decode(row: &PgRow) -> Result<ServiceAccount, sqlx::Error> {
    let role: String = row.try_get("role")?;
    Ok(ServiceAccount {
        key: row.try_get("id")?,
        name: row.try_get("display_name")?,
        role: Role::parse(&role).ok_or_else(|| sqlx::Error::Decode("unknown role".into()))?,
        is_active: row.try_get("is_active")?,
        created_at: row.try_get("created_at")?,
        last_used_at: None,
        api_keys: Vec::new(),
        raw_key: None,
    })
}

/// The garden's service accounts (members of account type `service`), oldest first.
pub async fn of_tenant(
    db: impl PgExecutor<'_>,
    tenant: Uuid,
) -> Result<Vec<ServiceAccount>, sqlx::Error> {
    let sql = sqlx::AssertSqlSafe(format!(
        "SELECT {ACCOUNT_COLUMNS} FROM platform.memberships m
         JOIN platform.users u ON u.id = m.user_id
         WHERE m.tenant_id = $1 AND u.account_type = 'service'
         ORDER BY u.created_at, u.id"
    ));
    let rows = sqlx::query(sql).bind(tenant).fetch_all(db).await?;
    rows.iter().map(decode).collect()
}

/// One service account of the garden; `None` for any other account or garden.
pub async fn one_of_tenant(
    db: impl PgExecutor<'_>,
    tenant: Uuid,
    account: Uuid,
) -> Result<Option<ServiceAccount>, sqlx::Error> {
    let sql = sqlx::AssertSqlSafe(format!(
        "SELECT {ACCOUNT_COLUMNS} FROM platform.memberships m
         JOIN platform.users u ON u.id = m.user_id
         WHERE m.tenant_id = $1 AND m.user_id = $2 AND u.account_type = 'service'"
    ));
    let row = sqlx::query(sql)
        .bind(tenant)
        .bind(account)
        .fetch_optional(db)
        .await?;
    row.as_ref().map(decode).transpose()
}

/// The unrevoked keys of these accounts that work in the garden (unscoped, or scoped to it),
/// by account, newest first.
pub async fn keys_in_tenant(
    db: impl PgExecutor<'_>,
    tenant: Uuid,
    accounts: &[Uuid],
) -> Result<HashMap<Uuid, Vec<ServiceAccountKey>>, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT k.user_id, k.id, k.key_prefix, t.slug AS scope_slug, k.created_at, k.last_used_at
         FROM platform.api_keys k
         LEFT JOIN platform.tenants t ON t.id = k.tenant_scope_id
         WHERE k.user_id = ANY($2) AND k.revoked_at IS NULL
           AND (k.tenant_scope_id IS NULL OR k.tenant_scope_id = $1)
         ORDER BY k.created_at DESC, k.id",
    )
    .bind(tenant)
    .bind(accounts)
    .fetch_all(db)
    .await?;
    let mut by_account: HashMap<Uuid, Vec<ServiceAccountKey>> = HashMap::new();
    for row in rows {
        let account: Uuid = row.try_get("user_id")?;
        by_account
            .entry(account)
            .or_default()
            .push(ServiceAccountKey {
                key: row.try_get("id")?,
                key_prefix: row.try_get("key_prefix")?,
                tenant_scope: row.try_get("scope_slug")?,
                created_at: row.try_get("created_at")?,
                last_used_at: row.try_get::<Option<OffsetDateTime>, _>("last_used_at")?,
            });
    }
    Ok(by_account)
}

/// Records the person who made the service account.
pub async fn set_maker(
    db: impl PgExecutor<'_>,
    account: Uuid,
    maker: Uuid,
) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE platform.users SET created_by = $2 WHERE id = $1")
        .bind(account)
        .bind(maker)
        .execute(db)
        .await?;
    Ok(())
}
