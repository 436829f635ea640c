//! Memberships (`platform.memberships`): who holds which role in which garden, and the
//! gardens of a user with the role; SQL only, explicit columns.

use sqlx::postgres::PgRow;
use sqlx::{PgConnection, PgExecutor, Row};
use time::OffsetDateTime;
use uuid::Uuid;

use super::model::Member;
use crate::directory::{AccountType, Role};
use crate::tenancy::registry::{self, COLUMNS, TenantKind, TenantRecord};

fn role(row: &PgRow, column: &str) -> Result<Option<Role>, sqlx::Error> {
    let raw: Option<String> = row.try_get(column)?;
    raw.map(|r| {
        Role::parse(&r).ok_or_else(|| sqlx::Error::Decode(format!("unknown role {r:?}").into()))
    })
    .transpose()
}

/// Prefixes the registry's columns with the table alias `t.`.
fn tenant_columns() -> String {
    COLUMNS
        .split(", ")
        .map(|c| format!("t.{c}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The tenant of a slug and the user's role in it (None: not a member). One round trip.
pub async fn tenant_with_role(
    db: impl PgExecutor<'_>,
    slug: &str,
    user: Uuid,
) -> Result<Option<(TenantRecord, Option<Role>)>, sqlx::Error> {
    let sql = sqlx::AssertSqlSafe(format!(
        "SELECT {}, m.role AS member_role FROM platform.tenants t
         LEFT JOIN platform.memberships m ON m.tenant_id = t.id AND m.user_id = $2
         WHERE t.slug = $1",
        tenant_columns()
    ));
    let row = sqlx::query(sql)
        .bind(slug)
        .bind(user)
        .fetch_optional(db)
        .await?;
    row.map(|row| Ok((registry::decode(&row)?, role(&row, "member_role")?)))
        .transpose()
}

/// Every tenant the user belongs to, with the role, by slug.
pub async fn tenants_of(
    db: impl PgExecutor<'_>,
    user: Uuid,
) -> Result<Vec<(TenantRecord, Role)>, sqlx::Error> {
    let sql = sqlx::AssertSqlSafe(format!(
        "SELECT {}, m.role AS member_role FROM platform.tenants t
         JOIN platform.memberships m ON m.tenant_id = t.id
         WHERE m.user_id = $1 ORDER BY t.slug",
        tenant_columns()
    ));
    let rows = sqlx::query(sql).bind(user).fetch_all(db).await?;
    rows.iter()
        .map(|row| {
            let role = role(row, "member_role")?
                .ok_or_else(|| sqlx::Error::Decode("membership without role".into()))?;
            Ok((registry::decode(row)?, role))
        })
        .collect()
}

pub async fn role_in(
    db: impl PgExecutor<'_>,
    tenant: Uuid,
    user: Uuid,
) -> Result<Option<Role>, sqlx::Error> {
    let row =
        sqlx::query("SELECT role FROM platform.memberships WHERE tenant_id = $1 AND user_id = $2")
            .bind(tenant)
            .bind(user)
            .fetch_optional(db)
            .await?;
    Ok(match row {
        Some(row) => role(&row, "role")?,
        None => None,
    })
}

/// The user's role in the one tenant of `kind` (the platform tenant, light mode's default).
pub async fn role_in_kind(
    db: impl PgExecutor<'_>,
    kind: TenantKind,
    user: Uuid,
) -> Result<Option<Role>, sqlx::Error> {
    let row = sqlx::query(
        "SELECT m.role FROM platform.memberships m
         JOIN platform.tenants t ON t.id = m.tenant_id
         WHERE t.kind = $1 AND t.status = 'active' AND m.user_id = $2",
    )
    .bind(kind.as_str())
    .bind(user)
    .fetch_optional(db)
    .await?;
    Ok(match row {
        Some(row) => role(&row, "role")?,
        None => None,
    })
}

/// Adds a member; `false` when the user already is one.
pub async fn add(
    db: impl PgExecutor<'_>,
    tenant: Uuid,
    user: Uuid,
    role: Role,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query(
        "INSERT INTO platform.memberships (tenant_id, user_id, role) VALUES ($1, $2, $3)
         ON CONFLICT DO NOTHING",
    )
    .bind(tenant)
    .bind(user)
    .bind(role.as_str())
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Adds a member who accepted an invitation, recording the invitation (a take-back of its
/// sender removes the member again); `false` when the user already is one (the membership
/// stays as it was).
pub async fn add_by_invitation(
    db: impl PgExecutor<'_>,
    tenant: Uuid,
    user: Uuid,
    role: Role,
    invitation: Uuid,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query(
        "INSERT INTO platform.memberships (tenant_id, user_id, role, invitation_id)
         VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
    )
    .bind(tenant)
    .bind(user)
    .bind(role.as_str())
    .bind(invitation)
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

const MEMBER_COLUMNS: &str = "u.id, u.email, u.display_name, u.account_type, m.role, m.created_at";

fn decode_member(row: &PgRow) -> Result<Member, sqlx::Error> {
    let account_type: String = row.try_get("account_type")?;
    Ok(Member {
        user_key: row.try_get("id")?,
        email: row.try_get("email")?,
        display_name: row.try_get("display_name")?,
        account_type: AccountType::parse(&account_type)
            .ok_or_else(|| sqlx::Error::Decode("unknown account type".into()))?,
        role: role(row, "role")?.ok_or_else(|| sqlx::Error::Decode("no role".into()))?,
        joined_at: row.try_get::<OffsetDateTime, _>("created_at")?,
    })
}

pub async fn members(db: impl PgExecutor<'_>, tenant: Uuid) -> Result<Vec<Member>, sqlx::Error> {
    let sql = sqlx::AssertSqlSafe(format!(
        "SELECT {MEMBER_COLUMNS} FROM platform.memberships m
         JOIN platform.users u ON u.id = m.user_id
         WHERE m.tenant_id = $1 ORDER BY m.created_at, u.id"
    ));
    let rows = sqlx::query(sql).bind(tenant).fetch_all(db).await?;
    rows.iter().map(decode_member).collect()
}

pub async fn member(
    db: impl PgExecutor<'_>,
    tenant: Uuid,
    user: Uuid,
) -> Result<Option<Member>, sqlx::Error> {
    let sql = sqlx::AssertSqlSafe(format!(
        "SELECT {MEMBER_COLUMNS} FROM platform.memberships m
         JOIN platform.users u ON u.id = m.user_id
         WHERE m.tenant_id = $1 AND m.user_id = $2"
    ));
    let row = sqlx::query(sql)
        .bind(tenant)
        .bind(user)
        .fetch_optional(db)
        .await?;
    row.as_ref().map(decode_member).transpose()
}

/// Locks the tenant's admin memberships (inside a transaction) and counts them, so two
/// concurrent demotions cannot both pass the last-admin check.
pub async fn lock_admins(conn: &mut PgConnection, tenant: Uuid) -> Result<i64, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT user_id FROM platform.memberships WHERE tenant_id = $1 AND role = 'admin'
         FOR UPDATE",
    )
    .bind(tenant)
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows.len() as i64)
}

pub async fn set_role(
    db: impl PgExecutor<'_>,
    tenant: Uuid,
    user: Uuid,
    role: Role,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query(
        "UPDATE platform.memberships SET role = $3, updated_at = now()
         WHERE tenant_id = $1 AND user_id = $2",
    )
    .bind(tenant)
    .bind(user)
    .bind(role.as_str())
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

pub async fn remove(
    db: impl PgExecutor<'_>,
    tenant: Uuid,
    user: Uuid,
) -> Result<bool, sqlx::Error> {
    let done =
        sqlx::query("DELETE FROM platform.memberships WHERE tenant_id = $1 AND user_id = $2")
            .bind(tenant)
            .bind(user)
            .execute(db)
            .await?;
    Ok(done.rows_affected() == 1)
}

/// How many gardens the account is a member of.
pub async fn membership_count(db: impl PgExecutor<'_>, account: Uuid) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar("SELECT count(*) FROM platform.memberships WHERE user_id = $1")
        .bind(account)
        .fetch_one(db)
        .await
}
