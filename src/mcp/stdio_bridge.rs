//! `kultiva mcp-stdio`: a stdio MCP server for desktop clients that forwards every JSON-RPC
//! message to a hosted Kultiva tool server over Streamable HTTP.
//!
//! - Configuration from the environment only (`KULTIVA_URL`, `KULTIVA_API_KEY`, optionally
//!   `KULTIVA_TIMEOUT_SECONDS`): a key in the arguments would be visible in the process list.
//!   No database, no Redis, no application state: the bridge runs on a desktop.
//! - One line on stdin is one message (a request, notification, response or batch); answers go
//!   to stdout, one line each, and nothing else does. Log lines go to stderr.
//! - One session: `initialize` mints it (`Mcp-Session-Id`), every later message carries it and
//!   the negotiated `MCP-Protocol-Version`. A session the server no longer knows (404, -32001,
//!   e.g. after a long idle time) is renewed once with the client's original `initialize`
//!   parameters, and the message is sent again.
//! - Notifications and client responses (the server answers 202) produce no output.
//! - Failures become JSON-RPC error responses with the request's id: [`NETWORK_ERROR`],
//!   [`UNAUTHORIZED`], [`HTTP_ERROR`], [`BAD_ANSWER`]; a line that is not JSON gets -32700.
//! - End of input: the bridge waits for the answers still under way, ends the session
//!   (`DELETE`) and exits 0.
//!
//! The API key travels only in the `X-API-Key` header (marked sensitive); it is never printed,
//! and transport errors are printed without their URL.

use std::io::{BufRead, Write};
use std::sync::Arc;
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue};
use serde_json::{Value, json};
use tokio::sync::Mutex;

pub const URL_VAR: &str = "KULTIVA_URL";
pub const KEY_VAR: &str = "KULTIVA_API_KEY";
pub const TIMEOUT_VAR: &str = "KULTIVA_TIMEOUT_SECONDS";
/// Seconds one HTTP exchange may take unless `KULTIVA_TIMEOUT_SECONDS` says otherwise.
pub const DEFAULT_TIMEOUT_SECONDS: u64 = 60;

/// The server could not be reached (connection refused, DNS, TLS, timeout, reset).
pub const NETWORK_ERROR: i64 = -32050;
/// The server refused the API key (HTTP 401).
pub const UNAUTHORIZED: i64 = -32051;
/// The server answered an HTTP error without a JSON-RPC body (404 while the tool server is
/// disabled, 429 rate limit, 5xx); `data` carries `status` and the error record's
/// `error_code`.
pub const HTTP_ERROR: i64 = -32052;
/// The answer was not JSON-RPC (not JSON, or an unexpected content type).
pub const BAD_ANSWER: i64 = -32053;
/// The bridge could not start (its configuration is missing or malformed): every request is
/// answered with this code and the reason, so the client shows why instead of "Connection
/// closed"; `data.reason` carries the same text as stderr (never the key).
pub const STARTUP_FAILED: i64 = -32054;
const PARSE_ERROR: i64 = -32700;
const SESSION_NOT_FOUND: i64 = -32001;

const SESSION_HEADER: &str = "mcp-session-id";
const VERSION_HEADER: &str = "mcp-protocol-version";
const API_KEY_HEADER: &str = "x-api-key";
const ENDPOINT_PATH: &str = "api/v1/mcp";

/// Where and how to forward.
pub struct BridgeConfig {
    endpoint: reqwest::Url,
    key: HeaderValue,
    timeout: Duration,
}

