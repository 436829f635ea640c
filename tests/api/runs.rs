//! Planting runs: create, list, get with plants per phase, status transitions, adding plants,
//! creating N plants over free slots (all or nothing), roles, two tenants, and the tool.

use kultiva::auth::Role;
use serde_json::{Value, json};

use crate::garden::*;
use crate::support::{TestApp, assert_error, detail_fields};

const TOMATO: &str = "Fixtura tomatoides";
const HYBRID: &str = "Fixtura × hybrida";

fn runs_path(t: &kultiva::tenancy::TenantRecord) -> String {
    format!("/api/v1/t/{}/planting-runs/", t.slug)
}

#[tokio::test]
async fn runs_create_list_get_and_status() {
    let app = TestApp::spawn().await;
    let t = app.tenant("runs").await;
    let base = runs_path(&t);
    let (_, loc, _) = bed(&app, &t, "Run box", 0).await;

    let (s, run) = post(
        &app,
        &base,
        json!({"name": "Spring tomatoes", "location_key": loc,
        "planned_quantity": 6, "planned_start_date": "2026-03-01"}),
    )
    .await;
    assert_eq!(s, 201, "{run}");
    assert_eq!(run["status"], "planned");
    assert_eq!(run["run_type"], "monoculture");
    assert_eq!(run["plant_count"], 0);
    assert_eq!(run["next_statuses"], json!(["active", "cancelled"]));
    let k = key(&run);
    let (s, _) = post(&app, &base, json!({"name": "Herbs"})).await;
    assert_eq!(s, 201);

    // Bad bodies write nothing.
    for body in [
        json!({}),
        json!({"name": "x", "run_type": "mixed"}),
        json!({"name": "x", "planned_quantity": 0}),
        json!({"name": "x", "planned_start_date": "someday"}),
        json!({"name": "x", "extra": 1}),
    ] {
        let res = app.post_json(&base, &body).await;
        assert_error(res, 422, "VALIDATION_ERROR").await;
    }
    let res = app
        .post_json(
            &base,
            &json!({"name": "x", "location_key": uuid::Uuid::now_v7()}),
        )
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    assert_eq!(count(&app, &t, "planting_runs").await, 2);

    // Status: planned → active → harvesting → completed; forbidden moves are 422.
    let (s, err) = post(
        &app,
        &format!("{base}{k}/status"),
        json!({"status": "completed"}),
    )
    .await;
    assert_eq!(
        (s, err["error_code"].as_str()),
        (422, Some("INVALID_STATUS_TRANSITION")),
        "{err}"
    );
    assert_eq!(err["details"][0]["field"], "body.status");
    let (s, active) = post(
        &app,
        &format!("{base}{k}/status"),
        json!({"status": "active"}),
    )
    .await;
    assert_eq!(s, 200);
    assert!(active["started_at"].is_string());
    let (s, _) = post(
        &app,
        &format!("{base}{k}/status"),
        json!({"status": "planned"}),
    )
    .await;
    assert_eq!(s, 422);
    let (s, _) = post(
        &app,
        &format!("{base}{k}/status"),
        json!({"status": "harvesting"}),
    )
    .await;
    assert_eq!(s, 200);
    let (s, done) = post(
        &app,
        &format!("{base}{k}/status"),
        json!({"status": "completed"}),
    )
    .await;
    assert_eq!(s, 200);
    assert!(done["completed_at"].is_string());
    assert_eq!(done["next_statuses"], json!([]));
    let (s, err) = post(
        &app,
        &format!("{base}{k}/status"),
        json!({"status": "cancelled"}),
    )
    .await;
    assert_eq!(
        (s, err["error_code"].as_str()),
        (422, Some("INVALID_STATUS_TRANSITION"))
    );
    let (s, _) = post(
        &app,
        &format!("{base}{k}/status"),
        json!({"status": "done"}),
    )
    .await;
    assert_eq!(s, 422);

    // List, filter, paging.
    let (_, page) = get_json(&app, &base).await;
    assert_eq!(page["total"], 2);
    let (_, page) = get_json(&app, &format!("{base}?status=completed")).await;
    assert_eq!(
        (page["total"].clone(), page["items"][0]["key"].clone()),
        (json!(1), json!(k))
    );
    let (_, page) = get_json(&app, &format!("{base}?status=planned&limit=1")).await;
    assert_eq!(page["items"][0]["name"], "Herbs");
    for bad in ["status=late", "limit=101", "limit=0", "skip=-3"] {
        assert_error(
            app.get(&format!("{base}?{bad}")).await,
            422,
            "VALIDATION_ERROR",
        )
        .await;
    }
    let (_, page) = get_json(&app, &format!("{base}?skip=9")).await;
    assert_eq!(
        (page["total"].clone(), page["items"].clone()),
        (json!(2), json!([]))
    );
    for bad in [uuid::Uuid::now_v7().to_string(), "x".into()] {
        assert_error(
            app.get(&format!("{base}{bad}")).await,
            404,
            "ENTITY_NOT_FOUND",
        )
        .await;
    }
}

