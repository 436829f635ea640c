//! Service-account use cases: the garden admins' REST routes and the operator CLI call these.
//!
//! Rules: managing needs the admin role in the garden and an interactive credential (an access
//! token, or light mode): an API key cannot mint more keys, so a leaked key cannot make itself
//! permanent. The account records the person who made it; it ends with that person's grants
//! (take-back, removal or demotion: see `directory::grants`). A new account's role is at most the caller's own. Keys made through the garden
//! are limited to it. Removing an account from a garden ends its membership and revokes its
//! keys limited to that garden; an account left without any garden is deactivated and all its
//! keys are revoked (the common case: one account, one garden).

use uuid::Uuid;

use super::model::{NewServiceAccount, ServiceAccount, ServiceAccountKey};
use super::repo;
use crate::auth::api_keys::model::{ApiKey, RawApiKey};
use crate::auth::api_keys::repo::{self as keys, NewKeyRow};
use crate::auth::principal::Principal;
use crate::directory::grants;
use crate::directory::memberships::repo as memberships;
use crate::directory::users::model::User;
use crate::directory::users::repo::{self as users, NewAccount};
use crate::directory::{AccountType, Role};
use crate::error::{AppError, ErrorCode, ErrorDetail};
use crate::platform::access::TenantCtx;
use crate::platform::tenants::service::may_grant;
use crate::state::AppState;
use crate::tenancy::TenantRecord;
use crate::values::page::{Page, PageRequest};

pub const LIST_MAX_LIMIT: i64 = 200;

fn require_interactive(principal: &Principal) -> Result<(), AppError> {
    principal.require_person("service accounts are managed")
}

fn not_found() -> AppError {
    AppError::not_found("service account")
}

/// A name as the CLI passes it (the REST body checks the same on parsing).
fn checked_name(name: &str) -> Result<&str, AppError> {
    let name = name.trim();
    let count = name.chars().count();
    if count == 0 || count > super::model::NAME_MAX || name.chars().any(char::is_control) {
        return Err(AppError::validation(vec![ErrorDetail::new(
            "name",
            "the name must have 1 to 100 characters and no control characters",
            "value_error",
        )]));
    }
    Ok(name)
}

/// Creates a service account with a role in one garden and its first key, in one transaction.
/// `key_scope`: the garden the key is limited to (None: every garden of the account).
pub async fn create_in(
    state: &AppState,
    tenant: &TenantRecord,
    name: &str,
    role: Role,
    key_scope: Option<Uuid>,
) -> Result<(User, ApiKey), AppError> {
    create_made_by(state, tenant, name, role, key_scope, None).await
}

/// [`create_in`], recording the person who made the account (`None`: the operator CLI). A
/// made account ends with its maker's grants (see `directory::grants`).
pub async fn create_made_by(
    state: &AppState,
    tenant: &TenantRecord,
    name: &str,
    role: Role,
    key_scope: Option<Uuid>,
    maker: Option<Uuid>,
) -> Result<(User, ApiKey), AppError> {
    let name = checked_name(name)?;
    let mut tx = state.platform_pool().begin().await?;
    let user = users::insert(
        &mut *tx,
        &NewAccount {
            email: None,
            display_name: name,
            account_type: AccountType::Service,
            password_hash: None,
            email_verified: false,
        },
    )
    .await?
    .ok_or_else(|| AppError::new(ErrorCode::StateConflict, "the account could not be created"))?;
    memberships::add(&mut *tx, tenant.id, user.key, role).await?;
    if let Some(maker) = maker {
        repo::set_maker(&mut *tx, user.key, maker).await?;
    }
    let raw = RawApiKey::generate();
    let mut key = keys::insert(
        &mut *tx,
        &NewKeyRow {
            user: user.key,
            label: name,
            key_prefix: raw.prefix(),
            hash: raw.hash(),
            tenant_scope: key_scope,
        },
    )
    .await?;
    tx.commit().await?;
    key.raw_key = Some(raw.expose().to_owned());
    Ok((user, key))
}

/// A service account by its key (any garden); `None` for other accounts.
pub async fn find(state: &AppState, account: Uuid) -> Result<Option<User>, AppError> {
    Ok(users::get(state.platform_pool(), account)
        .await?
        .filter(|u| u.account_type == AccountType::Service))
}

