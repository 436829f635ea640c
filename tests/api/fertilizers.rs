//! Global fertilisers as a catalogue kind: read by any caller at `/fertilizers` and
//! `/fertilizers/{key}`, written by platform admins, every field checked; the built-in seed
//! holds at least 40 real products (checked by the seed's own unit test).

use serde_json::{Map, Value, json};

use crate::catalog::letters;
use crate::support::{TestApp, assert_error, detail_fields};

/// A global fertiliser only this test knows (the catalogue is shared by parallel tests).
pub(crate) async fn global_fertilizer(app: &TestApp, fields: Value) -> String {
    let mut body: Map<String, Value> = json!({
        "name": format!("Test fertiliser {}", letters()),
        "brand": "Test",
        "fertilizer_type": "base",
        "form": "liquid",
        "npk": {"n": 3, "p": 1, "k": 4},
        "ec_contribution_per_ml": 0.2,
        "recommended_dose_ml_per_liter": 1.0,
        "max_dose_ml_per_liter": 10.0,
        "mixing_priority": 30,
        "label_source": "test label",
    })
    .as_object()
    .cloned()
    .unwrap_or_default();
    if let Value::Object(extra) = fields {
        body.extend(extra);
    }
    let created = kultiva::catalog::engine::service::create(
        &app.state,
        &kultiva::catalog::fertilizers::model::FERTILIZER,
        body,
    )
    .await
    .expect("global fertiliser");
    created["key"].as_str().expect("key").to_owned()
}

#[tokio::test]
async fn fertilizers_are_a_catalogue_read_by_any_caller_and_written_by_platform_admins() {
    let app = TestApp::full().await;
    let user = app.user("fert").await;
    let admin = app.platform_admin().await;
    let name = format!("Gro {} A", letters());
    let body = json!({
        "name": name,
        "brand": "Gro",
        "fertilizer_type": "base",
        "form": "liquid",
        "npk": {"n": 5, "p": 0, "k": 1},
        "secondary": {"ca": 3.8},
        "micro": {"fe": 0.1},
        "ec_contribution_per_ml": 0.2,
        "recommended_dose_ml_per_liter": 2.0,
        "max_dose_ml_per_liter": 5.0,
        "mixing_priority": 30,
        "tank_safe": true,
        "label_source": "Gro A label, US guaranteed analysis",
    });

    // A plain account cannot write; nothing is stored.
    let res = app.rest_as(&user).post("/api/v1/fertilizers", &body).await;
    assert_error(res, 403, "FORBIDDEN").await;
    let q = format!("/api/v1/fertilizers?q={}", name.replace(' ', "%20"));
    let res = app.rest_as(&user).get(&q).await;
    let page: Value = res.json().await.expect("json");
    assert_eq!(page["total"], 0, "{page}");

    // A platform admin creates it; any caller reads it in the list and by key.
    let res = app.rest_as(&admin).post("/api/v1/fertilizers", &body).await;
    assert_eq!(res.status().as_u16(), 201);
    let created: Value = res.json().await.expect("json");
    let key = created["key"].as_str().expect("key").to_owned();
    let res = app.rest_as(&user).get(&q).await;
    let page: Value = res.json().await.expect("json");
    assert_eq!(page["total"], 1, "{page}");
    assert_eq!(page["items"][0]["npk"], json!({"n": 5, "p": 0, "k": 1}));
    let res = app
        .rest_as(&user)
        .get(&format!("/api/v1/fertilizers/{key}"))
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let one: Value = res.json().await.expect("json");
    assert_eq!(one["name"], name);
    assert_eq!(one["mixing_priority"], 30);
    assert_eq!(one["secondary"]["ca"], 3.8);
    assert_eq!(one["label_source"], "Gro A label, US guaranteed analysis");

    // Filters: form and type.
    let res = app.rest_as(&user).get(&format!("{q}&form=powder")).await;
    let page: Value = res.json().await.expect("json");
    assert_eq!(page["total"], 0);

    // Anonymous: 401; unknown key: 404.
    let res = app.rest().get("/api/v1/fertilizers").await;
    assert_error(res, 401, "UNAUTHORIZED").await;
    let res = app
        .rest_as(&user)
        .get(&format!("/api/v1/fertilizers/{}", uuid::Uuid::new_v4()))
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;

    // Bad bodies: NPK over 100 %, a maximum below the dose, a priority out of 1–100, an
    // unknown form; one 422 naming each field, nothing stored.
    let bad_name = format!("Bad {}", letters());
    let bad = json!({
        "name": bad_name,
        "brand": "Bad",
        "fertilizer_type": "base",
        "form": "slurry",
        "npk": {"n": 50, "p": 40, "k": 20},
        "ec_contribution_per_ml": 0.2,
        "recommended_dose_ml_per_liter": 4.0,
        "max_dose_ml_per_liter": 2.0,
        "mixing_priority": 0,
    });
    let res = app.rest_as(&admin).post("/api/v1/fertilizers", &bad).await;
    let err = assert_error(res, 422, "VALIDATION_ERROR").await;
    let fields = detail_fields(&err);
    for f in ["body.form", "body.mixing_priority"] {
        assert!(fields.contains(&f.to_owned()), "{f} in {fields:?}");
    }
    // Cross-field rules are checked once the fields themselves are valid.
    let mut bad2 = bad.clone();
    bad2["form"] = json!("liquid");
    bad2["mixing_priority"] = json!(10);
    let res = app.rest_as(&admin).post("/api/v1/fertilizers", &bad2).await;
    let err = assert_error(res, 422, "VALIDATION_ERROR").await;
    let fields = detail_fields(&err);
    assert!(fields.contains(&"body.npk".to_owned()), "{fields:?}");
    assert!(
        fields.contains(&"body.max_dose_ml_per_liter".to_owned()),
        "{fields:?}"
    );
    let res = app
        .rest_as(&user)
        .get(&format!(
            "/api/v1/fertilizers?q={}",
            bad_name.replace(' ', "%20")
        ))
        .await;
    let page: Value = res.json().await.expect("json");
    assert_eq!(page["total"], 0);
}

