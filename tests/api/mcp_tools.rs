//! The catalogue tools of the MCP tool server, over the REST face (`POST /api/v1/mcp/tools/{name}`)
//! and over JSON-RPC (`POST /api/v1/mcp`): real content from the fixture catalogue, unknown keys,
//! argument validation, the setup tool `assign_species_phase_sequence` with its dry run, and a
//! tenant-isolation matrix over every registered tool. The catalogue is global and tests run in
//! parallel, so only species a test creates itself are ever rebound.

use kultiva::auth::Role;
use kultiva::tenancy::registry::TenantRecord;
use serde_json::{Value, json};

use crate::catalog::{letters, seeded};
pub(crate) use crate::support::rest_tool as call;
use crate::support::{TestApp, TestUser, header};

/// Every tool in the registry, in `tools/list` order.
const ALL_TOOLS: &[&str] = &[
    "list_tenants",
    "get_mcp_activity",
    "list_species",
    "get_species_info",
    "list_cultivars",
    "get_cultivar",
    "list_pests",
    "get_pest",
    "list_diseases",
    "get_disease",
    "get_treatment",
    "list_phase_definitions",
    "get_species_phase_sequence",
    "list_phase_sequences",
    "list_species_by_phase_sequence",
    "get_species_lifecycle",
    "list_hardiness_zones",
    "search_glossary",
    "search_plant_knowledge",
    "list_starter_kits",
    "list_overwintering_profiles",
    "assign_species_phase_sequence",
    "list_plants",
    "get_plant",
    "list_plants_at_location",
    "get_plant_phase_status",
    "get_plant_phase_history",
    "list_planting_runs",
    "archive_plant",
    "set_plant_location",
    "validate_planting",
    "set_plant_substrate",
    "transition_plant_phase",
    "get_location",
    "list_substrates",
    "get_substrate",
    "preview_substrate_mix",
    "list_substrate_batches",
    "get_substrate_batch",
    "check_batch_reusability",
    "create_substrate_mix",
    "calculate_mixing_protocol",
    "create_site",
    "get_sowing_calendar",
    "get_plant_inspections",
    "get_diary_entry_photos",
    "get_harvest_readiness",
    "create_inspection",
    "apply_treatment",
    "record_harvest",
    "list_tasks",
    "get_due_care_tasks",
    "get_plant_care_log",
    "confirm_care_task",
    "list_nutrient_plans",
    "get_nutrient_plan",
    "get_plant_nutrient_plan",
    "list_fertilizers",
    "validate_nutrient_plan_coverage",
    "assign_nutrient_plan",
    "clone_nutrient_plan",
    "set_nutrient_plan_phase_targets",
    "get_plant_diagnostics",
    "record_feeding_event",
    "list_diary_entries",
    "get_diary_entry",
    "add_plant_diary_entry",
    "list_pending_diary_analyses",
    "claim_diary_analysis",
    "submit_diary_analysis",
    "list_webhooks",
    "get_environment",
    "record_sensor_readings",
];

/// The permission of a tool in `ALL_TOOLS` (everything else is mcp.read).
fn permission_of(tool: &str) -> &'static str {
    match tool {
        "assign_species_phase_sequence" | "create_site" => "mcp.setup",
        "create_substrate_mix"
        | "archive_plant"
        | "set_plant_location"
        | "set_plant_substrate"
        | "transition_plant_phase"
        | "confirm_care_task"
        | "create_inspection"
        | "apply_treatment"
        | "record_harvest"
        | "assign_nutrient_plan"
        | "clone_nutrient_plan"
        | "set_nutrient_plan_phase_targets"
        | "record_feeding_event"
        | "add_plant_diary_entry"
        | "claim_diary_analysis"
        | "submit_diary_analysis"
        | "record_sensor_readings" => "mcp.write",
        _ => "mcp.read",
    }
}

/// Tools whose calls in the matrix run as dry runs (no side effects).
fn writes(tool: &str) -> bool {
    permission_of(tool) != "mcp.read"
}

/// Arguments that make the plant tools succeed in `tenant`: a plant in a slot of a fresh
/// location, a second free slot, a usable batch.
async fn plant_args(app: &TestApp, tenant: &TenantRecord) -> Vec<(&'static str, Value)> {
    let tomato = crate::garden::species(app, "Fixtura tomatoides").await;
    let phases = crate::garden::phases(app, &tomato).await;
    let (site, loc, slots) = crate::garden::bed(app, tenant, "Matrix box", 2).await;
    let batch = crate::garden::batch(app, tenant, "matrix soil", 0).await;
    let new = kultiva::garden::plants::model::NewPlant {
        species_key: tomato,
        name: Some("Matrix plant".into()),
        cultivar_key: None,
        location_key: Some(loc),
        slot_key: Some(slots[0]),
        substrate_batch_key: None,
        planted_on: None,
        phase_key: None,
        notes: None,
        start_phase: kultiva::garden::plants::model::StartPhase::First,
    };
    let plant =
        kultiva::garden::plants::service::create_plant(&app.state, tenant, &new, "test", true)
            .await
            .expect("plant");
    let k = plant.key.to_string();
    vec![
        ("list_plants", json!({"query": "matrix"})),
        ("get_plant", json!({"plant_key": k})),
        ("list_plants_at_location", json!({"site_key": site})),
        ("get_plant_phase_status", json!({"plant_key": k})),
        ("get_plant_phase_history", json!({"plant_key": k})),
        ("list_planting_runs", json!({"status": "planned"})),
        (
            "archive_plant",
            json!({"plant_key": k, "termination_type": "died"}),
        ),
        (
            "set_plant_location",
            json!({"plant_key": k, "slot_key": slots[1]}),
        ),
        (
            "validate_planting",
            json!({"plant_key": k, "slot_key": slots[1]}),
        ),
        (
            "set_plant_substrate",
            json!({"plant_key": k, "substrate_batch_key": batch}),
        ),
        (
            "transition_plant_phase",
            json!({"plant_key": k, "target_phase_key": phases[1]}),
        ),
        ("get_plant_diagnostics", json!({"plant_key": k})),
        (
            "record_feeding_event",
            json!({"plant_key": k, "volume_applied_liters": 1.5, "measured_ec_after": 1.8}),
        ),
    ]
}

pub(crate) async fn app() -> TestApp {
    // Loopback webhook targets: the isolation guard makes a (disabled) webhook per garden.
    let app = TestApp::full_env(&[
        ("MCP_SERVER_ENABLED", "true"),
        ("WEBHOOK_ALLOW_PRIVATE_TARGETS", "true"),
    ])
    .await;
    seeded(&app).await;
    app
}

pub(crate) fn bearer(key: &str) -> String {
    format!("Bearer {key}")
}

/// A successful call: the envelope, checked for its shape.
async fn ok(app: &TestApp, key: &str, tool: &str, args: Value) -> Value {
    let (status, body) = call(app, key, tool, args.clone()).await;
    assert_eq!(status, 200, "{tool} {args}: {body}");
    assert!(
        body["summary"].as_str().is_some_and(|s| !s.is_empty()),
        "{tool}: summary {body}"
    );
    assert!(body["data"].is_object(), "{tool}: data");
    for link in body["links"].as_array().expect("links") {
        assert!(
            matches!(link["type"].as_str(), Some("api" | "ui")),
            "{link}"
        );
        assert!(
            link["url"].as_str().is_some_and(|u| u.starts_with('/')),
            "{link}"
        );
    }
    body
}

/// A failed call: the REST status and the tool's error code; returns the body.
async fn fails(
    app: &TestApp,
    key: &str,
    tool: &str,
    args: Value,
    status: u16,
    code: &str,
) -> Value {
    let (got, body) = call(app, key, tool, args.clone()).await;
    assert_eq!(got, status, "{tool} {args}: {body}");
    assert_eq!(body["error_code"], code, "{tool} {args}: {body}");
    assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()));
    assert!(body["details"].is_array());
    body
}

/// A `validation.error` naming `field` with `reason_code`.
async fn invalid(
    app: &TestApp,
    key: &str,
    tool: &str,
    args: Value,
    field: &str,
    reason_code: &str,
) {
    let body = fails(app, key, tool, args, 422, "validation.error").await;
    let details = body["details"].as_array().expect("details");
    assert!(
        details
            .iter()
            .any(|d| d["field"] == field && d["code"] == reason_code && d["reason"].is_string()),
        "{tool}: expected {field}/{reason_code} in {body}"
    );
}

/// A JSON-RPC session of one key.
pub(crate) struct Rpc<'a> {
    app: &'a TestApp,
    key: String,
    session: String,
    next_id: i64,
}

