//! Use cases of sensors and readings, shared by the REST routes, the tools and the CLI.

use time::OffsetDateTime;
use uuid::Uuid;

use super::model::*;
use super::repo::{self, SensorRow};
use crate::error::{AppError, ErrorDetail};
use crate::rules::sensors as rules;
use crate::state::AppState;
use crate::tenancy::registry::{self, TenantStatus};
use crate::tenancy::{TenantRecord, TenantTx};
use crate::values::json::Patch;
use crate::values::page::{Page, PageRequest};

pub const LIST_MAX_LIMIT: i64 = 200;

/// Poked after a sensor is created, changed or deleted in this process, so the MQTT
/// subscriber (`notify::mqtt`) re-reads its topics at once rather than at its next refresh.
static CHANGED: tokio::sync::Notify = tokio::sync::Notify::const_new();

/// What [`CHANGED`] is to its listeners.
pub fn sensors_changed() -> &'static tokio::sync::Notify {
    &CHANGED
}

/// One sensor that reads an MQTT topic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicSensor {
    pub key: Uuid,
    pub source: SensorSource,
    pub topic: String,
}

/// The garden's sensors that read an MQTT topic (`mqtt`, `home_assistant`), only those whose
/// topic lies under the garden's prefix (a row from before the rule reads nothing).
pub async fn mqtt_topics(
    state: &AppState,
    tenant: &TenantRecord,
) -> Result<Vec<TopicSensor>, AppError> {
    let mut tx = TenantTx::read(state, tenant).await?;
    let rows = repo::mqtt_topics(&mut tx).await?;
    tx.commit().await?;
    Ok(rows
        .into_iter()
        .filter(|(_, _, topic)| crate::rules::mqtt::topic_in_garden(tenant.slug.as_str(), topic))
        .map(|(key, source, topic)| TopicSensor { key, source, topic })
        .collect())
}
/// Raw readings in one answer: default and most.
pub const READINGS_DEFAULT_LIMIT: i64 = 1000;
pub const READINGS_MAX_LIMIT: i64 = 10_000;
/// Without `from`, a series starts this long before `to`.
pub const DEFAULT_WINDOW_HOURS: i64 = 24;

/// A key that is not a UUID cannot name a sensor: the same 404 as an unknown one.
pub fn parse_sensor_key(key: &str) -> Result<Uuid, AppError> {
    Uuid::parse_str(key).map_err(|_| AppError::not_found("sensor"))
}

fn invalid(field: &str, reason: impl Into<String>, code: &str) -> AppError {
    AppError::validation(vec![ErrorDetail::new(field, reason, code)])
}

fn place_name(place: Place) -> &'static str {
    match place {
        Place::Location(_) => "location",
        Place::Site(_) => "site",
        Place::Tank(_) => "tank",
    }
}

/// A place of another garden (or none) is the same 404 as an unknown one.
async fn check_place(tx: &mut TenantTx, place: Place) -> Result<(), AppError> {
    if repo::place_exists(tx, place).await? {
        Ok(())
    } else {
        Err(AppError::not_found(place_name(place)))
    }
}

/// An `mqtt` or `home_assistant` sensor reads only under its garden's topic prefix
/// (`kultiva/<slug>/`): topics are global on a shared broker (see `rules::mqtt`).
fn check_topic_prefix(
    tenant: &TenantRecord,
    source: SensorSource,
    topic: Option<&str>,
) -> Result<(), AppError> {
    let slug = tenant.slug.as_str();
    match (source, topic) {
        (SensorSource::Mqtt | SensorSource::HomeAssistant, Some(t))
            if !crate::rules::mqtt::topic_in_garden(slug, t) =>
        {
            let prefix = crate::rules::mqtt::garden_prefix(slug);
            Err(invalid(
                "body.topic",
                format!(
                    "must lie under this garden's prefix {prefix} with no empty level \
                     (for example {prefix}tent/temperature)"
                ),
                "value_error",
            ))
        }
        _ => Ok(()),
    }
}

fn duplicate(name: &str) -> AppError {
    AppError::duplicate(format!("a sensor named {name:?} exists"))
}

pub async fn list_sensors(
    state: &AppState,
    tenant: &TenantRecord,
    page: PageRequest,
) -> Result<Page<Sensor>, AppError> {
    let mut tx = TenantTx::read(state, tenant).await?;
    let (items, matched) = repo::list(&mut tx, page).await?;
    let total = match matched {
        Some(n) => n,
        None => repo::count(&mut tx).await?,
    };
    tx.commit().await?;
    Ok(Page::new(items, total, page))
}

