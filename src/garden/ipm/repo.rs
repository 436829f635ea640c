//! SQL of inspections, treatment applications and the safety intervals they start. Tenant
//! tables are written `tenant.<table>` and rendered by `TenantTx::sql`.

use serde_json::Value;
use sqlx::Row;
use sqlx::postgres::PgRow;
use time::{Date, Duration, OffsetDateTime};
use uuid::Uuid;

use super::model::{Application, Finding, Inspection, TouchedPlant};
use crate::rules::karenz::{self, SafetyDays, TimeZone};
use crate::tenancy::TenantTx;
use crate::values::page::PageRequest;

// ---------- plants and locations ----------

/// A plant as the IPM and harvest rules need it (locked when asked).
#[derive(Debug, Clone)]
pub struct PlantFacts {
    pub id: Uuid,
    pub name: String,
    pub species_key: String,
    pub location_id: Option<Uuid>,
    pub archived: bool,
    pub current_phase_key: Option<String>,
    pub current_phase_started_at: Option<OffsetDateTime>,
    pub run_id: Option<Uuid>,
}

const PLANT: &str = "SELECT p.id, p.name, p.species_key, p.location_id, p.archived_at IS NOT NULL AS archived, \
    p.current_phase_key, p.current_phase_started_at, rp.run_id \
    FROM tenant.plants p LEFT JOIN tenant.planting_run_plants rp ON rp.plant_id = p.id";

fn plant_of(r: &PgRow) -> Result<PlantFacts, sqlx::Error> {
    Ok(PlantFacts {
        id: r.try_get("id")?,
        name: r.try_get("name")?,
        species_key: r.try_get("species_key")?,
        location_id: r.try_get("location_id")?,
        archived: r.try_get("archived")?,
        current_phase_key: r.try_get("current_phase_key")?,
        current_phase_started_at: r.try_get("current_phase_started_at")?,
        run_id: r.try_get("run_id")?,
    })
}

/// The plants of `ids` that exist in this garden, locked (`FOR UPDATE OF p`) when `lock`, in
/// key order (a fixed order: two writers never wait on each other crosswise).
pub async fn plants(
    tx: &mut TenantTx,
    ids: &[Uuid],
    lock: bool,
) -> Result<Vec<PlantFacts>, sqlx::Error> {
    let sql = format!(
        "{PLANT} WHERE p.id = ANY($1) ORDER BY p.id{}",
        if lock { " FOR UPDATE OF p" } else { "" }
    );
    let rows = sqlx::query(tx.sql(&sql))
        .bind(ids)
        .fetch_all(tx.conn())
        .await?;
    rows.iter().map(plant_of).collect()
}

/// Live plants at a location, locked, in key order.
pub async fn live_plants_at(
    tx: &mut TenantTx,
    location: Uuid,
) -> Result<Vec<PlantFacts>, sqlx::Error> {
    let sql = format!(
        "{PLANT} WHERE p.location_id = $1 AND p.archived_at IS NULL ORDER BY p.id FOR UPDATE OF p"
    );
    let rows = sqlx::query(tx.sql(&sql))
        .bind(location)
        .fetch_all(tx.conn())
        .await?;
    rows.iter().map(plant_of).collect()
}

/// Live plants, oldest first (one page) and how many there are.
pub async fn live_plants_page(
    tx: &mut TenantTx,
    page: PageRequest,
) -> Result<(Vec<PlantFacts>, i64), sqlx::Error> {
    let sql = format!(
        "{PLANT} WHERE p.archived_at IS NULL ORDER BY p.created_at, p.id LIMIT $1 OFFSET $2"
    );
    let rows = sqlx::query(tx.sql(&sql))
        .bind(page.limit)
        .bind(page.skip)
        .fetch_all(tx.conn())
        .await?;
    let total: i64 =
        sqlx::query_scalar(tx.sql("SELECT count(*) FROM tenant.plants WHERE archived_at IS NULL"))
            .fetch_one(tx.conn())
            .await?;
    Ok((rows.iter().map(plant_of).collect::<Result<_, _>>()?, total))
}

