//! REST face of substrates (`/api/v1/t/{slug}/substrates`) and substrate batches
//! (`/api/v1/t/{slug}/substrate-batches`). Reads (and the mix preview, which writes nothing)
//! for every member; writes for growers and admins.

use salvo::oapi::extract::PathParam;
use salvo::prelude::*;

use super::model::{
    BatchCreateBody, BatchPatch, BatchPatchBody, MixPreview, MixRequest, NewBatch, NewMix,
    NewSubstrate, Substrate, SubstrateBatch, SubstrateCreateBody, SubstratePatch,
    SubstratePatchBody, SubstrateScope, SubstrateType,
};
use super::service::{self, LIST_MAX_LIMIT, SubstrateQuery};
use crate::auth::Role;
use crate::error::{AppError, ErrorBody, ErrorDetail};
use crate::http::depot::DepotExt;
use crate::http::json::read_json;
use crate::http::pagination::{Page, PageRequest};
use crate::http::roles::{Admin, Requires};
use crate::rules::substrate_mix::TYPES;
use crate::rules::substrate_reuse::Reusability;

pub fn substrates_router() -> Router {
    Router::with_path("substrates")
        .get(list_substrates)
        .post(create_substrate)
        .push(
            Router::with_path("{substrate_key}")
                .get(get_substrate)
                .patch(update_substrate)
                .delete(delete_substrate),
        )
}

/// Mixes have their own prefix: below `/substrates/` a fixed segment would share its path
/// with `GET /substrates/{substrate_key}` (and its `Allow` header).
pub fn mixes_router() -> Router {
    Router::with_path("substrate-mixes")
        .post(create_mix)
        .push(Router::with_path("preview").post(preview_mix))
}

pub fn batches_router() -> Router {
    Router::with_path("substrate-batches")
        .get(list_batches)
        .post(create_batch)
        .push(
            Router::with_path("{batch_key}")
                .get(get_batch)
                .patch(update_batch)
                .delete(delete_batch)
                .push(Router::with_path("reusability").get(batch_reusability))
                .push(Router::with_path("cycles").post(start_cycle)),
        )
}

fn query_error(name: &str, reason: &str) -> ErrorDetail {
    ErrorDetail::new(format!("query.{name}"), reason, "value_error")
}

/// List global (catalogue) and the garden's own substrates in one list, each marked by
/// `scope`: global ones first, then the garden's, each by name.
#[endpoint(tags("substrates"), security(["bearer" = []]), operation_id = "list_substrates",
    parameters(
        ("slug" = String, Path, description = "tenant slug"),
        ("q" = Option<String>, Query, max_length = 100, pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$", description = "part of the name (English or German) or brand"),
        ("scope" = Option<SubstrateScope>, Query, description = "global or tenant"),
        ("type" = Option<SubstrateType>, Query, description = "substrate type"),
        ("skip" = Option<i64>, Query, minimum = 0, maximum = 100000, description = "items to skip (default 0)"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 200, description = "page size (default 100)"),
    ),
    responses(
        (status_code = 200, description = "one page of substrates", body = Page<Substrate>),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: a query parameter is out of range", body = ErrorBody),
    ))]
pub async fn list_substrates(
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Page<Substrate>>, AppError> {
    let state = depot.app_state()?;
    let mut details = Vec::new();
    let page = PageRequest::from_request(req, LIST_MAX_LIMIT)
        .map_err(|e| details.extend(e.details().iter().cloned()))
        .ok();
    let q = req.queries().get("q").cloned();
    if q.as_deref()
        .is_some_and(|q| q.chars().count() > 100 || q.chars().any(char::is_control))
    {
        details.push(query_error(
            "q",
            "at most 100 characters, no control characters",
        ));
    }
    let scope = match req.queries().get("scope").map(String::as_str) {
        None => None,
        Some("global") => Some(SubstrateScope::Global),
        Some("tenant") => Some(SubstrateScope::Tenant),
        Some(_) => {
            details.push(query_error("scope", "must be global or tenant"));
            None
        }
    };
    let substrate_type = req.queries().get("type").cloned();
    if substrate_type
        .as_deref()
        .is_some_and(|t| !TYPES.contains(&t))
    {
        details.push(query_error(
            "type",
            &format!("must be one of: {}", TYPES.join(", ")),
        ));
    }
    let page = match page {
        Some(p) if details.is_empty() => p,
        _ => return Err(AppError::validation(details)),
    };
    let query = SubstrateQuery {
        q,
        scope,
        substrate_type,
    };
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::list_substrates(&state, tenant, &query, page).await?,
    ))
}

