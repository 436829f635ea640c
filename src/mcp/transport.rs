//! JSON-RPC 2.0 over Streamable HTTP at `/api/v1/mcp`, JSON responses only (no streams).
//!
//! Order of checks (see the README's tool-server section): gate (404 while disabled) and API
//! key (401) in the hoops of `routes`; then Origin (403), Content-Type (415), Accept (406),
//! size (413), JSON (400/-32700), `MCP-Protocol-Version` (400), then the message itself.
//! `initialize` mints a session; every other message needs one (missing 400, unknown 404).

use salvo::http::StatusCode;
use salvo::http::header::{ACCEPT, ALLOW, CONTENT_TYPE, HeaderValue, ORIGIN};
use salvo::prelude::*;
use serde_json::{Value, json};

use super::dispatch;
use super::envelope::result_json;
use super::session::{self, Session};
use crate::auth::principal::Principal;
use crate::state::AppState;

/// Revisions this server speaks, newest first.
pub const SUPPORTED: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
/// The answer to a requested revision we do not know.
pub const FALLBACK: &str = "2025-06-18";
pub const SESSION_HEADER: &str = "mcp-session-id";
pub const VERSION_HEADER: &str = "mcp-protocol-version";

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;
const INTERNAL_ERROR: i64 = -32603;
const SESSION_NOT_FOUND: i64 = -32001;
const SERVER_ERROR: i64 = -32000;

/// Revisions with `structuredContent`, `outputSchema` and `title`.
fn modern(version: &str) -> bool {
    version >= "2025-06-18"
}

fn negotiate(requested: &str) -> &'static str {
    SUPPORTED
        .iter()
        .copied()
        .find(|v| *v == requested)
        .unwrap_or(FALLBACK)
}

/// A JSON-RPC error response.
fn rpc_error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

fn rpc_result(id: Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// A JSON-RPC success response around a result that is already JSON text.
fn rpc_result_text(id: &Value, result: &str) -> String {
    let id = id.to_string();
    let mut out = String::with_capacity(result.len() + id.len() + 40);
    out.push_str(r#"{"jsonrpc":"2.0","id":"#);
    out.push_str(&id);
    out.push_str(r#","result":"#);
    out.push_str(result);
    out.push('}');
    out
}

/// Renders a JSON body that is already text (what `Json` would send for the same value).
pub(super) fn render_json_text(res: &mut Response, body: String) {
    res.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("application/json; charset=utf-8"),
    );
    res.body(body);
}

/// Writes an HTTP-level refusal with a JSON-RPC error body.
fn refuse(res: &mut Response, status: StatusCode, code: i64, message: &str) {
    res.status_code(status);
    res.render(Json(rpc_error(Value::Null, code, message)));
}

/// 202 with an empty body. Salvo logs a warning for every 2xx POST answered without a body
/// (one per session: each starts with `notifications/initialized`); an explicit empty body is
/// the same on the wire (`content-length: 0`) and keeps the log quiet.
fn accepted(res: &mut Response) {
    res.status_code(StatusCode::ACCEPTED);
    res.body("");
}

fn header<'a>(req: &'a Request, name: &str) -> Option<&'a str> {
    req.headers().get(name).and_then(|v| v.to_str().ok())
}

/// An `Origin` header (browsers send one) must be an allowed CORS origin: a web page elsewhere
/// cannot drive the tool server through a user's browser.
fn origin_allowed(state: &AppState, req: &Request) -> bool {
    match req.headers().get(ORIGIN).map(|v| v.to_str()) {
        None => true,
        Some(Ok(origin)) => state.config().cors_origins.iter().any(|o| o == origin),
        Some(Err(_)) => false,
    }
}

/// Only that JSON is acceptable is required (several real clients send partial Accept
/// headers); no Accept header at all means anything.
fn accepts_json(req: &Request) -> bool {
    let Some(accept) = req.headers().get(ACCEPT) else {
        return true;
    };
    let Ok(accept) = accept.to_str() else {
        return false;
    };
    accept.split(',').any(|part| {
        let media = part
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        matches!(media.as_str(), "application/json" | "application/*" | "*/*")
    })
}

/// How one JSON value reads as a JSON-RPC message.
enum Message<'a> {
    Request {
        id: &'a Value,
        method: &'a str,
        params: Option<&'a Value>,
    },
    /// Notifications and client responses: acknowledged with 202.
    NoReply,
    Invalid {
        id: Value,
    },
}

fn valid_id(id: &Value) -> bool {
    id.is_string() || id.as_i64().is_some() || id.as_u64().is_some()
}

