//! REST face of pest and disease management under `/api/v1/t/{slug}/ipm`: inspections and
//! treatment applications. Reads for every member, writes for growers and admins.

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
use crate::http::query::{date_query, uuid_query};

pub fn router() -> Router {
    Router::with_path("ipm")
        .push(
            Router::with_path("inspections")
                .get(list_inspections)
                .post(create_inspection)
                .push(Router::with_path("{inspection_key}").get(get_inspection)),
        )
        .push(Router::with_path("applications/export").get(export_protection_record))
        .push(
            Router::with_path("treatments")
                .get(list_treatment_applications)
                .post(apply_treatment)
                .push(Router::with_path("{application_key}").get(get_treatment_application)),
        )
}

/// Inspections, newest first. `plant` also lists the inspections of the location the plant
/// stands at; `location` only that location's.
///
/// `?plant=` also lists the inspections of the plant's location.
#[endpoint(tags("ipm"), security(["bearer" = []]), operation_id = "list_inspections",
    parameters(
        ("slug" = String, Path, description = "tenant slug"),
        ("plant" = Option<Uuid>, Query, description = "plant key"),
        ("location" = Option<Uuid>, Query, description = "location key"),
        ("skip" = Option<i64>, Query, minimum = 0, maximum = 100000, description = "items to skip (default 0)"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 100, description = "page size (default 100)"),
    ),
    responses(
        (status_code = 200, description = "one page of inspections", body = Page<Inspection>),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant, plant or location", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: a filter, skip or limit out of range", body = ErrorBody),
    ))]
pub async fn list_inspections(
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Page<Inspection>>, AppError> {
    let state = depot.app_state()?;
    let page = PageRequest::from_request(req, LIST_MAX_LIMIT)?;
    let plant = uuid_query(req, "plant")?;
    let location = uuid_query(req, "location")?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::list_inspections(&state, tenant, plant, location, page).await?,
    ))
}

/// One inspection.
#[endpoint(tags("ipm"), security(["bearer" = []]), operation_id = "get_inspection",
    parameters(("slug" = String, Path, description = "tenant slug")),
    responses(
        (status_code = 200, description = "the inspection", body = Inspection),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or inspection", body = ErrorBody),
    ))]
pub async fn get_inspection(
    inspection_key: PathParam<String>,
    depot: &mut Depot,
) -> Result<Json<Inspection>, AppError> {
    let state = depot.app_state()?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::get_inspection(&state, tenant, &inspection_key).await?,
    ))
}

/// Record an inspection of a plant or a location, with findings from the pest and disease
/// catalogue (confidence and affected share 0.0 to 1.0).
///
/// Exactly one of a plant and a location. `pressure_level` `none|low|medium|high|critical`,
/// `symptoms_observed[]`, up to 25 `findings[]` (a catalogue `pest_key` or `disease_key` or a
/// `symptom`; `severity`, `confidence` 0–1, `affected_plant_part`, `affected_share` 0–1,
/// `rationale`), `photo_refs[]`, `notes`; `inspector` defaults to the caller, `inspected_at` not in
/// the future.
#[endpoint(tags("ipm"), security(["bearer" = []]), operation_id = "create_inspection",
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = NewInspection,
    responses(
        (status_code = 201, description = "inspection recorded", body = Inspection),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant, plant, location, pest or disease", body = ErrorBody),
        (status_code = 409, description = "STATE_CONFLICT: the plant is archived", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: one detail per invalid field", body = ErrorBody),
    ))]