#[tokio::test]
async fn runs_add_plants_and_summary() {
    let app = TestApp::spawn().await;
    let t = app.tenant("runsadd").await;
    let base = runs_path(&t);
    let tomato = species(&app, TOMATO).await;
    let ph = phases(&app, &tomato).await;
    let p1 = plant(&app, &t, json!({"species_key": tomato})).await;
    let p2 = plant(&app, &t, json!({"species_key": tomato})).await;
    let gone = plant(&app, &t, json!({"species_key": tomato})).await;
    let (s, _) = post(
        &app,
        &format!("{}{}/archive", plants_path(&t), key(&gone)),
        json!({"reason": "died"}),
    )
    .await;
    assert_eq!(s, 200);
    let (_, run) = post(&app, &base, json!({"name": "Adopted"})).await;
    let k = key(&run);
    let (_, other) = post(&app, &base, json!({"name": "Other"})).await;

    let (s, got) = post(
        &app,
        &format!("{base}{k}/plants"),
        json!({"plant_keys": [key(&p1), key(&p2)]}),
    )
    .await;
    assert_eq!(s, 200, "{got}");
    assert_eq!(got["plant_count"], 2);
    // Move one plant forward: the summary counts plants per phase.
    let (s, _) = post(
        &app,
        &format!("{}{}/phase-transitions", plants_path(&t), key(&p2)),
        json!({"target_phase_key": ph[1]}),
    )
    .await;
    assert_eq!(s, 200);
    let (_, detail) = get_json(&app, &format!("{base}{k}")).await;
    assert_eq!(detail["plants_live"], 2);
    let per: Vec<(Value, Value)> = detail["plants_per_phase"]
        .as_array()
        .expect("phases")
        .iter()
        .map(|p| (p["phase_key"].clone(), p["live"].clone()))
        .collect();
    assert_eq!(per, [(json!(ph[0]), json!(1)), (json!(ph[1]), json!(1))]);
    // The plant list filters by run.
    let (_, page) = get_json(&app, &format!("{}?run={k}", plants_path(&t))).await;
    assert_eq!(page["total"], 2);

    // Refusals write nothing: unknown plant 404, archived or another run's plant 422.
    let unknown = uuid::Uuid::now_v7();
    let (s, _) = post(
        &app,
        &format!("{base}{k}/plants"),
        json!({"plant_keys": [unknown]}),
    )
    .await;
    assert_eq!(s, 404);
    let (s, err) = post(
        &app,
        &format!("{base}{k}/plants"),
        json!({"plant_keys": [key(&gone)]}),
    )
    .await;
    assert_eq!(
        (s, detail_fields(&err)),
        (422, vec!["body.plant_keys[0]".to_owned()])
    );
    let (s, _) = post(
        &app,
        &format!("{base}{}/plants", key(&other)),
        json!({"plant_keys": [key(&p1)]}),
    )
    .await;
    assert_eq!(s, 422);
    for body in [
        json!({"plant_keys": []}),
        json!({"plant_keys": ["x"]}),
        json!({}),
    ] {
        let (s, _) = post(&app, &format!("{base}{k}/plants"), body).await;
        assert_eq!(s, 422);
    }
    assert_eq!(count(&app, &t, "planting_run_plants").await, 2);

    // A completed run takes no plants: 409 INVALID_RUN_STATE.
    let p3 = plant(&app, &t, json!({"species_key": tomato})).await;
    for status in ["active", "completed"] {
        let (s, _) = post(
            &app,
            &format!("{base}{k}/status"),
            json!({"status": status}),
        )
        .await;
        assert_eq!(s, 200);
    }
    let res = app
        .post_json(
            &format!("{base}{k}/plants"),
            &json!({"plant_keys": [key(&p3)]}),
        )
        .await;
    assert_error(res, 409, "INVALID_RUN_STATE").await;
    assert_eq!(count(&app, &t, "planting_run_plants").await, 2);
}

