//! Issue 13's "Done when", on REST as a new user would do it: clone the tomato plan template,
//! raise its flowering EC, assign it to a run with a plant, get a mixing protocol for a 20-litre
//! tank, fill the tank, record the feeding from it, and see the feeding and the plan targets in
//! the plant's diagnostics.

use reqwest::Method;
use serde_json::{Value, json};

use crate::support::{TestApp, unique_slug};

async fn send(
    app: &TestApp,
    method: Method,
    path: &str,
    auth: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let res = app
        .rest_auth(Some(auth))
        .send(method, path, body.as_ref())
        .await;
    let status = res.status().as_u16();
    (status, res.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn a_new_grower_feeds_a_tomato_by_a_cloned_plan_and_sees_it_in_the_diagnostics() {
    let app = crate::mcp_tools::app().await;
    let user = app.user("feeding-walker").await;
    let auth = user.bearer();
    let slug = unique_slug("walkfeed");
    let (s, garden) = send(
        &app,
        Method::POST,
        "/api/v1/tenants",
        &auth,
        Some(json!({"slug": slug, "name": "Feeding walk"})),
    )
    .await;
    assert_eq!(s, 201, "{garden}");
    let t = |rest: &str| format!("/api/v1/t/{slug}/{rest}");

    // A tomato plant, in flowering (the fixture tomato's third phase), in a run.
    let tomato = crate::garden::species(&app, "Fixtura tomatoides").await;
    let phases = crate::garden::phases(&app, &tomato).await;
    let (s, plant) = send(
        &app,
        Method::POST,
        &t("plant-instances/"),
        &auth,
        Some(json!({"species_key": tomato, "name": "Tomato 1"})),
    )
    .await;
    assert_eq!(s, 201, "{plant}");
    let pk = plant["key"].as_str().expect("key").to_owned();
    let (s, moved) = send(
        &app,
        Method::POST,
        &t(&format!("plant-instances/{pk}/phase-transitions")),
        &auth,
        Some(json!({"target_phase_key": phases[2]})),
    )
    .await;
    assert_eq!(s, 200, "{moved}");
    let (s, run) = send(
        &app,
        Method::POST,
        &t("planting-runs/"),
        &auth,
        Some(json!({"name": "Tomatoes 2026"})),
    )
    .await;
    assert_eq!(s, 201, "{run}");
    let rk = run["key"].as_str().expect("key").to_owned();
    let (s, added) = send(
        &app,
        Method::POST,
        &t(&format!("planting-runs/{rk}/plants")),
        &auth,
        Some(json!({"plant_keys": [pk]})),
    )
    .await;
    assert_eq!(s, 200, "{added}");

    // The tomato template, cloned; its flowering EC raised by 0.3.
    let (s, found) = send(
        &app,
        Method::GET,
        &t("nutrient-plans?q=tomato"),
        &auth,
        None,
    )
    .await;
    assert_eq!(s, 200, "{found}");
    let template = found["items"]
        .as_array()
        .and_then(|items| items.iter().find(|p| p["key"] == "tomato-soil"))
        .expect("the tomato template is listed");
    assert_eq!(template["key"], "tomato-soil");
    let (s, copy) = send(
        &app,
        Method::POST,
        &t("nutrient-plans/tomato-soil/clone"),
        &auth,
        Some(json!({"name": "My tomatoes"})),
    )
    .await;
    assert_eq!(s, 201, "{copy}");
    let plan = copy["key"].as_str().expect("key").to_owned();
    let flowering = copy["phases"]
        .as_array()
        .and_then(|ph| ph.iter().find(|p| p["phase_name"] == "flowering"))
        .expect("a flowering entry")
        .clone();
    let raised =
        ((flowering["target_ec_ms"].as_f64().expect("target") + 0.3) * 100.0).round() / 100.0;
    let (s, changed) = send(
        &app,
        Method::PATCH,
        &t(&format!("nutrient-plans/{plan}/phase-targets")),
        &auth,
        Some(json!({"phase": "flowering", "target_ec_ms": raised})),
    )
    .await;
    assert_eq!(s, 200, "{changed}");
    let (s, assigned) = send(
        &app,
        Method::POST,
        &t(&format!("nutrient-plans/{plan}/assignments")),
        &auth,
        Some(json!({"run_key": rk})),
    )
    .await;
    assert!(s == 200 || s == 201, "{assigned}");
    let (s, follows) = send(
        &app,
        Method::GET,
        &t(&format!("plant-nutrient-plans/{pk}")),
        &auth,
        None,
    )
    .await;
    assert_eq!(s, 200, "{follows}");
    assert_eq!(follows["source"], "run");
    assert_eq!(follows["current"]["target_ec_ms"], raised);

    // A mixing protocol for a 20-litre tank at the raised EC (two products of the catalogue).
    let calmag = crate::fertilizers::global_fertilizer(
        &app,
        json!({"fertilizer_type": "supplement", "calmag": true, "ec_contribution_per_ml": 0.1,
               "mixing_priority": 20}),
    )
    .await;
    let base = crate::fertilizers::global_fertilizer(&app, json!({})).await;
    let (s, protocol) = send(
        &app,
        Method::POST,
        &t("mixing-protocol"),
        &auth,
        Some(
            json!({"fertilizers": [{"fertilizer_key": base}, {"fertilizer_key": calmag}],
                    "target_volume_liters": 20, "target_ec_ms": raised, "base_water_ec_ms": 0.3,
                    "substrate_type": "coco", "phase": "flowering"}),
        ),
    )
    .await;
    assert_eq!(s, 200, "{protocol}");
    let dosages = protocol["dosages"].as_array().expect("dosages").clone();
    assert_eq!(dosages.len(), 2, "{protocol}");
    // Mixing order: the CalMag (priority 20) before the base part (30).
    assert_eq!(dosages[0]["fertilizer_key"], calmag.as_str());
    let mixed_ec = protocol["calculated_ec"].as_f64().expect("calculated_ec");

    // The tank filled as the protocol says, the feeding drawn from it.
    let (s, tank) = send(
        &app,
        Method::POST,
        &t("tanks/"),
        &auth,
        Some(json!({"name": "Tomato tank", "kind": "nutrient", "volume_liters": 20})),
    )
    .await;
    assert_eq!(s, 201, "{tank}");
    let tk = tank["key"].as_str().expect("key").to_owned();
    let (s, filled) = send(
        &app,
        Method::POST,
        &t(&format!("tanks/{tk}/fills")),
        &auth,
        Some(
            json!({"fill_type": "full_change", "volume_liters": 20, "ec_ms": mixed_ec,
                    "ph": 6.0, "water_source": "tap"}),
        ),
    )
    .await;
    assert_eq!(s, 201, "{filled}");
    let used: Vec<Value> = dosages
        .iter()
        .map(|d| {
            json!({"fertilizer_key": d["fertilizer_key"],
                   "ml_applied": d["ml_per_liter"].as_f64().unwrap_or(0.0) * 2.0})
        })
        .filter(|u| u["ml_applied"].as_f64().is_some_and(|m| m > 0.0))
        .collect();
    let (s, feeding) = send(
        &app,
        Method::POST,
        &t("watering-events/"),
        &auth,
        Some(
            json!({"plant_keys": [pk], "tank_key": tk, "volume_liters": 2.0,
                    "application_method": "fertigation", "ec_before_ms": 0.3,
                    "ec_after_ms": mixed_ec, "ph_after": 6.0, "runoff_ec_ms": mixed_ec + 0.2,
                    "runoff_ph": 6.2, "runoff_volume_liters": 0.4, "fertilizers_used": used}),
        ),
    )
    .await;
    assert_eq!(s, 201, "{feeding}");
    assert_eq!(feeding["kind"], "feeding");
    assert_eq!(feeding["runoff_analysis"]["overall"], "good");

    // The diagnostics: the feeding, the plan's raised target against what was fed.
    let (s, d) = send(
        &app,
        Method::GET,
        &t(&format!("plant-instances/{pk}/diagnostics?days=7")),
        &auth,
        None,
    )
    .await;
    assert_eq!(s, 200, "{d}");
    assert_eq!(d["last_feedings"][0]["key"], feeding["key"]);
    assert_eq!(d["ec"]["post_feed"]["latest"], mixed_ec);
    assert_eq!(d["plant"]["phase_key"], phases[2]);
    assert_eq!(d["plan_targets"]["plan_key"], plan.as_str());
    assert_eq!(d["plan_targets"]["source"], "run");
    assert_eq!(d["plan_targets"]["target_ec_ms"], raised);
    assert_eq!(d["targets_vs_measured"]["ec"]["target_ec_ms"], raised);
    assert_eq!(d["targets_vs_measured"]["ec"]["measured_ec_ms"], mixed_ec);
    let status = d["targets_vs_measured"]["ec"]["status"]
        .as_str()
        .unwrap_or_default();
    assert!(["on_target", "below", "above"].contains(&status), "{d}");
    let (_, tank) = send(&app, Method::GET, &t(&format!("tanks/{tk}")), &auth, None).await;
    assert_eq!(tank["state"]["current_volume_liters"], 18.0);
}
