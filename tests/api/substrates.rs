//! Substrates (global catalogue ones beside the garden's own, marked by scope), the mix preview
//! and stored mixes, substrate batches with readings, reusability and cycles
//! (`SUBSTRATE_EXHAUSTED`), roles, tenant isolation and the substrate tools.

use kultiva::auth::Role;
use reqwest::Method;
use serde_json::{Map, Value, json};

use crate::catalog::letters;
use crate::places::{rows, rpc_call, tool};
use crate::support::{TestApp, assert_error, detail_fields};

/// A global substrate only this test knows (the catalogue is shared by parallel tests).
pub(crate) async fn global_substrate(
    app: &TestApp,
    substrate_type: &str,
    ph: f64,
    reusable: bool,
    max_reuse: i64,
) -> String {
    let body: Map<String, Value> = json!({
        "name_en": format!("Test {substrate_type} {}", letters()),
        "type": substrate_type,
        "ph_base": ph,
        "ec_base_ms": 0.5,
        "air_porosity_percent": 30.0,
        "water_retention": "medium",
        "reusable": reusable,
        "max_reuse_cycles": max_reuse,
        "composition": [{"material": substrate_type, "fraction": 1.0}],
    })
    .as_object()
    .cloned()
    .unwrap_or_default();
    let created = kultiva::catalog::engine::service::create(
        &app.state,
        &kultiva::catalog::substrates::model::SUBSTRATE,
        body,
    )
    .await
    .expect("global substrate");
    created["key"].as_str().expect("key").to_owned()
}

async fn json_of(res: reqwest::Response, status: u16) -> Value {
    let got = res.status().as_u16();
    let body: Value = res.json().await.expect("json");
    assert_eq!(got, status, "{body}");
    body
}

async fn patch(app: &TestApp, path: &str, body: Value) -> reqwest::Response {
    app.call(Method::PATCH, path, None, Some(&body)).await
}