fn classify(value: &Value) -> Message<'_> {
    let Some(obj) = value.as_object() else {
        return Message::Invalid { id: Value::Null };
    };
    let id = obj.get("id");
    let echo = id.filter(|i| valid_id(i)).cloned().unwrap_or(Value::Null);
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Message::Invalid { id: echo };
    }
    match (obj.get("method"), id) {
        (Some(Value::String(method)), Some(id)) if valid_id(id) => {
            let params = obj.get("params");
            if params.is_some_and(|p| !p.is_object() && !p.is_array() && !p.is_null()) {
                return Message::Invalid { id: echo };
            }
            Message::Request { id, method, params }
        }
        (Some(Value::String(_)), None) => Message::NoReply,
        (Some(_), _) => Message::Invalid { id: echo },
        (None, Some(id))
            if valid_id(id) && (obj.contains_key("result") || obj.contains_key("error")) =>
        {
            Message::NoReply
        }
        _ => Message::Invalid { id: echo },
    }
}

/// `POST /api/v1/mcp` (and its deprecated alias).
pub async fn post(state: &AppState, principal: &Principal, req: &mut Request, res: &mut Response) {
    if !origin_allowed(state, req) {
        return refuse(
            res,
            StatusCode::FORBIDDEN,
            SERVER_ERROR,
            "Origin not allowed",
        );
    }
    if !crate::http::json::has_json_body(req) {
        return refuse(
            res,
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            SERVER_ERROR,
            "Content-Type must be application/json",
        );
    }
    if !accepts_json(req) {
        return refuse(
            res,
            StatusCode::NOT_ACCEPTABLE,
            SERVER_ERROR,
            "Client must accept application/json",
        );
    }
    let max = state.config().max_body_bytes;
    let body = match req.payload_with_max_size(max).await {
        Ok(bytes) => bytes.clone(),
        Err(salvo::http::ParseError::PayloadTooLarge) => {
            return refuse(
                res,
                StatusCode::PAYLOAD_TOO_LARGE,
                SERVER_ERROR,
                &format!("request body is larger than {max} bytes"),
            );
        }
        Err(_) => {
            return refuse(res, StatusCode::BAD_REQUEST, PARSE_ERROR, "Parse error");
        }
    };
    let Ok(message) = serde_json::from_slice::<Value>(&body) else {
        return refuse(res, StatusCode::BAD_REQUEST, PARSE_ERROR, "Parse error");
    };
    if let Some(version) = header(req, VERSION_HEADER)
        && !SUPPORTED.contains(&version)
    {
        let text = format!(
            "Bad Request: Unsupported protocol version (MCP-Protocol-Version: {}); supported: {}",
            version.chars().take(40).collect::<String>(),
            SUPPORTED.join(", ")
        );
        return refuse(res, StatusCode::BAD_REQUEST, INVALID_REQUEST, &text);
    }
    // initialize: a single request; any session header it carries is stale and ignored.
    if let Message::Request {
        id,
        method: "initialize",
        params,
    } = classify(&message)
    {
        return initialize(state, principal, id, params, res).await;
    }
    let session = match session_of(state, principal, req, res).await {
        Some(s) => s,
        None => return,
    };
    match &message {
        Value::Array(batch) => {
            if session.version != "2025-03-26" {
                return refuse(
                    res,
                    StatusCode::BAD_REQUEST,
                    INVALID_REQUEST,
                    "Invalid Request: batches are only allowed with protocol revision 2025-03-26",
                );
            }
            if batch.is_empty() || batch.len() > 100 {
                return refuse(
                    res,
                    StatusCode::BAD_REQUEST,
                    INVALID_REQUEST,
                    "Invalid Request: a batch holds 1 to 100 messages",
                );
            }
            // Every message of a batch counts against the general limit, not only the request.
            if !crate::http::rate_limit::draw_batch(state, principal, batch.len(), res).await {
                return;
            }
            let mut replies: Vec<String> = Vec::new();
            // The answers of one batch are held until the last is made: their bytes are
            // capped (MCP_MAX_BATCH_RESPONSE_MB); a call past the cap answers payload.too_large.
            let cap = state.config().mcp_max_batch_response_bytes;
            let mut spent = 0usize;
            for item in batch {
                let left = cap.saturating_sub(spent);
                match classify(item) {
                    Message::Request {
                        method: "initialize",
                        id,
                        ..
                    } => replies.push(
                        rpc_error(
                            id.clone(),
                            INVALID_REQUEST,
                            "Invalid Request: initialize cannot be part of a batch",
                        )
                        .to_string(),
                    ),
                    Message::Request { id, method, params } => {
                        let reply = dispatch::with_batch_budget(
                            left,
                            handle(state, principal, &session, id, method, params),
                        )
                        .await;
                        spent += reply.len();
                        replies.push(reply);
                    }
                    Message::NoReply => {}
                    Message::Invalid { id } => {
                        replies.push(rpc_error(id, INVALID_REQUEST, "Invalid Request").to_string());
                    }
                }
            }
            if replies.is_empty() {
                accepted(res);
            } else {
                render_json_text(res, format!("[{}]", replies.join(",")));
            }
        }
        single => match classify(single) {
            Message::Request { id, method, params } => {
                let reply = handle(state, principal, &session, id, method, params).await;
                render_json_text(res, reply);
            }
            Message::NoReply => accepted(res),
            Message::Invalid { id } => {
                res.status_code(StatusCode::BAD_REQUEST);
                res.render(Json(rpc_error(id, INVALID_REQUEST, "Invalid Request")));
            }
        },
    }
}