impl<'a> Rpc<'a> {
    pub(crate) async fn open(app: &'a TestApp, key: &str) -> Self {
        let res = app
            .client
            .post(app.url("/api/v1/mcp"))
            .header("authorization", bearer(key))
            .header("accept", "application/json, text/event-stream")
            .json(
                &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "tests", "version": "1"}}}),
            )
            .send()
            .await
            .expect("initialize sent");
        assert_eq!(res.status().as_u16(), 200);
        let session = header(&res, "mcp-session-id").expect("Mcp-Session-Id");
        let body: Value = res.json().await.expect("json");
        assert_eq!(body["result"]["protocolVersion"], "2025-06-18");
        Self {
            app,
            key: key.to_owned(),
            session,
            next_id: 1,
        }
    }

    pub(crate) async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let res = self
            .app
            .client
            .post(self.app.url("/api/v1/mcp"))
            .header("authorization", bearer(&self.key))
            .header("mcp-session-id", &self.session)
            .header("mcp-protocol-version", "2025-06-18")
            .json(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .send()
            .await
            .expect("request sent");
        assert_eq!(res.status().as_u16(), 200);
        let body: Value = res.json().await.expect("json");
        assert_eq!(body["id"], id);
        body["result"].clone()
    }

    /// `tools/call`: the result (`content`, `structuredContent`, `isError`).
    pub(crate) async fn call(&mut self, tool: &str, args: Value) -> Value {
        let result = self
            .request("tools/call", json!({"name": tool, "arguments": args}))
            .await;
        assert!(result["isError"].is_boolean(), "{result}");
        let text = result["content"][0]["text"].as_str().expect("text block");
        assert!(!text.is_empty());
        result
    }
}

/// The items of a species list page that have this scientific name.
fn named<'a>(items: &'a Value, name: &str) -> Option<&'a Value> {
    items
        .as_array()
        .and_then(|l| l.iter().find(|i| i["scientific_name"] == name))
}

/// A fixture species' key, through the REST catalogue.
pub(crate) async fn species_key(app: &TestApp, key: &str, q: &str) -> String {
    let res = app
        .rest_auth(Some(&bearer(key)))
        .get(&format!("/api/v1/species?q={q}"))
        .await;
    let page: Value = res.json().await.expect("json");
    assert_eq!(page["total"], 1, "{q}: {page}");
    page["items"][0]["key"].as_str().expect("key").to_owned()
}

/// A phase sequence's key by its exact name, through the tool.
async fn sequence_key(app: &TestApp, key: &str, name: &str) -> String {
    let body = ok(app, key, "list_phase_sequences", json!({"query": name})).await;
    body["data"]["items"]
        .as_array()
        .and_then(|l| l.iter().find(|s| s["name"] == name))
        .and_then(|s| s["sequence_key"].as_str())
        .expect("sequence listed")
        .to_owned()
}

/// A key scoped to `tenant` of a fresh account that holds `role` there. (Every account also
/// administers its own personal garden, which an unscoped key covers too.)
pub(crate) async fn scoped_key(app: &TestApp, tenant: &TenantRecord, role: Role) -> String {
    let user = app.member(tenant, role).await;
    app.api_key(&user, Some(tenant.slug.as_str())).await
}

/// A key that covers exactly one fresh garden, where it holds `role`, with the garden.
async fn member_key(app: &TestApp, role: Role) -> (String, TenantRecord) {
    let tenant = app.tenant("mcpt").await;
    (scoped_key(app, &tenant, role).await, tenant)
}

/// A species only this test knows, created by a platform admin (selection rule 7: nothing
/// about its lifecycle is recorded).
async fn own_species(app: &TestApp, padmin: &TestUser, extra: Value) -> String {
    let family: Value = app
        .rest_as(padmin)
        .get("/api/v1/botanical-families?q=mockaceae")
        .await
        .json()
        .await
        .expect("json");
    let mut body = json!({
        "scientific_name": format!("Toolia {}", letters()),
        "family_key": family["items"][0]["key"],
    });
    if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
        b.extend(e.clone());
    }
    let res = app.rest_as(padmin).post("/api/v1/species", &body).await;
    assert_eq!(res.status().as_u16(), 201);
    let created: Value = res.json().await.expect("json");
    created["key"].as_str().expect("key").to_owned()
}

const MISSING: &str = "0190f3c1-7a2b-7c3d-8e4f-a0b1c2d3e4f5";

