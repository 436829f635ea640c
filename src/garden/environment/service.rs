//! What measured a plant: at a diary entry's instant (a page of entries in one statement), or
//! now (the diagnostics snapshot and `get_environment`). Sensors come from the sensors
//! capability, the weather from the readings of origin `weather` the poll stored.

use std::collections::HashMap;

use time::OffsetDateTime;
use uuid::Uuid;

use super::model::{
    Environment, EnvironmentReading, NO_SOURCE, UNAVAILABLE, WEATHER_SOURCE, entry_instant,
};
use super::repo::{self, SourceRow};
use crate::error::AppError;
use crate::garden::sensors::service::{self as sensors, Around, LatestReading};
use crate::rules::sensors::metric as metric_rule;
use crate::state::AppState;
use crate::tenancy::{TenantRecord, TenantTx};

fn unit_of(metric: &str) -> String {
    metric_rule(metric).map_or_else(String::new, |m| m.unit.to_owned())
}

/// Whether this server fetches forecasts (without `WEATHER_URL` no weather ever measures a
/// site, coordinates or not).
pub fn weather_on(state: &AppState) -> bool {
    state.config().weather_url.is_some()
}

/// One entry of a page: its key, its plant (none: a garden-wide entry), its date and when it
/// was written.
#[derive(Debug, Clone, Copy)]
pub struct EntryAt {
    pub entry: Uuid,
    pub plant: Option<Uuid>,
    pub entry_date: time::Date,
    pub created_at: OffsetDateTime,
}

fn reading_of(row: &SourceRow) -> Option<EnvironmentReading> {
    let origin = match row.origin.as_str() {
        "location" => "location",
        "site" => "site",
        _ => "weather",
    };
    Some(EnvironmentReading {
        origin,
        metric: row.metric.clone(),
        value: row.value?,
        unit: unit_of(&row.metric),
        measured_at: row.measured_at?,
        source: row
            .source
            .clone()
            .unwrap_or_else(|| WEATHER_SOURCE.to_owned()),
        sensor_key: row.sensor_id,
        sensor_name: row.sensor_name.clone(),
    })
}

/// The environment of each entry, read in the caller's snapshot with one statement for all
/// of them: `no_source` for an entry without a plant or whose plant nothing measures,
/// `unavailable` when its sources did not report in the window, else the readings (status
/// `None`).
pub async fn of_entries(
    tx: &mut TenantTx,
    weather: bool,
    entries: &[EntryAt],
) -> Result<HashMap<Uuid, Environment>, AppError> {
    let asked: Vec<(Uuid, Uuid, OffsetDateTime)> = entries
        .iter()
        .filter_map(|e| {
            e.plant
                .map(|p| (e.entry, p, entry_instant(e.entry_date, e.created_at)))
        })
        .collect();
    let rows = repo::sources_of_entries(tx, &asked, weather).await?;
    let mut out: HashMap<Uuid, Environment> = entries
        .iter()
        .map(|e| (e.entry, Environment::no_source()))
        .collect();
    for row in &rows {
        let env = out.entry(row.entry_id).or_default();
        if let Some(r) = reading_of(row) {
            env.readings.push(r);
        }
        env.status = None;
    }
    for env in out.values_mut() {
        if env.status.is_none() && env.readings.is_empty() {
            env.status = Some(UNAVAILABLE);
        }
    }
    Ok(out)
}

/// What measures a plant, location or site now: its sensors with their latest readings, and
/// the weather hour nearest now of its site (with coordinates and a forecast source).
#[derive(Debug, Clone)]
pub struct Now {
    pub sensors: Vec<LatestReading>,
    pub weather: Vec<EnvironmentReading>,
    /// Whether the weather measures here at all (a site with coordinates, forecasts on).
    pub weather_source: bool,
    pub location: Option<Uuid>,
    pub site: Option<Uuid>,
}

impl Now {
    /// Something measures here (a sensor, or the weather).
    pub fn has_source(&self) -> bool {
        !self.sensors.is_empty() || self.weather_source
    }

    /// `no_source`, `unavailable` or `None` (readings there), as an entry says it.
    pub fn status(&self) -> Option<&'static str> {
        if !self.has_source() {
            Some(NO_SOURCE)
        } else if self.weather.is_empty() && self.sensors.iter().all(|s| s.latest.is_none()) {
            Some(UNAVAILABLE)
        } else {
            None
        }
    }

    /// The sensors' latest readings and the weather, in the shape of an entry's environment.
    pub fn readings(&self) -> Vec<EnvironmentReading> {
        let mut out: Vec<EnvironmentReading> = self
            .sensors
            .iter()
            .filter_map(|s| {
                let l = s.latest?;
                Some(EnvironmentReading {
                    origin: s.origin,
                    metric: s.sensor.metric.as_str().to_owned(),
                    value: l.value,
                    unit: s.sensor.unit.clone(),
                    measured_at: l.measured_at,
                    source: s.sensor.source.as_str().to_owned(),
                    sensor_key: Some(s.sensor.key),
                    sensor_name: Some(s.sensor.name.clone()),
                })
            })
            .collect();
        out.extend(self.weather.iter().cloned());
        out
    }
}

/// [`Now`] of a plant, location or site; a key of another garden is `not_found`.
pub async fn now_around(
    state: &AppState,
    tenant: &TenantRecord,
    around: Around,
    now: OffsetDateTime,
) -> Result<Now, AppError> {
    let mut tx = TenantTx::read(state, tenant).await?;
    let found = sensors::environment_in(&mut tx, around).await?;
    let mut weather = Vec::new();
    let mut weather_source = false;
    if let Some(site) = found.site
        && weather_on(state)
        && repo::site_has_coordinates(&mut tx, site).await?
    {
        weather_source = true;
        for (metric, measured_at, value) in repo::weather_near(&mut tx, site, now).await? {
            weather.push(EnvironmentReading {
                origin: "weather",
                unit: unit_of(&metric),
                metric,
                value,
                measured_at,
                source: WEATHER_SOURCE.to_owned(),
                sensor_key: None,
                sensor_name: None,
            });
        }
    }
    tx.commit().await?;
    Ok(Now {
        sensors: found.sensors,
        weather,
        weather_source,
        location: found.location,
        site: found.site,
    })
}
