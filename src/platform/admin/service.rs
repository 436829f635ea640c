//! Platform admin use cases: search tenants and users, deactivate and reactivate them, see
//! service accounts.

use time::OffsetDateTime;
use uuid::Uuid;

use crate::directory::AccountType;

use crate::auth::principal::Principal;
use crate::auth::refresh;
use crate::directory::users::model::User;
use crate::directory::users::repo as users;
use crate::error::{AppError, ErrorCode};
use crate::platform::tenants::repo as tenants;
use crate::state::AppState;
use crate::tenancy::TenantSlug;
use crate::tenancy::registry::{self, TenantKind, TenantRecord, TenantStatus};
use crate::values::page::{Page, PageRequest};

/// A tenant as the platform admin sees it.
#[derive(Debug, Clone, serde::Serialize, salvo::oapi::ToSchema)]
#[salvo(schema(name = "AdminTenant"))]
pub struct AdminTenant {
    pub key: Uuid,
    pub slug: String,
    pub name: String,
    pub kind: TenantKind,
    /// `active` or `suspended` (deactivated).
    pub status: String,
    pub placement: String,
    pub schema_version: i64,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
}

impl From<TenantRecord> for AdminTenant {
    fn from(t: TenantRecord) -> Self {
        Self {
            key: t.id,
            slug: t.slug.to_string(),
            name: t.name,
            kind: t.kind,
            status: t.status.as_str().to_owned(),
            placement: t.placement,
            schema_version: t.schema_version,
            created_at: t.created_at,
        }
    }
}

pub async fn search_tenants(
    state: &AppState,
    q: Option<&str>,
    page: PageRequest,
) -> Result<Page<AdminTenant>, AppError> {
    let (total, rows) = tenants::search(state.platform_pool(), q, page.skip, page.limit).await?;
    Ok(Page::new(
        rows.into_iter().map(Into::into).collect(),
        total,
        page,
    ))
}

pub async fn search_users(
    state: &AppState,
    q: Option<&str>,
    account_type: Option<AccountType>,
    page: PageRequest,
) -> Result<Page<User>, AppError> {
    let (total, rows) = users::search(
        state.platform_pool(),
        q,
        account_type,
        page.skip,
        page.limit,
    )
    .await?;
    Ok(Page::new(rows, total, page))
}

async fn tenant_by_slug(state: &AppState, slug: &str) -> Result<TenantRecord, AppError> {
    let slug = TenantSlug::parse(slug).map_err(|_| AppError::not_found("tenant"))?;
    registry::find_by_slug(state.platform_pool(), &slug)
        .await?
        .filter(|t| t.status != TenantStatus::Provisioning)
        .ok_or_else(|| AppError::not_found("tenant"))
}

/// Suspends or reactivates a tenant: a suspended tenant answers 404 to everybody.
pub async fn set_tenant_active(
    state: &AppState,
    slug: &str,
    active: bool,
) -> Result<AdminTenant, AppError> {
    let mut tenant = tenant_by_slug(state, slug).await?;
    if !active && tenant.kind == TenantKind::Platform {
        return Err(AppError::new(
            ErrorCode::StateConflict,
            "the platform tenant cannot be deactivated",
        ));
    }
    let status = if active {
        TenantStatus::Active
    } else {
        TenantStatus::Suspended
    };
    registry::set_status(state.platform_pool(), tenant.id, status).await?;
    state.caches().forget_tenant(tenant.id);
    tenant.status = status;
    Ok(tenant.into())
}

/// Deactivates or reactivates an account. Deactivation ends its sessions at once: refresh
/// families are revoked and every request re-checks `is_active`, so access tokens and API keys
/// stop working on the next call. The service accounts it made, its calendar feeds, its
/// pending invitations and its webhooks end as on a take-back (`directory::grants`);
/// reactivation does not bring them back.
pub async fn set_user_active(
    state: &AppState,
    admin: &Principal,
    key: &str,
    active: bool,
) -> Result<User, AppError> {
    let id = Uuid::parse_str(key).map_err(|_| AppError::not_found("user"))?;
    if !active && id == admin.user_id {
        return Err(AppError::new(
            ErrorCode::Forbidden,
            "you cannot deactivate your own account",
        ));
    }
    let mut tx = state.platform_pool().begin().await?;
    let user = users::set_active(&mut *tx, id, active)
        .await?
        .ok_or_else(|| AppError::not_found("user"))?;
    // What the account handed out ends with it, and stays ended on reactivation.
    let ended = if active {
        None
    } else {
        Some(
            crate::directory::grants::end_all_made_by(
                &mut tx,
                id,
                crate::directory::grants::AccountEnd::Deactivated,
            )
            .await?,
        )
    };
    tx.commit().await?;
    state.caches().forget_user(id);
    if let Some(ended) = ended {
        ended.settle(state).await;
        refresh::revoke_all(state, id).await?;
    }
    Ok(user)
}
