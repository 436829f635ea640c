//! Identity load scenarios (goose) for loadtest/auth, one per run:
//! - `login`:  `POST /api/v1/auth/login` with correct passwords (argon2 on every request);
//! - `me_jwt`: `GET /api/v1/users/me` with `Authorization: Bearer <access token>`;
//! - `me_key`: `GET /api/v1/users/me` with `X-API-Key: <key>`.
//!
//! Environment: `AUTH_SCENARIO` (one of the above), `AUTH_ACCOUNTS` (the file auth_seed
//! wrote), `AUTH_SUMMARY` (where to write a one-object JSON summary: requests, failures,
//! successful req/s, p50/p95/p99/max in ms, status codes). Goose user `i` uses account `i mod N`.
//! Goose's own flags set host, users, duration and reports, e.g.
//! `auth_load --host http://127.0.0.1:8080 -u 32 -r 32 -t 20s -q`.

use std::sync::OnceLock;

use goose::prelude::*;
use kultiva_loadtest::{send, summary};
use serde_json::json;

struct Account {
    email: String,
    password: String,
    token: String,
    key: String,
}

static ACCOUNTS: OnceLock<Vec<Account>> = OnceLock::new();

const LOGIN: &str = "/api/v1/auth/login";
const ME: &str = "/api/v1/users/me";

fn account(user: &GooseUser) -> Result<&'static Account, Box<TransactionError>> {
    let accounts = ACCOUNTS.get().map(Vec::as_slice).unwrap_or_default();
    if accounts.is_empty() {
        return Err(Box::new(TransactionError::Custom(
            "no accounts loaded".into(),
        )));
    }
    Ok(&accounts[user.weighted_users_index % accounts.len()])
}

async fn login(user: &mut GooseUser) -> TransactionResult {
    let account = account(user)?;
    let body = json!({"email": account.email, "password": account.password});
    send(user, GooseMethod::Post, LOGIN, |b| b.json(&body)).await
}

async fn me_jwt(user: &mut GooseUser) -> TransactionResult {
    let account = account(user)?;
    send(user, GooseMethod::Get, ME, |b| {
        b.bearer_auth(&account.token)
    })
    .await
}

async fn me_key(user: &mut GooseUser) -> TransactionResult {
    let account = account(user)?;
    send(user, GooseMethod::Get, ME, |b| {
        b.header("x-api-key", &account.key)
    })
    .await
}

fn load_accounts(path: &str) -> Result<Vec<Account>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let f: Vec<&str> = line.split('\t').collect();
            match f.as_slice() {
                [email, password, token, key, ..] => Ok(Account {
                    email: (*email).to_owned(),
                    password: (*password).to_owned(),
                    token: (*token).to_owned(),
                    key: (*key).to_owned(),
                }),
                _ => Err(format!("{path}: a line has fewer than 4 fields")),
            }
        })
        .collect()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let scenario_name = std::env::var("AUTH_SCENARIO").unwrap_or_else(|_| "me_jwt".to_owned());
    let accounts = std::env::var("AUTH_ACCOUNTS").map_err(|_| "AUTH_ACCOUNTS is not set")?;
    let _ = ACCOUNTS.set(load_accounts(&accounts)?);
    let transaction = match scenario_name.as_str() {
        "login" => transaction!(login),
        "me_jwt" => transaction!(me_jwt),
        "me_key" => transaction!(me_key),
        other => return Err(format!("unknown AUTH_SCENARIO {other:?}").into()),
    };
    // No telnet/WebSocket controllers: nothing listens besides the services under test.
    let metrics = GooseAttack::initialize()?
        .set_default(GooseDefault::NoTelnet, true)?
        .set_default(GooseDefault::NoWebSocket, true)?
        .register_scenario(scenario!("auth").register_transaction(transaction))
        .execute()
        .await?;
    let summary = summary(&metrics, &[]);
    match std::env::var("AUTH_SUMMARY") {
        Ok(path) => std::fs::write(&path, format!("{summary}\n"))?,
        Err(_) => println!("{summary}"),
    }
    Ok(())
}
