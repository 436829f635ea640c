//! REST face of sites under `/api/v1/t/{slug}/sites`.

use salvo::oapi::extract::PathParam;
use salvo::prelude::*;

use super::model::{NewSite, Site, SitePatch, SitePatchBody};
use super::service::{self, LIST_MAX_LIMIT};
use crate::error::{AppError, ErrorBody};
use crate::http::depot::DepotExt;
use crate::http::json::read_json;
use crate::http::pagination::{Page, PageRequest};
use crate::http::roles::{Admin, Requires};

pub fn router() -> Router {
    Router::with_path("sites")
        .get(list_sites)
        .post(create_site)
        .push(
            Router::with_path("{site_key}")
                .get(get_site)
                .patch(update_site)
                .delete(delete_site),
        )
}

/// List the garden's sites, oldest first.
#[endpoint(tags("sites"), security(["bearer" = []]), operation_id = "list_sites",
    parameters(
        ("slug" = String, Path, description = "tenant slug"),
        ("skip" = Option<i64>, Query, minimum = 0, maximum = 100000, description = "items to skip (default 0)"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 200, description = "page size (default 100)"),
    ),
    responses(
        (status_code = 200, description = "one page of sites", body = Page<Site>),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: skip or limit out of range", body = ErrorBody),
    ))]
pub async fn list_sites(
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Page<Site>>, AppError> {
    let state = depot.app_state()?;
    let page = PageRequest::from_request(req, LIST_MAX_LIMIT)?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(service::list_sites(&state, tenant, page).await?))
}

/// Get one site.
#[endpoint(tags("sites"), security(["bearer" = []]), operation_id = "get_site",
    parameters(("slug" = String, Path, description = "tenant slug")),
    responses(
        (status_code = 200, description = "the site", body = Site),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or site", body = ErrorBody),
    ))]
pub async fn get_site(
    site_key: PathParam<String>,
    depot: &mut Depot,
) -> Result<Json<Site>, AppError> {
    let state = depot.app_state()?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(service::get_site(&state, tenant, &site_key).await?))
}

/// Create a site.
#[endpoint(tags("sites"), security(["bearer" = []]), operation_id = "create_site",
    status_codes(201, 400, 401, 403, 404, 409, 413, 415, 422, 500),
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = NewSite,
    responses(
        (status_code = 201, description = "site created", body = Site),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: admin role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant", body = ErrorBody),
        (status_code = 409, description = "DUPLICATE_ENTRY: a site of that name exists", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: one detail per invalid field", body = ErrorBody),
    ))]
pub async fn create_site(
    _role: Requires<Admin>,
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<Json<Site>, AppError> {
    let state = depot.app_state()?;
    // Sites are the garden's setup: admins only (`Requires<Admin>`; growers write plants, runs
    // and tasks).
    let new: NewSite = read_json(req, state.config().max_body_bytes).await?;
    let tenant = &depot.tenant_ctx()?.tenant;
    let site = service::create_site(&state, tenant, &new).await?;
    res.status_code(StatusCode::CREATED);
    Ok(Json(site))
}

/// Change a site's name, kind or description (admin).
///
/// Body `{name?, kind?, description?, climate_zone?, latitude?, longitude?}`: null or blank clears
/// the description, null clears the zone (a USDA zone 1a–13b, which the site's sowing calendar
/// uses); the coordinates change together (both null clears them).
#[endpoint(tags("sites"), security(["bearer" = []]), operation_id = "update_site",
    status_codes(200, 400, 401, 403, 404, 409, 413, 415, 422, 500),
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = SitePatchBody,
    responses(
        (status_code = 200, description = "the updated site", body = Site),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: admin role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or site", body = ErrorBody),
        (status_code = 409, description = "DUPLICATE_ENTRY: a site of that name exists", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: one detail per invalid field", body = ErrorBody),
    ))]
pub async fn update_site(
    _role: Requires<Admin>,
    site_key: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Site>, AppError> {
    let state = depot.app_state()?;
    let patch: SitePatch = read_json(req, state.config().max_body_bytes).await?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::patch_site(&state, tenant, &site_key, &patch).await?,
    ))
}

/// Delete an empty site (admin); refused while locations stand in it.
#[endpoint(tags("sites"), security(["bearer" = []]), operation_id = "delete_site",
    status_codes(204, 401, 403, 404, 409, 500),
    parameters(("slug" = String, Path, description = "tenant slug")),
    responses(
        (status_code = 204, description = "site deleted"),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: admin role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or site", body = ErrorBody),
        (status_code = 409, description = "STATE_CONFLICT: locations (and so plants) stand in the site", body = ErrorBody),
    ))]
pub async fn delete_site(
    _role: Requires<Admin>,
    site_key: PathParam<String>,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<(), AppError> {
    let state = depot.app_state()?;
    let ctx = depot.tenant_ctx()?;
    service::delete_site(&state, &ctx.tenant, &site_key).await?;
    res.status_code(StatusCode::NO_CONTENT);
    Ok(())
}
