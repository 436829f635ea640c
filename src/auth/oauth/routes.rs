//! REST face of sign-in with OpenID providers: the public login routes under
//! `/api/v1/auth/oauth` (full mode only), the caller's linked identities under
//! `/api/v1/users/me/identities`, and the provider registry under
//! `/api/v1/admin/identity-providers` (platform admins). Link, unlink and every federated
//! login write a row to the audit log (`http.oauth_*`).

use std::time::Instant;

use salvo::http::cookie::{Cookie, SameSite};
use salvo::oapi::extract::PathParam;
use salvo::prelude::*;
use serde_json::json;
use time::OffsetDateTime;
use uuid::Uuid;

use super::model::{Identity, LinkStart, NewProvider, Provider, ProviderUpdate, PublicProvider};
use super::service::{self, CallbackOutcome, CallbackQuery, Event, STATE_TTL_SECONDS};
use crate::auth::cookies;
use crate::config::Config;
use crate::error::{AppError, ErrorBody};
use crate::http::depot::DepotExt;
use crate::http::json::read_json;
use crate::state::AppState;
use crate::state::audit::{self, AuditEntry};

/// Binds the flow to the browser that started it; sent only to the OAuth paths. `Lax`, since
/// the provider's redirect back is a cross-site top-level navigation.
const STATE_COOKIE: &str = "svc_oauth_state";
const STATE_COOKIE_PATH: &str = "/api/v1/auth/oauth";

fn state_cookie(config: &Config, value: String, max_age: time::Duration) -> Cookie<'static> {
    let mut cookie = Cookie::build((STATE_COOKIE, value))
        .path(STATE_COOKIE_PATH)
        .http_only(true)
        .same_site(SameSite::Lax)
        .secure(!config.debug)
        .build();
    cookie.set_max_age(max_age);
    cookie
}

/// `/auth/oauth/…` (unauthenticated except `link`: the login page uses them before anyone is
/// logged in). `limited` is the per-IP budget of password logins, put on every step of a
/// federated one.
pub fn router(limited: impl Fn(Router) -> Router) -> Router {
    Router::with_path("oauth")
        .push(Router::with_path("providers").get(list_oauth_providers))
        .push(
            limited(Router::with_path("{provider}"))
                .get(start_oauth)
                .push(
                    Router::with_path("link")
                        .hoop(crate::http::caller::require_caller)
                        .post(link_oauth_identity),
                )
                .push(Router::with_path("callback").get(oauth_callback)),
        )
}

/// `/users/me/identities` (full mode only).
pub fn identities_router() -> Router {
    Router::with_path("users/me/identities")
        .hoop(crate::http::caller::require_caller)
        .get(list_my_identities)
        .push(Router::with_path("{identity_id}").delete(unlink_my_identity))
}

/// `/admin/identity-providers` (mounted below the platform-admin hoop).
pub fn admin_router() -> Router {
    Router::with_path("identity-providers")
        .get(admin_list_identity_providers)
        .post(admin_create_identity_provider)
        .push(
            Router::with_path("{provider}")
                .patch(admin_update_identity_provider)
                .delete(admin_delete_identity_provider),
        )
}

/// One audit row (tool-call audit log) for a federated sign-in event. The arguments hashed
/// are the provider's slug (no subject, no address).
async fn record(state: &AppState, provider: &str, event: &Event, started: Instant) {
    let (status, error_class) = match event.refused {
        None => ("ok", None),
        Some(class) => ("denied", Some(class)),
    };
    let entry = AuditEntry {
        account_id: event.user,
        api_key_id: None,
        tenant_id: None,
        tool_name: event.action.to_owned(),
        input_hash: crate::values::json::args_hash(&json!({ "provider": provider })),
        response_bytes: 0,
        duration_ms: i32::try_from(started.elapsed().as_millis()).unwrap_or(i32::MAX),
        status,
        error_class,
        created_at: OffsetDateTime::now_utc(),
    };
    audit::record(state, entry).await;
}

/// The identity providers offered for login (enabled ones only).
#[endpoint(tags("auth"), operation_id = "list_oauth_providers",
    responses(
        (status_code = 200, description = "enabled providers", body = Vec<PublicProvider>),
    ))]
pub async fn list_oauth_providers(
    depot: &mut Depot,
) -> Result<Json<Vec<PublicProvider>>, AppError> {
    let state = depot.app_state()?;
    Ok(Json(service::list_public(&state).await?))
}

