//! The sowing calendar on the garden's own frost dates and hemisphere (issue 39): own dates
//! move every bar and are not estimated; a hardiness zone is only a labelled estimate; the
//! southern hemisphere moves the catalogue's months by six months; a month-day that does not
//! exist (or a frost-free season the wrong way round) is a 422 and changes nothing. REST and
//! the MCP tool `get_sowing_calendar`.

use kultiva::auth::Role;
use reqwest::Method;
use serde_json::{Value, json};

use crate::garden::species;
use crate::support::{TestApp, assert_error, detail_fields};

const TOMATO: &str = "Fixtura tomatoides";

type Span = (String, String, String);

fn bars(cal: &Value) -> Vec<Span> {
    cal["items"][0]["bars"]
        .as_array()
        .expect("bars")
        .iter()
        .map(|b| {
            (
                b["phase"].as_str().expect("phase").to_owned(),
                b["start_date"].as_str().expect("start").to_owned(),
                b["end_date"].as_str().expect("end").to_owned(),
            )
        })
        .collect()
}

fn s(a: &str, b: &str, c: &str) -> Span {
    (a.to_owned(), b.to_owned(), c.to_owned())
}

async fn put_settings(app: &TestApp, slug: &str, body: Value) -> (u16, Value) {
    app.rest()
        .call(
            Method::PUT,
            &format!("/api/v1/t/{slug}/calendar/settings"),
            Some(&body),
        )
        .await
}

#[tokio::test]
async fn own_frost_dates_move_the_calendar_and_a_zone_is_only_an_estimate() {
    let app = TestApp::spawn().await;
    let t = app.tenant("sowown").await;
    let tomato = species(&app, TOMATO).await;
    crate::garden::plant(&app, &t, json!({"species_key": tomato})).await;
    let cal_path = format!("/api/v1/t/{}/calendar/sowing?year=2026", t.slug);

    let (st, stored) = put_settings(
        &app,
        t.slug.as_str(),
        json!({"hardiness_zone": "7a", "last_spring_frost": "04-10", "first_autumn_frost": "10-25"}),
    )
    .await;
    assert_eq!(st, 200, "{stored}");
    assert_eq!(
        stored,
        json!({"hardiness_zone": "7a", "timezone": null, "hemisphere": null,
               "last_spring_frost": "04-10", "first_autumn_frost": "10-25"})
    );
    let (_, got) =
        crate::garden::get_json(&app, &format!("/api/v1/t/{}/calendar/settings", t.slug)).await;
    assert_eq!(got, stored);

    // The garden's own last frost (Apr 10) wins over its zone (7a, Apr 20): every bar moves
    // 21 days earlier than the reference May 1. Indoor Mar 1–31 → Feb 8–Mar 10; harvest
    // Jul 1–Sep 30 → Jun 10–Sep 9; growth between.
    let (st, cal) = crate::garden::get_json(&app, &cal_path).await;
    assert_eq!(st, 200, "{cal}");
    let frost = &cal["frost"];
    assert_eq!(frost["source"], "garden");
    assert_eq!(frost["estimated"], false);
    assert_eq!(frost["hemisphere"], "north");
    assert_eq!(frost["last"], "2026-04-10");
    assert_eq!(frost["eisheilige"], "2026-04-24");
    assert_eq!(frost["first"], "2026-10-25");
    assert!(
        frost["basis"]
            .as_str()
            .is_some_and(|b| b.contains("own average frost dates")),
        "{frost}"
    );
    assert_eq!(
        bars(&cal),
        vec![
            s("indoor_sowing", "2026-02-08", "2026-03-10"),
            s("growth", "2026-03-11", "2026-06-09"),
            s("harvest", "2026-06-10", "2026-09-09"),
        ]
    );

    // A zone named in the request is an estimate, and says so.
    let (_, cal) = crate::garden::get_json(&app, &format!("{cal_path}&zone=7a")).await;
    assert_eq!(cal["frost"]["source"], "zone");
    assert_eq!(cal["frost"]["estimated"], true);
    assert_eq!(cal["frost"]["last"], "2026-04-20");
    let basis = cal["frost"]["basis"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        basis.starts_with("estimated")
            && basis.contains("hardiness zone 7a")
            && basis.contains("not a frost date"),
        "{basis}"
    );
    assert_eq!(
        bars(&cal)[0],
        s("indoor_sowing", "2026-02-18", "2026-03-20")
    );

    // A PUT states the whole setting: without the frost dates they are cleared, and the
    // garden's zone is the (labelled) estimate again.
    let (st, stored) = put_settings(&app, t.slug.as_str(), json!({"hardiness_zone": "7a"})).await;
    assert_eq!(st, 200);
    assert_eq!(stored["last_spring_frost"], Value::Null);
    let (_, cal) = crate::garden::get_json(&app, &cal_path).await;
    assert_eq!(
        (&cal["frost"]["source"], &cal["frost"]["estimated"]),
        (&json!("zone"), &json!(true))
    );
    // No zone, no own dates: the reference, labelled as an estimate.
    put_settings(&app, t.slug.as_str(), json!({"hardiness_zone": null})).await;
    let (_, cal) = crate::garden::get_json(&app, &cal_path).await;
    assert_eq!(cal["frost"]["source"], "default");
    assert_eq!(cal["frost"]["estimated"], true);
    assert_eq!(cal["frost"]["last"], "2026-05-01");
    assert!(
        cal["frost"]["basis"]
            .as_str()
            .unwrap_or_default()
            .contains("May 1")
    );
}

