//! Test harness: starts the real service (same builder as `main`) on a loopback port against
//! the real PostgreSQL and Redis named by `TEST_DATABASE_URL`/`TEST_REDIS_URL` (set by
//! `infra/test`), falling back to `DATABASE_URL`/`REDIS_URL` and then the default local ports.
//! Each test makes its own tenants with unique slugs, so tests run in parallel.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::net::SocketAddr;

use kultiva::config::Config;
use kultiva::serve;
use kultiva::state::AppState;
use kultiva::store::pg::Placements;
use kultiva::tenancy::migrate::migrate_platform;
use kultiva::tenancy::provision::{self, ProvisionOptions};
use kultiva::tenancy::{TenantRecord, TenantSlug};
use salvo::server::ServerHandle;
use serde_json::Value;

pub const TEST_SECRET: &str = "test-secret-0123456789abcdef0123456789abcdef";

pub fn database_url() -> String {
    std::env::var("TEST_DATABASE_URL")
        .or_else(|_| std::env::var("DATABASE_URL"))
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/kultiva_test".to_owned())
}

pub fn redis_url() -> String {
    std::env::var("TEST_REDIS_URL")
        .or_else(|_| std::env::var("REDIS_URL"))
        .unwrap_or_else(|_| "redis://127.0.0.1:6379/".to_owned())
}

/// `host:port` of every Redis server behind [`redis_url`]: the one server, or each node of a
/// `redis+cluster://` URL.
pub fn redis_nodes() -> Vec<String> {
    let url = redis_url();
    let rest = url.split_once("://").map_or(url.as_str(), |(_, r)| r);
    let rest = rest.rsplit_once('@').map_or(rest, |(_, r)| r);
    let hosts = rest.split(['/', '?']).next().unwrap_or(rest);
    hosts
        .split(',')
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .collect()
}

