//! Environment alerts: the scan (called directly, no timers) opens `out_of_range` only after
//! the readings stay out for ALERT_AFTER_MINUTES, never for a spike, resolves it when they
//! return, opens each cause once however often it runs, writes one webhook event per opening
//! and per resolution; `sensor_silent` opens and resolves; the list shows the range with its
//! source, members read it, another garden sees none of it, a bad filter is a 422.

use kultiva::auth::Role;
use kultiva::garden::alerts::scan::scan_garden;
use kultiva::garden::sensors::model::{NewSensor, Place, SensorMetric, SensorSource};
use kultiva::tenancy::TenantRecord;
use serde_json::{Value, json};
use time::format_description::well_known::Rfc3339;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use crate::garden::{bed, count, get_json, post};
use crate::support::{TestApp, assert_error, detail_fields};

fn alerts(t: &TenantRecord) -> String {
    format!("/api/v1/t/{}/alerts", t.slug)
}

/// Minutes before `now`, whole seconds.
fn ago(now: OffsetDateTime, minutes: i64) -> String {
    (now - Duration::minutes(minutes))
        .replace_nanosecond(0)
        .expect("ns")
        .format(&Rfc3339)
        .expect("rfc3339")
}

async fn new_sensor(
    app: &TestApp,
    t: &TenantRecord,
    name: &str,
    metric: SensorMetric,
    loc: Uuid,
    interval: Option<i64>,
) -> Uuid {
    kultiva::garden::sensors::service::create_sensor(
        &app.state,
        t,
        &NewSensor {
            name: name.into(),
            metric,
            place: Place::Location(loc),
            source: SensorSource::Http,
            topic: None,
            expected_interval_minutes: interval,
        },
    )
    .await
    .expect("sensor")
    .key
}

async fn readings(app: &TestApp, t: &TenantRecord, sensor: Uuid, values: &[(String, f64)]) {
    let body: Vec<Value> = values
        .iter()
        .map(|(at, v)| json!({"value": v, "measured_at": at}))
        .collect();
    let (s, v) = post(
        app,
        &format!("/api/v1/t/{}/sensors/{sensor}/readings", t.slug),
        json!({ "readings": body }),
    )
    .await;
    assert_eq!(s, 200, "{v}");
}

