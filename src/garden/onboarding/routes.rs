//! REST face of onboarding under `/api/v1/t/{slug}/onboarding`.

use salvo::prelude::*;

use super::model::{Applied, ApplyKit, ApplyKitBody, Status};
use super::service;
use crate::error::{AppError, ErrorBody};
use crate::http::depot::DepotExt;
use crate::http::depot::actor;
use crate::http::json::read_json;
use crate::http::roles::{Admin, Requires};

pub fn router() -> Router {
    Router::with_path("onboarding")
        .get(onboarding_status)
        .push(Router::with_path("starter-kit").post(apply_starter_kit))
}

/// Which first steps the garden has done (zone, starter kit, site, plants, your calendar feed).
///
/// Steps: `hardiness_zone`, `starter_kit`, `site`, `plants`, `calendar_feed` (yours).
#[endpoint(tags("onboarding"), security(["bearer" = []]), operation_id = "get_onboarding_status",
    parameters(("slug" = String, Path, description = "tenant slug")),
    responses(
        (status_code = 200, description = "the steps", body = Status),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant", body = ErrorBody),
    ))]
pub async fn onboarding_status(depot: &mut Depot) -> Result<Json<Status>, AppError> {
    let state = depot.app_state()?;
    let user = depot.principal()?.user_id;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(service::status(&state, tenant, user).await?))
}

/// Apply a starter kit (admin: it sets the garden up): a site, one location and one plant per
/// species of the kit, in one transaction. A garden takes one kit: a second apply is 409.
///
/// Body `{"kit_key", "site_name"?, "hardiness_zone"?}`: the site takes the kit's site type and is
/// named after the kit unless `site_name` is given. A site of that name is 409 `DUPLICATE_ENTRY`,
/// an unknown kit 404; a placement rule's refusal leaves nothing behind.
#[endpoint(tags("onboarding"), security(["bearer" = []]), operation_id = "apply_starter_kit",
    status_codes(201, 400, 401, 403, 404, 409, 413, 415, 422),
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = ApplyKitBody,
    responses(
        (status_code = 201, description = "what the kit created", body = Applied),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: admin role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or starter kit", body = ErrorBody),
        (status_code = 409, description = "STATE_CONFLICT: a kit was applied already; DUPLICATE_ENTRY: a site of that name exists", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: one detail per invalid field; or a placement rule of the kit's plants", body = ErrorBody),
    ))]
pub async fn apply_starter_kit(
    _role: Requires<Admin>,
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<Json<Applied>, AppError> {
    let state = depot.app_state()?;
    let body: ApplyKit = read_json(req, state.config().max_body_bytes).await?;
    let who = actor(depot)?;
    let tenant = &depot.tenant_ctx()?.tenant;
    let applied = service::apply_kit(&state, tenant, &body, &who).await?;
    res.status_code(StatusCode::CREATED);
    Ok(Json(applied))
}
