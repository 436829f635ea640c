//! Sign-in with OpenID providers: the provider registry, the authorization redirect with
//! single-use `state`, `nonce` and PKCE, the callback's `state` check, and (against a real
//! OpenID provider, `oidc-provider` from npm started per test by tests/oidc/provider.mjs) the
//! code exchange, the ID token's checks and the accounts it signs in to, links or opens.

use serde_json::{Value, json};

use crate::support::{TestApp, TestUser, assert_error, detail_fields, set_cookies, unique_slug};

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
        "issuer": "https://id.example.org",
        "authorize_url": "https://id.example.org/authorize?prompt=consent",
        "token_url": "https://id.example.org/token",
        "jwks_url": "https://id.example.org/jwks",
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
        .rest_auth(Some(admin))
        .post("/api/v1/admin/identity-providers", &provider_body(&slug))
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

    assert_error(app.rest().post(path, &body).await, 401, "UNAUTHORIZED").await;
    assert_error(app.rest_as(&user).post(path, &body).await, 403, "FORBIDDEN").await;
    assert_eq!(provider_count(&app, &slug).await, 0);

    let res = app.rest_as(&admin).post(path, &body).await;
    assert_eq!(res.status().as_u16(), 201);
    let created: Value = res.json().await.expect("json");
    assert_eq!(created["slug"], slug.as_str());
    assert_eq!(created["scopes"], "openid email profile");
    assert_eq!(created["enabled"], true);
    assert_eq!(created["issuer"], "https://id.example.org");
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
        app.rest_as(&admin).post(path, &body).await,
        409,
        "DUPLICATE_ENTRY",
    )
    .await;
    assert_eq!(provider_count(&app, &slug).await, 1);

    // The admin list shows it without the secret.
    let res = app.rest_as(&admin).get(path).await;
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
    let res = app.rest_as(&admin).delete(&one).await;
    assert_eq!(res.status().as_u16(), 204);
    assert_eq!(provider_count(&app, &slug).await, 0);
    assert_error(
        app.rest_as(&admin).delete(&one).await,
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
            "scopes without openid",
            json!({"scopes": "email profile"}),
            vec!["body.scopes"],
        ),
        (
            "half the endpoints",
            json!({"jwks_url": null}),
            vec!["body.jwks_url"],
        ),
        ("no issuer", json!({"issuer": null}), vec!["body.issuer"]),
        (
            "plain http issuer",
            json!({"issuer": "http://id.example.org"}),
            vec!["body.issuer"],
        ),
        (
            "unknown client authentication",
            json!({"token_auth_method": "private_key_jwt"}),
            vec!["body.token_auth_method"],
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
            .rest_as(&admin)
            .post("/api/v1/admin/identity-providers", &body)
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
        .rest_as(&admin)
        .post("/api/v1/admin/identity-providers", &provider_body(&slug))
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

/// `error` and `error_description` of a redirect to the front end's callback page (which
/// must carry no access token).
fn error_of(url: &url::Url) -> String {
    assert_eq!(
        url.as_str().split('?').next(),
        Some(FRONTEND_CALLBACK),
        "{url}"
    );
    let q: std::collections::BTreeMap<String, String> = url.query_pairs().into_owned().collect();
    assert!(!q.contains_key("access_token"), "{url}");
    format!(
        "{}/{}",
        q.get("error").expect("error parameter"),
        q.get("error_description")
            .expect("error_description parameter")
    )
}

const FRONTEND_CALLBACK: &str = "https://app.example.test/auth/callback";
const INVALID_STATE: &str = "invalid_request/invalid_state";

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
    assert!(q["nonce"].len() >= 32);
    assert!(!to.as_str().contains(SECRET));

    // A foreign browser (no cookie, or another cookie) is refused and does not burn the state.
    let query = format!("error=access_denied&state={state}");
    assert_eq!(
        error_of(&callback(&app, &slug, &query, None).await),
        INVALID_STATE
    );
    assert_eq!(
        error_of(&callback(&app, &slug, &query, Some("someone-elses")).await),
        INVALID_STATE
    );
    // The right browser: the state is valid (the provider's answer is passed on).
    assert_eq!(
        error_of(&callback(&app, &slug, &query, Some(&state)).await),
        "access_denied/provider_error"
    );
    // Single use.
    assert_eq!(
        error_of(&callback(&app, &slug, &query, Some(&state)).await),
        INVALID_STATE
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
        "access_denied/provider_error"
    );

    let (_, state) = start(&app, &a).await;
    let odd = format!("error=%3Cscript%3E&state={state}");
    assert_eq!(
        error_of(&callback(&app, &a, &odd, Some(&state)).await),
        "server_error/provider_error"
    );

    let (_, state) = start(&app, &a).await;
    let no_code = format!("state={state}");
    assert_eq!(
        error_of(&callback(&app, &a, &no_code, Some(&state)).await),
        "invalid_request/missing_code"
    );

    // A state issued for provider a is worthless at provider b.
    let (_, state) = start(&app, &a).await;
    let query = format!("code=x&state={state}");
    assert_eq!(
        error_of(&callback(&app, &b, &query, Some(&state)).await),
        INVALID_STATE
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

// ---------------------------------------------------------------------------------------------
// Against a real OpenID provider.
// ---------------------------------------------------------------------------------------------

const PUBLIC_URL: &str = "https://api.example.test";

/// `oidc-provider` (npm) on a free loopback port, stopped when dropped.
struct Idp {
    issuer: String,
    _child: tokio::process::Child,
}

/// A client of the service at the provider: id, secret and the slugs whose callbacks it may
/// redirect to.
struct IdpClient<'a> {
    id: &'a str,
    secret: &'a str,
    slugs: &'a [&'a str],
    post_auth: bool,
}

