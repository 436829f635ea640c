//! Platform administration: only admins of the platform tenant; deactivation takes effect on
//! the next request.

use serde_json::Value;

use crate::support::{PASSWORD, TestApp, assert_error};

#[tokio::test]
async fn only_platform_admins_reach_admin_routes() {
    let app = TestApp::full().await;
    let admin = app.platform_admin().await;
    let user = app.user("plain").await;
    for path in [
        "/api/v1/admin/tenants",
        "/api/v1/admin/users",
        "/api/v1/admin/service-accounts",
    ] {
        assert_error(app.get(path).await, 401, "UNAUTHORIZED").await;
        let res = app.rest_as(&user).get(path).await;
        assert_error(res, 403, "FORBIDDEN").await;
        let res = app.rest_as(&admin).get(path).await;
        assert_eq!(res.status().as_u16(), 200, "{path}");
    }
    // Searching finds the plain user by e-mail.
    let page: Value = app
        .rest_as(&admin)
        .get(&format!("/api/v1/admin/users?q={}", user.email))
        .await
        .json()
        .await
        .expect("json");
    assert_eq!(page["total"], 1, "{page}");
    assert_eq!(page["items"][0]["email"], user.email);
    let res = app
        .rest_as(&admin)
        .get("/api/v1/admin/users?account_type=robot")
        .await;
    assert_error(res, 422, "VALIDATION_ERROR").await;
}

#[tokio::test]
async fn deactivating_a_user_ends_its_tokens_and_keys() {
    let app = TestApp::full().await;
    let admin = app.platform_admin().await;
    let user = app.user("victim").await;
    let key = app.api_key(&user, None).await;
    let res = app
        .rest_as(&user)
        .post_empty(&format!("/api/v1/admin/users/{}/deactivate", user.key))
        .await;
    assert_error(res, 403, "FORBIDDEN").await;
    let res = app
        .rest_as(&admin)
        .post_empty(&format!("/api/v1/admin/users/{}/deactivate", user.key))
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let body: Value = res.json().await.expect("json");
    assert_eq!(body["is_active"], false);
    assert_error(
        app.rest_as(&user).get("/api/v1/users/me").await,
        401,
        "INVALID_TOKEN",
    )
    .await;
    assert_error(
        app.get_with("/api/v1/users/me", &[("x-api-key", &key)])
            .await,
        401,
        "INVALID_TOKEN",
    )
    .await;
    assert_error(
        app.login_response(&user.email, PASSWORD, false).await,
        403,
        "FORBIDDEN",
    )
    .await;
    let res = app
        .rest_as(&admin)
        .post_empty(&format!("/api/v1/admin/users/{}/deactivate", admin.key))
        .await;
    assert_error(res, 403, "FORBIDDEN").await;

    let res = app
        .rest_as(&admin)
        .post_empty(&format!("/api/v1/admin/users/{}/reactivate", user.key))
        .await;
    assert_eq!(res.status().as_u16(), 200);
    assert_eq!(
        app.get_with("/api/v1/users/me", &[("x-api-key", &key)])
            .await
            .status()
            .as_u16(),
        200
    );
    app.login(&user.email, PASSWORD).await;
}

#[tokio::test]
async fn deactivating_a_tenant_hides_it_from_its_members() {
    let app = TestApp::full().await;
    let admin = app.platform_admin().await;
    let tenant = app.tenant("suspend").await;
    let member = app.member(&tenant, kultiva::auth::Role::Admin).await;
    let path = format!("/api/v1/t/{}/sites/", tenant.slug);
    assert_eq!(app.rest_as(&member).get(&path).await.status().as_u16(), 200);
    let res = app
        .rest_as(&admin)
        .post_empty(&format!("/api/v1/admin/tenants/{}/deactivate", tenant.slug))
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let body: Value = res.json().await.expect("json");
    assert_eq!(body["status"], "suspended");
    assert_error(
        app.rest_as(&member).get(&path).await,
        404,
        "ENTITY_NOT_FOUND",
    )
    .await;
    let found: Value = app
        .rest_as(&admin)
        .get(&format!("/api/v1/admin/tenants?q={}", tenant.slug))
        .await
        .json()
        .await
        .expect("json");
    assert_eq!(found["items"][0]["status"], "suspended");
    let res = app
        .rest_as(&admin)
        .post_empty(&format!("/api/v1/admin/tenants/{}/reactivate", tenant.slug))
        .await;
    assert_eq!(res.status().as_u16(), 200);
    assert_eq!(app.rest_as(&member).get(&path).await.status().as_u16(), 200);
    let res = app
        .rest_as(&admin)
        .post_empty("/api/v1/admin/tenants/no-such-garden/deactivate")
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
}
