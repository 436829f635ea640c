//! `/api/v1/auth/api-keys` (also in light mode, for the system user) and
//! `/api/v1/auth/service-accounts/validate`.

use salvo::oapi::extract::PathParam;
use salvo::prelude::*;

use super::model::{ApiKey, NewApiKey};
use super::service::{self, ServiceAccountContext};
use crate::error::{AppError, ErrorBody};
use crate::http::depot::DepotExt;
use crate::http::json::{FromJson, JsonFields, read_json};

/// Key management: in both modes (light mode's keys belong to the system user).
pub fn router() -> Router {
    Router::with_path("api-keys")
        .hoop(crate::http::caller::require_caller)
        .get(list_api_keys)
        .post(create_api_key)
        .push(Router::with_path("{key_id}").delete(revoke_api_key))
}

/// Service-account key validation (full mode).
pub fn validate_router() -> Router {
    Router::with_path("service-accounts/validate").post(validate_service_account)
}

/// Create an API key. The raw key is in this response only.
#[endpoint(tags("auth"), operation_id = "create_api_key", security(["bearer" = []]),
    status_codes(201, 400, 401, 403, 404, 413, 415, 422),
    request_body = NewApiKey,
    responses(
        (status_code = 201, description = "key created; `raw_key` shown once", body = ApiKey),
        (status_code = 400, description = "MALFORMED_REQUEST", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: keys are managed with an access token, not a key", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: tenant_scope names no tenant of yours", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: label or tenant_scope malformed", body = ErrorBody),
    ))]
pub async fn create_api_key(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<Json<ApiKey>, AppError> {
    let state = depot.app_state()?;
    let new: NewApiKey = read_json(req, state.config().max_body_bytes).await?;
    let key = service::create(&state, depot.principal()?, &new).await?;
    res.status_code(StatusCode::CREATED);
    res.headers_mut().insert(
        salvo::http::header::CACHE_CONTROL,
        salvo::http::HeaderValue::from_static("no-store"),
    );
    Ok(Json(key))
}

/// The caller's API keys, newest first, without the secrets.
#[endpoint(tags("auth"), operation_id = "list_api_keys", security(["bearer" = []]),
    responses(
        (status_code = 200, description = "the keys", body = Vec<ApiKey>),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: keys are managed with an access token, not a key", body = ErrorBody),
    ))]
pub async fn list_api_keys(depot: &mut Depot) -> Result<Json<Vec<ApiKey>>, AppError> {
    let state = depot.app_state()?;
    Ok(Json(service::list(&state, depot.principal()?).await?))
}

/// Revoke one of the caller's keys; it stops working at once.
#[endpoint(tags("auth"), operation_id = "revoke_api_key", security(["bearer" = []]),
    status_codes(204, 401, 403, 404),
    responses(
        (status_code = 204, description = "revoked"),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: keys are managed with an access token, not a key", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: no such active key of yours", body = ErrorBody),
    ))]
pub async fn revoke_api_key(
    key_id: PathParam<String>,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<(), AppError> {
    let state = depot.app_state()?;
    service::revoke(&state, depot.principal()?, &key_id).await?;
    res.status_code(StatusCode::NO_CONTENT);
    Ok(())
}

/// Body of `POST /auth/service-accounts/validate`.
#[derive(Debug, Clone, serde::Deserialize, salvo::oapi::ToSchema)]
#[salvo(schema(name = "ValidateServiceAccountRequest"))]
#[serde(deny_unknown_fields)]
pub struct ValidateRequest {
    /// The raw API key.
    #[salvo(schema(
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub api_key: String,
}

struct PresentedKey(String);

impl FromJson for PresentedKey {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        f.secret("api_key", 1, 200).map(Self)
    }
}

/// Validate a service-account key and return its context. Any other key (invalid, revoked,
/// personal) gets the same 401.
#[endpoint(tags("auth"), operation_id = "validate_service_account",
    status_codes(200, 400, 401, 413, 415, 422),
    request_body = ValidateRequest,
    responses(
        (status_code = 200, description = "the service-account context", body = ServiceAccountContext),
        (status_code = 400, description = "MALFORMED_REQUEST", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: not a valid service-account key", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR", body = ErrorBody),
    ))]
pub async fn validate_service_account(
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<ServiceAccountContext>, AppError> {
    let state = depot.app_state()?;
    let PresentedKey(raw) = read_json(req, state.config().max_body_bytes).await?;
    Ok(Json(service::validate_service_account(&state, &raw).await?))
}
