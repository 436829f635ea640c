//! Many gardens with sensors reporting every minute, and the alert scan over all of them.
//!
//! Each garden is provisioned as the service provisions one, then gets, through the
//! services (the same calls the REST routes make): a greenhouse site, a location, a tomato
//! plant standing there (its phase from the species' sequence) and 10 sensors at the location,
//! each expecting a reading every minute. The last hour of their minute readings is written by
//! SQL (with the hourly roll-ups), after `ensure_months` made the month partitions: 600
//! readings a garden through the API would take the run minutes and measure nothing here. The
//! 10th sensor (soil moisture) stopped 20 minutes ago: silent, so the first scan opens one
//! alert per garden; the second scan finds everything as it was (nothing opened or resolved).

use std::time::Instant;

use futures_util::StreamExt;
use kultiva::config::Config;
use kultiva::garden::sensors::model::Reading;
use kultiva::garden::{places, plants, sensors, sites};
use kultiva::notify::alerts::scan_all;
use kultiva::state::AppState;
use kultiva::tenancy::provision::{self, ProvisionOptions};
use kultiva::tenancy::{TenantRecord, TenantSlug};
use kultiva::values::json::parse_json;
use serde_json::{Value, json};
use sqlx::AssertSqlSafe;
use time::OffsetDateTime;

use crate::args::{Args, write_json};
use crate::db;

const METRICS: [&str; 10] = [
    "temperature_c",
    "humidity_percent",
    "ec_ms_cm",
    "ph",
    "co2_ppm",
    "light_lux",
    "ppfd_umol_m2_s",
    "water_temperature_c",
    "temperature_c",
    "soil_moisture_percent",
];

fn app<E: std::fmt::Display>(what: &'static str) -> impl Fn(E) -> String {
    move |e| format!("{what}: {e}")
}

