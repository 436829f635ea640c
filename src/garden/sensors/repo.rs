//! SQL of sensors and their readings. Tenant tables are named `tenant.<table>`;
//! `TenantTx::sql` renders the placeholder into the tenant's schema.

use sqlx::Row;
use sqlx::postgres::PgRow;
use time::{Date, Month, OffsetDateTime, PrimitiveDateTime, Time};
use uuid::Uuid;

use super::model::{Place, Reading, ReadingBucket, ReadingOut, Sensor, SensorMetric, SensorSource};
use crate::rules::sensors;
use crate::tenancy::TenantTx;
use crate::values::page::PageRequest;

const COLUMNS: &str = "id, name, metric, location_id, site_id, tank_id, source, topic, \
                       expected_interval_minutes, created_at, updated_at";

fn decode(row: &PgRow) -> Result<Sensor, sqlx::Error> {
    let metric: String = row.try_get("metric")?;
    let source: String = row.try_get("source")?;
    let m = SensorMetric::parse(&metric)
        .ok_or_else(|| sqlx::Error::Decode(format!("unknown metric {metric:?}").into()))?;
    let rule = sensors::metric(m.as_str())
        .ok_or_else(|| sqlx::Error::Decode(format!("no range for {metric:?}").into()))?;
    let interval: Option<i32> = row.try_get("expected_interval_minutes")?;
    Ok(Sensor {
        key: row.try_get("id")?,
        name: row.try_get("name")?,
        metric: m,
        unit: rule.unit.to_owned(),
        range_min: rule.min,
        range_max: rule.max,
        location_key: row.try_get("location_id")?,
        site_key: row.try_get("site_id")?,
        tank_key: row.try_get("tank_id")?,
        source: SensorSource::parse(&source)
            .ok_or_else(|| sqlx::Error::Decode(format!("unknown source {source:?}").into()))?,
        topic: row.try_get("topic")?,
        expected_interval_minutes: interval.map(i64::from),
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

fn place_ids(place: Place) -> (Option<Uuid>, Option<Uuid>, Option<Uuid>) {
    match place {
        Place::Location(id) => (Some(id), None, None),
        Place::Site(id) => (None, Some(id), None),
        Place::Tank(id) => (None, None, Some(id)),
    }
}

/// Whether the place is a record of this garden.
pub async fn place_exists(tx: &mut TenantTx, place: Place) -> Result<bool, sqlx::Error> {
    let (table, id) = match place {
        Place::Location(id) => ("locations", id),
        Place::Site(id) => ("sites", id),
        Place::Tank(id) => ("tanks", id),
    };
    sqlx::query_scalar(tx.sql(&format!(
        "SELECT EXISTS (SELECT 1 FROM tenant.{table} WHERE id = $1)"
    )))
    .bind(id)
    .fetch_one(tx.conn())
    .await
}

/// Every sensor that reads an MQTT topic (`mqtt`, `home_assistant`): key, source, topic.
pub async fn mqtt_topics(
    tx: &mut TenantTx,
) -> Result<Vec<(Uuid, SensorSource, String)>, sqlx::Error> {
    let rows = sqlx::query(tx.sql(
        "SELECT id, source, topic FROM tenant.sensors \
         WHERE source IN ('mqtt', 'home_assistant') AND topic IS NOT NULL ORDER BY id",
    ))
    .fetch_all(tx.conn())
    .await?;
    rows.iter()
        .map(|row| {
            let source: String = row.try_get("source")?;
            let source = SensorSource::parse(&source)
                .ok_or_else(|| sqlx::Error::Decode(format!("unknown source {source:?}").into()))?;
            Ok((row.try_get("id")?, source, row.try_get("topic")?))
        })
        .collect()
}

pub async fn count(tx: &mut TenantTx) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(tx.sql("SELECT count(*) FROM tenant.sensors"))
        .fetch_one(tx.conn())
        .await
}

/// One page of sensors and the number of sensors (`None` past the end).
pub async fn list(
    tx: &mut TenantTx,
    page: PageRequest,
) -> Result<(Vec<Sensor>, Option<i64>), sqlx::Error> {
    let sql = tx.sql(&format!(
        "SELECT {COLUMNS}, count(*) OVER () AS matched FROM tenant.sensors \
         ORDER BY created_at, id LIMIT $1 OFFSET $2"
    ));
    let rows = sqlx::query(sql)
        .bind(page.limit)
        .bind(page.skip)
        .fetch_all(tx.conn())
        .await?;
    let matched = match rows.first() {
        Some(r) => Some(r.try_get::<i64, _>("matched")?),
        None => None,
    };
    let items = rows.iter().map(decode).collect::<Result<Vec<_>, _>>()?;
    Ok((items, matched))
}

pub async fn get(tx: &mut TenantTx, id: Uuid) -> Result<Option<Sensor>, sqlx::Error> {
    let sql = tx.sql(&format!(
        "SELECT {COLUMNS} FROM tenant.sensors WHERE id = $1"
    ));
    let row = sqlx::query(sql).bind(id).fetch_optional(tx.conn()).await?;
    row.as_ref().map(decode).transpose()
}

pub async fn lock(tx: &mut TenantTx, id: Uuid) -> Result<Option<Sensor>, sqlx::Error> {
    let sql = tx.sql(&format!(
        "SELECT {COLUMNS} FROM tenant.sensors WHERE id = $1 FOR UPDATE"
    ));
    let row = sqlx::query(sql).bind(id).fetch_optional(tx.conn()).await?;
    row.as_ref().map(decode).transpose()
}

/// The full record to write (a new one, or one as a patch leaves it).
pub struct SensorRow<'a> {
    pub id: Uuid,
    pub name: &'a str,
    pub metric: SensorMetric,
    pub place: Place,
    pub source: SensorSource,
    pub topic: Option<&'a str>,
    pub expected_interval_minutes: Option<i64>,
}

/// `None` when a sensor of that name (case-insensitive) exists.
pub async fn insert(tx: &mut TenantTx, s: &SensorRow<'_>) -> Result<Option<Sensor>, sqlx::Error> {
    let (location, site, tank) = place_ids(s.place);
    let sql = tx.sql(&format!(
        "INSERT INTO tenant.sensors (id, name, metric, location_id, site_id, tank_id, source, \
         topic, expected_interval_minutes) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) \
         ON CONFLICT DO NOTHING RETURNING {COLUMNS}"
    ));
    let row = sqlx::query(sql)
        .bind(s.id)
        .bind(s.name)
        .bind(s.metric.as_str())
        .bind(location)
        .bind(site)
        .bind(tank)
        .bind(s.source.as_str())
        .bind(s.topic)
        .bind(s.expected_interval_minutes.map(|m| m as i32))
        .fetch_optional(tx.conn())
        .await?;
    row.as_ref().map(decode).transpose()
}

pub async fn name_taken(tx: &mut TenantTx, name: &str, except: Uuid) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar(tx.sql(
        "SELECT EXISTS (SELECT 1 FROM tenant.sensors WHERE lower(name) = lower($1) AND id <> $2)",
    ))
    .bind(name)
    .bind(except)
    .fetch_one(tx.conn())
    .await
}

