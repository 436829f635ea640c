//! REST face of tanks under `/api/v1/t/{slug}/tanks`: reads for every member, writes for
//! growers and admins.

use salvo::oapi::extract::PathParam;
use salvo::prelude::*;

use super::model::*;
use super::service::{self, LIST_MAX_LIMIT};
use crate::error::{AppError, ErrorBody};
use crate::http::depot::DepotExt;
use crate::http::depot::actor;
use crate::http::json::read_json;
use crate::http::pagination::{Page, PageRequest};

pub fn router() -> Router {
    Router::with_path("tanks")
        .get(list_tanks)
        .post(create_tank)
        .push(
            Router::with_path("{tank_key}")
                .get(get_tank)
                .patch(update_tank)
                .delete(delete_tank)
                .push(Router::with_path("fills").get(list_fills).post(fill_tank))
                .push(
                    Router::with_path("maintenance")
                        .get(list_maintenance)
                        .post(log_maintenance),
                ),
        )
}

/// List the garden's tanks with their current state and maintenance due dates, oldest first.
#[endpoint(tags("tanks"), security(["bearer" = []]), operation_id = "list_tanks",
    parameters(
        ("slug" = String, Path, description = "tenant slug"),
        ("skip" = Option<i64>, Query, minimum = 0, maximum = 100000, description = "items to skip (default 0)"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 200, description = "page size (default 100)"),
    ),
    responses(
        (status_code = 200, description = "one page of tanks", body = Page<Tank>),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: skip or limit out of range", body = ErrorBody),
    ))]
pub async fn list_tanks(
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Page<Tank>>, AppError> {
    let state = depot.app_state()?;
    let page = PageRequest::from_request(req, LIST_MAX_LIMIT)?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(service::list_tanks(&state, tenant, page).await?))
}

/// Get one tank: capacity, current state (last fill, volume, EC, pH, age) and maintenance due.
#[endpoint(tags("tanks"), security(["bearer" = []]), operation_id = "get_tank",
    parameters(("slug" = String, Path, description = "tenant slug")),
    responses(
        (status_code = 200, description = "the tank", body = Tank),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or tank", body = ErrorBody),
    ))]
pub async fn get_tank(
    tank_key: PathParam<String>,
    depot: &mut Depot,
) -> Result<Json<Tank>, AppError> {
    let state = depot.app_state()?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(service::get_tank(&state, tenant, &tank_key).await?))
}

/// Create a tank (grower).
///
/// `name` 1–120 characters, unique case-insensitively; `volume_liters` above 0, ≤ 100000.
/// `state.current_volume_liters` is null until the first fill.
#[endpoint(tags("tanks"), security(["bearer" = []]), operation_id = "create_tank",
    status_codes(201, 400, 401, 403, 404, 409, 413, 415, 422, 500),
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = NewTank,
    responses(
        (status_code = 201, description = "tank created", body = Tank),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or location", body = ErrorBody),
        (status_code = 409, description = "DUPLICATE_ENTRY: a tank of that name exists", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: one detail per invalid field", body = ErrorBody),
    ))]
pub async fn create_tank(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<Json<Tank>, AppError> {
    let state = depot.app_state()?;
    let new: NewTank = read_json(req, state.config().max_body_bytes).await?;
    let tenant = &depot.tenant_ctx()?.tenant;
    let tank = service::create_tank(&state, tenant, &new).await?;
    res.status_code(StatusCode::CREATED);
    Ok(Json(tank))
}

/// Change a tank's name, kind, capacity, location or notes (grower).
///
/// A PATCH may not shrink `volume_liters` below what the tank holds.
#[endpoint(tags("tanks"), security(["bearer" = []]), operation_id = "update_tank",
    status_codes(200, 400, 401, 403, 404, 409, 413, 415, 422, 500),
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = TankPatchBody,
    responses(
        (status_code = 200, description = "the updated tank", body = Tank),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant, tank or location", body = ErrorBody),
        (status_code = 409, description = "DUPLICATE_ENTRY: a tank of that name exists", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: one detail per invalid field; capacity below the current volume", body = ErrorBody),
    ))]
pub async fn update_tank(
    tank_key: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Tank>, AppError> {
    let state = depot.app_state()?;
    let patch: TankPatch = read_json(req, state.config().max_body_bytes).await?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::patch_tank(&state, tenant, &tank_key, &patch).await?,
    ))
}

/// Delete a tank with its fills and maintenance log; feedings drawn from it stay (their tank
/// becomes null).
#[endpoint(tags("tanks"), security(["bearer" = []]), operation_id = "delete_tank",
    status_codes(204, 401, 403, 404, 500),
    parameters(("slug" = String, Path, description = "tenant slug")),
    responses(
        (status_code = 204, description = "tank deleted"),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or tank", body = ErrorBody),
    ))]