/// The caller's session named in the request; writes the refusal and returns None otherwise.
async fn session_of(
    state: &AppState,
    principal: &Principal,
    req: &Request,
    res: &mut Response,
) -> Option<Session> {
    let Some(id) = header(req, SESSION_HEADER) else {
        refuse(
            res,
            StatusCode::BAD_REQUEST,
            INVALID_REQUEST,
            "Bad Request: Mcp-Session-Id header is required (send initialize first)",
        );
        return None;
    };
    match session::touch(state, id, principal.user_id).await {
        Ok(Some(s)) => Some(s),
        Ok(None) => {
            refuse(
                res,
                StatusCode::NOT_FOUND,
                SESSION_NOT_FOUND,
                "Session not found: initialize a new session",
            );
            None
        }
        Err(err) => {
            tracing::warn!(error = %err, "MCP session store unavailable");
            refuse(
                res,
                StatusCode::SERVICE_UNAVAILABLE,
                SERVER_ERROR,
                "session store unavailable; retry later",
            );
            None
        }
    }
}

async fn initialize(
    state: &AppState,
    principal: &Principal,
    id: &Value,
    params: Option<&Value>,
    res: &mut Response,
) {
    let Some(requested) = params
        .and_then(|p| p.get("protocolVersion"))
        .and_then(Value::as_str)
    else {
        res.render(Json(rpc_error(
            id.clone(),
            INVALID_PARAMS,
            "Invalid params: protocolVersion (string) is required",
        )));
        return;
    };
    let version = negotiate(requested);
    let session = Session {
        account: principal.user_id,
        version: version.to_owned(),
    };
    let session_id = match session::create(state, &session).await {
        Ok(id) => id,
        Err(err) => {
            tracing::warn!(error = %err, "MCP session store unavailable");
            return refuse(
                res,
                StatusCode::SERVICE_UNAVAILABLE,
                SERVER_ERROR,
                "session store unavailable; retry later",
            );
        }
    };
    if let Ok(value) = HeaderValue::from_str(&session_id) {
        res.headers_mut().insert(SESSION_HEADER, value);
    }
    res.render(Json(rpc_result(
        id.clone(),
        json!({
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": false}},
            "serverInfo": {"name": "kultiva", "title": "Kultiva", "version": env!("CARGO_PKG_VERSION")},
            "instructions": "Kultiva plant-cultivation tools. Call list_tenants to see your gardens; \
                             pass a garden slug as `tenant` when the key covers several. Write tools \
                             take dry_run and idempotency_key.",
        }),
    )));
}

/// Answers one request of an established session (the JSON-RPC response as JSON text).
async fn handle(
    state: &AppState,
    principal: &Principal,
    session: &Session,
    id: &Value,
    method: &str,
    params: Option<&Value>,
) -> String {
    if method == "tools/call" {
        return match call(state, principal, session, id, params).await {
            Ok(reply) | Err(reply) => reply,
        };
    }
    let id = id.clone();
    match method {
        "ping" => rpc_result(id, json!({})),
        "tools/list" => match dispatch::listed_tools(state, principal).await {
            Ok((tools, _)) => {
                let modern = modern(&session.version);
                let list: Vec<Value> = tools.iter().map(|t| t.listing(modern)).collect();
                rpc_result(id, json!({ "tools": list }))
            }
            Err(err) => rpc_error(id, INTERNAL_ERROR, &err.message),
        },
        _ => rpc_error(id, METHOD_NOT_FOUND, "Method not found"),
    }
    .to_string()
}

