//! REST face of sensors under `/api/v1/t/{slug}/sensors`.

use salvo::oapi::extract::PathParam;
use salvo::prelude::*;

use super::model::{
    NewSensor, NewSensorBody, ReadingSeries, Readings, ReadingsBody, ReadingsStored, Sensor,
    SensorPatch, SensorPatchBody,
};
use super::service::{self, LIST_MAX_LIMIT, SeriesQuery};
use crate::error::{AppError, ErrorBody};
use crate::http::depot::DepotExt;
use crate::http::json::read_json;
use crate::http::pagination::{Page, PageRequest};
use crate::http::roles::{Admin, Grower, Requires};

pub fn router() -> Router {
    Router::with_path("sensors")
        .get(list_sensors)
        .post(create_sensor)
        .push(
            Router::with_path("{sensor_key}")
                .get(get_sensor)
                .patch(update_sensor)
                .delete(delete_sensor)
                .push(
                    Router::with_path("readings")
                        .get(list_sensor_readings)
                        .post(record_sensor_readings),
                ),
        )
}

/// List the garden's sensors, oldest first.
#[endpoint(tags("sensors"), security(["bearer" = []]), operation_id = "list_sensors",
    parameters(
        ("slug" = String, Path, description = "tenant slug"),
        ("skip" = Option<i64>, Query, minimum = 0, maximum = 100000, description = "items to skip (default 0)"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 200, description = "page size (default 100)"),
    ),
    responses(
        (status_code = 200, description = "one page of sensors", body = Page<Sensor>),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: skip or limit out of range", body = ErrorBody),
    ))]
pub async fn list_sensors(
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Page<Sensor>>, AppError> {
    let state = depot.app_state()?;
    let page = PageRequest::from_request(req, LIST_MAX_LIMIT)?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(service::list_sensors(&state, tenant, page).await?))
}

/// Get one sensor, with its unit and the physical range its readings must lie in.
#[endpoint(tags("sensors"), security(["bearer" = []]), operation_id = "get_sensor",
    parameters(("slug" = String, Path, description = "tenant slug")),
    responses(
        (status_code = 200, description = "the sensor", body = Sensor),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or sensor", body = ErrorBody),
    ))]
pub async fn get_sensor(
    sensor_key: PathParam<String>,
    depot: &mut Depot,
) -> Result<Json<Sensor>, AppError> {
    let state = depot.app_state()?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::get_sensor(&state, tenant, &sensor_key).await?,
    ))
}

/// Register a sensor (admin): a `metric` measured at exactly one of a location, a site or a
/// tank of this garden, fed over `http` (post readings to its readings route) or read from an
/// MQTT `topic` (`mqtt`, `home_assistant`).
///
/// Physical ranges of the metrics (a reading outside is refused): temperature_c and
/// water_temperature_c -50..70 °C, humidity_percent and soil_moisture_percent 0..100 %,
/// ec_ms_cm 0..20 mS/cm, ph 0..14, ppfd_umol_m2_s 0..3000 µmol/m²/s, co2_ppm 0..10000 ppm,
/// light_lux 0..200000 lx. A place key of another garden is `ENTITY_NOT_FOUND`; none or
/// several place keys a 422 naming them.
#[endpoint(tags("sensors"), security(["bearer" = []]), operation_id = "create_sensor",
    status_codes(201, 400, 401, 403, 404, 409, 413, 415, 422, 500),
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = NewSensorBody,
    responses(
        (status_code = 201, description = "sensor registered", body = Sensor),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: admin role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant, or a location, site or tank not of this garden", body = ErrorBody),
        (status_code = 409, description = "DUPLICATE_ENTRY: a sensor of that name exists", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: one detail per invalid field", body = ErrorBody),
    ))]
pub async fn create_sensor(
    _role: Requires<Admin>,
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<Json<Sensor>, AppError> {
    let state = depot.app_state()?;
    // Sensors are the garden's setup, like sites and tanks: admins only.
    let new: NewSensor = read_json(req, state.config().max_body_bytes).await?;
    let tenant = &depot.tenant_ctx()?.tenant;
    let sensor = service::create_sensor(&state, tenant, &new).await?;
    res.status_code(StatusCode::CREATED);
    Ok(Json(sensor))
}

/// Change a sensor (admin): name, place (one of location_key, site_key, tank_key), source,
/// topic, expected interval. The metric cannot change.
#[endpoint(tags("sensors"), security(["bearer" = []]), operation_id = "update_sensor",
    status_codes(200, 400, 401, 403, 404, 409, 413, 415, 422, 500),
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = SensorPatchBody,
    responses(
        (status_code = 200, description = "the updated sensor", body = Sensor),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: admin role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or sensor, or a place not of this garden", body = ErrorBody),
        (status_code = 409, description = "DUPLICATE_ENTRY: a sensor of that name exists", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: one detail per invalid field", body = ErrorBody),
    ))]