/// Live plants with a ripeness observation or a safety interval that may still run (applied
/// within its days and two more: the caller judges the exact day), oldest first (one page):
/// the only plants that can be ready to harvest, near it, or protected. One statement over
/// the two indexes by plant.
pub async fn watched_plants_page(
    tx: &mut TenantTx,
    page: PageRequest,
) -> Result<Vec<PlantFacts>, sqlx::Error> {
    let sql = format!(
        "{PLANT} WHERE p.archived_at IS NULL \
           AND (EXISTS (SELECT 1 FROM tenant.harvest_observations o WHERE o.plant_id = p.id) \
             OR EXISTS (SELECT 1 FROM tenant.ipm_application_plants ap \
                        JOIN tenant.ipm_applications a ON a.id = ap.application_id \
                        WHERE ap.plant_id = p.id AND ap.safety_interval_days > 0 \
                          AND a.applied_at >= now() \
                              - make_interval(hours => 24 * (ap.safety_interval_days + 2)))) \
         ORDER BY p.created_at, p.id LIMIT $1 OFFSET $2"
    );
    let rows = sqlx::query(tx.sql(&sql))
        .bind(page.limit)
        .bind(page.skip)
        .fetch_all(tx.conn())
        .await?;
    rows.iter().map(plant_of).collect()
}

pub async fn location_exists(tx: &mut TenantTx, id: Uuid) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar(tx.sql("SELECT EXISTS (SELECT 1 FROM tenant.locations WHERE id = $1)"))
        .bind(id)
        .fetch_one(tx.conn())
        .await
}

// ---------- inspections ----------

const INSPECTION: &str = "SELECT id, plant_id, location_id, inspector, inspected_at, pressure_level, \
    symptoms_observed, findings, detected_pest_keys, detected_disease_keys, photo_refs, notes, \
    created_by, created_at FROM tenant.ipm_inspections";

fn inspection_of(r: &PgRow) -> Result<Inspection, sqlx::Error> {
    let pressure: String = r.try_get("pressure_level")?;
    let findings: Value = r.try_get("findings")?;
    Ok(Inspection {
        key: r.try_get("id")?,
        plant_key: r.try_get("plant_id")?,
        location_key: r.try_get("location_id")?,
        inspector: r.try_get("inspector")?,
        inspected_at: r.try_get("inspected_at")?,
        pressure_level: serde_json::from_value(Value::String(pressure))
            .map_err(|e| sqlx::Error::Decode(e.into()))?,
        symptoms_observed: r.try_get("symptoms_observed")?,
        detected_pest_keys: r.try_get("detected_pest_keys")?,
        detected_disease_keys: r.try_get("detected_disease_keys")?,
        findings: serde_json::from_value::<Vec<Finding>>(findings)
            .map_err(|e| sqlx::Error::Decode(e.into()))?,
        photo_refs: r.try_get("photo_refs")?,
        notes: r.try_get("notes")?,
        created_by: r.try_get("created_by")?,
        created_at: r.try_get("created_at")?,
    })
}

pub async fn insert_inspection(tx: &mut TenantTx, i: &Inspection) -> Result<(), sqlx::Error> {
    let pressure = serde_json::to_value(i.pressure_level)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| "none".to_owned());
    let findings = serde_json::to_value(&i.findings).unwrap_or(Value::Array(Vec::new()));
    sqlx::query(tx.sql(
        "INSERT INTO tenant.ipm_inspections (id, plant_id, location_id, inspector, inspected_at, \
         pressure_level, symptoms_observed, findings, detected_pest_keys, detected_disease_keys, \
         photo_refs, notes, created_by, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
    ))
    .bind(i.key)
    .bind(i.plant_key)
    .bind(i.location_key)
    .bind(&i.inspector)
    .bind(i.inspected_at)
    .bind(pressure)
    .bind(&i.symptoms_observed)
    .bind(findings)
    .bind(&i.detected_pest_keys)
    .bind(&i.detected_disease_keys)
    .bind(&i.photo_refs)
    .bind(&i.notes)
    .bind(&i.created_by)
    .bind(i.created_at)
    .execute(tx.conn())
    .await?;
    Ok(())
}

