//! REST face of OAuth: the public login-page routes under `/api/v1/auth/oauth` (full mode only)
//! and the provider registry under `/api/v1/admin/identity-providers` (platform admins).

use salvo::http::cookie::{Cookie, SameSite};
use salvo::oapi::extract::PathParam;
use salvo::prelude::*;

use super::model::{NewProvider, Provider, PublicProvider};
use super::service::{self, CallbackQuery, STATE_TTL_SECONDS};
use crate::config::Config;
use crate::error::{AppError, ErrorBody};
use crate::http::depot::DepotExt;
use crate::http::json::read_json;

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

/// `/auth/oauth/…` (unauthenticated: the login page uses them before anyone is logged in).
pub fn router() -> Router {
    Router::with_path("oauth")
        .push(Router::with_path("providers").get(list_oauth_providers))
        .push(
            Router::with_path("{provider}")
                .get(start_oauth)
                .push(Router::with_path("callback").get(oauth_callback)),
        )
}

/// `/admin/identity-providers` (mounted below the platform-admin hoop).
pub fn admin_router() -> Router {
    Router::with_path("identity-providers")
        .get(admin_list_identity_providers)
        .post(admin_create_identity_provider)
        .push(Router::with_path("{provider}").delete(admin_delete_identity_provider))
}

/// The identity providers offered for login.
#[endpoint(tags("auth"), operation_id = "list_oauth_providers",
    responses(
        (status_code = 200, description = "configured providers", body = Vec<PublicProvider>),
    ))]
pub async fn list_oauth_providers(
    depot: &mut Depot,
) -> Result<Json<Vec<PublicProvider>>, AppError> {
    let state = depot.app_state()?;
    Ok(Json(service::list_public(&state).await?))
}

/// Starts a login at the provider: 302 to its authorization endpoint with `state` and a PKCE
/// S256 challenge; the `state` is also set in the HttpOnly cookie `svc_oauth_state` (10 min).
#[endpoint(tags("auth"), operation_id = "start_oauth",
    status_codes(302, 404, 503),
    responses(
        (status_code = 302, description = "redirect to the provider (Location header)"),
        (status_code = 404, description = "ENTITY_NOT_FOUND: no such provider", body = ErrorBody),
        (status_code = 503, description = "SERVICE_UNAVAILABLE: session store unreachable", body = ErrorBody),
    ))]
pub async fn start_oauth(
    provider: PathParam<String>,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<(), AppError> {
    let state = depot.app_state()?;
    let started = service::begin(&state, &provider).await?;
    res.add_cookie(state_cookie(
        state.config(),
        started.state,
        time::Duration::seconds(STATE_TTL_SECONDS as i64),
    ));
    res.render(Redirect::found(started.redirect_to));
    Ok(())
}

/// The provider's redirect back. Validates `state` (it must match this browser's cookie and a
/// pending, unused authorization of this provider), then redirects to
/// `{FRONTEND_URL}/auth/callback?error=…`: `invalid_state`, the provider's own error code,
/// `invalid_request` (no code), or `exchange_not_supported` — the authorization-code exchange
/// is not performed (stub, as specified), so no session is created.
#[endpoint(tags("auth"), operation_id = "oauth_callback",
    status_codes(302, 404, 503),
    parameters(
        ("code" = Option<String>, Query, description = "authorization code from the provider"),
        ("state" = Option<String>, Query, description = "the state sent with the authorization request"),
        ("error" = Option<String>, Query, description = "error code from the provider"),
    ),
    responses(
        (status_code = 302, description = "redirect to the front end's callback page with `error`"),
        (status_code = 404, description = "ENTITY_NOT_FOUND: no such provider", body = ErrorBody),
        (status_code = 503, description = "SERVICE_UNAVAILABLE: session store unreachable", body = ErrorBody),
    ))]
pub async fn oauth_callback(
    provider: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<(), AppError> {
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
    let query = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("error", outcome.error_value())
        .append_pair("provider", &provider)
        .finish();
    let target = format!("{}/auth/callback?{query}", state.config().frontend_url);
    res.render(Redirect::found(target));
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

/// Adds an identity provider. The client secret is stored encrypted with `FERNET_KEY`.
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
        (status_code = 422, description = "VALIDATION_ERROR: one detail per invalid field", body = ErrorBody),
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

/// Removes an identity provider; flows already started with it fail at the callback.
#[endpoint(tags("admin"), operation_id = "admin_delete_identity_provider", security(["bearer" = []]),
    status_codes(204, 401, 403, 404),
    responses(
        (status_code = 204, description = "removed"),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: not an admin of the platform tenant", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: no such provider", body = ErrorBody),
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
