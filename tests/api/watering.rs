//! Watering and feeding events and a plant's diagnostics, through REST and the tool server:
//! a feeding drawn from a tank, run events, the runoff analysis stored with the event, list
//! filters, refused input writing nothing, roles, two gardens, and the tool pair
//! record_feeding_event → get_plant_diagnostics.

use kultiva::auth::Role;
use kultiva::tenancy::TenantRecord;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::garden::*;
use crate::support::{TestApp, assert_error, detail_fields};

const TOMATO: &str = "Fixtura tomatoides";

fn events_path(t: &TenantRecord) -> String {
    format!("/api/v1/t/{}/watering-events/", t.slug)
}

fn diagnostics_path(t: &TenantRecord, plant: &str) -> String {
    format!("/api/v1/t/{}/plant-instances/{plant}/diagnostics", t.slug)
}

/// A tank of `capacity` litres filled with `fill` litres at EC 1.8, pH 6.0.
async fn filled_tank(app: &TestApp, t: &TenantRecord, capacity: f64, fill: f64) -> String {
    let (s, v) = post(
        app,
        &format!("/api/v1/t/{}/tanks/", t.slug),
        json!({"name": format!("Tank {}", Uuid::now_v7()), "kind": "nutrient", "volume_liters": capacity}),
    )
    .await;
    assert_eq!(s, 201, "{v}");
    let k = key(&v);
    let (s, v) = post(
        app,
        &format!("/api/v1/t/{}/tanks/{k}/fills", t.slug),
        json!({"fill_type": "full_change", "volume_liters": fill, "ec_ms": 1.8, "ph": 6.0}),
    )
    .await;
    assert_eq!(s, 201, "{v}");
    k
}

async fn tank_volume(app: &TestApp, t: &TenantRecord, k: &str) -> Value {
    let (_, v) = get_json(app, &format!("/api/v1/t/{}/tanks/{k}", t.slug)).await;
    v["state"]["current_volume_liters"].clone()
}