pub async fn get_inspection(
    tx: &mut TenantTx,
    id: Uuid,
) -> Result<Option<Inspection>, sqlx::Error> {
    let row = sqlx::query(tx.sql(&format!("{INSPECTION} WHERE id = $1")))
        .bind(id)
        .fetch_optional(tx.conn())
        .await?;
    row.as_ref().map(inspection_of).transpose()
}

/// Inspections newest first; `plant` also finds the inspections of the location the plant
/// stands at now.
pub async fn list_inspections(
    tx: &mut TenantTx,
    plant: Option<Uuid>,
    location: Option<Uuid>,
    page: PageRequest,
) -> Result<(Vec<Inspection>, i64), sqlx::Error> {
    let filter = "WHERE ($1::uuid IS NULL OR plant_id = $1 \
          OR location_id = (SELECT location_id FROM tenant.plants WHERE id = $1)) \
          AND ($2::uuid IS NULL OR location_id = $2)";
    let rows = sqlx::query(tx.sql(&format!(
        "{INSPECTION} {filter} ORDER BY inspected_at DESC, id LIMIT $3 OFFSET $4"
    )))
    .bind(plant)
    .bind(location)
    .bind(page.limit)
    .bind(page.skip)
    .fetch_all(tx.conn())
    .await?;
    let total: i64 = sqlx::query_scalar(tx.sql(&format!(
        "SELECT count(*) FROM tenant.ipm_inspections {filter}"
    )))
    .bind(plant)
    .bind(location)
    .fetch_one(tx.conn())
    .await?;
    Ok((
        rows.iter().map(inspection_of).collect::<Result<_, _>>()?,
        total,
    ))
}

// ---------- applications ----------

/// The first instant of the local day `day` in `tz`, widened by a day where the zone database
/// cannot place it: a bound for SQL that the exact rule then narrows.
fn start_of(day: Date, tz: &TimeZone) -> OffsetDateTime {
    karenz::day_start(day, tz).unwrap_or_else(|| day.midnight().assume_utc() - Duration::DAY)
}

/// Earlier applications (the garden's local day and resistance classes) of the plants that
/// count under any of `classes`, from the local day `since` on. `None` for both: every live
/// plant and every class (the garden's resistance pressure).
pub async fn class_days(
    tx: &mut TenantTx,
    plants: Option<&[Uuid]>,
    classes: Option<&[String]>,
    since: Date,
    tz: &TimeZone,
) -> Result<Vec<(Uuid, Date, Vec<String>)>, sqlx::Error> {
    let rows = sqlx::query(tx.sql(
        "SELECT ap.plant_id, a.applied_at, ap.resistance_classes \
         FROM tenant.ipm_application_plants ap \
         JOIN tenant.ipm_applications a ON a.id = ap.application_id \
         WHERE ($1::uuid[] IS NULL OR ap.plant_id = ANY($1)) \
           AND ($2::text[] IS NULL OR ap.resistance_classes && $2) AND a.applied_at >= $3 \
           AND ($1::uuid[] IS NOT NULL OR EXISTS (SELECT 1 FROM tenant.plants p \
                WHERE p.id = ap.plant_id AND p.archived_at IS NULL))",
    ))
    .bind(plants)
    .bind(classes)
    .bind(start_of(since, tz))
    .fetch_all(tx.conn())
    .await?;
    let mut out = Vec::with_capacity(rows.len());
    for r in &rows {
        let day = karenz::local_day(r.try_get("applied_at")?, tz);
        if day >= since {
            out.push((
                r.try_get("plant_id")?,
                day,
                r.try_get("resistance_classes")?,
            ));
        }
    }
    Ok(out)
}

