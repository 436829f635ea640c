//! Tool-server load scenarios (goose) for loadtest/mcp, one per run, each a pair of the same
//! work through REST and through `tools/call` (JSON-RPC on a session, API key):
//! - `rest_read`:  `GET /api/v1/species/{key}/phase-sequence`;
//! - `mcp_read`:   `tools/call get_species_phase_sequence {species_key}`;
//! - `rest_write`: `PUT /api/v1/species/{key}/phase-sequence {phase_sequence_key}`;
//! - `mcp_write`:  `tools/call assign_species_phase_sequence {species_key, sequence_key,
//!   idempotency_key}` with a fresh idempotency key per call (so every call executes).
//!
//! Environment: `MCP_SCENARIO`, `MCP_KEY` (an API key of a platform admin, which the REST
//! write needs), `MCP_TARGETS` (lines `species_key<TAB>sequence_key`; goose user `i` works on
//! line `i mod N`, so writers do not queue on one row), `MCP_SUMMARY` (where the one-object
//! JSON summary goes). A tool result with `isError: true` counts as a failure.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use goose::prelude::*;
use kultiva_loadtest::summary;
use serde_json::{Value, json};

struct Target {
    species: String,
    sequence: String,
}

static KEY: OnceLock<String> = OnceLock::new();
static TARGETS: OnceLock<Vec<Target>> = OnceLock::new();
static CALLS: AtomicU64 = AtomicU64::new(0);

const MCP: &str = "/api/v1/mcp";

fn key() -> &'static str {
    KEY.get().map(String::as_str).unwrap_or_default()
}

fn target(user: &GooseUser) -> Result<&'static Target, Box<TransactionError>> {
    let targets = TARGETS.get().map(Vec::as_slice).unwrap_or_default();
    if targets.is_empty() {
        return Err(Box::new(TransactionError::Custom(
            "no targets loaded".into(),
        )));
    }
    Ok(&targets[user.weighted_users_index % targets.len()])
}

#[derive(Clone)]
struct Session(String);

/// Sends one request named `name`, expects 200, reads the body and fails the request when
/// `check` refuses it.
async fn request(
    user: &mut GooseUser,
    method: GooseMethod,
    path: &str,
    name: &str,
    builder: impl FnOnce(reqwest::RequestBuilder) -> reqwest::RequestBuilder,
    check: fn(&[u8]) -> Result<(), String>,
) -> TransactionResult {
    let request_builder = builder(user.get_request_builder(&method, path)?);
    let request = GooseRequest::builder()
        .method(method)
        .path(path)
        .name(name)
        .expect_status_code(200)
        .set_request_builder(request_builder)
        .build();
    let mut goose = user.request(request).await?;
    if let Ok(response) = goose.response {
        let outcome = match response.bytes().await {
            Ok(body) => check(&body),
            Err(err) => Err(format!("reading the body failed: {err}")),
        };
        if let Err(why) = outcome {
            return user.set_failure(&why, &mut goose.request, None, None);
        }
    }
    Ok(())
}

fn any_body(_: &[u8]) -> Result<(), String> {
    Ok(())
}

/// A JSON-RPC result that is not a tool error.
fn tool_succeeded(body: &[u8]) -> Result<(), String> {
    let v: Value = serde_json::from_slice(body).map_err(|e| format!("not JSON: {e}"))?;
    match v.pointer("/result/isError") {
        Some(Value::Bool(false)) => Ok(()),
        _ => Err(format!(
            "tool call failed: {}",
            String::from_utf8_lossy(&body[..body.len().min(300)])
        )),
    }
}

/// Each goose user opens its own session, as a real client does once.
async fn initialize(user: &mut GooseUser) -> TransactionResult {
    let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "mcp_load", "version": "1"}}});
    let builder = user
        .get_request_builder(&GooseMethod::Post, MCP)?
        .header("x-api-key", key())
        .json(&body);
    let request = GooseRequest::builder()
        .method(GooseMethod::Post)
        .path(MCP)
        .name("initialize")
        .set_request_builder(builder)
        .build();
    let goose = user.request(request).await?;
    let id = goose
        .response
        .ok()
        .and_then(|r| {
            r.headers()
                .get("mcp-session-id")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        })
        .ok_or_else(|| {
            Box::new(TransactionError::Custom(
                "initialize gave no session".into(),
            ))
        })?;
    user.set_session_data(Session(id));
    Ok(())
}

