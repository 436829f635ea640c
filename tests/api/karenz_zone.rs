//! Safety days in the garden's calendar (issue 39 item 1): the gate, the application record,
//! readiness and the calendar count local days in the garden's time zone, over REST and the
//! MCP tool; around local midnight, in both hemispheres, and anew after the zone changes. A
//! refused harvest writes nothing.

use reqwest::Method;
use serde_json::{Value, json};
use time::Duration;

use crate::garden::count;
use crate::ipm::{DELTAFIX, SOAP, catalogue_key, path, tool, world};
use crate::support::{TestApp, assert_error};

/// Sets the garden's time zone (admin); `None` clears it (UTC).
async fn set_zone(app: &TestApp, w: &crate::ipm::World, zone: Option<&str>) {
    let (s, b) = app
        .rest_as(&w.admin)
        .call(
            Method::PUT,
            &path(&w.t, "calendar/settings"),
            Some(&json!({"hardiness_zone": null, "timezone": zone})),
        )
        .await;
    assert_eq!(s, 200, "{b}");
}

/// Today's date in `zone`, `back` days ago.
fn local_date(zone: &str, back: i64) -> time::Date {
    let d = jiff::Timestamp::now().in_tz(zone).expect("zone").date();
    let d = d.checked_sub(jiff::Span::new().days(back)).expect("date");
    time::Date::parse(
        &d.to_string(),
        time::macros::format_description!("[year]-[month]-[day]"),
    )
    .expect("date")
}

/// The instant of `hh:mm` local time on `day` in `zone`, as UTC (`…Z`): the offset sent does
/// not matter, only the instant.
fn at_local(zone: &str, day: time::Date, hour: i8, minute: i8) -> String {
    let d = jiff::civil::Date::new(
        i16::try_from(day.year()).expect("year"),
        i8::try_from(u8::from(day.month())).expect("month"),
        i8::try_from(day.day()).expect("day"),
    )
    .expect("date");
    d.at(hour, minute, 0, 0)
        .in_tz(zone)
        .expect("zone")
        .timestamp()
        .to_string()
}

async fn spray(
    app: &TestApp,
    w: &crate::ipm::World,
    treatment: &str,
    plant: uuid::Uuid,
    at: &str,
) -> Value {
    let (s, a) = app
        .rest_as(&w.grower)
        .call(
            Method::POST,
            &path(&w.t, "ipm/treatments"),
            Some(&json!({"treatment_key": treatment, "plant_keys": [plant], "applied_at": at})),
        )
        .await;
    assert_eq!(s, 201, "{a}");
    a
}

/// A REST harvest of `plant` dated `date` (a date or a date-time): the status and body.
async fn harvest(
    app: &TestApp,
    w: &crate::ipm::World,
    plant: uuid::Uuid,
    date: &str,
) -> (u16, Value) {
    app.rest_as(&w.grower)
        .call(
            Method::POST,
            &path(&w.t, "harvest/batches"),
            Some(&json!({"plant_key": plant, "wet_weight_g": 10, "harvest_date": date})),
        )
        .await
}

