//! The tenants as platform records change them: creation quota, rename, the admin search.
//! SQL only; memberships are `directory::memberships`.

use sqlx::{PgConnection, PgExecutor, Row};
use uuid::Uuid;

use crate::tenancy::registry::{self, COLUMNS, TenantRecord};

/// Locks the account's row (inside a transaction) and counts the gardens it created, so two
/// concurrent creations cannot both pass the cap.
pub async fn lock_and_count_created(
    conn: &mut PgConnection,
    user: Uuid,
) -> Result<i64, sqlx::Error> {
    // NO KEY UPDATE: serialises creations of one account while the activation (another
    // connection) can still insert the membership and creator that reference this row.
    sqlx::query("SELECT id FROM platform.users WHERE id = $1 FOR NO KEY UPDATE")
        .bind(user)
        .fetch_optional(&mut *conn)
        .await?;
    let row = sqlx::query("SELECT count(*) AS n FROM platform.tenants WHERE created_by = $1")
        .bind(user)
        .fetch_one(&mut *conn)
        .await?;
    row.try_get("n")
}

/// Renames the tenant; `None` when it no longer exists.
pub async fn rename(
    db: impl PgExecutor<'_>,
    tenant: Uuid,
    name: &str,
) -> Result<Option<TenantRecord>, sqlx::Error> {
    let sql = sqlx::AssertSqlSafe(format!(
        "UPDATE platform.tenants SET name = $2, updated_at = now() WHERE id = $1 RETURNING {COLUMNS}"
    ));
    let row = sqlx::query(sql)
        .bind(tenant)
        .bind(name)
        .fetch_optional(db)
        .await?;
    row.as_ref().map(registry::decode).transpose()
}

/// Platform admin search over tenants (slug or name contains `q`).
pub async fn search(
    db: &sqlx::PgPool,
    q: Option<&str>,
    skip: i64,
    limit: i64,
) -> Result<(i64, Vec<TenantRecord>), sqlx::Error> {
    let pattern = q.map(|q| {
        format!(
            "%{}%",
            crate::directory::users::repo::escape_like(&q.to_lowercase())
        )
    });
    const FILTER: &str = "($1::text IS NULL OR slug LIKE $1 OR lower(name) LIKE $1)";
    let total: i64 = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT count(*) AS total FROM platform.tenants WHERE {FILTER}"
    )))
    .bind(&pattern)
    .fetch_one(db)
    .await?
    .try_get("total")?;
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM platform.tenants WHERE {FILTER}
         ORDER BY created_at, id OFFSET $2 LIMIT $3"
    )))
    .bind(&pattern)
    .bind(skip)
    .bind(limit)
    .fetch_all(db)
    .await?;
    let tenants = rows
        .iter()
        .map(registry::decode)
        .collect::<Result<_, _>>()?;
    Ok((total, tenants))
}
