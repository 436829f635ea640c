//! Plant read load (goose) on a garden with thousands of plants: `PLANTS_MODE=list` pages the
//! plant list (`/plant-instances/?limit=50&skip=<random page>`), `PLANTS_MODE=get` reads one
//! random plant (`/plant-instances/{key}`). `PLANTS_BASE` is the garden's plant path
//! (`/api/v1/t/<slug>/plant-instances/`), `PLANTS_KEYS` a file of plant keys (one per line);
//! goose's own flags set host, users and duration, e.g.
//! `PLANTS_MODE=get PLANTS_BASE=… PLANTS_KEYS=keys.txt plants_load --host http://127.0.0.1:8080 -u 32 -r 32 -t 20s`.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use goose::prelude::*;

struct Target {
    base: String,
    keys: Vec<String>,
    get: bool,
}

static TARGET: OnceLock<Target> = OnceLock::new();
/// A cheap spread over pages and keys (no RNG crate): each request takes the next index.
static NEXT: AtomicUsize = AtomicUsize::new(0);

async fn read(user: &mut GooseUser) -> TransactionResult {
    let Some(t) = TARGET.get() else {
        return Ok(());
    };
    // A stride coprime to typical sizes walks every page and key in a scattered order.
    let i = NEXT.fetch_add(7919, Ordering::Relaxed);
    if t.get && !t.keys.is_empty() {
        let key = &t.keys[i % t.keys.len()];
        let path = format!("{}{key}", t.base);
        kultiva_loadtest::send(user, GooseMethod::Get, &path, |b| b).await?;
    } else {
        let pages = (t.keys.len() / 50).max(1);
        let path = format!("{}?limit=50&skip={}", t.base, (i % pages) * 50);
        kultiva_loadtest::send(user, GooseMethod::Get, &path, |b| b).await?;
    }
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), GooseError> {
    let base = std::env::var("PLANTS_BASE").unwrap_or_default();
    let keys = std::env::var("PLANTS_KEYS")
        .ok()
        .and_then(|f| std::fs::read_to_string(f).ok())
        .map(|s| {
            s.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let get = std::env::var("PLANTS_MODE").is_ok_and(|m| m == "get");
    let _ = TARGET.set(Target { base, keys, get });
    let name = if get { "plant_get" } else { "plant_list" };
    GooseAttack::initialize()?
        .register_scenario(scenario!(name).register_transaction(transaction!(read).set_name(name)))
        .execute()
        .await?;
    Ok(())
}