/// Los Angeles, the case: sprayed 18:00 local (02:00 UTC the next day). The spray day
/// itself is inside the interval; the first allowed day is the local day + N. REST and MCP.
#[tokio::test]
async fn a_los_angeles_garden_counts_the_local_spray_day() {
    let app = TestApp::full_env(&[("MCP_SERVER_ENABLED", "true")]).await;
    let w = world(&app, "kzla", 1).await;
    let p = w.plants[0];
    let la = "America/Los_Angeles";
    set_zone(&app, &w, Some(la)).await;
    let deltafix = catalogue_key(&app, "treatment", DELTAFIX).await; // 2 days
    let d = local_date(la, 10);
    let a = spray(&app, &w, &deltafix, p, &at_local(la, d, 18, 0)).await;
    let day = |n: i64| (d + Duration::days(n)).to_string();
    assert_eq!(a["plants"][0]["applied_on"], day(0), "{a}");
    assert_eq!(a["plants"][0]["last_blocked_day"], day(1), "{a}");
    assert_eq!(a["plants"][0]["safe_on"], day(2), "{a}");

    // Dated the spray day and the day after: refused (counted in UTC the spray day passed as
    // "before the application"); nothing written.
    for date in [day(0), day(1), format!("{}T23:30:00-08:00", day(1))] {
        let res = app
            .rest_auth(Some(&w.grower.bearer()))
            .post(
                &path(&w.t, "harvest/batches"),
                &json!({"plant_key": p, "wet_weight_g": 10, "harvest_date": date}),
            )
            .await;
        let err = assert_error(res, 422, "KARENZ_VIOLATION").await;
        let reason = err["details"][0]["reason"].as_str().unwrap_or_default();
        assert!(
            reason.contains(&format!("allowed from {}", day(2))),
            "{date}: {reason}"
        );
    }
    // The same through the tool, dry run or not.
    let key = app.api_key(&w.grower, Some(w.t.slug.as_str())).await;
    for dry_run in [false, true] {
        let (s, e) = tool(
            &app,
            &key,
            "record_harvest",
            json!({"plant_key": p, "wet_weight_g": 10, "harvest_date": day(0), "dry_run": dry_run}),
        )
        .await;
        assert_eq!(
            (s, e["details"][0]["code"].as_str()),
            (422, Some("KARENZ_VIOLATION")),
            "{e}"
        );
    }
    assert_eq!(count(&app, &w.t, "harvest_batches").await, 0);
    // The day before the spray and the first allowed day (refused when counted in UTC): recorded.
    let (s, b) = harvest(&app, &w, p, &day(-1)).await;
    assert_eq!(s, 201, "{b}");
    let (s, b) = tool(
        &app,
        &key,
        "record_harvest",
        json!({"plant_key": p, "wet_weight_g": 10, "harvest_date": day(2)}),
    )
    .await;
    assert_eq!(s, 200, "{b}");
    // A date-time counts as its local day: 00:30 local on the first allowed day (08:30 UTC).
    let (s, b) = harvest(&app, &w, p, &at_local(la, d + Duration::days(2), 0, 30)).await;
    assert_eq!((s, &b["harvest_date"]), (201, &json!(day(2))), "{b}");
    assert_eq!(count(&app, &w.t, "harvest_batches").await, 3);
}

