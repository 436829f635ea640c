//! SQL of planting runs. Tenant tables are named
//! `tenant.<table>`; `TenantTx::sql` renders the placeholder into the tenant's schema.
//! Every statement goes through `GardenTx::conn` (counted).

use sqlx::Row;
use sqlx::postgres::PgRow;
use uuid::Uuid;

use super::model::{NewRun, PhaseCount, Run, RunEntry, RunType};
use crate::garden::statements::GardenTx;
use crate::rules::run_status::RunStatus;
use crate::values::page::PageRequest;

const COLUMNS: &str = "r.id, r.name, r.run_type, r.status, r.location_id, r.substrate_batch_id, \
    r.planned_quantity, r.planned_start_date, r.started_at, r.completed_at, r.notes, \
    (SELECT count(*) FROM tenant.planting_run_plants rp WHERE rp.run_id = r.id) AS plant_count, \
    r.created_at, r.updated_at";

fn decode(row: &PgRow) -> Result<(Run, RunStatus), sqlx::Error> {
    let kind: String = row.try_get("run_type")?;
    let status: String = row.try_get("status")?;
    let status = RunStatus::parse(&status)
        .ok_or_else(|| sqlx::Error::Decode(format!("unknown run status {status:?}").into()))?;
    let planned: Option<time::Date> = row.try_get("planned_start_date")?;
    Ok((
        Run {
            key: row.try_get("id")?,
            name: row.try_get("name")?,
            run_type: RunType::parse(&kind)
                .ok_or_else(|| sqlx::Error::Decode(format!("unknown run type {kind:?}").into()))?,
            status: status.into(),
            location_key: row.try_get("location_id")?,
            substrate_batch_key: row.try_get("substrate_batch_id")?,
            planned_quantity: row.try_get("planned_quantity")?,
            planned_start_date: planned.map(|d| d.to_string()),
            started_at: row.try_get("started_at")?,
            completed_at: row.try_get("completed_at")?,
            notes: row.try_get("notes")?,
            plant_count: row.try_get("plant_count")?,
            created_at: row.try_get("created_at")?,
            updated_at: row.try_get("updated_at")?,
        },
        status,
    ))
}

pub async fn insert(tx: &mut GardenTx, id: Uuid, new: &NewRun) -> Result<(), sqlx::Error> {
    sqlx::query(tx.sql(
        "INSERT INTO tenant.planting_runs (id, name, run_type, location_id, substrate_batch_id, \
         planned_quantity, planned_start_date, notes) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    ))
    .bind(id)
    .bind(&new.name)
    .bind(new.run_type.unwrap_or(RunType::Monoculture).as_str())
    .bind(new.location_key)
    .bind(new.substrate_batch_key)
    .bind(new.planned_quantity)
    .bind(new.planned_start_date)
    .bind(&new.notes)
    .execute(tx.conn())
    .await?;
    Ok(())
}

pub async fn get(tx: &mut GardenTx, id: Uuid) -> Result<Option<(Run, RunStatus)>, sqlx::Error> {
    let sql = tx.sql(&format!(
        "SELECT {COLUMNS} FROM tenant.planting_runs r WHERE r.id = $1"
    ));
    let row = sqlx::query(sql).bind(id).fetch_optional(tx.conn()).await?;
    row.as_ref().map(decode).transpose()
}

/// Locks the run for a state change or an operation its state guards.
pub async fn lock(tx: &mut GardenTx, id: Uuid) -> Result<Option<(Run, RunStatus)>, sqlx::Error> {
    let sql = tx.sql(&format!(
        "SELECT {COLUMNS} FROM tenant.planting_runs r WHERE r.id = $1 FOR UPDATE OF r"
    ));
    let row = sqlx::query(sql).bind(id).fetch_optional(tx.conn()).await?;
    row.as_ref().map(decode).transpose()
}

/// One page of runs (optionally of one status) and the number matching, in one statement.
pub async fn list(
    tx: &mut GardenTx,
    status: Option<RunStatus>,
    page: PageRequest,
) -> Result<(Vec<Run>, Option<i64>), sqlx::Error> {
    let sql = tx.sql(&format!(
        "SELECT {COLUMNS}, count(*) OVER () AS matched FROM tenant.planting_runs r \
         WHERE ($1::text IS NULL OR r.status = $1) ORDER BY r.created_at, r.id LIMIT $2 OFFSET $3"
    ));
    let rows = sqlx::query(sql)
        .bind(status.map(RunStatus::as_str))
        .bind(page.limit)
        .bind(page.skip)
        .fetch_all(tx.conn())
        .await?;
    let matched = match rows.first() {
        Some(r) => Some(r.try_get::<i64, _>("matched")?),
        None => None,
    };
    let runs = rows
        .iter()
        .map(|r| decode(r).map(|(run, _)| run))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((runs, matched))
}

pub async fn count(tx: &mut GardenTx, status: Option<RunStatus>) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        tx.sql("SELECT count(*) FROM tenant.planting_runs WHERE ($1::text IS NULL OR status = $1)"),
    )
    .bind(status.map(RunStatus::as_str))
    .fetch_one(tx.conn())
    .await
}