#[tokio::test]
async fn mcp_tools_species_and_cultivars() {
    let app = app().await;
    let (key, _) = member_key(&app, Role::Viewer).await;
    let tomato = species_key(&app, &key, "fixtura%20tomatoides").await;
    let mystery = species_key(&app, &key, "mockia%20obscura").await;

    // list_species: pages in scientific-name order until the fixture species show up.
    let first = ok(&app, &key, "list_species", json!({})).await;
    assert_eq!(first["data"]["limit"], 25);
    assert_eq!(first["data"]["offset"], 0);
    let total = first["data"]["total"].as_i64().expect("total");
    assert!(total >= 6, "{first}");
    let mut found = None;
    let mut offset = 0;
    while offset < total && found.is_none() {
        let page = ok(
            &app,
            &key,
            "list_species",
            json!({"offset": offset, "limit": 100}),
        )
        .await;
        assert!(page["data"]["items"].as_array().expect("items").len() <= 100);
        found = named(&page["data"]["items"], "Fixtura tomatoides").cloned();
        offset += 100;
    }
    let found = found.expect("the fixture tomato is listed");
    assert_eq!(found["species_key"], tomato.as_str());
    assert_eq!(found["common_name_en"], "Fixture tomato");
    assert_eq!(found["common_name_de"], "Testtomate");
    invalid(
        &app,
        &key,
        "list_species",
        json!({"limit": 101}),
        "limit",
        "out_of_range",
    )
    .await;
    invalid(
        &app,
        &key,
        "list_species",
        json!({"limit": 0}),
        "limit",
        "out_of_range",
    )
    .await;
    invalid(
        &app,
        &key,
        "list_species",
        json!({"offset": -1}),
        "offset",
        "out_of_range",
    )
    .await;
    invalid(
        &app,
        &key,
        "list_species",
        json!({"limit": "ten"}),
        "limit",
        "type_error",
    )
    .await;
    invalid(
        &app,
        &key,
        "list_species",
        json!({"q": "tomato"}),
        "q",
        "extra_forbidden",
    )
    .await;

    // get_species_info: the full profile with family, companions and cultivars.
    let info = ok(
        &app,
        &key,
        "get_species_info",
        json!({"species_key": tomato}),
    )
    .await;
    let d = &info["data"];
    assert_eq!(d["species_key"], tomato.as_str());
    assert_eq!(d["scientific_name"], "Fixtura tomatoides");
    assert_eq!(d["family_name"], "Fixturaceae");
    assert_eq!(d["toxicity"]["is_toxic"], true);
    assert_eq!(d["toxicity"]["toxic_to"], json!(["cats", "dogs"]));
    assert_eq!(d["toxicity_severity"], "low");
    assert_eq!(d.get("allergen_info"), Some(&Value::Null), "always present");
    assert_eq!(d["allows_harvest"], true);
    assert_eq!(d["harvest_months"], json!([7, 8, 9]));
    assert_eq!(
        d["phase_sequence_key"].as_str().map(str::len),
        Some(36),
        "bound"
    );
    assert!(d.get("created_at").is_none() && d.get("key").is_none());
    let mut cultivars: Vec<&str> = d["cultivars"]
        .as_array()
        .expect("cultivars")
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    cultivars.sort_unstable();
    assert_eq!(cultivars, ["Red Fixture", "Yellow Fixture"]);
    let good = d["companions"]["compatible"]
        .as_array()
        .expect("compatible");
    assert_eq!(good[0]["scientific_name"], "Probus perennis", "best first");
    assert_eq!(good[0]["score"], 0.9);
    assert_eq!(good[1]["scientific_name"], "Mockia filix");
    assert_eq!(
        d["companions"]["incompatible"][0]["scientific_name"],
        "Mockia obscura"
    );
    let summary = info["summary"].as_str().expect("summary");
    assert!(
        summary.contains("Fixture tomato (Fixtura tomatoides)"),
        "{summary}"
    );
    assert!(
        summary.contains("toxic to cats, dogs (severity low)"),
        "{summary}"
    );
    assert!(
        info["links"]
            .as_array()
            .expect("links")
            .contains(&json!({"type": "api", "url": format!("/api/v1/species/{tomato}")}))
    );
    let lean = ok(
        &app,
        &key,
        "get_species_info",
        json!({"species_key": tomato, "include_cultivars": false}),
    )
    .await;
    assert!(lean["data"].get("cultivars").is_none());

    // Nothing recorded: the four safety fields are present and null, the rest left out.
    let unknown = ok(
        &app,
        &key,
        "get_species_info",
        json!({"species_key": mystery}),
    )
    .await;
    for field in [
        "toxicity",
        "toxicity_severity",
        "allergen_info",
        "allows_harvest",
    ] {
        assert_eq!(unknown["data"].get(field), Some(&Value::Null), "{field}");
    }
    for absent in [
        "harvest_months",
        "cycle_type",
        "phase_sequence_key",
        "description_de",
    ] {
        assert!(unknown["data"].get(absent).is_none(), "{absent}");
    }
    assert_eq!(
        unknown["data"]["cultivars"],
        json!([]),
        "asked for, none exist"
    );
    assert!(
        unknown["summary"]
            .as_str()
            .expect("s")
            .contains("toxicity unknown")
    );

    for bad in [MISSING, "not-a-key"] {
        fails(
            &app,
            &key,
            "get_species_info",
            json!({"species_key": bad}),
            404,
            "not_found",
        )
        .await;
        fails(
            &app,
            &key,
            "list_cultivars",
            json!({"species_key": bad}),
            404,
            "not_found",
        )
        .await;
        fails(
            &app,
            &key,
            "get_cultivar",
            json!({"cultivar_key": bad}),
            404,
            "not_found",
        )
        .await;
    }
    invalid(
        &app,
        &key,
        "get_species_info",
        json!({}),
        "species_key",
        "missing",
    )
    .await;
    invalid(
        &app,
        &key,
        "get_species_info",
        json!({"species_key": 5}),
        "species_key",
        "type_error",
    )
    .await;
    invalid(
        &app,
        &key,
        "get_species_info",
        json!({"species_key": "  "}),
        "species_key",
        "string_too_short",
    )
    .await;
    invalid(
        &app,
        &key,
        "get_species_info",
        json!({"species_key": tomato, "include_cultivars": "yes"}),
        "include_cultivars",
        "type_error",
    )
    .await;

    // Cultivars.
    let list = ok(&app, &key, "list_cultivars", json!({"species_key": tomato})).await;
    assert_eq!(list["data"]["total"], 2);
    let red = list["data"]["items"]
        .as_array()
        .and_then(|l| l.iter().find(|c| c["name"] == "Red Fixture"))
        .expect("Red Fixture")
        .clone();
    assert_eq!(red["days_to_maturity"], 70);
    let one = ok(
        &app,
        &key,
        "get_cultivar",
        json!({"cultivar_key": red["cultivar_key"]}),
    )
    .await;
    assert_eq!(one["data"]["breeder"], "Test Seeds");
    assert_eq!(one["data"]["species_key"], tomato.as_str());
    assert_eq!(one["data"]["species_scientific_name"], "Fixtura tomatoides");
    assert_eq!(one["data"]["traits"], json!(["heirloom", "high_yield"]));
    invalid(
        &app,
        &key,
        "list_cultivars",
        json!({"species_key": tomato, "limit": 5}),
        "limit",
        "extra_forbidden",
    )
    .await;

    // The same over JSON-RPC: structuredContent is the envelope; errors are results.
    let mut rpc = Rpc::open(&app, &key).await;
    let listed = rpc.request("tools/list", json!({})).await;
    let info = listed["tools"]
        .as_array()
        .and_then(|l| l.iter().find(|t| t["name"] == "get_species_info"))
        .expect("get_species_info listed")
        .clone();
    assert_eq!(info["inputSchema"]["required"], json!(["species_key"]));
    assert_eq!(info["annotations"]["readOnlyHint"], true);
    assert!(info["outputSchema"].is_object());
    let result = rpc
        .call("get_species_info", json!({"species_key": tomato}))
        .await;
    assert_eq!(result["isError"], false);
    assert_eq!(
        result["structuredContent"]["data"]["family_name"],
        "Fixturaceae"
    );
    assert_eq!(
        result["content"][0]["text"],
        result["structuredContent"]["summary"]
    );
    let result = rpc
        .call("get_species_info", json!({"species_key": MISSING}))
        .await;
    assert_eq!(result["isError"], true);
    assert_eq!(result["structuredContent"]["error_code"], "not_found");
    let result = rpc.call("list_species", json!({"limit": 1000})).await;
    assert_eq!(
        result["structuredContent"]["error_code"],
        "validation.error"
    );
    assert_eq!(result["structuredContent"]["details"][0]["field"], "limit");
}

#[tokio::test]
async fn mcp_tools_pests_diseases_treatments() {
    let app = app().await;
    let (key, _) = member_key(&app, Role::Viewer).await;

    let pests = ok(&app, &key, "list_pests", json!({"query": "fixture"})).await;
    let items = pests["data"]["items"].as_array().expect("items");
    let aphid = items
        .iter()
        .find(|p| p["scientific_name"] == "Fixturia vorax")
        .expect("aphid")
        .clone();
    assert_eq!(aphid["common_name_de"], "Testlaus");
    assert!(items.iter().any(|p| p["common_name_en"] == "Fixture mite"));
    let german = ok(&app, &key, "list_pests", json!({"query": "testlaus"})).await;
    assert_eq!(german["data"]["items"][0]["pest_key"], aphid["pest_key"]);

    let pest = ok(
        &app,
        &key,
        "get_pest",
        json!({"pest_key": aphid["pest_key"]}),
    )
    .await;
    let d = &pest["data"];
    assert_eq!(d["lifecycle_days"], 10);
    assert_eq!(
        (
            d["optimal_temp_min"].as_f64(),
            d["optimal_temp_max"].as_f64()
        ),
        (Some(18.0), Some(28.0))
    );
    assert_eq!(
        d["host_species"][0]["scientific_name"],
        "Fixtura tomatoides"
    );
    assert_eq!(d["treatments"][0]["name"], "Fixture soap spray");
    assert_eq!(d["treatments"][0]["safety_interval_days"], 3);
    assert_eq!(d["treatments"][0]["treatment_type"], "chemical");
    let soap = d["treatments"][0]["treatment_key"].clone();

    let mite = items
        .iter()
        .find(|p| p["common_name_en"] == "Fixture mite")
        .expect("mite");
    let mite = ok(
        &app,
        &key,
        "get_pest",
        json!({"pest_key": mite["pest_key"]}),
    )
    .await;
    assert_eq!(
        mite["data"]["treatments"][0]["name"],
        "Fixture predatory mites"
    );
    assert_eq!(
        mite["data"]["treatments"][0]["safety_interval_days"], 0,
        "kept although 0"
    );

    let diseases = ok(&app, &key, "list_diseases", json!({"query": "blight"})).await;
    let blight = diseases["data"]["items"]
        .as_array()
        .and_then(|l| {
            l.iter()
                .find(|d| d["scientific_name"] == "Fixturomyces blightii")
        })
        .expect("blight")
        .clone();
    assert_eq!(blight["pathogen_type"], "fungal");
    let disease = ok(
        &app,
        &key,
        "get_disease",
        json!({"disease_key": blight["disease_key"]}),
    )
    .await;
    assert_eq!(disease["data"]["incubation_period_days"], 5);
    assert_eq!(
        disease["data"]["environmental_triggers"],
        json!(["wet leaves", "cool nights"])
    );
    assert_eq!(disease["data"]["treatments"][0]["name"], "Fixture pruning");
    assert_eq!(
        disease["data"]["host_species"][0]["scientific_name"],
        "Fixtura tomatoides"
    );

    let t = ok(&app, &key, "get_treatment", json!({"treatment_key": soap})).await;
    let d = &t["data"];
    assert_eq!(d["safety_interval_days"], 3);
    assert_eq!(d["protective_equipment"], json!(["gloves", "goggles"]));
    assert_eq!(d["how_to_apply"], "Spray the undersides of leaves.");
    assert_eq!(d["active_ingredient"], "potassium fixturate");
    assert_eq!(d["target_pests"][0]["name"], "Fixturia vorax");
    assert_eq!(
        d["contraindicated_with"][0]["name"],
        "Fixture predatory mites"
    );
    assert!(
        t["summary"].as_str().expect("s").contains("wait 3 day(s)"),
        "{t}"
    );

    for (tool, arg) in [
        ("get_pest", "pest_key"),
        ("get_disease", "disease_key"),
        ("get_treatment", "treatment_key"),
    ] {
        fails(&app, &key, tool, json!({arg: MISSING}), 404, "not_found").await;
        fails(&app, &key, tool, json!({arg: "x"}), 404, "not_found").await;
        invalid(&app, &key, tool, json!({arg: true}), arg, "type_error").await;
    }
    // A pest key is no disease key.
    fails(
        &app,
        &key,
        "get_disease",
        json!({"disease_key": aphid["pest_key"]}),
        404,
        "not_found",
    )
    .await;
    for tool in ["list_pests", "list_diseases"] {
        invalid(
            &app,
            &key,
            tool,
            json!({"limit": 201}),
            "limit",
            "out_of_range",
        )
        .await;
        invalid(
            &app,
            &key,
            tool,
            json!({"query": ""}),
            "query",
            "string_too_short",
        )
        .await;
        invalid(
            &app,
            &key,
            tool,
            json!({"query": "x".repeat(101)}),
            "query",
            "string_too_long",
        )
        .await;
        invalid(
            &app,
            &key,
            tool,
            json!({"offset": 1}),
            "offset",
            "extra_forbidden",
        )
        .await;
    }
    let none = ok(
        &app,
        &key,
        "list_pests",
        json!({"query": "no such pest anywhere"}),
    )
    .await;
    assert_eq!(none["data"]["total"], 0);
}

