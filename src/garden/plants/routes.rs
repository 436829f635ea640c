//! REST face of plants under `/api/v1/t/{slug}/plant-instances`: reads for every member,
//! writes for growers and admins.

use salvo::oapi::extract::PathParam;
use salvo::prelude::*;

use super::model::*;
use super::service::{self, HISTORY_MAX_LIMIT, LIST_MAX_LIMIT};
use crate::auth::Role;
use crate::error::{AppError, ErrorBody};
use crate::http::depot::{DepotExt, actor};
use crate::http::json::read_json;
use crate::http::pagination::{Page, PageRequest};

pub fn router() -> Router {
    Router::with_path("plant-instances")
        .get(list_plants)
        .post(create_plant)
        .push(Router::with_path("validate-planting").post(validate_planting))
        .push(
            Router::with_path("{plant_key}")
                .get(get_plant)
                .patch(update_plant)
                .push(Router::with_path("archive").post(archive_plant))
                .push(Router::with_path("location").post(set_plant_location))
                .push(Router::with_path("substrate").post(set_plant_substrate))
                .push(Router::with_path("phase").get(get_phase_status))
                .push(Router::with_path("phase-history").get(get_phase_history))
                .push(Router::with_path("phase-transitions").post(transition_phase)),
        )
}

/// List the garden's plants (oldest first). Archived plants only with `archived=true|any` or
/// an archive `status`. Every filter is checked as sent: a malformed one (an empty `slot=`
/// included) is a 422 naming `query.<filter>`; text filters are trimmed and blank means none.
#[endpoint(tags("plants"), security(["bearer" = []]), operation_id = "list_plants",
    parameters(
        ("slug" = String, Path, description = "tenant slug"),
        ("name" = Option<String>, Query, max_length = 100, pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$", description = "part of the plant name (case-insensitive)"),
        ("species" = Option<String>, Query, max_length = 100, pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$", description = "species key"),
        ("site" = Option<Uuid>, Query, description = "site key"),
        ("location" = Option<Uuid>, Query, description = "location key"),
        ("slot" = Option<Uuid>, Query, description = "slot key"),
        ("phase" = Option<String>, Query, max_length = 100, pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$", description = "current phase key"),
        ("status" = Option<PlantStatusFilter>, Query, description = "active, disposed, given_away or died"),
        ("archived" = Option<ArchivedFilter>, Query, description = "false (default; true when `status` names an archive reason), true or any"),
        ("run" = Option<Uuid>, Query, description = "planting run key"),
        ("skip" = Option<i64>, Query, minimum = 0, maximum = 100000, description = "items to skip (default 0)"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 200, description = "page size (default 100)"),
    ),
    responses(
        (status_code = 200, description = "one page of plants", body = Page<PlantSummary>),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: a filter, skip or limit out of range", body = ErrorBody),
    ))]
pub async fn list_plants(
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Page<PlantSummary>>, AppError> {
    let state = depot.app_state()?;
    let page = PageRequest::from_request(req, LIST_MAX_LIMIT)?;
    let filter = filter_from(|n| req.queries().get(n).cloned())?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::list_plants(&state, tenant, &filter, page).await?,
    ))
}

/// Get one plant with its species, place, substrate and phase state.
#[endpoint(tags("plants"), security(["bearer" = []]), operation_id = "get_plant",
    parameters(("slug" = String, Path, description = "tenant slug")),
    responses(
        (status_code = 200, description = "the plant", body = Plant),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or plant", body = ErrorBody),
    ))]
pub async fn get_plant(
    plant_key: PathParam<String>,
    depot: &mut Depot,
) -> Result<Json<Plant>, AppError> {
    let state = depot.app_state()?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(service::get_plant(&state, tenant, &plant_key).await?))
}

/// Preview the crop-rotation and companion checks of planting a species in a slot (or of
/// moving `plant_key` there): the rotation window (3 years, brassicas 4), every finding, each
/// companion conflict with its evidence (`established` needs `acknowledge_companions` on the
/// create or move, `traditional` only warns), the benefits, and which acknowledge flags a
/// create or move would need. A second plant of the same family placed this season in a slot
/// for several is co-planting, not a violation; a pot (`container` location) is exempt from
/// rotation. Writes nothing. A full slot or a slot of another location answers 422 as the
/// create would.
#[endpoint(tags("plants"), security(["bearer" = []]), operation_id = "validate_planting",
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = PlantingCheck,
    responses(
        (status_code = 200, description = "what the checks say", body = PlantingReview),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant, species, plant, location or slot", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR (one detail per field, a full slot, a slot of another location)", body = ErrorBody),
    ))]
