//! Hot-path load scenarios (goose) for loadtest/hotpath, one per run, all with a JWT bearer:
//! - `tenant_one`:    `GET /api/v1/t/{slug}/sites/{id}` of the first garden of the file;
//! - `tenant_spread`: the same read, each request on a garden drawn at random from the file;
//! - `me`:            `GET /api/v1/users/me`;
//! - `phase_seq`:     `GET /api/v1/species/{key}/phase-sequence` (goose user `i` reads species
//!   `i mod N`).
//!
//! Environment: `HOT_SCENARIO`, `HOT_TOKEN` (an access token), `HOT_GARDENS` (lines
//! `slug<TAB>site_id`), `HOT_SPECIES` (lines starting with a species key), `HOT_SUMMARY` (where
//! the one-object JSON summary goes). Every request of a run carries one name, so the summary's
//! first row is the whole run.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use goose::prelude::*;
use kultiva_loadtest::summary;

static TOKEN: OnceLock<String> = OnceLock::new();
static GARDENS: OnceLock<Vec<String>> = OnceLock::new();
static SPECIES: OnceLock<Vec<String>> = OnceLock::new();
static DRAWS: AtomicU64 = AtomicU64::new(0x9e37_79b9_7f4a_7c15);

fn token() -> &'static str {
    TOKEN.get().map(String::as_str).unwrap_or_default()
}

fn missing(what: &str) -> Box<TransactionError> {
    Box::new(TransactionError::Custom(format!("no {what} loaded")))
}

/// A garden at random (splitmix64 over a shared counter: cheap, no lock, uniform enough).
fn random_index(n: usize) -> usize {
    let mut z = DRAWS.fetch_add(0x9e37_79b9_7f4a_7c15, Ordering::Relaxed);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z % n as u64) as usize
}

async fn get(user: &mut GooseUser, path: &str, name: &str) -> TransactionResult {
    let builder = user
        .get_request_builder(&GooseMethod::Get, path)?
        .bearer_auth(token());
    let request = GooseRequest::builder()
        .method(GooseMethod::Get)
        .path(path)
        .name(name)
        .expect_status_code(200)
        .set_request_builder(builder)
        .build();
    let mut goose = user.request(request).await?;
    if let Ok(response) = goose.response
        && let Err(err) = response.bytes().await
    {
        return user.set_failure(
            &format!("reading the body failed: {err}"),
            &mut goose.request,
            None,
            None,
        );
    }
    Ok(())
}

const SITE: &str = "/api/v1/t/{slug}/sites/{id}";

async fn tenant_one(user: &mut GooseUser) -> TransactionResult {
    let gardens = GARDENS.get().ok_or_else(|| missing("gardens"))?;
    let path = gardens.first().ok_or_else(|| missing("gardens"))?;
    get(user, path, SITE).await
}

async fn tenant_spread(user: &mut GooseUser) -> TransactionResult {
    let gardens = GARDENS.get().ok_or_else(|| missing("gardens"))?;
    if gardens.is_empty() {
        return Err(missing("gardens"));
    }
    let path = &gardens[random_index(gardens.len())];
    get(user, path, SITE).await
}

async fn me(user: &mut GooseUser) -> TransactionResult {
    get(user, "/api/v1/users/me", "/api/v1/users/me").await
}

async fn phase_seq(user: &mut GooseUser) -> TransactionResult {
    let species = SPECIES.get().ok_or_else(|| missing("species"))?;
    if species.is_empty() {
        return Err(missing("species"));
    }
    let path = &species[user.weighted_users_index % species.len()];
    get(user, path, "/api/v1/species/{key}/phase-sequence").await
}

fn lines(var: &str) -> Result<Vec<Vec<String>>, String> {
    let Ok(path) = std::env::var(var) else {
        return Ok(Vec::new());
    };
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
    Ok(text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split('\t').map(str::to_owned).collect())
        .collect())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let scenario_name = std::env::var("HOT_SCENARIO").unwrap_or_else(|_| "tenant_one".to_owned());
    let _ = TOKEN.set(std::env::var("HOT_TOKEN").map_err(|_| "HOT_TOKEN is not set")?);
    let gardens = lines("HOT_GARDENS")?
        .into_iter()
        .filter_map(|f| match f.as_slice() {
            [slug, site, ..] => Some(format!("/api/v1/t/{slug}/sites/{site}")),
            _ => None,
        })
        .collect();
    let _ = GARDENS.set(gardens);
    let species = lines("HOT_SPECIES")?
        .into_iter()
        .filter_map(|f| {
            f.first()
                .map(|k| format!("/api/v1/species/{k}/phase-sequence"))
        })
        .collect();
    let _ = SPECIES.set(species);
    let transaction = match scenario_name.as_str() {
        "tenant_one" => transaction!(tenant_one),
        "tenant_spread" => transaction!(tenant_spread),
        "me" => transaction!(me),
        "phase_seq" => transaction!(phase_seq),
        other => return Err(format!("unknown HOT_SCENARIO {other:?}").into()),
    };
    let metrics = GooseAttack::initialize()?
        .set_default(GooseDefault::NoTelnet, true)?
        .set_default(GooseDefault::NoWebSocket, true)?
        .register_scenario(scenario!("hot").register_transaction(transaction))
        .execute()
        .await?;
    let summary = summary(&metrics, &[]);
    match std::env::var("HOT_SUMMARY") {
        Ok(path) => std::fs::write(&path, format!("{summary}\n"))?,
        Err(_) => println!("{summary}"),
    }
    Ok(())
}
