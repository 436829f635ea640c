//! SQL of the environment: what measured the plants of many diary entries around their
//! instants (one statement per page of entries), and a site's weather around an instant.

use time::OffsetDateTime;
use uuid::Uuid;

use super::model::{SENSOR_WINDOW_MINUTES, WEATHER_WINDOW_MINUTES};
use crate::tenancy::TenantTx;

/// One source that measures an entry's plant, and its reading in the window (none: it did
/// not report then).
#[derive(Debug, Clone, PartialEq)]
pub struct SourceRow {
    pub entry_id: Uuid,
    /// `location`, `site` or `weather`.
    pub origin: String,
    pub sensor_id: Option<Uuid>,
    pub sensor_name: Option<String>,
    pub metric: String,
    /// The sensor's source; null for weather.
    pub source: Option<String>,
    pub measured_at: Option<OffsetDateTime>,
    pub value: Option<f64>,
}

type Row = (
    Uuid,
    String,
    Option<Uuid>,
    Option<String>,
    String,
    Option<String>,
    Option<OffsetDateTime>,
    Option<f64>,
);

/// For each (entry, plant, instant): every sensor at the plant's location or at that
/// location's site with its latest reading in `(at - 60 min, at]`, and, with `weather` (the
/// server fetches forecasts) and a site with coordinates, the site's temperature and humidity
/// hour nearest `at` within 60 minutes. Tank sensors are not the plant's air: left out. A
/// plant standing nowhere has no rows.
pub async fn sources_of_entries(
    tx: &mut TenantTx,
    entries: &[(Uuid, Uuid, OffsetDateTime)],
    weather: bool,
) -> Result<Vec<SourceRow>, sqlx::Error> {
    if entries.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<Uuid> = entries.iter().map(|e| e.0).collect();
    let plants: Vec<Uuid> = entries.iter().map(|e| e.1).collect();
    let ats: Vec<OffsetDateTime> = entries.iter().map(|e| e.2).collect();
    let rows: Vec<Row> = sqlx::query_as(tx.sql(&format!(
        "WITH e AS ( \
           SELECT e.entry_id, e.at, p.location_id, l.site_id \
           FROM unnest($1::uuid[], $2::uuid[], $3::timestamptz[]) AS e(entry_id, plant_id, at) \
           JOIN tenant.plants p ON p.id = e.plant_id \
           JOIN tenant.locations l ON l.id = p.location_id) \
         SELECT e.entry_id, \
                CASE WHEN s.location_id IS NOT NULL THEN 'location' ELSE 'site' END, \
                s.id, s.name, s.metric, s.source, r.measured_at, r.value \
         FROM e JOIN tenant.sensors s ON s.location_id = e.location_id OR s.site_id = e.site_id \
         LEFT JOIN LATERAL ( \
           SELECT measured_at, value FROM tenant.sensor_readings \
           WHERE sensor_id = s.id AND measured_at <= e.at \
             AND measured_at > e.at - interval '{SENSOR_WINDOW_MINUTES} minutes' \
           ORDER BY measured_at DESC LIMIT 1) r ON true \
         UNION ALL \
         SELECT e.entry_id, 'weather', NULL, NULL, m.metric, NULL, w.measured_at, w.value \
         FROM e JOIN tenant.sites st ON st.id = e.site_id AND $4::boolean \
              AND st.latitude IS NOT NULL AND st.longitude IS NOT NULL \
         CROSS JOIN (VALUES ('temperature_c'), ('humidity_percent')) AS m(metric) \
         LEFT JOIN LATERAL ( \
           SELECT measured_at, value FROM tenant.weather_readings \
           WHERE site_id = e.site_id AND metric = m.metric \
             AND measured_at BETWEEN e.at - interval '{WEATHER_WINDOW_MINUTES} minutes' \
                                 AND e.at + interval '{WEATHER_WINDOW_MINUTES} minutes' \
           ORDER BY abs(extract(epoch FROM measured_at - e.at)), measured_at LIMIT 1) w ON true \
         ORDER BY 1, 2, 5, 4"
    )))
    .bind(ids)
    .bind(plants)
    .bind(ats)
    .bind(weather)
    .fetch_all(tx.conn())
    .await?;
    Ok(rows
        .into_iter()
        .map(
            |(entry_id, origin, sensor_id, sensor_name, metric, source, measured_at, value)| {
                SourceRow {
                    entry_id,
                    origin,
                    sensor_id,
                    sensor_name,
                    metric,
                    source,
                    measured_at,
                    value,
                }
            },
        )
        .collect())
}

/// The site's weather hour nearest `at` (within 60 minutes) of each metric it has.
pub async fn weather_near(
    tx: &mut TenantTx,
    site: Uuid,
    at: OffsetDateTime,
) -> Result<Vec<(String, OffsetDateTime, f64)>, sqlx::Error> {
    sqlx::query_as(tx.sql(&format!(
        "SELECT DISTINCT ON (metric) metric, measured_at, value FROM tenant.weather_readings \
         WHERE site_id = $1 \
           AND measured_at BETWEEN $2::timestamptz - interval '{WEATHER_WINDOW_MINUTES} minutes' \
                               AND $2::timestamptz + interval '{WEATHER_WINDOW_MINUTES} minutes' \
         ORDER BY metric, abs(extract(epoch FROM measured_at - $2::timestamptz)), measured_at"
    )))
    .bind(site)
    .bind(at)
    .fetch_all(tx.conn())
    .await
}

/// Whether the site has coordinates (the weather can measure it).
pub async fn site_has_coordinates(tx: &mut TenantTx, site: Uuid) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar(tx.sql(
        "SELECT EXISTS (SELECT 1 FROM tenant.sites WHERE id = $1 \
           AND latitude IS NOT NULL AND longitude IS NOT NULL)",
    ))
    .bind(site)
    .fetch_one(tx.conn())
    .await
}
