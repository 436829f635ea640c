//! The reference's (domain 4.2) tool arguments that issue 26 added outside the diary, each over
//! REST and the tool through one service: `transition_plant_phase.force`,
//! `create_site.climate_zone`, `get_sowing_calendar.site_key`,
//! `calculate_mixing_protocol.substrate_key` and `get_plant_diagnostics.include_sensors` (with
//! the rest of the diagnostics snapshot the specification names: inspections, the safety
//! interval, recent care, sensors). Refusals change nothing.

use kultiva::auth::Role;
use reqwest::Method;
use serde_json::{Value, json};

use crate::fertilizers::global_fertilizer;
use crate::garden::{count, phases, species};
use crate::ipm::{SOAP, catalogue_key, path, tool, world};
use crate::support::TestApp;

fn refused_as(status: u16, err: &Value, want: (u16, &str)) {
    assert_eq!(
        (status, err["error_code"].as_str()),
        (want.0, Some(want.1)),
        "{err}"
    );
}

#[tokio::test]
async fn force_makes_a_backward_move_and_leaves_a_warning() {
    let app = TestApp::full_env(&[("MCP_SERVER_ENABLED", "true")]).await;
    let w = world(&app, "force", 2).await;
    // germination, vegetative, ripening; the world's plants stand in ripening.
    let ph = phases(&app, &species(&app, "Fixtura tomatoides").await).await;
    let key = app.api_key(&w.grower, Some(w.t.slug.as_str())).await;
    let p = w.plants[0];
    let moves = path(&w.t, &format!("plant-instances/{p}/phase-transitions"));
    let history = path(&w.t, &format!("plant-instances/{p}/phase-history"));
    let rows = count(&app, &w.t, "plant_phase_history").await;

    // Backward without force, or with a force that is not a boolean: refused, nothing written.
    for body in [
        json!({"target_phase_key": ph[1]}),
        json!({"target_phase_key": ph[1], "force": false}),
    ] {
        let (s, e) = app
            .rest_as(&w.grower)
            .call(Method::POST, &moves, Some(&body))
            .await;
        refused_as(s, &e, (422, "PHASE_TRANSITION_INVALID"));
    }
    let (s, e) = app
        .rest_as(&w.grower)
        .call(
            Method::POST,
            &moves,
            Some(&json!({"target_phase_key": ph[1], "force": "yes"})),
        )
        .await;
    refused_as(s, &e, (422, "VALIDATION_ERROR"));
    assert_eq!(e["details"][0]["field"], "body.force", "{e}");
    assert_eq!(count(&app, &w.t, "plant_phase_history").await, rows);

    // With force: moved, and the history row keeps the warning (earlier rows have none).
    let (s, moved) = app
        .rest_as(&w.grower)
        .call(
            Method::POST,
            &moves,
            Some(&json!({"target_phase_key": ph[1], "force": true, "reason": "mislabelled"})),
        )
        .await;
    assert_eq!(s, 200, "{moved}");
    assert_eq!(moved["current_phase_key"], ph[1]);
    let (_, hist) = app
        .rest_as(&w.viewer)
        .call(Method::GET, &history, None)
        .await;
    let items = hist["items"].as_array().expect("items");
    let last = items.last().expect("a row");
    assert_eq!(last["phase_key"], ph[1]);
    assert_eq!(last["reason"], "mislabelled");
    assert!(
        last["warning"]
            .as_str()
            .is_some_and(|w| w.contains("forced backward")),
        "{last}"
    );
    assert!(
        items[..items.len() - 1]
            .iter()
            .all(|h| h["warning"].is_null())
    );
    // Force does not make the same phase a move.
    let (s, e) = app
        .rest_as(&w.grower)
        .call(
            Method::POST,
            &moves,
            Some(&json!({"target_phase_key": ph[1], "force": true})),
        )
        .await;
    refused_as(s, &e, (422, "PHASE_TRANSITION_INVALID"));

    // The tool: refused without force; a forced dry run says so and changes nothing; then done.
    let q = w.plants[1];
    let args = json!({"plant_key": q, "target_phase_key": ph[0]});
    let (s, e) = tool(&app, &key, "transition_plant_phase", args.clone()).await;
    refused_as(s, &e, (422, "validation.error"));
    let mut forced = args.clone();
    forced["force"] = json!(true);
    let mut dry = forced.clone();
    dry["dry_run"] = json!(true);
    let (s, out) = tool(&app, &key, "transition_plant_phase", dry).await;
    assert_eq!(s, 200, "{out}");
    assert_eq!(out["data"]["transition"], "forced", "{out}");
    assert!(out["data"]["warnings"][0].is_string(), "{out}");
    let (_, plant) = app
        .rest_as(&w.viewer)
        .call(
            Method::GET,
            &path(&w.t, &format!("plant-instances/{q}")),
            None,
        )
        .await;
    assert_eq!(plant["current_phase_key"], ph[2], "a dry run moves nothing");
    let (s, out) = tool(&app, &key, "transition_plant_phase", forced).await;
    assert_eq!(s, 200, "{out}");
    assert_eq!(out["data"]["current_phase_key"], ph[0], "{out}");
    assert_eq!(out["data"]["transition"], "forced");
}