#[tokio::test]
async fn the_southern_hemisphere_moves_the_months_by_six() {
    let app = TestApp::spawn().await;
    let t = app.tenant("sowsouth").await;
    let tomato = species(&app, TOMATO).await;
    crate::garden::plant(&app, &t, json!({"species_key": tomato})).await;
    let cal_path = format!("/api/v1/t/{}/calendar/sowing?year=2026", t.slug);

    // No hemisphere set: the garden's time zone tells (Sydney is south); a setting wins.
    let (st, _) = put_settings(
        &app,
        t.slug.as_str(),
        json!({"hardiness_zone": null, "timezone": "Australia/Sydney"}),
    )
    .await;
    assert_eq!(st, 200);
    let (_, cal) = crate::garden::get_json(&app, &cal_path).await;
    assert_eq!(
        (&cal["frost"]["hemisphere"], &cal["frost"]["last"]),
        (&json!("south"), &json!("2026-11-01"))
    );
    put_settings(
        &app,
        t.slug.as_str(),
        json!({"hardiness_zone": null, "timezone": "Australia/Sydney", "hemisphere": "north"}),
    )
    .await;
    let (_, cal) = crate::garden::get_json(&app, &cal_path).await;
    assert_eq!(cal["frost"]["hemisphere"], "north");

    // South without own dates: the zone's (northern) estimate is not used; the reference is
    // November 1. Indoor March → September (Sep 1–30); harvest Jul–Sep → Jan–Mar, the crop of
    // last spring's sowing, kept before the sowing (it crosses the new year).
    let (st, _) = put_settings(
        &app,
        t.slug.as_str(),
        json!({"hardiness_zone": "7a", "hemisphere": "south"}),
    )
    .await;
    assert_eq!(st, 200);
    let (st, cal) = crate::garden::get_json(&app, &cal_path).await;
    assert_eq!(st, 200, "{cal}");
    assert_eq!(cal["frost"]["hemisphere"], "south");
    assert_eq!(cal["frost"]["source"], "default");
    assert_eq!(cal["frost"]["estimated"], true);
    assert_eq!(cal["frost"]["last"], "2026-11-01");
    assert_eq!(cal["frost"]["eisheilige"], "2026-11-15");
    assert!(
        cal["frost"]["basis"]
            .as_str()
            .unwrap_or_default()
            .contains("southern hemisphere")
    );
    assert_eq!(
        bars(&cal),
        vec![
            s("harvest", "2026-01-01", "2026-03-31"),
            s("indoor_sowing", "2026-09-01", "2026-09-30"),
        ]
    );

    // Own dates in the south: last spring frost Oct 1 (31 days before the reference), first
    // autumn frost Apr 20 (before it in the calendar year, as autumn is). Indoor Sep 1–30 →
    // Aug 1–30; harvest Jan 1–Mar 31 → Dec 1 (last year)–Feb 28, clipped to Jan 1–Feb 28.
    let (st, stored) = put_settings(
        &app,
        t.slug.as_str(),
        json!({"hardiness_zone": null, "hemisphere": "south",
               "last_spring_frost": "10-01", "first_autumn_frost": "04-20"}),
    )
    .await;
    assert_eq!(st, 200, "{stored}");
    let (_, cal) = crate::garden::get_json(&app, &cal_path).await;
    assert_eq!(cal["frost"]["source"], "garden");
    assert_eq!(cal["frost"]["estimated"], false);
    assert_eq!(cal["frost"]["last"], "2026-10-01");
    assert_eq!(cal["frost"]["first"], "2026-04-20");
    assert_eq!(
        bars(&cal),
        vec![
            s("harvest", "2026-01-01", "2026-02-28"),
            s("indoor_sowing", "2026-08-01", "2026-08-30"),
        ]
    );
    // The calendar events (and so the iCal feed) use the same dates and say where they come from.
    let (st, page) = crate::garden::get_json(
        &app,
        &format!(
            "/api/v1/t/{}/calendar/events?from=2026-01-01&to=2026-12-31",
            t.slug
        ),
    )
    .await;
    assert_eq!(st, 200, "{page}");
    let sowing: Vec<&Value> = page["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter(|e| e["kind"] == "sowing")
        .collect();
    assert_eq!(sowing.len(), 1, "{page}");
    assert_eq!(
        (&sowing[0]["date"], &sowing[0]["end_date"]),
        (&json!("2026-08-01"), &json!("2026-08-30"))
    );
    assert!(
        sowing[0]["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("own average frost dates"),
        "{}",
        sowing[0]
    );
}

#[tokio::test]
async fn impossible_frost_dates_are_refused_and_nothing_is_saved() {
    let app = TestApp::full().await;
    let t = app.tenant("sowbad").await;
    let admin = app.member(&t, Role::Admin).await;
    let grower = app.member(&t, Role::Grower).await;
    let path = format!("/api/v1/t/{}/calendar/settings", t.slug);
    let good = json!({"hardiness_zone": "6b", "hemisphere": "north",
                      "last_spring_frost": "04-15", "first_autumn_frost": "10-15"});
    let (st, stored) = app
        .rest_as(&admin)
        .call(Method::PUT, &path, Some(&good))
        .await;
    assert_eq!(st, 200, "{stored}");
    let (st, _) = app
        .rest_as(&grower)
        .call(
            Method::PUT,
            &path,
            Some(&json!({"hardiness_zone": null, "last_spring_frost": "05-01"})),
        )
        .await;
    assert_eq!(st, 403, "the frost dates are the admin's setup");

    let cases: &[(Value, &str)] = &[
        (
            json!({"hardiness_zone": "6b", "last_spring_frost": "02-30"}),
            "body.last_spring_frost",
        ),
        (
            json!({"hardiness_zone": "6b", "last_spring_frost": "04-31"}),
            "body.last_spring_frost",
        ),
        (
            json!({"hardiness_zone": "6b", "last_spring_frost": "13-01"}),
            "body.last_spring_frost",
        ),
        (
            json!({"hardiness_zone": "6b", "last_spring_frost": "02-29"}),
            "body.last_spring_frost",
        ),
        (
            json!({"hardiness_zone": "6b", "last_spring_frost": "2026-04-15"}),
            "body.last_spring_frost",
        ),
        (
            json!({"hardiness_zone": "6b", "first_autumn_frost": 1015}),
            "body.first_autumn_frost",
        ),
        (
            json!({"hardiness_zone": "6b", "first_autumn_frost": "10-00"}),
            "body.first_autumn_frost",
        ),
        (
            json!({"hardiness_zone": "6b", "hemisphere": "east"}),
            "body.hemisphere",
        ),
        // North: the first autumn frost comes after the last spring frost.
        (
            json!({"hardiness_zone": "6b", "last_spring_frost": "10-01", "first_autumn_frost": "04-01"}),
            "body.first_autumn_frost",
        ),
        (
            json!({"hardiness_zone": "6b", "last_spring_frost": "05-01", "first_autumn_frost": "05-01"}),
            "body.first_autumn_frost",
        ),
        // South: autumn (March–May) comes before spring in the calendar year.
        (
            json!({"hardiness_zone": "6b", "hemisphere": "south",
                   "last_spring_frost": "04-01", "first_autumn_frost": "10-01"}),
            "body.first_autumn_frost",
        ),
    ];
    for (body, field) in cases {
        let res = app.rest_auth(Some(&admin.bearer())).put(&path, body).await;
        let err = assert_error(res, 422, "VALIDATION_ERROR").await;
        assert_eq!(
            detail_fields(&err),
            vec![(*field).to_owned()],
            "{body}: {err}"
        );
        // Nothing was saved: the earlier setting stands whole.
        let (_, now) = app.rest_as(&admin).call(Method::GET, &path, None).await;
        assert_eq!(now, stored, "after {body}");
    }
    // A bad zone in the sowing calendar's query is refused too.
    let cal = format!("/api/v1/t/{}/calendar/sowing", t.slug);
    let res = app
        .rest_as(&admin)
        .call(Method::GET, &format!("{cal}?year=2026&zone=7c"), None)
        .await;
    assert_eq!(res.0, 422);
    // And the calendar still runs on the stored dates.
    let (st, c) = app
        .rest_as(&admin)
        .call(Method::GET, &format!("{cal}?year=2026"), None)
        .await;
    assert_eq!(st, 200, "{c}");
    assert_eq!(c["frost"]["last"], "2026-04-15");
    assert_eq!(c["frost"]["source"], "garden");
    // Unknown fields are refused too.
    let res = app
        .rest_auth(Some(&admin.bearer()))
        .put(
            &path,
            &json!({"hardiness_zone": "6b", "frost_date": "04-01"}),
        )
        .await;
    assert_error(res, 422, "VALIDATION_ERROR").await;
}

#[tokio::test]
async fn the_mcp_tool_uses_the_gardens_frost_dates() {
    let app = crate::mcp_tools::app().await;
    let t = app.tenant("sowmcp").await;
    let admin = app.member(&t, Role::Admin).await;
    let tomato = species(&app, TOMATO).await;
    let (st, _) = app
        .rest_as(&admin)
        .call(
            Method::PUT,
            &format!("/api/v1/t/{}/calendar/settings", t.slug),
            Some(&json!({"hardiness_zone": null, "hemisphere": "south",
                         "last_spring_frost": "10-01", "first_autumn_frost": "04-20"})),
        )
        .await;
    assert_eq!(st, 200);
    let key = app.api_key(&admin, Some(t.slug.as_str())).await;
    let r = crate::places::rpc_call(
        &app,
        &key,
        "get_sowing_calendar",
        json!({"species_key": tomato, "year": 2026}),
    )
    .await;
    assert_eq!(r["isError"], false, "{r}");
    let data = &r["structuredContent"]["data"];
    assert_eq!(data["frost"]["source"], "garden", "{data}");
    assert_eq!(data["frost"]["hemisphere"], "south");
    assert_eq!(data["frost"]["estimated"], false);
    assert_eq!(data["frost"]["last"], "2026-10-01");
    assert_eq!(
        bars(data),
        vec![
            s("harvest", "2026-01-01", "2026-02-28"),
            s("indoor_sowing", "2026-08-01", "2026-08-30"),
        ]
    );
}
