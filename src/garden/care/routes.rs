//! REST face of care reminders under `/api/v1/t/{slug}/care-reminders`.

use salvo::oapi::extract::PathParam;
use salvo::prelude::*;

use super::model::*;
use super::service::{self, CareAction, LOG_MAX_LIMIT, Target};
use crate::auth::Role;
use crate::error::{AppError, ErrorBody, ErrorDetail};
use crate::http::depot::DepotExt;
use crate::http::depot::actor;
use crate::http::json::read_json;
use crate::http::pagination::PageRequest;

pub fn router() -> Router {
    Router::with_path("care-reminders")
        .get(list_due_care_reminders)
        .push(
            Router::with_path("plants/{plant_key}")
                .get(get_plant_care)
                .push(Router::with_path("log").get(get_plant_care_log)),
        )
        .push(
            Router::with_path("{reminder_key}")
                .push(Router::with_path("confirm").post(confirm_care_reminder))
                .push(Router::with_path("snooze").post(snooze_care_reminder)),
        )
}

/// Due care reminders of the garden's live plants, grouped by urgency (overdue, due_today,
/// upcoming = 1–2 days, not_due). Plants without a care profile get one first.
///
/// Each group is paged on its own (`skip` within each group), the most overdue first; `counts`
/// gives how many each asked group holds and `total` their sum, over all pages; every bucket asked
/// for is present, even when empty. The tool `get_due_care_tasks` pages the same way and its
/// summary says when a page is not the whole answer.
#[endpoint(tags("care-reminders"), security(["bearer" = []]), operation_id = "list_due_care_reminders",
    parameters(
        ("slug" = String, Path, description = "tenant slug"),
        ("urgency" = Option<String>, Query, pattern = "^(actionable|all|overdue|due_today|upcoming|not_due)$", description = "actionable (default: overdue and due today), all, or one bucket"),
        ("skip" = Option<i64>, Query, minimum = 0, maximum = 100000, description = "reminders to skip at the start of each group (default 0)"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 500, description = "most reminders per group (default 100)"),
    ),
    responses(
        (status_code = 200, description = "reminders grouped by urgency, each group paged; counts over all pages", body = DueReminders),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: unknown urgency, skip or limit out of range", body = ErrorBody),
    ))]
pub async fn list_due_care_reminders(
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<DueReminders>, AppError> {
    let state = depot.app_state()?;
    let urgency = req
        .queries()
        .get("urgency")
        .cloned()
        .unwrap_or_else(|| "actionable".to_owned());
    let page = PageRequest::from_request(req, service::DUE_MAX_LIMIT)?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::due_reminders(&state, tenant, &urgency, "query.urgency", page).await?,
    ))
}

/// A plant's care profile (derived from its species and family) and its reminders.
#[endpoint(tags("care-reminders"), security(["bearer" = []]), operation_id = "get_plant_care",
    parameters(("slug" = String, Path, description = "tenant slug")),
    responses(
        (status_code = 200, description = "profile and reminders", body = PlantCare),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or plant", body = ErrorBody),
    ))]
pub async fn get_plant_care(
    plant_key: PathParam<String>,
    depot: &mut Depot,
) -> Result<Json<PlantCare>, AppError> {
    let state = depot.app_state()?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(service::plant_care(&state, tenant, &plant_key).await?))
}

/// The care log of a plant (confirmations and snoozes), newest first.
///
/// Filter `reminder_type`; `limit` bounds the entries. A confirmation made through the tool
/// `confirm_care_task` appears here too.
#[endpoint(tags("care-reminders"), security(["bearer" = []]), operation_id = "get_plant_care_log",
    parameters(
        ("slug" = String, Path, description = "tenant slug"),
        ("reminder_type" = Option<String>, Query, pattern = "^(watering|fertilizing|repotting|pruning|pest_check|overwintering)$", description = "only this reminder type"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 200, description = "entries (default 50)"),
    ),
    responses(
        (status_code = 200, description = "log entries", body = Vec<CareLogEntry>),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or plant", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: unknown reminder type, limit out of range", body = ErrorBody),
    ))]
