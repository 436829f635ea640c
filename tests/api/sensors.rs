//! Sensors and readings through REST and the tools: records with roles, every refusal with
//! nothing written, idempotent batches, chart steps, two gardens, the roll-up and the prune.

use kultiva::auth::Role;
use kultiva::tenancy::TenantRecord;
use serde_json::{Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use uuid::Uuid;

use crate::garden::{bed, count, get_json, post};
use crate::support::{JsonReply, TestApp, assert_error, detail_fields, key_of};

fn base(t: &TenantRecord) -> String {
    format!("/api/v1/t/{}/sensors", t.slug)
}

fn ts(t: OffsetDateTime) -> String {
    t.format(&Rfc3339).expect("rfc3339")
}

/// A whole minute some minutes ago (clear of the hour boundaries the tests reason about).
fn hour_start(hours_ago: i64) -> OffsetDateTime {
    let now = OffsetDateTime::now_utc();
    let t = now - time::Duration::hours(hours_ago);
    t.replace_minute(0)
        .and_then(|t| t.replace_second(0))
        .and_then(|t| t.replace_nanosecond(0))
        .expect("hour")
}

async fn sensor(app: &TestApp, t: &TenantRecord, body: Value) -> Value {
    let (s, v) = post(app, &base(t), body.clone()).await;
    assert_eq!(s, 201, "create sensor {body}: {v}");
    v
}

async fn ph_sensor(app: &TestApp, t: &TenantRecord, name: &str) -> (String, Uuid) {
    let (_, loc, _) = bed(app, t, name, 0).await;
    let s = sensor(
        app,
        t,
        json!({"name": name, "metric": "ph", "location_key": loc, "source": "http"}),
    )
    .await;
    (key_of(&s), loc)
}

async fn post_readings(app: &TestApp, t: &TenantRecord, k: &str, readings: Value) -> (u16, Value) {
    post(
        app,
        &format!("{}/{k}/readings", base(t)),
        json!({ "readings": readings }),
    )
    .await
}

async fn scalar(app: &TestApp, t: &TenantRecord, sql: &str) -> i64 {
    let sql = sql.replace("{s}", &t.schema_name.quoted());
    sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
        .fetch_one(app.state.platform_pool())
        .await
        .expect("scalar")
}

#[tokio::test]
async fn sensors_crud_and_every_refusal_writes_nothing() {
    let app = TestApp::spawn().await;
    let t = app.tenant("sensors").await;
    let (site, loc, _) = bed(&app, &t, "Grow tent", 0).await;
    let (s, tank) = post(
        &app,
        &format!("/api/v1/t/{}/tanks/", t.slug),
        json!({"name": "Res", "kind": "nutrient", "volume_liters": 40}),
    )
    .await;
    assert_eq!(s, 201, "{tank}");
    let tank = key_of(&tank);

    let created = sensor(
        &app,
        &t,
        json!({"name": " Tent air ", "metric": "temperature_c", "location_key": loc,
               "source": "mqtt", "topic": format!("kultiva/{}/tent/air/temp", t.slug),
               "expected_interval_minutes": 5}),
    )
    .await;
    assert_eq!(created["name"], "Tent air");
    assert_eq!(created["unit"], "°C");
    assert_eq!(created["range_min"], -50.0);
    assert_eq!(created["range_max"], 70.0);
    assert_eq!(created["location_key"], loc.to_string());
    assert_eq!(created["site_key"], Value::Null);
    assert_eq!(
        created["topic"],
        format!("kultiva/{}/tent/air/temp", t.slug)
    );
    assert_eq!(created["expected_interval_minutes"], 5);
    let k = key_of(&created);
    sensor(
        &app,
        &t,
        json!({"name": "Res EC", "metric": "ec_ms_cm", "tank_key": tank, "source": "http"}),
    )
    .await;
    sensor(
        &app,
        &t,
        json!({"name": "Site RH", "metric": "humidity_percent", "site_key": site,
               "source": "home_assistant",
               "topic": format!("kultiva/{}/ha/sensor/rh/state", t.slug)}),
    )
    .await;
    assert_eq!(count(&app, &t, "sensors").await, 3);

    let ok = json!({"name": "X", "metric": "ph", "location_key": loc, "source": "http"});
    let with = |patch: Value| {
        let mut b = ok.clone();
        for (k, v) in patch.as_object().expect("object") {
            if v.is_null() {
                b.as_object_mut().expect("o").remove(k);
            } else {
                b[k] = v.clone();
            }
        }
        b
    };
    let refusals: Vec<(Value, Vec<&str>)> = vec![
        (
            with(json!({"location_key": null})),
            vec!["body.location_key", "body.site_key", "body.tank_key"],
        ),
        (
            with(json!({"site_key": site})),
            vec!["body.location_key", "body.site_key"],
        ),
        (with(json!({"metric": "vpd_kpa"})), vec!["body.metric"]),
        (with(json!({"source": "zigbee"})), vec!["body.source"]),
        (with(json!({"source": "mqtt"})), vec!["body.topic"]),
        (
            with(json!({"source": "home_assistant"})),
            vec!["body.topic"],
        ),
        (with(json!({"topic": "a/b"})), vec!["body.topic"]),
        (
            with(json!({"source": "mqtt", "topic": "tent/#"})),
            vec!["body.topic"],
        ),
        // Outside the garden's prefix kultiva/<slug>/ (topics are global on a broker).
        (
            with(json!({"source": "mqtt", "topic": "tent/air"})),
            vec!["body.topic"],
        ),
        (
            with(json!({"source": "home_assistant", "topic": "homeassistant/sensor/rh/state"})),
            vec!["body.topic"],
        ),
        (
            with(json!({"expected_interval_minutes": 0})),
            vec!["body.expected_interval_minutes"],
        ),
        (
            with(json!({"expected_interval_minutes": 10081})),
            vec!["body.expected_interval_minutes"],
        ),
        (with(json!({"name": "  "})), vec!["body.name"]),
        (with(json!({"colour": "red"})), vec!["body.colour"]),
        (
            with(json!({"location_key": "not-a-key"})),
            vec!["body.location_key"],
        ),
    ];
    for (body, fields) in refusals {
        let res = app.rest().post(&base(&t), &body).await;
        let v = assert_error(res, 422, "VALIDATION_ERROR").await;
        let mut got = detail_fields(&v);
        got.sort();
        assert_eq!(got, fields, "{body}: {v}");
    }
    // Unknown places are not found, like another garden's.
    for field in ["location_key", "site_key", "tank_key"] {
        let mut body = with(json!({"location_key": null}));
        body[field] = json!(Uuid::now_v7());
        let res = app.rest().post(&base(&t), &body).await;
        assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    }
    // A taken name (case-insensitive).
    let res = app
        .rest()
        .post(&base(&t), &with(json!({"name": "TENT AIR"})))
        .await;
    assert_error(res, 409, "DUPLICATE_ENTRY").await;
    assert_eq!(count(&app, &t, "sensors").await, 3);

    // Read.
    let (s, page) = get_json(&app, &format!("{}?limit=2", base(&t))).await;
    assert_eq!(s, 200);
    assert_eq!(page["total"], 3);
    assert_eq!(page["items"].as_array().map(Vec::len), Some(2));
    let (s, one) = get_json(&app, &format!("{}/{k}", base(&t))).await;
    assert_eq!((s, one["name"].clone()), (200, json!("Tent air")));
    let (s, _) = get_json(&app, &format!("{}/{}", base(&t), Uuid::now_v7())).await;
    assert_eq!(s, 404);
    let (s, _) = get_json(&app, &format!("{}/nope", base(&t))).await;
    assert_eq!(s, 404);

    // Patch: move to the site, switch to http (the topic goes), clear the interval.
    let path = format!("{}/{k}", base(&t));
    let res = app
        .rest()
        .patch(
            &path,
            &json!({"site_key": site, "source": "http", "expected_interval_minutes": null,
                    "name": "Site air"}),
        )
        .await;
    let (s, p) = res.status_json().await;
    assert_eq!(s, 200, "{p}");
    assert_eq!(p["site_key"], site.to_string());
    assert_eq!(p["location_key"], Value::Null);
    assert_eq!(p["topic"], Value::Null);
    assert_eq!(p["expected_interval_minutes"], Value::Null);
    assert_eq!(p["metric"], "temperature_c");
    for (body, field) in [
        (json!({"metric": "ph"}), "body.metric"),
        (json!({"topic": "x/y"}), "body.topic"),
        (json!({"source": "mqtt"}), "body.topic"),
        (json!({"source": "mqtt", "topic": "tent/air"}), "body.topic"),
        (json!({"site_key": site, "tank_key": tank}), "body.site_key"),
        (json!({"name": null}), "body.name"),
        (json!({"wat": 1}), "body.wat"),
    ] {
        let res = app.rest().patch(&path, &body).await;
        let v = assert_error(res, 422, "VALIDATION_ERROR").await;
        assert!(detail_fields(&v).contains(&field.to_owned()), "{body}: {v}");
    }
    let res = app
        .rest()
        .patch(&path, &json!({"location_key": Uuid::now_v7()}))
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    let (_, still) = get_json(&app, &path).await;
    assert_eq!(still["name"], "Site air");
    assert_eq!(still["site_key"], site.to_string());

    // Delete takes the readings and the roll-ups with it.
    let at = ts(hour_start(2));
    let (s, v) = post_readings(&app, &t, &k, json!([{"value": 21.5, "measured_at": at}])).await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(count(&app, &t, "sensor_readings").await, 1);
    assert_eq!(count(&app, &t, "sensor_readings_hourly").await, 1);
    let res = app.rest().delete(&path).await;
    assert_eq!(res.status().as_u16(), 204);
    assert_eq!(count(&app, &t, "sensors").await, 2);
    assert_eq!(count(&app, &t, "sensor_readings").await, 0);
    assert_eq!(count(&app, &t, "sensor_readings_hourly").await, 0);
    let res = app.rest().delete(&path).await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
}

#[tokio::test]
async fn sensors_admins_write_growers_post_readings_viewers_read() {
    let app = TestApp::full().await;
    let t = app.tenant("sensrole").await;
    let viewer = app.member(&t, Role::Viewer).await;
    let grower = app.member(&t, Role::Grower).await;
    let admin = app.member(&t, Role::Admin).await;
    let (_, loc, _) = bed(&app, &t, "Role room", 0).await;
    let body = json!({"name": "Role pH", "metric": "ph", "location_key": loc, "source": "http"});
    for who in [&viewer, &grower] {
        let res = app.rest_as(who).post(&base(&t), &body).await;
        assert_error(res, 403, "FORBIDDEN").await;
    }
    assert_eq!(count(&app, &t, "sensors").await, 0);
    let res = app.rest_as(&admin).post(&base(&t), &body).await;
    assert_eq!(res.status().as_u16(), 201);
    let k = key_of(&res.json::<Value>().await.expect("json"));
    let one = format!("{}/{k}", base(&t));
    let readings = format!("{one}/readings");
    for path in [base(&t), one.clone(), readings.clone()] {
        let res = app.rest_as(&viewer).get(&path).await;
        assert_eq!(res.status().as_u16(), 200, "{path}");
    }
    let batch = json!({"readings": [{"value": 6.1, "measured_at": ts(hour_start(1))}]});
    let res = app.rest_as(&viewer).post(&readings, &batch).await;
    assert_error(res, 403, "FORBIDDEN").await;
    let res = app
        .rest_as(&viewer)
        .patch(&one, &json!({"name": "x"}))
        .await;
    assert_error(res, 403, "FORBIDDEN").await;
    let res = app
        .rest_as(&grower)
        .patch(&one, &json!({"name": "x"}))
        .await;
    assert_error(res, 403, "FORBIDDEN").await;
    let res = app.rest_as(&grower).delete(&one).await;
    assert_error(res, 403, "FORBIDDEN").await;
    assert_eq!(count(&app, &t, "sensor_readings").await, 0);
    let res = app.rest_as(&grower).post(&readings, &batch).await;
    assert_eq!(res.status().as_u16(), 200);
    assert_eq!(count(&app, &t, "sensor_readings").await, 1);
    let res = app.rest_as(&admin).delete(&one).await;
    assert_eq!(res.status().as_u16(), 204);
}

#[tokio::test]
async fn readings_are_idempotent_and_refused_whole() {
    let app = TestApp::spawn().await;
    let t = app.tenant("readings").await;
    let (k, _) = ph_sensor(&app, &t, "Res pH").await;
    let h = hour_start(3);
    let at = |m: i64| ts(h + time::Duration::minutes(m));
    let first = json!([
        {"value": 6.0, "measured_at": at(1)},
        {"value": 6.2, "measured_at": at(2)},
        {"value": 5.8, "measured_at": at(61)},
    ]);
    let (s, v) = post_readings(&app, &t, &k, first.clone()).await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(
        (
            v["received"].clone(),
            v["stored"].clone(),
            v["already_present"].clone()
        ),
        (json!(3), json!(3), json!(0))
    );
    // A repeat with one new reading (and the new one twice): stored once.
    let mut again = first.as_array().cloned().expect("list");
    again.push(json!({"value": 7.0, "measured_at": at(3)}));
    again.push(json!({"value": 7.0, "measured_at": at(3)}));
    let (s, v) = post_readings(&app, &t, &k, json!(again)).await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(
        (v["stored"].clone(), v["already_present"].clone()),
        (json!(1), json!(4))
    );
    assert_eq!(count(&app, &t, "sensor_readings").await, 4);

    // The roll-up matches the raw rows after the repeat.
    let mismatched = scalar(
        &app,
        &t,
        "SELECT count(*) FROM (SELECT date_bin('1 hour', measured_at, timestamptz '2000-01-01Z') AS hour, \
         min(value) AS mn, max(value) AS mx, sum(value) AS sm, count(*) AS n \
         FROM {s}.sensor_readings GROUP BY 1) r FULL JOIN {s}.sensor_readings_hourly h USING (hour) \
         WHERE r.n IS DISTINCT FROM h.count OR r.mn IS DISTINCT FROM h.min_value \
         OR r.mx IS DISTINCT FROM h.max_value OR abs(r.sm - h.sum_value) > 1e-9 \
         OR r.sm IS NULL OR h.sum_value IS NULL",
    )
    .await;
    assert_eq!(mismatched, 0);
    assert_eq!(count(&app, &t, "sensor_readings_hourly").await, 2);
    let first_hour = scalar(
        &app,
        &t,
        "SELECT count FROM {s}.sensor_readings_hourly ORDER BY hour LIMIT 1",
    )
    .await;
    assert_eq!(first_hour, 3);

    // Every refusal names the reading and stores nothing of the request.
    let future = ts(OffsetDateTime::now_utc() + time::Duration::minutes(10));
    let many: Vec<Value> = (0..5001)
        .map(|i| json!({"value": 6.0, "measured_at": ts(h - time::Duration::seconds(i))}))
        .collect();
    let cases: Vec<(Value, &str)> = vec![
        (json!(many), "body.readings"),
        (json!([]), "body.readings"),
        (json!("x"), "body.readings"),
        (
            json!([{"value": 6.0, "measured_at": at(10)}, {"value": 6.0, "measured_at": future}]),
            "body.readings[1].measured_at",
        ),
        (
            json!([{"value": "abc", "measured_at": at(11)}]),
            "body.readings[0].value",
        ),
        (json!([{"measured_at": at(11)}]), "body.readings[0].value"),
        (
            json!([{"value": 6.0, "measured_at": "yesterday"}]),
            "body.readings[0].measured_at",
        ),
        (
            json!([{"value": 6.0, "measured_at": at(12), "unit": "pH"}]),
            "body.readings[0].unit",
        ),
        (
            json!([
                {"value": 6.0, "measured_at": at(20)},
                {"value": 6.1, "measured_at": at(21)},
                {"value": 6.2, "measured_at": at(22)},
                {"value": 14.5, "measured_at": at(23)},
            ]),
            "body.readings[3].value",
        ),
        (
            json!([{"value": -0.1, "measured_at": at(24)}]),
            "body.readings[0].value",
        ),
    ];
    for (readings, field) in cases {
        let (s, v) = post_readings(&app, &t, &k, readings.clone()).await;
        assert_eq!(s, 422, "{field}: {v}");
        assert_eq!(v["error_code"], "VALIDATION_ERROR", "{v}");
        assert!(
            detail_fields(&v).contains(&field.to_owned()),
            "{field}: {v}"
        );
        assert_eq!(count(&app, &t, "sensor_readings").await, 4, "{field}");
    }
    assert_eq!(
        scalar(
            &app,
            &t,
            "SELECT sum(count)::bigint FROM {s}.sensor_readings_hourly"
        )
        .await,
        4
    );
    // The whole 5,000 are taken.
    let (s, v) = post_readings(&app, &t, &k, json!(many[..5000].to_vec())).await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["stored"], 5000);
    let (s, _) = post_readings(&app, &t, &Uuid::now_v7().to_string(), first).await;
    assert_eq!(s, 404);
}

