//! REST face of nutrient plans (`/api/v1/t/{slug}/nutrient-plans`) and of the plan a plant
//! follows (`/api/v1/t/{slug}/plant-nutrient-plans/{plant_key}`). Reads for every member;
//! writes for growers and admins.

use salvo::oapi::extract::PathParam;
use salvo::prelude::*;

use super::model::{
    AssignBody, Assignment, CloneBody, LIST_MAX_LIMIT, NutrientPlan, Owner, PhaseTargetsBody,
    PlanBodyKind, PlanSummary, PlantCoverage, PlantPlan, TargetsPatch, assign_target, clone_name,
};
use super::service::{self, Query};
use crate::catalog::engine::routes::{Body, CreateShape};
use crate::error::{AppError, ErrorBody, ErrorDetail};
use crate::http::depot::DepotExt;
use crate::http::json::{has_json_body, read_object};
use crate::http::pagination::{Page, PageRequest};

pub fn router() -> Router {
    Router::with_path("nutrient-plans")
        .get(list_plans)
        .post(create_plan)
        .push(
            Router::with_path("{plan_key}")
                .get(get_plan)
                .delete(delete_plan)
                .push(Router::with_path("clone").post(clone_plan))
                .push(Router::with_path("phase-targets").patch(set_phase_targets))
                .push(Router::with_path("assignments").post(assign_plan)),
        )
}

pub fn plant_router() -> Router {
    Router::with_path("plant-nutrient-plans/{plant_key}")
        .get(get_plant_plan)
        .push(Router::with_path("coverage").get(get_plant_coverage))
}

fn query_error(name: &str, reason: &str) -> ErrorDetail {
    ErrorDetail::new(format!("query.{name}"), reason, "value_error")
}

/// List the global templates and the garden's own plans in one list, each marked by `owner`:
/// templates first, then the garden's plans by name.
#[endpoint(tags("nutrient-plans"), security(["bearer" = []]), operation_id = "list_nutrient_plans",
    parameters(
        ("slug" = String, Path, description = "tenant slug"),
        ("q" = Option<String>, Query, max_length = 100, pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$", description = "part of the name, culture or a tag"),
        ("owner" = Option<Owner>, Query, description = "global or garden"),
        ("skip" = Option<i64>, Query, minimum = 0, maximum = 100000, description = "items to skip (default 0)"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 200, description = "page size (default 100)"),
    ),
    responses(
        (status_code = 200, description = "one page of plans", body = Page<PlanSummary>),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: a query parameter is out of range", body = ErrorBody),
    ))]
pub async fn list_plans(
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Page<PlanSummary>>, AppError> {
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
    let owner = match req.queries().get("owner").map(String::as_str) {
        None => None,
        Some(raw) => {
            let o = Owner::parse(raw);
            if o.is_none() {
                details.push(query_error("owner", "must be global or garden"));
            }
            o
        }
    };
    let page = match page {
        Some(p) if details.is_empty() => p,
        _ => return Err(AppError::validation(details)),
    };
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::list_plans(&state, tenant, &Query { q, owner }, page).await?,
    ))
}

/// Get one plan with its phases: a template's key or `tenant:<uuid>` of the garden's own.
#[endpoint(tags("nutrient-plans"), security(["bearer" = []]), operation_id = "get_nutrient_plan",
    parameters(("slug" = String, Path, description = "tenant slug")),
    responses(
        (status_code = 200, description = "the plan", body = NutrientPlan),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or plan", body = ErrorBody),
    ))]
pub async fn get_plan(
    plan_key: PathParam<String>,
    depot: &mut Depot,
) -> Result<Json<NutrientPlan>, AppError> {
    let state = depot.app_state()?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(service::get_plan(&state, tenant, &plan_key).await?))
}

