//! REST face of harvest under `/api/v1/t/{slug}/harvest`: readiness, observations, batches
//! (behind the safety-interval gate) and yields. Reads for every member, writes for growers and
//! admins.

use salvo::oapi::extract::PathParam;
use salvo::prelude::*;

use super::model::*;
use super::repo::BatchFilter;
use super::service::{self, LIST_MAX_LIMIT};
use crate::auth::Role;
use crate::error::{AppError, ErrorBody};
use crate::http::depot::DepotExt;
use crate::http::depot::actor;
use crate::http::json::read_json;
use crate::http::pagination::{Page, PageRequest};
use crate::http::query::date_query;
use crate::http::query::uuid_query;

pub fn router() -> Router {
    Router::with_path("harvest")
        .push(
            Router::with_path("readiness")
                .get(list_harvest_readiness)
                .push(Router::with_path("{plant_key}").get(get_plant_harvest_readiness)),
        )
        .push(Router::with_path("observations").post(create_harvest_observation))
        .push(
            Router::with_path("batches")
                .get(list_harvest_batches)
                .post(create_harvest_batch)
                .push(Router::with_path("{harvest_batch_key}").get(get_harvest_batch)),
        )
        .push(
            Router::with_path("yield")
                .push(Router::with_path("plants/{plant_key}").get(get_plant_yield))
                .push(Router::with_path("runs/{run_key}").get(get_run_yield)),
        )
}

/// Readiness of the garden's plants (oldest first): phase, days in phase, indicators, the
/// safety intervals still running and the first day a harvest is allowed.
///
/// Per plant: whether the current phase allows harvest, days in it (UTC days) and its expected length,
/// the latest observation per indicator (`trichome`, `color`, `brix`, `size`, …) with its stage
/// (`immature|approaching|peak|overripe`) weighted by `reliability_score` (default 0.5) into a score
/// 0–100 and a recommendation (≥ 90 `optimal`, ≥ 70 `approaching`, ≥ 50 `developing`, else `immature`;
/// `overripe` when overripe readings carry more than half the weight), the estimated days (rounded
/// mean), the safety intervals still running and `harvest_allowed_from`. `ready` = the phase allows
/// harvest, `optimal`, and no interval runs.
#[endpoint(tags("harvest"), security(["bearer" = []]), operation_id = "list_harvest_readiness",
    parameters(
        ("slug" = String, Path, description = "tenant slug"),
        ("skip" = Option<i64>, Query, minimum = 0, maximum = 100000, description = "items to skip (default 0)"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 200, description = "page size (default 100)"),
    ),
    responses(
        (status_code = 200, description = "one page of readiness", body = Page<Readiness>),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: skip or limit out of range", body = ErrorBody),
    ))]
pub async fn list_harvest_readiness(
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Page<Readiness>>, AppError> {
    let state = depot.app_state()?;
    let page = PageRequest::from_request(req, LIST_MAX_LIMIT)?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(service::readiness(&state, tenant, page).await?))
}

/// Readiness of one plant.
#[endpoint(tags("harvest"), security(["bearer" = []]), operation_id = "get_plant_harvest_readiness",
    parameters(("slug" = String, Path, description = "tenant slug")),
    responses(
        (status_code = 200, description = "the plant's readiness", body = Readiness),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or plant", body = ErrorBody),
    ))]
pub async fn get_plant_harvest_readiness(
    plant_key: PathParam<String>,
    depot: &mut Depot,
) -> Result<Json<Readiness>, AppError> {
    let state = depot.app_state()?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::plant_readiness(&state, tenant, &plant_key).await?,
    ))
}

/// Record a ripeness observation (an indicator and its stage) of a plant.
#[endpoint(tags("harvest"), security(["bearer" = []]), operation_id = "create_harvest_observation",
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = NewObservation,
    responses(
        (status_code = 201, description = "observation recorded", body = Observation),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or plant", body = ErrorBody),
        (status_code = 409, description = "STATE_CONFLICT: the plant is archived", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: one detail per invalid field", body = ErrorBody),
    ))]
