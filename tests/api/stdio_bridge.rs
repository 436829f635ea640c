//! `kultiva mcp-stdio`: the built binary as a desktop client starts it (environment only, no
//! database), speaking newline-delimited JSON-RPC on stdin/stdout to a live test service.

use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use kultiva::auth::Role;
use kultiva::tenancy::registry::TenantRecord;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

use crate::support::TestApp;

const WAIT: Duration = Duration::from_secs(30);

struct Bridge {
    child: Child,
    stdin: Option<ChildStdin>,
    out: Lines<BufReader<ChildStdout>>,
}

impl Bridge {
    /// The bridge with exactly these variables (no DATABASE_URL, no REDIS_URL).
    fn spawn(vars: &[(&str, &str)]) -> Self {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_kultiva"));
        cmd.arg("mcp-stdio")
            .env_clear()
            .envs(vars.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = cmd.spawn().expect("bridge started");
        let stdin = child.stdin.take();
        let out = BufReader::new(child.stdout.take().expect("stdout")).lines();
        Self { child, stdin, out }
    }

    fn to(url: &str, key: &str) -> Self {
        Self::spawn(&[("KULTIVA_URL", url), ("KULTIVA_API_KEY", key)])
    }

    async fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes()).await.expect("write");
        stdin.write_all(b"\n").await.expect("write");
        stdin.flush().await.expect("flush");
    }

    async fn send(&mut self, message: Value) {
        self.send_line(&message.to_string()).await;
    }

    /// The next line on stdout, as JSON.
    async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(WAIT, self.out.next_line())
            .await
            .expect("an answer in time")
            .expect("stdout readable")
            .expect("a line, not end of output");
        serde_json::from_str(&line).unwrap_or_else(|_| panic!("stdout line is JSON: {line}"))
    }

    async fn request(&mut self, id: Value, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id.clone(), "method": method, "params": params}))
            .await;
        let answer = self.recv().await;
        assert_eq!(answer["jsonrpc"], "2.0", "{answer}");
        assert_eq!(answer["id"], id, "{answer}");
        answer
    }

    /// Closes stdin and waits for the exit: status, the rest of stdout, all of stderr.
    async fn finish(mut self) -> (ExitStatus, Vec<String>, String) {
        drop(self.stdin.take());
        let mut rest = Vec::new();
        while let Some(line) = tokio::time::timeout(WAIT, self.out.next_line())
            .await
            .expect("output ends in time")
            .expect("stdout readable")
        {
            rest.push(line);
        }
        let mut err = String::new();
        if let Some(mut stderr) = self.child.stderr.take() {
            stderr.read_to_string(&mut err).await.expect("stderr");
        }
        let status = tokio::time::timeout(WAIT, self.child.wait())
            .await
            .expect("exits in time")
            .expect("exit status");
        (status, rest, err)
    }
}

fn init_params() -> Value {
    json!({"protocolVersion": "2025-06-18", "capabilities": {},
           "clientInfo": {"name": "bridge-test", "version": "1"}})
}

/// A garden and an admin service-account key for it.
async fn garden_key(app: &TestApp) -> (TenantRecord, String) {
    let tenant = app.tenant("bridge").await;
    let (_, key) = kultiva::platform::service_accounts::service::create_in(
        &app.state,
        &tenant,
        "Desktop bridge",
        Role::Admin,
        Some(tenant.id),
    )
    .await
    .expect("service account");
    (tenant, key.raw_key.expect("raw key"))
}

/// The app's tool-server sessions in Redis.
async fn sessions(app: &TestApp) -> Vec<String> {
    // `<prefix>:mcp:session:{<id>}`; braces are not special in a KEYS pattern. On a cluster,
    // KEYS runs on every master and the answers are joined.
    let pattern = app.state.redis_key("mcp:session", "*", &[]);
    let mut conn = app.state.shared_redis().connection().await.expect("redis");
    redis::cmd("KEYS")
        .arg(pattern)
        .query_async(&mut conn)
        .await
        .expect("keys")
}

fn free_port_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    drop(listener);
    format!("http://127.0.0.1:{port}")
}

