//! OAuth (a stub by specification): the provider registry, the authorization redirect with
//! single-use `state` and PKCE, and the callback's `state` check.

use reqwest::Method;
use serde_json::{Value, json};

use crate::support::{TestApp, assert_error, detail_fields, set_cookies, unique_slug};

/// 32 bytes (0..31) as URL-safe Base64: a valid Fernet key.
const FERNET_KEY: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
const SECRET: &str = "client-secret-value-1234";

async fn app() -> TestApp {
    TestApp::full_env(&[
        ("FERNET_KEY", FERNET_KEY),
        ("PUBLIC_URL", "https://api.example.test"),
        ("FRONTEND_URL", "https://app.example.test"),
    ])
    .await
}

fn provider_body(slug: &str) -> Value {
    json!({
        "slug": slug,
        "display_name": "Example ID",
        "icon_url": "https://id.example.org/icon.svg",
        "authorize_url": "https://id.example.org/authorize?prompt=consent",
        "token_url": "https://id.example.org/token",
        "client_id": "kultiva-client",
        "client_secret": SECRET,
    })
}

async fn provider_count(app: &TestApp, slug: &str) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM platform.identity_providers WHERE slug = $1")
        .bind(slug)
        .fetch_one(app.state.platform_pool())
        .await
        .expect("count")
}

/// Adds a provider as a platform admin and returns its slug.
async fn add_provider(app: &TestApp, admin: &str) -> String {
    let slug = unique_slug("idp");
    let res = app
        .call(
            Method::POST,
            "/api/v1/admin/identity-providers",
            Some(admin),
            Some(&provider_body(&slug)),
        )
        .await;
    assert_eq!(res.status().as_u16(), 201);
    slug
}

#[tokio::test]
async fn admins_register_providers_with_encrypted_secrets() {
    let app = app().await;
    let admin = app.platform_admin().await;
    let user = app.user("plain").await;
    let slug = unique_slug("idp");
    let body = provider_body(&slug);
    let path = "/api/v1/admin/identity-providers";

    assert_error(
        app.call(Method::POST, path, None, Some(&body)).await,
        401,
        "UNAUTHORIZED",
    )
    .await;
    assert_error(
        app.call(Method::POST, path, Some(&user.bearer()), Some(&body))
            .await,
        403,
        "FORBIDDEN",
    )
    .await;
    assert_eq!(provider_count(&app, &slug).await, 0);

    let res = app
        .call(Method::POST, path, Some(&admin.bearer()), Some(&body))
        .await;
    assert_eq!(res.status().as_u16(), 201);
    let created: Value = res.json().await.expect("json");
    assert_eq!(created["slug"], slug.as_str());
    assert_eq!(created["scopes"], "openid email profile");
    assert!(created.get("client_secret").is_none());
    assert!(!created.to_string().contains(SECRET));

    // Stored only encrypted; it decrypts with FERNET_KEY.
    let stored: String = sqlx::query_scalar(
        "SELECT client_secret_encrypted FROM platform.identity_providers WHERE slug = $1",
    )
    .bind(&slug)
    .fetch_one(app.state.platform_pool())
    .await
    .expect("row");
    assert!(!stored.contains(SECRET));
    assert_eq!(
        kultiva::auth::oauth::service::client_secret(&app.state, &slug)
            .await
            .expect("decrypts"),
        SECRET
    );

    // Taken slug: 409, still one row.
    assert_error(
        app.call(Method::POST, path, Some(&admin.bearer()), Some(&body))
            .await,
        409,
        "DUPLICATE_ENTRY",
    )
    .await;
    assert_eq!(provider_count(&app, &slug).await, 1);

    // The admin list shows it without the secret.
    let res = app
        .call(Method::GET, path, Some(&admin.bearer()), None)
        .await;
    let list: Value = res.json().await.expect("json");
    let entry = list
        .as_array()
        .expect("array")
        .iter()
        .find(|p| p["slug"] == slug.as_str())
        .expect("listed");
    assert_eq!(entry["client_id"], "kultiva-client");
    assert!(!list.to_string().contains(SECRET));

    // Delete: 204, then 404.
    let one = format!("{path}/{slug}");
    let res = app
        .call(Method::DELETE, &one, Some(&admin.bearer()), None)
        .await;
    assert_eq!(res.status().as_u16(), 204);
    assert_eq!(provider_count(&app, &slug).await, 0);
    assert_error(
        app.call(Method::DELETE, &one, Some(&admin.bearer()), None)
            .await,
        404,
        "ENTITY_NOT_FOUND",
    )
    .await;
}

