//! `/api/v1/users/me`: the caller's own profile and password.

use salvo::prelude::*;

use super::model::User;
use super::repo::{self, ProfileChange};
use crate::auth::accounts::service as accounts;
use crate::auth::password::{PASSWORD_MAX_CHARS, PASSWORD_MIN_CHARS};
use crate::error::{AppError, ErrorBody};
use crate::http::depot::DepotExt;
use crate::http::json::{FromJson, JsonFields, Patch, read_json};

pub fn router() -> Router {
    Router::with_path("users/me")
        .hoop(crate::auth::require_caller)
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

struct ProfileForm {
    display_name: Option<String>,
    locale: Option<String>,
    timezone: Option<String>,
    avatar_url: Patch<String>,
}

pub(crate) fn matches_locale(v: &str) -> bool {
    let mut parts = v.split('-');
    let lang_ok = parts
        .next()
        .is_some_and(|p| (2..=3).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_lowercase()));
    lang_ok
        && parts.all(|p| (2..=8).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_alphanumeric()))
}

pub(crate) fn matches_timezone(v: &str) -> bool {
    let mut parts = v.split('/');
    let first_ok = parts.next().is_some_and(|p| {
        p.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
            && p.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'+' | b'-'))
    });
    let rest: Vec<&str> = parts.collect();
    first_ok
        && rest.len() <= 2
        && rest.iter().all(|p| {
            !p.is_empty()
                && p.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'+' | b'-'))
        })
}

/// `http://` or `https://` and at least one more character, none of them blank.
fn is_http_url(url: &str) -> bool {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"));
    rest.is_some_and(|r| !r.is_empty() && !r.chars().any(crate::http::json::is_blank))
}

impl FromJson for ProfileForm {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let display_name = f.patch_text("display_name", 120);
        let locale = f.patch_text("locale", 35);
        let timezone = f.patch_text("timezone", 64);
        let avatar_url = f.patch_clearable("avatar_url", 500);
        if let Some(Some(l)) = &locale
            && !matches_locale(l)
        {
            f.reject_field(
                "locale",
                "must be a language tag such as de or en-GB",
                "value_error",
            );
        }
        if let Some(Some(t)) = &timezone
            && !matches_timezone(t)
        {
            f.reject_field(
                "timezone",
                "must be an IANA time zone name such as Europe/Berlin",
                "value_error",
            );
        }
        if let Some(Patch::Set(url)) = &avatar_url
            && !is_http_url(url)
        {
            f.reject_field("avatar_url", "must be an http(s) URL", "value_error");
        }
        Some(Self {
            display_name: display_name?,
            locale: locale?,
            timezone: timezone?,
            avatar_url: avatar_url?,
        })
    }
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
    let avatar = match &form.avatar_url {
        Patch::Keep => None,
        Patch::Clear => Some(None),
        Patch::Set(url) => Some(Some(url.as_str())),
    };
    let user = repo::update_profile(
        state.platform_pool(),
        depot.principal()?.user_id,
        &ProfileChange {
            display_name: form.display_name.as_deref(),
            locale: form.locale.as_deref(),
            timezone: form.timezone.as_deref(),
            avatar_url: avatar,
        },
    )
    .await?
    .ok_or_else(|| AppError::not_found("user"))?;
    state.caches().forget_user(user.key);
    Ok(Json(user))
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

struct PasswordForm {
    current: String,
    new: String,
}

impl FromJson for PasswordForm {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let current = f.secret("current_password", 1, PASSWORD_MAX_CHARS);
        let new = f.secret("new_password", PASSWORD_MIN_CHARS, PASSWORD_MAX_CHARS);
        Some(Self {
            current: current?,
            new: new?,
        })
    }
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
