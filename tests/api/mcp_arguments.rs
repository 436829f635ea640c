//! Tool arguments as language-model clients send them: lists as JSON arrays, text with line
//! breaks, whole numbers written `2.0`, schemas that state every rule the server enforces
//! (formats, enums, either/or and pairs, never a root `oneOf`/`anyOf`/`allOf`), errors that
//! name the argument with what was expected and an example, the reference's argument names,
//! and the `harvest_readiness` warning of `record_harvest`.

use reqwest::Method;
use serde_json::{Value, json};

use crate::ipm::{catalogue_key, path, tool, world};
use crate::support::TestApp;

/// The argument names the reference (domain 4.2) gives each tool. Every one must be an
/// argument of the tool of that name (ours may take more).
const REFERENCE_ARGUMENTS: &[(&str, &[&str])] = &[
    (
        "list_plants",
        &["query", "include_archived", "offset", "limit"],
    ),
    ("get_plant", &["plant_key"]),
    (
        "get_plant_care_log",
        &["plant_key", "reminder_type", "limit"],
    ),
    (
        "get_plant_diagnostics",
        &["plant_key", "window_days", "include_sensors"],
    ),
    (
        "list_plants_at_location",
        &[
            "site_key",
            "location_key",
            "slot_key",
            "include_archived",
            "limit",
        ],
    ),
    ("list_nutrient_plans", &["query", "offset", "limit"]),
    ("get_nutrient_plan", &["plan_key"]),
    ("get_plant_nutrient_plan", &["plant_key"]),
    (
        "get_sowing_calendar",
        &["query", "year", "site_key", "limit"],
    ),
    ("list_pests", &["query", "limit"]),
    ("get_pest", &["pest_key"]),
    ("list_diseases", &["query", "limit"]),
    ("get_disease", &["disease_key"]),
    ("get_treatment", &["treatment_key"]),
    ("get_plant_inspections", &["plant_key", "limit"]),
    ("list_fertilizers", &["query", "organic_only", "limit"]),
    (
        "calculate_mixing_protocol",
        &[
            "fertilizer_keys",
            "target_volume_liters",
            "target_ec_ms",
            "target_ph",
            "base_water_ph",
            "alkalinity_ppm",
            "substrate_type",
            "substrate_key",
            "phase",
        ],
    ),
    ("list_cultivars", &["species_key"]),
    ("get_cultivar", &["cultivar_key"]),
    ("list_substrates", &["query", "limit"]),
    ("get_substrate", &["substrate_key"]),
    ("preview_substrate_mix", &["components"]),
    ("list_substrate_batches", &["substrate_key"]),
    ("get_substrate_batch", &["batch_key"]),
    ("check_batch_reusability", &["batch_key"]),
    ("get_location", &["location_key"]),
    ("list_overwintering_profiles", &["offset", "limit"]),
    ("list_starter_kits", &["difficulty"]),
    (
        "list_phase_definitions",
        &["name_filter", "offset", "limit"],
    ),
    ("get_species_phase_sequence", &["species_key"]),
    (
        "list_phase_sequences",
        &["query", "include_entries", "offset", "limit"],
    ),
    (
        "list_species_by_phase_sequence",
        &["sequence_key", "offset", "limit"],
    ),
    ("get_species_lifecycle", &["species_key"]),
    ("get_plant_phase_status", &["plant_key"]),
    ("get_plant_phase_history", &["plant_key", "limit"]),
    (
        "search_glossary",
        &["query", "category", "language", "limit"],
    ),
    (
        "search_plant_knowledge",
        &[
            "query",
            "top_k",
            "min_score",
            "doc_language",
            "full_content",
        ],
    ),
    ("list_species", &["offset", "limit"]),
    ("get_species_info", &["species_key", "include_cultivars"]),
    ("list_planting_runs", &["status", "offset", "limit"]),
    ("list_tasks", &["status", "offset", "limit"]),
    ("get_due_care_tasks", &["urgency"]),
    ("get_harvest_readiness", &["limit"]),
    ("list_webhooks", &["limit"]),
    ("get_mcp_activity", &["limit"]),
    ("list_pending_diary_analyses", &["limit", "include_stale"]),
    ("get_diary_entry", &["entry_key"]),
    (
        "get_diary_entry_photos",
        &["entry_key", "photo_ids", "size"],
    ),
    ("validate_nutrient_plan_coverage", &["plant_key"]),
    (
        "confirm_care_task",
        &["plant_key", "reminder_type", "notes"],
    ),
    ("archive_plant", &["plant_key", "termination_type"]),
    (
        "set_plant_location",
        &["plant_key", "site_key", "location_key", "slot_key"],
    ),
    (
        "set_plant_substrate",
        &["plant_key", "substrate_key", "substrate_batch_key"],
    ),
    (
        "create_substrate_mix",
        &["name_de", "name_en", "components"],
    ),
    (
        "add_plant_diary_entry",
        &[
            "plant_key",
            "entry_type",
            "title",
            "text",
            "tags",
            "measurements",
        ],
    ),
    (
        "claim_diary_analysis",
        &["entry_key", "worker_id", "lease_seconds"],
    ),
    (
        "submit_diary_analysis",
        &[
            "entry_key",
            "lease_token",
            "status",
            "summary",
            "findings",
            "recommended_actions",
            "analyzed_photo_ids",
            "model",
            "recipe_version",
            "error",
        ],
    ),
    (
        "record_feeding_event",
        &[
            "plant_key",
            "volume_applied_liters",
            "application_method",
            "is_supplemental",
            "fertilizers_used",
            "measured_ec_before",
            "measured_ec_after",
            "measured_ph_before",
            "measured_ph_after",
            "runoff_ec",
            "runoff_ph",
            "runoff_volume_liters",
            "tank_fill_event_key",
            "notes",
        ],
    ),
    (
        "create_inspection",
        &[
            "plant_key",
            "pressure_level",
            "findings",
            "symptoms_observed",
            "detected_pest_keys",
            "detected_disease_keys",
            "inspector",
            "inspected_at",
            "notes",
        ],
    ),
    ("assign_nutrient_plan", &["plant_key", "plan_key"]),
    ("clone_nutrient_plan", &["plan_key", "name"]),
    (
        "set_nutrient_plan_phase_targets",
        &["plan_key", "phase", "target_ec_ms", "reference_ec_ms"],
    ),
    (
        "transition_plant_phase",
        &["plant_key", "target_phase_key", "reason", "force"],
    ),
    ("create_site", &["name", "type", "climate_zone"]),
    (
        "assign_species_phase_sequence",
        &["species_key", "sequence_key"],
    ),
];

