//! The OpenAPI document and the two documentation pages.

use serde_json::Value;

use crate::support::TestApp;

#[tokio::test]
async fn document_lists_every_route_with_params_and_errors() {
    // With the tool server on, so its routes are checked too.
    let app = TestApp::spawn_env(&[("MCP_SERVER_ENABLED", "true")]).await;
    let res = app.get("/api/v1/openapi.json").await;
    assert_eq!(res.status().as_u16(), 200);
    let doc: Value = res.json().await.expect("json");
    assert!(doc["openapi"].as_str().is_some_and(|v| v.starts_with("3.")));
    let paths = doc["paths"].as_object().expect("paths");

    for (path, method) in [
        ("/api/health", "get"),
        ("/api/v1/health/live", "get"),
        ("/api/v1/health/ready", "get"),
        ("/api/v1/mode", "get"),
        ("/api/v1/t/{slug}/sites", "get"),
        ("/api/v1/t/{slug}/sites", "post"),
        ("/api/v1/t/{slug}/sites/{site_key}", "get"),
        ("/api/v1/mcp", "post"),
        ("/api/v1/mcp", "delete"),
        ("/api/v1/mcp/tools/{tool_name}", "post"),
        ("/api/v1/users/me/mcp-activity", "get"),
    ] {
        assert!(
            paths.get(path).and_then(|p| p.get(method)).is_some(),
            "{method} {path} documented"
        );
    }

    // A read answered from a kept, already rendered document still documents its body.
    let answer = &paths["/api/v1/species/{key}/phase-sequence"]["get"]["responses"]["200"];
    let schema = answer["content"]["application/json"]["schema"]["$ref"]
        .as_str()
        .unwrap_or_default();
    assert!(schema.ends_with("SpeciesSequence"), "{answer}");

    let schemas = doc["components"]["schemas"].as_object().expect("schemas");
    for name in schemas.keys() {
        assert!(
            name.chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c)),
            "component name {name}"
        );
    }
    assert!(schemas.contains_key("ErrorRecord"));

    for (path, item) in paths {
        for (method, op) in item.as_object().expect("path item") {
            let declared: Vec<&str> = op["parameters"]
                .as_array()
                .map(|ps| {
                    ps.iter()
                        .filter(|p| p["in"] == "path")
                        .filter_map(|p| p["name"].as_str())
                        .collect()
                })
                .unwrap_or_default();
            for segment in path.split('/').filter(|s| s.starts_with('{')) {
                let name = segment.trim_matches(|c| c == '{' || c == '}');
                assert!(
                    declared.contains(&name),
                    "{method} {path} declares path parameter {name}"
                );
            }
            assert!(
                op["operationId"].as_str().is_some(),
                "{method} {path} has an operationId"
            );
            let responses = op["responses"].as_object().expect("responses");
            // `GET /api/v1/mcp` is specified as always 405 (no server-initiated stream).
            assert!(
                responses.keys().any(|c| c.starts_with('2'))
                    || (path == "/api/v1/mcp" && method == "get"),
                "{method} {path} documents success"
            );
            // The tool server's JSON-RPC endpoint answers transport faults as JSON-RPC errors,
            // and its REST face carries the tools' own error codes; everything else uses the
            // error record.
            let allowed: &[&str] = if path.starts_with("/api/v1/mcp") {
                &[
                    "#/components/schemas/ErrorRecord",
                    "#/components/schemas/JsonRpcError",
                    "#/components/schemas/McpRefusal",
                    "#/components/schemas/ToolErrorRecord",
                ]
            } else {
                &["#/components/schemas/ErrorRecord"]
            };
            for (code, response) in responses {
                if code.starts_with('4') || code == "500" {
                    let schema = &response["content"]["application/json"]["schema"]["$ref"];
                    assert!(
                        schema.as_str().is_some_and(|s| allowed.contains(&s)),
                        "{method} {path} {code} uses the error record: {schema}"
                    );
                }
            }
            if path.starts_with("/api/v1/t/") {
                assert!(
                    responses.contains_key("404"),
                    "{method} {path} documents the unknown-tenant 404"
                );
            }
        }
    }
    // Create answers 201, not 200.
    let create = &paths["/api/v1/t/{slug}/sites"]["post"]["responses"];
    assert!(create.get("201").is_some() && create.get("200").is_none());
}

