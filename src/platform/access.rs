//! A caller's access to a garden: the garden of a slug with the caller's role in it (one query,
//! or the caches), or the same 404 for every slug the caller may not see.

use crate::auth::{Principal, Role};
use crate::directory::memberships::repo as memberships;
use crate::error::{AppError, ErrorCode};
use crate::state::AppState;
use crate::tenancy::context::{migrate_if_behind, tenant_not_found};
use crate::tenancy::names::TenantSlug;
use crate::tenancy::registry::{TenantRecord, TenantStatus};

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