impl std::fmt::Debug for BridgeConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BridgeConfig")
            .field("endpoint", &shown(&self.endpoint))
            .field("key", &"<hidden>")
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl BridgeConfig {
    /// Reads `KULTIVA_URL`, `KULTIVA_API_KEY` and `KULTIVA_TIMEOUT_SECONDS`.
    pub fn from_env() -> Result<Self, String> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        Self::from_values(var(URL_VAR), var(KEY_VAR), var(TIMEOUT_VAR))
    }

    /// The configuration from raw values; the reasons never contain the key.
    pub fn from_values(
        url: Option<String>,
        key: Option<String>,
        timeout: Option<String>,
    ) -> Result<Self, String> {
        let url = url.ok_or_else(|| {
            format!(
                "{URL_VAR} is not set: the address of the Kultiva server, e.g. \
                 https://kultiva.example.com"
            )
        })?;
        let endpoint = endpoint(url.trim())?;
        let key = key.ok_or_else(|| {
            format!(
                "{KEY_VAR} is not set: the bridge reads the API key from the environment \
                 (never from arguments)"
            )
        })?;
        let key = key.trim();
        if crate::auth::api_keys::model::RawApiKey::parse(key).is_none() {
            return Err(format!(
                "{KEY_VAR} does not look like a Kultiva API key (svc_ followed by 43 characters)"
            ));
        }
        let mut key = HeaderValue::from_str(key)
            .map_err(|_| format!("{KEY_VAR} holds characters a header cannot carry"))?;
        key.set_sensitive(true);
        let timeout = match timeout {
            None => DEFAULT_TIMEOUT_SECONDS,
            Some(raw) => raw
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|s| (1..=3600).contains(s))
                .ok_or_else(|| format!("{TIMEOUT_VAR} must be a whole number from 1 to 3600"))?,
        };
        Ok(Self {
            endpoint,
            key,
            timeout: Duration::from_secs(timeout),
        })
    }

    /// The tool-server endpoint messages go to.
    pub fn endpoint(&self) -> &reqwest::Url {
        &self.endpoint
    }
}

/// `https://host` (or `https://host/prefix`) becomes `https://host/api/v1/mcp`; an address that
/// already ends with `/api/v1/mcp` is used as it is.
fn endpoint(raw: &str) -> Result<reqwest::Url, String> {
    let mut url = reqwest::Url::parse(raw).map_err(|e| {
        format!("{URL_VAR} is not a valid URL ({e}): e.g. https://kultiva.example.com")
    })?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(format!(
            "{URL_VAR} must be an http:// or https:// address with a host"
        ));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(format!(
            "{URL_VAR} must not carry credentials; the key goes in {KEY_VAR}"
        ));
    }
    url.set_query(None);
    url.set_fragment(None);
    let path = url.path().trim_matches('/').to_owned();
    if !(path == ENDPOINT_PATH || path.ends_with(&format!("/{ENDPOINT_PATH}"))) {
        let joined = if path.is_empty() {
            format!("/{ENDPOINT_PATH}")
        } else {
            format!("/{path}/{ENDPOINT_PATH}")
        };
        url.set_path(&joined);
    }
    Ok(url)
}

/// The address as logs show it (scheme, host, port, path; never credentials or a query).
fn shown(url: &reqwest::Url) -> String {
    let host = url.host_str().unwrap_or("?");
    match url.port() {
        Some(port) => format!("{}://{host}:{port}{}", url.scheme(), url.path()),
        None => format!("{}://{host}{}", url.scheme(), url.path()),
    }
}

fn log(line: impl std::fmt::Display) {
    eprintln!("kultiva mcp-stdio: {line}");
}

fn rpc_error(id: Value, code: i64, message: &str, data: Option<Value>) -> Value {
    let mut error = json!({"code": code, "message": message});
    if let Some(data) = data {
        error["data"] = data;
    }
    json!({"jsonrpc": "2.0", "id": id, "error": error})
}

/// A failed exchange, as the JSON-RPC error it becomes.
#[derive(Debug, Clone)]
struct Failure {
    code: i64,
    message: String,
    data: Option<Value>,
}

/// What one POST brought back.
enum Outcome {
    /// 202: a notification or response was taken; nothing to print.
    Accepted,
    /// JSON-RPC messages to print, and the session id the answer named.
    Messages(Vec<Value>, Option<String>),
    /// 404 with -32001: the server no longer knows the session.
    SessionGone,
    Failed(Failure),
}

#[derive(Debug, Default, Clone)]
struct Session {
    id: Option<String>,
    version: Option<String>,
    /// The client's `initialize` params, to renew an expired session with.
    init_params: Option<Value>,
}

struct Bridge {
    config: BridgeConfig,
    client: reqwest::Client,
    session: Mutex<Session>,
    /// Held while a lost session is renewed, so concurrent messages renew it once.
    renewing: Mutex<()>,
    out: std::sync::mpsc::Sender<String>,
}

