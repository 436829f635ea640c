//! Weather: site coordinates (checked, both or neither, nothing written on a refusal, another
//! garden's site 404), the forecast poll (the same service function `kultiva weather poll`
//! calls, and the binary itself) storing readings of origin weather once, frost alerts opening
//! once per plant and night at outdoor sites for plants at or below their threshold, resolving
//! when a later forecast is mild, and a forecast API that fails, answers nonsense or hangs
//! never failing the run. The forecast comes from a local HTTP server serving the
//! Open-Meteo-shaped files of `tests/fixtures/open-meteo`.

use std::sync::{Arc, Mutex};

use kultiva::garden::weather::service::poll_garden;
use kultiva::tenancy::TenantRecord;
use serde_json::{Value, json};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::garden::{count, get_json, location_in, plant, post};
use crate::support::{TestApp, assert_error, detail_fields, sibling_database};

/// What the forecast server answers.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Answer {
    /// A fixture file, its hours moved to start at today's midnight UTC.
    File(&'static str),
    ServerError,
    NotJson,
    /// Nothing for 30 s.
    Hang,
}

/// A local Open-Meteo stand-in: answers `GET /v1/forecast?…` as `answer` says and records
/// every request's path and query.
struct ForecastServer {
    port: u16,
    answer: Arc<Mutex<Answer>>,
    requests: Arc<Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for ForecastServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn fixture(name: &str) -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/open-meteo")
        .join(name);
    serde_json::from_slice(&std::fs::read(&path).expect("fixture")).expect("fixture json")
}

/// Today's midnight UTC.
fn today() -> OffsetDateTime {
    OffsetDateTime::now_utc().replace_time(time::Time::MIDNIGHT)
}

/// The fixture as the API would answer it today: hour i is today's midnight UTC + i hours.
fn dated(name: &str) -> Vec<u8> {
    let mut doc = fixture(name);
    let n = doc["hourly"]["time"].as_array().expect("times").len();
    let start = today();
    let format = time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]");
    doc["hourly"]["time"] = (0..n)
        .map(|i| {
            Value::String(
                (start + time::Duration::hours(i as i64))
                    .format(&format)
                    .expect("format"),
            )
        })
        .collect();
    serde_json::to_vec(&doc).expect("json")
}

impl ForecastServer {
    async fn start(first: Answer) -> Self {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let answer = Arc::new(Mutex::new(first));
        let requests: Arc<Mutex<Vec<String>>> = Arc::default();
        let (now_answer, seen) = (answer.clone(), requests.clone());
        let task = tokio::spawn(async move {
            loop {
                let Ok((mut sock, _)) = listener.accept().await else {
                    return;
                };
                let answer = *now_answer.lock().expect("lock");
                let seen = seen.clone();
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    let mut chunk = [0u8; 4096];
                    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                        match sock.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                    }
                    let head = String::from_utf8_lossy(&buf).into_owned();
                    let target = head
                        .lines()
                        .next()
                        .and_then(|l| l.split(' ').nth(1))
                        .unwrap_or_default()
                        .to_owned();
                    seen.lock().expect("lock").push(target);
                    let (status, body) = match answer {
                        Answer::File(name) => ("200 OK", dated(name)),
                        Answer::ServerError => (
                            "500 Internal Server Error",
                            br#"{"error":true,"reason":"down"}"#.to_vec(),
                        ),
                        Answer::NotJson => ("200 OK", b"<html>maintenance</html>".to_vec()),
                        Answer::Hang => {
                            tokio::time::sleep(std::time::Duration::from_secs(30)).await;
                            return;
                        }
                    };
                    let head = format!(
                        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\n\
                         content-length: {}\r\nconnection: close\r\n\r\n",
                        body.len()
                    );
                    let _ = sock.write_all(head.as_bytes()).await;
                    let _ = sock.write_all(&body).await;
                    let _ = sock.shutdown().await;
                });
            }
        });
        Self {
            port,
            answer,
            requests,
            task,
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn answer(&self, a: Answer) {
        *self.answer.lock().expect("lock") = a;
    }

    fn requests(&self) -> Vec<String> {
        self.requests.lock().expect("lock").clone()
    }
}

async fn weather_app(server: &ForecastServer) -> TestApp {
    TestApp::spawn_env(&[
        ("WEATHER_URL", &server.url()),
        // No timer in tests: each poll is called (parallel tests share the database).
        ("WEATHER_POLL_MINUTES", "0"),
        ("WEATHER_TIMEOUT_SECONDS", "1"),
        ("WEBHOOK_ALLOW_PRIVATE_TARGETS", "true"),
    ])
    .await
}

