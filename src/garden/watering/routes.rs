//! REST face of watering and feeding events under `/api/v1/t/{slug}/watering-events`, and of a
//! plant's diagnostics under `/api/v1/t/{slug}/plant-instances/{plant_key}/diagnostics`.

use salvo::oapi::extract::PathParam;
use salvo::prelude::*;
use time::macros::format_description;
use time::{Date, Time};
use uuid::Uuid;

use super::model::*;
use super::repo::Filter;
use super::service::{self, LIST_MAX_LIMIT, WINDOW_DEFAULT_DAYS};
use crate::error::{AppError, ErrorBody, ErrorDetail};
use crate::http::depot::DepotExt;
use crate::http::depot::actor;
use crate::http::json::read_json;
use crate::http::pagination::{Page, PageRequest};

pub fn router() -> Router {
    Router::with_path("watering-events")
        .get(list_watering_events)
        .post(create_watering_event)
        .push(Router::with_path("{event_key}").get(get_watering_event))
}

/// Mounted beside the plants' router (its own path, so the plants' module is untouched).
pub fn diagnostics_router() -> Router {
    Router::with_path("plant-instances/{plant_key}/diagnostics").get(get_plant_diagnostics)
}

fn query_error(name: &str, reason: &str) -> ErrorDetail {
    ErrorDetail::new(format!("query.{name}"), reason, "value_error")
}

/// The list filters, each checked as sent (a malformed one is its own detail).
fn filter_from(req: &Request) -> Result<Filter, AppError> {
    let q = |n: &str| req.queries().get(n).cloned();
    let mut errors = Vec::new();
    let mut uuid = |n: &str| -> Option<Uuid> {
        let raw = q(n)?;
        let key = Uuid::parse_str(raw.trim()).ok();
        if key.is_none() {
            errors.push(query_error(n, "must be a key (UUID)"));
        }
        key
    };
    let plant = uuid("plant_key");
    let run = uuid("run_key");
    let tank = uuid("tank_key");
    let mut date = |n: &str| -> Option<Date> {
        let raw = q(n)?;
        let d = Date::parse(raw.trim(), format_description!("[year]-[month]-[day]")).ok();
        if d.is_none() {
            errors.push(query_error(n, "must be a date YYYY-MM-DD"));
        }
        d
    };
    let from = date("from");
    let to = date("to");
    if let (Some(a), Some(b)) = (from, to)
        && b < a
    {
        errors.push(query_error("to", "must not be before from"));
    }
    if !errors.is_empty() {
        return Err(AppError::validation(errors));
    }
    Ok(Filter {
        plant,
        run,
        tank,
        from: from.map(|d| d.with_time(Time::MIDNIGHT).assume_utc()),
        // Inclusive day: up to the next midnight.
        to: to
            .and_then(|d| d.next_day())
            .map(|d| d.with_time(Time::MIDNIGHT).assume_utc()),
    })
}

/// List watering and feeding events, newest first, filtered by plant, run, tank and days
/// (`from`/`to` are UTC days, inclusive).
///
/// Filters `plant_key`, `run_key`, `tank_key`, and `from`/`to` (UTC days).
#[endpoint(tags("watering"), security(["bearer" = []]), operation_id = "list_watering_events",
    parameters(
        ("slug" = String, Path, description = "tenant slug"),
        ("plant_key" = Option<Uuid>, Query, description = "events that watered this plant"),
        ("run_key" = Option<Uuid>, Query, description = "events of this planting run"),
        ("tank_key" = Option<Uuid>, Query, description = "events drawn from this tank"),
        ("from" = Option<String>, Query, format = "date", description = "first UTC day (YYYY-MM-DD)"),
        ("to" = Option<String>, Query, format = "date", description = "last UTC day (YYYY-MM-DD), not before from"),
        ("skip" = Option<i64>, Query, minimum = 0, maximum = 100000, description = "items to skip (default 0)"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 200, description = "page size (default 100)"),
    ),
    responses(
        (status_code = 200, description = "one page of events", body = Page<WateringEvent>),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: a malformed filter, skip or limit", body = ErrorBody),
    ))]
pub async fn list_watering_events(
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Page<WateringEvent>>, AppError> {
    let state = depot.app_state()?;
    let page = PageRequest::from_request(req, LIST_MAX_LIMIT)?;
    let filter = filter_from(req)?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::list_events(&state, tenant, &filter, page).await?,
    ))
}

/// Get one watering or feeding event with its runoff analysis.
#[endpoint(tags("watering"), security(["bearer" = []]), operation_id = "get_watering_event",
    parameters(("slug" = String, Path, description = "tenant slug")),
    responses(
        (status_code = 200, description = "the event", body = WateringEvent),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or event", body = ErrorBody),
    ))]
pub async fn get_watering_event(
    event_key: PathParam<String>,
    depot: &mut Depot,
) -> Result<Json<WateringEvent>, AppError> {
    let state = depot.app_state()?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(service::get_event(&state, tenant, &event_key).await?))
}

