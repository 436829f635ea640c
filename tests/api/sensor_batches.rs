//! The two ways a batch of readings is stored (`garden::sensors::repo::insert_readings`): a
//! batch of new instants beyond the stored ones goes in plainly, one that repeats an instant or
//! lies among stored readings takes the idempotent statement. Either way each instant is
//! stored once, the first value of a batch kept, and the hourly roll-ups match the raw rows.

use kultiva::tenancy::TenantRecord;
use serde_json::{Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::garden::{bed, count, post};
use crate::support::{TestApp, key_of};

fn at(start: OffsetDateTime, minute: i64) -> String {
    (start + time::Duration::minutes(minute))
        .format(&Rfc3339)
        .expect("rfc3339")
}

async fn post_batch(app: &TestApp, t: &TenantRecord, k: &str, readings: Value) -> Value {
    let path = format!("/api/v1/t/{}/sensors/{k}/readings", t.slug);
    let (s, v) = post(app, &path, json!({ "readings": readings })).await;
    assert_eq!(s, 200, "{v}");
    v
}

async fn scalar(app: &TestApp, t: &TenantRecord, sql: &str) -> Option<f64> {
    let sql = sql.replace("{s}", &t.schema_name.quoted());
    sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
        .fetch_one(app.state.platform_pool())
        .await
        .expect("scalar")
}

/// Hours whose roll-up differs from the raw rows (none when they agree).
async fn rollups_off(app: &TestApp, t: &TenantRecord) -> f64 {
    scalar(
        app,
        t,
        "SELECT count(*)::float8 FROM (SELECT date_bin('1 hour', measured_at, timestamptz '2000-01-01Z') AS hour, \
         min(value) AS mn, max(value) AS mx, sum(value) AS sm, count(*) AS n \
         FROM {s}.sensor_readings GROUP BY 1) r FULL JOIN {s}.sensor_readings_hourly h USING (hour) \
         WHERE r.n IS DISTINCT FROM h.count OR r.mn IS DISTINCT FROM h.min_value \
         OR r.mx IS DISTINCT FROM h.max_value OR abs(r.sm - h.sum_value) > 1e-9 \
         OR r.sm IS NULL OR h.sum_value IS NULL",
    )
    .await
    .unwrap_or(-1.0)
}

#[tokio::test]
async fn new_batches_gaps_and_repeats_store_each_instant_once() {
    let app = TestApp::spawn().await;
    let t = app.tenant("batches").await;
    let (_, loc, _) = bed(&app, &t, "Bench", 0).await;
    let path = format!("/api/v1/t/{}/sensors", t.slug);
    let (s, made) = post(
        &app,
        &path,
        json!({"name": "Air", "metric": "temperature_c", "location_key": loc, "source": "http"}),
    )
    .await;
    assert_eq!(s, 201, "{made}");
    let k = key_of(&made);
    let now = OffsetDateTime::now_utc();
    let start = now
        .replace_minute(0)
        .and_then(|t| t.replace_second(0))
        .and_then(|t| t.replace_nanosecond(0))
        .expect("hour")
        - time::Duration::hours(6);
    let at = |m: i64| at(start, m);

    // New instants, every other minute of two hours: stored plainly, all of them.
    let evens: Vec<Value> = (0..60)
        .map(|i| json!({"value": 20.0 + i as f64 / 10.0, "measured_at": at(2 * i)}))
        .collect();
    let v = post_batch(&app, &t, &k, json!(evens)).await;
    assert_eq!(
        (v["stored"].clone(), v["already_present"].clone()),
        (json!(60), json!(0))
    );

    // The odd minutes in between (among stored readings, none of them stored yet): all new.
    let odds: Vec<Value> = (0..60)
        .map(|i| json!({"value": 10.0, "measured_at": at(2 * i + 1)}))
        .collect();
    let v = post_batch(&app, &t, &k, json!(odds)).await;
    assert_eq!(
        (v["stored"].clone(), v["already_present"].clone()),
        (json!(60), json!(0))
    );
    assert_eq!(count(&app, &t, "sensor_readings").await, 120);

    // Beyond the stored ones, with one instant twice: stored once, the first value kept.
    let later = json!([
        {"value": 30.0, "measured_at": at(200)},
        {"value": 31.0, "measured_at": at(201)},
        {"value": 39.0, "measured_at": at(200)},
    ]);
    let v = post_batch(&app, &t, &k, later).await;
    assert_eq!(
        (v["stored"].clone(), v["already_present"].clone()),
        (json!(2), json!(1))
    );
    let kept = scalar(
        &app,
        &t,
        &format!(
            "SELECT value FROM {{s}}.sensor_readings WHERE measured_at = '{}'",
            at(200)
        ),
    )
    .await;
    assert_eq!(kept, Some(30.0));

    // The same batches again: nothing new, nothing changed.
    let v = post_batch(&app, &t, &k, json!(evens)).await;
    assert_eq!(
        (v["stored"].clone(), v["already_present"].clone()),
        (json!(0), json!(60))
    );
    assert_eq!(count(&app, &t, "sensor_readings").await, 122);
    assert_eq!(rollups_off(&app, &t).await, 0.0);
    // Two whole hours of minute readings, and the hour of minutes 200 and 201.
    assert_eq!(count(&app, &t, "sensor_readings_hourly").await, 3);
    let first_hour = scalar(
        &app,
        &t,
        "SELECT count::float8 FROM {s}.sensor_readings_hourly ORDER BY hour LIMIT 1",
    )
    .await;
    assert_eq!(first_hour, Some(60.0));
}