/// A plant at a new location, in its first phase (the fixture's germination), following a
/// garden plan whose germination entry asks EC 0.4 (0.3–0.5 with the tolerance) and pH 6.0–6.8.
async fn plant_with_plan(app: &TestApp, t: &TenantRecord, name: &str) -> (Uuid, Uuid) {
    let (_, loc, slots) = bed(app, t, name, 1).await;
    let species = crate::garden::species(app, "Fixtura tomatoides").await;
    let plant = kultiva::garden::plants::service::create_plant(
        &app.state,
        t,
        &kultiva::garden::plants::model::NewPlant {
            species_key: species,
            name: Some(format!("{name} plant")),
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
    let plan = crate::nutrient_plans::own_plan(app, t, &format!("{name} plan")).await;
    kultiva::garden::nutrient_plans::service::assign(
        &app.state,
        t,
        &plan,
        &kultiva::garden::nutrient_plans::model::AssignTarget {
            plant: Some(plant),
            run: None,
            field_prefix: "body.".into(),
        },
        true,
    )
    .await
    .expect("assign");
    (plant, loc)
}

async fn events_of(app: &TestApp, t: &TenantRecord, kind: &str) -> Vec<Value> {
    let sql = format!(
        "SELECT payload FROM {}.webhook_events WHERE type = $1 ORDER BY created_at, id",
        t.schema_name.quoted()
    );
    sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
        .bind(kind)
        .fetch_all(app.state.platform_pool())
        .await
        .expect("events")
}

async fn list(app: &TestApp, t: &TenantRecord, query: &str) -> Vec<Value> {
    let (s, v) = get_json(app, &format!("{}{query}", alerts(t))).await;
    assert_eq!(s, 200, "{v}");
    v["items"].as_array().expect("items").clone()
}

#[tokio::test]
async fn out_of_range_opens_after_the_delay_once_and_resolves_with_one_event_each() {
    let app = TestApp::spawn_env(&[("WEBHOOK_ALLOW_PRIVATE_TARGETS", "true")]).await;
    let t = app.tenant("alerts").await;
    let (s, hook) = post(
        &app,
        &format!("/api/v1/t/{}/webhooks", t.slug),
        json!({"url": "http://127.0.0.1:9/alerts", "events": ["alert.opened", "alert.resolved"]}),
    )
    .await;
    assert_eq!(s, 201, "{hook}");
    let (plant, loc) = plant_with_plan(&app, &t, "EC tent").await;
    let ec = new_sensor(&app, &t, "Tent EC", SensorMetric::EcMsCm, loc, None).await;
    let now = OffsetDateTime::now_utc();

    // In range, one spike far out, back in range: nothing opens.
    readings(
        &app,
        &t,
        ec,
        &[
            (ago(now, 40), 0.4),
            (ago(now, 30), 2.0),
            (ago(now, 29), 0.4),
        ],
    )
    .await;
    let c = scan_garden(&app.state, &t, now).await.expect("scan");
    assert!(c.opened.is_empty() && c.resolved.is_empty());
    // Out for 9 minutes: still nothing.
    readings(
        &app,
        &t,
        ec,
        &[(ago(now, 10), 0.9), (ago(now, 5), 0.9), (ago(now, 1), 0.9)],
    )
    .await;
    scan_garden(&app.state, &t, now).await.expect("scan");
    assert_eq!(count(&app, &t, "alerts").await, 0);
    assert!(list(&app, &t, "").await.is_empty());

    // The readings before show it out since 25 minutes ago: it opens.
    readings(&app, &t, ec, &[(ago(now, 25), 0.9), (ago(now, 20), 0.95)]).await;
    let c = scan_garden(&app.state, &t, now).await.expect("scan");
    assert_eq!(c.opened.len(), 1);
    // Scanned again: the same alert, no second one, no second event.
    for _ in 0..2 {
        let c = scan_garden(&app.state, &t, now).await.expect("scan");
        assert!(c.opened.is_empty() && c.resolved.is_empty());
    }
    assert_eq!(count(&app, &t, "alerts").await, 1);
    let items = list(&app, &t, "?state=open").await;
    assert_eq!(items.len(), 1, "{items:?}");
    let a = &items[0];
    assert_eq!(a["kind"], "out_of_range");
    assert_eq!(a["state"], "open");
    assert_eq!(a["metric"], "ec_ms_cm");
    assert_eq!(a["plant_key"], plant.to_string());
    assert_eq!(a["sensor_key"], ec.to_string());
    assert_eq!(a["location_key"], loc.to_string());
    assert_eq!(a["reading"]["value"], 0.9);
    assert_eq!(a["reading"]["measured_at"], ago(now, 1));
    assert_eq!(a["range"]["metric"], "ec_ms_cm");
    assert_eq!(a["range"]["min"], 0.3);
    assert_eq!(a["range"]["max"], 0.5);
    let source = a["range"]["source"].as_str().expect("source");
    assert!(
        source.contains("EC tent plan") && source.contains("tolerance"),
        "{source}"
    );
    assert_eq!(a["resolved_at"], Value::Null);
    let opened = events_of(&app, &t, "alert.opened").await;
    assert_eq!(opened.len(), 1, "one event per opening");
    assert_eq!(opened[0]["data"]["key"], a["key"]);
    assert_eq!(opened[0]["data"]["range"]["max"], 0.5);
    assert_eq!(opened[0]["data"]["garden"], t.slug.as_str());
    assert!(events_of(&app, &t, "alert.resolved").await.is_empty());

    // Back in range: resolved, once.
    readings(&app, &t, ec, &[(ago(now, 0), 0.45)]).await;
    let later = now + Duration::seconds(30);
    let c = scan_garden(&app.state, &t, later).await.expect("scan");
    assert_eq!(c.resolved.len(), 1);
    scan_garden(&app.state, &t, later).await.expect("scan");
    assert!(list(&app, &t, "?state=open").await.is_empty());
    let resolved = list(&app, &t, "?state=resolved&kind=out_of_range").await;
    assert_eq!(resolved.len(), 1);
    assert_eq!(resolved[0]["key"], a["key"]);
    assert!(resolved[0]["resolved_at"].is_string());
    assert_eq!(events_of(&app, &t, "alert.resolved").await.len(), 1);
    assert_eq!(events_of(&app, &t, "alert.opened").await.len(), 1);
    assert!(list(&app, &t, "?kind=sensor_silent").await.is_empty());
}

#[tokio::test]
async fn vpd_from_temperature_and_humidity_against_the_phase() {
    let app = TestApp::spawn().await;
    let t = app.tenant("alertvpd").await;
    let (plant, loc) = plant_with_plan(&app, &t, "VPD tent").await;
    let air = new_sensor(&app, &t, "Air", SensorMetric::TemperatureC, loc, None).await;
    let rh = new_sensor(&app, &t, "RH", SensorMetric::HumidityPercent, loc, None).await;
    let now = OffsetDateTime::now_utc();
    // 25 °C at 30 %: air VPD 3.1677 × 0.7 = 2.2174 kPa, far above the seedling range
    // (germination) 0.4–0.8, for 20 minutes.
    let at: Vec<i64> = vec![20, 15, 10, 5, 0];
    readings(
        &app,
        &t,
        air,
        &at.iter().map(|m| (ago(now, *m), 25.0)).collect::<Vec<_>>(),
    )
    .await;
    readings(
        &app,
        &t,
        rh,
        &at.iter().map(|m| (ago(now, *m), 30.0)).collect::<Vec<_>>(),
    )
    .await;
    scan_garden(&app.state, &t, now).await.expect("scan");
    let all = list(&app, &t, "").await;
    // The VPD, and the humidity on its own (30 % is below germination's 75 %); 25 °C lies
    // inside germination's 21.1–26.7 °C, so no temperature alert.
    let metrics: Vec<&str> = all.iter().filter_map(|a| a["metric"].as_str()).collect();
    assert_eq!(all.len(), 2, "{all:?}");
    assert!(
        metrics.contains(&"vpd_kpa") && metrics.contains(&"humidity_percent"),
        "{metrics:?}"
    );
    let items: Vec<Value> = all
        .iter()
        .filter(|a| a["metric"] == "vpd_kpa")
        .cloned()
        .collect();
    assert_eq!(items[0]["metric"], "vpd_kpa");
    assert_eq!(items[0]["plant_key"], plant.to_string());
    assert_eq!(items[0]["sensor_key"], air.to_string());
    assert_eq!(items[0]["detail"]["humidity_sensor_key"], rh.to_string());
    assert_eq!(items[0]["reading"]["value"], 2.2174);
    assert_eq!(items[0]["range"]["min"], 0.4);
    assert_eq!(items[0]["range"]["max"], 0.8);
    assert!(
        items[0]["range"]["source"]
            .as_str()
            .is_some_and(|s| s.contains("seedling") && s.contains("generic")),
        "{}",
        items[0]["range"]
    );
    // The environment tool carries it.
    let around = kultiva::garden::alerts::service::open_around(
        &app.state,
        &t,
        &[plant],
        &[air, rh],
        &[],
        &[],
    )
    .await
    .expect("around");
    assert_eq!(around.len(), 2);
}

/// A temperature sensor judged against the germination range with its source, opening after
/// the delay and resolving when the reading is back; humidity and the nutrient water's
/// temperature likewise; a plant at rest has no temperature range.
#[tokio::test]
async fn temperature_humidity_and_water_are_judged_against_the_phase() {
    let app = TestApp::spawn().await;
    let t = app.tenant("alertclim").await;
    let (plant, loc) = plant_with_plan(&app, &t, "Warm tent").await;
    let air = new_sensor(&app, &t, "Warm air", SensorMetric::TemperatureC, loc, None).await;
    let water = new_sensor(
        &app,
        &t,
        "Reservoir",
        SensorMetric::WaterTemperatureC,
        loc,
        None,
    )
    .await;
    let now = OffsetDateTime::now_utc();
    // 35 °C for 20 minutes, above germination's 21.1–26.7 °C; the water at 30 °C, above the
    // mixing protocol's 18–22 °C. 14 minutes out only: nothing yet.
    readings(&app, &t, air, &[(ago(now, 14), 35.0), (ago(now, 0), 35.0)]).await;
    readings(
        &app,
        &t,
        water,
        &[(ago(now, 14), 30.0), (ago(now, 0), 30.0)],
    )
    .await;
    let c = scan_garden(&app.state, &t, now).await.expect("scan");
    assert!(c.opened.is_empty(), "{:?}", c.opened);
    readings(&app, &t, air, &[(ago(now, 20), 35.0)]).await;
    readings(&app, &t, water, &[(ago(now, 20), 30.0)]).await;
    let c = scan_garden(&app.state, &t, now).await.expect("scan");
    assert_eq!(c.opened.len(), 2, "{:?}", c.opened);
    let items = list(&app, &t, "?state=open").await;
    let a = items
        .iter()
        .find(|a| a["metric"] == "temperature_c")
        .expect("temperature alert");
    assert_eq!(a["kind"], "out_of_range");
    assert_eq!(a["plant_key"], plant.to_string());
    assert_eq!(a["sensor_key"], air.to_string());
    assert_eq!(a["reading"]["value"], 35.0);
    assert_eq!(a["range"]["min"], 21.1);
    assert_eq!(a["range"]["max"], 26.7);
    assert_eq!(a["detail"]["phase"], "germination");
    let source = a["range"]["source"].as_str().expect("source");
    assert!(
        source.contains("germination") && source.contains("eXtension"),
        "{source}"
    );
    let w = items
        .iter()
        .find(|a| a["metric"] == "water_temperature_c")
        .expect("water alert");
    assert_eq!(w["sensor_key"], water.to_string());
    assert_eq!(
        (w["range"]["min"].clone(), w["range"]["max"].clone()),
        (json!(18.0), json!(22.0))
    );
    assert!(
        w["range"]["source"]
            .as_str()
            .is_some_and(|s| s.contains("2.14")),
        "{w}"
    );
    // Scanned again: nothing new.
    let c = scan_garden(&app.state, &t, now).await.expect("scan");
    assert!(c.opened.is_empty() && c.resolved.is_empty());
    // The air back at 24 °C: its alert resolves, the water's stays.
    let later = now + Duration::minutes(1);
    readings(&app, &t, air, &[(ago(later, 0), 24.0)]).await;
    let c = scan_garden(&app.state, &t, later).await.expect("scan");
    assert_eq!(c.resolved.len(), 1);
    assert_eq!(c.resolved[0].alert.metric, "temperature_c");
    assert!(c.opened.is_empty());
    let open = list(&app, &t, "?state=open").await;
    assert_eq!(open.len(), 1);
    assert_eq!(open[0]["metric"], "water_temperature_c");
    assert_eq!(count(&app, &t, "alerts").await, 2);
    // Another garden sees none of it.
    let other = app.tenant("alertclimb").await;
    assert!(list(&app, &other, "").await.is_empty());
}

#[tokio::test]
async fn sensor_silent_opens_after_three_intervals_and_resolves_with_a_reading() {
    let app = TestApp::spawn().await;
    let t = app.tenant("alertsilent").await;
    let (_, loc, _) = bed(&app, &t, "Silent room", 0).await;
    let s = new_sensor(
        &app,
        &t,
        "Soil",
        SensorMetric::SoilMoisturePercent,
        loc,
        Some(5),
    )
    .await;
    let now = OffsetDateTime::now_utc();
    readings(&app, &t, s, &[(ago(now, 14), 40.0)]).await;
    scan_garden(&app.state, &t, now).await.expect("scan");
    assert_eq!(count(&app, &t, "alerts").await, 0, "14 minutes < 3 × 5");
    let later = now + Duration::minutes(2);
    scan_garden(&app.state, &t, later).await.expect("scan");
    scan_garden(&app.state, &t, later).await.expect("scan");
    let items = list(&app, &t, "?kind=sensor_silent").await;
    assert_eq!(items.len(), 1, "{items:?}");
    assert_eq!(items[0]["sensor_key"], s.to_string());
    assert_eq!(items[0]["plant_key"], Value::Null);
    assert_eq!(items[0]["range"], Value::Null);
    assert_eq!(items[0]["detail"]["silent_after_minutes"], 15);
    assert_eq!(items[0]["reading"]["value"], 40.0);
    readings(&app, &t, s, &[(ago(later, 0), 41.0)]).await;
    scan_garden(&app.state, &t, later).await.expect("scan");
    assert!(list(&app, &t, "?state=open").await.is_empty());
    assert_eq!(list(&app, &t, "?state=resolved").await.len(), 1);
    assert_eq!(count(&app, &t, "alerts").await, 1);
}

#[tokio::test]
async fn members_read_their_garden_only_and_bad_filters_are_422() {
    let app = TestApp::full().await;
    let a = app.tenant("alerta").await;
    let b = app.tenant("alertb").await;
    let viewer = app.member(&a, Role::Viewer).await;
    let other = app.member(&b, Role::Admin).await;
    let (_, loc, _) = bed(&app, &a, "A room", 0).await;
    new_sensor(&app, &a, "Quiet", SensorMetric::Ph, loc, Some(1)).await;
    // Registered "an hour ago" with no reading since: silent.
    scan_garden(
        &app.state,
        &a,
        OffsetDateTime::now_utc() + Duration::hours(1),
    )
    .await
    .expect("scan");
    scan_garden(
        &app.state,
        &b,
        OffsetDateTime::now_utc() + Duration::hours(1),
    )
    .await
    .expect("scan");
    let res = app.rest_as(&viewer).get(&alerts(&a)).await;
    assert_eq!(res.status().as_u16(), 200);
    let page: Value = res.json().await.expect("json");
    assert_eq!(page["total"], 1, "{page}");
    assert_eq!(page["items"][0]["kind"], "sensor_silent");
    assert_eq!(page["items"][0]["reading"], Value::Null);
    // Garden B's admin sees none of A's, in B or through A.
    let res = app.rest_as(&other).get(&alerts(&b)).await;
    let page: Value = res.json().await.expect("json");
    assert_eq!(page["total"], 0, "{page}");
    let res = app.rest_as(&other).get(&alerts(&a)).await;
    assert!(
        matches!(res.status().as_u16(), 403 | 404),
        "{}",
        res.status()
    );
    // Bad filters: one detail each, in the spec's error format.
    let res = app
        .rest_as(&viewer)
        .get(&format!("{}?state=closed&kind=flood", alerts(&a)))
        .await;
    let err = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(detail_fields(&err), ["query.state", "query.kind"]);
    let res = app
        .rest_as(&viewer)
        .get(&format!("{}?limit=0", alerts(&a)))
        .await;
    assert_error(res, 422, "VALIDATION_ERROR").await;
}
