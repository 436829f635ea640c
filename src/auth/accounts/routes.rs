//! REST face of local accounts under `/api/v1/auth` (full mode only; light mode has no
//! authentication, so these paths do not exist there).

use salvo::prelude::*;

use super::model::{
    Confirmation, EmailToken, Login, LoginRequest, RegisterRequest, Registration, ResetAddress,
    ResetConfirm, ResetConfirmRequest, ResetRequest, TokenRequest, TokenResponse,
};
use super::service::{self, Session};
use crate::auth::cookies;
use crate::directory::users::model::User;
use crate::error::{AppError, ErrorBody};
use crate::http::depot::DepotExt;
use crate::http::json::read_json;

/// The account routes; `limited` is the per-IP limit put on register and login.
pub fn router(limited: impl Fn(Router) -> Router) -> Router {
    Router::new()
        .push(limited(Router::with_path("register")).post(register))
        .push(limited(Router::with_path("login").post(login)))
        .push(limited(
            Router::with_path("verify-email").post(verify_email),
        ))
        .push(Router::with_path("refresh").post(refresh))
        .push(Router::with_path("logout").post(logout))
        .push(
            Router::with_path("logout-all")
                .hoop(crate::http::caller::require_caller)
                .post(logout_all),
        )
        .push(limited(
            Router::with_path("password-reset/request").post(password_reset_request),
        ))
        .push(limited(
            Router::with_path("password-reset/confirm").post(password_reset_confirm),
        ))
}

fn send_session(
    res: &mut Response,
    depot: &Depot,
    session: Session,
) -> Result<Json<TokenResponse>, AppError> {
    let state = depot.app_state()?;
    cookies::issue(res, state.config(), &session.refresh, session.remember);
    res.headers_mut().insert(
        salvo::http::header::CACHE_CONTROL,
        salvo::http::HeaderValue::from_static("no-store"),
    );
    Ok(Json(session.access))
}

/// Create an account. A personal garden is created with the new user as its admin, and a
/// verification link is mailed.
#[endpoint(tags("auth"), operation_id = "register",
    status_codes(201, 400, 409, 413, 415, 422, 429),
    request_body = RegisterRequest,
    responses(
        (status_code = 201, description = "account created", body = User),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 409, description = "DUPLICATE_ENTRY: an account with this e-mail address exists", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: one detail per invalid field", body = ErrorBody),
        (status_code = 429, description = "RATE_LIMIT_AUTH_PER_MINUTE per client IP exceeded (login and register share one budget); or, for a well-formed registration only, a tenth of RATE_LIMIT_REGISTRATION_PER_MINUTE per client IP, then RATE_LIMIT_REGISTRATION_PER_MINUTE for the whole service"),
    ))]
pub async fn register(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<(), AppError> {
    let state = depot.app_state()?;
    // Validated before any registration budget is drawn: a malformed request costs nobody
    // a registration.
    let form: Registration = read_json(req, state.config().max_body_bytes).await?;
    if !crate::http::rate_limit::draw_registration(&state, req, res).await {
        return Ok(());
    }
    // The REST face names the personal garden in English (no language input here yet).
    let user: User = service::register(&state, &form, None).await?;
    res.status_code(StatusCode::CREATED);
    res.render(Json(user));
    Ok(())
}

/// Confirm an e-mail address with the token from the verification mail.
#[endpoint(tags("auth"), operation_id = "verify_email",
    status_codes(200, 400, 413, 415, 422),
    request_body = TokenRequest,
    responses(
        (status_code = 200, description = "address confirmed", body = Confirmation),
        (status_code = 400, description = "MALFORMED_REQUEST", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: token unknown, used or expired", body = ErrorBody),
    ))]
