//! HTTP load scenario (goose): liveness and one tenant-scoped read.
//!
//! `LOADTEST_TENANT` names a tenant that exists on the target (loadtest/run creates it); goose's
//! own flags set host, users, duration and reports, e.g.
//! `http_load --host http://127.0.0.1:8080 -u 32 -r 32 -t 30s --report-file report.md`.

use std::sync::OnceLock;

use goose::prelude::*;

static SITES_PATH: OnceLock<String> = OnceLock::new();

async fn health_live(user: &mut GooseUser) -> TransactionResult {
    let _ = user
        .get_named("/api/v1/health/live", "/api/v1/health/live")
        .await?;
    Ok(())
}

async fn list_sites(user: &mut GooseUser) -> TransactionResult {
    let path = SITES_PATH
        .get()
        .map_or("/api/v1/t/missing/sites/", String::as_str);
    let _ = user
        .get_named(path, "/api/v1/t/{slug}/sites/?limit=25")
        .await?;
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), GooseError> {
    let tenant = std::env::var("LOADTEST_TENANT").unwrap_or_else(|_| "loadtest".to_owned());
    let _ = SITES_PATH.set(format!("/api/v1/t/{tenant}/sites/?limit=25"));
    GooseAttack::initialize()?
        .register_scenario(
            scenario!("health")
                .set_weight(1)?
                .register_transaction(transaction!(health_live)),
        )
        .register_scenario(
            scenario!("tenant_read")
                .set_weight(3)?
                .register_transaction(transaction!(list_sites)),
        )
        .execute()
        .await?;
    Ok(())
}
