//! REST face of tasks under `/api/v1/t/{slug}/tasks`.

use salvo::oapi::extract::PathParam;
use salvo::prelude::*;
use time::Date;
use uuid::Uuid;

use super::model::*;
use super::service::{self, LIST_MAX_LIMIT, StatusOutcome};
use crate::auth::Role;
use crate::error::{AppError, ErrorBody, ErrorDetail};
use crate::http::depot::DepotExt;
use crate::http::depot::actor;
use crate::http::json::read_json;
use crate::http::pagination::{Page, PageRequest};
use crate::rules::task_status::TaskStatus;

pub fn router() -> Router {
    Router::with_path("tasks")
        .get(list_tasks)
        .post(create_task)
        .push(
            Router::with_path("{task_key}")
                .get(get_task)
                .patch(update_task)
                .delete(delete_task)
                .push(Router::with_path("status").post(change_task_status)),
        )
}

fn query_error(name: &str, reason: &str) -> ErrorDetail {
    ErrorDetail::new(format!("query.{name}"), reason, "value_error")
}

/// Reads the list filters; every bad one is its own detail.
pub fn filter_from(req: &Request) -> Result<TaskFilter, AppError> {
    let q = |n: &str| req.queries().get(n).cloned();
    let mut errors = Vec::new();
    let mut f = TaskFilter::default();
    if let Some(s) = q("status") {
        f.status = TaskStatus::parse(&s);
        if f.status.is_none() {
            errors.push(query_error(
                "status",
                "must be one of: pending, in_progress, completed, skipped, failed, dormant",
            ));
        }
    }
    if let Some(p) = q("plant") {
        f.plant = Uuid::parse_str(&p).ok();
        if f.plant.is_none() {
            errors.push(query_error("plant", "must be a key (UUID)"));
        }
    }
    let fmt = time::macros::format_description!("[year]-[month]-[day]");
    for (name, slot) in [("due_from", &mut f.due_from), ("due_to", &mut f.due_to)] {
        if let Some(raw) = q(name) {
            *slot = Date::parse(&raw, &fmt).ok();
            if slot.is_none() {
                errors.push(query_error(name, "must be a date YYYY-MM-DD"));
            }
        }
    }
    if errors.is_empty()
        && let (Some(a), Some(b)) = (f.due_from, f.due_to)
        && a > b
    {
        errors.push(query_error("due_to", "must not lie before due_from"));
    }
    if errors.is_empty() {
        Ok(f)
    } else {
        Err(AppError::validation(errors))
    }
}

/// List the garden's tasks by due date (undated last). Phase-entry tasks whose plant has
/// entered their phase turn pending first.
///
/// Filters `status`, `plant`, `due_from`, `due_to`; `limit` up to 100. A dormant phase-entry task
/// wakes only when its plant entered the phase after the task was created; nothing hooks into the
/// transition itself.
#[endpoint(tags("tasks"), security(["bearer" = []]), operation_id = "list_tasks",
    parameters(
        ("slug" = String, Path, description = "tenant slug"),
        ("status" = Option<String>, Query, pattern = "^(pending|in_progress|completed|skipped|failed|dormant)$", description = "pending, in_progress, completed, skipped, failed or dormant"),
        ("plant" = Option<Uuid>, Query, description = "only tasks of this plant"),
        ("due_from" = Option<Date>, Query, description = "due on or after (YYYY-MM-DD)"),
        ("due_to" = Option<Date>, Query, description = "due on or before (YYYY-MM-DD), not before due_from"),
        ("skip" = Option<i64>, Query, minimum = 0, maximum = 100000, description = "items to skip (default 0)"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 100, description = "page size (default 100)"),
    ),
    responses(
        (status_code = 200, description = "one page of tasks", body = Page<Task>),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: a filter, skip or limit out of range; dates in the wrong order", body = ErrorBody),
    ))]
pub async fn list_tasks(
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Page<Task>>, AppError> {
    let state = depot.app_state()?;
    let page = PageRequest::from_request(req, LIST_MAX_LIMIT)?;
    let filter = filter_from(req)?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::list_tasks(&state, tenant, &filter, page).await?,
    ))
}

/// Get one task.
#[endpoint(tags("tasks"), security(["bearer" = []]), operation_id = "get_task",
    parameters(("slug" = String, Path, description = "tenant slug")),
    responses(
        (status_code = 200, description = "the task", body = Task),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or task", body = ErrorBody),
    ))]
pub async fn get_task(
    task_key: PathParam<String>,
    depot: &mut Depot,
) -> Result<Json<Task>, AppError> {
    let state = depot.app_state()?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(service::get_task(&state, tenant, &task_key).await?))
}