#[tokio::test]
async fn a_sites_zone_moves_its_sowing_calendar() {
    let app = TestApp::full_env(&[("MCP_SERVER_ENABLED", "true")]).await;
    let w = world(&app, "sitezone", 2).await;
    let other = world(&app, "sitezoneo", 0).await;
    let admin_key = app.api_key(&w.admin, Some(w.t.slug.as_str())).await;
    let viewer_key = app.api_key(&w.viewer, Some(w.t.slug.as_str())).await;
    let tomato = species(&app, "Fixtura tomatoides").await;
    let sites = path(&w.t, "sites/");
    let sowing = path(&w.t, "calendar/sowing");

    // The world's bed site gets a zone; its plants are the site's calendar.
    let (_, loc) = app
        .rest_as(&w.viewer)
        .call(
            Method::GET,
            &path(&w.t, &format!("locations/{}", w.location)),
            None,
        )
        .await;
    let bed_site = loc["site_key"].as_str().expect("site_key").to_owned();
    let (s, site) = app
        .rest_as(&w.admin)
        .call(
            Method::PATCH,
            &format!("{sites}{bed_site}"),
            Some(&json!({"climate_zone": "9a"})),
        )
        .await;
    assert_eq!((s, &site["climate_zone"]), (200, &json!("9a")), "{site}");
    let (s, cal) = app
        .rest_as(&w.viewer)
        .call(Method::GET, &format!("{sowing}?site_key={bed_site}"), None)
        .await;
    assert_eq!(s, 200, "{cal}");
    assert_eq!(cal["zone"], "9a");
    assert_eq!(cal["items"][0]["species_key"], tomato.as_str());
    assert_eq!(cal["items"][0]["plant_count"], 2);
    // An explicit zone wins over the site's.
    let (_, cal) = app
        .rest_as(&w.viewer)
        .call(
            Method::GET,
            &format!("{sowing}?site_key={bed_site}&zone=3a"),
            None,
        )
        .await;
    assert_eq!(cal["zone"], "3a");

    // A new site with a zone and no plants: its calendar has the zone and no species.
    let (s, empty) = app
        .rest_as(&w.admin)
        .call(
            Method::POST,
            &sites,
            Some(&json!({"name": "Cold frame", "kind": "greenhouse", "climate_zone": "5b"})),
        )
        .await;
    assert_eq!((s, &empty["climate_zone"]), (201, &json!("5b")), "{empty}");
    let empty_key = empty["key"].as_str().expect("key");
    let (_, cal) = app
        .rest_as(&w.viewer)
        .call(Method::GET, &format!("{sowing}?site_key={empty_key}"), None)
        .await;
    assert_eq!((&cal["zone"], &cal["items"]), (&json!("5b"), &json!([])));
    // Null clears the zone; the garden has none either.
    let (_, cleared) = app
        .rest_as(&w.admin)
        .call(
            Method::PATCH,
            &format!("{sites}{empty_key}"),
            Some(&json!({"climate_zone": null})),
        )
        .await;
    assert_eq!(cleared["climate_zone"], Value::Null, "{cleared}");

    // Refused: a zone that does not exist (nothing created), another garden's site and a key
    // that names nothing (404).
    let before = count(&app, &w.t, "sites").await;
    let (s, e) = app
        .rest_as(&w.admin)
        .call(
            Method::POST,
            &sites,
            Some(&json!({"name": "Nowhere", "kind": "garden", "climate_zone": "14a"})),
        )
        .await;
    refused_as(s, &e, (422, "VALIDATION_ERROR"));
    assert_eq!(e["details"][0]["field"], "body.climate_zone", "{e}");
    assert_eq!(count(&app, &w.t, "sites").await, before);
    let (_, theirs) = app
        .rest_as(&other.admin)
        .call(
            Method::POST,
            &path(&other.t, "sites/"),
            Some(&json!({"name": "Theirs", "kind": "garden", "climate_zone": "7a"})),
        )
        .await;
    let theirs = theirs["key"].as_str().expect("key").to_owned();
    for site in [
        theirs.as_str(),
        "0190f3c1-7a2b-7c3d-8e4f-a0b1c2d3e4f5",
        "nope",
    ] {
        let (s, e) = app
            .rest_as(&w.viewer)
            .call(Method::GET, &format!("{sowing}?site_key={site}"), None)
            .await;
        refused_as(s, &e, (404, "ENTITY_NOT_FOUND"));
    }

    // The tools: create_site takes the zone (a wrong one is refused with what was expected),
    // get_sowing_calendar takes site_key.
    let (s, e) = tool(
        &app,
        &admin_key,
        "create_site",
        json!({"name": "Roof", "climate_zone": "6c"}),
    )
    .await;
    refused_as(s, &e, (422, "validation.error"));
    assert!(e["details"][0]["expected"].is_string(), "{e}");
    assert_eq!(count(&app, &w.t, "sites").await, before);
    let (s, out) = tool(
        &app,
        &admin_key,
        "create_site",
        json!({"name": "Roof", "kind": "balcony", "climate_zone": "6a"}),
    )
    .await;
    assert_eq!(s, 200, "{out}");
    assert_eq!(out["data"]["climate_zone"], "6a");
    let roof = out["data"]["site_key"].as_str().expect("site_key");
    let (s, out) = tool(
        &app,
        &viewer_key,
        "get_sowing_calendar",
        json!({"site_key": roof}),
    )
    .await;
    assert_eq!(s, 200, "{out}");
    assert_eq!(
        (&out["data"]["zone"], out["data"]["count"].as_i64()),
        (&json!("6a"), Some(0))
    );
    let (s, e) = tool(
        &app,
        &viewer_key,
        "get_sowing_calendar",
        json!({"site_key": theirs}),
    )
    .await;
    refused_as(s, &e, (404, "not_found"));
}

