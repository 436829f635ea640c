//! Creating and dropping tenants: registry row and schema together, or neither.
//!
//! Creation is crash-safe in two steps: [`prepare`] registers the tenant in status
//! `provisioning` (never served, its slug taken) and builds its schema; [`activate`] turns it
//! active and makes its owner admin in one statement, so an active garden always has its
//! admin. A process killed in between leaves a `provisioning` row, which the reaper
//! (`tenancy::reaper`) removes once it is older than `TENANT_PROVISIONING_TIMEOUT_SECONDS`.

use sqlx::PgExecutor;
use uuid::Uuid;

use super::migrate::{self, MigrationError};
use super::names::TenantSlug;
use super::registry::{self, MigrationTrigger, TenantRecord, TenantStatus};
use crate::error::AppError;
use crate::state::AppState;

#[derive(Debug, thiserror::Error)]
pub enum ProvisionError {
    #[error("a tenant with slug {0} already exists")]
    SlugTaken(String),
    #[error("placement {0:?} is not configured")]
    UnknownPlacement(String),
    #[error("tenant name must be 1 to 200 characters")]
    InvalidName,
    #[error("no tenant with slug {0}")]
    NotFound(String),
    #[error("tenant {0} is being moved to another placement; drop it once the move is done")]
    Moving(String),
    #[error(transparent)]
    Migration(#[from] MigrationError),
    #[error("tenant {0} was removed while it was being provisioned (it took too long)")]
    Expired(String),
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
}

impl ProvisionError {
    /// As an API answer: a tenant reaped mid-creation is a 503 (retry, as with a lost
    /// database); everything else as `AppError::from`.
    pub fn into_app_error(self) -> crate::error::AppError {
        match self {
            Self::Expired(_) => crate::error::AppError::unavailable("garden provisioning", self),
            other => other.into(),
        }
    }
}

/// How to provision; the defaults are what every caller but tests and benchmarks wants.
#[derive(Debug, Clone, Default)]
pub struct ProvisionOptions {
    /// Placement name; the configured default when `None`.
    pub placement: Option<String>,
    /// Stop at this schema version instead of the latest (tests of on-demand migration).
    pub target_version: Option<i64>,
    /// What the tenant is for; an organisation garden unless told otherwise.
    pub kind: super::registry::TenantKind,
    /// The account made admin in the statement that activates the tenant (and recorded as
    /// its creator); `None` for tenants nobody owns (light mode's garden, the platform tenant,
    /// `kultiva tenant create`).
    pub owner: Option<Uuid>,
}

/// Registers the tenant, creates its schema and migrates it, then activates it with its
/// owner as admin in one statement. On any failure the schema and the row are removed again
/// (by the reaper if this process dies first), so a half-made tenant never serves.
pub async fn create_tenant(
    state: &AppState,
    slug: &TenantSlug,
    name: &str,
    options: ProvisionOptions,
) -> Result<TenantRecord, ProvisionError> {
    let owner = options.owner;
    let mut tenant = prepare(state, slug, name, options).await?;
    match activate(state.platform_pool(), &mut tenant, owner).await {
        Ok(()) => Ok(tenant),
        Err(err) => {
            discard(state, &tenant).await;
            Err(err)
        }
    }
}

/// First step of creation: the registry row in status `provisioning` (slug taken, never
/// served) and its schema at the target version. Cleans up after itself when it fails.
pub async fn prepare(
    state: &AppState,
    slug: &TenantSlug,
    name: &str,
    options: ProvisionOptions,
) -> Result<TenantRecord, ProvisionError> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 200 {
        return Err(ProvisionError::InvalidName);
    }
    let placement = options
        .placement
        .unwrap_or_else(|| state.placements().default_name().to_owned());
    if state.placements().get(&placement).is_none() {
        return Err(ProvisionError::UnknownPlacement(placement));
    }
    let platform = state.platform_pool();
    let Some(mut tenant) = registry::insert(platform, slug, name, &placement, options.kind).await?
    else {
        return Err(ProvisionError::SlugTaken(slug.to_string()));
    };
    match migrate::migrate_tenant(
        state,
        &tenant,
        options.target_version,
        MigrationTrigger::Provision,
    )
    .await
    {
        Ok(outcome) => {
            tenant.schema_version = outcome.to_version;
            Ok(tenant)
        }
        Err(err) => {
            discard(state, &tenant).await;
            Err(err.into())
        }
    }
}

/// Second step: `provisioning` -> `active`, the creator recorded and the owner's admin
/// membership written, all in one statement (so also inside the caller's transaction when
/// `db` is one: registration commits the account with it). `Expired` when the reaper removed
/// the tenant in the meantime.
pub async fn activate(
    db: impl PgExecutor<'_>,
    tenant: &mut TenantRecord,
    owner: Option<Uuid>,
) -> Result<(), ProvisionError> {
    if !registry::activate(db, tenant.id, owner).await? {
        return Err(ProvisionError::Expired(tenant.slug.to_string()));
    }
    tenant.status = TenantStatus::Active;
    tracing::info!(tenant = %tenant.slug, schema = %tenant.schema_name,
        placement = %tenant.placement, version = tenant.schema_version, "tenant provisioned");
    Ok(())
}

