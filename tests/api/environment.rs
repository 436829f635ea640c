//! The environment a plant lives in, as the specification's fields show it: a diary entry's
//! `environment` (each sensor at the plant's location or site with its latest reading in the
//! hour up to the entry's time, and the site's weather hour nearest it) and
//! `environment_status` (`no_source`, `unavailable`, null with readings), on the REST reads
//! and the diary tool; the diagnostics snapshot's `sensors`; `get_environment`'s weather; and
//! another garden's readings never in any of them.

use kultiva::auth::Role;
use kultiva::garden::sensors::model::{NewSensor, Place, SensorMetric, SensorSource};
use kultiva::tenancy::TenantRecord;
use reqwest::Method;
use serde_json::{Value, json};
use time::format_description::well_known::Rfc3339;
use time::{Duration, OffsetDateTime, Time};
use uuid::Uuid;

use crate::garden::{bed, count, location_in};
use crate::ipm::{path, tool};
use crate::support::TestApp;

async fn app() -> TestApp {
    // The forecast is never fetched here: its readings are stored directly, as a poll would.
    TestApp::full_env(&[
        ("MCP_SERVER_ENABLED", "true"),
        ("WEATHER_URL", "http://127.0.0.1:9"),
    ])
    .await
}

fn ts(t: OffsetDateTime) -> String {
    t.replace_nanosecond(0)
        .expect("ns")
        .format(&Rfc3339)
        .expect("rfc3339")
}

async fn sensor(
    app: &TestApp,
    t: &TenantRecord,
    name: &str,
    metric: SensorMetric,
    place: Place,
) -> Uuid {
    kultiva::garden::sensors::service::create_sensor(
        &app.state,
        t,
        &NewSensor {
            name: name.into(),
            metric,
            place,
            source: SensorSource::Http,
            topic: None,
            expected_interval_minutes: None,
        },
    )
    .await
    .expect("sensor")
    .key
}

async fn readings(app: &TestApp, t: &TenantRecord, sensor: Uuid, values: &[(OffsetDateTime, f64)]) {
    let body: Vec<Value> = values
        .iter()
        .map(|(at, v)| json!({"value": v, "measured_at": ts(*at)}))
        .collect();
    let readings = kultiva::values::json::parse_json(
        &serde_json::to_vec(&json!({ "readings": body })).expect("json"),
    )
    .expect("readings");
    kultiva::garden::sensors::service::record_readings(
        &app.state,
        t,
        &sensor.to_string(),
        &readings,
        true,
    )
    .await
    .expect("stored");
}

async fn plant_at(app: &TestApp, t: &TenantRecord, loc: Uuid, name: &str) -> Uuid {
    let species = crate::garden::species(app, "Fixtura tomatoides").await;
    kultiva::garden::plants::service::create_plant(
        &app.state,
        t,
        &kultiva::garden::plants::model::NewPlant {
            species_key: species,
            name: Some(name.into()),
            cultivar_key: None,
            location_key: Some(loc),
            slot_key: None,
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
    .key
}

/// Gives the site coordinates and stores weather hours as the poll does.
async fn weather(
    app: &TestApp,
    t: &TenantRecord,
    site: Uuid,
    hours: &[(&str, OffsetDateTime, f64)],
) {
    crate::garden::exec(
        app,
        t,
        "UPDATE {schema}.sites SET latitude = 52.5, longitude = 13.4 WHERE id = $1",
        site,
    )
    .await;
    for (metric, at, value) in hours {
        let sql = format!(
            "INSERT INTO {}.weather_readings (site_id, metric, measured_at, value, fetched_at) \
             VALUES ($1, $2, $3, $4, now())",
            t.schema_name.quoted()
        );
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(site)
            .bind(*metric)
            .bind(*at)
            .bind(*value)
            .execute(app.state.platform_pool())
            .await
            .expect("weather reading");
    }
}

fn by_origin<'a>(env: &'a Value, origin: &str, metric: &str) -> Vec<&'a Value> {
    env.as_array()
        .expect("environment")
        .iter()
        .filter(|r| r["origin"] == origin && r["metric"] == metric)
        .collect()
}

