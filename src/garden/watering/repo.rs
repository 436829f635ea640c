//! SQL of watering events and of what a plant's diagnostics read.

use sqlx::Row;
use sqlx::postgres::PgRow;
use sqlx::types::Json;
use time::OffsetDateTime;
use uuid::Uuid;

use super::model::*;
use crate::rules::runoff::RunoffAnalysis;
use crate::tenancy::TenantTx;
use crate::values::page::PageRequest;

const COLUMNS: &str = "e.id, e.occurred_at, e.application_method, e.is_supplemental, e.run_id, \
    e.tank_id, e.tank_fill_id, e.volume_liters, e.ec_before_ms, e.ec_after_ms, e.ph_before, \
    e.ph_after, e.runoff_ec_ms, e.runoff_ph, e.runoff_volume_liters, e.fertilizers_used, \
    e.runoff_analysis, e.notes, e.actor, e.created_at, \
    (SELECT coalesce(array_agg(x.plant_id ORDER BY x.plant_id), '{}') \
       FROM tenant.watering_event_plants x WHERE x.event_id = e.id) AS plant_ids";

fn decode(row: &PgRow) -> Result<WateringEvent, sqlx::Error> {
    let method: String = row.try_get("application_method")?;
    let ferts: Json<Vec<FertilizerUse>> = row.try_get("fertilizers_used")?;
    let analysis: Option<Json<RunoffAnalysis>> = row.try_get("runoff_analysis")?;
    Ok(WateringEvent {
        key: row.try_get("id")?,
        kind: if ferts.0.is_empty() {
            "watering"
        } else {
            "feeding"
        }
        .to_owned(),
        occurred_at: row.try_get("occurred_at")?,
        application_method: ApplicationMethod::parse(&method).ok_or_else(|| {
            sqlx::Error::Decode(format!("unknown application method {method:?}").into())
        })?,
        is_supplemental: row.try_get("is_supplemental")?,
        plant_keys: row.try_get("plant_ids")?,
        run_key: row.try_get("run_id")?,
        tank_key: row.try_get("tank_id")?,
        tank_fill_key: row.try_get("tank_fill_id")?,
        volume_liters: row.try_get("volume_liters")?,
        ec_before_ms: row.try_get("ec_before_ms")?,
        ec_after_ms: row.try_get("ec_after_ms")?,
        ph_before: row.try_get("ph_before")?,
        ph_after: row.try_get("ph_after")?,
        runoff_ec_ms: row.try_get("runoff_ec_ms")?,
        runoff_ph: row.try_get("runoff_ph")?,
        runoff_volume_liters: row.try_get("runoff_volume_liters")?,
        fertilizers_used: ferts.0,
        runoff_analysis: analysis.map(|a| a.0),
        notes: row.try_get("notes")?,
        actor: row.try_get("actor")?,
        created_at: row.try_get("created_at")?,
    })
}

pub async fn insert(tx: &mut TenantTx, e: &WateringEvent) -> Result<(), sqlx::Error> {
    sqlx::query(tx.sql(
        "INSERT INTO tenant.watering_events (id, occurred_at, application_method, \
         is_supplemental, run_id, tank_id, tank_fill_id, volume_liters, ec_before_ms, \
         ec_after_ms, ph_before, ph_after, runoff_ec_ms, runoff_ph, runoff_volume_liters, \
         fertilizers_used, runoff_analysis, notes, actor, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, \
         $18, $19, $20)",
    ))
    .bind(e.key)
    .bind(e.occurred_at)
    .bind(e.application_method.as_str())
    .bind(e.is_supplemental)
    .bind(e.run_key)
    .bind(e.tank_key)
    .bind(e.tank_fill_key)
    .bind(e.volume_liters)
    .bind(e.ec_before_ms)
    .bind(e.ec_after_ms)
    .bind(e.ph_before)
    .bind(e.ph_after)
    .bind(e.runoff_ec_ms)
    .bind(e.runoff_ph)
    .bind(e.runoff_volume_liters)
    .bind(Json(&e.fertilizers_used))
    .bind(e.runoff_analysis.as_ref().map(Json))
    .bind(&e.notes)
    .bind(&e.actor)
    .bind(e.created_at)
    .execute(tx.conn())
    .await?;
    sqlx::query(tx.sql(
        "INSERT INTO tenant.watering_event_plants (event_id, plant_id) \
         SELECT $1, p FROM unnest($2::uuid[]) AS p",
    ))
    .bind(e.key)
    .bind(&e.plant_keys)
    .execute(tx.conn())
    .await?;
    Ok(())
}