pub async fn create_harvest_observation(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<Json<Observation>, AppError> {
    let state = depot.app_state()?;
    depot.tenant_ctx()?.require(Role::Grower)?;
    let new: NewObservation = read_json(req, state.config().max_body_bytes).await?;
    let actor = actor(depot)?;
    let tenant = &depot.tenant_ctx()?.tenant;
    let o = service::record_observation(&state, tenant, &new, &actor, true).await?;
    res.status_code(StatusCode::CREATED);
    Ok(Json(o))
}

/// Harvest batches, latest harvest first.
///
/// Filters: plant, run and dates (`to` before `from` is 422).
#[endpoint(tags("harvest"), security(["bearer" = []]), operation_id = "list_harvest_batches",
    parameters(
        ("slug" = String, Path, description = "tenant slug"),
        ("plant" = Option<Uuid>, Query, description = "plant key"),
        ("run" = Option<Uuid>, Query, description = "planting run key"),
        ("from" = Option<String>, Query, format = "date", description = "first harvest day (YYYY-MM-DD)"),
        ("to" = Option<String>, Query, format = "date", description = "last harvest day (YYYY-MM-DD), not before from"),
        ("skip" = Option<i64>, Query, minimum = 0, maximum = 100000, description = "items to skip (default 0)"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 200, description = "page size (default 100)"),
    ),
    responses(
        (status_code = 200, description = "one page of batches", body = Page<HarvestBatch>),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or plant", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: a filter (dates in the wrong order), skip or limit out of range", body = ErrorBody),
    ))]
pub async fn list_harvest_batches(
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Page<HarvestBatch>>, AppError> {
    let state = depot.app_state()?;
    let page = PageRequest::from_request(req, LIST_MAX_LIMIT)?;
    let filter = BatchFilter {
        plant: uuid_query(req, "plant")?,
        run: uuid_query(req, "run")?,
        from: date_query(req, "from")?,
        to: date_query(req, "to")?,
    };
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::list_batches(&state, tenant, filter, page).await?,
    ))
}

/// One harvest batch.
#[endpoint(tags("harvest"), security(["bearer" = []]), operation_id = "get_harvest_batch",
    parameters(("slug" = String, Path, description = "tenant slug")),
    responses(
        (status_code = 200, description = "the batch", body = HarvestBatch),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or batch", body = ErrorBody),
    ))]
pub async fn get_harvest_batch(
    harvest_batch_key: PathParam<String>,
    depot: &mut Depot,
) -> Result<Json<HarvestBatch>, AppError> {
    let state = depot.app_state()?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::get_batch(&state, tenant, &harvest_batch_key).await?,
    ))
}

