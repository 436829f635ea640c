//! The garden calendar: events in a bounded window, the sowing calendar per zone, garden
//! settings, and per-member iCal feeds (create, rotate, revoke, removed member) parsed by the
//! Python `icalendar` package.

use kultiva::auth::Role;
use reqwest::Method;
use serde_json::{Value, json};

use crate::garden::species;
use crate::support::{TestApp, assert_error, detail_fields};

const TOMATO: &str = "Fixtura tomatoides";

fn today() -> time::Date {
    time::OffsetDateTime::now_utc().date()
}

async fn feed_status(app: &TestApp, token: &str) -> u16 {
    app.get(&format!("/api/v1/calendar/feeds/{token}.ics"))
        .await
        .status()
        .as_u16()
}

pub fn venv_python() -> String {
    let venv = std::env::var("KULTIVA_TEST_VENV").unwrap_or_else(|_| {
        panic!("KULTIVA_TEST_VENV is not set: the feed test parses with icalendar")
    });
    format!("{venv}/bin/python")
}

#[tokio::test]
async fn events_window_is_checked() {
    let app = TestApp::spawn().await;
    let t = app.tenant("calwin").await;
    let base = format!("/api/v1/t/{}/calendar/events", t.slug);
    for (q, field) in [
        ("", "query.from"),
        ("?from=2026-01-01", "query.to"),
        ("?from=2026-02-30&to=2026-03-01", "query.from"),
        ("?from=2026-03-02&to=2026-03-01", "query.to"),
        ("?from=2026-01-01&to=2027-01-02", "query.to"),
    ] {
        let body = assert_error(
            app.get(&format!("{base}{q}")).await,
            422,
            "VALIDATION_ERROR",
        )
        .await;
        assert!(
            detail_fields(&body).contains(&field.to_owned()),
            "{q}: {body}"
        );
    }
    // 366 days (2028 is a leap year) is the longest window.
    let res = app
        .get(&format!("{base}?from=2028-01-01&to=2028-12-31"))
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let page: Value = res.json().await.expect("json");
    assert_eq!(page["count"], 0);
    assert_eq!(page["items"], json!([]));
}