/// Get one substrate: a global key (UUID) or `tenant:<uuid>` of the garden's own.
#[endpoint(tags("substrates"), security(["bearer" = []]), operation_id = "get_substrate",
    parameters(("slug" = String, Path, description = "tenant slug")),
    responses(
        (status_code = 200, description = "the substrate", body = Substrate),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or substrate", body = ErrorBody),
    ))]
pub async fn get_substrate(
    substrate_key: PathParam<String>,
    depot: &mut Depot,
) -> Result<Json<Substrate>, AppError> {
    let state = depot.app_state()?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::get_substrate(&state, tenant, &substrate_key).await?,
    ))
}

/// Create a substrate owned by the garden (grower).
#[endpoint(tags("substrates"), security(["bearer" = []]), operation_id = "create_substrate",
    status_codes(201, 400, 401, 403, 404, 409, 413, 415, 422, 500),
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = SubstrateCreateBody,
    responses(
        (status_code = 201, description = "substrate created (scope tenant)", body = Substrate),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant", body = ErrorBody),
        (status_code = 409, description = "DUPLICATE_ENTRY: the garden has a substrate of that name", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: one detail per invalid field", body = ErrorBody),
    ))]
pub async fn create_substrate(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<Json<Substrate>, AppError> {
    let state = depot.app_state()?;
    depot.tenant_ctx()?.require(Role::Grower)?;
    let new: NewSubstrate = read_json(req, state.config().max_body_bytes).await?;
    let tenant = &depot.tenant_ctx()?.tenant;
    let created = service::create_substrate(&state, tenant, &new).await?;
    res.status_code(StatusCode::CREATED);
    Ok(Json(created))
}

/// Compute the properties of a mix without storing anything (domain 2.15).
///
/// 2–10 components, fractions 0.01–1 summing to 1 ±0.01, each substrate once, no mix inside a mix
/// (422 naming `body.components[i]…`); an unknown component is 404. pH, EC and air porosity are
/// fraction-weighted sums (rounded to 2, 3 and 1 decimals); water retention and buffer capacity map
/// low/medium/high to 1/2/3 and back (≤ 1.5 low, ≤ 2.5 medium); water-holding capacity, easily
/// available water, CEC and bulk density are weighted means over the components that have a value;
/// the composition is summed; the mix is reusable only if every component is, with the smallest limit
/// (1 otherwise); its type is that of the largest share, its irrigation the most demanding. Open to
/// viewers: it stores nothing.
#[endpoint(tags("substrates"), security(["bearer" = []]), operation_id = "preview_substrate_mix",
    status_codes(200, 400, 401, 404, 413, 415, 422, 500),
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = MixRequest,
    responses(
        (status_code = 200, description = "the computed mix", body = MixPreview),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or component substrate", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: fewer than 2 components, fractions not summing to 1, a nested mix, a duplicate", body = ErrorBody),
    ))]
pub async fn preview_mix(
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<MixPreview>, AppError> {
    let state = depot.app_state()?;
    let body: MixRequest = read_json(req, state.config().max_body_bytes).await?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(service::preview_mix(&state, tenant, &body).await?))
}

/// Store a mix as a substrate owned by the garden, `is_mix: true` (grower).
///
/// Mixes have their own prefix `/substrate-mixes` because a fixed segment below `/substrates/`
/// would share its path and `Allow` header with `GET /substrates/{substrate_key}`. The preview is
/// open to viewers (it stores nothing).
#[endpoint(tags("substrates"), security(["bearer" = []]), operation_id = "create_substrate_mix",
    status_codes(201, 400, 401, 403, 404, 409, 413, 415, 422, 500),
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = NewMix,
    responses(
        (status_code = 201, description = "mix stored (scope tenant)", body = Substrate),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or component substrate", body = ErrorBody),
        (status_code = 409, description = "DUPLICATE_ENTRY: the garden has a substrate of that name", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: one detail per invalid field or mix rule", body = ErrorBody),
    ))]
pub async fn create_mix(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<Json<Substrate>, AppError> {
    let state = depot.app_state()?;
    depot.tenant_ctx()?.require(Role::Grower)?;
    let new: NewMix = read_json(req, state.config().max_body_bytes).await?;
    let tenant = &depot.tenant_ctx()?.tenant;
    let created = service::create_mix(&state, tenant, &new, true).await?;
    res.status_code(StatusCode::CREATED);
    Ok(Json(created))
}

/// List the garden's substrate batches, oldest first; filter by substrate.
#[endpoint(tags("substrate batches"), security(["bearer" = []]), operation_id = "list_substrate_batches",
    parameters(
        ("slug" = String, Path, description = "tenant slug"),
        ("substrate_key" = Option<String>, Query, max_length = 200, pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$", description = "only batches of this substrate"),
        ("skip" = Option<i64>, Query, minimum = 0, maximum = 100000, description = "items to skip (default 0)"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 200, description = "page size (default 100)"),
    ),
    responses(
        (status_code = 200, description = "one page of batches", body = Page<SubstrateBatch>),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: a query parameter is out of range", body = ErrorBody),
    ))]
