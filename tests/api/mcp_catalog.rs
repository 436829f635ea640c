//! The specification's tool catalogue ("Tool catalog", grouped by permission) against what
//! `tools/list` shows an admin over JSON-RPC: every tool of the specification is there, read
//! tools are marked read-only and the write and setup tools are not, each input schema refuses
//! unknown arguments, and every write tool takes `dry_run` and `idempotency_key`. Tools beyond
//! the specification's list (the write tools it names as not yet built) are allowed and named.

use serde_json::{Value, json};

use crate::mcp_tools::{Rpc, app};

/// mcp.read, as the specification lists them.
const SPEC_READ: &[&str] = &[
    "list_tenants",
    "list_plants",
    "get_plant",
    "get_plant_care_log",
    "get_plant_diagnostics",
    "list_diary_entries",
    "list_plants_at_location",
    "list_nutrient_plans",
    "get_nutrient_plan",
    "get_plant_nutrient_plan",
    "get_sowing_calendar",
    "list_pests",
    "get_pest",
    "list_diseases",
    "get_disease",
    "get_treatment",
    "get_plant_inspections",
    "list_fertilizers",
    "calculate_mixing_protocol",
    "list_cultivars",
    "get_cultivar",
    "list_substrates",
    "get_substrate",
    "preview_substrate_mix",
    "list_substrate_batches",
    "get_substrate_batch",
    "check_batch_reusability",
    "get_location",
    "list_overwintering_profiles",
    "list_starter_kits",
    "list_phase_definitions",
    "get_species_phase_sequence",
    "list_phase_sequences",
    "list_species_by_phase_sequence",
    "get_species_lifecycle",
    "get_plant_phase_status",
    "get_plant_phase_history",
    "list_hardiness_zones",
    "search_glossary",
    "search_plant_knowledge",
    "list_species",
    "get_species_info",
    "list_planting_runs",
    "list_tasks",
    "get_due_care_tasks",
    "get_harvest_readiness",
    "get_mcp_activity",
    "list_pending_diary_analyses",
    "get_diary_entry",
    "get_diary_entry_photos",
    "validate_nutrient_plan_coverage",
];

/// mcp.write.
const SPEC_WRITE: &[&str] = &[
    "confirm_care_task",
    "archive_plant",
    "set_plant_location",
    "set_plant_substrate",
    "create_substrate_mix",
    "add_plant_diary_entry",
    "claim_diary_analysis",
    "submit_diary_analysis",
    "record_feeding_event",
    "create_inspection",
    "assign_nutrient_plan",
    "clone_nutrient_plan",
    "set_nutrient_plan_phase_targets",
    "transition_plant_phase",
];

/// mcp.setup (admin only).
const SPEC_SETUP: &[&str] = &["create_site", "assign_species_phase_sequence"];

/// Built beyond the specification's list (it names them as not yet implemented).
const BEYOND_SPEC: &[&str] = &[
    "record_harvest",
    "apply_treatment",
    "validate_planting",
    "list_webhooks",
    // Issue 40: the environment a plant lives in.
    "get_environment",
    "record_sensor_readings",
];

#[tokio::test]
async fn tools_list_covers_the_whole_specified_catalogue() {
    let app = app().await;
    let padmin = app.platform_admin().await;
    let key = app.api_key(&padmin, None).await;
    let mut rpc = Rpc::open(&app, &key).await;
    let listed = rpc.request("tools/list", json!({})).await;
    let tools: Vec<&Value> = listed["tools"].as_array().expect("tools").iter().collect();
    let find = |name: &str| tools.iter().find(|t| t["name"] == name).copied();

    let spec_len = SPEC_READ.len() + SPEC_WRITE.len() + SPEC_SETUP.len();
    assert_eq!(spec_len, 67, "the specification's catalogue as transcribed");
    let mut missing = Vec::new();
    for (group, names, writes) in [
        ("mcp.read", SPEC_READ, false),
        ("mcp.write", SPEC_WRITE, true),
        ("mcp.setup", SPEC_SETUP, true),
    ] {
        for name in names {
            let Some(tool) = find(name) else {
                missing.push(format!("{group} {name}"));
                continue;
            };
            assert_eq!(
                tool["annotations"]["readOnlyHint"],
                json!(!writes),
                "{name} ({group})"
            );
            let schema = &tool["inputSchema"];
            assert_eq!(schema["type"], "object", "{name}");
            assert_eq!(schema["additionalProperties"], false, "{name}");
            assert!(schema["properties"]["tenant"].is_object(), "{name}");
            for arg in ["dry_run", "idempotency_key"] {
                assert_eq!(
                    schema["properties"][arg].is_object(),
                    writes,
                    "{name}: {arg} on write tools only"
                );
            }
        }
    }
    assert!(
        missing.is_empty(),
        "specified tools not listed: {missing:#?}"
    );

    // Nothing is listed that is neither specified nor a named addition.
    let extra: Vec<&str> = tools
        .iter()
        .filter_map(|t| t["name"].as_str())
        .filter(|n| {
            ![SPEC_READ, SPEC_WRITE, SPEC_SETUP, BEYOND_SPEC]
                .iter()
                .any(|g| g.contains(n))
        })
        .collect();
    assert!(extra.is_empty(), "unexpected tools: {extra:?}");
    assert_eq!(tools.len(), spec_len + BEYOND_SPEC.len());

    // An unknown argument is refused by the listed schema's own server-side check, too.
    let result = rpc
        .call("list_diary_entries", json!({"free_text": "aphids"}))
        .await;
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(
        result["structuredContent"]["error_code"],
        "validation.error"
    );
}
