//! Harvest: the safety-interval gate (Karenz) from REST and from `record_harvest`, for growers
//! and admins, on the last blocked day and the day after, with today's date and with dates in
//! the request; batches with weights and quality, yields per plant and run, readiness,
//! observations, bad input that writes nothing, roles, two-tenant isolation, and the calendar
//! events the calendar merges.

use reqwest::Method;
use serde_json::{Value, json};
use time::{Duration, OffsetDateTime};

use crate::garden::count;
use crate::ipm::{SOAP, catalogue_key, days_ago, path, tool, world};
use crate::support::{TestApp, assert_error, detail_fields};

fn today() -> time::Date {
    OffsetDateTime::now_utc().date()
}

fn day(offset: i64) -> String {
    (today() + Duration::days(offset)).to_string()
}

#[tokio::test]
async fn the_karenz_gate_blocks_the_last_day_and_allows_the_next() {
    let app = TestApp::full_env(&[("MCP_SERVER_ENABLED", "true")]).await;
    let w = world(&app, "karenz", 4).await;
    let soap = catalogue_key(&app, "treatment", SOAP).await; // 3 days
    let treat = path(&w.t, "ipm/treatments");
    let batches = path(&w.t, "harvest/batches");
    let (last_day, day_after, dated, twice) = (w.plants[0], w.plants[1], w.plants[2], w.plants[3]);

    // Applied 2 days ago: blocked today-2, today-1, today (the last day); allowed tomorrow.
    // Applied 3 days ago: blocked through yesterday; today is the day after: allowed.
    for (plant, back) in [
        (last_day, 2),
        (day_after, 3),
        (dated, 10),
        (twice, 1),
        (twice, 2),
    ] {
        let (s, a) = app.rest_as(&w.grower).call(Method::POST, &treat, Some(&json!({"treatment_key": soap, "plant_keys": [plant], "applied_at": days_ago(back)})))
        .await;
        assert_eq!(s, 201, "{a}");
    }

    // REST, grower and admin alike: refused on the last day, with the detail the spec names.
    for who in [&w.grower, &w.admin] {
        let res = app
            .rest_as(who)
            .post(
                &batches,
                &json!({"plant_key": last_day, "wet_weight_g": 120}),
            )
            .await;
        let err = assert_error(res, 422, "KARENZ_VIOLATION").await;
        assert_eq!(detail_fields(&err), vec!["active_ingredient".to_owned()]);
        let reason = err["details"][0]["reason"].as_str().unwrap_or_default();
        assert!(reason.contains("potassium fixturate"), "{reason}");
        assert!(reason.contains(SOAP), "{reason}");
        assert!(
            reason.contains(&format!("blocked through {}", day(0))),
            "{reason}"
        );
        assert!(
            reason.contains(&format!("allowed from {}", day(1))),
            "{reason}"
        );
        assert_eq!(err["details"][0]["code"], "KARENZ_VIOLATION");
    }
    // No flag bypasses it: an unknown one is refused as such, and nothing was written.
    let res = app
        .rest_auth(Some(&w.admin.bearer()))
        .post(
            &batches,
            &json!({"plant_key": last_day, "wet_weight_g": 120, "override_karenz": true}),
        )
        .await;
    assert_error(res, 422, "VALIDATION_ERROR").await;
    // Two running applications: one detail each.
    let res = app
        .rest_auth(Some(&w.grower.bearer()))
        .post(&batches, &json!({"plant_key": twice, "wet_weight_g": 10}))
        .await;
    let err = assert_error(res, 422, "KARENZ_VIOLATION").await;
    assert_eq!(
        detail_fields(&err),
        vec![
            "active_ingredient".to_owned(),
            "active_ingredient".to_owned()
        ],
        "{err}"
    );
    assert_eq!(count(&app, &w.t, "harvest_batches").await, 0);

    // The day after the last day: allowed (REST).
    let (s, b) = app
        .rest_as(&w.grower)
        .call(
            Method::POST,
            &batches,
            Some(&json!({"plant_key": day_after, "wet_weight_g": 120})),
        )
        .await;
    assert_eq!(s, 201, "{b}");
    assert_eq!(b["harvest_date"], day(0));

    // Dates given in the request (applied 10 days ago, 3-day interval: blocked -10..=-8).
    let res = app
        .rest_auth(Some(&w.admin.bearer()))
        .post(
            &batches,
            &json!({"plant_key": dated, "wet_weight_g": 5, "harvest_date": day(-8)}),
        )
        .await;
    let err = assert_error(res, 422, "KARENZ_VIOLATION").await;
    assert!(
        err["details"][0]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("1 day(s) remaining"))
    );
    for (d, _) in [
        (day(-7), "the day after"),
        (day(-11), "before the application"),
    ] {
        let (s, b) = app
            .rest_as(&w.grower)
            .call(
                Method::POST,
                &batches,
                Some(&json!({"plant_key": dated, "wet_weight_g": 5, "harvest_date": d})),
            )
            .await;
        assert_eq!(s, 201, "{b}");
    }
    assert_eq!(count(&app, &w.t, "harvest_batches").await, 3);

    // The same gate through record_harvest, with a grower's key and an admin's key.
    for user in [&w.grower, &w.admin] {
        let key = app.api_key(user, Some(w.t.slug.as_str())).await;
        for dry_run in [false, true] {
            let (s, e) = tool(
                &app,
                &key,
                "record_harvest",
                json!({"plant_key": last_day, "wet_weight_g": 50, "dry_run": dry_run}),
            )
            .await;
            assert_eq!(
                (s, e["error_code"].as_str()),
                (422, Some("validation.error")),
                "{e}"
            );
            assert_eq!(e["details"][0]["code"], "KARENZ_VIOLATION");
            assert_eq!(e["details"][0]["field"], "active_ingredient");
        }
        let (s, e) = tool(
            &app,
            &key,
            "record_harvest",
            json!({"plant_key": dated, "wet_weight_g": 50, "harvest_date": day(-8)}),
        )
        .await;
        assert_eq!(
            (s, e["details"][0]["code"].as_str()),
            (422, Some("KARENZ_VIOLATION")),
            "{e}"
        );
    }
    assert_eq!(count(&app, &w.t, "harvest_batches").await, 3);
    let gk = app.api_key(&w.grower, Some(w.t.slug.as_str())).await;
    let (s, ok) = tool(
        &app,
        &gk,
        "record_harvest",
        json!({"plant_key": day_after, "wet_weight_g": 80, "idempotency_key": "h-1"}),
    )
    .await;
    assert_eq!(s, 200, "{ok}");
    let (s, _) = tool(
        &app,
        &gk,
        "record_harvest",
        json!({"plant_key": day_after, "wet_weight_g": 80, "idempotency_key": "h-1"}),
    )
    .await;
    assert_eq!(s, 200);
    assert_eq!(count(&app, &w.t, "harvest_batches").await, 4);

    // Readiness shows the running interval and the first allowed day.
    let (s, r) = app
        .rest_as(&w.viewer)
        .call(
            Method::GET,
            &format!("{}/{last_day}", path(&w.t, "harvest/readiness")),
            None,
        )
        .await;
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["harvest_allowed_from"], day(1));
    assert_eq!(r["safety_intervals"][0]["last_blocked_day"], day(0));
    assert_eq!(r["safety_intervals"][0]["days_remaining"], 1);
    assert_eq!(r["ready"], false);
}