#[tokio::test]
async fn runs_create_plants_fills_free_slots_all_or_nothing() {
    let app = TestApp::spawn().await;
    let t = app.tenant("runsbulk").await;
    let base = runs_path(&t);
    let tomato = species(&app, TOMATO).await;
    let hybrid = species(&app, HYBRID).await;
    let ph = phases(&app, &tomato).await;
    let (_, loc, slots) = bed(&app, &t, "Bulk box", 5).await;
    // Slot 2 is taken already.
    plant(
        &app,
        &t,
        json!({"species_key": tomato, "slot_key": slots[1], "name": "Squatter"}),
    )
    .await;
    let (_, run) = post(&app, &base, json!({"name": "Bulk", "location_key": loc})).await;
    let k = key(&run);
    let path = format!("{base}{k}/create-plants");

    // Too many: 422, nothing written.
    let (s, err) = post(
        &app,
        &path,
        json!({"species_key": tomato, "quantity": 5, "id_prefix": "TOM"}),
    )
    .await;
    assert_eq!(
        (s, detail_fields(&err)),
        (422, vec!["body.quantity".to_owned()]),
        "{err}"
    );
    for body in [
        json!({"species_key": tomato, "quantity": 1, "id_prefix": "tom"}),
        json!({"species_key": tomato, "quantity": 0, "id_prefix": "TOM"}),
        json!({"species_key": tomato, "id_prefix": "TOM"}),
    ] {
        let (s, _) = post(&app, &path, body).await;
        assert_eq!(s, 422);
    }
    assert_eq!(count(&app, &t, "plants").await, 1);

    // Three plants into slots 1, 3, 4 in order, named TOM_01…, in their first phase.
    let (s, done) = post(
        &app,
        &path,
        json!({"species_key": tomato, "quantity": 3, "id_prefix": "TOM"}),
    )
    .await;
    assert_eq!(s, 201, "{done}");
    assert_eq!(done["status"], "active");
    assert_eq!(done["plant_count"], 3);
    assert_eq!(done["plants_per_phase"][0]["phase_key"], ph[0]);
    assert_eq!(done["entries"][0]["quantity"], 3);
    let (_, page) = get_json(&app, &format!("{}?run={k}", plants_path(&t))).await;
    let placed: Vec<(String, String)> = page["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|p| {
            (
                p["name"].as_str().unwrap_or_default().to_owned(),
                p["slot_key"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        placed,
        [
            ("TOM_01".to_owned(), slots[0].to_string()),
            ("TOM_02".to_owned(), slots[2].to_string()),
            ("TOM_03".to_owned(), slots[3].to_string()),
        ]
    );
    // The run is active now: creating plants needs a planned run.
    let res = app
        .post_json(
            &path,
            &json!({"species_key": tomato, "quantity": 1, "id_prefix": "TOM"}),
        )
        .await;
    assert_error(res, 409, "INVALID_RUN_STATE").await;

    // All or nothing: a second run wants two plants of the tomato's family into slot 5 and
    // ... only slot 5 is free, so 2 is too many; 1 goes into slot 5 next to TOM_03 (same
    // family next door is no companion problem). Then archive it and try again: rotation.
    let (_, run2) = post(&app, &base, json!({"name": "Bulk 2", "location_key": loc})).await;
    let path2 = format!("{base}{}/create-plants", key(&run2));
    let (s, _) = post(
        &app,
        &path2,
        json!({"species_key": hybrid, "quantity": 2, "id_prefix": "HY"}),
    )
    .await;
    assert_eq!(s, 422);
    let (s, ok) = post(
        &app,
        &path2,
        json!({"species_key": hybrid, "quantity": 1, "id_prefix": "HY"}),
    )
    .await;
    assert_eq!(s, 201, "{ok}");
    let (_, page) = get_json(&app, &format!("{}?name=HY_01", plants_path(&t))).await;
    let hy = page["items"][0]["key"].as_str().expect("HY_01").to_owned();
    let (s, _) = post(
        &app,
        &format!("{}{hy}/archive", plants_path(&t)),
        json!({"reason": "died"}),
    )
    .await;
    assert_eq!(s, 200);
    let (_, run3) = post(&app, &base, json!({"name": "Bulk 3", "location_key": loc})).await;
    let before = count(&app, &t, "plants").await;
    let res = app
        .post_json(
            &format!("{base}{}/create-plants", key(&run3)),
            &json!({"species_key": tomato, "quantity": 1, "id_prefix": "RT"}),
        )
        .await;
    assert_error(res, 422, "ROTATION_VIOLATION").await;
    assert_eq!(count(&app, &t, "plants").await, before);
    let (_, r3) = get_json(&app, &format!("{base}{}", key(&run3))).await;
    assert_eq!(
        (r3["status"].clone(), r3["plant_count"].clone()),
        (json!("planned"), json!(0))
    );
}

#[tokio::test]
async fn runs_roles_and_two_tenants() {
    let app = TestApp::full_env(&[("MCP_SERVER_ENABLED", "true")]).await;
    let a = app.tenant("runsa").await;
    let b = app.tenant("runsb").await;
    let base = runs_path(&a);
    let viewer = app.member(&a, Role::Viewer).await;
    let grower = app.member(&a, Role::Grower).await;
    let admin = app.member(&a, Role::Admin).await;
    let stranger = app.member(&b, Role::Admin).await;
    let body = json!({"name": "Roles"});

    let res = app.rest_as(&viewer).post(&base, &body).await;
    assert_error(res, 403, "FORBIDDEN").await;
    let res = app.rest_as(&stranger).post(&base, &body).await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    let mut keys = Vec::new();
    for who in [&grower, &admin] {
        let res = app.rest_as(who).post(&base, &body).await;
        assert_eq!(res.status().as_u16(), 201);
        let v: Value = res.json().await.expect("json");
        keys.push(key(&v));
    }
    let k = &keys[0];
    for who in [&viewer, &grower, &admin] {
        for path in [base.clone(), format!("{base}{k}")] {
            let res = app.rest_as(who).get(&path).await;
            assert_eq!(res.status().as_u16(), 200);
        }
    }
    let status = json!({"status": "active"});
    let res = app
        .rest_as(&viewer)
        .post(&format!("{base}{k}/status"), &status)
        .await;
    assert_error(res, 403, "FORBIDDEN").await;
    // B's member: nothing of A, by A's slug or by A's run key in B's paths.
    let res = app.rest_as(&stranger).get(&format!("{base}{k}")).await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    let b_base = runs_path(&b);
    let res = app.rest_as(&stranger).get(&format!("{b_base}{k}")).await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    let res = app
        .rest_as(&stranger)
        .post(&format!("{b_base}{k}/status"), &status)
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    let res = app
        .rest_as(&stranger)
        .post(
            &format!("{b_base}{k}/plants"),
            &json!({"plant_keys": [uuid::Uuid::now_v7()]}),
        )
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    let res = app.rest_as(&stranger).get(&b_base).await;
    let page: Value = res.json().await.expect("json");
    assert_eq!(page["total"], 0);
    let (_, a_run) = (0, count(&app, &a, "planting_runs").await);
    assert_eq!(a_run, 2);

    // The tool: viewer reads A's runs with a status filter; B's key finds nothing of A.
    let vk = app.api_key(&viewer, Some(a.slug.as_str())).await;
    let res = app
        .rest_key(&vk)
        .post(
            "/api/v1/mcp/tools/list_planting_runs",
            &json!({"status": "planned"}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let body: Value = res.json().await.expect("json");
    assert_eq!(body["data"]["total"], 2);
    assert_eq!(body["data"]["items"][0]["run_key"], k.as_str());
    let res = app
        .rest_key(&vk)
        .post(
            "/api/v1/mcp/tools/list_planting_runs",
            &json!({"status": "late"}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 422);
    let bk = app.api_key(&stranger, Some(b.slug.as_str())).await;
    let res = app
        .rest_key(&bk)
        .post(
            "/api/v1/mcp/tools/list_planting_runs",
            &json!({"tenant": a.slug.as_str()}),
        )
        .await;
    let body: Value = res.json().await.expect("json");
    assert_eq!(body["error_code"], "not_found");
}

/// The run operations check what the document states and nothing looser: the list's `status`
/// takes only its values (an empty one is malformed), a run type of null is the default, a
/// start date outside 1900–2100 and a padded id prefix are refused. Refusals write nothing.
#[tokio::test]
async fn runs_requests_are_checked_as_documented() {
    let app = TestApp::spawn().await;
    let t = app.tenant("runsdoc").await;
    let base = runs_path(&t);
    for query in ["status=", "status=%20active", "status=Active"] {
        let err = assert_error(
            app.get(&format!("{base}?{query}")).await,
            422,
            "VALIDATION_ERROR",
        )
        .await;
        assert_eq!(detail_fields(&err), ["query.status"], "{query}");
    }
    let (s, run) = post(&app, &base, json!({"name": "Beans", "run_type": null})).await;
    assert_eq!(s, 201, "{run}");
    assert_eq!(run["run_type"], "monoculture");
    let (s, run2) = post(&app, &base, json!({"name": "Clones", "run_type": "clone"})).await;
    assert_eq!(s, 201, "{run2}");
    assert_eq!(run2["run_type"], "clone");
    for (body, field) in [
        (
            json!({"name": "x", "planned_start_date": "2101-01-01"}),
            "body.planned_start_date",
        ),
        (
            json!({"name": "x", "planned_quantity": 10001}),
            "body.planned_quantity",
        ),
        (
            json!({"name": "x", "location_key": uuid::Uuid::now_v7().simple().to_string()}),
            "body.location_key",
        ),
        (json!({"name": "x", "notes": "a\u{1}"}), "body.notes"),
    ] {
        let err = assert_error(app.post_json(&base, &body).await, 422, "VALIDATION_ERROR").await;
        assert_eq!(detail_fields(&err), [field], "{body}");
    }
    assert_eq!(count(&app, &t, "planting_runs").await, 2);
    let tomato = species(&app, TOMATO).await;
    let run_path = format!("{base}{}", key(&run));
    for (body, field) in [
        (
            json!({"species_key": tomato, "quantity": 1, "id_prefix": " AB"}),
            "body.id_prefix",
        ),
        (
            json!({"species_key": tomato, "quantity": 1, "id_prefix": "AB", "cultivar_key": ""}),
            "body.cultivar_key",
        ),
    ] {
        let (s, err) = post(&app, &format!("{run_path}/create-plants"), body.clone()).await;
        assert_eq!(s, 422, "{body}: {err}");
        assert_eq!(detail_fields(&err), [field], "{body}");
    }
    for body in [
        json!({"status": null}),
        json!({"status": "done"}),
        json!({}),
    ] {
        let (s, err) = post(&app, &format!("{run_path}/status"), body.clone()).await;
        assert_eq!(s, 422, "{body}: {err}");
        assert_eq!(detail_fields(&err), ["body.status"], "{body}");
    }
    let (_, got) = get_json(&app, &run_path).await;
    assert_eq!(got["status"], "planned");
    assert_eq!(count(&app, &t, "plants").await, 0);
}
