//! MQTT ingest and Home Assistant discovery against a real Mosquitto (`TEST_MQTT_URL`, which
//! `infra/test` sets; the restart test starts a private broker of its own so the shared one is
//! never restarted). Messages are published and read back with Mosquitto's own clients
//! (`mosquitto_pub`, `mosquitto_sub`), not with Kultiva's.
//!
//! Each test runs against a database of its own (`sibling_database`): the subscriber and the
//! discovery publisher read every garden of the registry, and the shared test database holds
//! thousands. Counters (`kultiva_mqtt_messages_total`) are per process: nextest runs each test
//! in a process of its own.

use std::path::PathBuf;
use std::time::Duration;

use kultiva::tenancy::TenantRecord;
use serde_json::{Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use tokio::process::Command;
use uuid::Uuid;

use crate::garden::{bed, count, get_json, phases, plant, plants_path, post, species};
use crate::support::{
    Options, TestApp, assert_error, detail_fields, free_port, key_of, sibling_database,
};

const TOMATO: &str = "Fixtura tomatoides";
const SOAP: &str = "Fixture soap spray"; // 3 days

fn broker_url() -> String {
    std::env::var("TEST_MQTT_URL").unwrap_or_else(|_| "mqtt://127.0.0.1:1883".to_owned())
}

/// Host, port and credentials of a broker URL, as `mosquitto_pub`/`mosquitto_sub` arguments.
fn client_args(url: &str) -> Vec<String> {
    let u = url::Url::parse(url).expect("TEST_MQTT_URL is a URL");
    let mut args = vec![
        "-h".to_owned(),
        u.host_str().expect("host").to_owned(),
        "-p".to_owned(),
        u.port().unwrap_or(1883).to_string(),
    ];
    if !u.username().is_empty() {
        args.extend(["-u".to_owned(), u.username().to_owned()]);
    }
    if let Some(p) = u.password() {
        args.extend(["-P".to_owned(), p.to_owned()]);
    }
    args
}

/// Publishes one QoS 1 message (`mosquitto_pub` returns once the broker acknowledged it).
async fn publish_to(url: &str, topic: &str, payload: &str, retain: bool) {
    let mut cmd = Command::new("mosquitto_pub");
    cmd.args(client_args(url)).args(["-q", "1", "-t", topic]);
    if payload.is_empty() {
        cmd.arg("-n");
    } else {
        cmd.args(["-m", payload]);
    }
    if retain {
        cmd.arg("-r");
    }
    let out = cmd.output().await.expect("mosquitto_pub runs");
    assert!(
        out.status.success(),
        "mosquitto_pub {topic}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

async fn publish(topic: &str, payload: &str) {
    publish_to(&broker_url(), topic, payload, false).await;
}

/// The retained messages under a filter: (topic, payload), read with `mosquitto_sub`.
async fn retained(filter: &str) -> Vec<(String, String)> {
    let out = Command::new("mosquitto_sub")
        .args(client_args(&broker_url()))
        .args(["-t", filter, "-v", "--retained-only", "-W", "1"])
        .output()
        .await
        .expect("mosquitto_sub runs");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(t, p)| (t.to_owned(), p.to_owned()))
        .collect()
}

fn ts(t: OffsetDateTime) -> String {
    t.format(&Rfc3339).expect("rfc3339")
}

fn minutes_ago(n: i64) -> OffsetDateTime {
    let t = OffsetDateTime::now_utc() - time::Duration::minutes(n);
    t.replace_nanosecond(0).expect("whole second")
}

/// A service connected to `url` with short timings, on a database of its own.
async fn spawn(db: &str, url: &str, extra: &[(&'static str, &str)]) -> TestApp {
    spawn_as(db, url, &format!("kt-{}", Uuid::now_v7().simple()), extra).await
}

async fn spawn_as(db: &str, url: &str, client_id: &str, extra: &[(&'static str, &str)]) -> TestApp {
    let mut env: Vec<(&'static str, String)> = vec![
        ("DATABASE_URL", sibling_database(db).await),
        ("MQTT_URL", url.to_owned()),
        ("MQTT_CLIENT_ID", client_id.to_owned()),
        ("MQTT_TOPIC_REFRESH_SECONDS", "1".to_owned()),
        ("MQTT_RECONNECT_MAX_SECONDS", "1".to_owned()),
        ("MQTT_KEEP_ALIVE_SECONDS", "5".to_owned()),
    ];
    env.extend(extra.iter().map(|(k, v)| (*k, (*v).to_owned())));
    TestApp::spawn_with(Options {
        env,
        ..Options::default()
    })
    .await
}

fn sensors(t: &TenantRecord) -> String {
    format!("/api/v1/t/{}/sensors", t.slug)
}

async fn new_sensor(app: &TestApp, t: &TenantRecord, body: Value) -> String {
    let (s, v) = post(app, &sensors(t), body.clone()).await;
    assert_eq!(s, 201, "create sensor {body}: {v}");
    key_of(&v)
}

/// A location and an `mqtt` (or `home_assistant`) sensor on `topic`.
async fn topic_sensor(
    app: &TestApp,
    t: &TenantRecord,
    name: &str,
    metric: &str,
    source: &str,
    topic: &str,
) -> String {
    let (_, loc, _) = bed(app, t, name, 0).await;
    new_sensor(
        app,
        t,
        json!({"name": name, "metric": metric, "location_key": loc, "source": source,
               "topic": topic}),
    )
    .await
}

/// The sensor's readings of the last day and the next ten minutes: (value, measured_at).
async fn readings(app: &TestApp, t: &TenantRecord, sensor: &str) -> Vec<(f64, OffsetDateTime)> {
    let from = ts(OffsetDateTime::now_utc() - time::Duration::days(1));
    let to = ts(OffsetDateTime::now_utc() + time::Duration::minutes(10));
    let (s, v) = get_json(
        app,
        &format!("{}/{sensor}/readings?from={from}&to={to}", sensors(t)),
    )
    .await;
    assert_eq!(s, 200, "{v}");
    v["readings"]
        .as_array()
        .expect("readings")
        .iter()
        .map(|r| {
            let at = r["measured_at"].as_str().expect("measured_at");
            (
                r["value"].as_f64().expect("value"),
                OffsetDateTime::parse(at, &Rfc3339).expect("rfc3339"),
            )
        })
        .collect()
}

/// Polls `check` every 100 ms until it holds, for at most `secs` seconds.
async fn until<F, Fut>(what: &str, secs: u64, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
    while tokio::time::Instant::now() < deadline {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("timed out waiting for {what}");
}

/// Publishes a reading with its own time until it is stored (the subscription may still be
/// on its way; the time makes repeats count once), then returns.
async fn probe(
    app: &TestApp,
    t: &TenantRecord,
    sensor: &str,
    topic: &str,
    url: &str,
    at: OffsetDateTime,
) {
    let payload = json!({"value": 20.0, "measured_at": ts(at)}).to_string();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while tokio::time::Instant::now() < deadline {
        publish_to(url, topic, &payload, false).await;
        for _ in 0..5 {
            if readings(app, t, sensor).await.iter().any(|(_, m)| *m == at) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    panic!("the probe on {topic} was never stored");
}

/// `kultiva_mqtt_messages_total{outcome}` of this process.
fn counted(outcome: &str) -> u64 {
    let mut out = String::new();
    kultiva::metrics::encode_counters(&mut out).expect("encode");
    let label = format!("kultiva_mqtt_messages_total{{outcome=\"{outcome}\"}} ");
    out.lines()
        .find_map(|l| l.strip_prefix(&label))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0)
}

#[tokio::test]
async fn numbers_json_and_statestream_are_stored_and_malformed_is_counted_only() {
    let app = spawn("mqtt_payloads", &broker_url(), &[]).await;
    let t = app.tenant("mqtt-pay").await;
    let slug = t.slug.as_str().to_owned();
    let air = format!("kultiva/{slug}/tent/air");
    let rh = format!("kultiva/{slug}/ha/sensor/tent_rh/state");
    // A retained state from before: delivered on subscribing, of unknown age: not stored.
    publish_to(&broker_url(), &rh, "41", true).await;
    let ha = topic_sensor(
        &app,
        &t,
        "Tent RH",
        "humidity_percent",
        "home_assistant",
        &rh,
    )
    .await;
    let temp = topic_sensor(&app, &t, "Tent air", "temperature_c", "mqtt", &air).await;
    let t0 = minutes_ago(30);
    probe(&app, &t, &temp, &air, &broker_url(), t0).await;
    let stale_before = counted("stale");

    let (malformed, out_of_range, unavailable, present) = (
        counted("malformed"),
        counted("out_of_range"),
        counted("unavailable"),
        counted("already_present"),
    );
    let sent_at = OffsetDateTime::now_utc() - time::Duration::seconds(1);
    publish(&air, "21.5").await;
    let t1 = minutes_ago(20);
    let json1 = json!({"value": 22.25, "measured_at": ts(t1)}).to_string();
    publish(&air, &json1).await;
    publish(&air, &json1).await; // a repeat: stored once
    publish(&rh, "55.5").await;
    publish(&rh, "\"56\"").await;
    publish(&rh, "unavailable").await;
    publish(&rh, "unknown").await;
    let future = ts(OffsetDateTime::now_utc() + time::Duration::hours(1));
    for bad in [
        "warm".to_owned(),
        r#"{"value": "x"}"#.to_owned(),
        "NaN".to_owned(),
        String::new(),
        r#"{"value": 1, "measured_at": "yesterday"}"#.to_owned(),
        json!({"value": 1, "measured_at": future}).to_string(),
    ] {
        publish(&air, &bad).await;
    }
    publish(&air, "500").await; // beyond -50..70 °C
    publish(&rh, "on").await; // a state that is no number
    // The last one: once it is stored, everything before it was handled (one connection,
    // one worker, in order).
    let t2 = minutes_ago(10);
    publish(
        &air,
        &json!({"value": 23, "measured_at": ts(t2)}).to_string(),
    )
    .await;
    until("the last reading", 15, || async {
        readings(&app, &t, &temp)
            .await
            .iter()
            .any(|(_, m)| *m == t2)
    })
    .await;
    let done_at = OffsetDateTime::now_utc() + time::Duration::seconds(1);

    let air_readings = readings(&app, &t, &temp).await;
    let values: Vec<f64> = air_readings.iter().map(|(v, _)| *v).collect();
    assert_eq!(values, vec![20.0, 22.25, 23.0, 21.5], "{air_readings:?}");
    assert_eq!(air_readings[0].1, t0);
    assert_eq!(air_readings[1].1, t1);
    // The bare number carries the time of arrival.
    let arrival = air_readings[3].1;
    assert!(sent_at <= arrival && arrival <= done_at, "{arrival}");
    let rh_readings = readings(&app, &t, &ha).await;
    let values: Vec<f64> = rh_readings.iter().map(|(v, _)| *v).collect();
    assert_eq!(
        values,
        vec![55.5, 56.0],
        "the retained 41 is not among them"
    );

    assert_eq!(
        counted("malformed") - malformed,
        7,
        "six on the air, one on RH"
    );
    assert_eq!(counted("out_of_range") - out_of_range, 1);
    assert_eq!(counted("unavailable") - unavailable, 2);
    assert!(counted("already_present") > present);
    assert!(stale_before >= 1, "the retained state was counted as stale");
    assert_eq!(count(&app, &t, "sensor_readings").await, 6);
    publish_to(&broker_url(), &rh, "", true).await; // the retained message goes
}

#[tokio::test]
async fn a_topic_outside_the_garden_prefix_is_refused_and_reaches_nobody() {
    let app = spawn("mqtt_isolation", &broker_url(), &[]).await;
    let a = app.tenant("mqtt-a").await;
    let b = app.tenant("mqtt-b").await;
    let (sa, sb) = (a.slug.as_str().to_owned(), b.slug.as_str().to_owned());
    let (_, loc_b, _) = bed(&app, &b, "B bed", 0).await;
    let body = |source: &str, topic: &str| {
        json!({"name": "Thief", "metric": "temperature_c", "location_key": loc_b,
               "source": source, "topic": topic})
    };
    let stolen = format!("kultiva/{sa}/tent/air");
    for (source, topic) in [
        ("mqtt", stolen.clone()),
        ("home_assistant", stolen.clone()),
        ("mqtt", "tent/air".to_owned()),
        ("mqtt", format!("kultiva/{sb}")),
        ("mqtt", format!("kultiva/{sb}/")),
        ("mqtt", format!("kultiva/{sb}//air")),
        ("mqtt", format!("kultiva/{sb}x/air")),
    ] {
        let res = app.rest().post(&sensors(&b), &body(source, &topic)).await;
        let err = assert_error(res, 422, "VALIDATION_ERROR").await;
        assert_eq!(detail_fields(&err), ["body.topic"], "{topic}: {err}");
        let reason = err["details"][0]["reason"].as_str().unwrap_or_default();
        assert!(reason.contains(&format!("kultiva/{sb}/")), "{reason}");
    }
    assert_eq!(count(&app, &b, "sensors").await, 0);
    // A patch cannot move a sensor there either.
    let k = new_sensor(
        &app,
        &b,
        json!({"name": "B air", "metric": "temperature_c", "location_key": loc_b,
               "source": "http"}),
    )
    .await;
    let path = format!("{}/{k}", sensors(&b));
    let res = app
        .rest()
        .patch(&path, &json!({"source": "mqtt", "topic": &stolen}))
        .await;
    let err = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(detail_fields(&err), ["body.topic"]);
    let (_, still) = get_json(&app, &path).await;
    assert_eq!(
        (still["source"].as_str(), &still["topic"]),
        (Some("http"), &Value::Null)
    );
    let own = format!("kultiva/{sb}/tent/air");
    let res = app
        .rest()
        .patch(&path, &json!({"source": "mqtt", "topic": &own}))
        .await;
    assert_eq!(res.status().as_u16(), 200);

    // A's own sensor, on another topic than the refused one.
    let a_topic = format!("kultiva/{sa}/tent/rh");
    let ka = topic_sensor(&app, &a, "A rh", "humidity_percent", "mqtt", &a_topic).await;
    probe(&app, &b, &k, &own, &broker_url(), minutes_ago(30)).await;
    probe(&app, &a, &ka, &a_topic, &broker_url(), minutes_ago(30)).await;
    // The refused topic: nobody reads it.
    publish(
        &stolen,
        &json!({"value": 30, "measured_at": ts(minutes_ago(5))}).to_string(),
    )
    .await;
    // A's message reaches A only.
    let last = minutes_ago(2);
    publish(
        &a_topic,
        &json!({"value": 60, "measured_at": ts(last)}).to_string(),
    )
    .await;
    until("A's reading", 15, || async {
        readings(&app, &a, &ka)
            .await
            .iter()
            .any(|(_, m)| *m == last)
    })
    .await;
    assert_eq!(readings(&app, &a, &ka).await.len(), 2);
    assert_eq!(readings(&app, &b, &k).await.len(), 1, "only B's own probe");
    assert_eq!(count(&app, &b, "sensor_readings").await, 1);
}

/// A Mosquitto of the test's own, with persistence, on a free port.
struct PrivateBroker {
    conf: PathBuf,
    port: u16,
    child: Option<tokio::process::Child>,
}

impl PrivateBroker {
    fn new() -> Self {
        let port = free_port();
        let dir = std::env::temp_dir().join(format!("kultiva-mqtt-{}", Uuid::now_v7().simple()));
        std::fs::create_dir_all(&dir).expect("broker dir");
        let user = std::env::var("USER").unwrap_or_else(|_| "root".to_owned());
        let conf = dir.join("mosquitto.conf");
        std::fs::write(
            &conf,
            format!(
                "user {user}\nlistener {port} 127.0.0.1\nallow_anonymous true\n\
                 persistence true\npersistence_location {}/\n",
                dir.display()
            ),
        )
        .expect("broker conf");
        Self {
            conf,
            port,
            child: None,
        }
    }

    fn url(&self) -> String {
        format!("mqtt://127.0.0.1:{}", self.port)
    }

    async fn start(&mut self) {
        let child = Command::new("mosquitto")
            .arg("-c")
            .arg(&self.conf)
            .kill_on_drop(true)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("mosquitto starts");
        self.child = Some(child);
        let port = self.port;
        until("the private broker", 10, || async move {
            tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .is_ok()
        })
        .await;
    }

    /// SIGTERM: Mosquitto saves its sessions and queued messages, then exits.
    async fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let pid = child.id().expect("pid").to_string();
        let st = Command::new("kill").args(["-TERM", &pid]).status().await;
        assert!(st.is_ok_and(|s| s.success()), "kill -TERM {pid}");
        let _ = tokio::time::timeout(Duration::from_secs(10), child.wait()).await;
    }
}

#[tokio::test]
async fn after_a_broker_restart_and_while_kultiva_is_away_no_kept_message_is_lost() {
    let mut broker = PrivateBroker::new();
    broker.start().await;
    let client_id = format!("kt-{}", Uuid::now_v7().simple());
    let app = spawn_as("mqtt_restart", &broker.url(), &client_id, &[]).await;
    let t = app.tenant("mqtt-restart").await;
    let topic = format!("kultiva/{}/tank/ec", t.slug);
    let k = topic_sensor(&app, &t, "Tank EC", "ec_ms_cm", "mqtt", &topic).await;
    probe(&app, &t, &k, &topic, &broker.url(), minutes_ago(30)).await;

    // The broker goes down and comes back; a reading published at once (QoS 1) is kept for
    // Kultiva's session until it has reconnected.
    broker.stop().await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    broker.start().await;
    let after_restart = minutes_ago(20);
    publish_to(
        &broker.url(),
        &topic,
        &json!({"value": 1.4, "measured_at": ts(after_restart)}).to_string(),
        false,
    )
    .await;
    until("the reading published after the restart", 20, || async {
        readings(&app, &t, &k)
            .await
            .iter()
            .any(|(_, m)| *m == after_restart)
    })
    .await;

    // Kultiva away (stopped cleanly): the broker queues for its session; the next process
    // with the same client id receives it.
    drop(app);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let away = minutes_ago(10);
    publish_to(
        &broker.url(),
        &topic,
        &json!({"value": 1.6, "measured_at": ts(away)}).to_string(),
        false,
    )
    .await;
    let app = spawn_as("mqtt_restart", &broker.url(), &client_id, &[]).await;
    until(
        "the reading published while Kultiva was away",
        20,
        || async { readings(&app, &t, &k).await.iter().any(|(_, m)| *m == away) },
    )
    .await;
    let values: Vec<f64> = readings(&app, &t, &k)
        .await
        .iter()
        .map(|(v, _)| *v)
        .collect();
    assert_eq!(values, vec![20.0, 1.4, 1.6]);
    broker.stop().await;
}

#[tokio::test]
async fn each_garden_has_its_own_rate_limit() {
    let app = spawn(
        "mqtt_rate",
        &broker_url(),
        &[("MQTT_MESSAGES_PER_GARDEN_PER_MINUTE", "5")],
    )
    .await;
    let busy = app.tenant("mqtt-busy").await;
    let calm = app.tenant("mqtt-calm").await;
    let probe_garden = app.tenant("mqtt-probe").await;
    let busy_topic = format!("kultiva/{}/air", busy.slug);
    let calm_topic = format!("kultiva/{}/air", calm.slug);
    let probe_topic = format!("kultiva/{}/air", probe_garden.slug);
    let kb = topic_sensor(&app, &busy, "Busy", "temperature_c", "mqtt", &busy_topic).await;
    let kc = topic_sensor(&app, &calm, "Calm", "temperature_c", "mqtt", &calm_topic).await;
    let kp = topic_sensor(
        &app,
        &probe_garden,
        "Probe",
        "temperature_c",
        "mqtt",
        &probe_topic,
    )
    .await;
    // Subscribed in order: once the last garden's probe is stored, the first two are read.
    probe(
        &app,
        &probe_garden,
        &kp,
        &probe_topic,
        &broker_url(),
        minutes_ago(60),
    )
    .await;

    let limited = counted("rate_limited");
    for i in 0..10 {
        let at = ts(minutes_ago(50 - i));
        publish(
            &busy_topic,
            &json!({"value": i, "measured_at": at}).to_string(),
        )
        .await;
    }
    let calm_at = minutes_ago(5);
    publish(
        &calm_topic,
        &json!({"value": 9, "measured_at": ts(calm_at)}).to_string(),
    )
    .await;
    until("the calm garden's reading", 15, || async {
        readings(&app, &calm, &kc)
            .await
            .iter()
            .any(|(_, m)| *m == calm_at)
    })
    .await;
    let busy_values: Vec<f64> = readings(&app, &busy, &kb)
        .await
        .iter()
        .map(|(v, _)| *v)
        .collect();
    assert_eq!(
        busy_values,
        vec![0.0, 1.0, 2.0, 3.0, 4.0],
        "the first five (the burst)"
    );
    assert_eq!(counted("rate_limited") - limited, 5);
    assert_eq!(count(&app, &busy, "sensor_readings").await, 5);
}

// ---------------------------------------------------------------------------------------------
// Home Assistant discovery.

/// The keys Home Assistant's MQTT discovery documents for a sensor config, with the JSON type
/// this publisher must give each (https://www.home-assistant.io/integrations/sensor.mqtt/ and
/// https://www.home-assistant.io/integrations/mqtt/#mqtt-discovery: `state_topic` is the one
/// required key; `unique_id` is what lets a discovered entity be edited and removed; `device`
/// groups the entities, its `identifiers` a list; `availability` a list of {topic, …}).
const CONFIG_KEYS: [(&str, &str); 8] = [
    ("name", "string"),
    ("unique_id", "string"),
    ("object_id", "string"),
    ("default_entity_id", "string"),
    ("state_topic", "string"),
    ("device", "object"),
    ("availability", "array"),
    ("qos", "number"),
];
const DEVICE_KEYS: [(&str, &str); 4] = [
    ("identifiers", "array"),
    ("name", "string"),
    ("manufacturer", "string"),
    ("model", "string"),
];
/// Sensor device classes of Home Assistant's list that fit a day or an instant.
const DATE_CLASSES: [&str; 2] = ["date", "timestamp"];

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn check_config(topic: &str, c: &Value, slug: &str) {
    for (key, kind) in CONFIG_KEYS {
        assert_eq!(json_type(&c[key]), kind, "{topic}: {key} in {c}");
    }
    for (key, kind) in DEVICE_KEYS {
        assert_eq!(json_type(&c["device"][key]), kind, "{topic}: device.{key}");
    }
    let object_id = topic
        .strip_prefix("homeassistant/sensor/")
        .and_then(|r| r.strip_suffix("/config"))
        .expect("discovery topic");
    // The documented character class of discovery ids (and of entity ids: lower case).
    assert!(
        object_id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
        "{object_id}"
    );
    assert_eq!(c["unique_id"], object_id);
    assert_eq!(c["object_id"], object_id);
    assert_eq!(c["default_entity_id"], format!("sensor.{object_id}"));
    assert!(
        c["state_topic"]
            .as_str()
            .is_some_and(|s| s.starts_with(&format!("kultiva/{slug}/"))),
        "{c}"
    );
    let ids = c["device"]["identifiers"].as_array().expect("identifiers");
    assert!(!ids.is_empty() && ids.iter().all(Value::is_string));
    for a in c["availability"].as_array().expect("availability") {
        assert_eq!(json_type(&a["topic"]), "string", "{a}");
    }
    assert_eq!(c["device"]["manufacturer"], "Kultiva");
    if object_id.ends_with("_phase") {
        assert!(c.get("device_class").is_none(), "a phase is text: {c}");
    } else {
        let class = c["device_class"].as_str().expect("device_class");
        assert!(DATE_CLASSES.contains(&class), "{class}");
    }
}

/// Retained discovery configs and states of one garden.
async fn garden_retained(slug: &str) -> (Vec<(String, Value)>, Vec<(String, String)>) {
    let id = slug.replace('-', "_");
    let configs = retained("homeassistant/sensor/+/config")
        .await
        .into_iter()
        .filter(|(t, _)| t.starts_with(&format!("homeassistant/sensor/kultiva_{id}_")))
        .map(|(t, p)| {
            let v = serde_json::from_str(&p).unwrap_or_else(|e| panic!("{t}: {e}: {p}"));
            (t, v)
        })
        .collect();
    let states = retained(&format!("kultiva/{slug}/plants/#")).await;
    (configs, states)
}

fn state_of<'a>(
    states: &'a [(String, String)],
    slug: &str,
    plant: &str,
    what: &str,
) -> Option<&'a str> {
    let topic = format!("kultiva/{slug}/plants/{}/{what}", plant.replace('-', ""));
    states
        .iter()
        .find(|(t, _)| *t == topic)
        .map(|(_, p)| p.as_str())
}

#[tokio::test]
async fn discovery_configs_follow_the_documented_schema_and_states_follow_changes() {
    let app = spawn(
        "mqtt_discovery",
        &broker_url(),
        &[
            ("HOME_ASSISTANT_DISCOVERY", "true"),
            ("HOME_ASSISTANT_PUBLISH_SECONDS", "1"),
        ],
    )
    .await;
    let t = app.tenant("mqtt-ha").await;
    let slug = t.slug.as_str().to_owned();
    let tomato = species(&app, TOMATO).await;
    let ph = phases(&app, &tomato).await;
    let treated = key_of(&plant(&app, &t, json!({"species_key": tomato, "name": "Treated"})).await);
    let other = key_of(&plant(&app, &t, json!({"species_key": tomato, "name": "Other"})).await);
    let soap = crate::ipm::catalogue_key(&app, "treatment", SOAP).await;
    let (s, a) = post(
        &app,
        &crate::support::tenant_path(&t, "ipm/treatments"),
        json!({"treatment_key": soap, "plant_keys": [treated], "applied_at": crate::ipm::days_ago(1)}),
    )
    .await;
    assert_eq!(s, 201, "{a}");

    until("six discovery configs", 20, || async {
        garden_retained(&slug).await.0.len() == 6
    })
    .await;
    let (configs, states) = garden_retained(&slug).await;
    for (topic, c) in &configs {
        check_config(topic, c, &slug);
    }
    // One device per plant, named after it, holding its three sensors.
    for plant_key in [&treated, &other] {
        let simple = plant_key.replace('-', "");
        let mine: Vec<&Value> = configs
            .iter()
            .filter(|(t, _)| t.contains(&simple))
            .map(|(_, c)| c)
            .collect();
        assert_eq!(mine.len(), 3);
        assert!(mine.iter().all(|c| c["device"] == mine[0]["device"]));
        let name = if *plant_key == treated {
            "Treated"
        } else {
            "Other"
        };
        assert_eq!(mine[0]["device"]["name"], name);
    }
    // The states, as the services give them.
    let care = |k: String| {
        let app = &app;
        let t = &t;
        async move {
            let (_, care) = get_json(
                app,
                &format!("/api/v1/t/{}/care-reminders/plants/{k}", t.slug),
            )
            .await;
            care["reminders"]
                .as_array()
                .expect("reminders")
                .iter()
                .find(|r| r["reminder_type"] == "watering")
                .cloned()
                .expect("a watering reminder")
        }
    };
    let water = care(treated.clone()).await;
    let (_, p) = get_json(&app, &format!("{}{treated}", plants_path(&t))).await;
    let phase_name = p["phase"]["name"].as_str().expect("phase").to_owned();
    assert_eq!(
        state_of(&states, &slug, &treated, "next_watering"),
        water["due_on"].as_str()
    );
    assert_eq!(
        state_of(&states, &slug, &treated, "phase"),
        Some(phase_name.as_str())
    );
    let (_, readiness) = get_json(
        &app,
        &format!("/api/v1/t/{}/harvest/readiness/{treated}", t.slug),
    )
    .await;
    let last_day = readiness["safety_intervals"][0]["last_blocked_day"].clone();
    assert!(last_day.is_string(), "{readiness}");
    assert_eq!(
        state_of(&states, &slug, &treated, "safety_interval_end"),
        last_day.as_str()
    );
    assert_eq!(
        state_of(&states, &slug, &other, "safety_interval_end"),
        Some("None")
    );

    // Watering confirmed: the due day moves, and so does the state.
    let wk = water["reminder_key"].as_str().expect("key").to_owned();
    let (s, v) = post(
        &app,
        &format!("/api/v1/t/{}/care-reminders/{wk}/confirm", t.slug),
        json!({"plant_key": treated}),
    )
    .await;
    assert_eq!(s, 200, "{v}");
    let moved = care(treated.clone()).await["due_on"]
        .as_str()
        .expect("due")
        .to_owned();
    assert_ne!(Some(moved.as_str()), water["due_on"].as_str());
    until("the watering state", 15, || async {
        let (_, states) = garden_retained(&slug).await;
        state_of(&states, &slug, &treated, "next_watering") == Some(moved.as_str())
    })
    .await;
    // A phase change.
    let other_path = format!("{}{other}", plants_path(&t));
    let (s, v) = post(
        &app,
        &format!("{other_path}/phase-transitions"),
        json!({"target_phase_key": ph[1]}),
    )
    .await;
    assert_eq!(s, 200, "{v}");
    let new_phase = v["phase"]["name"].as_str().expect("phase").to_owned();
    until("the phase state", 15, || async {
        let (_, states) = garden_retained(&slug).await;
        state_of(&states, &slug, &other, "phase") == Some(new_phase.as_str())
    })
    .await;
    // A plant that is gone: its configs and states are cleared (empty retained messages).
    let (s, v) = post(
        &app,
        &format!("{other_path}/archive"),
        json!({"reason": "eaten"}),
    )
    .await;
    assert_eq!(s, 200, "{v}");
    let simple = other.replace('-', "");
    until("the archived plant's configs cleared", 15, || async {
        let (configs, states) = garden_retained(&slug).await;
        configs.len() == 3
            && !configs.iter().any(|(t, _)| t.contains(&simple))
            && !states.iter().any(|(t, _)| t.contains(&simple))
    })
    .await;
    // The process's availability for the entities.
    let status = retained("kultiva/status").await;
    assert_eq!(status.first().map(|(_, p)| p.as_str()), Some("online"));
    // Leave the shared broker clean.
    let (s, _) = post(
        &app,
        &format!("{}{treated}/archive", plants_path(&t)),
        json!({"reason": "eaten"}),
    )
    .await;
    assert_eq!(s, 200);
    until("the garden's configs cleared", 15, || async {
        garden_retained(&slug).await.0.is_empty()
    })
    .await;
}
