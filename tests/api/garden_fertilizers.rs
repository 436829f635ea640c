//! A garden's fertilisers: global catalogue products beside the garden's own (marked by
//! owner), CRUD of own products with the global products' fields and rules, global ones
//! read-only (403), roles, two-garden isolation, nothing written on refusal; the garden's
//! mixing protocol (REST and the tool calculate_mixing_protocol) doses own products, and
//! list_fertilizers shows both kinds.

use kultiva::auth::Role;
use reqwest::Method;
use serde_json::{Value, json};

use crate::catalog::letters;
use crate::garden::count;
use crate::mcp_tools::{self, call, scoped_key};
use crate::support::{JsonReply, assert_error, detail_fields, tenant_path};

/// A valid body of an own fertiliser.
pub(crate) fn own_body(name: &str) -> Value {
    json!({
        "name": name,
        "brand": "Home brew",
        "fertilizer_type": "base",
        "form": "liquid",
        "npk": {"n": 4, "p": 2, "k": 5},
        "secondary": {"mg": 0.5},
        "ec_contribution_per_ml": 0.25,
        "recommended_dose_ml_per_liter": 2.0,
        "max_dose_ml_per_liter": 6.0,
        "mixing_priority": 35
    })
}

#[tokio::test]
async fn own_fertilizers_beside_global_ones_global_ones_read_only() {
    let app = mcp_tools::app().await;
    let t = app.tenant("fert").await;
    let other = app.tenant("ferto").await;
    let viewer = app.member(&t, Role::Viewer).await;
    let grower = app.member(&t, Role::Grower).await;
    let other_grower = app.member(&other, Role::Grower).await;
    let tag = letters();
    let global =
        crate::fertilizers::global_fertilizer(&app, json!({"name": format!("Global {tag}")})).await;

    // A viewer cannot create; bad bodies name each field; nothing written.
    let res = app
        .rest_as(&viewer)
        .post(&tenant_path(&t, "fertilizers"), &own_body("Mine"))
        .await;
    assert_error(res, 403, "FORBIDDEN").await;
    let mut bad = own_body("Bad");
    bad["npk"] = json!({"n": 60, "p": 30, "k": 20});
    bad["mixing_priority"] = json!(0);
    bad["colour"] = json!("green");
    let res = app
        .rest_as(&grower)
        .post(&tenant_path(&t, "fertilizers"), &bad)
        .await;
    let err = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(detail_fields(&err), ["body.mixing_priority", "body.colour"]);
    let mut bad = own_body("Bad");
    bad["npk"] = json!({"n": 60, "p": 30, "k": 20});
    let res = app
        .rest_as(&grower)
        .post(&tenant_path(&t, "fertilizers"), &bad)
        .await;
    let err = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(detail_fields(&err), ["body.npk"]);
    assert_eq!(count(&app, &t, "fertilizers").await, 0);

    // The grower creates one; a second of the same name is a 409.
    let mine = app
        .rest_as(&grower)
        .create(
            &tenant_path(&t, "fertilizers"),
            &own_body(&format!("Mine {tag}")),
        )
        .await;
    assert_eq!(mine["owner"], "garden");
    let key = mine["key"].as_str().expect("key").to_owned();
    assert!(key.starts_with("tenant:"));
    assert_eq!(mine["npk"], json!({"n": 4, "p": 2, "k": 5}));
    let res = app
        .rest_as(&grower)
        .post(
            &tenant_path(&t, "fertilizers"),
            &own_body(&format!("MINE {tag}")),
        )
        .await;
    assert_error(res, 409, "DUPLICATE_ENTRY").await;

    // One listing shows both, marked; filters narrow.
    let list = app
        .rest_as(&viewer)
        .get_ok(&tenant_path(&t, &format!("fertilizers?q={tag}")))
        .await;
    let marked: Vec<(String, String)> = list["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|f| {
            (
                f["key"].as_str().unwrap_or_default().to_owned(),
                f["owner"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        marked,
        [
            (global.clone(), "global".to_owned()),
            (key.clone(), "garden".to_owned())
        ]
    );
    let own = app
        .rest_as(&viewer)
        .get_ok(&tenant_path(&t, "fertilizers?owner=garden"))
        .await;
    assert_eq!(own["total"], 1);
    let none = app
        .rest_as(&viewer)
        .get_ok(&tenant_path(
            &t,
            &format!("fertilizers?q={tag}&form=powder"),
        ))
        .await;
    assert_eq!(none["total"], 0);
    let res = app
        .rest_as(&viewer)
        .get(&tenant_path(&t, "fertilizers?owner=x&form=gel"))
        .await;
    let err = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(detail_fields(&err), ["query.owner", "query.form"]);
    let got = app
        .rest_as(&viewer)
        .get_ok(&tenant_path(&t, &format!("fertilizers/{global}")))
        .await;
    assert_eq!(got["owner"], "global");

    // Patch: own changes (omitted fields stay), global is 403, viewer 403.
    let patched = app
        .rest_as(&grower)
        .patch(
            &tenant_path(&t, &format!("fertilizers/{key}")),
            &json!({"mixing_priority": 40, "description_en": "Kitchen-made.", "secondary": null}),
        )
        .await
        .expect_json(200)
        .await;
    assert_eq!(patched["mixing_priority"], 40);
    assert_eq!(patched["brand"], "Home brew");
    assert_eq!(patched.get("secondary"), None);
    assert_eq!(patched["description_en"], "Kitchen-made.");
    assert_eq!(patched["ec_contribution_per_ml"], 0.25);
    let res = app
        .rest_as(&grower)
        .patch(
            &tenant_path(&t, &format!("fertilizers/{key}")),
            &json!({"ec_contribution_per_ml": 9}),
        )
        .await;
    let err = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(detail_fields(&err), ["body.ec_contribution_per_ml"]);
    let res = app
        .rest_as(&viewer)
        .patch(
            &tenant_path(&t, &format!("fertilizers/{key}")),
            &json!({"mixing_priority": 41}),
        )
        .await;
    assert_error(res, 403, "FORBIDDEN").await;
    let res = app
        .rest_as(&grower)
        .patch(
            &tenant_path(&t, &format!("fertilizers/{global}")),
            &json!({"mixing_priority": 41}),
        )
        .await;
    assert_error(res, 403, "FORBIDDEN").await;
    let res = app
        .rest_as(&grower)
        .delete(&tenant_path(&t, &format!("fertilizers/{global}")))
        .await;
    assert_error(res, 403, "FORBIDDEN").await;
    let global_now: Value = app
        .get(&format!("/api/v1/fertilizers/{global}"))
        .await
        .json()
        .await
        .unwrap_or(Value::Null);
    assert_ne!(global_now["mixing_priority"], 41);

    // Another garden: its key is unknown here and vice versa.
    for method in [Method::GET, Method::PATCH, Method::DELETE] {
        let body = (method == Method::PATCH).then(|| json!({"mixing_priority": 42}));
        let res = app
            .rest_as(&other_grower)
            .send(
                method,
                &tenant_path(&other, &format!("fertilizers/{key}")),
                body.as_ref(),
            )
            .await;
        assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    }
    let res = app
        .rest_as(&viewer)
        .get(&tenant_path(&t, "fertilizers/tenant:not-a-uuid"))
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    assert_eq!(count(&app, &other, "fertilizers").await, 0);
    let still = app
        .rest_as(&viewer)
        .get_ok(&tenant_path(&t, &format!("fertilizers/{key}")))
        .await;
    assert_eq!(still["mixing_priority"], 40);

    // Delete: viewer 403, grower 204.
    let res = app
        .rest_as(&viewer)
        .delete(&tenant_path(&t, &format!("fertilizers/{key}")))
        .await;
    assert_error(res, 403, "FORBIDDEN").await;
    let res = app
        .rest_as(&grower)
        .delete(&tenant_path(&t, &format!("fertilizers/{key}")))
        .await;
    assert_eq!(res.status().as_u16(), 204);
    assert_eq!(count(&app, &t, "fertilizers").await, 0);
}

#[tokio::test]
async fn the_gardens_mixing_protocol_doses_its_own_products() {
    let app = mcp_tools::app().await;
    let t = app.tenant("mixg").await;
    let other = app.tenant("mixo").await;
    let viewer = app.member(&t, Role::Viewer).await;
    let grower = app.member(&t, Role::Grower).await;
    let other_grower = app.member(&other, Role::Grower).await;
    let tag = letters();
    let mine = app
        .rest_as(&grower)
        .create(
            &tenant_path(&t, "fertilizers"),
            &own_body(&format!("Own grow {tag}")),
        )
        .await;
    let mine = mine["key"].as_str().expect("key").to_owned();
    let theirs = app
        .rest_as(&other_grower)
        .create(
            &tenant_path(&other, "fertilizers"),
            &own_body(&format!("Their grow {tag}")),
        )
        .await;
    let theirs = theirs["key"].as_str().expect("key").to_owned();

    // 20 litres at 1.2 mS/cm in coco, vegetative, base water 0: EC_net 1.2; pH reserve 0.02
    // (alkalinity 0); the one product gets 1.18 mS/cm ÷ 0.25 per ml = 4.72 ml/L (under its
    // maximum of 6), 94.4 ml for the tank.
    let body = json!({"fertilizers": [{"fertilizer_key": mine}], "target_volume_liters": 20, "target_ec_ms": 1.2});
    let p = app
        .rest_as(&viewer)
        .post(&tenant_path(&t, "mixing-protocol"), &body.clone())
        .await
        .expect_json(200)
        .await;
    assert_eq!(p["dosages"][0]["fertilizer_key"], mine.as_str());
    assert_eq!(p["dosages"][0]["ml_per_liter"], 4.72);
    assert_eq!(p["dosages"][0]["total_ml"], 94.4);
    assert_eq!(p["valid"], true, "{p}");
    // The global route does not know the garden's product; another garden's key is 404 here.
    let res = app
        .rest_as(&viewer)
        .post("/api/v1/calculations/mixing-protocol", &body)
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    let res = app.rest_as(&viewer).post(&tenant_path(&t, "mixing-protocol"), &json!({"fertilizers": [{"fertilizer_key": theirs}], "target_volume_liters": 20, "target_ec_ms": 1.2}))
    .await;
    let err = assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    assert_eq!(detail_fields(&err), ["body.fertilizers[0].fertilizer_key"]);
    let res = app.rest_as(&viewer).post(&tenant_path(&t, "mixing-protocol"), &json!({"fertilizers": [{"fertilizer_key": mine}], "target_volume_liters": 20, "target_ec_ms": 11}))
    .await;
    let err = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(detail_fields(&err), ["body.target_ec_ms"]);

    // The tool: same protocol; list_fertilizers shows the garden's product marked.
    let key = scoped_key(&app, &t, Role::Viewer).await;
    let (status, tool) = call(
        &app,
        &key,
        "calculate_mixing_protocol",
        json!({"fertilizers": [{"fertilizer_key": mine}], "target_volume_liters": 20, "target_ec_ms": 1.2}),
    )
    .await;
    assert_eq!(status, 200, "{tool}");
    assert_eq!(tool["data"]["dosages"][0]["total_ml"], 94.4);
    let (status, refused) = call(
        &app,
        &key,
        "calculate_mixing_protocol",
        json!({"fertilizers": [{"fertilizer_key": theirs}], "target_volume_liters": 20, "target_ec_ms": 1.2}),
    )
    .await;
    assert_eq!(
        (status, refused["error_code"].as_str()),
        (404, Some("not_found"))
    );
    let (status, listed) = call(&app, &key, "list_fertilizers", json!({"query": tag})).await;
    assert_eq!(status, 200, "{listed}");
    let items = listed["data"]["items"].as_array().expect("items");
    assert_eq!(items.len(), 1, "{listed}");
    assert_eq!(items[0]["fertilizer_key"], mine.as_str());
    assert_eq!(items[0]["owner"], "garden");
    let (_, organic) = call(
        &app,
        &key,
        "list_fertilizers",
        json!({"query": tag, "organic_only": true}),
    )
    .await;
    assert_eq!(organic["data"]["total"], 0);
}