pub async fn create_inspection(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<Json<Inspection>, AppError> {
    let state = depot.app_state()?;
    depot.tenant_ctx()?.require(Role::Grower)?;
    let new: NewInspection = read_json(req, state.config().max_body_bytes).await?;
    let actor = actor(depot)?;
    let tenant = &depot.tenant_ctx()?.tenant;
    let created = service::create_inspection(&state, tenant, &new, &actor, true).await?;
    res.status_code(StatusCode::CREATED);
    Ok(Json(created))
}

/// Treatment applications, newest first; `plant`: those that touched the plant.
#[endpoint(tags("ipm"), security(["bearer" = []]), operation_id = "list_treatment_applications",
    parameters(
        ("slug" = String, Path, description = "tenant slug"),
        ("plant" = Option<Uuid>, Query, description = "plant key"),
        ("skip" = Option<i64>, Query, minimum = 0, maximum = 100000, description = "items to skip (default 0)"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 100, description = "page size (default 100)"),
    ),
    responses(
        (status_code = 200, description = "one page of applications", body = Page<Application>),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or plant", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: a filter, skip or limit out of range", body = ErrorBody),
    ))]
pub async fn list_treatment_applications(
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Page<Application>>, AppError> {
    let state = depot.app_state()?;
    let page = PageRequest::from_request(req, LIST_MAX_LIMIT)?;
    let plant = uuid_query(req, "plant")?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::list_applications(&state, tenant, plant, page).await?,
    ))
}

/// The plant-protection record (Regulation (EU) 2023/564): one row per treatment application
/// made on a day in `[from, to]` of the garden's time zone (default: this year up to today;
/// at most 731 days), oldest first, with the crop's EPPO code, the BBCH growth stage, the
/// product and its authorisation number, dose, treated area or plant count, place, operator
/// and reason. `format=csv` (default `json`) answers `text/csv` with the same columns, as a
/// download.
///
/// `from`/`to` are inclusive; default from 1 January of `to`'s year, `to` today; at most 731 days;
/// `from` after `to` is 422. The time zone is an IANA name from the zone database bundled with the
/// binary. The CSV is downloaded as `plant-protection-{slug}-{from}-{to}.csv`; JSON adds `garden`,
/// `timezone`, `from`, `to`, `count`. Catalogue fields: species `eppo_code` (5–6 capitals or
/// digits), treatment `authorisation_number` (up to 50 characters), phase `bbch_principal_stage`
/// (0–9).
#[endpoint(tags("ipm"), security(["bearer" = []]), operation_id = "export_plant_protection_record",
    parameters(
        ("slug" = String, Path, description = "tenant slug"),
        ("from" = Option<String>, Query, format = "date", description = "first day (YYYY-MM-DD, garden time zone); default 1 January of to's year"),
        ("to" = Option<String>, Query, format = "date", description = "last day (YYYY-MM-DD, garden time zone), not before from; default today"),
        ("format" = Option<String>, Query, pattern = "^(csv|json)$", description = "csv or json (default json)"),
    ),
    responses(
        (status_code = 200, description = "the record: JSON (PlantProtectionRecord), or CSV with one header row (format=csv)", body = ProtectionRecord, content_type = ["application/json", "text/csv"]),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: a date malformed, from after to, more than 731 days, format neither csv nor json", body = ErrorBody),
    ))]
pub async fn export_protection_record(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<(), AppError> {
    let state = depot.app_state()?;
    let csv = match req.queries().get("format").map(String::as_str) {
        None | Some("json") => false,
        Some("csv") => true,
        Some(_) => {
            return Err(AppError::validation(vec![ErrorDetail::new(
                "query.format",
                "must be csv or json",
                "value_error",
            )]));
        }
    };
    let q = service::RecordQuery {
        from: date_query(req, "from")?,
        to: date_query(req, "to")?,
    };
    let tenant = &depot.tenant_ctx()?.tenant;
    let record = service::protection_record(&state, tenant, q).await?;
    if !csv {
        res.render(Json(record));
        return Ok(());
    }
    let body = record
        .to_csv()
        .map_err(|e| AppError::internal(format!("writing the record as CSV: {e}")))?;
    res.add_header("content-type", "text/csv; charset=utf-8", true)
        .map_err(|e| AppError::internal(e.to_string()))?;
    let file = format!("attachment; filename=\"{}\"", record.file_name("csv"));
    res.add_header("content-disposition", file, true)
        .map_err(|e| AppError::internal(e.to_string()))?;
    res.write_body(body)
        .map_err(|e| AppError::internal(e.to_string()))?;
    Ok(())
}

/// One treatment application with the plants it touched and their safety intervals.
#[endpoint(tags("ipm"), security(["bearer" = []]), operation_id = "get_treatment_application",
    parameters(("slug" = String, Path, description = "tenant slug")),
    responses(
        (status_code = 200, description = "the application", body = Application),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or application", body = ErrorBody),
    ))]
