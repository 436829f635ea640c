//! A garden by its slug, migrated first when its schema is behind. The caller's access to it
//! (`TenantCtx`, the role) is identity's: `platform::access`; the REST hoop is `http::tenant`.

use super::migrate::{self, MigrationError, latest_tenant_version};
use super::names::TenantSlug;
use super::registry::{self, MigrationTrigger, TenantRecord, TenantStatus};
use crate::error::AppError;
use crate::state::AppState;

/// Unknown, malformed, reserved, inactive and not-yours slugs all answer the same 404: a client
/// learns nothing about which gardens exist.
pub fn tenant_not_found() -> AppError {
    AppError::not_found("tenant")
}

/// The tenant of a slug without a caller (operator paths); 404 as above.
pub async fn resolve(state: &AppState, raw_slug: &str) -> Result<TenantRecord, AppError> {
    let slug = TenantSlug::parse(raw_slug).map_err(|_| tenant_not_found())?;
    let tenant = registry::find_by_slug(state.platform_pool(), &slug)
        .await?
        .filter(|t| t.status == TenantStatus::Active)
        .ok_or_else(tenant_not_found)?;
    migrate_if_behind(state, tenant).await
}

pub async fn migrate_if_behind(
    state: &AppState,
    mut tenant: TenantRecord,
) -> Result<TenantRecord, AppError> {
    if tenant.schema_version < latest_tenant_version() {
        let outcome = migrate::migrate_tenant(state, &tenant, None, MigrationTrigger::OnDemand)
            .await
            .map_err(|err| match err {
                // Dropped between lookup and migration: as gone as an unknown slug.
                MigrationError::TenantGone(_) => tenant_not_found(),
                // A lost database or a move in progress: 503, retried.
                other => AppError::from(other),
            })?;
        tenant.schema_version = outcome.to_version;
    }
    Ok(tenant)
}