/// Create a task (pending; dormant for a phase-entry task whose plant is not in the phase).
///
/// `assigned_to` must be a member of the garden (else 422 `body.assigned_to`). Recurrence `{"kind":
/// "daily" | "weekly" | "every_n_days" (with "every_days" 1–365) | "phase_entry" (with "phase", a
/// key or name), "end_on"?}`. A recurrence that would never fire is 422 naming the field: a dated
/// one without `due_on`, an `end_on` before `due_on`, a phase entry without `plant_key`, or a phase
/// the plant's sequence does not have.
#[endpoint(tags("tasks"), security(["bearer" = []]), operation_id = "create_task",
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = NewTaskBody,
    responses(
        (status_code = 201, description = "task created", body = Task),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or plant", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: one detail per field (assignee not a member, a recurrence that never fires, archived plant)", body = ErrorBody),
    ))]
pub async fn create_task(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<Json<Task>, AppError> {
    let state = depot.app_state()?;
    depot.tenant_ctx()?.require(Role::Grower)?;
    let new: NewTask = read_json(req, state.config().max_body_bytes).await?;
    let actor = actor(depot)?;
    let tenant = &depot.tenant_ctx()?.tenant;
    let task = service::create_task(&state, tenant, &new, &actor, true).await?;
    res.status_code(StatusCode::CREATED);
    Ok(Json(task))
}

/// Change a task's name, instruction, priority, due date, assignee or checklist.
#[endpoint(tags("tasks"), security(["bearer" = []]), operation_id = "update_task",
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = TaskPatchBody,
    responses(
        (status_code = 200, description = "the task", body = Task),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or task", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: one detail per field", body = ErrorBody),
    ))]
pub async fn update_task(
    task_key: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Task>, AppError> {
    let state = depot.app_state()?;
    depot.tenant_ctx()?.require(Role::Grower)?;
    let patch: TaskPatch = read_json(req, state.config().max_body_bytes).await?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::patch_task(&state, tenant, &task_key, &patch).await?,
    ))
}

/// Start, complete, skip, fail or reopen a task (domain 2.7). Completing a recurring task
/// creates its next occurrence; starting or completing a training task checks the plant's
/// phase and recovery (`HST_VIOLATION`).
///
/// Body `{action, notes?}`. start: pending → in_progress; complete: pending or in_progress →
/// completed; skip: pending or in_progress → skipped; fail: in_progress → failed; reopen: completed
/// or skipped → pending (records `reopened_from_status`, clears `completed_at`). Anything else is
/// 422 `INVALID_STATUS_TRANSITION` on `body.action`. The next occurrence of a recurring task has
/// its checklist reset and `previous_key` set: a dated one pending, due one step after the
/// completed one's due date (none after `end_on`), a phase-entry one dormant. The training check
/// applies to a task of category training, pruning, ausgeizen or transplant that names a known
/// measure (topping, FIM, mainlining, heavy defoliation, supercropping, transplant(ing),
/// lollipopping) and has a plant.
#[endpoint(tags("tasks"), security(["bearer" = []]), operation_id = "change_task_status",
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = StatusBody,
    responses(
        (status_code = 200, description = "the task and the next occurrence it created", body = StatusOutcome),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or task", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "INVALID_STATUS_TRANSITION, HST_VIOLATION, VALIDATION_ERROR", body = ErrorBody),
    ))]
pub async fn change_task_status(
    task_key: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<StatusOutcome>, AppError> {
    let state = depot.app_state()?;
    depot.tenant_ctx()?.require(Role::Grower)?;
    let change: StatusChange = read_json(req, state.config().max_body_bytes).await?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::change_status(&state, tenant, &task_key, &change).await?,
    ))
}

/// Delete a task that is pending, skipped or dormant.
#[endpoint(tags("tasks"), security(["bearer" = []]), operation_id = "delete_task",
    parameters(("slug" = String, Path, description = "tenant slug")),
    responses(
        (status_code = 204, description = "task deleted"),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or task", body = ErrorBody),
        (status_code = 422, description = "INVALID_STATUS_TRANSITION: the task is in progress, completed or failed", body = ErrorBody),
    ))]
pub async fn delete_task(
    task_key: PathParam<String>,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<(), AppError> {
    let state = depot.app_state()?;
    depot.tenant_ctx()?.require(Role::Grower)?;
    let tenant = &depot.tenant_ctx()?.tenant;
    service::delete_task(&state, tenant, &task_key).await?;
    res.status_code(StatusCode::NO_CONTENT);
    Ok(())
}