#[tokio::test]
async fn substrates_list_global_and_own_marked_get_and_create() {
    let app = TestApp::spawn().await;
    let tenant = app.tenant("subs").await;
    let base = format!("/api/v1/t/{}/substrates/", tenant.slug);
    let coco = global_substrate(&app, "coco", 5.8, true, 3).await;

    // The catalogue is shared by parallel tests: this test's records carry its global's token.
    let coco_name = json_of(app.get(&format!("{base}{coco}")).await, 200).await["name"]
        .as_str()
        .expect("name")
        .to_owned();
    let token = coco_name.rsplit(' ').next().expect("token").to_owned();

    // The garden's own substrate: defaults filled, type-specific irrigation.
    let own = json_of(
        app.post_json(
            &base,
            &json!({"name": format!("  Balcony soil {token} "), "name_de": "Balkonerde", "type": "soil",
                    "ph_base": 6.2, "reusable": true}),
        )
        .await,
        201,
    )
    .await;
    assert_eq!(own["scope"], "tenant");
    assert_eq!(own["name"], format!("Balcony soil {token}"));
    assert!(
        own["key"]
            .as_str()
            .is_some_and(|k| k.starts_with("tenant:"))
    );
    assert_eq!(own["type"], "soil");
    assert_eq!(own["ph_base"], 6.2);
    assert_eq!(own["ec_base_ms"], 0.5);
    assert_eq!(own["air_porosity_percent"], 25.0);
    assert_eq!(own["max_reuse_cycles"], 3);
    assert_eq!(own["irrigation_strategy"], "moderate");
    assert_eq!(own["is_mix"], false);
    let own_key = own["key"].as_str().expect("key").to_owned();

    // One listing, both scopes marked, global first.
    let page = json_of(app.get(&format!("{base}?q={token}")).await, 200).await;
    assert_eq!(page["total"], 2, "{page}");
    assert_eq!(page["items"][0]["key"], coco.as_str());
    assert_eq!(page["items"][0]["scope"], "global");
    assert_eq!(page["items"][0]["type"], "coco");
    assert_eq!(page["items"][0]["reusable"], true);
    assert_eq!(page["items"][1]["key"], own_key.as_str());
    // Paging runs across both parts.
    let second = json_of(
        app.get(&format!("{base}?q={token}&skip=1&limit=1")).await,
        200,
    )
    .await;
    assert_eq!(
        (second["total"].clone(), second["items"][0]["key"].clone()),
        (json!(2), json!(own_key))
    );
    let first = json_of(
        app.get(&format!("{base}?q={token}&skip=0&limit=1")).await,
        200,
    )
    .await;
    assert_eq!(first["items"][0]["key"], coco.as_str());
    let beyond = json_of(app.get(&format!("{base}?q={token}&skip=2")).await, 200).await;
    assert_eq!(beyond["items"], json!([]));
    // Only the garden's own / only global ones / by type.
    let mine = json_of(app.get(&format!("{base}?scope=tenant")).await, 200).await;
    assert_eq!(mine["total"], 1);
    assert_eq!(mine["items"][0]["key"], own_key.as_str());
    let globals = json_of(
        app.get(&format!("{base}?scope=global&q={token}")).await,
        200,
    )
    .await;
    assert_eq!(globals["total"], 1);
    let soil = json_of(app.get(&format!("{base}?type=soil&q={token}")).await, 200).await;
    assert_eq!(soil["items"][0]["key"], own_key.as_str());
    assert_eq!(soil["total"], 1);
    // Search by German name reaches the garden's own.
    let found = json_of(app.get(&format!("{base}?q=balkon&scope=tenant")).await, 200).await;
    assert_eq!(found["total"], 1);
    for q in ["limit=0", "limit=201", "skip=-1", "scope=mine", "type=mud"] {
        let err = assert_error(
            app.get(&format!("{base}?{q}")).await,
            422,
            "VALIDATION_ERROR",
        )
        .await;
        assert_eq!(err["details"].as_array().map(Vec::len), Some(1), "{q}");
    }

    // Get both kinds of key; unknown and foreign-shaped keys are 404.
    let got = json_of(app.get(&format!("{base}{coco}")).await, 200).await;
    assert_eq!(got["scope"], "global");
    let got = json_of(app.get(&format!("{base}{own_key}")).await, 200).await;
    assert_eq!(got, own);
    for missing in [
        uuid::Uuid::now_v7().to_string(),
        format!("tenant:{}", uuid::Uuid::now_v7()),
        "tenant:nope".to_owned(),
        "nope".to_owned(),
    ] {
        assert_error(
            app.get(&format!("{base}{missing}")).await,
            404,
            "ENTITY_NOT_FOUND",
        )
        .await;
    }

    // Duplicate names (case-insensitive) and bad fields write nothing.
    assert_error(
        app.post_json(
            &base,
            &json!({"name": format!("BALCONY SOIL {token}"), "type": "coco"}),
        )
        .await,
        409,
        "DUPLICATE_ENTRY",
    )
    .await;
    let err = assert_error(
        app.post_json(
            &base,
            &json!({"name": "", "type": "mud", "ph_base": 12, "max_reuse_cycles": 0,
                    "water_retention": "wet", "extra": 1}),
        )
        .await,
        422,
        "VALIDATION_ERROR",
    )
    .await;
    assert_eq!(
        detail_fields(&err),
        [
            "body.name",
            "body.type",
            "body.ph_base",
            "body.water_retention",
            "body.max_reuse_cycles",
            "body.extra"
        ]
    );
    assert_eq!(rows(&app, &tenant, "substrates").await, 1);
}