pub async fn get(tx: &mut TenantTx, id: Uuid) -> Result<Option<WateringEvent>, sqlx::Error> {
    let sql = tx.sql(&format!(
        "SELECT {COLUMNS} FROM tenant.watering_events e WHERE e.id = $1"
    ));
    let row = sqlx::query(sql).bind(id).fetch_optional(tx.conn()).await?;
    row.as_ref().map(decode).transpose()
}

#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub plant: Option<Uuid>,
    pub run: Option<Uuid>,
    pub tank: Option<Uuid>,
    pub from: Option<OffsetDateTime>,
    /// Exclusive.
    pub to: Option<OffsetDateTime>,
}

const FILTER: &str = "($1::uuid IS NULL OR EXISTS (SELECT 1 FROM tenant.watering_event_plants w \
       WHERE w.event_id = e.id AND w.plant_id = $1)) \
     AND ($2::uuid IS NULL OR e.run_id = $2) AND ($3::uuid IS NULL OR e.tank_id = $3) \
     AND ($4::timestamptz IS NULL OR e.occurred_at >= $4) \
     AND ($5::timestamptz IS NULL OR e.occurred_at < $5)";

/// One page of events, newest first, and the number matching.
pub async fn list(
    tx: &mut TenantTx,
    f: &Filter,
    page: PageRequest,
) -> Result<(Vec<WateringEvent>, i64), sqlx::Error> {
    let sql = tx.sql(&format!(
        "SELECT {COLUMNS}, count(*) OVER () AS matched FROM tenant.watering_events e \
         WHERE {FILTER} ORDER BY e.occurred_at DESC, e.id DESC LIMIT $6 OFFSET $7"
    ));
    let rows = sqlx::query(sql)
        .bind(f.plant)
        .bind(f.run)
        .bind(f.tank)
        .bind(f.from)
        .bind(f.to)
        .bind(page.limit)
        .bind(page.skip)
        .fetch_all(tx.conn())
        .await?;
    let total = match rows.first() {
        Some(r) => r.try_get::<i64, _>("matched")?,
        None => {
            sqlx::query_scalar(tx.sql(&format!(
                "SELECT count(*) FROM tenant.watering_events e WHERE {FILTER}"
            )))
            .bind(f.plant)
            .bind(f.run)
            .bind(f.tank)
            .bind(f.from)
            .bind(f.to)
            .fetch_one(tx.conn())
            .await?
        }
    };
    Ok((rows.iter().map(decode).collect::<Result<_, _>>()?, total))
}

/// A plant's events from `from` on, oldest first (at most `max`, the newest of them).
pub async fn plant_events_since(
    tx: &mut TenantTx,
    plant: Uuid,
    from: OffsetDateTime,
    max: i64,
) -> Result<Vec<WateringEvent>, sqlx::Error> {
    let sql = tx.sql(&format!(
        "SELECT * FROM (SELECT {COLUMNS} FROM tenant.watering_events e \
           JOIN tenant.watering_event_plants w ON w.event_id = e.id AND w.plant_id = $1 \
           WHERE e.occurred_at >= $2 ORDER BY e.occurred_at DESC, e.id DESC LIMIT $3) s \
         ORDER BY occurred_at, id"
    ));
    let rows = sqlx::query(sql)
        .bind(plant)
        .bind(from)
        .bind(max)
        .fetch_all(tx.conn())
        .await?;
    rows.iter().map(decode).collect()
}

/// A plant's newest `n` events, newest first.
pub async fn plant_last_events(
    tx: &mut TenantTx,
    plant: Uuid,
    n: i64,
) -> Result<Vec<WateringEvent>, sqlx::Error> {
    let sql = tx.sql(&format!(
        "SELECT {COLUMNS} FROM tenant.watering_events e \
         JOIN tenant.watering_event_plants w ON w.event_id = e.id AND w.plant_id = $1 \
         ORDER BY e.occurred_at DESC, e.id DESC LIMIT $2"
    ));
    let rows = sqlx::query(sql)
        .bind(plant)
        .bind(n)
        .fetch_all(tx.conn())
        .await?;
    rows.iter().map(decode).collect()
}

