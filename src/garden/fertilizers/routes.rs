//! REST face of a garden's fertilisers (`/api/v1/t/{slug}/fertilizers`) and of the garden's
//! mixing protocol (`/api/v1/t/{slug}/mixing-protocol`, global and own products). Reads (and
//! the mixing protocol, which writes nothing) for every member; writes for growers and admins.

use salvo::oapi::extract::PathParam;
use salvo::prelude::*;

use super::model::{FertilizerType, Form, GardenFertilizer, LIST_MAX_LIMIT, Owner};
use super::service::{self, Query};
use crate::calculations::model::MixingProtocolBody;
use crate::calculations::service::{self as calculations, ProductSource};
use crate::catalog::engine::routes::{Body, CreateShape, PatchShape};
use crate::catalog::fertilizers::model::{FERTILIZER_TYPES, FORMS, FertilizerKind};
use crate::error::{AppError, ErrorBody, ErrorDetail};
use crate::http::depot::DepotExt;
use crate::http::json::read_json;
use crate::http::pagination::{Page, PageRequest};
use crate::rules::mixing_protocol::MixingProtocol;

pub fn router() -> Router {
    Router::with_path("fertilizers")
        .get(list_fertilizers)
        .post(create_fertilizer)
        .push(
            Router::with_path("{fertilizer_key}")
                .get(get_fertilizer)
                .patch(update_fertilizer)
                .delete(delete_fertilizer),
        )
}

pub fn mixing_router() -> Router {
    Router::with_path("mixing-protocol").post(mixing_protocol)
}

fn query_error(name: &str, reason: &str) -> ErrorDetail {
    ErrorDetail::new(format!("query.{name}"), reason, "value_error")
}

/// List global (catalogue) and the garden's own fertilisers in one list, each marked by
/// `owner`: global ones first, then the garden's, each by name.
///
/// `owner: global` first, then `owner: garden`, each by name; filter `owner`. The global catalogue
/// (`GET /api/v1/fertilizers`) filters `fertilizer_type`, `form`, `is_organic`, and `q` searches
/// name and brand. The tool `list_fertilizers` takes `query`, `organic_only`, `owner`. Field
/// bounds: `npk` sum ≤ 100, `ec_contribution_per_ml` 0–5, `recommended_dose_ml_per_liter` 0.01–50,
/// `max_dose_ml_per_liter` 0.1–50 and not below the dose, `mixing_priority` 1–100.
#[endpoint(tags("fertilizers"), security(["bearer" = []]), operation_id = "list_garden_fertilizers",
    parameters(
        ("slug" = String, Path, description = "tenant slug"),
        ("q" = Option<String>, Query, max_length = 100, pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$", description = "part of the name or brand"),
        ("owner" = Option<Owner>, Query, description = "global or garden"),
        ("fertilizer_type" = Option<FertilizerType>, Query, description = "fertiliser type"),
        ("form" = Option<Form>, Query, description = "liquid, powder or granular"),
        ("is_organic" = Option<bool>, Query, description = "organic products only (true) or none (false)"),
        ("skip" = Option<i64>, Query, minimum = 0, maximum = 100000, description = "items to skip (default 0)"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 200, description = "page size (default 100)"),
    ),
    responses(
        (status_code = 200, description = "one page of fertilisers", body = Page<GardenFertilizer>),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: a query parameter is out of range", body = ErrorBody),
    ))]
pub async fn list_fertilizers(
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Page<GardenFertilizer>>, AppError> {
    let state = depot.app_state()?;
    let mut details = Vec::new();
    let page = PageRequest::from_request(req, LIST_MAX_LIMIT)
        .map_err(|e| details.extend(e.details().iter().cloned()))
        .ok();
    let queries = req.queries();
    let q = queries.get("q").cloned();
    if q.as_deref()
        .is_some_and(|q| q.chars().count() > 100 || q.chars().any(char::is_control))
    {
        details.push(query_error(
            "q",
            "at most 100 characters, no control characters",
        ));
    }
    let owner = match queries.get("owner").map(String::as_str) {
        None => None,
        Some(raw) => {
            let o = Owner::parse(raw);
            if o.is_none() {
                details.push(query_error("owner", "must be global or garden"));
            }
            o
        }
    };
    let mut one_of = |name: &str, values: &[&str]| -> Option<String> {
        let v = queries.get(name).cloned();
        if v.as_deref().is_some_and(|v| !values.contains(&v)) {
            details.push(query_error(
                name,
                &format!("must be one of: {}", values.join(", ")),
            ));
        }
        v
    };
    let fertilizer_type = one_of("fertilizer_type", FERTILIZER_TYPES);
    let form = one_of("form", FORMS);
    let is_organic = match queries.get("is_organic").map(String::as_str) {
        None => None,
        Some("true") => Some(true),
        Some("false") => Some(false),
        Some(_) => {
            details.push(query_error("is_organic", "must be true or false"));
            None
        }
    };
    let page = match page {
        Some(p) if details.is_empty() => p,
        _ => return Err(AppError::validation(details)),
    };
    let query = Query {
        q,
        owner,
        fertilizer_type,
        form,
        is_organic,
    };
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(service::list(&state, tenant, &query, page).await?))
}

