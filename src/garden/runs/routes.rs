//! REST face of planting runs under `/api/v1/t/{slug}/planting-runs`.

use salvo::oapi::extract::PathParam;
use salvo::prelude::*;

use super::model::*;
use super::service::{self, LIST_MAX_LIMIT};
use crate::auth::Role;
use crate::error::{AppError, ErrorBody, ErrorDetail};
use crate::http::depot::DepotExt;
use crate::http::depot::actor;
use crate::http::json::read_json;
use crate::http::pagination::{Page, PageRequest};
use crate::rules::run_status::RunStatus;

pub fn router() -> Router {
    Router::with_path("planting-runs")
        .get(list_runs)
        .post(create_run)
        .push(
            Router::with_path("{run_id}")
                .get(get_run)
                .push(Router::with_path("status").post(change_run_status))
                .push(Router::with_path("plants").post(add_run_plants))
                .push(Router::with_path("create-plants").post(create_run_plants)),
        )
}

/// `status` of the list: one of the run states.
pub fn status_filter(raw: Option<&str>) -> Result<Option<RunStatus>, AppError> {
    // As sent: an empty or padded value is malformed, like any value outside the enum.
    match raw {
        None => Ok(None),
        Some(s) => RunStatus::parse(s).map(Some).ok_or_else(|| {
            AppError::validation(vec![ErrorDetail::new(
                "query.status",
                "must be one of: planned, active, harvesting, completed, cancelled",
                "value_error",
            )])
        }),
    }
}

/// List the garden's planting runs, oldest first.
///
/// Filter by `status`; `limit` up to 100.
#[endpoint(tags("planting-runs"), security(["bearer" = []]), operation_id = "list_planting_runs",
    parameters(
        ("slug" = String, Path, description = "tenant slug"),
        ("status" = Option<RunState>, Query, description = "planned, active, harvesting, completed or cancelled"),
        ("skip" = Option<i64>, Query, minimum = 0, maximum = 100000, description = "items to skip (default 0)"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 100, description = "page size (default 100)"),
    ),
    responses(
        (status_code = 200, description = "one page of runs", body = Page<Run>),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: status, skip or limit out of range", body = ErrorBody),
    ))]
pub async fn list_runs(req: &mut Request, depot: &mut Depot) -> Result<Json<Page<Run>>, AppError> {
    let state = depot.app_state()?;
    let page = PageRequest::from_request(req, LIST_MAX_LIMIT)?;
    let status = status_filter(req.queries().get("status").map(String::as_str))?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::list_runs(&state, tenant, status, page).await?,
    ))
}

/// Get a run with its summary: plants per phase, entries, the states it may move to.
#[endpoint(tags("planting-runs"), security(["bearer" = []]), operation_id = "get_planting_run",
    parameters(("slug" = String, Path, description = "tenant slug")),
    responses(
        (status_code = 200, description = "the run", body = RunDetail),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or run", body = ErrorBody),
    ))]
pub async fn get_run(
    run_id: PathParam<String>,
    depot: &mut Depot,
) -> Result<Json<RunDetail>, AppError> {
    let state = depot.app_state()?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(service::get_run(&state, tenant, &run_id).await?))
}

/// Create a planting run (status planned).
#[endpoint(tags("planting-runs"), security(["bearer" = []]), operation_id = "create_planting_run",
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = NewRun,
    responses(
        (status_code = 201, description = "run created", body = RunDetail),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant, location or batch", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR (one detail per field), SUBSTRATE_EXHAUSTED", body = ErrorBody),
    ))]