/// Record a watering or feeding of plants and/or a run's plants (grower), optionally drawn
/// from a tank; the runoff analysis is computed and stored with it.
///
/// `plant_keys` (up to 200, not archived) and/or `run_key` (its live plants; a run without any and
/// no plants named is 422); `volume_liters` (above 0, ≤ 10000); `occurred_at` not in the future;
/// `application_method` `fertigation, drench, foliar, top_dress` (default `drench`; the tool
/// `record_feeding_event` defaults to `fertigation`); `is_supplemental` not with fertigation;
/// `fertilizers_used` up to 20 `{fertilizer_key, ml_applied}`, stored as given;
/// `runoff_volume_liters` ≤ `volume_liters`. The runoff analysis is made against what was fed
/// (after, else before); a runoff EC without any fed EC is 422. From a tank, the event keeps the
/// tank's last fill; exactly the volume held is allowed, less than the litres applied (or never
/// filled) is 409 `STATE_CONFLICT`. The tool's `tank_fill_event_key` names the fill (checked as a
/// key of this garden); without it and with `tank_key`, the tank's last fill.
#[endpoint(tags("watering"), security(["bearer" = []]), operation_id = "create_watering_event",
    status_codes(201, 400, 401, 403, 404, 409, 413, 415, 422, 500),
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = NewWateringEventBody,
    responses(
        (status_code = 201, description = "event recorded", body = WateringEvent),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant, plant, run or tank", body = ErrorBody),
        (status_code = 409, description = "STATE_CONFLICT: the tank holds less than the litres applied", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: one detail per invalid field", body = ErrorBody),
    ))]
pub async fn create_watering_event(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<Json<WateringEvent>, AppError> {
    let state = depot.app_state()?;
    let new: NewWateringEvent = read_json(req, state.config().max_body_bytes).await?;
    let who = actor(depot)?;
    let tenant = &depot.tenant_ctx()?.tenant;
    let event = service::record_event(&state, tenant, &new, &who, true).await?;
    res.status_code(StatusCode::CREATED);
    Ok(Json(event))
}

/// A plant's diagnostics in one read: its phase, last feedings, EC and pH series (input,
/// post-feed, runoff) over the last `days`, runoff trend, the plan targets against what was
/// measured, open warnings, its newest inspections, the safety intervals running, recent care,
/// and (unless `include_sensors=false`) the sensor snapshot.
///
/// `window` (days, from, to, `event_count`: the plant's events in the window, newest 500 at most);
/// `last_feedings` (the newest 10 of any age); `ec` and `ph` each with `input`, `post_feed` and
/// `runoff` series (`sample_count`, `first`, `latest`, `delta`, `direction`: rising or falling beyond
/// ±0.1, `stable` within, `unknown` under two samples; the newest 50 `samples`, oldest first);
/// `runoff_trend`; `plan_targets` (plan, `source` plant or run, phase, targets, pH range) and
/// `targets_vs_measured` (the newest fed EC `on_target` within max(0.1, 10 % of the target), else
/// `below`/`above`; pH `in_range`/`below`/`above`, bounds inclusive; `no_plan`, `no_target`,
/// `no_measurement`); `warnings`; the newest 5 `inspections` (the plant's location's included); the
/// safety intervals running today and `harvest_allowed_from` (null for an archived plant); the newest
/// 10 `care_events`; `sensors` unless `include_sensors=false`: `available: true` with `readings`
/// (the latest reading of each sensor at the plant's location or site, and the site's weather hour
/// nearest now, each with `origin`, `source`, `measured_at`, `metric`, `value`, `unit`), or
/// `available: false` with the `reason` when nothing measures the plant. The feeding part is one
/// read-only repeatable-read snapshot.
///
/// `days` 1–365 (default 14); `include_sensors` (default true) adds the `sensors` snapshot.
#[endpoint(tags("watering"), security(["bearer" = []]), operation_id = "get_plant_diagnostics",
    parameters(
        ("slug" = String, Path, description = "tenant slug"),
        ("plant_key" = String, Path, description = "plant key"),
        ("days" = Option<i64>, Query, minimum = 1, maximum = 365, description = "window in days (default 14)"),
        ("include_sensors" = Option<bool>, Query, description = "false leaves the sensor snapshot out (default true)"),
    ),
    responses(
        (status_code = 200, description = "the diagnostics", body = Diagnostics),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or plant", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: days out of range, include_sensors not true or false", body = ErrorBody),
    ))]
pub async fn get_plant_diagnostics(
    plant_key: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Diagnostics>, AppError> {
    let state = depot.app_state()?;
    let days = match req.queries().get("days") {
        None => WINDOW_DEFAULT_DAYS,
        Some(raw) => raw.trim().parse::<i64>().map_err(|_| {
            AppError::validation(vec![query_error("days", "must be a whole number")])
        })?,
    };
    let include_sensors = match req.queries().get("include_sensors").map(String::as_str) {
        None | Some("true") => true,
        Some("false") => false,
        Some(_) => {
            return Err(AppError::validation(vec![query_error(
                "include_sensors",
                "must be true or false",
            )]));
        }
    };
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::plant_diagnostics(&state, tenant, &plant_key, days, include_sensors).await?,
    ))
}
