//! REST face of `/imports` (platform admin only).

use salvo::oapi::extract::PathParam;
use salvo::prelude::*;

use super::model::{ImportJob, Upload};
use super::service;
use crate::error::{AppError, ErrorBody};
use crate::http::depot::DepotExt;
use crate::http::json::read_json;
use crate::http::pagination::{Page, PageRequest};

pub fn router() -> Router {
    Router::with_path("imports")
        .hoop(crate::http::caller::require_platform_admin)
        .get(list_imports)
        .post(upload_import)
        .push(Router::with_path("{key}").get(get_import))
        .push(Router::with_path("{key}/confirm").post(confirm_import))
}

/// Upload a CSV of master data: it is checked (row-level errors) and previewed, not applied.
///
/// Body `{kind, csv}`: `kind` is one of the seed files' kinds; `csv` up to 100,000 characters and
/// 2,000 rows. The header names the seed file's fields; references are names (`family`, `species`,
/// `phase`), lists are separated by `;`, objects (`toxicity`) are JSON in the cell, and an empty cell
/// is absent. The answer (201) has `rows`, `valid`, row-level `errors` (`{row, message}`; row 1 is the
/// header) and a `preview` (`create`, `update` or `unchanged` per row); nothing is written yet.
#[endpoint(tags("imports"), security(["bearer" = []]), operation_id = "upload_import",
    status_codes(201, 400, 401, 403, 413, 415, 422, 500),
    request_body = Upload,
    responses(
        (status_code = 201, description = "the import with its preview and row errors", body = ImportJob),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: not a platform admin", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: unknown kind, no header, unknown columns, malformed quoting", body = ErrorBody),
    ))]
pub async fn upload_import(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<Json<ImportJob>, AppError> {
    let state = depot.app_state()?;
    let body: Upload = read_json(req, state.config().max_body_bytes).await?;
    let job = service::upload(&state, &body).await?;
    res.status_code(StatusCode::CREATED);
    Ok(Json(job))
}

/// Apply a previewed import: all rows in one transaction, or none.
///
/// The rows are checked again against the catalogue as it is now and upserted by normalised name in
/// one transaction; any bad row refuses the whole file (422, `details[].field` = `csv.row[N]`). A
/// confirmed import cannot be confirmed again (409).
#[endpoint(tags("imports"), security(["bearer" = []]), operation_id = "confirm_import",
    responses(
        (status_code = 200, description = "the confirmed import with its summary", body = ImportJob),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: not a platform admin", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND", body = ErrorBody),
        (status_code = 409, description = "STATE_CONFLICT: confirmed already", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: a row is invalid (details per row); nothing was written", body = ErrorBody),
    ))]
pub async fn confirm_import(
    key: PathParam<String>,
    depot: &mut Depot,
) -> Result<Json<ImportJob>, AppError> {
    let state = depot.app_state()?;
    Ok(Json(service::confirm(&state, &key).await?))
}

/// One import.
#[endpoint(tags("imports"), security(["bearer" = []]), operation_id = "get_import",
    responses(
        (status_code = 200, description = "the import", body = ImportJob),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: not a platform admin", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND", body = ErrorBody),
    ))]
pub async fn get_import(
    key: PathParam<String>,
    depot: &mut Depot,
) -> Result<Json<ImportJob>, AppError> {
    let state = depot.app_state()?;
    Ok(Json(service::get(&state, &key).await?))
}

/// Imports, newest first.
#[endpoint(tags("imports"), security(["bearer" = []]), operation_id = "list_imports",
    parameters(
        ("skip" = Option<i64>, Query, minimum = 0, maximum = 100000, description = "items to skip (default 0)"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 100, description = "page size (default 100)"),
    ),
    responses(
        (status_code = 200, description = "one page of imports", body = Page<ImportJob>),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: not a platform admin", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: skip or limit out of range", body = ErrorBody),
    ))]
pub async fn list_imports(
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Page<ImportJob>>, AppError> {
    let state = depot.app_state()?;
    let page = PageRequest::from_request(req, 100)?;
    Ok(Json(service::list(&state, page).await?))
}