/// (id, archived) of the named plants that exist.
pub async fn plants(tx: &mut TenantTx, ids: &[Uuid]) -> Result<Vec<(Uuid, bool)>, sqlx::Error> {
    sqlx::query_as(
        tx.sql("SELECT id, archived_at IS NOT NULL FROM tenant.plants WHERE id = ANY($1)"),
    )
    .bind(ids)
    .fetch_all(tx.conn())
    .await
}

pub async fn run_exists(tx: &mut TenantTx, id: Uuid) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar(tx.sql("SELECT EXISTS (SELECT 1 FROM tenant.planting_runs WHERE id = $1)"))
        .bind(id)
        .fetch_one(tx.conn())
        .await
}

/// The run's live (not archived) plants.
pub async fn run_plants(tx: &mut TenantTx, run: Uuid) -> Result<Vec<Uuid>, sqlx::Error> {
    sqlx::query_scalar(tx.sql(
        "SELECT p.id FROM tenant.planting_run_plants r JOIN tenant.plants p ON p.id = r.plant_id \
         WHERE r.run_id = $1 AND p.archived_at IS NULL ORDER BY p.id",
    ))
    .bind(run)
    .fetch_all(tx.conn())
    .await
}

/// The tank's current volume and last fill, locked until the transaction ends; `None`: no such
/// tank.
pub async fn lock_tank(
    tx: &mut TenantTx,
    id: Uuid,
) -> Result<Option<(Option<f64>, Option<Uuid>)>, sqlx::Error> {
    sqlx::query_as(tx.sql(
        "SELECT t.current_volume_liters, (SELECT f.id FROM tenant.tank_fills f \
           WHERE f.tank_id = t.id ORDER BY f.filled_at DESC, f.id DESC LIMIT 1) \
         FROM tenant.tanks t WHERE t.id = $1 FOR UPDATE",
    ))
    .bind(id)
    .fetch_optional(tx.conn())
    .await
}

/// Whether a tank fill of this garden has the id (a feeding may name the fill it drew from).
pub async fn fill_exists(tx: &mut TenantTx, id: Uuid) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar(tx.sql("SELECT EXISTS (SELECT 1 FROM tenant.tank_fills WHERE id = $1)"))
        .bind(id)
        .fetch_one(tx.conn())
        .await
}

pub async fn set_tank_volume(tx: &mut TenantTx, id: Uuid, volume: f64) -> Result<(), sqlx::Error> {
    sqlx::query(tx.sql(
        "UPDATE tenant.tanks SET current_volume_liters = $2, updated_at = now() WHERE id = $1",
    ))
    .bind(id)
    .bind(volume)
    .execute(tx.conn())
    .await?;
    Ok(())
}

/// The plant as its diagnostics show it; `None`: no such plant.
pub async fn diagnosed_plant(
    tx: &mut TenantTx,
    id: Uuid,
) -> Result<Option<DiagnosedPlant>, sqlx::Error> {
    let row = sqlx::query(tx.sql(
        "SELECT p.id, p.name, p.species_key, p.archived_at IS NOT NULL AS archived, \
         p.current_phase_key, h.phase_name, h.entered_at, r.run_id \
         FROM tenant.plants p \
         LEFT JOIN tenant.plant_phase_history h ON h.plant_id = p.id AND h.exited_at IS NULL \
         LEFT JOIN tenant.planting_run_plants r ON r.plant_id = p.id \
         WHERE p.id = $1",
    ))
    .bind(id)
    .fetch_optional(tx.conn())
    .await?;
    row.map(|r| {
        Ok(DiagnosedPlant {
            plant_key: r.try_get("id")?,
            name: r.try_get("name")?,
            species_key: r.try_get("species_key")?,
            archived: r.try_get("archived")?,
            phase_key: r.try_get("current_phase_key")?,
            phase_name: r.try_get("phase_name")?,
            phase_entered_at: r.try_get("entered_at")?,
            run_key: r.try_get("run_id")?,
        })
    })
    .transpose()
}