#[tokio::test]
async fn readings_series_raw_pages_and_step_aggregates() {
    let app = TestApp::spawn().await;
    let t = app.tenant("series").await;
    let (k, _) = ph_sensor(&app, &t, "Series pH").await;
    let h = hour_start(5);
    // 30 readings, one every 7 minutes from h: values 5.0 + i/10.
    let pts: Vec<(OffsetDateTime, f64)> = (0..30)
        .map(|i| (h + time::Duration::minutes(7 * i), 5.0 + i as f64 / 10.0))
        .collect();
    let body: Vec<Value> = pts
        .iter()
        .map(|(at, v)| json!({"value": v, "measured_at": ts(*at)}))
        .collect();
    let (s, v) = post_readings(&app, &t, &k, json!(body)).await;
    assert_eq!(s, 200, "{v}");
    let from = ts(h);
    let to = ts(h + time::Duration::hours(4));
    let url = |extra: &str| {
        format!(
            "{}/{k}/readings?from={}&to={}{extra}",
            base(&t),
            urlencode(&from),
            urlencode(&to)
        )
    };

    // Raw, paged by time.
    let (s, page) = get_json(&app, &url("&limit=20")).await;
    assert_eq!(s, 200, "{page}");
    assert_eq!(page["resolution"], "raw");
    assert_eq!(page["unit"], "pH");
    assert_eq!(page["source"], "http");
    let got = page["readings"].as_array().expect("readings");
    assert_eq!(got.len(), 20);
    assert_eq!(got[0]["value"], 5.0);
    assert_eq!(got[19]["value"], pts[19].1);
    let next = page["next_from"].as_str().expect("next_from").to_owned();
    let (_, rest) = get_json(
        &app,
        &format!(
            "{}/{k}/readings?from={}&to={}&limit=20",
            base(&t),
            urlencode(&next),
            urlencode(&to)
        ),
    )
    .await;
    assert_eq!(rest["readings"].as_array().map(Vec::len), Some(10));
    assert_eq!(rest["next_from"], Value::Null);

    // Steps: expected values computed here.
    for (step, secs, resolution) in [
        ("5m", 300, "raw_buckets"),
        ("1h", 3600, "hourly"),
        ("2h", 7200, "hourly"),
    ] {
        let (s, series) = get_json(&app, &url(&format!("&step={step}"))).await;
        assert_eq!(s, 200, "{series}");
        assert_eq!(series["resolution"], resolution);
        assert_eq!(series["step"], step);
        let mut expected: Vec<(i64, Vec<f64>)> = Vec::new();
        for (at, v) in &pts {
            let start = at.unix_timestamp().div_euclid(secs) * secs;
            match expected.last_mut() {
                Some((s0, vs)) if *s0 == start => vs.push(*v),
                _ => expected.push((start, vec![*v])),
            }
        }
        let buckets = series["buckets"].as_array().expect("buckets");
        assert_eq!(buckets.len(), expected.len(), "{step}");
        for (b, (start, vs)) in buckets.iter().zip(&expected) {
            let b_start =
                OffsetDateTime::parse(b["start"].as_str().expect("start"), &Rfc3339).expect("time");
            assert_eq!(b_start.unix_timestamp(), *start, "{step}");
            let min = vs.iter().cloned().fold(f64::MAX, f64::min);
            let max = vs.iter().cloned().fold(f64::MIN, f64::max);
            let avg = vs.iter().sum::<f64>() / vs.len() as f64;
            assert_eq!(b["count"], vs.len(), "{step}");
            assert!(
                (b["min"].as_f64().expect("min") - min).abs() < 1e-9,
                "{step}"
            );
            assert!(
                (b["max"].as_f64().expect("max") - max).abs() < 1e-9,
                "{step}"
            );
            assert!(
                (b["avg"].as_f64().expect("avg") - avg).abs() < 1e-9,
                "{step}"
            );
        }
    }

    for (query, field) in [
        ("&step=5s", "query.step"),
        ("&step=0m", "query.step"),
        ("&step=40d", "query.step"),
        ("&step=1m&from=2000-01-01T00:00:00Z", "query.step"),
        ("&limit=0", "query.limit"),
        ("&limit=10001", "query.limit"),
    ] {
        let path = format!("{}/{k}/readings?to={}{query}", base(&t), urlencode(&to));
        let res = app.rest().get(&path).await;
        let v = assert_error(res, 422, "VALIDATION_ERROR").await;
        assert!(
            detail_fields(&v).contains(&field.to_owned()),
            "{query}: {v}"
        );
    }
    let res = app
        .rest()
        .get(&format!(
            "{}/{k}/readings?from={}&to={}",
            base(&t),
            urlencode(&to),
            urlencode(&from)
        ))
        .await;
    let v = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(detail_fields(&v), vec!["query.from"]);
    let res = app
        .rest()
        .get(&format!("{}/{k}/readings?from=soon", base(&t)))
        .await;
    assert_error(res, 422, "VALIDATION_ERROR").await;
}

