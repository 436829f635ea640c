//! Who is calling and what they may do. [`authenticate`] establishes the caller of a request
//! (JWT access token, or API key as `X-API-Key` / `Authorization: Bearer`; light mode: the
//! system user) as a [`Principal`]; [`is_platform_admin`] says whether it administers the
//! platform. The REST face's hoops over these (`require_caller`, `require_platform_admin`)
//! live in `crate::http::caller`; the records they read (users, memberships, roles) in
//! `crate::directory`.

pub mod accounts;
pub mod api_keys;
pub mod cached;
pub mod cookies;
pub mod light;
pub mod oauth;
pub mod principal;
pub mod refresh;
pub mod sealed;

use salvo::Request;

pub use crate::crypto::{jwt, password, secrets};
pub use crate::directory::{AccountType, Role};
pub use principal::{Credential, Principal};

use crate::config::ServiceMode;
use crate::directory::memberships::repo as memberships;
use crate::directory::users::repo as users;
use crate::error::{AppError, ErrorCode};
use crate::state::AppState;
use crate::tenancy::TenantKind;

/// A credential as found in the request headers.
enum Presented<'a> {
    ApiKey(&'a str),
    Bearer(&'a str),
}

/// `X-API-Key` wins over `Authorization`; a header that is present but unreadable or of
/// another scheme counts as no credential.
fn presented(req: &Request) -> Option<Presented<'_>> {
    if let Some(key) = req.headers().get("x-api-key") {
        return key.to_str().ok().map(|k| Presented::ApiKey(k.trim()));
    }
    let value = req.headers().get("authorization")?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| Presented::Bearer(token.trim()))
}

/// Whether the request carries a credential header (valid or not).
pub fn presents_credential(req: &Request) -> bool {
    presented(req).is_some()
}

fn invalid_credential() -> AppError {
    AppError::new(
        ErrorCode::InvalidToken,
        "the credential is invalid, expired or revoked",
    )
}

/// Establishes the caller, or the 401 that says why not.
pub async fn authenticate(state: &AppState, req: &Request) -> Result<Principal, AppError> {
    if state.config().service_mode == ServiceMode::Light {
        let light = light::identity(state).await?;
        return Ok(Principal {
            user_id: light.system_user,
            account_type: AccountType::System,
            credential: Credential::Light,
            account: None,
        });
    }
    let token = match presented(req) {
        None => {
            return Err(AppError::new(
                ErrorCode::Unauthorized,
                "authentication required: send a bearer access token or an API key",
            ));
        }
        Some(Presented::ApiKey(key)) => {
            return api_keys::service::authenticate(state, key)
                .await?
                .ok_or_else(invalid_credential);
        }
        Some(Presented::Bearer(token)) => token,
    };
    if token.starts_with(api_keys::model::KEY_PREFIX) {
        return api_keys::service::authenticate(state, token)
            .await?
            .ok_or_else(invalid_credential);
    }
    let claims = state.jwt().verify(token).ok_or_else(invalid_credential)?;
    let status = account(state, claims.sub)
        .await?
        .ok_or_else(invalid_credential)?;
    // A deactivated account or a token from before logout-all is no longer valid.
    if !status.user.is_active || status.token_generation != claims.r#gen {
        return Err(invalid_credential());
    }
    Ok(Principal {
        user_id: claims.sub,
        account_type: status.user.account_type,
        credential: Credential::AccessToken,
        account: Some(status.user),
    })
}

/// The account record and token generation every authenticated request checks: from the
/// cache (see `crate::cache` for how long an entry may live), else from the database.
pub async fn account(
    state: &AppState,
    user: uuid::Uuid,
) -> Result<Option<crate::auth::cached::AccountEntry>, AppError> {
    let caches = state.caches();
    if let Some(hit) = caches.account(user) {
        return Ok(Some(hit));
    }
    let ticket = caches.ticket();
    let Some(status) = users::status(state.platform_pool(), user).await? else {
        return Ok(None);
    };
    let entry = crate::auth::cached::AccountEntry {
        user: std::sync::Arc::new(status.user),
        token_generation: status.token_generation,
    };
    caches.keep_account(entry.clone(), ticket);
    Ok(Some(entry))
}

/// Whether the caller administers the platform: admin of the platform tenant (light mode: the
/// system user is). A key scoped to another tenant does not carry platform rights.
pub async fn is_platform_admin(state: &AppState, principal: &Principal) -> Result<bool, AppError> {
    if principal.is_light() {
        return Ok(true);
    }
    let db = state.platform_pool();
    let role = memberships::role_in_kind(db, TenantKind::Platform, principal.user_id).await?;
    if role != Some(Role::Admin) {
        return Ok(false);
    }
    Ok(match principal.tenant_scope() {
        None => true,
        Some(scope) => crate::tenancy::registry::find_by_id(db, scope)
            .await?
            .is_some_and(|t| t.kind == TenantKind::Platform),
    })
}
