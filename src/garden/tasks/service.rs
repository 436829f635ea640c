//! Use cases of tasks, shared by the REST routes, the MCP tools and the calendar.

use time::{Date, Duration, OffsetDateTime};
use uuid::Uuid;

use super::model::*;
use super::repo;
use crate::error::{AppError, ErrorCode, ErrorDetail};
use crate::garden::contracts::CalendarEvent;
use crate::garden::plants::catalog;
use crate::rules::hst;
use crate::rules::task_status::{TaskAction, TaskStatus};
use crate::state::AppState;
use crate::tenancy::{TenantRecord, TenantTx};
use crate::values::json::Patch;
use crate::values::page::{Page, PageRequest};

pub const LIST_MAX_LIMIT: i64 = 100;
/// Projected occurrences of one recurring task in a calendar window, at most.
const PROJECTION_MAX: usize = 400;

/// A key that is not a UUID cannot name a task: the same 404 as an unknown one.
pub fn parse_task_key(key: &str) -> Result<Uuid, AppError> {
    Uuid::parse_str(key.trim()).map_err(|_| AppError::not_found("task"))
}

fn field_error(field: &str, reason: impl Into<String>) -> AppError {
    AppError::validation(vec![ErrorDetail::new(field, reason, "value_error")])
}

/// 422 on `field` unless the user is a member of the garden (any role).
pub async fn check_member(
    state: &AppState,
    tenant: &TenantRecord,
    user: Uuid,
    field: &str,
) -> Result<(), AppError> {
    let role = crate::directory::memberships::repo::role_in(state.platform_pool(), tenant.id, user)
        .await?;
    if role.is_none() {
        return Err(field_error(field, "is not a member of this garden"));
    }
    Ok(())
}

pub async fn list_tasks(
    state: &AppState,
    tenant: &TenantRecord,
    filter: &TaskFilter,
    page: PageRequest,
) -> Result<Page<Task>, AppError> {
    if let (Some(a), Some(b)) = (filter.due_from, filter.due_to)
        && a > b
    {
        return Err(AppError::validation(vec![ErrorDetail::new(
            "query.due_to",
            "must not lie before due_from",
            "value_error",
        )]));
    }
    let mut tx = TenantTx::begin(state, tenant).await?;
    // Phase-entry tasks whose plant has entered their phase are due now.
    repo::wake_dormant(&mut tx).await?;
    let (rows, matched) = repo::list(&mut tx, filter, page).await?;
    let total = match matched {
        Some(n) => n,
        None => repo::count(&mut tx, filter).await?,
    };
    tx.commit().await?;
    Ok(Page::new(
        rows.into_iter().map(|r| r.task).collect(),
        total,
        page,
    ))
}

/// The open tasks due on or before `day`, in progress first, then pending (at most
/// `per_status` of each): Today's list. A read of one statement; only when a dormant
/// phase-entry task is waiting to wake does it wake them (the write `list_tasks` always
/// makes) and read again, so the list is the one `list_tasks` would give.
pub async fn open_tasks_due_by(
    state: &AppState,
    tenant: &TenantRecord,
    day: Date,
    per_status: i64,
) -> Result<Vec<Task>, AppError> {
    let mut tx = TenantTx::read(state, tenant).await?;
    let (rows, wake) = repo::open_due_by(&mut tx, day, per_status).await?;
    tx.commit().await?;
    if !wake {
        return Ok(rows.into_iter().map(|r| r.task).collect());
    }
    let mut tx = TenantTx::begin(state, tenant).await?;
    repo::wake_dormant(&mut tx).await?;
    let (rows, _) = repo::open_due_by(&mut tx, day, per_status).await?;
    tx.commit().await?;
    Ok(rows.into_iter().map(|r| r.task).collect())
}

pub async fn get_task(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
) -> Result<Task, AppError> {
    let id = parse_task_key(key)?;
    let mut tx = TenantTx::begin(state, tenant).await?;
    repo::wake_dormant(&mut tx).await?;
    let row = repo::get(&mut tx, id, false).await?;
    tx.commit().await?;
    row.map(|r| r.task)
        .ok_or_else(|| AppError::not_found("task"))
}

fn matches_phase(trigger: &str, key: Option<&str>, name: Option<&str>) -> bool {
    let t = trigger.to_lowercase();
    key.is_some_and(|k| k.to_lowercase() == t) || name.is_some_and(|n| n.to_lowercase() == t)
}

