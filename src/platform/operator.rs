//! Operator steps outside the public API (run through the CLI): service accounts (through the
//! same service as the garden admins' routes, `platform::service_accounts`) and the first
//! platform admin.

use uuid::Uuid;

use crate::auth::api_keys::model::ApiKey;
use crate::directory::memberships::repo as memberships;
use crate::directory::users::model::{Email, User};
use crate::directory::users::repo as users;
use crate::directory::{AccountType, Role};
use crate::error::AppError;
use crate::platform::service_accounts::service as service_accounts;
use crate::state::AppState;
use crate::tenancy::context::resolve;
use crate::tenancy::provision::{self, ProvisionError, ProvisionOptions};
use crate::tenancy::{TenantKind, TenantRecord, TenantSlug, registry};

/// Slug of the platform operators' tenant (made by the first `platform-admin grant`).
pub const PLATFORM_TENANT_SLUG: &str = "platform-admin";

#[derive(Debug, thiserror::Error)]
pub enum OperatorError {
    #[error("{0}")]
    Refused(String),
    #[error(transparent)]
    App(#[from] AppError),
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
}

fn refused(why: impl Into<String>) -> OperatorError {
    OperatorError::Refused(why.into())
}

async fn active_tenant(state: &AppState, slug: &str) -> Result<TenantRecord, OperatorError> {
    resolve(state, slug)
        .await
        .map_err(|_| refused(format!("no active tenant with slug {slug:?}")))
}

/// Creates a service account with one membership and its first key (the raw key is in the
/// returned record, shown once). The key is not limited to the tenant, so `add-membership`
/// extends it to more gardens.
pub async fn create_service_account(
    state: &AppState,
    name: &str,
    tenant_slug: &str,
    role: Role,
) -> Result<(User, ApiKey), OperatorError> {
    let tenant = active_tenant(state, tenant_slug).await?;
    Ok(service_accounts::create_in(state, &tenant, name, role, None).await?)
}

async fn service_account(state: &AppState, key: &str) -> Result<User, OperatorError> {
    let id = Uuid::parse_str(key).map_err(|_| refused(format!("{key:?} is not an account key")))?;
    service_accounts::find(state, id)
        .await?
        .ok_or_else(|| refused(format!("no service account {key}")))
}

/// Adds (or changes) the account's role in another tenant.
pub async fn add_membership(
    state: &AppState,
    account: &str,
    tenant_slug: &str,
    role: Role,
) -> Result<(), OperatorError> {
    let user = service_account(state, account).await?;
    let tenant = active_tenant(state, tenant_slug).await?;
    Ok(service_accounts::set_membership(state, &user, &tenant, role).await?)
}

/// Deactivates the account and revokes all its keys.
pub async fn revoke_service_account(state: &AppState, account: &str) -> Result<u64, OperatorError> {
    let user = service_account(state, account).await?;
    Ok(service_accounts::deactivate(state, &user).await?)
}

/// Makes an existing account admin of the platform tenant (created on first use).
pub async fn grant_platform_admin(state: &AppState, email: &str) -> Result<User, OperatorError> {
    let email = Email::parse(email).map_err(|why| refused(format!("{email:?}: {why}")))?;
    let db = state.platform_pool();
    let user = users::find_by_email(db, &email)
        .await?
        .filter(|u| u.account_type == AccountType::User)
        .ok_or_else(|| refused(format!("no account with e-mail {email}; register it first")))?;
    let tenant = platform_tenant(state).await?;
    if !memberships::add(db, tenant.id, user.key, Role::Admin).await? {
        memberships::set_role(db, tenant.id, user.key, Role::Admin).await?;
    }
    // Rights are read per request, so the grant applies to existing sessions at once.
    Ok(user)
}

async fn platform_tenant(state: &AppState) -> Result<TenantRecord, OperatorError> {
    let db = state.platform_pool();
    let existing: Option<uuid::Uuid> =
        sqlx::query_scalar("SELECT id FROM platform.tenants WHERE kind = 'platform'")
            .fetch_optional(db)
            .await?;
    if let Some(id) = existing {
        return registry::find_by_id(db, id)
            .await?
            .ok_or_else(|| refused("the platform tenant vanished"));
    }
    let slug = TenantSlug::parse(PLATFORM_TENANT_SLUG)
        .map_err(|_| refused("platform tenant slug invalid"))?;
    match provision::create_tenant(
        state,
        &slug,
        "Platform administration",
        ProvisionOptions {
            kind: TenantKind::Platform,
            ..ProvisionOptions::default()
        },
    )
    .await
    {
        Ok(t) => Ok(t),
        Err(ProvisionError::SlugTaken(_)) => Err(refused(format!(
            "slug {PLATFORM_TENANT_SLUG} is taken by another tenant"
        ))),
        Err(err) => Err(refused(err.to_string())),
    }
}
