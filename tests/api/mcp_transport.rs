//! The tool server over raw HTTP: the gate (404 while disabled), API-key-only authentication,
//! the Streamable HTTP transport (initialize, sessions, headers, batches, hostile input), the
//! revision-dependent result shapes, the deprecated alias, the REST face, tenant binding and
//! the audit trail. Only the account tools (`list_tenants`, `get_mcp_activity`) are used.

use std::time::{Duration, Instant};

use reqwest::{Method, RequestBuilder, Response};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use uuid::Uuid;

use crate::support::{TestApp, TestUser, assert_error, detail_fields, header};
use kultiva::auth::Role;

const MCP: &str = "/api/v1/mcp";
const RPC_ALIAS: &str = "/api/v1/mcp/rpc";
/// What real clients send on POST.
const ACCEPT_BOTH: &str = "application/json, text/event-stream";
const MODERN: &str = "2025-06-18";
/// A tool name the audit barrier writes; never a real tool.
const BARRIER_TOOL: &str = "__audit_barrier";

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// The registered tools' names in `tools/list` order that a personal-garden admin sees: all
/// but the master-data writes, which need the platform garden.
fn registered() -> Vec<&'static str> {
    kultiva::mcp::tools::ALL
        .iter()
        .filter(|t| t.scope != kultiva::mcp::registry::Scope::Platform)
        .map(|t| t.name)
        .collect()
}

async fn enabled() -> TestApp {
    TestApp::full_env(&[("MCP_SERVER_ENABLED", "true")]).await
}

fn sha256_hex(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// An account with a personal garden (admin there) and one unscoped API key.
struct Caller {
    user: TestUser,
    account: Uuid,
    key: String,
    key_id: String,
}

async fn caller(app: &TestApp, label: &str) -> Caller {
    let user = app.user(label).await;
    with_key(app, user).await
}

async fn with_key(app: &TestApp, user: TestUser) -> Caller {
    let (key, key_id) = new_key(app, &user, None).await;
    Caller {
        account: Uuid::parse_str(&user.key).expect("account uuid"),
        user,
        key,
        key_id,
    }
}

/// A fresh API key of the user: (raw key, key id).
async fn new_key(app: &TestApp, user: &TestUser, scope: Option<&str>) -> (String, String) {
    let res = app
        .rest_as(user)
        .post(
            "/api/v1/auth/api-keys",
            &json!({"label": "mcp test", "tenant_scope": scope}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 201, "api key created");
    let body: Value = res.json().await.expect("key json");
    (
        body["raw_key"].as_str().expect("raw_key").to_owned(),
        body["key"].as_str().expect("key").to_owned(),
    )
}

/// The slug of the account's only (personal) garden.
async fn personal_slug(app: &TestApp, account: Uuid) -> String {
    let tenants =
        kultiva::directory::memberships::repo::tenants_of(app.state.platform_pool(), account)
            .await
            .expect("tenants");
    assert_eq!(tenants.len(), 1, "one personal garden");
    tenants[0].0.slug.as_str().to_owned()
}

/// A request to an MCP path carrying the key and JSON headers of a real client.
fn mcp_req(app: &TestApp, method: Method, path: &str, key: &str) -> RequestBuilder {
    app.client
        .request(method, app.url(path))
        .header("x-api-key", key)
        .header("content-type", "application/json")
        .header("accept", ACCEPT_BOTH)
}

async fn send(req: RequestBuilder) -> Response {
    req.send().await.expect("request sent")
}

/// POSTs one JSON body to `path` with the key and, optionally, a session id.
async fn post_mcp(
    app: &TestApp,
    path: &str,
    key: &str,
    session: Option<&str>,
    body: &Value,
) -> Response {
    let mut req = mcp_req(app, Method::POST, path, key).body(body.to_string());
    if let Some(id) = session {
        req = req.header("mcp-session-id", id);
    }
    send(req).await
}

fn initialize_body(version: &str) -> Value {
    json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "kultiva-tests", "version": "1"}
        }
    })
}

/// The body of a JSON response, after checking status and media type.
async fn json_of(res: Response, status: u16) -> Value {
    let ctype = header(&res, "content-type").unwrap_or_default();
    let got = res.status().as_u16();
    let text = res.text().await.expect("body");
    assert_eq!(got, status, "status; body {text}");
    assert!(
        ctype.starts_with("application/json"),
        "content type {ctype:?}; body {text}"
    );
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("JSON body ({e}): {text}"))
}

/// Asserts an HTTP-level refusal with a JSON-RPC error body (`id: null`) and returns the body.
async fn assert_rpc_refusal(res: Response, status: u16, code: i64) -> Value {
    let body = json_of(res, status).await;
    assert_eq!(body["jsonrpc"], "2.0", "{body}");
    assert_eq!(body["error"]["code"], code, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()),
        "{body}"
    );
    assert!(body.get("result").is_none(), "{body}");
    body
}

/// Asserts a 202 with an empty body.
async fn assert_accepted(res: Response) {
    assert_eq!(res.status().as_u16(), 202);
    let text = res.text().await.expect("body");
    assert!(text.is_empty(), "202 carries no body: {text:?}");
}

/// An established session of one key.
struct Sess<'a> {
    app: &'a TestApp,
    key: String,
    id: String,
    version: String,
    path: &'static str,
}

async fn open<'a>(app: &'a TestApp, key: &str, version: &str) -> Sess<'a> {
    open_at(app, MCP, key, version).await
}

async fn open_at<'a>(app: &'a TestApp, path: &'static str, key: &str, version: &str) -> Sess<'a> {
    let res = post_mcp(app, path, key, None, &initialize_body(version)).await;
    let id = header(&res, "mcp-session-id").expect("Mcp-Session-Id issued");
    let body = json_of(res, 200).await;
    let negotiated = body["result"]["protocolVersion"]
        .as_str()
        .expect("protocolVersion")
        .to_owned();
    Sess {
        app,
        key: key.to_owned(),
        id,
        version: negotiated,
        path,
    }
}

impl Sess<'_> {
    /// A POST in this session; like real clients, the version header is sent from 2025-06-18 on.
    fn req(&self) -> RequestBuilder {
        let mut req = mcp_req(self.app, Method::POST, self.path, &self.key)
            .header("mcp-session-id", &self.id);
        if self.version.as_str() >= MODERN {
            req = req.header("mcp-protocol-version", &self.version);
        }
        req
    }

    async fn post(&self, body: &Value) -> Response {
        send(self.req().body(body.to_string())).await
    }

    /// One request; asserts a 200 JSON-RPC response with the same id and returns it.
    async fn request(&self, method: &str, params: Value) -> Value {
        let id = json!(format!("req-{}", Uuid::new_v4().simple()));
        let body = json_of(
            self.post(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
                .await,
            200,
        )
        .await;
        assert_eq!(body["jsonrpc"], "2.0", "{body}");
        assert_eq!(body["id"], id, "id echoed: {body}");
        body
    }

    /// `tools/call`; returns the `CallToolResult`.
    async fn call(&self, name: &str, arguments: Value) -> Value {
        let body = self
            .request("tools/call", json!({"name": name, "arguments": arguments}))
            .await;
        assert!(
            body.get("error").is_none(),
            "a tool result, not a JSON-RPC error: {body}"
        );
        body["result"].clone()
    }

    async fn tools(&self) -> Vec<Value> {
        let body = self.request("tools/list", json!({})).await;
        body["result"]["tools"].as_array().expect("tools").clone()
    }
}

/// The structured error of an `isError` result (modern revisions).
fn tool_error(result: &Value) -> &Value {
    assert_eq!(result["isError"], true, "{result}");
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    assert!(!text.is_empty(), "error results carry text: {result}");
    &result["structuredContent"]
}

/// The envelope of an old-revision result: only in the text block, as JSON.
fn text_envelope(result: &Value) -> Value {
    assert!(result.get("structuredContent").is_none(), "{result}");
    let content = result["content"].as_array().expect("content");
    assert_eq!(content.len(), 1, "{result}");
    assert_eq!(content[0]["type"], "text");
    serde_json::from_str(content[0]["text"].as_str().expect("text")).expect("text is JSON")
}

