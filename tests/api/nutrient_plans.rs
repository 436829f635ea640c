//! Nutrient plans: global templates beside the garden's own (marked by owner), create with
//! every field checked, clone (source untouched), phase targets (own plans only; a template is
//! 403 naming the clone), assignment to plants and runs, the plan a plant follows now
//! (plant, else run, else none), `current_phase_targets` (the diagnostics contract), coverage,
//! roles, two-garden isolation, nothing written on refusal, and the tools over the same
//! services (an assignment through the tool shows in get_plant_nutrient_plan).

use kultiva::auth::Role;
use kultiva::tenancy::TenantRecord;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::garden::count;
use crate::mcp_tools::{self, call, scoped_key};
use crate::support::{JsonReply, TestApp, assert_error, detail_fields, tenant_path};

/// A plant of the fixture tomato (first phase: germination) in `tenant`, no place.
pub(crate) async fn plant(app: &TestApp, tenant: &TenantRecord, name: &str) -> String {
    let tomato = crate::garden::species(app, "Fixtura tomatoides").await;
    let new = kultiva::garden::plants::model::NewPlant {
        species_key: tomato,
        name: Some(name.into()),
        cultivar_key: None,
        location_key: None,
        slot_key: None,
        substrate_batch_key: None,
        planted_on: None,
        phase_key: None,
        notes: None,
        start_phase: kultiva::garden::plants::model::StartPhase::First,
    };
    kultiva::garden::plants::service::create_plant(&app.state, tenant, &new, "test", true)
        .await
        .expect("plant")
        .key
        .to_string()
}

/// A plan body: germination W1-2, vegetative W3-6, flowering W7-12.
fn plan_body(name: &str, products: Value) -> Value {
    json!({
        "name": name,
        "recommended_substrate_type": "soil",
        "tags": ["Test"],
        "phases": [
            {"phase_name": "germination", "week_start": 1, "week_end": 2, "target_ec_ms": 0.4,
             "ph_min": 6.0, "ph_max": 6.8},
            {"phase_name": "vegetative", "week_start": 3, "week_end": 6, "target_ec_ms": 1.2,
             "reference_ec_ms": 2.2, "npk_ratio": {"n": 3, "p": 1, "k": 2}, "products": products},
            {"phase_name": "flowering", "week_start": 7, "week_end": 12, "target_ec_ms": 1.6,
             "nutrients": {"calcium_ppm": 150}}
        ]
    })
}

/// An own plan made through the service (`tenant:<uuid>`).
pub(crate) async fn own_plan(app: &TestApp, tenant: &TenantRecord, name: &str) -> String {
    let Value::Object(body) = plan_body(name, json!([])) else {
        unreachable!()
    };
    kultiva::garden::nutrient_plans::service::create_plan(&app.state, tenant, body, true)
        .await
        .expect("plan")
        .key
}

/// Arguments for the tool matrix (`mcp_tools::valid_args`), in `ALL_TOOLS` order.
pub(crate) async fn matrix_args(
    app: &TestApp,
    tenant: &TenantRecord,
) -> Vec<(&'static str, Value)> {
    let plant = plant(app, tenant, "Matrix fed plant").await;
    let own = own_plan(app, tenant, "Matrix plan").await;
    vec![
        ("list_nutrient_plans", json!({"query": "tomato"})),
        ("get_nutrient_plan", json!({"plan_key": "tomato-soil"})),
        ("get_plant_nutrient_plan", json!({"plant_key": plant})),
        ("list_fertilizers", json!({"limit": 5})),
        (
            "validate_nutrient_plan_coverage",
            json!({"plant_key": plant}),
        ),
        (
            "assign_nutrient_plan",
            json!({"plan_key": "tomato-soil", "plant_key": plant}),
        ),
        ("clone_nutrient_plan", json!({"plan_key": "chili-soil"})),
        (
            "set_nutrient_plan_phase_targets",
            json!({"plan_key": own, "phase": "flowering", "target_ec_ms": 1.8}),
        ),
    ]
}