pub async fn verify_email(
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Confirmation>, AppError> {
    let state = depot.app_state()?;
    let EmailToken(token) = read_json(req, state.config().max_body_bytes).await?;
    service::verify_email(&state, &token).await?;
    Ok(Json(Confirmation {
        message: "e-mail address confirmed",
    }))
}

/// Log in with e-mail and password. Sets the HttpOnly refresh cookie `svc_refresh` (Path
/// `/api/v1/auth`; 30 days with `remember_me`, else a session cookie) and the CSRF cookie
/// `svc_csrf`.
#[endpoint(tags("auth"), operation_id = "login",
    status_codes(200, 400, 401, 403, 413, 415, 422, 423, 429, 503),
    request_body = LoginRequest,
    responses(
        (status_code = 200, description = "logged in", body = TokenResponse),
        (status_code = 400, description = "MALFORMED_REQUEST", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: invalid e-mail or password", body = ErrorBody),
        (status_code = 403, description = "EMAIL_NOT_VERIFIED (with REQUIRE_EMAIL_VERIFICATION) or FORBIDDEN (account deactivated)", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR", body = ErrorBody),
        (status_code = 423, description = "ACCOUNT_LOCKED: remaining time in the message and in details", body = ErrorBody),
        (status_code = 429, description = "RATE_LIMIT_AUTH_PER_MINUTE per client IP exceeded (login and register share one budget)"),
        (status_code = 503, description = "SERVICE_UNAVAILABLE: session store unreachable", body = ErrorBody),
    ))]
pub async fn login(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<Json<TokenResponse>, AppError> {
    let state = depot.app_state()?;
    let form: Login = read_json(req, state.config().max_body_bytes).await?;
    let session = service::login(&state, &form).await?;
    send_session(res, depot, session)
}

/// Exchange the refresh cookie for a new access token; the refresh token rotates. Presenting
/// an already rotated token revokes every token of that login. Needs `X-CSRF-Token`.
#[endpoint(tags("auth"), operation_id = "refresh",
    parameters(("X-CSRF-Token" = String, Header, description = "value of the svc_csrf cookie")),
    responses(
        (status_code = 200, description = "new access token; new cookies", body = TokenResponse),
        (status_code = 401, description = "INVALID_TOKEN: refresh cookie missing, invalid, expired or revoked", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: CSRF header missing or different from the cookie", body = ErrorBody),
        (status_code = 503, description = "SERVICE_UNAVAILABLE: session store unreachable", body = ErrorBody),
    ))]
pub async fn refresh(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<Json<TokenResponse>, AppError> {
    let state = depot.app_state()?;
    cookies::check_csrf(req)?;
    match service::refresh(&state, cookies::refresh_token(req)).await {
        Ok(session) => send_session(res, depot, session),
        Err(err) => {
            cookies::clear(res, state.config());
            Err(err)
        }
    }
}

/// End this login: the refresh token stops working and both cookies are deleted.
#[endpoint(tags("auth"), operation_id = "logout",
    status_codes(204, 403, 503),
    parameters(("X-CSRF-Token" = String, Header, description = "value of the svc_csrf cookie")),
    responses(
        (status_code = 204, description = "logged out"),
        (status_code = 403, description = "FORBIDDEN: CSRF header missing or different from the cookie", body = ErrorBody),
        (status_code = 503, description = "SERVICE_UNAVAILABLE: session store unreachable", body = ErrorBody),
    ))]
pub async fn logout(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<(), AppError> {
    let state = depot.app_state()?;
    cookies::check_csrf(req)?;
    service::logout(&state, cookies::refresh_token(req)).await?;
    cookies::clear(res, state.config());
    res.status_code(StatusCode::NO_CONTENT);
    Ok(())
}

/// End every login of the account: all refresh tokens and every access token issued so far.
#[endpoint(tags("auth"), operation_id = "logout_all", security(["bearer" = []]),
    status_codes(204, 401, 403, 503),
    parameters(("X-CSRF-Token" = String, Header, description = "value of the svc_csrf cookie")),
    responses(
        (status_code = 204, description = "every session ended"),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: CSRF header missing or different from the cookie, or an API key limited to one garden", body = ErrorBody),
        (status_code = 503, description = "SERVICE_UNAVAILABLE: session store unreachable", body = ErrorBody),
    ))]
pub async fn logout_all(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<(), AppError> {
    let state = depot.app_state()?;
    let principal = depot.principal()?;
    principal.require_account_wide()?;
    let user = principal.user_id;
    cookies::check_csrf(req)?;
    service::logout_all(&state, user).await?;
    cookies::clear(res, state.config());
    res.status_code(StatusCode::NO_CONTENT);
    Ok(())
}

/// Ask for a password reset link. The answer is the same whether or not the address has an
/// account.
#[endpoint(tags("auth"), operation_id = "password_reset_request",
    status_codes(202, 400, 413, 415, 422),
    request_body = ResetRequest,
    responses(
        (status_code = 202, description = "accepted (always the same answer)", body = Confirmation),
        (status_code = 400, description = "MALFORMED_REQUEST", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: not an e-mail address", body = ErrorBody),
    ))]
pub async fn password_reset_request(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<Json<Confirmation>, AppError> {
    let state = depot.app_state()?;
    let ResetAddress(email) = read_json(req, state.config().max_body_bytes).await?;
    service::request_password_reset(&state, email);
    res.status_code(StatusCode::ACCEPTED);
    Ok(Json(Confirmation {
        message: "if the address belongs to an account, a reset link is on its way",
    }))
}

/// Set a new password with the token from the reset mail. Every session of the account ends.
#[endpoint(tags("auth"), operation_id = "password_reset_confirm",
    status_codes(200, 400, 413, 415, 422),
    request_body = ResetConfirmRequest,
    responses(
        (status_code = 200, description = "password set", body = Confirmation),
        (status_code = 400, description = "MALFORMED_REQUEST", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: token unknown, used or expired, or password length", body = ErrorBody),
    ))]
pub async fn password_reset_confirm(
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Confirmation>, AppError> {
    let state = depot.app_state()?;
    let form: ResetConfirm = read_json(req, state.config().max_body_bytes).await?;
    service::confirm_password_reset(&state, &form).await?;
    Ok(Json(Confirmation {
        message: "password set; log in with the new password",
    }))
}