/// Checks a value against the subset of JSON Schema the tool server declares (object type,
/// property types, required, anyOf of required sets, additionalProperties false).
fn conforms(schema: &Value, value: &Value) -> Result<(), String> {
    let obj = value.as_object().ok_or("not an object")?;
    if schema["type"] != "object" {
        return Err(format!("schema type {}", schema["type"]));
    }
    let props = schema["properties"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    for (name, v) in obj {
        match props.get(name) {
            None if schema["additionalProperties"] == false => {
                return Err(format!("{name} is not allowed"));
            }
            None => {}
            Some(p) => {
                let ok = match p["type"].as_str() {
                    None => true,
                    Some("string") => v.is_string(),
                    Some("object") => v.is_object(),
                    Some("array") => v.is_array(),
                    Some("boolean") => v.is_boolean(),
                    Some("integer") => v.is_i64() || v.is_u64(),
                    Some("number") => v.is_number(),
                    Some(other) => return Err(format!("unknown type {other}")),
                };
                if !ok {
                    return Err(format!("{name} is not of type {}", p["type"]));
                }
            }
        }
    }
    let has_all = |req: &Value| {
        req.as_array().is_none_or(|r| {
            r.iter()
                .all(|n| n.as_str().is_some_and(|n| obj.contains_key(n)))
        })
    };
    if !has_all(&schema["required"]) {
        return Err("required missing".into());
    }
    if let Some(any) = schema["anyOf"].as_array()
        && !any.iter().any(|branch| has_all(&branch["required"]))
    {
        return Err("no anyOf branch satisfied".into());
    }
    Ok(())
}

/// Audit rows of an account (the barrier's excluded).
async fn audit_count(app: &TestApp, account: Uuid) -> i64 {
    sqlx::query_scalar(
        "SELECT count(*) FROM platform.mcp_audit_log WHERE account_id = $1 AND tool_name <> $2",
    )
    .bind(account)
    .bind(BARRIER_TOOL)
    .fetch_one(app.state.platform_pool())
    .await
    .expect("count audit rows")
}

/// Waits (bounded) until the account has `n` audit rows; the worker writes them shortly after
/// the call.
async fn wait_for_audit(app: &TestApp, account: Uuid, n: i64) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let got = audit_count(app, account).await;
        if got >= n {
            assert_eq!(got, n, "exactly {n} audit rows");
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{got} of {n} audit rows after 5 s"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Queues a marker row behind everything queued so far and waits until it is written: after
/// this, every row an earlier call queued is in the table (the worker writes in order), so an
/// absent row is absent for good. The marker is removed again.
async fn audit_barrier(app: &TestApp, account: Uuid) {
    kultiva::state::audit::record(
        &app.state,
        kultiva::state::audit::AuditEntry {
            account_id: account,
            api_key_id: None,
            tenant_id: None,
            tool_name: BARRIER_TOOL.into(),
            input_hash: sha256_hex("barrier"),
            response_bytes: 0,
            duration_ms: 0,
            status: "ok",
            error_class: None,
            created_at: time::OffsetDateTime::now_utc(),
        },
    )
    .await;
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let done = sqlx::query(
            "DELETE FROM platform.mcp_audit_log WHERE account_id = $1 AND tool_name = $2",
        )
        .bind(account)
        .bind(BARRIER_TOOL)
        .execute(app.state.platform_pool())
        .await
        .expect("delete barrier")
        .rows_affected();
        if done > 0 {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "audit barrier not written after 5 s"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

// ---------------------------------------------------------------------------------------------
// Gate and authentication
// ---------------------------------------------------------------------------------------------

/// Every tool-server path with the method that serves it when enabled.
const MCP_PATHS: &[(&str, &str)] = &[
    ("POST", "/api/v1/mcp"),
    ("GET", "/api/v1/mcp"),
    ("DELETE", "/api/v1/mcp"),
    ("POST", "/api/v1/mcp/rpc"),
    ("GET", "/api/v1/mcp/tools"),
    ("POST", "/api/v1/mcp/tools/x"),
    ("POST", "/api/v1/mcp/tools/list_tenants"),
];

#[tokio::test]
async fn disabled_server_answers_404_on_every_path_with_or_without_credentials() {
    let app = TestApp::full().await;
    let c = caller(&app, "gate").await;
    let body = initialize_body(MODERN).to_string();
    for (method, path) in MCP_PATHS {
        let method = Method::from_bytes(method.as_bytes()).expect("method");
        for credential in [
            None,
            Some(("x-api-key", c.key.clone())),
            Some(("authorization", c.user.bearer())),
        ] {
            let mut req = app
                .client
                .request(method.clone(), app.url(path))
                .header("content-type", "application/json")
                .body(body.clone());
            if let Some((name, value)) = &credential {
                req = req.header(*name, value);
            }
            let res = send(req).await;
            assert!(
                header(&res, "mcp-session-id").is_none(),
                "{method} {path}: no session"
            );
            assert!(
                header(&res, "allow").is_none(),
                "{method} {path}: no 405 hint"
            );
            assert!(
                header(&res, "www-authenticate").is_none(),
                "{method} {path}: no challenge"
            );
            let err = assert_error(res, 404, "ENTITY_NOT_FOUND").await;
            assert_eq!(err["path"], *path);
        }
    }
    // Other methods and unknown paths under /mcp look the same.
    for (method, path) in [
        ("GET", "/api/v1/mcp/tools/x"),
        ("PUT", "/api/v1/mcp"),
        ("PATCH", "/api/v1/mcp/rpc"),
        ("GET", "/api/v1/mcp/unknown"),
        ("POST", "/api/v1/mcp/"),
    ] {
        let method = Method::from_bytes(method.as_bytes()).expect("method");
        let res = send(
            app.client
                .request(method.clone(), app.url(path))
                .header("x-api-key", &c.key),
        )
        .await;
        assert!(header(&res, "allow").is_none(), "{method} {path}");
        assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    }
    // Nothing reached the dispatcher: no audit rows, no sessions.
    audit_barrier(&app, c.account).await;
    assert_eq!(audit_count(&app, c.account).await, 0);
}

#[tokio::test]
async fn only_live_api_keys_pass_and_a_jwt_is_refused() {
    let app = enabled().await;
    let c = caller(&app, "auth").await;
    let init = initialize_body(MODERN).to_string();

    // No credential, a JWT, a malformed and an unknown key: 401 on every path.
    let unknown_key = format!("svc_{}", "A".repeat(43));
    let cases: Vec<(&str, Option<(&str, String)>)> = vec![
        ("UNAUTHORIZED", None),
        ("UNAUTHORIZED", Some(("authorization", c.user.bearer()))),
        ("INVALID_TOKEN", Some(("x-api-key", "svc_short".to_owned()))),
        ("INVALID_TOKEN", Some(("x-api-key", unknown_key.clone()))),
        (
            "INVALID_TOKEN",
            Some(("authorization", format!("Bearer {unknown_key}"))),
        ),
    ];
    for (method, path) in MCP_PATHS {
        let method = Method::from_bytes(method.as_bytes()).expect("method");
        for (code, credential) in &cases {
            let mut req = app
                .client
                .request(method.clone(), app.url(path))
                .header("content-type", "application/json")
                .header("accept", ACCEPT_BOTH)
                .body(init.clone());
            if let Some((name, value)) = credential {
                req = req.header(*name, value);
            }
            let res = send(req).await;
            assert!(header(&res, "mcp-session-id").is_none(), "{method} {path}");
            assert!(
                header(&res, "www-authenticate").is_some_and(|v| v.starts_with("Bearer")),
                "{method} {path}: challenge"
            );
            assert_error(res, 401, code).await;
        }
    }

    // Both header forms of a key work.
    let s1 = open(&app, &c.key, MODERN).await;
    assert_eq!(s1.tools().await.len(), registered().len());
    let res = send(
        app.client
            .post(app.url(MCP))
            .header("authorization", format!("Bearer {}", c.key))
            .header("content-type", "application/json")
            .body(initialize_body(MODERN).to_string()),
    )
    .await;
    assert!(header(&res, "mcp-session-id").is_some());
    assert_eq!(json_of(res, 200).await["result"]["protocolVersion"], MODERN);
    let res = send(
        app.client
            .get(app.url("/api/v1/mcp/tools"))
            .header("authorization", format!("Bearer {}", c.key)),
    )
    .await;
    assert_eq!(res.status().as_u16(), 200);

    // A revoked key fails on its very next call, in an open session and on the REST face.
    let res = app
        .rest_auth(Some(&c.user.bearer()))
        .delete(&format!("/api/v1/auth/api-keys/{}", c.key_id))
        .await;
    assert_eq!(res.status().as_u16(), 204);
    let res = s1
        .post(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    assert_error(res, 401, "INVALID_TOKEN").await;
    let res = send(mcp_req(&app, Method::GET, "/api/v1/mcp/tools", &c.key)).await;
    assert_error(res, 401, "INVALID_TOKEN").await;
    let res =
        send(mcp_req(&app, Method::POST, "/api/v1/mcp/tools/list_tenants", &c.key).body("{}"))
            .await;
    assert_error(res, 401, "INVALID_TOKEN").await;
    // None of the refused calls reached a tool.
    audit_barrier(&app, c.account).await;
    assert_eq!(audit_count(&app, c.account).await, 0);
}

// ---------------------------------------------------------------------------------------------
// initialize and sessions
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn initialize_echoes_known_revisions_and_falls_back_for_unknown_ones() {
    let app = enabled().await;
    let c = caller(&app, "init").await;
    let mut ids = Vec::new();
    for (asked, answered) in [
        ("2025-11-25", "2025-11-25"),
        ("2025-06-18", "2025-06-18"),
        ("2025-03-26", "2025-03-26"),
        ("2024-11-05", "2024-11-05"),
        ("2099-01-01", "2025-06-18"),
        ("2026-07-28", "2025-06-18"),
    ] {
        let res = post_mcp(&app, MCP, &c.key, None, &initialize_body(asked)).await;
        let id = header(&res, "mcp-session-id").expect("session issued");
        assert_eq!(id.len(), 64, "{id}");
        assert!(
            id.bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()),
            "{id}"
        );
        let body = json_of(res, 200).await;
        assert_eq!(body["jsonrpc"], "2.0");
        assert_eq!(body["id"], 0, "id 0 echoed as 0: {body}");
        assert_eq!(body["result"]["protocolVersion"], answered, "asked {asked}");
        assert!(
            body["result"]["capabilities"]["tools"].is_object(),
            "{body}"
        );
        assert_eq!(body["result"]["serverInfo"]["name"], "kultiva");
        assert!(body.get("error").is_none());
        ids.push(id);
    }
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 6, "every initialize mints a new session");

    // Missing protocolVersion (or params): -32602 with the id, and no session.
    for params in [
        json!({"capabilities": {}}),
        json!({"protocolVersion": 20250618}),
        Value::Null,
    ] {
        let mut msg = json!({"jsonrpc": "2.0", "id": "init-x", "method": "initialize"});
        if !params.is_null() {
            msg["params"] = params;
        }
        let res = post_mcp(&app, MCP, &c.key, None, &msg).await;
        assert!(header(&res, "mcp-session-id").is_none());
        let body = json_of(res, 200).await;
        assert_eq!(body["id"], "init-x");
        assert_eq!(body["error"]["code"], -32602, "{body}");
        assert!(body.get("result").is_none());
    }

    // A stale, unknown or malformed session header on initialize is ignored: a new session.
    let sess = open(&app, &c.key, MODERN).await;
    let res =
        send(mcp_req(&app, Method::DELETE, MCP, &c.key).header("mcp-session-id", &sess.id)).await;
    assert_eq!(res.status().as_u16(), 204);
    for stale in [sess.id.as_str(), &"0".repeat(64), "not-a-session"] {
        let res = post_mcp(&app, MCP, &c.key, Some(stale), &initialize_body(MODERN)).await;
        let fresh = header(&res, "mcp-session-id").expect("new session");
        assert_ne!(fresh, stale);
        assert_eq!(json_of(res, 200).await["result"]["protocolVersion"], MODERN);
        let s = Sess {
            app: &app,
            key: c.key.clone(),
            id: fresh,
            version: MODERN.into(),
            path: MCP,
        };
        s.request("ping", json!({})).await;
    }
}

#[tokio::test]
async fn sessions_are_required_bound_to_their_account_and_end_with_delete() {
    let app = enabled().await;
    let a = caller(&app, "sess-a").await;
    let b = caller(&app, "sess-b").await;
    let sess = open(&app, &a.key, MODERN).await;
    let ping = json!({"jsonrpc": "2.0", "id": 7, "method": "ping"});

    // The session works, also for another key of the same account.
    let body = json_of(sess.post(&ping).await, 200).await;
    assert_eq!(body, json!({"jsonrpc": "2.0", "id": 7, "result": {}}));
    let (second_key, _) = new_key(&app, &a.user, None).await;
    let res = post_mcp(&app, MCP, &second_key, Some(&sess.id), &ping).await;
    assert_eq!(json_of(res, 200).await["result"], json!({}));

    // Missing: 400; unknown or malformed: 404 -32001; another account's: 404 as unknown.
    let res = post_mcp(&app, MCP, &a.key, None, &ping).await;
    let body = assert_rpc_refusal(res, 400, -32600).await;
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("Mcp-Session-Id")
    );
    for unknown in [
        "0".repeat(64),
        "x".repeat(64),
        "short".to_owned(),
        sess.id.to_uppercase(),
    ] {
        let res = post_mcp(&app, MCP, &a.key, Some(unknown.as_str()), &ping).await;
        assert_rpc_refusal(res, 404, -32001).await;
    }
    let res = post_mcp(&app, MCP, &b.key, Some(&sess.id), &ping).await;
    assert_rpc_refusal(res, 404, -32001).await;
    // Nor can the other account end it.
    let res =
        send(mcp_req(&app, Method::DELETE, MCP, &b.key).header("mcp-session-id", &sess.id)).await;
    assert_rpc_refusal(res, 404, -32001).await;
    assert_eq!(
        json_of(sess.post(&ping).await, 200).await["id"],
        7,
        "still alive"
    );

    // DELETE without the header: 400, and the session lives on.
    let res = send(mcp_req(&app, Method::DELETE, MCP, &a.key)).await;
    assert_rpc_refusal(res, 400, -32600).await;
    assert_eq!(json_of(sess.post(&ping).await, 200).await["id"], 7);

    // DELETE ends it: 204 without a body; then 404 on use and on a second DELETE.
    let res =
        send(mcp_req(&app, Method::DELETE, MCP, &a.key).header("mcp-session-id", &sess.id)).await;
    assert_eq!(res.status().as_u16(), 204);
    assert!(res.text().await.expect("body").is_empty());
    assert_rpc_refusal(sess.post(&ping).await, 404, -32001).await;
    let res =
        send(mcp_req(&app, Method::DELETE, MCP, &a.key).header("mcp-session-id", &sess.id)).await;
    assert_rpc_refusal(res, 404, -32001).await;
    let stored: Option<String> = {
        let mut conn = app.state.shared_redis().connection().await.expect("redis");
        redis::cmd("GET")
            .arg(kultiva::mcp::session::redis_key(&app.state, &sess.id))
            .query_async(&mut conn)
            .await
            .expect("redis get")
    };
    assert!(stored.is_none(), "the session is gone from Redis");
}

#[tokio::test]
async fn get_is_405_with_allow_and_notifications_and_responses_get_202() {
    let app = enabled().await;
    let c = caller(&app, "note").await;
    for headers in [vec![], vec![("accept", "text/event-stream")]] {
        let mut req = app.client.get(app.url(MCP)).header("x-api-key", &c.key);
        for (k, v) in headers {
            req = req.header(k, v);
        }
        let res = send(req).await;
        assert_eq!(res.status().as_u16(), 405);
        assert_eq!(header(&res, "allow").as_deref(), Some("POST, DELETE"));
        let ctype = header(&res, "content-type").unwrap_or_default();
        assert!(
            !ctype.starts_with("text/event-stream"),
            "no stream: {ctype}"
        );
    }

    let sess = open(&app, &c.key, MODERN).await;
    for msg in [
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}}),
        json!({"jsonrpc": "2.0", "id": 5, "result": {}}),
        json!({"jsonrpc": "2.0", "id": "r-1", "error": {"code": -1, "message": "declined"}}),
    ] {
        assert_accepted(sess.post(&msg).await).await;
    }
    // Requests before notifications/initialized are served (clients pipeline).
    let fresh = open(&app, &c.key, MODERN).await;
    assert_eq!(fresh.tools().await.len(), registered().len());
    // A notification still needs a session.
    let res = post_mcp(
        &app,
        MCP,
        &c.key,
        None,
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    assert_rpc_refusal(res, 400, -32600).await;
}

