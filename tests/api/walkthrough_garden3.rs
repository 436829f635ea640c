//! The "Done when" of Garden III, tried as a new user would through REST: the owner of a fresh
//! garden applies a starter kit, sees today's care, confirms a watering, records an aphid
//! inspection, applies a treatment, is refused a harvest while its safety interval runs, then
//! harvests and sees the yield, and subscribes a calendar app to the garden's feed (parsed by
//! the Python `icalendar` package).

use kultiva::auth::Role;
use reqwest::Method;
use serde_json::json;
use time::{Duration, OffsetDateTime};

use crate::calendar::venv_python;
use crate::garden::count;
use crate::ipm::{SOAP, catalogue_key, days_ago, path};
use crate::onboarding::kit_key;
use crate::support::{TestApp, assert_error, detail_fields};

#[tokio::test]
async fn a_new_garden_from_starter_kit_to_harvest_and_calendar_feed() {
    let app = TestApp::full().await;
    let t = app.tenant("g3walk").await;
    let owner = app.member(&t, Role::Admin).await;
    let kit = kit_key(&app).await;
    let today = OffsetDateTime::now_utc().date();

    // 1. The starter kit: a site, a location and the kit's plants, in one go.
    let (s, applied) = app
        .rest_as(&owner)
        .call(
            Method::POST,
            &path(&t, "onboarding/starter-kit"),
            Some(&json!({"kit_key": kit, "site_name": "Balcony", "hardiness_zone": "7a"})),
        )
        .await;
    assert_eq!(s, 201, "{applied}");
    let plant = applied["plants"][0]["plant_key"]
        .as_str()
        .expect("plant key")
        .to_owned();
    let (_, status) = app
        .rest_as(&owner)
        .call(Method::GET, &path(&t, "onboarding"), None)
        .await;
    assert_eq!(status["completed"], true, "{status}");

    // 2. Today's care: the new plant's watering is due today.
    let (s, due) = app
        .rest_as(&owner)
        .call(Method::GET, &path(&t, "care-reminders"), None)
        .await;
    assert_eq!(s, 200, "{due}");
    let watering = due["due_today"]
        .as_array()
        .expect("due today")
        .iter()
        .find(|r| r["reminder_type"] == "watering" && r["plant_key"] == plant.as_str())
        .unwrap_or_else(|| panic!("no watering due today for {plant}: {due}"))
        .clone();

    // 3. Confirm the watering: it leaves today's list and shows in the plant's care log.
    let wk = watering["reminder_key"].as_str().expect("reminder key");
    let (s, confirmed) = app
        .rest_as(&owner)
        .call(
            Method::POST,
            &path(&t, &format!("care-reminders/{wk}/confirm")),
            Some(&json!({"plant_key": plant, "notes": "half a litre"})),
        )
        .await;
    assert_eq!(s, 200, "{confirmed}");
    let (_, due) = app
        .rest_as(&owner)
        .call(Method::GET, &path(&t, "care-reminders"), None)
        .await;
    assert!(
        !due["due_today"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|r| r["reminder_key"] == wk),
        "confirmed watering still due: {due}"
    );
    let (_, log) = app
        .rest_as(&owner)
        .call(
            Method::GET,
            &path(
                &t,
                &format!("care-reminders/plants/{plant}/log?reminder_type=watering"),
            ),
            None,
        )
        .await;
    assert_eq!(log.as_array().map(Vec::len), Some(1), "{log}");
    assert_eq!(log[0]["notes"], "half a litre");

    // 4. An aphid inspection of the plant.
    let aphid = catalogue_key(&app, "pest", "Fixturia vorax").await;
    let (s, inspection) = app
        .rest_as(&owner)
        .call(
            Method::POST,
            &path(&t, "ipm/inspections"),
            Some(&json!({"plant_key": plant, "pressure_level": "medium",
                     "findings": [{"pest_key": aphid, "severity": "medium", "confidence": 0.8}]})),
        )
        .await;
    assert_eq!(s, 201, "{inspection}");
    let (_, listed) = app
        .rest_as(&owner)
        .call(
            Method::GET,
            &path(&t, &format!("ipm/inspections?plant={plant}")),
            None,
        )
        .await;
    assert!(
        listed["items"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|i| i["key"] == inspection["key"]),
        "{listed}"
    );

    // 5. A treatment (3-day safety interval), applied three days ago: blocked through yesterday.
    let soap = catalogue_key(&app, "treatment", SOAP).await;
    let (s, applied) = app
        .rest_as(&owner)
        .call(
            Method::POST,
            &path(&t, "ipm/treatments"),
            Some(&json!({"treatment_key": soap, "plant_keys": [plant], "applied_at": days_ago(3)})),
        )
        .await;
    assert_eq!(s, 201, "{applied}");

    // 6. A harvest on the interval's last day is refused, for the owner too, and writes nothing.
    let yesterday = (today - Duration::days(1)).to_string();
    let res = app
        .rest_as(&owner)
        .post(
            &path(&t, "harvest/batches"),
            &json!({"plant_key": plant, "wet_weight_g": 250, "harvest_date": yesterday}),
        )
        .await;
    let err = assert_error(res, 422, "KARENZ_VIOLATION").await;
    assert_eq!(detail_fields(&err), vec!["active_ingredient".to_owned()]);
    assert_eq!(count(&app, &t, "harvest_batches").await, 0);

    // 7. Today the interval is over: the harvest is recorded and the yield shows it.
    let (s, batch) = app
        .rest_as(&owner)
        .call(
            Method::POST,
            &path(&t, "harvest/batches"),
            Some(&json!({"plant_key": plant, "wet_weight_g": 250})),
        )
        .await;
    assert_eq!(s, 201, "{batch}");
    let (s, y) = app
        .rest_as(&owner)
        .call(
            Method::GET,
            &path(&t, &format!("harvest/yield/plants/{plant}")),
            None,
        )
        .await;
    assert_eq!(s, 200, "{y}");
    assert_eq!(y["batches"].as_i64(), Some(1), "{y}");
    assert_eq!(y["total_wet_weight_g"].as_f64(), Some(250.0), "{y}");

    // 8. The calendar feed: a secret link a calendar app subscribes to, without other
    //    credentials; a real parser reads it, and it holds the same events as the JSON calendar
    //    (the harvest and the safety interval among them).
    let (s, feed) = app
        .rest_as(&owner)
        .call(Method::POST, &path(&t, "calendar/feed"), None)
        .await;
    assert_eq!(s, 201, "{feed}");
    let res = app.get(feed["path"].as_str().expect("feed path")).await;
    assert_eq!(res.status().as_u16(), 200);
    let content_type = res
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    assert!(content_type.starts_with("text/calendar"), "{content_type}");
    let ics = res.text().await.expect("feed body");
    let from = today - Duration::days(30);
    let to = from + Duration::days(365);
    let (s, events) = app
        .rest_as(&owner)
        .call(
            Method::GET,
            &path(&t, &format!("calendar/events?from={from}&to={to}")),
            None,
        )
        .await;
    assert_eq!(s, 200, "{events}");
    let kinds: Vec<&str> = events["items"]
        .as_array()
        .or_else(|| events["events"].as_array())
        .expect("events")
        .iter()
        .filter_map(|e| e["kind"].as_str())
        .collect();
    for kind in ["harvest", "treatment", "care_reminder"] {
        assert!(kinds.contains(&kind), "no {kind} event: {events}");
    }
    let dir = std::env::temp_dir().join(format!("kultiva-g3-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::write(dir.join("feed.ics"), &ics).expect("write feed");
    std::fs::write(dir.join("events.json"), events.to_string()).expect("write events");
    let out = std::process::Command::new(venv_python())
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/ical_roundtrip.py"
        ))
        .arg(dir.join("feed.ics"))
        .arg(dir.join("events.json"))
        .output()
        .expect("python runs");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "icalendar refused the feed:\n{}\n{}\n{ics}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("ok {}", events["count"])
    );
}
