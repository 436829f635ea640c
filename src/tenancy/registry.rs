//! The tenant registry in `platform.tenants`: SQL only, schema-qualified, explicit columns.

use sqlx::{PgExecutor, Row, postgres::PgRow};
use time::OffsetDateTime;
use uuid::Uuid;

use super::names::{SchemaName, TenantSlug};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TenantStatus {
    Provisioning,
    Active,
    Suspended,
}

impl TenantStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Provisioning => "provisioning",
            Self::Active => "active",
            Self::Suspended => "suspended",
        }
    }

    fn parse(raw: &str) -> Option<Self> {
        match raw {
            "provisioning" => Some(Self::Provisioning),
            "active" => Some(Self::Active),
            "suspended" => Some(Self::Suspended),
            _ => None,
        }
    }
}

/// What a tenant is for (see migration 0002).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, salvo::oapi::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TenantKind {
    /// A user's own garden, made at registration.
    Personal,
    /// A shared garden made through `POST /tenants`.
    #[default]
    Organisation,
    /// The platform operators' tenant: its admins administer the platform.
    Platform,
    /// Light mode's single garden.
    Default,
}

impl TenantKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Personal => "personal",
            Self::Organisation => "organisation",
            Self::Platform => "platform",
            Self::Default => "default",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        match raw {
            "personal" => Some(Self::Personal),
            "organisation" => Some(Self::Organisation),
            "platform" => Some(Self::Platform),
            "default" => Some(Self::Default),
            _ => None,
        }
    }
}

#[derive(Debug, Clone)]
pub struct TenantRecord {
    pub id: Uuid,
    pub slug: TenantSlug,
    pub name: String,
    pub schema_name: SchemaName,
    pub placement: String,
    pub schema_version: i64,
    pub status: TenantStatus,
    pub kind: TenantKind,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
    /// The placement a move is copying the schema to (`kultiva tenant move`); the garden is
    /// still served from `placement`.
    pub moving_to: Option<String>,
    /// The placement a finished move left a schema on that is not dropped yet.
    pub moved_from: Option<String>,
}

pub const COLUMNS: &str = "id, slug, name, schema_name, placement, schema_version, status, kind, \
                           created_at, updated_at, moving_to, moved_from";

pub fn decode(row: &PgRow) -> Result<TenantRecord, sqlx::Error> {
    let corrupt = |what: &str, value: String| {
        sqlx::Error::Decode(format!("platform.tenants holds an invalid {what}: {value:?}").into())
    };
    let slug: String = row.try_get("slug")?;
    let schema: String = row.try_get("schema_name")?;
    let status: String = row.try_get("status")?;
    let kind: String = row.try_get("kind")?;
    Ok(TenantRecord {
        id: row.try_get("id")?,
        slug: TenantSlug::parse(&slug).map_err(|_| corrupt("slug", slug.clone()))?,
        name: row.try_get("name")?,
        schema_name: SchemaName::parse(&schema)
            .ok_or_else(|| corrupt("schema name", schema.clone()))?,
        placement: row.try_get("placement")?,
        schema_version: row.try_get("schema_version")?,
        status: TenantStatus::parse(&status).ok_or_else(|| corrupt("status", status.clone()))?,
        kind: TenantKind::parse(&kind).ok_or_else(|| corrupt("kind", kind.clone()))?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
        moving_to: row.try_get("moving_to")?,
        moved_from: row.try_get("moved_from")?,
    })
}

pub async fn find_by_slug(
    db: impl PgExecutor<'_>,
    slug: &TenantSlug,
) -> Result<Option<TenantRecord>, sqlx::Error> {
    let sql = sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM platform.tenants WHERE slug = $1"
    ));
    let row = sqlx::query(sql)
        .bind(slug.as_str())
        .fetch_optional(db)
        .await?;
    row.as_ref().map(decode).transpose()
}

pub async fn find_by_id(
    db: impl PgExecutor<'_>,
    id: Uuid,
) -> Result<Option<TenantRecord>, sqlx::Error> {
    let sql = sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM platform.tenants WHERE id = $1"
    ));
    let row = sqlx::query(sql).bind(id).fetch_optional(db).await?;
    row.as_ref().map(decode).transpose()
}

pub async fn list(db: impl PgExecutor<'_>) -> Result<Vec<TenantRecord>, sqlx::Error> {
    let sql = sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM platform.tenants ORDER BY slug"
    ));
    let rows = sqlx::query(sql).fetch_all(db).await?;
    rows.iter().map(decode).collect()
}

