//! REST face of service accounts under `/api/v1/t/{slug}/service-accounts` (garden admins).

use salvo::oapi::extract::PathParam;
use salvo::prelude::*;

use super::model::{NewServiceAccount, ServiceAccount, ServiceAccountCreate};
use super::service::{self, LIST_MAX_LIMIT};
use crate::error::{AppError, ErrorBody};
use crate::http::depot::DepotExt;
use crate::http::json::read_json;
use crate::http::pagination::{Page, PageRequest};
use crate::http::roles::{Admin, Requires};

pub fn router() -> Router {
    Router::with_path("service-accounts")
        .get(list_service_accounts)
        .post(create_service_account)
        .push(Router::with_path("{account_key}").delete(revoke_service_account))
}

/// The garden's service accounts (admin, with an access token): name, role, creation, the
/// prefixes and last use of their keys that work here. Never a raw key.
#[endpoint(tags("service-accounts"), security(["bearer" = []]), operation_id = "list_service_accounts",
    parameters(
        ("slug" = String, Path, description = "tenant slug"),
        ("skip" = Option<i64>, Query, minimum = 0, maximum = 100000, description = "items to skip (default 0)"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 200, description = "page size (default 100)"),
    ),
    responses(
        (status_code = 200, description = "one page of service accounts, oldest first", body = Page<ServiceAccount>),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: admin role needed, or an API key was used", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: skip or limit out of range", body = ErrorBody),
    ))]
pub async fn list_service_accounts(
    _role: Requires<Admin>,
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Page<ServiceAccount>>, AppError> {
    let state = depot.app_state()?;
    let page = PageRequest::from_request(req, LIST_MAX_LIMIT)?;
    let ctx = depot.tenant_ctx()?;
    Ok(Json(
        service::list(&state, depot.principal()?, ctx, page).await?,
    ))
}

/// Create a service account with a role in this garden (admin, with an access token; a role
/// up to your own). The answer carries its API key in `raw_key`, shown this once; the key is
/// limited to this garden and works on the tool server (`/api/v1/mcp`).
///
/// The body is closed: `name` (1–100 characters), `role` (`viewer|grower|admin`, never above your
/// own: 403). Lists show name, role, creation, active flag, the prefixes and last use of the keys
/// that work here, never a raw key or a key limited to another garden. Another garden's service
/// account, a person's or an unknown key is 404 here.
#[endpoint(tags("service-accounts"), security(["bearer" = []]), operation_id = "create_service_account",
    status_codes(201, 400, 401, 403, 404, 413, 415, 422, 500),
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = ServiceAccountCreate,
    responses(
        (status_code = 201, description = "service account created; raw_key is shown only here", body = ServiceAccount),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: admin role needed, a role above your own, or an API key was used", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: one detail per invalid field", body = ErrorBody),
    ))]
pub async fn create_service_account(
    _role: Requires<Admin>,
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<Json<ServiceAccount>, AppError> {
    let state = depot.app_state()?;
    let new: NewServiceAccount = read_json(req, state.config().max_body_bytes).await?;
    let ctx = depot.tenant_ctx()?;
    let account = service::create(&state, depot.principal()?, ctx, &new).await?;
    res.status_code(StatusCode::CREATED);
    Ok(Json(account))
}

/// Revoke a service account of this garden (admin, with an access token): its membership ends
/// and its keys limited to this garden are revoked; an account left without any garden is
/// deactivated with all its keys. Its keys then get 401 on the tool server.
///
/// An account left without a garden (the usual case) is deactivated with all its keys, at once on
/// every replica; a garden the operator also gave it stays.
#[endpoint(tags("service-accounts"), security(["bearer" = []]), operation_id = "revoke_service_account",
    status_codes(204, 401, 403, 404, 500),
    parameters(("slug" = String, Path, description = "tenant slug")),
    responses(
        (status_code = 204, description = "revoked"),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: admin role needed, or an API key was used", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant, or no service account of this garden with that key", body = ErrorBody),
    ))]
pub async fn revoke_service_account(
    _role: Requires<Admin>,
    account_key: PathParam<String>,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<(), AppError> {
    let state = depot.app_state()?;
    let ctx = depot.tenant_ctx()?;
    service::remove(&state, depot.principal()?, ctx, &account_key).await?;
    res.status_code(StatusCode::NO_CONTENT);
    Ok(())
}
