//! Creating and dropping tenants: registry row and schema together, or neither.

use super::migrate::{self, MigrationError};
use super::names::TenantSlug;
use super::registry::{self, MigrationTrigger, TenantRecord, TenantStatus};
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
    #[error(transparent)]
    Migration(#[from] MigrationError),
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
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
}

/// Registers the tenant, creates its schema and migrates it, then marks it active. On any
/// failure the schema and the row are removed again, so a half-made tenant never serves.
pub async fn create_tenant(
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
    let made = async {
        let outcome = migrate::migrate_tenant(
            state,
            &tenant,
            options.target_version,
            MigrationTrigger::Provision,
        )
        .await?;
        registry::set_status(platform, tenant.id, TenantStatus::Active).await?;
        Ok::<_, ProvisionError>(outcome)
    }
    .await;
    match made {
        Ok(outcome) => {
            tenant.schema_version = outcome.to_version;
            tenant.status = TenantStatus::Active;
            tracing::info!(tenant = %tenant.slug, schema = %tenant.schema_name,
                placement = %tenant.placement, version = outcome.to_version, "tenant provisioned");
            Ok(tenant)
        }
        Err(err) => {
            if let Err(cleanup) = remove(state, &tenant).await {
                tracing::error!(tenant = %tenant.slug, error = %cleanup,
                    "cleaning up a failed provisioning failed");
            }
            Err(err)
        }
    }
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
    // Suspend first so no request starts on a schema that is about to vanish.
    registry::set_status(state.platform_pool(), tenant.id, TenantStatus::Suspended).await?;
    state.caches().forget_tenant(tenant.id);
    let placement = state
        .placements()
        .get(&tenant.placement)
        .ok_or_else(|| ProvisionError::UnknownPlacement(tenant.placement.clone()))?;
    let drop_schema = format!(
        "DROP SCHEMA IF EXISTS {} CASCADE",
        tenant.schema_name.quoted()
    );
    sqlx::query(sqlx::AssertSqlSafe(drop_schema))
        .execute(placement.pool())
        .await?;
    registry::delete(state.platform_pool(), tenant.id).await?;
    state.caches().forget_tenant(tenant.id);
    Ok(())
}