#[tokio::test]
async fn diary_entries_carry_the_readings_around_the_plant_at_their_time() {
    let app = app().await;
    let t = app.tenant("envdiary").await;
    let grower = app.member(&t, Role::Grower).await;
    let now = OffsetDateTime::now_utc();
    let hour = now.replace_time(Time::from_hms(now.hour(), 0, 0).expect("hour"));

    // The measured plant: an air sensor at its location, a humidity sensor of its site, and
    // the site's forecast.
    let (site, loc, _) = bed(&app, &t, "Env tent", 0).await;
    let plant = plant_at(&app, &t, loc, "Measured").await;
    let air = sensor(
        &app,
        &t,
        "Tent air",
        SensorMetric::TemperatureC,
        Place::Location(loc),
    )
    .await;
    let rh = sensor(
        &app,
        &t,
        "Site RH",
        SensorMetric::HumidityPercent,
        Place::Site(site),
    )
    .await;
    readings(
        &app,
        &t,
        air,
        &[
            (now - Duration::minutes(130), 19.0),
            (now - Duration::minutes(40), 23.5),
            (now - Duration::minutes(10), 24.0),
        ],
    )
    .await;
    readings(&app, &t, rh, &[(now - Duration::minutes(20), 61.0)]).await;
    weather(
        &app,
        &t,
        site,
        &[
            ("temperature_c", hour - Duration::hours(2), 8.0),
            ("temperature_c", hour, 11.0),
            ("humidity_percent", hour, 70.0),
        ],
    )
    .await;
    // A plant nothing measures (a site without coordinates, no sensor), and one whose only
    // sensor last reported three hours ago.
    let (_, bare_loc, _) = bed(&app, &t, "Bare shelf", 0).await;
    let bare = plant_at(&app, &t, bare_loc, "Unmeasured").await;
    let (_, quiet_loc, _) = bed(&app, &t, "Quiet room", 0).await;
    let quiet = plant_at(&app, &t, quiet_loc, "Quiet").await;
    let stale = sensor(
        &app,
        &t,
        "Quiet air",
        SensorMetric::TemperatureC,
        Place::Location(quiet_loc),
    )
    .await;
    readings(&app, &t, stale, &[(now - Duration::hours(3), 18.0)]).await;

    // Another garden with its own sensor reporting right now.
    let b = app.tenant("envdiaryb").await;
    let (_, b_loc, _) = bed(&app, &b, "B tent", 0).await;
    let b_air = sensor(
        &app,
        &b,
        "B air",
        SensorMetric::TemperatureC,
        Place::Location(b_loc),
    )
    .await;
    readings(&app, &b, b_air, &[(now - Duration::minutes(1), 69.5)]).await;

    let rest = app.rest_as(&grower);
    let write = |body: Value| {
        let rest = &rest;
        let t = &t;
        async move {
            let (s, v) = rest
                .call(Method::POST, &path(t, "diary-entries"), Some(&body))
                .await;
            assert_eq!(s, 201, "{v}");
            v
        }
    };
    let entry = write(json!({"text": "Looks fine.", "plant_key": plant})).await;
    let env = &entry["environment"];
    assert_eq!(entry["environment_status"], Value::Null, "{entry}");
    assert_eq!(env.as_array().map(Vec::len), Some(4), "{env}");
    let a = by_origin(env, "location", "temperature_c");
    assert_eq!(a.len(), 1, "{env}");
    assert_eq!(a[0]["value"], 24.0, "the latest in the hour before");
    assert_eq!(a[0]["sensor_key"], air.to_string());
    assert_eq!(a[0]["sensor_name"], "Tent air");
    assert_eq!(a[0]["source"], "http");
    assert_eq!(a[0]["unit"], "°C");
    assert_eq!(a[0]["measured_at"], ts(now - Duration::minutes(10)));
    let h = by_origin(env, "site", "humidity_percent");
    assert_eq!(
        (h[0]["value"].clone(), h[0]["unit"].clone()),
        (json!(61.0), json!("%"))
    );
    assert_eq!(h[0]["sensor_key"], rh.to_string());
    let wt = by_origin(env, "weather", "temperature_c");
    assert_eq!(wt.len(), 1);
    assert_eq!(
        wt[0]["value"], 11.0,
        "the hour nearest, not the one two hours before"
    );
    assert_eq!(wt[0]["source"], "forecast");
    assert_eq!(wt[0]["sensor_key"], Value::Null);
    assert_eq!(wt[0]["measured_at"], ts(hour));
    assert_eq!(
        by_origin(env, "weather", "humidity_percent")[0]["value"],
        70.0
    );
    assert!(!env.to_string().contains(&b_air.to_string()) && !env.to_string().contains("69.5"));

    // The read shows the same, and so does the diary tool.
    let key = entry["key"].as_str().expect("key").to_owned();
    let (s, read) = rest
        .call(
            Method::GET,
            &path(&t, &format!("diary-entries/{key}")),
            None,
        )
        .await;
    assert_eq!(s, 200, "{read}");
    assert_eq!(read["environment"], entry["environment"]);
    assert_eq!(read["environment_status"], Value::Null);
    let api_key = app.api_key(&grower, Some(t.slug.as_str())).await;
    let (s, via_tool) = tool(&app, &api_key, "get_diary_entry", json!({"entry_key": key})).await;
    assert_eq!(s, 200, "{via_tool}");
    assert_eq!(via_tool["data"]["environment"], entry["environment"]);
    assert_eq!(via_tool["data"]["environment_status"], Value::Null);

    // Nothing measures it, no plant at all, or nothing reported in the window.
    let none = write(json!({"text": "Bare.", "plant_key": bare})).await;
    assert_eq!(none["environment"], json!([]));
    assert_eq!(none["environment_status"], "no_source");
    let garden = write(json!({"text": "The whole garden."})).await;
    assert_eq!(garden["environment_status"], "no_source");
    let silent = write(json!({"text": "Quiet.", "plant_key": quiet})).await;
    assert_eq!(silent["environment"], json!([]));
    assert_eq!(silent["environment_status"], "unavailable");
    // Dated yesterday: read at noon UTC of that day, when nothing reported.
    let yesterday = (now.date() - Duration::days(1)).to_string();
    let back =
        write(json!({"text": "Yesterday.", "plant_key": plant, "entry_date": yesterday})).await;
    assert_eq!(back["environment"], json!([]), "{back}");
    assert_eq!(back["environment_status"], "unavailable");

    // Garden B's entries see none of A's sensors either.
    let b_grower = app.member(&b, Role::Grower).await;
    let b_plant = plant_at(&app, &b, b_loc, "B plant").await;
    let (s, b_entry) = app
        .rest_as(&b_grower)
        .call(
            Method::POST,
            &path(&b, "diary-entries"),
            Some(&json!({"text": "B.", "plant_key": b_plant})),
        )
        .await;
    assert_eq!(s, 201, "{b_entry}");
    let b_env = b_entry["environment"].to_string();
    assert!(b_env.contains(&b_air.to_string()), "{b_env}");
    assert!(!b_env.contains(&air.to_string()) && !b_env.contains(&rh.to_string()));
    // And A's plant is not B's to write about.
    let (s, _) = app
        .rest_as(&b_grower)
        .call(
            Method::POST,
            &path(&b, "diary-entries"),
            Some(&json!({"text": "Not mine.", "plant_key": plant})),
        )
        .await;
    assert_eq!(s, 404);
    assert_eq!(count(&app, &b, "diary_entries").await, 1);
}