/// Sydney: a 3-day label sprayed 08:00 local (the evening before in UTC) still blocks the
/// third local day; counted in UTC it passed one day early. And a minute either side of local
/// midnight in Los Angeles starts the interval on two different days.
#[tokio::test]
async fn sydney_and_local_midnight() {
    let app = TestApp::full().await;
    let w = world(&app, "kzsyd", 1).await;
    let p = w.plants[0];
    let syd = "Australia/Sydney";
    set_zone(&app, &w, Some(syd)).await;
    let soap = catalogue_key(&app, "treatment", SOAP).await; // 3 days
    let d = local_date(syd, 10);
    let day = |n: i64| (d + Duration::days(n)).to_string();
    let a = spray(&app, &w, &soap, p, &at_local(syd, d, 8, 0)).await;
    assert_eq!(a["plants"][0]["applied_on"], day(0), "{a}");
    assert_eq!(a["plants"][0]["safe_on"], day(3), "{a}");
    for n in [0, 2] {
        let (s, e) = harvest(&app, &w, p, &day(n)).await;
        assert_eq!(
            (s, e["error_code"].as_str()),
            (422, Some("KARENZ_VIOLATION")),
            "{n}: {e}"
        );
    }
    assert_eq!(count(&app, &w.t, "harvest_batches").await, 0);
    for n in [-1, 3] {
        let (s, b) = harvest(&app, &w, p, &day(n)).await;
        assert_eq!(s, 201, "{n}: {b}");
    }

    let w = world(&app, "kzmid", 2).await;
    let la = "America/Los_Angeles";
    set_zone(&app, &w, Some(la)).await;
    let deltafix = catalogue_key(&app, "treatment", DELTAFIX).await; // 2 days
    let d = local_date(la, 10);
    let day = |n: i64| (d + Duration::days(n)).to_string();
    let (before, after) = (w.plants[0], w.plants[1]);
    let a = spray(&app, &w, &deltafix, before, &at_local(la, d, 23, 59)).await;
    assert_eq!(a["plants"][0]["applied_on"], day(0), "{a}");
    let a = spray(
        &app,
        &w,
        &deltafix,
        after,
        &at_local(la, d + Duration::days(1), 0, 1),
    )
    .await;
    assert_eq!(a["plants"][0]["applied_on"], day(1), "{a}");
    let (s, b) = harvest(&app, &w, before, &day(2)).await;
    assert_eq!(s, 201, "{b}");
    let (s, e) = harvest(&app, &w, after, &day(2)).await;
    assert_eq!(
        (s, e["error_code"].as_str()),
        (422, Some("KARENZ_VIOLATION")),
        "{e}"
    );
    let (s, b) = harvest(&app, &w, after, &day(3)).await;
    assert_eq!(s, 201, "{b}");
    assert_eq!(count(&app, &w.t, "harvest_batches").await, 2);
}

/// A running interval read in Los Angeles, then in UTC: the application, readiness, the
/// calendar, the plant-protection record and the gate all move together.
#[tokio::test]
async fn changing_the_zone_recounts_running_intervals() {
    let app = TestApp::full().await;
    let w = world(&app, "kzswitch", 2).await;
    let (p, other) = (w.plants[0], w.plants[1]);
    let la = "America/Los_Angeles";
    set_zone(&app, &w, Some(la)).await;
    let soap = catalogue_key(&app, "treatment", SOAP).await; // 3 days
    // 02:00 UTC yesterday (UTC day T-1) is the evening of T-2 in Los Angeles.
    let t = time::OffsetDateTime::now_utc().date();
    let at = format!("{}T02:00:00Z", t - Duration::days(1));
    let a = spray(&app, &w, &soap, p, &at).await;
    let key = a["key"].as_str().expect("key").to_owned();
    let day = |n: i64| (t + Duration::days(n)).to_string();
    // (zone, first blocked day, last blocked day, first allowed day)
    for (zone, first, last, allowed) in [
        (Some(la), day(-2), day(0), day(1)),
        (None, day(-1), day(1), day(2)),
        (Some(la), day(-2), day(0), day(1)),
    ] {
        set_zone(&app, &w, zone).await;
        let viewer = app.rest_as(&w.viewer);
        let (s, a) = viewer
            .call(
                Method::GET,
                &format!("{}/{key}", path(&w.t, "ipm/treatments")),
                None,
            )
            .await;
        assert_eq!(s, 200, "{a}");
        assert_eq!(
            (
                &a["plants"][0]["applied_on"],
                &a["plants"][0]["last_blocked_day"],
                &a["plants"][0]["safe_on"]
            ),
            (&json!(first), &json!(last), &json!(allowed)),
            "{zone:?}: {a}"
        );
        let (s, r) = viewer
            .call(
                Method::GET,
                &format!("{}/{p}", path(&w.t, "harvest/readiness")),
                None,
            )
            .await;
        assert_eq!(s, 200, "{r}");
        assert_eq!(r["harvest_allowed_from"], json!(allowed), "{zone:?}: {r}");
        assert_eq!(
            r["safety_intervals"][0]["last_blocked_day"],
            json!(last),
            "{zone:?}: {r}"
        );
        let (s, c) = viewer
            .call(
                Method::GET,
                &format!(
                    "{}?from={}&to={}",
                    path(&w.t, "calendar/events"),
                    day(-5),
                    day(5)
                ),
                None,
            )
            .await;
        assert_eq!(s, 200, "{c}");
        let ev = c["items"]
            .as_array()
            .and_then(|l| l.iter().find(|e| e["kind"] == "treatment").cloned())
            .unwrap_or_else(|| panic!("{c}"));
        assert_eq!(
            (&ev["date"], &ev["end_date"]),
            (&json!(first), &json!(last)),
            "{zone:?}: {ev}"
        );
        let (s, rec) = viewer
            .call(
                Method::GET,
                &format!(
                    "{}?from={}&to={}",
                    path(&w.t, "ipm/applications/export"),
                    day(-5),
                    day(0)
                ),
                None,
            )
            .await;
        assert_eq!(s, 200, "{rec}");
        assert_eq!(rec["rows"][0]["date"], json!(first), "{zone:?}: {rec}");
    }
    // In Los Angeles the local day T-2 is inside the interval; in UTC it is before it.
    let (s, e) = harvest(&app, &w, p, &day(-2)).await;
    assert_eq!(
        (s, e["error_code"].as_str()),
        (422, Some("KARENZ_VIOLATION")),
        "{e}"
    );
    assert_eq!(count(&app, &w.t, "harvest_batches").await, 0);
    set_zone(&app, &w, None).await;
    let (s, b) = harvest(&app, &w, p, &day(-2)).await;
    assert_eq!(s, 201, "{b}");
    let (s, e) = harvest(&app, &w, p, &day(0)).await;
    assert_eq!(
        (s, e["error_code"].as_str()),
        (422, Some("KARENZ_VIOLATION")),
        "{e}"
    );
    // The unsprayed plant is never blocked.
    let (s, b) = harvest(&app, &w, other, &day(0)).await;
    assert_eq!(s, 201, "{b}");
    assert_eq!(count(&app, &w.t, "harvest_batches").await, 2);
}