/// Starts a login at the provider: 302 to its authorization endpoint with `state`, `nonce`
/// and a PKCE S256 challenge; the `state` is also set in the HttpOnly cookie
/// `svc_oauth_state` (10 min), binding the flow to this browser. The endpoints come from the
/// issuer's discovery document (cached) or the registered ones.
#[endpoint(tags("auth"), operation_id = "start_oauth",
    status_codes(302, 404, 429, 503),
    responses(
        (status_code = 302, description = "redirect to the provider (Location header)"),
        (status_code = 404, description = "ENTITY_NOT_FOUND: no such provider, or it is disabled", body = ErrorBody),
        (status_code = 429, description = "RATE_LIMIT_AUTH_PER_MINUTE per client IP exceeded (the budget of password logins)"),
        (status_code = 503, description = "SERVICE_UNAVAILABLE: session store or the provider's discovery document unreachable", body = ErrorBody),
    ))]
pub async fn start_oauth(
    provider: PathParam<String>,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<(), AppError> {
    let state = depot.app_state()?;
    let started = service::begin(&state, &provider, None).await?;
    res.add_cookie(state_cookie(
        state.config(),
        started.state,
        time::Duration::seconds(STATE_TTL_SECONDS as i64),
    ));
    res.render(Redirect::found(started.redirect_to));
    Ok(())
}

/// Starts linking an identity at the provider to the caller's account (an access token from
/// a login; not an API key). Answers the provider URL to navigate the browser to and sets
/// the `svc_oauth_state` cookie as `start_oauth` does; the callback then links the identity
/// (refused when it belongs to another account) and starts a session of this account.
#[endpoint(tags("auth"), operation_id = "link_oauth_identity", security(["bearer" = []]),
    status_codes(200, 401, 403, 404, 429, 503),
    responses(
        (status_code = 200, description = "navigate the browser to `authorization_url`", body = LinkStart),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: an API key, not a logged-in person", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: no such provider, or it is disabled", body = ErrorBody),
        (status_code = 429, description = "RATE_LIMIT_AUTH_PER_MINUTE per client IP exceeded"),
        (status_code = 503, description = "SERVICE_UNAVAILABLE: session store or the provider's discovery document unreachable", body = ErrorBody),
    ))]
pub async fn link_oauth_identity(
    provider: PathParam<String>,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<Json<LinkStart>, AppError> {
    let state = depot.app_state()?;
    let principal = depot.principal()?;
    principal.require_person("linking a sign-in provider")?;
    let user = principal.user_id;
    let started = service::begin(&state, &provider, Some(user)).await?;
    res.add_cookie(state_cookie(
        state.config(),
        started.state,
        time::Duration::seconds(STATE_TTL_SECONDS as i64),
    ));
    res.headers_mut().insert(
        salvo::http::header::CACHE_CONTROL,
        salvo::http::HeaderValue::from_static("no-store"),
    );
    Ok(Json(LinkStart {
        authorization_url: started.redirect_to,
    }))
}

/// The provider's redirect back. On success: the session cookies as a password login sets
/// them (`svc_refresh` as a session cookie, `svc_csrf`) and 302 to
/// `{FRONTEND_URL}/auth/callback?access_token=…&expires_in=…`. Every failure creates nothing
/// and redirects to `{FRONTEND_URL}/auth/callback?error=…&error_description=…&provider=…`
/// with an RFC 6749 code: `invalid_request` (`invalid_state`: missing, foreign, expired or
/// used state; `missing_code`), the provider's own code (`provider_error`), the token
/// endpoint's code such as `invalid_grant` (`code_refused`: expired or used code),
/// `invalid_grant` (`id_token_invalid`: signature, issuer, audience, expiry or nonce),
/// `temporarily_unavailable` (`provider_unreachable`, `concurrent_sign_in`), `server_error`
/// (`provider_misconfigured`) or `access_denied` (`provider_disabled`, `email_required`,
/// `account_exists_provider_untrusted`: an account has this address and the provider is not
/// trusted with addresses (`trust_email`); `account_exists_email_unverified`: an account has
/// this address and either side has not confirmed it (for both: log in with the password and
/// link from there); `email_not_verified`: `REQUIRE_EMAIL_VERIFICATION=true` and no confirmed
/// address; `identity_linked_to_another_account`, `account_inactive`, `account_locked`).
///
/// A provider error code Kultiva does not know becomes `server_error`. Which identity signs in
/// where: a known `(provider, sub)` signs in to its account; a flow started with
/// `POST /auth/oauth/{provider}/link` links it to the caller; an account with the provider's
/// address joins only when the provider vouches for it (`trust_email` on and `email_verified`
/// in the ID token) and the local address is confirmed; otherwise a new account is opened as
/// registration opens one (personal garden, account and identity in one transaction), its
/// address confirmed only when the provider vouched, and none at all for an unvouched address
/// under `REQUIRE_EMAIL_VERIFICATION=true`.
#[endpoint(tags("auth"), operation_id = "oauth_callback",
    status_codes(302, 404, 429, 503),
    parameters(
        ("code" = Option<String>, Query, description = "authorization code from the provider"),
        ("state" = Option<String>, Query, description = "the state sent with the authorization request"),
        ("error" = Option<String>, Query, description = "error code from the provider"),
    ),
    responses(
        (status_code = 302, description = "redirect to the front end's callback page with `access_token` and `expires_in`, or with `error`, `error_description` and `provider`"),
        (status_code = 404, description = "ENTITY_NOT_FOUND: no such provider", body = ErrorBody),
        (status_code = 429, description = "RATE_LIMIT_AUTH_PER_MINUTE per client IP exceeded"),
        (status_code = 503, description = "SERVICE_UNAVAILABLE: session store or database unreachable", body = ErrorBody),
    ))]