/// The request ids in a message (one, several in a batch, none for notifications and
/// responses): who must get an answer when the exchange fails.
fn request_ids(message: &Value) -> Vec<Value> {
    let one = |m: &Value| -> Option<Value> {
        let obj = m.as_object()?;
        obj.get("method")?;
        obj.get("id").filter(|id| !id.is_null()).cloned()
    };
    match message {
        Value::Array(items) => items.iter().filter_map(one).collect(),
        other => one(other).into_iter().collect(),
    }
}

fn is_initialize(message: &Value) -> bool {
    message.get("method").and_then(Value::as_str) == Some("initialize")
        && message.get("id").is_some()
}

/// The JSON-RPC messages of an SSE body (`data:` lines of each event, joined).
fn sse_messages(body: &str) -> Result<Vec<Value>, String> {
    let mut messages = Vec::new();
    let mut data: Vec<&str> = Vec::new();
    let mut flush = |data: &mut Vec<&str>| -> Result<(), String> {
        if !data.is_empty() {
            let joined = data.join("\n");
            data.clear();
            if !joined.trim().is_empty() {
                let value = serde_json::from_str::<Value>(&joined)
                    .map_err(|_| "an event of the stream is not JSON".to_owned())?;
                messages.push(value);
            }
        }
        Ok(())
    };
    for line in body.lines() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.is_empty() {
            flush(&mut data)?;
        } else if let Some(rest) = line.strip_prefix("data:") {
            data.push(rest.strip_prefix(' ').unwrap_or(rest));
        }
    }
    flush(&mut data)?;
    Ok(messages)
}

fn looks_like_jsonrpc(value: &Value) -> bool {
    match value {
        Value::Object(o) => o.get("jsonrpc").and_then(Value::as_str) == Some("2.0"),
        Value::Array(items) => !items.is_empty() && items.iter().all(looks_like_jsonrpc),
        _ => false,
    }
}

/// A client for http and https: rustls with ring and the Mozilla roots (no system store needed).
fn build_client(timeout: Duration) -> Result<reqwest::Client, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS setup failed: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    reqwest::Client::builder()
        .use_preconfigured_tls(tls)
        .timeout(timeout)
        .connect_timeout(timeout.min(Duration::from_secs(15)))
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("kultiva-mcp-stdio/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| format!("cannot build the HTTP client: {}", e.without_url()))
}

impl Bridge {
    fn headers(&self, session: &Session) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(API_KEY_HEADER, self.config.key.clone());
        headers.insert(
            ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
        if let Some(id) = session
            .id
            .as_deref()
            .and_then(|v| HeaderValue::from_str(v).ok())
        {
            headers.insert(SESSION_HEADER, id);
        }
        if let Some(v) = session
            .version
            .as_deref()
            .and_then(|v| HeaderValue::from_str(v).ok())
        {
            headers.insert(VERSION_HEADER, v);
        }
        headers
    }

    fn network_failure(&self, err: &reqwest::Error) -> Failure {
        let what = if err.is_timeout() {
            format!("no answer within {} s", self.config.timeout.as_secs())
        } else if err.is_connect() {
            "connection failed".to_owned()
        } else {
            "the exchange failed".to_owned()
        };
        let mut detail = err.to_string();
        // reqwest's message names the URL; the endpoint is printed separately, without it.
        if let Some(url) = err.url() {
            detail = detail.replace(url.as_str(), "");
        }
        let mut source = std::error::Error::source(err);
        while let Some(inner) = source {
            detail = format!("{detail}: {inner}");
            source = inner.source();
        }
        Failure {
            code: NETWORK_ERROR,
            message: format!(
                "cannot reach the Kultiva server at {}: {what}",
                shown(&self.config.endpoint)
            ),
            data: Some(json!({"detail": detail.trim().trim_start_matches(['(', ')', ' '])})),
        }
    }