/// Record a harvest batch. Refused with 422 `KARENZ_VIOLATION` while a safety interval of the
/// plant runs on `harvest_date` (default today in the garden's time zone, UTC when none is set):
/// one detail per blocking application,
/// field `active_ingredient`, naming the treatment and the last blocked day. The last day of
/// an interval is blocked, the day after is allowed. No flag or role bypasses it.
///
/// Quality: `appearance_score`, `aroma_score` and `color_score` (0–100, all three or none) with
/// `defects[]` give `quality_score` = 0.30·appearance + 0.25·aroma + 0.20·colour + 25 − defect
/// penalties (clamped 0–100) and `quality_grade` (≥ 90 `a_plus`, ≥ 75 `a`, ≥ 55 `b`, ≥ 35 `c`, else
/// `d`; domain 2.10); or a `quality_grade` alone. Dry weights (estimated, actual) lie between 0 and the
/// wet weight; `harvest_type` defaults to `final`, `label` to `H-<date>-<key part>`, `harvester` to the
/// caller. Outside a harvest phase the batch is recorded with `warnings: ["harvest_readiness: …"]`.
///
/// A refusal by the safety interval has one detail per blocking application (field
/// `active_ingredient`, code `KARENZ_VIOLATION`); the message names the longest wait.
/// `harvest_date` is the grower's local date, or a date-time whose local day in the garden's time
/// zone counts (in a Los Angeles garden 2026-11-30T02:00:00Z is 29 November); a date after the
/// garden's today is refused (422 `VALIDATION_ERROR` on `body.harvest_date`, nothing recorded).
/// Safety days are counted in the garden's calendar (`PUT calendar/settings`, `timezone`): a
/// treatment applied on local day A with an interval of N days blocks harvests dated A to
/// A+N-1 and allows A+N. The tool `record_harvest` answers
/// such a refusal as `validation.error` with detail code `KARENZ_VIOLATION`; its `dry_run` checks
/// the gate too. In the calendar a batch is `harvest:<batch>`, a running interval
/// `treatment:<application>:<plant>`.
#[endpoint(tags("harvest"), security(["bearer" = []]), operation_id = "create_harvest_batch",
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = NewBatch,
    responses(
        (status_code = 201, description = "batch recorded", body = HarvestBatch),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or plant", body = ErrorBody),
        (status_code = 409, description = "STATE_CONFLICT: the plant is archived", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR (one detail per invalid field), KARENZ_VIOLATION (a safety interval runs)", body = ErrorBody),
    ))]
pub async fn create_harvest_batch(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<Json<HarvestBatch>, AppError> {
    let state = depot.app_state()?;
    depot.tenant_ctx()?.require(Role::Grower)?;
    let new: NewBatch = read_json(req, state.config().max_body_bytes).await?;
    let actor = actor(depot)?;
    let tenant = &depot.tenant_ctx()?.tenant;
    let b = service::create_batch(&state, tenant, &new, &actor, true).await?;
    res.status_code(StatusCode::CREATED);
    Ok(Json(b))
}

/// Yield of one plant (optionally between two harvest days).
///
/// Batches, total wet and dry weight (actual, else estimated), per plant, first and last day.
#[endpoint(tags("harvest"), security(["bearer" = []]), operation_id = "get_plant_yield",
    parameters(
        ("slug" = String, Path, description = "tenant slug"),
        ("from" = Option<String>, Query, format = "date", description = "first harvest day (YYYY-MM-DD)"),
        ("to" = Option<String>, Query, format = "date", description = "last harvest day (YYYY-MM-DD), not before from"),
    ),
    responses(
        (status_code = 200, description = "the plant's yield", body = Yield),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or plant", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: a date malformed or in the wrong order", body = ErrorBody),
    ))]
pub async fn get_plant_yield(
    plant_key: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Yield>, AppError> {
    let state = depot.app_state()?;
    let from = date_query(req, "from")?;
    let to = date_query(req, "to")?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::plant_yield(&state, tenant, &plant_key, from, to).await?,
    ))
}

/// Yield of a planting run: its batches and the weight per plant of the run.
#[endpoint(tags("harvest"), security(["bearer" = []]), operation_id = "get_run_yield",
    parameters(
        ("slug" = String, Path, description = "tenant slug"),
        ("from" = Option<String>, Query, format = "date", description = "first harvest day (YYYY-MM-DD)"),
        ("to" = Option<String>, Query, format = "date", description = "last harvest day (YYYY-MM-DD), not before from"),
    ),
    responses(
        (status_code = 200, description = "the run's yield", body = Yield),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or run", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: a date malformed or in the wrong order", body = ErrorBody),
    ))]
pub async fn get_run_yield(
    run_key: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Yield>, AppError> {
    let state = depot.app_state()?;
    let from = date_query(req, "from")?;
    let to = date_query(req, "to")?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::run_yield(&state, tenant, &run_key, from, to).await?,
    ))
}