#[tokio::test]
async fn feeding_from_a_tank_is_analysed_listed_and_diagnosed() {
    let app = TestApp::spawn().await;
    let t = app.tenant("feed").await;
    let tomato = species(&app, TOMATO).await;
    let phases_t = phases(&app, &tomato).await;
    let p1 = key(&plant(&app, &t, json!({"species_key": tomato, "name": "F1"})).await);
    let p2 = key(&plant(&app, &t, json!({"species_key": tomato, "name": "F2"})).await);
    let tank = filled_tank(&app, &t, 50.0, 20.0).await;

    // 2 L from the tank: fed at 1.8 (after mixing; water 0.3), runoff 2.5 → Δ 0.7 > 0.5:
    // salt build-up; pH 6.0 → 6.2 ok; runoff 0.4 of 2 L = 20 % ok; overall poor.
    let (s, e) = post(
        &app,
        &events_path(&t),
        json!({"plant_keys": [p1], "tank_key": tank, "volume_liters": 2.0,
               "application_method": "fertigation",
               "ec_before_ms": 0.3, "ec_after_ms": 1.8, "ph_before": 7.2, "ph_after": 6.0,
               "runoff_ec_ms": 2.5, "runoff_ph": 6.2, "runoff_volume_liters": 0.4,
               "fertilizers_used": [{"fertilizer_key": "base-a", "ml_applied": 4.0}],
               "notes": "first feed"}),
    )
    .await;
    assert_eq!(s, 201, "{e}");
    assert_eq!(e["kind"], "feeding");
    assert_eq!(e["plant_keys"], json!([p1]));
    assert_eq!(e["tank_key"], tank.as_str());
    assert!(e["tank_fill_key"].is_string());
    let a = &e["runoff_analysis"];
    assert_eq!(a["ec_delta_ms"], 0.7);
    assert_eq!(a["ec_status"], "salt_buildup");
    assert_eq!(a["ph_delta"], 0.2);
    assert_eq!(a["runoff_percent"], 20.0);
    assert_eq!(a["overall"], "poor");
    // The tank lost the 2 litres.
    assert_eq!(tank_volume(&app, &t, &tank).await, 18.0);
    let ek = key(&e);
    let (s, got) = get_json(&app, &format!("{}{ek}", events_path(&t))).await;
    assert_eq!(s, 200);
    assert_eq!(got, e);

    // A plain watering of both plants, no tank, no runoff: no analysis.
    let (s, w) = post(
        &app,
        &events_path(&t),
        json!({"plant_keys": [p1, p2], "volume_liters": 1.0, "ec_after_ms": 1.9, "ph_after": 6.1}),
    )
    .await;
    assert_eq!(s, 201, "{w}");
    assert_eq!(w["kind"], "watering");
    assert_eq!(w["application_method"], "drench");
    assert_eq!(w["runoff_analysis"], Value::Null);

    // Filters.
    let base = events_path(&t);
    let cases = [
        (format!("{base}?plant_key={p1}"), 2),
        (format!("{base}?plant_key={p2}"), 1),
        (format!("{base}?tank_key={tank}"), 1),
        (format!("{base}?plant_key={}", Uuid::now_v7()), 0),
        (format!("{base}?from=2000-01-01&to=2000-12-31"), 0),
        (
            format!("{base}?from={}", time::OffsetDateTime::now_utc().date()),
            2,
        ),
    ];
    for (path, n) in cases {
        let (s, page) = get_json(&app, &path).await;
        assert_eq!(s, 200, "{path}: {page}");
        assert_eq!(page["total"], n, "{path}");
    }
    let (_, page) = get_json(&app, &base).await;
    // Newest first.
    assert_eq!(page["items"][0]["key"], w["key"]);
    for q in [
        "plant_key=x",
        "from=yesterday",
        "from=2026-02-02&to=2026-02-01",
        "limit=0",
    ] {
        let res = app.get(&format!("{base}?{q}")).await;
        assert_error(res, 422, "VALIDATION_ERROR").await;
    }

    // Diagnostics of p1: two events in the window, post-feed EC 1.8 → 1.9 (Δ 0.1, stable),
    // one runoff point, the analysis' advice as warnings, no plan.
    let (s, d) = get_json(&app, &diagnostics_path(&t, &p1)).await;
    assert_eq!(s, 200, "{d}");
    assert_eq!(d["plant"]["name"], "F1");
    assert_eq!(d["plant"]["phase_key"], phases_t[0]);
    assert_eq!(d["window"]["days"], 14);
    assert_eq!(d["window"]["event_count"], 2);
    assert_eq!(d["last_feedings"].as_array().map(Vec::len), Some(2));
    assert_eq!(d["last_feedings"][0]["key"], w["key"]);
    assert_eq!(d["ec"]["post_feed"]["sample_count"], 2);
    assert_eq!(d["ec"]["post_feed"]["first"], 1.8);
    assert_eq!(d["ec"]["post_feed"]["latest"], 1.9);
    assert_eq!(d["ec"]["post_feed"]["direction"], "stable");
    assert_eq!(d["ec"]["input"]["sample_count"], 1);
    assert_eq!(d["ec"]["input"]["direction"], "unknown");
    assert_eq!(d["ec"]["runoff"]["latest"], 2.5);
    assert_eq!(d["ph"]["input"]["latest"], 7.2);
    assert_eq!(
        d["runoff_trend"]["points"].as_array().map(Vec::len),
        Some(1)
    );
    assert_eq!(d["runoff_trend"]["latest"]["overall"], "poor");
    assert_eq!(d["plan_targets"], Value::Null);
    assert_eq!(d["targets_vs_measured"]["ec"]["status"], "no_plan");
    assert_eq!(d["targets_vs_measured"]["ec"]["measured_ec_ms"], 1.9);
    let warnings = d["warnings"].as_array().expect("warnings");
    assert!(!warnings.is_empty());
    assert!(warnings.iter().all(|w| w["source"] == "runoff"), "{d}");
    // p2 saw only the watering.
    let (_, d2) = get_json(&app, &diagnostics_path(&t, &p2)).await;
    assert_eq!(d2["window"]["event_count"], 1);
    assert_eq!(d2["warnings"], json!([]));
    // The window: a day back still holds today's events; out-of-range days are refused.
    let (s, d1) = get_json(&app, &format!("{}?days=1", diagnostics_path(&t, &p1))).await;
    assert_eq!((s, d1["window"]["event_count"].clone()), (200, json!(2)));
    for q in ["days=0", "days=366", "days=x"] {
        let res = app.get(&format!("{}?{q}", diagnostics_path(&t, &p1))).await;
        assert_error(res, 422, "VALIDATION_ERROR").await;
    }
    for k in [Uuid::now_v7().to_string(), "nope".to_owned()] {
        let res = app.get(&diagnostics_path(&t, &k)).await;
        assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    }
}

