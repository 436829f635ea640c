//! Issue 39: the resistance rule by FRAC/IRAC risk (multi-site groups outside the count, a
//! published limit for high-risk groups, shown with the group and the source over REST and the
//! tool, the override still recorded), the table at `/ipm/resistance-groups`, and the EC range
//! of the mixing protocol by crop (Phalaenopsis, hydroponic lettuce) with its source.

use reqwest::Method;
use serde_json::{Map, Value, json};

use crate::catalog::letters;
use crate::fertilizers::global_fertilizer;
use crate::garden::count;
use crate::ipm::{days_ago, path, tool, world};
use crate::support::{TestApp, assert_error, detail_fields};

/// A global treatment only this test knows (the catalogue is shared by parallel tests), with a
/// label interval of one day for every crop and the given resistance groups.
pub(crate) async fn treatment(
    app: &TestApp,
    ingredient: &str,
    group: &str,
    source: &str,
) -> String {
    crate::catalog::seeded(app).await;
    let body: Map<String, Value> = json!({
        "name": format!("Risk test {ingredient} {}", letters()),
        "treatment_type": "chemical",
        "active_ingredient": ingredient,
        "application_method": "spray",
        "safety_interval_days": 1,
        "safety_intervals": [{"days": 1, "product": format!("Fix{ingredient}"),
                              "authority": "Fixture register", "label_crop": "every crop"}],
        "resistance_groups": [{"code": group, "source": source}],
    })
    .as_object()
    .cloned()
    .unwrap_or_default();
    let created = kultiva::catalog::engine::service::create(
        &app.state,
        &kultiva::catalog::ipm::model::TREATMENT,
        body,
    )
    .await
    .expect("treatment");
    created["key"].as_str().expect("key").to_owned()
}

#[tokio::test]
async fn multi_site_groups_are_outside_the_count_and_qoi_stops_at_its_published_limit() {
    let app = TestApp::full_env(&[("MCP_SERVER_ENABLED", "true")]).await;
    let w = world(&app, "riskrest", 1).await;
    let p = w.plants[0];
    let treat = path(&w.t, "ipm/treatments");
    let sulphur = treatment(&app, "Sulphur", "FRAC M2", "FRAC Code List").await;
    let qoi = treatment(&app, "Azoxystrobin", "FRAC 11", "FRAC Code List").await;
    let apply = |key: &str, back: i64| json!({"treatment_key": key, "plant_keys": [p], "applied_at": days_ago(back)});

    // Sulphur (FRAC M2) four times in 60 days: every one accepted, never counted or warned.
    for back in [60, 40, 20, 0] {
        let (s, a) = app
            .rest_as(&w.grower)
            .call(Method::POST, &treat, Some(&apply(&sulphur, back)))
            .await;
        assert_eq!(s, 201, "{back}: {a}");
        assert!(a.get("warnings").is_none(), "{a}");
        assert_eq!(a["resistance_count"], 0, "{a}");
    }
    assert_eq!(count(&app, &w.t, "ipm_applications").await, 4);

    // QoI (FRAC 11): 2 a season. The first is fine, the second warns with the group, the
    // limit and the source; the third within 365 days is refused.
    let (s, a) = app
        .rest_as(&w.grower)
        .call(Method::POST, &treat, Some(&apply(&qoi, 200)))
        .await;
    assert_eq!(s, 201, "{a}");
    assert!(a.get("warnings").is_none(), "{a}");
    let (s, a) = app
        .rest_as(&w.grower)
        .call(Method::POST, &treat, Some(&apply(&qoi, 100)))
        .await;
    assert_eq!(s, 201, "{a}");
    assert_eq!(a["resistance_count"], 1, "{a}");
    let warning = a["warnings"][0].as_str().unwrap_or_default();
    assert!(
        warning.contains("FRAC 11")
            && warning.contains("2 in 365 days")
            && warning.contains("CropLife Australia"),
        "{warning}"
    );
    let before = count(&app, &w.t, "ipm_applications").await;
    let res = app
        .rest_auth(Some(&w.grower.bearer()))
        .post(&treat, &apply(&qoi, 0))
        .await;
    let err = assert_error(res, 422, "RESISTANCE_WARNING").await;
    assert_eq!(detail_fields(&err), vec!["active_ingredient".to_owned()]);
    let message = err["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("FRAC 11")
            && message.contains("2 applications in 365 days")
            && message.contains("CropLife Australia"),
        "{message}"
    );
    let reason = err["details"][0]["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("FRAC 11")
            && reason.contains("applied 2 times")
            && reason.contains("source: CropLife Australia"),
        "{reason}"
    );
    assert_eq!(count(&app, &w.t, "ipm_applications").await, before);
    // The sulphur in between did not reset or feed the QoI count, and the acknowledgement
    // still applies it, recorded.
    let mut ack = apply(&qoi, 0);
    ack["acknowledge_resistance"] = json!(true);
    let (s, over) = app
        .rest_as(&w.grower)
        .call(Method::POST, &treat, Some(&ack))
        .await;
    assert_eq!(s, 201, "{over}");
    assert_eq!(over["resistance_acknowledged"], true);
    assert_eq!(over["resistance_count"], 2);
    assert_eq!(count(&app, &w.t, "ipm_applications").await, before + 1);
}