pub async fn validate_planting(
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<PlantingReview>, AppError> {
    let state = depot.app_state()?;
    let body: PlantingCheck = read_json(req, state.config().max_body_bytes).await?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::validate_planting(&state, tenant, &body).await?,
    ))
}

/// Create a plant. A slot runs the crop-rotation and companion checks: the same family in the
/// slot within its window (3 years, brassicas 4; not for pots nor for co-planting this season
/// in a slot for several) answers 422 `ROTATION_VIOLATION`, an established incompatible
/// neighbour 422 `INCOMPATIBLE_COMPANION`, unless the body says `acknowledge_rotation` /
/// `acknowledge_companions` true: then the plant is created and the acknowledged conflicts
/// are recorded in `placement_acknowledgements`. Traditional (folklore) companion conflicts
/// never refuse: they come back in `placement_warnings`. Nothing is written on a refusal.
#[endpoint(tags("plants"), security(["bearer" = []]), operation_id = "create_plant",
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = PlantCreateBody,
    responses(
        (status_code = 201, description = "plant created", body = Plant),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant, species, cultivar, location, slot or batch", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR (one detail per field, a full slot, a slot of another location), ROTATION_VIOLATION, INCOMPATIBLE_COMPANION, SUBSTRATE_EXHAUSTED", body = ErrorBody),
    ))]
pub async fn create_plant(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<Json<Plant>, AppError> {
    let state = depot.app_state()?;
    let ctx = depot.tenant_ctx()?;
    ctx.require(Role::Grower)?;
    let new: PlantCreate = read_json(req, state.config().max_body_bytes).await?;
    let actor = actor(depot)?;
    let tenant = &depot.tenant_ctx()?.tenant;
    let plant = service::create_plant_acknowledged(
        &state,
        tenant,
        &new.plant,
        new.acknowledge,
        &actor,
        true,
    )
    .await?;
    res.status_code(StatusCode::CREATED);
    Ok(Json(plant))
}

/// Change name, cultivar, planting date or notes (omitted fields stay).
///
/// `cultivar_key`, `planted_on` and `notes` clear with null; `name` cannot be cleared (null is 422).
/// `planted_on` may not be in the future or before 1900.
#[endpoint(tags("plants"), security(["bearer" = []]), operation_id = "update_plant",
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = PlantPatchBody,
    responses(
        (status_code = 200, description = "the plant", body = Plant),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant, plant or cultivar", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: one detail per invalid field", body = ErrorBody),
    ))]
pub async fn update_plant(
    plant_key: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Plant>, AppError> {
    let state = depot.app_state()?;
    depot.tenant_ctx()?.require(Role::Grower)?;
    let patch: PlantPatch = read_json(req, state.config().max_body_bytes).await?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::update_plant(&state, tenant, &plant_key, &patch).await?,
    ))
}

/// Archive a plant (disposed, given away, died); it leaves default listings, never deleted.
#[endpoint(tags("plants"), security(["bearer" = []]), operation_id = "archive_plant",
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = ArchiveBody,
    responses(
        (status_code = 200, description = "the archived plant", body = Plant),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or plant", body = ErrorBody),
        (status_code = 409, description = "STATE_CONFLICT: archived already", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: unknown reason", body = ErrorBody),
    ))]
pub async fn archive_plant(
    plant_key: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Plant>, AppError> {
    let state = depot.app_state()?;
    depot.tenant_ctx()?.require(Role::Grower)?;
    let body: ArchiveBody = read_json(req, state.config().max_body_bytes).await?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::archive_plant(&state, tenant, &plant_key, body.reason, true).await?,
    ))
}

/// Move a plant to a location and optionally a slot, with the rotation and companion checks
/// of create (its own history does not count): `acknowledge_rotation` /
/// `acknowledge_companions` plant through a conflict that needs one and record it in
/// `placement_acknowledgements`; traditional conflicts come back in `placement_warnings`.
///
/// Body `{location_key?, slot_key?, site_key?}`: a slot alone names its location; `site_key` only
/// checks that the place is in that site. Moving an archived plant is 409 `STATE_CONFLICT`.
#[endpoint(tags("plants"), security(["bearer" = []]), operation_id = "set_plant_location",
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = LocationBody,
    responses(
        (status_code = 200, description = "the plant in its new place", body = Plant),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant, plant, site, location or slot", body = ErrorBody),
        (status_code = 409, description = "STATE_CONFLICT: the plant is archived", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR (full slot, slot or location elsewhere), ROTATION_VIOLATION, INCOMPATIBLE_COMPANION", body = ErrorBody),
    ))]
