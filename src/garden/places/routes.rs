//! REST face of locations (`/api/v1/t/{slug}/locations`) and slots (`/api/v1/t/{slug}/slots`).
//! Reads for every member; writes are the garden's setup and need the admin role.

use salvo::oapi::extract::PathParam;
use salvo::prelude::*;
use uuid::Uuid;

use super::model::{
    Location, LocationCreateBody, LocationDetail, LocationPatch, LocationPatchBody, Neighbours,
    NewLocation, NewSlot, Slot, SlotBatch, SlotCreateBody, SlotPatch, SlotPatchBody,
};
use super::repo::LocationFilter;
use super::service::{self, LIST_MAX_LIMIT};
use crate::error::{AppError, ErrorBody, ErrorDetail};
use crate::http::depot::DepotExt;
use crate::http::json::read_json;
use crate::http::pagination::{Page, PageRequest};
use crate::http::roles::{Admin, Requires};

pub fn locations_router() -> Router {
    Router::with_path("locations")
        .get(list_locations)
        .post(create_location)
        .push(
            Router::with_path("{location_key}")
                .get(get_location)
                .patch(update_location)
                .delete(delete_location),
        )
}

pub fn slots_router() -> Router {
    Router::with_path("slots")
        .get(list_slots)
        .post(create_slot)
        .push(
            Router::with_path("{slot_key}")
                .get(get_slot)
                .patch(update_slot)
                .delete(delete_slot)
                .push(Router::with_path("neighbours").put(set_neighbours))
                .push(Router::with_path("substrate-batch").put(set_slot_batch)),
        )
}

/// An optional UUID query parameter; anything else is a 422 on `query.<name>`.
pub fn query_key(req: &Request, name: &str) -> Result<Option<Uuid>, AppError> {
    match req.queries().get(name) {
        None => Ok(None),
        Some(raw) => Uuid::parse_str(raw.trim()).map(Some).map_err(|_| {
            AppError::validation(vec![ErrorDetail::new(
                format!("query.{name}"),
                "must be a record key (UUID)",
                "value_error",
            )])
        }),
    }
}

/// Both the paging and the filter errors in one 422.
fn page_and_keys(
    req: &Request,
    names: &[&str],
) -> Result<(PageRequest, Vec<Option<Uuid>>), AppError> {
    let mut details = Vec::new();
    let page = PageRequest::from_request(req, LIST_MAX_LIMIT)
        .map_err(|e| details.extend(e.details().iter().cloned()))
        .ok();
    let mut keys = Vec::new();
    for name in names {
        match query_key(req, name) {
            Ok(k) => keys.push(k),
            Err(e) => details.extend(e.details().iter().cloned()),
        }
    }
    match page {
        Some(page) if details.is_empty() => Ok((page, keys)),
        _ => Err(AppError::validation(details)),
    }
}

/// List the garden's locations, oldest first; filter by site and by parent location.
#[endpoint(tags("locations"), security(["bearer" = []]), operation_id = "list_locations",
    parameters(
        ("slug" = String, Path, description = "tenant slug"),
        ("site_key" = Option<String>, Query, format = Uuid, description = "only locations of this site"),
        ("parent_key" = Option<String>, Query, format = Uuid, description = "only locations directly below this location"),
        ("skip" = Option<i64>, Query, minimum = 0, maximum = 100000, description = "items to skip (default 0)"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 200, description = "page size (default 100)"),
    ),
    responses(
        (status_code = 200, description = "one page of locations", body = Page<Location>),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: skip, limit or a key out of range", body = ErrorBody),
    ))]
pub async fn list_locations(
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Page<Location>>, AppError> {
    let state = depot.app_state()?;
    let (page, keys) = page_and_keys(req, &["site_key", "parent_key"])?;
    let filter = LocationFilter {
        site: keys.first().copied().flatten(),
        parent: keys.get(1).copied().flatten(),
    };
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::list_locations(&state, tenant, filter, page).await?,
    ))
}

/// Get one location with its child locations and its slots.
#[endpoint(tags("locations"), security(["bearer" = []]), operation_id = "get_location",
    parameters(("slug" = String, Path, description = "tenant slug")),
    responses(
        (status_code = 200, description = "the location", body = LocationDetail),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or location", body = ErrorBody),
    ))]
pub async fn get_location(
    location_key: PathParam<String>,
    depot: &mut Depot,
) -> Result<Json<LocationDetail>, AppError> {
    let state = depot.app_state()?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::get_location(&state, tenant, &location_key).await?,
    ))
}