#[tokio::test]
async fn mcp_tools_phases_sequences_and_lifecycles() {
    let app = app().await;
    let (key, _) = member_key(&app, Role::Viewer).await;
    let tomato = species_key(&app, &key, "fixtura%20tomatoides").await;
    let mystery = species_key(&app, &key, "mockia%20obscura").await;
    let stone = species_key(&app, &key, "lithopsis").await;

    let defs = ok(
        &app,
        &key,
        "list_phase_definitions",
        json!({"name_filter": "fx_"}),
    )
    .await;
    let items = defs["data"]["items"].as_array().expect("items");
    assert_eq!(defs["data"]["total"], 7, "{defs}");
    let germ = items
        .iter()
        .find(|p| p["name"] == "fx_germination")
        .expect("germination");
    assert_eq!(germ["typical_duration_days"], 7);
    assert_eq!(germ["display_name_en"], "Germination");
    assert!(germ["phase_key"].is_string());
    let paged = ok(
        &app,
        &key,
        "list_phase_definitions",
        json!({"name_filter": "fx_", "offset": 6, "limit": 2}),
    )
    .await;
    assert_eq!(
        (
            paged["data"]["count"].as_i64(),
            paged["data"]["total"].as_i64()
        ),
        (Some(1), Some(7))
    );
    invalid(
        &app,
        &key,
        "list_phase_definitions",
        json!({"limit": 201}),
        "limit",
        "out_of_range",
    )
    .await;
    invalid(
        &app,
        &key,
        "list_phase_definitions",
        json!({"query": "fx"}),
        "query",
        "extra_forbidden",
    )
    .await;

    let seqs = ok(
        &app,
        &key,
        "list_phase_sequences",
        json!({"query": "annual_harvest"}),
    )
    .await;
    let annual = &seqs["data"]["items"][0];
    assert_eq!(annual["name"], "annual_harvest");
    assert_eq!(annual["entry_count"], 3);
    assert_eq!(annual["total_duration_days"], 51);
    assert_eq!(annual["terminates_in_harvest"], true);
    assert_eq!(annual["has_harvest_phase"], true);
    assert!(annual.get("entries").is_none(), "entries only when asked");
    let with = ok(
        &app,
        &key,
        "list_phase_sequences",
        json!({"query": "annual_harvest", "include_entries": true}),
    )
    .await;
    let entries = with["data"]["items"][0]["entries"]
        .as_array()
        .expect("entries");
    assert_eq!(entries.len(), 3);
    assert_eq!(entries[2]["is_terminal"], true);
    assert_eq!(entries[2]["allows_harvest"], true);
    assert_eq!(entries[1]["effective_duration_days"], 30);
    let all = ok(&app, &key, "list_phase_sequences", json!({"limit": 100})).await;
    assert!(all["data"]["total"].as_i64().expect("total") >= 10);
    invalid(
        &app,
        &key,
        "list_phase_sequences",
        json!({"limit": 101}),
        "limit",
        "out_of_range",
    )
    .await;
    invalid(
        &app,
        &key,
        "list_phase_sequences",
        json!({"include_entries": "true"}),
        "include_entries",
        "type_error",
    )
    .await;

    // The sequence of a species: bound, or selected by the rules.
    let bound = ok(
        &app,
        &key,
        "get_species_phase_sequence",
        json!({"species_key": tomato}),
    )
    .await;
    assert_eq!(bound["data"]["source"], "bound");
    assert_eq!(bound["data"]["rule"], Value::Null);
    assert_eq!(bound["data"]["sequence"]["name"], "annual_harvest");
    assert_eq!(bound["data"]["sequence"]["entries"][0]["sequence_order"], 0);
    let s = bound["summary"].as_str().expect("summary");
    assert!(
        s.contains("Fixtura tomatoides runs on annual_harvest (bound)")
            && s.contains("terminal harvest"),
        "{s}"
    );
    let selected = ok(
        &app,
        &key,
        "get_species_phase_sequence",
        json!({"species_key": mystery}),
    )
    .await;
    assert_eq!(
        (
            selected["data"]["source"].as_str(),
            selected["data"]["rule"].as_i64()
        ),
        (Some("selected"), Some(7))
    );
    assert_eq!(
        selected["data"]["sequence"]["name"],
        "evergreen_foliage_perennial"
    );
    assert_eq!(selected["data"]["sequence"]["terminates_in_harvest"], false);

    // The reverse lookup finds bound and selected species.
    let annual_key = sequence_key(&app, &key, "annual_harvest").await;
    let on = ok(
        &app,
        &key,
        "list_species_by_phase_sequence",
        json!({"sequence_key": annual_key}),
    )
    .await;
    let hit = named(&on["data"]["items"], "Fixtura tomatoides").expect("tomato on annual_harvest");
    assert_eq!(
        (hit["source"].as_str(), hit["rule"].clone()),
        (Some("bound"), Value::Null)
    );
    assert_eq!(on["data"]["sequence"]["name"], "annual_harvest");
    assert_eq!(on["data"]["limit"], 100);
    let cam_key = sequence_key(&app, &key, "cam_succulent_rest").await;
    let cam = ok(
        &app,
        &key,
        "list_species_by_phase_sequence",
        json!({"sequence_key": cam_key}),
    )
    .await;
    let hit = named(&cam["data"]["items"], "Lithopsis fixturae").expect("stone on cam");
    assert_eq!(
        (hit["source"].as_str(), hit["rule"].as_i64()),
        (Some("selected"), Some(3))
    );
    assert_eq!(hit["species_key"], stone.as_str());
    assert!(named(&cam["data"]["items"], "Fixtura tomatoides").is_none());
    invalid(
        &app,
        &key,
        "list_species_by_phase_sequence",
        json!({"sequence_key": cam_key, "limit": 101}),
        "limit",
        "out_of_range",
    )
    .await;
    // A species key is no sequence key.
    fails(
        &app,
        &key,
        "list_species_by_phase_sequence",
        json!({"sequence_key": tomato}),
        404,
        "not_found",
    )
    .await;

    // Lifecycles: recorded, or null as a finding.
    let life = ok(
        &app,
        &key,
        "get_species_lifecycle",
        json!({"species_key": tomato}),
    )
    .await;
    let l = &life["data"]["lifecycle"];
    assert_eq!(l["cycle_type"], "perennial");
    assert_eq!(l["cultivation_cycle_type"], "annual");
    assert_eq!(l["effective_cycle_type"], "annual");
    assert_eq!(l["photosynthesis_type"], "c3");
    assert_eq!(life["data"]["phase_sequence"]["name"], "annual_harvest");
    let none = ok(
        &app,
        &key,
        "get_species_lifecycle",
        json!({"species_key": mystery}),
    )
    .await;
    assert_eq!(none["data"]["lifecycle"], Value::Null);
    assert_eq!(none["data"]["phase_sequence"]["rule"], 7);
    assert!(
        none["summary"]
            .as_str()
            .expect("s")
            .contains("no lifecycle recorded"),
        "{none}"
    );

    for tool in ["get_species_phase_sequence", "get_species_lifecycle"] {
        fails(
            &app,
            &key,
            tool,
            json!({"species_key": MISSING}),
            404,
            "not_found",
        )
        .await;
        invalid(
            &app,
            &key,
            tool,
            json!({"species_key": tomato, "deep": true}),
            "deep",
            "extra_forbidden",
        )
        .await;
    }
    fails(
        &app,
        &key,
        "list_species_by_phase_sequence",
        json!({"sequence_key": MISSING}),
        404,
        "not_found",
    )
    .await;

    let mut rpc = Rpc::open(&app, &key).await;
    let r = rpc
        .call("get_species_lifecycle", json!({"species_key": mystery}))
        .await;
    assert_eq!(r["isError"], false, "a missing lifecycle is no error");
    assert_eq!(r["structuredContent"]["data"]["lifecycle"], Value::Null);
}

