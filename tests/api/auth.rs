//! Full mode protects garden data: without identity (no credential can be verified yet) every
//! garden route answers 401, before the slug is even looked at. Health and mode stay open.

use serde_json::json;

use crate::support::{TestApp, assert_error, unique_slug};

#[tokio::test]
async fn full_mode_requires_a_credential_on_garden_routes() {
    let app = TestApp::spawn_env(&[("SERVICE_MODE", "full")]).await;
    let tenant = app.tenant("guarded").await;
    let path = format!("/api/v1/t/{}/sites/", tenant.slug);

    let res = app.get(&path).await;
    assert_eq!(
        res.headers()
            .get("www-authenticate")
            .and_then(|v| v.to_str().ok()),
        Some("Bearer")
    );
    assert_error(res, 401, "UNAUTHORIZED").await;

    let res = app
        .post_json(&path, &json!({"name": "Sneaky", "kind": "garden"}))
        .await;
    assert_error(res, 401, "UNAUTHORIZED").await;
    assert_eq!(app.site_count(&tenant).await, 0, "nothing written");

    let res = app
        .client
        .get(app.url(&path))
        .header("authorization", "Bearer anything")
        .header("x-api-key", "svc_anything")
        .send()
        .await
        .expect("sent");
    assert_error(res, 401, "UNAUTHORIZED").await;

    // An unknown garden looks exactly like a known one to an anonymous caller.
    let res = app
        .get(&format!("/api/v1/t/{}/sites/", unique_slug("nobody")))
        .await;
    assert_error(res, 401, "UNAUTHORIZED").await;

    for open in [
        "/api/v1/health/live",
        "/api/v1/health/ready",
        "/api/health",
        "/api/v1/mode",
        "/api/v1/openapi.json",
    ] {
        assert_eq!(
            app.get(open).await.status().as_u16(),
            200,
            "{open} stays open"
        );
    }
}

#[tokio::test]
async fn light_mode_reaches_garden_routes_without_credentials() {
    let app = TestApp::spawn().await;
    let tenant = app.tenant("open").await;
    let res = app.get(&format!("/api/v1/t/{}/sites/", tenant.slug)).await;
    assert_eq!(res.status().as_u16(), 200);
}