#[tokio::test]
async fn protocol_version_header_must_name_a_supported_revision() {
    let app = enabled().await;
    let c = caller(&app, "pv").await;
    let sess = open(&app, &c.key, MODERN).await;
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string();
    for bad in ["2026-07-28", "2099-01-01", "1.0", ""] {
        let res = send(
            mcp_req(&app, Method::POST, MCP, &c.key)
                .header("mcp-session-id", &sess.id)
                .header("mcp-protocol-version", bad)
                .body(ping.clone()),
        )
        .await;
        let body = assert_rpc_refusal(res, 400, -32600).await;
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap_or("")
                .contains("Unsupported protocol version"),
            "{body}"
        );
    }
    // Any supported value passes, also one other than the session's.
    for good in ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"] {
        let res = send(
            mcp_req(&app, Method::POST, MCP, &c.key)
                .header("mcp-session-id", &sess.id)
                .header("mcp-protocol-version", good)
                .body(ping.clone()),
        )
        .await;
        assert_eq!(json_of(res, 200).await["result"], json!({}), "{good}");
    }
    // Absent: the session's revision applies (a 2024-11-05 client sends none).
    let old = open(&app, &c.key, "2024-11-05").await;
    let res = send(
        mcp_req(&app, Method::POST, MCP, &c.key)
            .header("mcp-session-id", &old.id)
            .body(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string()),
    )
    .await;
    let body = json_of(res, 200).await;
    assert_eq!(
        body["result"]["tools"].as_array().map(Vec::len),
        Some(registered().len())
    );
    assert!(
        body["result"]["tools"][0].get("outputSchema").is_none(),
        "2024-11-05 shapes"
    );
    // An initialize with an unsupported header is refused as well, without a session.
    let res = send(
        mcp_req(&app, Method::POST, MCP, &c.key)
            .header("mcp-protocol-version", "2099-01-01")
            .body(initialize_body(MODERN).to_string()),
    )
    .await;
    assert!(header(&res, "mcp-session-id").is_none());
    assert_rpc_refusal(res, 400, -32600).await;
}