#[tokio::test]
async fn docs_pages_are_served() {
    let app = TestApp::spawn().await;
    let res = app.get("/api/v1/docs").await;
    assert!(res.status().is_redirection());
    let res = app.get("/api/v1/docs/").await;
    assert_eq!(res.status().as_u16(), 200);
    let html = res.text().await.expect("html");
    assert!(
        html.contains("swagger") || html.contains("Swagger"),
        "swagger ui page"
    );
    assert!(html.contains("/api/v1/openapi.json"));
    // ReDoc (issue 17): the page, its start script and the bundle all come from this service;
    // the page names no other origin and forbids every other origin by its CSP.
    let res = app.get("/api/v1/redoc").await;
    assert_eq!(res.status().as_u16(), 200);
    let csp = header(&res, "content-security-policy");
    assert!(
        csp.starts_with("default-src 'none'; script-src 'self';"),
        "{csp}"
    );
    assert!(csp.contains("img-src 'self' data:;"), "{csp}");
    let html = res.text().await.expect("html");
    assert!(
        html.contains("data-spec-url=\"/api/v1/openapi.json\""),
        "{html}"
    );
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "{html}"
    );
    let bundle = format!("/api/v1/redoc/assets/{}", kultiva::app::redoc::BUNDLE_FILE);
    assert!(
        html.contains(&format!("<script src=\"{bundle}\"></script>")),
        "{html}"
    );
    assert!(html.contains("<script src=\"/api/v1/redoc/assets/start.js\"></script>"));
    assert_eq!(
        html.matches("<script").count(),
        2,
        "no inline script: {html}"
    );

    let res = app.get(&bundle).await;
    assert_eq!(res.status().as_u16(), 200);
    assert_eq!(
        header(&res, "content-type"),
        "text/javascript; charset=utf-8"
    );
    assert_eq!(
        header(&res, "cache-control"),
        "public, max-age=31536000, immutable"
    );
    assert_eq!(header(&res, "x-content-type-options"), "nosniff");
    let js = res.text().await.expect("bundle");
    assert!(js.len() > 500_000, "the whole standalone bundle");
    assert!(js.contains("Version: \"2.5.2\"") || js.contains("2.5.2"));

    let res = app.get("/api/v1/redoc/assets/start.js").await;
    assert_eq!(res.status().as_u16(), 200);
    assert_eq!(
        header(&res, "content-type"),
        "text/javascript; charset=utf-8"
    );
    let start = res.text().await.expect("start script");
    assert!(
        start.contains("Redoc.init(\"/api/v1/openapi.json\""),
        "{start}"
    );
    // Only these exact files are served.
    let res = app.get("/api/v1/redoc/assets/redoc.standalone.js").await;
    assert_eq!(res.status().as_u16(), 404);
}