/// A site, a location, a plant and the 10 sensors of one garden, then their last hour.
async fn furnish(
    state: &AppState,
    tenant: &TenantRecord,
    species: &str,
    now: OffsetDateTime,
) -> Result<(), String> {
    let site = sites::service::create_site(
        state,
        tenant,
        &parse_json(br#"{"name":"Greenhouse","kind":"greenhouse"}"#).map_err(app("site"))?,
    )
    .await
    .map_err(app("site"))?;
    let body = json!({"name": "Bench 1", "site_key": site.key}).to_string();
    let location = places::service::create_location(
        state,
        tenant,
        &parse_json(body.as_bytes()).map_err(app("location"))?,
    )
    .await
    .map_err(app("location"))?;
    let location = location.location.key;
    let body =
        json!({"species_key": species, "name": "Tomato 1", "location_key": location}).to_string();
    plants::service::create_plant(
        state,
        tenant,
        &parse_json(body.as_bytes()).map_err(app("plant"))?,
        "sensor_load",
        true,
    )
    .await
    .map_err(app("plant"))?;
    for (i, metric) in METRICS.iter().enumerate() {
        let name = if i == 9 {
            "silent".to_owned()
        } else {
            format!("{metric} {i}")
        };
        let body = json!({"name": name, "metric": metric, "location_key": location,
                          "source": "http", "expected_interval_minutes": 1})
        .to_string();
        sensors::service::create_sensor(
            state,
            tenant,
            &parse_json(body.as_bytes()).map_err(app("sensor"))?,
        )
        .await
        .map_err(app("sensor"))?;
    }
    let from = now - time::Duration::minutes(59);
    let ends = [from, now].map(|measured_at| Reading {
        value: 0.0,
        measured_at,
    });
    sensors::service::ensure_months(state, tenant, &ends)
        .await
        .map_err(app("partitions"))?;
    let schema = tenant.schema_name.to_string();
    let sql = format!(
        "WITH stored AS ( \
           INSERT INTO {schema}.sensor_readings (sensor_id, measured_at, value) \
           SELECT s.id, g.t, CASE s.metric WHEN 'temperature_c' THEN 24 WHEN 'humidity_percent' \
             THEN 62 WHEN 'ec_ms_cm' THEN 1.8 WHEN 'ph' THEN 6.1 WHEN 'co2_ppm' THEN 800 \
             WHEN 'light_lux' THEN 20000 WHEN 'ppfd_umol_m2_s' THEN 450 \
             WHEN 'water_temperature_c' THEN 20 ELSE 40 END \
             + 0.1 * sin(extract(epoch FROM g.t) / 600) \
           FROM {schema}.sensors s \
           CROSS JOIN generate_series($1::timestamptz, $2::timestamptz, interval '1 minute') g(t) \
           WHERE s.name <> 'silent' OR g.t <= $2 - interval '20 minutes' \
           RETURNING sensor_id, measured_at, value) \
         INSERT INTO {schema}.sensor_readings_hourly \
           (sensor_id, hour, min_value, max_value, sum_value, count) \
         SELECT sensor_id, date_bin('1 hour', measured_at, timestamptz '2000-01-01 00:00:00+00'), \
                min(value), max(value), sum(value), count(*) FROM stored GROUP BY 1, 2"
    );
    sqlx::query(AssertSqlSafe(sql))
        .bind(from)
        .bind(now)
        .execute(state.platform_pool())
        .await
        .map_err(app("readings"))?;
    Ok(())
}

/// One timed scan of every garden with PostgreSQL's work during it.
async fn timed_scan(state: &AppState, pool: &sqlx::PgPool) -> Result<Value, String> {
    let before = db::work(pool).await?;
    let started = Instant::now();
    let (summary, failed) = scan_all(state, OffsetDateTime::now_utc())
        .await
        .map_err(app("scan"))?;
    let seconds = started.elapsed().as_secs_f64();
    let after = db::work(pool).await?;
    if let Some((slug, reason)) = failed.first() {
        return Err(format!(
            "the scan failed in {} gardens, first {slug}: {reason}",
            failed.len()
        ));
    }
    Ok(json!({
        "gardens": summary.gardens, "opened": summary.opened, "resolved": summary.resolved,
        "seconds": seconds, "ms_per_garden": seconds * 1000.0 / summary.gardens.max(1) as f64,
        "database": db::delta(&before, &after),
    }))
}

pub async fn run(args: &Args) -> Result<(), String> {
    let gardens = args.number("gardens", 2000)?;
    let jobs = args.number("jobs", 4)?;
    let prefix = args.text_or("prefix", "sensors");
    let out = args.text("json")?;
    let config = Config::from_env().map_err(|e| e.to_string())?;
    let state = AppState::new(config).map_err(|e| e.to_string())?;
    kultiva::tenancy::migrate::migrate_platform(state.platform_pool())
        .await
        .map_err(|e| e.to_string())?;
    let pool = db::pool().await?;
    let species: String = sqlx::query_scalar(
        "SELECT id::text FROM platform.catalog_records \
         WHERE kind = 'species' AND name = 'Solanum lycopersicum'",
    )
    .fetch_one(&pool)
    .await
    .map_err(app("the tomato of the catalogue (kultiva seed)"))?;

    let slugs = (0..gardens)
        .map(|i| TenantSlug::parse(&format!("{prefix}-{i:04}")).map_err(|e| e.to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    eprintln!("[sensor_load] provisioning {gardens} gardens, {jobs} at a time");
    let started = Instant::now();
    let made: Vec<Result<TenantRecord, String>> = futures_util::stream::iter(&slugs)
        .map(|slug| {
            let state = &state;
            async move {
                provision::create_tenant(state, slug, "Sensor scale", ProvisionOptions::default())
                    .await
                    .map_err(|e| format!("provision {slug}: {e}"))
            }
        })
        .buffer_unordered(jobs)
        .collect()
        .await;
    let provision_s = started.elapsed().as_secs_f64();
    let tenants = made.into_iter().collect::<Result<Vec<_>, _>>()?;
    eprintln!(
        "[sensor_load]   {provision_s:.1} s; furnishing them (site, location, plant, 10 sensors, an hour of readings)"
    );
    let now = OffsetDateTime::now_utc();
    let now = now
        .replace_second(0)
        .unwrap_or(now)
        .replace_nanosecond(0)
        .unwrap_or(now);
    let started = Instant::now();
    let furnished: Vec<Result<(), String>> = futures_util::stream::iter(&tenants)
        .map(|t| {
            let (state, species) = (&state, &species);
            async move {
                furnish(state, t, species, now)
                    .await
                    .map_err(|e| format!("{}: {e}", t.slug))
            }
        })
        .buffer_unordered(jobs)
        .collect()
        .await;
    let furnish_s = started.elapsed().as_secs_f64();
    furnished.into_iter().collect::<Result<Vec<_>, _>>()?;
    let readings: i64 = {
        let mut n = 0i64;
        for t in &tenants {
            let c: i64 = sqlx::query_scalar(AssertSqlSafe(format!(
                "SELECT count(*) FROM {}.sensor_readings",
                t.schema_name
            )))
            .fetch_one(&pool)
            .await
            .map_err(app("count"))?;
            n += c;
        }
        n
    };
    eprintln!("[sensor_load]   {furnish_s:.1} s, {readings} readings; scanning twice");
    let first = timed_scan(&state, &pool).await?;
    eprintln!("[sensor_load]   first scan {first}");
    let second = timed_scan(&state, &pool).await?;
    eprintln!("[sensor_load]   second scan {second}");
    state.close().await;
    let opened_first = first["opened"].as_u64().unwrap_or(0);
    let steady = second["opened"].as_u64() == Some(0) && second["resolved"].as_u64() == Some(0);
    let value = json!({
        "gardens": gardens, "jobs": jobs, "sensors": gardens * 10, "readings": readings,
        "provision_seconds": provision_s, "furnish_seconds": furnish_s,
        "scans": [first, second],
        "checks": {"first_opened_at_least_one_per_garden": opened_first >= gardens as u64,
                   "second_changed_nothing": steady},
    });
    write_json(&out, &value)?;
    if opened_first < gardens as u64 || !steady {
        return Err(format!(
            "the scans did not do what the data implies: first opened {opened_first} (at least {gardens}), second {second}"
        ));
    }
    Ok(())
}