#[tokio::test]
async fn discover_probe_gets_a_4xx_and_unknown_methods_minus_32601_with_the_id() {
    let app = enabled().await;
    let c = caller(&app, "disc").await;
    // What python mcp 2.x and inspector v2 send first.
    let probe = json!({
        "jsonrpc": "2.0", "id": 1, "method": "server/discover",
        "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}
    });
    let res = send(
        mcp_req(&app, Method::POST, MCP, &c.key)
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "server/discover")
            .body(probe.to_string()),
    )
    .await;
    assert!(header(&res, "mcp-session-id").is_none());
    let status = res.status().as_u16();
    assert!(
        (400..500).contains(&status),
        "a 4xx makes clients fall back: {status}"
    );
    let body: Value = res.json().await.expect("JSON");
    assert_ne!(
        body["error"]["code"], -32022,
        "never the modern-only code: {body}"
    );
    assert!(
        !body.to_string().contains("\"supported\":[\"2026"),
        "{body}"
    );
    // The same probe without the header: still no session, still a 4xx.
    let res = post_mcp(&app, MCP, &c.key, None, &probe).await;
    assert!(header(&res, "mcp-session-id").is_none());
    assert!(res.status().is_client_error());

    let sess = open(&app, &c.key, MODERN).await;
    for (id, method) in [
        (json!("server-discover-probe-1"), "server/discover"),
        (json!(0), "resources/list"),
        (json!(-3), "prompts/list"),
        (json!(9_007_199_254_740_993_u64), "sampling/createMessage"),
        (json!(""), "tools/unknown"),
    ] {
        let res = sess
            .post(&json!({"jsonrpc": "2.0", "id": id, "method": method}))
            .await;
        let body = json_of(res, 200).await;
        assert_eq!(body["error"]["code"], -32601, "{body}");
        assert_eq!(body["id"], id, "id echoed with its type: {body}");
        assert!(body.get("result").is_none());
    }
}

#[tokio::test]
async fn batches_are_served_only_on_2025_03_26_sessions() {
    let app = enabled().await;
    let c = caller(&app, "batch").await;
    let old = open(&app, &c.key, "2025-03-26").await;
    let batch = json!([
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": "two", "method": "tools/list"}
    ]);
    let body = json_of(old.post(&batch).await, 200).await;
    let replies = body.as_array().expect("an array of responses");
    assert_eq!(replies.len(), 2, "{body}");
    assert_eq!(replies[0], json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
    assert_eq!(replies[1]["id"], "two");
    assert_eq!(
        replies[1]["result"]["tools"].as_array().map(Vec::len),
        Some(registered().len())
    );
    assert!(
        replies[1]["result"]["tools"][0]
            .get("outputSchema")
            .is_none()
    );

    // Only notifications and responses: 202, empty.
    assert_accepted(
        old.post(&json!([
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 4, "result": {}}
        ]))
        .await,
    )
    .await;

    // initialize and invalid entries inside a batch: error entries; the rest is served.
    let body = json_of(
        old.post(&json!([
            initialize_body("2025-03-26"),
            {"jsonrpc": "2.0", "id": 2, "method": "ping"},
            {"jsonrpc": "1.0", "id": 3, "method": "ping"},
            17
        ]))
        .await,
        200,
    )
    .await;
    let replies = body.as_array().expect("array");
    assert_eq!(replies.len(), 4, "{body}");
    assert_eq!(replies[0]["id"], 0);
    assert_eq!(replies[0]["error"]["code"], -32600);
    assert!(replies[0].get("result").is_none());
    assert_eq!(replies[1], json!({"jsonrpc": "2.0", "id": 2, "result": {}}));
    assert_eq!(replies[2]["id"], 3);
    assert_eq!(replies[2]["error"]["code"], -32600);
    assert_eq!(replies[3]["id"], Value::Null);
    assert_eq!(replies[3]["error"]["code"], -32600);

    // Empty and oversized batches: 400 -32600.
    assert_rpc_refusal(old.post(&json!([])).await, 400, -32600).await;
    let many: Vec<Value> = (0..101)
        .map(|i| json!({"jsonrpc": "2.0", "id": i, "method": "ping"}))
        .collect();
    assert_rpc_refusal(old.post(&Value::Array(many)).await, 400, -32600).await;

    // Any other revision: every array is refused, nothing in it runs.
    for version in ["2025-06-18", "2025-11-25", "2024-11-05"] {
        let sess = open(&app, &c.key, version).await;
        for arr in [
            json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]),
            json!([]),
            json!([{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                    "params": {"name": "list_tenants", "arguments": {}}}]),
        ] {
            let body = assert_rpc_refusal(sess.post(&arr).await, 400, -32600).await;
            assert_eq!(body["id"], Value::Null, "{body}");
        }
    }
    // The refused batch's tools/call never ran: no audit row.
    audit_barrier(&app, c.account).await;
    assert_eq!(audit_count(&app, c.account).await, 0);
}

// ---------------------------------------------------------------------------------------------
// Hostile input
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn malformed_and_misshapen_messages_are_refused_with_json_rpc_errors() {
    let app = enabled().await;
    let c = caller(&app, "hostile").await;
    let sess = open(&app, &c.key, MODERN).await;

    // Not JSON: 400 -32700 (with or without a session).
    for raw in [
        "{",
        "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\"",
        "nul",
        "\u{feff}{}",
        "",
    ] {
        let res = send(sess.req().body(raw.to_owned())).await;
        let body = assert_rpc_refusal(res, 400, -32700).await;
        assert_eq!(body["id"], Value::Null);
        let res = send(mcp_req(&app, Method::POST, MCP, &c.key).body(raw.to_owned())).await;
        assert_rpc_refusal(res, 400, -32700).await;
    }
    let res = send(sess.req().body(vec![0xff_u8, 0xfe, 0x00])).await;
    assert_rpc_refusal(res, 400, -32700).await;
    // Nesting deeper than the parser's limit is a parse error, not a crash.
    let res = send(sess.req().body("[".repeat(100_000))).await;
    assert_rpc_refusal(res, 400, -32700).await;
    let deep = format!("{}1{}", "[".repeat(5_000), "]".repeat(5_000));
    let res = send(sess.req().body(deep)).await;
    assert_rpc_refusal(res, 400, -32700).await;

    // JSON, but not a JSON-RPC request: 400 -32600, id echoed where it is a valid id.
    for (msg, id) in [
        (
            json!({"jsonrpc": "1.0", "id": 1, "method": "ping"}),
            json!(1),
        ),
        (json!({"id": 1, "method": "ping"}), json!(1)),
        (
            json!({"jsonrpc": "2.0", "id": null, "method": "ping"}),
            Value::Null,
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}),
            Value::Null,
        ),
        (
            json!({"jsonrpc": "2.0", "id": true, "method": "ping"}),
            Value::Null,
        ),
        (
            json!({"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}),
            Value::Null,
        ),
        (json!({"jsonrpc": "2.0", "id": 1, "method": 7}), json!(1)),
        (json!({"jsonrpc": "2.0", "id": 1, "method": null}), json!(1)),
        (
            json!({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": 3}),
            json!(1),
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": "x"}),
            json!(1),
        ),
        (json!({"jsonrpc": "2.0", "id": 1}), json!(1)),
        (json!("ping"), Value::Null),
        (json!(42), Value::Null),
        (Value::Null, Value::Null),
        (json!({}), Value::Null),
    ] {
        let body = assert_rpc_refusal(sess.post(&msg).await, 400, -32600).await;
        assert_eq!(body["id"], id, "{msg}: {body}");
    }

    // Wrong Content-Type: 415 (also for initialize, which then issues no session).
    for ctype in [
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
        Some("text/json"),
        None,
    ] {
        let mut req = app
            .client
            .post(app.url(MCP))
            .header("x-api-key", &c.key)
            .header("accept", ACCEPT_BOTH)
            .body(initialize_body(MODERN).to_string());
        if let Some(t) = ctype {
            req = req.header("content-type", t);
        }
        let res = send(req).await;
        assert!(header(&res, "mcp-session-id").is_none());
        assert_rpc_refusal(res, 415, -32000).await;
    }
    // Parameters on the media type are fine.
    let res = send(
        app.client
            .post(app.url(MCP))
            .header("x-api-key", &c.key)
            .header("content-type", "application/json; charset=utf-8")
            .body(initialize_body(MODERN).to_string()),
    )
    .await;
    assert_eq!(res.status().as_u16(), 200);

    // Accept: JSON must be acceptable; absent or */* is fine.
    for accept in [
        "text/html",
        "text/event-stream",
        "application/xml, text/html",
    ] {
        let res = send(
            app.client
                .post(app.url(MCP))
                .header("x-api-key", &c.key)
                .header("content-type", "application/json")
                .header("accept", accept)
                .body(initialize_body(MODERN).to_string()),
        )
        .await;
        assert!(header(&res, "mcp-session-id").is_none(), "{accept}");
        assert_rpc_refusal(res, 406, -32000).await;
    }
    for accept in [
        None,
        Some("*/*"),
        Some("application/json"),
        Some("application/*"),
        Some("text/html, application/json;q=0.9"),
    ] {
        let mut req = app
            .client
            .post(app.url(MCP))
            .header("x-api-key", &c.key)
            .header("content-type", "application/json")
            .body(initialize_body(MODERN).to_string());
        if let Some(a) = accept {
            req = req.header("accept", a);
        }
        let res = send(req).await;
        assert!(header(&res, "mcp-session-id").is_some(), "{accept:?}");
        assert_eq!(json_of(res, 200).await["result"]["protocolVersion"], MODERN);
    }

    // The session survived all of this.
    sess.request("ping", json!({})).await;
}

#[tokio::test]
async fn foreign_origins_are_refused_with_403() {
    let app = TestApp::full_env(&[
        ("MCP_SERVER_ENABLED", "true"),
        ("CORS_ORIGINS", "https://app.kultiva.test"),
    ])
    .await;
    let c = caller(&app, "origin").await;
    let sess = open(&app, &c.key, MODERN).await;
    for origin in [
        "https://evil.example",
        "null",
        "http://localhost:3000",
        "https://app.kultiva.test.evil.example",
    ] {
        let res = send(
            sess.req()
                .header("origin", origin)
                .body(initialize_body(MODERN).to_string()),
        )
        .await;
        assert!(header(&res, "mcp-session-id").is_none(), "{origin}");
        assert_rpc_refusal(res, 403, -32000).await;
        let res = send(
            sess.req().header("origin", origin).body(
                json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                             "params": {"name": "list_tenants", "arguments": {}}})
                .to_string(),
            ),
        )
        .await;
        assert_rpc_refusal(res, 403, -32000).await;
        // A foreign page cannot end the session either.
        let res = send(
            mcp_req(&app, Method::DELETE, MCP, &c.key)
                .header("mcp-session-id", &sess.id)
                .header("origin", origin),
        )
        .await;
        assert_rpc_refusal(res, 403, -32000).await;
    }
    // The allowed origin passes; the session is intact.
    let res = send(
        sess.req()
            .header("origin", "https://app.kultiva.test")
            .body(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string()),
    )
    .await;
    assert_eq!(json_of(res, 200).await["result"], json!({}));
    // Nothing ran: no audit row.
    audit_barrier(&app, c.account).await;
    assert_eq!(audit_count(&app, c.account).await, 0);
}