#[tokio::test]
async fn substrates_mix_preview_and_stored_mix() {
    let app = TestApp::spawn().await;
    let tenant = app.tenant("mix").await;
    let mixes = format!("/api/v1/t/{}/substrate-mixes/", tenant.slug);
    let coco = global_substrate(&app, "coco", 5.8, true, 3).await;
    let perlite = global_substrate(&app, "perlite", 7.0, true, 5).await;
    let components = json!([
        {"substrate_key": coco, "fraction": 0.7},
        {"substrate_key": perlite, "fraction": 0.3}
    ]);

    let preview = json_of(
        app.post_json(
            &format!("{mixes}preview"),
            &json!({"components": components}),
        )
        .await,
        200,
    )
    .await;
    // 0.7 · 5.8 + 0.3 · 7.0 = 6.16
    assert_eq!(preview["ph_base"], 6.16);
    assert_eq!(preview["type"], "coco");
    assert_eq!(preview["reusable"], true);
    assert_eq!(preview["max_reuse_cycles"], 3);
    assert_eq!(preview["composition"]["coco"], 0.7);
    assert_eq!(preview["components"], components);
    assert_eq!(
        rows(&app, &tenant, "substrates").await,
        0,
        "a preview stores nothing"
    );

    // Every mix rule is a 422 with the field; an unknown component a 404.
    for (body, field) in [
        (
            json!({"components": [{"substrate_key": coco, "fraction": 1.0}]}),
            "body.components",
        ),
        (
            json!({"components": [{"substrate_key": coco, "fraction": 0.5}, {"substrate_key": perlite, "fraction": 0.3}]}),
            "body.components",
        ),
        (
            json!({"components": [{"substrate_key": coco, "fraction": 0.5}, {"substrate_key": coco, "fraction": 0.5}]}),
            "body.components[1].substrate_key",
        ),
        (
            json!({"components": [{"substrate_key": coco, "fraction": "half"}, {"substrate_key": perlite, "fraction": 0.5}]}),
            "body.components[0].fraction",
        ),
        (json!({"components": "coco"}), "body.components"),
        (json!({}), "body.components"),
    ] {
        let err = assert_error(
            app.post_json(&format!("{mixes}preview"), &body).await,
            422,
            "VALIDATION_ERROR",
        )
        .await;
        assert!(
            detail_fields(&err).contains(&field.to_owned()),
            "{body}: {err}"
        );
    }
    assert_error(
        app.post_json(
            &format!("{mixes}preview"),
            &json!({"components": [{"substrate_key": coco, "fraction": 0.5},
                                   {"substrate_key": format!("tenant:{}", uuid::Uuid::now_v7()), "fraction": 0.5}]}),
        )
        .await,
        404,
        "ENTITY_NOT_FOUND",
    )
    .await;

    // Stored: a tenant substrate with is_mix and the computed values.
    let mix = json_of(
        app.post_json(
            &mixes,
            &json!({"name": "Coco-perlite 70/30", "components": components}),
        )
        .await,
        201,
    )
    .await;
    assert_eq!(mix["scope"], "tenant");
    assert_eq!(mix["is_mix"], true);
    assert_eq!(mix["ph_base"], 6.16);
    assert_eq!(mix["mix_components"], components);
    // A mix cannot be a component of another mix.
    let err = assert_error(
        app.post_json(
            &format!("{mixes}preview"),
            &json!({"components": [{"substrate_key": mix["key"], "fraction": 0.5},
                                   {"substrate_key": perlite, "fraction": 0.5}]}),
        )
        .await,
        422,
        "VALIDATION_ERROR",
    )
    .await;
    assert_eq!(detail_fields(&err), ["body.components[0].substrate_key"]);
    assert_error(
        app.post_json(
            &mixes,
            &json!({"name": "coco-PERLITE 70/30", "components": components}),
        )
        .await,
        409,
        "DUPLICATE_ENTRY",
    )
    .await;
    assert_eq!(rows(&app, &tenant, "substrates").await, 1);
}