fn urlencode(s: &str) -> String {
    s.replace('+', "%2B").replace(':', "%3A")
}

#[tokio::test]
async fn sensors_two_gardens_see_nothing_of_each_other() {
    let app = TestApp::spawn().await;
    let a = app.tenant("sensa").await;
    let b = app.tenant("sensb").await;
    let (ka, _) = ph_sensor(&app, &a, "A pH").await;
    let (kb, loc_b) = ph_sensor(&app, &b, "B pH").await;
    let at = ts(hour_start(1));
    let (s, _) = post_readings(&app, &b, &kb, json!([{"value": 6.5, "measured_at": at}])).await;
    assert_eq!(s, 200);
    let foreign = format!("{}/{kb}", base(&a));
    let (s, _) = get_json(&app, &foreign).await;
    assert_eq!(s, 404);
    let (s, _) = get_json(&app, &format!("{foreign}/readings")).await;
    assert_eq!(s, 404);
    let res = app.rest().patch(&foreign, &json!({"name": "stolen"})).await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    let (s, _) = post_readings(&app, &a, &kb, json!([{"value": 1.0, "measured_at": at}])).await;
    assert_eq!(s, 404);
    let res = app.rest().delete(&foreign).await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    // B's location is not a place of A.
    let res = app
        .rest()
        .post(
            &base(&a),
            &json!({"name": "Stray", "metric": "ph", "location_key": loc_b, "source": "http"}),
        )
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    let (_, list) = get_json(&app, &base(&a)).await;
    assert_eq!(list["total"], 1);
    assert_eq!(list["items"][0]["key"], ka);
    assert_eq!(count(&app, &a, "sensor_readings").await, 0);
    assert_eq!(count(&app, &b, "sensor_readings").await, 1);
    let (_, bs) = get_json(&app, &format!("{}/{kb}", base(&b))).await;
    assert_eq!(bs["name"], "B pH");
}

