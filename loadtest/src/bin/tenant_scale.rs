//! Tenant-scale benchmark: provision N tenants (each one migration behind, as after a deploy
//! that adds a migration), then migrate them all with `--jobs` workers, as
//! `kultiva migrate --all-tenants` does. Prints a Markdown summary.
//!
//! Usage: `tenant_scale <N> <JOBS>` with the service's environment (DATABASE_URL, REDIS_URL,
//! JWT_SECRET_KEY). Use a database of its own: it creates N tenants and drops them afterwards.

use std::time::{Duration, Instant};

use kultiva::config::Config;
use kultiva::state::AppState;
use kultiva::tenancy::TenantSlug;
use kultiva::tenancy::migrate::{latest_tenant_version, migrate_all_tenants, migrate_platform};
use kultiva::tenancy::provision::{self, ProvisionOptions};

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * (sorted.len() as f64 - 1.0)).round() as usize;
    sorted[rank.min(sorted.len() - 1)].as_secs_f64() * 1000.0
}

#[tokio::main]
async fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1000);
    let jobs: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(2);
    let config = Config::from_env().map_err(|e| e.to_string())?;
    let state = AppState::new(config).map_err(|e| e.to_string())?;
    migrate_platform(state.platform_pool())
        .await
        .map_err(|e| e.to_string())?;
    let behind = latest_tenant_version() - 1;
    let run = format!("{:x}", std::process::id());

    let mut provision_times = Vec::with_capacity(n);
    let started = Instant::now();
    let mut slugs = Vec::with_capacity(n);
    for i in 0..n {
        let slug = TenantSlug::parse(&format!("scale-{run}-{i}")).map_err(|e| e.to_string())?;
        let t0 = Instant::now();
        provision::create_tenant(
            &state,
            &slug,
            "Scale test",
            ProvisionOptions {
                placement: None,
                target_version: Some(behind),
                ..ProvisionOptions::default()
            },
        )
        .await
        .map_err(|e| e.to_string())?;
        provision_times.push(t0.elapsed());
        slugs.push(slug);
    }
    let provision_total = started.elapsed();
    provision_times.sort();

    let t0 = Instant::now();
    let report = migrate_all_tenants(&state, jobs)
        .await
        .map_err(|e| e.to_string())?;
    let migrate_total = t0.elapsed();

    let t0 = Instant::now();
    for slug in &slugs {
        provision::drop_tenant(&state, slug)
            .await
            .map_err(|e| e.to_string())?;
    }
    let drop_total = t0.elapsed();

    println!("| measure | value |");
    println!("|---|---|");
    println!("| tenants | {n} |");
    println!(
        "| provision (schema + migrations to v{behind} + registry), total | {:.1} s |",
        provision_total.as_secs_f64()
    );
    println!(
        "| provision per tenant p50 / p95 / p99 | {:.1} / {:.1} / {:.1} ms |",
        percentile(&provision_times, 50.0),
        percentile(&provision_times, 95.0),
        percentile(&provision_times, 99.0)
    );
    println!(
        "| migrate all to v{} with {jobs} jobs | {:.2} s ({} migrated, {} failed) |",
        latest_tenant_version(),
        migrate_total.as_secs_f64(),
        report.migrated,
        report.failed.len()
    );
    println!(
        "| drop all (DROP SCHEMA CASCADE + registry row) | {:.1} s |",
        drop_total.as_secs_f64()
    );
    state.close().await;
    if report.failed.is_empty() && report.migrated == n {
        Ok(())
    } else {
        Err(format!("migration incomplete: {report:?}"))
    }
}