pub async fn update_sensor(
    _role: Requires<Admin>,
    sensor_key: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Sensor>, AppError> {
    let state = depot.app_state()?;
    let patch: SensorPatch = read_json(req, state.config().max_body_bytes).await?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::patch_sensor(&state, tenant, &sensor_key, &patch).await?,
    ))
}

/// Delete a sensor (admin) with all its readings and hourly roll-ups.
#[endpoint(tags("sensors"), security(["bearer" = []]), operation_id = "delete_sensor",
    status_codes(204, 401, 403, 404, 500),
    parameters(("slug" = String, Path, description = "tenant slug")),
    responses(
        (status_code = 204, description = "sensor deleted"),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: admin role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or sensor", body = ErrorBody),
    ))]
pub async fn delete_sensor(
    _role: Requires<Admin>,
    sensor_key: PathParam<String>,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<(), AppError> {
    let state = depot.app_state()?;
    let ctx = depot.tenant_ctx()?;
    service::delete_sensor(&state, &ctx.tenant, &sensor_key).await?;
    res.status_code(StatusCode::NO_CONTENT);
    Ok(())
}

/// Post readings of a sensor: up to 5000 `{value, measured_at}` per request, all or nothing.
///
/// Who may post: growers and above (the garden's service accounts, which drive automation,
/// hold the grower role); viewers cannot. Idempotent per (sensor, `measured_at`): a reading
/// stored before is not stored again and counts as `already_present`, so a gateway may resend
/// a batch safely. Refused with a 422 naming the reading (`body.readings[3].value`), storing
/// nothing of the request: a value that is not a number or lies outside the metric's physical
/// range (the sensor's `range_min`..`range_max`), a `measured_at` that is not RFC 3339 or more
/// than 5 minutes in the future, more than 5000 readings. Raw readings are kept 90 days; the
/// hourly roll-ups (min, max, average, count) for good.
#[endpoint(tags("sensors"), security(["bearer" = []]), operation_id = "record_sensor_readings",
    status_codes(200, 400, 401, 403, 404, 413, 415, 422, 500),
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = ReadingsBody,
    responses(
        (status_code = 200, description = "how many readings were stored and how many were present already", body = ReadingsStored),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or sensor", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: one detail per invalid reading", body = ErrorBody),
    ))]
pub async fn record_sensor_readings(
    _role: Requires<Grower>,
    sensor_key: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<ReadingsStored>, AppError> {
    let state = depot.app_state()?;
    let readings: Readings = read_json(req, state.config().max_body_bytes).await?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::record_readings(&state, tenant, &sensor_key, &readings, true).await?,
    ))
}

/// A sensor's readings of `from <= measured_at < to` (default: the last 24 hours).
///
/// Without `step`: the raw readings in time order, at most `limit` (default 1000, at most
/// 10000); `next_from` is set when more follow (ask again with `from` = `next_from`). With
/// `step` (`<n>m`, `<n>h` or `<n>d`, 1m to 31d, at most 10000 buckets in the window): `min`,
/// `avg`, `max` and `count` per bucket on the UTC grid (buckets start at whole multiples of the
/// step from 2000-01-01T00:00Z; `1d` is a UTC day), only buckets holding readings. Steps of
/// whole hours are computed from the hourly roll-ups, kept for good (`resolution: hourly`), so
/// charts reach past the 90 days raw readings are kept; shorter steps from the raw readings.
#[endpoint(tags("sensors"), security(["bearer" = []]), operation_id = "list_sensor_readings",
    parameters(
        ("slug" = String, Path, description = "tenant slug"),
        ("from" = Option<String>, Query, format = "date-time", description = "first instant (RFC 3339, included); default to minus 24 hours"),
        ("to" = Option<String>, Query, format = "date-time", description = "end (RFC 3339, excluded); default now"),
        ("step" = Option<String>, Query, pattern = "^[0-9]{1,6}[mhd]$", description = "bucket size: 5m, 1h, 1d …"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 10000, description = "raw readings at most (default 1000)"),
    ),
    responses(
        (status_code = 200, description = "the readings or buckets", body = ReadingSeries),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or sensor", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: from, to, step or limit malformed or out of range", body = ErrorBody),
    ))]
pub async fn list_sensor_readings(
    sensor_key: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<ReadingSeries>, AppError> {
    let state = depot.app_state()?;
    let q = |name: &str| req.queries().get(name).cloned();
    let query = SeriesQuery::parse(
        q("from").as_deref(),
        q("to").as_deref(),
        q("step").as_deref(),
        q("limit").as_deref(),
        time::OffsetDateTime::now_utc(),
    )?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::read_series(&state, tenant, &sensor_key, &query).await?,
    ))
}