pub async fn get_sensor(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
) -> Result<Sensor, AppError> {
    let id = parse_sensor_key(key)?;
    let mut tx = TenantTx::read(state, tenant).await?;
    let sensor = repo::get(&mut tx, id).await?;
    tx.commit().await?;
    sensor.ok_or_else(|| AppError::not_found("sensor"))
}

pub async fn create_sensor(
    state: &AppState,
    tenant: &TenantRecord,
    new: &NewSensor,
) -> Result<Sensor, AppError> {
    check_topic_prefix(tenant, new.source, new.topic.as_deref())?;
    let mut tx = TenantTx::begin(state, tenant).await?;
    check_place(&mut tx, new.place).await?;
    let row = SensorRow {
        id: Uuid::now_v7(),
        name: &new.name,
        metric: new.metric,
        place: new.place,
        source: new.source,
        topic: new.topic.as_deref(),
        expected_interval_minutes: new.expected_interval_minutes,
    };
    let Some(sensor) = repo::insert(&mut tx, &row).await? else {
        return Err(duplicate(&new.name));
    };
    tx.commit().await?;
    CHANGED.notify_one();
    Ok(sensor)
}

pub async fn patch_sensor(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
    patch: &SensorPatch,
) -> Result<Sensor, AppError> {
    let id = parse_sensor_key(key)?;
    let mut tx = TenantTx::begin(state, tenant).await?;
    let current = repo::lock(&mut tx, id)
        .await?
        .ok_or_else(|| AppError::not_found("sensor"))?;
    let place = match patch.place {
        Some(p) => {
            check_place(&mut tx, p).await?;
            p
        }
        None => match (current.location_key, current.site_key, current.tank_key) {
            (Some(l), _, _) => Place::Location(l),
            (_, Some(s), _) => Place::Site(s),
            (_, _, Some(t)) => Place::Tank(t),
            _ => return Err(AppError::internal("a sensor without a place")),
        },
    };
    let source = patch.source.unwrap_or(current.source);
    let topic = match (&patch.topic, source) {
        // Switching to http drops the topic it no longer reads.
        (Patch::Keep, SensorSource::Http) if patch.source.is_some() => None,
        (Patch::Keep, _) => current.topic.clone(),
        (Patch::Clear, _) => None,
        (Patch::Set(t), _) => Some(t.clone()),
    };
    match (source, &topic) {
        (SensorSource::Http, Some(_)) => {
            return Err(invalid(
                "body.topic",
                "an http sensor has no topic",
                "value_error",
            ));
        }
        (SensorSource::Mqtt | SensorSource::HomeAssistant, None) => {
            return Err(invalid(
                "body.topic",
                "required for mqtt and home_assistant sensors",
                "missing",
            ));
        }
        _ => {}
    }
    check_topic_prefix(tenant, source, topic.as_deref())?;
    let name = patch.name.clone().unwrap_or_else(|| current.name.clone());
    if repo::name_taken(&mut tx, &name, id).await? {
        return Err(duplicate(&name));
    }
    let interval = match patch.expected_interval_minutes {
        Patch::Keep => current.expected_interval_minutes,
        Patch::Clear => None,
        Patch::Set(m) => Some(m),
    };
    let row = SensorRow {
        id,
        name: &name,
        metric: current.metric,
        place,
        source,
        topic: topic.as_deref(),
        expected_interval_minutes: interval,
    };
    let sensor = repo::update(&mut tx, &row)
        .await?
        .ok_or_else(|| AppError::not_found("sensor"))?;
    tx.commit().await?;
    CHANGED.notify_one();
    Ok(sensor)
}

