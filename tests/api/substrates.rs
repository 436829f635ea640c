//! Substrates (global catalogue ones beside the garden's own, marked by scope), the mix preview
//! and stored mixes, substrate batches with readings, reusability and cycles
//! (`SUBSTRATE_EXHAUSTED`), roles, tenant isolation and the substrate tools.

use kultiva::auth::Role;
use reqwest::Method;
use serde_json::{Map, Value, json};

use crate::catalog::letters;
use crate::garden::count;
use crate::places::{rpc_call, tool};
use crate::support::{JsonReply, TestApp, assert_error, detail_fields};

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

#[tokio::test]
async fn substrates_list_global_and_own_marked_get_and_create() {
    let app = TestApp::spawn().await;
    let tenant = app.tenant("subs").await;
    let base = format!("/api/v1/t/{}/substrates/", tenant.slug);
    let coco = global_substrate(&app, "coco", 5.8, true, 3).await;

    // The catalogue is shared by parallel tests: this test's records carry its global's token.
    let coco_name = app.get_ok(&format!("{base}{coco}")).await["name"]
        .as_str()
        .expect("name")
        .to_owned();
    let token = coco_name.rsplit(' ').next().expect("token").to_owned();

    // The garden's own substrate: defaults filled, type-specific irrigation.
    let own = app.create(
            &base,
            &json!({"name": format!("  Balcony soil {token} "), "name_de": "Balkonerde", "type": "soil",
                    "ph_base": 6.2, "reusable": true}),
        ).await;
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
    let page = app.get_ok(&format!("{base}?q={token}")).await;
    assert_eq!(page["total"], 2, "{page}");
    assert_eq!(page["items"][0]["key"], coco.as_str());
    assert_eq!(page["items"][0]["scope"], "global");
    assert_eq!(page["items"][0]["type"], "coco");
    assert_eq!(page["items"][0]["reusable"], true);
    assert_eq!(page["items"][1]["key"], own_key.as_str());
    // Paging runs across both parts.
    let second = app
        .get_ok(&format!("{base}?q={token}&skip=1&limit=1"))
        .await;
    assert_eq!(
        (second["total"].clone(), second["items"][0]["key"].clone()),
        (json!(2), json!(own_key))
    );
    let first = app
        .get_ok(&format!("{base}?q={token}&skip=0&limit=1"))
        .await;
    assert_eq!(first["items"][0]["key"], coco.as_str());
    let beyond = app.get_ok(&format!("{base}?q={token}&skip=2")).await;
    assert_eq!(beyond["items"], json!([]));
    // Only the garden's own / only global ones / by type.
    let mine = app.get_ok(&format!("{base}?scope=tenant")).await;
    assert_eq!(mine["total"], 1);
    assert_eq!(mine["items"][0]["key"], own_key.as_str());
    let globals = app.get_ok(&format!("{base}?scope=global&q={token}")).await;
    assert_eq!(globals["total"], 1);
    let soil = app.get_ok(&format!("{base}?type=soil&q={token}")).await;
    assert_eq!(soil["items"][0]["key"], own_key.as_str());
    assert_eq!(soil["total"], 1);
    // Search by German name reaches the garden's own.
    let found = app.get_ok(&format!("{base}?q=balkon&scope=tenant")).await;
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
    let got = app.get_ok(&format!("{base}{coco}")).await;
    assert_eq!(got["scope"], "global");
    let got = app.get_ok(&format!("{base}{own_key}")).await;
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
    assert_eq!(count(&app, &tenant, "substrates").await, 1);
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

    let preview = app
        .post_json(
            &format!("{mixes}preview"),
            &json!({"components": components}),
        )
        .await
        .expect_json(200)
        .await;
    // 0.7 · 5.8 + 0.3 · 7.0 = 6.16
    assert_eq!(preview["ph_base"], 6.16);
    assert_eq!(preview["type"], "coco");
    assert_eq!(preview["reusable"], true);
    assert_eq!(preview["max_reuse_cycles"], 3);
    assert_eq!(preview["composition"]["coco"], 0.7);
    assert_eq!(preview["components"], components);
    assert_eq!(
        count(&app, &tenant, "substrates").await,
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
    let mix = app
        .create(
            &mixes,
            &json!({"name": "Coco-perlite 70/30", "components": components}),
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
    assert_eq!(count(&app, &tenant, "substrates").await, 1);
}

#[tokio::test]
async fn substrate_batches_readings_reuse_and_cycles() {
    let app = TestApp::spawn().await;
    let tenant = app.tenant("batch").await;
    let base = format!("/api/v1/t/{}/substrate-batches/", tenant.slug);
    let coco = global_substrate(&app, "coco", 5.8, true, 2).await;
    let peat = global_substrate(&app, "peat", 5.5, false, 1).await;

    let batch = app
        .create(
            &base,
            &json!({"substrate_key": coco, "label": "Coco A", "volume_liters": 50,
                    "mixed_on": "2026-03-01", "ph_current": 5.9}),
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
    let patched = app
        .rest()
        .patch(
            &format!("{base}{key}"),
            &json!({"ph_current": 6.0, "ec_current_ms": 0.8}),
        )
        .await
        .expect_json(200)
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
    let patched = app
        .rest()
        .patch(
            &format!("{base}{key}"),
            &json!({"label": "Coco B", "volume_liters": null}),
        )
        .await
        .expect_json(200)
        .await;
    assert_eq!(patched["label"], "Coco B");
    assert_eq!(patched["volume_liters"], Value::Null);
    assert_eq!(patched["ph_current"], 6.0, "kept");

    // Reusable coco: CalMag soak, flush, drain = 27 h.
    let r = app.get_ok(&format!("{base}{key}/reusability")).await;
    assert_eq!(r["can_reuse"], true, "{r}");
    assert_eq!(r["issues"], json!([]));
    assert_eq!(r["preparation_hours"], 27);
    assert_eq!(r["preparation_steps"].as_array().map(Vec::len), Some(3));
    assert!(r["ready_on"].as_str().is_some_and(|d| d.len() == 10));

    // Cycles up to the limit of 2, then SUBSTRATE_EXHAUSTED and nothing changes.
    let next = app
        .post_json(&format!("{base}{key}/cycles"), &json!({}))
        .await
        .expect_json(200)
        .await;
    assert_eq!(next["cycles_used"], 1);
    let next = app
        .post_json(&format!("{base}{key}/cycles"), &json!({}))
        .await
        .expect_json(200)
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
    let r = app.get_ok(&format!("{base}{key}/reusability")).await;
    assert_eq!(r["can_reuse"], false);
    assert_eq!(r["ready_on"], Value::Null);
    let now = app.get_ok(&format!("{base}{key}")).await;
    assert_eq!(now["cycles_used"], 2);

    // Peat is disposable: never reused.
    let peat_batch = app
        .create(&base, &json!({"substrate_key": peat, "label": "Seed peat"}))
        .await;
    let pk = peat_batch["key"].as_str().expect("key");
    let r = app.get_ok(&format!("{base}{pk}/reusability")).await;
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
    let shaky = app
        .create(
            &base,
            &json!({"substrate_key": coco, "label": "Shaky", "ph_current": 5.0}),
        )
        .await;
    let sk = shaky["key"].as_str().expect("key");
    app.rest()
        .patch(&format!("{base}{sk}"), &json!({"ph_current": 6.5}))
        .await
        .expect_json(200)
        .await;
    let r = app.get_ok(&format!("{base}{sk}/reusability")).await;
    assert_eq!(r["can_reuse"], false);
    assert!(
        r["issues"][0].as_str().is_some_and(|i| i.contains("pH")),
        "{r}"
    );

    // List with the substrate filter, paging bounds.
    let page = app.get_ok(&format!("{base}?substrate_key={coco}")).await;
    assert_eq!(page["total"], 2);
    assert!(
        page["items"][0].get("ph_history").is_none(),
        "histories only on the single read"
    );
    let page = app.get_ok(&format!("{base}?limit=1&skip=1")).await;
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
    let before = count(&app, &tenant, "substrate_batches").await;
    let readings = count(&app, &tenant, "substrate_batch_readings").await;
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
        app.rest()
            .patch(
                &format!("{base}{key}"),
                &json!({"ph_current": null, "mixed_on": "2026-02-30"}),
            )
            .await,
        422,
        "VALIDATION_ERROR",
    )
    .await;
    assert_eq!(detail_fields(&err), ["body.mixed_on", "body.ph_current"]);
    assert_error(
        app.rest()
            .patch(&format!("{base}{pk}"), &json!({"label": "Shaky"}))
            .await,
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
            app.rest()
                .patch(&format!("{base}{missing}"), &json!({"label": "y"}))
                .await,
            404,
            "ENTITY_NOT_FOUND",
        )
        .await;
    }
    assert_eq!(count(&app, &tenant, "substrate_batches").await, before);
    assert_eq!(
        count(&app, &tenant, "substrate_batch_readings").await,
        readings
    );
}

#[tokio::test]
async fn substrates_roles_and_tenant_isolation() {
    let app = TestApp::full().await;
    let a = app.tenant("suba").await;
    let b = app.tenant("subb").await;
    let coco = global_substrate(&app, "coco", 5.8, true, 3).await;
    let viewer = app.rest_as(&app.member(&a, Role::Viewer).await);
    let grower = app.rest_as(&app.member(&a, Role::Grower).await);
    let admin = app.rest_as(&app.member(&a, Role::Admin).await);
    let b_admin = app.rest_as(&app.member(&b, Role::Admin).await);
    let sa = format!("/api/v1/t/{}", a.slug);
    let sb = format!("/api/v1/t/{}", b.slug);
    // Writes: growers and admins; viewers 403 and nothing written.
    let sub = json!({"name": "Own soil", "type": "soil"});
    assert_error(
        viewer
            .post(&format!("{sa}/substrates/"), &sub.clone())
            .await,
        403,
        "FORBIDDEN",
    )
    .await;
    let own = grower.create(&format!("{sa}/substrates/"), &sub).await;
    let batch_body = json!({"substrate_key": coco, "label": "Roles"});
    assert_error(
        viewer
            .post(&format!("{sa}/substrate-batches/"), &batch_body.clone())
            .await,
        403,
        "FORBIDDEN",
    )
    .await;
    let batch = grower
        .create(&format!("{sa}/substrate-batches/"), &batch_body)
        .await;
    let bk = batch["key"].as_str().expect("key").to_owned();
    let mix = json!({"name": "Roles mix", "components": [{"substrate_key": coco, "fraction": 0.5}, {"substrate_key": own["key"], "fraction": 0.5}]});
    assert_error(
        viewer
            .post(&format!("{sa}/substrate-mixes"), &mix.clone())
            .await,
        403,
        "FORBIDDEN",
    )
    .await;
    admin
        .create(&format!("{sa}/substrate-mixes"), &mix.clone())
        .await;
    assert_error(
        viewer
            .patch(
                &format!("{sa}/substrate-batches/{bk}"),
                &json!({"ph_current": 6.0}),
            )
            .await,
        403,
        "FORBIDDEN",
    )
    .await;
    assert_error(
        viewer
            .post(&format!("{sa}/substrate-batches/{bk}/cycles"), &json!({}))
            .await,
        403,
        "FORBIDDEN",
    )
    .await;
    grower
        .patch(
            &format!("{sa}/substrate-batches/{bk}"),
            &json!({"ph_current": 6.0}),
        )
        .await
        .expect_json(200)
        .await;
    admin
        .post(&format!("{sa}/substrate-batches/{bk}/cycles"), &json!({}))
        .await
        .expect_json(200)
        .await;
    assert_eq!(count(&app, &a, "substrates").await, 2);
    // Reads (and the preview, which writes nothing) for every member.
    for who in [&viewer, &grower, &admin] {
        who.get_ok(&format!("{sa}/substrates/")).await;
        who.get_ok(&format!(
            "{sa}/substrates/{}",
            own["key"].as_str().expect("k")
        ))
        .await;
        who.post(
            &format!("{sa}/substrate-mixes/preview"),
            &json!({"components": mix["components"]}),
        )
        .await
        .expect_json(200)
        .await;
        who.get_ok(&format!("{sa}/substrate-batches/{bk}")).await;
        who.get_ok(&format!("{sa}/substrate-batches/{bk}/reusability"))
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
            b_admin.send(method, &path, body.as_ref()).await,
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
        assert_error(b_admin.get(&path).await, 404, "ENTITY_NOT_FOUND").await;
    }
    assert_error(
        b_admin
            .post(&format!("{sb}/substrate-batches/{bk}/cycles"), &json!({}))
            .await,
        404,
        "ENTITY_NOT_FOUND",
    )
    .await;
    assert_error(
        b_admin
            .patch(
                &format!("{sb}/substrate-batches/{bk}"),
                &json!({"label": "stolen"}),
            )
            .await,
        404,
        "ENTITY_NOT_FOUND",
    )
    .await;
    assert_error(
        b_admin
            .post(
                &format!("{sb}/substrate-batches/"),
                &json!({"substrate_key": own_key, "label": "x"}),
            )
            .await,
        404,
        "ENTITY_NOT_FOUND",
    )
    .await;
    assert_error(
        b_admin
            .post(
                &format!("{sb}/substrate-mixes/preview"),
                &json!({"components": mix["components"]}),
            )
            .await,
        404,
        "ENTITY_NOT_FOUND",
    )
    .await;
    let listed = b_admin
        .get_ok(&format!("{sb}/substrates/?scope=tenant"))
        .await;
    assert_eq!(listed["total"], 0);
    let listed = b_admin.get_ok(&format!("{sb}/substrate-batches/")).await;
    assert_eq!(listed["total"], 0);
    assert_eq!(count(&app, &b, "substrate_batches").await, 0);
    assert_eq!(count(&app, &a, "substrate_batches").await, 1);
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
    assert_eq!(count(&app, &a, "substrates").await, 0);
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
    assert_eq!(count(&app, &a, "substrates").await, 1);
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
        .rest_as(&grower_user)
        .post(
            &format!("/api/v1/t/{}/substrate-batches/", a.slug),
            &json!({"substrate_key": mix_key, "label": "Mix batch"}),
        )
        .await;
    let batch = res.expect_json(201).await;
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

/// A tenant table's rows as JSON (to show a refused request changed nothing).
async fn snapshot(app: &TestApp, tenant: &kultiva::tenancy::TenantRecord, table: &str) -> Value {
    let sql = format!(
        "SELECT coalesce(json_agg(t ORDER BY t.id), '[]'::json) FROM {}.{table} t",
        tenant.schema_name.quoted()
    );
    sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
        .fetch_one(app.state.platform_pool())
        .await
        .expect("snapshot")
}

#[tokio::test]
async fn substrates_patch_own_refuse_global_and_mix_properties() {
    let app = TestApp::spawn().await;
    let tenant = app.tenant("subpatch").await;
    let base = format!("/api/v1/t/{}/substrates/", tenant.slug);
    let coco = global_substrate(&app, "coco", 5.8, true, 3).await;
    let perlite = global_substrate(&app, "perlite", 7.0, true, 3).await;
    let own = app
        .create(
            &base,
            &json!({"name": "Balcony soil", "type": "soil", "brand": "Acme",
                    "description": "for boxes"}),
        )
        .await;
    let own_key = own["key"].as_str().expect("key").to_owned();
    app.create(&base, &json!({"name": "Other soil", "type": "soil"}))
        .await;
    let batch = app
        .create(
            &format!("/api/v1/t/{}/substrate-batches/", tenant.slug),
            &json!({"substrate_key": own_key, "label": "Soil A"}),
        )
        .await;
    assert_eq!(batch["reusable"], false);

    // Omitted stays, a value replaces, null clears a text; reusable brings a limit.
    let p = app
        .rest()
        .patch(
            &format!("{base}{own_key}"),
            &json!({"name": "Box soil", "brand": null, "ph_base": 6.0, "reusable": true,
                   "max_reuse_cycles": 2, "irrigation_strategy": "frequent"}),
        )
        .await
        .expect_json(200)
        .await;
    assert_eq!(p["key"], own_key.as_str());
    assert_eq!(p["name"], "Box soil");
    assert_eq!(p["brand"], Value::Null);
    assert_eq!(p["description"], "for boxes");
    assert_eq!(p["ph_base"], 6.0);
    assert_eq!(p["reusable"], true);
    assert_eq!(p["max_reuse_cycles"], 2);
    assert_eq!(p["irrigation_strategy"], "frequent");
    assert_eq!(p["type"], "soil");
    let got = app.get_ok(&format!("{base}{own_key}")).await;
    assert_eq!(got, p);
    // Not reusable again: one cycle.
    let p = app
        .rest()
        .patch(&format!("{base}{own_key}"), &json!({"reusable": false}))
        .await
        .expect_json(200)
        .await;
    assert_eq!(p["max_reuse_cycles"], 1);
    // The batch keeps the facts it was made with.
    let b = app
        .get_ok(&format!(
            "/api/v1/t/{}/substrate-batches/{}",
            tenant.slug,
            batch["key"].as_str().expect("key")
        ))
        .await;
    assert_eq!(b["reusable"], false);
    assert_eq!(b["substrate_name"], "Box soil");

    // Refusals write nothing.
    let before = snapshot(&app, &tenant, "substrates").await;
    let res = app
        .rest()
        .patch(&format!("{base}{own_key}"), &json!({"name": "other SOIL"}))
        .await;
    assert_error(res, 409, "DUPLICATE_ENTRY").await;
    for (body, fields) in [
        (json!({"name": null}), vec!["body.name"]),
        (json!({"name": "  "}), vec!["body.name"]),
        (json!({"ph_base": 12}), vec!["body.ph_base"]),
        (json!({"ph_base": null}), vec!["body.ph_base"]),
        (
            json!({"max_reuse_cycles": 0}),
            vec!["body.max_reuse_cycles"],
        ),
        (json!({"reusable": "yes"}), vec!["body.reusable"]),
        (
            json!({"irrigation_strategy": "daily"}),
            vec!["body.irrigation_strategy"],
        ),
        (json!({"type": "coco"}), vec!["body.type"]),
        (
            json!({"ec_base_ms": -1, "description": "x\u{0001}"}),
            vec!["body.description", "body.ec_base_ms"],
        ),
    ] {
        let res = app
            .rest()
            .patch(&format!("{base}{own_key}"), &body.clone())
            .await;
        let err = assert_error(res, 422, "VALIDATION_ERROR").await;
        let mut got = detail_fields(&err);
        got.sort();
        assert_eq!(got, fields, "{body}");
    }
    // A global substrate is the catalogue's: 403, and unchanged.
    let global_before = app.get_ok(&format!("{base}{coco}")).await;
    let res = app
        .rest()
        .patch(&format!("{base}{coco}"), &json!({"name": "Mine now"}))
        .await;
    let err = assert_error(res, 403, "FORBIDDEN").await;
    assert!(err["message"].to_string().contains("catalogue"), "{err}");
    assert_eq!(app.get_ok(&format!("{base}{coco}")).await, global_before);
    for unknown in [
        format!("{base}tenant:{}", uuid::Uuid::now_v7()),
        format!("{base}{}", uuid::Uuid::now_v7()),
        format!("{base}tenant:nope"),
        format!("{base}nope"),
    ] {
        let res = app.rest().patch(&unknown, &json!({"name": "X"})).await;
        assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    }
    assert_eq!(snapshot(&app, &tenant, "substrates").await, before);

    // A mix: texts change, properties follow the components (422).
    let mix = app
        .create(
            &format!("/api/v1/t/{}/substrate-mixes", tenant.slug),
            &json!({"name": "Coco perlite", "components": [
                {"substrate_key": coco, "fraction": 0.7},
                {"substrate_key": perlite, "fraction": 0.3}]}),
        )
        .await;
    let mix_key = mix["key"].as_str().expect("key").to_owned();
    let res = app
        .rest()
        .patch(
            &format!("{base}{mix_key}"),
            &json!({"ph_base": 6.0, "reusable": false}),
        )
        .await;
    let err = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(detail_fields(&err), ["body.ph_base", "body.reusable"]);
    let renamed = app
        .rest()
        .patch(
            &format!("{base}{mix_key}"),
            &json!({"name": "Coco 70/30", "description": "tomatoes"}),
        )
        .await
        .expect_json(200)
        .await;
    assert_eq!(renamed["name"], "Coco 70/30");
    assert_eq!(renamed["ph_base"], mix["ph_base"]);
    assert_eq!(renamed["mix_components"], mix["mix_components"]);
}

#[tokio::test]
async fn substrates_and_batches_delete_refused_while_used() {
    let app = TestApp::spawn().await;
    let tenant = app.tenant("subdel").await;
    let slug = tenant.slug.as_str();
    let base = format!("/api/v1/t/{slug}/substrates/");
    let batches = format!("/api/v1/t/{slug}/substrate-batches/");
    let coco = global_substrate(&app, "coco", 5.8, true, 3).await;
    let own = app
        .create(&base, &json!({"name": "Box soil", "type": "soil"}))
        .await;
    let own_key = own["key"].as_str().expect("key").to_owned();
    let delete = |path: String| {
        let app = &app;
        async move { app.rest().delete(&path).await }
    };

    // A global substrate cannot be deleted by a garden; unknown keys are 404.
    let res = delete(format!("{base}{coco}")).await;
    assert_error(res, 403, "FORBIDDEN").await;
    app.get_ok(&format!("{base}{coco}")).await;
    for unknown in [
        format!("{base}tenant:{}", uuid::Uuid::now_v7()),
        format!("{base}{}", uuid::Uuid::now_v7()),
        format!("{batches}{}", uuid::Uuid::now_v7()),
        format!("{batches}nope"),
    ] {
        assert_error(delete(unknown).await, 404, "ENTITY_NOT_FOUND").await;
    }

    // A batch of it: the substrate stays (409) until the batch is gone.
    let batch = app
        .create(
            &batches,
            &json!({"substrate_key": own_key, "label": "Soil A", "ph_current": 6.4}),
        )
        .await;
    let batch_key = batch["key"].as_str().expect("key").to_owned();
    let res = delete(format!("{base}{own_key}")).await;
    let err = assert_error(res, 409, "STATE_CONFLICT").await;
    assert!(err["message"].to_string().contains("batch"), "{err}");
    assert_eq!(count(&app, &tenant, "substrates").await, 1);

    // A live plant grows in the batch: 409; archived, its record still holds it: 409.
    let site = app
        .create(
            &format!("/api/v1/t/{slug}/sites/"),
            &json!({"name": "Balcony", "kind": "balcony"}),
        )
        .await;
    let loc = app
        .create(
            &format!("/api/v1/t/{slug}/locations/"),
            &json!({"site_key": site["key"], "name": "Box"}),
        )
        .await;
    let loc_key = loc["key"].as_str().expect("key");
    let plant =
        crate::places::insert_plant(&app, &tenant, loc_key, None, Some(&batch_key), false).await;
    let before = (
        snapshot(&app, &tenant, "substrate_batches").await,
        snapshot(&app, &tenant, "substrate_batch_readings").await,
    );
    let res = delete(format!("{batches}{batch_key}")).await;
    let err = assert_error(res, 409, "STATE_CONFLICT").await;
    assert!(err["message"].to_string().contains("1 live plant"), "{err}");
    crate::garden::exec(
        &app,
        &tenant,
        "UPDATE {schema}.plants SET archived_at = now(), archive_reason = 'died' WHERE id = $1",
        plant,
    )
    .await;
    let res = delete(format!("{batches}{batch_key}")).await;
    let err = assert_error(res, 409, "STATE_CONFLICT").await;
    assert!(err["message"].to_string().contains("archived"), "{err}");
    assert_eq!(
        (
            snapshot(&app, &tenant, "substrate_batches").await,
            snapshot(&app, &tenant, "substrate_batch_readings").await,
        ),
        before,
        "refused deletes changed nothing"
    );

    // Without users it goes (with its readings), then the substrate can go too.
    let free = app
        .create(
            &batches,
            &json!({"substrate_key": own_key, "label": "Soil B", "ph_current": 6.1}),
        )
        .await;
    let res = delete(format!("{batches}{}", free["key"].as_str().expect("key"))).await;
    assert_eq!(res.status().as_u16(), 204);
    assert_error(
        app.get(&format!("{batches}{}", free["key"].as_str().expect("key")))
            .await,
        404,
        "ENTITY_NOT_FOUND",
    )
    .await;
    assert_eq!(count(&app, &tenant, "substrate_batch_readings").await, 1);
    crate::garden::exec(
        &app,
        &tenant,
        "DELETE FROM {schema}.plants WHERE id = $1",
        plant,
    )
    .await;
    let res = delete(format!("{batches}{batch_key}")).await;
    assert_eq!(res.status().as_u16(), 204);
    assert_eq!(count(&app, &tenant, "substrate_batch_readings").await, 0);

    // A plant naming the substrate itself, and a mix containing it, keep it too.
    let other = app
        .create(&base, &json!({"name": "Perlite own", "type": "perlite"}))
        .await;
    let other_key = other["key"].as_str().expect("key").to_owned();
    app.create(
        &format!("/api/v1/t/{slug}/substrate-mixes"),
        &json!({"name": "Soil perlite", "components": [
                {"substrate_key": own_key, "fraction": 0.5},
                {"substrate_key": other_key, "fraction": 0.5}]}),
    )
    .await;
    let res = delete(format!("{base}{other_key}")).await;
    let err = assert_error(res, 409, "STATE_CONFLICT").await;
    assert!(err["message"].to_string().contains("Soil perlite"), "{err}");
    let p2 = crate::places::insert_plant(&app, &tenant, loc_key, None, None, false).await;
    crate::garden::exec(
        &app,
        &tenant,
        &format!("UPDATE {{schema}}.plants SET substrate_key = '{own_key}' WHERE id = $1"),
        p2,
    )
    .await;
    let res = delete(format!("{base}{own_key}")).await;
    let err = assert_error(res, 409, "STATE_CONFLICT").await;
    assert!(err["message"].to_string().contains("plant"), "{err}");
    assert_eq!(count(&app, &tenant, "substrates").await, 3);
    crate::garden::exec(
        &app,
        &tenant,
        "UPDATE {schema}.plants SET substrate_key = NULL WHERE id = $1",
        p2,
    )
    .await;
    // The mix itself has no users: it goes, then its components are free.
    let mix_key = app
        .get_ok(&format!("{base}?scope=tenant&q=soil%20perlite"))
        .await["items"][0]["key"]
        .as_str()
        .expect("mix key")
        .to_owned();
    assert_eq!(
        delete(format!("{base}{mix_key}")).await.status().as_u16(),
        204
    );
    assert_eq!(
        delete(format!("{base}{own_key}")).await.status().as_u16(),
        204
    );
    assert_eq!(
        delete(format!("{base}{other_key}")).await.status().as_u16(),
        204
    );
    assert_eq!(count(&app, &tenant, "substrates").await, 0);
}

#[tokio::test]
async fn substrate_changes_and_deletes_roles_and_tenant_isolation() {
    let app = TestApp::full().await;
    let a = app.tenant("subrola").await;
    let b = app.tenant("subrolb").await;
    let viewer = app.rest_as(&app.member(&a, Role::Viewer).await);
    let grower = app.rest_as(&app.member(&a, Role::Grower).await);
    let admin = app.rest_as(&app.member(&a, Role::Admin).await);
    let b_admin = app.rest_as(&app.member(&b, Role::Admin).await);
    let stranger = app.rest_as(&app.user("stranger").await);
    let sa = format!("/api/v1/t/{}", a.slug);
    let sb = format!("/api/v1/t/{}", b.slug);
    let own = grower
        .create(
            &format!("{sa}/substrates/"),
            &json!({"name": "Box soil", "type": "soil"}),
        )
        .await;
    let own_key = own["key"].as_str().expect("key").to_owned();
    let batch = grower
        .create(
            &format!("{sa}/substrate-batches/"),
            &json!({"substrate_key": own_key, "label": "A"}),
        )
        .await;
    let batch_key = batch["key"].as_str().expect("key").to_owned();

    // PATCH: grower writes, viewer 403; another garden and a stranger get 404.
    let res = viewer
        .patch(&format!("{sa}/substrates/{own_key}"), &json!({"name": "V"}))
        .await;
    assert_error(res, 403, "FORBIDDEN").await;
    for (who, base) in [(&b_admin, &sb), (&b_admin, &sa), (&stranger, &sa)] {
        let res = who
            .patch(
                &format!("{base}/substrates/{own_key}"),
                &json!({"name": "Theirs"}),
            )
            .await;
        assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    }
    let p = grower
        .patch(
            &format!("{sa}/substrates/{own_key}"),
            &json!({"name": "Grower soil"}),
        )
        .await
        .expect_json(200)
        .await;
    assert_eq!(p["name"], "Grower soil");

    // Deletes: admin only (grower and viewer 403); another garden 404; nothing gone.
    for path in [
        format!("{sa}/substrate-batches/{batch_key}"),
        format!("{sa}/substrates/{own_key}"),
    ] {
        for who in [&viewer, &grower] {
            assert_error(who.delete(&path).await, 403, "FORBIDDEN").await;
        }
        let foreign = path.replace(&sa, &sb);
        assert_error(b_admin.delete(&foreign).await, 404, "ENTITY_NOT_FOUND").await;
        assert_error(stranger.delete(&path).await, 404, "ENTITY_NOT_FOUND").await;
    }
    assert_eq!(count(&app, &a, "substrate_batches").await, 1);
    assert_eq!(count(&app, &a, "substrates").await, 1);
    // Slot batch: grower sets it; viewer 403; B's batch in A's slot is 404.
    let site = admin
        .create(
            &format!("{sa}/sites/"),
            &json!({"name": "Roof", "kind": "garden"}),
        )
        .await;
    let loc = admin
        .create(
            &format!("{sa}/locations/"),
            &json!({"site_key": site["key"], "name": "Bed"}),
        )
        .await;
    let slot = admin
        .create(
            &format!("{sa}/slots/"),
            &json!({"location_key": loc["key"], "code": "BED_1"}),
        )
        .await;
    let slot_path = format!(
        "{sa}/slots/{}/substrate-batch",
        slot["key"].as_str().expect("key")
    );
    let res = viewer
        .put(&slot_path, &json!({"batch_key": batch_key}))
        .await;
    assert_error(res, 403, "FORBIDDEN").await;
    let b_sub = b_admin
        .create(
            &format!("{sb}/substrates/"),
            &json!({"name": "B soil", "type": "soil"}),
        )
        .await;
    let b_batch = b_admin
        .create(
            &format!("{sb}/substrate-batches/"),
            &json!({"substrate_key": b_sub["key"], "label": "B1"}),
        )
        .await;
    let res = grower
        .put(&slot_path, &json!({"batch_key": b_batch["key"]}))
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    let set = grower
        .put(&slot_path, &json!({"batch_key": batch_key}))
        .await
        .expect_json(200)
        .await;
    assert_eq!(set["substrate_batch_key"], batch_key.as_str());
    // The admin deletes once nothing uses them.
    let res = admin
        .delete(&format!("{sa}/substrate-batches/{batch_key}"))
        .await;
    assert_error(res, 409, "STATE_CONFLICT").await;
    grower
        .put(
            &format!(
                "{sa}/slots/{}/substrate-batch",
                slot["key"].as_str().expect("key")
            ),
            &json!({"batch_key": null}),
        )
        .await
        .expect_json(200)
        .await;
    for path in [
        format!("{sa}/substrate-batches/{batch_key}"),
        format!("{sa}/substrates/{own_key}"),
    ] {
        let res = admin.delete(&path).await;
        assert_eq!(res.status().as_u16(), 204);
    }
    assert_eq!(count(&app, &b, "substrates").await, 1, "B untouched");
}
