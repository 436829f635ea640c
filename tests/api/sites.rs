//! The first garden capability: sites through `TenantTx`.

use serde_json::{Value, json};

use crate::support::{TestApp, assert_error};

#[tokio::test]
async fn create_get_and_list_sites() {
    let app = TestApp::spawn().await;
    let tenant = app.tenant("sites").await;
    let base = format!("/api/v1/t/{}/sites/", tenant.slug);

    let res = app
        .post_json(
            &base,
            &json!({"name": "  Südbalkon ", "kind": "balcony", "description": "Morning sun\nwind"}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 201);
    let site: Value = res.json().await.expect("json");
    assert_eq!(site["name"], "Südbalkon");
    assert_eq!(site["kind"], "balcony");
    assert_eq!(site["description"], "Morning sun\nwind");
    let key = site["key"].as_str().expect("key");
    assert!(uuid::Uuid::parse_str(key).is_ok());

    let got: Value = app
        .get(&format!("{base}{key}"))
        .await
        .json()
        .await
        .expect("json");
    assert_eq!(got, site);

    let page: Value = app.get(&base).await.json().await.expect("json");
    assert_eq!(
        page,
        json!({"items": [site], "total": 1, "skip": 0, "limit": 100})
    );
}

#[tokio::test]
async fn duplicate_names_are_409_case_insensitively() {
    let app = TestApp::spawn().await;
    let tenant = app.tenant("dupsite").await;
    let base = format!("/api/v1/t/{}/sites/", tenant.slug);
    app.create_site(&tenant, "Greenhouse").await;
    let res = app
        .post_json(&base, &json!({"name": "GREENHOUSE", "kind": "greenhouse"}))
        .await;
    assert_error(res, 409, "DUPLICATE_ENTRY").await;
    assert_eq!(app.site_count(&tenant).await, 1);
    // The same name in another tenant is fine.
    let other = app.tenant("dupsite-b").await;
    app.create_site(&other, "Greenhouse").await;
}

#[tokio::test]
async fn unknown_or_malformed_site_keys_are_404() {
    let app = TestApp::spawn().await;
    let tenant = app.tenant("nokey").await;
    for key in [
        uuid::Uuid::now_v7().to_string(),
        "not-a-uuid".to_owned(),
        "1".to_owned(),
    ] {
        let res = app
            .get(&format!("/api/v1/t/{}/sites/{key}", tenant.slug))
            .await;
        assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    }
}