pub async fn update(tx: &mut TenantTx, s: &SensorRow<'_>) -> Result<Option<Sensor>, sqlx::Error> {
    let (location, site, tank) = place_ids(s.place);
    let sql = tx.sql(&format!(
        "UPDATE tenant.sensors SET name = $2, location_id = $3, site_id = $4, tank_id = $5, \
         source = $6, topic = $7, expected_interval_minutes = $8, updated_at = now() \
         WHERE id = $1 RETURNING {COLUMNS}"
    ));
    let row = sqlx::query(sql)
        .bind(s.id)
        .bind(s.name)
        .bind(location)
        .bind(site)
        .bind(tank)
        .bind(s.source.as_str())
        .bind(s.topic)
        .bind(s.expected_interval_minutes.map(|m| m as i32))
        .fetch_optional(tx.conn())
        .await?;
    row.as_ref().map(decode).transpose()
}

/// Deletes the sensor; its readings and roll-ups go with it (foreign keys cascade).
pub async fn delete(tx: &mut TenantTx, id: Uuid) -> Result<(), sqlx::Error> {
    sqlx::query(tx.sql("DELETE FROM tenant.sensors WHERE id = $1"))
        .bind(id)
        .execute(tx.conn())
        .await?;
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Month partitions.

/// First instant (UTC) of the month of `t`.
pub fn month_start(t: OffsetDateTime) -> OffsetDateTime {
    let t = t.to_offset(time::UtcOffset::UTC);
    let day = Date::from_calendar_date(t.year(), t.month(), 1).unwrap_or(t.date());
    PrimitiveDateTime::new(day, Time::MIDNIGHT).assume_utc()
}

/// First instant of the month after the one starting at `start`.
pub fn next_month(start: OffsetDateTime) -> OffsetDateTime {
    let (y, m) = match start.month() {
        Month::December => (start.year() + 1, Month::January),
        m => (start.year(), m.next()),
    };
    let day = Date::from_calendar_date(y, m, 1).unwrap_or(start.date());
    PrimitiveDateTime::new(day, Time::MIDNIGHT).assume_utc()
}

/// The partition of the month starting at `start`: `sensor_readings_pYYYY_MM`.
pub fn partition_name(start: OffsetDateTime) -> String {
    format!(
        "sensor_readings_p{:04}_{:02}",
        start.year(),
        u8::from(start.month())
    )
}

fn literal(t: OffsetDateTime) -> String {
    format!(
        "'{:04}-{:02}-{:02} 00:00:00+00'",
        t.year(),
        u8::from(t.month()),
        t.day()
    )
}

/// The month partitions that exist, by name.
pub async fn partitions(tx: &mut TenantTx) -> Result<Vec<String>, sqlx::Error> {
    let schema = tx.schema().to_owned();
    sqlx::query_scalar(
        "SELECT c.relname::text FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid \
         WHERE i.inhparent = to_regclass($1) AND c.relname ~ '^sensor_readings_p[0-9]{4}_[0-9]{2}$' \
         ORDER BY 1",
    )
    .bind(format!("{schema}.sensor_readings"))
    .fetch_all(tx.conn())
    .await
}

/// Creates the partition of the month starting at `start` unless it exists. Call it inside a
/// transaction holding [`lock_partitions`]. Rows of that month in the default partition (only
/// a garden import puts any there) are moved into the new partition, which PostgreSQL requires
/// before it accepts the new range.
pub async fn create_month(tx: &mut TenantTx, start: OffsetDateTime) -> Result<(), sqlx::Error> {
    let end = next_month(start);
    let (from, to) = (literal(start), literal(end));
    let held: Vec<(Uuid, OffsetDateTime, f64)> = sqlx::query_as(tx.sql(&format!(
        "DELETE FROM tenant.sensor_readings_default WHERE measured_at >= {from} \
         AND measured_at < {to} RETURNING sensor_id, measured_at, value"
    )))
    .fetch_all(tx.conn())
    .await?;
    let name = partition_name(start);
    sqlx::query(tx.sql(&format!(
        "CREATE TABLE IF NOT EXISTS tenant.{name} PARTITION OF tenant.sensor_readings \
         FOR VALUES FROM ({from}) TO ({to})"
    )))
    .execute(tx.conn())
    .await?;
    if !held.is_empty() {
        let (ids, ats, values): (Vec<Uuid>, Vec<OffsetDateTime>, Vec<f64>) =
            held.into_iter()
                .fold((vec![], vec![], vec![]), |mut acc, (i, a, v)| {
                    acc.0.push(i);
                    acc.1.push(a);
                    acc.2.push(v);
                    acc
                });
        sqlx::query(tx.sql(
            "INSERT INTO tenant.sensor_readings (sensor_id, measured_at, value) \
             SELECT * FROM unnest($1::uuid[], $2::timestamptz[], $3::float8[]) \
             ON CONFLICT DO NOTHING",
        ))
        .bind(ids)
        .bind(ats)
        .bind(values)
        .execute(tx.conn())
        .await?;
    }
    Ok(())
}

/// Serialises partition changes of this garden until the transaction ends.
pub async fn lock_partitions(tx: &mut TenantTx) -> Result<(), sqlx::Error> {
    let key = format!("{}.sensor_readings partitions", tx.schema());
    sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))")
        .bind(key)
        .execute(tx.conn())
        .await?;
    Ok(())
}