#[tokio::test]
async fn bad_provider_bodies_are_422_per_field_and_write_nothing() {
    let app = app().await;
    let admin = app.platform_admin().await;
    let slug = unique_slug("idp");
    let cases: Vec<(&str, Value, Vec<&str>)> = vec![
        (
            "plain http",
            json!({"authorize_url": "http://id.example.org/a"}),
            vec!["body.authorize_url"],
        ),
        (
            "credentials in url",
            json!({"token_url": "https://u:p@id.example.org/t"}),
            vec!["body.token_url"],
        ),
        (
            "bad icon",
            json!({"icon_url": "javascript:alert(1)"}),
            vec!["body.icon_url"],
        ),
        ("bad slug", json!({"slug": "Not-A-Slug"}), vec!["body.slug"]),
        (
            "spaces in client id",
            json!({"client_id": "a b"}),
            vec!["body.client_id"],
        ),
        (
            "bad scopes",
            json!({"scopes": "openid  email"}),
            vec!["body.scopes"],
        ),
        (
            "empty secret",
            json!({"client_secret": ""}),
            vec!["body.client_secret"],
        ),
        (
            "wrong type",
            json!({"display_name": 7}),
            vec!["body.display_name"],
        ),
        ("unknown field", json!({"admin": true}), vec!["body.admin"]),
    ];
    for (what, patch, fields) in cases {
        let mut body = provider_body(&slug);
        for (k, v) in patch.as_object().expect("object") {
            body[k] = v.clone();
        }
        let res = app
            .call(
                Method::POST,
                "/api/v1/admin/identity-providers",
                Some(&admin.bearer()),
                Some(&body),
            )
            .await;
        let err = assert_error(res, 422, "VALIDATION_ERROR").await;
        assert_eq!(detail_fields(&err), fields, "{what}");
    }
    assert_eq!(provider_count(&app, &slug).await, 0);
}

#[tokio::test]
async fn without_fernet_key_no_secret_is_stored() {
    let app = TestApp::full().await;
    let admin = app.platform_admin().await;
    let slug = unique_slug("idp");
    let res = app
        .call(
            Method::POST,
            "/api/v1/admin/identity-providers",
            Some(&admin.bearer()),
            Some(&provider_body(&slug)),
        )
        .await;
    let err = assert_error(res, 409, "STATE_CONFLICT").await;
    assert!(err["message"].as_str().expect("msg").contains("FERNET_KEY"));
    assert_eq!(provider_count(&app, &slug).await, 0);
}

/// Starts a flow: returns the redirect URL and the state cookie value.
async fn start(app: &TestApp, slug: &str) -> (url::Url, String) {
    let res = app.get(&format!("/api/v1/auth/oauth/{slug}")).await;
    assert_eq!(res.status().as_u16(), 302);
    let cookies = set_cookies(&res);
    let (value, line) = cookies
        .get("svc_oauth_state")
        .expect("state cookie")
        .clone();
    let lower = line.to_lowercase();
    assert!(lower.contains("httponly"), "{line}");
    assert!(lower.contains("samesite=lax"), "{line}");
    assert!(lower.contains("path=/api/v1/auth/oauth"), "{line}");
    (location_of(&res), value)
}

/// The `Location` of a redirect, parsed.
fn location_of(res: &reqwest::Response) -> url::Url {
    let location = res
        .headers()
        .get("location")
        .and_then(|v| v.to_str().ok())
        .expect("location");
    url::Url::parse(location).expect("url")
}

async fn callback(app: &TestApp, slug: &str, query: &str, cookie: Option<&str>) -> url::Url {
    let mut req = app
        .client
        .get(app.url(&format!("/api/v1/auth/oauth/{slug}/callback?{query}")));
    if let Some(value) = cookie {
        req = req.header("cookie", format!("svc_oauth_state={value}"));
    }
    let res = req.send().await.expect("sent");
    assert_eq!(res.status().as_u16(), 302);
    location_of(&res)
}

fn error_of(url: &url::Url) -> String {
    assert_eq!(
        url.as_str().split('?').next(),
        Some("https://app.example.test/auth/callback")
    );
    url.query_pairs()
        .find(|(k, _)| k == "error")
        .map(|(_, v)| v.into_owned())
        .expect("error parameter")
}