/// Names of domain 4.2 that the specification spells otherwise, and the specification's name
/// the tool takes instead (the specification wins where they differ). `create_site.type` is the
/// reference's indoor/outdoor; the specification's sites have a `kind` of six values.
const SPEC_SPELLING: &[(&str, &str)] = &[("create_site.type", "kind")];

/// Every tool's input schema as `tools/list` publishes it.
fn schemas() -> Vec<(String, Value)> {
    kultiva::mcp::tools::ALL
        .iter()
        .map(|t| (t.name.to_owned(), t.listing(true)["inputSchema"].clone()))
        .collect()
}

#[test]
fn schemas_state_every_rule_and_the_reference_names() {
    let tools = schemas();
    assert_eq!(tools.len(), 73);
    let schema_of = |name: &str| -> &Value {
        &tools
            .iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("no tool {name}"))
            .1
    };
    for (name, schema) in &tools {
        // The Anthropic Messages API refuses a tool list with any of these at the root.
        for combinator in ["oneOf", "anyOf", "allOf"] {
            assert!(
                schema.get(combinator).is_none(),
                "{name}: root {combinator}"
            );
        }
        assert_eq!(schema["additionalProperties"], false, "{name}");
        let props = schema["properties"].as_object().expect("properties");
        for (arg, p) in props {
            let dated = arg.ends_with("_date")
                || arg.ends_with("_at")
                || arg == "date_from"
                || arg == "date_to";
            if dated {
                assert!(
                    p.get("format").is_some() || p.get("anyOf").is_some(),
                    "{name}.{arg} states its format: {p}"
                );
            }
            let free =
                p.get("enum").is_none() && p.get("format").is_none() && p.get("anyOf").is_none();
            if p["type"] == "string" && free {
                assert!(p["pattern"].is_string(), "{name}.{arg} states its pattern");
            }
        }
    }
    // Fixed values as enums, either/or as a root `not`, pairs as dependentRequired.
    assert_eq!(
        schema_of("get_diary_entry_photos")["properties"]["size"]["enum"],
        json!([512, 1280])
    );
    let zones = &schema_of("get_sowing_calendar")["properties"]["zone"]["enum"];
    assert!(zones.as_array().is_some_and(|z| z.len() == 26), "{zones}");
    let treat = schema_of("apply_treatment");
    assert_eq!(treat["dependentRequired"]["dose"], json!(["dose_unit"]));
    assert_eq!(treat["dependentRequired"]["dose_unit"], json!(["dose"]));
    assert!(treat["not"].is_object(), "{treat}");
    for either in [
        "list_plants_at_location",
        "set_plant_location",
        "set_plant_substrate",
        "assign_nutrient_plan",
        "calculate_mixing_protocol",
        "validate_planting",
    ] {
        assert!(schema_of(either)["not"].is_object(), "{either}");
    }
    // Lists are arrays.
    for (tool_name, arg) in [
        ("add_plant_diary_entry", "tags"),
        ("create_inspection", "symptoms_observed"),
        ("create_inspection", "detected_pest_keys"),
        ("create_inspection", "detected_disease_keys"),
        ("calculate_mixing_protocol", "fertilizer_keys"),
    ] {
        let p = &schema_of(tool_name)["properties"][arg];
        assert_eq!(p["type"], "array", "{tool_name}.{arg}");
        assert_eq!(p["items"]["type"], "string", "{tool_name}.{arg}");
        assert!(p["items"]["maxLength"].is_u64(), "{tool_name}.{arg}");
    }
    // The reference's names (or the specification's spelling of them).
    let mut missing = Vec::new();
    for (tool_name, names) in REFERENCE_ARGUMENTS {
        let props = &schema_of(tool_name)["properties"];
        for n in *names {
            let name = format!("{tool_name}.{n}");
            let spelled = SPEC_SPELLING
                .iter()
                .find(|(reference, _)| *reference == name)
                .map_or(*n, |(_, spec)| *spec);
            if props.get(spelled).is_none() {
                missing.push(name);
            }
        }
    }
    assert!(
        missing.is_empty(),
        "arguments of domain 4.2 the tools do not take: {missing:?}"
    );
}