#[tokio::test]
async fn the_tool_shows_the_same_rule_and_source() {
    let app = TestApp::full_env(&[("MCP_SERVER_ENABLED", "true")]).await;
    let w = world(&app, "riskmcp", 1).await;
    let p = w.plants[0];
    let key = app.api_key(&w.grower, Some(w.t.slug.as_str())).await;
    let sulphur = treatment(&app, "Sulphur", "FRAC M2", "FRAC Code List").await;
    let qoi = treatment(&app, "Azoxystrobin", "FRAC 11", "FRAC Code List").await;
    let args = |key: &str, back: i64| json!({"treatment_key": key, "plant_key": p, "applied_at": days_ago(back)});

    for back in [50, 35, 20, 5] {
        let (s, out) = tool(&app, &key, "apply_treatment", args(&sulphur, back)).await;
        assert_eq!(s, 200, "{back}: {out}");
        assert_eq!(out["data"]["resistance_count"], 0, "{out}");
    }
    for back in [120, 60] {
        let (s, out) = tool(&app, &key, "apply_treatment", args(&qoi, back)).await;
        assert_eq!(s, 200, "{out}");
    }
    let before = count(&app, &w.t, "ipm_applications").await;
    let (s, e) = tool(&app, &key, "apply_treatment", args(&qoi, 0)).await;
    assert_eq!(
        (s, e["error_code"].as_str()),
        (422, Some("validation.error")),
        "{e}"
    );
    assert_eq!(e["details"][0]["code"], "RESISTANCE_WARNING", "{e}");
    let reason = e["details"][0]["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("FRAC 11") && reason.contains("source: CropLife Australia"),
        "{reason}"
    );
    assert_eq!(count(&app, &w.t, "ipm_applications").await, before);
    let mut ack = args(&qoi, 0);
    ack["acknowledge_resistance"] = json!(true);
    let (s, ok) = tool(&app, &key, "apply_treatment", ack).await;
    assert_eq!(s, 200, "{ok}");
    assert_eq!(ok["data"]["resistance_acknowledged"], true);
    assert_eq!(count(&app, &w.t, "ipm_applications").await, before + 1);
}

