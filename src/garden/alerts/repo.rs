//! SQL of alerts, and the reads of one garden's scan (few statements whatever the garden's
//! size: sensors, their readings windows, the plants near them, the open alerts).

use serde_json::Value;
use sqlx::Row;
use sqlx::postgres::PgRow;
use time::OffsetDateTime;
use uuid::Uuid;

use super::model::{Alert, AlertFilter, AlertKind, AlertRange, AlertReading, AlertState};
use crate::tenancy::TenantTx;
use crate::values::page::PageRequest;

const COLUMNS: &str = "a.id, a.kind, a.plant_id, a.sensor_id, a.location_id, a.site_id, \
                       a.tank_id, a.metric, a.value, a.measured_at, a.range_min, a.range_max, \
                       a.range_source, a.detail, a.opened_at, a.resolved_at, \
                       p.name AS plant_name, s.name AS sensor_name";

const FROM: &str = "tenant.alerts a LEFT JOIN tenant.plants p ON p.id = a.plant_id \
                    LEFT JOIN tenant.sensors s ON s.id = a.sensor_id";

/// An alert with the names a person reads it by.
#[derive(Debug, Clone)]
pub struct Named {
    pub alert: Alert,
    pub plant_name: Option<String>,
    pub sensor_name: Option<String>,
}

fn decode(row: &PgRow) -> Result<Named, sqlx::Error> {
    let kind: String = row.try_get("kind")?;
    let value: Option<f64> = row.try_get("value")?;
    let measured_at: Option<OffsetDateTime> = row.try_get("measured_at")?;
    let source: Option<String> = row.try_get("range_source")?;
    let metric: String = row.try_get("metric")?;
    let resolved_at: Option<OffsetDateTime> = row.try_get("resolved_at")?;
    let range = source.map(|source| -> Result<AlertRange, sqlx::Error> {
        Ok(AlertRange {
            metric: metric.clone(),
            min: row.try_get("range_min")?,
            max: row.try_get("range_max")?,
            source,
        })
    });
    Ok(Named {
        alert: Alert {
            key: row.try_get("id")?,
            kind: AlertKind::parse(&kind)
                .ok_or_else(|| sqlx::Error::Decode(format!("unknown kind {kind:?}").into()))?,
            state: if resolved_at.is_some() {
                AlertState::Resolved
            } else {
                AlertState::Open
            },
            metric: metric.clone(),
            plant_key: row.try_get("plant_id")?,
            sensor_key: row.try_get("sensor_id")?,
            location_key: row.try_get("location_id")?,
            site_key: row.try_get("site_id")?,
            tank_key: row.try_get("tank_id")?,
            reading: match (value, measured_at) {
                (Some(value), Some(measured_at)) => Some(AlertReading { value, measured_at }),
                _ => None,
            },
            range: range.transpose()?,
            detail: row.try_get("detail")?,
            opened_at: row.try_get("opened_at")?,
            resolved_at,
        },
        plant_name: row.try_get("plant_name")?,
        sensor_name: row.try_get("sensor_name")?,
    })
}

/// One page of alerts: open ones first (newest first), then those resolved since
/// `resolved_since`; with the number matching (`None` past the end).
pub async fn list(
    tx: &mut TenantTx,
    filter: AlertFilter,
    resolved_since: OffsetDateTime,
    page: PageRequest,
) -> Result<(Vec<Named>, Option<i64>), sqlx::Error> {
    let sql = tx.sql(&format!(
        "SELECT {COLUMNS}, count(*) OVER () AS matched FROM {FROM} \
         WHERE (a.resolved_at IS NULL OR a.resolved_at >= $1) \
           AND ($2::text IS NULL OR ($2 = 'open') = (a.resolved_at IS NULL)) \
           AND ($3::text IS NULL OR a.kind = $3) \
         ORDER BY a.resolved_at IS NOT NULL, a.opened_at DESC, a.id DESC LIMIT $4 OFFSET $5"
    ));
    let rows = sqlx::query(sql)
        .bind(resolved_since)
        .bind(filter.state.map(AlertState::as_str))
        .bind(filter.kind.map(AlertKind::as_str))
        .bind(page.limit)
        .bind(page.skip)
        .fetch_all(tx.conn())
        .await?;
    let matched = match rows.first() {
        Some(r) => Some(r.try_get::<i64, _>("matched")?),
        None => None,
    };
    Ok((rows.iter().map(decode).collect::<Result<_, _>>()?, matched))
}

pub async fn count(
    tx: &mut TenantTx,
    filter: AlertFilter,
    resolved_since: OffsetDateTime,
) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(tx.sql(
        "SELECT count(*) FROM tenant.alerts a \
         WHERE (a.resolved_at IS NULL OR a.resolved_at >= $1) \
           AND ($2::text IS NULL OR ($2 = 'open') = (a.resolved_at IS NULL)) \
           AND ($3::text IS NULL OR a.kind = $3)",
    ))
    .bind(resolved_since)
    .bind(filter.state.map(AlertState::as_str))
    .bind(filter.kind.map(AlertKind::as_str))
    .fetch_one(tx.conn())
    .await
}

