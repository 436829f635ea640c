//! Full mode: every protected route needs a valid credential; anything else is 401 with the
//! right code and challenge, before the slug is even looked at. Health and mode stay open.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::json;

use crate::support::{TestApp, assert_error, header, unique_slug};

#[tokio::test]
async fn anonymous_callers_get_401_and_learn_nothing() {
    let app = TestApp::full().await;
    let tenant = app.tenant("guarded").await;
    let path = format!("/api/v1/t/{}/sites/", tenant.slug);

    let res = app.get(&path).await;
    assert_eq!(header(&res, "www-authenticate").as_deref(), Some("Bearer"));
    assert_error(res, 401, "UNAUTHORIZED").await;

    let res = app
        .post_json(&path, &json!({"name": "Sneaky", "kind": "garden"}))
        .await;
    assert_error(res, 401, "UNAUTHORIZED").await;
    assert_eq!(app.site_count(&tenant).await, 0, "nothing written");

    // An unknown garden looks exactly like a known one to an anonymous caller.
    let res = app
        .get(&format!("/api/v1/t/{}/sites/", unique_slug("nobody")))
        .await;
    assert_error(res, 401, "UNAUTHORIZED").await;

    for path in [
        "/api/v1/users/me",
        "/api/v1/tenants/",
        "/api/v1/auth/api-keys",
        "/api/v1/admin/users",
    ] {
        let res = app.get(path).await;
        assert_error(res, 401, "UNAUTHORIZED").await;
    }
    // Another scheme is no credential.
    let res = app
        .get_with(
            "/api/v1/users/me",
            &[("authorization", "Basic dXNlcjpwdw==")],
        )
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

fn b64(json: &serde_json::Value) -> String {
    URL_SAFE_NO_PAD.encode(serde_json::to_vec(json).expect("json"))
}

#[tokio::test]
async fn forged_tampered_expired_and_foreign_tokens_are_invalid() {
    let app = TestApp::full().await;
    let user = app.user("forger").await;
    let ok = app.rest_as(&user).get("/api/v1/users/me").await;
    assert_eq!(ok.status().as_u16(), 200);

    let parts: Vec<&str> = user.session.access.split('.').collect();
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let claims = |exp: i64| json!({"sub": user.key, "exp": exp, "iat": now - 10, "jti": uuid::Uuid::new_v4(), "gen": 0});
    let alg_none = format!(
        "{}.{}.",
        b64(&json!({"alg": "none", "typ": "JWT"})),
        b64(&claims(now + 600))
    );
    let tampered = format!(
        "{}.{}.{}",
        parts[0],
        b64(
            &json!({"sub": uuid::Uuid::new_v4(), "exp": now + 600, "iat": now, "jti": uuid::Uuid::new_v4(), "gen": 0})
        ),
        parts[2]
    );
    let foreign_key = {
        let keys =
            kultiva::auth::jwt::JwtKeys::new("another-secret-0123456789abcdef0123456789", 900);
        keys.issue(user.id(), 0).expect("issue").token
    };
    let expired = {
        let keys = kultiva::auth::jwt::JwtKeys::new(crate::support::TEST_SECRET, -120);
        keys.issue(user.id(), 0).expect("issue").token
    };
    let unknown_user = {
        let keys = kultiva::auth::jwt::JwtKeys::new(crate::support::TEST_SECRET, 900);
        keys.issue(uuid::Uuid::new_v4(), 0).expect("issue").token
    };
    for (what, token) in [
        ("alg none", alg_none),
        ("tampered payload", tampered),
        ("signed with another key", foreign_key),
        ("expired", expired),
        ("unknown user", unknown_user),
        ("garbage", "not.a.jwt".to_owned()),
        ("empty", String::new()),
        ("unknown api key", format!("svc_{}", "A".repeat(43))),
    ] {
        let res = app.rest_key(&token).get("/api/v1/users/me").await;
        let status = res.status().as_u16();
        assert_eq!(status, 401, "{what}");
        let code = if token.is_empty() {
            "UNAUTHORIZED"
        } else {
            "INVALID_TOKEN"
        };
        assert_error(res, 401, code).await;
    }
    let res = app
        .get_with("/api/v1/users/me", &[("x-api-key", "svc_nope")])
        .await;
    assert_eq!(
        header(&res, "www-authenticate").as_deref(),
        Some("Bearer error=\"invalid_token\"")
    );
    assert_error(res, 401, "INVALID_TOKEN").await;
}