    /// POSTs one message (or batch) with the given session.
    async fn post(&self, message: &Value, session: &Session) -> Outcome {
        let body = message.to_string();
        let sent = self
            .client
            .post(self.config.endpoint.clone())
            .headers(self.headers(session))
            .header(CONTENT_TYPE, "application/json")
            .body(body)
            .send()
            .await;
        let res = match sent {
            Ok(res) => res,
            Err(err) => return Outcome::Failed(self.network_failure(&err.without_url())),
        };
        let status = res.status();
        let session_id = res
            .headers()
            .get(SESSION_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let content_type = res
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        if status == StatusCode::UNAUTHORIZED {
            return Outcome::Failed(Failure {
                code: UNAUTHORIZED,
                message: format!(
                    "the Kultiva server refused the API key (HTTP 401): check {KEY_VAR} \
                     (revoked, mistyped, or not an API key)"
                ),
                data: Some(json!({"status": 401})),
            });
        }
        let text = match res.text().await {
            Ok(text) => text,
            Err(err) => return Outcome::Failed(self.network_failure(&err.without_url())),
        };
        if status == StatusCode::ACCEPTED && text.trim().is_empty() {
            return Outcome::Accepted;
        }
        let parsed: Result<Vec<Value>, String> = if content_type.starts_with("text/event-stream") {
            sse_messages(&text)
        } else {
            serde_json::from_str::<Value>(&text)
                .map(|v| vec![v])
                .map_err(|_| "not JSON".to_owned())
        };
        match parsed {
            Ok(messages) if !messages.is_empty() && messages.iter().all(looks_like_jsonrpc) => {
                let gone = status == StatusCode::NOT_FOUND
                    && messages.len() == 1
                    && messages[0]["error"]["code"].as_i64() == Some(SESSION_NOT_FOUND);
                if gone {
                    Outcome::SessionGone
                } else {
                    Outcome::Messages(messages, session_id)
                }
            }
            Ok(messages) if status.is_success() && messages.is_empty() => Outcome::Accepted,
            Ok(messages) if !status.is_success() => {
                // An error record of the REST side (gate 404, 429, 503 …).
                let record = messages.first().cloned().unwrap_or(Value::Null);
                let code = record["error_code"].as_str().unwrap_or("").to_owned();
                let said = record["message"].as_str().unwrap_or("").to_owned();
                let mut message = format!("the Kultiva server answered HTTP {}", status.as_u16());
                if !code.is_empty() {
                    message.push_str(&format!(" {code}"));
                }
                if !said.is_empty() {
                    message.push_str(&format!(": {said}"));
                }
                if status == StatusCode::NOT_FOUND {
                    message.push_str(" (is the tool server enabled, MCP_SERVER_ENABLED=true?)");
                }
                Outcome::Failed(Failure {
                    code: HTTP_ERROR,
                    message,
                    data: Some(json!({"status": status.as_u16(), "error_code": code})),
                })
            }
            _ if !status.is_success() => Outcome::Failed(Failure {
                code: HTTP_ERROR,
                message: format!("the Kultiva server answered HTTP {}", status.as_u16()),
                data: Some(json!({"status": status.as_u16()})),
            }),
            _ => Outcome::Failed(Failure {
                code: BAD_ANSWER,
                message: format!(
                    "the answer of the Kultiva server is not JSON-RPC (HTTP {}, content type {:?})",
                    status.as_u16(),
                    content_type
                ),
                data: Some(json!({"status": status.as_u16()})),
            }),
        }
    }

    fn print(&self, value: &Value) {
        // The writer thread is gone only when stdout is; nothing to tell anyone then.
        let _ = self.out.send(value.to_string());
    }

    /// Prints the answers, or the failure for every request id of `message`.
    fn answer(&self, message: &Value, outcome: Outcome) {
        match outcome {
            Outcome::Accepted => {}
            Outcome::Messages(messages, _) => {
                let ids = request_ids(message);
                if ids.is_empty() {
                    // A notification or response the server refused: there is nobody to
                    // answer (a reply with id null would confuse the client).
                    for m in messages {
                        log(format!("the server refused a notification: {m}"));
                    }
                    return;
                }
                for mut m in messages {
                    // A transport refusal carries id null; the client matches answers by id.
                    if ids.len() == 1 && m.get("error").is_some() && m["id"].is_null() {
                        m["id"] = ids[0].clone();
                    }
                    self.print(&m);
                }
            }
            Outcome::SessionGone => self.answer(
                message,
                Outcome::Failed(Failure {
                    code: SESSION_NOT_FOUND,
                    message: "Session not found: initialize a new session".to_owned(),
                    data: None,
                }),
            ),
            Outcome::Failed(failure) => {
                log(&failure.message);
                let ids = request_ids(message);
                let errors: Vec<Value> = ids
                    .into_iter()
                    .map(|id| rpc_error(id, failure.code, &failure.message, failure.data.clone()))
                    .collect();
                match (message, errors.len()) {
                    (_, 0) => {}
                    (Value::Array(_), _) => self.print(&Value::Array(errors)),
                    (_, _) => {
                        for e in &errors {
                            self.print(e);
                        }
                    }
                }
            }
        }
    }

    /// `initialize`: a fresh session (any earlier one is replaced).
    async fn initialize(&self, message: &Value) {
        let outcome = self.post(message, &Session::default()).await;
        if let Outcome::Messages(messages, session_id) = &outcome {
            let version = messages
                .first()
                .and_then(|m| m["result"]["protocolVersion"].as_str())
                .map(str::to_owned);
            if let (Some(id), Some(version)) = (session_id, version) {
                let mut session = self.session.lock().await;
                *session = Session {
                    id: Some(id.clone()),
                    version: Some(version.clone()),
                    init_params: message.get("params").cloned(),
                };
                log(format!("session started (protocol {version})"));
            }
        }
        self.answer(message, outcome);
    }

    /// Renews a session the server lost, once for all messages that noticed; the failure (what
    /// the caller answers) when it cannot be renewed.
    async fn renew(&self, stale: &Session) -> Result<(), Failure> {
        let _one_at_a_time = self.renewing.lock().await;
        let current = self.session.lock().await.clone();
        if current.id != stale.id {
            return Ok(());
        }
        let Some(params) = current.init_params.clone() else {
            return Err(Failure {
                code: SESSION_NOT_FOUND,
                message: "Session not found: initialize a new session".to_owned(),
                data: None,
            });
        };
        let init = json!({"jsonrpc": "2.0", "id": "kultiva-mcp-stdio-renew", "method": "initialize", "params": params});
        match self.post(&init, &Session::default()).await {
            Outcome::Messages(messages, Some(id)) => {
                let Some(version) = messages
                    .first()
                    .and_then(|m| m["result"]["protocolVersion"].as_str())
                    .map(str::to_owned)
                else {
                    return Err(Failure {
                        code: BAD_ANSWER,
                        message: "renewing the session failed: the server refused initialize"
                            .to_owned(),
                        data: messages.first().map(|m| m["error"].clone()),
                    });
                };
                let renewed = Session {
                    id: Some(id),
                    version: Some(version),
                    init_params: Some(params),
                };
                // The server needs no `initialized` notification, but a well-behaved client
                // sends one; so does the bridge.
                let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
                let _ = self.post(&note, &renewed).await;
                *self.session.lock().await = renewed;
                log("the server had lost the session; a new one was started");
                Ok(())
            }
            Outcome::Failed(failure) => Err(failure),
            _ => Err(Failure {
                code: BAD_ANSWER,
                message: "renewing the session failed: no session id in the answer".to_owned(),
                data: None,
            }),
        }
    }

    async fn forward(&self, message: Value) {
        let session = self.session.lock().await.clone();
        let outcome = match self.post(&message, &session).await {
            Outcome::SessionGone if session.init_params.is_some() => {
                match self.renew(&session).await {
                    Ok(()) => {
                        let renewed = self.session.lock().await.clone();
                        self.post(&message, &renewed).await
                    }
                    Err(failure) => Outcome::Failed(failure),
                }
            }
            other => other,
        };
        self.answer(&message, outcome);
    }

    /// Ends the session (`DELETE`); failures are only logged.
    async fn close(&self) {
        let session = self.session.lock().await.clone();
        if session.id.is_none() {
            return;
        }
        let sent = self
            .client
            .delete(self.config.endpoint.clone())
            .headers(self.headers(&session))
            .timeout(Duration::from_secs(5).min(self.config.timeout))
            .send()
            .await;
        match sent {
            Ok(res) if res.status().is_success() => log("session ended"),
            Ok(res) => log(format!(
                "ending the session answered HTTP {}",
                res.status().as_u16()
            )),
            Err(err) => log(format!(
                "ending the session failed: {}",
                self.network_failure(&err.without_url()).message
            )),
        }
    }
}

/// A bridge that cannot start still speaks JSON-RPC until end of input: each request (also
/// inside a batch) gets a [`STARTUP_FAILED`] error naming `reason`; notifications and
/// responses get nothing. Desktop clients show an `initialize` error to the user, while a
/// process that exits at once reaches them only as "Connection closed".
pub fn refuse(reason: &str, input: impl BufRead, mut output: impl Write) {
    let message = format!("the Kultiva bridge could not start: {reason}");
    let refusal = |id: Value| {
        rpc_error(
            id,
            STARTUP_FAILED,
            &message,
            Some(json!({"reason": reason})),
        )
    };
    for line in input.split(b'\n') {
        let Ok(line) = line else { break };
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let answer = match serde_json::from_slice::<Value>(&line) {
            Err(_) => rpc_error(Value::Null, PARSE_ERROR, "Parse error", None),
            Ok(message) => {
                let ids = request_ids(&message);
                match message {
                    _ if ids.is_empty() => continue,
                    Value::Array(_) => Value::Array(ids.into_iter().map(refusal).collect()),
                    _ => ids.into_iter().next().map(refusal).unwrap_or(Value::Null),
                }
            }
        };
        if writeln!(output, "{answer}")
            .and_then(|()| output.flush())
            .is_err()
        {
            break;
        }
    }
}

/// Runs the bridge on this process's stdin and stdout until end of input.
pub async fn run(config: BridgeConfig) -> Result<(), String> {
    let client = build_client(config.timeout)?;
    if config.endpoint.scheme() == "http"
        && !matches!(
            config.endpoint.host_str(),
            Some("localhost" | "127.0.0.1" | "[::1]")
        )
    {
        log("warning: plain http: the API key travels unencrypted; use https");
    }
    log(format!("forwarding to {}", shown(&config.endpoint)));

    // stdout: one writer thread, one line per message, flushed at once.
    let (out, lines_out) = std::sync::mpsc::channel::<String>();
    let writer = std::thread::spawn(move || {
        let stdout = std::io::stdout();
        for line in lines_out {
            let mut lock = stdout.lock();
            if writeln!(lock, "{line}")
                .and_then(|()| lock.flush())
                .is_err()
            {
                break;
            }
        }
    });
    // stdin: a reader thread (blocking reads), one message per line.
    let (lines_in, mut incoming) = tokio::sync::mpsc::unbounded_channel::<Vec<u8>>();
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        let mut reader = stdin.lock();
        loop {
            let mut line = Vec::new();
            match reader.read_until(b'\n', &mut line) {
                Ok(0) => break,
                Ok(_) => {
                    if lines_in.send(line).is_err() {
                        break;
                    }
                }
                Err(err) => {
                    log(format!("reading stdin failed: {err}"));
                    break;
                }
            }
        }
    });

    let bridge = Arc::new(Bridge {
        config,
        client,
        session: Mutex::new(Session::default()),
        renewing: Mutex::new(()),
        out,
    });
    let mut running = tokio::task::JoinSet::new();
    while let Some(line) = incoming.recv().await {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let message = match serde_json::from_slice::<Value>(&line) {
            Ok(m) => m,
            Err(_) => {
                bridge.print(&rpc_error(Value::Null, PARSE_ERROR, "Parse error", None));
                continue;
            }
        };
        if is_initialize(&message) {
            // Later messages need its session: answered before the next line is read.
            bridge.initialize(&message).await;
        } else {
            let bridge = Arc::clone(&bridge);
            running.spawn(async move { bridge.forward(message).await });
        }
        // Finished tasks are collected as we go.
        while running.try_join_next().is_some() {}
    }
    // End of input: the answers under way still go out, then the session ends.
    while running.join_next().await.is_some() {}
    bridge.close().await;
    drop(bridge);
    let _ = writer.join();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "svc_0123456789012345678901234567890123456789012";

    #[test]
    fn endpoints_are_completed() {
        for (raw, want) in [
            ("https://k.example.com", "https://k.example.com/api/v1/mcp"),
            ("https://k.example.com/", "https://k.example.com/api/v1/mcp"),
            (
                "https://k.example.com/api/v1/mcp",
                "https://k.example.com/api/v1/mcp",
            ),
            (
                "https://k.example.com/api/v1/mcp/",
                "https://k.example.com/api/v1/mcp/",
            ),
            (
                "http://127.0.0.1:8080/kultiva",
                "http://127.0.0.1:8080/kultiva/api/v1/mcp",
            ),
            (
                "https://k.example.com/?x=1#f",
                "https://k.example.com/api/v1/mcp",
            ),
        ] {
            assert_eq!(endpoint(raw).expect(raw).as_str(), want, "{raw}");
        }
        for bad in [
            "",
            "k.example.com",
            "ftp://k.example.com",
            "https://u:p@k.example.com",
        ] {
            assert!(endpoint(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn configuration_reasons_never_show_the_key() {
        let missing = BridgeConfig::from_values(Some("https://k.example.com".into()), None, None)
            .expect_err("no key");
        assert!(
            missing.contains(KEY_VAR) && missing.contains("environment"),
            "{missing}"
        );
        let wrong = "svc_not-a-real-key-but-secret";
        let err = BridgeConfig::from_values(
            Some("https://k.example.com".into()),
            Some(wrong.into()),
            None,
        )
        .expect_err("bad key");
        assert!(!err.contains(wrong), "{err}");
        let ok = BridgeConfig::from_values(
            Some("https://k.example.com".into()),
            Some(KEY.into()),
            Some("5".into()),
        )
        .expect("valid");
        assert_eq!(ok.timeout, Duration::from_secs(5));
        assert!(!format!("{ok:?}").contains(KEY));
        assert!(ok.key.is_sensitive());
        for t in ["0", "3601", "x"] {
            assert!(
                BridgeConfig::from_values(
                    Some("https://k.example.com".into()),
                    Some(KEY.into()),
                    Some(t.into())
                )
                .is_err(),
                "{t}"
            );
        }
    }

    #[test]
    fn sse_bodies_are_read_event_by_event() {
        let body = "event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\r\ndata: \"result\":{}}\r\n\r\n\
                    : comment\n\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n";
        let got = sse_messages(body).expect("events");
        assert_eq!(got.len(), 2);
        assert_eq!(got[0]["id"], 1);
        assert_eq!(got[1]["method"], "x");
        assert!(sse_messages("data: nope\n\n").is_err());
    }

    #[test]
    fn a_bridge_that_cannot_start_answers_every_request_with_its_reason() {
        let input = concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#,
            "\n\n",
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            "\n",
            r#"[{"jsonrpc":"2.0","id":"a","method":"ping"},{"jsonrpc":"2.0","method":"x"}]"#,
            "\nnot json\n",
        );
        let mut out = Vec::new();
        refuse("KULTIVA_URL is not set", input.as_bytes(), &mut out);
        let lines: Vec<Value> = String::from_utf8(out)
            .expect("utf-8")
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect();
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert_eq!(lines[0]["id"], 1);
        assert_eq!(lines[0]["error"]["code"], STARTUP_FAILED);
        assert_eq!(
            lines[0]["error"]["data"]["reason"],
            "KULTIVA_URL is not set"
        );
        assert!(
            lines[0]["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("KULTIVA_URL is not set"))
        );
        assert_eq!(lines[1].as_array().map(Vec::len), Some(1), "{}", lines[1]);
        assert_eq!(lines[1][0]["id"], "a");
        assert_eq!(lines[2]["error"]["code"], PARSE_ERROR);
    }

    #[test]
    fn request_ids_of_messages() {
        assert_eq!(
            request_ids(&json!({"jsonrpc": "2.0", "id": 7, "method": "ping"})),
            vec![json!(7)]
        );
        assert!(request_ids(&json!({"jsonrpc": "2.0", "method": "notifications/x"})).is_empty());
        assert!(request_ids(&json!({"jsonrpc": "2.0", "id": 3, "result": {}})).is_empty());
        assert_eq!(
            request_ids(&json!([
                {"jsonrpc": "2.0", "id": "a", "method": "ping"},
                {"jsonrpc": "2.0", "method": "n"}
            ])),
            vec![json!("a")]
        );
    }
}