/// Records an application and, per touched plant, its interval and resistance classes.
pub async fn insert_application(
    tx: &mut TenantTx,
    a: &Application,
    class: Option<&str>,
    classes: &[String],
) -> Result<(), sqlx::Error> {
    sqlx::query(tx.sql(
        "INSERT INTO tenant.ipm_applications (id, treatment_key, treatment_name, treatment_type, \
         active_ingredient, ingredient_class, safety_interval_days, location_id, applied_at, \
         dose, dose_unit, water_volume_liters, method, applied_by, notes, \
         resistance_acknowledged, resistance_count, created_by, created_at, resistance_groups, \
         authorisation_number, bbch_code, treated_area_m2, target_pest_keys, target_disease_keys) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, \
         $20, $21, $22, $23, $24, $25)",
    ))
    .bind(a.key)
    .bind(&a.treatment_key)
    .bind(&a.treatment_name)
    .bind(&a.treatment_type)
    .bind(&a.active_ingredient)
    .bind(class)
    .bind(a.safety_interval_days)
    .bind(a.location_key)
    .bind(a.applied_at)
    .bind(a.dose)
    .bind(&a.dose_unit)
    .bind(a.water_volume_liters)
    .bind(&a.method)
    .bind(&a.applied_by)
    .bind(&a.notes)
    .bind(a.resistance_acknowledged)
    .bind(a.resistance_count)
    .bind(&a.created_by)
    .bind(a.created_at)
    .bind(&a.resistance_groups)
    .bind(&a.authorisation_number)
    .bind(&a.bbch_code)
    .bind(a.treated_area_m2)
    .bind(&a.target_pest_keys)
    .bind(&a.target_disease_keys)
    .execute(tx.conn())
    .await?;
    let plants: Vec<Uuid> = a.plants.iter().map(|p| p.plant_key).collect();
    let days: Vec<i32> = a.plants.iter().map(|p| p.safety_interval_days).collect();
    let sources: Vec<Option<String>> = a.plants.iter().map(|p| p.interval_source.clone()).collect();
    let eppo: Vec<Option<String>> = a.plants.iter().map(|p| p.eppo_code.clone()).collect();
    let stages: Vec<Option<i16>> = a.plants.iter().map(|p| p.bbch_principal).collect();
    sqlx::query(tx.sql(
        "INSERT INTO tenant.ipm_application_plants (application_id, plant_id, \
         ingredient_class, safety_interval_days, interval_source, resistance_classes, eppo_code, \
         bbch_principal) \
         SELECT $1, x.plant, $3, x.days, x.source, $6, x.eppo, x.stage \
         FROM unnest($2::uuid[], $4::int[], $5::text[], $7::text[], $8::int2[]) \
           AS x (plant, days, source, eppo, stage)",
    ))
    .bind(a.key)
    .bind(&plants)
    .bind(class)
    .bind(&days)
    .bind(&sources)
    .bind(classes)
    .bind(&eppo)
    .bind(&stages)
    .execute(tx.conn())
    .await?;
    Ok(())
}

const APPLICATION: &str = "SELECT a.id, a.treatment_key, a.treatment_name, a.treatment_type, \
    a.active_ingredient, a.safety_interval_days, a.location_id, a.applied_at, a.dose, a.dose_unit, \
    a.water_volume_liters, a.method, a.applied_by, a.notes, a.resistance_acknowledged, \
    a.resistance_count, a.created_by, a.created_at, a.resistance_groups, a.authorisation_number, \
    a.bbch_code, a.treated_area_m2, a.target_pest_keys, a.target_disease_keys, \
    coalesce((SELECT jsonb_agg(jsonb_build_object('plant_key', ap.plant_id, \
      'safety_interval_days', ap.safety_interval_days, 'interval_source', ap.interval_source, \
      'eppo_code', ap.eppo_code, 'bbch_principal', ap.bbch_principal) \
      ORDER BY ap.plant_id) FROM tenant.ipm_application_plants ap \
      WHERE ap.application_id = a.id), '[]') AS touched \
    FROM tenant.ipm_applications a";

/// A touched plant as the application query aggregates it.
#[derive(serde::Deserialize)]
struct TouchedRow {
    plant_key: Uuid,
    safety_interval_days: i32,
    interval_source: Option<String>,
    eppo_code: Option<String>,
    bbch_principal: Option<i16>,
}