#[tokio::test]
async fn text_keeps_line_breaks_and_lists_whole_numbers_and_errors_help() {
    let app = crate::mcp_tools::app().await;
    let w = world(&app, "argtext", 1).await;
    let grower = app.api_key(&w.grower, Some(w.t.slug.as_str())).await;
    let admin = app.api_key(&w.admin, Some(w.t.slug.as_str())).await;
    let p = w.plants[0].to_string();
    let paragraph = "Lower leaves yellow.\nSpots on two fruits.\n\tChecked twice.";
    let pest = catalogue_key(&app, "pest", "Fixturia vorax").await;
    // Free text with line breaks where people write paragraphs (dry runs: nothing stored).
    for (name, key, args) in [
        (
            "create_inspection",
            &grower,
            json!({"plant_key": p, "notes": paragraph, "symptoms_observed": ["curled leaves", "honeydew", "curled leaves"],
                   "detected_pest_keys": [pest], "pressure_level": "low", "dry_run": true}),
        ),
        (
            "record_harvest",
            &grower,
            json!({"plant_key": p, "wet_weight_g": 120.0, "notes": paragraph, "dry_run": true}),
        ),
        (
            "create_site",
            &admin,
            json!({"name": "Allotment", "description": paragraph, "dry_run": true}),
        ),
        (
            "record_feeding_event",
            &grower,
            json!({"plant_key": p, "volume_applied_liters": 1.0, "notes": paragraph, "dry_run": true}),
        ),
    ] {
        let (s, v) = tool(&app, key, name, args).await;
        assert_eq!(s, 200, "{name}: {v}");
        if name == "create_inspection" {
            assert_eq!(
                v["data"]["symptoms_observed"],
                json!(["curled leaves", "honeydew"])
            );
            assert_eq!(v["data"]["notes"], paragraph);
            assert!(
                v["data"]["detected_pest_keys"].to_string().contains(&pest),
                "{v}"
            );
        }
    }
    // Measurements as the reference names them, read by the REST reader.
    let (s, v) = tool(
        &app,
        &grower,
        "add_plant_diary_entry",
        json!({"plant_key": p, "text": paragraph, "dry_run": true,
               "measurements": {"ph": 6.2, "leaf_count": 12.0, "trellis": "north"}}),
    )
    .await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(
        v["data"]["measurements"],
        json!({"ph": 6.2, "leaf_count": 12, "trellis": "north"})
    );
    let (s, v) = tool(
        &app,
        &grower,
        "add_plant_diary_entry",
        json!({"plant_key": p, "text": "x", "measurements": {"ph": 15}}),
    )
    .await;
    assert_eq!(
        (s, v["error_code"].as_str()),
        (422, Some("validation.error")),
        "{v}"
    );
    assert_eq!(v["details"][0]["field"], "measurements", "{v}");
    assert!(v["details"][0]["expected"].is_string(), "{v}");
    assert_eq!(crate::garden::count(&app, &w.t, "diary_entries").await, 0);
    assert_eq!(crate::garden::count(&app, &w.t, "ipm_inspections").await, 0);
    assert_eq!(crate::garden::count(&app, &w.t, "harvest_batches").await, 0);
    // A tank fill the garden does not have names nothing.
    let (s, v) = tool(
        &app,
        &grower,
        "record_feeding_event",
        json!({"plant_key": p, "volume_applied_liters": 1.0,
               "tank_fill_event_key": uuid::Uuid::now_v7()}),
    )
    .await;
    assert_eq!(
        (s, v["error_code"].as_str()),
        (404, Some("not_found")),
        "{v}"
    );
    // Whole numbers written with a fraction are integers.
    let (s, v) = tool(&app, &grower, "list_species", json!({"limit": 2.0})).await;
    assert_eq!(s, 200, "{v}");
    let (s, v) = tool(&app, &grower, "list_species", json!({"limit": 2.5})).await;
    assert_eq!(
        (s, v["error_code"].as_str()),
        (422, Some("validation.error"))
    );
    // Errors name the argument, what was expected and an example; never an unknown name.
    for (args, field) in [
        (json!({"treatment_key": "x"}), "plant_key|location_key"),
        (
            json!({"treatment_key": "x", "plant_key": p, "dose": 2}),
            "dose_unit",
        ),
        (
            json!({"treatment_key": "x", "plant_key": p, "applied_at": "2026-05-01 08:00"}),
            "applied_at",
        ),
        (
            json!({"treatment_key": "x", "plant_key": p, "notes": null}),
            "notes",
        ),
    ] {
        let (s, v) = tool(&app, &grower, "apply_treatment", args.clone()).await;
        assert_eq!(
            (s, v["error_code"].as_str()),
            (422, Some("validation.error")),
            "{args}: {v}"
        );
        let d = &v["details"][0];
        assert_eq!(d["field"], field, "{v}");
        assert!(
            d["expected"].is_string() && d.get("example").is_some(),
            "{v}"
        );
        assert!(!v.to_string().contains("plant_keys"), "{v}");
    }
    assert_eq!(
        crate::garden::count(&app, &w.t, "ipm_applications").await,
        0
    );
}

