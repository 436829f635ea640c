//! REST face of `/api/v1/user-preferences` (the caller's own; any signed-in caller).

use salvo::prelude::*;

use super::model::{Preferences, PreferencesBody, PreferencesPut};
use super::service::{self, current};
use crate::error::{AppError, ErrorBody};
use crate::http::depot::DepotExt;
use crate::http::json::{read_json, read_object};

pub fn router() -> Router {
    Router::with_path("user-preferences")
        .hoop(crate::http::caller::require_caller)
        .get(get_preferences)
        .put(put_preferences)
        .patch(patch_preferences)
}

/// Your preferences (the defaults until you first save them).
#[endpoint(tags("user-preferences"), operation_id = "get_user_preferences", security(["bearer" = []]),
    responses(
        (status_code = 200, description = "your preferences", body = Preferences),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
    ))]
pub async fn get_preferences(depot: &mut Depot) -> Result<Json<Preferences>, AppError> {
    let state = depot.app_state()?;
    let user = depot.principal()?.user_id;
    Ok(Json(current(&state, user).await?))
}

/// Replace your preferences: every field is required.
///
/// Every field is needed (`digest_hour` may be omitted): `units` (`metric`|`imperial`), `locale` (a
/// language tag), `timezone` (IANA), `experience_level`
/// (`beginner`|`intermediate`|`advanced`|`expert`), `notify_email`, `notify_push`,
/// `notify_care_due`, `notify_digest` (`off`|`daily`|`weekly`), `digest_hour` (0–23, default 7).
/// Bad values are 422 with one detail per field and store nothing; a key limited to one garden is
/// 403.
#[endpoint(tags("user-preferences"), operation_id = "put_user_preferences", security(["bearer" = []]),
    status_codes(200, 400, 401, 403, 413, 415, 422),
    request_body = PreferencesPut,
    responses(
        (status_code = 200, description = "the stored preferences", body = Preferences),
        (status_code = 400, description = "MALFORMED_REQUEST", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: an API key limited to one garden", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: one detail per invalid or missing field", body = ErrorBody),
    ))]
pub async fn put_preferences(
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Preferences>, AppError> {
    let state = depot.app_state()?;
    let principal = depot.principal()?;
    principal.require_account_wide()?;
    let user = principal.user_id;
    let prefs: Preferences = read_json(req, state.config().max_body_bytes).await?;
    service::put(&state, user, &prefs).await?;
    Ok(Json(prefs))
}

/// Change some of your preferences; an omitted field stays as it was.
///
/// Changes the fields it names; null is refused like a missing value.
#[endpoint(tags("user-preferences"), operation_id = "patch_user_preferences", security(["bearer" = []]),
    status_codes(200, 400, 401, 403, 413, 415, 422),
    request_body = PreferencesBody,
    responses(
        (status_code = 200, description = "the stored preferences", body = Preferences),
        (status_code = 400, description = "MALFORMED_REQUEST", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: an API key limited to one garden", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: one detail per invalid field", body = ErrorBody),
    ))]
pub async fn patch_preferences(
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Preferences>, AppError> {
    let state = depot.app_state()?;
    let principal = depot.principal()?;
    principal.require_account_wide()?;
    let user = principal.user_id;
    let body = read_object(req, state.config().max_body_bytes).await?;
    Ok(Json(service::patch(&state, user, body).await?))
}