pub async fn oauth_callback(
    provider: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<(), AppError> {
    let started = Instant::now();
    let state = depot.app_state()?;
    let code = req.query::<String>("code");
    let oauth_state = req.query::<String>("state");
    let error = req.query::<String>("error");
    let cookie_state = req.cookie(STATE_COOKIE).map(|c| c.value().to_owned());
    let outcome = service::callback(
        &state,
        &provider,
        &CallbackQuery {
            code: code.as_deref(),
            state: oauth_state.as_deref(),
            error: error.as_deref(),
            cookie_state: cookie_state.as_deref(),
        },
    )
    .await?;
    res.add_cookie(state_cookie(
        state.config(),
        String::new(),
        time::Duration::ZERO,
    ));
    res.headers_mut().insert(
        salvo::http::header::CACHE_CONTROL,
        salvo::http::HeaderValue::from_static("no-store"),
    );
    let frontend = &state.config().frontend_url;
    let target = match outcome {
        CallbackOutcome::LoggedIn {
            session,
            user,
            created,
            events,
        } => {
            for event in &events {
                record(&state, &provider, event, started).await;
            }
            tracing::info!(%user, provider = %*provider, created, "federated login");
            cookies::issue(res, state.config(), &session.refresh, session.remember);
            let query = url::form_urlencoded::Serializer::new(String::new())
                .append_pair("access_token", &session.access.access_token)
                .append_pair("expires_in", &session.access.expires_in.to_string())
                .finish();
            format!("{frontend}/auth/callback?{query}")
        }
        CallbackOutcome::Refused { refusal, events } => {
            for event in &events {
                record(&state, &provider, event, started).await;
            }
            let query = url::form_urlencoded::Serializer::new(String::new())
                .append_pair("error", refusal.error)
                .append_pair("error_description", refusal.reason)
                .append_pair("provider", &provider)
                .finish();
            format!("{frontend}/auth/callback?{query}")
        }
    };
    res.render(Redirect::found(target));
    Ok(())
}

/// The caller's sign-ins at identity providers.
#[endpoint(tags("users"), operation_id = "list_my_identities", security(["bearer" = []]),
    status_codes(200, 401, 403),
    responses(
        (status_code = 200, description = "linked identities, oldest first", body = Vec<Identity>),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: an API key limited to one garden", body = ErrorBody),
    ))]
pub async fn list_my_identities(depot: &mut Depot) -> Result<Json<Vec<Identity>>, AppError> {
    let state = depot.app_state()?;
    let principal = depot.principal()?;
    principal.require_account_wide()?;
    Ok(Json(service::identities(&state, principal.user_id).await?))
}

/// Unlinks one of the caller's identities. An account keeps a way to sign in: removing the
/// only identity of an account without a password is refused.
#[endpoint(tags("users"), operation_id = "unlink_my_identity", security(["bearer" = []]),
    status_codes(204, 401, 403, 404, 409, 422),
    parameters(("identity_id" = String, Path, description = "the identity's id (UUID)")),
    responses(
        (status_code = 204, description = "unlinked"),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: an API key, not a logged-in person", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: no such identity of yours", body = ErrorBody),
        (status_code = 409, description = "STATE_CONFLICT: the account's only way to sign in", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: identity_id is not a UUID", body = ErrorBody),
    ))]
pub async fn unlink_my_identity(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<(), AppError> {
    let started = Instant::now();
    let state = depot.app_state()?;
    let principal = depot.principal()?;
    principal.require_person("unlinking a sign-in provider")?;
    let user = principal.user_id;
    let raw = req.param::<String>("identity_id").unwrap_or_default();
    let id = Uuid::parse_str(&raw).map_err(|_| {
        AppError::validation(vec![crate::error::ErrorDetail::new(
            "path.identity_id",
            "must be a UUID",
            "uuid_parsing",
        )])
    })?;
    let provider = service::unlink(&state, user, id).await?;
    record(
        &state,
        &provider,
        &Event {
            action: service::UNLINK_ACTION,
            user,
            refused: None,
        },
        started,
    )
    .await;
    res.status_code(StatusCode::NO_CONTENT);
    Ok(())
}

/// Every identity provider (client secrets are never shown).
#[endpoint(tags("admin"), operation_id = "admin_list_identity_providers", security(["bearer" = []]),
    responses(
        (status_code = 200, description = "all providers", body = Vec<Provider>),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: not an admin of the platform tenant", body = ErrorBody),
    ))]