#[tokio::test]
async fn the_table_names_every_rule_and_its_source() {
    let app = TestApp::full().await;
    let user = app.user("riskreader").await;
    assert_error(
        app.get("/api/v1/ipm/resistance-groups").await,
        401,
        "UNAUTHORIZED",
    )
    .await;
    let (s, table) = app
        .rest_as(&user)
        .call(Method::GET, "/api/v1/ipm/resistance-groups", None)
        .await;
    assert_eq!(s, 200, "{table}");
    let items = table["items"].as_array().expect("items");
    let row = |g: &str| {
        items
            .iter()
            .find(|r| r["group"] == g)
            .unwrap_or_else(|| panic!("{g}: {table}"))
            .clone()
    };
    let m = row("FRAC M01–M12");
    assert_eq!(
        (&m["counting"], &m["risk"], &m["limit"], &m["window_days"]),
        (&json!("outside"), &json!("low"), &Value::Null, &Value::Null)
    );
    assert_eq!(row("FRAC BM01–BM02")["counting"], "outside");
    let q = row("FRAC 11");
    assert_eq!(
        (&q["counting"], &q["risk"], &q["limit"], &q["window_days"]),
        (&json!("published"), &json!("high"), &json!(2), &json!(365))
    );
    assert!(q["source"].as_str().is_some_and(|s| s.contains("CropLife")));
    let irac = row("IRAC (every group)");
    assert_eq!(
        (&irac["counting"], &irac["limit"], &irac["window_days"]),
        (&json!("default"), &json!(3), &json!(90))
    );
    assert!(
        irac["source"]
            .as_str()
            .is_some_and(|s| s.contains("precautionary default") && s.contains("IRAC")),
        "{irac}"
    );
    for r in items {
        let src = r["source"].as_str().unwrap_or_default();
        assert!(
            src.len() > 40 && !src.to_lowercase().contains("kultiva"),
            "{r}"
        );
    }
}

/// A catalogue species only this test knows, in a fixture family.
async fn species_named(app: &TestApp, name: &str) -> String {
    crate::catalog::seeded(app).await;
    let family: String = sqlx::query_scalar(
        "SELECT id::text FROM platform.catalog_records WHERE kind = 'botanical_family' AND name = 'Fixturaceae'",
    )
    .fetch_one(app.state.platform_pool())
    .await
    .expect("family");
    let body: Map<String, Value> = json!({"scientific_name": name, "family_key": family})
        .as_object()
        .cloned()
        .unwrap_or_default();
    let created = kultiva::catalog::engine::service::create(
        &app.state,
        &kultiva::catalog::species::model::SPECIES,
        body,
    )
    .await
    .expect("species");
    created["key"].as_str().expect("key").to_owned()
}