/// Tenants whose schema is behind `latest`, oldest first.
pub async fn list_behind(
    db: impl PgExecutor<'_>,
    latest: i64,
) -> Result<Vec<TenantRecord>, sqlx::Error> {
    let sql = sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM platform.tenants WHERE schema_version < $1 \
         AND status <> 'provisioning' ORDER BY created_at"
    ));
    let rows = sqlx::query(sql).bind(latest).fetch_all(db).await?;
    rows.iter().map(decode).collect()
}

/// Inserts a new tenant in status `provisioning`. `None` when the slug is taken.
pub async fn insert(
    db: impl PgExecutor<'_>,
    slug: &TenantSlug,
    name: &str,
    placement: &str,
    kind: TenantKind,
) -> Result<Option<TenantRecord>, sqlx::Error> {
    let id = Uuid::now_v7();
    let schema = SchemaName::for_tenant(id);
    let sql = sqlx::AssertSqlSafe(format!(
        "INSERT INTO platform.tenants (id, slug, name, schema_name, placement, status, kind) \
         VALUES ($1, $2, $3, $4, $5, 'provisioning', $6) ON CONFLICT DO NOTHING RETURNING {COLUMNS}"
    ));
    let row = sqlx::query(sql)
        .bind(id)
        .bind(slug.as_str())
        .bind(name)
        .bind(schema.as_str())
        .bind(placement)
        .bind(kind.as_str())
        .fetch_optional(db)
        .await?;
    row.as_ref().map(decode).transpose()
}

pub async fn current_version(
    db: impl PgExecutor<'_>,
    id: Uuid,
) -> Result<Option<i64>, sqlx::Error> {
    sqlx::query_scalar("SELECT schema_version FROM platform.tenants WHERE id = $1")
        .bind(id)
        .fetch_optional(db)
        .await
}

pub async fn set_version(
    db: impl PgExecutor<'_>,
    id: Uuid,
    version: i64,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE platform.tenants SET schema_version = $2, updated_at = now() WHERE id = $1",
    )
    .bind(id)
    .bind(version)
    .execute(db)
    .await?;
    Ok(())
}

pub async fn set_status(
    db: impl PgExecutor<'_>,
    id: Uuid,
    status: TenantStatus,
) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE platform.tenants SET status = $2, updated_at = now() WHERE id = $1")
        .bind(id)
        .bind(status.as_str())
        .execute(db)
        .await?;
    Ok(())
}

/// Suspends a tenant about to be dropped, unless a move is recorded (`moving_to` or
/// `moved_from`): a drop then would leave a copy on the other server that no row names.
/// Returns the placement the suspended row names (the caller's earlier read may predate a
/// move that has finished since); `None` when a move is recorded (or the row is gone). A move
/// claims only an `active` garden, so once this committed no move starts.
pub async fn suspend_for_drop(
    db: impl PgExecutor<'_>,
    id: Uuid,
) -> Result<Option<String>, sqlx::Error> {
    sqlx::query_scalar(
        "UPDATE platform.tenants SET status = 'suspended', updated_at = now() \
         WHERE id = $1 AND moving_to IS NULL AND moved_from IS NULL RETURNING placement",
    )
    .bind(id)
    .fetch_optional(db)
    .await
}

/// `provisioning` -> `active` in one statement that also records the owner as creator and
/// makes them admin, so no active tenant is ever without its admin (a data-modifying `WITH`
/// runs to completion whether or not the outer query reads it). `false` when the tenant
/// is no longer `provisioning` (the reaper removed it).
pub async fn activate(
    db: impl PgExecutor<'_>,
    id: Uuid,
    owner: Option<Uuid>,
) -> Result<bool, sqlx::Error> {
    let activated: i64 = sqlx::query_scalar(
        "WITH activated AS ( \
           UPDATE platform.tenants SET status = 'active', created_by = coalesce($2, created_by), \
                  updated_at = now() \
            WHERE id = $1 AND status = 'provisioning' RETURNING id), \
         admin AS ( \
           INSERT INTO platform.memberships (tenant_id, user_id, role) \
           SELECT id, $2, 'admin' FROM activated WHERE $2::uuid IS NOT NULL \
           ON CONFLICT (tenant_id, user_id) DO UPDATE SET role = 'admin', updated_at = now() \
           RETURNING tenant_id) \
         SELECT count(*) FROM activated",
    )
    .bind(id)
    .bind(owner)
    .fetch_one(db)
    .await?;
    Ok(activated == 1)
}