#[tokio::test]
async fn diagnostics_and_get_environment_show_what_measures_the_plant_now() {
    let app = app().await;
    let t = app.tenant("envdiag").await;
    let viewer = app.member(&t, Role::Viewer).await;
    let now = OffsetDateTime::now_utc();
    let hour = now.replace_time(Time::from_hms(now.hour(), 0, 0).expect("hour"));
    let (site, loc, _) = bed(&app, &t, "Diag tent", 0).await;
    let plant = plant_at(&app, &t, loc, "Diagnosed").await;
    let air = sensor(
        &app,
        &t,
        "Diag air",
        SensorMetric::TemperatureC,
        Place::Location(loc),
    )
    .await;
    readings(&app, &t, air, &[(now - Duration::minutes(5), 22.5)]).await;
    weather(&app, &t, site, &[("temperature_c", hour, 9.5)]).await;
    let bare_loc = location_in(
        &app,
        &t,
        bed(&app, &t, "Diag bare", 0).await.0,
        "Bare corner",
    )
    .await;
    let bare = plant_at(&app, &t, bare_loc, "Bare").await;

    let rest = app.rest_as(&viewer);
    let diag = |p: Uuid| path(&t, &format!("plant-instances/{p}/diagnostics"));
    let (s, d) = rest.call(Method::GET, &diag(plant), None).await;
    assert_eq!(s, 200, "{d}");
    let sensors = &d["sensors"];
    assert_eq!(sensors["available"], true, "{sensors}");
    assert_eq!(sensors["reason"], Value::Null);
    let a = by_origin(&sensors["readings"], "location", "temperature_c");
    assert_eq!(a[0]["value"], 22.5);
    assert_eq!(a[0]["sensor_key"], air.to_string());
    let w = by_origin(&sensors["readings"], "weather", "temperature_c");
    assert_eq!(w[0]["value"], 9.5);
    assert_eq!(w[0]["source"], "forecast");
    let (s, d) = rest.call(Method::GET, &diag(bare), None).await;
    assert_eq!(s, 200, "{d}");
    assert_eq!(d["sensors"]["available"], false);
    assert_eq!(d["sensors"]["readings"], json!([]));
    assert!(
        d["sensors"]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("nothing measures"))
    );
    let (s, d) = rest
        .call(
            Method::GET,
            &format!("{}?include_sensors=false", diag(plant)),
            None,
        )
        .await;
    assert_eq!(s, 200);
    assert!(d.get("sensors").is_none(), "{d}");

    // get_environment: the sensors, the site's weather hour, the status.
    let key = app.api_key(&viewer, Some(t.slug.as_str())).await;
    let (s, env) = tool(&app, &key, "get_environment", json!({"plant_key": plant})).await;
    assert_eq!(s, 200, "{env}");
    let data = &env["data"];
    assert_eq!(data["readings"].as_array().map(Vec::len), Some(1), "{data}");
    assert_eq!(data["weather"].as_array().map(Vec::len), Some(1), "{data}");
    assert_eq!(data["weather"][0]["metric"], "temperature_c");
    assert_eq!(data["weather"][0]["value"], 9.5);
    assert_eq!(data["weather"][0]["origin"], "weather");
    assert_eq!(data["weather"][0]["measured_at"], ts(hour));
    assert_eq!(data["environment_status"], Value::Null);
    assert!(
        env["summary"]
            .as_str()
            .is_some_and(|s| s.contains("Weather")),
        "{env}"
    );
    let (s, env) = tool(&app, &key, "get_environment", json!({"plant_key": bare})).await;
    assert_eq!(s, 200, "{env}");
    assert_eq!(env["data"]["weather"], json!([]));
    assert_eq!(env["data"]["environment_status"], "no_source");
    // Another garden's plant: not found, and its weather not shown.
    let b = app.tenant("envdiagb").await;
    let b_key = app
        .api_key(&app.member(&b, Role::Viewer).await, Some(b.slug.as_str()))
        .await;
    let (s, v) = tool(&app, &b_key, "get_environment", json!({"plant_key": plant})).await;
    assert_eq!(s, 404, "{v}");
    assert!(!v.to_string().contains("9.5"));
}

