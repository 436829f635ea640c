//! The sensors page (`/app/g/{slug}/sensors`), a location's page (`…/locations/{key}`) and the
//! environment of a plant's page, over real HTTP against PostgreSQL and Redis, as a browser
//! without JavaScript uses them: the list with each sensor's latest reading and where its
//! readings go in (ingest URL or topic); an admin registering one through the form (the row is
//! what REST then returns); every refusal said in words next to its field with nothing
//! written (a topic on an HTTP sensor, an interval of 0, no place, a duplicate name, another
//! garden's location: the 404 page); a grower's and a viewer's read-only page and their forged
//! posts (403, nothing written); a delete only once confirmed; and the 7-day chart (inline SVG,
//! named, with its summary) on a plant's and a location's page with readings, the "no sensor"
//! line without.

use kultiva::auth::Role;
use kultiva::garden::sensors::model::{
    NewSensor, Place, Reading, Readings, SensorMetric, SensorSource,
};
use kultiva::garden::sensors::service as sensors;
use kultiva::tenancy::TenantRecord;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::garden::{bed, count, species};
use crate::support::{PASSWORD, TestApp};
use crate::web::Browser;

const TOMATO: &str = "Fixtura tomatoides";

async fn sensor(
    app: &TestApp,
    t: &TenantRecord,
    name: &str,
    metric: SensorMetric,
    place: Place,
    topic: Option<&str>,
) -> Uuid {
    let new = NewSensor {
        name: name.to_owned(),
        metric,
        place,
        source: if topic.is_some() {
            SensorSource::Mqtt
        } else {
            SensorSource::Http
        },
        topic: topic.map(str::to_owned),
        expected_interval_minutes: None,
    };
    sensors::create_sensor(&app.state, t, &new)
        .await
        .expect("sensor")
        .key
}

/// A whole minute `minutes_ago` before now.
fn minutes_ago(minutes_ago: i64) -> OffsetDateTime {
    let now = OffsetDateTime::now_utc();
    let t = now - time::Duration::minutes(minutes_ago);
    t.replace_second(0)
        .and_then(|t| t.replace_nanosecond(0))
        .expect("minute")
}

async fn readings(app: &TestApp, t: &TenantRecord, key: Uuid, values: &[(i64, f64)]) {
    let batch = Readings(
        values
            .iter()
            .map(|(ago, value)| Reading {
                value: *value,
                measured_at: minutes_ago(*ago),
            })
            .collect(),
    );
    sensors::record_readings(&app.state, t, &key.to_string(), &batch, true)
        .await
        .expect("readings");
}

async fn plant(app: &TestApp, t: &TenantRecord, name: &str, location: Option<Uuid>) -> Uuid {
    let new = kultiva::garden::plants::model::NewPlant {
        species_key: species(app, TOMATO).await,
        name: Some(name.to_owned()),
        cultivar_key: None,
        location_key: location,
        slot_key: None,
        substrate_batch_key: None,
        planted_on: None,
        phase_key: None,
        notes: None,
        start_phase: Default::default(),
    };
    kultiva::garden::plants::service::create_plant(&app.state, t, &new, "test", true)
        .await
        .expect("plant")
        .key
}

