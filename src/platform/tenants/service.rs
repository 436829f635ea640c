//! Tenant and membership use cases for members (platform administration is in `admin`).

use uuid::Uuid;

use super::model::{NewTenant, Tenant, TenantChange};
use super::repo as tenants;
use crate::auth::principal::Principal;
use crate::directory::grants::{self, MemberChange};
use crate::directory::memberships::model::Member;
use crate::directory::memberships::repo;
use crate::directory::{AccountType, Role};
use crate::error::{AppError, ErrorCode, ErrorDetail};
use crate::platform::access::{TenantCtx, resolve_for};
use crate::state::AppState;
use crate::tenancy::provision::{self, ProvisionError, ProvisionOptions};
use crate::tenancy::{TenantKind, TenantRecord, TenantSlug};
use crate::values::page::{Page, PageRequest};

pub async fn create(
    state: &AppState,
    principal: &Principal,
    new: &NewTenant,
) -> Result<Tenant, AppError> {
    if principal.account_type == AccountType::Service {
        return Err(AppError::new(
            ErrorCode::Forbidden,
            "service accounts cannot create tenants",
        ));
    }
    principal.require_account_wide()?;
    // The account's row stays locked until the garden is recorded as its own: concurrent
    // creations of one account are counted one after the other.
    let mut tx = state.platform_pool().begin().await?;
    let cap = state.config().max_gardens_per_account;
    let created = tenants::lock_and_count_created(&mut tx, principal.user_id).await?;
    if created >= i64::from(cap) {
        return Err(garden_limit(cap));
    }
    // The caller becomes admin (and creator) in the statement that activates the garden.
    let options = ProvisionOptions {
        owner: Some(principal.user_id),
        ..ProvisionOptions::default()
    };
    let tenant = provision::create_tenant(state, &new.slug, &new.name, options)
        .await
        .map_err(|err| match err {
            ProvisionError::SlugTaken(slug) => {
                AppError::duplicate(format!("a tenant with slug {slug} exists"))
            }
            other => other.into_app_error(),
        })?;
    tx.commit().await?;
    Ok(Tenant::from_record(&tenant, Role::Admin))
}

/// 409 `STATE_CONFLICT` once an account has created `MAX_GARDENS_PER_ACCOUNT` gardens.
pub(crate) fn garden_limit(cap: u32) -> AppError {
    AppError::new(
        ErrorCode::StateConflict,
        format!(
            "garden limit reached: an account can create at most {cap} gardens (its personal \
             garden included); delete one or ask the operator"
        ),
    )
    .with_details(vec![ErrorDetail::new(
        "max_gardens_per_account",
        cap.to_string(),
        "garden_limit_reached",
    )])
}

/// The caller's active memberships with the role in each, by slug; a key scoped to one tenant
/// sees only that one. (REST `GET /tenants/` and the tool server's gardens.)
pub async fn active_memberships(
    state: &AppState,
    principal: &Principal,
) -> Result<Vec<(TenantRecord, Role)>, AppError> {
    Ok(repo::tenants_of(state.platform_pool(), principal.user_id)
        .await?
        .into_iter()
        .filter(|(t, _)| t.status == crate::tenancy::TenantStatus::Active)
        .filter(|(t, _)| principal.tenant_scope().is_none_or(|s| s == t.id))
        .collect())
}

/// The caller's tenants (active ones; a key scoped to one tenant sees only that one).
pub async fn list_mine(
    state: &AppState,
    principal: &Principal,
    page: PageRequest,
) -> Result<Page<Tenant>, AppError> {
    let all: Vec<Tenant> = active_memberships(state, principal)
        .await?
        .into_iter()
        .map(|(t, role)| Tenant::from_record(&t, role))
        .collect();
    let total = all.len() as i64;
    let items = all
        .into_iter()
        .skip(page.skip as usize)
        .take(page.limit as usize)
        .collect();
    Ok(Page::new(items, total, page))
}

pub async fn get(state: &AppState, principal: &Principal, slug: &str) -> Result<Tenant, AppError> {
    let ctx = resolve_for(state, principal, slug).await?;
    Ok(Tenant::from_record(&ctx.tenant, ctx.role))
}

pub async fn update(
    state: &AppState,
    principal: &Principal,
    slug: &str,
    change: &TenantChange,
) -> Result<Tenant, AppError> {
    let ctx = resolve_for(state, principal, slug).await?;
    ctx.require(Role::Admin)?;
    let tenant = match &change.name {
        Some(name) => {
            let renamed = tenants::rename(state.platform_pool(), ctx.tenant.id, name)
                .await?
                .ok_or_else(|| AppError::not_found("tenant"))?;
            state.caches().forget_tenant(renamed.id);
            renamed
        }
        None => ctx.tenant,
    };
    Ok(Tenant::from_record(&tenant, ctx.role))
}

