//! Onboarding: the status steps, applying a starter kit (site, location and plants in one
//! transaction; a second apply is 409), roles, isolation and refusals that write nothing.

use kultiva::auth::Role;
use reqwest::Method;
use serde_json::{Value, json};

use crate::garden::{count, species};
use crate::support::{TestApp, detail_fields};

pub async fn kit_key(app: &TestApp) -> String {
    species(app, "Fixtura tomatoides").await;
    sqlx::query_scalar(
        "SELECT id::text FROM platform.catalog_records WHERE kind = 'starter_kit' AND data->>'slug' = 'fixture-kit'",
    )
    .fetch_one(app.state.platform_pool())
    .await
    .expect("fixture kit")
}

fn steps(v: &Value) -> Vec<(String, bool)> {
    v["steps"]
        .as_array()
        .expect("value")
        .iter()
        .map(|s| {
            (
                s["step"].as_str().expect("value").to_owned(),
                s["done"].as_bool().expect("value"),
            )
        })
        .collect()
}

#[tokio::test]
async fn apply_a_starter_kit_once() {
    let app = TestApp::full().await;
    let t = app.tenant("onb").await;
    let admin = app.member(&t, Role::Admin).await;
    let grower = app.member(&t, Role::Grower).await;
    let viewer = app.member(&t, Role::Viewer).await;
    let kit = kit_key(&app).await;
    let base = format!("/api/v1/t/{}/onboarding", t.slug);

    let (s, st) = app.rest_as(&viewer).call(Method::GET, &base, None).await;
    assert_eq!(s, 200);
    assert_eq!(st["completed"], false);
    assert!(steps(&st).iter().all(|(_, d)| !d), "{st}");
    assert_eq!(st["kit"], Value::Null);

    // Growers cannot set the garden up; bad bodies are 422 with fields; nothing is written.
    let apply = format!("{base}/starter-kit");
    let (s, _) = app
        .rest_as(&grower)
        .call(Method::POST, &apply, Some(&json!({"kit_key": kit})))
        .await;
    assert_eq!(s, 403);
    let (s, body) = app
        .rest_as(&admin)
        .call(
            Method::POST,
            &apply,
            Some(
                &json!({"kit_key": "nope", "hardiness_zone": "15c", "site_name": "  ", "extra": 1}),
            ),
        )
        .await;
    assert_eq!(s, 422);
    let mut fields = detail_fields(&body);
    fields.sort();
    assert_eq!(
        fields,
        [
            "body.extra",
            "body.hardiness_zone",
            "body.kit_key",
            "body.site_name"
        ]
    );
    let (s, _) = app
        .rest_as(&admin)
        .call(
            Method::POST,
            &apply,
            Some(&json!({"kit_key": uuid::Uuid::new_v4()})),
        )
        .await;
    assert_eq!(s, 404);
    assert_eq!(count(&app, &t, "sites").await, 0);
    assert_eq!(count(&app, &t, "plants").await, 0);

    let (s, done) = app
        .rest_as(&admin)
        .call(
            Method::POST,
            &apply,
            Some(&json!({"kit_key": kit, "site_name": "My balcony", "hardiness_zone": "7a"})),
        )
        .await;
    assert_eq!(s, 201, "{done}");
    assert_eq!(done["kit_slug"], "fixture-kit");
    assert_eq!(done["site_name"], "My balcony");
    assert_eq!(done["hardiness_zone"], "7a");
    let plants = done["plants"].as_array().expect("value");
    assert_eq!(plants.len(), 2);
    assert_eq!(count(&app, &t, "sites").await, 1);
    assert_eq!(count(&app, &t, "locations").await, 1);
    assert_eq!(count(&app, &t, "plants").await, 2);
    // The plants stand in the new location and started their first phase.
    let (_, p) = app
        .rest_as(&viewer)
        .call(
            Method::GET,
            &format!(
                "/api/v1/t/{}/plant-instances/{}",
                t.slug,
                plants[0]["plant_key"].as_str().expect("value")
            ),
            None,
        )
        .await;
    assert_eq!(p["location_key"], done["location_key"]);
    assert_eq!(p["site_key"], done["site_key"]);

    let (_, st) = app.rest_as(&viewer).call(Method::GET, &base, None).await;
    assert_eq!(st["completed"], true, "{st}");
    assert_eq!(
        steps(&st),
        vec![
            ("hardiness_zone".into(), true),
            ("starter_kit".into(), true),
            ("site".into(), true),
            ("plants".into(), true),
            ("calendar_feed".into(), false),
        ]
    );
    assert_eq!(st["kit"]["kit_slug"], "fixture-kit");

    // A second apply is 409 and writes nothing.
    let (s, body) = app
        .rest_as(&admin)
        .call(
            Method::POST,
            &apply,
            Some(&json!({"kit_key": kit, "site_name": "Another"})),
        )
        .await;
    assert_eq!(s, 409);
    assert_eq!(body["error_code"], "STATE_CONFLICT");
    assert_eq!(count(&app, &t, "sites").await, 1);
    assert_eq!(count(&app, &t, "plants").await, 2);

    // Another garden is untouched and unreachable.
    let other = app.tenant("onb-b").await;
    assert_eq!(count(&app, &other, "plants").await, 0);
    let stranger = app.member(&other, Role::Admin).await;
    let (s, _) = app.rest_as(&stranger).call(Method::GET, &base, None).await;
    assert_eq!(s, 404);
    let (s, _) = app
        .rest_as(&stranger)
        .call(Method::POST, &apply, Some(&json!({"kit_key": kit})))
        .await;
    assert_eq!(s, 404);
}

#[tokio::test]
async fn a_failed_apply_rolls_everything_back() {
    let app = TestApp::spawn().await;
    let t = app.tenant("onbfail").await;
    let kit = kit_key(&app).await;
    // A site of the kit's default name exists: the site insert is refused (409) and nothing
    // of the kit is left behind.
    app.create_site(&t, "Fixture kit").await;
    let name: String = sqlx::query_scalar(
        "SELECT data->>'name_en' FROM platform.catalog_records WHERE id = $1::uuid",
    )
    .bind(&kit)
    .fetch_one(app.state.platform_pool())
    .await
    .expect("value");
    let res = app
        .post_json(
            &format!("/api/v1/t/{}/onboarding/starter-kit", t.slug),
            &json!({"kit_key": kit, "site_name": name}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 409);
    assert_eq!(count(&app, &t, "plants").await, 0);
    assert_eq!(count(&app, &t, "locations").await, 0);
    assert_eq!(count(&app, &t, "onboarding_kits").await, 0);
}
