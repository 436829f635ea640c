//! Slug resolution for `/api/v1/t/{slug}/…`: the hoop puts a `TenantCtx` in the Depot, migrating
//! the tenant's schema first when it is behind.

use salvo::prelude::*;

use super::migrate::{self, MigrationError, latest_tenant_version};
use super::names::TenantSlug;
use super::registry::{self, MigrationTrigger, TenantRecord, TenantStatus};
use crate::error::AppError;
use crate::http::depot::DepotExt;
use crate::state::AppState;

/// The tenant a request addresses, resolved and migrated.
#[derive(Debug, Clone)]
pub struct TenantCtx {
    pub tenant: TenantRecord,
}

/// Unknown, malformed, reserved and inactive slugs all answer the same 404: a client learns
/// nothing about which gardens exist.
fn tenant_not_found() -> AppError {
    AppError::not_found("tenant")
}

pub async fn resolve(state: &AppState, raw_slug: &str) -> Result<TenantRecord, AppError> {
    let slug = TenantSlug::parse(raw_slug).map_err(|_| tenant_not_found())?;
    let mut tenant = registry::find_by_slug(state.platform_pool(), &slug)
        .await?
        .filter(|t| t.status == TenantStatus::Active)
        .ok_or_else(tenant_not_found)?;
    if tenant.schema_version < latest_tenant_version() {
        let outcome = migrate::migrate_tenant(state, &tenant, None, MigrationTrigger::OnDemand)
            .await
            .map_err(|err| match err {
                // Dropped between lookup and migration: as gone as an unknown slug.
                MigrationError::TenantGone(_) => tenant_not_found(),
                other => AppError::internal(other),
            })?;
        tenant.schema_version = outcome.to_version;
    }
    Ok(tenant)
}

/// Hoop for the tenant sub-tree.
#[handler]
pub async fn tenant_hoop(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
    ctrl: &mut FlowCtrl,
) {
    let resolved = match depot.app_state() {
        Ok(state) => {
            let slug = req.param::<String>("slug").unwrap_or_default();
            resolve(&state, &slug).await
        }
        Err(err) => Err(err),
    };
    match resolved {
        Ok(tenant) => {
            tracing::Span::current().record("tenant", tracing::field::display(&tenant.slug));
            depot.insert_typed(TenantCtx { tenant });
        }
        Err(err) => err.halt(req, res, ctrl),
    }
}