/// Deletes an organisation garden with all its data. Personal, platform and default tenants
/// belong to the platform's structure and cannot be deleted this way.
pub async fn delete(state: &AppState, principal: &Principal, slug: &str) -> Result<(), AppError> {
    let ctx = resolve_for(state, principal, slug).await?;
    ctx.require(Role::Admin)?;
    if ctx.tenant.kind != TenantKind::Organisation {
        return Err(AppError::new(
            ErrorCode::StateConflict,
            format!("a {} tenant cannot be deleted", ctx.tenant.kind.as_str()),
        ));
    }
    let slug = TenantSlug::parse(slug).map_err(|_| AppError::not_found("tenant"))?;
    provision::drop_tenant(state, &slug)
        .await
        .map_err(|err| match err {
            ProvisionError::NotFound(_) => AppError::not_found("tenant"),
            other => other.into(),
        })?;
    Ok(())
}

pub async fn members(
    state: &AppState,
    principal: &Principal,
    slug: &str,
) -> Result<Vec<Member>, AppError> {
    let ctx = resolve_for(state, principal, slug).await?;
    let mut members = repo::members(state.platform_pool(), ctx.tenant.id).await?;
    // Addresses are for the admins, who manage the members; everyone else (whatever the
    // credential: the caller's role decides) sees display names and its own address.
    if ctx.role < Role::Admin {
        for member in &mut members {
            if member.user_key != principal.user_id {
                member.email = None;
            }
        }
    }
    Ok(members)
}

/// An admin grants roles up to its own.
pub(crate) fn may_grant(ctx: &TenantCtx, role: Role) -> Result<(), AppError> {
    ctx.require(Role::Admin)?;
    if role > ctx.role {
        return Err(AppError::new(
            ErrorCode::Forbidden,
            "you can grant roles up to your own",
        ));
    }
    Ok(())
}

fn last_admin() -> AppError {
    AppError::new(
        ErrorCode::StateConflict,
        "the last admin of a tenant cannot be removed or demoted",
    )
}

fn member_key(raw: &str) -> Result<Uuid, AppError> {
    Uuid::parse_str(raw).map_err(|_| AppError::not_found("member"))
}

pub async fn change_role(
    state: &AppState,
    principal: &Principal,
    slug: &str,
    user_key: &str,
    role: Role,
) -> Result<Member, AppError> {
    let ctx = resolve_for(state, principal, slug).await?;
    principal.require_person("roles are changed")?;
    may_grant(&ctx, role)?;
    let user = member_key(user_key)?;
    let mut tx = state.platform_pool().begin().await?;
    let admins = repo::lock_admins(&mut tx, ctx.tenant.id).await?;
    let current = repo::role_in(&mut *tx, ctx.tenant.id, user)
        .await?
        .ok_or_else(|| AppError::not_found("member"))?;
    if current == Role::Admin && role != Role::Admin && admins <= 1 {
        return Err(last_admin());
    }
    repo::set_role(&mut *tx, ctx.tenant.id, user, role).await?;
    // A demoted member's grants in the garden end with the rank they came from.
    let ended = if role < current {
        Some(grants::end_made_in(&mut tx, ctx.tenant.id, user, MemberChange::Demoted).await?)
    } else {
        None
    };
    tx.commit().await?;
    // Other replicas hear it from the database (migration 0008); this one forgets now.
    state.caches().forget_membership(ctx.tenant.id, user);
    if let Some(ended) = ended {
        ended.settle(state).await;
    }
    repo::member(state.platform_pool(), ctx.tenant.id, user)
        .await?
        .ok_or_else(|| AppError::not_found("member"))
}

/// Admins remove anyone; any member may leave. Either needs a person (not an API key). What
/// the member made in the garden ends with the membership (`directory::grants`).
pub async fn remove_member(
    state: &AppState,
    principal: &Principal,
    slug: &str,
    user_key: &str,
) -> Result<(), AppError> {
    let ctx = resolve_for(state, principal, slug).await?;
    principal.require_person("members are removed")?;
    let user = member_key(user_key)?;
    if user != principal.user_id {
        ctx.require(Role::Admin)?;
    }
    let mut tx = state.platform_pool().begin().await?;
    let admins = repo::lock_admins(&mut tx, ctx.tenant.id).await?;
    let current = repo::role_in(&mut *tx, ctx.tenant.id, user)
        .await?
        .ok_or_else(|| AppError::not_found("member"))?;
    if current == Role::Admin && admins <= 1 {
        return Err(last_admin());
    }
    repo::remove(&mut *tx, ctx.tenant.id, user).await?;
    let ended = grants::end_made_in(&mut tx, ctx.tenant.id, user, MemberChange::Removed).await?;
    tx.commit().await?;
    state.caches().forget_membership(ctx.tenant.id, user);
    ended.settle(state).await;
    Ok(())
}