pub async fn drop_partition(tx: &mut TenantTx, name: &str) -> Result<(), sqlx::Error> {
    // `name` is one of `partitions()` (matched against a fixed pattern), never client text.
    sqlx::query(tx.sql(&format!("DROP TABLE IF EXISTS tenant.{name}")))
        .execute(tx.conn())
        .await?;
    Ok(())
}

/// Deletes raw readings older than `before` (in partitions that straddle it and the default
/// one); the roll-ups stay.
pub async fn delete_raw_before(
    tx: &mut TenantTx,
    before: OffsetDateTime,
) -> Result<u64, sqlx::Error> {
    let done = sqlx::query(tx.sql("DELETE FROM tenant.sensor_readings WHERE measured_at < $1"))
        .bind(before)
        .execute(tx.conn())
        .await?;
    Ok(done.rows_affected())
}

// ---------------------------------------------------------------------------------------------
// Readings.

/// The roll-up half of both insert statements: adds exactly the rows `stored` returned to
/// their hours, and answers how many were stored.
const ROLL_UP: &str = "rolled AS ( \
       INSERT INTO tenant.sensor_readings_hourly AS h \
         (sensor_id, hour, min_value, max_value, sum_value, count) \
       SELECT $1, date_bin('1 hour', measured_at, timestamptz '2000-01-01 00:00:00+00'), \
              min(value), max(value), sum(value), count(*) \
       FROM stored GROUP BY 2 \
       ON CONFLICT (sensor_id, hour) DO UPDATE SET \
         min_value = LEAST(h.min_value, EXCLUDED.min_value), \
         max_value = GREATEST(h.max_value, EXCLUDED.max_value), \
         sum_value = h.sum_value + EXCLUDED.sum_value, \
         count = h.count + EXCLUDED.count \
       RETURNING 1) \
     SELECT (SELECT count(*) FROM stored) + 0 * (SELECT count(*) FROM rolled)";