#[tokio::test]
async fn the_bridge_forwards_one_session_and_ends_it_at_eof() {
    let app = TestApp::full_env(&[("MCP_SERVER_ENABLED", "true")]).await;
    let (tenant, key) = garden_key(&app).await;
    // The base address is completed to /api/v1/mcp.
    let mut bridge = Bridge::to(&app.url(""), &key);

    let init = bridge.request(json!(1), "initialize", init_params()).await;
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18", "{init}");
    assert_eq!(init["result"]["serverInfo"]["name"], "kultiva");
    assert_eq!(sessions(&app).await.len(), 1, "one session");
    // A notification: accepted, nothing on stdout (the next line answers the next request).
    bridge
        .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;

    let listing = bridge.request(json!(2), "tools/list", json!({})).await;
    let tools: Vec<&str> = listing["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        tools.contains(&"list_tenants") && tools.contains(&"create_site"),
        "{tools:?}"
    );

    // A read tool and a write tool, through the same session.
    let read = bridge
        .request(
            json!("three"),
            "tools/call",
            json!({"name": "list_tenants", "arguments": {}}),
        )
        .await;
    assert_eq!(read["result"]["isError"], false, "{read}");
    assert_eq!(
        read["result"]["structuredContent"]["data"]["items"][0]["slug"],
        tenant.slug.as_str()
    );
    assert_eq!(app.site_count(&tenant).await, 0);
    let write = bridge
        .request(
            json!(4),
            "tools/call",
            json!({"name": "create_site", "arguments": {"name": "Bridge balcony", "kind": "balcony"}}),
        )
        .await;
    assert_eq!(write["result"]["isError"], false, "{write}");
    assert_eq!(app.site_count(&tenant).await, 1);
    // Session errors of the server come back as they are: an unknown method.
    let unknown = bridge.request(json!(5), "no/such/method", json!({})).await;
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    // A line that is not JSON: a parse error, and the bridge goes on.
    bridge.send_line("{not json").await;
    let parse = bridge.recv().await;
    assert_eq!(parse["error"]["code"], -32700, "{parse}");
    assert_eq!(parse["id"], Value::Null);
    assert_eq!(sessions(&app).await.len(), 1, "still the one session");

    // The server loses the session (idle expiry): the bridge renews it once, transparently.
    let lost = sessions(&app).await;
    let mut conn = app.state.shared_redis().connection().await.expect("redis");
    redis::cmd("DEL")
        .arg(&lost)
        .query_async::<()>(&mut conn)
        .await
        .expect("del");
    // The serving replica trusts its memory for up to 0.9 s.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let again = bridge.request(json!(6), "tools/list", json!({})).await;
    assert!(again["result"]["tools"].is_array(), "{again}");
    let renewed = sessions(&app).await;
    assert_eq!(renewed.len(), 1);
    assert_ne!(renewed, lost);

    // End of input: the session is ended (DELETE) and the bridge exits 0 with nothing more on
    // stdout.
    let (status, rest, stderr) = bridge.finish().await;
    assert!(status.success(), "{status}: {stderr}");
    assert!(rest.is_empty(), "{rest:?}");
    assert!(sessions(&app).await.is_empty(), "session ended: {stderr}");
    assert!(!stderr.contains(&key[4..]), "the key in the log: {stderr}");
}

