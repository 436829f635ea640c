//! REST face of the diary under `/api/v1/t/{slug}/diary-entries`: entries (every member reads,
//! growers write; the author or an admin edits and deletes) and the analysis request the
//! author marks with consent (the agents' side of the queue is the tool server's).

use salvo::oapi::extract::PathParam;
use salvo::prelude::*;

use super::filter::filter_of;
use super::model::*;
use super::service::{self, Author, Editor, LIST_MAX_LIMIT, Marker};
use crate::auth::Role;
use crate::auth::principal::Credential;
use crate::directory::AccountType;
use crate::error::{AppError, ErrorBody};
use crate::http::depot::DepotExt;
use crate::http::json::read_json;
use crate::http::pagination::{Page, PageRequest};

pub fn router() -> Router {
    Router::with_path("diary-entries")
        .get(list_diary_entries)
        .post(create_diary_entry)
        .push(
            Router::with_path("{entry_key}")
                .get(get_diary_entry)
                .patch(update_diary_entry)
                .delete(delete_diary_entry)
                .push(
                    Router::with_path("analysis")
                        .get(get_diary_analysis)
                        .post(request_diary_analysis)
                        .delete(withdraw_diary_analysis),
                ),
        )
}

/// Reads the list filters; every bad one is its own detail.
fn filter_from(req: &Request) -> Result<EntryFilter, AppError> {
    filter_of(&|n: &str| req.queries().get(n).cloned())
}

fn editor(depot: &Depot) -> Result<Editor, AppError> {
    Ok(Editor {
        id: depot.principal()?.user_id,
        admin: depot.tenant_ctx()?.role == Role::Admin,
    })
}

/// Diary entries, newest first (entry date, then when written), with their titles. The text is
/// withheld from the list: read one entry for it.
///
/// Newest first, without the text; filters: plant, run, species, type, tag, analysis state and date
/// (no free-text search).
#[endpoint(tags("diary"), security(["bearer" = []]), operation_id = "list_diary_entries",
    parameters(
        ("slug" = String, Path, description = "tenant slug"),
        ("plant" = Option<Uuid>, Query, description = "entries about this plant"),
        ("run" = Option<Uuid>, Query, description = "entries about this planting run"),
        ("species" = Option<String>, Query, min_length = 1, max_length = 100, pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$", description = "entries about plants of this species (key)"),
        ("entry_type" = Option<String>, Query, pattern = "^(observation|measurement|care|problem|harvest|milestone|note)$", description = "observation, measurement, care, problem, harvest, milestone or note"),
        ("tag" = Option<String>, Query, min_length = 1, max_length = 50, pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$", description = "entries carrying this tag (case-insensitive)"),
        ("analysis_state" = Option<String>, Query, pattern = "^(requested|in_progress|completed|failed)$", description = "requested (also a lapsed lease), in_progress, completed or failed"),
        ("from" = Option<Date>, Query, description = "entry date on or after (YYYY-MM-DD)"),
        ("to" = Option<Date>, Query, description = "entry date on or before (YYYY-MM-DD), not before from"),
        ("skip" = Option<i64>, Query, minimum = 0, maximum = 100000, description = "items to skip (default 0)"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 100, description = "page size (default 100)"),
    ),
    responses(
        (status_code = 200, description = "one page of entries (without their text)", body = Page<EntrySummary>),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant, plant or run", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: a filter, skip or limit out of range; dates in the wrong order", body = ErrorBody),
    ))]
pub async fn list_diary_entries(
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Page<EntrySummary>>, AppError> {
    let state = depot.app_state()?;
    let page = PageRequest::from_request(req, LIST_MAX_LIMIT)?;
    let filter = filter_from(req)?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::list_entries(&state, tenant, &filter, page).await?,
    ))
}

