//! REST face of `/hardiness-zones` (read-only; curated texts come from the seed).

use salvo::oapi::extract::PathParam;
use salvo::prelude::*;

use super::model::HardinessZone;
use super::service::zones;
use crate::error::{AppError, ErrorBody};
use crate::http::depot::DepotExt;
use crate::http::pagination::{Page, PageRequest};
use crate::rules::zones::Zone;

pub fn router() -> Router {
    Router::with_path("hardiness-zones")
        .hoop(crate::http::caller::require_caller)
        .get(list_hardiness_zones)
        .push(Router::with_path("{zone}").get(get_hardiness_zone))
}

/// All 26 zones, coldest first, with computed limits (°F and °C).
#[endpoint(tags("hardiness zones"), security(["bearer" = []]), operation_id = "list_hardiness_zones",
    parameters(
        ("skip" = Option<i64>, Query, minimum = 0, maximum = 100000, description = "items to skip (default 0)"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 26, description = "page size (default 26)"),
    ),
    responses(
        (status_code = 200, description = "the zones", body = Page<HardinessZone>),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: skip or limit out of range", body = ErrorBody),
    ))]
pub async fn list_hardiness_zones(
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Page<HardinessZone>>, AppError> {
    let state = depot.app_state()?;
    let page = PageRequest::from_request(req, 26)?;
    let all = zones(&state).await?;
    let total = all.len() as i64;
    let items = all
        .into_iter()
        .skip(page.skip as usize)
        .take(page.limit as usize)
        .collect();
    Ok(Json(Page::new(items, total, page)))
}

/// One zone such as `7a`.
#[endpoint(tags("hardiness zones"), security(["bearer" = []]), operation_id = "get_hardiness_zone",
    responses(
        (status_code = 200, description = "the zone", body = HardinessZone),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: not a zone 1a–13b", body = ErrorBody),
    ))]
pub async fn get_hardiness_zone(
    zone: PathParam<String>,
    depot: &mut Depot,
) -> Result<Json<HardinessZone>, AppError> {
    let state = depot.app_state()?;
    let z = Zone::parse(&zone).ok_or_else(|| AppError::not_found("hardiness zone"))?;
    let all = zones(&state).await?;
    all.into_iter()
        .nth(usize::from(z.index()))
        .map(Json)
        .ok_or_else(|| AppError::not_found("hardiness zone"))
}