#[tokio::test]
async fn the_mixing_protocol_takes_a_substrates_type() {
    let app = TestApp::full_env(&[("MCP_SERVER_ENABLED", "true")]).await;
    let a = global_fertilizer(&app, json!({"mixing_priority": 30})).await;
    let w = world(&app, "mixsub", 0).await;
    let other = world(&app, "mixsubo", 0).await;
    let key = app.api_key(&w.viewer, Some(w.t.slug.as_str())).await;
    let substrate = |t: &str| json!({"name": format!("Slab {t}"), "type": t});
    let (s, rock) = app
        .rest_as(&w.admin)
        .call(
            Method::POST,
            &path(&w.t, "substrates/"),
            Some(&substrate("rockwool_slab")),
        )
        .await;
    assert_eq!(s, 201, "{rock}");
    let rock = rock["key"].as_str().expect("key").to_owned();
    let (_, theirs) = app
        .rest_as(&other.admin)
        .call(
            Method::POST,
            &path(&other.t, "substrates/"),
            Some(&substrate("rockwool_slab")),
        )
        .await;
    let theirs = theirs["key"].as_str().expect("key").to_owned();
    let body = json!({"fertilizers": [{"fertilizer_key": a}], "target_volume_liters": 10,
                      "target_ec_ms": 1.2, "substrate_key": rock});
    let route = path(&w.t, "mixing-protocol");

    // REST (the garden's route) and the tool: the substrate's type sets the EC class.
    let (s, p) = app
        .rest_as(&w.viewer)
        .call(Method::POST, &route, Some(&body))
        .await;
    assert_eq!(s, 200, "{p}");
    assert_eq!(p["substrate_class"], "hydro", "{p}");
    let mut args = body.clone();
    args.as_object_mut().expect("object").remove("fertilizers");
    args["fertilizer_keys"] = json!([a]);
    let (s, out) = tool(&app, &key, "calculate_mixing_protocol", args.clone()).await;
    assert_eq!(s, 200, "{out}");
    assert_eq!(out["data"]["substrate_class"], "hydro");
    assert_eq!(out["data"]["dosages"], p["dosages"]);

    // Both a type and a substrate: 422 naming substrate_key, on both faces.
    let mut both = body.clone();
    both["substrate_type"] = json!("soil");
    let (s, e) = app
        .rest_as(&w.viewer)
        .call(Method::POST, &route, Some(&both))
        .await;
    refused_as(s, &e, (422, "VALIDATION_ERROR"));
    assert_eq!(e["details"][0]["field"], "body.substrate_key", "{e}");
    let mut both = args.clone();
    both["substrate_type"] = json!("soil");
    let (s, e) = tool(&app, &key, "calculate_mixing_protocol", both).await;
    refused_as(s, &e, (422, "validation.error"));
    assert_eq!(e["details"][0]["field"], "substrate_key", "{e}");

    // A substrate of another garden, or none at all: 404 on both faces.
    for missing in [theirs.as_str(), "0190f3c1-7a2b-7c3d-8e4f-a0b1c2d3e4f5"] {
        let mut b = body.clone();
        b["substrate_key"] = json!(missing);
        let (s, e) = app
            .rest_as(&w.viewer)
            .call(Method::POST, &route, Some(&b))
            .await;
        refused_as(s, &e, (404, "ENTITY_NOT_FOUND"));
        let mut t = args.clone();
        t["substrate_key"] = json!(missing);
        let (s, e) = tool(&app, &key, "calculate_mixing_protocol", t).await;
        refused_as(s, &e, (404, "not_found"));
    }
}

