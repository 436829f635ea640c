//! Pest and disease management: inspections (plant and location, findings from the catalogue),
//! treatment applications (safety intervals, the resistance rule and its recorded override),
//! bad input that writes nothing, roles, two-tenant isolation and the MCP tools
//! (`create_inspection` / `get_plant_inspections` pair, `apply_treatment`).

use kultiva::auth::Role;
use kultiva::tenancy::TenantRecord;
use reqwest::Method;
use serde_json::{Value, json};
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use crate::garden::{bed, count, phases, species};
pub use crate::support::tenant_path as path;
use crate::support::{TestApp, TestUser, assert_error, detail_fields};

pub const SOAP: &str = "Fixture soap spray"; // chemical, potassium fixturate, 3 days
pub const MITES: &str = "Fixture predatory mites"; // a release of beneficials: no label, 0 days

/// A catalogue record's key by kind and natural-key name (the fixture catalogue is loaded).
pub async fn catalogue_key(app: &TestApp, kind: &str, name: &str) -> String {
    crate::catalog::seeded(app).await;
    sqlx::query_scalar(
        "SELECT id::text FROM platform.catalog_records WHERE kind = $1 AND name = $2",
    )
    .bind(kind)
    .bind(name)
    .fetch_one(app.state.platform_pool())
    .await
    .unwrap_or_else(|e| panic!("{kind} {name}: {e}"))
}

/// A garden with one member per role, a location and `n` tomato plants in its last (harvest)
/// phase at that location.
pub struct World {
    pub t: TenantRecord,
    pub viewer: TestUser,
    pub grower: TestUser,
    pub admin: TestUser,
    pub location: Uuid,
    pub plants: Vec<Uuid>,
}

pub async fn world(app: &TestApp, prefix: &str, n: usize) -> World {
    let t = app.tenant(prefix).await;
    let viewer = app.member(&t, Role::Viewer).await;
    let grower = app.member(&t, Role::Grower).await;
    let admin = app.member(&t, Role::Admin).await;
    let tomato = species(app, "Fixtura tomatoides").await;
    let last = phases(app, &tomato).await.pop().expect("phase");
    let (_, location, _) = bed(app, &t, &format!("{prefix} bed"), 0).await;
    let mut plants = Vec::new();
    for i in 0..n {
        let new = kultiva::garden::plants::model::NewPlant {
            species_key: tomato.clone(),
            name: Some(format!("Tomato {i}")),
            cultivar_key: None,
            location_key: Some(location),
            slot_key: None,
            substrate_batch_key: None,
            planted_on: None,
            phase_key: Some(last.clone()),
            notes: None,
            start_phase: kultiva::garden::plants::model::StartPhase::Phase(last.clone()),
        };
        let p = kultiva::garden::plants::service::create_plant(&app.state, &t, &new, "test", true)
            .await
            .expect("plant");
        plants.push(p.key);
    }
    World {
        t,
        viewer,
        grower,
        admin,
        location,
        plants,
    }
}

/// Calls a tool through the tool server's REST face with a garden-scoped API key.
pub async fn tool(app: &TestApp, key: &str, name: &str, args: Value) -> (u16, Value) {
    app.rest_key(key)
        .call(
            Method::POST,
            &format!("/api/v1/mcp/tools/{name}"),
            Some(&args),
        )
        .await
}

pub fn days_ago(n: i64) -> String {
    let t = OffsetDateTime::now_utc() - Duration::days(n);
    t.format(&time::format_description::well_known::Rfc3339)
        .expect("rfc3339")
}