/// Deletes the sensor with its readings and roll-ups.
pub async fn delete_sensor(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
) -> Result<(), AppError> {
    let id = parse_sensor_key(key)?;
    let mut tx = TenantTx::begin(state, tenant).await?;
    if repo::lock(&mut tx, id).await?.is_none() {
        return Err(AppError::not_found("sensor"));
    }
    repo::delete(&mut tx, id).await?;
    tx.commit().await?;
    CHANGED.notify_one();
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Readings.

/// Every reading inside the metric's physical range, or one 422 naming each one outside
/// (`body.readings[3].value`, at most 20).
fn check_ranges(sensor: &Sensor, readings: &[Reading]) -> Result<(), AppError> {
    let Some(rule) = rules::metric(sensor.metric.as_str()) else {
        return Err(AppError::internal("a metric without a range"));
    };
    let details: Vec<ErrorDetail> = readings
        .iter()
        .enumerate()
        .filter(|(_, r)| !rules::in_range(rule, r.value))
        .take(20)
        .map(|(i, r)| {
            ErrorDetail::new(
                format!("body.readings[{i}].value"),
                format!(
                    "{} is outside the physical range of {} ({} to {} {})",
                    r.value, rule.name, rule.min, rule.max, rule.unit
                ),
                "value_error",
            )
        })
        .collect();
    if details.is_empty() {
        Ok(())
    } else {
        Err(AppError::validation(details))
    }
}

/// Makes sure the month partition of every reading exists, in a transaction of its own that
/// commits before the readings are inserted.
///
/// Why here and not ahead of time by a scheduler: a reading may be for any month (a sensor
/// uploading its backlog, an import), and nothing else runs periodically per garden; creating
/// on demand needs no clock and no job. Why its own transaction: creating a partition locks
/// the parent table, and doing so while holding the insert's locks could deadlock two batches;
/// committed first, the insert only ever meets partitions that exist. Concurrent batches for a
/// new month serialise on a per-garden advisory lock and look again after taking it, so the
/// month is created once (`CREATE TABLE IF NOT EXISTS` besides). The common case (the month
/// exists) costs one catalogue read and takes no lock.
pub async fn ensure_months(
    state: &AppState,
    tenant: &TenantRecord,
    readings: &[Reading],
) -> Result<(), AppError> {
    let mut months: Vec<OffsetDateTime> = readings
        .iter()
        .map(|r| repo::month_start(r.measured_at))
        .collect();
    months.sort_unstable();
    months.dedup();
    let mut tx = TenantTx::begin(state, tenant).await?;
    let existing = repo::partitions(&mut tx).await?;
    let missing: Vec<OffsetDateTime> = months
        .into_iter()
        .filter(|m| !existing.contains(&repo::partition_name(*m)))
        .collect();
    if missing.is_empty() {
        tx.rollback().await?;
        return Ok(());
    }
    repo::lock_partitions(&mut tx).await?;
    let existing = repo::partitions(&mut tx).await?;
    for m in missing {
        if !existing.contains(&repo::partition_name(m)) {
            repo::create_month(&mut tx, m).await?;
        }
    }
    tx.commit().await?;
    Ok(())
}

/// Stores a batch of readings: all or nothing. Idempotent per (sensor, `measured_at`): a
/// reading stored before changes nothing and counts as `already_present`. `write: false` runs
/// every check, counts what would be stored and writes nothing (a tool's dry run).
pub async fn record_readings(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
    readings: &Readings,
    write: bool,
) -> Result<ReadingsStored, AppError> {
    let id = parse_sensor_key(key)?;
    let readings = &readings.0;
    let sensor = get_sensor(state, tenant, key).await?;
    check_ranges(&sensor, readings)?;
    let received = readings.len() as i64;
    let stored = if write {
        ensure_months(state, tenant, readings).await?;
        let mut tx = TenantTx::begin(state, tenant).await?;
        // The sensor may have gone since it was read: a deleted one is a 404, not a 500.
        if repo::lock(&mut tx, id).await?.is_none() {
            return Err(AppError::not_found("sensor"));
        }
        let n = repo::insert_readings(&mut tx, id, readings).await?;
        tx.commit().await?;
        n
    } else {
        let mut ats: Vec<OffsetDateTime> = readings.iter().map(|r| r.measured_at).collect();
        ats.sort_unstable();
        ats.dedup();
        let distinct = ats.len() as i64;
        let mut tx = TenantTx::read(state, tenant).await?;
        let present = repo::present(&mut tx, id, &ats).await?;
        tx.commit().await?;
        distinct - present
    };
    Ok(ReadingsStored {
        sensor_key: id,
        received,
        stored,
        already_present: received - stored,
        dry_run: !write,
    })
}

/// What a series read asks for (already parsed; see [`SeriesQuery::parse`]).
#[derive(Debug, Clone)]
pub struct SeriesQuery {
    pub from: OffsetDateTime,
    pub to: OffsetDateTime,
    pub step: Option<(String, i64)>,
    pub limit: i64,
}

impl SeriesQuery {
    /// From the query string: `from`/`to` RFC 3339 (default the last 24 hours up to now),
    /// `step` `<n>m|h|d` (1 minute to 31 days, at most 10000 buckets), `limit` 1-10000.
    pub fn parse(
        from: Option<&str>,
        to: Option<&str>,
        step: Option<&str>,
        limit: Option<&str>,
        now: OffsetDateTime,
    ) -> Result<Self, AppError> {
        use time::format_description::well_known::Rfc3339;
        let mut errors = Vec::new();
        let mut time_of = |name: &str, raw: Option<&str>| {
            raw.and_then(|s| match OffsetDateTime::parse(s.trim(), &Rfc3339) {
                Ok(t) => Some(t),
                Err(_) => {
                    errors.push(ErrorDetail::new(
                        format!("query.{name}"),
                        "must be an RFC 3339 timestamp",
                        "value_error",
                    ));
                    None
                }
            })
        };
        let to_t = time_of("to", to).unwrap_or(now);
        let from_t =
            time_of("from", from).unwrap_or(to_t - time::Duration::hours(DEFAULT_WINDOW_HOURS));
        let step = match step {
            None => None,
            Some(raw) => match rules::parse_step(raw.trim()) {
                Some(s) => Some((raw.trim().to_owned(), s)),
                None => {
                    errors.push(ErrorDetail::new(
                        "query.step",
                        "must be <n>m, <n>h or <n>d between 1m and 31d (e.g. 5m, 1h, 1d)",
                        "value_error",
                    ));
                    None
                }
            },
        };
        let limit = match limit {
            None => READINGS_DEFAULT_LIMIT,
            Some(raw) => match raw.trim().parse::<i64>() {
                Ok(n) if (1..=READINGS_MAX_LIMIT).contains(&n) => n,
                _ => {
                    errors.push(ErrorDetail::new(
                        "query.limit",
                        format!("must be a whole number between 1 and {READINGS_MAX_LIMIT}"),
                        "value_error",
                    ));
                    READINGS_DEFAULT_LIMIT
                }
            },
        };
        if errors.is_empty() && from_t >= to_t {
            errors.push(ErrorDetail::new(
                "query.from",
                "must be before to",
                "value_error",
            ));
        }
        if let Some((_, s)) = &step
            && errors.is_empty()
            && (to_t - from_t).whole_seconds() / s > rules::BUCKETS_MAX
        {
            errors.push(ErrorDetail::new(
                "query.step",
                format!(
                    "too small for the window: at most {} buckets",
                    rules::BUCKETS_MAX
                ),
                "value_error",
            ));
        }
        if !errors.is_empty() {
            return Err(AppError::validation(errors));
        }
        Ok(Self {
            from: from_t,
            to: to_t,
            step,
            limit,
        })
    }
}

/// Readings of `from <= measured_at < to` in time order (at most `limit`, `next_from` when
/// more follow), or with a step the buckets on the UTC grid (from 2000-01-01): steps of whole
/// hours come from the hourly roll-ups (kept for good), shorter ones from the raw readings.
pub async fn read_series(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
    q: &SeriesQuery,
) -> Result<ReadingSeries, AppError> {
    let id = parse_sensor_key(key)?;
    let mut tx = TenantTx::read(state, tenant).await?;
    let sensor = repo::get(&mut tx, id)
        .await?
        .ok_or_else(|| AppError::not_found("sensor"))?;
    let (readings, buckets, resolution, next_from) = match &q.step {
        None => {
            let mut rows = repo::raw(&mut tx, id, q.from, q.to, q.limit + 1).await?;
            let next = if rows.len() as i64 > q.limit {
                rows.truncate(q.limit as usize);
                rows.last()
                    .map(|r| r.measured_at + time::Duration::microseconds(1))
            } else {
                None
            };
            (rows, Vec::new(), "raw", next)
        }
        Some((_, s)) if s % 3600 == 0 => {
            let b = repo::hourly_buckets(&mut tx, id, q.from, q.to, *s).await?;
            (Vec::new(), b, "hourly", None)
        }
        Some((_, s)) => {
            let b = repo::raw_buckets(&mut tx, id, q.from, q.to, *s).await?;
            (Vec::new(), b, "raw_buckets", None)
        }
    };
    tx.commit().await?;
    Ok(ReadingSeries {
        sensor_key: id,
        metric: sensor.metric,
        unit: sensor.unit,
        source: sensor.source,
        from: q.from,
        to: q.to,
        step: q.step.as_ref().map(|(raw, _)| raw.clone()),
        resolution: resolution.to_owned(),
        readings,
        buckets,
        limit: q.limit,
        next_from,
    })
}

// ---------------------------------------------------------------------------------------------
// The environment of a plant, location or site.

/// Where `get_environment` looks.
#[derive(Debug, Clone, Copy)]
pub enum Around {
    Plant(Uuid),
    Location(Uuid),
    Site(Uuid),
}

/// One sensor with its latest reading (none yet: null).
#[derive(Debug, Clone)]
pub struct LatestReading {
    pub sensor: Sensor,
    /// `location` or `site`: which place the sensor stands at.
    pub origin: &'static str,
    pub latest: Option<ReadingOut>,
}

/// The sensors of a plant's location and that location's site (a location: itself and its
/// site; a site: itself) with their latest readings. A key of another garden is `not_found`.
pub async fn environment(
    state: &AppState,
    tenant: &TenantRecord,
    around: Around,
) -> Result<Vec<LatestReading>, AppError> {
    let mut tx = TenantTx::read(state, tenant).await?;
    let location = match around {
        Around::Plant(p) => repo::plant_location(&mut tx, p)
            .await?
            .ok_or_else(|| AppError::not_found("plant"))?,
        Around::Location(l) => Some(l),
        Around::Site(_) => None,
    };
    let site = match (around, location) {
        (Around::Site(s), _) => {
            if !repo::place_exists(&mut tx, Place::Site(s)).await? {
                return Err(AppError::not_found("site"));
            }
            Some(s)
        }
        (_, Some(l)) => Some(
            repo::location_site(&mut tx, l)
                .await?
                .ok_or_else(|| AppError::not_found("location"))?,
        ),
        (_, None) => None,
    };
    let mut sensors: Vec<(Sensor, &'static str)> = Vec::new();
    if let Some(l) = location {
        for s in repo::at_place(&mut tx, Place::Location(l)).await? {
            sensors.push((s, "location"));
        }
    }
    if let Some(s) = site {
        for x in repo::at_place(&mut tx, Place::Site(s)).await? {
            sensors.push((x, "site"));
        }
    }
    let ids: Vec<Uuid> = sensors.iter().map(|(s, _)| s.key).collect();
    let latest = repo::latest(&mut tx, &ids).await?;
    tx.commit().await?;
    Ok(sensors
        .into_iter()
        .map(|(sensor, origin)| {
            let latest = latest
                .iter()
                .find(|(id, _)| *id == sensor.key)
                .map(|(_, r)| *r);
            LatestReading {
                sensor,
                origin,
                latest,
            }
        })
        .collect())
}

// ---------------------------------------------------------------------------------------------
// Retention.

#[derive(Debug, Clone, Default)]
pub struct PruneSummary {
    pub partitions_dropped: u64,
    pub rows_deleted: u64,
}

/// Raw readings older than 90 days go: month partitions wholly older are dropped, older rows
/// of the month that straddles the limit (and of the default partition) deleted. The hourly
/// roll-ups stay.
pub async fn prune(
    state: &AppState,
    tenant: &TenantRecord,
    now: OffsetDateTime,
) -> Result<PruneSummary, AppError> {
    let limit = now - time::Duration::days(rules::RAW_RETENTION_DAYS);
    let mut tx = TenantTx::begin(state, tenant).await?;
    repo::lock_partitions(&mut tx).await?;
    let mut summary = PruneSummary::default();
    for name in repo::partitions(&mut tx).await? {
        let Some(end) = partition_end(&name) else {
            continue;
        };
        if end <= limit {
            repo::drop_partition(&mut tx, &name).await?;
            summary.partitions_dropped += 1;
        }
    }
    summary.rows_deleted = repo::delete_raw_before(&mut tx, limit).await?;
    tx.commit().await?;
    Ok(summary)
}

/// The end of a month partition from its name `sensor_readings_pYYYY_MM`.
fn partition_end(name: &str) -> Option<OffsetDateTime> {
    let rest = name.strip_prefix("sensor_readings_p")?;
    let (y, m) = rest.split_once('_')?;
    let month = time::Month::try_from(m.parse::<u8>().ok()?).ok()?;
    let start = time::Date::from_calendar_date(y.parse().ok()?, month, 1).ok()?;
    Some(repo::next_month(
        time::PrimitiveDateTime::new(start, time::Time::MIDNIGHT).assume_utc(),
    ))
}

/// [`prune`] for every active garden; one garden failing does not stop the others.
pub async fn prune_all(
    state: &AppState,
    now: OffsetDateTime,
) -> Result<(PruneSummary, Vec<(String, String)>), AppError> {
    let mut total = PruneSummary::default();
    let mut failed = Vec::new();
    for tenant in registry::list(state.platform_pool()).await? {
        if tenant.status != TenantStatus::Active {
            continue;
        }
        match prune(state, &tenant, now).await {
            Ok(s) => {
                total.partitions_dropped += s.partitions_dropped;
                total.rows_deleted += s.rows_deleted;
            }
            Err(e) => failed.push((tenant.slug.as_str().to_owned(), e.to_string())),
        }
    }
    Ok((total, failed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partition_ends() {
        assert_eq!(
            partition_end("sensor_readings_p2026_12").map(|t| t.date().to_string()),
            Some("2027-01-01".to_owned())
        );
        assert_eq!(partition_end("sensor_readings_default"), None);
    }
}
