//! SQL of tasks. Tenant tables are named `tenant.<table>` (rendered by `TenantTx::sql`).

use sqlx::Row;
use sqlx::postgres::PgRow;
use time::{Date, OffsetDateTime};
use uuid::Uuid;

use super::model::*;
use crate::rules::task_status::{TaskAction, TaskStatus};
use crate::tenancy::TenantTx;
use crate::values::page::PageRequest;

const COLUMNS: &str = "id, name, instruction, category, priority, status, plant_id, due_on, \
     assigned_to, checklist, recurrence_kind, recurrence_every_days, recurrence_end_on, \
     trigger_phase, parent_task_id, completion_notes, started_at, completed_at, reopened_at, \
     reopened_from_status, created_at, updated_at";

fn decode(row: &PgRow) -> Result<TaskRow, sqlx::Error> {
    let status_raw: String = row.try_get("status")?;
    let status = TaskStatus::parse(&status_raw)
        .ok_or_else(|| sqlx::Error::Decode(format!("unknown task status {status_raw:?}").into()))?;
    let due_on: Option<Date> = row.try_get("due_on")?;
    let end_on: Option<Date> = row.try_get("recurrence_end_on")?;
    let checklist: serde_json::Value = row.try_get("checklist")?;
    let checklist: Vec<ChecklistItem> =
        serde_json::from_value(checklist).map_err(|e| sqlx::Error::Decode(e.into()))?;
    let kind: Option<String> = row.try_get("recurrence_kind")?;
    let recurrence = kind.map(|kind| -> Result<Recurrence, sqlx::Error> {
        Ok(Recurrence {
            kind,
            every_days: row.try_get("recurrence_every_days")?,
            end_on: end_on.map(date_str),
            phase: row.try_get("trigger_phase")?,
        })
    });
    let recurrence = recurrence.transpose()?;
    let allowed_actions = TaskAction::ALL
        .iter()
        .filter(|(_, a)| a.apply(status).is_some())
        .map(|(n, _)| (*n).to_owned())
        .collect();
    Ok(TaskRow {
        task: Task {
            key: row.try_get("id")?,
            name: row.try_get("name")?,
            instruction: row.try_get("instruction")?,
            category: row.try_get("category")?,
            priority: row.try_get("priority")?,
            status: status.into(),
            plant_key: row.try_get("plant_id")?,
            due_on: due_on.map(date_str),
            assigned_to: row.try_get("assigned_to")?,
            checklist,
            recurrence,
            previous_key: row.try_get("parent_task_id")?,
            completion_notes: row.try_get("completion_notes")?,
            started_at: row.try_get("started_at")?,
            completed_at: row.try_get("completed_at")?,
            reopened_at: row.try_get("reopened_at")?,
            reopened_from_status: row.try_get("reopened_from_status")?,
            allowed_actions,
            created_at: row.try_get("created_at")?,
            updated_at: row.try_get("updated_at")?,
        },
        status,
        due_on,
        end_on,
    })
}

/// The dormant phase-entry tasks (`t`) whose plant has entered their phase since they were
/// created: the phase matches by key or by the open phase row's name.
const WAKEABLE: &str = "FROM tenant.plants p \
     WHERE t.status = 'dormant' AND p.id = t.plant_id AND p.archived_at IS NULL \
       AND p.current_phase_started_at >= t.created_at \
       AND (lower(p.current_phase_key) = lower(t.trigger_phase) \
            OR EXISTS (SELECT 1 FROM tenant.plant_phase_history h \
                       WHERE h.plant_id = p.id AND h.exited_at IS NULL \
                         AND lower(h.phase_name) = lower(t.trigger_phase)))";

/// Dormant phase-entry tasks whose plant has entered their phase since they were created become
/// pending (one statement).
pub async fn wake_dormant(tx: &mut TenantTx) -> Result<u64, sqlx::Error> {
    let sql = tx.sql(&format!(
        "UPDATE tenant.tasks t SET status = 'pending', updated_at = now() {WAKEABLE}"
    ));
    Ok(sqlx::query(sql).execute(tx.conn()).await?.rows_affected())
}

/// The open tasks due on or before `day` (undated ones are not due), in progress first, then
/// pending, each by due date and key and at most `per_status` of each; and whether a dormant
/// task is waiting to wake (see [`wake_dormant`]), which would make the list incomplete. One
/// statement, for a read connection.
pub async fn open_due_by(
    tx: &mut TenantTx,
    day: Date,
    per_status: i64,
) -> Result<(Vec<TaskRow>, bool), sqlx::Error> {
    let sql = tx.sql(&format!(
        "WITH w AS (SELECT EXISTS (SELECT 1 FROM tenant.tasks t, LATERAL (SELECT 1 {WAKEABLE}) x) \
                    AS wake), \
         o AS (SELECT {COLUMNS}, row_number() OVER \
                 (PARTITION BY status ORDER BY due_on, id) AS rn \
               FROM tenant.tasks WHERE status IN ('in_progress', 'pending') AND due_on <= $1) \
         SELECT o.*, w.wake FROM w LEFT JOIN o ON o.rn <= $2 \
         ORDER BY o.status = 'in_progress' DESC, o.due_on, o.id"
    ));
    let rows = sqlx::query(sql)
        .bind(day)
        .bind(per_status)
        .fetch_all(tx.conn())
        .await?;
    let mut wake = false;
    let mut out = Vec::with_capacity(rows.len());
    for r in &rows {
        wake = r.try_get("wake")?;
        if r.try_get::<Option<Uuid>, _>("id")?.is_some() {
            out.push(decode(r)?);
        }
    }
    Ok((out, wake))
}