/// The time is bound, not `now()`: Citus refuses a non-immutable function inside CASE or
/// coalesce in an UPDATE of a distributed table.
pub async fn set_status(tx: &mut GardenTx, id: Uuid, to: RunStatus) -> Result<(), sqlx::Error> {
    sqlx::query(tx.sql(
        "UPDATE tenant.planting_runs SET status = $2, \
         started_at = CASE WHEN $3 THEN coalesce(started_at, $5) ELSE started_at END, \
         completed_at = CASE WHEN $4 THEN $5 ELSE completed_at END, updated_at = $5 \
         WHERE id = $1",
    ))
    .bind(id)
    .bind(to.as_str())
    .bind(to.starts())
    .bind(to.ends())
    .bind(time::OffsetDateTime::now_utc())
    .execute(tx.conn())
    .await?;
    Ok(())
}

/// The plants named: (key, archived, run it belongs to).
pub async fn plants_state(
    tx: &mut GardenTx,
    keys: &[Uuid],
) -> Result<Vec<(Uuid, bool, Option<Uuid>)>, sqlx::Error> {
    let rows = sqlx::query(
        tx.sql("SELECT p.id, p.archived_at IS NOT NULL AS archived, rp.run_id FROM tenant.plants p \
         LEFT JOIN tenant.planting_run_plants rp ON rp.plant_id = p.id WHERE p.id = ANY($1) FOR UPDATE OF p"),
    )
    .bind(keys)
    .fetch_all(tx.conn())
    .await?;
    rows.iter()
        .map(|r| {
            Ok((
                r.try_get("id")?,
                r.try_get("archived")?,
                r.try_get("run_id")?,
            ))
        })
        .collect()
}

pub async fn add_plants(tx: &mut GardenTx, run: Uuid, plants: &[Uuid]) -> Result<u64, sqlx::Error> {
    Ok(sqlx::query(tx.sql(
        "INSERT INTO tenant.planting_run_plants (run_id, plant_id) SELECT $1, unnest($2::uuid[]) \
         ON CONFLICT DO NOTHING",
    ))
    .bind(run)
    .bind(plants)
    .execute(tx.conn())
    .await?
    .rows_affected())
}

pub async fn per_phase(tx: &mut GardenTx, run: Uuid) -> Result<Vec<PhaseCount>, sqlx::Error> {
    let rows = sqlx::query(tx.sql(
        "SELECT p.current_phase_key, max(h.phase_name) AS phase_name, \
         count(*) FILTER (WHERE p.archived_at IS NULL) AS live, count(*) AS total \
         FROM tenant.planting_run_plants rp JOIN tenant.plants p ON p.id = rp.plant_id \
         LEFT JOIN tenant.plant_phase_history h ON h.plant_id = p.id AND h.exited_at IS NULL \
         WHERE rp.run_id = $1 GROUP BY p.current_phase_key ORDER BY min(h.entered_at) NULLS FIRST",
    ))
    .bind(run)
    .fetch_all(tx.conn())
    .await?;
    rows.iter()
        .map(|r| {
            Ok(PhaseCount {
                phase_key: r.try_get("current_phase_key")?,
                phase_name: r.try_get("phase_name")?,
                live: r.try_get("live")?,
                total: r.try_get("total")?,
            })
        })
        .collect()
}

pub async fn entries(tx: &mut GardenTx, run: Uuid) -> Result<Vec<RunEntry>, sqlx::Error> {
    let rows = sqlx::query(
        tx.sql("SELECT id, species_key, cultivar_key, quantity, id_prefix FROM tenant.planting_run_entries \
         WHERE run_id = $1 ORDER BY created_at, id"),
    )
    .bind(run)
    .fetch_all(tx.conn())
    .await?;
    rows.iter()
        .map(|r| {
            Ok(RunEntry {
                key: r.try_get("id")?,
                species_key: r.try_get("species_key")?,
                cultivar_key: r.try_get("cultivar_key")?,
                quantity: r.try_get("quantity")?,
                id_prefix: r.try_get("id_prefix")?,
            })
        })
        .collect()
}

pub async fn insert_entry(
    tx: &mut GardenTx,
    run: Uuid,
    species_key: &str,
    cultivar_key: Option<&str>,
    quantity: i32,
    id_prefix: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        tx.sql("INSERT INTO tenant.planting_run_entries (id, run_id, species_key, cultivar_key, quantity, id_prefix) \
         VALUES ($1, $2, $3, $4, $5, $6)"),
    )
    .bind(Uuid::now_v7())
    .bind(run)
    .bind(species_key)
    .bind(cultivar_key)
    .bind(quantity)
    .bind(id_prefix)
    .execute(tx.conn())
    .await?;
    Ok(())
}
