//! API keys: creation (shown once), listing, revocation, and authentication of presented keys.

use uuid::Uuid;

use super::model::{ApiKey, NewApiKey, RawApiKey};
use super::repo::{self, NewKeyRow};
use crate::auth::cached::KeyEntry;
use crate::auth::principal::{Credential, Principal};
use crate::directory::memberships::repo as memberships;
use crate::directory::{AccountType, Role};
use crate::error::{AppError, ErrorCode, ErrorDetail};
use crate::state::AppState;

/// Keys are managed with an access token (or in light mode); a key cannot mint more keys, so a
/// leaked key cannot make itself permanent.
fn require_interactive(principal: &Principal) -> Result<(), AppError> {
    match principal.credential {
        Credential::AccessToken | Credential::Light => Ok(()),
        Credential::ApiKey { .. } => Err(AppError::new(
            ErrorCode::Forbidden,
            "API keys are managed with an access token, not with another API key",
        )),
    }
}

pub async fn create(
    state: &AppState,
    principal: &Principal,
    new: &NewApiKey,
) -> Result<ApiKey, AppError> {
    require_interactive(principal)?;
    let db = state.platform_pool();
    let scope = match new.tenant_scope.as_deref() {
        None => None,
        Some(slug) => {
            let found = memberships::tenant_with_role(db, slug, principal.user_id).await?;
            match found {
                Some((tenant, Some(_))) => Some(tenant.id),
                Some((tenant, None)) if principal.is_light() => Some(tenant.id),
                _ => {
                    // A garden you are not a member of looks exactly like a missing one.
                    return Err(AppError::not_found("tenant").with_details(vec![
                        ErrorDetail::new(
                            "body.tenant_scope",
                            "no tenant of that slug among your memberships",
                            "ENTITY_NOT_FOUND",
                        ),
                    ]));
                }
            }
        }
    };
    create_for(state, principal.user_id, &new.label, scope).await
}

/// Mints a key for an account (also used by the operator CLI for service accounts).
pub async fn create_for(
    state: &AppState,
    user: Uuid,
    label: &str,
    tenant_scope: Option<Uuid>,
) -> Result<ApiKey, AppError> {
    let raw = RawApiKey::generate();
    let mut key = repo::insert(
        state.platform_pool(),
        &NewKeyRow {
            user,
            label,
            key_prefix: raw.prefix(),
            hash: raw.hash(),
            tenant_scope,
        },
    )
    .await?;
    key.raw_key = Some(raw.expose().to_owned());
    Ok(key)
}

pub async fn list(state: &AppState, principal: &Principal) -> Result<Vec<ApiKey>, AppError> {
    require_interactive(principal)?;
    Ok(repo::list_for_user(state.platform_pool(), principal.user_id).await?)
}

pub async fn revoke(state: &AppState, principal: &Principal, key: &str) -> Result<(), AppError> {
    require_interactive(principal)?;
    let not_found = || AppError::not_found("API key");
    let id = Uuid::parse_str(key).map_err(|_| not_found())?;
    if repo::revoke(state.platform_pool(), principal.user_id, id).await? {
        state.caches().forget_api_key(id);
        Ok(())
    } else {
        Err(not_found())
    }
}

/// The account behind a presented key, or `None` for an unknown, revoked or deactivated one.
/// Known keys and their owners' accounts come from the caches (`crate::cache`).
pub async fn authenticate(state: &AppState, raw: &str) -> Result<Option<Principal>, AppError> {
    let Some(raw) = RawApiKey::parse(raw) else {
        return Ok(None);
    };
    let hash = raw.hash();
    let caches = state.caches();
    let (key, account) = match caches.api_key(hash.as_bytes()) {
        Some(key) => {
            let Some(account) = crate::auth::account(state, key.user_id).await? else {
                return Ok(None);
            };
            (key, account.user)
        }
        None => {
            let ticket = caches.ticket();
            let Some(owner) = repo::owner_by_hash(state.platform_pool(), &hash).await? else {
                return Ok(None);
            };
            if !owner.usable {
                // Revoked, or the account is deactivated.
                return Ok(None);
            }
            let key = KeyEntry {
                key_id: owner.key_id,
                stored_hash: owner.stored_hash,
                user_id: owner.account.key,
                tenant_scope: owner.tenant_scope,
                last_used: std::sync::Arc::new(std::sync::atomic::AtomicI64::new(
                    owner.last_used_at.map_or(0, |t| t.unix_timestamp()),
                )),
            };
            caches.keep_api_key(*hash.as_bytes(), key.clone(), ticket);
            (key, std::sync::Arc::new(owner.account))
        }
    };
    // The lookup used the digest as a key; confirm it in constant time all the same.
    if !account.is_active || !key.stored_hash.matches(&hash) {
        return Ok(None);
    }
    if key.claim_use_stamp(time::OffsetDateTime::now_utc().unix_timestamp()) {
        let pool = state.platform_pool().clone();
        let key_id = key.key_id;
        tokio::spawn(async move {
            if let Err(err) = repo::touch(&pool, key_id).await {
                tracing::warn!(error = %err, "recording API key use failed");
            }
        });
    }
    Ok(Some(Principal {
        user_id: account.key,
        account_type: account.account_type,
        credential: Credential::ApiKey {
            key_id: key.key_id,
            tenant_scope: key.tenant_scope,
        },
        account: Some(account),
    }))
}

/// One tenant of a service-account context.
#[derive(Debug, Clone, serde::Serialize, salvo::oapi::ToSchema)]
pub struct ContextTenant {
    pub tenant_key: Uuid,
    pub tenant_slug: String,
    pub role: Role,
    pub mcp_permissions: Vec<String>,
}

/// The service-account context of the specification.
#[derive(Debug, Clone, serde::Serialize, salvo::oapi::ToSchema)]
pub struct ServiceAccountContext {
    pub service_account_key: Uuid,
    pub display_name: String,
    pub tenants: Vec<ContextTenant>,
}

/// Validates a service-account key. Every other outcome (malformed, unknown, revoked,
/// deactivated, a personal key) is the same generic 401.
pub async fn validate_service_account(
    state: &AppState,
    raw: &str,
) -> Result<ServiceAccountContext, AppError> {
    let generic = || AppError::new(ErrorCode::Unauthorized, "invalid API key");
    let principal = authenticate(state, raw).await?.ok_or_else(generic)?;
    if principal.account_type != AccountType::Service {
        return Err(generic());
    }
    let db = state.platform_pool();
    let user = crate::directory::users::repo::get(db, principal.user_id)
        .await?
        .ok_or_else(generic)?;
    let scope = principal.tenant_scope();
    let tenants = memberships::tenants_of(db, principal.user_id)
        .await?
        .into_iter()
        .filter(|(t, _)| t.status == crate::tenancy::TenantStatus::Active)
        .filter(|(t, _)| scope.is_none_or(|s| s == t.id))
        .map(|(t, role)| ContextTenant {
            tenant_key: t.id,
            tenant_slug: t.slug.to_string(),
            role,
            mcp_permissions: role
                .mcp_permissions()
                .iter()
                .map(|p| (*p).to_owned())
                .collect(),
        })
        .collect();
    Ok(ServiceAccountContext {
        service_account_key: user.key,
        display_name: user.display_name,
        tenants,
    })
}