fn node_modules() -> std::path::PathBuf {
    std::env::var_os("KULTIVA_TEST_OIDC_MODULES")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(".local/npm-oidc/node_modules")
        })
}

async fn start_idp(clients: &[IdpClient<'_>]) -> Idp {
    use tokio::io::AsyncBufReadExt;
    let modules = node_modules();
    assert!(
        modules.join("oidc-provider/package.json").exists(),
        "oidc-provider is not installed in {} (infra/test installs it: \
         `bash -c 'source infra/lib.sh; ensure_oidc_provider'`)",
        modules.display()
    );
    let clients: Vec<Value> = clients
        .iter()
        .map(|c| {
            json!({
                "client_id": c.id,
                "client_secret": c.secret,
                "redirect_uris": c.slugs.iter()
                    .map(|s| format!("{PUBLIC_URL}/api/v1/auth/oauth/{s}/callback"))
                    .collect::<Vec<_>>(),
                "token_endpoint_auth_method":
                    if c.post_auth { "client_secret_post" } else { "client_secret_basic" },
            })
        })
        .collect();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oidc/provider.mjs");
    let node = std::env::var("KULTIVA_TEST_NODE").unwrap_or_else(|_| "node".to_owned());
    let mut child = tokio::process::Command::new(node)
        .arg(script)
        .env("OIDC_NODE_MODULES", &modules)
        .env("OIDC_CLIENTS", Value::Array(clients).to_string())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("node starts");
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    let line = tokio::time::timeout(std::time::Duration::from_secs(90), lines.next_line())
        .await
        .expect("provider started in time")
        .expect("provider output")
        .expect("a line");
    let started: Value = serde_json::from_str(&line).expect("json line");
    // The provider prints notices later: keep reading (a closed pipe would end it).
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Idp {
        issuer: started["issuer"].as_str().expect("issuer").to_owned(),
        _child: child,
    }
}

/// Registers a provider at the service: by discovery, or with the explicit endpoints of
/// `oidc-provider` and client_secret_post.
async fn register_idp(
    app: &TestApp,
    admin: &str,
    slug: &str,
    idp: &Idp,
    client: &str,
    explicit: bool,
) {
    let mut body = json!({
        "slug": slug,
        "display_name": "Test IdP",
        "issuer": idp.issuer,
        "client_id": client,
        "client_secret": SECRET,
    });
    if explicit {
        body["authorize_url"] = json!(format!("{}/auth", idp.issuer));
        body["token_url"] = json!(format!("{}/token", idp.issuer));
        body["jwks_url"] = json!(format!("{}/jwks", idp.issuer));
        body["token_auth_method"] = json!("client_secret_post");
    }
    let res = app
        .rest_auth(Some(admin))
        .post("/api/v1/admin/identity-providers", &body)
        .await;
    assert_eq!(
        res.status().as_u16(),
        201,
        "{}",
        res.text().await.unwrap_or_default()
    );
}

/// A provider with one client for a fresh slug, started and registered (`explicit`: with
/// the explicit endpoints and client_secret_post). Returns the slug and the provider.
async fn one_provider(
    app: &TestApp,
    admin: &TestUser,
    client: &str,
    explicit: bool,
) -> (String, Idp) {
    let slug = unique("idp");
    let idp = start_idp(&[IdpClient {
        id: client,
        secret: SECRET,
        slugs: &[&slug],
        post_auth: explicit,
    }])
    .await;
    register_idp(app, &admin.bearer(), &slug, &idp, client, explicit).await;
    (slug, idp)
}

/// Sets whether the service believes the provider's `email_verified` (`trust_email`).
async fn trust_email(app: &TestApp, admin: &TestUser, slug: &str, on: bool) {
    let res = app
        .rest_as(admin)
        .patch(
            &format!("/api/v1/admin/identity-providers/{slug}"),
            &json!({"trust_email": on}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let body: Value = res.json().await.expect("json");
    assert_eq!(body["trust_email"], on);
    // Only the named field changed.
    assert_eq!(body["enabled"], true);
}

/// Who signs in at the provider's login page.
struct Person<'a> {
    sub: &'a str,
    email: &'a str,
    verified: bool,
    name: &'a str,
}

/// A browser: one cookie jar for the service and the provider (their cookie names differ),
/// following redirects by hand; the service's public URL is mapped to its real address.
struct Browser<'a> {
    app: &'a TestApp,
    client: reqwest::Client,
    jar: std::collections::BTreeMap<String, String>,
}

impl<'a> Browser<'a> {
    fn new(app: &'a TestApp) -> Self {
        Self {
            app,
            // A connection per request, as the provider's interaction answers leave them.
            client: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .pool_max_idle_per_host(0)
                .build()
                .expect("client"),
            jar: std::collections::BTreeMap::new(),
        }
    }

    fn absorb(&mut self, res: &reqwest::Response) {
        for (name, (value, line)) in set_cookies(res) {
            let lower = line.to_lowercase();
            if value.is_empty() || lower.contains("max-age=0") || lower.contains("1970") {
                self.jar.remove(&name);
            } else {
                self.jar.insert(name, value);
            }
        }
    }

    fn real(&self, url: &str) -> String {
        match url.strip_prefix(PUBLIC_URL) {
            Some(path) => self.app.url(path),
            None => url.to_owned(),
        }
    }

    fn cookie_header(&self) -> String {
        self.jar
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("; ")
    }

    async fn send(&mut self, req: reqwest::RequestBuilder) -> reqwest::Response {
        let res = req
            .header("cookie", self.cookie_header())
            .send()
            .await
            .expect("sent");
        self.absorb(&res);
        res
    }

    /// Follows redirects from `url`; at the provider's login page signs `who` in. Stops at the
    /// front end (returned), or before the service's callback when `hold` is set (returned
    /// too, not requested).
    async fn walk(&mut self, url: &str, who: &Person<'_>, hold: bool) -> url::Url {
        let mut current = url::Url::parse(&self.real(url)).expect("url");
        for _ in 0..20 {
            if current.as_str().starts_with("https://app.example.test/") {
                return current;
            }
            if hold
                && current.path().ends_with("/callback")
                && current.query().is_some_and(|q| q.contains("code="))
            {
                return current;
            }
            let res = self.send(self.client.get(current.clone())).await;
            let status = res.status().as_u16();
            if (300..400).contains(&status) {
                let location = res
                    .headers()
                    .get("location")
                    .and_then(|v| v.to_str().ok())
                    .expect("location")
                    .to_owned();
                let next = current.join(&location).expect("joined");
                current = url::Url::parse(&self.real(next.as_str())).expect("url");
                continue;
            }
            assert_eq!(status, 200, "{current}");
            assert!(current.path().starts_with("/interaction/"), "{current}");
            let login = format!("{}/login", current.as_str().trim_end_matches('/'));
            let mut form = vec![("sub", who.sub), ("email", who.email), ("name", who.name)];
            if who.verified {
                form.push(("email_verified", "true"));
            }
            let res = self
                .send(
                    self.client
                        .post(login.clone())
                        .header("content-type", "application/x-www-form-urlencoded")
                        .body(
                            url::form_urlencoded::Serializer::new(String::new())
                                .extend_pairs(&form)
                                .finish(),
                        ),
                )
                .await;
            let location = res
                .headers()
                .get("location")
                .and_then(|v| v.to_str().ok())
                .expect("login redirects")
                .to_owned();
            current = url::Url::parse(&login)
                .expect("url")
                .join(&location)
                .expect("joined");
        }
        panic!("too many redirects");
    }

    /// A whole login from the service's start route.
    async fn login(&mut self, slug: &str, who: &Person<'_>) -> url::Url {
        let start = self.app.url(&format!("/api/v1/auth/oauth/{slug}"));
        self.walk(&start, who, false).await
    }
}

/// The access token of a successful callback redirect (and `expires_in` 900).
fn token_of(url: &url::Url) -> String {
    assert_eq!(
        url.as_str().split('?').next(),
        Some(FRONTEND_CALLBACK),
        "{url}"
    );
    let q: std::collections::BTreeMap<String, String> = url.query_pairs().into_owned().collect();
    assert!(!q.contains_key("error"), "{url}");
    assert_eq!(
        q.get("expires_in").map(String::as_str),
        Some("900"),
        "{url}"
    );
    q.get("access_token").expect("access_token").clone()
}

async fn me(app: &TestApp, token: &str) -> Value {
    let res = app.rest_key(token).get("/api/v1/users/me").await;
    assert_eq!(res.status().as_u16(), 200);
    res.json().await.expect("json")
}

async fn count_where(app: &TestApp, sql: &str, bind: &str) -> i64 {
    sqlx::query_scalar(sqlx::AssertSqlSafe(sql.to_owned()))
        .bind(bind)
        .fetch_one(app.state.platform_pool())
        .await
        .expect("count")
}

async fn users_with_email(app: &TestApp, email: &str) -> i64 {
    count_where(
        app,
        "SELECT count(*) FROM platform.users WHERE email = $1",
        email,
    )
    .await
}

async fn identities_of_sub(app: &TestApp, sub: &str) -> i64 {
    count_where(
        app,
        "SELECT count(*) FROM platform.federated_identities WHERE subject = $1",
        sub,
    )
    .await
}

/// A login from a fresh browser that the service refuses: its `error/reason`; no session
/// cookie was set.
async fn refused_login(app: &TestApp, slug: &str, who: &Person<'_>) -> String {
    let mut browser = Browser::new(app);
    let error = error_of(&browser.login(slug, who).await);
    assert!(!browser.jar.contains_key("svc_refresh"), "{error}");
    error
}

/// Marks the local account's address confirmed (as the verification link would).
async fn confirm_email(app: &TestApp, email: &str) {
    sqlx::query("UPDATE platform.users SET email_verified = true WHERE email = $1")
        .bind(email)
        .execute(app.state.platform_pool())
        .await
        .expect("confirm");
}

/// Audit rows of the account and action, waiting for the audit worker (up to 10 s) until
/// `want` are there.
async fn audit_rows(app: &TestApp, user: &str, action: &str, want: i64) -> i64 {
    let user = uuid::Uuid::parse_str(user).expect("uuid");
    let mut got = 0;
    for _ in 0..100 {
        got = sqlx::query_scalar(
            "SELECT count(*) FROM platform.mcp_audit_log WHERE account_id = $1 AND tool_name = $2",
        )
        .bind(user)
        .bind(action)
        .fetch_one(app.state.platform_pool())
        .await
        .expect("count");
        if got >= want {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    got
}

async fn oidc_app() -> TestApp {
    TestApp::full_env(&[
        ("FERNET_KEY", FERNET_KEY),
        ("PUBLIC_URL", PUBLIC_URL),
        ("FRONTEND_URL", "https://app.example.test"),
    ])
    .await
}

fn unique(label: &str) -> String {
    unique_slug(label)
}

#[tokio::test]
async fn a_first_login_opens_an_account_and_the_next_signs_in_to_it() {
    let app = oidc_app().await;
    let admin = app.platform_admin().await;
    let (slug, _idp) = one_provider(&app, &admin, "kultiva", false).await;
    // Trusted with addresses: the account it opens counts as confirmed.
    trust_email(&app, &admin, &slug, true).await;
    let sub = unique("alice");
    let email = format!("{sub}@example.test");
    let alice = Person {
        sub: &sub,
        email: &email,
        verified: true,
        name: "Alice Gardener",
    };

    let mut browser = Browser::new(&app);
    let landed = browser.login(&slug, &alice).await;
    let token = token_of(&landed);
    // Session cookies as a password login sets them; the state cookie is gone.
    assert!(browser.jar.contains_key("svc_refresh"));
    assert!(browser.jar.contains_key("svc_csrf"));
    assert!(!browser.jar.contains_key("svc_oauth_state"));
    let user = me(&app, &token).await;
    assert_eq!(user["email"], email.as_str());
    assert_eq!(user["display_name"], "Alice Gardener");
    assert_eq!(user["email_verified"], true);
    let key = user["key"].as_str().expect("key").to_owned();
    // The personal garden, as registration makes it; no password; one identity.
    let gardens = count_where(
        &app,
        "SELECT count(*) FROM platform.memberships m JOIN platform.tenants t ON t.id = m.tenant_id \
         WHERE m.user_id = $1::uuid AND t.kind = 'personal' AND t.status = 'active' AND m.role = 'admin'",
        &key,
    )
    .await;
    assert_eq!(gardens, 1);
    assert_eq!(
        count_where(
            &app,
            "SELECT count(*) FROM platform.users WHERE id = $1::uuid AND password_hash IS NULL",
            &key
        )
        .await,
        1
    );
    assert_eq!(identities_of_sub(&app, &sub).await, 1);
    // The refresh cookie works with the CSRF header.
    let res = app
        .client
        .post(app.url("/api/v1/auth/refresh"))
        .header(
            "cookie",
            format!(
                "svc_refresh={}; svc_csrf={}",
                browser.jar["svc_refresh"], browser.jar["svc_csrf"]
            ),
        )
        .header("x-csrf-token", &browser.jar["svc_csrf"])
        .send()
        .await
        .expect("sent");
    assert_eq!(res.status().as_u16(), 200);

    // A second login, from another browser: the same account, nothing new.
    let mut other = Browser::new(&app);
    let again = token_of(&other.login(&slug, &alice).await);
    assert_eq!(me(&app, &again).await["key"], key.as_str());
    assert_eq!(users_with_email(&app, &email).await, 1);
    assert_eq!(identities_of_sub(&app, &sub).await, 1);
    assert_eq!(gardens, 1);
    // The same browser: the provider remembers the person, no login page.
    let third = token_of(&browser.login(&slug, &alice).await);
    assert_eq!(me(&app, &third).await["key"], key.as_str());

    // Listed; the only way to sign in cannot be removed.
    let bearer = format!("Bearer {token}");
    let res = app
        .rest_auth(Some(&bearer))
        .get("/api/v1/users/me/identities")
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let list: Value = res.json().await.expect("json");
    let list = list.as_array().expect("array").clone();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["provider"], slug.as_str());
    assert_eq!(list[0]["email"], email.as_str());
    assert!(
        list[0].get("subject").is_none() && list[0].get("sub").is_none(),
        "the subject is not shown"
    );
    let id = list[0]["id"].as_str().expect("id");
    assert_error(
        app.rest_auth(Some(&bearer))
            .delete(&format!("/api/v1/users/me/identities/{id}"))
            .await,
        409,
        "STATE_CONFLICT",
    )
    .await;
    assert_eq!(identities_of_sub(&app, &sub).await, 1);
    // The provider cannot be deleted while it is in use.
    assert_error(
        app.rest_as(&admin)
            .delete(&format!("/api/v1/admin/identity-providers/{slug}"))
            .await,
        409,
        "STATE_CONFLICT",
    )
    .await;
    assert_eq!(provider_count(&app, &slug).await, 1);

    // Audited: one link (the first login) and three logins.
    assert_eq!(
        audit_rows(&app, &key, "http.oauth_identity_link", 1).await,
        1
    );
    assert_eq!(audit_rows(&app, &key, "http.oauth_login", 3).await, 3);
}

#[tokio::test]
async fn a_logged_in_account_links_and_unlinks_an_identity() {
    let app = oidc_app().await;
    let admin = app.platform_admin().await;
    // Explicit endpoints and client_secret_post this time.
    let (slug, idp) = one_provider(&app, &admin, "kultiva-explicit", true).await;
    let user = app.user("linker").await;
    let sub = unique("bob");
    // The provider's address differs and is unconfirmed: linking does not go by address.
    let bob = Person {
        sub: &sub,
        email: "bob-elsewhere@example.test",
        verified: false,
        name: "Bob",
    };
    let link = format!("/api/v1/auth/oauth/{slug}/link");

    // Not without a login, not with an API key.
    assert_error(app.rest().post_empty(&link).await, 401, "UNAUTHORIZED").await;
    let key = app.api_key(&user, None).await;
    assert_error(app.rest_key(&key).post_empty(&link).await, 403, "FORBIDDEN").await;

    let mut browser = Browser::new(&app);
    let res = browser
        .send(
            app.client
                .post(app.url(&link))
                .header("authorization", user.bearer()),
        )
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let started: Value = res.json().await.expect("json");
    assert!(browser.jar.contains_key("svc_oauth_state"));
    let to = started["authorization_url"]
        .as_str()
        .expect("url")
        .to_owned();
    assert!(to.starts_with(&format!("{}/auth?", idp.issuer)), "{to}");
    let token = token_of(&browser.walk(&to, &bob, false).await);
    assert_eq!(me(&app, &token).await["key"], user.key.as_str());
    assert_eq!(
        users_with_email(&app, "bob-elsewhere@example.test").await,
        0
    );
    assert_eq!(identities_of_sub(&app, &sub).await, 1);

    // Signing in with it now lands in the same account.
    let mut other = Browser::new(&app);
    let again = token_of(&other.login(&slug, &bob).await);
    assert_eq!(me(&app, &again).await["key"], user.key.as_str());

    // Another account cannot link the same identity.
    let second = app.user("second").await;
    let mut third = Browser::new(&app);
    let res = third
        .send(
            app.client
                .post(app.url(&link))
                .header("authorization", second.bearer()),
        )
        .await;
    let started: Value = res.json().await.expect("json");
    let to = started["authorization_url"]
        .as_str()
        .expect("url")
        .to_owned();
    assert_eq!(
        error_of(&third.walk(&to, &bob, false).await),
        "access_denied/identity_linked_to_another_account"
    );
    assert!(!third.jar.contains_key("svc_refresh"));
    assert_eq!(identities_of_sub(&app, &sub).await, 1);

    // The account has a password: the identity can go.
    let res = app.rest_as(&user).get("/api/v1/users/me/identities").await;
    let list: Value = res.json().await.expect("json");
    let id = list[0]["id"].as_str().expect("id").to_owned();
    // Not someone else's.
    assert_error(
        app.rest_as(&second)
            .delete(&format!("/api/v1/users/me/identities/{id}"))
            .await,
        404,
        "ENTITY_NOT_FOUND",
    )
    .await;
    assert_error(
        app.rest_as(&user)
            .delete("/api/v1/users/me/identities/not-a-uuid")
            .await,
        422,
        "VALIDATION_ERROR",
    )
    .await;
    let res = app
        .rest_as(&user)
        .delete(&format!("/api/v1/users/me/identities/{id}"))
        .await;
    assert_eq!(res.status().as_u16(), 204);
    assert_eq!(identities_of_sub(&app, &sub).await, 0);
    assert_eq!(
        audit_rows(&app, &user.key, "http.oauth_identity_link", 1).await,
        1
    );
    assert_eq!(
        audit_rows(&app, &user.key, "http.oauth_identity_unlink", 1).await,
        1
    );
}

#[tokio::test]
async fn an_unconfirmed_address_never_takes_over_a_local_account() {
    let app = oidc_app().await;
    let admin = app.platform_admin().await;
    let (slug, _idp) = one_provider(&app, &admin, "kultiva", false).await;
    // A provider trusted with addresses: what is left to check is the addresses themselves.
    trust_email(&app, &admin, &slug, true).await;
    // A local account whose address is not confirmed yet.
    let local = app.user("local").await;

    // The provider vouches for the address, the local account has not confirmed it.
    let sub = unique("mallory");
    let claim = Person {
        sub: &sub,
        email: &local.email,
        verified: true,
        name: "Mallory",
    };
    let mut browser = Browser::new(&app);
    assert_eq!(
        error_of(&browser.login(&slug, &claim).await),
        "access_denied/account_exists_email_unverified"
    );
    assert!(!browser.jar.contains_key("svc_refresh"));
    assert_eq!(identities_of_sub(&app, &sub).await, 0);
    assert_eq!(users_with_email(&app, &local.email).await, 1);
    // The attempt is audited on the account it concerned.
    assert_eq!(
        audit_rows(&app, &local.key, "http.oauth_identity_link", 1).await,
        1
    );

    // The local address confirmed, but the provider does not vouch for it: still refused.
    confirm_email(&app, &local.email).await;
    let sub2 = unique("eve");
    let unverified = Person {
        sub: &sub2,
        email: &local.email,
        verified: false,
        name: "Eve",
    };
    let mut browser = Browser::new(&app);
    assert_eq!(
        error_of(&browser.login(&slug, &unverified).await),
        "access_denied/account_exists_email_unverified"
    );
    assert_eq!(identities_of_sub(&app, &sub2).await, 0);

    // Both confirmed (and the provider trusted): the identity joins the local account.
    let sub3 = unique("owner");
    let owner = Person {
        sub: &sub3,
        email: &local.email,
        verified: true,
        name: "Owner",
    };
    let mut browser = Browser::new(&app);
    let token = token_of(&browser.login(&slug, &owner).await);
    assert_eq!(me(&app, &token).await["key"], local.key.as_str());
    assert_eq!(identities_of_sub(&app, &sub3).await, 1);
    assert_eq!(users_with_email(&app, &local.email).await, 1);
}

#[tokio::test]
async fn forged_states_expired_codes_and_foreign_audiences_create_nothing() {
    let app = oidc_app().await;
    let admin = app.platform_admin().await;
    let (plain, short, wrong) = (unique("idp"), unique("idp"), unique("idp"));
    let idp = start_idp(&[
        IdpClient {
            id: "kultiva",
            secret: SECRET,
            slugs: &[&plain],
            post_auth: false,
        },
        IdpClient {
            id: "kultiva-short",
            secret: SECRET,
            slugs: &[&short],
            post_auth: false,
        },
        IdpClient {
            id: "kultiva-wrongaud",
            secret: SECRET,
            slugs: &[&wrong],
            post_auth: false,
        },
    ])
    .await;
    register_idp(&app, &admin.bearer(), &plain, &idp, "kultiva", false).await;
    register_idp(&app, &admin.bearer(), &short, &idp, "kultiva-short", false).await;
    register_idp(
        &app,
        &admin.bearer(),
        &wrong,
        &idp,
        "kultiva-wrongaud",
        false,
    )
    .await;
    let sub = unique("carol");
    let email = format!("{sub}@example.test");
    let carol = Person {
        sub: &sub,
        email: &email,
        verified: true,
        name: "Carol",
    };

    // A forged state: the code is never exchanged.
    let mut browser = Browser::new(&app);
    let start = app.url(&format!("/api/v1/auth/oauth/{plain}"));
    let held = browser.walk(&start, &carol, true).await;
    let mut forged = held.clone();
    let pairs: Vec<(String, String)> = held
        .query_pairs()
        .map(|(k, v)| {
            if k == "state" {
                (k.into_owned(), format!("{v}x"))
            } else {
                (k.into_owned(), v.into_owned())
            }
        })
        .collect();
    forged.query_pairs_mut().clear().extend_pairs(pairs);
    assert_eq!(
        error_of(&browser.walk(forged.as_str(), &carol, false).await),
        INVALID_STATE
    );
    // A state cookie of another browser: the same.
    let mut thief = Browser::new(&app);
    assert_eq!(
        error_of(&thief.walk(held.as_str(), &carol, false).await),
        INVALID_STATE
    );

    // An expired code (2 s at this client): the token endpoint refuses it.
    let mut browser = Browser::new(&app);
    let start = app.url(&format!("/api/v1/auth/oauth/{short}"));
    let held = browser.walk(&start, &carol, true).await;
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    assert_eq!(
        error_of(&browser.walk(held.as_str(), &carol, false).await),
        "invalid_grant/code_refused"
    );

    // An ID token for another audience.
    let mut browser = Browser::new(&app);
    assert_eq!(
        error_of(&browser.login(&wrong, &carol).await),
        "invalid_grant/id_token_invalid"
    );
    assert!(!browser.jar.contains_key("svc_refresh"));

    assert_eq!(users_with_email(&app, &email).await, 0);
    assert_eq!(identities_of_sub(&app, &sub).await, 0);

    // The same person through the sound client signs up fine (the checks above were not
    // refusing everything).
    let mut browser = Browser::new(&app);
    token_of(&browser.login(&plain, &carol).await);
    assert_eq!(users_with_email(&app, &email).await, 1);
}

#[tokio::test]
async fn a_disabled_provider_stops_logins_at_once_and_rotated_keys_are_fetched() {
    let app = oidc_app().await;
    let admin = app.platform_admin().await;
    let (slug, idp) = one_provider(&app, &admin, "kultiva", false).await;
    let sub = unique("dave");
    let email = format!("{sub}@example.test");
    let dave = Person {
        sub: &sub,
        email: &email,
        verified: true,
        name: "Dave",
    };
    let one = format!("/api/v1/admin/identity-providers/{slug}");

    // A login under way when the provider is disabled does not finish.
    let mut browser = Browser::new(&app);
    let start = app.url(&format!("/api/v1/auth/oauth/{slug}"));
    let held = browser.walk(&start, &dave, true).await;
    let res = app
        .rest_as(&admin)
        .patch(&one, &json!({"enabled": false}))
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let body: Value = res.json().await.expect("json");
    assert_eq!(body["enabled"], false);
    assert_eq!(
        error_of(&browser.walk(held.as_str(), &dave, false).await),
        "access_denied/provider_disabled"
    );
    assert_eq!(users_with_email(&app, &email).await, 0);
    // Not offered, not startable.
    let list: Value = app
        .get("/api/v1/auth/oauth/providers")
        .await
        .json()
        .await
        .expect("json");
    assert!(!list.to_string().contains(&slug));
    assert_error(
        app.get(&format!("/api/v1/auth/oauth/{slug}")).await,
        404,
        "ENTITY_NOT_FOUND",
    )
    .await;
    // Only admins switch it; the body is checked.
    let plain = app.user("plain").await;
    assert_error(
        app.rest_as(&plain)
            .patch(&one, &json!({"enabled": true}))
            .await,
        403,
        "FORBIDDEN",
    )
    .await;
    let err = assert_error(
        app.rest_as(&admin)
            .patch(&one, &json!({"enabled": "yes"}))
            .await,
        422,
        "VALIDATION_ERROR",
    )
    .await;
    assert_eq!(detail_fields(&err), ["body.enabled"]);
    assert_error(
        app.rest_as(&admin)
            .patch(
                "/api/v1/admin/identity-providers/no-such-idp",
                &json!({"enabled": true}),
            )
            .await,
        404,
        "ENTITY_NOT_FOUND",
    )
    .await;

    // Enabled again: logins work; after a key rotation at the provider too.
    let res = app
        .rest_as(&admin)
        .patch(&one, &json!({"enabled": true}))
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let mut browser = Browser::new(&app);
    let key = me(&app, &token_of(&browser.login(&slug, &dave).await)).await["key"].clone();
    let rotated = app
        .client
        .get(format!("{}/test/rotate", idp.issuer))
        .send()
        .await
        .expect("rotate");
    assert_eq!(rotated.status().as_u16(), 200);
    let mut browser = Browser::new(&app);
    let again = token_of(&browser.login(&slug, &dave).await);
    assert_eq!(me(&app, &again).await["key"], key);
}

#[tokio::test]
async fn an_untrusted_provider_never_links_to_a_confirmed_local_account() {
    let app = oidc_app().await;
    let admin = app.platform_admin().await;
    let (slug, _idp) = one_provider(&app, &admin, "kultiva", false).await;
    let one = format!("/api/v1/admin/identity-providers/{slug}");
    // Off by default.
    let trusted: bool =
        sqlx::query_scalar("SELECT trust_email FROM platform.identity_providers WHERE slug = $1")
            .bind(&slug)
            .fetch_one(app.state.platform_pool())
            .await
            .expect("trust_email");
    assert!(!trusted);
    let local = app.user("confirmed").await;
    confirm_email(&app, &local.email).await;

    // The provider says the address is verified (anyone may set their own there: nOAuth).
    let sub = unique("noauth");
    let claim = Person {
        sub: &sub,
        email: &local.email,
        verified: true,
        name: "Mallory",
    };
    assert_eq!(
        refused_login(&app, &slug, &claim).await,
        "access_denied/account_exists_provider_untrusted"
    );
    assert_eq!(identities_of_sub(&app, &sub).await, 0);
    assert_eq!(users_with_email(&app, &local.email).await, 1);
    assert_eq!(
        audit_rows(&app, &local.key, "http.oauth_identity_link", 1).await,
        1
    );

    // The flag is checked like the rest of the body and changes nothing when refused.
    for (body, field) in [
        (json!({}), "body.enabled"),
        (json!({"trust_email": "yes"}), "body.trust_email"),
        (json!({"trust_email": null}), "body.trust_email"),
    ] {
        let err = assert_error(
            app.rest_as(&admin).patch(&one, &body).await,
            422,
            "VALIDATION_ERROR",
        )
        .await;
        assert!(
            detail_fields(&err).iter().any(|f| f == field),
            "{body}: {err}"
        );
    }
    let plain = app.user("plain").await;
    assert_error(
        app.rest_as(&plain)
            .patch(&one, &json!({"trust_email": true}))
            .await,
        403,
        "FORBIDDEN",
    )
    .await;
    assert_eq!(
        refused_login(&app, &slug, &claim).await,
        "access_denied/account_exists_provider_untrusted"
    );

    // Trusted by the platform admin: the same sign-in joins the confirmed account.
    trust_email(&app, &admin, &slug, true).await;
    let mut browser = Browser::new(&app);
    let token = token_of(&browser.login(&slug, &claim).await);
    assert_eq!(me(&app, &token).await["key"], local.key.as_str());
    assert_eq!(identities_of_sub(&app, &sub).await, 1);
    assert_eq!(users_with_email(&app, &local.email).await, 1);
}

/// Issue 43, item 1: an attacker's provider account claims the owner's address, unverified.
#[tokio::test]
async fn an_unverified_provider_address_cannot_pre_hijack_an_account() {
    let app = oidc_app().await;
    let admin = app.platform_admin().await;
    // Even a provider trusted with addresses: this address it does not say it verified.
    let (slug, _idp) = one_provider(&app, &admin, "kultiva", false).await;
    trust_email(&app, &admin, &slug, true).await;
    let strict = TestApp::full_env(&[
        ("FERNET_KEY", FERNET_KEY),
        ("PUBLIC_URL", PUBLIC_URL),
        ("FRONTEND_URL", "https://app.example.test"),
        ("REQUIRE_EMAIL_VERIFICATION", "true"),
    ])
    .await;

    // Without REQUIRE_EMAIL_VERIFICATION: the account opens, but unconfirmed (the provider
    // did not vouch), so it joins nothing by address later.
    let sub = unique("squatter");
    let email = format!("{sub}@example.test");
    let squatter = Person {
        sub: &sub,
        email: &email,
        verified: false,
        name: "Squatter",
    };
    let mut browser = Browser::new(&app);
    let token = token_of(&browser.login(&slug, &squatter).await);
    assert_eq!(me(&app, &token).await["email_verified"], false);
    // Where confirmation is required, that identity starts no session.
    assert_eq!(
        refused_login(&strict, &slug, &squatter).await,
        "access_denied/email_not_verified"
    );

    // With REQUIRE_EMAIL_VERIFICATION: no account and no session on the owner's address.
    let sub = unique("attacker");
    let owner_email = format!("{}@example.test", unique("owner"));
    let attacker = Person {
        sub: &sub,
        email: &owner_email,
        verified: false,
        name: "Attacker",
    };
    assert_eq!(
        refused_login(&strict, &slug, &attacker).await,
        "access_denied/email_not_verified"
    );
    assert_eq!(users_with_email(&strict, &owner_email).await, 0);
    assert_eq!(identities_of_sub(&strict, &sub).await, 0);

    // So the owner's registration does not collide, and the attacker's next sign-in does not
    // get into the owner's (unconfirmed) account.
    let res = strict
        .register(&owner_email, crate::support::PASSWORD)
        .await;
    assert_eq!(res.status().as_u16(), 201);
    assert_eq!(
        refused_login(&strict, &slug, &attacker).await,
        "access_denied/account_exists_email_unverified"
    );
    assert_eq!(identities_of_sub(&strict, &sub).await, 0);
    assert_eq!(users_with_email(&strict, &owner_email).await, 1);
}
