//! Platform administration: only admins of the platform tenant; deactivation takes effect on
//! the next request.

use reqwest::Method;
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
        let res = app
            .call(Method::GET, path, Some(&user.bearer()), None)
            .await;
        assert_error(res, 403, "FORBIDDEN").await;
        let res = app
            .call(Method::GET, path, Some(&admin.bearer()), None)
            .await;
        assert_eq!(res.status().as_u16(), 200, "{path}");
    }
    // Searching finds the plain user by e-mail.
    let page: Value = app
        .call(
            Method::GET,
            &format!("/api/v1/admin/users?q={}", user.email),
            Some(&admin.bearer()),
            None,
        )
        .await
        .json()
        .await
        .expect("json");
    assert_eq!(page["total"], 1, "{page}");
    assert_eq!(page["items"][0]["email"], user.email);
    let res = app
        .call(
            Method::GET,
            "/api/v1/admin/users?account_type=robot",
            Some(&admin.bearer()),
            None,
        )
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
        .call(
            Method::POST,
            &format!("/api/v1/admin/users/{}/deactivate", user.key),
            Some(&user.bearer()),
            None,
        )
        .await;
    assert_error(res, 403, "FORBIDDEN").await;
    let res = app
        .call(
            Method::POST,
            &format!("/api/v1/admin/users/{}/deactivate", user.key),
            Some(&admin.bearer()),
            None,
        )
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let body: Value = res.json().await.expect("json");
    assert_eq!(body["is_active"], false);
    assert_error(
        app.call(Method::GET, "/api/v1/users/me", Some(&user.bearer()), None)
            .await,
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
        .call(
            Method::POST,
            &format!("/api/v1/admin/users/{}/deactivate", admin.key),
            Some(&admin.bearer()),
            None,
        )
        .await;
    assert_error(res, 403, "FORBIDDEN").await;

    let res = app
        .call(
            Method::POST,
            &format!("/api/v1/admin/users/{}/reactivate", user.key),
            Some(&admin.bearer()),
            None,
        )
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
    assert_eq!(
        app.call(Method::GET, &path, Some(&member.bearer()), None)
            .await
            .status()
            .as_u16(),
        200
    );
    let res = app
        .call(
            Method::POST,
            &format!("/api/v1/admin/tenants/{}/deactivate", tenant.slug),
            Some(&admin.bearer()),
            None,
        )
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let body: Value = res.json().await.expect("json");
    assert_eq!(body["status"], "suspended");
    assert_error(
        app.call(Method::GET, &path, Some(&member.bearer()), None)
            .await,
        404,
        "ENTITY_NOT_FOUND",
    )
    .await;
    let found: Value = app
        .call(
            Method::GET,
            &format!("/api/v1/admin/tenants?q={}", tenant.slug),
            Some(&admin.bearer()),
            None,
        )
        .await
        .json()
        .await
        .expect("json");
    assert_eq!(found["items"][0]["status"], "suspended");
    let res = app
        .call(
            Method::POST,
            &format!("/api/v1/admin/tenants/{}/reactivate", tenant.slug),
            Some(&admin.bearer()),
            None,
        )
        .await;
    assert_eq!(res.status().as_u16(), 200);
    assert_eq!(
        app.call(Method::GET, &path, Some(&member.bearer()), None)
            .await
            .status()
            .as_u16(),
        200
    );
    let res = app
        .call(
            Method::POST,
            "/api/v1/admin/tenants/no-such-garden/deactivate",
            Some(&admin.bearer()),
            None,
        )
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
}
