//! SQL of harvest observations, batches and yields.

use serde_json::Value;
use sqlx::Row;
use sqlx::postgres::PgRow;
use time::Date;
use uuid::Uuid;

use super::model::{HarvestBatch, Observation};
use crate::tenancy::TenantTx;
use crate::values::page::PageRequest;

fn enum_of<T: serde::de::DeserializeOwned>(s: String) -> Result<T, sqlx::Error> {
    serde_json::from_value(Value::String(s)).map_err(|e| sqlx::Error::Decode(e.into()))
}

fn enum_str<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

pub async fn insert_observation(
    tx: &mut TenantTx,
    o: &Observation,
    by: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(tx.sql(
        "INSERT INTO tenant.harvest_observations (id, plant_id, indicator_type, ripeness_assessment, \
         reliability_score, days_to_harvest_estimate, observed_at, notes, created_by) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
    ))
    .bind(o.key)
    .bind(o.plant_key)
    .bind(enum_str(&o.indicator_type))
    .bind(enum_str(&o.ripeness_assessment))
    .bind(o.reliability_score)
    .bind(o.days_to_harvest_estimate.and_then(|d| i32::try_from(d).ok()))
    .bind(o.observed_at)
    .bind(&o.notes)
    .bind(by)
    .execute(tx.conn())
    .await?;
    Ok(())
}

/// The latest observation per plant and indicator, for the plants given.
pub async fn latest_observations(
    tx: &mut TenantTx,
    plants: &[Uuid],
) -> Result<Vec<Observation>, sqlx::Error> {
    let rows = sqlx::query(tx.sql(
        "SELECT DISTINCT ON (plant_id, indicator_type) id, plant_id, indicator_type, ripeness_assessment, \
         reliability_score, days_to_harvest_estimate, observed_at, notes \
         FROM tenant.harvest_observations WHERE plant_id = ANY($1) \
         ORDER BY plant_id, indicator_type, observed_at DESC, id DESC",
    ))
    .bind(plants)
    .fetch_all(tx.conn())
    .await?;
    rows.iter()
        .map(|r| {
            Ok(Observation {
                key: r.try_get("id")?,
                plant_key: r.try_get("plant_id")?,
                indicator_type: enum_of(r.try_get("indicator_type")?)?,
                ripeness_assessment: enum_of(r.try_get("ripeness_assessment")?)?,
                reliability_score: r.try_get("reliability_score")?,
                days_to_harvest_estimate: r
                    .try_get::<Option<i32>, _>("days_to_harvest_estimate")?
                    .map(i64::from),
                observed_at: r.try_get("observed_at")?,
                notes: r.try_get("notes")?,
            })
        })
        .collect()
}

const BATCH: &str = "SELECT id, plant_id, run_id, label, harvest_date, harvest_type, wet_weight_g, \
    estimated_dry_weight_g, actual_dry_weight_g, appearance_score, aroma_score, color_score, defects, \
    quality_score, quality_grade, harvester, notes, created_at FROM tenant.harvest_batches";

fn batch_of(r: &PgRow) -> Result<HarvestBatch, sqlx::Error> {
    let date: Date = r.try_get("harvest_date")?;
    let grade: Option<String> = r.try_get("quality_grade")?;
    Ok(HarvestBatch {
        key: r.try_get("id")?,
        plant_key: r.try_get("plant_id")?,
        run_key: r.try_get("run_id")?,
        label: r.try_get("label")?,
        harvest_date: date.to_string(),
        harvest_type: enum_of(r.try_get("harvest_type")?)?,
        wet_weight_g: r.try_get("wet_weight_g")?,
        estimated_dry_weight_g: r.try_get("estimated_dry_weight_g")?,
        actual_dry_weight_g: r.try_get("actual_dry_weight_g")?,
        appearance_score: r.try_get("appearance_score")?,
        aroma_score: r.try_get("aroma_score")?,
        color_score: r.try_get("color_score")?,
        defects: r.try_get("defects")?,
        quality_score: r.try_get("quality_score")?,
        quality_grade: grade.map(enum_of).transpose()?,
        harvester: r.try_get("harvester")?,
        notes: r.try_get("notes")?,
        created_at: r.try_get("created_at")?,
        warnings: Vec::new(),
    })
}

pub async fn insert_batch(
    tx: &mut TenantTx,
    b: &HarvestBatch,
    date: Date,
) -> Result<(), sqlx::Error> {
    sqlx::query(tx.sql(
        "INSERT INTO tenant.harvest_batches (id, plant_id, run_id, label, harvest_date, harvest_type, \
         wet_weight_g, estimated_dry_weight_g, actual_dry_weight_g, appearance_score, aroma_score, \
         color_score, defects, quality_score, quality_grade, harvester, notes, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)",
    ))
    .bind(b.key)
    .bind(b.plant_key)
    .bind(b.run_key)
    .bind(&b.label)
    .bind(date)
    .bind(enum_str(&b.harvest_type))
    .bind(b.wet_weight_g)
    .bind(b.estimated_dry_weight_g)
    .bind(b.actual_dry_weight_g)
    .bind(b.appearance_score)
    .bind(b.aroma_score)
    .bind(b.color_score)
    .bind(&b.defects)
    .bind(b.quality_score)
    .bind(b.quality_grade.as_ref().map(enum_str))
    .bind(&b.harvester)
    .bind(&b.notes)
    .bind(b.created_at)
    .execute(tx.conn())
    .await?;
    Ok(())
}