/// Creates a task; `write: false` checks everything and writes nothing (a tool's dry run).
pub async fn create_task(
    state: &AppState,
    tenant: &TenantRecord,
    new: &NewTask,
    actor: &str,
    write: bool,
) -> Result<Task, AppError> {
    if let Some(user) = new.assigned_to {
        check_member(state, tenant, user, "body.assigned_to").await?;
    }
    let mut tx = TenantTx::begin(state, tenant).await?;
    let mut status = TaskStatus::Pending;
    if let Some(plant) = new.plant_key {
        let facts = repo::plant_facts(&mut tx, plant)
            .await?
            .ok_or_else(|| AppError::not_found("plant"))?;
        if facts.archived {
            return Err(field_error("body.plant_key", "the plant is archived"));
        }
        if let Some(r) = &new.recurrence
            && let Some(phase) = &r.phase
        {
            // A phase the plant's species never runs through would never fire.
            let seq = catalog::sequence_of(state, &facts.species_key).await?;
            let known = seq.as_ref().is_some_and(|s| {
                s.entries
                    .iter()
                    .any(|e| matches_phase(phase, Some(&e.phase_key), Some(&e.phase_name)))
            });
            if !known {
                return Err(field_error(
                    "body.recurrence.phase",
                    "the plant's phase sequence has no such phase: the recurrence would never fire",
                ));
            }
            if !matches_phase(
                phase,
                facts.phase_key.as_deref(),
                facts.phase_name.as_deref(),
            ) {
                status = TaskStatus::Dormant;
            }
        }
    }
    let id = Uuid::now_v7();
    repo::insert(
        &mut tx,
        &repo::Insert {
            id,
            new,
            status,
            parent: None,
            actor,
        },
    )
    .await?;
    let row = repo::get(&mut tx, id, false)
        .await?
        .ok_or_else(|| AppError::internal("inserted task is gone"))?;
    if write {
        tx.commit().await?;
    } else {
        tx.rollback().await?;
    }
    Ok(row.task)
}

pub async fn patch_task(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
    patch: &TaskPatch,
) -> Result<Task, AppError> {
    let id = parse_task_key(key)?;
    if let Patch::Set(user) = patch.assigned_to {
        check_member(state, tenant, user, "body.assigned_to").await?;
    }
    let mut tx = TenantTx::begin(state, tenant).await?;
    let cur = repo::get(&mut tx, id, true)
        .await?
        .ok_or_else(|| AppError::not_found("task"))?;
    let due_on = match patch.due_on {
        Patch::Keep => cur.due_on,
        Patch::Clear => None,
        Patch::Set(d) => Some(d),
    };
    let dated_recurrence = cur
        .task
        .recurrence
        .as_ref()
        .is_some_and(|r| r.kind != "phase_entry");
    if dated_recurrence {
        match (due_on, cur.end_on) {
            (None, _) => {
                return Err(field_error(
                    "body.due_on",
                    "a recurring task needs a due date: without one it would never fire",
                ));
            }
            (Some(d), Some(end)) if end < d => {
                return Err(field_error(
                    "body.due_on",
                    "lies after the recurrence's end date: it would never fire",
                ));
            }
            _ => {}
        }
    }
    let instruction = match &patch.instruction {
        Patch::Keep => cur.task.instruction.clone(),
        Patch::Clear => None,
        Patch::Set(s) => Some(s.clone()),
    };
    let assigned_to = match patch.assigned_to {
        Patch::Keep => cur.task.assigned_to,
        Patch::Clear => None,
        Patch::Set(u) => Some(u),
    };
    repo::update(
        &mut tx,
        id,
        &repo::Update {
            name: patch.name.as_deref().unwrap_or(&cur.task.name),
            instruction: instruction.as_deref(),
            priority: patch.priority.unwrap_or(cur.task.priority.as_str()),
            due_on,
            assigned_to,
            checklist: patch.checklist.as_deref().unwrap_or(&cur.task.checklist),
        },
    )
    .await?;
    let row = repo::get(&mut tx, id, false)
        .await?
        .ok_or_else(|| AppError::not_found("task"))?;
    tx.commit().await?;
    Ok(row.task)
}

/// The answer to a status change: the task, and the next occurrence a completed recurring task
/// created.
#[derive(Debug, Clone, serde::Serialize, salvo::oapi::ToSchema)]
pub struct StatusOutcome {
    pub task: Task,
    pub next_occurrence: Option<Task>,
}

fn invalid_transition(action: TaskAction, from: TaskStatus) -> AppError {
    AppError::new(
        ErrorCode::InvalidStatusTransition,
        format!(
            "cannot {} a task that is {}",
            action.as_str(),
            from.as_str()
        ),
    )
    .with_details(vec![ErrorDetail::new(
        "body.action",
        format!(
            "{} is not allowed from status {}",
            action.as_str(),
            from.as_str()
        ),
        "invalid_transition",
    )])
}