#[tokio::test]
async fn inspections_of_plants_and_locations() {
    let app = TestApp::full_env(&[("MCP_SERVER_ENABLED", "true")]).await;
    let w = world(&app, "ipmins", 1).await;
    let p = w.plants[0];
    let aphid = catalogue_key(&app, "pest", "Fixturia vorax").await;
    let base = path(&w.t, "ipm/inspections");

    let body = json!({
        "plant_key": p, "pressure_level": "medium", "symptoms_observed": ["sticky leaves"],
        "findings": [{"pest_key": aphid, "severity": "high", "confidence": 0.8,
                      "affected_plant_part": "leaf", "affected_share": 0.25,
                      "symptom": "colonies under the leaves"}],
        "photo_refs": ["photos/abc.jpg"], "notes": "north side worst"
    });
    let (s, ins) = app
        .rest_as(&w.grower)
        .call(Method::POST, &base, Some(&body))
        .await;
    assert_eq!(s, 201, "{ins}");
    assert_eq!(ins["pressure_level"], "medium");
    assert_eq!(ins["detected_pest_keys"], json!([aphid]));
    assert_eq!(ins["findings"][0]["confidence"], 0.8);
    assert_eq!(ins["photo_refs"], json!(["photos/abc.jpg"]));
    assert_eq!(ins["inspector"], format!("user:{}", w.grower.key));
    let k = ins["key"].as_str().expect("key").to_owned();

    // A location inspection shows up for the plant standing there.
    let (s, _) = app
        .rest_as(&w.admin)
        .call(
            Method::POST,
            &base,
            Some(&json!({"location_key": w.location, "pressure_level": "low"})),
        )
        .await;
    assert_eq!(s, 201);
    let (s, page) = app
        .rest_as(&w.viewer)
        .call(Method::GET, &format!("{base}?plant={p}"), None)
        .await;
    assert_eq!((s, page["total"].as_i64()), (200, Some(2)), "{page}");
    let (s, page) = app
        .rest_as(&w.viewer)
        .call(
            Method::GET,
            &format!("{base}?location={}", w.location),
            None,
        )
        .await;
    assert_eq!((s, page["total"].as_i64()), (200, Some(1)));
    let (s, one) = app
        .rest_as(&w.viewer)
        .call(Method::GET, &format!("{base}/{k}"), None)
        .await;
    assert_eq!((s, one["key"].as_str()), (200, Some(k.as_str())));

    // Bad input: 422 with field details, nothing written.
    let before = count(&app, &w.t, "ipm_inspections").await;
    for (bad, field) in [
        (
            json!({"plant_key": p, "findings": [{"pest_key": aphid, "confidence": 1.5}]}),
            "body.findings[0].confidence",
        ),
        (
            json!({"plant_key": p, "findings": [{"pest_key": aphid, "affected_share": -0.1}]}),
            "body.findings[0].affected_share",
        ),
        (
            json!({"plant_key": p, "findings": [{"severity": "high"}]}),
            "body.findings[0].pest_key",
        ),
        (
            json!({"plant_key": p, "pressure_level": "extreme"}),
            "body.pressure_level",
        ),
        (
            json!({"plant_key": p, "location_key": w.location}),
            "body.plant_key",
        ),
        (json!({}), "body.plant_key"),
        (
            json!({"plant_key": p, "inspected_at": days_ago(-2)}),
            "body.inspected_at",
        ),
        (json!({"plant_key": p, "colour": "red"}), "body.colour"),
    ] {
        let res = app
            .rest_auth(Some(&w.grower.bearer()))
            .post(&base, &bad)
            .await;
        let err = assert_error(res, 422, "VALIDATION_ERROR").await;
        assert!(
            detail_fields(&err).contains(&field.to_owned()),
            "{bad}: {err}"
        );
    }
    // Unknown catalogue keys and another garden's plant: 404 naming the field.
    let other = world(&app, "ipminsb", 1).await;
    for (bad, field) in [
        (
            json!({"plant_key": p, "findings": [{"pest_key": Uuid::now_v7()}]}),
            "body.findings[0].pest_key",
        ),
        (
            json!({"plant_key": p, "detected_disease_keys": [Uuid::now_v7()]}),
            "body.detected_disease_keys[0]",
        ),
        (json!({"plant_key": other.plants[0]}), "body.plant_key"),
        (json!({"location_key": other.location}), "body.location_key"),
    ] {
        let res = app
            .rest_auth(Some(&w.grower.bearer()))
            .post(&base, &bad)
            .await;
        let err = assert_error(res, 404, "ENTITY_NOT_FOUND").await;
        assert_eq!(detail_fields(&err), vec![field.to_owned()], "{bad}");
    }
    assert_eq!(count(&app, &w.t, "ipm_inspections").await, before);
    assert_eq!(count(&app, &other.t, "ipm_inspections").await, 0);

    // Roles: a viewer cannot write; B's admin sees nothing of A.
    let res = app
        .rest_auth(Some(&w.viewer.bearer()))
        .post(&base, &body)
        .await;
    assert_error(res, 403, "FORBIDDEN").await;
    let res = app
        .rest_auth(Some(&other.admin.bearer()))
        .get(&format!("{base}/{k}"))
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    let (s, _) = app
        .rest_as(&other.admin)
        .call(
            Method::GET,
            &format!("{}/{k}", path(&other.t, "ipm/inspections")),
            None,
        )
        .await;
    assert_eq!(s, 404);
    let (s, _) = app
        .rest_as(&other.admin)
        .call(
            Method::GET,
            &format!("{}?plant={p}", path(&other.t, "ipm/inspections")),
            None,
        )
        .await;
    assert_eq!(s, 404);
    assert_eq!(count(&app, &w.t, "ipm_inspections").await, before);
}