/// Stores the readings not stored yet and adds exactly those to the hourly roll-ups, in one
/// statement; the number newly stored.
///
/// The caller holds the sensor's row lock ([`lock`]) until its transaction ends: every writer
/// of readings does (`service::record_readings`), so no other batch of this sensor commits in
/// between. That makes the common case cheap: a batch whose instants are distinct and of which
/// the sensor has no reading between its first and last instant (new readings, a backlog
/// uploaded once) is inserted plainly, one probe of the key index first, instead of with
/// `ON CONFLICT DO NOTHING`, whose speculative insertion cost a third of the insert's time
/// (loadtest/sensors). A batch that repeats an instant or overlaps stored readings takes the
/// `ON CONFLICT` statement, which stores each instant once (the first of the batch).
pub async fn insert_readings(
    tx: &mut TenantTx,
    sensor: Uuid,
    readings: &[Reading],
) -> Result<i64, sqlx::Error> {
    let ats: Vec<OffsetDateTime> = readings.iter().map(|r| r.measured_at).collect();
    let values: Vec<f64> = readings.iter().map(|r| r.value).collect();
    let mut sorted = ats.clone();
    sorted.sort_unstable();
    let (Some(first), Some(last)) = (sorted.first().copied(), sorted.last().copied()) else {
        return Ok(0);
    };
    let distinct = sorted.windows(2).all(|w| w[0] != w[1]);
    let fresh = distinct && !any_between(tx, sensor, first, last).await?;
    let conflict = if fresh { "" } else { "ON CONFLICT DO NOTHING" };
    sqlx::query_scalar(tx.sql(&format!(
        "WITH stored AS ( \
           INSERT INTO tenant.sensor_readings (sensor_id, measured_at, value) \
           SELECT $1, t.measured_at, t.value \
           FROM unnest($2::timestamptz[], $3::float8[]) AS t(measured_at, value) \
           {conflict} RETURNING measured_at, value), {ROLL_UP}"
    )))
    .bind(sensor)
    .bind(ats)
    .bind(values)
    .fetch_one(tx.conn())
    .await
}