pub async fn delete_tank(
    tank_key: PathParam<String>,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<(), AppError> {
    let state = depot.app_state()?;
    let tenant = &depot.tenant_ctx()?.tenant;
    service::delete_tank(&state, tenant, &tank_key).await?;
    res.status_code(StatusCode::NO_CONTENT);
    Ok(())
}

/// Fill, top up or adjust a tank (grower): sets its volume, EC and pH.
///
/// `full_change` replaces the solution: its litres become the current volume and its measured `ec_ms`
/// and `ph` the current values (one not given becomes unknown). `top_up` adds its litres and sets what
/// it measured, keeping the last EC and pH otherwise. `adjustment` must name `ec_ms` or `ph` and may add
/// litres (default 0). Also `water_source` and `water_temp_c`. A fill that would overflow the capacity
/// is 422 on `body.volume_liters` and changes nothing.
#[endpoint(tags("tanks"), security(["bearer" = []]), operation_id = "fill_tank",
    status_codes(201, 400, 401, 403, 404, 413, 415, 422, 500),
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = NewFill,
    responses(
        (status_code = 201, description = "the tank after the fill", body = Tank),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or tank", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: one detail per invalid field; the tank would overflow", body = ErrorBody),
    ))]
pub async fn fill_tank(
    tank_key: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<Json<Tank>, AppError> {
    let state = depot.app_state()?;
    let new: NewFill = read_json(req, state.config().max_body_bytes).await?;
    let who = actor(depot)?;
    let tenant = &depot.tenant_ctx()?.tenant;
    let tank = service::fill_tank(&state, tenant, &tank_key, &new, &who).await?;
    res.status_code(StatusCode::CREATED);
    Ok(Json(tank))
}

/// A tank's fills, newest first.
#[endpoint(tags("tanks"), security(["bearer" = []]), operation_id = "list_tank_fills",
    parameters(
        ("slug" = String, Path, description = "tenant slug"),
        ("skip" = Option<i64>, Query, minimum = 0, maximum = 100000, description = "items to skip (default 0)"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 200, description = "page size (default 100)"),
    ),
    responses(
        (status_code = 200, description = "one page of fills", body = Page<TankFill>),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or tank", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: skip or limit out of range", body = ErrorBody),
    ))]
pub async fn list_fills(
    tank_key: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Page<TankFill>>, AppError> {
    let state = depot.app_state()?;
    let page = PageRequest::from_request(req, LIST_MAX_LIMIT)?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::list_fills(&state, tenant, &tank_key, page).await?,
    ))
}

/// Log a maintenance of a tank (grower): cleaning, water change, calibration, …
///
/// Kinds `water_change, cleaning, sanitization, calibration, filter_change, pump_inspection`;
/// `performed_at` not in the future.
#[endpoint(tags("tanks"), security(["bearer" = []]), operation_id = "log_tank_maintenance",
    status_codes(201, 400, 401, 403, 404, 413, 415, 422, 500),
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = NewMaintenance,
    responses(
        (status_code = 201, description = "maintenance logged", body = MaintenanceEntry),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or tank", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: one detail per invalid field", body = ErrorBody),
    ))]
pub async fn log_maintenance(
    tank_key: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<Json<MaintenanceEntry>, AppError> {
    let state = depot.app_state()?;
    let body: MaintenanceBody = read_json(req, state.config().max_body_bytes).await?;
    let who = actor(depot)?;
    let tenant = &depot.tenant_ctx()?.tenant;
    let entry = service::log_maintenance(&state, tenant, &tank_key, &body, &who).await?;
    res.status_code(StatusCode::CREATED);
    Ok(Json(entry))
}

/// A tank's maintenance log, newest first.
#[endpoint(tags("tanks"), security(["bearer" = []]), operation_id = "list_tank_maintenance",
    parameters(
        ("slug" = String, Path, description = "tenant slug"),
        ("skip" = Option<i64>, Query, minimum = 0, maximum = 100000, description = "items to skip (default 0)"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 200, description = "page size (default 100)"),
    ),
    responses(
        (status_code = 200, description = "one page of maintenance entries", body = Page<MaintenanceEntry>),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or tank", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: skip or limit out of range", body = ErrorBody),
    ))]
pub async fn list_maintenance(
    tank_key: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Page<MaintenanceEntry>>, AppError> {
    let state = depot.app_state()?;
    let page = PageRequest::from_request(req, LIST_MAX_LIMIT)?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::list_maintenance(&state, tenant, &tank_key, page).await?,
    ))
}