/// The training check (domain 2.3) when a training task is started or completed.
async fn check_training(
    state: &AppState,
    tx: &mut TenantTx,
    row: &TaskRow,
) -> Result<(), AppError> {
    if !TRAINING_CATEGORIES.contains(&row.task.category.as_str()) {
        return Ok(());
    }
    let (Some(plant), Some(measure)) = (row.task.plant_key, hst::measure(&row.task.name)) else {
        return Ok(());
    };
    let Some(facts) = repo::plant_facts(tx, plant).await? else {
        return Ok(());
    };
    let phase = facts
        .phase_name
        .clone()
        .or_else(|| facts.phase_key.clone())
        .unwrap_or_default();
    if let Some(reason) = hst::phase_refusal(measure, &phase) {
        return Err(AppError::new(ErrorCode::HstViolation, reason.clone())
            .with_details(vec![ErrorDetail::new("phase", reason, "hst_violation")]));
    }
    let species = catalog::species_many(state, [facts.species_key.clone()]).await?;
    let species_name = species
        .get(&facts.species_key)
        .map(|s| {
            format!(
                "{} {}",
                s.common_name.clone().unwrap_or_default(),
                s.scientific_name.clone().unwrap_or_default()
            )
        })
        .unwrap_or_default();
    let now = OffsetDateTime::now_utc();
    for (name, done) in repo::completed_training(tx, plant, row.task.key).await? {
        let Some(prev) = hst::measure(&name) else {
            continue;
        };
        let days = hst::recovery_days(prev, &species_name);
        if let Some(left) = hst::days_remaining(done, days, now) {
            let reason = format!(
                "the plant is still recovering from {prev} ({days} days): {left} day(s) remaining"
            );
            return Err(AppError::new(ErrorCode::HstViolation, reason.clone())
                .with_details(vec![ErrorDetail::new("recovery", reason, "hst_violation")]));
        }
        break;
    }
    Ok(())
}

/// The day of the next occurrence of a dated recurrence after `due` (`None` past its end).
pub fn next_due(r: &Recurrence, due: Date, end: Option<Date>) -> Option<Date> {
    let next = due.checked_add(Duration::days(r.step_days()?))?;
    match end {
        Some(e) if next > e => None,
        _ => Some(next),
    }
}

/// Moves a task (domain 2.7). Completing a recurring task creates its next occurrence
/// (pending on the next day for a dated recurrence, dormant until the phase is entered again
/// for a phase-entry one), with the checklist reset.
pub async fn change_status(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
    change: &StatusChange,
) -> Result<StatusOutcome, AppError> {
    let id = parse_task_key(key)?;
    let mut tx = TenantTx::begin(state, tenant).await?;
    let cur = repo::get(&mut tx, id, true)
        .await?
        .ok_or_else(|| AppError::not_found("task"))?;
    let Some(to) = change.action.apply(cur.status) else {
        return Err(invalid_transition(change.action, cur.status));
    };
    if matches!(change.action, TaskAction::Start | TaskAction::Complete) {
        check_training(state, &mut tx, &cur).await?;
    }
    repo::set_status(
        &mut tx,
        id,
        cur.status,
        to,
        change.action,
        change.notes.as_deref(),
    )
    .await?;
    let mut next_occurrence = None;
    if change.action == TaskAction::Complete
        && let Some(r) = &cur.task.recurrence
    {
        let (status, due_on) = if r.kind == "phase_entry" {
            (Some(TaskStatus::Dormant), cur.due_on)
        } else {
            match cur.due_on.and_then(|d| next_due(r, d, cur.end_on)) {
                Some(d) => (Some(TaskStatus::Pending), Some(d)),
                None => (None, None),
            }
        };
        if let Some(status) = status {
            let next = NewTask {
                name: cur.task.name.clone(),
                instruction: cur.task.instruction.clone(),
                category: CATEGORIES
                    .iter()
                    .find(|(n, _)| *n == cur.task.category)
                    .map_or("maintenance", |(_, v)| v),
                priority: PRIORITIES
                    .iter()
                    .find(|(n, _)| *n == cur.task.priority)
                    .map_or("medium", |(_, v)| v),
                plant_key: cur.task.plant_key,
                due_on,
                assigned_to: cur.task.assigned_to,
                checklist: cur
                    .task
                    .checklist
                    .iter()
                    .map(|c| ChecklistItem {
                        text: c.text.clone(),
                        done: false,
                    })
                    .collect(),
                recurrence: Some(RecurrenceIn {
                    kind: RECURRENCE_KINDS
                        .iter()
                        .find(|(n, _)| *n == r.kind)
                        .map_or("daily", |(_, v)| v),
                    every_days: r.every_days,
                    end_on: cur.end_on,
                    phase: r.phase.clone(),
                }),
            };
            let nid = Uuid::now_v7();
            repo::insert(
                &mut tx,
                &repo::Insert {
                    id: nid,
                    new: &next,
                    status,
                    parent: Some(id),
                    actor: "system",
                },
            )
            .await?;
            next_occurrence = repo::get(&mut tx, nid, false).await?.map(|r| r.task);
        }
    }
    let row = repo::get(&mut tx, id, false)
        .await?
        .ok_or_else(|| AppError::not_found("task"))?;
    if change.action == TaskAction::Complete {
        crate::garden::webhooks::events::emit(
            &mut tx,
            tenant,
            "task.completed",
            serde_json::json!({
                "key": row.task.key,
                "name": row.task.name,
                "plant_key": row.task.plant_key,
                "next_occurrence_key": next_occurrence.as_ref().map(|t| t.key),
            }),
        )
        .await?;
    }
    tx.commit().await?;
    Ok(StatusOutcome {
        task: row.task,
        next_occurrence,
    })
}