#[tokio::test]
async fn whole_numbers_are_integers_in_catalogue_bodies_too() {
    let app = TestApp::full().await;
    let admin = app.platform_admin().await;
    let name = format!("Whole {} A", crate::catalog::letters());
    let res = app
        .rest_as(&admin)
        .post(
            "/api/v1/fertilizers",
            &json!({
                "name": name, "brand": "Whole", "fertilizer_type": "base", "form": "liquid",
                "npk": {"n": 3, "p": 1, "k": 4}, "ec_contribution_per_ml": 0.2,
                "recommended_dose_ml_per_liter": 1.0, "max_dose_ml_per_liter": 10.0,
                "mixing_priority": 41.0, "label_source": "test label",
            }),
        )
        .await;
    assert_eq!(res.status().as_u16(), 201);
    let body: Value = res.json().await.expect("json");
    assert_eq!(body["mixing_priority"], json!(41), "{body}");
}

#[tokio::test]
async fn a_harvest_outside_a_harvest_phase_is_recorded_with_a_warning() {
    let app = crate::mcp_tools::app().await;
    let w = world(&app, "argharv", 1).await;
    let grower = app.api_key(&w.grower, Some(w.t.slug.as_str())).await;
    let tomato = crate::garden::species(&app, "Fixtura tomatoides").await;
    let first = crate::garden::phases(&app, &tomato).await.remove(0);
    let new = kultiva::garden::plants::model::NewPlant {
        species_key: tomato,
        name: Some("Seedling".into()),
        cultivar_key: None,
        location_key: Some(w.location),
        slot_key: None,
        substrate_batch_key: None,
        planted_on: None,
        phase_key: Some(first.clone()),
        notes: None,
        start_phase: kultiva::garden::plants::model::StartPhase::Phase(first),
    };
    let young = kultiva::garden::plants::service::create_plant(&app.state, &w.t, &new, "t", true)
        .await
        .expect("plant");
    let (s, v) = tool(
        &app,
        &grower,
        "record_harvest",
        json!({"plant_key": young.key, "wet_weight_g": 12}),
    )
    .await;
    assert_eq!(s, 200, "{v}");
    let warnings = v["data"]["warnings"].to_string();
    assert!(warnings.contains("harvest_readiness"), "{v}");
    assert!(
        v["summary"].to_string().contains("harvest_readiness"),
        "{v}"
    );
    assert_eq!(crate::garden::count(&app, &w.t, "harvest_batches").await, 1);
    // A plant in its harvest phase gets no warning, on REST as on the tool.
    let (s, b) = app
        .rest_as(&w.grower)
        .call(
            Method::POST,
            &path(&w.t, "harvest/batches"),
            Some(&json!({"plant_key": w.plants[0], "wet_weight_g": 50})),
        )
        .await;
    assert_eq!(s, 201, "{b}");
    assert!(b.get("warnings").is_none(), "{b}");
}