pub async fn admin_list_identity_providers(
    depot: &mut Depot,
) -> Result<Json<Vec<Provider>>, AppError> {
    let state = depot.app_state()?;
    Ok(Json(service::list(&state).await?))
}

/// Adds an OpenID provider, by its issuer (discovery) or with explicit endpoints. The client
/// secret is stored encrypted with `FERNET_KEY`. Register the redirect URI
/// `{PUBLIC_URL}/api/v1/auth/oauth/{slug}/callback` at the provider.
///
/// Body: `slug`, `display_name`, `issuer`, `client_id`, `client_secret`. With only `issuer`, the
/// endpoints and keys come from `{issuer}/.well-known/openid-configuration` (cached for an hour per
/// process; an ID token signed with a key the cache does not know fetches the JWKS again, for a
/// further unknown key only 30 s later). A provider without discovery is registered with
/// `authorize_url`, `token_url` and `jwks_url` (all three). The token endpoint is called with
/// `client_secret_basic` unless the provider announces only `client_secret_post`, or
/// `token_auth_method` says otherwise. `scopes` default to `openid email profile` (`openid` is
/// required). `trust_email` (default `false`) says whether the provider's `email_verified` is
/// believed: only then does a first sign-in join the existing, confirmed local account with the
/// same address, and does an account it opens count as confirmed (see the update route). A
/// provider with identities cannot be deleted (409: disable it).
#[endpoint(tags("admin"), operation_id = "admin_create_identity_provider", security(["bearer" = []]),
    status_codes(201, 400, 401, 403, 409, 413, 415, 422),
    request_body = NewProvider,
    responses(
        (status_code = 201, description = "provider added", body = Provider),
        (status_code = 400, description = "MALFORMED_REQUEST", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: not an admin of the platform tenant", body = ErrorBody),
        (status_code = 409, description = "DUPLICATE_ENTRY: slug taken; STATE_CONFLICT: FERNET_KEY not configured", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: one detail per invalid field (endpoints: all three or none)", body = ErrorBody),
    ))]
pub async fn admin_create_identity_provider(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<Json<Provider>, AppError> {
    let state = depot.app_state()?;
    let new: NewProvider = read_json(req, state.config().max_body_bytes).await?;
    let provider = service::create(&state, &new).await?;
    res.status_code(StatusCode::CREATED);
    Ok(Json(provider))
}

/// Enables or disables a provider, or sets whether its `email_verified` is trusted.
///
/// Body: `enabled` and/or `trust_email` (an omitted field is kept). Disabled, a provider is no
/// longer offered and completes no login, also none already started; its users' accounts and
/// identities stay. `trust_email` (default `false`): only a trusted provider's
/// `email_verified` joins a first sign-in to the existing local account with that address,
/// and only when that account's address is confirmed (else the callback is refused with
/// `account_exists_provider_untrusted` or `account_exists_email_unverified`); an account it
/// opens counts as confirmed only then. Turning it off leaves identities linked before.
#[endpoint(tags("admin"), operation_id = "admin_update_identity_provider", security(["bearer" = []]),
    status_codes(200, 400, 401, 403, 404, 413, 415, 422),
    request_body = ProviderUpdate,
    responses(
        (status_code = 200, description = "provider updated", body = Provider),
        (status_code = 400, description = "MALFORMED_REQUEST", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: not an admin of the platform tenant", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: no such provider", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: neither enabled nor trust_email given, or one not a boolean", body = ErrorBody),
    ))]
pub async fn admin_update_identity_provider(
    provider: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Provider>, AppError> {
    let state = depot.app_state()?;
    let update: ProviderUpdate = read_json(req, state.config().max_body_bytes).await?;
    Ok(Json(service::update(&state, &provider, &update).await?))
}

/// Removes an identity provider nobody signs in with; flows already started with it fail at
/// the callback.
#[endpoint(tags("admin"), operation_id = "admin_delete_identity_provider", security(["bearer" = []]),
    status_codes(204, 401, 403, 404, 409),
    responses(
        (status_code = 204, description = "removed"),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: not an admin of the platform tenant", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: no such provider", body = ErrorBody),
        (status_code = 409, description = "STATE_CONFLICT: accounts sign in with it (disable it instead)", body = ErrorBody),
    ))]
pub async fn admin_delete_identity_provider(
    provider: PathParam<String>,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<(), AppError> {
    let state = depot.app_state()?;
    service::delete(&state, &provider).await?;
    res.status_code(StatusCode::NO_CONTENT);
    Ok(())
}