/// An application read back, its days counted in the garden's zone `tz` now.
fn application_of(r: &PgRow, tz: &TimeZone) -> Result<Application, sqlx::Error> {
    let touched: Value = r.try_get("touched")?;
    let touched: Vec<TouchedRow> =
        serde_json::from_value(touched).map_err(|e| sqlx::Error::Decode(e.into()))?;
    let applied_at: OffsetDateTime = r.try_get("applied_at")?;
    let day = karenz::local_day(applied_at, tz);
    Ok(Application {
        key: r.try_get("id")?,
        treatment_key: r.try_get("treatment_key")?,
        treatment_name: r.try_get("treatment_name")?,
        treatment_type: r.try_get("treatment_type")?,
        active_ingredient: r.try_get("active_ingredient")?,
        safety_interval_days: r.try_get("safety_interval_days")?,
        resistance_groups: r.try_get("resistance_groups")?,
        location_key: r.try_get("location_id")?,
        applied_at,
        dose: r.try_get("dose")?,
        dose_unit: r.try_get("dose_unit")?,
        water_volume_liters: r.try_get("water_volume_liters")?,
        method: r.try_get("method")?,
        applied_by: r.try_get("applied_by")?,
        notes: r.try_get("notes")?,
        resistance_acknowledged: r.try_get("resistance_acknowledged")?,
        resistance_count: r.try_get("resistance_count")?,
        authorisation_number: r.try_get("authorisation_number")?,
        bbch_code: r.try_get("bbch_code")?,
        treated_area_m2: r.try_get("treated_area_m2")?,
        target_pest_keys: r.try_get("target_pest_keys")?,
        target_disease_keys: r.try_get("target_disease_keys")?,
        plants: touched
            .into_iter()
            .map(|t| {
                TouchedPlant::new(t.plant_key, day, t.safety_interval_days, t.interval_source)
                    .with_crop(t.eppo_code, t.bbch_principal)
            })
            .collect(),
        created_by: r.try_get("created_by")?,
        created_at: r.try_get("created_at")?,
        warnings: Vec::new(),
    })
}

pub async fn get_application(
    tx: &mut TenantTx,
    id: Uuid,
    tz: &TimeZone,
) -> Result<Option<Application>, sqlx::Error> {
    let row = sqlx::query(tx.sql(&format!("{APPLICATION} WHERE a.id = $1")))
        .bind(id)
        .fetch_optional(tx.conn())
        .await?;
    row.as_ref().map(|r| application_of(r, tz)).transpose()
}

/// Applications newest first, optionally those that touched one plant.
pub async fn list_applications(
    tx: &mut TenantTx,
    plant: Option<Uuid>,
    page: PageRequest,
    tz: &TimeZone,
) -> Result<(Vec<Application>, i64), sqlx::Error> {
    let filter = "WHERE ($1::uuid IS NULL OR EXISTS (SELECT 1 FROM tenant.ipm_application_plants x \
                  WHERE x.application_id = a.id AND x.plant_id = $1))";
    let rows = sqlx::query(tx.sql(&format!(
        "{APPLICATION} {filter} ORDER BY a.applied_at DESC, a.id LIMIT $2 OFFSET $3"
    )))
    .bind(plant)
    .bind(page.limit)
    .bind(page.skip)
    .fetch_all(tx.conn())
    .await?;
    let total: i64 = sqlx::query_scalar(tx.sql(&format!(
        "SELECT count(*) FROM tenant.ipm_applications a {filter}"
    )))
    .bind(plant)
    .fetch_one(tx.conn())
    .await?;
    Ok((
        rows.iter()
            .map(|r| application_of(r, tz))
            .collect::<Result<_, _>>()?,
        total,
    ))
}

/// A safety interval of a plant: one application with an interval above 0 days, its days
/// counted in the garden's zone when it was read.
#[derive(Debug, Clone)]
pub struct Interval {
    pub application_id: Uuid,
    pub plant_id: Uuid,
    pub plant_name: String,
    pub treatment_key: String,
    pub treatment_name: String,
    pub active_ingredient: Option<String>,
    /// The interval for this plant's crop, and where it comes from.
    pub safety_interval_days: i32,
    pub interval_source: Option<String>,
    pub applied_at: OffsetDateTime,
    /// The local day of `applied_at` (the first blocked day) ...
    pub applied_on: Date,
    /// ... and the first local day a harvest is allowed again.
    pub safe_on: Date,
}

impl Interval {
    pub fn days(&self) -> SafetyDays {
        SafetyDays::from_day(self.applied_on, i64::from(self.safety_interval_days))
    }
}