#[tokio::test]
async fn prune_drops_old_months_and_keeps_the_roll_up() {
    let app = TestApp::spawn().await;
    let t = app.tenant("prune").await;
    let (k, _) = ph_sensor(&app, &t, "Old pH").await;
    let now = OffsetDateTime::now_utc();
    let old = now - time::Duration::days(200);
    let edge = now - time::Duration::days(95);
    let recent = now - time::Duration::days(1);
    let (s, v) = post_readings(
        &app,
        &t,
        &k,
        json!([
            {"value": 6.0, "measured_at": ts(old)},
            {"value": 6.1, "measured_at": ts(old + time::Duration::minutes(1))},
            {"value": 6.2, "measured_at": ts(edge)},
            {"value": 6.3, "measured_at": ts(recent)},
        ]),
    )
    .await;
    assert_eq!(s, 200, "{v}");
    let parts =
        "SELECT count(*) FROM pg_inherits WHERE inhparent = '{s}.sensor_readings'::regclass";
    let before = scalar(&app, &t, parts).await;
    assert!(before >= 3, "{before}");
    let rolled = count(&app, &t, "sensor_readings_hourly").await;
    assert_eq!(rolled, 3);
    let summary = kultiva::garden::sensors::service::prune(&app.state, &t, now)
        .await
        .expect("prune");
    assert!(summary.partitions_dropped >= 1, "{summary:?}");
    assert_eq!(count(&app, &t, "sensor_readings").await, 1);
    assert_eq!(count(&app, &t, "sensor_readings_hourly").await, rolled);
    assert!(scalar(&app, &t, parts).await < before);
    // Charts of whole hours still reach the pruned months.
    let path = format!(
        "{}/{k}/readings?from={}&to={}&step=1d",
        base(&t),
        urlencode(&ts(old - time::Duration::days(1))),
        urlencode(&ts(now))
    );
    let (s, series) = get_json(&app, &path).await;
    assert_eq!(s, 200, "{series}");
    let counts: i64 = series["buckets"]
        .as_array()
        .expect("buckets")
        .iter()
        .map(|b| b["count"].as_i64().unwrap_or(0))
        .sum();
    assert_eq!(counts, 4);
    // A second prune changes nothing; posting into a pruned month recreates it.
    let again = kultiva::garden::sensors::service::prune(&app.state, &t, now)
        .await
        .expect("prune");
    assert_eq!((again.partitions_dropped, again.rows_deleted), (0, 0));
    let (s, v) = post_readings(
        &app,
        &t,
        &k,
        json!([{"value": 6.0, "measured_at": ts(old)}]),
    )
    .await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["stored"], 1);
}