pub async fn get_batch(tx: &mut TenantTx, id: Uuid) -> Result<Option<HarvestBatch>, sqlx::Error> {
    let row = sqlx::query(tx.sql(&format!("{BATCH} WHERE id = $1")))
        .bind(id)
        .fetch_optional(tx.conn())
        .await?;
    row.as_ref().map(batch_of).transpose()
}

/// Filters of the batch list and the yields.
#[derive(Debug, Clone, Copy, Default)]
pub struct BatchFilter {
    pub plant: Option<Uuid>,
    pub run: Option<Uuid>,
    pub from: Option<Date>,
    pub to: Option<Date>,
}

const FILTER: &str = "WHERE ($1::uuid IS NULL OR plant_id = $1) AND ($2::uuid IS NULL OR run_id = $2) \
    AND ($3::date IS NULL OR harvest_date >= $3) AND ($4::date IS NULL OR harvest_date <= $4)";

/// Batches newest harvest first.
pub async fn list_batches(
    tx: &mut TenantTx,
    f: BatchFilter,
    page: PageRequest,
) -> Result<(Vec<HarvestBatch>, i64), sqlx::Error> {
    let rows = sqlx::query(tx.sql(&format!(
        "{BATCH} {FILTER} ORDER BY harvest_date DESC, created_at DESC, id LIMIT $5 OFFSET $6"
    )))
    .bind(f.plant)
    .bind(f.run)
    .bind(f.from)
    .bind(f.to)
    .bind(page.limit)
    .bind(page.skip)
    .fetch_all(tx.conn())
    .await?;
    let total: i64 = sqlx::query_scalar(tx.sql(&format!(
        "SELECT count(*) FROM tenant.harvest_batches {FILTER}"
    )))
    .bind(f.plant)
    .bind(f.run)
    .bind(f.from)
    .bind(f.to)
    .fetch_one(tx.conn())
    .await?;
    Ok((rows.iter().map(batch_of).collect::<Result<_, _>>()?, total))
}

/// Sums of the batches a filter selects: (batches, wet, dry, first, last).
pub async fn sums(
    tx: &mut TenantTx,
    f: BatchFilter,
) -> Result<(i64, f64, f64, Option<Date>, Option<Date>), sqlx::Error> {
    let r = sqlx::query(tx.sql(&format!(
        "SELECT count(*) AS n, coalesce(sum(wet_weight_g), 0) AS wet, \
         coalesce(sum(coalesce(actual_dry_weight_g, estimated_dry_weight_g)), 0) AS dry, \
         min(harvest_date) AS first, max(harvest_date) AS last \
         FROM tenant.harvest_batches {FILTER}"
    )))
    .bind(f.plant)
    .bind(f.run)
    .bind(f.from)
    .bind(f.to)
    .fetch_one(tx.conn())
    .await?;
    Ok((
        r.try_get("n")?,
        r.try_get("wet")?,
        r.try_get("dry")?,
        r.try_get("first")?,
        r.try_get("last")?,
    ))
}

/// A run's name and its number of plants; `None` when the run is not in this garden.
pub async fn run_facts(tx: &mut TenantTx, run: Uuid) -> Result<Option<(String, i64)>, sqlx::Error> {
    let r = sqlx::query(tx.sql(
        "SELECT r.name, (SELECT count(*) FROM tenant.planting_run_plants x WHERE x.run_id = r.id) AS n \
         FROM tenant.planting_runs r WHERE r.id = $1",
    ))
    .bind(run)
    .fetch_optional(tx.conn())
    .await?;
    r.map(|r| Ok((r.try_get("name")?, r.try_get("n")?)))
        .transpose()
}

/// Batches harvested within `from..=to` with their plant's name: for the calendar.
pub async fn batches_between(
    tx: &mut TenantTx,
    from: Date,
    to: Date,
) -> Result<Vec<(HarvestBatch, String)>, sqlx::Error> {
    let rows = sqlx::query(tx.sql(
        "SELECT b.id, b.plant_id, b.run_id, b.label, b.harvest_date, b.harvest_type, b.wet_weight_g, \
         b.estimated_dry_weight_g, b.actual_dry_weight_g, b.appearance_score, b.aroma_score, b.color_score, \
         b.defects, b.quality_score, b.quality_grade, b.harvester, b.notes, b.created_at, p.name AS plant_name \
         FROM tenant.harvest_batches b JOIN tenant.plants p ON p.id = b.plant_id \
         WHERE b.harvest_date BETWEEN $1 AND $2 ORDER BY b.harvest_date, b.id",
    ))
    .bind(from)
    .bind(to)
    .fetch_all(tx.conn())
    .await?;
    rows.iter()
        .map(|r| Ok((batch_of(r)?, r.try_get("plant_name")?)))
        .collect()
}