#[tokio::test]
async fn treatments_start_intervals_and_the_resistance_rule() {
    let app = TestApp::full_env(&[("MCP_SERVER_ENABLED", "true")]).await;
    let w = world(&app, "ipmtr", 2).await;
    let soap = catalogue_key(&app, "treatment", SOAP).await;
    let mites = catalogue_key(&app, "treatment", MITES).await;
    let base = path(&w.t, "ipm/treatments");
    let p = w.plants[0];

    // A location application touches every plant there; the interval is 3 days.
    let (s, a) = app
        .rest_as(&w.grower)
        .call(
            Method::POST,
            &base,
            Some(
                &json!({"treatment_key": soap, "location_key": w.location, "dose": 20,
                     "dose_unit": "ml_per_l", "applied_at": days_ago(0)}),
            ),
        )
        .await;
    assert_eq!(s, 201, "{a}");
    assert_eq!(a["plants"].as_array().map(Vec::len), Some(2));
    assert_eq!(a["active_ingredient"], "potassium fixturate");
    assert_eq!(a["safety_interval_days"], 3);
    assert_eq!(a["method"], "spray");
    assert_eq!(a["resistance_acknowledged"], false);
    let today = OffsetDateTime::now_utc().date();
    assert_eq!(a["plants"][0]["applied_on"], today.to_string());
    assert_eq!(
        a["plants"][0]["last_blocked_day"],
        (today + Duration::days(2)).to_string()
    );
    assert_eq!(
        a["plants"][0]["safe_on"],
        (today + Duration::days(3)).to_string()
    );
    // A treatment without an ingredient is never counted, and has no interval.
    let (s, m) = app
        .rest_as(&w.grower)
        .call(
            Method::POST,
            &base,
            Some(&json!({"treatment_key": mites, "plant_keys": [p]})),
        )
        .await;
    assert_eq!(s, 201, "{m}");
    assert_eq!(m["plants"][0]["last_blocked_day"], Value::Null);

    // The window ends on the new application's day and counts the 89 days before it: p holds
    // soap today (later than the backdated ones below, so not counted for them).
    // Day -60: no earlier soap; day -30: one (fine); day -10: two (accepted, warning);
    // today: -60, -30, -10 and today's = 4 ≥ 3 → RESISTANCE_WARNING.
    let soap_on =
        |days: i64| json!({"treatment_key": soap, "plant_keys": [p], "applied_at": days_ago(days)});
    for back in [60, 30] {
        let (s, two) = app
            .rest_as(&w.grower)
            .call(Method::POST, &base, Some(&soap_on(back)))
            .await;
        assert_eq!(s, 201);
        assert!(two.get("warnings").is_none(), "{two}");
    }
    let (s, three) = app
        .rest_as(&w.grower)
        .call(Method::POST, &base, Some(&soap_on(10)))
        .await;
    assert_eq!(s, 201);
    assert_eq!(three["resistance_count"], 2);
    assert!(
        three["warnings"][0]
            .as_str()
            .is_some_and(|t| t.contains("one more")),
        "{three}"
    );
    let before = count(&app, &w.t, "ipm_applications").await;
    let res = app
        .rest_auth(Some(&w.grower.bearer()))
        .post(&base, &soap_on(0))
        .await;
    let err = assert_error(res, 422, "RESISTANCE_WARNING").await;
    assert_eq!(
        detail_fields(&err),
        vec!["active_ingredient".to_owned()],
        "{err}"
    );
    assert!(
        err["details"][0]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("4 times")),
        "{err}"
    );
    assert_eq!(count(&app, &w.t, "ipm_applications").await, before);
    // The other plant had one soap only: not refused (the rule is per plant).
    let (s, _) = app
        .rest_as(&w.grower)
        .call(
            Method::POST,
            &base,
            Some(&json!({"treatment_key": soap, "plant_keys": [w.plants[1]]})),
        )
        .await;
    assert_eq!(s, 201);
    // The override is recorded.
    let mut ack = soap_on(0);
    ack["acknowledge_resistance"] = json!(true);
    let (s, over) = app
        .rest_as(&w.admin)
        .call(Method::POST, &base, Some(&ack))
        .await;
    assert_eq!(s, 201, "{over}");
    assert_eq!(over["resistance_acknowledged"], true);
    assert_eq!(over["resistance_count"], 4);
    let k = over["key"].as_str().expect("key").to_owned();
    let (s, got) = app
        .rest_as(&w.viewer)
        .call(Method::GET, &format!("{base}/{k}"), None)
        .await;
    assert_eq!(
        (s, got["resistance_acknowledged"].as_bool()),
        (200, Some(true))
    );
    let (s, page) = app
        .rest_as(&w.viewer)
        .call(Method::GET, &format!("{base}?plant={p}"), None)
        .await;
    assert_eq!((s, page["total"].as_i64()), (200, Some(6)), "{page}");

    // Bad input writes nothing.
    let before = count(&app, &w.t, "ipm_applications").await;
    let other = world(&app, "ipmtrb", 1).await;
    for (bad, status, field) in [
        (json!({"treatment_key": soap}), 422, "body.plant_keys"),
        (
            json!({"treatment_key": soap, "plant_keys": []}),
            422,
            "body.plant_keys",
        ),
        (
            json!({"treatment_key": soap, "plant_keys": [p], "dose": -1, "dose_unit": "ml"}),
            422,
            "body.dose",
        ),
        (
            json!({"treatment_key": soap, "plant_keys": [p], "dose": 5}),
            422,
            "body.dose_unit",
        ),
        (
            json!({"treatment_key": soap, "plant_keys": [p], "applied_at": days_ago(-3)}),
            422,
            "body.applied_at",
        ),
        (
            json!({"treatment_key": soap, "plant_keys": ["nope"]}),
            422,
            "body.plant_keys[0]",
        ),
        (
            json!({"treatment_key": Uuid::now_v7(), "plant_keys": [p]}),
            404,
            "body.treatment_key",
        ),
        (
            json!({"treatment_key": soap, "plant_keys": [p, other.plants[0]]}),
            404,
            "body.plant_keys[1]",
        ),
        (
            json!({"treatment_key": soap, "location_key": other.location}),
            404,
            "body.location_key",
        ),
    ] {
        let res = app
            .rest_auth(Some(&w.grower.bearer()))
            .post(&base, &bad)
            .await;
        let code = if status == 404 {
            "ENTITY_NOT_FOUND"
        } else {
            "VALIDATION_ERROR"
        };
        let err = assert_error(res, status, code).await;
        assert!(
            detail_fields(&err).contains(&field.to_owned()),
            "{bad}: {err}"
        );
    }
    assert_eq!(count(&app, &w.t, "ipm_applications").await, before);
    assert_eq!(count(&app, &other.t, "ipm_applications").await, 0);

    // Roles and isolation.
    let res = app
        .rest_auth(Some(&w.viewer.bearer()))
        .post(&base, &soap_on(0))
        .await;
    assert_error(res, 403, "FORBIDDEN").await;
    let res = app
        .rest_auth(Some(&other.admin.bearer()))
        .get(&format!("{}/{k}", path(&other.t, "ipm/treatments")))
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    let res = app.rest_auth(Some(&other.admin.bearer())).get(&base).await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
}