#[tokio::test]
async fn substrate_batches_readings_reuse_and_cycles() {
    let app = TestApp::spawn().await;
    let tenant = app.tenant("batch").await;
    let base = format!("/api/v1/t/{}/substrate-batches/", tenant.slug);
    let coco = global_substrate(&app, "coco", 5.8, true, 2).await;
    let peat = global_substrate(&app, "peat", 5.5, false, 1).await;

    let batch = json_of(
        app.post_json(
            &base,
            &json!({"substrate_key": coco, "label": "Coco A", "volume_liters": 50,
                    "mixed_on": "2026-03-01", "ph_current": 5.9}),
        )
        .await,
        201,
    )
    .await;
    assert_eq!(batch["substrate_key"], coco.as_str());
    assert!(
        batch["substrate_name"]
            .as_str()
            .is_some_and(|n| n.starts_with("Test coco"))
    );
    assert_eq!(batch["substrate_type"], "coco");
    assert_eq!(batch["reusable"], true);
    assert_eq!(batch["max_reuse_cycles"], 2);
    assert_eq!(batch["mixed_on"], "2026-03-01");
    assert_eq!(batch["cycles_used"], 0);
    assert_eq!(batch["ph_history"].as_array().map(Vec::len), Some(1));
    let key = batch["key"].as_str().expect("key").to_owned();

    // A reading appends to the history and becomes the current value.
    let patched = json_of(
        patch(
            &app,
            &format!("{base}{key}"),
            json!({"ph_current": 6.0, "ec_current_ms": 0.8}),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(patched["ph_current"], 6.0);
    assert_eq!(patched["ec_current_ms"], 0.8);
    assert_eq!(
        patched["ph_history"]
            .as_array()
            .expect("ph")
            .iter()
            .map(|r| r["value"].clone())
            .collect::<Vec<_>>(),
        [json!(5.9), json!(6.0)]
    );
    assert_eq!(patched["ec_history"].as_array().map(Vec::len), Some(1));
    let patched = json_of(
        patch(
            &app,
            &format!("{base}{key}"),
            json!({"label": "Coco B", "volume_liters": null}),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(patched["label"], "Coco B");
    assert_eq!(patched["volume_liters"], Value::Null);
    assert_eq!(patched["ph_current"], 6.0, "kept");

    // Reusable coco: CalMag soak, flush, drain = 27 h.
    let r = json_of(app.get(&format!("{base}{key}/reusability")).await, 200).await;
    assert_eq!(r["can_reuse"], true, "{r}");
    assert_eq!(r["issues"], json!([]));
    assert_eq!(r["preparation_hours"], 27);
    assert_eq!(r["preparation_steps"].as_array().map(Vec::len), Some(3));
    assert!(r["ready_on"].as_str().is_some_and(|d| d.len() == 10));

    // Cycles up to the limit of 2, then SUBSTRATE_EXHAUSTED and nothing changes.
    let next = json_of(
        app.post_json(&format!("{base}{key}/cycles"), &json!({}))
            .await,
        200,
    )
    .await;
    assert_eq!(next["cycles_used"], 1);
    let next = json_of(
        app.post_json(&format!("{base}{key}/cycles"), &json!({}))
            .await,
        200,
    )
    .await;
    assert_eq!(next["cycles_used"], 2);
    let err = assert_error(
        app.post_json(&format!("{base}{key}/cycles"), &json!({}))
            .await,
        422,
        "SUBSTRATE_EXHAUSTED",
    )
    .await;
    assert!(
        err["details"][0]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("(2/2)")),
        "{err}"
    );
    let r = json_of(app.get(&format!("{base}{key}/reusability")).await, 200).await;
    assert_eq!(r["can_reuse"], false);
    assert_eq!(r["ready_on"], Value::Null);
    let now = json_of(app.get(&format!("{base}{key}")).await, 200).await;
    assert_eq!(now["cycles_used"], 2);

    // Peat is disposable: never reused.
    let peat_batch = json_of(
        app.post_json(&base, &json!({"substrate_key": peat, "label": "Seed peat"}))
            .await,
        201,
    )
    .await;
    let pk = peat_batch["key"].as_str().expect("key");
    let r = json_of(app.get(&format!("{base}{pk}/reusability")).await, 200).await;
    assert_eq!(r["can_reuse"], false);
    assert!(
        r["issues"][0]
            .as_str()
            .is_some_and(|i| i.contains("disposable"))
    );
    assert_error(
        app.post_json(&format!("{base}{pk}/cycles"), &json!({}))
            .await,
        422,
        "SUBSTRATE_EXHAUSTED",
    )
    .await;

    // An unstable pH history blocks reuse of coco (threshold 0.3).
    let shaky = json_of(
        app.post_json(
            &base,
            &json!({"substrate_key": coco, "label": "Shaky", "ph_current": 5.0}),
        )
        .await,
        201,
    )
    .await;
    let sk = shaky["key"].as_str().expect("key");
    json_of(
        patch(&app, &format!("{base}{sk}"), json!({"ph_current": 6.5})).await,
        200,
    )
    .await;
    let r = json_of(app.get(&format!("{base}{sk}/reusability")).await, 200).await;
    assert_eq!(r["can_reuse"], false);
    assert!(
        r["issues"][0].as_str().is_some_and(|i| i.contains("pH")),
        "{r}"
    );

    // List with the substrate filter, paging bounds.
    let page = json_of(app.get(&format!("{base}?substrate_key={coco}")).await, 200).await;
    assert_eq!(page["total"], 2);
    assert!(
        page["items"][0].get("ph_history").is_none(),
        "histories only on the single read"
    );
    let page = json_of(app.get(&format!("{base}?limit=1&skip=1")).await, 200).await;
    assert_eq!(
        (
            page["total"].clone(),
            page["items"].as_array().map(Vec::len)
        ),
        (json!(3), Some(1))
    );
    assert_error(
        app.get(&format!("{base}?limit=201")).await,
        422,
        "VALIDATION_ERROR",
    )
    .await;

    // Bad input: a clear error, nothing written.
    let before = rows(&app, &tenant, "substrate_batches").await;
    let readings = rows(&app, &tenant, "substrate_batch_readings").await;
    assert_error(
        app.post_json(
            &base,
            &json!({"substrate_key": uuid::Uuid::now_v7().to_string(), "label": "Ghost"}),
        )
        .await,
        404,
        "ENTITY_NOT_FOUND",
    )
    .await;
    assert_error(
        app.post_json(&base, &json!({"substrate_key": coco, "label": "coco b"}))
            .await,
        409,
        "DUPLICATE_ENTRY",
    )
    .await;
    let err = assert_error(
        app.post_json(
            &base,
            &json!({"substrate_key": coco, "label": "Future", "mixed_on": "2999-01-01",
                    "ph_current": 15, "volume_liters": -1, "cycles_used": -1}),
        )
        .await,
        422,
        "VALIDATION_ERROR",
    )
    .await;
    assert_eq!(
        detail_fields(&err),
        [
            "body.volume_liters",
            "body.mixed_on",
            "body.cycles_used",
            "body.ph_current"
        ]
    );
    let err = assert_error(
        patch(
            &app,
            &format!("{base}{key}"),
            json!({"ph_current": null, "mixed_on": "2026-02-30"}),
        )
        .await,
        422,
        "VALIDATION_ERROR",
    )
    .await;
    assert_eq!(detail_fields(&err), ["body.mixed_on", "body.ph_current"]);
    assert_error(
        patch(&app, &format!("{base}{pk}"), json!({"label": "Shaky"})).await,
        409,
        "DUPLICATE_ENTRY",
    )
    .await;
    for missing in [uuid::Uuid::now_v7().to_string(), "x".to_owned()] {
        assert_error(
            app.get(&format!("{base}{missing}")).await,
            404,
            "ENTITY_NOT_FOUND",
        )
        .await;
        assert_error(
            app.get(&format!("{base}{missing}/reusability")).await,
            404,
            "ENTITY_NOT_FOUND",
        )
        .await;
        assert_error(
            app.post_json(&format!("{base}{missing}/cycles"), &json!({}))
                .await,
            404,
            "ENTITY_NOT_FOUND",
        )
        .await;
        assert_error(
            patch(&app, &format!("{base}{missing}"), json!({"label": "y"})).await,
            404,
            "ENTITY_NOT_FOUND",
        )
        .await;
    }
    assert_eq!(rows(&app, &tenant, "substrate_batches").await, before);
    assert_eq!(
        rows(&app, &tenant, "substrate_batch_readings").await,
        readings
    );
}

#[tokio::test]
async fn substrates_roles_and_tenant_isolation() {
    let app = TestApp::full().await;
    let a = app.tenant("suba").await;
    let b = app.tenant("subb").await;
    let coco = global_substrate(&app, "coco", 5.8, true, 3).await;
    let viewer = app.member(&a, Role::Viewer).await.bearer();
    let grower = app.member(&a, Role::Grower).await.bearer();
    let admin = app.member(&a, Role::Admin).await.bearer();
    let b_admin = app.member(&b, Role::Admin).await.bearer();
    let sa = format!("/api/v1/t/{}", a.slug);
    let sb = format!("/api/v1/t/{}", b.slug);
    let call = |method: Method, path: String, who: String, body: Option<Value>| {
        let app = &app;
        async move { app.call(method, &path, Some(&who), body.as_ref()).await }
    };

    // Writes: growers and admins; viewers 403 and nothing written.
    let sub = json!({"name": "Own soil", "type": "soil"});
    assert_error(
        call(
            Method::POST,
            format!("{sa}/substrates/"),
            viewer.clone(),
            Some(sub.clone()),
        )
        .await,
        403,
        "FORBIDDEN",
    )
    .await;
    let own = json_of(
        call(
            Method::POST,
            format!("{sa}/substrates/"),
            grower.clone(),
            Some(sub),
        )
        .await,
        201,
    )
    .await;
    let batch_body = json!({"substrate_key": coco, "label": "Roles"});
    assert_error(
        call(
            Method::POST,
            format!("{sa}/substrate-batches/"),
            viewer.clone(),
            Some(batch_body.clone()),
        )
        .await,
        403,
        "FORBIDDEN",
    )
    .await;
    let batch = json_of(
        call(
            Method::POST,
            format!("{sa}/substrate-batches/"),
            grower.clone(),
            Some(batch_body),
        )
        .await,
        201,
    )
    .await;
    let bk = batch["key"].as_str().expect("key").to_owned();
    let mix = json!({"name": "Roles mix", "components": [{"substrate_key": coco, "fraction": 0.5}, {"substrate_key": own["key"], "fraction": 0.5}]});
    assert_error(
        call(
            Method::POST,
            format!("{sa}/substrate-mixes"),
            viewer.clone(),
            Some(mix.clone()),
        )
        .await,
        403,
        "FORBIDDEN",
    )
    .await;
    json_of(
        call(
            Method::POST,
            format!("{sa}/substrate-mixes"),
            admin.clone(),
            Some(mix.clone()),
        )
        .await,
        201,
    )
    .await;
    assert_error(
        call(
            Method::PATCH,
            format!("{sa}/substrate-batches/{bk}"),
            viewer.clone(),
            Some(json!({"ph_current": 6.0})),
        )
        .await,
        403,
        "FORBIDDEN",
    )
    .await;
    assert_error(
        call(
            Method::POST,
            format!("{sa}/substrate-batches/{bk}/cycles"),
            viewer.clone(),
            Some(json!({})),
        )
        .await,
        403,
        "FORBIDDEN",
    )
    .await;
    json_of(
        call(
            Method::PATCH,
            format!("{sa}/substrate-batches/{bk}"),
            grower.clone(),
            Some(json!({"ph_current": 6.0})),
        )
        .await,
        200,
    )
    .await;
    json_of(
        call(
            Method::POST,
            format!("{sa}/substrate-batches/{bk}/cycles"),
            admin.clone(),
            Some(json!({})),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(rows(&app, &a, "substrates").await, 2);
    // Reads (and the preview, which writes nothing) for every member.
    for who in [&viewer, &grower, &admin] {
        json_of(
            call(Method::GET, format!("{sa}/substrates/"), who.clone(), None).await,
            200,
        )
        .await;
        json_of(
            call(
                Method::GET,
                format!("{sa}/substrates/{}", own["key"].as_str().expect("k")),
                who.clone(),
                None,
            )
            .await,
            200,
        )
        .await;
        json_of(
            call(
                Method::POST,
                format!("{sa}/substrate-mixes/preview"),
                who.clone(),
                Some(json!({"components": mix["components"]})),
            )
            .await,
            200,
        )
        .await;
        json_of(
            call(
                Method::GET,
                format!("{sa}/substrate-batches/{bk}"),
                who.clone(),
                None,
            )
            .await,
            200,
        )
        .await;
        json_of(
            call(
                Method::GET,
                format!("{sa}/substrate-batches/{bk}/reusability"),
                who.clone(),
                None,
            )
            .await,
            200,
        )
        .await;
    }
    // A non-member: 404 for the whole tree, never 403.
    for (method, path, body) in [
        (Method::GET, format!("{sa}/substrates/"), None),
        (
            Method::POST,
            format!("{sa}/substrates/"),
            Some(json!({"name": "x", "type": "soil"})),
        ),
        (Method::GET, format!("{sa}/substrate-batches/{bk}"), None),
        (
            Method::POST,
            format!("{sa}/substrate-batches/{bk}/cycles"),
            Some(json!({})),
        ),
    ] {
        assert_error(
            call(method, path, b_admin.clone(), body).await,
            404,
            "ENTITY_NOT_FOUND",
        )
        .await;
    }
    // A's keys in B's paths: nothing found.
    let own_key = own["key"].as_str().expect("key");
    for path in [
        format!("{sb}/substrates/{own_key}"),
        format!("{sb}/substrate-batches/{bk}"),
        format!("{sb}/substrate-batches/{bk}/reusability"),
    ] {
        assert_error(
            call(Method::GET, path, b_admin.clone(), None).await,
            404,
            "ENTITY_NOT_FOUND",
        )
        .await;
    }
    assert_error(
        call(
            Method::POST,
            format!("{sb}/substrate-batches/{bk}/cycles"),
            b_admin.clone(),
            Some(json!({})),
        )
        .await,
        404,
        "ENTITY_NOT_FOUND",
    )
    .await;
    assert_error(
        call(
            Method::PATCH,
            format!("{sb}/substrate-batches/{bk}"),
            b_admin.clone(),
            Some(json!({"label": "stolen"})),
        )
        .await,
        404,
        "ENTITY_NOT_FOUND",
    )
    .await;
    assert_error(
        call(
            Method::POST,
            format!("{sb}/substrate-batches/"),
            b_admin.clone(),
            Some(json!({"substrate_key": own_key, "label": "x"})),
        )
        .await,
        404,
        "ENTITY_NOT_FOUND",
    )
    .await;
    assert_error(
        call(
            Method::POST,
            format!("{sb}/substrate-mixes/preview"),
            b_admin.clone(),
            Some(json!({"components": mix["components"]})),
        )
        .await,
        404,
        "ENTITY_NOT_FOUND",
    )
    .await;
    let listed = json_of(
        call(
            Method::GET,
            format!("{sb}/substrates/?scope=tenant"),
            b_admin.clone(),
            None,
        )
        .await,
        200,
    )
    .await;
    assert_eq!(listed["total"], 0);
    let listed = json_of(
        call(
            Method::GET,
            format!("{sb}/substrate-batches/"),
            b_admin.clone(),
            None,
        )
        .await,
        200,
    )
    .await;
    assert_eq!(listed["total"], 0);
    assert_eq!(rows(&app, &b, "substrate_batches").await, 0);
    assert_eq!(rows(&app, &a, "substrate_batches").await, 1);
}

#[tokio::test]
async fn substrate_tools_over_rest_face_and_json_rpc() {
    let app = TestApp::full_env(&[("MCP_SERVER_ENABLED", "true")]).await;
    let a = app.tenant("subtl").await;
    let b = app.tenant("subtlb").await;
    let coco = global_substrate(&app, "coco", 5.8, true, 3).await;
    let perlite = global_substrate(&app, "perlite", 7.0, true, 5).await;
    let viewer_user = app.member(&a, Role::Viewer).await;
    let viewer = app.api_key(&viewer_user, Some(a.slug.as_str())).await;
    let grower_user = app.member(&a, Role::Grower).await;
    let grower = app.api_key(&grower_user, Some(a.slug.as_str())).await;
    let outsider_user = app.member(&b, Role::Admin).await;
    let outsider = app.api_key(&outsider_user, Some(b.slug.as_str())).await;
    let components = json!([
        {"substrate_key": coco, "fraction": 0.7},
        {"substrate_key": perlite, "fraction": 0.3}
    ]);

    // Preview (read) for a viewer; nothing stored.
    let (status, p) = tool(
        &app,
        &viewer,
        "preview_substrate_mix",
        json!({"components": components}),
    )
    .await;
    assert_eq!(status, 200, "{p}");
    assert_eq!(p["data"]["ph_base"], 6.16);
    let (status, err) = tool(&app, &viewer, "preview_substrate_mix", json!({"components": [{"substrate_key": coco, "fraction": 0.5}, {"substrate_key": perlite, "fraction": 0.2}]})).await;
    assert_eq!(
        (status, err["error_code"].as_str()),
        (422, Some("validation.error")),
        "{err}"
    );
    assert_eq!(err["details"][0]["field"], "components");
    let (status, err) = tool(&app, &viewer, "preview_substrate_mix", json!({"components": [{"substrate_key": coco, "fraction": 1.5}, {"substrate_key": perlite}]})).await;
    assert_eq!(
        (status, err["error_code"].as_str()),
        (422, Some("validation.error")),
        "{err}"
    );

    // create_substrate_mix: write; a viewer is denied, a dry run writes nothing, then a real one
    // and its idempotent replay.
    let args =
        json!({"name_en": "Tool mix", "name_de": "Werkzeugmischung", "components": components});
    let (status, err) = tool(&app, &viewer, "create_substrate_mix", args.clone()).await;
    assert_eq!(
        (status, err["error_code"].as_str()),
        (403, Some("permission.denied"))
    );
    let mut dry = args.clone();
    dry["dry_run"] = json!(true);
    let (status, d) = tool(&app, &grower, "create_substrate_mix", dry).await;
    assert_eq!(status, 200, "{d}");
    assert_eq!(d["dry_run"], true);
    assert!(d["data"].get("substrate_key").is_none());
    assert_eq!(rows(&app, &a, "substrates").await, 0);
    let mut real = args.clone();
    real["idempotency_key"] = json!("mix-1");
    let (status, made) = tool(&app, &grower, "create_substrate_mix", real.clone()).await;
    assert_eq!(status, 200, "{made}");
    assert_eq!(made["data"]["is_mix"], true);
    assert_eq!(made["data"]["scope"], "tenant");
    let mix_key = made["data"]["substrate_key"]
        .as_str()
        .expect("key")
        .to_owned();
    let (_, again) = tool(&app, &grower, "create_substrate_mix", real).await;
    assert_eq!(again["idempotent_replay"], true);
    assert_eq!(rows(&app, &a, "substrates").await, 1);
    let (status, err) = tool(&app, &grower, "create_substrate_mix", args).await;
    assert_eq!(
        (status, err["error_code"].as_str()),
        (409, Some("conflict.state"))
    );

    // Listing and get show it marked; B finds nothing of A.
    let (_, listed) = tool(&app, &viewer, "list_substrates", json!({"scope": "tenant"})).await;
    assert_eq!(listed["data"]["total"], 1);
    assert_eq!(
        listed["data"]["items"][0]["substrate_key"],
        mix_key.as_str()
    );
    let (status, got) = tool(
        &app,
        &viewer,
        "get_substrate",
        json!({"substrate_key": mix_key}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(got["data"]["mix_components"], components);
    let (status, err) = tool(
        &app,
        &outsider,
        "get_substrate",
        json!({"substrate_key": mix_key}),
    )
    .await;
    assert_eq!(
        (status, err["error_code"].as_str()),
        (404, Some("not_found"))
    );
    let (status, err) = tool(
        &app,
        &outsider,
        "list_substrates",
        json!({"tenant": a.slug.as_str()}),
    )
    .await;
    assert_eq!(
        (status, err["error_code"].as_str()),
        (404, Some("not_found"))
    );

    // Batches through the tools.
    let res = app
        .call(
            Method::POST,
            &format!("/api/v1/t/{}/substrate-batches/", a.slug),
            Some(&grower_user.bearer()),
            Some(&json!({"substrate_key": mix_key, "label": "Mix batch"})),
        )
        .await;
    let batch = json_of(res, 201).await;
    assert_eq!(batch["max_reuse_cycles"], 3);
    let bk = batch["key"].as_str().expect("key");
    let (_, listed) = tool(
        &app,
        &viewer,
        "list_substrate_batches",
        json!({"substrate_key": mix_key}),
    )
    .await;
    assert_eq!(listed["data"]["total"], 1);
    assert_eq!(listed["data"]["items"][0]["batch_key"], bk);
    assert_eq!(listed["data"]["items"][0]["substrate_name"], "Tool mix");
    let (status, got) = tool(
        &app,
        &viewer,
        "get_substrate_batch",
        json!({"batch_key": bk}),
    )
    .await;
    assert_eq!(status, 200, "{got}");
    assert_eq!(got["data"]["label"], "Mix batch");
    let (status, r) = tool(
        &app,
        &viewer,
        "check_batch_reusability",
        json!({"batch_key": bk}),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["data"]["can_reuse"], true);
    assert_eq!(r["data"]["preparation_hours"], 27);
    for t in ["get_substrate_batch", "check_batch_reusability"] {
        let (status, err) = tool(&app, &outsider, t, json!({"batch_key": bk})).await;
        assert_eq!(
            (status, err["error_code"].as_str()),
            (404, Some("not_found")),
            "{t}"
        );
    }

    // The same over JSON-RPC.
    let r = rpc_call(
        &app,
        &viewer,
        "check_batch_reusability",
        json!({"batch_key": bk}),
    )
    .await;
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(r["structuredContent"]["data"]["can_reuse"], true);
    let r = rpc_call(
        &app,
        &outsider,
        "get_substrate_batch",
        json!({"batch_key": bk}),
    )
    .await;
    assert_eq!(r["isError"], true);
    assert_eq!(r["structuredContent"]["error_code"], "not_found");
    assert!(!r.to_string().contains("Mix batch"));
}