fn where_clause(f: &TaskFilter) -> &'static str {
    // Every filter is optional: NULL parameters match everything.
    let _ = f;
    "WHERE ($1::text IS NULL OR status = $1) AND ($2::uuid IS NULL OR plant_id = $2) \
     AND ($3::date IS NULL OR due_on >= $3) AND ($4::date IS NULL OR due_on <= $4)"
}

/// One page of tasks (by due date, undated last, then key) and the number matched.
pub async fn list(
    tx: &mut TenantTx,
    f: &TaskFilter,
    page: PageRequest,
) -> Result<(Vec<TaskRow>, Option<i64>), sqlx::Error> {
    let sql = tx.sql(&format!(
        "SELECT {COLUMNS}, count(*) OVER () AS matched FROM tenant.tasks {} \
         ORDER BY due_on NULLS LAST, id LIMIT $5 OFFSET $6",
        where_clause(f)
    ));
    let rows = sqlx::query(sql)
        .bind(f.status.map(TaskStatus::as_str))
        .bind(f.plant)
        .bind(f.due_from)
        .bind(f.due_to)
        .bind(page.limit)
        .bind(page.skip)
        .fetch_all(tx.conn())
        .await?;
    let matched = match rows.first() {
        Some(r) => Some(r.try_get::<i64, _>("matched")?),
        None => None,
    };
    let items = rows.iter().map(decode).collect::<Result<Vec<_>, _>>()?;
    Ok((items, matched))
}

pub async fn count(tx: &mut TenantTx, f: &TaskFilter) -> Result<i64, sqlx::Error> {
    let sql = tx.sql(&format!(
        "SELECT count(*) FROM tenant.tasks {}",
        where_clause(f)
    ));
    sqlx::query_scalar(sql)
        .bind(f.status.map(TaskStatus::as_str))
        .bind(f.plant)
        .bind(f.due_from)
        .bind(f.due_to)
        .fetch_one(tx.conn())
        .await
}

pub async fn get(tx: &mut TenantTx, id: Uuid, lock: bool) -> Result<Option<TaskRow>, sqlx::Error> {
    let sql = tx.sql(&format!(
        "SELECT {COLUMNS} FROM tenant.tasks WHERE id = $1{}",
        if lock { " FOR UPDATE" } else { "" }
    ));
    let row = sqlx::query(sql).bind(id).fetch_optional(tx.conn()).await?;
    row.as_ref().map(decode).transpose()
}

pub struct Insert<'a> {
    pub id: Uuid,
    pub new: &'a NewTask,
    pub status: TaskStatus,
    pub parent: Option<Uuid>,
    pub actor: &'a str,
}

pub async fn insert(tx: &mut TenantTx, i: &Insert<'_>) -> Result<(), sqlx::Error> {
    let n = i.new;
    let r = n.recurrence.as_ref();
    let sql = tx.sql(
        "INSERT INTO tenant.tasks (id, name, instruction, category, priority, status, plant_id, \
         due_on, assigned_to, checklist, recurrence_kind, recurrence_every_days, \
         recurrence_end_on, trigger_phase, parent_task_id, created_by) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)",
    );
    sqlx::query(sql)
        .bind(i.id)
        .bind(&n.name)
        .bind(&n.instruction)
        .bind(n.category)
        .bind(n.priority)
        .bind(i.status.as_str())
        .bind(n.plant_key)
        .bind(n.due_on)
        .bind(n.assigned_to)
        .bind(serde_json::to_value(&n.checklist).unwrap_or_else(|_| serde_json::json!([])))
        .bind(r.map(|r| r.kind))
        .bind(r.and_then(|r| r.every_days))
        .bind(r.and_then(|r| r.end_on))
        .bind(r.and_then(|r| r.phase.clone()))
        .bind(i.parent)
        .bind(i.actor)
        .execute(tx.conn())
        .await?;
    Ok(())
}

pub struct Update<'a> {
    pub name: &'a str,
    pub instruction: Option<&'a str>,
    pub priority: &'a str,
    pub due_on: Option<Date>,
    pub assigned_to: Option<Uuid>,
    pub checklist: &'a [ChecklistItem],
}