fn header(res: &reqwest::Response, name: &str) -> String {
    res.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn the_document_follows_the_mode() {
    let full = TestApp::spawn_env(&[("SERVICE_MODE", "full")]).await;
    let doc: Value = full
        .get("/api/v1/openapi.json")
        .await
        .json()
        .await
        .expect("json");
    let list = &doc["paths"]["/api/v1/t/{slug}/sites"]["get"];
    assert!(
        list["responses"].get("401").is_some(),
        "full mode documents 401"
    );
    assert_eq!(list["security"][0]["bearer"], serde_json::json!([]));
    assert!(doc["components"]["securitySchemes"].get("bearer").is_some());
    // Health stays open in the document too.
    assert!(
        doc["paths"]["/api/v1/health/live"]["get"]
            .get("security")
            .is_none()
    );

    let light = TestApp::spawn().await;
    let doc: Value = light
        .get("/api/v1/openapi.json")
        .await
        .json()
        .await
        .expect("json");
    let list = &doc["paths"]["/api/v1/t/{slug}/sites"]["get"];
    assert!(
        list["responses"].get("401").is_none(),
        "light mode asks for no credential"
    );
    assert!(list.get("security").is_none());
    let body = &doc["components"]["schemas"]["SiteCreate"];
    assert_eq!(body["additionalProperties"], false);
    assert_eq!(body["properties"]["name"]["maxLength"], 120);
}

#[tokio::test]
async fn a_disabled_tool_server_is_not_in_the_document() {
    let app = TestApp::spawn().await;
    let doc: Value = app
        .get("/api/v1/openapi.json")
        .await
        .json()
        .await
        .expect("json");
    let paths = doc["paths"].as_object().expect("paths");
    let mcp: Vec<&String> = paths
        .keys()
        .filter(|p| p.starts_with("/api/v1/mcp"))
        .collect();
    assert!(mcp.is_empty(), "{mcp:?}");
    // The caller's own audit history is a REST route of its own and stays.
    assert!(paths.contains_key("/api/v1/users/me/mcp-activity"));
}

#[tokio::test]
async fn every_garden_operation_states_its_minimum_role() {
    let app = TestApp::spawn_env(&[("SERVICE_MODE", "full")]).await;
    let doc: Value = app
        .get("/api/v1/openapi.json")
        .await
        .json()
        .await
        .expect("json");
    let paths = doc["paths"].as_object().expect("paths");
    for (path, item) in paths {
        for (method, op) in item.as_object().expect("path item") {
            let role = op.get("x-min-role").and_then(Value::as_str);
            if path.starts_with("/api/v1/t/") {
                assert!(
                    matches!(role, Some("viewer" | "grower" | "admin")),
                    "{method} {path}: x-min-role {role:?}"
                );
                if role != Some("viewer") {
                    assert!(op["responses"].get("403").is_some(), "{method} {path} 403");
                }
            } else {
                assert!(role.is_none(), "{method} {path} is not a garden route");
            }
        }
    }
    let sites = &paths["/api/v1/t/{slug}/sites"];
    assert_eq!(sites["get"]["x-min-role"], "viewer");
    assert_eq!(sites["post"]["x-min-role"], "admin");
    assert_eq!(
        paths["/api/v1/t/{slug}/sites/{site_key}"]["get"]["x-min-role"],
        "viewer"
    );
}

/// The plant and run request schemas state what the handlers check (issue 12): enums of the
/// list filters, non-nullable PATCH fields, key lengths, "a location or a slot", and links
/// from each create operation to what follows it (the stateful phase of schemathesis walks
/// them).
#[tokio::test]
async fn garden_request_schemas_state_the_handlers_rules() {
    let app = TestApp::spawn().await;
    let doc: Value = app
        .get("/api/v1/openapi.json")
        .await
        .json()
        .await
        .expect("json");
    let schemas = &doc["components"]["schemas"];
    let resolve = |schema: &Value| -> Value {
        match schema["$ref"].as_str() {
            Some(r) => schemas[r.trim_start_matches("#/components/schemas/")].clone(),
            None => schema.clone(),
        }
    };
    let param = |path: &str, name: &str| -> Value {
        let params = doc["paths"][path]["get"]["parameters"]
            .as_array()
            .expect("parameters");
        let p = params
            .iter()
            .find(|p| p["name"] == name)
            .expect("parameter");
        resolve(&p["schema"])
    };
    let plants = "/api/v1/t/{slug}/plant-instances";
    assert_eq!(
        param(plants, "status")["enum"],
        serde_json::json!(["active", "disposed", "given_away", "died"])
    );
    assert_eq!(
        param(plants, "archived")["enum"],
        serde_json::json!(["false", "true", "any"])
    );
    assert_eq!(param(plants, "slot")["format"], "uuid");
    assert_eq!(param(plants, "name")["maxLength"], 100);
    assert_eq!(
        param("/api/v1/t/{slug}/planting-runs", "status")["enum"],
        serde_json::json!(["planned", "active", "harvesting", "completed", "cancelled"])
    );

    let update = &schemas["PlantUpdate"];
    assert_eq!(update["additionalProperties"], false);
    assert_eq!(
        update["properties"]["name"]["type"], "string",
        "null is refused"
    );
    for clearable in ["cultivar_key", "planted_on", "notes"] {
        assert_eq!(
            update["properties"][clearable]["type"],
            serde_json::json!(["string", "null"]),
            "{clearable} clears with null"
        );
    }
    let create = &schemas["PlantCreate"]["properties"];
    assert_eq!(create["species_key"]["maxLength"], 100);
    assert_eq!(create["species_key"]["minLength"], 1);
    assert_eq!(create["name"]["type"], "string");
    assert_eq!(
        schemas["PhaseTransition"]["properties"]["target_phase_key"]["maxLength"],
        100
    );
    let any_of = schemas["PlantLocation"]["anyOf"].as_array().expect("anyOf");
    let needed: Vec<&Value> = any_of.iter().map(|a| &a["required"][0]).collect();
    assert_eq!(needed, ["location_key", "slot_key"]);
    let run = &schemas["PlantingRunCreate"]["properties"];
    assert_eq!(
        run["planned_quantity"]["type"],
        serde_json::json!(["integer", "null"])
    );
    assert_eq!(run["planned_quantity"]["maximum"], 10000);
    assert!(run["run_type"].is_object(), "run_type documented");
    assert_eq!(
        schemas["PlantingRunStatusChange"]["required"],
        serde_json::json!(["status"])
    );

    // Garden II and III: item rules of text lists, whole-record PUTs, the task vocabularies.
    let symptoms = &schemas["InspectionCreate"]["properties"]["symptoms_observed"];
    assert_eq!(symptoms["maxItems"], 50);
    assert_eq!(symptoms["items"]["maxLength"], 500);
    assert_eq!(symptoms["items"]["minLength"], 1);
    assert!(symptoms["items"]["pattern"].is_string());
    assert_eq!(
        schemas["HarvestBatchCreate"]["properties"]["defects"]["items"]["maxLength"],
        60
    );
    assert_eq!(
        schemas["GardenSettingsBody"]["required"],
        serde_json::json!(["hardiness_zone"])
    );
    let put_prefs = schemas["UserPreferencesPut"]["required"]
        .as_array()
        .map(Vec::len);
    assert_eq!(put_prefs, Some(8), "a PUT states every preference");
    assert!(schemas["UserPreferencesBody"]["required"].is_null());
    let task = &schemas["TaskCreate"]["properties"];
    assert_eq!(task["priority"]["pattern"], "^(low|medium|high|critical)$");
    assert_eq!(task["priority"]["type"], "string", "null is refused");
    assert!(task["due_on"]["pattern"].is_string());
    assert_eq!(
        schemas["TaskPatch"]["properties"]["checklist"]["type"],
        "array"
    );

    // Links: create → get/patch/sub-operations with the created key; the invitation chain.
    let links = &doc["paths"][plants]["post"]["responses"]["201"]["links"];
    assert_eq!(links["get_plant"]["operationId"], "get_plant");
    assert_eq!(
        links["get_plant"]["parameters"]["plant_key"],
        "$response.body#/key"
    );
    assert_eq!(
        links["update_plant"]["parameters"]["slug"],
        "$request.path.slug"
    );
    let site_links = &doc["paths"]["/api/v1/t/{slug}/sites"]["post"]["responses"]["201"]["links"];
    for id in ["get_site", "update_site", "delete_site"] {
        assert_eq!(site_links[id]["operationId"], id);
    }
    let invite =
        &doc["paths"]["/api/v1/tenants/{slug}/members"]["post"]["responses"]["202"]["links"];
    for id in [
        "accept_my_invitation",
        "decline_my_invitation",
        "withdraw_invitation",
    ] {
        assert_eq!(
            invite[id]["parameters"]["invitation_key"], "$response.body#/key",
            "{id}"
        );
    }
}

/// Every garden request body, and every object inside one (a mix's components), is closed
/// (`additionalProperties: false`): the handlers refuse a field they do not know (422
/// `extra_forbidden`), so the document says so, and schemathesis does not send extras
/// expecting them to pass. The body types derive `Deserialize` with `deny_unknown_fields`,
/// which is where the document takes it from. PATCH fields that refuse null are not nullable.
#[tokio::test]
async fn every_garden_request_body_is_closed() {
    let app = TestApp::spawn().await;
    let doc: Value = app
        .get("/api/v1/openapi.json")
        .await
        .json()
        .await
        .expect("json");
    let schemas = &doc["components"]["schemas"];
    let mut open = Vec::new();
    let mut bodies = std::collections::BTreeSet::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        if !path.starts_with("/api/v1/t/") {
            continue;
        }
        for (method, op) in item.as_object().expect("path item") {
            let Some(schema) = op
                .pointer("/requestBody/content/application~1json/schema")
                .cloned()
            else {
                continue;
            };
            // Only a clone may go without a body (it then keeps the source's name + " (copy)").
            let optional = op["operationId"] == "clone_nutrient_plan";
            assert_eq!(
                op["requestBody"]["required"],
                Value::Bool(!optional),
                "{method} {path}: body required"
            );
            let (name, schema) = match schema["$ref"].as_str() {
                Some(r) => {
                    let name = r.trim_start_matches("#/components/schemas/");
                    (name.to_owned(), schemas[name].clone())
                }
                None => (format!("{method} {path} (inline)"), schema),
            };
            bodies.insert(name.clone());
            // The body and every object inside it (list items, nested objects, `$ref`s).
            let mut pending = vec![(name, schema)];
            let mut seen = std::collections::BTreeSet::new();
            while let Some((at, schema)) = pending.pop() {
                if let Some(r) = schema["$ref"].as_str() {
                    let name = r.trim_start_matches("#/components/schemas/");
                    if seen.insert(name.to_owned()) {
                        pending.push((name.to_owned(), schemas[name].clone()));
                    }
                    continue;
                }
                if let Some(props) = schema["properties"].as_object() {
                    // An object definition (an `anyOf` branch stating which field is needed
                    // only constrains the object it belongs to); a map (diary measurements)
                    // states the schema of every further value instead.
                    let closed = schema["additionalProperties"] == false
                        || schema["additionalProperties"].is_object();
                    if schema["type"] == "object" && !closed {
                        open.push(format!("{method} {path}: {at}"));
                    }
                    for (field, sub) in props {
                        pending.push((format!("{at}.{field}"), sub.clone()));
                    }
                }
                if schema["items"].is_object() {
                    pending.push((format!("{at}[]"), schema["items"].clone()));
                }
                for combinator in ["allOf", "anyOf", "oneOf"] {
                    for sub in schema[combinator].as_array().into_iter().flatten() {
                        pending.push((at.clone(), sub.clone()));
                    }
                }
            }
        }
    }
    assert!(
        open.is_empty(),
        "garden request bodies not closed: {open:#?}"
    );
    // Fields the handlers refuse as null say so (a PATCH keeps what is omitted).
    let prop = |schema: &str, field: &str| schemas[schema]["properties"][field].clone();
    for (schema, field, kind) in [
        ("SitePatch", "name", "string"),
        ("LocationPatch", "site_key", "string"),
        ("LocationPatch", "name", "string"),
        ("SlotPatch", "code", "string"),
        ("SlotPatch", "capacity", "integer"),
        ("SubstrateBatchPatch", "label", "string"),
        ("SubstrateBatchPatch", "ph_current", "number"),
        ("SubstrateBatchPatch", "ec_current_ms", "number"),
        ("SubstrateCreate", "reusable", "boolean"),
    ] {
        assert_eq!(
            prop(schema, field)["type"],
            kind,
            "{schema}.{field} refuses null"
        );
    }
    assert_eq!(
        prop("SitePatch", "kind")["allOf"][0]["$ref"],
        "#/components/schemas/SiteKind",
        "SitePatch.kind refuses null"
    );
    for (schema, field) in [
        ("SitePatch", "description"),
        ("LocationPatch", "parent_key"),
        ("SlotPatch", "position_x"),
        ("SubstrateBatchPatch", "volume_liters"),
        ("SubstrateBatchPatch", "mixed_on"),
    ] {
        assert_eq!(
            prop(schema, field)["type"][1],
            "null",
            "{schema}.{field} clears with null"
        );
    }
    let component = &schemas["MixComponent"]["properties"];
    assert_eq!(component["fraction"]["minimum"], 0.01);
    assert_eq!(component["fraction"]["maximum"], 1.0);
    assert_eq!(component["substrate_key"]["maxLength"], 200);
    // The ones this check was written for are among those it walked.
    for name in [
        "SiteCreate",
        "SitePatch",
        "LocationCreate",
        "LocationPatch",
        "SlotCreate",
        "SlotPatch",
        "SlotNeighbours",
        "SlotSubstrateBatch",
        "SubstrateCreate",
        "SubstratePatch",
        "SubstrateMixPreview",
        "SubstrateMixCreate",
        "SubstrateBatchCreate",
        "SubstrateBatchPatch",
        "PlantUpdate",
    ] {
        assert!(bodies.contains(name), "{name} is a garden request body");
    }
}