pub async fn get_plant_care_log(
    plant_key: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Vec<CareLogEntry>>, AppError> {
    let state = depot.app_state()?;
    let mut errors = Vec::new();
    let reminder_type = req.queries().get("reminder_type").cloned();
    if let Some(t) = &reminder_type
        && !REMINDER_TYPES.iter().any(|(n, _)| n == t)
    {
        errors.push(ErrorDetail::new(
            "query.reminder_type",
            "must be one of: watering, fertilizing, repotting, pruning, pest_check, overwintering",
            "value_error",
        ));
    }
    let limit = match req.queries().get("limit") {
        None => 50,
        Some(raw) => match raw.parse::<i64>() {
            Ok(n) if (1..=LOG_MAX_LIMIT).contains(&n) => n,
            _ => {
                errors.push(ErrorDetail::new(
                    "query.limit",
                    format!("must be a whole number between 1 and {LOG_MAX_LIMIT}"),
                    "value_error",
                ));
                0
            }
        },
    };
    if !errors.is_empty() {
        return Err(AppError::validation(errors));
    }
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::care_log(&state, tenant, &plant_key, reminder_type.as_deref(), limit).await?,
    ))
}

/// Confirm a reminder: the care was given (today or up to 30 days back). The next one falls
/// one interval later; the interval adapts to how early or late the grower confirms.
///
/// Body `{plant_key, confirmed_on?, notes?}`: `confirmed_on` may lie up to 30 days back, never in
/// the future; the next due date is the care day plus the interval. Another plant's `plant_key` is
/// 422 `body.plant_key`; an unknown reminder 404 (through the tool, a type the plant has no
/// reminder for is 422 `reminder_type`). The confirmation completes the plant's open
/// `care_reminder` tasks named after the type; their keys are in `completed_task_keys`.
#[endpoint(tags("care-reminders"), security(["bearer" = []]), operation_id = "confirm_care_reminder",
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = ConfirmBody,
    responses(
        (status_code = 200, description = "the moved reminder and the log entry", body = CareOutcome),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or reminder", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: the reminder belongs to another plant, a bad date", body = ErrorBody),
    ))]
pub async fn confirm_care_reminder(
    reminder_key: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<CareOutcome>, AppError> {
    let state = depot.app_state()?;
    depot.tenant_ctx()?.require(Role::Grower)?;
    let body: Confirm = read_json(req, state.config().max_body_bytes).await?;
    let actor = actor(depot)?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::act(
            &state,
            tenant,
            Target::Key {
                reminder_key: &reminder_key,
                plant_key: body.plant_key,
            },
            &CareAction::Confirm {
                confirmed_on: body.confirmed_on,
            },
            body.notes.as_deref(),
            &actor,
            true,
        )
        .await?,
    ))
}

/// Snooze a reminder by 1–30 days from today.
///
/// Body `{plant_key, days (1–30, default 1), notes?}`: the next due date becomes today plus the
/// days. Another plant's `plant_key` is 422 `body.plant_key`.
#[endpoint(tags("care-reminders"), security(["bearer" = []]), operation_id = "snooze_care_reminder",
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = SnoozeBody,
    responses(
        (status_code = 200, description = "the moved reminder and the log entry", body = CareOutcome),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or reminder", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: the reminder belongs to another plant, days out of range", body = ErrorBody),
    ))]
pub async fn snooze_care_reminder(
    reminder_key: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<CareOutcome>, AppError> {
    let state = depot.app_state()?;
    depot.tenant_ctx()?.require(Role::Grower)?;
    let body: Snooze = read_json(req, state.config().max_body_bytes).await?;
    let actor = actor(depot)?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::act(
            &state,
            tenant,
            Target::Key {
                reminder_key: &reminder_key,
                plant_key: body.plant_key,
            },
            &CareAction::Snooze { days: body.days },
            body.notes.as_deref(),
            &actor,
            true,
        )
        .await?,
    ))
}