#[tokio::test]
async fn mcp_tools_zones_glossary_and_knowledge() {
    let app = app().await;
    let (key, _) = member_key(&app, Role::Viewer).await;
    let padmin = app.platform_admin().await;
    let tomato = species_key(&app, &key, "fixtura%20tomatoides").await;

    let zones = ok(&app, &key, "list_hardiness_zones", json!({})).await;
    let items = zones["data"]["items"].as_array().expect("items");
    assert_eq!(items.len(), 26);
    assert_eq!(items[0]["zone"], "1a");
    assert_eq!(items[25]["zone"], "13b");
    let seven = items.iter().find(|z| z["zone"] == "7a").expect("7a");
    assert_eq!(seven["example_regions"], json!(["Fixture valley"]));
    assert_eq!(seven["typical_last_frost"], "04-20");
    assert!(
        seven["min_temp_c"]
            .as_f64()
            .is_some_and(|t| (-18.0..-17.0).contains(&t))
    );
    invalid(
        &app,
        &key,
        "list_hardiness_zones",
        json!({"zone": "7a"}),
        "zone",
        "extra_forbidden",
    )
    .await;

    // Glossary: German by default, English on request.
    let de = ok(&app, &key, "search_glossary", json!({"query": "fixture"})).await;
    let ec = de["data"]["items"]
        .as_array()
        .and_then(|l| l.iter().find(|t| t["slug"] == "fixture-ec"))
        .expect("fixture-ec")
        .clone();
    assert_eq!(ec["term"], "Fixture-Leitfähigkeit");
    assert_eq!(ec["language"], "de");
    assert!(
        ec["definition"]
            .as_str()
            .expect("d")
            .starts_with("Elektrische Leitfähigkeit")
    );
    assert_eq!(ec["aliases"], json!(["Fixture-EC"]));
    assert_eq!(ec["related"], json!(["fixture-ph"]));
    let en = ok(
        &app,
        &key,
        "search_glossary",
        json!({"query": "fixture ec", "language": "en"}),
    )
    .await;
    assert_eq!(en["data"]["items"][0]["term"], "Fixture conductivity");
    assert_eq!(en["data"]["items"][0]["language"], "en");
    let by_alias = ok(
        &app,
        &key,
        "search_glossary",
        json!({"query": "Fixture-EC", "category": "nutrition"}),
    )
    .await;
    assert_eq!(by_alias["data"]["items"][0]["slug"], "fixture-ec");
    let other = ok(
        &app,
        &key,
        "search_glossary",
        json!({"query": "fixture", "category": "light"}),
    )
    .await;
    assert_eq!(other["data"]["total"], 0);
    invalid(
        &app,
        &key,
        "search_glossary",
        json!({"language": "fr"}),
        "language",
        "enum",
    )
    .await;
    invalid(
        &app,
        &key,
        "search_glossary",
        json!({"category": "weather"}),
        "category",
        "enum",
    )
    .await;
    invalid(
        &app,
        &key,
        "search_glossary",
        json!({"limit": 201}),
        "limit",
        "out_of_range",
    )
    .await;

    // Knowledge search: source references with a score.
    let k = ok(
        &app,
        &key,
        "search_plant_knowledge",
        json!({"query": "yellowing leaves hunger"}),
    )
    .await;
    let results = k["data"]["results"].as_array().expect("results");
    let hit = results
        .iter()
        .find(|r| r["source_key"] == tomato.as_str())
        .expect("the tomato care text");
    assert_eq!(hit["source_type"], "species");
    assert_eq!(hit["source_url"], format!("/api/v1/species/{tomato}"));
    assert_eq!(hit["language"], "en");
    assert!(
        hit["score"].as_f64().is_some_and(|s| s > 0.0 && s < 1.0),
        "{hit}"
    );
    assert!(
        hit["content"]
            .as_str()
            .expect("c")
            .contains("yellowing leaves mean hunger")
    );
    assert_eq!(hit["content_truncated"], false);
    assert!(results.len() <= 5);
    let de = ok(
        &app,
        &key,
        "search_plant_knowledge",
        json!({"query": "Bewässerung", "doc_language": "de"}),
    )
    .await;
    let results = de["data"]["results"].as_array().expect("results");
    assert!(
        results.iter().any(|r| r["source_key"] == tomato.as_str()),
        "{de}"
    );
    assert!(results.iter().all(|r| r["language"] == "de"));
    let strict = ok(
        &app,
        &key,
        "search_plant_knowledge",
        json!({"query": "yellowing leaves hunger", "min_score": 0.999}),
    )
    .await;
    assert!(
        strict["data"]["results"].as_array().expect("r").is_empty(),
        "{strict}"
    );
    assert!(strict["data"]["total_matches"].as_i64().expect("t") >= 1);

    // A long text: cut at 1200 characters unless full_content.
    let word = letters();
    let care = format!(
        "{word} {}",
        "Keep the soil evenly moist and feed monthly. ".repeat(60)
    );
    own_species(&app, &padmin, json!({"care_en": care})).await;
    let cut = ok(&app, &key, "search_plant_knowledge", json!({"query": word})).await;
    let r = &cut["data"]["results"][0];
    assert_eq!(r["content"].as_str().expect("c").chars().count(), 1200);
    assert_eq!(r["content_truncated"], true);
    let whole = ok(
        &app,
        &key,
        "search_plant_knowledge",
        json!({"query": word, "full_content": true, "top_k": 1}),
    )
    .await;
    let r = &whole["data"]["results"][0];
    assert_eq!(
        r["content"].as_str().expect("c").chars().count(),
        care.trim().chars().count()
    );
    assert_eq!(r["content_truncated"], false);

    let long = "tomato ".repeat(60); // 419 characters: above the REST bound of 200
    ok(
        &app,
        &key,
        "search_plant_knowledge",
        json!({"query": long.trim()}),
    )
    .await;
    invalid(
        &app,
        &key,
        "search_plant_knowledge",
        json!({"query": "x".repeat(501)}),
        "query",
        "string_too_long",
    )
    .await;
    invalid(
        &app,
        &key,
        "search_plant_knowledge",
        json!({"query": ""}),
        "query",
        "string_too_short",
    )
    .await;
    invalid(
        &app,
        &key,
        "search_plant_knowledge",
        json!({}),
        "query",
        "missing",
    )
    .await;
    invalid(
        &app,
        &key,
        "search_plant_knowledge",
        json!({"query": "a", "top_k": 21}),
        "top_k",
        "out_of_range",
    )
    .await;
    invalid(
        &app,
        &key,
        "search_plant_knowledge",
        json!({"query": "a", "min_score": 1.5}),
        "min_score",
        "out_of_range",
    )
    .await;
    invalid(
        &app,
        &key,
        "search_plant_knowledge",
        json!({"query": "a", "min_score": "high"}),
        "min_score",
        "type_error",
    )
    .await;
    invalid(
        &app,
        &key,
        "search_plant_knowledge",
        json!({"query": "a", "doc_language": "fr"}),
        "doc_language",
        "enum",
    )
    .await;
    let body = fails(
        &app,
        &key,
        "search_plant_knowledge",
        json!({"query": 1, "top_k": 0}),
        422,
        "validation.error",
    )
    .await;
    assert_eq!(
        body["details"].as_array().map(Vec::len),
        Some(2),
        "every problem at once"
    );

    let mut rpc = Rpc::open(&app, &key).await;
    let r = rpc
        .call(
            "search_plant_knowledge",
            json!({"query": "yellowing leaves hunger", "top_k": 1}),
        )
        .await;
    assert_eq!(r["isError"], false);
    assert_eq!(
        r["structuredContent"]["data"]["results"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
    assert!(r["structuredContent"]["data"]["results"][0]["score"].is_number());
}

#[tokio::test]
async fn mcp_tools_garden_bound_catalogue_tools() {
    let app = app().await;
    let (key, tenant) = member_key(&app, Role::Viewer).await;

    let kits = ok(&app, &key, "list_starter_kits", json!({})).await;
    assert!(
        kits["summary"]
            .as_str()
            .expect("s")
            .contains(tenant.slug.as_str())
    );
    let kit = kits["data"]["items"]
        .as_array()
        .and_then(|l| l.iter().find(|k| k["slug"] == "fixture-kit"))
        .expect("fixture kit")
        .clone();
    assert_eq!(kit["difficulty"], "beginner");
    assert_eq!(kit["toxicity_warning"], true);
    assert_eq!(kit["plant_count_suggestion"], 4);
    let mut species: Vec<&str> = kit["species"]
        .as_array()
        .expect("species")
        .iter()
        .filter_map(|s| s["scientific_name"].as_str())
        .collect();
    species.sort_unstable();
    assert_eq!(species, ["Fixtura tomatoides", "Probus perennis"]);
    let beginner = ok(
        &app,
        &key,
        "list_starter_kits",
        json!({"difficulty": "beginner", "tenant": tenant.slug.as_str()}),
    )
    .await;
    assert!(
        beginner["data"]["items"]
            .as_array()
            .expect("i")
            .iter()
            .all(|k| k["difficulty"] == "beginner")
    );
    let advanced = ok(
        &app,
        &key,
        "list_starter_kits",
        json!({"difficulty": "advanced"}),
    )
    .await;
    assert!(
        advanced["data"]["items"]
            .as_array()
            .expect("i")
            .iter()
            .all(|k| k["slug"] != "fixture-kit")
    );
    invalid(
        &app,
        &key,
        "list_starter_kits",
        json!({"difficulty": "expert"}),
        "difficulty",
        "enum",
    )
    .await;
    invalid(
        &app,
        &key,
        "list_starter_kits",
        json!({"tenant": 7}),
        "tenant",
        "type_error",
    )
    .await;

    let profiles = ok(
        &app,
        &key,
        "list_overwintering_profiles",
        json!({"limit": 200}),
    )
    .await;
    let probe = profiles["data"]["items"]
        .as_array()
        .and_then(|l| l.iter().find(|p| p["scientific_name"] == "Probus perennis"))
        .expect("probe bean profile")
        .clone();
    assert_eq!(probe["hardiness_rating"], "needs_protection");
    assert_eq!(probe["winter_action"], "mulch");
    assert_eq!(probe["winter_action_month"], 11);
    assert!(
        probe.get("winter_quarter_temp_min").is_none(),
        "unknown left out"
    );
    invalid(
        &app,
        &key,
        "list_overwintering_profiles",
        json!({"limit": 201}),
        "limit",
        "out_of_range",
    )
    .await;

    // Two gardens (an unscoped key also covers the account's personal garden): these tools
    // need `tenant`; a garden that is not yours is not found.
    let user = app.member(&tenant, Role::Grower).await;
    let two = app.api_key(&user, None).await;
    let foreign = app.tenant("mcptx").await;
    for tool in ["list_starter_kits", "list_overwintering_profiles"] {
        let body = fails(
            &app,
            &two,
            tool,
            json!({}),
            422,
            "validation.tenant_required",
        )
        .await;
        let named: Vec<&str> = body["data"]["tenants"]
            .as_array()
            .expect("tenants named")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert_eq!(named.len(), 2, "{body}");
        assert!(named.contains(&tenant.slug.as_str()));
        assert!(!named.contains(&foreign.slug.as_str()));
        fails(
            &app,
            &two,
            tool,
            json!({"tenant": foreign.slug.as_str()}),
            404,
            "not_found",
        )
        .await;
        fails(
            &app,
            &two,
            tool,
            json!({"tenant": "no-such-garden"}),
            404,
            "not_found",
        )
        .await;
        ok(&app, &two, tool, json!({"tenant": tenant.slug.as_str()})).await;
    }
    // Global tools run without `tenant` on the strongest role.
    ok(&app, &two, "list_hardiness_zones", json!({})).await;

    let mut rpc = Rpc::open(&app, &two).await;
    let r = rpc.call("list_starter_kits", json!({})).await;
    assert_eq!(r["isError"], true);
    assert_eq!(
        r["structuredContent"]["error_code"],
        "validation.tenant_required"
    );
    let r = rpc
        .call("list_starter_kits", json!({"tenant": tenant.slug.as_str()}))
        .await;
    assert_eq!(r["isError"], false);
}

/// The species' phase sequence as the read tool shows it: (source, sequence name).
async fn current(app: &TestApp, key: &str, species: &str) -> (String, String) {
    let body = ok(
        app,
        key,
        "get_species_phase_sequence",
        json!({"species_key": species}),
    )
    .await;
    (
        body["data"]["source"].as_str().expect("source").to_owned(),
        body["data"]["sequence"]["name"]
            .as_str()
            .expect("name")
            .to_owned(),
    )
}

#[tokio::test]
async fn mcp_tools_assign_species_phase_sequence() {
    let app = app().await;
    let padmin = app.platform_admin().await;
    let tenant = app.tenant("mcpa").await;
    let viewer_user = app.member(&tenant, Role::Viewer).await;
    let viewer = app.api_key(&viewer_user, Some(tenant.slug.as_str())).await;
    let grower = scoped_key(&app, &tenant, Role::Grower).await;
    let admin = scoped_key(&app, &tenant, Role::Admin).await;
    // The binding is shared master data: mcp.setup in the platform garden decides.
    let setup = app.api_key(&padmin, None).await;
    let species = own_species(&app, &padmin, json!({})).await;
    let fern = sequence_key(&app, &viewer, "fern_spore").await;
    let evergreen = sequence_key(&app, &viewer, "evergreen_foliage_perennial").await;
    let selected = (
        "selected".to_owned(),
        "evergreen_foliage_perennial".to_owned(),
    );
    assert_eq!(current(&app, &viewer, &species).await, selected);
    let args = json!({"species_key": species, "sequence_key": fern});

    // Viewers and growers lack mcp.setup, and a garden's admin holds it only in that garden:
    // refused, nothing changes.
    for key in [&viewer, &grower, &admin] {
        let body = fails(
            &app,
            key,
            "assign_species_phase_sequence",
            args.clone(),
            403,
            "permission.denied",
        )
        .await;
        let message = body["message"].as_str().expect("m");
        assert!(
            message.contains("mcp.setup") && message.contains("platform garden"),
            "{message}"
        );
        let body = fails(
            &app,
            key,
            "assign_species_phase_sequence",
            json!({"species_key": species, "sequence_key": fern, "dry_run": true}),
            403,
            "permission.denied",
        )
        .await;
        assert_eq!(body["error_code"], "permission.denied");
    }
    // The garden named decides the role, not the strongest role the account holds elsewhere
    // (its personal garden): an unscoped viewer key addressing the garden is refused too.
    let unscoped = app.api_key(&viewer_user, None).await;
    let mut in_garden = args.clone();
    in_garden["tenant"] = json!(tenant.slug.as_str());
    fails(
        &app,
        &unscoped,
        "assign_species_phase_sequence",
        in_garden,
        403,
        "permission.denied",
    )
    .await;
    assert_eq!(current(&app, &viewer, &species).await, selected);

    // A dry run computes the result and writes nothing.
    let mut dry = args.clone();
    dry["dry_run"] = json!(true);
    let preview = ok(&app, &setup, "assign_species_phase_sequence", dry).await;
    assert_eq!(preview["dry_run"], true);
    assert_eq!(preview["idempotent_replay"], false);
    assert_eq!(preview["data"]["source"], "bound");
    assert_eq!(preview["data"]["sequence"]["name"], "fern_spore");
    assert_eq!(preview["data"]["sequence"]["sequence_key"], fern.as_str());
    assert_eq!(preview["data"]["replaced_sequence_key"], evergreen.as_str());
    assert_eq!(preview["data"]["replaced_source"], "selected");
    assert!(
        preview["summary"]
            .as_str()
            .expect("s")
            .contains("nothing was changed")
    );
    assert_eq!(
        current(&app, &viewer, &species).await,
        selected,
        "the dry run wrote nothing"
    );
    let record: Value = app
        .rest_auth(Some(&bearer(&viewer)))
        .get(&format!("/api/v1/species/{species}"))
        .await
        .json()
        .await
        .expect("json");
    assert_eq!(record["phase_sequence_key"], Value::Null);

    // Unknown keys and bad arguments.
    fails(
        &app,
        &setup,
        "assign_species_phase_sequence",
        json!({"species_key": species, "sequence_key": MISSING}),
        404,
        "not_found",
    )
    .await;
    fails(
        &app,
        &setup,
        "assign_species_phase_sequence",
        json!({"species_key": MISSING, "sequence_key": fern}),
        404,
        "not_found",
    )
    .await;
    fails(
        &app,
        &setup,
        "assign_species_phase_sequence",
        json!({"species_key": species, "sequence_key": species}),
        404,
        "not_found",
    )
    .await;
    invalid(
        &app,
        &setup,
        "assign_species_phase_sequence",
        json!({"species_key": species}),
        "sequence_key",
        "missing",
    )
    .await;
    invalid(
        &app,
        &setup,
        "assign_species_phase_sequence",
        json!({"species_key": species, "sequence_key": null, "dry_run": "no"}),
        "dry_run",
        "type_error",
    )
    .await;
    invalid(
        &app,
        &setup,
        "assign_species_phase_sequence",
        json!({"species_key": species, "sequence_key": fern, "force": true}),
        "force",
        "extra_forbidden",
    )
    .await;
    assert_eq!(current(&app, &viewer, &species).await, selected);

    // A garden admin may not use the platform-admin REST route either.
    let res = app
        .rest_auth(Some(&bearer(&admin)))
        .put(
            &format!("/api/v1/species/{species}/phase-sequence"),
            &json!({"phase_sequence_key": fern}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 403);
    assert_eq!(current(&app, &viewer, &species).await, selected);

    // The real call, over JSON-RPC.
    let mut rpc = Rpc::open(&app, &setup).await;
    let r = rpc
        .call(
            "assign_species_phase_sequence",
            json!({"species_key": species, "sequence_key": fern}),
        )
        .await;
    assert_eq!(r["isError"], false, "{r}");
    let env = &r["structuredContent"];
    assert_eq!(env["dry_run"], false);
    assert_eq!(env["data"]["sequence"]["name"], "fern_spore");
    assert_eq!(
        env["data"]["replaced_sequence_name"],
        "evergreen_foliage_perennial"
    );
    assert_eq!(
        current(&app, &viewer, &species).await,
        ("bound".to_owned(), "fern_spore".to_owned())
    );
    let on = ok(
        &app,
        &viewer,
        "list_species_by_phase_sequence",
        json!({"sequence_key": fern}),
    )
    .await;
    let hit = on["data"]["items"]
        .as_array()
        .and_then(|l| l.iter().find(|s| s["species_key"] == species.as_str()))
        .expect("listed on fern_spore");
    assert_eq!(hit["source"], "bound");

    // Rebinding replaces the bound sequence; a dry run now leaves fern_spore in force.
    let back = ok(
        &app,
        &setup,
        "assign_species_phase_sequence",
        json!({"species_key": species, "sequence_key": evergreen, "dry_run": true}),
    )
    .await;
    assert_eq!(back["data"]["replaced_sequence_key"], fern.as_str());
    assert_eq!(back["data"]["replaced_source"], "bound");
    assert_eq!(
        current(&app, &viewer, &species).await,
        ("bound".to_owned(), "fern_spore".to_owned())
    );
    // The tool listing shows the setup tool to the platform admin only.
    for (k, listed) in [
        (&viewer, false),
        (&grower, false),
        (&admin, false),
        (&setup, true),
    ] {
        let res = app
            .rest_auth(Some(&bearer(k)))
            .get("/api/v1/mcp/tools")
            .await;
        let body: Value = res.json().await.expect("json");
        let names: Vec<&str> = body["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .filter_map(|t| t["name"].as_str())
            .collect();
        assert_eq!(names.contains(&"assign_species_phase_sequence"), listed);
        assert!(names.contains(&"search_plant_knowledge"));
    }
}

/// Garden fixtures in `tenant` for the place and substrate tools, made over REST with `key`
/// (an admin's): (location key, global substrate key, batch key).
async fn garden_fixtures(
    app: &TestApp,
    key: &str,
    tenant: &TenantRecord,
) -> (String, String, String) {
    let slug = tenant.slug.as_str();
    let post = |path: String, body: Value| async move {
        let res = app.rest_auth(Some(&bearer(key))).post(&path, &body).await;
        assert_eq!(res.status().as_u16(), 201, "{path}");
        res.json::<Value>().await.expect("json")
    };
    let site = post(
        format!("/api/v1/t/{slug}/sites/"),
        json!({"name": "Matrix balcony", "kind": "balcony"}),
    )
    .await;
    let location = post(
        format!("/api/v1/t/{slug}/locations/"),
        json!({"site_key": site["key"], "name": "Box 1", "kind": "container"}),
    )
    .await;
    let substrate = crate::substrates::global_substrate(app, "coco", 5.8, true, 3).await;
    let batch = post(
        format!("/api/v1/t/{slug}/substrate-batches/"),
        json!({"substrate_key": substrate, "label": "Matrix batch"}),
    )
    .await;
    (
        location["key"].as_str().expect("key").to_owned(),
        substrate,
        batch["key"].as_str().expect("key").to_owned(),
    )
}

/// Arguments that make each tool succeed (fixture content; `species` is one the test owns).
async fn valid_args(
    app: &TestApp,
    key: &str,
    species: &str,
    tenant: &TenantRecord,
) -> Vec<(&'static str, Value)> {
    let (location, substrate, batch) = garden_fixtures(app, key, tenant).await;
    let other = crate::substrates::global_substrate(app, "perlite", 7.0, true, 3).await;
    let fertilizer = crate::fertilizers::global_fertilizer(app, json!({})).await;
    let tomato = species_key(app, key, "fixtura%20tomatoides").await;
    let cultivars = ok(app, key, "list_cultivars", json!({"species_key": tomato})).await;
    let pests = ok(app, key, "list_pests", json!({"query": "fixturia"})).await;
    let pest = pests["data"]["items"][0]["pest_key"].clone();
    let detail = ok(app, key, "get_pest", json!({"pest_key": pest})).await;
    let diseases = ok(app, key, "list_diseases", json!({"query": "fixturomyces"})).await;
    let fern = sequence_key(app, key, "fern_spore").await;
    let plans = crate::nutrient_plans::matrix_args(app, tenant).await;
    let mut calls = vec![
        ("list_tenants", json!({})),
        ("get_mcp_activity", json!({"limit": 5})),
        ("list_species", json!({"limit": 5})),
        ("get_species_info", json!({"species_key": tomato})),
        ("list_cultivars", json!({"species_key": tomato})),
        (
            "get_cultivar",
            json!({"cultivar_key": cultivars["data"]["items"][0]["cultivar_key"]}),
        ),
        ("list_pests", json!({"query": "fixture"})),
        ("get_pest", json!({"pest_key": pest})),
        ("list_diseases", json!({})),
        (
            "get_disease",
            json!({"disease_key": diseases["data"]["items"][0]["disease_key"]}),
        ),
        (
            "get_treatment",
            json!({"treatment_key": detail["data"]["treatments"][0]["treatment_key"]}),
        ),
        ("list_phase_definitions", json!({"name_filter": "fx"})),
        ("get_species_phase_sequence", json!({"species_key": tomato})),
        ("list_phase_sequences", json!({"include_entries": true})),
        (
            "list_species_by_phase_sequence",
            json!({"sequence_key": fern}),
        ),
        ("get_species_lifecycle", json!({"species_key": tomato})),
        ("list_hardiness_zones", json!({})),
        (
            "search_glossary",
            json!({"query": "fixture", "language": "en"}),
        ),
        ("search_plant_knowledge", json!({"query": "fixture"})),
        ("list_starter_kits", json!({})),
        ("list_overwintering_profiles", json!({})),
        (
            "assign_species_phase_sequence",
            json!({"species_key": species, "sequence_key": fern}),
        ),
        ("get_location", json!({"location_key": location})),
        ("list_substrates", json!({"limit": 5})),
        ("get_substrate", json!({"substrate_key": substrate})),
        (
            "preview_substrate_mix",
            json!({"components": [
                {"substrate_key": substrate, "fraction": 0.7},
                {"substrate_key": other, "fraction": 0.3}
            ]}),
        ),
        ("list_substrate_batches", json!({})),
        ("get_substrate_batch", json!({"batch_key": batch})),
        ("check_batch_reusability", json!({"batch_key": batch})),
        (
            "create_substrate_mix",
            json!({"name_en": "Matrix mix", "components": [
                {"substrate_key": substrate, "fraction": 0.5},
                {"substrate_key": other, "fraction": 0.5}
            ]}),
        ),
        (
            "calculate_mixing_protocol",
            json!({"fertilizers": [{"fertilizer_key": fertilizer}],
                   "target_volume_liters": 20, "target_ec_ms": 1.2}),
        ),
        (
            "create_site",
            json!({"name": "Matrix greenhouse", "kind": "greenhouse"}),
        ),
        ("get_sowing_calendar", json!({"zone": "7a", "year": 2026})),
    ];
    let ipm = crate::ipm::tool_args(app, tenant).await;
    calls.extend(ipm);
    let entry = crate::photos::diary_entry(app, tenant).await;
    calls.push(("get_diary_entry_photos", json!({"entry_key": entry})));
    calls.extend(plans);
    calls.extend(crate::diary_analysis::tool_args(app, tenant).await);
    calls
}

#[tokio::test]
async fn mcp_tools_tenant_isolation_matrix() {
    let app = app().await;
    let padmin = app.platform_admin().await;
    let a = app.tenant("mcpma").await;
    let b = app.tenant("mcpmb").await;
    let mut keys = Vec::new();
    for role in [Role::Viewer, Role::Grower, Role::Admin] {
        keys.push((role, scoped_key(&app, &a, role).await));
    }
    // Unscoped: it covers B and the account's personal garden.
    let outsider = app.api_key(&app.member(&b, Role::Admin).await, None).await;
    let admin = keys[2].1.clone();
    let species = own_species(&app, &padmin, json!({})).await;
    let setup = app.api_key(&padmin, None).await;

    // The registry is exactly the expected catalogue, with the permission table (a platform
    // admin's listing: the only one that shows the setup tool).
    let res = app
        .rest_auth(Some(&bearer(&setup)))
        .get("/api/v1/mcp/tools")
        .await;
    let listing: Value = res.json().await.expect("json");
    let names: Vec<&str> = listing["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ALL_TOOLS);
    for t in listing["tools"].as_array().expect("tools") {
        let want = permission_of(t["name"].as_str().unwrap_or_default());
        assert_eq!(t["permission"], want, "{}", t["name"]);
        assert_eq!(t["input_schema"]["additionalProperties"], false);
        assert!(
            t["input_schema"]["properties"]["tenant"].is_object(),
            "{}",
            t["name"]
        );
    }

    let mut calls = valid_args(&app, &admin, &species, &a).await;
    // The plant tools stand between the catalogue tools and the place tools in the registry.
    let at = calls
        .iter()
        .position(|(n, _)| *n == "get_location")
        .unwrap_or(calls.len());
    let plant_calls = plant_args(&app, &a).await;
    calls.splice(at..at, plant_calls);
    // The task and care tools come last in the registry; they use the matrix plant.
    let matrix_plant = calls
        .iter()
        .find(|(n, _)| *n == "get_plant")
        .map(|(_, a)| a["plant_key"].clone())
        .unwrap_or_default();
    calls.extend([
        ("list_tasks", json!({"status": "pending"})),
        ("get_due_care_tasks", json!({"urgency": "all"})),
        ("get_plant_care_log", json!({"plant_key": matrix_plant})),
        (
            "confirm_care_task",
            json!({"plant_key": matrix_plant, "reminder_type": "watering"}),
        ),
    ]);
    // The feeding tools stand last in the registry; they use the plant made above.
    for name in ["get_plant_diagnostics", "record_feeding_event"] {
        if let Some(i) = calls.iter().position(|(n, _)| *n == name) {
            let call = calls.remove(i);
            calls.push(call);
        }
    }
    calls.push(("list_webhooks", json!({"limit": 3})));
    calls.extend(crate::sensors::tool_args(&app, &a).await);
    // Every tool of the registry has exactly one call (the order is the calls' dependencies').
    let mut called: Vec<&str> = calls.iter().map(|(n, _)| *n).collect();
    let mut listed = ALL_TOOLS.to_vec();
    called.sort_unstable();
    listed.sort_unstable();
    assert_eq!(called, listed);
    // Every tool refuses an unknown argument and a wrongly typed one, naming them.
    for (tool, args) in &calls {
        let mut extra = args.clone();
        extra["bogus_argument"] = json!(true);
        invalid(
            &app,
            &admin,
            tool,
            extra,
            "bogus_argument",
            "extra_forbidden",
        )
        .await;
        let mut typed = args.clone();
        typed["tenant"] = json!(5);
        invalid(&app, &admin, tool, typed, "tenant", "type_error").await;
    }
    let a_id = a.id.to_string();
    for (tool, args) in &calls {
        let mut in_a = args.clone();
        in_a["tenant"] = json!(a.slug.as_str());
        if writes(tool) {
            // Keep the matrix free of side effects; the real writes are tested elsewhere.
            in_a["dry_run"] = json!(true);
        }
        for (role, key) in &keys {
            let (status, body) = call(&app, key, tool, in_a.clone()).await;
            // The catalogue setup tool binds the platform garden, so no role in A reaches it;
            // the garden's write and setup tools follow the role in A.
            let allowed = match permission_of(tool) {
                _ if *tool == "assign_species_phase_sequence" => false,
                // Webhook URLs are for the garden's admins (REST lists them to admins only).
                _ if *tool == "list_webhooks" => *role == Role::Admin,
                "mcp.setup" => *role == Role::Admin,
                "mcp.write" => *role != Role::Viewer,
                _ => true,
            };
            if allowed {
                assert_eq!(status, 200, "{tool} as {role:?}: {body}");
            } else {
                assert_eq!(
                    (status, body["error_code"].as_str()),
                    (403, Some("permission.denied")),
                    "{tool} as {role:?}"
                );
            }
        }
        // Another garden's key addressing A: not found, never denied, and nothing of A shown.
        let (status, body) = call(&app, &outsider, tool, in_a.clone()).await;
        assert_eq!(
            (status, body["error_code"].as_str()),
            (404, Some("not_found")),
            "{tool}: {body}"
        );
        let text = body.to_string();
        assert!(
            !text.contains(a.slug.as_str()) && !text.contains(&a_id),
            "{tool} leaks A: {text}"
        );
        // The same key in its own garden: whatever it answers, nothing of A.
        let mut own_args = args.clone();
        if writes(tool) {
            own_args["dry_run"] = json!(true);
        }
        let (_, own) = call(&app, &outsider, tool, own_args).await;
        let text = own.to_string();
        assert!(
            !text.contains(a.slug.as_str()) && !text.contains(&a_id),
            "{tool} leaks A: {text}"
        );
    }
    assert_eq!(
        current(&app, &admin, &species).await,
        (
            "selected".to_owned(),
            "evergreen_foliage_perennial".to_owned()
        ),
        "dry runs only"
    );
    let mut rpc = Rpc::open(&app, &outsider).await;
    let r = rpc
        .call(
            "get_species_info",
            json!({"species_key": MISSING, "tenant": a.slug.as_str()}),
        )
        .await;
    assert_eq!(r["structuredContent"]["error_code"], "not_found");
    assert!(!r.to_string().contains(a.slug.as_str()));
}

#[tokio::test]
async fn mcp_tools_get_sowing_calendar() {
    let app = app().await;
    let (key, tenant) = member_key(&app, Role::Viewer).await;
    let tomato = species_key(&app, &key, "fixtura%20tomatoides").await;
    // Empty garden: no species.
    let empty = ok(&app, &key, "get_sowing_calendar", json!({"year": 2026})).await;
    assert_eq!(empty["data"]["count"], 0);
    assert_eq!(empty["data"]["frost"]["last"], "2026-05-01");
    // One species asked for by key, in zone 7a (fixture last frost 04-20: 11 days earlier).
    let one = ok(
        &app,
        &key,
        "get_sowing_calendar",
        json!({"species_key": tomato, "zone": "7a", "year": 2026}),
    )
    .await;
    assert_eq!(one["data"]["zone"], "7a");
    assert_eq!(one["data"]["items"][0]["common_name"], "Fixture tomato");
    assert_eq!(one["data"]["items"][0]["bars"][0]["phase"], "indoor_sowing");
    assert_eq!(
        one["data"]["items"][0]["bars"][0]["start_date"],
        "2026-02-18"
    );
    assert!(
        one["links"]
            .as_array()
            .expect("links")
            .iter()
            .any(|l| l["url"] == format!("/api/v1/t/{}/calendar/sowing", tenant.slug))
    );
    // The same answer as the REST route.
    let rest: Value = app
        .rest_auth(Some(&bearer(&key)))
        .get(&format!(
            "/api/v1/t/{}/calendar/sowing?species={tomato}&zone=7a&year=2026",
            tenant.slug
        ))
        .await
        .json()
        .await
        .expect("json");
    assert_eq!(rest["items"], one["data"]["items"]);
    invalid(
        &app,
        &key,
        "get_sowing_calendar",
        json!({"zone": "99"}),
        "zone",
        "enum",
    )
    .await;
    invalid(
        &app,
        &key,
        "get_sowing_calendar",
        json!({"year": 1999}),
        "year",
        "out_of_range",
    )
    .await;
    fails(
        &app,
        &key,
        "get_sowing_calendar",
        json!({"species_key": uuid::Uuid::new_v4().to_string()}),
        404,
        "not_found",
    )
    .await;
}