/// Gives the account a role in a garden, or changes it there.
pub async fn set_membership(
    state: &AppState,
    account: &User,
    tenant: &TenantRecord,
    role: Role,
) -> Result<(), AppError> {
    let db = state.platform_pool();
    if !memberships::add(db, tenant.id, account.key, role).await? {
        memberships::set_role(db, tenant.id, account.key, role).await?;
        state.caches().forget_membership(tenant.id, account.key);
    }
    Ok(())
}

/// Deactivates the account and revokes all its keys; how many keys were revoked.
pub async fn deactivate(state: &AppState, account: &User) -> Result<u64, AppError> {
    let mut tx = state.platform_pool().begin().await?;
    users::set_active(&mut *tx, account.key, false).await?;
    let revoked = grants::revoke_keys(&mut *tx, account.key).await?;
    tx.commit().await?;
    forget(state, account.key, &revoked);
    Ok(revoked.len() as u64)
}

fn forget(state: &AppState, account: Uuid, revoked: &[Uuid]) {
    let caches = state.caches();
    caches.forget_user(account);
    for key in revoked {
        caches.forget_api_key(*key);
    }
}

// ---------------------------------------------------------------------------------------------
// The garden admins' face (`/t/{slug}/service-accounts`).
// ---------------------------------------------------------------------------------------------

/// The garden's service accounts with their keys that work here, oldest first.
pub async fn list(
    state: &AppState,
    principal: &Principal,
    ctx: &TenantCtx,
    page: PageRequest,
) -> Result<Page<ServiceAccount>, AppError> {
    require_interactive(principal)?;
    ctx.require(Role::Admin)?;
    let db = state.platform_pool();
    let all = repo::of_tenant(db, ctx.tenant.id).await?;
    let total = all.len() as i64;
    let mut items: Vec<ServiceAccount> = all
        .into_iter()
        .skip(usize::try_from(page.skip).unwrap_or(usize::MAX))
        .take(usize::try_from(page.limit).unwrap_or(0))
        .collect();
    let ids: Vec<Uuid> = items.iter().map(|a| a.key).collect();
    let mut keys = repo::keys_in_tenant(db, ctx.tenant.id, &ids).await?;
    for item in &mut items {
        item.api_keys = keys.remove(&item.key).unwrap_or_default();
        item.last_used_at = item.api_keys.iter().filter_map(|k| k.last_used_at).max();
    }
    Ok(Page::new(items, total, page))
}

/// Creates a service account in the garden; the answer carries the raw key, once.
pub async fn create(
    state: &AppState,
    principal: &Principal,
    ctx: &TenantCtx,
    new: &NewServiceAccount,
) -> Result<ServiceAccount, AppError> {
    require_interactive(principal)?;
    // Admin role, and a role no higher than the caller's own (the rule of invitations).
    may_grant(ctx, new.role)?;
    let maker = (!principal.is_light()).then_some(principal.user_id);
    let (user, key) = create_made_by(
        state,
        &ctx.tenant,
        &new.name,
        new.role,
        Some(ctx.tenant.id),
        maker,
    )
    .await?;
    Ok(ServiceAccount {
        key: user.key,
        name: user.display_name,
        role: new.role,
        is_active: user.is_active,
        created_at: user.created_at,
        last_used_at: None,
        api_keys: vec![ServiceAccountKey {
            key: key.key,
            key_prefix: key.key_prefix,
            tenant_scope: key.tenant_scope,
            created_at: key.created_at,
            last_used_at: None,
        }],
        raw_key: key.raw_key,
    })
}

/// Removes a service account from the garden (see the module notes for what is revoked).
/// Any account that is not a service account of this garden is 404.
pub async fn remove(
    state: &AppState,
    principal: &Principal,
    ctx: &TenantCtx,
    account_key: &str,
) -> Result<(), AppError> {
    require_interactive(principal)?;
    ctx.require(Role::Admin)?;
    let account = Uuid::parse_str(account_key).map_err(|_| not_found())?;
    let tenant = ctx.tenant.id;
    let mut tx = state.platform_pool().begin().await?;
    repo::one_of_tenant(&mut *tx, tenant, account)
        .await?
        .ok_or_else(not_found)?;
    let revoked = grants::detach(&mut tx, tenant, account).await?;
    tx.commit().await?;
    state.caches().forget_membership(tenant, account);
    forget(state, account, &revoked);
    Ok(())
}
