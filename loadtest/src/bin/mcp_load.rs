//! Tool-server load scenarios (goose) for loadtest/mcp, one per run, each a pair of the same
//! work through REST and through `tools/call` (JSON-RPC on a session, API key):
//! - `rest_read`:  `GET /api/v1/species/{key}/phase-sequence`;
//! - `mcp_read`:   `tools/call get_species_phase_sequence {species_key}`;
//! - `rest_write`: `PUT /api/v1/species/{key}/phase-sequence {phase_sequence_key}`;
//! - `mcp_write`:  `tools/call assign_species_phase_sequence {species_key, sequence_key,
//!   idempotency_key}` with a fresh idempotency key per call (so every call executes).
//!
//!
//! Calculation scenarios (loadtest/calculations), the garden-independent arithmetic:
//! - `calc_rest`:   the REST calculation routes in turn, one named request each
//!   (`POST /api/v1/calculations/{vpd,gdd,dli,ec-correction,water-mix,slot-capacity,runoff}`);
//! - `rest_mixing`: `POST /api/v1/calculations/mixing-protocol` (20 L, EC 1.8, the products);
//! - `mcp_mixing`:  `tools/call calculate_mixing_protocol` with the same arguments and `tenant`.
//!
//! They read `CALC_FERTILIZERS` (comma-separated fertiliser keys) and `CALC_TENANT` (a garden
//! slug of the key's owner) instead of `MCP_TARGETS`. Every non-200 answer is a failure.
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
static FERTILIZERS: OnceLock<Vec<String>> = OnceLock::new();
static TENANT: OnceLock<String> = OnceLock::new();

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

/// One POST of a calculation route, named after it.
async fn calc(user: &mut GooseUser, route: &str, body: Value) -> TransactionResult {
    let path = format!("/api/v1/calculations/{route}");
    request(
        user,
        GooseMethod::Post,
        &path,
        route,
        |b| b.header("x-api-key", key()).json(&body),
        any_body,
    )
    .await
}

async fn calc_vpd(user: &mut GooseUser) -> TransactionResult {
    calc(user, "vpd", json!({"air_temp_c": 24.5, "humidity_percent": 60, "leaf_temp_offset_c": -1.5, "phase": "flowering"})).await
}

async fn calc_gdd(user: &mut GooseUser) -> TransactionResult {
    let days: Vec<Value> = (0..30)
        .map(|i| json!({"max_c": 22.0 + f64::from(i % 7), "min_c": 9.0 + f64::from(i % 5)}))
        .collect();
    calc(user, "gdd", json!({"daily_temps": days, "base_temp_c": 10})).await
}

async fn calc_dli(user: &mut GooseUser) -> TransactionResult {
    calc(user, "dli", json!({"ppfd": 650, "photoperiod_hours": 18})).await
}

async fn calc_ec_correction(user: &mut GooseUser) -> TransactionResult {
    calc(
        user,
        "ec-correction",
        json!({"ec_ms": 1.9, "water_temp_c": 19.5}),
    )
    .await
}

async fn calc_water_mix(user: &mut GooseUser) -> TransactionResult {
    calc(
        user,
        "water-mix",
        json!({"ro_percent": 60, "ec_ro_ms": 0.02, "ec_tap_ms": 0.65, "ph_ro": 6.5, "ph_tap": 7.6,
               "tap_alkalinity_ppm": 180, "tap_calcium_ppm": 90, "tap_magnesium_ppm": 18,
               "target_ec_ms": 0.3}),
    )
    .await
}

async fn calc_slot_capacity(user: &mut GooseUser) -> TransactionResult {
    calc(
        user,
        "slot-capacity",
        json!({"area_m2": 2.4, "spacing_cm": 40}),
    )
    .await
}

async fn calc_runoff(user: &mut GooseUser) -> TransactionResult {
    calc(
        user,
        "runoff",
        json!({"input_ec_ms": 1.8, "runoff_ec_ms": 2.4, "input_ph": 6.0, "runoff_ph": 6.6,
               "input_volume_liters": 2.0, "runoff_volume_liters": 0.4}),
    )
    .await
}

fn mixing_args() -> Value {
    let products: Vec<Value> = FERTILIZERS
        .get()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|k| json!({"fertilizer_key": k}))
        .collect();
    json!({"fertilizers": products, "target_volume_liters": 20, "target_ec_ms": 1.8,
           "base_water_ec_ms": 0.3, "alkalinity_ppm": 80, "substrate_type": "coco",
           "phase": "flowering", "water_temp_c": 20})
}

async fn rest_mixing(user: &mut GooseUser) -> TransactionResult {
    calc(user, "mixing-protocol", mixing_args()).await
}

async fn mcp_mixing(user: &mut GooseUser) -> TransactionResult {
    let mut args = mixing_args();
    args["tenant"] = json!(TENANT.get().map(String::as_str).unwrap_or_default());
    tools_call(user, "calculate_mixing_protocol", args).await
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
    let calculation = matches!(
        scenario_name.as_str(),
        "calc_rest" | "rest_mixing" | "mcp_mixing"
    );
    if calculation {
        let keys = std::env::var("CALC_FERTILIZERS").map_err(|_| "CALC_FERTILIZERS is not set")?;
        let _ = FERTILIZERS.set(keys.split(',').map(str::to_owned).collect());
        let _ = TENANT.set(std::env::var("CALC_TENANT").map_err(|_| "CALC_TENANT is not set")?);
    } else {
        let targets = std::env::var("MCP_TARGETS").map_err(|_| "MCP_TARGETS is not set")?;
        let _ = TARGETS.set(load_targets(&targets)?);
    }
    let (transactions, needs_session) = match scenario_name.as_str() {
        "rest_read" => (vec![transaction!(rest_read)], false),
        "mcp_read" => (vec![transaction!(mcp_read)], true),
        "rest_write" => (vec![transaction!(rest_write)], false),
        "mcp_write" => (vec![transaction!(mcp_write)], true),
        "calc_rest" => (
            vec![
                transaction!(calc_vpd),
                transaction!(calc_gdd),
                transaction!(calc_dli),
                transaction!(calc_ec_correction),
                transaction!(calc_water_mix),
                transaction!(calc_slot_capacity),
                transaction!(calc_runoff),
            ],
            false,
        ),
        "rest_mixing" => (vec![transaction!(rest_mixing)], false),
        "mcp_mixing" => (vec![transaction!(mcp_mixing)], true),
        other => return Err(format!("unknown MCP_SCENARIO {other:?}").into()),
    };
    let mut scenario = scenario!("mcp");
    if needs_session {
        scenario = scenario.register_transaction(transaction!(initialize).set_on_start());
    }
    for t in transactions {
        scenario = scenario.register_transaction(t);
    }
    let metrics = GooseAttack::initialize()?
        .set_default(GooseDefault::NoTelnet, true)?
        .set_default(GooseDefault::NoWebSocket, true)?
        .register_scenario(scenario)
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