/// Removes a tenant that never became active (its schema, then its row, only while it is
/// still `provisioning`). Best effort: what it cannot remove now, the reaper removes later.
pub async fn discard(state: &AppState, tenant: &TenantRecord) {
    let dropped = async {
        let placement = state
            .placements()
            .get(&tenant.placement)
            .ok_or_else(|| ProvisionError::UnknownPlacement(tenant.placement.clone()))?;
        drop_schema(placement.pool(), tenant).await?;
        remove_files(state, tenant.id)
            .await
            .map_err(|err| ProvisionError::Database(sqlx::Error::Io(err)))?;
        registry::delete_provisioning(state.platform_pool(), tenant.id).await?;
        Ok::<_, ProvisionError>(())
    }
    .await;
    if let Err(cleanup) = dropped {
        tracing::warn!(tenant = %tenant.slug, error = %cleanup,
            "removing a tenant whose provisioning failed failed; the reaper will");
    }
}

/// Removes the photo files of a tenant that never became active (`STORAGE_DIR/<tenant id>/`:
/// what an import wrote before it failed or died). The id is new with the tenant, so nothing
/// else is in that folder. A folder that is not there is no error.
pub async fn remove_files(state: &AppState, tenant: Uuid) -> std::io::Result<()> {
    let store = crate::store::photos::from_config(state.config());
    let dir = store.root().join(tenant.to_string());
    match tokio::fs::remove_dir_all(&dir).await {
        Err(err) if err.kind() != std::io::ErrorKind::NotFound => Err(err),
        _ => Ok(()),
    }
}

pub(super) async fn drop_schema(
    db: impl PgExecutor<'_>,
    tenant: &TenantRecord,
) -> Result<(), sqlx::Error> {
    let drop_schema = format!(
        "DROP SCHEMA IF EXISTS {} CASCADE",
        tenant.schema_name.quoted()
    );
    sqlx::query(sqlx::AssertSqlSafe(drop_schema))
        .execute(db)
        .await?;
    Ok(())
}

/// Drops the tenant's schema with all its data, then its registry row.
pub async fn drop_tenant(
    state: &AppState,
    slug: &TenantSlug,
) -> Result<TenantRecord, ProvisionError> {
    let tenant = registry::find_by_slug(state.platform_pool(), slug)
        .await?
        .ok_or_else(|| ProvisionError::NotFound(slug.to_string()))?;
    remove(state, &tenant).await?;
    tracing::info!(tenant = %tenant.slug, schema = %tenant.schema_name, "tenant dropped");
    Ok(tenant)
}

async fn remove(state: &AppState, tenant: &TenantRecord) -> Result<(), ProvisionError> {
    // Suspend first so no request starts on a schema that is about to vanish (and no move
    // starts); refused while a move is recorded.
    let Some(placement) = registry::suspend_for_drop(state.platform_pool(), tenant.id).await?
    else {
        let slug = tenant.slug.to_string();
        return Err(
            match registry::find_by_id(state.platform_pool(), tenant.id).await? {
                Some(_) => ProvisionError::Moving(slug),
                None => ProvisionError::NotFound(slug),
            },
        );
    };
    state.caches().forget_tenant(tenant.id);
    // The schema is where the suspended row says: a move may have finished since `tenant`
    // was read.
    let placement = state
        .placements()
        .get(&placement)
        .ok_or(ProvisionError::UnknownPlacement(placement))?;
    drop_schema(placement.pool(), tenant).await?;
    // The registry row and the record that its photo folder must go, in one transaction: a
    // crash after it leaves the record (drained by the storage sweep), never a forgotten
    // folder; a crash before it leaves a suspended row, whose drop is repeated.
    let mut tx = state.platform_pool().begin().await?;
    registry::delete(&mut *tx, tenant.id).await?;
    super::garden_files::record_dropped_garden(&mut tx, state, tenant.id).await?;
    tx.commit().await?;
    state.caches().forget_tenant(tenant.id);
    if let Err(err) = super::garden_files::drain_dropped_gardens(state).await {
        tracing::warn!(tenant = %tenant.slug, error = %err,
            "a dropped garden's photo files are left to the storage sweep");
    }
    Ok(())
}

/// Provisioning or dropping a tenant: a lost database is a 503 like anywhere else; callers
/// answer the refusals they expect (slug taken, unknown tenant) before falling back on this.
impl From<crate::tenancy::provision::ProvisionError> for AppError {
    fn from(err: crate::tenancy::provision::ProvisionError) -> AppError {
        use crate::tenancy::provision::ProvisionError;
        match err {
            ProvisionError::Database(db) => db.into(),
            ProvisionError::Migration(err) => err.into(),
            err @ ProvisionError::Moving(_) => AppError::unavailable("this garden", err),
            other => AppError::internal(other),
        }
    }
}