#[tokio::test]
async fn the_ec_range_follows_the_crop_where_a_publication_gives_one() {
    let app = TestApp::full_env(&[("MCP_SERVER_ENABLED", "true")]).await;
    let base = global_fertilizer(&app, json!({"mixing_priority": 30})).await;
    let phal = species_named(&app, &format!("Phalaenopsis {}", letters())).await;
    let lettuce = species_named(&app, &format!("Lactuca sativa var. {}", letters())).await;
    let garden = app.tenant("riskec").await;
    let viewer = app.member(&garden, kultiva::auth::Role::Viewer).await;
    let key = app.api_key(&viewer, Some(garden.slug.as_str())).await;
    let protocol = |extra: Value| {
        let mut b = json!({"fertilizers": [{"fertilizer_key": base}], "target_volume_liters": 10,
                           "target_ec_ms": 0.9, "base_water_ec_ms": 0.1, "phase": "vegetative"});
        for (k, v) in extra.as_object().expect("object") {
            b[k] = v.clone();
        }
        b
    };
    let post = |body: Value| {
        let bearer = viewer.bearer();
        let app = &app;
        async move {
            let res = app
                .rest_auth(Some(&bearer))
                .post("/api/v1/calculations/mixing-protocol", &body)
                .await;
            let s = res.status().as_u16();
            let v: Value = res.json().await.expect("json");
            (s, v)
        }
    };

    // Orchid bark alone is the coco class: 1.6–2.0, no crop, no source.
    let (s, p) = post(protocol(json!({"substrate_type": "orchid_bark"}))).await;
    assert_eq!(s, 200, "{p}");
    assert_eq!(
        (p["ec_range_min_ms"].as_f64(), p["ec_range_max_ms"].as_f64()),
        (Some(1.6), Some(2.0))
    );
    assert_eq!(
        (&p["ec_range_basis"], &p["ec_range_source"]),
        (&json!("substrate_class"), &Value::Null)
    );
    // With the Phalaenopsis: its own 0.8–1.0, named, with the source; 0.9 is inside.
    let (s, p) = post(protocol(
        json!({"substrate_type": "orchid_bark", "species_key": phal}),
    ))
    .await;
    assert_eq!(s, 200, "{p}");
    assert_eq!(
        (p["ec_range_min_ms"].as_f64(), p["ec_range_max_ms"].as_f64()),
        (Some(0.8), Some(1.0))
    );
    assert_eq!(
        (&p["ec_range_basis"], &p["ec_range_crop"]),
        (&json!("crop"), &json!("Phalaenopsis"))
    );
    assert!(
        p["ec_range_source"]
            .as_str()
            .is_some_and(|s| s.contains("Phalaenopsis")),
        "{p}"
    );
    assert_eq!(p["substrate_class"], "coco");
    // 1.8 for a Phalaenopsis is above its range: the protocol says so.
    let (s, p) = post(protocol(
        json!({"substrate_type": "orchid_bark", "species_key": phal, "target_ec_ms": 1.8}),
    ))
    .await;
    assert_eq!(s, 200, "{p}");
    assert_eq!(p["valid"], false, "{p}");
    assert!(
        p["warnings"]
            .as_array()
            .expect("warnings")
            .iter()
            .any(|w| w["code"] == "target_above_range"),
        "{p}"
    );
    // Hydroponic lettuce: 1.2–1.8 (the hydro class says 1.6–2.4); in soil the class's row.
    let (s, p) = post(protocol(
        json!({"substrate_type": "hydro_solution", "species_key": lettuce, "target_ec_ms": 1.5}),
    ))
    .await;
    assert_eq!(s, 200, "{p}");
    assert_eq!(
        (p["ec_range_min_ms"].as_f64(), p["ec_range_max_ms"].as_f64()),
        (Some(1.2), Some(1.8))
    );
    assert!(
        p["ec_range_source"]
            .as_str()
            .is_some_and(|s| s.contains("EDIS")),
        "{p}"
    );
    let (s, p) = post(protocol(
        json!({"substrate_type": "soil", "species_key": lettuce}),
    ))
    .await;
    assert_eq!(s, 200, "{p}");
    assert_eq!(
        (p["ec_range_min_ms"].as_f64(), p["ec_range_max_ms"].as_f64()),
        (Some(0.8), Some(1.4))
    );
    assert_eq!(p["ec_range_basis"], "substrate_class");
    // An unknown species is a 404 naming the field; a null one is refused.
    let res = app
        .rest_auth(Some(&viewer.bearer()))
        .post(
            "/api/v1/calculations/mixing-protocol",
            &protocol(json!({"species_key": uuid::Uuid::now_v7()})),
        )
        .await;
    let err = assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    assert_eq!(detail_fields(&err), ["body.species_key"]);
    let res = app
        .rest_auth(Some(&viewer.bearer()))
        .post(
            "/api/v1/calculations/mixing-protocol",
            &protocol(json!({"species_key": null})),
        )
        .await;
    let err = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(detail_fields(&err), ["body.species_key"]);
    // The tool answers the same range.
    let (s, t) = tool(
        &app,
        &key,
        "calculate_mixing_protocol",
        protocol(json!({"substrate_type": "orchid_bark", "species_key": phal})),
    )
    .await;
    assert_eq!(s, 200, "{t}");
    assert_eq!(t["data"]["ec_range_max_ms"].as_f64(), Some(1.0), "{t}");
    assert_eq!(t["data"]["ec_range_basis"], "crop");
}