fn sites_path(t: &TenantRecord) -> String {
    format!("/api/v1/t/{}/sites/", t.slug)
}

async fn site(app: &TestApp, t: &TenantRecord, body: Value) -> Value {
    let (s, v) = post(app, &sites_path(t), body.clone()).await;
    assert_eq!(s, 201, "{body}: {v}");
    v
}

fn key(v: &Value) -> Uuid {
    Uuid::parse_str(v["key"].as_str().expect("key")).expect("uuid")
}

#[tokio::test]
async fn coordinates_are_checked_together_and_other_gardens_sites_are_not_found() {
    let app = TestApp::spawn().await;
    let t = app.tenant("weather").await;
    let other = app.tenant("weather").await;

    let s = site(
        &app,
        &t,
        json!({"name": "Allotment", "kind": "garden", "latitude": 52.52, "longitude": -13.4}),
    )
    .await;
    assert_eq!(
        (s["latitude"].clone(), s["longitude"].clone()),
        (json!(52.52), json!(-13.4))
    );
    let path = format!("{}{}", sites_path(&t), key(&s));
    let (status, got) = get_json(&app, &path).await;
    assert_eq!(status, 200);
    assert_eq!(got, s);
    let plain = site(&app, &t, json!({"name": "Flat", "kind": "apartment"})).await;
    assert_eq!(
        (plain["latitude"].clone(), plain["longitude"].clone()),
        (Value::Null, Value::Null)
    );

    // Refusals name the field, and write nothing.
    let before = app.site_count(&t).await;
    for (body, field) in [
        (
            json!({"name": "N1", "kind": "garden", "latitude": 90.5, "longitude": 0}),
            "body.latitude",
        ),
        (
            json!({"name": "N2", "kind": "garden", "latitude": 10, "longitude": -180.01}),
            "body.longitude",
        ),
        (
            json!({"name": "N3", "kind": "garden", "latitude": 10}),
            "body.longitude",
        ),
        (
            json!({"name": "N4", "kind": "garden", "longitude": 10}),
            "body.latitude",
        ),
        (
            json!({"name": "N5", "kind": "garden", "latitude": null, "longitude": 10}),
            "body.latitude",
        ),
        (
            json!({"name": "N6", "kind": "garden", "latitude": "52", "longitude": 10}),
            "body.latitude",
        ),
    ] {
        let res = app.rest().post(&sites_path(&t), &body).await;
        let err = assert_error(res, 422, "VALIDATION_ERROR").await;
        assert_eq!(detail_fields(&err), [field], "{body}");
    }
    assert_eq!(app.site_count(&t).await, before, "nothing written");

    // A patch moves both, refuses one alone (the site unchanged), clears both with nulls.
    let res = app.rest().patch(&path, &json!({"latitude": 48.1})).await;
    let err = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(detail_fields(&err), ["body.longitude"]);
    let res = app
        .rest()
        .patch(&path, &json!({"latitude": 48.1, "longitude": 200}))
        .await;
    let err = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(detail_fields(&err), ["body.longitude"]);
    assert_eq!(get_json(&app, &path).await.1, s, "unchanged");
    let res = app
        .rest()
        .patch(&path, &json!({"latitude": 48.1, "longitude": 11.6}))
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let moved: Value = res.json().await.expect("json");
    assert_eq!(
        (moved["latitude"].clone(), moved["longitude"].clone()),
        (json!(48.1), json!(11.6))
    );
    let res = app.rest().patch(&path, &json!({"name": "Renamed"})).await;
    let renamed: Value = res.json().await.expect("json");
    assert_eq!(renamed["latitude"], 48.1, "omitted: kept");
    let res = app
        .rest()
        .patch(&path, &json!({"latitude": null, "longitude": null}))
        .await;
    let cleared: Value = res.json().await.expect("json");
    assert_eq!(
        (cleared["latitude"].clone(), cleared["longitude"].clone()),
        (Value::Null, Value::Null)
    );

    // Another garden's site is not found, and not changed.
    let theirs = site(
        &app,
        &other,
        json!({"name": "Theirs", "kind": "garden", "latitude": 1, "longitude": 2}),
    )
    .await;
    let foreign = format!("{}{}", sites_path(&t), key(&theirs));
    let res = app
        .rest()
        .patch(&foreign, &json!({"latitude": 3, "longitude": 4}))
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    let res = app.rest().get(&foreign).await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    let (_, again) = get_json(&app, &format!("{}{}", sites_path(&other), key(&theirs))).await;
    assert_eq!(again["latitude"], 1.0);

    // The published schema describes them.
    let spec: Value = app
        .get("/api/v1/openapi.json")
        .await
        .json()
        .await
        .expect("spec");
    for schema in ["Site", "SiteCreate", "SitePatch"] {
        let props = &spec["components"]["schemas"][schema]["properties"];
        assert_eq!(props["latitude"]["maximum"], 90.0, "{schema}");
        assert_eq!(props["longitude"]["minimum"], -180.0, "{schema}");
    }
}