#[tokio::test]
async fn run_events_water_the_runs_live_plants() {
    let app = TestApp::spawn().await;
    let t = app.tenant("feedrun").await;
    let tomato = species(&app, TOMATO).await;
    let p1 = key(&plant(&app, &t, json!({"species_key": tomato, "name": "R1"})).await);
    let p2 = key(&plant(&app, &t, json!({"species_key": tomato, "name": "R2"})).await);
    let loose = key(&plant(&app, &t, json!({"species_key": tomato, "name": "Loose"})).await);
    let (s, run) = post(
        &app,
        &format!("/api/v1/t/{}/planting-runs/", t.slug),
        json!({"name": "Bed run"}),
    )
    .await;
    assert_eq!(s, 201, "{run}");
    let rk = key(&run);
    let (s, added) = post(
        &app,
        &format!("/api/v1/t/{}/planting-runs/{rk}/plants", t.slug),
        json!({"plant_keys": [p1, p2]}),
    )
    .await;
    assert!(s == 200 || s == 201, "{added}");
    let (s, e) = post(
        &app,
        &events_path(&t),
        json!({"run_key": rk, "plant_keys": [loose], "volume_liters": 6.0}),
    )
    .await;
    assert_eq!(s, 201, "{e}");
    let mut want = vec![p1.clone(), p2.clone(), loose.clone()];
    want.sort();
    assert_eq!(e["plant_keys"], json!(want));
    assert_eq!(e["run_key"], rk.as_str());
    let (_, page) = get_json(&app, &format!("{}?run_key={rk}", events_path(&t))).await;
    assert_eq!(page["total"], 1);
    let (_, d) = get_json(&app, &diagnostics_path(&t, &p2)).await;
    assert_eq!(d["window"]["event_count"], 1);
    assert_eq!(d["plant"]["run_key"], rk.as_str());
}