/// "Today" is the garden's today: a harvest dated the local today is accepted where that is
/// already tomorrow in UTC, and a date after the local today is refused, writing nothing.
#[tokio::test]
async fn today_is_the_gardens_today() {
    let app = TestApp::full().await;
    let w = world(&app, "kztoday", 1).await;
    let p = w.plants[0];
    let now = time::OffsetDateTime::now_utc();
    let (zone, local) = if now.hour() < 12 {
        ("Etc/GMT+12", (now - Duration::hours(12)).date())
    } else {
        ("Pacific/Kiritimati", (now + Duration::hours(14)).date())
    };
    set_zone(&app, &w, Some(zone)).await;
    let next = (local + Duration::days(1)).to_string();
    let res = app
        .rest_auth(Some(&w.grower.bearer()))
        .post(
            &path(&w.t, "harvest/batches"),
            &json!({"plant_key": p, "wet_weight_g": 10, "harvest_date": next}),
        )
        .await;
    let err = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(err["details"][0]["field"], "body.harvest_date", "{err}");
    if local < now.date() {
        // Behind UTC: the UTC day is tomorrow there.
        let (s, e) = harvest(&app, &w, p, &now.date().to_string()).await;
        assert_eq!(s, 422, "{e}");
    }
    assert_eq!(count(&app, &w.t, "harvest_batches").await, 0);
    let (s, b) = app
        .rest_as(&w.grower)
        .call(
            Method::POST,
            &path(&w.t, "harvest/batches"),
            Some(&json!({"plant_key": p, "wet_weight_g": 10})),
        )
        .await;
    assert_eq!(
        (s, &b["harvest_date"]),
        (201, &json!(local.to_string())),
        "{zone}: {b}"
    );
    let (s, b) = harvest(&app, &w, p, &local.to_string()).await;
    assert_eq!(s, 201, "{zone}: {b}");
    assert_eq!(count(&app, &w.t, "harvest_batches").await, 2);
}