/// Whether the sensor has a reading with `first <= measured_at <= last`.
async fn any_between(
    tx: &mut TenantTx,
    sensor: Uuid,
    first: OffsetDateTime,
    last: OffsetDateTime,
) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar(tx.sql(
        "SELECT EXISTS (SELECT 1 FROM tenant.sensor_readings WHERE sensor_id = $1 \
         AND measured_at >= $2 AND measured_at <= $3)",
    ))
    .bind(sensor)
    .bind(first)
    .bind(last)
    .fetch_one(tx.conn())
    .await
}

/// How many of these instants the sensor has readings for already.
pub async fn present(
    tx: &mut TenantTx,
    sensor: Uuid,
    ats: &[OffsetDateTime],
) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(tx.sql(
        "SELECT count(*) FROM tenant.sensor_readings WHERE sensor_id = $1 \
         AND measured_at = ANY($2::timestamptz[])",
    ))
    .bind(sensor)
    .bind(ats)
    .fetch_one(tx.conn())
    .await
}

/// Up to `limit` raw readings with `from <= measured_at < to`, in time order.
pub async fn raw(
    tx: &mut TenantTx,
    sensor: Uuid,
    from: OffsetDateTime,
    to: OffsetDateTime,
    limit: i64,
) -> Result<Vec<ReadingOut>, sqlx::Error> {
    let rows: Vec<(f64, OffsetDateTime)> = sqlx::query_as(tx.sql(
        "SELECT value, measured_at FROM tenant.sensor_readings WHERE sensor_id = $1 \
         AND measured_at >= $2 AND measured_at < $3 ORDER BY measured_at LIMIT $4",
    ))
    .bind(sensor)
    .bind(from)
    .bind(to)
    .bind(limit)
    .fetch_all(tx.conn())
    .await?;
    Ok(rows
        .into_iter()
        .map(|(value, measured_at)| ReadingOut { value, measured_at })
        .collect())
}

fn buckets_of(rows: Vec<(OffsetDateTime, f64, f64, f64, i64)>) -> Vec<ReadingBucket> {
    rows.into_iter()
        .map(|(start, min, sum, max, count)| ReadingBucket {
            start,
            min,
            avg: if count > 0 { sum / count as f64 } else { 0.0 },
            max,
            count,
        })
        .collect()
}