/// Marks progress of a tenant still `provisioning` (a long import), so the reaper, which
/// removes those without progress for `TENANT_PROVISIONING_TIMEOUT_SECONDS`, leaves it alone.
pub async fn touch_provisioning(db: impl PgExecutor<'_>, id: Uuid) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE platform.tenants SET updated_at = now() WHERE id = $1 AND status = 'provisioning'",
    )
    .bind(id)
    .execute(db)
    .await?;
    Ok(())
}

/// Deletes a tenant row only while it is still `provisioning` (never one that became active).
pub async fn delete_provisioning(db: impl PgExecutor<'_>, id: Uuid) -> Result<bool, sqlx::Error> {
    let done =
        sqlx::query("DELETE FROM platform.tenants WHERE id = $1 AND status = 'provisioning'")
            .bind(id)
            .execute(db)
            .await?;
    Ok(done.rows_affected() == 1)
}

pub async fn delete(db: impl PgExecutor<'_>, id: Uuid) -> Result<bool, sqlx::Error> {
    let done = sqlx::query("DELETE FROM platform.tenants WHERE id = $1")
        .bind(id)
        .execute(db)
        .await?;
    Ok(done.rows_affected() == 1)
}

/// Records the start of a move: `moving_to` set while the garden is active, on `source`, and
/// no other move is recorded. `false` when any of that does not hold.
pub async fn claim_move(
    db: impl PgExecutor<'_>,
    id: Uuid,
    source: &str,
    target: &str,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query(
        "UPDATE platform.tenants SET moving_to = $3, updated_at = now() \
         WHERE id = $1 AND placement = $2 AND status = 'active' \
           AND moving_to IS NULL AND moved_from IS NULL",
    )
    .bind(id)
    .bind(source)
    .bind(target)
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// The switch of a move: the garden is served from `target` from this commit on, and
/// `moved_from` remembers the source until its schema is dropped. `false` when the row no
/// longer records this move (dropped, or changed by hand).
pub async fn switch_placement(
    db: impl PgExecutor<'_>,
    id: Uuid,
    source: &str,
    target: &str,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query(
        "UPDATE platform.tenants SET placement = $3, moving_to = NULL, moved_from = $2, \
                updated_at = now() \
         WHERE id = $1 AND placement = $2 AND moving_to = $3",
    )
    .bind(id)
    .bind(source)
    .bind(target)
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Gardens with a move recorded (`moving_to` or `moved_from`) whose row has not changed for
/// `older_than`, oldest first: candidates for the reaper's recovery of abandoned moves.
pub async fn list_moves(
    db: impl PgExecutor<'_>,
    older_than: std::time::Duration,
) -> Result<Vec<TenantRecord>, sqlx::Error> {
    let sql = sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM platform.tenants \
         WHERE (moving_to IS NOT NULL OR moved_from IS NOT NULL) \
           AND updated_at < now() - make_interval(secs => $1) ORDER BY updated_at"
    ));
    let rows = sqlx::query(sql)
        .bind(older_than.as_secs_f64())
        .fetch_all(db)
        .await?;
    rows.iter().map(decode).collect()
}

/// Forgets a move that was rolled back (`moving_to`) or whose source schema is gone
/// (`moved_from`).
pub async fn clear_move(db: impl PgExecutor<'_>, id: Uuid) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE platform.tenants SET moving_to = NULL, moved_from = NULL, updated_at = now() \
         WHERE id = $1 AND (moving_to IS NOT NULL OR moved_from IS NOT NULL)",
    )
    .bind(id)
    .execute(db)
    .await?;
    Ok(())
}

/// What triggered a migration run, kept in `platform.tenant_migrations`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MigrationTrigger {
    Provision,
    OnDemand,
    Cli,
}

impl MigrationTrigger {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Provision => "provision",
            Self::OnDemand => "on_demand",
            Self::Cli => "cli",
        }
    }
}

pub async fn record_migration(
    db: impl PgExecutor<'_>,
    tenant_id: Uuid,
    from: i64,
    to: i64,
    trigger: MigrationTrigger,
    started_at: OffsetDateTime,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO platform.tenant_migrations (tenant_id, from_version, to_version, trigger, started_at) \
         VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(tenant_id)
    .bind(from)
    .bind(to)
    .bind(trigger.as_str())
    .bind(started_at)
    .execute(db)
    .await?;
    Ok(())
}
