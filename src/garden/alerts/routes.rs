//! REST face of alerts: `GET /api/v1/t/{slug}/alerts`.

use salvo::prelude::*;

use super::model::Alert;
use super::service::{self, LIST_MAX_LIMIT};
use crate::error::{AppError, ErrorBody};
use crate::http::depot::DepotExt;
use crate::http::pagination::{Page, PageRequest};

pub fn router() -> Router {
    Router::with_path("alerts").get(list_alerts)
}

/// List the garden's alerts: the open ones first (newest first), then those resolved in the
/// last 30 days.
///
/// Kinds: `out_of_range` (a sensor's readings outside the range of a plant's current phase
/// continuously for `ALERT_AFTER_MINUTES`, default 15: EC and pH against the plant's nutrient
/// plan entry, the air VPD of a temperature and a humidity sensor at the same place against the
/// phase's VPD range), `sensor_silent` (no reading for three times the sensor's
/// `expected_interval_minutes`), `frost`. Each names what it concerns (plant, sensor and the
/// sensor's place), the `reading` that opened it, the `range` it broke with the range's
/// `source`, and `opened_at` / `resolved_at`. A background scan (every `ALERT_SCAN_SECONDS`)
/// opens them, at most one open per cause, and resolves them when the cause ends. Members read.
#[endpoint(tags("alerts"), security(["bearer" = []]), operation_id = "list_alerts",
    parameters(
        ("slug" = String, Path, description = "tenant slug"),
        ("state" = Option<String>, Query, pattern = "^(open|resolved)$", description = "open or resolved (default both)"),
        ("kind" = Option<String>, Query, pattern = "^(out_of_range|sensor_silent|frost)$", description = "out_of_range, sensor_silent or frost"),
        ("skip" = Option<i64>, Query, minimum = 0, maximum = 100000, description = "items to skip (default 0)"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 200, description = "page size (default 100)"),
    ),
    responses(
        (status_code = 200, description = "one page of alerts", body = Page<Alert>),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: state, kind, skip or limit out of range", body = ErrorBody),
    ))]
pub async fn list_alerts(
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Page<Alert>>, AppError> {
    let state = depot.app_state()?;
    let q = |n: &str| req.queries().get(n).cloned();
    let filter = service::parse_filter(q("state").as_deref(), q("kind").as_deref())?;
    let page = PageRequest::from_request(req, LIST_MAX_LIMIT)?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::list_alerts(&state, tenant, filter, page).await?,
    ))
}