/// Create a plan owned by the garden (grower): phase entries with week windows, products
/// (global or the garden's own) and doses, target and reference EC, pH range, NPK ratio.
///
/// A plan of the garden (`tenant:<uuid>`, name unique: 409) holds 1–50 phase entries, each with
/// `phase_name` (`germination, seedling, vegetative, flowering, flushing, dormancy, harvest`),
/// `sequence_order`, `week_start`–`week_end` (1–520), `target_ec_ms` (0–10), `reference_ec_ms` (the
/// same on the plan's `reference_substrate_type`, default soil), `ph_min`/`ph_max`, `npk_ratio`,
/// `nutrients` (calcium, magnesium, sulfur, iron, boron ppm), `products` (0.001–50 ml or g per
/// litre, each once) and `notes`; tags are lower-cased.
#[endpoint(tags("nutrient-plans"), security(["bearer" = []]), operation_id = "create_nutrient_plan",
    status_codes(201, 400, 401, 403, 404, 409, 413, 415, 422, 500),
    parameters(("slug" = String, Path, description = "tenant slug")),
    responses(
        (status_code = 201, description = "plan created (owner garden)", body = NutrientPlan),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant, or a product that is neither global nor the garden's (details name it)", body = ErrorBody),
        (status_code = 409, description = "DUPLICATE_ENTRY: the garden has a plan of that name", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: one detail per invalid field (EC over 10, pH outside 0-14, a window that ends before it starts, …)", body = ErrorBody),
    ))]
pub async fn create_plan(
    body: Body<PlanBodyKind, CreateShape>,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<Json<NutrientPlan>, AppError> {
    let state = depot.app_state()?;
    let tenant = &depot.tenant_ctx()?.tenant;
    let created = service::create_plan(&state, tenant, body.0, true).await?;
    res.status_code(StatusCode::CREATED);
    Ok(Json(created))
}

/// Delete one of the garden's own plans (its assignments go with it); templates: 403.
///
/// Deleting a plan drops its assignments. Templates (`owner: global`) are read-only: 403, the
/// message says to clone first.
#[endpoint(tags("nutrient-plans"), security(["bearer" = []]), operation_id = "delete_nutrient_plan",
    status_codes(204, 401, 403, 404, 500),
    parameters(("slug" = String, Path, description = "tenant slug")),
    responses(
        (status_code = 204, description = "deleted"),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed, or a global template", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or plan", body = ErrorBody),
    ))]
pub async fn delete_plan(
    plan_key: PathParam<String>,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<(), AppError> {
    let state = depot.app_state()?;
    let tenant = &depot.tenant_ctx()?.tenant;
    service::delete_plan(&state, tenant, &plan_key).await?;
    res.status_code(StatusCode::NO_CONTENT);
    Ok(())
}

/// Copy a template or one of the garden's plans into a new plan the garden owns
/// (`cloned_from_key` set; the source is untouched). The body is optional.
///
/// The copy records `cloned_from_key`; its default name is `<source> (copy)`, then `(copy 2)`; a
/// name in use is 409.
#[endpoint(tags("nutrient-plans"), security(["bearer" = []]), operation_id = "clone_nutrient_plan",
    status_codes(201, 400, 401, 403, 404, 409, 413, 415, 422, 500),
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = CloneBody,
    responses(
        (status_code = 201, description = "the copy (owner garden)", body = NutrientPlan),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or plan", body = ErrorBody),
        (status_code = 409, description = "DUPLICATE_ENTRY: the garden has a plan of the given name", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: name invalid, unknown field", body = ErrorBody),
    ))]
pub async fn clone_plan(
    plan_key: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<Json<NutrientPlan>, AppError> {
    let state = depot.app_state()?;
    let name = if has_json_body(req) {
        let map = read_object(req, state.config().max_body_bytes).await?;
        clone_name(&map, "body.")?
    } else {
        None
    };
    let tenant = &depot.tenant_ctx()?.tenant;
    let copy = service::clone_plan(&state, tenant, &plan_key, name, true).await?;
    res.status_code(StatusCode::CREATED);
    Ok(Json(copy))
}

/// Set `target_ec_ms` and/or `reference_ec_ms` of one phase of a plan the garden owns: an
/// omitted field stays, null is refused (a target can never be cleared). A global template is
/// 403: clone it first.
///
/// Body `{phase, target_ec_ms?, reference_ec_ms?}`: `phase` is the entry key or its phase name; a
/// name several entries share is 422 listing their keys; `null` and an empty patch are 422;
/// `version` goes up. A template is 403 (the tool answers `permission.denied` naming
/// `clone_nutrient_plan`).
#[endpoint(tags("nutrient-plans"), security(["bearer" = []]), operation_id = "set_nutrient_plan_phase_targets",
    status_codes(200, 400, 401, 403, 404, 413, 415, 422, 500),
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = PhaseTargetsBody,
    responses(
        (status_code = 200, description = "the plan with the changed phase", body = NutrientPlan),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed, or a global template (the message names the clone operation)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant, plan or phase entry", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: EC outside 0-10, null, an empty patch, an ambiguous phase name", body = ErrorBody),
    ))]