#[tokio::test]
async fn batches_quality_yields_readiness_and_bad_input() {
    let app = TestApp::full_env(&[("MCP_SERVER_ENABLED", "true")]).await;
    let w = world(&app, "harvest", 2).await;
    let other = world(&app, "harvestb", 1).await;
    let (p, q) = (w.plants[0], w.plants[1]);
    let batches = path(&w.t, "harvest/batches");

    // Quality: 0.3·80 + 0.25·80 + 0.2·80 + 25 = 85 − 30 (pests) = 55 → b.
    let (s, b) = app
        .rest_as(&w.grower)
        .call(
            Method::POST,
            &batches,
            Some(
                &json!({"plant_key": p, "wet_weight_g": 100, "actual_dry_weight_g": 20,
                     "appearance_score": 80, "aroma_score": 80, "color_score": 80,
                     "defects": ["pests"], "harvest_date": day(-1), "harvest_type": "partial"}),
            ),
        )
        .await;
    assert_eq!(s, 201, "{b}");
    assert_eq!(b["quality_score"], 55.0);
    assert_eq!(b["quality_grade"], "b");
    assert_eq!(b["harvest_type"], "partial");
    let bk = b["key"].as_str().expect("key").to_owned();
    let (s, b2) = app
        .rest_as(&w.admin)
        .call(
            Method::POST,
            &batches,
            Some(
                &json!({"plant_key": p, "wet_weight_g": 50, "estimated_dry_weight_g": 10,
                     "quality_grade": "a", "label": "second"}),
            ),
        )
        .await;
    assert_eq!(s, 201, "{b2}");
    assert_eq!(b2["quality_grade"], "a");
    assert_eq!(b2["quality_score"], Value::Null);

    // Yield of the plant: 150 g wet, 20 actual + 10 estimated = 30 g dry.
    let (s, y) = app
        .rest_as(&w.viewer)
        .call(
            Method::GET,
            &path(&w.t, &format!("harvest/yield/plants/{p}")),
            None,
        )
        .await;
    assert_eq!(s, 200, "{y}");
    assert_eq!(
        (
            y["batches"].as_i64(),
            y["total_wet_weight_g"].as_f64(),
            y["total_dry_weight_g"].as_f64()
        ),
        (Some(2), Some(150.0), Some(30.0))
    );
    assert_eq!(y["first_harvest"], day(-1));
    assert_eq!(y["last_harvest"], day(0));
    // Yield of a run: the run holds p and q; 150 g over 2 plants = 75 g per plant.
    let (s, run) = app
        .rest_as(&w.grower)
        .call(
            Method::POST,
            &path(&w.t, "planting-runs/"),
            Some(&json!({"name": "Yield run"})),
        )
        .await;
    assert_eq!(s, 201, "{run}");
    let rk = run["key"].as_str().expect("key").to_owned();
    let (s, added) = app
        .rest_as(&w.grower)
        .call(
            Method::POST,
            &path(&w.t, &format!("planting-runs/{rk}/plants")),
            Some(&json!({"plant_keys": [p, q]})),
        )
        .await;
    assert_eq!(s, 200, "{added}");
    // Batches keep the run the plant was in when harvested: add one now.
    let (s, _) = app
        .rest_as(&w.grower)
        .call(
            Method::POST,
            &batches,
            Some(&json!({"plant_key": q, "wet_weight_g": 30})),
        )
        .await;
    assert_eq!(s, 201);
    let (s, y) = app
        .rest_as(&w.viewer)
        .call(
            Method::GET,
            &path(&w.t, &format!("harvest/yield/runs/{rk}")),
            None,
        )
        .await;
    assert_eq!(s, 200, "{y}");
    assert_eq!(
        (y["batches"].as_i64(), y["plants"].as_i64()),
        (Some(1), Some(2))
    );
    assert_eq!(y["wet_weight_per_plant_g"], 15.0);
    let (s, page) = app
        .rest_as(&w.viewer)
        .call(Method::GET, &format!("{batches}?plant={p}"), None)
        .await;
    assert_eq!((s, page["total"].as_i64()), (200, Some(2)));
    let (s, page) = app
        .rest_as(&w.viewer)
        .call(
            Method::GET,
            &format!("{batches}?from={}&to={}", day(-1), day(-1)),
            None,
        )
        .await;
    assert_eq!((s, page["total"].as_i64()), (200, Some(1)));
    let (s, one) = app
        .rest_as(&w.viewer)
        .call(Method::GET, &format!("{batches}/{bk}"), None)
        .await;
    assert_eq!((s, one["label"].is_string()), (200, true));

    // Bad input: 422 with the field, nothing written.
    let before = count(&app, &w.t, "harvest_batches").await;
    for (bad, field) in [
        (
            json!({"plant_key": p, "wet_weight_g": -5}),
            "body.wet_weight_g",
        ),
        (
            json!({"plant_key": p, "wet_weight_g": 0}),
            "body.wet_weight_g",
        ),
        (json!({"plant_key": p}), "body.wet_weight_g"),
        (
            json!({"plant_key": p, "wet_weight_g": 10, "actual_dry_weight_g": -1}),
            "body.actual_dry_weight_g",
        ),
        (
            json!({"plant_key": p, "wet_weight_g": 10, "actual_dry_weight_g": 11}),
            "body.actual_dry_weight_g",
        ),
        (
            json!({"plant_key": p, "wet_weight_g": 10, "appearance_score": 101, "aroma_score": 5, "color_score": 5}),
            "body.appearance_score",
        ),
        (
            json!({"plant_key": p, "wet_weight_g": 10, "appearance_score": 50}),
            "body.aroma_score",
        ),
        (
            json!({"plant_key": p, "wet_weight_g": 10, "appearance_score": 5, "aroma_score": 5, "color_score": 5, "quality_grade": "a"}),
            "body.quality_grade",
        ),
        (
            json!({"plant_key": p, "wet_weight_g": 10, "quality_grade": "z"}),
            "body.quality_grade",
        ),
        (
            json!({"plant_key": p, "wet_weight_g": 10, "harvest_date": day(1)}),
            "body.harvest_date",
        ),
        (
            json!({"plant_key": p, "wet_weight_g": 10, "harvest_type": "some"}),
            "body.harvest_type",
        ),
    ] {
        let res = app
            .rest_auth(Some(&w.grower.bearer()))
            .post(&batches, &bad)
            .await;
        let err = assert_error(res, 422, "VALIDATION_ERROR").await;
        assert!(
            detail_fields(&err).contains(&field.to_owned()),
            "{bad}: {err}"
        );
    }
    // Another garden's plant: 404 naming the field; dates in the wrong order: 422.
    let res = app
        .rest_auth(Some(&w.grower.bearer()))
        .post(
            &batches,
            &json!({"plant_key": other.plants[0], "wet_weight_g": 10}),
        )
        .await;
    let err = assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    assert_eq!(detail_fields(&err), vec!["body.plant_key".to_owned()]);
    for url in [
        format!("{batches}?from={}&to={}", day(0), day(-3)),
        path(
            &w.t,
            &format!("harvest/yield/plants/{p}?from={}&to={}", day(0), day(-3)),
        ),
    ] {
        let res = app.rest_auth(Some(&w.viewer.bearer())).get(&url).await;
        let err = assert_error(res, 422, "VALIDATION_ERROR").await;
        assert_eq!(detail_fields(&err), vec!["query.to".to_owned()]);
    }
    assert_eq!(count(&app, &w.t, "harvest_batches").await, before);
    assert_eq!(count(&app, &other.t, "harvest_batches").await, 0);

    // Roles and isolation.
    let res = app
        .rest_auth(Some(&w.viewer.bearer()))
        .post(&batches, &json!({"plant_key": p, "wet_weight_g": 10}))
        .await;
    assert_error(res, 403, "FORBIDDEN").await;
    for url in [
        format!("{}/{bk}", path(&other.t, "harvest/batches")),
        path(&other.t, &format!("harvest/yield/plants/{p}")),
        path(&other.t, &format!("harvest/yield/runs/{rk}")),
        path(&other.t, &format!("harvest/readiness/{p}")),
    ] {
        let res = app.rest_auth(Some(&other.admin.bearer())).get(&url).await;
        assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    }
    let res = app
        .rest_auth(Some(&other.admin.bearer()))
        .get(&batches)
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    assert_eq!(count(&app, &w.t, "harvest_batches").await, before);

    // Readiness: observations weigh in (peak 1.0 + approaching 0.5: (100 + 25) / 1.5 = 83.3).
    let obs = path(&w.t, "harvest/observations");
    for body in [
        json!({"plant_key": q, "indicator_type": "color", "ripeness_assessment": "peak",
               "reliability_score": 1.0, "days_to_harvest_estimate": 1}),
        json!({"plant_key": q, "indicator_type": "size", "ripeness_assessment": "approaching",
               "days_to_harvest_estimate": 4}),
    ] {
        let (s, o) = app
            .rest_as(&w.grower)
            .call(Method::POST, &obs, Some(&body))
            .await;
        assert_eq!(s, 201, "{o}");
    }
    let res = app.rest_auth(Some(&w.grower.bearer())).post(&obs, &json!({"plant_key": q, "indicator_type": "size", "ripeness_assessment": "peak", "reliability_score": 2}))
        .await;
    assert_error(res, 422, "VALIDATION_ERROR").await;
    let res = app
        .rest_auth(Some(&w.viewer.bearer()))
        .post(
            &obs,
            &json!({"plant_key": q, "indicator_type": "size", "ripeness_assessment": "peak"}),
        )
        .await;
    assert_error(res, 403, "FORBIDDEN").await;
    assert_eq!(count(&app, &w.t, "harvest_observations").await, 2);
    let (s, r) = app
        .rest_as(&w.viewer)
        .call(
            Method::GET,
            &path(&w.t, &format!("harvest/readiness/{q}")),
            None,
        )
        .await;
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["score"], 83.3);
    assert_eq!(r["recommendation"], "approaching");
    assert_eq!(r["estimated_days_to_harvest"], 3); // (1 + 4) / 2 = 2.5 → 3
    assert_eq!(r["phase_allows_harvest"], true);
    assert_eq!(r["indicators"].as_array().map(Vec::len), Some(2));
    assert_eq!(r["harvest_allowed_from"], day(0));
    assert_eq!(r["ready"], false);
    // A newer peak on size: both peak → 100 → optimal → ready.
    let (s, _) = app
        .rest_as(&w.grower)
        .call(
            Method::POST,
            &obs,
            Some(&json!({"plant_key": q, "indicator_type": "size", "ripeness_assessment": "peak"})),
        )
        .await;
    assert_eq!(s, 201);
    let (s, page) = app
        .rest_as(&w.viewer)
        .call(Method::GET, &path(&w.t, "harvest/readiness"), None)
        .await;
    assert_eq!((s, page["total"].as_i64()), (200, Some(2)), "{page}");
    let rq = page["items"]
        .as_array()
        .and_then(|l| l.iter().find(|r| r["plant_key"] == q.to_string()))
        .cloned()
        .expect("q listed");
    assert_eq!(
        (rq["score"].as_f64(), rq["ready"].as_bool()),
        (Some(100.0), Some(true))
    );

    // get_harvest_readiness: the whole garden and one plant; another garden's plant not found.
    let vk = app.api_key(&w.viewer, Some(w.t.slug.as_str())).await;
    let (s, all) = tool(&app, &vk, "get_harvest_readiness", json!({})).await;
    assert_eq!(s, 200, "{all}");
    assert_eq!(
        (all["data"]["total"].as_i64(), all["data"]["ready"].as_i64()),
        (Some(2), Some(1))
    );
    let (s, one) = tool(&app, &vk, "get_harvest_readiness", json!({"plant_key": q})).await;
    assert_eq!(
        (s, one["data"]["recommendation"].as_str()),
        (200, Some("optimal")),
        "{one}"
    );
    let (s, e) = tool(
        &app,
        &vk,
        "get_harvest_readiness",
        json!({"plant_key": other.plants[0]}),
    )
    .await;
    assert_eq!((s, e["error_code"].as_str()), (404, Some("not_found")));
    let (s, e) = tool(
        &app,
        &vk,
        "record_harvest",
        json!({"plant_key": q, "wet_weight_g": 1}),
    )
    .await;
    assert_eq!(
        (s, e["error_code"].as_str()),
        (403, Some("permission.denied"))
    );
    let gk = app.api_key(&w.grower, Some(w.t.slug.as_str())).await;
    let (s, e) = tool(
        &app,
        &gk,
        "record_harvest",
        json!({"plant_key": q, "wet_weight_g": 10, "actual_dry_weight_g": 20}),
    )
    .await;
    assert_eq!(
        (s, e["details"][0]["field"].as_str()),
        (422, Some("actual_dry_weight_g")),
        "{e}"
    );
    let (s, e) = tool(
        &app,
        &gk,
        "record_harvest",
        json!({"plant_key": other.plants[0], "wet_weight_g": 10}),
    )
    .await;
    assert_eq!((s, e["error_code"].as_str()), (404, Some("not_found")));
    assert_eq!(count(&app, &w.t, "harvest_batches").await, before);
}