pub async fn list_batches(
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Page<SubstrateBatch>>, AppError> {
    let state = depot.app_state()?;
    let mut details = Vec::new();
    let page = PageRequest::from_request(req, LIST_MAX_LIMIT)
        .map_err(|e| details.extend(e.details().iter().cloned()))
        .ok();
    let key = req.queries().get("substrate_key").cloned();
    if key
        .as_deref()
        .is_some_and(|k| k.chars().count() > 200 || k.chars().any(char::is_control))
    {
        details.push(query_error(
            "substrate_key",
            "at most 200 characters, no control characters",
        ));
    }
    let page = match page {
        Some(p) if details.is_empty() => p,
        _ => return Err(AppError::validation(details)),
    };
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::list_batches(&state, tenant, key.as_deref(), page).await?,
    ))
}

/// Get one batch with its pH and EC history.
#[endpoint(tags("substrate batches"), security(["bearer" = []]), operation_id = "get_substrate_batch",
    parameters(("slug" = String, Path, description = "tenant slug")),
    responses(
        (status_code = 200, description = "the batch", body = SubstrateBatch),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or batch", body = ErrorBody),
    ))]
pub async fn get_batch(
    batch_key: PathParam<String>,
    depot: &mut Depot,
) -> Result<Json<SubstrateBatch>, AppError> {
    let state = depot.app_state()?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(service::get_batch(&state, tenant, &batch_key).await?))
}

/// Create a batch of a substrate (grower); it keeps the substrate's reuse facts of today.
///
/// A batch names its substrate by key (`label` unique) and keeps its reuse facts as they were when
/// made (`substrate_type`, `reusable`, `max_reuse_cycles`, `ec_base_ms`), so the reuse check needs
/// no catalogue read.
#[endpoint(tags("substrate batches"), security(["bearer" = []]), operation_id = "create_substrate_batch",
    status_codes(201, 400, 401, 403, 404, 409, 413, 415, 422, 500),
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = BatchCreateBody,
    responses(
        (status_code = 201, description = "batch created", body = SubstrateBatch),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or substrate", body = ErrorBody),
        (status_code = 409, description = "DUPLICATE_ENTRY: a batch with that label exists", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: one detail per invalid field (mixed_on in the future, pH outside 0-14, ...)", body = ErrorBody),
    ))]
pub async fn create_batch(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<Json<SubstrateBatch>, AppError> {
    let state = depot.app_state()?;
    depot.tenant_ctx()?.require(Role::Grower)?;
    let new: NewBatch = read_json(req, state.config().max_body_bytes).await?;
    let tenant = &depot.tenant_ctx()?.tenant;
    let batch = service::create_batch(&state, tenant, &new).await?;
    res.status_code(StatusCode::CREATED);
    Ok(Json(batch))
}

/// Change a batch; a pH or EC value is a new reading appended to the history (grower).
#[endpoint(tags("substrate batches"), security(["bearer" = []]), operation_id = "update_substrate_batch",
    status_codes(200, 400, 401, 403, 404, 409, 413, 415, 422, 500),
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = BatchPatchBody,
    responses(
        (status_code = 200, description = "the updated batch", body = SubstrateBatch),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or batch", body = ErrorBody),
        (status_code = 409, description = "DUPLICATE_ENTRY: a batch with that label exists", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: one detail per invalid field", body = ErrorBody),
    ))]
pub async fn update_batch(
    batch_key: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<SubstrateBatch>, AppError> {
    let state = depot.app_state()?;
    depot.tenant_ctx()?.require(Role::Grower)?;
    let patch: BatchPatch = read_json(req, state.config().max_body_bytes).await?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::patch_batch(&state, tenant, &batch_key, &patch).await?,
    ))
}

/// Whether the batch can go into another cycle, and the preparation it needs (domain 2.4).
///
/// In order: a disposable type (peat, rockwool plug) or a substrate not marked reusable never; not once
/// `cycles_used` (completed cycles) reaches `max_reuse_cycles`; a pH history whose sample standard
/// deviation exceeds the type's threshold (coco 0.3 … living soil 0.7), or an EC more than 1.5 mS/cm
/// from the base, is an issue. A reusable batch gets its type's preparation steps (coco: CalMag soak
/// 24 h, flush 2 h, drain 1 h), `preparation_hours` and `ready_on` = now + hours. Answer: `{can_reuse,
/// issues[], preparation_steps[{step, hours}], preparation_hours, ready_on}`.
#[endpoint(tags("substrate batches"), security(["bearer" = []]), operation_id = "check_batch_reusability",
    parameters(("slug" = String, Path, description = "tenant slug")),
    responses(
        (status_code = 200, description = "{can_reuse, issues, preparation_steps, preparation_hours, ready_on}", body = Reusability),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or batch", body = ErrorBody),
    ))]