#[tokio::test]
async fn watering_bad_input_is_refused_and_writes_nothing() {
    let app = TestApp::spawn().await;
    let t = app.tenant("feedbad").await;
    let other = app.tenant("feedbad-o").await;
    let tomato = species(&app, TOMATO).await;
    let p = key(&plant(&app, &t, json!({"species_key": tomato, "name": "B1"})).await);
    let foreign = key(&plant(&app, &other, json!({"species_key": tomato, "name": "X"})).await);
    let tank = filled_tank(&app, &t, 10.0, 3.0).await;
    let foreign_tank = filled_tank(&app, &other, 10.0, 10.0).await;
    let base = events_path(&t);
    for (body, field) in [
        (json!({"volume_liters": 1}), "body.plant_keys"),
        (
            json!({"plant_keys": [p], "volume_liters": -1}),
            "body.volume_liters",
        ),
        (
            json!({"plant_keys": [p], "volume_liters": 0}),
            "body.volume_liters",
        ),
        (
            json!({"plant_keys": [p], "volume_liters": 20000}),
            "body.volume_liters",
        ),
        (json!({"plant_keys": [p]}), "body.volume_liters"),
        (
            json!({"plant_keys": [p], "volume_liters": 1, "ec_after_ms": 10.5}),
            "body.ec_after_ms",
        ),
        (
            json!({"plant_keys": [p], "volume_liters": 1, "ph_before": 14.1}),
            "body.ph_before",
        ),
        (
            json!({"plant_keys": [p], "volume_liters": 1, "runoff_ph": -0.5}),
            "body.runoff_ph",
        ),
        (
            json!({"plant_keys": [p], "volume_liters": 1, "runoff_ec_ms": 2.0}),
            "body.runoff_ec_ms",
        ),
        (
            json!({"plant_keys": [p], "volume_liters": 1, "runoff_volume_liters": 2}),
            "body.runoff_volume_liters",
        ),
        (
            json!({"plant_keys": [p], "volume_liters": 1, "is_supplemental": true,
                   "application_method": "fertigation"}),
            "body.is_supplemental",
        ),
        (
            json!({"plant_keys": ["x"], "volume_liters": 1}),
            "body.plant_keys",
        ),
        (
            json!({"plant_keys": [p], "volume_liters": 1,
                   "fertilizers_used": [{"fertilizer_key": "a", "ml_applied": 0}]}),
            "body.fertilizers_used[0].ml_applied",
        ),
        (
            json!({"plant_keys": [p], "volume_liters": 1,
                   "fertilizers_used": [{"fertilizer_key": "a", "ml_applied": 1, "x": 1}]}),
            "body.fertilizers_used[0].x",
        ),
        (
            json!({"plant_keys": [p], "volume_liters": 1, "occurred_at": "2999-01-01T00:00:00Z"}),
            "body.occurred_at",
        ),
        (
            json!({"plant_keys": [p], "volume_liters": 1, "bogus": 1}),
            "body.bogus",
        ),
    ] {
        let res = app.post_json(&base, &body).await;
        let v = assert_error(res, 422, "VALIDATION_ERROR").await;
        assert!(detail_fields(&v).contains(&field.to_owned()), "{body}: {v}");
    }
    // Another garden's plant, run or tank, or an unknown one: 404.
    for body in [
        json!({"plant_keys": [foreign], "volume_liters": 1}),
        json!({"plant_keys": [p, Uuid::now_v7()], "volume_liters": 1}),
        json!({"run_key": Uuid::now_v7(), "volume_liters": 1}),
        json!({"plant_keys": [p], "tank_key": foreign_tank, "volume_liters": 1}),
    ] {
        let res = app.post_json(&base, &body).await;
        assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    }
    // The tank holds 3 litres: 5 applied is a conflict (409), the tank keeps its 3.
    let res = app
        .post_json(
            &base,
            &json!({"plant_keys": [p], "tank_key": tank, "volume_liters": 5}),
        )
        .await;
    let v = assert_error(res, 409, "STATE_CONFLICT").await;
    assert!(
        v["message"].as_str().is_some_and(|m| m.contains('3')),
        "{v}"
    );
    assert_eq!(tank_volume(&app, &t, &tank).await, 3.0);
    assert_eq!(tank_volume(&app, &other, &foreign_tank).await, 10.0);
    // An archived plant is not watered.
    let (s, _) = post(
        &app,
        &format!("{}{p}/archive", plants_path(&t)),
        json!({"reason": "died"}),
    )
    .await;
    assert_eq!(s, 200);
    let res = app
        .post_json(&base, &json!({"plant_keys": [p], "volume_liters": 1}))
        .await;
    let v = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(detail_fields(&v), ["body.plant_keys"]);
    assert_eq!(count(&app, &t, "watering_events").await, 0);
    assert_eq!(count(&app, &t, "watering_event_plants").await, 0);
    assert_eq!(count(&app, &other, "watering_events").await, 0);
    // Exactly the 3 litres: allowed, the tank is empty.
    let (_, p2) = post(
        &app,
        &plants_path(&t),
        json!({"species_key": tomato, "name": "B2"}),
    )
    .await;
    let (s, _) = post(
        &app,
        &base,
        json!({"plant_keys": [key(&p2)], "tank_key": tank, "volume_liters": 3}),
    )
    .await;
    assert_eq!(s, 201);
    assert_eq!(tank_volume(&app, &t, &tank).await, 0.0);
}