/// Buckets of `step_seconds` on the UTC grid from 2000-01-01, from the raw readings.
pub async fn raw_buckets(
    tx: &mut TenantTx,
    sensor: Uuid,
    from: OffsetDateTime,
    to: OffsetDateTime,
    step_seconds: i64,
) -> Result<Vec<ReadingBucket>, sqlx::Error> {
    let rows = sqlx::query_as(tx.sql(
        "SELECT date_bin(make_interval(secs => $4), measured_at, \
                         timestamptz '2000-01-01 00:00:00+00') AS start, \
                min(value), sum(value), max(value), count(*) \
         FROM tenant.sensor_readings WHERE sensor_id = $1 \
         AND measured_at >= $2 AND measured_at < $3 GROUP BY 1 ORDER BY 1",
    ))
    .bind(sensor)
    .bind(from)
    .bind(to)
    .bind(step_seconds as f64)
    .fetch_all(tx.conn())
    .await?;
    Ok(buckets_of(rows))
}

/// Buckets of whole hours from the hourly roll-ups (the hours that start in `from..to`).
pub async fn hourly_buckets(
    tx: &mut TenantTx,
    sensor: Uuid,
    from: OffsetDateTime,
    to: OffsetDateTime,
    step_seconds: i64,
) -> Result<Vec<ReadingBucket>, sqlx::Error> {
    let rows = sqlx::query_as(tx.sql(
        "SELECT date_bin(make_interval(secs => $4), hour, \
                         timestamptz '2000-01-01 00:00:00+00') AS start, \
                min(min_value), sum(sum_value), max(max_value), sum(count)::bigint \
         FROM tenant.sensor_readings_hourly WHERE sensor_id = $1 \
         AND hour >= $2 AND hour < $3 GROUP BY 1 ORDER BY 1",
    ))
    .bind(sensor)
    .bind(from)
    .bind(to)
    .bind(step_seconds as f64)
    .fetch_all(tx.conn())
    .await?;
    Ok(buckets_of(rows))
}

/// The latest reading of each of these sensors (those without one are left out).
pub async fn latest(
    tx: &mut TenantTx,
    sensors: &[Uuid],
) -> Result<Vec<(Uuid, ReadingOut)>, sqlx::Error> {
    let rows: Vec<(Uuid, f64, OffsetDateTime)> = sqlx::query_as(tx.sql(
        "SELECT s.id, r.value, r.measured_at FROM unnest($1::uuid[]) AS s(id) \
         CROSS JOIN LATERAL (SELECT value, measured_at FROM tenant.sensor_readings \
           WHERE sensor_id = s.id ORDER BY measured_at DESC LIMIT 1) r",
    ))
    .bind(sensors)
    .fetch_all(tx.conn())
    .await?;
    Ok(rows
        .into_iter()
        .map(|(id, value, measured_at)| (id, ReadingOut { value, measured_at }))
        .collect())
}

/// Sensors standing at a location or a site.
pub async fn at_place(tx: &mut TenantTx, place: Place) -> Result<Vec<Sensor>, sqlx::Error> {
    let (column, id) = match place {
        Place::Location(id) => ("location_id", id),
        Place::Site(id) => ("site_id", id),
        Place::Tank(id) => ("tank_id", id),
    };
    let rows = sqlx::query(tx.sql(&format!(
        "SELECT {COLUMNS} FROM tenant.sensors WHERE {column} = $1 ORDER BY name, id"
    )))
    .bind(id)
    .fetch_all(tx.conn())
    .await?;
    rows.iter().map(decode).collect()
}

/// A plant's location (null when it stands nowhere); `None`: no such plant.
pub async fn plant_location(
    tx: &mut TenantTx,
    plant: Uuid,
) -> Result<Option<Option<Uuid>>, sqlx::Error> {
    sqlx::query_scalar(tx.sql("SELECT location_id FROM tenant.plants WHERE id = $1"))
        .bind(plant)
        .fetch_optional(tx.conn())
        .await
}

/// A location's site; `None`: no such location.
pub async fn location_site(tx: &mut TenantTx, location: Uuid) -> Result<Option<Uuid>, sqlx::Error> {
    sqlx::query_scalar(tx.sql("SELECT site_id FROM tenant.locations WHERE id = $1"))
        .bind(location)
        .fetch_optional(tx.conn())
        .await
}