#[tokio::test]
async fn diagnostics_show_inspections_safety_intervals_care_and_sensors() {
    let app = TestApp::full_env(&[("MCP_SERVER_ENABLED", "true")]).await;
    let w = world(&app, "diagsnap", 1).await;
    let key = app.api_key(&w.grower, Some(w.t.slug.as_str())).await;
    let p = w.plants[0];
    let diagnostics = path(&w.t, &format!("plant-instances/{p}/diagnostics"));

    // Nothing recorded yet: empty lists, harvest allowed today, no sensor source.
    let (s, d) = app
        .rest_as(&w.viewer)
        .call(Method::GET, &diagnostics, None)
        .await;
    assert_eq!(s, 200, "{d}");
    assert_eq!(
        (&d["inspections"], &d["safety_intervals"], &d["care_events"]),
        (&json!([]), &json!([]), &json!([]))
    );
    let today = d["harvest_allowed_from"].as_str().expect("date").to_owned();
    assert_eq!(d["sensors"]["available"], false, "{d}");
    assert!(d["sensors"]["reason"].is_string());

    // An inspection and a treatment with a safety interval show in the snapshot.
    let aphid = catalogue_key(&app, "pest", "Fixturia vorax").await;
    let (s, _) = app
        .rest_as(&w.grower)
        .call(
            Method::POST,
            &path(&w.t, "ipm/inspections"),
            Some(&json!({"plant_key": p, "pressure_level": "medium",
                     "findings": [{"pest_key": aphid, "confidence": 0.7}]})),
        )
        .await;
    assert_eq!(s, 201);
    let soap = catalogue_key(&app, "treatment", SOAP).await;
    let (s, out) = tool(
        &app,
        &key,
        "apply_treatment",
        json!({"treatment_key": soap, "plant_key": p}),
    )
    .await;
    assert_eq!(s, 200, "{out}");
    let (_, d) = app
        .rest_as(&w.viewer)
        .call(Method::GET, &diagnostics, None)
        .await;
    assert_eq!(d["inspections"].as_array().map(Vec::len), Some(1), "{d}");
    assert_eq!(d["inspections"][0]["pressure_level"], "medium");
    assert_eq!(
        d["safety_intervals"].as_array().map(Vec::len),
        Some(1),
        "{d}"
    );
    assert!(
        d["harvest_allowed_from"]
            .as_str()
            .is_some_and(|from| from > today.as_str()),
        "{d}"
    );

    // include_sensors=false leaves the snapshot out; anything but true/false is refused.
    let (_, d) = app
        .rest_as(&w.viewer)
        .call(
            Method::GET,
            &format!("{diagnostics}?include_sensors=false"),
            None,
        )
        .await;
    assert!(d.get("sensors").is_none(), "{d}");
    let (s, e) = app
        .rest_as(&w.viewer)
        .call(
            Method::GET,
            &format!("{diagnostics}?include_sensors=maybe"),
            None,
        )
        .await;
    refused_as(s, &e, (422, "VALIDATION_ERROR"));

    // The tool reads the same snapshot.
    let (s, out) = tool(&app, &key, "get_plant_diagnostics", json!({"plant_key": p})).await;
    assert_eq!(s, 200, "{out}");
    assert_eq!(out["data"]["sensors"]["available"], false);
    assert_eq!(out["data"]["inspections"].as_array().map(Vec::len), Some(1));
    let (_, out) = tool(
        &app,
        &key,
        "get_plant_diagnostics",
        json!({"plant_key": p, "include_sensors": false}),
    )
    .await;
    assert!(out["data"].get("sensors").is_none(), "{out}");
    // Only this garden's plant: another garden's viewer finds nothing.
    let stranger = app
        .member(&world(&app, "diagsnapo", 0).await.t, Role::Viewer)
        .await;
    let (s, _) = app
        .rest_as(&stranger)
        .call(Method::GET, &diagnostics, None)
        .await;
    assert_eq!(s, 404);
}