#[tokio::test]
async fn oversized_bodies_are_refused_with_413() {
    let app =
        TestApp::full_env(&[("MCP_SERVER_ENABLED", "true"), ("MAX_BODY_BYTES", "2048")]).await;
    let c = caller(&app, "big").await;
    let sess = open(&app, &c.key, MODERN).await;
    let padding = "p".repeat(4000);
    let mut init = initialize_body(MODERN);
    init["params"]["clientInfo"]["padding"] = json!(padding);
    let res = post_mcp(&app, MCP, &c.key, None, &init).await;
    assert!(header(&res, "mcp-session-id").is_none());
    assert_error(res, 413, "PAYLOAD_TOO_LARGE").await;
    // Sent in chunks without Content-Length, the size is only known while reading: the
    // transport's own limit answers, in JSON-RPC form.
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> = init
        .to_string()
        .into_bytes()
        .chunks(512)
        .map(|c| Ok(c.to_vec()))
        .collect();
    let res = send(
        mcp_req(&app, Method::POST, MCP, &c.key).body(reqwest::Body::wrap_stream(
            futures_util::stream::iter(chunks),
        )),
    )
    .await;
    assert!(header(&res, "mcp-session-id").is_none());
    assert_eq!(res.status().as_u16(), 413);
    let body: Value = res.json().await.expect("JSON body");
    assert!(
        body["error"]["code"] == -32000 || body["error_code"] == "PAYLOAD_TOO_LARGE",
        "{body}"
    );
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": "get_mcp_activity", "arguments": {"padding": padding}}});
    let res = sess.post(&call).await;
    assert_eq!(res.status().as_u16(), 413);
    let res = send(
        mcp_req(
            &app,
            Method::POST,
            "/api/v1/mcp/tools/get_mcp_activity",
            &c.key,
        )
        .body(json!({"padding": padding}).to_string()),
    )
    .await;
    assert_eq!(res.status().as_u16(), 413);
    // Nothing ran; a body under the limit still works.
    audit_barrier(&app, c.account).await;
    assert_eq!(audit_count(&app, c.account).await, 0);
    let result = sess.call("list_tenants", json!({})).await;
    assert_eq!(result["isError"], false);
}