pub async fn update(tx: &mut TenantTx, id: Uuid, u: &Update<'_>) -> Result<(), sqlx::Error> {
    let sql = tx.sql(
        "UPDATE tenant.tasks SET name = $2, instruction = $3, priority = $4, due_on = $5, \
         assigned_to = $6, checklist = $7, updated_at = now() WHERE id = $1",
    );
    sqlx::query(sql)
        .bind(id)
        .bind(u.name)
        .bind(u.instruction)
        .bind(u.priority)
        .bind(u.due_on)
        .bind(u.assigned_to)
        .bind(serde_json::to_value(u.checklist).unwrap_or_else(|_| serde_json::json!([])))
        .execute(tx.conn())
        .await?;
    Ok(())
}

/// Moves a task to `to`, setting the timestamps the move sets. The time is bound, not `now()`:
/// Citus refuses a non-immutable function inside CASE in an UPDATE of a distributed table.
pub async fn set_status(
    tx: &mut TenantTx,
    id: Uuid,
    from: TaskStatus,
    to: TaskStatus,
    action: TaskAction,
    notes: Option<&str>,
) -> Result<(), sqlx::Error> {
    let sql = tx.sql(
        "UPDATE tenant.tasks SET status = $2, updated_at = $6, \
           started_at = CASE WHEN $3 = 'start' THEN $6 ELSE started_at END, \
           completed_at = CASE WHEN $3 = 'complete' THEN $6 \
                               WHEN $3 = 'reopen' THEN NULL ELSE completed_at END, \
           completion_notes = CASE WHEN $3 = 'complete' THEN $4 ELSE completion_notes END, \
           reopened_at = CASE WHEN $3 = 'reopen' THEN $6 ELSE reopened_at END, \
           reopened_from_status = CASE WHEN $3 = 'reopen' THEN $5 ELSE reopened_from_status END \
         WHERE id = $1",
    );
    sqlx::query(sql)
        .bind(id)
        .bind(to.as_str())
        .bind(action.as_str())
        .bind(notes)
        .bind(from.as_str())
        .bind(time::OffsetDateTime::now_utc())
        .execute(tx.conn())
        .await?;
    Ok(())
}

pub async fn delete(tx: &mut TenantTx, id: Uuid) -> Result<(), sqlx::Error> {
    sqlx::query(tx.sql("DELETE FROM tenant.tasks WHERE id = $1"))
        .bind(id)
        .execute(tx.conn())
        .await?;
    Ok(())
}

/// A plant as tasks need it: live or not, its species and its current phase (key and name).
pub struct PlantFacts {
    pub archived: bool,
    pub species_key: String,
    pub phase_key: Option<String>,
    pub phase_name: Option<String>,
}

pub async fn plant_facts(tx: &mut TenantTx, id: Uuid) -> Result<Option<PlantFacts>, sqlx::Error> {
    let sql = tx.sql(
        "SELECT p.archived_at IS NOT NULL AS archived, p.species_key, p.current_phase_key, \
           (SELECT h.phase_name FROM tenant.plant_phase_history h \
             WHERE h.plant_id = p.id AND h.exited_at IS NULL) AS phase_name \
         FROM tenant.plants p WHERE p.id = $1",
    );
    let row = sqlx::query(sql).bind(id).fetch_optional(tx.conn()).await?;
    row.map(|r| {
        Ok(PlantFacts {
            archived: r.try_get("archived")?,
            species_key: r.try_get("species_key")?,
            phase_key: r.try_get("current_phase_key")?,
            phase_name: r.try_get("phase_name")?,
        })
    })
    .transpose()
}

/// The latest completed training task of a plant (other than `except`): name and when.
pub async fn completed_training(
    tx: &mut TenantTx,
    plant: Uuid,
    except: Uuid,
) -> Result<Vec<(String, OffsetDateTime)>, sqlx::Error> {
    let sql = tx.sql(
        "SELECT name, completed_at FROM tenant.tasks \
         WHERE plant_id = $1 AND id <> $2 AND status = 'completed' AND completed_at IS NOT NULL \
           AND category IN ('training', 'pruning', 'ausgeizen', 'transplant') \
         ORDER BY completed_at DESC LIMIT 20",
    );
    let rows = sqlx::query(sql)
        .bind(plant)
        .bind(except)
        .fetch_all(tx.conn())
        .await?;
    rows.iter()
        .map(|r| Ok((r.try_get("name")?, r.try_get("completed_at")?)))
        .collect()
}

/// Open tasks with a due date in the window, and open dated recurring tasks due before its end
/// (their later occurrences may fall in it), for the calendar.
pub async fn calendar(
    tx: &mut TenantTx,
    from: Date,
    to: Date,
) -> Result<Vec<TaskRow>, sqlx::Error> {
    let sql = tx.sql(&format!(
        "SELECT {COLUMNS} FROM tenant.tasks \
         WHERE due_on IS NOT NULL AND due_on <= $2 \
           AND (due_on >= $1 OR (status IN ('pending', 'in_progress') \
                AND recurrence_kind IN ('daily', 'weekly', 'every_n_days') \
                AND (recurrence_end_on IS NULL OR recurrence_end_on >= $1))) \
         ORDER BY due_on, id LIMIT 5000"
    ));
    let rows = sqlx::query(sql)
        .bind(from)
        .bind(to)
        .fetch_all(tx.conn())
        .await?;
    rows.iter().map(decode).collect()
}