#[tokio::test]
async fn inspection_and_treatment_tools() {
    let app = TestApp::full_env(&[("MCP_SERVER_ENABLED", "true")]).await;
    let w = world(&app, "ipmtool", 1).await;
    let other = world(&app, "ipmtoolb", 1).await;
    let p = w.plants[0].to_string();
    let aphid = catalogue_key(&app, "pest", "Fixturia vorax").await;
    let soap = catalogue_key(&app, "treatment", SOAP).await;
    let gk = app.api_key(&w.grower, Some(w.t.slug.as_str())).await;
    let vk = app.api_key(&w.viewer, Some(w.t.slug.as_str())).await;
    let bk = app.api_key(&other.admin, Some(other.t.slug.as_str())).await;

    // Dry run writes nothing; the real call is read back by get_plant_inspections.
    let args = json!({"plant_key": p, "pressure_level": "high",
                      "findings": [{"pest_key": aphid, "confidence": 0.9, "severity": "medium"}]});
    let mut dry = args.clone();
    dry["dry_run"] = json!(true);
    let (s, out) = tool(&app, &gk, "create_inspection", dry).await;
    assert_eq!(s, 200, "{out}");
    assert_eq!(count(&app, &w.t, "ipm_inspections").await, 0);
    let (s, out) = tool(&app, &gk, "create_inspection", args.clone()).await;
    assert_eq!(s, 200, "{out}");
    let ik = out["data"]["inspection_key"]
        .as_str()
        .expect("key")
        .to_owned();
    assert!(
        out["data"]["inspector"]
            .as_str()
            .is_some_and(|i| i.starts_with("mcp:"))
    );
    let (s, read) = tool(&app, &vk, "get_plant_inspections", json!({"plant_key": p})).await;
    assert_eq!(s, 200, "{read}");
    assert_eq!(read["data"]["total"], 1);
    assert_eq!(read["data"]["items"][0]["inspection_key"], ik.as_str());
    assert_eq!(read["data"]["items"][0]["pressure_level"], "high");
    assert_eq!(
        read["data"]["items"][0]["findings"][0]["pest_key"],
        aphid.as_str()
    );
    assert_eq!(read["data"]["items"][0]["findings"][0]["confidence"], 0.9);

    // Errors: out-of-range confidence, unknown pest, a viewer writing, another garden's plant.
    let (s, e) = tool(
        &app,
        &gk,
        "create_inspection",
        json!({"plant_key": p, "findings": [{"pest_key": aphid, "confidence": 2}]}),
    )
    .await;
    assert_eq!(
        (s, e["error_code"].as_str()),
        (422, Some("validation.error")),
        "{e}"
    );
    let (s, e) = tool(
        &app,
        &gk,
        "create_inspection",
        json!({"plant_key": p, "findings": [{"pest_key": Uuid::now_v7()}]}),
    )
    .await;
    assert_eq!(
        (s, e["error_code"].as_str()),
        (404, Some("not_found")),
        "{e}"
    );
    let (s, e) = tool(&app, &vk, "create_inspection", args.clone()).await;
    assert_eq!(
        (s, e["error_code"].as_str()),
        (403, Some("permission.denied")),
        "{e}"
    );
    let (s, e) = tool(&app, &bk, "get_plant_inspections", json!({"plant_key": p})).await;
    assert_eq!(
        (s, e["error_code"].as_str()),
        (404, Some("not_found")),
        "{e}"
    );
    let (s, e) = tool(&app, &bk, "create_inspection", args.clone()).await;
    assert_eq!(
        (s, e["error_code"].as_str()),
        (404, Some("not_found")),
        "{e}"
    );
    assert_eq!(count(&app, &w.t, "ipm_inspections").await, 1);
    assert_eq!(count(&app, &other.t, "ipm_inspections").await, 0);

    // apply_treatment: three soaps (days 0, 10, 20 back), the fourth refused, then acknowledged.
    for back in [20, 10, 5] {
        let (s, out) = tool(
            &app,
            &gk,
            "apply_treatment",
            json!({"treatment_key": soap, "plant_key": p, "applied_at": days_ago(back)}),
        )
        .await;
        assert_eq!(s, 200, "{out}");
    }
    let (s, e) = tool(
        &app,
        &gk,
        "apply_treatment",
        json!({"treatment_key": soap, "plant_key": p}),
    )
    .await;
    assert_eq!(
        (s, e["error_code"].as_str()),
        (422, Some("validation.error")),
        "{e}"
    );
    assert_eq!(e["details"][0]["code"], "RESISTANCE_WARNING");
    assert_eq!(e["details"][0]["field"], "active_ingredient");
    assert_eq!(count(&app, &w.t, "ipm_applications").await, 3);
    let (s, dry) = tool(
        &app,
        &gk,
        "apply_treatment",
        json!({"treatment_key": soap, "plant_key": p, "acknowledge_resistance": true, "dry_run": true}),
    )
    .await;
    assert_eq!(s, 200, "{dry}");
    assert_eq!(count(&app, &w.t, "ipm_applications").await, 3);
    let (s, ok) = tool(
        &app,
        &gk,
        "apply_treatment",
        json!({"treatment_key": soap, "plant_key": p, "acknowledge_resistance": true,
               "idempotency_key": "soap-4"}),
    )
    .await;
    assert_eq!(s, 200, "{ok}");
    assert_eq!(ok["data"]["resistance_acknowledged"], true);
    // The same idempotency key replays instead of applying again.
    let (s, _) = tool(
        &app,
        &gk,
        "apply_treatment",
        json!({"treatment_key": soap, "plant_key": p, "acknowledge_resistance": true,
               "idempotency_key": "soap-4"}),
    )
    .await;
    assert_eq!(s, 200);
    assert_eq!(count(&app, &w.t, "ipm_applications").await, 4);
    let (s, e) = tool(
        &app,
        &bk,
        "apply_treatment",
        json!({"treatment_key": soap, "plant_key": p}),
    )
    .await;
    assert_eq!(
        (s, e["error_code"].as_str()),
        (404, Some("not_found")),
        "{e}"
    );
    let (s, e) = tool(
        &app,
        &vk,
        "apply_treatment",
        json!({"treatment_key": soap, "plant_key": p}),
    )
    .await;
    assert_eq!(
        (s, e["error_code"].as_str()),
        (403, Some("permission.denied")),
        "{e}"
    );
    assert_eq!(count(&app, &other.t, "ipm_applications").await, 0);
}

/// Arguments that make the IPM and harvest tools succeed in `tenant` (for the tool matrix):
/// one plant in its harvest phase, a pest and a treatment of the fixture catalogue.
pub async fn tool_args(app: &TestApp, tenant: &TenantRecord) -> Vec<(&'static str, Value)> {
    let tomato = species(app, "Fixtura tomatoides").await;
    let last = phases(app, &tomato).await.pop().expect("phase");
    let new = kultiva::garden::plants::model::NewPlant {
        species_key: tomato,
        name: Some("Matrix tomato".into()),
        cultivar_key: None,
        location_key: None,
        slot_key: None,
        substrate_batch_key: None,
        planted_on: None,
        phase_key: Some(last.clone()),
        notes: None,
        start_phase: kultiva::garden::plants::model::StartPhase::Phase(last),
    };
    let p = kultiva::garden::plants::service::create_plant(&app.state, tenant, &new, "test", true)
        .await
        .expect("plant")
        .key
        .to_string();
    let aphid = catalogue_key(app, "pest", "Fixturia vorax").await;
    let soap = catalogue_key(app, "treatment", SOAP).await;
    vec![
        ("get_plant_inspections", json!({"plant_key": p})),
        ("get_harvest_readiness", json!({"limit": 10})),
        (
            "create_inspection",
            json!({"plant_key": p, "findings": [{"pest_key": aphid, "confidence": 0.5}]}),
        ),
        (
            "apply_treatment",
            json!({"treatment_key": soap, "plant_key": p}),
        ),
        (
            "record_harvest",
            json!({"plant_key": p, "wet_weight_g": 10}),
        ),
    ]
}

