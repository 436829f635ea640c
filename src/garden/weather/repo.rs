//! SQL of the weather: the sites to fetch for, the readings of origin `weather`, and what the
//! frost judgement reads (plants at outdoor sites, open frost alerts).

use time::{Date, OffsetDateTime};
use uuid::Uuid;

use crate::tenancy::TenantTx;

/// A site with coordinates.
#[derive(Debug, Clone, PartialEq)]
pub struct WeatherSite {
    pub id: Uuid,
    pub kind: String,
    pub latitude: f64,
    pub longitude: f64,
}

pub async fn sites_with_coordinates(tx: &mut TenantTx) -> Result<Vec<WeatherSite>, sqlx::Error> {
    let rows: Vec<(Uuid, String, f64, f64)> = sqlx::query_as(tx.sql(
        "SELECT id, kind, latitude, longitude FROM tenant.sites \
         WHERE latitude IS NOT NULL AND longitude IS NOT NULL ORDER BY id",
    ))
    .fetch_all(tx.conn())
    .await?;
    Ok(rows
        .into_iter()
        .map(|(id, kind, latitude, longitude)| WeatherSite {
            id,
            kind,
            latitude,
            longitude,
        })
        .collect())
}

/// One reading of origin weather.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WeatherReading {
    pub metric: &'static str,
    pub measured_at: OffsetDateTime,
    pub value: f64,
}

/// Stores the readings of a site, one row per (site, metric, hour): a new hour is inserted, an
/// hour whose value the newer forecast changed is updated, an unchanged one is left alone.
/// Returns (inserted, updated).
pub async fn store_readings(
    tx: &mut TenantTx,
    site: Uuid,
    readings: &[WeatherReading],
    fetched_at: OffsetDateTime,
) -> Result<(i64, i64), sqlx::Error> {
    let metrics: Vec<&str> = readings.iter().map(|r| r.metric).collect();
    let ats: Vec<OffsetDateTime> = readings.iter().map(|r| r.measured_at).collect();
    let values: Vec<f64> = readings.iter().map(|r| r.value).collect();
    let (inserted, updated): (i64, i64) = sqlx::query_as(tx.sql(
        "WITH written AS ( \
           INSERT INTO tenant.weather_readings AS w (site_id, metric, measured_at, value, fetched_at) \
           SELECT DISTINCT ON (t.metric, t.measured_at) $1, t.metric, t.measured_at, t.value, $5 \
           FROM unnest($2::text[], $3::timestamptz[], $4::float8[]) AS t(metric, measured_at, value) \
           ORDER BY t.metric, t.measured_at \
           ON CONFLICT (site_id, metric, measured_at) DO UPDATE \
             SET value = EXCLUDED.value, fetched_at = EXCLUDED.fetched_at \
             WHERE w.value IS DISTINCT FROM EXCLUDED.value \
           RETURNING (xmax = 0) AS inserted) \
         SELECT count(*) FILTER (WHERE inserted), count(*) FILTER (WHERE NOT inserted) FROM written",
    ))
    .bind(site)
    .bind(metrics)
    .bind(ats)
    .bind(values)
    .bind(fetched_at)
    .fetch_one(tx.conn())
    .await?;
    Ok((inserted, updated))
}

/// Deletes readings of origin weather older than `before`.
pub async fn delete_before(tx: &mut TenantTx, before: OffsetDateTime) -> Result<u64, sqlx::Error> {
    let done = sqlx::query(tx.sql("DELETE FROM tenant.weather_readings WHERE measured_at < $1"))
        .bind(before)
        .execute(tx.conn())
        .await?;
    Ok(done.rows_affected())
}

/// Up to `limit` readings of a site and metric with `from <= measured_at < to`, in time order.
pub async fn readings(
    tx: &mut TenantTx,
    site: Uuid,
    metric: &str,
    from: OffsetDateTime,
    to: OffsetDateTime,
    limit: i64,
) -> Result<Vec<(OffsetDateTime, f64)>, sqlx::Error> {
    sqlx::query_as(tx.sql(
        "SELECT measured_at, value FROM tenant.weather_readings \
         WHERE site_id = $1 AND metric = $2 AND measured_at >= $3 AND measured_at < $4 \
         ORDER BY measured_at LIMIT $5",
    ))
    .bind(site)
    .bind(metric)
    .bind(from)
    .bind(to)
    .bind(limit)
    .fetch_all(tx.conn())
    .await
}

/// A live plant standing at one of the sites, at a location not marked frost free.
#[derive(Debug, Clone, PartialEq)]
pub struct ExposedPlant {
    pub id: Uuid,
    pub location_id: Uuid,
    pub site_id: Uuid,
    pub species_key: String,
}

/// The live plants at locations of these sites, except locations marked `frost_exposed:
/// false` (a cold frame, a heated corner).
pub async fn exposed_plants(
    tx: &mut TenantTx,
    sites: &[Uuid],
) -> Result<Vec<ExposedPlant>, sqlx::Error> {
    let rows: Vec<(Uuid, Uuid, Uuid, String)> = sqlx::query_as(tx.sql(
        "SELECT p.id, p.location_id, l.site_id, p.species_key \
         FROM tenant.plants p JOIN tenant.locations l ON l.id = p.location_id \
         WHERE p.archived_at IS NULL AND l.site_id = ANY($1) \
           AND l.frost_exposed IS DISTINCT FROM false \
         ORDER BY p.id",
    ))
    .bind(sites)
    .fetch_all(tx.conn())
    .await?;
    Ok(rows
        .into_iter()
        .map(|(id, location_id, site_id, species_key)| ExposedPlant {
            id,
            location_id,
            site_id,
            species_key,
        })
        .collect())
}

/// An open frost alert: which plant, site and night.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenFrost {
    pub id: Uuid,
    pub plant_id: Option<Uuid>,
    pub site_id: Option<Uuid>,
    pub night: Option<Date>,
}

/// id, plant, site, night.
type FrostRow = (Uuid, Option<Uuid>, Option<Uuid>, Option<Date>);

pub async fn open_frost_alerts(tx: &mut TenantTx) -> Result<Vec<OpenFrost>, sqlx::Error> {
    let rows: Vec<FrostRow> = sqlx::query_as(tx.sql(
        "SELECT id, plant_id, site_id, \
                CASE WHEN detail ->> 'night' ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' \
                     THEN (detail ->> 'night')::date END \
         FROM tenant.alerts WHERE kind = 'frost' AND resolved_at IS NULL ORDER BY id",
    ))
    .fetch_all(tx.conn())
    .await?;
    Ok(rows
        .into_iter()
        .map(|(id, plant_id, site_id, night)| OpenFrost {
            id,
            plant_id,
            site_id,
            night,
        })
        .collect())
}
