//! Slug resolution for `/api/v1/t/{slug}/…`: the hoop resolves the tenant and the caller's role
//! in it (one query), migrates the tenant's schema first when it is behind, and puts a
//! `TenantCtx` in the Depot.

use salvo::prelude::*;

use super::migrate::{self, MigrationError, latest_tenant_version};
use super::names::TenantSlug;
use super::registry::{self, MigrationTrigger, TenantRecord, TenantStatus};
use crate::auth::{Principal, Role};
use crate::directory::memberships::repo as memberships;
use crate::error::{AppError, ErrorCode};
use crate::http::depot::DepotExt;
use crate::state::AppState;

/// The tenant a request addresses, resolved and migrated, and the caller's role in it.
#[derive(Debug, Clone)]
pub struct TenantCtx {
    pub tenant: TenantRecord,
    pub role: Role,
}

impl TenantCtx {
    /// 403 `FORBIDDEN` unless the caller's role is at least `needed`.
    pub fn require(&self, needed: Role) -> Result<(), AppError> {
        if self.role >= needed {
            Ok(())
        } else {
            Err(AppError::new(
                ErrorCode::Forbidden,
                format!(
                    "this needs the {} role in this garden; yours is {}",
                    needed.as_str(),
                    self.role.as_str()
                ),
            ))
        }
    }
}

/// Unknown, malformed, reserved, inactive and not-yours slugs all answer the same 404: a client
/// learns nothing about which gardens exist.
fn tenant_not_found() -> AppError {
    AppError::not_found("tenant")
}

/// The tenant and the caller's role, or the 404. Light mode's system user is admin everywhere;
/// a key scoped to another tenant sees this one as nonexistent.
pub async fn resolve_for(
    state: &AppState,
    principal: &Principal,
    raw_slug: &str,
) -> Result<TenantCtx, AppError> {
    let slug = TenantSlug::parse(raw_slug).map_err(|_| tenant_not_found())?;
    let (tenant, role) = tenant_with_role(state, &slug, principal)
        .await?
        .ok_or_else(tenant_not_found)?;
    let role = if principal.is_light() {
        Role::Admin
    } else {
        role.ok_or_else(tenant_not_found)?
    };
    if tenant.status != TenantStatus::Active
        || principal.tenant_scope().is_some_and(|s| s != tenant.id)
    {
        return Err(tenant_not_found());
    }
    let tenant = migrate_if_behind(state, tenant).await?;
    Ok(TenantCtx { tenant, role })
}

/// The tenant and the caller's role in it: from the caches (see `crate::cache`), else one
/// query that reads both. Only active tenants and actual memberships are kept.
async fn tenant_with_role(
    state: &AppState,
    slug: &TenantSlug,
    principal: &Principal,
) -> Result<Option<(TenantRecord, Option<Role>)>, AppError> {
    let caches = state.caches();
    let user = principal.user_id;
    if let Some(tenant) = caches.tenant(slug.as_str()) {
        if principal.is_light() {
            return Ok(Some((tenant, None)));
        }
        if let Some(role) = caches.role(user, tenant.id) {
            return Ok(Some((tenant, Some(role))));
        }
    }
    let ticket = caches.ticket();
    let found = memberships::tenant_with_role(state.platform_pool(), slug.as_str(), user).await?;
    if let Some((tenant, role)) = &found
        && tenant.status == TenantStatus::Active
    {
        caches.keep_tenant(tenant, ticket);
        if let Some(role) = role {
            caches.keep_role(user, tenant.id, *role, ticket);
        }
    }
    Ok(found)
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

/// Hoop for the tenant sub-tree (after `require_caller`).
#[handler]
pub async fn tenant_hoop(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
    ctrl: &mut FlowCtrl,
) {
    let resolved = async {
        let state = depot.app_state()?;
        let principal = depot.principal()?;
        let slug = req.param::<String>("slug").unwrap_or_default();
        resolve_for(&state, principal, &slug).await
    }
    .await;
    match resolved {
        Ok(ctx) => {
            tracing::Span::current().record("tenant", tracing::field::display(&ctx.tenant.slug));
            depot.insert_typed(ctx);
        }
        Err(err) => err.halt(req, res, ctrl),
    }
}