/// The variables a test service starts with; tests add or replace entries.
pub fn base_env() -> BTreeMap<String, String> {
    [
        ("DATABASE_URL", database_url()),
        ("REDIS_URL", redis_url()),
        ("JWT_SECRET_KEY", TEST_SECRET.to_owned()),
        ("BIND_ADDRESS", "127.0.0.1:0".to_owned()),
        ("LOG_FORMAT", "json".to_owned()),
        // Garden routes need a caller; until identity exists only light mode has one.
        ("SERVICE_MODE", "light".to_owned()),
        // Rate limits: every service gets its own Redis keys, and budgets no test exhausts
        // by accident (tests register and log in from 127.0.0.1 in parallel). Tests of the
        // limits set small ones, and a shared prefix for replicas, explicitly.
        ("REDIS_KEY_PREFIX", unique_slug("kt")),
        ("RATE_LIMIT_AUTH_PER_MINUTE", "100000".to_owned()),
        ("RATE_LIMIT_GENERAL_PER_MINUTE", "1000000".to_owned()),
        ("RATE_LIMIT_REGISTRATION_PER_MINUTE", "1000000".to_owned()),
        // The scheduled digest would mail every user of the shared database from any test's
        // service; the digest tests turn it on for a database of their own.
        ("DIGEST_SCHEDULE", "false".to_owned()),
        // The alert scan runs when a test calls it (no timers in tests).
        ("ALERT_SCAN_SECONDS", "0".to_owned()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

/// The test database URL with another database name.
fn sibling_url(url: &str, db: &str) -> String {
    let (base, query) = url
        .split_once('?')
        .map_or((url, None), |(b, q)| (b, Some(q)));
    let prefix = base.rsplit_once('/').map_or(base, |(p, _)| p);
    match query {
        Some(q) => format!("{prefix}/{db}?{q}"),
        None => format!("{prefix}/{db}"),
    }
}

/// A second database beside the test database (created on first use), for tests that need a
/// server of their own: another placement, or a registry no parallel test touches.
pub async fn sibling_database(suffix: &str) -> String {
    let primary = database_url();
    let base = primary.split('?').next().unwrap_or(&primary);
    let name = format!(
        "{}_{suffix}",
        base.rsplit('/').next().unwrap_or("kultiva_test")
    );
    let admin = sqlx::PgPool::connect(&primary).await.expect("connect");
    let create = format!("CREATE DATABASE \"{name}\"");
    if let Err(err) = sqlx::query(sqlx::AssertSqlSafe(create))
        .execute(&admin)
        .await
    {
        let code = err
            .as_database_error()
            .and_then(|e| e.code())
            .map(|c| c.to_string());
        // 42P04: exists from an earlier run; 23505: a parallel test created it first.
        assert!(
            matches!(code.as_deref(), Some("42P04" | "23505")),
            "create database {name}: {err}"
        );
    }
    admin.close().await;
    sibling_url(&primary, &name)
}

/// A database on a second PostgreSQL server, for the two-server tests: `TEST_DATABASE_URL_2`,
/// which `infra/test` always sets (a private cluster in `.local/pg2`), so CI never skips them.
/// Run by hand without it, the tests fall back to a second database on the test server
/// (`…_server2`): the same code paths, but not two servers; a line on stderr says so.
pub async fn second_server_url() -> String {
    match std::env::var("TEST_DATABASE_URL_2") {
        Ok(url) if !url.is_empty() => url,
        _ => {
            eprintln!(
                "TEST_DATABASE_URL_2 is unset: the two-server tests use a second database on \
                 the test server instead (infra/test starts a second server)"
            );
            sibling_database("server2").await
        }
    }
}

pub fn unique_slug(prefix: &str) -> String {
    let id = uuid::Uuid::new_v4().simple().to_string();
    format!("{prefix}-{}", &id[..12])
}

pub struct TestApp {
    pub addr: SocketAddr,
    /// The private metrics listener, when `METRICS_BIND_ADDRESS` is set (port 0 works).
    pub metrics_addr: Option<SocketAddr>,
    pub state: AppState,
    pub client: reqwest::Client,
    handle: ServerHandle,
}

impl Drop for TestApp {
    fn drop(&mut self) {
        self.handle.stop_forceful();
    }
}

#[derive(Default)]
pub struct Options {
    pub env: Vec<(&'static str, String)>,
    pub max_connections: Option<u32>,
    /// For services pointed at a database that does not answer.
    pub skip_platform_migrations: bool,
}

impl TestApp {
    pub async fn spawn() -> Self {
        Self::spawn_with(Options::default()).await
    }

    /// A service with some variables replaced.
    pub async fn spawn_env(env: &[(&'static str, &str)]) -> Self {
        let env = env.iter().map(|(k, v)| (*k, (*v).to_owned())).collect();
        Self::spawn_with(Options {
            env,
            ..Options::default()
        })
        .await
    }

    pub async fn spawn_with(options: Options) -> Self {
        let mut env = base_env();
        for (k, v) in options.env {
            env.insert(k.to_owned(), v);
        }
        // A pool limit applies to the read pool as well (single-statement garden reads), so
        // "one connection" means one for everything.
        if let Some(n) = options.max_connections {
            env.entry("DB_READ_CONNECTIONS".to_owned())
                .or_insert_with(|| n.to_string());
        }
        let config = Config::from_map(&env).expect("test configuration is valid");
        kultiva::telemetry::init(config.log_format);
        let placements = match options.max_connections {
            Some(n) => Placements::connect_lazy_with(&config, n),
            None => Placements::connect_lazy(&config),
        }
        .expect("pools");
        let state = AppState::with_placements(config, placements).expect("state");
        if !options.skip_platform_migrations {
            migrate_platform(state.platform_pool())
                .await
                .expect("platform migrations");
        }
        let mut bound = serve::bind(state.config().bind_address)
            .await
            .expect("bind");
        let metrics_addr = match state.config().metrics_bind_address {
            Some(at) => Some(bound.bind_metrics(at).await.expect("bind metrics")),
            None => None,
        };
        let addr = bound.local_addr();
        let handle = bound.handle();
        tokio::spawn(bound.serve(state.clone()));
        kultiva::tls::install_crypto_provider();
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("client");
        Self {
            addr,
            metrics_addr,
            state,
            client,
            handle,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    pub async fn get(&self, path: &str) -> reqwest::Response {
        self.client
            .get(self.url(path))
            .send()
            .await
            .expect("request sent")
    }

    /// GET with extra request headers.
    pub async fn get_with(&self, path: &str, headers: &[(&str, &str)]) -> reqwest::Response {
        let mut req = self.client.get(self.url(path));
        for (name, value) in headers {
            req = req.header(*name, *value);
        }
        req.send().await.expect("request sent")
    }

    pub async fn post_json(&self, path: &str, body: &Value) -> reqwest::Response {
        self.client
            .post(self.url(path))
            .json(body)
            .send()
            .await
            .expect("request sent")
    }

    pub async fn post_raw(
        &self,
        path: &str,
        content_type: &str,
        body: impl Into<reqwest::Body>,
    ) -> reqwest::Response {
        self.client
            .post(self.url(path))
            .header("content-type", content_type)
            .body(body)
            .send()
            .await
            .expect("request sent")
    }

    /// A fresh, active tenant at the latest schema version.
    pub async fn tenant(&self, prefix: &str) -> TenantRecord {
        self.tenant_with(prefix, ProvisionOptions::default()).await
    }

    pub async fn tenant_with(&self, prefix: &str, options: ProvisionOptions) -> TenantRecord {
        let slug = TenantSlug::parse(&unique_slug(prefix)).expect("test slug");
        provision::create_tenant(&self.state, &slug, "Test garden", options)
            .await
            .expect("tenant provisioned")
    }

    /// Creates a site through the API and returns its JSON.
    pub async fn create_site(&self, tenant: &TenantRecord, name: &str) -> Value {
        let res = self
            .post_json(
                &format!("/api/v1/t/{}/sites/", tenant.slug),
                &serde_json::json!({"name": name, "kind": "garden"}),
            )
            .await;
        assert_eq!(res.status().as_u16(), 201, "site created");
        res.json().await.expect("site json")
    }

    pub async fn platform_count(&self, sql: &'static str) -> i64 {
        sqlx::query_scalar(sql)
            .fetch_one(self.state.platform_pool())
            .await
            .expect("count query")
    }

    pub async fn tenant_count(&self) -> i64 {
        self.platform_count("SELECT count(*) FROM platform.tenants")
            .await
    }

    pub async fn schema_count(&self) -> i64 {
        self.platform_count("SELECT count(*) FROM pg_namespace WHERE nspname LIKE 't\\_%'")
            .await
    }

    pub async fn site_count(&self, tenant: &TenantRecord) -> i64 {
        let sql = format!("SELECT count(*) FROM {}.sites", tenant.schema_name.quoted());
        sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
            .fetch_one(self.state.platform_pool())
            .await
            .expect("count sites")
    }
}

/// A response header as text.
pub fn header(res: &reqwest::Response, name: &str) -> Option<String> {
    res.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

/// Every value of a (repeatable) header, lower-cased.
pub fn header_values(res: &reqwest::Response, name: &str) -> Vec<String> {
    res.headers()
        .get_all(name)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .map(str::to_lowercase)
        .collect()
}

/// Asserts the specification's rate-limit answer (429, `Retry-After` of at least a second,
/// body `{error}` and nothing else) and returns the text of `error`.
pub async fn assert_rate_limited(res: reqwest::Response) -> (u64, String) {
    assert_eq!(res.status().as_u16(), 429, "status");
    let seconds: u64 = header(&res, "retry-after")
        .and_then(|v| v.parse().ok())
        .expect("Retry-After in whole seconds");
    assert!(seconds >= 1, "Retry-After {seconds}");
    let body: Value = res.json().await.expect("429 body is JSON");
    let fields: Vec<&String> = body.as_object().expect("object").keys().collect();
    assert_eq!(fields, ["error"], "{body}");
    let text = body["error"].as_str().expect("error text").to_owned();
    (seconds, text)
}

/// Asserts the specification's error record and returns it.
pub async fn assert_error(res: reqwest::Response, status: u16, code: &str) -> Value {
    assert_eq!(res.status().as_u16(), status, "status");
    let ctype = res
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    assert!(
        ctype.starts_with("application/json"),
        "content type {ctype}"
    );
    let body: Value = res.json().await.expect("error body is JSON");
    assert_eq!(body["error_code"], code, "{body}");
    let id = body["error_id"].as_str().expect("error_id");
    assert!(
        id.starts_with("err_") && uuid::Uuid::parse_str(&id[4..]).is_ok(),
        "error_id {id}"
    );
    assert!(
        body["message"].as_str().is_some_and(|m| !m.is_empty()),
        "message"
    );
    assert!(body["details"].is_array(), "details");
    let ts = body["timestamp"].as_str().expect("timestamp");
    assert!(
        time::OffsetDateTime::parse(ts, &time::format_description::well_known::Rfc3339).is_ok(),
        "timestamp {ts}"
    );
    assert!(
        body["path"].as_str().is_some_and(|p| p.starts_with('/')),
        "path"
    );
    assert!(body["method"].as_str().is_some(), "method");
    let keys: Vec<&str> = body
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    assert_eq!(
        keys.len(),
        7,
        "exactly the seven fields of the record: {keys:?}"
    );
    body
}

/// The detail fields of a 422, in order.
pub fn detail_fields(body: &Value) -> Vec<String> {
    body["details"]
        .as_array()
        .map(|d| {
            d.iter()
                .filter_map(|e| e["field"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// A password every test account uses (10+ characters).
pub const PASSWORD: &str = "correct horse battery";

/// What a login hands out: the access token and the two cookies.
#[derive(Debug, Clone)]
pub struct Session {
    pub access: String,
    pub refresh: Option<String>,
    pub csrf: Option<String>,
}

impl Session {
    /// The `Cookie` header a browser would send to `/api/v1/auth`.
    pub fn cookie_header(&self) -> String {
        let mut parts = Vec::new();
        if let Some(r) = &self.refresh {
            parts.push(format!("svc_refresh={r}"));
        }
        if let Some(c) = &self.csrf {
            parts.push(format!("svc_csrf={c}"));
        }
        parts.join("; ")
    }
}

/// A registered, logged-in account.
#[derive(Debug, Clone)]
pub struct TestUser {
    pub key: String,
    pub email: String,
    pub session: Session,
}

impl TestUser {
    pub fn bearer(&self) -> String {
        format!("Bearer {}", self.session.access)
    }

    /// The account id (`key`).
    pub fn id(&self) -> uuid::Uuid {
        uuid::Uuid::parse_str(&self.key).expect("uuid")
    }
}

/// `Set-Cookie` values of a response by cookie name: (value, full header line).
pub fn set_cookies(res: &reqwest::Response) -> BTreeMap<String, (String, String)> {
    res.headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .filter_map(|line| {
            let first = line.split(';').next()?;
            let (name, value) = first.split_once('=')?;
            Some((
                name.trim().to_owned(),
                (value.trim().to_owned(), line.to_owned()),
            ))
        })
        .collect()
}

impl TestApp {
    /// A service in full mode (authentication on).
    pub async fn full() -> Self {
        Self::spawn_env(&[("SERVICE_MODE", "full")]).await
    }

    pub async fn full_env(env: &[(&'static str, &str)]) -> Self {
        let mut all = vec![("SERVICE_MODE", "full")];
        all.extend_from_slice(env);
        Self::spawn_env(&all).await
    }

    /// Any request with an optional `Authorization` value and JSON body.
    pub async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        authorization: Option<&str>,
        body: Option<&Value>,
    ) -> reqwest::Response {
        let mut req = self.client.request(method, self.url(path));
        if let Some(auth) = authorization {
            req = req.header("authorization", auth);
        }
        if let Some(body) = body {
            req = req.json(body);
        }
        req.send().await.expect("request sent")
    }

    pub async fn register(&self, email: &str, password: &str) -> reqwest::Response {
        self.post_json(
            "/api/v1/auth/register",
            &serde_json::json!({"email": email, "password": password, "display_name": "Tess Grower"}),
        )
        .await
    }

    pub async fn login_response(
        &self,
        email: &str,
        password: &str,
        remember: bool,
    ) -> reqwest::Response {
        self.post_json(
            "/api/v1/auth/login",
            &serde_json::json!({"email": email, "password": password, "remember_me": remember}),
        )
        .await
    }

    /// Logs in and returns the session (asserts success).
    pub async fn login(&self, email: &str, password: &str) -> Session {
        let res = self.login_response(email, password, false).await;
        assert_eq!(res.status().as_u16(), 200, "login of {email}");
        session_of(res).await
    }

    /// Registers a fresh account and logs it in.
    pub async fn user(&self, label: &str) -> TestUser {
        let email = format!("{}@example.test", unique_slug(label));
        let res = self.register(&email, PASSWORD).await;
        assert_eq!(res.status().as_u16(), 201, "register {email}");
        let body: Value = res.json().await.expect("user json");
        let session = self.login(&email, PASSWORD).await;
        TestUser {
            key: body["key"].as_str().expect("key").to_owned(),
            email,
            session,
        }
    }

    /// A fresh account holding `role` in `tenant`.
    pub async fn member(&self, tenant: &TenantRecord, role: kultiva::auth::Role) -> TestUser {
        let user = self.user(role.as_str()).await;
        self.add_member(tenant, user.id(), role).await;
        user
    }

    /// Makes an existing account a member of `tenant` with `role`.
    pub async fn add_member(
        &self,
        tenant: &TenantRecord,
        account: uuid::Uuid,
        role: kultiva::auth::Role,
    ) {
        kultiva::directory::memberships::repo::add(
            self.state.platform_pool(),
            tenant.id,
            account,
            role,
        )
        .await
        .expect("membership");
    }

    /// A fresh account that administers the platform.
    pub async fn platform_admin(&self) -> TestUser {
        let user = self.user("padmin").await;
        kultiva::platform::operator::grant_platform_admin(&self.state, &user.email)
            .await
            .expect("grant");
        user
    }

    /// An API key of the user (optionally scoped), as its raw value.
    pub async fn api_key(&self, user: &TestUser, scope: Option<&str>) -> String {
        let res = self
            .call(
                reqwest::Method::POST,
                "/api/v1/auth/api-keys",
                Some(&user.bearer()),
                Some(&serde_json::json!({"label": "test key", "tenant_scope": scope})),
            )
            .await;
        assert_eq!(res.status().as_u16(), 201, "api key created");
        let body: Value = res.json().await.expect("key json");
        body["raw_key"].as_str().expect("raw_key").to_owned()
    }
}

/// Reads the token body and the cookies of a login or refresh answer.
pub async fn session_of(res: reqwest::Response) -> Session {
    let cookies = set_cookies(&res);
    let body: Value = res.json().await.expect("token json");
    Session {
        access: body["access_token"]
            .as_str()
            .expect("access_token")
            .to_owned(),
        refresh: cookies.get("svc_refresh").map(|(v, _)| v.clone()),
        csrf: cookies.get("svc_csrf").map(|(v, _)| v.clone()),
    }
}

/// `/api/v1/t/{slug}/{rest}`: a path under a garden.
pub fn tenant_path(tenant: &TenantRecord, rest: &str) -> String {
    format!("/api/v1/t/{}/{rest}", tenant.slug)
}

/// The `key` of a JSON record.
pub fn key_of(v: &Value) -> String {
    v["key"].as_str().expect("key").to_owned()
}

/// A loopback port nothing listens on (now).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port")
}

/// Reading a JSON answer.
pub trait JsonReply {
    /// Asserts the status (the message shows the body) and returns the body, which must be
    /// JSON.
    async fn expect_json(self, status: u16) -> Value;
    /// The status and the body, which must be JSON.
    async fn status_json(self) -> (u16, Value);
    /// The status and the body, `Null` when the body is empty or not JSON.
    async fn status_json_or_null(self) -> (u16, Value);
}

impl JsonReply for reqwest::Response {
    async fn expect_json(self, status: u16) -> Value {
        let got = self.status().as_u16();
        let body: Value = self.json().await.expect("json");
        assert_eq!(got, status, "{body}");
        body
    }

    async fn status_json(self) -> (u16, Value) {
        let status = self.status().as_u16();
        (status, self.json().await.expect("json"))
    }

    async fn status_json_or_null(self) -> (u16, Value) {
        let status = self.status().as_u16();
        let text = self.text().await.expect("body");
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }
}

/// The shared REST test client: a test service and one credential (none, a user's session,
/// an API key or any `Authorization` value), plus extra headers sent with every request.
#[derive(Clone)]
pub struct Rest<'a> {
    app: &'a TestApp,
    authorization: Option<String>,
    headers: Vec<(String, String)>,
    prefix: String,
}

impl TestApp {
    /// The REST client without a credential.
    pub fn rest(&self) -> Rest<'_> {
        self.rest_auth(None)
    }

    /// A GET without a credential whose answer must be 200: its JSON body.
    pub async fn get_ok(&self, path: &str) -> Value {
        self.rest().get_ok(path).await
    }

    /// A POST without a credential whose answer must be 201: its JSON body.
    pub async fn create(&self, path: &str, body: &Value) -> Value {
        self.rest().create(path, body).await
    }

    /// The REST client with a user's access token.
    pub fn rest_as(&self, user: &TestUser) -> Rest<'_> {
        self.rest_auth(Some(&user.bearer()))
    }

    /// The REST client with a bearer token (an API key, an access token).
    pub fn rest_key(&self, key: &str) -> Rest<'_> {
        self.rest_auth(Some(&format!("Bearer {key}")))
    }

    /// The REST client with any `Authorization` value (or none).
    pub fn rest_auth(&self, authorization: Option<&str>) -> Rest<'_> {
        Rest {
            app: self,
            authorization: authorization.map(str::to_owned),
            headers: Vec::new(),
            prefix: String::new(),
        }
    }
}

impl Rest<'_> {
    /// The same client, sending one more header with every request.
    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// The same client, with every path under `prefix` (`/api/v1/t/<slug>`).
    pub fn under(mut self, prefix: &str) -> Self {
        self.prefix = format!("{}{prefix}", self.prefix);
        self
    }

    /// Any request with an optional JSON body.
    pub async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
    ) -> reqwest::Response {
        let mut req = self
            .app
            .client
            .request(method, self.app.url(&format!("{}{path}", self.prefix)));
        if let Some(auth) = &self.authorization {
            req = req.header("authorization", auth);
        }
        for (name, value) in &self.headers {
            req = req.header(name, value);
        }
        if let Some(body) = body {
            req = req.json(body);
        }
        req.send().await.expect("request sent")
    }

    pub async fn get(&self, path: &str) -> reqwest::Response {
        self.send(reqwest::Method::GET, path, None).await
    }

    pub async fn post(&self, path: &str, body: &Value) -> reqwest::Response {
        self.send(reqwest::Method::POST, path, Some(body)).await
    }

    /// A POST without a body.
    pub async fn post_empty(&self, path: &str) -> reqwest::Response {
        self.send(reqwest::Method::POST, path, None).await
    }

    pub async fn put(&self, path: &str, body: &Value) -> reqwest::Response {
        self.send(reqwest::Method::PUT, path, Some(body)).await
    }

    pub async fn patch(&self, path: &str, body: &Value) -> reqwest::Response {
        self.send(reqwest::Method::PATCH, path, Some(body)).await
    }

    pub async fn delete(&self, path: &str) -> reqwest::Response {
        self.send(reqwest::Method::DELETE, path, None).await
    }

    /// A GET whose answer must be 200: its JSON body.
    pub async fn get_ok(&self, path: &str) -> Value {
        self.get(path).await.expect_json(200).await
    }

    /// A POST whose answer must be 201: its JSON body.
    pub async fn create(&self, path: &str, body: &Value) -> Value {
        self.post(path, body).await.expect_json(201).await
    }

    /// Any request: the status and the body (`Null` when the body is empty or not JSON).
    pub async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
    ) -> (u16, Value) {
        self.send(method, path, body)
            .await
            .status_json_or_null()
            .await
    }

    /// Any request whose answer must have `status`: its JSON body.
    pub async fn expect(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
        status: u16,
    ) -> Value {
        self.send(method, path, body)
            .await
            .expect_json(status)
            .await
    }
}

/// One request a [`Receiver`] got.
#[derive(Debug, Clone)]
pub struct Received {
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The status the receiver answered with.
    pub answered: u16,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("json body")
    }
}

/// A local HTTP receiver (webhook target, push service): records every request and answers
/// the n-th one, to `path`, with `answer(n, path)` and the body `reply`.
pub struct Receiver {
    port: u16,
    got: std::sync::Arc<std::sync::Mutex<Vec<Received>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Receiver {
    pub async fn start(
        answer: impl Fn(usize, &str) -> u16 + Send + 'static,
        reply: &'static str,
    ) -> Self {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let got: std::sync::Arc<std::sync::Mutex<Vec<Received>>> = Default::default();
        let seen = got.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((mut sock, _)) = listener.accept().await else {
                    return;
                };
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                let head_end = loop {
                    let Ok(n) = sock.read(&mut chunk).await else {
                        break 0;
                    };
                    if n == 0 {
                        break 0;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        break at + 4;
                    }
                };
                if head_end == 0 {
                    continue;
                }
                let head = String::from_utf8_lossy(&buf[..head_end - 4]).into_owned();
                let path = head
                    .lines()
                    .next()
                    .and_then(|l| l.split(' ').nth(1))
                    .unwrap_or_default()
                    .to_owned();
                let headers: Vec<(String, String)> = head
                    .lines()
                    .skip(1)
                    .filter_map(|l| l.split_once(':'))
                    .map(|(k, v)| (k.trim().to_lowercase(), v.trim().to_owned()))
                    .collect();
                let length: usize = headers
                    .iter()
                    .find(|(k, _)| k == "content-length")
                    .and_then(|(_, v)| v.parse().ok())
                    .unwrap_or(0);
                while buf.len() < head_end + length {
                    match sock.read(&mut chunk).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                }
                let answered = {
                    let mut g = seen.lock().expect("lock");
                    let status = answer(g.len(), &path);
                    g.push(Received {
                        path,
                        headers,
                        body: buf[head_end..].to_vec(),
                        answered: status,
                    });
                    status
                };
                let head = format!(
                    "HTTP/1.1 {answered} X\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                    reply.len()
                );
                let _ = sock.write_all(format!("{head}{reply}").as_bytes()).await;
                let _ = sock.shutdown().await;
            }
        });
        Self { port, got, task }
    }

    /// `http://127.0.0.1:<port>`.
    pub fn origin(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn received(&self) -> Vec<Received> {
        self.got.lock().expect("lock").clone()
    }

    /// The requests once at least `n` have come (fails after a minute).
    pub async fn wait_for(&self, n: usize) -> Vec<Received> {
        let start = std::time::Instant::now();
        loop {
            let got = self.received();
            if got.len() >= n {
                return got;
            }
            assert!(
                start.elapsed() < std::time::Duration::from_secs(60),
                "{n} request(s) expected, {} arrived",
                got.len()
            );
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }
}

/// A tool call on the tool server's REST face with a bearer key: the status and the (JSON)
/// body.
pub async fn rest_tool(app: &TestApp, key: &str, name: &str, args: Value) -> (u16, Value) {
    app.rest_key(key)
        .post(&format!("/api/v1/mcp/tools/{name}"), &args)
        .await
        .status_json()
        .await
}

/// Creates a site named `name` in garden `slug` (no credential: light mode).
pub async fn post_site(app: &TestApp, slug: &str, name: &str) -> reqwest::Response {
    app.post_json(
        &format!("/api/v1/t/{slug}/sites/"),
        &serde_json::json!({"name": name, "kind": "garden"}),
    )
    .await
}

/// The status of a one-site page of garden `slug` and its total (-1 when not 200).
pub async fn site_total(app: &TestApp, slug: &str) -> (u16, i64) {
    let res = app.get(&format!("/api/v1/t/{slug}/sites/?limit=1")).await;
    let status = res.status().as_u16();
    let total = if status == 200 {
        let page: Value = res.json().await.expect("json");
        page["total"].as_i64().expect("total")
    } else {
        -1
    };
    (status, total)
}

/// One write of [`Traffic`]: the site's name, the status, `Retry-After` and how long it took.
pub type Write = (String, u16, Option<String>, std::time::Duration);

/// Traffic on one garden while it moves: three writers creating sites (`w{writer}-{i}`; after
/// a 503 a writer waits 50 ms) and one reader of the site total, until stopped.
pub struct Traffic {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    writers: Vec<tokio::task::JoinHandle<Vec<Write>>>,
    reader: tokio::task::JoinHandle<Vec<(u16, i64)>>,
}

impl Traffic {
    pub fn start(app: &std::sync::Arc<TestApp>, slug: &str) -> Self {
        use std::sync::atomic::Ordering;
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let mut writers = Vec::new();
        for w in 0..3 {
            let (app, slug, stop) = (app.clone(), slug.to_owned(), stop.clone());
            writers.push(tokio::spawn(async move {
                let mut seen = Vec::new();
                let mut i = 0;
                while !stop.load(Ordering::Relaxed) {
                    let name = format!("w{w}-{i}");
                    let started = std::time::Instant::now();
                    let res = post_site(&app, &slug, &name).await;
                    let status = res.status().as_u16();
                    let retry_after = header(&res, "retry-after");
                    seen.push((name, status, retry_after, started.elapsed()));
                    i += 1;
                    if status == 503 {
                        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    }
                }
                seen
            }));
        }
        let reader = {
            let (app, slug, stop) = (app.clone(), slug.to_owned(), stop.clone());
            tokio::spawn(async move {
                let mut seen = Vec::new();
                while !stop.load(Ordering::Relaxed) {
                    seen.push(site_total(&app, &slug).await);
                }
                seen
            })
        };
        Self {
            stop,
            writers,
            reader,
        }
    }

    /// Stops the traffic: every write, and every read (status, total).
    pub async fn stop(self) -> (Vec<Write>, Vec<(u16, i64)>) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let mut answered = Vec::new();
        for w in self.writers {
            answered.extend(w.await.expect("writer"));
        }
        (answered, self.reader.await.expect("reader"))
    }
}

/// `kultiva serve` as a process of its own: a clean environment with `PATH`, the test
/// service's variables ([`base_env`]) and then `env`.
pub fn serve_command(env: &[(&str, &str)]) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_kultiva"));
    cmd.arg("serve")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default());
    for (k, v) in base_env() {
        cmd.env(k, v);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}