#[tokio::test]
async fn a_network_failure_is_a_jsonrpc_error_with_the_request_id() {
    let url = free_port_url();
    let key = format!("svc_{}", "k".repeat(43));
    let mut bridge = Bridge::to(&url, &key);
    let init = bridge.request(json!(1), "initialize", init_params()).await;
    assert_eq!(init["error"]["code"], -32050, "{init}");
    assert!(
        init["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("cannot reach") && m.contains(&url)),
        "{init}"
    );
    // Notifications get no answer; the next request gets its own id back.
    bridge
        .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    let list = bridge.request(json!("x-2"), "tools/list", json!({})).await;
    assert_eq!(list["error"]["code"], -32050, "{list}");
    // A batch: one error per request of it.
    bridge
        .send(json!([
            {"jsonrpc": "2.0", "id": 7, "method": "ping"},
            {"jsonrpc": "2.0", "method": "notifications/progress"},
            {"jsonrpc": "2.0", "id": 8, "method": "ping"}
        ]))
        .await;
    let batch = bridge.recv().await;
    let ids: Vec<&Value> = batch
        .as_array()
        .expect("batch answer")
        .iter()
        .map(|e| &e["id"])
        .collect();
    assert_eq!(ids, [&json!(7), &json!(8)], "{batch}");
    let (status, rest, stderr) = bridge.finish().await;
    assert!(status.success(), "{status}: {stderr}");
    assert!(rest.is_empty(), "{rest:?}");
    assert!(stderr.contains("cannot reach"), "{stderr}");
    assert!(!stderr.contains(&key), "{stderr}");
}

#[tokio::test]
async fn refusals_of_the_server_are_jsonrpc_errors() {
    // A key the server does not know: 401.
    let app = TestApp::full_env(&[("MCP_SERVER_ENABLED", "true")]).await;
    let unknown = format!("svc_{}", "u".repeat(43));
    let mut bridge = Bridge::to(&format!("{}/api/v1/mcp", app.url("")), &unknown);
    let init = bridge.request(json!(1), "initialize", init_params()).await;
    assert_eq!(init["error"]["code"], -32051, "{init}");
    assert!(
        init["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("401") && m.contains("KULTIVA_API_KEY")),
        "{init}"
    );
    assert!(!init.to_string().contains(&unknown));
    let (status, _, stderr) = bridge.finish().await;
    assert!(status.success());
    assert!(!stderr.contains(&unknown), "{stderr}");

    // A server without the tool server: its 404 error record becomes -32052.
    let off = TestApp::full().await;
    let (_, key) = garden_key(&off).await;
    let mut bridge = Bridge::to(&off.url(""), &key);
    let init = bridge.request(json!(1), "initialize", init_params()).await;
    assert_eq!(init["error"]["code"], -32052, "{init}");
    assert_eq!(init["error"]["data"]["status"], 404, "{init}");
    let (status, _, _) = bridge.finish().await;
    assert!(status.success());

    // No session yet: the server's refusal carries the request's id.
    let (_, key) = garden_key(&app).await;
    let mut bridge = Bridge::to(&app.url(""), &key);
    let early = bridge.request(json!(3), "tools/list", json!({})).await;
    assert_eq!(early["error"]["code"], -32600, "{early}");
    let (status, _, _) = bridge.finish().await;
    assert!(status.success());
}

#[tokio::test]
async fn eof_before_anything_exits_cleanly() {
    let bridge = Bridge::to(&free_port_url(), &format!("svc_{}", "e".repeat(43)));
    let (status, rest, stderr) = bridge.finish().await;
    assert!(status.success(), "{status}: {stderr}");
    assert!(rest.is_empty());
}

#[tokio::test]
async fn a_missing_key_or_address_is_a_clear_exit_message() {
    for (vars, says) in [
        (
            vec![("KULTIVA_URL", "https://kultiva.example.com")],
            "KULTIVA_API_KEY is not set",
        ),
        (
            vec![(
                "KULTIVA_API_KEY",
                "svc_0123456789012345678901234567890123456789012",
            )],
            "KULTIVA_URL is not set",
        ),
        (
            vec![
                ("KULTIVA_URL", "kultiva.example.com"),
                (
                    "KULTIVA_API_KEY",
                    "svc_0123456789012345678901234567890123456789012",
                ),
            ],
            "KULTIVA_URL is not a valid URL",
        ),
        (
            vec![
                ("KULTIVA_URL", "https://kultiva.example.com"),
                ("KULTIVA_API_KEY", "password123-secret"),
            ],
            "does not look like a Kultiva API key",
        ),
    ] {
        let bridge = Bridge::spawn(&vars);
        let (status, rest, stderr) = bridge.finish().await;
        assert_eq!(status.code(), Some(1), "{vars:?}: {stderr}");
        assert!(rest.is_empty(), "nothing on stdout: {rest:?}");
        assert!(stderr.contains(says), "{vars:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
        assert!(!stderr.contains("password123-secret"), "{stderr}");
    }
    // The key is not an argument.
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_kultiva"))
        .args(["mcp-stdio", "--api-key", "svc_x"])
        .env_clear()
        .output()
        .await
        .expect("ran");
    assert_eq!(out.status.code(), Some(2));
}

#[tokio::test]
async fn a_bridge_that_cannot_start_answers_initialize_with_its_reason() {
    // A malformed key: the client's initialize gets a JSON-RPC error with the reason (desktop
    // clients show it), stderr has the same line, and the key appears in neither.
    let mut bridge = Bridge::spawn(&[
        ("KULTIVA_URL", "https://kultiva.example.com"),
        ("KULTIVA_API_KEY", "password123-secret"),
    ]);
    let answer = bridge.request(json!(1), "initialize", init_params()).await;
    assert_eq!(
        answer["error"]["code"],
        kultiva::mcp::stdio_bridge::STARTUP_FAILED,
        "{answer}"
    );
    let reason = answer["error"]["data"]["reason"].as_str().expect("reason");
    assert!(
        reason.contains("does not look like a Kultiva API key"),
        "{answer}"
    );
    assert!(
        answer["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains(reason)),
        "{answer}"
    );
    assert!(answer.get("result").is_none(), "{answer}");
    let ping = bridge.request(json!("p"), "ping", json!({})).await;
    assert_eq!(
        ping["error"]["code"],
        kultiva::mcp::stdio_bridge::STARTUP_FAILED
    );
    let (status, rest, stderr) = bridge.finish().await;
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(rest.is_empty(), "{rest:?}");
    assert!(stderr.contains(reason), "{stderr}");
    assert!(!stderr.contains("password123-secret"), "{stderr}");
    assert!(!answer.to_string().contains("password123-secret"));
}