/// Create a location in a site, optionally below another location of that site (admin).
#[endpoint(tags("locations"), security(["bearer" = []]), operation_id = "create_location",
    status_codes(201, 400, 401, 403, 404, 409, 413, 415, 422, 500),
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = LocationCreateBody,
    responses(
        (status_code = 201, description = "location created", body = LocationDetail),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: admin role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant, site or parent location", body = ErrorBody),
        (status_code = 409, description = "DUPLICATE_ENTRY: a location of that name exists in the site", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: one detail per invalid field; body.parent_key when the parent is in another site", body = ErrorBody),
    ))]
pub async fn create_location(
    _role: Requires<Admin>,
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<Json<LocationDetail>, AppError> {
    let state = depot.app_state()?;
    let new: NewLocation = read_json(req, state.config().max_body_bytes).await?;
    let tenant = &depot.tenant_ctx()?.tenant;
    let created = service::create_location(&state, tenant, &new).await?;
    res.status_code(StatusCode::CREATED);
    Ok(Json(created))
}

/// Change a location; `site_key` / `parent_key` move it with its whole subtree (admin).
///
/// Body `{name?, kind?, description?, site_key?, parent_key?, frost_exposed?, climate_zone?,
/// light_situation?, area_sqm?}`: null clears a condition. Moving to another site without
/// `parent_key` puts the location directly under that site.
#[endpoint(tags("locations"), security(["bearer" = []]), operation_id = "update_location",
    status_codes(200, 400, 401, 403, 404, 409, 413, 415, 422, 500),
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = LocationPatchBody,
    responses(
        (status_code = 200, description = "the updated location", body = LocationDetail),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: admin role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant, location, site or parent", body = ErrorBody),
        (status_code = 409, description = "DUPLICATE_ENTRY: the name is taken in the target site; STATE_CONFLICT: slots have neighbours outside the moved subtree", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: one detail per invalid field; body.parent_key for a cycle or a parent in another site", body = ErrorBody),
    ))]
pub async fn update_location(
    _role: Requires<Admin>,
    location_key: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<LocationDetail>, AppError> {
    let state = depot.app_state()?;
    let patch: LocationPatch = read_json(req, state.config().max_body_bytes).await?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::patch_location(&state, tenant, &location_key, &patch).await?,
    ))
}

/// Delete a location and its empty slots (admin); refused while sub-locations or plants stand
/// in it.
#[endpoint(tags("locations"), security(["bearer" = []]), operation_id = "delete_location",
    status_codes(204, 401, 403, 404, 409, 500),
    parameters(("slug" = String, Path, description = "tenant slug")),
    responses(
        (status_code = 204, description = "location deleted"),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: admin role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or location", body = ErrorBody),
        (status_code = 409, description = "STATE_CONFLICT: sub-locations, live plants, or archived plants' history stand in it", body = ErrorBody),
    ))]
pub async fn delete_location(
    _role: Requires<Admin>,
    location_key: PathParam<String>,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<(), AppError> {
    let state = depot.app_state()?;
    let ctx = depot.tenant_ctx()?;
    service::delete_location(&state, &ctx.tenant, &location_key).await?;
    res.status_code(StatusCode::NO_CONTENT);
    Ok(())
}

/// List slots in position order; filter by location.
#[endpoint(tags("slots"), security(["bearer" = []]), operation_id = "list_slots",
    parameters(
        ("slug" = String, Path, description = "tenant slug"),
        ("location_key" = Option<String>, Query, format = Uuid, description = "only slots of this location"),
        ("skip" = Option<i64>, Query, minimum = 0, maximum = 100000, description = "items to skip (default 0)"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 200, description = "page size (default 100)"),
    ),
    responses(
        (status_code = 200, description = "one page of slots", body = Page<Slot>),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: skip, limit or a key out of range", body = ErrorBody),
    ))]
pub async fn list_slots(
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Page<Slot>>, AppError> {
    let state = depot.app_state()?;
    let (page, keys) = page_and_keys(req, &["location_key"])?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::list_slots(&state, tenant, keys.first().copied().flatten(), page).await?,
    ))
}

/// Get one slot with its live plant count and neighbours.
#[endpoint(tags("slots"), security(["bearer" = []]), operation_id = "get_slot",
    parameters(("slug" = String, Path, description = "tenant slug")),
    responses(
        (status_code = 200, description = "the slot", body = Slot),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or slot", body = ErrorBody),
    ))]
pub async fn get_slot(
    slot_key: PathParam<String>,
    depot: &mut Depot,
) -> Result<Json<Slot>, AppError> {
    let state = depot.app_state()?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(service::get_slot(&state, tenant, &slot_key).await?))
}

