//! The alert scan: in each garden, judges every sensor's recent readings against the ranges of
//! the plants near it (`rules::alerts`; temperature, humidity and water temperature per phase
//! from `rules::climate`), opens the alerts whose cause began and resolves those
//! whose cause ended, in one transaction per garden with the webhook events of both. A garden
//! without sensors costs one statement; one with sensors four, plus one plan lookup per plant
//! near an EC or pH sensor.

use std::collections::HashMap;

use serde_json::json;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use super::model::AlertKind;
use super::repo::{self, Named, NewAlert, OpenCause, ScanPlant, ScanSensor};
use crate::error::AppError;
use crate::garden::nutrient_plans::service as plans;
use crate::rules::alerts::{self as rules, Point, Range, Verdict};
use crate::rules::climate;
use crate::rules::plan_coverage::coarse_phase;
use crate::state::AppState;
use crate::tenancy::{TenantRecord, TenantTx};

/// What one scan did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScanSummary {
    pub gardens: usize,
    pub opened: usize,
    pub resolved: usize,
}

/// One garden's changes, for delivery after the commit.
#[derive(Debug, Clone, Default)]
pub struct Changes {
    pub opened: Vec<Named>,
    pub resolved: Vec<Named>,
}

/// A cause the scan can judge: (kind, sensor, plant, metric), the key of the open-once index.
type CauseKey = (&'static str, Uuid, Option<Uuid>, String);

/// What the scan found for one cause.
enum Found {
    Open(Box<NewAlert>),
    Fine,
    Wait,
}

fn key_of(c: &OpenCause) -> Option<CauseKey> {
    let kind = AlertKind::parse(&c.kind)?.as_str();
    Some((kind, c.sensor_id?, c.plant_id, c.metric.clone()))
}

fn points(rows: &[(Uuid, OffsetDateTime, f64)], sensor: Uuid) -> Vec<Point> {
    rows.iter()
        .filter(|(s, _, _)| *s == sensor)
        .map(|(_, at, value)| Point {
            at: *at,
            value: *value,
        })
        .collect()
}

fn is_near(sensor: &ScanSensor, plant: &ScanPlant) -> bool {
    sensor.plants_location == Some(plant.location_id) || sensor.site_id == Some(plant.site_id)
}

fn out_of_range(
    sensor: &ScanSensor,
    plant: &ScanPlant,
    range: &Range,
    verdict: Verdict,
    detail: serde_json::Value,
) -> Found {
    match verdict {
        Verdict::Wait => Found::Wait,
        Verdict::Fine => Found::Fine,
        Verdict::Open(p) => Found::Open(Box::new(NewAlert {
            kind: AlertKind::OutOfRange,
            plant_id: Some(plant.id),
            sensor_id: Some(sensor.id),
            location_id: sensor.plants_location.or(Some(plant.location_id)),
            site_id: sensor.site_id,
            tank_id: sensor.tank_id,
            metric: range.metric.to_owned(),
            reading: Some((p.value, p.at)),
            range: Some((range.min, range.max, range.source.clone())),
            detail,
        })),
    }
}

/// The air VPD of a temperature sensor and the humidity sensor at the same place heard last,
/// judged against each nearby plant's phase range (the crop's own where it has one).
fn vpd_causes(
    sensor: &ScanSensor,
    sensors: &[ScanSensor],
    rows: &[(Uuid, OffsetDateTime, f64)],
    plants: &[ScanPlant],
    after: Duration,
    found: &mut HashMap<CauseKey, Found>,
) {
    let humidity = sensors
        .iter()
        .filter(|h| {
            h.metric == "humidity_percent"
                && h.location_id == sensor.location_id
                && h.site_id == sensor.site_id
                && h.tank_id.is_none()
                && sensor.tank_id.is_none()
        })
        .max_by_key(|h| h.latest);
    let Some(humidity) = humidity else { return };
    let vpd = rules::vpd_series(&points(rows, sensor.id), &points(rows, humidity.id));
    for plant in plants.iter().filter(|p| is_near(sensor, p)) {
        let Some(phase) = plant.phase_name.as_deref().and_then(coarse_phase) else {
            continue;
        };
        let range = rules::vpd_range(phase, climate::vpd_crop(Some(&plant.species_key)));
        let verdict = rules::judge(&vpd, &range, after);
        found.insert(
            (
                "out_of_range",
                sensor.id,
                Some(plant.id),
                rules::VPD_METRIC.to_owned(),
            ),
            out_of_range(
                sensor,
                plant,
                &range,
                verdict,
                json!({"humidity_sensor_key": humidity.id}),
            ),
        );
    }
}

/// Judges one garden and writes the changes (with their webhook events) in one transaction.
pub async fn scan_garden(
    state: &AppState,
    tenant: &TenantRecord,
    now: OffsetDateTime,
) -> Result<Changes, AppError> {
    let after = Duration::minutes(i64::from(state.config().alert_after_minutes));
    let mut tx = TenantTx::begin(state, tenant).await?;
    let sensors = repo::scan_sensors(&mut tx).await?;
    if sensors.is_empty() {
        // Sensor alerts go with their sensor (foreign keys cascade): nothing can be open.
        tx.rollback().await?;
        return Ok(Changes::default());
    }
    let judged = [
        "ec_ms_cm",
        "ph",
        "temperature_c",
        "humidity_percent",
        "water_temperature_c",
    ];
    // A judged metric's window; of any other sensor with an interval only its latest reading
    // (what a silent alert shows as the last one heard).
    let since: Vec<(Uuid, OffsetDateTime)> = sensors
        .iter()
        .filter_map(|s| {
            let latest = s.latest?;
            if judged.contains(&s.metric.as_str()) {
                Some((
                    s.id,
                    latest - rules::window(after, s.expected_interval_minutes),
                ))
            } else {
                s.expected_interval_minutes.map(|_| (s.id, latest))
            }
        })
        .collect();
    let rows = if since.is_empty() {
        Vec::new()
    } else {
        repo::windows(&mut tx, &since).await?
    };
    let locations: Vec<Uuid> = sensors.iter().filter_map(|s| s.plants_location).collect();
    let sites: Vec<Uuid> = sensors.iter().filter_map(|s| s.site_id).collect();
    let plants = repo::plants_near(&mut tx, &locations, &sites).await?;
    let open = repo::open_causes(&mut tx).await?;

    let mut found: HashMap<CauseKey, Found> = HashMap::new();
    // Plan targets, looked up once per plant near an EC or pH sensor.
    let mut targets = HashMap::new();
    for sensor in &sensors {
        let series = points(&rows, sensor.id);
        match sensor.metric.as_str() {
            "ec_ms_cm" | "ph" => {
                for plant in plants.iter().filter(|p| is_near(sensor, p)) {
                    if let std::collections::hash_map::Entry::Vacant(slot) = targets.entry(plant.id)
                    {
                        slot.insert(plans::current_phase_targets(&mut tx, plant.id).await?);
                    }
                    let Some(Some(t)) = targets.get(&plant.id) else {
                        continue;
                    };
                    let range = if sensor.metric == "ph" {
                        rules::ph_range(t)
                    } else {
                        rules::ec_range(t)
                    };
                    let Some(range) = range else { continue };
                    let verdict = rules::judge(&series, &range, after);
                    found.insert(
                        (
                            "out_of_range",
                            sensor.id,
                            Some(plant.id),
                            range.metric.to_owned(),
                        ),
                        out_of_range(sensor, plant, &range, verdict, json!({})),
                    );
                }
            }
            "temperature_c" | "humidity_percent" | "water_temperature_c" => {
                // Air is judged where the plant's air is (not at a tank); the water anywhere.
                let air = sensor.metric != "water_temperature_c";
                if !(air && sensor.tank_id.is_some()) {
                    for plant in plants.iter().filter(|p| is_near(sensor, p)) {
                        let Some(phase) = plant.phase_name.as_deref().and_then(coarse_phase) else {
                            continue;
                        };
                        let species = Some(plant.species_key.as_str());
                        let Some(range) = climate::range_for(&sensor.metric, phase, species) else {
                            continue;
                        };
                        let verdict = rules::judge(&series, &range, after);
                        found.insert(
                            (
                                "out_of_range",
                                sensor.id,
                                Some(plant.id),
                                range.metric.to_owned(),
                            ),
                            out_of_range(sensor, plant, &range, verdict, json!({"phase": phase})),
                        );
                    }
                }
                if sensor.metric == "temperature_c" {
                    vpd_causes(sensor, &sensors, &rows, &plants, after, &mut found);
                }
            }
            _ => {}
        }
        if let Some(every) = sensor.expected_interval_minutes {
            let cause = ("sensor_silent", sensor.id, None, sensor.metric.clone());
            let silent = rules::is_silent(now, Some(every), sensor.latest, sensor.created_at);
            let f = if silent {
                let last = sensor.latest.and_then(|at| {
                    // The last value heard, when it lies in the window read.
                    rows.iter()
                        .rev()
                        .find(|(s, t, _)| *s == sensor.id && *t == at)
                        .map(|(_, t, v)| (*v, *t))
                });
                Found::Open(Box::new(NewAlert {
                    kind: AlertKind::SensorSilent,
                    plant_id: None,
                    sensor_id: Some(sensor.id),
                    location_id: sensor.location_id,
                    site_id: sensor.site_id,
                    tank_id: sensor.tank_id,
                    metric: sensor.metric.clone(),
                    reading: last,
                    range: None,
                    detail: json!({
                        "expected_interval_minutes": every,
                        "silent_after_minutes": every * rules::SILENT_INTERVALS,
                        "last_reading_at": sensor.latest.and_then(|t| t
                            .format(&time::format_description::well_known::Rfc3339).ok()),
                    }),
                }))
            } else {
                Found::Fine
            };
            found.insert(cause, f);
        }
    }

    // An open alert whose cause the scan no longer finds (the plant moved or left, the plan
    // or the phase no longer gives a range, the interval was cleared) has ended too.
    let mut to_resolve = Vec::new();
    let mut open_keys = Vec::new();
    for c in &open {
        let Some(key) = key_of(c) else { continue };
        match found.get(&key) {
            Some(Found::Open(_) | Found::Wait) => {}
            Some(Found::Fine) | None => to_resolve.push(c.id),
        }
        open_keys.push(key);
    }
    let mut changes = Changes::default();
    if !to_resolve.is_empty() {
        changes.resolved = repo::resolve(&mut tx, &to_resolve, now).await?;
    }
    let mut new: Vec<(&CauseKey, &NewAlert)> = found
        .iter()
        .filter_map(|(k, f)| match f {
            Found::Open(a) if !open_keys.contains(k) => Some((k, a.as_ref())),
            _ => None,
        })
        .collect();
    new.sort_by_key(|(k, _)| (k.0, k.1, k.2, k.3.clone()));
    for (_, a) in new {
        if let Some(opened) = repo::open(&mut tx, a, now).await? {
            changes.opened.push(opened);
        }
    }
    for a in &changes.opened {
        super::service::emit(&mut tx, tenant, "alert.opened", a).await?;
    }
    for a in &changes.resolved {
        super::service::emit(&mut tx, tenant, "alert.resolved", a).await?;
    }
    tx.commit().await?;
    Ok(changes)
}