#[tokio::test]
async fn the_login_redirect_carries_state_and_pkce_and_the_callback_checks_state() {
    let app = app().await;
    let admin = app.platform_admin().await;
    let slug = add_provider(&app, &admin.bearer()).await;

    // Listed for the login page, unauthenticated, with the three public fields only.
    let res = app.get("/api/v1/auth/oauth/providers").await;
    assert_eq!(res.status().as_u16(), 200);
    let list: Value = res.json().await.expect("json");
    let entry = list
        .as_array()
        .expect("array")
        .iter()
        .find(|p| p["slug"] == slug.as_str())
        .expect("listed")
        .clone();
    let mut keys: Vec<&String> = entry.as_object().expect("object").keys().collect();
    keys.sort();
    assert_eq!(keys, ["display_name", "icon_url", "slug"]);

    let (to, state) = start(&app, &slug).await;
    assert_eq!(to.host_str(), Some("id.example.org"));
    assert_eq!(to.path(), "/authorize");
    let q: std::collections::BTreeMap<String, String> = to.query_pairs().into_owned().collect();
    assert_eq!(q["prompt"], "consent");
    assert_eq!(q["response_type"], "code");
    assert_eq!(q["client_id"], "kultiva-client");
    assert_eq!(
        q["redirect_uri"],
        format!("https://api.example.test/api/v1/auth/oauth/{slug}/callback")
    );
    assert_eq!(q["scope"], "openid email profile");
    assert_eq!(q["state"], state);
    assert_eq!(q["code_challenge_method"], "S256");
    assert_eq!(q["code_challenge"].len(), 43);
    assert!(!to.as_str().contains(SECRET));

    // A foreign browser (no cookie, or another cookie) is refused and does not burn the state.
    let query = format!("code=abc&state={state}");
    assert_eq!(
        error_of(&callback(&app, &slug, &query, None).await),
        "invalid_state"
    );
    assert_eq!(
        error_of(&callback(&app, &slug, &query, Some("someone-elses")).await),
        "invalid_state"
    );
    // The right browser: state valid, the exchange itself is not performed (stub).
    assert_eq!(
        error_of(&callback(&app, &slug, &query, Some(&state)).await),
        "exchange_not_supported"
    );
    // Single use.
    assert_eq!(
        error_of(&callback(&app, &slug, &query, Some(&state)).await),
        "invalid_state"
    );
}

#[tokio::test]
async fn provider_errors_foreign_states_and_unknown_providers() {
    let app = app().await;
    let admin = app.platform_admin().await;
    let a = add_provider(&app, &admin.bearer()).await;
    let b = add_provider(&app, &admin.bearer()).await;

    let (_, state) = start(&app, &a).await;
    let denied = format!("error=access_denied&state={state}");
    assert_eq!(
        error_of(&callback(&app, &a, &denied, Some(&state)).await),
        "access_denied"
    );

    let (_, state) = start(&app, &a).await;
    let odd = format!("error=%3Cscript%3E&state={state}");
    assert_eq!(
        error_of(&callback(&app, &a, &odd, Some(&state)).await),
        "provider_error"
    );

    let (_, state) = start(&app, &a).await;
    let no_code = format!("state={state}");
    assert_eq!(
        error_of(&callback(&app, &a, &no_code, Some(&state)).await),
        "invalid_request"
    );

    // A state issued for provider a is worthless at provider b.
    let (_, state) = start(&app, &a).await;
    let query = format!("code=x&state={state}");
    assert_eq!(
        error_of(&callback(&app, &b, &query, Some(&state)).await),
        "invalid_state"
    );

    assert_error(
        app.get("/api/v1/auth/oauth/no-such-idp").await,
        404,
        "ENTITY_NOT_FOUND",
    )
    .await;
    assert_error(
        app.get("/api/v1/auth/oauth/no-such-idp/callback?code=x&state=y")
            .await,
        404,
        "ENTITY_NOT_FOUND",
    )
    .await;
}

#[tokio::test]
async fn oauth_needs_redis_and_full_mode() {
    let app = app().await;
    let admin = app.platform_admin().await;
    let slug = add_provider(&app, &admin.bearer()).await;
    let down = TestApp::full_env(&[
        ("FERNET_KEY", FERNET_KEY),
        ("REDIS_URL", "redis://127.0.0.1:1/"),
    ])
    .await;
    assert_error(
        down.get(&format!("/api/v1/auth/oauth/{slug}")).await,
        503,
        "SERVICE_UNAVAILABLE",
    )
    .await;

    let light = TestApp::spawn().await;
    assert_error(
        light.get("/api/v1/auth/oauth/providers").await,
        404,
        "ENTITY_NOT_FOUND",
    )
    .await;
}