pub async fn create_run(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<Json<RunDetail>, AppError> {
    let state = depot.app_state()?;
    depot.tenant_ctx()?.require(Role::Grower)?;
    let new: NewRun = read_json(req, state.config().max_body_bytes).await?;
    let tenant = &depot.tenant_ctx()?.tenant;
    let run = service::create_run(&state, tenant, &new).await?;
    res.status_code(StatusCode::CREATED);
    Ok(Json(run))
}

/// Move a run to another status (planned → active | cancelled; active → harvesting |
/// completed | cancelled; harvesting → completed | cancelled).
///
/// `completed` and `cancelled` are final; a forbidden change is 422 `INVALID_STATUS_TRANSITION`
/// ("cannot transition from X to Y"). Entering `active` sets `started_at`; `completed` or
/// `cancelled` set `completed_at`.
#[endpoint(tags("planting-runs"), security(["bearer" = []]), operation_id = "change_planting_run_status",
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = StatusChangeBody,
    responses(
        (status_code = 200, description = "the run", body = RunDetail),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or run", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "INVALID_STATUS_TRANSITION, VALIDATION_ERROR", body = ErrorBody),
    ))]
pub async fn change_run_status(
    run_id: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<RunDetail>, AppError> {
    let state = depot.app_state()?;
    depot.tenant_ctx()?.require(Role::Grower)?;
    let body: StatusBody = read_json(req, state.config().max_body_bytes).await?;
    let to = body
        .status
        .ok_or_else(|| AppError::internal("status body without status"))?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::change_status(&state, tenant, &run_id, to).await?,
    ))
}

/// Add existing plants to a run (planned or active runs).
///
/// 1–200 plants. A run that is neither planned nor active is 409 `INVALID_RUN_STATE` (do not
/// retry); an archived plant or a plant of another run is 422 on `body.plant_keys[i]`.
#[endpoint(tags("planting-runs"), security(["bearer" = []]), operation_id = "add_planting_run_plants",
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = AddPlantsBody,
    responses(
        (status_code = 200, description = "the run", body = RunDetail),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant, run or plant", body = ErrorBody),
        (status_code = 409, description = "INVALID_RUN_STATE: the run is harvesting, completed or cancelled", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: archived plant, plant of another run, bad key", body = ErrorBody),
    ))]
pub async fn add_run_plants(
    run_id: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<RunDetail>, AppError> {
    let state = depot.app_state()?;
    depot.tenant_ctx()?.require(Role::Grower)?;
    let body: AddPlantsBody = read_json(req, state.config().max_body_bytes).await?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::add_plants(&state, tenant, &run_id, &body.plant_keys).await?,
    ))
}

/// Create N plants of one species for a planned run, one per free slot of the location in
/// order; all or nothing. The run becomes active.
///
/// N is 1–200; plants are named `{PREFIX}_{NN}` (a prefix of 2–5 capitals, skipping names taken),
/// one per free slot in slot order (row, column, code), each with the rotation and companion checks
/// (no acknowledge flags: a conflict that needs one refuses) and its first phase. Too few free
/// slots (422 `body.quantity`) or any refusal writes nothing. A run that is not planned is 409
/// `INVALID_RUN_STATE`.
#[endpoint(tags("planting-runs"), security(["bearer" = []]), operation_id = "create_planting_run_plants",
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = CreatePlantsBody,
    responses(
        (status_code = 201, description = "plants created; the run", body = RunDetail),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant, run, species or location", body = ErrorBody),
        (status_code = 409, description = "INVALID_RUN_STATE: the run is not planned", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR (too few free slots), ROTATION_VIOLATION, INCOMPATIBLE_COMPANION, SUBSTRATE_EXHAUSTED", body = ErrorBody),
    ))]
pub async fn create_run_plants(
    run_id: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<Json<RunDetail>, AppError> {
    let state = depot.app_state()?;
    depot.tenant_ctx()?.require(Role::Grower)?;
    let body: CreatePlantsBody = read_json(req, state.config().max_body_bytes).await?;
    let actor = actor(depot)?;
    let tenant = &depot.tenant_ctx()?.tenant;
    let run = service::create_plants(&state, tenant, &run_id, &body, &actor).await?;
    res.status_code(StatusCode::CREATED);
    Ok(Json(run))
}