/// Every global fertiliser names its label source: the catalogue write without one is a 422
/// naming `body.label_source` and stores nothing; a read shows it; the platform column
/// (migration 0014) mirrors it, and the database refuses a fertiliser row without one.
#[tokio::test]
async fn a_global_fertilizer_needs_its_label_source() {
    let app = TestApp::full().await;
    let admin = app.platform_admin().await;
    let name = format!("Sourced {}", letters());
    let mut body = json!({
        "name": name,
        "brand": "Sourced",
        "fertilizer_type": "supplement",
        "form": "liquid",
        "npk": {"n": 2, "p": 0, "k": 0},
        "secondary": {"ca": 3.2, "mg": 1.2},
        "ec_contribution_per_ml": 0.12,
        "recommended_dose_ml_per_liter": 1.25,
        "mixing_priority": 20,
    });
    for blank in [None, Some("  ")] {
        if let Some(b) = blank {
            body["label_source"] = json!(b);
        }
        let res = app.rest_as(&admin).post("/api/v1/fertilizers", &body).await;
        let err = assert_error(res, 422, "VALIDATION_ERROR").await;
        assert_eq!(detail_fields(&err), ["body.label_source"], "{blank:?}");
    }
    let q = format!("/api/v1/fertilizers?q={}", name.replace(' ', "%20"));
    let res = app.rest_as(&admin).get(&q).await;
    let page: Value = res.json().await.expect("json");
    assert_eq!(page["total"], 0, "{page}");

    body["label_source"] = json!("Sourced Cal label, US guaranteed analysis");
    let res = app.rest_as(&admin).post("/api/v1/fertilizers", &body).await;
    assert_eq!(res.status().as_u16(), 201);
    let created: Value = res.json().await.expect("json");
    let key = created["key"].as_str().expect("key").to_owned();
    let res = app.rest_as(&admin).get(&q).await;
    let page: Value = res.json().await.expect("json");
    assert_eq!(
        page["items"][0]["label_source"],
        "Sourced Cal label, US guaranteed analysis"
    );
    let column: Option<String> =
        sqlx::query_scalar("SELECT label_source FROM platform.catalog_records WHERE id = $1::uuid")
            .bind(&key)
            .fetch_one(app.state.platform_pool())
            .await
            .expect("row");
    assert_eq!(
        column.as_deref(),
        Some("Sourced Cal label, US guaranteed analysis")
    );
    // Clearing it by PATCH is refused too.
    let res = app
        .rest_as(&admin)
        .patch(
            &format!("/api/v1/fertilizers/{key}"),
            &json!({"label_source": null}),
        )
        .await;
    let err = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(detail_fields(&err), ["body.label_source"]);
    // Past the application, the database refuses a fertiliser row without a source.
    let direct = sqlx::query(
        "INSERT INTO platform.catalog_records (id, kind, name, name_norm, data) \
         VALUES ($1, 'fertilizer', 'x', $2, '{}'::jsonb)",
    )
    .bind(uuid::Uuid::new_v4())
    .bind(format!("unsourced {}", letters()))
    .execute(app.state.platform_pool())
    .await;
    assert!(
        direct.is_err(),
        "a fertiliser row without a label source was stored"
    );
}