/// Issue 26 (item 5): rules the server enforces and JSON Schema can state are in the document
/// — lists that must not be empty, tag items, consent that must be true, patterns, "one of
/// these two" and "this needs that" pairs, and every request body that must be sent.
#[tokio::test]
async fn request_schemas_state_lists_consent_patterns_and_pairs() {
    let app = TestApp::spawn_env(&[("MCP_SERVER_ENABLED", "true")]).await;
    let doc: Value = app
        .get("/api/v1/openapi.json")
        .await
        .json()
        .await
        .expect("json");
    let schemas = &doc["components"]["schemas"];
    let prop = |schema: &str, field: &str| schemas[schema]["properties"][field].clone();

    // Lists the server refuses empty.
    assert_eq!(prop("NutrientPlanCreate", "phases")["minItems"], 1);
    assert_eq!(prop("PhaseSequenceCreate", "entries")["minItems"], 1);
    assert_eq!(prop("PhaseSequencePatch", "entries")["minItems"], 1);
    assert_eq!(prop("TaskCreate", "checklist")["maxItems"], 50);
    assert_eq!(prop("TaskPatch", "checklist")["maxItems"], 50);

    // Tags: each item a line of 1 to 50 characters, at most 20 (diary and plans alike).
    for (schema, len) in [
        ("DiaryEntryCreate", 50),
        ("DiaryEntryUpdate", 50),
        ("NutrientPlanCreate", 50),
        ("StarterKitCreate", 60),
    ] {
        let tags = prop(schema, "tags");
        assert_eq!(tags["maxItems"], 20, "{schema}.tags");
        assert_eq!(tags["items"]["minLength"], 1, "{schema}.tags");
        assert_eq!(tags["items"]["maxLength"], len, "{schema}.tags");
        assert!(tags["items"]["pattern"].is_string(), "{schema}.tags");
    }

    // Consent must be true.
    assert_eq!(prop("DiaryAnalysisRequest", "consent")["const"], true);

    // Patterns the handlers check.
    for (schema, field) in [
        ("PlantingCheck", "species_key"),
        ("SubstrateBatchCreate", "substrate_key"),
        ("FertilizerUse", "fertilizer_key"),
        ("TaskRecurrence", "phase"),
        ("CareConfirm", "notes"),
        ("CareConfirm", "confirmed_on"),
        ("CareSnooze", "notes"),
        ("TaskStatusChange", "notes"),
        ("ImportUpload", "csv"),
    ] {
        assert!(
            prop(schema, field)["pattern"].is_string(),
            "{schema}.{field} states its pattern"
        );
    }
    let measurements = prop("DiaryEntryCreate", "measurements");
    assert_eq!(measurements["maxProperties"], 20);
    assert_eq!(
        measurements["propertyNames"]["pattern"],
        "^[a-z][a-z0-9_]{0,39}$"
    );
    assert_eq!(measurements["properties"]["ph"]["maximum"], 14);
    assert_eq!(measurements["properties"]["leaf_count"]["type"], "integer");
    let text = schemas["DiaryMeasurementValue"]["oneOf"]
        .as_array()
        .expect("oneOf")
        .iter()
        .find(|v| v["type"] == "string")
        .cloned()
        .expect("a text value");
    assert_eq!(text["maxLength"], 200);
    assert!(text["pattern"].is_string());

    // Pairs: exactly one, at least one, at most one, together or not at all.
    let required = |branch: &Value| branch["required"].clone();
    let one_of = schemas["InspectionCreate"]["oneOf"]
        .as_array()
        .expect("InspectionCreate oneOf");
    assert_eq!(
        one_of.iter().map(required).collect::<Vec<_>>(),
        [
            serde_json::json!(["plant_key"]),
            serde_json::json!(["location_key"])
        ]
    );
    let one_of = schemas["NutrientPlanAssign"]["oneOf"]
        .as_array()
        .expect("NutrientPlanAssign oneOf");
    assert_eq!(
        one_of.iter().map(required).collect::<Vec<_>>(),
        [
            serde_json::json!(["plant_key"]),
            serde_json::json!(["run_key"])
        ]
    );
    let treatment = schemas["TreatmentApplicationCreate"]["allOf"]
        .as_array()
        .expect("TreatmentApplicationCreate allOf");
    assert_eq!(
        treatment[1]["anyOf"][1]["required"],
        serde_json::json!(["dose", "dose_unit"]),
        "a dose needs its unit"
    );
    assert_eq!(
        treatment[1]["anyOf"][0]["properties"]["dose"]["type"],
        "null"
    );
    let watering = schemas["WateringEventCreate"]["allOf"]
        .as_array()
        .expect("WateringEventCreate allOf");
    assert_eq!(
        watering.len(),
        2,
        "plants or a run; a runoff EC needs the fed EC"
    );
    let diary = schemas["DiaryEntryCreate"]["anyOf"]
        .as_array()
        .expect("DiaryEntryCreate anyOf");
    assert_eq!(diary[0]["properties"]["plant_key"]["type"], "null");
    assert_eq!(diary[1]["properties"]["run_key"]["type"], "null");
    assert!(schemas["HarvestBatchCreate"]["anyOf"].is_array());
    let substrate = schemas["MixingProtocolRequest"]["anyOf"]
        .as_array()
        .expect("MixingProtocolRequest anyOf");
    assert_eq!(
        substrate[0]["properties"]["substrate_type"]["type"], "null",
        "a substrate type or a substrate record, not both"
    );
    assert_eq!(substrate[1]["properties"]["substrate_key"]["type"], "null");
    assert_eq!(
        schemas["RunoffRequest"]["allOf"].as_array().map(Vec::len),
        Some(2)
    );
    let recurrence = schemas["TaskRecurrence"]["anyOf"]
        .as_array()
        .expect("TaskRecurrence anyOf");
    assert_eq!(recurrence.len(), 3, "one branch per kind of recurrence");

    // Every operation that reads a body says it needs one (only a clone goes without).
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, op) in item.as_object().expect("path item") {
            if let Some(body) = op.get("requestBody") {
                let optional = op["operationId"] == "clone_nutrient_plan";
                assert_eq!(
                    body["required"],
                    Value::Bool(!optional),
                    "{method} {path}: body required"
                );
            }
        }
    }
}