// ---------- issue 24: per-crop intervals, UTC days, resistance by mode of action ----------

/// IRAC 3A, "Fixturins": 5 days for Fixtura tomatoides, 10 for every other crop.
pub const PYRETHRUM: &str = "Fixture pyrethrum";
/// IRAC 3A too, "Deltafixrin": 2 days.
pub const DELTAFIX: &str = "Fixture deltafix";
/// A release of beneficial nematodes (with an active ingredient).
pub const NEMATODES: &str = "Fixture nematodes";

/// A plant of `species` at the world's location, without a phase.
async fn plant_of(app: &TestApp, w: &World, species_name: &str, name: &str) -> Uuid {
    let new = kultiva::garden::plants::model::NewPlant {
        species_key: species(app, species_name).await,
        name: Some(name.to_owned()),
        cultivar_key: None,
        location_key: Some(w.location),
        slot_key: None,
        substrate_batch_key: None,
        planted_on: None,
        phase_key: None,
        notes: None,
        start_phase: kultiva::garden::plants::model::StartPhase::None,
    };
    kultiva::garden::plants::service::create_plant(&app.state, &w.t, &new, "test", true)
        .await
        .expect("plant")
        .key
}

fn utc_today() -> time::Date {
    OffsetDateTime::now_utc().date()
}

/// `HH:MM` local time on the UTC day `back` days ago, at `offset` (e.g. "-08:00").
fn local_at(back: i64, time_and_offset: &str) -> String {
    format!("{}T{time_and_offset}", utc_today() - Duration::days(back))
}