/// Open alerts concerning any of these plants, these sensors (alerts of no plant: a silent
/// sensor), or anything at these locations or sites (newest first, at most `limit`).
pub async fn open_around(
    tx: &mut TenantTx,
    plants: &[Uuid],
    sensors: &[Uuid],
    locations: &[Uuid],
    sites: &[Uuid],
    limit: i64,
) -> Result<Vec<Named>, sqlx::Error> {
    let sql = tx.sql(&format!(
        "SELECT {COLUMNS} FROM {FROM} WHERE a.resolved_at IS NULL \
           AND (a.plant_id = ANY($1) OR (a.plant_id IS NULL AND a.sensor_id = ANY($2)) \
                OR a.location_id = ANY($3) OR a.site_id = ANY($4)) \
         ORDER BY a.opened_at DESC, a.id DESC LIMIT $5"
    ));
    let rows = sqlx::query(sql)
        .bind(plants)
        .bind(sensors)
        .bind(locations)
        .bind(sites)
        .bind(limit)
        .fetch_all(tx.conn())
        .await?;
    rows.iter().map(decode).collect()
}

// ---------------------------------------------------------------------------------------------
// The scan's reads.

/// A sensor as the scan sees it.
#[derive(Debug, Clone)]
pub struct ScanSensor {
    pub id: Uuid,
    pub metric: String,
    pub location_id: Option<Uuid>,
    pub site_id: Option<Uuid>,
    pub tank_id: Option<Uuid>,
    /// The location whose plants it concerns: its own, or its tank's.
    pub plants_location: Option<Uuid>,
    pub expected_interval_minutes: Option<i64>,
    pub created_at: OffsetDateTime,
    pub latest: Option<OffsetDateTime>,
}

/// Every sensor with the instant of its latest reading (one index probe each).
pub async fn scan_sensors(tx: &mut TenantTx) -> Result<Vec<ScanSensor>, sqlx::Error> {
    let rows = sqlx::query(tx.sql(
        "SELECT s.id, s.metric, s.location_id, s.site_id, s.tank_id, \
                coalesce(s.location_id, t.location_id) AS plants_location, \
                s.expected_interval_minutes, s.created_at, \
                (SELECT max(r.measured_at) FROM tenant.sensor_readings r WHERE r.sensor_id = s.id) \
                  AS latest \
         FROM tenant.sensors s LEFT JOIN tenant.tanks t ON t.id = s.tank_id ORDER BY s.id",
    ))
    .fetch_all(tx.conn())
    .await?;
    rows.iter()
        .map(|r| {
            let interval: Option<i32> = r.try_get("expected_interval_minutes")?;
            Ok(ScanSensor {
                id: r.try_get("id")?,
                metric: r.try_get("metric")?,
                location_id: r.try_get("location_id")?,
                site_id: r.try_get("site_id")?,
                tank_id: r.try_get("tank_id")?,
                plants_location: r.try_get("plants_location")?,
                expected_interval_minutes: interval.map(i64::from),
                created_at: r.try_get("created_at")?,
                latest: r.try_get("latest")?,
            })
        })
        .collect()
}

/// The readings of each sensor since its own instant, oldest first, in one statement.
pub async fn windows(
    tx: &mut TenantTx,
    since: &[(Uuid, OffsetDateTime)],
) -> Result<Vec<(Uuid, OffsetDateTime, f64)>, sqlx::Error> {
    let (ids, ats): (Vec<Uuid>, Vec<OffsetDateTime>) = since.iter().copied().unzip();
    sqlx::query_as(tx.sql(
        "SELECT r.sensor_id, r.measured_at, r.value \
         FROM unnest($1::uuid[], $2::timestamptz[]) AS w(id, since) \
         JOIN tenant.sensor_readings r ON r.sensor_id = w.id AND r.measured_at >= w.since \
         ORDER BY r.sensor_id, r.measured_at",
    ))
    .bind(ids)
    .bind(ats)
    .fetch_all(tx.conn())
    .await
}

/// A live plant near sensors: where it stands and its current phase (fine name).
#[derive(Debug, Clone)]
pub struct ScanPlant {
    pub id: Uuid,
    pub location_id: Uuid,
    pub site_id: Uuid,
    pub phase_name: Option<String>,
    /// Its species (the crop whose own ranges apply, where it has any).
    pub species_key: String,
}