#[tokio::test]
async fn templates_list_beside_own_plans_and_clone_leaves_the_source_untouched() {
    let app = mcp_tools::app().await;
    let t = app.tenant("plans").await;
    let viewer = app.member(&t, Role::Viewer).await;
    let grower = app.member(&t, Role::Grower).await;

    // The viewer reads: at least ten templates, each marked global.
    let list = app
        .rest_as(&viewer)
        .get_ok(&tenant_path(&t, "nutrient-plans?owner=global"))
        .await;
    let items = list["items"].as_array().expect("items");
    assert!(items.len() >= 10, "{list}");
    assert!(items.iter().all(|p| p["owner"] == "global"));
    for culture in ["tomato", "chili", "orchids", "citrus", "succulents"] {
        assert!(items.iter().any(|p| p["culture"] == culture), "{culture}");
    }
    let template = app
        .rest_as(&viewer)
        .get_ok(&tenant_path(&t, "nutrient-plans/tomato-soil"))
        .await;
    assert_eq!(template["phases"].as_array().map(Vec::len), Some(3));
    assert_eq!(template["phases"][2]["target_ec_ms"], 1.6);

    // A viewer cannot clone: 403, nothing written.
    let res = app
        .rest_as(&viewer)
        .post(
            &tenant_path(&t, "nutrient-plans/tomato-soil/clone"),
            &json!({}),
        )
        .await;
    assert_error(res, 403, "FORBIDDEN").await;
    assert_eq!(count(&app, &t, "nutrient_plans").await, 0);

    // The grower clones: a garden plan, cloned_from_key set, same phases.
    let copy = app
        .rest_as(&grower)
        .create(
            &tenant_path(&t, "nutrient-plans/tomato-soil/clone"),
            &json!({}),
        )
        .await;
    assert_eq!(copy["owner"], "garden");
    assert_eq!(copy["cloned_from_key"], "tomato-soil");
    assert_eq!(copy["name"], "Tomato in soil or potting mix (copy)");
    assert!(
        copy["key"]
            .as_str()
            .is_some_and(|k| k.starts_with("tenant:"))
    );
    assert_eq!(copy["phases"].as_array().map(Vec::len), Some(3));
    // A second default copy is numbered; a given name that is taken is a 409.
    let second = app
        .rest_as(&grower)
        .post_empty(&tenant_path(&t, "nutrient-plans/tomato-soil/clone"))
        .await
        .expect_json(201)
        .await;
    assert_eq!(second["name"], "Tomato in soil or potting mix (copy 2)");
    let res = app
        .rest_as(&grower)
        .post(
            &tenant_path(&t, "nutrient-plans/tomato-soil/clone"),
            &json!({"name": "tomato in soil or potting mix (COPY)"}),
        )
        .await;
    assert_error(res, 409, "DUPLICATE_ENTRY").await;
    let res = app
        .rest_as(&grower)
        .post(
            &tenant_path(&t, "nutrient-plans/tomato-soil/clone"),
            &json!({"name": "x", "extra": 1}),
        )
        .await;
    let err = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(detail_fields(&err), ["body.extra"]);
    assert_eq!(count(&app, &t, "nutrient_plans").await, 2);

    // The template is untouched; the listing shows both kinds.
    let again = app
        .rest_as(&viewer)
        .get_ok(&tenant_path(&t, "nutrient-plans/tomato-soil"))
        .await;
    assert_eq!(again, template);
    let all = app
        .rest_as(&viewer)
        .get_ok(&tenant_path(&t, "nutrient-plans?q=tomato"))
        .await;
    let owners: Vec<&str> = all["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|p| p["owner"].as_str())
        .collect();
    assert!(
        owners.contains(&"global") && owners.contains(&"garden"),
        "{all}"
    );
    let own = app
        .rest_as(&viewer)
        .get_ok(&tenant_path(&t, "nutrient-plans?owner=garden"))
        .await;
    assert_eq!(own["total"], 2);
    let res = app
        .rest_as(&viewer)
        .get(&tenant_path(&t, "nutrient-plans?owner=mine"))
        .await;
    let err = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(detail_fields(&err), ["query.owner"]);

    // Templates cannot be deleted; unknown plans are 404; the copy can (grower).
    let res = app
        .rest_as(&grower)
        .delete(&tenant_path(&t, "nutrient-plans/tomato-soil"))
        .await;
    assert_error(res, 403, "FORBIDDEN").await;
    let res = app
        .rest_as(&viewer)
        .get(&tenant_path(&t, "nutrient-plans/no-such-plan"))
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    let key = second["key"].as_str().expect("key");
    let res = app
        .rest_as(&viewer)
        .delete(&tenant_path(&t, &format!("nutrient-plans/{key}")))
        .await;
    assert_error(res, 403, "FORBIDDEN").await;
    let res = app
        .rest_as(&grower)
        .delete(&tenant_path(&t, &format!("nutrient-plans/{key}")))
        .await;
    assert_eq!(res.status().as_u16(), 204);
    assert_eq!(count(&app, &t, "nutrient_plans").await, 1);
}

#[tokio::test]
async fn create_checks_every_field_and_products_must_belong_to_the_garden() {
    let app = mcp_tools::app().await;
    let t = app.tenant("plansc").await;
    let other = app.tenant("plansx").await;
    let grower = app.member(&t, Role::Grower).await;
    let other_grower = app.member(&other, Role::Grower).await;
    let global = crate::fertilizers::global_fertilizer(&app, json!({})).await;
    let mine = app
        .rest_as(&grower)
        .create(
            &tenant_path(&t, "fertilizers"),
            &crate::garden_fertilizers::own_body("Plan test grow"),
        )
        .await;
    let mine = mine["key"].as_str().expect("key").to_owned();
    let theirs = app
        .rest_as(&other_grower)
        .create(
            &tenant_path(&other, "fertilizers"),
            &crate::garden_fertilizers::own_body("Their grow"),
        )
        .await;
    let theirs = theirs["key"].as_str().expect("key").to_owned();

    // Bad input: EC over 10, pH over 14, a window that ends before it starts: one 422 naming
    // each field, nothing written.
    let mut bad = plan_body("Bad plan", json!([]));
    bad["phases"][0]["target_ec_ms"] = json!(11);
    bad["phases"][1]["ph_max"] = json!(15);
    bad["phases"][2]["week_end"] = json!(5);
    let res = app
        .rest_as(&grower)
        .post(&tenant_path(&t, "nutrient-plans"), &bad)
        .await;
    let err = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(
        detail_fields(&err),
        ["body.phases[0].target_ec_ms", "body.phases[1].ph_max"]
    );
    let mut bad = plan_body("Bad plan", json!([]));
    bad["phases"][2]["week_end"] = json!(5);
    bad["phases"][1]["ph_min"] = json!(7.0);
    bad["phases"][1]["ph_max"] = json!(6.0);
    let res = app
        .rest_as(&grower)
        .post(&tenant_path(&t, "nutrient-plans"), &bad)
        .await;
    let err = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(
        detail_fields(&err),
        ["body.phases[1].ph_max", "body.phases[2].week_end"]
    );
    let res = app
        .rest_as(&grower)
        .post(
            &tenant_path(&t, "nutrient-plans"),
            &json!({"name": "Empty", "phases": []}),
        )
        .await;
    let err = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(detail_fields(&err), ["body.phases"]);
    // A product of another garden: 404 naming the field.
    let res = app
        .rest_as(&grower)
        .post(
            &tenant_path(&t, "nutrient-plans"),
            &plan_body(
                "Stolen",
                json!([{"fertilizer_key": theirs, "ml_per_liter": 2}]),
            ),
        )
        .await;
    let err = assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    assert_eq!(
        detail_fields(&err),
        ["body.phases[1].products[0].fertilizer_key"]
    );
    assert_eq!(count(&app, &t, "nutrient_plans").await, 0);
    assert_eq!(count(&app, &t, "nutrient_plan_phases").await, 0);

    // Global and own products: stored with their names.
    let plan = app.rest_as(&grower).create(&tenant_path(&t, "nutrient-plans"), &plan_body(
                "My tomato plan",
                json!([{"fertilizer_key": global, "ml_per_liter": 2}, {"fertilizer_key": mine, "ml_per_liter": 1.5}]),
            )).await;
    assert_eq!(plan["owner"], "garden");
    assert_eq!(plan["tags"], json!(["test"]));
    let products = &plan["phases"][1]["products"];
    assert_eq!(products[0]["fertilizer_key"], global.as_str());
    assert_eq!(products[1]["fertilizer_key"], mine.as_str());
    assert_eq!(products[1]["product_name"], "Plan test grow");
    assert_eq!(plan["phases"][1]["reference_ec_ms"], 2.2);
    assert_eq!(plan["phases"][2]["nutrients"]["calcium_ppm"], 150.0);
    let res = app
        .rest_as(&grower)
        .post(
            &tenant_path(&t, "nutrient-plans"),
            &plan_body("my TOMATO plan", json!([])),
        )
        .await;
    assert_error(res, 409, "DUPLICATE_ENTRY").await;
    // The product a plan doses cannot be deleted.
    let res = app
        .rest_as(&grower)
        .delete(&tenant_path(&t, &format!("fertilizers/{mine}")))
        .await;
    assert_error(res, 409, "STATE_CONFLICT").await;

    // Another garden sees none of it.
    let key = plan["key"].as_str().expect("key");
    let res = app
        .rest_as(&other_grower)
        .get(&tenant_path(&other, &format!("nutrient-plans/{key}")))
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    let res = app
        .rest_as(&other_grower)
        .post_empty(&tenant_path(&other, &format!("nutrient-plans/{key}/clone")))
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    let res = app
        .rest_as(&other_grower)
        .delete(&tenant_path(&other, &format!("nutrient-plans/{key}")))
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    assert_eq!(count(&app, &other, "nutrient_plans").await, 0);
    assert_eq!(count(&app, &t, "nutrient_plans").await, 1);
}

#[tokio::test]
async fn phase_targets_change_only_own_plans_and_are_never_cleared() {
    let app = mcp_tools::app().await;
    let t = app.tenant("plant").await;
    let other = app.tenant("planto").await;
    let viewer = app.member(&t, Role::Viewer).await;
    let grower = app.member(&t, Role::Grower).await;
    let other_grower = app.member(&other, Role::Grower).await;
    let copy = app
        .rest_as(&grower)
        .create(
            &tenant_path(&t, "nutrient-plans/tomato-soil/clone"),
            &json!({"name": "Hot tomato"}),
        )
        .await;
    let key = copy["key"].as_str().expect("key").to_owned();
    let url = tenant_path(&t, &format!("nutrient-plans/{key}/phase-targets"));

    // Raise the flowering EC by phase name: the reference EC stays.
    let changed = app
        .rest_as(&grower)
        .patch(&url, &json!({"phase": "flowering", "target_ec_ms": 2.0}))
        .await
        .expect_json(200)
        .await;
    assert_eq!(changed["phases"][2]["target_ec_ms"], 2.0);
    assert_eq!(
        changed["phases"][2]["reference_ec_ms"],
        copy["phases"][2]["reference_ec_ms"]
    );
    assert_eq!(changed["phases"][1], copy["phases"][1]);
    assert_eq!(changed["version"], 2);
    // By entry key, the reference only.
    let entry = changed["phases"][0]["key"]
        .as_str()
        .expect("entry")
        .to_owned();
    let changed = app
        .rest_as(&grower)
        .patch(&url, &json!({"phase": entry, "reference_ec_ms": 1.0}))
        .await
        .expect_json(200)
        .await;
    assert_eq!(changed["phases"][0]["reference_ec_ms"], 1.0);
    assert_eq!(
        changed["phases"][0]["target_ec_ms"],
        copy["phases"][0]["target_ec_ms"]
    );

    // Refusals write nothing.
    let refusals = [
        (
            json!({"phase": "flowering", "target_ec_ms": null}),
            "body.target_ec_ms",
        ),
        (
            json!({"phase": "flowering", "target_ec_ms": 10.5}),
            "body.target_ec_ms",
        ),
        (
            json!({"phase": "flowering", "reference_ec_ms": -1}),
            "body.reference_ec_ms",
        ),
        (json!({"phase": "flowering"}), "body.target_ec_ms"),
        (json!({"target_ec_ms": 1.0}), "body.phase"),
        (
            json!({"phase": "flowering", "target_ec_ms": 1.0, "ph": 6}),
            "body.ph",
        ),
    ];
    for (body, field) in refusals {
        let res = app.rest_as(&grower).patch(&url, &body.clone()).await;
        let err = assert_error(res, 422, "VALIDATION_ERROR").await;
        assert_eq!(detail_fields(&err), [field], "{body}");
    }
    let res = app
        .rest_as(&grower)
        .patch(&url, &json!({"phase": "dormancy", "target_ec_ms": 1.0}))
        .await;
    let err = assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    assert_eq!(detail_fields(&err), ["body.phase"]);
    let res = app
        .rest_as(&viewer)
        .patch(&url, &json!({"phase": "flowering", "target_ec_ms": 1.0}))
        .await;
    assert_error(res, 403, "FORBIDDEN").await;
    // A template: 403 naming the clone operation.
    let res = app
        .rest_as(&grower)
        .patch(
            &tenant_path(&t, "nutrient-plans/tomato-soil/phase-targets"),
            &json!({"phase": "flowering", "target_ec_ms": 2.0}),
        )
        .await;
    let err = assert_error(res, 403, "FORBIDDEN").await;
    assert!(
        err["message"].as_str().is_some_and(|m| m.contains("clone")),
        "{err}"
    );
    // Another garden's plan: 404.
    let res = app
        .rest_as(&other_grower)
        .patch(
            &tenant_path(&other, &format!("nutrient-plans/{key}/phase-targets")),
            &json!({"phase": "flowering", "target_ec_ms": 2.0}),
        )
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    let now = app
        .rest_as(&viewer)
        .get_ok(&tenant_path(&t, &format!("nutrient-plans/{key}")))
        .await;
    assert_eq!(now, changed, "refused patches changed nothing");
    let template = app
        .rest_as(&viewer)
        .get_ok(&tenant_path(&t, "nutrient-plans/tomato-soil"))
        .await;
    assert_eq!(template["phases"][2]["target_ec_ms"], 1.6);
}

#[tokio::test]
async fn a_plant_follows_its_own_plan_else_its_runs_and_gets_the_phase_targets() {
    let app = mcp_tools::app().await;
    let t = app.tenant("plana").await;
    let other = app.tenant("planb").await;
    let viewer = app.member(&t, Role::Viewer).await;
    let grower = app.member(&t, Role::Grower).await;
    let other_grower = app.member(&other, Role::Grower).await;
    let plant = plant(&app, &t, "Fed tomato").await;
    let plant_id = Uuid::parse_str(&plant).expect("uuid");
    let own = own_plan(&app, &t, "Germination plan").await;
    let run = app
        .rest_as(&grower)
        .create(
            &tenant_path(&t, "planting-runs"),
            &json!({"name": "Tomato run"}),
        )
        .await;
    let run = run["key"].as_str().expect("run").to_owned();
    app.rest_as(&grower)
        .post(
            &tenant_path(&t, &format!("planting-runs/{run}/plants")),
            &json!({"plant_keys": [plant]}),
        )
        .await
        .expect_json(200)
        .await;

    // No plan yet.
    let url = tenant_path(&t, &format!("plant-nutrient-plans/{plant}"));
    let none = app.rest_as(&viewer).get_ok(&url).await;
    assert_eq!(none["plan"], Value::Null);
    assert_eq!(none["run_key"], run.as_str());
    let mut tx = kultiva::tenancy::TenantTx::read(&app.state, &t)
        .await
        .expect("tx");
    let targets =
        kultiva::garden::nutrient_plans::service::current_phase_targets(&mut tx, plant_id)
            .await
            .expect("targets");
    assert_eq!(targets, None);

    // The run follows the tomato template: the plant inherits it. Its phase (germination) is
    // not in the template, so no entry applies (never the calendar week's).
    let assigned = app
        .rest_as(&grower)
        .post(
            &tenant_path(&t, "nutrient-plans/tomato-soil/assignments"),
            &json!({"run_key": run}),
        )
        .await
        .expect_json(200)
        .await;
    assert_eq!(assigned["replaced_plan_key"], Value::Null);
    let via_run = app.rest_as(&viewer).get_ok(&url).await;
    assert_eq!(via_run["source"], "run");
    assert_eq!(via_run["plan"]["key"], "tomato-soil");
    assert_eq!(via_run["current"], Value::Null);
    let coverage = app
        .rest_as(&viewer)
        .get_ok(&tenant_path(
            &t,
            &format!("plant-nutrient-plans/{plant}/coverage"),
        ))
        .await;
    // The fixture tomato runs germination, vegetative, ripening (= flowering).
    assert_eq!(
        coverage["coverage"]["sequence_phases"],
        json!(["germination", "vegetative", "flowering"])
    );
    assert_eq!(
        coverage["coverage"]["phases_not_covered"],
        json!(["germination"])
    );
    assert_eq!(coverage["coverage"]["complete"], false);
    assert_eq!(coverage["current_phase"], "germination");
    assert_eq!(coverage["current_phase_covered_by_name"], false);
    assert_eq!(coverage["plan_is_global_template"], true);

    // Its own plan wins over the run's: week 1, germination entry.
    let assigned = app
        .rest_as(&grower)
        .post(
            &tenant_path(&t, &format!("nutrient-plans/{own}/assignments")),
            &json!({"plant_key": plant}),
        )
        .await
        .expect_json(200)
        .await;
    assert_eq!(assigned["plant_key"], plant.as_str());
    let mine = app.rest_as(&viewer).get_ok(&url).await;
    assert_eq!(mine["source"], "plant");
    assert_eq!(mine["current"]["phase_name"], "germination");
    assert_eq!(mine["current"]["week"], 1);
    assert_eq!(mine["current"]["target_ec_ms"], 0.4);
    let targets =
        kultiva::garden::nutrient_plans::service::current_phase_targets(&mut tx, plant_id)
            .await
            .expect("targets")
            .expect("some");
    tx.commit().await.expect("commit");
    assert_eq!(targets.plan_key, own);
    assert_eq!(targets.source, "plant");
    assert_eq!(targets.target_ec_ms, Some(0.4));
    assert_eq!((targets.ph_min, targets.ph_max), (Some(6.0), Some(6.8)));
    assert_eq!(
        targets.phase_key,
        mine["current"]["phase_key"].as_str().expect("entry")
    );
    let coverage = app
        .rest_as(&viewer)
        .get_ok(&tenant_path(
            &t,
            &format!("plant-nutrient-plans/{plant}/coverage"),
        ))
        .await;
    assert_eq!(coverage["coverage"]["complete"], true, "{coverage}");
    // Re-assigning replaces.
    let again = app
        .rest_as(&grower)
        .post(
            &tenant_path(&t, "nutrient-plans/chili-soil/assignments"),
            &json!({"plant_key": plant}),
        )
        .await
        .expect_json(200)
        .await;
    assert_eq!(again["replaced_plan_key"], own.as_str());
    assert_eq!(count(&app, &t, "nutrient_plan_assignments").await, 2);

    // Refusals write nothing.
    let assign = tenant_path(&t, "nutrient-plans/tomato-soil/assignments");
    for body in [
        json!({}),
        json!({"plant_key": plant, "run_key": run}),
        json!({"plant_key": "nope"}),
    ] {
        let res = app.rest_as(&grower).post(&assign, &body).await;
        assert_error(res, 422, "VALIDATION_ERROR").await;
    }
    let res = app
        .rest_as(&viewer)
        .post(&assign, &json!({"plant_key": plant}))
        .await;
    assert_error(res, 403, "FORBIDDEN").await;
    // Another garden's plant, run and plan: 404.
    let their_plant = crate::nutrient_plans::plant(&app, &other, "Their tomato").await;
    let their_plan = own_plan(&app, &other, "Their plan").await;
    let res = app
        .rest_as(&grower)
        .post(&assign, &json!({"plant_key": their_plant}))
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    let res = app
        .rest_as(&grower)
        .post(
            &tenant_path(&t, &format!("nutrient-plans/{their_plan}/assignments")),
            &json!({"plant_key": plant}),
        )
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    let res = app
        .rest_as(&other_grower)
        .get(&tenant_path(
            &other,
            &format!("plant-nutrient-plans/{plant}"),
        ))
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    let res = app
        .rest_as(&other_grower)
        .post(
            &tenant_path(&other, "nutrient-plans/tomato-soil/assignments"),
            &json!({"run_key": run}),
        )
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    assert_eq!(count(&app, &t, "nutrient_plan_assignments").await, 2);
    assert_eq!(count(&app, &other, "nutrient_plan_assignments").await, 0);
    let still = app.rest_as(&viewer).get_ok(&url).await;
    assert_eq!(still["plan"]["key"], "chili-soil");
}

#[tokio::test]
async fn tools_assign_clone_and_set_targets_over_the_same_services() {
    let app = mcp_tools::app().await;
    let t = app.tenant("plantl").await;
    let other = app.tenant("plantx").await;
    let grower = scoped_key(&app, &t, Role::Grower).await;
    let viewer = scoped_key(&app, &t, Role::Viewer).await;
    let outsider = scoped_key(&app, &other, Role::Admin).await;
    let plant = plant(&app, &t, "Tool tomato").await;
    let slug = t.slug.as_str();

    // Reads.
    let (status, list) = call(
        &app,
        &viewer,
        "list_nutrient_plans",
        json!({"owner": "global"}),
    )
    .await;
    assert_eq!(status, 200, "{list}");
    assert!(list["data"]["total"].as_i64().is_some_and(|n| n >= 10));
    assert_eq!(list["data"]["items"][0]["is_global_template"], true);
    let (status, got) = call(
        &app,
        &viewer,
        "get_nutrient_plan",
        json!({"plan_key": "orchids-bark"}),
    )
    .await;
    assert_eq!(status, 200, "{got}");
    assert_eq!(got["data"]["plan_key"], "orchids-bark");
    let (status, none) = call(
        &app,
        &viewer,
        "get_plant_nutrient_plan",
        json!({"plant_key": plant}),
    )
    .await;
    assert_eq!(status, 200, "{none}");
    assert_eq!(none["data"]["plan"], Value::Null);

    // The pair: a dry run writes nothing; the assignment shows in get_plant_nutrient_plan.
    let args = json!({"plan_key": "tomato-soil", "plant_key": plant});
    let (status, dry) = call(
        &app,
        &grower,
        "assign_nutrient_plan",
        json!({"plan_key": "tomato-soil", "plant_key": plant, "dry_run": true}),
    )
    .await;
    assert_eq!(status, 200, "{dry}");
    assert_eq!(dry["dry_run"], true);
    assert_eq!(count(&app, &t, "nutrient_plan_assignments").await, 0);
    let (status, denied) = call(&app, &viewer, "assign_nutrient_plan", args.clone()).await;
    assert_eq!(
        (status, denied["error_code"].as_str()),
        (403, Some("permission.denied"))
    );
    let (status, done) = call(&app, &grower, "assign_nutrient_plan", args.clone()).await;
    assert_eq!(status, 200, "{done}");
    let (_, read) = call(
        &app,
        &viewer,
        "get_plant_nutrient_plan",
        json!({"plant_key": plant}),
    )
    .await;
    assert_eq!(read["data"]["plan"]["plan_key"], "tomato-soil");
    assert_eq!(read["data"]["source"], "plant");
    // The same through REST.
    let user = app.member(&t, Role::Viewer).await;
    let rest = app
        .rest_as(&user)
        .get_ok(&tenant_path(&t, &format!("plant-nutrient-plans/{plant}")))
        .await;
    assert_eq!(rest["plan"]["key"], "tomato-soil");
    let (status, cov) = call(
        &app,
        &viewer,
        "validate_nutrient_plan_coverage",
        json!({"plant_key": plant}),
    )
    .await;
    assert_eq!(status, 200, "{cov}");
    assert_eq!(
        cov["data"]["coverage"]["phases_not_covered"],
        json!(["germination"])
    );
    assert!(
        cov["summary"]
            .as_str()
            .is_some_and(|s| s.contains("germination")),
        "{cov}"
    );

    // Clone with an idempotency key: a replay returns the same copy and writes no second.
    let clone_args = json!({"plan_key": "tomato-soil", "name": "Tool tomato plan", "idempotency_key": "clone-1"});
    let (status, copy) = call(&app, &grower, "clone_nutrient_plan", clone_args.clone()).await;
    assert_eq!(status, 200, "{copy}");
    let (_, replay) = call(&app, &grower, "clone_nutrient_plan", clone_args).await;
    assert_eq!(replay["idempotent_replay"], true);
    assert_eq!(replay["data"]["plan_key"], copy["data"]["plan_key"]);
    assert_eq!(count(&app, &t, "nutrient_plans").await, 1);
    let key = copy["data"]["plan_key"].as_str().expect("key").to_owned();

    // Set targets: template refused, own plan changed, null is no value, dry run writes nothing.
    let (status, refused) = call(
        &app,
        &grower,
        "set_nutrient_plan_phase_targets",
        json!({"plan_key": "tomato-soil", "phase": "flowering", "target_ec_ms": 2.0}),
    )
    .await;
    assert_eq!(
        (status, refused["error_code"].as_str()),
        (403, Some("permission.denied"))
    );
    assert!(
        refused["message"]
            .as_str()
            .is_some_and(|m| m.contains("clone_nutrient_plan")),
        "{refused}"
    );
    let (status, empty) = call(
        &app,
        &grower,
        "set_nutrient_plan_phase_targets",
        json!({"plan_key": key, "phase": "flowering", "target_ec_ms": null}),
    )
    .await;
    assert_eq!(
        (status, empty["error_code"].as_str()),
        (422, Some("validation.error")),
        "{empty}"
    );
    let (status, over) = call(
        &app,
        &grower,
        "set_nutrient_plan_phase_targets",
        json!({"plan_key": key, "phase": "flowering", "target_ec_ms": 12}),
    )
    .await;
    assert_eq!(
        (status, over["error_code"].as_str()),
        (422, Some("validation.error")),
        "{over}"
    );
    let (status, dry) = call(
        &app,
        &grower,
        "set_nutrient_plan_phase_targets",
        json!({"plan_key": key, "phase": "flowering", "target_ec_ms": 2.2, "dry_run": true}),
    )
    .await;
    assert_eq!(status, 200, "{dry}");
    let (_, still) = call(&app, &viewer, "get_nutrient_plan", json!({"plan_key": key})).await;
    assert_eq!(still["data"]["phases"][2]["target_ec_ms"], 1.6);
    let (status, set) = call(
        &app,
        &grower,
        "set_nutrient_plan_phase_targets",
        json!({"plan_key": key, "phase": "flowering", "target_ec_ms": 2.2}),
    )
    .await;
    assert_eq!(status, 200, "{set}");
    assert_eq!(set["data"]["phases"][2]["target_ec_ms"], 2.2);
    assert_eq!(set["data"]["phases"][2]["reference_ec_ms"], 2.8);

    // Another garden: not_found for the plan and the plant.
    for (tool, args) in [
        (
            "get_nutrient_plan",
            json!({"plan_key": key, "tenant": other.slug.as_str()}),
        ),
        (
            "get_plant_nutrient_plan",
            json!({"plant_key": plant, "tenant": other.slug.as_str()}),
        ),
        (
            "assign_nutrient_plan",
            json!({"plan_key": "tomato-soil", "plant_key": plant, "tenant": other.slug.as_str()}),
        ),
        (
            "set_nutrient_plan_phase_targets",
            json!({"plan_key": key, "phase": "flowering", "target_ec_ms": 1.0, "tenant": other.slug.as_str()}),
        ),
        (
            "get_nutrient_plan",
            json!({"plan_key": key, "tenant": slug}),
        ),
    ] {
        let (status, body) = call(&app, &outsider, tool, args).await;
        assert_eq!(
            (status, body["error_code"].as_str()),
            (404, Some("not_found")),
            "{tool}: {body}"
        );
    }
    assert_eq!(count(&app, &other, "nutrient_plan_assignments").await, 0);
}

/// Rest phases are not fed, the mixing protocol's rule with its source, over every face: a
/// plan whose dormancy entry has a target EC or products is refused (422 naming the field, the
/// reason citing the source, nothing written); an unfed dormancy entry is accepted; raising its
/// target is refused over REST and the tool and changes nothing; the templates that had a
/// winter feed no longer feed.
#[tokio::test]
async fn rest_phases_are_not_fed_by_any_plan() {
    let app = mcp_tools::app().await;
    let t = app.tenant("plansrest").await;
    let grower = app.member(&t, Role::Grower).await;
    let tool = scoped_key(&app, &t, Role::Grower).await;
    let with_dormancy = |ec: Value, products: Value| {
        let mut body = plan_body("Resting plan", json!([]));
        body["phases"].as_array_mut().expect("phases").push(
            json!({"phase_name": "dormancy", "week_start": 13, "week_end": 52,
                         "target_ec_ms": ec, "products": products}),
        );
        body
    };
    let global = crate::fertilizers::global_fertilizer(&app, json!({})).await;
    for (body, field) in [
        (
            with_dormancy(json!(0.4), json!([])),
            "body.phases[3].target_ec_ms",
        ),
        (
            with_dormancy(
                json!(0.0),
                json!([{"fertilizer_key": global, "ml_per_liter": 0.5}]),
            ),
            "body.phases[3].products",
        ),
    ] {
        let res = app
            .rest_as(&grower)
            .post(&tenant_path(&t, "nutrient-plans"), &body)
            .await;
        let err = assert_error(res, 422, "VALIDATION_ERROR").await;
        assert_eq!(detail_fields(&err), [field], "{err}");
        assert!(err.to_string().contains("Iowa State"), "{err}");
    }
    assert_eq!(count(&app, &t, "nutrient_plans").await, 0);
    assert_eq!(count(&app, &t, "nutrient_plan_phases").await, 0);

    let plan = app
        .rest_as(&grower)
        .create(
            &tenant_path(&t, "nutrient-plans"),
            &with_dormancy(json!(0.0), json!([])),
        )
        .await;
    assert_eq!(plan["phases"][3]["target_ec_ms"], 0.0);
    let key = plan["key"].as_str().expect("key").to_owned();
    let url = tenant_path(&t, &format!("nutrient-plans/{key}/phase-targets"));
    let res = app
        .rest_as(&grower)
        .patch(&url, &json!({"phase": "dormancy", "target_ec_ms": 0.5}))
        .await;
    let err = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(detail_fields(&err), ["body.target_ec_ms"]);
    let (status, refused) = call(
        &app,
        &tool,
        "set_nutrient_plan_phase_targets",
        json!({"plan_key": key, "phase": "dormancy", "target_ec_ms": 0.5}),
    )
    .await;
    assert_eq!(
        (status, refused["error_code"].as_str()),
        (422, Some("validation.error")),
        "{refused}"
    );
    let still = app
        .rest_as(&grower)
        .get_ok(&tenant_path(&t, &format!("nutrient-plans/{key}")))
        .await;
    assert_eq!(still["phases"][3]["target_ec_ms"], 0.0);
    assert_eq!(still["version"], plan["version"]);
    // Lowering another phase still works: the rule refuses feeding at rest only.
    app.rest_as(&grower)
        .patch(&url, &json!({"phase": "vegetative", "target_ec_ms": 1.0}))
        .await
        .expect_json(200)
        .await;

    for template in [
        "houseplants-foliage",
        "citrus-container",
        "succulents-cacti",
    ] {
        let got = app
            .rest_as(&grower)
            .get_ok(&tenant_path(&t, &format!("nutrient-plans/{template}")))
            .await;
        let rest: Vec<&Value> = got["phases"]
            .as_array()
            .expect("phases")
            .iter()
            .filter(|p| p["phase_name"] == "dormancy")
            .collect();
        assert_eq!(rest.len(), 1, "{template}");
        assert_eq!(rest[0]["target_ec_ms"], 0.0, "{template}");
        assert_eq!(rest[0]["products"], json!([]), "{template}");
    }
}