#[tokio::test]
async fn watering_roles_and_two_gardens() {
    let app = TestApp::full().await;
    let a = app.tenant("feedrole").await;
    let b = app.tenant("feedrole-b").await;
    let tomato = species(&app, TOMATO).await;
    let viewer = app.member(&a, Role::Viewer).await;
    let grower = app.member(&a, Role::Grower).await;
    let admin_b = app.member(&b, Role::Admin).await;
    let res = app
        .rest_as(&grower)
        .post(
            &plants_path(&a),
            &json!({"species_key": tomato, "name": "Role plant"}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 201);
    let p = key(&res.json::<Value>().await.expect("json"));
    let body = json!({"plant_keys": [p], "volume_liters": 1.0, "ec_after_ms": 1.5});
    let res = app.rest_as(&viewer).post(&events_path(&a), &body).await;
    assert_error(res, 403, "FORBIDDEN").await;
    // Garden B's admin is a stranger to A.
    let res = app.rest_as(&admin_b).post(&events_path(&a), &body).await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    assert_eq!(count(&app, &a, "watering_events").await, 0);
    let res = app.rest_as(&grower).post(&events_path(&a), &body).await;
    assert_eq!(res.status().as_u16(), 201);
    let e = key(&res.json::<Value>().await.expect("json"));
    for path in [
        events_path(&a),
        format!("{}{e}", events_path(&a)),
        diagnostics_path(&a, &p),
    ] {
        let res = app.rest_as(&viewer).get(&path).await;
        assert_eq!(res.status().as_u16(), 200, "{path}");
        let res = app.rest_as(&admin_b).get(&path).await;
        assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    }
    // A's records through B's slug: 404, B's list is empty.
    for path in [format!("{}{e}", events_path(&b)), diagnostics_path(&b, &p)] {
        let res = app.rest_as(&admin_b).get(&path).await;
        assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    }
    let res = app.rest_as(&admin_b).get(&events_path(&b)).await;
    let page: Value = res.json().await.expect("json");
    assert_eq!(page["total"], 0);
}

#[tokio::test]
async fn feeding_tool_shows_in_the_diagnostics_tool() {
    let app = crate::mcp_tools::app().await;
    let a = app.tenant("feedmcp").await;
    let b = app.tenant("feedmcp-b").await;
    let tomato = species(&app, TOMATO).await;
    let gk = crate::mcp_tools::scoped_key(&app, &a, Role::Grower).await;
    let vk = crate::mcp_tools::scoped_key(&app, &a, Role::Viewer).await;
    let bk = crate::mcp_tools::scoped_key(&app, &b, Role::Admin).await;
    let grower = app.member(&a, Role::Grower).await;
    let res = app
        .rest_as(&grower)
        .post(
            &plants_path(&a),
            &json!({"species_key": tomato, "name": "Tool plant"}),
        )
        .await;
    let p = key(&res.json::<Value>().await.expect("json"));
    let res = app
        .rest_as(&grower)
        .post(
            &format!("/api/v1/t/{}/tanks/", a.slug),
            &json!({"name": "Tool tank", "kind": "nutrient", "volume_liters": 20}),
        )
        .await;
    let tank = key(&res.json::<Value>().await.expect("json"));
    let res = app
        .rest_as(&grower)
        .post(
            &format!("/api/v1/t/{}/tanks/{tank}/fills", a.slug),
            &json!({"fill_type": "full_change", "volume_liters": 20, "ec_ms": 1.6}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 201);
    let args = json!({"plant_key": p, "volume_applied_liters": 1.5, "tank_key": tank,
                      "measured_ec_after": 1.6, "measured_ph_after": 6.0,
                      "runoff_ec": 1.7, "runoff_ph": 6.1, "runoff_volume_liters": 0.3,
                      "fertilizers_used": [{"fertilizer_key": "grow-a", "ml_applied": 3}]});
    let call = crate::mcp_tools::call;

    // A viewer may not write; a dry run writes nothing; another garden's plant is not found.
    let (s, v) = call(&app, &vk, "record_feeding_event", args.clone()).await;
    assert_eq!(
        (s, v["error_code"].as_str()),
        (403, Some("permission.denied"))
    );
    let mut dry = args.clone();
    dry["dry_run"] = json!(true);
    let (s, v) = call(&app, &gk, "record_feeding_event", dry).await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["data"]["runoff_analysis"]["overall"], "good");
    assert_eq!(count(&app, &a, "watering_events").await, 0);
    let (s, v) = call(&app, &bk, "record_feeding_event", args.clone()).await;
    assert_eq!(s, 404, "{v}");
    let (s, v) = call(&app, &bk, "get_plant_diagnostics", json!({"plant_key": p})).await;
    assert_eq!(s, 404, "{v}");
    // Bad input names the tool's argument.
    let mut bad = args.clone();
    bad["runoff_volume_liters"] = json!(5);
    let (s, v) = call(&app, &gk, "record_feeding_event", bad).await;
    assert_eq!(s, 422, "{v}");
    assert!(v.to_string().contains("runoff_volume_liters"), "{v}");
    let mut too_much = args.clone();
    too_much["volume_applied_liters"] = json!(25);
    let (s, v) = call(&app, &gk, "record_feeding_event", too_much).await;
    assert_eq!(s, 409, "{v}");
    assert_eq!(count(&app, &a, "watering_events").await, 0);

    // The real call: recorded, the tank drops, the diagnostics show it.
    let (s, v) = call(&app, &gk, "record_feeding_event", args.clone()).await;
    assert_eq!(s, 200, "{v}");
    let event = v["data"]["event_key"]
        .as_str()
        .expect("event_key")
        .to_owned();
    assert_eq!(v["data"]["kind"], "feeding");
    assert_eq!(v["data"]["application_method"], "fertigation");
    let (s, d) = call(
        &app,
        &vk,
        "get_plant_diagnostics",
        json!({"plant_key": p, "window_days": 7}),
    )
    .await;
    assert_eq!(s, 200, "{d}");
    assert_eq!(d["data"]["last_feedings"][0]["key"], event.as_str());
    assert_eq!(d["data"]["ec"]["post_feed"]["latest"], 1.6);
    assert_eq!(d["data"]["ec"]["runoff"]["latest"], 1.7);
    assert_eq!(d["data"]["window"]["days"], 7);
    // The same read over REST agrees.
    let res = app.rest_as(&grower).get(&diagnostics_path(&a, &p)).await;
    let rest: Value = res.json().await.expect("json");
    assert_eq!(rest["last_feedings"], d["data"]["last_feedings"]);
    let res = app
        .rest_as(&grower)
        .get(&format!("/api/v1/t/{}/tanks/{tank}", a.slug))
        .await;
    let t: Value = res.json().await.expect("json");
    assert_eq!(t["state"]["current_volume_liters"], 18.5);
    let (s, _) = call(
        &app,
        &vk,
        "get_plant_diagnostics",
        json!({"plant_key": p, "window_days": 0}),
    )
    .await;
    assert_eq!(s, 422);
}