#[tokio::test]
async fn create_site_tool_takes_coordinates_like_rest() {
    let app = app().await;
    let t = app.tenant("envsite").await;
    let admin = app.member(&t, Role::Admin).await;
    let key = app.api_key(&admin, Some(t.slug.as_str())).await;
    let (s, made) = tool(
        &app,
        &key,
        "create_site",
        json!({"name": "Allotment", "kind": "garden", "latitude": 52.52, "longitude": 13.4}),
    )
    .await;
    assert_eq!(s, 200, "{made}");
    assert_eq!(made["data"]["latitude"], 52.52);
    assert_eq!(made["data"]["longitude"], 13.4);
    let site = made["data"]["site_key"].as_str().expect("key").to_owned();
    let (s, read) = app
        .rest_as(&admin)
        .call(Method::GET, &path(&t, &format!("sites/{site}")), None)
        .await;
    assert_eq!(s, 200);
    assert_eq!(
        (read["latitude"].clone(), read["longitude"].clone()),
        (json!(52.52), json!(13.4))
    );
    let before = count(&app, &t, "sites").await;
    // One coordinate alone: refused naming the missing one, nothing written.
    let (s, err) = tool(
        &app,
        &key,
        "create_site",
        json!({"name": "Half", "kind": "garden", "latitude": 52.52}),
    )
    .await;
    assert_eq!(s, 422, "{err}");
    assert!(err.to_string().contains("longitude"), "{err}");
    // Out of range.
    let (s, err) = tool(
        &app,
        &key,
        "create_site",
        json!({"name": "Far", "kind": "garden", "latitude": 95.0, "longitude": 0.0}),
    )
    .await;
    assert_eq!(s, 422, "{err}");
    assert!(err.to_string().contains("latitude"), "{err}");
    assert_eq!(count(&app, &t, "sites").await, before);
    // Without coordinates: as before.
    let (s, plain) = tool(&app, &key, "create_site", json!({"name": "Flat"})).await;
    assert_eq!(s, 200, "{plain}");
    assert_eq!(plain["data"]["kind"], "apartment");
    assert!(plain["data"].get("latitude").is_none());
}