pub async fn set_phase_targets(
    plan_key: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<NutrientPlan>, AppError> {
    let state = depot.app_state()?;
    let map = read_object(req, state.config().max_body_bytes).await?;
    let patch = TargetsPatch::check(&map, "body.").map_err(AppError::validation)?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::set_phase_targets(&state, tenant, &plan_key, &patch, "body.", true).await?,
    ))
}

/// Assign the plan (a template or the garden's own) to a plant or a planting run; it replaces
/// the plan the plant or run had. A plant follows its own plan, else its run's.
///
/// Exactly one of `plant_key` and `run_key`; the assignment replaces what the plant or run followed
/// (`replaced_plan_key`); an archived plant is 409.
#[endpoint(tags("nutrient-plans"), security(["bearer" = []]), operation_id = "assign_nutrient_plan",
    status_codes(200, 400, 401, 403, 404, 409, 413, 415, 422, 500),
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = AssignBody,
    responses(
        (status_code = 200, description = "assigned; names the replaced plan", body = Assignment),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant, plan, plant or run", body = ErrorBody),
        (status_code = 409, description = "STATE_CONFLICT: the plant is archived", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: not exactly one of plant_key and run_key", body = ErrorBody),
    ))]
pub async fn assign_plan(
    plan_key: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Assignment>, AppError> {
    let state = depot.app_state()?;
    let map = read_object(req, state.config().max_body_bytes).await?;
    let target = assign_target(&map, "body.")?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::assign(&state, tenant, &plan_key, &target, true).await?,
    ))
}

/// The plan that applies to a plant now (its own assignment, else its run's, else none) and
/// the phase entry for its current phase and plan week.
///
/// The plant's own plan, else its run's, else `plan: null`. Week 1 is the plant's first week,
/// counted from `planted_on`, else from the day it was recorded. `current` is the entry named like
/// the plant's (coarse) phase whose window holds the plan week, else that phase's entry nearest the
/// week; a plant without a phase takes the entry whose window holds the week; a plant in a phase
/// the plan does not name gets `current: null`.
#[endpoint(tags("nutrient-plans"), security(["bearer" = []]), operation_id = "get_plant_nutrient_plan",
    parameters(("slug" = String, Path, description = "tenant slug")),
    responses(
        (status_code = 200, description = "the plan (plan null when none applies)", body = PlantPlan),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or plant", body = ErrorBody),
    ))]
pub async fn get_plant_plan(
    plant_key: PathParam<String>,
    depot: &mut Depot,
) -> Result<Json<PlantPlan>, AppError> {
    let state = depot.app_state()?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(service::plant_plan(&state, tenant, &plant_key).await?))
}

/// Coverage of the plant's plan (domain 2.16): every phase of the species' sequence named by
/// an entry, gaps and overlaps of the week windows, phases without a target EC.
///
/// Entries sorted by `week_start`; a species without a phase sequence gives empty lists.
#[endpoint(tags("nutrient-plans"), security(["bearer" = []]), operation_id = "validate_nutrient_plan_coverage",
    parameters(("slug" = String, Path, description = "tenant slug")),
    responses(
        (status_code = 200, description = "the coverage report", body = PlantCoverage),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or plant", body = ErrorBody),
    ))]
pub async fn get_plant_coverage(
    plant_key: PathParam<String>,
    depot: &mut Depot,
) -> Result<Json<PlantCoverage>, AppError> {
    let state = depot.app_state()?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::plant_coverage(&state, tenant, &plant_key).await?,
    ))
}
