//! Light mode: no authentication; `/auth/…` is gone except API-key management; a system user
//! administers a default tenant.

use serde_json::{Value, json};

use crate::support::{TestApp, assert_error};

#[tokio::test]
async fn light_mode_has_a_system_user_and_no_account_routes() {
    let app = TestApp::spawn().await;
    for path in [
        "/api/v1/auth/login",
        "/api/v1/auth/register",
        "/api/v1/auth/refresh",
        "/api/v1/auth/logout",
        "/api/v1/auth/password-reset/request",
        "/api/v1/auth/service-accounts/validate",
    ] {
        let res = app.post_json(path, &json!({})).await;
        assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    }
    let me: Value = app
        .get("/api/v1/users/me")
        .await
        .json()
        .await
        .expect("json");
    assert_eq!(me["account_type"], "system");
    let tenants: Value = app
        .get("/api/v1/tenants/")
        .await
        .json()
        .await
        .expect("json");
    assert!(
        tenants["items"]
            .as_array()
            .expect("items")
            .iter()
            .any(|t| t["slug"] == "default" && t["role"] == "admin"),
        "{tenants}"
    );
    assert_eq!(
        app.get("/api/v1/t/default/sites/").await.status().as_u16(),
        200
    );

    // API keys still work: they belong to the system user.
    let res = app
        .post_json("/api/v1/auth/api-keys", &json!({"label": "tool server"}))
        .await;
    assert_eq!(res.status().as_u16(), 201);
    let key: Value = res.json().await.expect("json");
    assert!(key["raw_key"].as_str().expect("raw").starts_with("svc_"));
    let list: Value = app
        .rest()
        .get("/api/v1/auth/api-keys")
        .await
        .json()
        .await
        .expect("json");
    assert!(
        list.as_array()
            .expect("array")
            .iter()
            .any(|k| k["key"] == key["key"])
    );
}