// The stored rows keep the instant and the days, not the days' dates: those depend on the
// garden's zone and are counted by `rules::karenz` whenever they are read. The SQL bounds
// below only narrow the rows (a local day starts within a day of the UTC bound, daylight
// saving included); the rule decides.
const INTERVAL: &str = "SELECT ap.application_id, ap.plant_id, p.name AS plant_name, a.treatment_key, \
    a.treatment_name, a.active_ingredient, ap.safety_interval_days, ap.interval_source, a.applied_at \
    FROM tenant.ipm_application_plants ap \
    JOIN tenant.ipm_applications a ON a.id = ap.application_id \
    JOIN tenant.plants p ON p.id = ap.plant_id";

fn interval_of(r: &PgRow, tz: &TimeZone) -> Result<Interval, sqlx::Error> {
    let applied_at: OffsetDateTime = r.try_get("applied_at")?;
    let days: i32 = r.try_get("safety_interval_days")?;
    let s = SafetyDays::of(applied_at, i64::from(days), tz);
    Ok(Interval {
        application_id: r.try_get("application_id")?,
        plant_id: r.try_get("plant_id")?,
        plant_name: r.try_get("plant_name")?,
        treatment_key: r.try_get("treatment_key")?,
        treatment_name: r.try_get("treatment_name")?,
        active_ingredient: r.try_get("active_ingredient")?,
        safety_interval_days: days,
        interval_source: r.try_get("interval_source")?,
        applied_at,
        applied_on: s.applied_on,
        safe_on: s.safe_on,
    })
}

/// The intervals of the plants that still run on the local day `day` or later
/// (`safe_on > day`), earliest end first.
pub async fn intervals_after(
    tx: &mut TenantTx,
    plants: &[Uuid],
    day: Date,
    tz: &TimeZone,
) -> Result<Vec<Interval>, sqlx::Error> {
    // safe_on > day  <=>  applied_at >= start of (day - days + 1); days + 1 before the start
    // of `day` bounds it.
    let rows = sqlx::query(tx.sql(&format!(
        "{INTERVAL} WHERE ap.plant_id = ANY($1) AND ap.safety_interval_days > 0 \
         AND a.applied_at >= $2 - make_interval(hours => 24 * (ap.safety_interval_days + 1))"
    )))
    .bind(plants)
    .bind(start_of(day, tz))
    .fetch_all(tx.conn())
    .await?;
    let mut out = Vec::with_capacity(rows.len());
    for r in &rows {
        let i = interval_of(r, tz)?;
        if i.days().runs_after(day) {
            out.push(i);
        }
    }
    out.sort_by(|a, b| {
        (a.safe_on, a.applied_on, a.application_id).cmp(&(
            b.safe_on,
            b.applied_on,
            b.application_id,
        ))
    });
    Ok(out)
}

/// Intervals (above 0 days) that overlap the local days `from..=to`: for the calendar.
pub async fn intervals_overlapping(
    tx: &mut TenantTx,
    from: Date,
    to: Date,
    tz: &TimeZone,
) -> Result<Vec<Interval>, sqlx::Error> {
    let after = to.next_day().unwrap_or(to);
    let rows = sqlx::query(tx.sql(&format!(
        "{INTERVAL} WHERE ap.safety_interval_days > 0 AND a.applied_at < $2 \
         AND a.applied_at >= $1 - make_interval(hours => 24 * (ap.safety_interval_days + 1))"
    )))
    .bind(start_of(from, tz))
    .bind(start_of(after, tz) + Duration::DAY)
    .fetch_all(tx.conn())
    .await?;
    let mut out = Vec::with_capacity(rows.len());
    for r in &rows {
        let i = interval_of(r, tz)?;
        if i.days().overlaps(from, to) {
            out.push(i);
        }
    }
    out.sort_by(|a, b| {
        (a.applied_on, a.plant_id, a.application_id).cmp(&(
            b.applied_on,
            b.plant_id,
            b.application_id,
        ))
    });
    Ok(out)
}

