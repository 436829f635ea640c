//! Catalogue read load (goose): one endpoint per run, so each gets its own requests/s and
//! latency figures. `CATALOG_PATH` is the request path (with query), `CATALOG_NAME` the label in
//! the report; goose's own flags set host, users, duration and reports, e.g.
//! `CATALOG_PATH='/api/v1/species/?limit=25' catalog_load --host http://127.0.0.1:8080 -u 32 -r 32 -t 20s`.

use std::sync::OnceLock;

use goose::prelude::*;

static TARGET: OnceLock<(String, String)> = OnceLock::new();

async fn read(user: &mut GooseUser) -> TransactionResult {
    let (path, name) = TARGET
        .get()
        .map_or(("/api/v1/species/", "species"), |(p, n)| {
            (p.as_str(), n.as_str())
        });
    let _ = user.get_named(path, name).await?;
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), GooseError> {
    let path = std::env::var("CATALOG_PATH").unwrap_or_else(|_| "/api/v1/species/?limit=25".into());
    let name = std::env::var("CATALOG_NAME").unwrap_or_else(|_| path.clone());
    let _ = TARGET.set((path, name));
    GooseAttack::initialize()?
        .register_scenario(scenario!("catalog_read").register_transaction(transaction!(read)))
        .execute()
        .await?;
    Ok(())
}