#[tokio::test]
async fn the_sensors_page_lists_an_admin_registers_and_every_refusal_writes_nothing() {
    let app = TestApp::full().await;
    let t = app.tenant("wsens").await;
    let admin = app.member(&t, Role::Admin).await;
    let grower = app.member(&t, Role::Grower).await;
    let viewer = app.member(&t, Role::Viewer).await;
    let other = app.tenant("wsensb").await;
    let (_, their_loc, _) = bed(&app, &other, "Their bed", 0).await;
    let theirs = sensor(
        &app,
        &other,
        "Their probe",
        SensorMetric::Ph,
        Place::Location(their_loc),
        None,
    )
    .await;
    let slug = t.slug.as_str().to_owned();
    let base = format!("/app/g/{slug}/sensors");
    let (site, loc, _) = bed(&app, &t, "Tent", 0).await;

    let mut b = Browser::new(&app, "en");
    b.sign_in(&admin.email, PASSWORD).await;
    let empty = b.get(&base).await;
    assert_eq!(empty.status, 200, "{}", empty.body);
    assert!(empty.has("<h1>Sensors · "), "{}", empty.body);
    assert!(empty.has("The garden has no sensor yet."));
    assert!(
        empty.has(&format!(r#"href="{base}""#)),
        "in the garden menu"
    );
    assert!(empty.has(r#"id="sensor-name""#), "the admin's form");
    assert!(!empty.has("Their probe"), "nothing of garden B");
    let csrf = empty.csrf();

    // An MQTT sensor at the site with readings: listed with its latest reading and topic.
    let air = sensor(
        &app,
        &t,
        "Balcony air",
        SensorMetric::TemperatureC,
        Place::Site(site),
        Some(&format!("kultiva/{}/balcony/temp", t.slug.as_str())),
    )
    .await;
    readings(&app, &t, air, &[(30, 19.0), (10, 21.5)]).await;
    let listed = b.get(&base).await;
    assert!(listed.has("Balcony air"), "{}", listed.body);
    assert!(listed.has("Air temperature"));
    assert!(listed.has("<strong>21.5 °C</strong>"), "{}", listed.body);
    assert!(
        listed.has(&format!(
            r#"readonly value="kultiva/{}/balcony/temp""#,
            t.slug.as_str()
        )),
        "{}",
        listed.body
    );
    assert!(listed.has(r#"data-copy="sensor-"#), "the copy button");

    // A topic on an HTTP sensor, an interval of 0 and no place: each said next to its field,
    // what was typed stays, nothing written.
    let refused = b
        .post(
            &base,
            &[
                ("_csrf", &csrf),
                ("name", "Tent pH"),
                ("metric", "ph"),
                ("place", ""),
                ("source", "http"),
                ("topic", "tent/ph"),
                ("expected_interval_minutes", "0"),
            ],
        )
        .await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    assert!(
        refused.has("The sensor was not registered"),
        "{}",
        refused.body
    );
    assert!(
        refused.has(r#"<p class="field-error" id="sensor-topic-error">MQTT topic: an HTTP sensor has no topic"#),
        "{}",
        refused.body
    );
    assert!(refused.has(r#"id="sensor-place-error">Place: choose one location, site or tank"#));
    assert!(refused.has(
        r#"id="sensor-expected_interval_minutes-error">Reports every (minutes, optional): not a valid value."#
    ));
    assert!(refused.has(r#"aria-invalid="true""#));
    assert!(refused.has(r#"value="Tent pH""#), "typed values stay");
    assert_eq!(count(&app, &t, "sensors").await, 1);

    // Another garden's location: the 404 page, nothing written.
    let foreign = b
        .post(
            &base,
            &[
                ("_csrf", &csrf),
                ("name", "Tent pH"),
                ("metric", "ph"),
                ("place", &format!("location:{their_loc}")),
                ("source", "http"),
            ],
        )
        .await;
    assert_eq!(foreign.status, 404, "{}", foreign.body);
    assert_eq!(count(&app, &t, "sensors").await, 1);
    assert_eq!(count(&app, &other, "sensors").await, 1);

    // Registered: back on the list with the news; the row is what REST returns.
    let created = b
        .post(
            &base,
            &[
                ("_csrf", &csrf),
                ("name", "Tent pH"),
                ("metric", "ph"),
                ("place", &format!("location:{loc}")),
                ("source", "http"),
                ("topic", ""),
                ("expected_interval_minutes", "5"),
            ],
        )
        .await;
    assert_eq!(created.status, 303, "{}", created.body);
    let to = created.location().expect("location").to_owned();
    assert!(
        to.starts_with(&format!("{base}?done=created#sensor-")),
        "{to}"
    );
    let key = to.rsplit("#sensor-").next().expect("key").to_owned();
    assert_eq!(count(&app, &t, "sensors").await, 2);
    let api = app
        .rest_as(&viewer)
        .get_ok(&format!("/api/v1/t/{slug}/sensors/{key}"))
        .await;
    assert_eq!(api["name"], "Tent pH");
    assert_eq!(api["metric"], "ph");
    assert_eq!(api["location_key"], loc.to_string());
    assert_eq!(api["source"], "http");
    assert_eq!(api["expected_interval_minutes"], 5);
    let shown = b.get(&to).await;
    assert!(shown.has("Sensor registered."), "{}", shown.body);
    let public = app
        .state
        .config()
        .public_url
        .trim_end_matches('/')
        .to_owned();
    let url = format!("{public}/api/v1/t/{slug}/sensors/{key}/readings");
    assert!(
        shown.has(&format!(r#"readonly value="{url}""#)),
        "{url} in {}",
        shown.body
    );
    assert!(shown.has("No reading yet."));

    // The same name again: refused next to the name, nothing written.
    let twice = b
        .post(
            &base,
            &[
                ("_csrf", &csrf),
                ("name", "tent ph"),
                ("metric", "ph"),
                ("place", &format!("location:{loc}")),
                ("source", "http"),
            ],
        )
        .await;
    assert_eq!(twice.status, 409, "{}", twice.body);
    assert!(twice.has(r#"id="sensor-name-error">Name: a sensor of this name exists"#));
    assert_eq!(count(&app, &t, "sensors").await, 2);

    // A grower reads without forms; a forged register or delete is 403, nothing written.
    let mut g = Browser::new(&app, "de");
    g.sign_in(&grower.email, PASSWORD).await;
    let gpage = g.get(&base).await;
    assert_eq!(gpage.status, 200, "{}", gpage.body);
    assert!(gpage.has("Die Sensoren des Gartens"), "{}", gpage.body);
    assert!(gpage.has("Nur die Admins des Gartens"));
    assert!(!gpage.has(r#"id="sensor-name""#), "no form for a grower");
    assert!(!gpage.has("/delete\""), "no delete for a grower");
    let gcsrf = gpage.csrf();
    let forged = g
        .post(
            &base,
            &[
                ("_csrf", &gcsrf),
                ("name", "Grower probe"),
                ("metric", "ph"),
                ("place", &format!("location:{loc}")),
                ("source", "http"),
            ],
        )
        .await;
    assert_eq!(forged.status, 403, "{}", forged.body);
    let gdelete = g
        .post(
            &format!("{base}/{key}/delete"),
            &[("_csrf", &gcsrf), ("confirm", "yes")],
        )
        .await;
    assert_eq!(gdelete.status, 403, "{}", gdelete.body);
    let mut v = Browser::new(&app, "en");
    v.sign_in(&viewer.email, PASSWORD).await;
    let vcsrf = v.csrf(&base).await;
    let vpost = v
        .post(
            &base,
            &[
                ("_csrf", &vcsrf),
                ("name", "Viewer probe"),
                ("metric", "ph"),
                ("place", &format!("site:{site}")),
                ("source", "http"),
            ],
        )
        .await;
    assert_eq!(vpost.status, 403, "{}", vpost.body);
    assert_eq!(count(&app, &t, "sensors").await, 2);
    // Without the session's CSRF value: refused, nothing written.
    let no_csrf = b
        .post(
            &base,
            &[
                ("name", "No csrf"),
                ("metric", "ph"),
                ("place", &format!("site:{site}")),
                ("source", "http"),
            ],
        )
        .await;
    assert_eq!(no_csrf.status, 403, "{}", no_csrf.body);
    assert_eq!(count(&app, &t, "sensors").await, 2);

    // Delete: not without the tick; another garden's sensor is a 404; then gone.
    let unticked = b
        .post(&format!("{base}/{key}/delete"), &[("_csrf", &csrf)])
        .await;
    assert_eq!(unticked.status, 422, "{}", unticked.body);
    assert!(unticked.has("Tick the box to confirm"), "{}", unticked.body);
    assert_eq!(count(&app, &t, "sensors").await, 2);
    let foreign_delete = b
        .post(
            &format!("{base}/{theirs}/delete"),
            &[("_csrf", &csrf), ("confirm", "yes")],
        )
        .await;
    assert_eq!(foreign_delete.status, 404, "{}", foreign_delete.body);
    assert_eq!(count(&app, &other, "sensors").await, 1);
    let deleted = b
        .post(
            &format!("{base}/{key}/delete"),
            &[("_csrf", &csrf), ("confirm", "yes")],
        )
        .await;
    assert_eq!(deleted.status, 303, "{}", deleted.body);
    assert_eq!(
        deleted.location(),
        Some(format!("{base}?done=deleted").as_str())
    );
    assert_eq!(count(&app, &t, "sensors").await, 1);
    let after = b.get(&format!("{base}?done=deleted")).await;
    assert!(after.has("Sensor deleted with its readings."));
    assert!(!after.has("Tent pH"));
}

#[tokio::test]
async fn a_plants_and_a_locations_page_chart_their_readings_or_say_no_sensor_measures() {
    let app = TestApp::full().await;
    let t = app.tenant("wchart").await;
    let admin = app.member(&t, Role::Admin).await;
    let grower = app.member(&t, Role::Grower).await;
    let other = app.tenant("wchartb").await;
    let (_, their_loc, _) = bed(&app, &other, "Their bed", 0).await;
    let slug = t.slug.as_str().to_owned();
    let (_, loc, _) = bed(&app, &t, "Tent", 0).await;
    let (_, bare, _) = bed(&app, &t, "Shelf", 0).await;
    let tomato = plant(&app, &t, "Tent tomato", Some(loc)).await;
    let plain = plant(&app, &t, "Shelf basil", Some(bare)).await;

    let mut b = Browser::new(&app, "en");
    b.sign_in(&admin.email, PASSWORD).await;
    // No sensor: the line, and for the admin the way to the sensors page.
    let before = b.get(&format!("/app/g/{slug}/plants/{tomato}")).await;
    assert_eq!(before.status, 200, "{}", before.body);
    assert!(
        before.has("No sensor measures here yet."),
        "{}",
        before.body
    );
    assert!(before.has(&format!(
        r#"<a href="/app/g/{slug}/sensors">Register a sensor</a>"#
    )));
    assert!(!before.has("<svg"));
    let mut g = Browser::new(&app, "en");
    g.sign_in(&grower.email, PASSWORD).await;
    let gbefore = g.get(&format!("/app/g/{slug}/plants/{tomato}")).await;
    assert!(gbefore.has("No sensor measures here yet."));
    assert!(
        !gbefore.has("Register a sensor"),
        "no register link for a grower"
    );

    // Readings over the last hours: the latest reading and a chart with its summary.
    let air = sensor(
        &app,
        &t,
        "Tent air",
        SensorMetric::TemperatureC,
        Place::Location(loc),
        None,
    )
    .await;
    readings(
        &app,
        &t,
        air,
        &[(200, 20.0), (190, 22.0), (130, 21.0), (70, 23.0), (5, 21.5)],
    )
    .await;
    // A sensor without readings this week.
    let ph = sensor(
        &app,
        &t,
        "Tent pH",
        SensorMetric::Ph,
        Place::Location(loc),
        None,
    )
    .await;
    let page = b.get(&format!("/app/g/{slug}/plants/{tomato}")).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(!page.has("No sensor measures here yet."));
    assert!(page.has("<strong>21.5 °C</strong>"), "{}", page.body);
    assert!(page.has(r#"<svg class="chart""#), "{}", page.body);
    assert!(page.has(r#"role="img""#));
    assert!(page.has(&format!(
        r#"<title id="chart-{air}-title">Air temperature (Tent air), last 7 days</title>"#
    )));
    assert!(page.has(r#"<path class="line""#), "an hourly line");
    assert!(page.has("7 days: lowest 20, average"), "{}", page.body);
    assert!(page.has("highest 23 °C (5 readings)."));
    assert!(
        page.has("<table class=\"daily\">"),
        "the table beside the chart"
    );
    assert!(!page.has("style="), "no inline styles (CSP)");
    // The sensor without readings: said, no chart for it.
    assert!(!page.has(&format!("chart-{ph}-title")));
    assert!(page.has("No readings in the last 7 days."));
    // The other plant's location has none.
    let basil = b.get(&format!("/app/g/{slug}/plants/{plain}")).await;
    assert!(basil.has("No sensor measures here yet."), "{}", basil.body);

    // The location's page: the same chart; in German; another garden's location is a 404.
    let location = b.get(&format!("/app/g/{slug}/locations/{loc}")).await;
    assert_eq!(location.status, 200, "{}", location.body);
    assert!(location.has("<h1>Tent</h1>"), "{}", location.body);
    assert!(location.has(&format!(r#"<title id="chart-{air}-title">"#)));
    let mut de = Browser::new(&app, "de");
    de.sign_in(&grower.email, PASSWORD).await;
    let deloc = de.get(&format!("/app/g/{slug}/locations/{loc}")).await;
    assert_eq!(deloc.status, 200, "{}", deloc.body);
    assert!(
        deloc.has("Umgebung") && deloc.has("Lufttemperatur"),
        "{}",
        deloc.body
    );
    assert!(deloc.has("21,5 °C"));
    let bare_page = b.get(&format!("/app/g/{slug}/locations/{bare}")).await;
    assert!(bare_page.has("No sensor measures here yet."));
    let foreign = b.get(&format!("/app/g/{slug}/locations/{their_loc}")).await;
    assert_eq!(foreign.status, 404, "{}", foreign.body);
    assert!(!foreign.has("Their bed"));
    let nonsense = b.get(&format!("/app/g/{slug}/locations/not-a-key")).await;
    assert_eq!(nonsense.status, 404, "{}", nonsense.body);
    // The places page links each location to its page.
    let places = b.get(&format!("/app/g/{slug}/places")).await;
    assert!(places.has(&format!(r#"href="/app/g/{slug}/locations/{loc}""#)));
}