pub async fn get_treatment_application(
    application_key: PathParam<String>,
    depot: &mut Depot,
) -> Result<Json<Application>, AppError> {
    let state = depot.app_state()?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::get_application(&state, tenant, &application_key).await?,
    ))
}

/// Apply a treatment of the catalogue to plants (or every plant at a location). Starts the
/// safety interval of every plant touched: harvests are refused from the local day of
/// `applied_at` in the garden's time zone (`applied_on`; UTC when no zone is set) through the
/// day before `safe_on` (= `applied_on` + the interval). The days are counted from
/// `applied_at` whenever they are read, so a change of the garden's zone counts them anew. The
/// same mode of action applied to a plant as often as its group's limit allows
/// (`GET /api/v1/ipm/resistance-groups`: FRAC M and BM groups never count; FRAC 3 three and
/// FRAC 11 and 17 two a season; otherwise a precautionary 3 in 90 days) refuses the next with
/// `RESISTANCE_WARNING`, naming the group, limit and source, unless
/// `acknowledge_resistance` is true (recorded on the application).
///
/// `plant_keys`, `location_key` (every live plant there) or both; `dose` with `dose_unit`
/// (`ml_per_l|g_per_l|ml|g|count`), `water_volume_liters`, `method`, `applied_by`, `applied_at`
/// (default now, not in the future, with its UTC offset); for the plant-protection record
/// `bbch_code`, `treated_area_m2` (above 0, ≤ 1,000,000) and
/// `target_pest_keys[]`/`target_disease_keys[]` (up to 20 each). Resistance: an active ingredient
/// counts trimmed, lower-cased, spaces collapsed; treatments without an ingredient never count; the
/// 422 has one detail per plant on field `active_ingredient`; `acknowledge_resistance: true` is
/// recorded with `resistance_count`. The tool `apply_treatment` treats one plant (no list
/// arguments).
///
/// Each plant's interval is the catalogue label's for its crop (species, family or crop group,
/// else the label for every crop). A product with no label interval for a plant's crop is not
/// applied: 422 `VALIDATION_ERROR`, one detail per such plant on `body.treatment_key`, nothing
/// recorded. Mechanical and cultural measures and releases of beneficials need no label.
#[endpoint(tags("ipm"), security(["bearer" = []]), operation_id = "apply_treatment",
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = NewApplication,
    responses(
        (status_code = 201, description = "application recorded", body = Application),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant, treatment, plant or location", body = ErrorBody),
        (status_code = 409, description = "STATE_CONFLICT: a plant is archived", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR (one detail per invalid field), RESISTANCE_WARNING (detail field active_ingredient per plant at the limit)", body = ErrorBody),
    ))]
pub async fn apply_treatment(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<Json<Application>, AppError> {
    let state = depot.app_state()?;
    depot.tenant_ctx()?.require(Role::Grower)?;
    let new: NewApplication = read_json(req, state.config().max_body_bytes).await?;
    let actor = actor(depot)?;
    let tenant = &depot.tenant_ctx()?.tenant;
    let created = service::apply_treatment(&state, tenant, &new, &actor, true).await?;
    res.status_code(StatusCode::CREATED);
    Ok(Json(created))
}
