//! The weather poll of one garden: the forecast of every site with coordinates stored as
//! readings of origin `weather`, and the frost alerts it implies opened and resolved (through
//! the alerts' own opening path: `alerts::repo::open`/`resolve` and their webhook events, in
//! one transaction). A site whose forecast cannot be fetched is logged and counted; the others
//! go on, and its open frost alerts stay until a forecast comes or their night is over.

use std::collections::HashMap;

use serde_json::{Value, json};
use time::format_description::well_known::Rfc3339;
use time::{Duration, OffsetDateTime, PrimitiveDateTime, UtcOffset};
use uuid::Uuid;

use super::forecast::{self, HourlyValues};
use super::repo::{self, ExposedPlant, WeatherReading, WeatherSite};
use crate::catalog::engine::service as catalog;
use crate::catalog::species::model::SPECIES;
use crate::error::{AppError, ErrorCode};
use crate::garden::alerts::model::AlertKind;
use crate::garden::alerts::repo::{self as alerts, Named, NewAlert};
use crate::garden::alerts::service::emit;
use crate::garden::calendar::{model::time_zone, repo as calendar};
use crate::rules::frost::{self, ForecastHour, FrostThreshold, NightLow};
use crate::rules::sensors::RAW_RETENTION_DAYS;
use crate::state::AppState;
use crate::tenancy::{TenantRecord, TenantTx};

/// What one garden's poll did.
#[derive(Debug, Clone, Default)]
pub struct PollSummary {
    /// Sites with coordinates.
    pub sites: usize,
    /// Sites whose forecast arrived.
    pub fetched: usize,
    /// Sites whose forecast did not arrive, and why.
    pub failed: Vec<(Uuid, String)>,
    /// Readings new in this poll, and readings a newer forecast changed.
    pub stored: i64,
    pub updated: i64,
    pub opened: Vec<Named>,
    pub resolved: Vec<Named>,
}

/// The garden's clock for an instant.
fn local_of(at: OffsetDateTime, tz: &jiff::tz::TimeZone) -> PrimitiveDateTime {
    let seconds = jiff::Timestamp::new(at.unix_timestamp(), 0)
        .map(|ts| ts.to_zoned(tz.clone()).offset().seconds())
        .unwrap_or(0);
    let offset = UtcOffset::from_whole_seconds(seconds).unwrap_or(UtcOffset::UTC);
    let local = at.to_offset(offset);
    PrimitiveDateTime::new(local.date(), local.time())
}

fn readings_of(hours: &[HourlyValues]) -> Vec<WeatherReading> {
    let mut out = Vec::with_capacity(hours.len() * 2);
    for h in hours {
        if let Some(value) = h.temperature_c {
            out.push(WeatherReading {
                metric: "temperature_c",
                measured_at: h.at,
                value,
            });
        }
        if let Some(value) = h.humidity_percent {
            out.push(WeatherReading {
                metric: "humidity_percent",
                measured_at: h.at,
                value,
            });
        }
    }
    out
}

/// The frost threshold of each species (looked up once per species in the catalogue).
async fn thresholds(
    state: &AppState,
    plants: &[ExposedPlant],
) -> Result<HashMap<String, (&'static FrostThreshold, Option<String>)>, AppError> {
    let mut out = HashMap::new();
    for p in plants {
        if out.contains_key(&p.species_key) {
            continue;
        }
        let sensitivity = match catalog::get(state, &SPECIES, &p.species_key).await {
            Ok(doc) => doc
                .get("frost_sensitivity")
                .and_then(Value::as_str)
                .map(str::to_owned),
            Err(e) if e.code() == ErrorCode::EntityNotFound => None,
            Err(e) => return Err(e),
        };
        let t = frost::threshold(sensitivity.as_deref());
        out.insert(p.species_key.clone(), (t, sensitivity));
    }
    Ok(out)
}

/// A frost alert for a plant and night.
fn frost_alert(
    plant: &ExposedPlant,
    low: &NightLow,
    threshold: &FrostThreshold,
    sensitivity: Option<&str>,
    timezone: &str,
) -> NewAlert {
    NewAlert {
        kind: AlertKind::Frost,
        plant_id: Some(plant.id),
        sensor_id: None,
        location_id: Some(plant.location_id),
        site_id: Some(plant.site_id),
        tank_id: None,
        metric: frost::FROST_METRIC.to_owned(),
        reading: Some((low.low_c, low.low_at)),
        range: Some((
            Some(threshold.threshold_c),
            None,
            threshold.source.to_owned(),
        )),
        detail: json!({
            "night": low.night.to_string(),
            "low_c": low.low_c,
            "low_at": low.low_at.format(&Rfc3339).ok(),
            "threshold_c": threshold.threshold_c,
            "frost_sensitivity": sensitivity,
            "timezone": timezone,
            "origin": "weather",
        }),
    }
}