/// The live plants at these locations or at locations of these sites.
pub async fn plants_near(
    tx: &mut TenantTx,
    locations: &[Uuid],
    sites: &[Uuid],
) -> Result<Vec<ScanPlant>, sqlx::Error> {
    let rows: Vec<(Uuid, Uuid, Uuid, Option<String>, String)> = sqlx::query_as(tx.sql(
        "SELECT p.id, p.location_id, l.site_id, \
                (SELECT h.phase_name FROM tenant.plant_phase_history h \
                  WHERE h.plant_id = p.id AND h.exited_at IS NULL LIMIT 1), p.species_key \
         FROM tenant.plants p JOIN tenant.locations l ON l.id = p.location_id \
         WHERE p.archived_at IS NULL AND (p.location_id = ANY($1) OR l.site_id = ANY($2)) \
         ORDER BY p.id",
    ))
    .bind(locations)
    .bind(sites)
    .fetch_all(tx.conn())
    .await?;
    Ok(rows
        .into_iter()
        .map(|(id, location_id, site_id, phase, species_key)| ScanPlant {
            id,
            location_id,
            site_id,
            phase_name: phase.filter(|p| !p.is_empty()),
            species_key,
        })
        .collect())
}

/// An open alert as the scan matches it against what it finds.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenCause {
    pub id: Uuid,
    pub kind: String,
    pub sensor_id: Option<Uuid>,
    pub plant_id: Option<Uuid>,
    pub metric: String,
}

/// id, kind, sensor, plant, metric.
type CauseRow = (Uuid, String, Option<Uuid>, Option<Uuid>, String);

pub async fn open_causes(tx: &mut TenantTx) -> Result<Vec<OpenCause>, sqlx::Error> {
    let rows: Vec<CauseRow> = sqlx::query_as(tx.sql(
        "SELECT id, kind, sensor_id, plant_id, metric FROM tenant.alerts \
         WHERE resolved_at IS NULL AND kind IN ('out_of_range', 'sensor_silent')",
    ))
    .fetch_all(tx.conn())
    .await?;
    Ok(rows
        .into_iter()
        .map(|(id, kind, sensor_id, plant_id, metric)| OpenCause {
            id,
            kind,
            sensor_id,
            plant_id,
            metric,
        })
        .collect())
}

// ---------------------------------------------------------------------------------------------
// Writes.

/// A new alert.
#[derive(Debug, Clone)]
pub struct NewAlert {
    pub kind: AlertKind,
    pub plant_id: Option<Uuid>,
    pub sensor_id: Option<Uuid>,
    pub location_id: Option<Uuid>,
    pub site_id: Option<Uuid>,
    pub tank_id: Option<Uuid>,
    pub metric: String,
    pub reading: Option<(f64, OffsetDateTime)>,
    pub range: Option<(Option<f64>, Option<f64>, String)>,
    pub detail: Value,
}

/// Opens the alert unless one of the same cause is open (then `None`: another scan was first).
pub async fn open(
    tx: &mut TenantTx,
    a: &NewAlert,
    now: OffsetDateTime,
) -> Result<Option<Named>, sqlx::Error> {
    let sql = tx.sql(&format!(
        "WITH a AS ( \
           INSERT INTO tenant.alerts (id, kind, plant_id, sensor_id, location_id, site_id, \
             tank_id, metric, value, measured_at, range_min, range_max, range_source, detail, \
             opened_at) \
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) \
           ON CONFLICT DO NOTHING RETURNING *) \
         SELECT {COLUMNS} FROM a LEFT JOIN tenant.plants p ON p.id = a.plant_id \
           LEFT JOIN tenant.sensors s ON s.id = a.sensor_id"
    ));
    let (min, max, source) = match &a.range {
        Some((min, max, source)) => (*min, *max, Some(source.as_str())),
        None => (None, None, None),
    };
    let row = sqlx::query(sql)
        .bind(Uuid::now_v7())
        .bind(a.kind.as_str())
        .bind(a.plant_id)
        .bind(a.sensor_id)
        .bind(a.location_id)
        .bind(a.site_id)
        .bind(a.tank_id)
        .bind(&a.metric)
        .bind(a.reading.map(|r| r.0))
        .bind(a.reading.map(|r| r.1))
        .bind(min)
        .bind(max)
        .bind(source)
        .bind(&a.detail)
        .bind(now)
        .fetch_optional(tx.conn())
        .await?;
    row.as_ref().map(decode).transpose()
}

/// Resolves the alerts still open among `ids`; the ones this call resolved.
pub async fn resolve(
    tx: &mut TenantTx,
    ids: &[Uuid],
    now: OffsetDateTime,
) -> Result<Vec<Named>, sqlx::Error> {
    let sql = tx.sql(&format!(
        "WITH a AS ( \
           UPDATE tenant.alerts SET resolved_at = greatest($2, opened_at) \
           WHERE id = ANY($1) AND resolved_at IS NULL RETURNING *) \
         SELECT {COLUMNS} FROM a LEFT JOIN tenant.plants p ON p.id = a.plant_id \
           LEFT JOIN tenant.sensors s ON s.id = a.sensor_id"
    ));
    let rows = sqlx::query(sql)
        .bind(ids)
        .bind(now)
        .fetch_all(tx.conn())
        .await?;
    rows.iter().map(decode).collect()
}