async fn tools_call(user: &mut GooseUser, name: &str, arguments: Value) -> TransactionResult {
    let session = user
        .get_session_data::<Session>()
        .map(|s| s.0.clone())
        .ok_or_else(|| Box::new(TransactionError::Custom("no session".into())))?;
    let id = CALLS.fetch_add(1, Ordering::Relaxed);
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                      "params": {"name": name, "arguments": arguments}});
    request(
        user,
        GooseMethod::Post,
        MCP,
        name,
        |b| {
            b.header("x-api-key", key())
                .header("mcp-session-id", session)
                .header("mcp-protocol-version", "2025-06-18")
                .json(&body)
        },
        tool_succeeded,
    )
    .await
}

async fn rest_read(user: &mut GooseUser) -> TransactionResult {
    let t = target(user)?;
    let path = format!("/api/v1/species/{}/phase-sequence", t.species);
    request(
        user,
        GooseMethod::Get,
        &path,
        "rest_read",
        |b| b.header("x-api-key", key()),
        any_body,
    )
    .await
}

async fn mcp_read(user: &mut GooseUser) -> TransactionResult {
    let t = target(user)?;
    tools_call(
        user,
        "get_species_phase_sequence",
        json!({"species_key": t.species}),
    )
    .await
}

async fn rest_write(user: &mut GooseUser) -> TransactionResult {
    let t = target(user)?;
    let path = format!("/api/v1/species/{}/phase-sequence", t.species);
    let body = json!({"phase_sequence_key": t.sequence});
    request(
        user,
        GooseMethod::Put,
        &path,
        "rest_write",
        |b| b.header("x-api-key", key()).json(&body),
        any_body,
    )
    .await
}

async fn mcp_write(user: &mut GooseUser) -> TransactionResult {
    let t = target(user)?;
    let idempotency_key = format!(
        "bench-{}-{}",
        std::process::id(),
        CALLS.fetch_add(1, Ordering::Relaxed)
    );
    tools_call(
        user,
        "assign_species_phase_sequence",
        json!({"species_key": t.species, "sequence_key": t.sequence, "idempotency_key": idempotency_key}),
    )
    .await
}

fn load_targets(path: &str) -> Result<Vec<Target>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(
            |line| match line.split('\t').collect::<Vec<_>>().as_slice() {
                [species, sequence, ..] => Ok(Target {
                    species: (*species).to_owned(),
                    sequence: (*sequence).to_owned(),
                }),
                _ => Err(format!("{path}: a line has fewer than 2 fields")),
            },
        )
        .collect()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let scenario_name = std::env::var("MCP_SCENARIO").unwrap_or_else(|_| "mcp_read".to_owned());
    let _ = KEY.set(std::env::var("MCP_KEY").map_err(|_| "MCP_KEY is not set")?);
    let targets = std::env::var("MCP_TARGETS").map_err(|_| "MCP_TARGETS is not set")?;
    let _ = TARGETS.set(load_targets(&targets)?);
    let (transaction, needs_session) = match scenario_name.as_str() {
        "rest_read" => (transaction!(rest_read), false),
        "mcp_read" => (transaction!(mcp_read), true),
        "rest_write" => (transaction!(rest_write), false),
        "mcp_write" => (transaction!(mcp_write), true),
        other => return Err(format!("unknown MCP_SCENARIO {other:?}").into()),
    };
    let mut scenario = scenario!("mcp");
    if needs_session {
        scenario = scenario.register_transaction(transaction!(initialize).set_on_start());
    }
    let metrics = GooseAttack::initialize()?
        .set_default(GooseDefault::NoTelnet, true)?
        .set_default(GooseDefault::NoWebSocket, true)?
        .register_scenario(scenario.register_transaction(transaction))
        .execute()
        .await?;
    // The figures are the measured calls only; the one initialize per user is set-up.
    let mut summary = summary(&metrics, &[" initialize"]);
    summary["scenario"] = json!(scenario_name);
    match std::env::var("MCP_SUMMARY") {
        Ok(path) => std::fs::write(&path, format!("{summary}\n"))?,
        Err(_) => println!("{summary}"),
    }
    Ok(())
}