/// Deletes a task that is pending, skipped or dormant (`INVALID_STATUS_TRANSITION` otherwise).
pub async fn delete_task(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
) -> Result<(), AppError> {
    let id = parse_task_key(key)?;
    let mut tx = TenantTx::begin(state, tenant).await?;
    let cur = repo::get(&mut tx, id, true)
        .await?
        .ok_or_else(|| AppError::not_found("task"))?;
    if !cur.status.deletable() {
        return Err(AppError::new(
            ErrorCode::InvalidStatusTransition,
            format!(
                "a task that is {} cannot be deleted (only pending, skipped or dormant)",
                cur.status.as_str()
            ),
        ));
    }
    repo::delete(&mut tx, id).await?;
    tx.commit().await?;
    Ok(())
}

/// The calendar's task events in `[from, to]`: every task due in the window (`task:<key>`),
/// and the later occurrences of open dated recurring tasks projected into it
/// (`task:<key>:<date>`).
pub async fn calendar_events(
    tx: &mut TenantTx,
    from: Date,
    to: Date,
) -> Result<Vec<CalendarEvent>, AppError> {
    if from > to {
        return Ok(Vec::new());
    }
    let rows = repo::calendar(tx, from, to).await?;
    let mut out = Vec::new();
    for r in rows {
        let Some(due) = r.due_on else { continue };
        let detail = Some(format!(
            "{} · {} · {}",
            r.task.category,
            r.task.priority,
            r.status.as_str()
        ));
        if due >= from {
            out.push(CalendarEvent {
                uid: format!("task:{}", r.task.key),
                kind: "task",
                date: due,
                end_date: None,
                title: r.task.name.clone(),
                plant_key: r.task.plant_key,
                detail: detail.clone(),
            });
        }
        let (Some(rec), true) = (
            &r.task.recurrence,
            r.status.open() && r.status != TaskStatus::Dormant,
        ) else {
            continue;
        };
        let mut day = due;
        let mut n = 0;
        while let Some(next) = next_due(rec, day, r.end_on) {
            if next > to || n >= PROJECTION_MAX {
                break;
            }
            if next >= from {
                out.push(CalendarEvent {
                    uid: format!("task:{}:{}", r.task.key, date_str(next)),
                    kind: "task",
                    date: next,
                    end_date: None,
                    title: r.task.name.clone(),
                    plant_key: r.task.plant_key,
                    detail: Some(format!(
                        "{} · {} · projected",
                        r.task.category, r.task.priority
                    )),
                });
                n += 1;
            }
            day = next;
        }
    }
    out.sort_by(|a, b| a.date.cmp(&b.date).then_with(|| a.uid.cmp(&b.uid)));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::date;

    fn rec(kind: &str, every: Option<i32>) -> Recurrence {
        Recurrence {
            kind: kind.to_owned(),
            every_days: every,
            end_on: None,
            phase: None,
        }
    }

    #[test]
    fn next_occurrences() {
        let d = date!(2026 - 05 - 30);
        assert_eq!(
            next_due(&rec("daily", None), d, None),
            Some(date!(2026 - 05 - 31))
        );
        assert_eq!(
            next_due(&rec("weekly", None), d, None),
            Some(date!(2026 - 06 - 06))
        );
        assert_eq!(
            next_due(&rec("every_n_days", Some(3)), d, None),
            Some(date!(2026 - 06 - 02))
        );
        // The end date is the last day an occurrence may fall on.
        assert_eq!(
            next_due(&rec("weekly", None), d, Some(date!(2026 - 06 - 06))),
            Some(date!(2026 - 06 - 06))
        );
        assert_eq!(
            next_due(&rec("weekly", None), d, Some(date!(2026 - 06 - 05))),
            None
        );
        assert_eq!(next_due(&rec("phase_entry", None), d, None), None);
    }
}