/// `tools/call`: the reply, or the JSON-RPC error for a malformed envelope (as `Err`).
async fn call(
    state: &AppState,
    principal: &Principal,
    session: &Session,
    id: &Value,
    params: Option<&Value>,
) -> Result<String, String> {
    let invalid = |message: &str| rpc_error(id.clone(), INVALID_PARAMS, message).to_string();
    let params = params
        .and_then(Value::as_object)
        .ok_or_else(|| invalid("Invalid params: an object with name is required"))?;
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| invalid("Invalid params: name (string) is required"))?;
    // Omitted (or null) arguments are the empty object: the audit hash of a call must not
    // depend on how a client spells "no arguments", nor on the face (REST sends {}).
    let no_arguments = Value::Object(serde_json::Map::new());
    let arguments = match params.get("arguments") {
        None | Some(Value::Null) => &no_arguments,
        Some(a @ Value::Object(_)) => a,
        Some(_) => return Err(invalid("Invalid params: arguments must be an object")),
    };
    let called = dispatch::call(state, principal, name, arguments).await;
    // The envelope was serialised once by the dispatcher; it goes out as it is.
    let result = result_json(
        &called.outcome,
        &called.envelope_json,
        &called.images,
        modern(&session.version),
    );
    Ok(rpc_result_text(id, &result))
}

/// `DELETE /api/v1/mcp`: ends the caller's session.
pub async fn delete(state: &AppState, principal: &Principal, req: &Request, res: &mut Response) {
    // The transport's Origin rule covers every request that acts on a session, not only POST:
    // a page elsewhere must not be able to end a user's session either.
    if !origin_allowed(state, req) {
        return refuse(
            res,
            StatusCode::FORBIDDEN,
            SERVER_ERROR,
            "Origin not allowed",
        );
    }
    let Some(id) = header(req, SESSION_HEADER) else {
        return refuse(
            res,
            StatusCode::BAD_REQUEST,
            INVALID_REQUEST,
            "Bad Request: Mcp-Session-Id header is required",
        );
    };
    match session::end(state, id, principal.user_id).await {
        Ok(true) => {
            res.status_code(StatusCode::NO_CONTENT);
        }
        Ok(false) => refuse(
            res,
            StatusCode::NOT_FOUND,
            SESSION_NOT_FOUND,
            "Session not found",
        ),
        Err(err) => {
            tracing::warn!(error = %err, "MCP session store unavailable");
            refuse(
                res,
                StatusCode::SERVICE_UNAVAILABLE,
                SERVER_ERROR,
                "session store unavailable; retry later",
            );
        }
    }
}

/// `GET /api/v1/mcp`: there is no server-initiated stream.
pub fn get(res: &mut Response) {
    res.status_code(StatusCode::METHOD_NOT_ALLOWED);
    res.headers_mut()
        .insert(ALLOW, HeaderValue::from_static("POST, DELETE"));
    res.render(Json(rpc_error(
        Value::Null,
        SERVER_ERROR,
        "Method Not Allowed: this server sends no server-initiated messages",
    )));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negotiation_echoes_known_revisions_and_falls_back() {
        for v in SUPPORTED {
            assert_eq!(negotiate(v), *v);
        }
        assert_eq!(negotiate("2026-07-28"), FALLBACK);
        assert_eq!(negotiate("nonsense"), FALLBACK);
    }

    #[test]
    fn accepted_has_an_empty_body_not_none() {
        let mut res = Response::new();
        accepted(&mut res);
        assert_eq!(res.status_code, Some(StatusCode::ACCEPTED));
        // None would make salvo log "content type header not set" for every notification.
        assert!(!res.body.is_none());
        assert!(matches!(&res.body, salvo::http::ResBody::Once(b) if b.is_empty()));
    }

    #[test]
    fn messages_are_classified() {
        assert!(matches!(
            classify(&json!({"jsonrpc": "2.0", "id": 0, "method": "ping"})),
            Message::Request { method: "ping", .. }
        ));
        assert!(matches!(
            classify(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"})),
            Message::NoReply
        ));
        assert!(matches!(
            classify(&json!({"jsonrpc": "2.0", "id": 3, "result": {}})),
            Message::NoReply
        ));
        for bad in [
            json!({"jsonrpc": "1.0", "id": 1, "method": "ping"}),
            json!({"jsonrpc": "2.0", "id": null, "method": "ping"}),
            json!({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}),
            json!({"jsonrpc": "2.0", "id": 1, "method": 7}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": 3}),
            json!("ping"),
        ] {
            assert!(matches!(classify(&bad), Message::Invalid { .. }), "{bad}");
        }
    }
}