/// Polls the forecast of every site with coordinates (nothing without `WEATHER_URL`), stores
/// it, and opens and resolves frost alerts; the changed alerts are returned for delivery after
/// the commit (Web Push: `notify::weather`).
pub async fn poll_garden(
    state: &AppState,
    tenant: &TenantRecord,
    now: OffsetDateTime,
) -> Result<PollSummary, AppError> {
    let mut summary = PollSummary::default();
    let Some(base) = state.config().weather_url.clone() else {
        return Ok(summary);
    };
    let timeout = state.config().weather_timeout;

    let mut tx = TenantTx::read(state, tenant).await?;
    let sites = repo::sites_with_coordinates(&mut tx).await?;
    let zone_name = calendar::timezone(&mut tx).await?;
    let outdoor: Vec<Uuid> = sites
        .iter()
        .filter(|s| frost::is_outdoor(&s.kind))
        .map(|s| s.id)
        .collect();
    let plants = if outdoor.is_empty() {
        Vec::new()
    } else {
        repo::exposed_plants(&mut tx, &outdoor).await?
    };
    let has_open_frost = !repo::open_frost_alerts(&mut tx).await?.is_empty();
    tx.commit().await?;
    summary.sites = sites.len();
    if sites.is_empty() && !has_open_frost {
        return Ok(summary);
    }
    let zone_name = zone_name.filter(|z| time_zone(z).is_some());
    let tz = zone_name
        .as_deref()
        .and_then(time_zone)
        .unwrap_or(jiff::tz::TimeZone::UTC);
    let zone_label = zone_name.unwrap_or_else(|| "UTC".to_owned());

    let mut forecasts: Vec<(&WeatherSite, Vec<HourlyValues>)> = Vec::new();
    for site in &sites {
        match forecast::fetch(&base, site.latitude, site.longitude, timeout).await {
            Ok(hours) => {
                crate::metrics::weather_fetch("ok");
                forecasts.push((site, hours));
            }
            Err(e) => {
                crate::metrics::weather_fetch("failed");
                tracing::warn!(garden = %tenant.slug, site = %site.id, error = %e,
                    "weather forecast not fetched");
                summary.failed.push((site.id, e.0));
            }
        }
    }
    summary.fetched = forecasts.len();
    let thresholds = thresholds(state, &plants).await?;

    // What the forecasts say now: one frost cause per (plant, night).
    let mut found: Vec<NewAlert> = Vec::new();
    for (site, hours) in &forecasts {
        if !frost::is_outdoor(&site.kind) {
            continue;
        }
        let judged: Vec<ForecastHour> = hours
            .iter()
            .filter_map(|h| {
                Some(ForecastHour {
                    at: h.at,
                    local: local_of(h.at, &tz),
                    temperature_c: h.temperature_c?,
                })
            })
            .collect();
        let lows = frost::night_lows(&judged, now);
        for plant in plants.iter().filter(|p| p.site_id == site.id) {
            let Some((threshold, sensitivity)) = thresholds.get(&plant.species_key) else {
                continue;
            };
            for low in frost::frost_nights(&lows, threshold) {
                found.push(frost_alert(
                    plant,
                    &low,
                    threshold,
                    sensitivity.as_deref(),
                    &zone_label,
                ));
            }
        }
    }

    let mut tx = TenantTx::begin(state, tenant).await?;
    for (site, hours) in &forecasts {
        let readings = readings_of(hours);
        if readings.is_empty() {
            continue;
        }
        let (stored, updated) = repo::store_readings(&mut tx, site.id, &readings, now).await?;
        summary.stored += stored;
        summary.updated += updated;
    }
    repo::delete_before(&mut tx, now - Duration::days(RAW_RETENTION_DAYS)).await?;

    // An open frost alert ends when its night is over, when its site no longer has coordinates
    // or is no outdoor site, or when a fresh forecast of its site no longer shows it (the plant
    // left, the low rose). A site whose forecast failed keeps its alerts.
    let local_now = local_of(now, &tz);
    let fetched: Vec<Uuid> = forecasts.iter().map(|(s, _)| s.id).collect();
    let cause = |a: &NewAlert| {
        (
            a.plant_id,
            a.site_id,
            a.detail
                .get("night")
                .and_then(Value::as_str)
                .map(str::to_owned),
        )
    };
    let open = repo::open_frost_alerts(&mut tx).await?;
    let mut to_resolve = Vec::new();
    let mut open_causes = Vec::new();
    for a in &open {
        let night = a.night.map(|n| n.to_string());
        let site_judgeable = a.site_id.is_some_and(|s| outdoor.contains(&s));
        let over = a.night.is_none_or(|n| frost::night_is_over(n, local_now));
        let still_found = found
            .iter()
            .any(|f| cause(f) == (a.plant_id, a.site_id, night.clone()));
        let judged_now = a.site_id.is_some_and(|s| fetched.contains(&s));
        if over || !site_judgeable || (judged_now && !still_found) {
            to_resolve.push(a.id);
        } else {
            open_causes.push((a.plant_id, a.site_id, night));
        }
    }
    if !to_resolve.is_empty() {
        summary.resolved = alerts::resolve(&mut tx, &to_resolve, now).await?;
    }
    for a in found.iter().filter(|f| !open_causes.contains(&cause(f))) {
        if let Some(opened) = alerts::open(&mut tx, a, now).await? {
            summary.opened.push(opened);
        }
    }
    for a in &summary.opened {
        emit(&mut tx, tenant, "alert.opened", a).await?;
    }
    for a in &summary.resolved {
        emit(&mut tx, tenant, "alert.resolved", a).await?;
    }
    tx.commit().await?;
    Ok(summary)
}

/// The stored readings of origin weather of a site and metric in `from..to` (oldest first, at
/// most `limit`); a site of another garden is `not_found`.
pub async fn site_readings(
    state: &AppState,
    tenant: &TenantRecord,
    site: Uuid,
    metric: &str,
    from: OffsetDateTime,
    to: OffsetDateTime,
    limit: i64,
) -> Result<Vec<(OffsetDateTime, f64)>, AppError> {
    let mut tx = TenantTx::read(state, tenant).await?;
    if crate::garden::sites::repo::get(&mut tx, site)
        .await?
        .is_none()
    {
        return Err(AppError::not_found("site"));
    }
    let rows = repo::readings(&mut tx, site, metric, from, to, limit).await?;
    tx.commit().await?;
    Ok(rows)
}