#[tokio::test]
async fn malformed_tools_call_envelopes_are_invalid_params_and_run_nothing() {
    let app = enabled().await;
    let c = caller(&app, "envelope").await;
    let sess = open(&app, &c.key, MODERN).await;
    for params in [
        json!({}),
        json!({"arguments": {}}),
        json!({"name": 7, "arguments": {}}),
        json!({"name": null}),
        json!({"name": "list_tenants", "arguments": []}),
        json!({"name": "list_tenants", "arguments": "tenant=x"}),
        json!({"name": "list_tenants", "arguments": 1}),
        json!([]),
    ] {
        let body = sess.request("tools/call", params.clone()).await;
        assert_eq!(body["error"]["code"], -32602, "{params}: {body}");
        assert!(body.get("result").is_none());
    }
    let res = sess
        .post(&json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call"}))
        .await;
    assert_eq!(json_of(res, 200).await["error"]["code"], -32602);
    audit_barrier(&app, c.account).await;
    assert_eq!(
        audit_count(&app, c.account).await,
        0,
        "no call reached the dispatcher"
    );
}

#[tokio::test]
async fn tool_failures_are_results_with_stable_error_codes() {
    let app = enabled().await;
    let c = caller(&app, "toolerr").await;
    let sess = open(&app, &c.key, MODERN).await;

    // Unknown tools: a not_found result, never a JSON-RPC error.
    for name in [
        "no_such_tool",
        "",
        "LIST_TENANTS",
        "list_tenants\u{0}",
        &"x".repeat(500),
    ] {
        let result = sess.call(name, json!({})).await;
        let err = tool_error(&result);
        assert_eq!(err["error_code"], "not_found", "{name:?}: {result}");
        assert!(err["message"].is_string());
    }

    // get_mcp_activity: wrong type, out of bounds, unknown argument, each with its field.
    for (args, fields, codes) in [
        (json!({"limit": "ten"}), vec!["limit"], vec!["type_error"]),
        (json!({"limit": 2.5}), vec!["limit"], vec!["type_error"]),
        (json!({"limit": 0}), vec!["limit"], vec!["out_of_range"]),
        (json!({"limit": 201}), vec!["limit"], vec!["out_of_range"]),
        (json!({"offset": -1}), vec!["offset"], vec!["out_of_range"]),
        (json!({"offset": 1e300}), vec!["offset"], vec!["type_error"]),
        (json!({"bogus": 1}), vec!["bogus"], vec!["extra_forbidden"]),
        (json!({"tenant": 5}), vec!["tenant"], vec!["type_error"]),
        (
            json!({"tenant": ""}),
            vec!["tenant"],
            vec!["string_too_short"],
        ),
        (
            json!({"tenant": "a\u{7}b"}),
            vec!["tenant"],
            vec!["value_error"],
        ),
        (
            json!({"dry_run": true}),
            vec!["dry_run"],
            vec!["extra_forbidden"],
        ),
        (
            json!({"limit": "ten", "offset": -1, "bogus": 1}),
            vec!["bogus", "offset", "limit"],
            vec!["extra_forbidden", "out_of_range", "type_error"],
        ),
    ] {
        let result = sess.call("get_mcp_activity", args.clone()).await;
        let err = tool_error(&result);
        assert_eq!(err["error_code"], "validation.error", "{args}: {result}");
        let details = err["details"].as_array().expect("details");
        let got_fields: Vec<&str> = details.iter().filter_map(|d| d["field"].as_str()).collect();
        let got_codes: Vec<&str> = details.iter().filter_map(|d| d["code"].as_str()).collect();
        assert_eq!(got_fields, fields, "{args}");
        assert_eq!(got_codes, codes, "{args}");
        assert!(
            details
                .iter()
                .all(|d| d["reason"].as_str().is_some_and(|r| !r.is_empty()))
        );
    }
    // Valid bounds pass.
    let result = sess
        .call("get_mcp_activity", json!({"limit": 200.0, "offset": 0}))
        .await;
    assert_eq!(result["isError"], false, "{result}");
    // null is no value of any argument: refused, naming the argument and an example.
    let result = sess
        .call("get_mcp_activity", json!({"limit": 200, "tenant": null}))
        .await;
    assert_eq!(result["isError"], true, "{result}");
    let detail = &result["structuredContent"]["details"][0];
    assert_eq!(detail["field"], "tenant", "{result}");
    assert!(
        detail["expected"].is_string() && detail["example"].is_string(),
        "{result}"
    );

    // Every one of these calls is audited; hostile tool names are stored bounded and printable.
    wait_for_audit(&app, c.account, 5 + 12 + 2).await;
    let unknown: Vec<String> = sqlx::query_scalar(
        "SELECT tool_name FROM platform.mcp_audit_log
         WHERE account_id = $1 AND error_class = 'not_found' ORDER BY created_at, id",
    )
    .bind(c.account)
    .fetch_all(app.state.platform_pool())
    .await
    .expect("rows");
    assert_eq!(
        unknown,
        [
            "no_such_tool".to_owned(),
            "(empty)".into(),
            "LIST_TENANTS".into(),
            "list_tenants".into(),
            "x".repeat(100)
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// Revision-dependent shapes
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn old_revisions_get_no_output_schema_title_or_structured_content() {
    let app = enabled().await;
    let c = caller(&app, "old").await;
    let slug = personal_slug(&app, c.account).await;
    for version in ["2024-11-05", "2025-03-26"] {
        let sess = open(&app, &c.key, version).await;
        assert_eq!(sess.version, version);
        let tools = sess.tools().await;
        let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
        assert_eq!(names, registered());
        for tool in &tools {
            assert!(tool.get("outputSchema").is_none(), "{version}: {tool}");
            assert!(tool.get("title").is_none(), "{version}: {tool}");
            assert_eq!(tool["inputSchema"]["type"], "object");
            assert!(tool["description"].is_string());
        }

        // Success: the envelope is the text block's JSON.
        let result = sess.call("list_tenants", json!({})).await;
        assert_eq!(result["isError"], false, "{result}");
        let env = text_envelope(&result);
        assert!(env["summary"].is_string(), "{env}");
        assert_eq!(env["data"]["total"], 1);
        assert_eq!(env["data"]["items"][0]["slug"], slug.as_str());
        assert!(env["links"].is_array());

        // Errors: the error record is the text block's JSON.
        let result = sess.call("no_such_tool", json!({})).await;
        assert_eq!(result["isError"], true, "{result}");
        let env = text_envelope(&result);
        assert_eq!(env["error_code"], "not_found");
        assert!(env["message"].is_string());
        let result = sess.call("get_mcp_activity", json!({"limit": 0})).await;
        assert_eq!(result["isError"], true);
        let env = text_envelope(&result);
        assert_eq!(env["error_code"], "validation.error");
        assert_eq!(env["details"][0]["field"], "limit");
    }
}

#[tokio::test]
async fn modern_revisions_declare_output_schema_and_every_result_conforms() {
    let app = enabled().await;
    let c = caller(&app, "modern").await;
    let slug = personal_slug(&app, c.account).await;
    let stranger = app.tenant("strange").await;
    for version in ["2025-06-18", "2025-11-25"] {
        let sess = open(&app, &c.key, version).await;
        let tools = sess.tools().await;
        assert_eq!(tools.len(), registered().len());
        for tool in &tools {
            assert!(
                tool["title"].as_str().is_some_and(|t| !t.is_empty()),
                "{tool}"
            );
            assert_eq!(tool["outputSchema"]["type"], "object", "{tool}");
            assert_eq!(tool["inputSchema"]["additionalProperties"], false);
            assert!(tool["inputSchema"]["properties"]["tenant"].is_object());
            let read_only = kultiva::mcp::registry::find(tool["name"].as_str().unwrap_or(""))
                .is_some_and(|t| !t.writes());
            assert_eq!(tool["annotations"]["readOnlyHint"], read_only, "{tool}");
        }
        let schema = tools[0]["outputSchema"].clone();

        let ok = sess.call("list_tenants", json!({})).await;
        assert_eq!(ok["isError"], false);
        assert_eq!(
            ok["structuredContent"]["data"]["items"][0]["slug"],
            slug.as_str()
        );
        assert!(
            ok["content"][0]["text"]
                .as_str()
                .is_some_and(|t| !t.is_empty())
        );
        conforms(&schema, &ok["structuredContent"]).expect("success conforms");

        for (name, args, code) in [
            ("no_such_tool", json!({}), "not_found"),
            (
                "get_mcp_activity",
                json!({"limit": "x", "extra": 1}),
                "validation.error",
            ),
            (
                "list_tenants",
                json!({"tenant": stranger.slug.as_str()}),
                "not_found",
            ),
            (
                "list_tenants",
                json!({"tenant": "no-such-garden"}),
                "not_found",
            ),
        ] {
            let result = sess.call(name, args).await;
            let err = tool_error(&result);
            assert_eq!(err["error_code"], code, "{result}");
            assert!(err["message"].is_string(), "{result}");
            conforms(&schema, err).unwrap_or_else(|e| panic!("{version} {name}: {e}: {err}"));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Deprecated alias and REST face
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn the_rpc_alias_works_like_mcp_and_says_it_is_deprecated() {
    let app = enabled().await;
    let c = caller(&app, "alias").await;
    let res = post_mcp(&app, RPC_ALIAS, &c.key, None, &initialize_body(MODERN)).await;
    assert_eq!(header(&res, "deprecation").as_deref(), Some("true"));
    let link = header(&res, "link").expect("Link");
    assert!(
        link.contains("</api/v1/mcp>") && link.contains("successor-version"),
        "{link}"
    );
    let id = header(&res, "mcp-session-id").expect("session");
    assert_eq!(json_of(res, 200).await["result"]["protocolVersion"], MODERN);

    let sess = Sess {
        app: &app,
        key: c.key.clone(),
        id: id.clone(),
        version: MODERN.into(),
        path: RPC_ALIAS,
    };
    let res = sess
        .post(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    assert_eq!(header(&res, "deprecation").as_deref(), Some("true"));
    assert!(header(&res, "link").is_some());
    assert_eq!(
        json_of(res, 200).await["result"]["tools"]
            .as_array()
            .map(Vec::len),
        Some(registered().len())
    );
    let result = sess.call("list_tenants", json!({})).await;
    assert_eq!(result["isError"], false);
    // One session store for both paths.
    let main = Sess { path: MCP, ..sess };
    main.request("ping", json!({})).await;
    // Refusals on the alias carry the headers as well; the rules are the same.
    let res = post_mcp(
        &app,
        RPC_ALIAS,
        &c.key,
        None,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
    )
    .await;
    assert_eq!(header(&res, "deprecation").as_deref(), Some("true"));
    assert_rpc_refusal(res, 400, -32600).await;
    let res = send(mcp_req(&app, Method::POST, RPC_ALIAS, &c.key).body("{")).await;
    assert_rpc_refusal(res, 400, -32700).await;
    let res = send(mcp_req(&app, Method::GET, RPC_ALIAS, &c.key)).await;
    assert!(res.status().is_client_error(), "the alias takes POST only");
}

#[tokio::test]
async fn rest_face_lists_tools_with_tenants_and_maps_errors_to_statuses() {
    let app = enabled().await;
    let c = caller(&app, "restface").await;
    let slug = personal_slug(&app, c.account).await;
    let shared = app.tenant("shared").await;
    app.add_member(&shared, c.account, Role::Viewer).await;

    let res = send(mcp_req(&app, Method::GET, "/api/v1/mcp/tools", &c.key)).await;
    let body = json_of(res, 200).await;
    let tools = body["tools"].as_array().expect("tools");
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, registered());
    for tool in tools {
        let permission = kultiva::mcp::registry::find(tool["name"].as_str().unwrap_or(""))
            .map(|t| t.permission.as_str());
        assert_eq!(tool["permission"].as_str(), permission, "{tool}");
        assert_eq!(tool["input_schema"]["type"], "object");
        assert_eq!(tool["input_schema"]["additionalProperties"], false);
        assert!(tool["title"].is_string() && tool["description"].is_string());
    }
    assert_eq!(
        tools[1]["input_schema"]["properties"]["limit"]["maximum"],
        200
    );
    let mut tenants: Vec<(String, String)> = body["tenants"]
        .as_array()
        .expect("tenants")
        .iter()
        .map(|t| {
            (
                t["slug"].as_str().unwrap_or("").to_owned(),
                t["role"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    tenants.sort();
    let mut expected = vec![
        (slug.clone(), "admin".to_owned()),
        (shared.slug.as_str().to_owned(), "viewer".to_owned()),
    ];
    expected.sort();
    assert_eq!(tenants, expected);
    let viewer = body["tenants"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["slug"] == shared.slug.as_str()))
        .expect("shared garden");
    assert_eq!(viewer["mcp_permissions"], json!(["mcp.read"]));

    // A call: the envelope as the body.
    let res =
        send(mcp_req(&app, Method::POST, "/api/v1/mcp/tools/list_tenants", &c.key).body("{}"))
            .await;
    let env = json_of(res, 200).await;
    assert_eq!(env["data"]["total"], 2);
    assert!(env["summary"].is_string() && env["links"].is_array());

    // Errors: the error record with the tool's code.
    let res =
        send(mcp_req(&app, Method::POST, "/api/v1/mcp/tools/no_such_tool", &c.key).body("{}"))
            .await;
    assert_error(res, 404, "not_found").await;
    let res = send(
        mcp_req(&app, Method::POST, "/api/v1/mcp/tools/list_tenants", &c.key)
            .body(json!({"tenant": "no-such-garden"}).to_string()),
    )
    .await;
    assert_error(res, 404, "not_found").await;
    let res = send(
        mcp_req(
            &app,
            Method::POST,
            "/api/v1/mcp/tools/get_mcp_activity",
            &c.key,
        )
        .body(json!({"limit": 0, "nope": true}).to_string()),
    )
    .await;
    let err = assert_error(res, 422, "validation.error").await;
    assert_eq!(detail_fields(&err), ["nope", "limit"]);
    for raw in ["{", "not json", ""] {
        let res =
            send(mcp_req(&app, Method::POST, "/api/v1/mcp/tools/list_tenants", &c.key).body(raw))
                .await;
        assert_error(res, 400, "MALFORMED_REQUEST").await;
    }
    let res =
        send(mcp_req(&app, Method::POST, "/api/v1/mcp/tools/list_tenants", &c.key).body("[]"))
            .await;
    assert_eq!(res.status().as_u16(), 422);
    for ctype in ["text/plain", "application/x-www-form-urlencoded"] {
        let res = send(
            app.client
                .post(app.url("/api/v1/mcp/tools/list_tenants"))
                .header("x-api-key", &c.key)
                .header("content-type", ctype)
                .body("{}"),
        )
        .await;
        assert_error(res, 415, "UNSUPPORTED_MEDIA_TYPE").await;
    }
    // Exactly the three calls that reached a tool (two not_found, one validation) plus the
    // success are audited; the malformed bodies are not.
    audit_barrier(&app, c.account).await;
    assert_eq!(audit_count(&app, c.account).await, 4);
}

// ---------------------------------------------------------------------------------------------
// Tenant binding
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn foreign_gardens_are_not_found_never_denied() {
    let app = enabled().await;
    let c = caller(&app, "bind").await;
    let own = personal_slug(&app, c.account).await;
    let foreign = app.tenant("foreign").await;
    // The foreign garden has a member, so it is a real, active garden.
    let _owner = app.member(&foreign, Role::Admin).await;
    let sess = open(&app, &c.key, MODERN).await;
    for tenant in [
        foreign.slug.as_str(),
        "no-such-garden-anywhere",
        "../etc",
        "UPPER",
    ] {
        for tool in ["list_tenants", "get_mcp_activity"] {
            let result = sess.call(tool, json!({"tenant": tenant})).await;
            let err = tool_error(&result);
            assert_eq!(err["error_code"], "not_found", "{tool} {tenant}: {result}");
        }
    }
    // The own garden binds; whitespace around the slug is trimmed.
    for tenant in [own.clone(), format!(" {own} ")] {
        let result = sess.call("list_tenants", json!({"tenant": tenant})).await;
        assert_eq!(result["isError"], false, "{result}");
    }
    // The message does not tell a foreign garden from a missing one.
    let a = sess
        .call("list_tenants", json!({"tenant": foreign.slug.as_str()}))
        .await;
    let b = sess
        .call("list_tenants", json!({"tenant": "no-such-garden-anywhere"}))
        .await;
    assert_eq!(a["structuredContent"], b["structuredContent"]);
}

#[tokio::test]
async fn a_scoped_key_sees_and_binds_only_its_garden() {
    let app = enabled().await;
    let c = caller(&app, "scope").await;
    let own = personal_slug(&app, c.account).await;
    let garden_b = app.tenant("gardenb").await;
    app.add_member(&garden_b, c.account, Role::Grower).await;
    let (scoped, _) = new_key(&app, &c.user, Some(garden_b.slug.as_str())).await;

    // Unscoped: both gardens.
    let sess = open(&app, &c.key, MODERN).await;
    let env = sess.call("list_tenants", json!({})).await["structuredContent"].clone();
    assert_eq!(env["data"]["total"], 2, "{env}");

    // Scoped to B: only B, in the tool and in the listing.
    let sess = open(&app, &scoped, MODERN).await;
    let env = sess.call("list_tenants", json!({})).await["structuredContent"].clone();
    assert_eq!(env["data"]["total"], 1, "{env}");
    assert_eq!(env["data"]["items"][0]["slug"], garden_b.slug.as_str());
    assert_eq!(env["data"]["items"][0]["role"], "grower");
    assert_eq!(
        env["data"]["items"][0]["mcp_permissions"],
        json!(["mcp.read", "mcp.write"])
    );
    let res = send(mcp_req(&app, Method::GET, "/api/v1/mcp/tools", &scoped)).await;
    let body = json_of(res, 200).await;
    let slugs: Vec<&str> = body["tenants"]
        .as_array()
        .expect("tenants")
        .iter()
        .filter_map(|t| t["slug"].as_str())
        .collect();
    assert_eq!(slugs, [garden_b.slug.as_str()]);

    // The key of garden B naming the account's other garden A: not_found, on both faces.
    let result = sess.call("list_tenants", json!({"tenant": own})).await;
    assert_eq!(tool_error(&result)["error_code"], "not_found", "{result}");
    let result = sess.call("get_mcp_activity", json!({"tenant": own})).await;
    assert_eq!(tool_error(&result)["error_code"], "not_found", "{result}");
    let res = send(
        mcp_req(
            &app,
            Method::POST,
            "/api/v1/mcp/tools/list_tenants",
            &scoped,
        )
        .body(json!({"tenant": own}).to_string()),
    )
    .await;
    assert_error(res, 404, "not_found").await;
    let result = sess
        .call("list_tenants", json!({"tenant": garden_b.slug.as_str()}))
        .await;
    assert_eq!(result["isError"], false);

    // A member of B only (its own key) naming A: not_found as well.
    let b_only = app.member(&garden_b, Role::Admin).await;
    let b_only = with_key(&app, b_only).await;
    let s = open(&app, &b_only.key, MODERN).await;
    let result = s.call("list_tenants", json!({"tenant": own})).await;
    assert_eq!(tool_error(&result)["error_code"], "not_found");
}

#[tokio::test]
async fn an_account_without_membership_is_denied_and_audited_as_denied() {
    let app = enabled().await;
    let c = caller(&app, "nomember").await;
    let personal =
        kultiva::directory::memberships::repo::tenants_of(app.state.platform_pool(), c.account)
            .await
            .expect("tenants");
    for (tenant, _) in &personal {
        kultiva::directory::memberships::repo::remove(
            app.state.platform_pool(),
            tenant.id,
            c.account,
        )
        .await
        .expect("remove membership");
    }
    let slug = personal[0].0.slug.as_str().to_owned();

    let sess = open(&app, &c.key, MODERN).await;
    assert!(sess.tools().await.is_empty(), "no garden, no tools");
    let res = send(mcp_req(&app, Method::GET, "/api/v1/mcp/tools", &c.key)).await;
    let body = json_of(res, 200).await;
    assert_eq!(body, json!({"tools": [], "tenants": []}));

    let result = sess.call("list_tenants", json!({})).await;
    let err = tool_error(&result);
    assert_eq!(err["error_code"], "permission.denied", "{result}");
    let res =
        send(mcp_req(&app, Method::POST, "/api/v1/mcp/tools/list_tenants", &c.key).body("{}"))
            .await;
    assert_error(res, 403, "permission.denied").await;
    // Naming the former garden: it is no longer visible at all.
    let result = sess.call("list_tenants", json!({"tenant": slug})).await;
    assert_eq!(tool_error(&result)["error_code"], "not_found");

    wait_for_audit(&app, c.account, 3).await;
    let rows: Vec<(String, String, Option<String>)> = sqlx::query_as(
        "SELECT tool_name, status, error_class FROM platform.mcp_audit_log
         WHERE account_id = $1 ORDER BY created_at, id",
    )
    .bind(c.account)
    .fetch_all(app.state.platform_pool())
    .await
    .expect("rows");
    assert_eq!(
        rows,
        [
            (
                "list_tenants".into(),
                "denied".into(),
                Some("permission.denied".into())
            ),
            (
                "list_tenants".into(),
                "denied".into(),
                Some("permission.denied".into())
            ),
            (
                "list_tenants".into(),
                "error".into(),
                Some("not_found".into())
            ),
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// Audit
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn every_call_is_audited_hashed_newest_first_and_only_for_its_account() {
    let app = enabled().await;
    let c = caller(&app, "audit").await;
    let other = caller(&app, "audit-other").await;
    let marker = format!("zz-secret-marker-{}", Uuid::new_v4().simple());
    let sess = open(&app, &c.key, MODERN).await;

    // A success, a validation error, an unknown tool and a tenant that is not found.
    let ok = sess
        .call("get_mcp_activity", json!({"offset": 0, "limit": 3}))
        .await;
    assert_eq!(ok["isError"], false);
    let invalid = sess
        .call("get_mcp_activity", json!({"limit": 0, "note": marker}))
        .await;
    assert_eq!(tool_error(&invalid)["error_code"], "validation.error");
    let unknown = sess.call("no_such_tool", json!({"q": marker})).await;
    assert_eq!(tool_error(&unknown)["error_code"], "not_found");
    let missing = sess.call("list_tenants", json!({"tenant": marker})).await;
    assert_eq!(tool_error(&missing)["error_code"], "not_found");
    wait_for_audit(&app, c.account, 4).await;

    // Canonical JSON: keys sorted, no whitespace.
    let expected = [
        (
            "list_tenants",
            "error",
            Some("not_found"),
            format!("{{\"tenant\":\"{marker}\"}}"),
        ),
        (
            "no_such_tool",
            "error",
            Some("not_found"),
            format!("{{\"q\":\"{marker}\"}}"),
        ),
        (
            "get_mcp_activity",
            "error",
            Some("validation.error"),
            format!("{{\"limit\":0,\"note\":\"{marker}\"}}"),
        ),
        (
            "get_mcp_activity",
            "ok",
            None,
            "{\"limit\":3,\"offset\":0}".to_owned(),
        ),
    ];
    let check = |items: &[Value]| {
        assert_eq!(items.len(), expected.len(), "{items:?}");
        for (item, (tool, status, class, args)) in items.iter().zip(&expected) {
            assert_eq!(item["tool_name"], *tool, "{item}");
            assert_eq!(item["status"], *status, "{item}");
            assert_eq!(item["error_class"], json!(class), "{item}");
            assert_eq!(item["input_hash"], sha256_hex(args), "{item} vs {args}");
            assert_eq!(item["tenant_slug"], Value::Null, "{item}");
            assert!(
                item["response_bytes"].as_i64().is_some_and(|n| n > 0),
                "{item}"
            );
            assert!(
                item["duration_ms"].as_i64().is_some_and(|n| n >= 0),
                "{item}"
            );
            assert!(
                !item.to_string().contains(&marker),
                "no argument text: {item}"
            );
        }
        let times: Vec<time::OffsetDateTime> = items
            .iter()
            .map(|i| {
                let at = i["created_at"].as_str().expect("created_at");
                time::OffsetDateTime::parse(at, &time::format_description::well_known::Rfc3339)
                    .expect("RFC 3339")
            })
            .collect();
        assert!(
            times.windows(2).all(|w| w[0] >= w[1]),
            "newest first: {times:?}"
        );
    };

    // Through the tool.
    let history = sess.call("get_mcp_activity", json!({})).await;
    assert_eq!(history["isError"], false);
    let data = &history["structuredContent"]["data"];
    assert_eq!(data["total"], 4);
    check(data["items"].as_array().expect("items"));
    wait_for_audit(&app, c.account, 5).await;

    // Through REST (any credential of the account: here the JWT); the history call itself is
    // now the newest row.
    let res = app
        .rest_auth(Some(&c.user.bearer()))
        .get("/api/v1/users/me/mcp-activity")
        .await;
    let body = json_of(res, 200).await;
    assert_eq!(body["total"], 5);
    let items = body["items"].as_array().expect("items");
    assert_eq!(items[0]["tool_name"], "get_mcp_activity");
    assert_eq!(items[0]["status"], "ok");
    assert_eq!(items[0]["input_hash"], sha256_hex("{}"));
    check(&items[1..]);
    let res = app
        .rest_auth(Some(&c.user.bearer()))
        .get("/api/v1/users/me/mcp-activity?skip=1&limit=2")
        .await;
    let page = json_of(res, 200).await;
    assert_eq!(page["items"].as_array().map(Vec::len), Some(2));
    assert_eq!(page["items"][0], items[1]);

    // The arguments themselves are nowhere in the table; the key that called is recorded.
    let leaked: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM platform.mcp_audit_log a WHERE a::text LIKE '%' || $1 || '%'",
    )
    .bind(&marker)
    .fetch_one(app.state.platform_pool())
    .await
    .expect("leak query");
    assert_eq!(leaked, 0);
    let keys: Vec<Option<Uuid>> = sqlx::query_scalar(
        "SELECT DISTINCT api_key_id FROM platform.mcp_audit_log WHERE account_id = $1",
    )
    .bind(c.account)
    .fetch_all(app.state.platform_pool())
    .await
    .expect("keys");
    assert_eq!(keys, [Some(Uuid::parse_str(&c.key_id).expect("uuid"))]);

    // Another account sees none of it, on either face.
    let res = app
        .rest_auth(Some(&other.user.bearer()))
        .get("/api/v1/users/me/mcp-activity")
        .await;
    assert_eq!(
        json_of(res, 200).await,
        json!({"items": [], "total": 0, "skip": 0, "limit": 100})
    );
    let s = open(&app, &other.key, MODERN).await;
    let theirs = s.call("get_mcp_activity", json!({})).await;
    assert_eq!(theirs["structuredContent"]["data"]["total"], 0);
    assert_eq!(theirs["structuredContent"]["data"]["items"], json!([]));
}

#[tokio::test]
async fn omitted_arguments_hash_like_an_empty_object_on_both_faces() {
    let app = enabled().await;
    let c = caller(&app, "nohash").await;
    let sess = open(&app, &c.key, MODERN).await;
    let res = sess
        .post(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "list_tenants"}}))
        .await;
    assert_eq!(json_of(res, 200).await["result"]["isError"], false);
    let res = sess
        .post(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                      "params": {"name": "list_tenants", "arguments": null}}))
        .await;
    assert_eq!(json_of(res, 200).await["result"]["isError"], false);
    let res =
        send(mcp_req(&app, Method::POST, "/api/v1/mcp/tools/list_tenants", &c.key).body("{}"))
            .await;
    assert_eq!(res.status().as_u16(), 200);
    wait_for_audit(&app, c.account, 3).await;
    let hashes: Vec<String> =
        sqlx::query_scalar("SELECT input_hash FROM platform.mcp_audit_log WHERE account_id = $1")
            .bind(c.account)
            .fetch_all(app.state.platform_pool())
            .await
            .expect("hashes");
    assert_eq!(hashes, vec![sha256_hex("{}"); 3]);
}

#[tokio::test]
async fn audit_purge_deletes_rows_past_the_90_day_retention() {
    let app = TestApp::spawn().await;
    let account = Uuid::new_v4();
    let pool = app.state.platform_pool();
    for (days, tool) in [(91, "old_call"), (89, "recent_call"), (0, "fresh_call")] {
        sqlx::query(
            "INSERT INTO platform.mcp_audit_log
               (account_id, tool_name, input_hash, response_bytes, duration_ms, status, created_at)
             VALUES ($1, $2, $3, 10, 1, 'ok', now() - make_interval(days => $4))",
        )
        .bind(account)
        .bind(tool)
        .bind(sha256_hex(tool))
        .bind(days)
        .execute(pool)
        .await
        .expect("insert audit row");
    }
    // Every test service's audit worker also purges (at start, then hourly), so another one
    // may have taken the old row first: what counts is that it is gone and the others stay.
    kultiva::state::audit::purge(pool).await.expect("purge");
    let left: Vec<String> = sqlx::query_scalar(
        "SELECT tool_name FROM platform.mcp_audit_log WHERE account_id = $1 ORDER BY created_at",
    )
    .bind(account)
    .fetch_all(pool)
    .await
    .expect("rows");
    assert_eq!(left, ["recent_call", "fresh_call"]);
    let stale: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM platform.mcp_audit_log WHERE created_at < now() - interval '90 days'",
    )
    .fetch_one(pool)
    .await
    .expect("count");
    assert_eq!(stale, 0);
}

#[tokio::test]
async fn an_account_keeps_at_most_its_session_cap_and_the_oldest_goes_first() {
    let app = TestApp::full_env(&[
        ("MCP_SERVER_ENABLED", "true"),
        ("MCP_SESSIONS_PER_ACCOUNT", "2"),
    ])
    .await;
    let a = caller(&app, "cap-a").await;
    let b = caller(&app, "cap-b").await;
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    let other = open(&app, &b.key, MODERN).await;
    let first = open(&app, &a.key, MODERN).await;
    let second = open(&app, &a.key, MODERN).await;
    json_of(first.post(&ping).await, 200).await;
    let third = open(&app, &a.key, MODERN).await;
    // The cache of this replica is told at once: the oldest session is gone now.
    assert_rpc_refusal(first.post(&ping).await, 404, -32001).await;
    for kept in [&second, &third, &other] {
        json_of(kept.post(&ping).await, 200).await;
    }
    // Ending one makes room: the next session evicts nobody.
    let res =
        send(mcp_req(&app, Method::DELETE, MCP, &a.key).header("mcp-session-id", &second.id)).await;
    assert_eq!(res.status().as_u16(), 204);
    let fourth = open(&app, &a.key, MODERN).await;
    for kept in [&third, &fourth, &other] {
        json_of(kept.post(&ping).await, 200).await;
    }
}