/// One diary entry with its title (null when none), text, measurements, photos (`pending`:
/// photos whose renditions are not ready), the environment its plant lived in and analysis state.
///
/// With its text, `photos`, `pending` photos (`thumbnail_pending|unavailable`), `environment` (of
/// each sensor at the plant's location or site the latest reading in the hour up to the entry's
/// time, and the site's weather hour nearest it, each with `origin` `location|site|weather`,
/// `source`, `measured_at`, `metric`, `value`, `unit`, `sensor_key`; the entry's time is when it
/// was written, or noon UTC of its date when dated another day), `environment_status`
/// (`no_source`: no plant or nothing measures it; `unavailable`: nothing reported in the window;
/// null with readings) and `analysis_state`.
#[endpoint(tags("diary"), security(["bearer" = []]), operation_id = "get_diary_entry",
    parameters(("slug" = String, Path, description = "tenant slug")),
    responses(
        (status_code = 200, description = "the entry", body = Entry),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or entry", body = ErrorBody),
    ))]
pub async fn get_diary_entry(
    entry_key: PathParam<String>,
    depot: &mut Depot,
) -> Result<Json<Entry>, AppError> {
    let state = depot.app_state()?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(service::get_entry(&state, tenant, &entry_key).await?))
}

/// Write a diary entry about a plant, a planting run or (neither) the garden, with an optional
/// one-line `title` (up to 200 characters; blank means none). The caller is its author.
#[endpoint(tags("diary"), security(["bearer" = []]), operation_id = "create_diary_entry",
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = NewEntry,
    responses(
        (status_code = 201, description = "entry written", body = Entry),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant, plant or run", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: one detail per invalid field", body = ErrorBody),
    ))]
pub async fn create_diary_entry(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<Json<Entry>, AppError> {
    let state = depot.app_state()?;
    depot.tenant_ctx()?.require(Role::Grower)?;
    let new: EntryInput = read_json(req, state.config().max_body_bytes).await?;
    let principal = depot.principal()?;
    let author = Author {
        id: principal.user_id,
        kind: if principal.account_type == AccountType::Service {
            "service"
        } else {
            "user"
        },
        via: "rest",
    };
    let tenant = &depot.tenant_ctx()?.tenant;
    let created = service::create_entry(&state, tenant, &new, &author, true).await?;
    res.status_code(StatusCode::CREATED);
    Ok(Json(created))
}

/// Change an entry's title, text, type, tags, date or measurements (its author or an admin).
/// `title` null or blank removes the title; the other fields refuse null.
///
/// Only the author or an admin (another grower: 403). A patch may clear the title (null or blank)
/// and empty the measurements (`[]`/`{}`; null is refused); what an entry is about (plant, run)
/// does not change.
#[endpoint(tags("diary"), security(["bearer" = []]), operation_id = "update_diary_entry",
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = EntryPatchBody,
    responses(
        (status_code = 200, description = "the entry", body = Entry),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed; neither the author nor an admin", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or entry", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: one detail per invalid field", body = ErrorBody),
    ))]
pub async fn update_diary_entry(
    entry_key: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Entry>, AppError> {
    let state = depot.app_state()?;
    depot.tenant_ctx()?.require(Role::Grower)?;
    let patch: EntryPatch = read_json(req, state.config().max_body_bytes).await?;
    let editor = editor(depot)?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::update_entry(&state, tenant, &entry_key, &patch, &editor).await?,
    ))
}

/// Delete an entry with its photos and analysis (its author or an admin).
#[endpoint(tags("diary"), security(["bearer" = []]), operation_id = "delete_diary_entry",
    parameters(("slug" = String, Path, description = "tenant slug")),
    responses(
        (status_code = 204, description = "entry deleted"),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed; neither the author nor an admin", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or entry", body = ErrorBody),
    ))]