pub async fn batch_reusability(
    batch_key: PathParam<String>,
    depot: &mut Depot,
) -> Result<Json<Reusability>, AppError> {
    let state = depot.app_state()?;
    let tenant = &depot.tenant_ctx()?.tenant;
    let (_, r) = service::check_reusability(&state, tenant, &batch_key).await?;
    Ok(Json(r))
}

/// End the running cycle and start the next one: `cycles_used` + 1 (grower).
#[endpoint(tags("substrate batches"), security(["bearer" = []]), operation_id = "start_substrate_batch_cycle",
    status_codes(200, 401, 403, 404, 422, 500),
    parameters(("slug" = String, Path, description = "tenant slug")),
    responses(
        (status_code = 200, description = "the batch in its new cycle", body = SubstrateBatch),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or batch", body = ErrorBody),
        (status_code = 422, description = "SUBSTRATE_EXHAUSTED: the reuse check fails (limit reached, not reusable, unstable pH, EC drift); one detail per issue", body = ErrorBody),
    ))]
pub async fn start_cycle(
    batch_key: PathParam<String>,
    depot: &mut Depot,
) -> Result<Json<SubstrateBatch>, AppError> {
    let state = depot.app_state()?;
    let ctx = depot.tenant_ctx()?;
    ctx.require(Role::Grower)?;
    Ok(Json(
        service::start_cycle(&state, &ctx.tenant, &batch_key).await?,
    ))
}

/// Change one of the garden's own substrates (grower). A global substrate is the catalogue's:
/// 403.
#[endpoint(tags("substrates"), security(["bearer" = []]), operation_id = "update_substrate",
    status_codes(200, 400, 401, 403, 404, 409, 413, 415, 422, 500),
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = SubstratePatchBody,
    responses(
        (status_code = 200, description = "the changed substrate", body = Substrate),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed, or a global (catalogue) substrate", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or substrate", body = ErrorBody),
        (status_code = 409, description = "DUPLICATE_ENTRY: the garden has a substrate of that name", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: one detail per invalid field; properties of a mix", body = ErrorBody),
    ))]
pub async fn update_substrate(
    substrate_key: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Substrate>, AppError> {
    let state = depot.app_state()?;
    let patch: SubstratePatch = read_json(req, state.config().max_body_bytes).await?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::patch_substrate(&state, tenant, &substrate_key, &patch).await?,
    ))
}

/// Delete one of the garden's own substrates (admin): 409 while a batch is of it, a plant names
/// it or a mix contains it. A global substrate is the catalogue's: 403.
#[endpoint(tags("substrates"), security(["bearer" = []]), operation_id = "delete_substrate",
    status_codes(204, 401, 403, 404, 409, 500),
    parameters(("slug" = String, Path, description = "tenant slug")),
    responses(
        (status_code = 204, description = "deleted"),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: admin role needed, or a global (catalogue) substrate", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or substrate", body = ErrorBody),
        (status_code = 409, description = "STATE_CONFLICT: a batch, plant or mix refers to it", body = ErrorBody),
    ))]
pub async fn delete_substrate(
    _role: Requires<Admin>,
    substrate_key: PathParam<String>,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<(), AppError> {
    let state = depot.app_state()?;
    let tenant = &depot.tenant_ctx()?.tenant;
    service::delete_substrate(&state, tenant, &substrate_key).await?;
    res.status_code(StatusCode::NO_CONTENT);
    Ok(())
}

/// Delete a substrate batch (admin): 409 while a live plant grows in it, a slot holds it, or an
/// archived plant or a planting run keeps it in its record.
#[endpoint(tags("substrate batches"), security(["bearer" = []]), operation_id = "delete_substrate_batch",
    status_codes(204, 401, 403, 404, 409, 500),
    parameters(("slug" = String, Path, description = "tenant slug")),
    responses(
        (status_code = 204, description = "deleted with its readings"),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: admin role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or batch", body = ErrorBody),
        (status_code = 409, description = "STATE_CONFLICT: plants, a slot or a run use the batch", body = ErrorBody),
    ))]
pub async fn delete_batch(
    _role: Requires<Admin>,
    batch_key: PathParam<String>,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<(), AppError> {
    let state = depot.app_state()?;
    let tenant = &depot.tenant_ctx()?.tenant;
    service::delete_batch(&state, tenant, &batch_key).await?;
    res.status_code(StatusCode::NO_CONTENT);
    Ok(())
}