#[tokio::test]
async fn events_hold_phases_and_sowing_windows_per_zone() {
    let app = TestApp::spawn().await;
    let t = app.tenant("calev").await;
    let tomato = species(&app, TOMATO).await;
    let p = crate::garden::plant(&app, &t, json!({"species_key": tomato, "name": "Tom"})).await;
    let today = today();
    let y = today.year() + 1;
    let base = format!("/api/v1/t/{}/calendar/events", t.slug);

    // No zone: the defaults. The fixture tomato sows indoors in March: Mar 1–31.
    let (s, page) =
        crate::garden::get_json(&app, &format!("{base}?from={y}-01-01&to={y}-12-31")).await;
    assert_eq!(s, 200, "{page}");
    let sowing: Vec<&Value> = page["items"]
        .as_array()
        .expect("value")
        .iter()
        .filter(|e| e["kind"] == "sowing")
        .collect();
    assert_eq!(sowing.len(), 1, "{page}");
    assert_eq!(sowing[0]["date"], format!("{y}-03-01"));
    assert_eq!(sowing[0]["end_date"], format!("{y}-03-31"));
    assert_eq!(sowing[0]["title"], "Sow Fixture tomato indoors");

    // Zone 7a (fixture last frost 04-20: 11 days earlier): Feb 18 – Mar 20.
    let res = app
        .rest()
        .put(
            &format!("/api/v1/t/{}/calendar/settings", t.slug),
            &json!({"hardiness_zone": "7a"}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let (_, page) =
        crate::garden::get_json(&app, &format!("{base}?from={y}-01-01&to={y}-12-31")).await;
    let sowing: Vec<&Value> = page["items"]
        .as_array()
        .expect("value")
        .iter()
        .filter(|e| e["kind"] == "sowing")
        .collect();
    assert_eq!(sowing[0]["date"], format!("{y}-02-18"));
    assert_eq!(sowing[0]["end_date"], format!("{y}-03-20"));

    // Today's window: the plant entered its first phase today, and the next one is expected.
    let (_, page) = crate::garden::get_json(&app, &format!("{base}?from={today}&to={today}")).await;
    let phase: Vec<&Value> = page["items"]
        .as_array()
        .expect("value")
        .iter()
        .filter(|e| e["kind"] == "phase")
        .collect();
    assert_eq!(phase.len(), 1, "{page}");
    assert_eq!(phase[0]["plant_key"], p["key"]);
    assert!(
        phase[0]["uid"]
            .as_str()
            .expect("value")
            .starts_with("phase:")
    );
    let dur = p["phase"]["expected_duration_days"]
        .as_i64()
        .expect("duration");
    let due = today + time::Duration::days(dur);
    let (_, page) = crate::garden::get_json(&app, &format!("{base}?from={due}&to={due}")).await;
    assert!(
        page["items"]
            .as_array()
            .expect("value")
            .iter()
            .any(|e| e["uid"]
                .as_str()
                .expect("value")
                .starts_with("phase_expected:")),
        "{page}"
    );

    // Another garden sees none of it.
    let other = app.tenant("calev-b").await;
    let (_, page) = crate::garden::get_json(
        &app,
        &format!(
            "/api/v1/t/{}/calendar/events?from={y}-01-01&to={y}-12-31",
            other.slug
        ),
    )
    .await;
    assert_eq!(page["count"], 0);
}

#[tokio::test]
async fn sowing_calendar_per_zone_and_bad_input() {
    let app = TestApp::spawn().await;
    let t = app.tenant("calsow").await;
    let tomato = species(&app, TOMATO).await;
    crate::garden::plant(&app, &t, json!({"species_key": tomato})).await;
    let base = format!("/api/v1/t/{}/calendar/sowing", t.slug);
    let bars = |v: &Value| -> Vec<(String, String, String)> {
        v["items"][0]["bars"]
            .as_array()
            .expect("value")
            .iter()
            .map(|b| {
                (
                    b["phase"].as_str().expect("value").to_owned(),
                    b["start_date"].as_str().expect("value").to_owned(),
                    b["end_date"].as_str().expect("value").to_owned(),
                )
            })
            .collect()
    };
    let s = |a: &str, b: &str, c: &str| (a.to_owned(), b.to_owned(), c.to_owned());
    // No zone: defaults. Indoor Mar, growth Apr 1 – Jun 30, harvest Jul–Sep.
    let (st, cal) = crate::garden::get_json(&app, &format!("{base}?year=2026")).await;
    assert_eq!(st, 200, "{cal}");
    assert_eq!(cal["zone"], Value::Null);
    assert_eq!(cal["frost"]["source"], "default");
    assert_eq!(cal["frost"]["last"], "2026-05-01");
    assert_eq!(cal["items"][0]["species_key"], tomato);
    assert_eq!(cal["items"][0]["plant_count"], 1);
    assert_eq!(
        bars(&cal),
        vec![
            s("indoor_sowing", "2026-03-01", "2026-03-31"),
            s("growth", "2026-04-01", "2026-06-30"),
            s("harvest", "2026-07-01", "2026-09-30"),
        ]
    );
    // Zone 7a of the fixture (last frost 04-20, first 10-20): everything 11 days earlier.
    let (_, cal) = crate::garden::get_json(&app, &format!("{base}?year=2026&zone=7a")).await;
    assert_eq!(cal["zone"], "7a");
    assert_eq!(cal["frost"]["source"], "zone");
    assert_eq!(cal["frost"]["first"], "2026-10-20");
    assert_eq!(
        bars(&cal),
        vec![
            s("indoor_sowing", "2026-02-18", "2026-03-20"),
            s("growth", "2026-03-21", "2026-06-19"),
            s("harvest", "2026-06-20", "2026-09-19"),
        ]
    );
    // A zone without curated dates uses the defaults.
    let (_, cal) = crate::garden::get_json(&app, &format!("{base}?year=2026&zone=11b")).await;
    assert_eq!(cal["frost"]["source"], "default");
    // Bad input.
    for (q, field) in [
        ("?zone=14a", "query.zone"),
        ("?year=1999", "query.year"),
        ("?year=x", "query.year"),
    ] {
        let body = assert_error(
            app.get(&format!("{base}{q}")).await,
            422,
            "VALIDATION_ERROR",
        )
        .await;
        assert_eq!(detail_fields(&body), vec![field.to_owned()], "{q}");
    }
    assert_error(
        app.get(&format!("{base}?species={}", uuid::Uuid::new_v4()))
            .await,
        404,
        "ENTITY_NOT_FOUND",
    )
    .await;
}

#[tokio::test]
async fn settings_need_an_admin_and_refusals_write_nothing() {
    let app = TestApp::full().await;
    let t = app.tenant("calset").await;
    let admin = app.member(&t, Role::Admin).await;
    let grower = app.member(&t, Role::Grower).await;
    let viewer = app.member(&t, Role::Viewer).await;
    let path = format!("/api/v1/t/{}/calendar/settings", t.slug);
    let (s, _) = app
        .rest_as(&grower)
        .call(Method::PUT, &path, Some(&json!({"hardiness_zone": "6b"})))
        .await;
    assert_eq!(s, 403);
    let (s, body) = app
        .rest_as(&admin)
        .call(Method::PUT, &path, Some(&json!({"hardiness_zone": "0a"})))
        .await;
    assert_eq!(s, 422);
    assert_eq!(detail_fields(&body), vec!["body.hardiness_zone".to_owned()]);
    let (s, body) = app.rest_as(&viewer).call(Method::GET, &path, None).await;
    assert_eq!(
        (s, body),
        (
            200,
            json!({"hardiness_zone": null, "timezone": null, "hemisphere": null,
                   "last_spring_frost": null, "first_autumn_frost": null})
        )
    );
    let (s, _) = app
        .rest_as(&admin)
        .call(Method::PUT, &path, Some(&json!({"hardiness_zone": "6b"})))
        .await;
    assert_eq!(s, 200);
    let (_, body) = app.rest_as(&viewer).call(Method::GET, &path, None).await;
    assert_eq!(
        body,
        json!({"hardiness_zone": "6b", "timezone": null, "hemisphere": null,
               "last_spring_frost": null, "first_autumn_frost": null})
    );
    // Another garden's admin cannot reach it.
    let stranger = app.member(&app.tenant("calset-b").await, Role::Admin).await;
    let (s, _) = app.rest_as(&stranger).call(Method::GET, &path, None).await;
    assert_eq!(s, 404);
}

#[tokio::test]
async fn feed_create_rotate_revoke_and_removed_member() {
    let app = TestApp::full().await;
    let t = app.tenant("calfeed").await;
    let grower = app.member(&t, Role::Grower).await;
    let viewer = app.member(&t, Role::Viewer).await;
    let path = format!("/api/v1/t/{}/calendar/feed", t.slug);

    let (s, st) = app.rest_as(&grower).call(Method::GET, &path, None).await;
    assert_eq!((s, st["active"].clone()), (200, json!(false)));
    // Viewers read the calendar but cannot create a feed (writes need a grower).
    let (s, _) = app.rest_as(&viewer).call(Method::POST, &path, None).await;
    assert_eq!(s, 403);
    let (s, _) = app.rest_as(&grower).call(Method::DELETE, &path, None).await;
    assert_eq!(s, 204, "revoking no feed is the same end state");

    let (s, created) = app.rest_as(&grower).call(Method::POST, &path, None).await;
    assert_eq!(s, 201, "{created}");
    let token = created["token"].as_str().expect("value").to_owned();
    assert_eq!(token.len(), 43);
    assert_eq!(
        created["path"],
        format!("/api/v1/calendar/feeds/{token}.ics")
    );
    // Stored hashed: the token itself is nowhere in the table.
    let raw: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM platform.calendar_feeds WHERE position($1::bytea in token_hash) > 0",
    )
    .bind(token.as_bytes())
    .fetch_one(app.state.platform_pool())
    .await
    .expect("value");
    assert_eq!(raw, 0);
    let (s, _) = app.rest_as(&grower).call(Method::POST, &path, None).await;
    assert_eq!(s, 409, "one feed per member");
    let (_, st) = app.rest_as(&grower).call(Method::GET, &path, None).await;
    assert_eq!(st["active"], true);
    assert!(st.get("token").is_none());

    let res = app
        .get(&format!("/api/v1/calendar/feeds/{token}.ics"))
        .await;
    assert_eq!(res.status().as_u16(), 200);
    assert!(
        crate::support::header(&res, "content-type")
            .expect("value")
            .starts_with("text/calendar")
    );
    let text = res.text().await.expect("value");
    assert!(text.starts_with("BEGIN:VCALENDAR\r\n"));
    assert_eq!(feed_status(&app, &token[..42]).await, 404);
    assert_eq!(feed_status(&app, "not-a-token").await, 404);

    // Rotate: the old token is gone at once.
    let (s, rotated) = app
        .rest_as(&grower)
        .call(Method::POST, &format!("{path}/rotate"), None)
        .await;
    assert_eq!(s, 200);
    let new = rotated["token"].as_str().expect("value").to_owned();
    assert_ne!(new, token);
    assert_eq!(feed_status(&app, &token).await, 404);
    assert_eq!(feed_status(&app, &new).await, 200);

    // Removed from the garden: the feed stops.
    sqlx::query("DELETE FROM platform.memberships WHERE tenant_id = $1 AND user_id = $2::uuid")
        .bind(t.id)
        .bind(&grower.key)
        .execute(app.state.platform_pool())
        .await
        .expect("value");
    assert_eq!(feed_status(&app, &new).await, 404);

    // Revoke (another member's own feed).
    let member = app.member(&t, Role::Grower).await;
    let (_, c) = app.rest_as(&member).call(Method::POST, &path, None).await;
    let tok = c["token"].as_str().expect("value").to_owned();
    assert_eq!(feed_status(&app, &tok).await, 200);
    let (s, _) = app.rest_as(&member).call(Method::DELETE, &path, None).await;
    assert_eq!(s, 204);
    assert_eq!(feed_status(&app, &tok).await, 404);
    // Rotating without a feed creates one.
    let (s, r) = app
        .rest_as(&member)
        .call(Method::POST, &format!("{path}/rotate"), None)
        .await;
    assert_eq!(s, 200);
    assert_eq!(
        feed_status(&app, r["token"].as_str().expect("value")).await,
        200
    );
}

#[tokio::test]
async fn feed_round_trips_through_icalendar() {
    let app = TestApp::full().await;
    let t = app.tenant("calical").await;
    let admin = app.member(&t, Role::Admin).await;
    let tomato = species(&app, TOMATO).await;
    // Commas, semicolons and a long name exercise escaping and folding.
    let name = "Tom, the first; a tomato with a rather long name that needs folding ääääää";
    let (s, _) = app
        .rest_as(&admin)
        .call(
            Method::POST,
            &format!("/api/v1/t/{}/plant-instances/", t.slug),
            Some(&json!({"species_key": tomato, "name": name})),
        )
        .await;
    assert_eq!(s, 201);
    let (s, _) = app
        .rest_as(&admin)
        .call(
            Method::PUT,
            &format!("/api/v1/t/{}/calendar/settings", t.slug),
            Some(&json!({"hardiness_zone": "7a"})),
        )
        .await;
    assert_eq!(s, 200);
    let (_, c) = app
        .rest_as(&admin)
        .call(
            Method::POST,
            &format!("/api/v1/t/{}/calendar/feed", t.slug),
            None,
        )
        .await;
    let feed = app
        .get(c["path"].as_str().expect("value"))
        .await
        .text()
        .await
        .expect("value");
    let from = today() - time::Duration::days(30);
    let to = from + time::Duration::days(365);
    let (s, events) = app
        .rest_as(&admin)
        .call(
            Method::GET,
            &format!("/api/v1/t/{}/calendar/events?from={from}&to={to}", t.slug),
            None,
        )
        .await;
    assert_eq!(s, 200);
    assert!(events["count"].as_u64().expect("value") >= 3, "{events}");
    let dir = std::env::temp_dir().join(format!("kultiva-ical-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).expect("value");
    std::fs::write(dir.join("feed.ics"), &feed).expect("value");
    std::fs::write(dir.join("events.json"), events.to_string()).expect("value");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/ical_roundtrip.py");
    let out = std::process::Command::new(venv_python())
        .arg(script)
        .arg(dir.join("feed.ics"))
        .arg(dir.join("events.json"))
        .output()
        .expect("python runs");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "icalendar refused the feed:\n{}\n{}\n{feed}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("ok {}", events["count"])
    );
}
