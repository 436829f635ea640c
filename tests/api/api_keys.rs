//! API keys: shown once, stored as a hash, accepted as X-API-Key or Bearer, revocable, scoped;
//! service-account validation.

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::support::{TestApp, assert_error, detail_fields};
use kultiva::auth::Role;

#[tokio::test]
async fn keys_are_shown_once_stored_hashed_and_work_in_both_headers() {
    let app = TestApp::full().await;
    let user = app.user("keys").await;
    let res = app
        .rest_as(&user)
        .post("/api/v1/auth/api-keys", &json!({"label": "automation"}))
        .await;
    assert_eq!(res.status().as_u16(), 201);
    let key: Value = res.json().await.expect("json");
    let raw = key["raw_key"].as_str().expect("raw").to_owned();
    assert!(raw.starts_with("svc_") && raw.len() >= 4 + 43, "{raw}");
    assert_eq!(key["key_prefix"], raw[..12]);
    assert_eq!(key["label"], "automation");
    assert_eq!(key["tenant_scope"], Value::Null);

    // Only the SHA-256 is stored.
    let stored: Vec<u8> =
        sqlx::query_scalar("SELECT key_hash FROM platform.api_keys WHERE id = $1::uuid")
            .bind(key["key"].as_str().expect("key"))
            .fetch_one(app.state.platform_pool())
            .await
            .expect("row");
    assert_eq!(stored, Sha256::digest(raw.as_bytes()).to_vec());
    let leaked: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM platform.api_keys WHERE key_prefix = $1 OR label = $1",
    )
    .bind(&raw)
    .fetch_one(app.state.platform_pool())
    .await
    .expect("count");
    assert_eq!(leaked, 0);

    // The listing never shows the secret.
    let list: Value = app
        .rest_as(&user)
        .get("/api/v1/auth/api-keys")
        .await
        .json()
        .await
        .expect("json");
    assert_eq!(list.as_array().map(Vec::len), Some(1));
    assert!(list[0].get("raw_key").is_none(), "{list}");

    for headers in [
        vec![("x-api-key", raw.clone())],
        vec![("authorization", format!("Bearer {raw}"))],
    ] {
        let mut req = app.client.get(app.url("/api/v1/users/me"));
        for (k, v) in &headers {
            req = req.header(*k, v);
        }
        let res = req.send().await.expect("sent");
        assert_eq!(res.status().as_u16(), 200);
        let me: Value = res.json().await.expect("json");
        assert_eq!(me["email"], user.email);
    }
    // last_used_at is recorded (asynchronously, right after the request).
    let mut used = false;
    for _ in 0..50 {
        let list: Value = app
            .rest_as(&user)
            .get("/api/v1/auth/api-keys")
            .await
            .json()
            .await
            .expect("json");
        if list[0]["last_used_at"].is_string() {
            used = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(used, "last_used_at set");

    // A key cannot mint keys.
    let res = app
        .rest_key(&raw)
        .post("/api/v1/auth/api-keys", &json!({"label": "child"}))
        .await;
    assert_error(res, 403, "FORBIDDEN").await;

    // Revocation works at once; another user cannot revoke it.
    let stranger = app.user("stranger").await;
    let path = format!(
        "/api/v1/auth/api-keys/{}",
        key["key"].as_str().expect("key")
    );
    let res = app.rest_as(&stranger).delete(&path).await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    let res = app
        .get_with("/api/v1/users/me", &[("x-api-key", &raw)])
        .await;
    assert_eq!(
        res.status().as_u16(),
        200,
        "still valid after the refused revoke"
    );
    let res = app.rest_as(&user).delete(&path).await;
    assert_eq!(res.status().as_u16(), 204);
    let res = app
        .get_with("/api/v1/users/me", &[("x-api-key", &raw)])
        .await;
    assert_error(res, 401, "INVALID_TOKEN").await;
    let res = app.rest_as(&user).delete(&path).await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    let res = app
        .rest_as(&user)
        .delete("/api/v1/auth/api-keys/not-a-uuid")
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
}

/// `GET /users/me` answers with the record read while authenticating: the same record for a
/// token and for a key, current after a change, and nothing once the account is deactivated.
#[tokio::test]
async fn users_me_is_the_current_record_by_token_and_by_key() {
    let app = TestApp::full().await;
    let user = app.user("me-record").await;
    let raw = app.api_key(&user, None).await;
    let key_header = [("x-api-key", raw.as_str())];
    let token = app.rest_as(&user);
    let by_token = || token.get("/api/v1/users/me");
    let by_key = || app.get_with("/api/v1/users/me", &key_header);

    let a: Value = by_token().await.json().await.expect("json");
    let b: Value = by_key().await.json().await.expect("json");
    assert_eq!(a, b);
    assert_eq!(a["key"], user.key);
    assert_eq!(a["email"], user.email);
    assert_eq!(a["account_type"], "user");
    assert!(a["last_login_at"].is_string(), "{a}");

    let res = app
        .rest_as(&user)
        .patch(
            "/api/v1/users/me",
            &json!({"display_name": "Renamed", "locale": "de"}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 200);
    for res in [by_token().await, by_key().await] {
        assert_eq!(res.status().as_u16(), 200);
        let me: Value = res.json().await.expect("json");
        assert_eq!(me["display_name"], "Renamed");
        assert_eq!(me["locale"], "de");
    }

    sqlx::query("UPDATE platform.users SET is_active = false WHERE id = $1::uuid")
        .bind(&user.key)
        .execute(app.state.platform_pool())
        .await
        .expect("deactivate");
    // A change written behind the service's back (like one made on another replica) reaches
    // this process's account cache through the database's notification, within the cache's
    // one-second bound (src/cache): wait for it, bounded, then both credentials are refused.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    while by_token().await.status().as_u16() != 401 && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_error(by_token().await, 401, "INVALID_TOKEN").await;
    assert_error(by_key().await, 401, "INVALID_TOKEN").await;
}

#[tokio::test]
async fn a_scoped_key_sees_only_its_tenant() {
    let app = TestApp::full().await;
    let a = app.tenant("scope-a").await;
    let b = app.tenant("scope-b").await;
    let user = app.member(&a, Role::Viewer).await;
    app.add_member(&b, user.id(), Role::Viewer).await;
    let scoped = app.api_key(&user, Some(a.slug.as_str())).await;
    let open = app.api_key(&user, None).await;
    let sites = |t: &kultiva::tenancy::TenantRecord| format!("/api/v1/t/{}/sites/", t.slug);
    assert_eq!(
        app.get_with(&sites(&a), &[("x-api-key", &scoped)])
            .await
            .status()
            .as_u16(),
        200
    );
    let res = app.get_with(&sites(&b), &[("x-api-key", &scoped)]).await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    assert_eq!(
        app.get_with(&sites(&b), &[("x-api-key", &open)])
            .await
            .status()
            .as_u16(),
        200
    );
    let listed: Value = app
        .get_with("/api/v1/tenants/", &[("x-api-key", &scoped)])
        .await
        .json()
        .await
        .expect("json");
    let slugs: Vec<&str> = listed["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|t| t["slug"].as_str())
        .collect();
    assert_eq!(slugs, vec![a.slug.as_str()]);

    // Scoping to a tenant you do not belong to is refused and creates nothing.
    let foreign = app.tenant("scope-foreign").await;
    let count_keys = || async {
        sqlx::query_scalar::<_, i64>(
            "SELECT count(*) FROM platform.api_keys WHERE user_id = $1::uuid",
        )
        .bind(&user.key)
        .fetch_one(app.state.platform_pool())
        .await
        .expect("count")
    };
    let before = count_keys().await;
    let res = app
        .rest_as(&user)
        .post(
            "/api/v1/auth/api-keys",
            &json!({"label": "x", "tenant_scope": foreign.slug.as_str()}),
        )
        .await;
    let err = assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    assert_eq!(detail_fields(&err), vec!["body.tenant_scope"]);
    // Not slug-shaped (empty, upper case, control characters): a 422 on the field.
    for scope in ["", "Not A Slug", "bad\u{1}slug"] {
        let res = app
            .rest_as(&user)
            .post(
                "/api/v1/auth/api-keys",
                &json!({"label": "x", "tenant_scope": scope}),
            )
            .await;
        let err = assert_error(res, 422, "VALIDATION_ERROR").await;
        assert_eq!(detail_fields(&err), vec!["body.tenant_scope"], "{scope:?}");
    }
    let res = app
        .rest_as(&user)
        .post("/api/v1/auth/api-keys", &json!({"label": ""}))
        .await;
    assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(count_keys().await, before);
}

#[tokio::test]
async fn service_account_keys_validate_and_nothing_else_does() {
    let app = TestApp::full().await;
    let tenant = app.tenant("svc").await;
    let (account, key) = kultiva::platform::operator::create_service_account(
        &app.state,
        "Greenhouse bot",
        tenant.slug.as_str(),
        Role::Grower,
    )
    .await
    .expect("service account");
    let raw = key.raw_key.expect("raw");
    let res = app
        .post_json(
            "/api/v1/auth/service-accounts/validate",
            &json!({"api_key": raw}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let ctx: Value = res.json().await.expect("json");
    assert_eq!(ctx["service_account_key"], account.key.to_string());
    assert_eq!(ctx["display_name"], "Greenhouse bot");
    assert_eq!(ctx["tenants"][0]["tenant_slug"], tenant.slug.as_str());
    assert_eq!(ctx["tenants"][0]["tenant_key"], tenant.id.to_string());
    assert_eq!(ctx["tenants"][0]["role"], "grower");
    assert_eq!(
        ctx["tenants"][0]["mcp_permissions"],
        json!(["mcp.read", "mcp.write"])
    );

    // A service account cannot log in interactively (it has no password).
    let person = app.user("personal").await;
    let personal_key = app.api_key(&person, None).await;
    let mut bodies = Vec::new();
    for candidate in [
        personal_key.clone(),
        "svc_garbage".to_owned(),
        "x".to_owned(),
        format!("svc_{}", "B".repeat(43)),
    ] {
        let res = app
            .post_json(
                "/api/v1/auth/service-accounts/validate",
                &json!({"api_key": candidate}),
            )
            .await;
        let body = assert_error(res, 401, "UNAUTHORIZED").await;
        bodies.push(body["message"].clone());
    }
    assert!(
        bodies.windows(2).all(|w| w[0] == w[1]),
        "one generic answer: {bodies:?}"
    );

    // Revoked service account: the same generic 401, and the key stops working on REST too.
    kultiva::platform::operator::revoke_service_account(&app.state, &account.key.to_string())
        .await
        .expect("revoke");
    let res = app
        .post_json(
            "/api/v1/auth/service-accounts/validate",
            &json!({"api_key": raw}),
        )
        .await;
    assert_error(res, 401, "UNAUTHORIZED").await;
    let res = app
        .get_with(
            &format!("/api/v1/t/{}/sites/", tenant.slug),
            &[("x-api-key", &raw)],
        )
        .await;
    assert_error(res, 401, "INVALID_TOKEN").await;
    let res = app
        .post_json("/api/v1/auth/service-accounts/validate", &json!({}))
        .await;
    assert_error(res, 422, "VALIDATION_ERROR").await;
}