#[tokio::test]
async fn calendar_events_name_harvests_and_safety_intervals() {
    let app = TestApp::full_env(&[("MCP_SERVER_ENABLED", "true")]).await;
    let w = world(&app, "harvcal", 1).await;
    let p = w.plants[0];
    let soap = catalogue_key(&app, "treatment", SOAP).await;
    let (s, a) = app
        .rest_as(&w.grower)
        .call(
            Method::POST,
            &path(&w.t, "ipm/treatments"),
            Some(&json!({"treatment_key": soap, "plant_keys": [p], "applied_at": days_ago(10)})),
        )
        .await;
    assert_eq!(s, 201);
    let (s, b) = app
        .rest_as(&w.grower)
        .call(
            Method::POST,
            &path(&w.t, "harvest/batches"),
            Some(&json!({"plant_key": p, "wet_weight_g": 42, "harvest_date": day(-2)})),
        )
        .await;
    assert_eq!(s, 201, "{b}");

    let all = events(&app, &w.t, -30, 0).await;
    assert_eq!(all.len(), 2, "{all:?}");
    let t = &all[0];
    assert_eq!(t.kind, "treatment");
    assert_eq!(t.date, today() - Duration::days(10));
    // 3 days: blocked -10, -9, -8; the event ends on the last blocked day.
    assert_eq!(t.end_date, Some(today() - Duration::days(8)));
    assert_eq!(t.plant_key, Some(p));
    assert_eq!(
        t.uid,
        format!("treatment:{}:{p}", a["key"].as_str().unwrap_or_default())
    );
    let h = &all[1];
    assert_eq!((h.kind, h.date), ("harvest", today() - Duration::days(2)));
    assert_eq!(
        h.uid,
        format!("harvest:{}", b["key"].as_str().unwrap_or_default())
    );
    assert!(h.title.contains("42"));
    // A window that touches only the interval's last day; one after everything; one reversed.
    let last = events(&app, &w.t, -8, -8).await;
    assert_eq!(
        last.iter().map(|e| e.kind).collect::<Vec<_>>(),
        vec!["treatment"]
    );
    assert!(events(&app, &w.t, -1, 0).await.is_empty());
    assert!(events(&app, &w.t, 0, -30).await.is_empty());
    // Another garden's calendar holds none of it.
    let other = world(&app, "harvcalb", 0).await;
    let mut tx = kultiva::tenancy::TenantTx::read(&app.state, &other.t)
        .await
        .expect("tx");
    let none = kultiva::garden::harvest::service::calendar_events(
        &mut tx,
        today() - Duration::days(30),
        today(),
    )
    .await
    .expect("events");
    assert!(none.is_empty());
}

async fn events(
    app: &TestApp,
    t: &kultiva::tenancy::TenantRecord,
    from: i64,
    to: i64,
) -> Vec<kultiva::garden::contracts::CalendarEvent> {
    let mut tx = kultiva::tenancy::TenantTx::read(&app.state, t)
        .await
        .expect("tx");
    kultiva::garden::harvest::service::calendar_events(
        &mut tx,
        today() + Duration::days(from),
        today() + Duration::days(to),
    )
    .await
    .expect("events")
}