/// A catalogue species of this frost sensitivity (a unique name; the catalogue is global).
/// It runs on the fixture tomato's phase sequence, so plants of it can be created.
async fn species(app: &TestApp, sensitivity: &str) -> String {
    let tomato = crate::garden::species(app, "Fixtura tomatoides").await;
    let (_, doc) = get_json(app, &format!("/api/v1/species/{tomato}")).await;
    let sequence = doc["phase_sequence_key"].clone();
    let word = crate::catalog::letters();
    let (s, family) = post(
        app,
        "/api/v1/botanical-families",
        json!({"name": format!("W{word}aceae")}),
    )
    .await;
    assert_eq!(s, 201, "{family}");
    let (s, sp) = post(
        app,
        "/api/v1/species",
        json!({"scientific_name": format!("Frigus {word}"), "family_key": family["key"],
               "frost_sensitivity": sensitivity}),
    )
    .await;
    assert_eq!(s, 201, "{sp}");
    let res = app
        .rest()
        .put(
            &format!(
                "/api/v1/species/{}/phase-sequence",
                sp["key"].as_str().expect("key")
            ),
            &json!({"phase_sequence_key": sequence}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 200);
    sp["key"].as_str().expect("key").to_owned()
}

async fn plant_at(app: &TestApp, t: &TenantRecord, species: &str, loc: Uuid, name: &str) -> Uuid {
    key(&plant(
        app,
        t,
        json!({"species_key": species, "location_key": loc, "name": name}),
    )
    .await)
}

async fn alerts(app: &TestApp, t: &TenantRecord, query: &str) -> Vec<Value> {
    let (s, v) = get_json(
        app,
        &format!("/api/v1/t/{}/alerts?kind=frost{query}", t.slug),
    )
    .await;
    assert_eq!(s, 200, "{v}");
    v["items"].as_array().expect("items").clone()
}

async fn events(app: &TestApp, t: &TenantRecord, kind: &str) -> usize {
    let sql = format!(
        "SELECT count(*) FROM {}.webhook_events WHERE type = $1",
        t.schema_name.quoted()
    );
    let n: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
        .bind(kind)
        .fetch_one(app.state.platform_pool())
        .await
        .expect("events");
    n as usize
}

#[tokio::test]
async fn a_frost_night_opens_one_alert_per_exposed_plant_and_a_mild_forecast_resolves_it() {
    let server = ForecastServer::start(Answer::File("frost-night.json")).await;
    let app = weather_app(&server).await;
    let t = app.tenant("weather").await;
    let (s, hook) = post(
        &app,
        &format!("/api/v1/t/{}/webhooks", t.slug),
        json!({"url": "http://127.0.0.1:9/frost", "events": ["alert.opened", "alert.resolved"]}),
    )
    .await;
    assert_eq!(s, 201, "{hook}");
    let sensitive = species(&app, "sensitive").await;
    let moderate = species(&app, "moderate").await;
    let hardy = species(&app, "hardy").await;

    let outdoor = key(&site(
        &app,
        &t,
        json!({"name": "Plot", "kind": "garden", "latitude": 52.52, "longitude": 13.42}),
    )
    .await);
    let indoor = key(&site(
        &app,
        &t,
        json!({"name": "Flat", "kind": "apartment", "latitude": 52.5, "longitude": 13.4}),
    )
    .await);
    let unplaced = key(&site(&app, &t, json!({"name": "Far plot", "kind": "balcony"})).await);
    let bed = location_in(&app, &t, outdoor, "Bed").await;
    let sill = location_in(&app, &t, indoor, "Sill").await;
    let far = location_in(&app, &t, unplaced, "Far bed").await;
    let tomato = plant_at(&app, &t, &sensitive, bed, "Tomato").await;
    let lettuce = plant_at(&app, &t, &moderate, bed, "Lettuce").await;
    let _kale = plant_at(&app, &t, &hardy, bed, "Kale").await;
    let _basil = plant_at(&app, &t, &sensitive, sill, "Basil").await;
    let _far = plant_at(&app, &t, &sensitive, far, "Far tomato").await;

    let now = OffsetDateTime::now_utc();
    let p = poll_garden(&app.state, &t, now).await.expect("poll");
    assert_eq!(
        (p.sites, p.fetched, p.failed.len()),
        (2, 2, 0),
        "{:?}",
        p.failed
    );
    assert_eq!(
        p.stored,
        2 * 144,
        "72 hours of temperature and humidity per site"
    );
    assert_eq!(count(&app, &t, "weather_readings").await, 288);
    let series = kultiva::garden::weather::service::site_readings(
        &app.state,
        &t,
        outdoor,
        "temperature_c",
        today(),
        today() + time::Duration::days(3),
        1000,
    )
    .await
    .expect("readings");
    assert_eq!(series.len(), 72);
    assert_eq!(series[29], (today() + time::Duration::hours(29), -3.0));
    let stranger = app.tenant("weather").await;
    let err = kultiva::garden::weather::service::site_readings(
        &app.state,
        &stranger,
        outdoor,
        "temperature_c",
        today(),
        today() + time::Duration::days(3),
        1000,
    )
    .await
    .expect_err("another garden's site");
    assert_eq!(err.code(), kultiva::error::ErrorCode::EntityNotFound);
    let asked = server.requests();
    assert_eq!(asked.len(), 2);
    assert!(
        asked.iter().any(|q| q.starts_with("/v1/forecast?latitude=52.52&longitude=13.42&hourly=temperature_2m%2Crelative_humidity_2m&timezone=UTC")),
        "{asked:?}"
    );

    // The night of today (noon to noon, the garden is on UTC) falls to -3.0: the tomato
    // (sensitive, 1 °C) and the lettuce (moderate, -2 °C) get one alert each; the kale (hardy,
    // -4 °C), the basil indoors and the plant at the site without coordinates none.
    let night = today().date().to_string();
    let open = alerts(&app, &t, "&state=open").await;
    let mut plants: Vec<Value> = open.iter().map(|a| a["plant_key"].clone()).collect();
    plants.sort_by_key(|v| v.to_string());
    let mut want = vec![json!(tomato), json!(lettuce)];
    want.sort_by_key(|v| v.to_string());
    assert_eq!(plants, want, "{open:?}");
    for a in &open {
        assert_eq!(a["kind"], "frost");
        assert_eq!(a["site_key"], json!(outdoor));
        assert_eq!(a["location_key"], json!(bed));
        assert_eq!(a["metric"], "temperature_c");
        assert_eq!(a["reading"]["value"], -3.0);
        assert_eq!(a["detail"]["night"], night.as_str());
        assert_eq!(a["detail"]["low_c"], -3.0);
        assert!(
            a["range"]["source"]
                .as_str()
                .expect("source")
                .contains("RHS")
        );
    }
    let tomato_alert = open
        .iter()
        .find(|a| a["plant_key"] == json!(tomato))
        .expect("tomato");
    assert_eq!(tomato_alert["range"]["min"], 1.0);
    assert_eq!(tomato_alert["detail"]["frost_sensitivity"], "sensitive");
    let lettuce_alert = open
        .iter()
        .find(|a| a["plant_key"] == json!(lettuce))
        .expect("lettuce");
    assert_eq!(lettuce_alert["range"]["min"], -2.0);
    assert_eq!(events(&app, &t, "alert.opened").await, 2);

    // The same forecast again: nothing stored twice, nothing opened twice.
    let p = poll_garden(&app.state, &t, now).await.expect("poll");
    assert_eq!(
        (p.stored, p.updated, p.opened.len(), p.resolved.len()),
        (0, 0, 0, 0)
    );
    assert_eq!(count(&app, &t, "weather_readings").await, 288);
    assert_eq!(alerts(&app, &t, "&state=open").await.len(), 2);
    assert_eq!(events(&app, &t, "alert.opened").await, 2);

    // A forecast API that fails, answers nonsense or hangs: counted, the run goes on, the
    // alerts stay as they were.
    for answer in [Answer::ServerError, Answer::NotJson, Answer::Hang] {
        server.answer(answer);
        let p = poll_garden(&app.state, &t, now)
            .await
            .expect("a failed fetch is no error");
        assert_eq!((p.fetched, p.failed.len()), (0, 2), "{answer:?}");
        assert!(p.opened.is_empty() && p.resolved.is_empty(), "{answer:?}");
    }
    assert_eq!(alerts(&app, &t, "&state=open").await.len(), 2);

    // The next forecast is mild: both resolve, once, with their events; the readings of the
    // same hours are updated, not added.
    server.answer(Answer::File("mild.json"));
    let p = poll_garden(&app.state, &t, now).await.expect("poll");
    assert_eq!(p.resolved.len(), 2);
    assert!(p.opened.is_empty());
    assert_eq!(p.stored, 0);
    assert!(p.updated > 0);
    assert_eq!(count(&app, &t, "weather_readings").await, 288);
    assert!(alerts(&app, &t, "&state=open").await.is_empty());
    let resolved = alerts(&app, &t, "&state=resolved").await;
    assert_eq!(resolved.len(), 2);
    assert!(resolved.iter().all(|a| a["resolved_at"].is_string()));
    assert_eq!(events(&app, &t, "alert.resolved").await, 2);
    let p = poll_garden(&app.state, &t, now).await.expect("poll");
    assert!(p.resolved.is_empty() && p.opened.is_empty());
    assert_eq!(events(&app, &t, "alert.resolved").await, 2);
}

#[tokio::test]
async fn a_frost_alert_ends_with_its_night() {
    let server = ForecastServer::start(Answer::File("frost-night.json")).await;
    let app = weather_app(&server).await;
    let t = app.tenant("weather").await;
    let sensitive = species(&app, "sensitive").await;
    let plot = key(&site(
        &app,
        &t,
        json!({"name": "Balcony", "kind": "balcony", "latitude": 47.0, "longitude": 8.0}),
    )
    .await);
    let bed = location_in(&app, &t, plot, "Box").await;
    plant_at(&app, &t, &sensitive, bed, "Pepper").await;
    let now = OffsetDateTime::now_utc();
    let p = poll_garden(&app.state, &t, now).await.expect("poll");
    assert_eq!(p.opened.len(), 1);
    // The API is down the next day at noon: the night is over, the alert ends all the same.
    server.answer(Answer::ServerError);
    let next_noon = today() + time::Duration::hours(36);
    let p = poll_garden(&app.state, &t, next_noon).await.expect("poll");
    assert_eq!((p.failed.len(), p.resolved.len()), (1, 1));
    assert!(alerts(&app, &t, "&state=open").await.is_empty());
}

// Multi-threaded: the command is awaited by a blocking wait, and the forecast server must answer
// meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kultiva_weather_poll_stores_the_forecast_once_and_survives_a_dead_api() {
    let server = ForecastServer::start(Answer::File("mild.json")).await;
    // A database of its own: the command polls every garden in it.
    let url = sibling_database("weather").await;
    let app = TestApp::spawn_env(&[("DATABASE_URL", &url)]).await;
    let t = app.tenant("weather").await;
    let s = site(
        &app,
        &t,
        json!({"name": "Roof", "kind": "balcony", "latitude": -33.9, "longitude": 151.2}),
    )
    .await;
    let weather_url = server.url();
    let env = vec![
        ("DATABASE_URL", url.as_str()),
        ("WEATHER_URL", weather_url.as_str()),
        ("WEATHER_TIMEOUT_SECONDS", "2"),
    ];

    let out = crate::cli::kultiva(&["weather", "poll"], &env);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("reading(s) stored"), "{stdout}");
    assert_eq!(
        count(&app, &t, "weather_readings").await,
        144,
        "{stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let at_noon: f64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "SELECT value FROM {}.weather_readings WHERE site_id = $1 AND metric = 'temperature_c' \
         AND measured_at = $2",
        t.schema_name.quoted()
    )))
    .bind(key(&s))
    .bind(today() + time::Duration::hours(12))
    .fetch_one(app.state.platform_pool())
    .await
    .expect("noon reading");
    assert_eq!(
        at_noon,
        fixture("mild.json")["hourly"]["temperature_2m"][12]
            .as_f64()
            .expect("t")
    );

    // Again: nothing new.
    let out = crate::cli::kultiva(&["weather", "poll"], &env);
    assert!(out.status.success());
    assert_eq!(count(&app, &t, "weather_readings").await, 144);

    // A dead API and one that answers nonsense: reported, exit 0, nothing lost.
    server.answer(Answer::NotJson);
    for base in ["http://127.0.0.1:9", weather_url.as_str()] {
        let mut env = env.clone();
        env[1] = ("WEATHER_URL", base);
        let out = crate::cli::kultiva(&["weather", "poll"], &env);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{base}: {stdout}");
        assert!(!stdout.contains(" 0 failed"), "{stdout}");
        assert_eq!(count(&app, &t, "weather_readings").await, 144);
    }

    // Without WEATHER_URL the command says so.
    let out = crate::cli::kultiva(&["weather", "poll"], &[("DATABASE_URL", url.as_str())]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("WEATHER_URL"));
}