/// The tool calls the MCP isolation matrix makes for the environment tools in `tenant`.
pub async fn tool_args(app: &TestApp, tenant: &TenantRecord) -> Vec<(&'static str, Value)> {
    let (_, loc, _) = bed(app, tenant, "Matrix sensor room", 0).await;
    let new = kultiva::garden::sensors::model::NewSensor {
        name: "Matrix pH".into(),
        metric: kultiva::garden::sensors::model::SensorMetric::Ph,
        place: kultiva::garden::sensors::model::Place::Location(loc),
        source: kultiva::garden::sensors::model::SensorSource::Http,
        topic: None,
        expected_interval_minutes: None,
    };
    let s = kultiva::garden::sensors::service::create_sensor(&app.state, tenant, &new)
        .await
        .expect("sensor");
    vec![
        ("get_environment", json!({"location_key": loc})),
        (
            "record_sensor_readings",
            json!({"sensor_key": s.key,
                   "readings": [{"value": 6.0, "measured_at": ts(hour_start(1))}]}),
        ),
    ]
}

#[tokio::test]
async fn tools_record_readings_with_dry_run_and_read_the_environment() {
    use crate::mcp_tools::{call, scoped_key};
    let app = crate::mcp_tools::app().await;
    let t = app.tenant("sensmcp").await;
    let viewer = scoped_key(&app, &t, Role::Viewer).await;
    let grower = scoped_key(&app, &t, Role::Grower).await;
    let (site, loc, slots) = bed(&app, &t, "Tool tent", 1).await;
    let tomato = crate::garden::species(&app, "Fixtura tomatoides").await;
    let plant = kultiva::garden::plants::service::create_plant(
        &app.state,
        &t,
        &kultiva::garden::plants::model::NewPlant {
            species_key: tomato,
            name: Some("Env plant".into()),
            cultivar_key: None,
            location_key: Some(loc),
            slot_key: Some(slots[0]),
            substrate_batch_key: None,
            planted_on: None,
            phase_key: None,
            notes: None,
            start_phase: kultiva::garden::plants::model::StartPhase::First,
        },
        "test",
        true,
    )
    .await
    .expect("plant")
    .key;
    let mk = |name: &str, metric, place| kultiva::garden::sensors::model::NewSensor {
        name: name.into(),
        metric,
        place,
        source: kultiva::garden::sensors::model::SensorSource::Http,
        topic: None,
        expected_interval_minutes: Some(5),
    };
    use kultiva::garden::sensors::model::{Place, SensorMetric};
    let air = kultiva::garden::sensors::service::create_sensor(
        &app.state,
        &t,
        &mk("Tent air", SensorMetric::TemperatureC, Place::Location(loc)),
    )
    .await
    .expect("sensor");
    kultiva::garden::sensors::service::create_sensor(
        &app.state,
        &t,
        &mk("Site RH", SensorMetric::HumidityPercent, Place::Site(site)),
    )
    .await
    .expect("sensor");
    let h = hour_start(1);
    let args = json!({"tenant": t.slug.as_str(), "sensor_key": air.key, "readings": [
        {"value": 22.0, "measured_at": ts(h)},
        {"value": 23.5, "measured_at": ts(h + time::Duration::minutes(5))},
    ]});
    // A viewer may not write.
    let (s, v) = call(&app, &viewer, "record_sensor_readings", args.clone()).await;
    assert_ne!(s, 200, "{v}");
    assert_eq!(count(&app, &t, "sensor_readings").await, 0);
    // Dry run: counted, nothing written.
    let mut dry = args.clone();
    dry["dry_run"] = json!(true);
    let (s, v) = call(&app, &grower, "record_sensor_readings", dry).await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["data"]["stored"], 2, "{v}");
    assert_eq!(count(&app, &t, "sensor_readings").await, 0);
    let (s, v) = call(&app, &grower, "record_sensor_readings", args.clone()).await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["data"]["stored"], 2, "{v}");
    let (s, v) = call(&app, &grower, "record_sensor_readings", args.clone()).await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(
        (
            v["data"]["stored"].clone(),
            v["data"]["already_present"].clone()
        ),
        (json!(0), json!(2))
    );
    assert_eq!(count(&app, &t, "sensor_readings").await, 2);
    // Out of range names the reading.
    let mut bad = args.clone();
    bad["readings"][1]["value"] = json!(71.0);
    bad["readings"][1]["measured_at"] = json!(ts(h + time::Duration::minutes(9)));
    let (s, v) = call(&app, &grower, "record_sensor_readings", bad).await;
    assert_ne!(s, 200);
    assert!(v.to_string().contains("readings[1].value"), "{v}");
    assert_eq!(count(&app, &t, "sensor_readings").await, 2);

    let (s, env) = call(
        &app,
        &viewer,
        "get_environment",
        json!({"tenant": t.slug.as_str(), "plant_key": plant}),
    )
    .await;
    assert_eq!(s, 200, "{env}");
    let data = &env["data"];
    assert_eq!(data["open_alerts"], json!([]));
    let readings = data["readings"].as_array().expect("readings");
    assert_eq!(readings.len(), 2, "{env}");
    let air_r = readings
        .iter()
        .find(|r| r["name"] == "Tent air")
        .expect("air");
    assert_eq!(air_r["value"], 23.5);
    assert_eq!(air_r["origin"], "location");
    assert_eq!(air_r["unit"], "°C");
    assert_eq!(air_r["source"], "http");
    let rh = readings
        .iter()
        .find(|r| r["name"] == "Site RH")
        .expect("rh");
    assert_eq!(rh["origin"], "site");
    assert_eq!(rh["value"], Value::Null);
    let (s, env) = call(
        &app,
        &viewer,
        "get_environment",
        json!({"tenant": t.slug.as_str(), "site_key": site}),
    )
    .await;
    assert_eq!(s, 200, "{env}");
    assert_eq!(env["data"]["readings"].as_array().map(Vec::len), Some(1));
    let (s, _) = call(
        &app,
        &viewer,
        "get_environment",
        json!({"tenant": t.slug.as_str(), "plant_key": plant, "site_key": site}),
    )
    .await;
    assert_ne!(s, 200);
}

/// A batch whose only bad reading comes late in it (past the readings named one by one) is
/// still a 422 naming it, and stores nothing.
#[tokio::test]
async fn a_late_bad_reading_in_a_batch_is_refused_by_name() {
    let app = TestApp::spawn().await;
    let t = app.tenant("sensorlate").await;
    let (k, _) = ph_sensor(&app, &t, "Late tank").await;
    let now = time::OffsetDateTime::now_utc();
    let readings: Vec<Value> = (0..30)
        .map(|i| {
            let at = if i == 25 {
                now + time::Duration::hours(1)
            } else {
                now - time::Duration::minutes(60 - i)
            };
            json!({"value": 6.2, "measured_at": at.format(&time::format_description::well_known::Rfc3339).expect("time")})
        })
        .collect();
    let (status, body) = post_readings(&app, &t, &k, json!(readings)).await;
    assert_eq!(status, 422, "{body}");
    assert!(body.to_string().contains("readings[25]"), "{body}");
    assert_eq!(
        scalar(&app, &t, "SELECT count(*) FROM {s}.sensor_readings").await,
        0
    );
}
