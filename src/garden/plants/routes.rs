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
///
/// Filters: name, species, site, location, slot, phase, status, run and `archived` (`false`
/// default, `true`, `any`). The page is one statement (the filtered plants and their count, then
/// place, open phase row and run joined for the page's rows) plus one catalogue lookup for the
/// page's species names; only a page past the end adds a count
/// (`plants_list_is_one_query_per_page`). The tool `list_plants` answers `matched` and
/// `total_in_tenant`.
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
///
/// The answer: species `{key, scientific_name, common_name}` read from the catalogue at request
/// time, place, substrate (its own key, else its batch's), `planted_on`, `removed_on` (the archive
/// date), the phase (key, name, sequence, order, `cycle_number`, `started_at`, `day_count`,
/// `expected_duration_days`, `expected_remaining_days`, `is_terminal`, `allows_harvest`,
/// `next_phase_key`), its run and notes.
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
///
/// The name defaults to the species' common (else scientific) name. `planted_on` may not be in the
/// future or before 1900. The plant starts in the first phase of its sequence unless `phase_key`
/// names another phase of it (else 422) or is null (`never_initialised`). An acknowledge flag that
/// is not a boolean is 422; each acknowledgement is recorded as code, message, slot and time. A
/// substrate batch goes through the reuse rule (`assert_batch_usable`). The slot row is locked
/// until commit, so concurrent placements cannot overfill it (a full slot: 422 on `body.slot_key`).
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
///
/// Archiving an archived plant is 409 `STATE_CONFLICT`. The tool `archive_plant` defaults the
/// reason to `disposed`.
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
///
/// Allowed: `forward`; back to a phase marked recurring (`recurring`); from the last or terminal
/// phase of a repeating sequence to its `cycle_restart_entry_order` (default the first phase:
/// `cycle_restart`, cycle + 1); from `never_initialised` to any phase (`initial`), from
/// `between_cycles` to any (`new_cycle`, cycle + 1), from `unresolved` to any phase of the own
/// sequence (`correction`). Anything else (the same phase, backward, another sequence's phase, an
/// archived plant) is 422 `PHASE_TRANSITION_INVALID` on `body.target_phase_key` listing the
/// sequence's phases. `force: true` lets a backward move through (domain 2.11 (b), `forced`; the
/// cycle stays) and keeps a warning on the new history row ("forced backward transition from phase
/// order 2 to 1 …"; the tool returns it in `warnings`); the other refusals stay. Each transition
/// closes the open history row and opens one (`entered_at`, `exited_at`, `cycle_number`, `reason`
/// (default `manual`), `actor` = `user:<key>` or `mcp:<key>`). The plant row is locked first and
/// one open row per plant is unique: of two simultaneous transitions exactly one applies, the other
/// gets 422.
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