/// An application as the plant-protection record reads it.
pub struct RecordRow {
    pub id: Uuid,
    pub applied_at: OffsetDateTime,
    pub treatment_name: String,
    pub authorisation_number: Option<String>,
    pub active_ingredient: Option<String>,
    pub dose: Option<f64>,
    pub dose_unit: Option<String>,
    pub water_volume_liters: Option<f64>,
    pub treated_area_m2: Option<f64>,
    pub method: String,
    pub applied_by: String,
    pub notes: Option<String>,
    pub safety_interval_days: i32,
    pub bbch_code: Option<String>,
    pub target_pest_keys: Vec<String>,
    pub target_disease_keys: Vec<String>,
    pub eppo_codes: Vec<String>,
    pub stages: Vec<i16>,
    pub species_keys: Vec<String>,
    pub places: Vec<String>,
    pub plant_count: i64,
}

/// Applications made in `[start, end)`, oldest first, with their plants' crops, stages and
/// places aggregated.
pub async fn record_rows(
    tx: &mut TenantTx,
    start: OffsetDateTime,
    end: OffsetDateTime,
) -> Result<Vec<RecordRow>, sqlx::Error> {
    let rows = sqlx::query(tx.sql(
        "SELECT a.id, a.applied_at, a.treatment_name, a.authorisation_number, a.active_ingredient, \
           a.dose, a.dose_unit, a.water_volume_liters, a.treated_area_m2, a.method, a.applied_by, \
           a.notes, a.safety_interval_days, a.bbch_code, a.target_pest_keys, a.target_disease_keys, \
           coalesce((SELECT array_agg(DISTINCT ap.eppo_code ORDER BY ap.eppo_code) \
             FROM tenant.ipm_application_plants ap \
             WHERE ap.application_id = a.id AND ap.eppo_code IS NOT NULL), '{}') AS eppo_codes, \
           coalesce((SELECT array_agg(DISTINCT ap.bbch_principal ORDER BY ap.bbch_principal) \
             FROM tenant.ipm_application_plants ap \
             WHERE ap.application_id = a.id AND ap.bbch_principal IS NOT NULL), '{}') AS stages, \
           coalesce((SELECT array_agg(DISTINCT p.species_key ORDER BY p.species_key) \
             FROM tenant.ipm_application_plants ap JOIN tenant.plants p ON p.id = ap.plant_id \
             WHERE ap.application_id = a.id), '{}') AS species_keys, \
           CASE WHEN l.name IS NOT NULL THEN ARRAY[l.name] ELSE \
             coalesce((SELECT array_agg(DISTINCT pl.name ORDER BY pl.name) \
               FROM tenant.ipm_application_plants ap JOIN tenant.plants p ON p.id = ap.plant_id \
               JOIN tenant.locations pl ON pl.id = p.location_id \
               WHERE ap.application_id = a.id), '{}') END AS places, \
           (SELECT count(*) FROM tenant.ipm_application_plants ap \
             WHERE ap.application_id = a.id) AS plant_count \
         FROM tenant.ipm_applications a LEFT JOIN tenant.locations l ON l.id = a.location_id \
         WHERE a.applied_at >= $1 AND a.applied_at < $2 ORDER BY a.applied_at, a.id",
    ))
    .bind(start)
    .bind(end)
    .fetch_all(tx.conn())
    .await?;
    rows.iter()
        .map(|r| {
            Ok(RecordRow {
                id: r.try_get("id")?,
                applied_at: r.try_get("applied_at")?,
                treatment_name: r.try_get("treatment_name")?,
                authorisation_number: r.try_get("authorisation_number")?,
                active_ingredient: r.try_get("active_ingredient")?,
                dose: r.try_get("dose")?,
                dose_unit: r.try_get("dose_unit")?,
                water_volume_liters: r.try_get("water_volume_liters")?,
                treated_area_m2: r.try_get("treated_area_m2")?,
                method: r.try_get("method")?,
                applied_by: r.try_get("applied_by")?,
                notes: r.try_get("notes")?,
                safety_interval_days: r.try_get("safety_interval_days")?,
                bbch_code: r.try_get("bbch_code")?,
                target_pest_keys: r.try_get("target_pest_keys")?,
                target_disease_keys: r.try_get("target_disease_keys")?,
                eppo_codes: r.try_get("eppo_codes")?,
                stages: r.try_get("stages")?,
                species_keys: r.try_get("species_keys")?,
                places: r.try_get("places")?,
                plant_count: r.try_get("plant_count")?,
            })
        })
        .collect()
}