/// Issue 26 (item 5): the tool server's routes document every answer of the transport, the
/// JSON-RPC body and the session header.
#[tokio::test]
async fn the_tool_server_routes_document_the_transport() {
    let app = TestApp::spawn_env(&[("MCP_SERVER_ENABLED", "true")]).await;
    let doc: Value = app
        .get("/api/v1/openapi.json")
        .await
        .json()
        .await
        .expect("json");
    let paths = &doc["paths"];
    let schema_of = |op: &Value, code: &str| {
        op["responses"][code]["content"]["application/json"]["schema"]["$ref"]
            .as_str()
            .unwrap_or_default()
            .trim_start_matches("#/components/schemas/")
            .to_owned()
    };
    let header = |op: &Value, name: &str| {
        op["parameters"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|p| p["in"] == "header" && p["name"] == name)
            .cloned()
            .unwrap_or(Value::Null)
    };
    for path in ["/api/v1/mcp", "/api/v1/mcp/rpc"] {
        let post = &paths[path]["post"];
        for (code, schema) in [
            ("400", "JsonRpcError"),
            ("403", "JsonRpcError"),
            ("404", "McpRefusal"),
            ("406", "JsonRpcError"),
            ("413", "McpRefusal"),
            ("415", "JsonRpcError"),
            ("503", "JsonRpcError"),
        ] {
            assert_eq!(schema_of(post, code), schema, "POST {path} {code}");
        }
        assert_eq!(post["requestBody"]["required"], true, "POST {path}");
        let body = &post["requestBody"]["content"]["application/json"]["schema"]["oneOf"];
        assert_eq!(body[0]["$ref"], "#/components/schemas/JsonRpcMessage");
        assert_eq!(body[1]["maxItems"], 100, "a batch holds 1 to 100 messages");
        let session = header(post, "Mcp-Session-Id");
        assert_eq!(session["required"], false, "POST {path}: not on initialize");
        let version = header(post, "MCP-Protocol-Version");
        assert!(version["schema"]["enum"].is_array(), "POST {path}");
    }
    let message = &doc["components"]["schemas"]["JsonRpcMessage"];
    assert_eq!(message["required"], serde_json::json!(["jsonrpc"]));
    assert_eq!(
        message["properties"]["jsonrpc"]["enum"],
        serde_json::json!(["2.0"])
    );

    let delete = &paths["/api/v1/mcp"]["delete"];
    let session = header(delete, "Mcp-Session-Id");
    assert_eq!(session["required"], true, "DELETE /mcp names the session");
    assert_eq!(schema_of(delete, "403"), "JsonRpcError");
    assert_eq!(schema_of(delete, "503"), "JsonRpcError");
    assert!(delete["responses"].get("204").is_some());
    assert!(
        delete["responses"].get("200").is_none(),
        "DELETE /mcp never answers 200"
    );
    let call = &paths["/api/v1/mcp/tools/{tool_name}"]["post"];
    for code in ["403", "404", "409", "413", "422", "500", "503"] {
        assert_eq!(
            schema_of(call, code),
            "ToolErrorRecord",
            "a tool call's {code} carries the tool's error_code"
        );
    }
    assert_eq!(
        schema_of(&paths["/api/v1/mcp/tools"]["get"], "503"),
        "ErrorRecord"
    );
    assert_eq!(call["requestBody"]["required"], true);
    assert_eq!(
        call["requestBody"]["content"]["application/json"]["schema"]["type"],
        "object"
    );
}