/// Create a slot in a location (admin).
#[endpoint(tags("slots"), security(["bearer" = []]), operation_id = "create_slot",
    status_codes(201, 400, 401, 403, 404, 409, 413, 415, 422, 500),
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = SlotCreateBody,
    responses(
        (status_code = 201, description = "slot created", body = Slot),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: admin role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or location", body = ErrorBody),
        (status_code = 409, description = "DUPLICATE_ENTRY: a slot with that code exists", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: one detail per invalid field (code pattern, capacity 1-20)", body = ErrorBody),
    ))]
pub async fn create_slot(
    _role: Requires<Admin>,
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<Json<Slot>, AppError> {
    let state = depot.app_state()?;
    let new: NewSlot = read_json(req, state.config().max_body_bytes).await?;
    let tenant = &depot.tenant_ctx()?.tenant;
    let slot = service::create_slot(&state, tenant, &new).await?;
    res.status_code(StatusCode::CREATED);
    Ok(Json(slot))
}

/// Change a slot's code, capacity or position (admin).
#[endpoint(tags("slots"), security(["bearer" = []]), operation_id = "update_slot",
    status_codes(200, 400, 401, 403, 404, 409, 413, 415, 422, 500),
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = SlotPatchBody,
    responses(
        (status_code = 200, description = "the updated slot", body = Slot),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: admin role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or slot", body = ErrorBody),
        (status_code = 409, description = "DUPLICATE_ENTRY: a slot with that code exists", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: one detail per invalid field; body.capacity below the live plants", body = ErrorBody),
    ))]
pub async fn update_slot(
    _role: Requires<Admin>,
    slot_key: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Slot>, AppError> {
    let state = depot.app_state()?;
    let patch: SlotPatch = read_json(req, state.config().max_body_bytes).await?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::patch_slot(&state, tenant, &slot_key, &patch).await?,
    ))
}

/// Delete an empty slot (admin).
#[endpoint(tags("slots"), security(["bearer" = []]), operation_id = "delete_slot",
    status_codes(204, 401, 403, 404, 409, 500),
    parameters(("slug" = String, Path, description = "tenant slug")),
    responses(
        (status_code = 204, description = "slot deleted"),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: admin role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or slot", body = ErrorBody),
        (status_code = 409, description = "STATE_CONFLICT: the slot is occupied or holds archived plants' history", body = ErrorBody),
    ))]
pub async fn delete_slot(
    _role: Requires<Admin>,
    slot_key: PathParam<String>,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<(), AppError> {
    let state = depot.app_state()?;
    let ctx = depot.tenant_ctx()?;
    service::delete_slot(&state, &ctx.tenant, &slot_key).await?;
    res.status_code(StatusCode::NO_CONTENT);
    Ok(())
}

/// Replace the slot's neighbours (symmetric adjacency within one site) (admin).
///
/// At most 50 neighbours; adjacency is symmetric and stays within one site.
#[endpoint(tags("slots"), security(["bearer" = []]), operation_id = "set_slot_neighbours",
    status_codes(200, 400, 401, 403, 404, 413, 415, 422, 500),
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = Neighbours,
    responses(
        (status_code = 200, description = "the slot with its new neighbours", body = Slot),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: admin role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant, slot or neighbour slot", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: body.neighbour_keys names the slot itself or a slot of another site", body = ErrorBody),
    ))]
pub async fn set_neighbours(
    _role: Requires<Admin>,
    slot_key: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Slot>, AppError> {
    let state = depot.app_state()?;
    let body: Neighbours = read_json(req, state.config().max_body_bytes).await?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::set_neighbours(&state, tenant, &slot_key, &body).await?,
    ))
}

/// Fill the slot with a substrate batch, or empty it with `{"batch_key": null}` (grower). The
/// batch must be usable (domain 2.4 reuse rule).
///
/// The batch shows as `substrate_batch_key` on the slot, in lists, in the location's `slots` and in
/// the tool `get_location`. It counts no cycle; a slot may be deleted while it holds a batch.
#[endpoint(tags("slots"), security(["bearer" = []]), operation_id = "set_slot_substrate_batch",
    status_codes(200, 400, 401, 403, 404, 413, 415, 422, 500),
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = SlotBatch,
    responses(
        (status_code = 200, description = "the slot with its batch", body = Slot),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant, slot or substrate batch", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: body.batch_key missing or not a key; SUBSTRATE_EXHAUSTED: the batch is past its reuse limit", body = ErrorBody),
    ))]
pub async fn set_slot_batch(
    slot_key: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Slot>, AppError> {
    let state = depot.app_state()?;
    let body: SlotBatch = read_json(req, state.config().max_body_bytes).await?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::set_slot_batch(&state, tenant, &slot_key, &body).await?,
    ))
}