pub async fn delete_diary_entry(
    entry_key: PathParam<String>,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<(), AppError> {
    let state = depot.app_state()?;
    depot.tenant_ctx()?.require(Role::Grower)?;
    let editor = editor(depot)?;
    let tenant = &depot.tenant_ctx()?.tenant;
    service::delete_entry(&state, tenant, &entry_key, &editor).await?;
    res.status_code(StatusCode::NO_CONTENT);
    Ok(())
}

/// An entry's analysis: its state (null when never marked; `requested` also when an agent's
/// lease ran out), when and by whom it was requested, while a lease runs its expiry and the
/// `worker_id` the claiming agent named, and the result once an agent submitted it (`summary`,
/// `findings`, `recommended_actions`, `analyzed_photo_ids`, `model`, `recipe_version`, `error`
/// when it failed) with the server's disclaimer.
#[endpoint(tags("diary"), security(["bearer" = []]), operation_id = "get_diary_analysis",
    parameters(("slug" = String, Path, description = "tenant slug")),
    responses(
        (status_code = 200, description = "the analysis", body = Analysis),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or entry", body = ErrorBody),
    ))]
pub async fn get_diary_analysis(
    entry_key: PathParam<String>,
    depot: &mut Depot,
) -> Result<Json<Analysis>, AppError> {
    let state = depot.app_state()?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::get_analysis(&state, tenant, &entry_key).await?,
    ))
}

/// Mark an entry for analysis by an AI agent of the garden (it enters the work queue,
/// `requested`). Only the entry's author, signed in with a session (not an API key, not a
/// service account; not in light mode, where nobody signs in), with `consent: true`. Entries
/// written through the tool server are never queued (409). Marking an entry already requested
/// or in progress changes nothing; a completed or failed one is queued again (its result is
/// dropped).
///
/// Marking a `requested` or `in_progress` entry changes nothing; a `completed` or `failed` one is
/// queued again and its result dropped.
#[endpoint(tags("diary"), security(["bearer" = []]), operation_id = "request_diary_analysis",
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = AnalysisRequestBody,
    responses(
        (status_code = 200, description = "the analysis (requested or as it was)", body = Analysis),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed; not the author; not a signed-in person; light mode", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or entry", body = ErrorBody),
        (status_code = 409, description = "STATE_CONFLICT: the entry was written through the tool server", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: consent missing or not true", body = ErrorBody),
    ))]
pub async fn request_diary_analysis(
    entry_key: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Analysis>, AppError> {
    let state = depot.app_state()?;
    depot.tenant_ctx()?.require(Role::Grower)?;
    let _consent: AnalysisRequestBody = read_json(req, state.config().max_body_bytes).await?;
    let principal = depot.principal()?;
    let marker = Marker {
        id: principal.user_id,
        light: principal.is_light(),
        signed_in_person: principal.credential == Credential::AccessToken
            && principal.account_type == AccountType::User,
    };
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::request_analysis(&state, tenant, &entry_key, &marker).await?,
    ))
}

/// Withdraw the request (the author or an admin): the entry leaves the work queue, a lease in
/// progress ends (the agent's submit is refused), a stored result is deleted.
///
/// Author or admin; ends a lease and deletes a result; 409 when the entry is not marked.
#[endpoint(tags("diary"), security(["bearer" = []]), operation_id = "withdraw_diary_analysis",
    parameters(("slug" = String, Path, description = "tenant slug")),
    responses(
        (status_code = 204, description = "request withdrawn"),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed; neither the author nor an admin", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or entry", body = ErrorBody),
        (status_code = 409, description = "STATE_CONFLICT: the entry is not marked for analysis", body = ErrorBody),
    ))]
pub async fn withdraw_diary_analysis(
    entry_key: PathParam<String>,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<(), AppError> {
    let state = depot.app_state()?;
    depot.tenant_ctx()?.require(Role::Grower)?;
    let editor = editor(depot)?;
    let tenant = &depot.tenant_ctx()?.tenant;
    service::withdraw_analysis(&state, tenant, &entry_key, &editor).await?;
    res.status_code(StatusCode::NO_CONTENT);
    Ok(())
}