pub async fn set_plant_location(
    plant_key: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Plant>, AppError> {
    let state = depot.app_state()?;
    depot.tenant_ctx()?.require(Role::Grower)?;
    let body: LocationBody = read_json(req, state.config().max_body_bytes).await?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::set_location(&state, tenant, &plant_key, &body, true).await?,
    ))
}

/// Set the substrate batch (or substrate) a plant grows in.
///
/// Body `{substrate_batch_key?, substrate_key?}`, at least one: a batch of this garden (it goes
/// through the reuse rule: 422 `SUBSTRATE_EXHAUSTED`), and a substrate key `tenant:<uuid>` or a
/// catalogue key.
#[endpoint(tags("plants"), security(["bearer" = []]), operation_id = "set_plant_substrate",
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = SubstrateBody,
    responses(
        (status_code = 200, description = "the plant", body = Plant),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant, plant, batch or substrate", body = ErrorBody),
        (status_code = 409, description = "STATE_CONFLICT: the plant is archived", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR, SUBSTRATE_EXHAUSTED", body = ErrorBody),
    ))]
pub async fn set_plant_substrate(
    plant_key: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Plant>, AppError> {
    let state = depot.app_state()?;
    depot.tenant_ctx()?.require(Role::Grower)?;
    let body: SubstrateBody = read_json(req, state.config().max_body_bytes).await?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::set_substrate(&state, tenant, &plant_key, &body, true).await?,
    ))
}

/// The plant's phase state, current phase with day count and expected remaining days, and
/// the phases it may move to now.
#[endpoint(tags("plants"), security(["bearer" = []]), operation_id = "get_plant_phase_status",
    parameters(("slug" = String, Path, description = "tenant slug")),
    responses(
        (status_code = 200, description = "the phase status", body = PhaseStatus),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or plant", body = ErrorBody),
    ))]
pub async fn get_phase_status(
    plant_key: PathParam<String>,
    depot: &mut Depot,
) -> Result<Json<PhaseStatus>, AppError> {
    let state = depot.app_state()?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::phase_status(&state, tenant, &plant_key).await?,
    ))
}

/// The plant's phase history, oldest first, with who made each change.
#[endpoint(tags("plants"), security(["bearer" = []]), operation_id = "get_plant_phase_history",
    parameters(
        ("slug" = String, Path, description = "tenant slug"),
        ("skip" = Option<i64>, Query, minimum = 0, maximum = 100000, description = "items to skip (default 0)"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 200, description = "page size (default 100)"),
    ),
    responses(
        (status_code = 200, description = "one page of history", body = Page<PhaseHistoryEntry>),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or plant", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: skip or limit out of range", body = ErrorBody),
    ))]
pub async fn get_phase_history(
    plant_key: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Page<PhaseHistoryEntry>>, AppError> {
    let state = depot.app_state()?;
    let page = PageRequest::from_request(req, HISTORY_MAX_LIMIT)?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::phase_history(&state, tenant, &plant_key, page).await?,
    ))
}

/// Move the plant to another phase of its species' sequence: forward, back to a recurring
/// phase, or the cycle restart of a repeating sequence. Any other backward move needs
/// `force: true` and leaves a warning in the phase history.
#[endpoint(tags("plants"), security(["bearer" = []]), operation_id = "transition_plant_phase",
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = TransitionBody,
    responses(
        (status_code = 200, description = "the plant in its new phase", body = Plant),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or plant", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "PHASE_TRANSITION_INVALID (backward without force, same phase, not in the sequence, archived), VALIDATION_ERROR", body = ErrorBody),
    ))]
pub async fn transition_phase(
    plant_key: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Plant>, AppError> {
    let state = depot.app_state()?;
    depot.tenant_ctx()?.require(Role::Grower)?;
    let body: TransitionBody = read_json(req, state.config().max_body_bytes).await?;
    let actor = actor(depot)?;
    let tenant = &depot.tenant_ctx()?.tenant;
    let done = service::transition(&state, tenant, &plant_key, &body, &actor, true).await?;
    Ok(Json(done.plant))
}
