//! `/api/v1/users/me`: the caller's own profile and password.

use salvo::prelude::*;

use super::service;
use crate::auth::accounts::service as accounts;
use crate::directory::users::model::{PasswordForm, ProfileForm, User};
use crate::directory::users::repo;
use crate::error::{AppError, ErrorBody};
use crate::http::depot::DepotExt;
use crate::http::json::read_json;

pub fn router() -> Router {
    Router::with_path("users/me")
        .hoop(crate::http::caller::require_caller)
        .get(get_me)
        .patch(update_me)
        .delete(crate::http::personal_data::erase_me)
        .push(Router::with_path("password").post(change_password))
}

/// The caller's own user record.
#[endpoint(tags("users"), operation_id = "get_me", security(["bearer" = []]),
    responses(
        (status_code = 200, description = "your user record", body = User),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
    ))]
pub async fn get_me(depot: &mut Depot) -> Result<Json<User>, AppError> {
    let principal = depot.principal()?;
    // Authentication read the record with the credential check; light mode has none.
    if let Some(account) = &principal.account {
        return Ok(Json(User::clone(account)));
    }
    let state = depot.app_state()?;
    let user = repo::get(state.platform_pool(), principal.user_id)
        .await?
        .ok_or_else(|| AppError::not_found("user"))?;
    Ok(Json(user))
}

/// Body of `PATCH /users/me`; an omitted field stays as it was.
#[derive(Debug, Clone, serde::Deserialize, salvo::oapi::ToSchema)]
#[salvo(schema(name = "ProfileUpdate"))]
#[serde(deny_unknown_fields)]
pub struct ProfileUpdate {
    #[salvo(schema(
        nullable = false,
        min_length = 1,
        max_length = 120,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub display_name: Option<String>,
    /// Language tag such as `de` or `en-GB`.
    #[salvo(schema(
        nullable = false,
        max_length = 35,
        pattern = r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$"
    ))]
    pub locale: Option<String>,
    /// IANA time zone name such as `Europe/Berlin`, or `UTC`.
    #[salvo(schema(
        nullable = false,
        max_length = 64,
        pattern = r"^[A-Za-z][A-Za-z0-9_+\-]*(/[A-Za-z0-9_+\-]+){0,2}$"
    ))]
    pub timezone: Option<String>,
    /// `http(s)://` URL of a picture; null or blank removes it.
    #[salvo(schema(
        max_length = 500,
        pattern = r"^(https?://[^\s\u0000-\u001F\u007F-\u009F]+|[^\S\u0000-\u001F\u007F-\u009F]*)$"
    ))]
    pub avatar_url: Option<String>,
}

/// Change your display name, locale, time zone or avatar.
#[endpoint(tags("users"), operation_id = "update_me", security(["bearer" = []]),
    status_codes(200, 400, 401, 403, 413, 415, 422),
    request_body = ProfileUpdate,
    responses(
        (status_code = 200, description = "the updated record", body = User),
        (status_code = 400, description = "MALFORMED_REQUEST", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: an API key limited to one garden", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR", body = ErrorBody),
    ))]
pub async fn update_me(req: &mut Request, depot: &mut Depot) -> Result<Json<User>, AppError> {
    let state = depot.app_state()?;
    depot.principal()?.require_account_wide()?;
    let form: ProfileForm = read_json(req, state.config().max_body_bytes).await?;
    Ok(Json(
        service::update_profile(&state, depot.principal()?.user_id, &form).await?,
    ))
}

/// Body of `POST /users/me/password`.
#[derive(Debug, Clone, serde::Deserialize, salvo::oapi::ToSchema)]
#[salvo(schema(name = "PasswordChange"))]
#[serde(deny_unknown_fields)]
pub struct PasswordChange {
    #[salvo(schema(
        min_length = 1,
        max_length = 128,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub current_password: String,
    #[salvo(schema(
        min_length = 10,
        max_length = 128,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub new_password: String,
}

/// Change your password. Every session ends, this one included: log in again.
#[endpoint(tags("users"), operation_id = "change_password", security(["bearer" = []]),
    status_codes(204, 400, 401, 403, 413, 415, 422, 423),
    request_body = PasswordChange,
    responses(
        (status_code = 204, description = "password changed"),
        (status_code = 400, description = "MALFORMED_REQUEST", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: this account has no password (service or system account), or an API key limited to one garden", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: current password wrong, new one of the wrong length", body = ErrorBody),
        (status_code = 423, description = "ACCOUNT_LOCKED", body = ErrorBody),
    ))]
pub async fn change_password(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<(), AppError> {
    let state = depot.app_state()?;
    depot.principal()?.require_account_wide()?;
    let form: PasswordForm = read_json(req, state.config().max_body_bytes).await?;
    accounts::change_password(&state, depot.principal()?.user_id, &form.current, &form.new).await?;
    res.status_code(StatusCode::NO_CONTENT);
    Ok(())
}