#[tokio::test]
async fn intervals_follow_the_crop_and_count_from_the_utc_day() {
    let app = TestApp::full().await;
    let w = world(&app, "cropkarenz", 1).await;
    let tomato = w.plants[0];
    let probus = plant_of(&app, &w, "Probus perennis", "Probus").await;
    let pyrethrum = catalogue_key(&app, "treatment", PYRETHRUM).await;
    let treat = path(&w.t, "ipm/treatments");
    let batches = path(&w.t, "harvest/batches");

    // 20:00 at -08:00, 21 days back: 04:00 UTC the next day, so the UTC day is 20 days back.
    let (s, a) = app
        .rest_as(&w.grower)
        .call(
            Method::POST,
            &treat,
            Some(
                &json!({"treatment_key": pyrethrum, "plant_keys": [tomato, probus],
                     "applied_at": local_at(21, "20:00:00-08:00")}),
            ),
        )
        .await;
    assert_eq!(s, 201, "{a}");
    let applied_on = utc_today() - Duration::days(20);
    let touched = |plant: Uuid| {
        a["plants"]
            .as_array()
            .expect("plants")
            .iter()
            .find(|p| p["plant_key"] == plant.to_string())
            .cloned()
            .expect("touched")
    };
    let (t, p) = (touched(tomato), touched(probus));
    assert_eq!(t["applied_on"], applied_on.to_string(), "{a}");
    // The tomato's crop is listed (5 days), the other plant's is not: the every-crop label (10).
    assert_eq!(t["safety_interval_days"], 5, "{a}");
    assert_eq!(
        t["interval_source"],
        "Fixpyr (Fixture register): label crop tomatoides"
    );
    assert_eq!(t["safe_on"], (applied_on + Duration::days(5)).to_string());
    assert_eq!(p["safety_interval_days"], 10, "{a}");
    assert_eq!(
        p["interval_source"],
        "Fixpyr (Fixture register): label crop every other crop"
    );
    assert_eq!(p["safe_on"], (applied_on + Duration::days(10)).to_string());
    assert_eq!(a["safety_interval_days"], 10);
    assert_eq!(a["resistance_groups"], json!(["IRAC 3A"]));
    // The stored application reads back the same.
    let key = a["key"].as_str().expect("key");
    let (s, back) = app
        .rest_as(&w.viewer)
        .call(Method::GET, &format!("{treat}/{key}"), None)
        .await;
    assert_eq!(s, 200, "{back}");
    assert_eq!(back["plants"], a["plants"]);

    // The gate per crop: the tomato's last blocked day is refused, the next allowed; the other
    // plant is still blocked then, with its own days and source in the reason.
    let harvest = |plant: Uuid, day: time::Date| json!({"plant_key": plant, "wet_weight_g": 50, "harvest_date": day.to_string()});
    let res = app
        .rest_auth(Some(&w.grower.bearer()))
        .post(&batches, &harvest(tomato, applied_on + Duration::days(4)))
        .await;
    let err = assert_error(res, 422, "KARENZ_VIOLATION").await;
    assert_eq!(detail_fields(&err), vec!["active_ingredient".to_owned()]);
    let (s, b) = app
        .rest_as(&w.grower)
        .call(
            Method::POST,
            &batches,
            Some(&harvest(tomato, applied_on + Duration::days(5))),
        )
        .await;
    assert_eq!(s, 201, "{b}");
    let res = app
        .rest_auth(Some(&w.grower.bearer()))
        .post(&batches, &harvest(probus, applied_on + Duration::days(9)))
        .await;
    let err = assert_error(res, 422, "KARENZ_VIOLATION").await;
    let reason = err["details"][0]["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("10 day(s) for this crop"), "{reason}");
    assert!(
        reason.contains("Fixpyr (Fixture register): label crop every other crop"),
        "{reason}"
    );
    let (s, b) = app
        .rest_as(&w.grower)
        .call(
            Method::POST,
            &batches,
            Some(&harvest(probus, applied_on + Duration::days(10))),
        )
        .await;
    assert_eq!(s, 201, "{b}");
    assert_eq!(count(&app, &w.t, "harvest_batches").await, 2);
}

#[tokio::test]
async fn a_spray_west_or_east_of_utc_counts_from_its_utc_day_in_a_garden_without_a_zone() {
    let app = TestApp::full().await;
    let w = world(&app, "utcday", 2).await;
    let (west, east) = (w.plants[0], w.plants[1]);
    let deltafix = catalogue_key(&app, "treatment", DELTAFIX).await; // 2 days
    let treat = path(&w.t, "ipm/treatments");
    let batches = path(&w.t, "harvest/batches");

    // West: 20:00 -08:00 on day D is 04:00 UTC on D+1. East: 08:00 +09:00 on D is 23:00 UTC
    // on D-1. (D = 10 days back.)
    for (plant, at, utc_back) in [
        (west, local_at(10, "20:00:00-08:00"), 9),
        (east, local_at(10, "08:00:00+09:00"), 11),
    ] {
        let (s, a) = app
            .rest_as(&w.grower)
            .call(
                Method::POST,
                &treat,
                Some(&json!({"treatment_key": deltafix, "plant_keys": [plant], "applied_at": at})),
            )
            .await;
        assert_eq!(s, 201, "{a}");
        let on = utc_today() - Duration::days(utc_back);
        assert_eq!(a["plants"][0]["applied_on"], on.to_string(), "{at}: {a}");
        assert_eq!(
            a["plants"][0]["last_blocked_day"],
            (on + Duration::days(1)).to_string()
        );
        assert_eq!(
            a["plants"][0]["safe_on"],
            (on + Duration::days(2)).to_string()
        );
    }
    // West: a harvest on the same UTC day as the spray, and on the day after, are both blocked
    // (counted from the local day, the day after was allowed); the UTC day after that is free.
    let west_on = utc_today() - Duration::days(9);
    for (day, status) in [
        (west_on, 422),
        (west_on + Duration::days(1), 422),
        (west_on + Duration::days(2), 201),
    ] {
        let (s, b) = app
            .rest_as(&w.grower)
            .call(
                Method::POST,
                &batches,
                Some(
                    &json!({"plant_key": west, "wet_weight_g": 5, "harvest_date": day.to_string()}),
                ),
            )
            .await;
        assert_eq!(s, status, "{day}: {b}");
    }
    // A harvest_date given as an instant counts as its UTC day too: 20:00 -08:00 the evening
    // before the UTC day the spray was on is already that day (blocked).
    let (s, b) = app.rest_as(&w.grower).call(Method::POST, &batches, Some(&json!({"plant_key": west, "wet_weight_g": 5,
                                   "harvest_date": format!("{}T20:00:00-08:00", west_on - Duration::days(1))}))).await;
    assert_eq!(s, 422, "{b}");
    assert_eq!(b["error_code"], "KARENZ_VIOLATION");

    // A time without an offset is refused, naming the field, and writes nothing.
    let before = count(&app, &w.t, "ipm_applications").await;
    let (s, e) = app
        .rest_as(&w.grower)
        .call(
            Method::POST,
            &treat,
            Some(&json!({"treatment_key": deltafix, "plant_keys": [west],
                                   "applied_at": local_at(3, "20:00:00")})),
        )
        .await;
    assert_eq!(s, 422, "{e}");
    assert_eq!(e["details"][0]["field"], "body.applied_at");
    assert!(
        e["details"][0]["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("offset"),
        "{e}"
    );
    assert_eq!(count(&app, &w.t, "ipm_applications").await, before);
    let batches_before = count(&app, &w.t, "harvest_batches").await;
    let (s, e) = app
        .rest_as(&w.grower)
        .call(
            Method::POST,
            &batches,
            Some(&json!({"plant_key": east, "wet_weight_g": 5,
                                   "harvest_date": local_at(1, "10:00:00")})),
        )
        .await;
    assert_eq!(s, 422, "{e}");
    assert_eq!(e["details"][0]["field"], "body.harvest_date");
    assert!(
        e["details"][0]["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("offset"),
        "{e}"
    );
    assert_eq!(count(&app, &w.t, "harvest_batches").await, batches_before);
}

#[tokio::test]
async fn resistance_counts_the_mode_of_action_and_never_releases() {
    let app = TestApp::full().await;
    let w = world(&app, "modeofaction", 1).await;
    let p = w.plants[0];
    let deltafix = catalogue_key(&app, "treatment", DELTAFIX).await;
    let pyrethrum = catalogue_key(&app, "treatment", PYRETHRUM).await;
    let nematodes = catalogue_key(&app, "treatment", NEMATODES).await;
    let treat = path(&w.t, "ipm/treatments");
    let apply = |key: &str, back: i64| json!({"treatment_key": key, "plant_keys": [p], "applied_at": days_ago(back)});

    // Weekly releases of beneficial nematodes: never counted, never warned.
    for back in [28, 21, 14, 7, 0] {
        let (s, a) = app
            .rest_as(&w.grower)
            .call(Method::POST, &treat, Some(&apply(&nematodes, back)))
            .await;
        assert_eq!(s, 201, "{a}");
        assert!(a.get("warnings").is_none(), "{a}");
        assert_eq!(a["resistance_count"], 0);
    }
    // Deltamethrin-like twice, then a pyrethrum: the same group IRAC 3A, so the third is
    // accepted with the warning naming the group.
    for back in [30, 20] {
        let (s, a) = app
            .rest_as(&w.grower)
            .call(Method::POST, &treat, Some(&apply(&deltafix, back)))
            .await;
        assert_eq!(s, 201, "{a}");
    }
    let (s, a) = app
        .rest_as(&w.grower)
        .call(Method::POST, &treat, Some(&apply(&pyrethrum, 10)))
        .await;
    assert_eq!(s, 201, "{a}");
    assert_eq!(a["resistance_count"], 2, "{a}");
    let warning = a["warnings"][0].as_str().unwrap_or_default();
    assert!(warning.contains("IRAC 3A"), "{warning}");
    // A fourth of the group is refused, whichever product, and nothing is written.
    let before = count(&app, &w.t, "ipm_applications").await;
    let res = app
        .rest_auth(Some(&w.grower.bearer()))
        .post(&treat, &apply(&deltafix, 0))
        .await;
    let err = assert_error(res, 422, "RESISTANCE_WARNING").await;
    assert_eq!(detail_fields(&err), vec!["active_ingredient".to_owned()]);
    let reason = err["details"][0]["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("IRAC 3A") && reason.contains("applied 3 times"),
        "{reason}"
    );
    assert!(
        err["message"]
            .as_str()
            .unwrap_or_default()
            .contains("IRAC 3A"),
        "{err}"
    );
    assert_eq!(count(&app, &w.t, "ipm_applications").await, before);
    // Another group is unaffected: the soap (no group) counts by its ingredient.
    let soap = catalogue_key(&app, "treatment", SOAP).await;
    let (s, a) = app
        .rest_as(&w.grower)
        .call(Method::POST, &treat, Some(&apply(&soap, 0)))
        .await;
    assert_eq!(s, 201, "{a}");
    assert_eq!(a["resistance_count"], 0);
}

#[tokio::test]
async fn treatment_intervals_have_sources_in_rest_and_the_tool() {
    let app = TestApp::full_env(&[("MCP_SERVER_ENABLED", "true")]).await;
    let w = world(&app, "intervalsrc", 1).await;
    let pyrethrum = catalogue_key(&app, "treatment", PYRETHRUM).await;
    let tomato = species(&app, "Fixtura tomatoides").await;
    let key = app.api_key(&w.grower, Some(w.t.slug.as_str())).await;

    // REST and get_treatment: the same intervals per crop, sources and groups.
    let res = app
        .rest_auth(Some(&w.grower.bearer()))
        .get(&format!("/api/v1/ipm/treatments/{pyrethrum}"))
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let rest: Value = res.json().await.expect("json");
    assert_eq!(rest["safety_interval_days"], 10);
    let listed = rest["safety_intervals"].as_array().expect("intervals");
    assert_eq!(listed.len(), 2, "{rest}");
    assert!(
        listed
            .iter()
            .any(|i| i["species_key"] == tomato.as_str() && i["days"] == 5),
        "{rest}"
    );
    assert_eq!(rest["resistance_groups"][0]["code"], "IRAC 3A");
    let (s, out) = tool(
        &app,
        &key,
        "get_treatment",
        json!({"treatment_key": pyrethrum}),
    )
    .await;
    assert_eq!(s, 200, "{out}");
    assert_eq!(
        out["data"]["safety_interval_days"],
        rest["safety_interval_days"]
    );
    assert_eq!(
        out["data"]["safety_intervals"], rest["safety_intervals"],
        "{out}"
    );
    assert_eq!(out["data"]["resistance_groups"], rest["resistance_groups"]);
    let summary = out["summary"].as_str().unwrap_or_default();
    assert!(summary.contains("per crop"), "{summary}");

    // apply_treatment (tool) and record_harvest (tool) agree with REST on the tomato's 5 days.
    let (s, out) = tool(
        &app,
        &key,
        "apply_treatment",
        json!({"treatment_key": pyrethrum, "plant_key": w.plants[0]}),
    )
    .await;
    assert_eq!(s, 200, "{out}");
    assert_eq!(out["data"]["plants"][0]["safety_interval_days"], 5, "{out}");
    let (s, e) = tool(
        &app,
        &key,
        "record_harvest",
        json!({"plant_key": w.plants[0], "wet_weight_g": 10}),
    )
    .await;
    assert_eq!(s, 422, "{e}");
    let res = app
        .rest_auth(Some(&w.grower.bearer()))
        .post(
            &path(&w.t, "harvest/batches"),
            &json!({"plant_key": w.plants[0], "wet_weight_g": 10}),
        )
        .await;
    let err = assert_error(res, 422, "KARENZ_VIOLATION").await;
    assert_eq!(
        e["details"][0]["reason"], err["details"][0]["reason"],
        "{e} / {err}"
    );

    // Bad catalogue input: an unknown crop group, a positive interval without a source, a
    // source as one free sentence, a source citing Kultiva: 422 naming the field, nothing
    // stored.
    let admin = app.platform_admin().await;
    // A fresh name per run: the platform catalogue outlives a test run.
    let spray = format!("Spray of issue 24 {}", Uuid::now_v7().simple());
    let base = json!({"name": spray, "treatment_type": "chemical",
                      "active_ingredient": "Spinosad", "safety_interval_days": 14});
    let with = |extra: Value| {
        let mut b = base.clone();
        for (k, v) in extra.as_object().expect("object") {
            b[k] = v.clone();
        }
        b
    };
    for (body, field) in [
        (
            with(
                json!({"safety_intervals": [{"crop_group": "moon_vegetable", "days": 14, "product": "Fixspin", "authority": "Fixture register", "label_crop": "every crop"}]}),
            ),
            "body.safety_intervals[0].crop_group",
        ),
        (base.clone(), "body.safety_intervals"),
        (
            with(
                json!({"safety_interval_days": 3, "safety_intervals": [{"days": 3, "source": "label"}]}),
            ),
            "body.safety_intervals[0].product",
        ),
        (
            with(
                json!({"safety_intervals": [{"days": 14, "product": "Fixspin", "authority": "Kultiva domain reference 2.1", "label_crop": "every crop"}]}),
            ),
            "body.safety_intervals[0].authority",
        ),
        (
            with(
                json!({"safety_intervals": [{"days": 14, "product": "Fixspin", "authority": "Fixture register", "label_crop": "every crop"}],
                     "resistance_groups": [{"code": "IRAC 5"}]}),
            ),
            "body.resistance_groups[0].source",
        ),
    ] {
        let res = app
            .rest_as(&admin)
            .post("/api/v1/ipm/treatments", &body)
            .await;
        let err = assert_error(res, 422, "VALIDATION_ERROR").await;
        assert!(
            detail_fields(&err).contains(&field.to_owned()),
            "{field}: {err}"
        );
    }
    let stored: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM platform.catalog_records WHERE kind = 'treatment' AND name = $1",
    )
    .bind(&spray)
    .fetch_one(app.state.platform_pool())
    .await
    .expect("count");
    assert_eq!(stored, 0);
    // With a source it is accepted and reads back with it.
    let res = app
        .rest_as(&admin)
        .post(
            "/api/v1/ipm/treatments",
            &with(
                json!({"safety_intervals": [{"days": 14, "product": "Fixspin", "authority": "Fixture register", "label_crop": "every crop"}],
                                "resistance_groups": [{"code": "IRAC 5", "source": "IRAC"}]}),
            ),
        )
        .await;
    assert_eq!(res.status().as_u16(), 201);
}

// ---------- issue 39: every interval names its label; no label for the crop, no application ----------

/// Fixhexamid: 21 days on Probus perennis (its only label), none for any other crop.
pub const GRAPE_FUNGICIDE: &str = "Fixture grape fungicide";

#[tokio::test]
async fn a_product_without_a_label_for_the_crop_is_refused_and_writes_nothing() {
    let app = TestApp::full_env(&[("MCP_SERVER_ENABLED", "true")]).await;
    let w = world(&app, "nolabel", 1).await;
    let tomato = w.plants[0];
    let probus = plant_of(&app, &w, "Probus perennis", "Probus").await;
    let probus_species = species(&app, "Probus perennis").await;
    let fungicide = catalogue_key(&app, "treatment", GRAPE_FUNGICIDE).await;
    let key = app.api_key(&w.grower, Some(w.t.slug.as_str())).await;
    let treat = path(&w.t, "ipm/treatments");

    // REST and get_treatment show the label as fields: product, authority, crop.
    let res = app
        .rest_auth(Some(&w.grower.bearer()))
        .get(&format!("/api/v1/ipm/treatments/{fungicide}"))
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let rest: Value = res.json().await.expect("json");
    let label = &rest["safety_intervals"][0];
    assert_eq!(label["species_key"], probus_species.as_str(), "{rest}");
    assert_eq!(label["days"], 21);
    assert_eq!(label["product"], "Fixteldor");
    assert_eq!(label["authority"], "Fixture register");
    assert_eq!(label["label_crop"], "Probus (grapevine of the fixtures)");
    assert!(label.get("source").is_none(), "{rest}");
    let (s, out) = tool(
        &app,
        &key,
        "get_treatment",
        json!({"treatment_key": fungicide}),
    )
    .await;
    assert_eq!(s, 200, "{out}");
    assert_eq!(out["data"]["safety_intervals"], rest["safety_intervals"]);

    // On the tomato (no label names its crop): 422 over REST and the tool, nothing written.
    let before = count(&app, &w.t, "ipm_applications").await;
    let (s, e) = app
        .rest_as(&w.grower)
        .call(
            Method::POST,
            &treat,
            Some(&json!({"treatment_key": fungicide, "plant_keys": [tomato]})),
        )
        .await;
    assert_eq!(s, 422, "{e}");
    assert_eq!(e["error_code"], "VALIDATION_ERROR", "{e}");
    assert_eq!(e["details"][0]["field"], "body.treatment_key", "{e}");
    let reason = e["details"][0]["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains(
            "no label interval is recorded for Fixture grape fungicide on Fixtura tomatoides"
        ),
        "{reason}"
    );
    let (s, m) = tool(
        &app,
        &key,
        "apply_treatment",
        json!({"treatment_key": fungicide, "plant_key": tomato}),
    )
    .await;
    assert_eq!(
        (s, m["error_code"].as_str()),
        (422, Some("validation.error")),
        "{m}"
    );
    assert!(
        m["details"][0]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("no label interval is recorded")),
        "{m}"
    );
    // Both plants at once: the one without a label refuses the whole application.
    let (s, e) = app
        .rest_as(&w.grower)
        .call(
            Method::POST,
            &treat,
            Some(&json!({"treatment_key": fungicide, "plant_keys": [tomato, probus]})),
        )
        .await;
    assert_eq!(s, 422, "{e}");
    assert_eq!(count(&app, &w.t, "ipm_applications").await, before);
    // A harvest of the tomato is not blocked by what was never applied.
    let res = app
        .rest_auth(Some(&w.grower.bearer()))
        .post(
            &path(&w.t, "harvest/batches"),
            &json!({"plant_key": tomato, "wet_weight_g": 10}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 201);

    // On its labelled crop: applied with the label's 21 days and the label as its source.
    let (s, a) = app
        .rest_as(&w.grower)
        .call(
            Method::POST,
            &treat,
            Some(&json!({"treatment_key": fungicide, "plant_keys": [probus]})),
        )
        .await;
    assert_eq!(s, 201, "{a}");
    assert_eq!(a["plants"][0]["safety_interval_days"], 21, "{a}");
    assert_eq!(
        a["plants"][0]["interval_source"],
        "Fixteldor (Fixture register): label crop Probus (grapevine of the fixtures)"
    );
    assert_eq!(count(&app, &w.t, "ipm_applications").await, before + 1);

    // A release of beneficials needs no label: applied with 0 days and no source.
    let mites = catalogue_key(&app, "treatment", MITES).await;
    let (s, m) = app
        .rest_as(&w.grower)
        .call(
            Method::POST,
            &treat,
            Some(&json!({"treatment_key": mites, "plant_keys": [tomato]})),
        )
        .await;
    assert_eq!(s, 201, "{m}");
    assert_eq!(m["plants"][0]["safety_interval_days"], 0);
    assert_eq!(m["plants"][0]["interval_source"], Value::Null);
}