/// Get one fertiliser: a global key (UUID) or `tenant:<uuid>` of the garden's own.
#[endpoint(tags("fertilizers"), security(["bearer" = []]), operation_id = "get_garden_fertilizer",
    parameters(("slug" = String, Path, description = "tenant slug")),
    responses(
        (status_code = 200, description = "the fertiliser", body = GardenFertilizer),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or fertiliser", body = ErrorBody),
    ))]
pub async fn get_fertilizer(
    fertilizer_key: PathParam<String>,
    depot: &mut Depot,
) -> Result<Json<GardenFertilizer>, AppError> {
    let state = depot.app_state()?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(service::get(&state, tenant, &fertilizer_key).await?))
}

/// Create a fertiliser owned by the garden (grower): the same fields and rules as a global one.
#[endpoint(tags("fertilizers"), security(["bearer" = []]), operation_id = "create_garden_fertilizer",
    status_codes(201, 400, 401, 403, 404, 409, 413, 415, 422, 500),
    parameters(("slug" = String, Path, description = "tenant slug")),
    responses(
        (status_code = 201, description = "fertiliser created (owner garden)", body = GardenFertilizer),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant", body = ErrorBody),
        (status_code = 409, description = "DUPLICATE_ENTRY: the garden has a fertiliser of that name", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: one detail per invalid field", body = ErrorBody),
    ))]
pub async fn create_fertilizer(
    body: Body<FertilizerKind, CreateShape>,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<Json<GardenFertilizer>, AppError> {
    let state = depot.app_state()?;
    let tenant = &depot.tenant_ctx()?.tenant;
    let created = service::create(&state, tenant, body.0).await?;
    res.status_code(StatusCode::CREATED);
    Ok(Json(created))
}

/// Change one of the garden's own fertilisers (grower): omitted fields stay, null clears an
/// optional field. A global fertiliser is 403.
#[endpoint(tags("fertilizers"), security(["bearer" = []]), operation_id = "update_garden_fertilizer",
    status_codes(200, 400, 401, 403, 404, 409, 413, 415, 422, 500),
    parameters(("slug" = String, Path, description = "tenant slug")),
    responses(
        (status_code = 200, description = "the changed fertiliser", body = GardenFertilizer),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed, or a global fertiliser", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or fertiliser", body = ErrorBody),
        (status_code = 409, description = "DUPLICATE_ENTRY: the new name is taken in the garden", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: one detail per invalid field", body = ErrorBody),
    ))]
pub async fn update_fertilizer(
    fertilizer_key: PathParam<String>,
    body: Body<FertilizerKind, PatchShape>,
    depot: &mut Depot,
) -> Result<Json<GardenFertilizer>, AppError> {
    let state = depot.app_state()?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::patch(&state, tenant, &fertilizer_key, body.0).await?,
    ))
}

/// Delete one of the garden's own fertilisers (grower); a global one is 403, one a plan of
/// the garden doses is 409.
#[endpoint(tags("fertilizers"), security(["bearer" = []]), operation_id = "delete_garden_fertilizer",
    status_codes(204, 401, 403, 404, 409, 500),
    parameters(("slug" = String, Path, description = "tenant slug")),
    responses(
        (status_code = 204, description = "deleted"),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed, or a global fertiliser", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or fertiliser", body = ErrorBody),
        (status_code = 409, description = "STATE_CONFLICT: a nutrient plan of the garden doses it", body = ErrorBody),
    ))]
pub async fn delete_fertilizer(
    fertilizer_key: PathParam<String>,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<(), AppError> {
    let state = depot.app_state()?;
    let tenant = &depot.tenant_ctx()?.tenant;
    service::delete(&state, tenant, &fertilizer_key).await?;
    res.status_code(StatusCode::NO_CONTENT);
    Ok(())
}

/// The mixing protocol of `POST /calculations/mixing-protocol` (domain 2.14) with the
/// garden's products: a `fertilizer_key` is a global key or `tenant:<uuid>` of the garden's
/// own (another garden's is 404). Reads only; open to viewers.
#[endpoint(tags("fertilizers"), security(["bearer" = []]), operation_id = "calculate_garden_mixing_protocol",
    status_codes(200, 400, 401, 404, 413, 415, 422, 500),
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = MixingProtocolBody,
    responses(
        (status_code = 200, description = "the protocol (valid false with warnings when the target cannot be met)", body = MixingProtocol),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant, or a fertilizer_key that names no fertiliser of the garden", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: volume, EC, pH, alkalinity, substrate, phase or a dose out of range; a product twice", body = ErrorBody),
    ))]
pub async fn mixing_protocol(
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<MixingProtocol>, AppError> {
    let state = depot.app_state()?;
    let body: MixingProtocolBody = read_json(req, state.config().max_body_bytes).await?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        calculations::mixing_protocol(&state, ProductSource::Garden(tenant), &body).await?,
    ))
}
