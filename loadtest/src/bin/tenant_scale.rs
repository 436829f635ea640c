//! Tenant-scale benchmark: provision N tenants (each one migration behind, as after a deploy
//! that adds a migration), then migrate them all with `JOBS` workers, as
//! `kultiva migrate --all-tenants --jobs JOBS` does. Prints a Markdown summary on standard
//! output, progress on standard error.
//!
//! Usage, with the service's environment (DATABASE_URL, REDIS_URL, JWT_SECRET_KEY, and
//! TENANT_PLACEMENTS when gardens live on other placements):
//!
//! ```text
//! tenant_scale <N> <JOBS> [--keep] [--prefix P] [--provision-jobs C] [--full-sample S]
//!              [--json FILE]
//! tenant_scale --drop-prefix P [--jobs J] [--json FILE]
//! ```
//!
//! - The gardens are `P-0000` … (`P` defaults to `scale-<pid>`), provisioned `C` at a time
//!   (default 1), each timed from its registry row to its activation.
//! - `--full-sample S`: after the migration, `S` more gardens (`P-full-000` …) are provisioned
//!   one after another at the latest version (the full schema, on a server that now holds the
//!   N gardens), timed, and dropped again (timed).
//! - `--keep`: the N gardens stay (a driver reads them, then drops them with `--drop-prefix`);
//!   without it they are dropped at the end (timed).
//! - `--drop-prefix P`: only drops every garden whose slug starts with `P-`, `J` at a time
//!   (default 2), on whatever placement it lives.
//! - `--json FILE`: the same figures as one JSON object.
//!
//! Use a database of its own: every garden that is behind is migrated, not only these.

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use kultiva::config::Config;
use kultiva::progress::Progress;
use kultiva::state::AppState;
use kultiva::tenancy::TenantSlug;
use kultiva::tenancy::migrate::{
    latest_tenant_version, migrate_all_tenants_with, migrate_platform,
};
use kultiva::tenancy::provision::{self, ProvisionOptions};
use kultiva::tenancy::registry;
use serde_json::{Value, json};

struct Args {
    n: usize,
    jobs: usize,
    keep: bool,
    prefix: String,
    provision_jobs: usize,
    full_sample: usize,
    json: Option<String>,
    drop_prefix: Option<String>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        n: 1000,
        jobs: 2,
        keep: false,
        prefix: format!("scale-{:x}", std::process::id()),
        provision_jobs: 1,
        full_sample: 0,
        json: None,
        drop_prefix: None,
    };
    let mut positional = 0;
    let mut jobs_given = false;
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
        let number = |name: &str, raw: String| {
            raw.parse::<usize>()
                .map_err(|_| format!("{name}: not a number: {raw:?}"))
        };
        match arg.as_str() {
            "--keep" => args.keep = true,
            "--prefix" => args.prefix = value("--prefix")?,
            "--provision-jobs" => {
                args.provision_jobs = number("--provision-jobs", value("--provision-jobs")?)?
            }
            "--full-sample" => args.full_sample = number("--full-sample", value("--full-sample")?)?,
            "--json" => args.json = Some(value("--json")?),
            "--drop-prefix" => args.drop_prefix = Some(value("--drop-prefix")?),
            "--jobs" => {
                args.jobs = number("--jobs", value("--jobs")?)?;
                jobs_given = true;
            }
            other if other.starts_with("--") => return Err(format!("unknown option {other}")),
            other => {
                match positional {
                    0 => args.n = number("N", other.to_owned())?,
                    1 => {
                        args.jobs = number("JOBS", other.to_owned())?;
                        jobs_given = true;
                    }
                    _ => return Err(format!("unexpected argument {other:?}")),
                }
                positional += 1;
            }
        }
    }
    if args.drop_prefix.is_some() && !jobs_given {
        args.jobs = 2;
    }
    args.jobs = args.jobs.max(1);
    args.provision_jobs = args.provision_jobs.max(1);
    // The slugs must parse: check the prefix once, with the longest suffix it gets.
    for prefix in [Some(&args.prefix), args.drop_prefix.as_ref()]
        .into_iter()
        .flatten()
    {
        TenantSlug::parse(&format!("{prefix}-full-0000"))
            .map_err(|e| format!("prefix {prefix:?} makes no valid slug: {e}"))?;
    }
    Ok(args)
}

/// Nearest-rank percentile in milliseconds of a sorted sample.
fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * (sorted.len() as f64 - 1.0)).round() as usize;
    sorted[rank.min(sorted.len() - 1)].as_secs_f64() * 1000.0
}

/// Count, total seconds and p50/p95/p99/max in ms of a set of timings.
fn summary(mut times: Vec<Duration>, total: Duration) -> Value {
    times.sort();
    json!({
        "count": times.len(),
        "total_s": total.as_secs_f64(),
        "p50_ms": percentile(&times, 50.0),
        "p95_ms": percentile(&times, 95.0),
        "p99_ms": percentile(&times, 99.0),
        "max_ms": times.last().map_or(0.0, |d| d.as_secs_f64() * 1000.0),
    })
}

fn ms(v: &Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or(0.0)
}

fn slug(raw: &str) -> Result<TenantSlug, String> {
    TenantSlug::parse(raw).map_err(|e| format!("slug {raw:?}: {e}"))
}

/// Runs `step` on every garden of `slugs`, `jobs` at a time, each timed, with a progress line
/// labelled `label`. Returns each garden's time and the total.
async fn timed_each<'a, F, Fut>(
    slugs: &'a [TenantSlug],
    jobs: usize,
    label: &str,
    step: F,
) -> Result<(Vec<Duration>, Duration), String>
where
    F: Fn(&'a TenantSlug) -> Fut,
    Fut: std::future::Future<Output = Result<(), String>>,
{
    let progress = Progress::new(label, slugs.len() as u64);
    let started = Instant::now();
    let results: Vec<Result<Duration, String>> = futures_util::stream::iter(slugs)
        .map(|slug| {
            let (progress, step) = (&progress, &step);
            async move {
                let t0 = Instant::now();
                step(slug).await?;
                progress.inc(1);
                Ok(t0.elapsed())
            }
        })
        .buffer_unordered(jobs)
        .collect()
        .await;
    let total = started.elapsed();
    let times = results.into_iter().collect::<Result<Vec<_>, _>>()?;
    progress.finish(format!(
        "{} gardens in {:.1} s",
        times.len(),
        total.as_secs_f64()
    ));
    Ok((times, total))
}

/// Provisions the gardens `slugs` at `version` (latest when `None`), `jobs` at a time; each
/// creation timed from its registry row to its activation.
async fn provision_all(
    state: &AppState,
    slugs: &[TenantSlug],
    version: Option<i64>,
    jobs: usize,
    label: &str,
) -> Result<(Vec<Duration>, Duration), String> {
    timed_each(slugs, jobs, label, |slug| async move {
        let options = ProvisionOptions {
            placement: None,
            target_version: version,
            ..ProvisionOptions::default()
        };
        provision::create_tenant(state, slug, "Scale test", options)
            .await
            .map(drop)
            .map_err(|e| format!("provisioning {slug}: {e}"))
    })
    .await
}

/// Drops the gardens `slugs`, `jobs` at a time, each timed.
async fn drop_all(
    state: &AppState,
    slugs: &[TenantSlug],
    jobs: usize,
    label: &str,
) -> Result<(Vec<Duration>, Duration), String> {
    timed_each(slugs, jobs, label, |slug| async move {
        provision::drop_tenant(state, slug)
            .await
            .map(drop)
            .map_err(|e| format!("dropping {slug}: {e}"))
    })
    .await
}

fn write_json(path: Option<&String>, value: &Value) -> Result<(), String> {
    if let Some(path) = path {
        let text = serde_json::to_string_pretty(value).map_err(|e| e.to_string())?;
        std::fs::write(path, text + "\n").map_err(|e| format!("writing {path}: {e}"))?;
    }
    Ok(())
}

async fn drop_prefix(state: &AppState, args: &Args, prefix: &str) -> Result<(), String> {
    let wanted = format!("{prefix}-");
    let slugs: Vec<TenantSlug> = registry::list(state.platform_pool())
        .await
        .map_err(|e| e.to_string())?
        .into_iter()
        .filter(|t| t.slug.as_str().starts_with(&wanted))
        .map(|t| t.slug)
        .collect();
    let (times, total) = drop_all(state, &slugs, args.jobs, "drop gardens").await?;
    let dropped = summary(times, total);
    println!("| measure | value |");
    println!("|---|---|");
    println!(
        "| drop {} gardens `{prefix}-…` ({} jobs), total | {:.1} s |",
        slugs.len(),
        args.jobs,
        total.as_secs_f64()
    );
    println!(
        "| drop per garden p50 / p95 / p99 | {:.1} / {:.1} / {:.1} ms |",
        ms(&dropped, "p50_ms"),
        ms(&dropped, "p95_ms"),
        ms(&dropped, "p99_ms")
    );
    write_json(
        args.json.as_ref(),
        &json!({"prefix": prefix, "jobs": args.jobs, "drop": dropped}),
    )
}

#[tokio::main]
async fn main() -> Result<(), String> {
    let args = parse_args()?;
    let config = Config::from_env().map_err(|e| e.to_string())?;
    let state = AppState::new(config).map_err(|e| e.to_string())?;
    migrate_platform(state.platform_pool())
        .await
        .map_err(|e| e.to_string())?;
    let result = match &args.drop_prefix {
        Some(prefix) => drop_prefix(&state, &args, prefix).await,
        None => run(&state, &args).await,
    };
    state.close().await;
    result
}

async fn run(state: &AppState, args: &Args) -> Result<(), String> {
    let n = args.n;
    let latest = latest_tenant_version();
    let behind = latest - 1;
    let slugs = (0..n)
        .map(|i| slug(&format!("{}-{i:04}", args.prefix)))
        .collect::<Result<Vec<_>, _>>()?;

    eprintln!(
        "tenant_scale: provisioning {n} gardens at v{behind} (latest v{latest}), {} at a time",
        args.provision_jobs
    );
    let (times, total) = provision_all(
        state,
        &slugs,
        Some(behind),
        args.provision_jobs,
        "provision gardens",
    )
    .await?;
    let provisioned = summary(times, total);

    eprintln!(
        "tenant_scale: migrating every garden behind to v{latest}, {} jobs",
        args.jobs
    );
    let t0 = Instant::now();
    let report = migrate_all_tenants_with(state, args.jobs, |total| {
        (total > 0).then(|| Progress::new("migrate gardens", total))
    })
    .await
    .map_err(|e| e.to_string())?;
    let migrate_total = t0.elapsed();
    let migrated = json!({
        "jobs": args.jobs,
        "total_s": migrate_total.as_secs_f64(),
        "migrated": report.migrated,
        "already_current": report.already_current,
        "failed": report.failed.len(),
        "per_garden_ms": if report.migrated > 0 {
            migrate_total.as_secs_f64() * 1000.0 * args.jobs as f64 / report.migrated as f64
        } else { 0.0 },
    });

    let mut full = Value::Null;
    if args.full_sample > 0 {
        let sample = (0..args.full_sample)
            .map(|i| slug(&format!("{}-full-{i:04}", args.prefix)))
            .collect::<Result<Vec<_>, _>>()?;
        eprintln!(
            "tenant_scale: {} more gardens at the latest version, one after another",
            sample.len()
        );
        let (times, total) =
            provision_all(state, &sample, None, 1, "provision full schema").await?;
        let (drop_times, drop_total) = drop_all(state, &sample, 1, "drop sample").await?;
        full = json!({
            "provision": summary(times, total),
            "drop": summary(drop_times, drop_total),
        });
    }

    let mut dropped = Value::Null;
    if !args.keep {
        let (times, total) = drop_all(state, &slugs, 1, "drop gardens").await?;
        dropped = summary(times, total);
    }

    println!("| measure | value |");
    println!("|---|---|");
    println!("| gardens | {n} |");
    println!(
        "| provision at v{behind} of v{latest} ({} at a time), total | {:.1} s |",
        args.provision_jobs,
        ms(&provisioned, "total_s")
    );
    println!(
        "| provision per garden p50 / p95 / p99 / max | {:.1} / {:.1} / {:.1} / {:.1} ms |",
        ms(&provisioned, "p50_ms"),
        ms(&provisioned, "p95_ms"),
        ms(&provisioned, "p99_ms"),
        ms(&provisioned, "max_ms")
    );
    println!(
        "| migrate all to v{latest} with {} jobs | {:.2} s ({} migrated, {} already current, {} failed) |",
        args.jobs,
        migrate_total.as_secs_f64(),
        report.migrated,
        report.already_current,
        report.failed.len()
    );
    if !full.is_null() {
        let p = &full["provision"];
        println!(
            "| provision at v{latest} (full schema), {} one after another, p50 / p95 / p99 / max | {:.1} / {:.1} / {:.1} / {:.1} ms |",
            args.full_sample,
            ms(p, "p50_ms"),
            ms(p, "p95_ms"),
            ms(p, "p99_ms"),
            ms(p, "max_ms")
        );
    }
    if !dropped.is_null() {
        println!(
            "| drop all (DROP SCHEMA CASCADE + registry row) | {:.1} s |",
            ms(&dropped, "total_s")
        );
    }
    for (slug, why) in &report.failed {
        eprintln!("tenant_scale: garden {slug}: {why}");
    }
    write_json(
        args.json.as_ref(),
        &json!({
            "gardens": n,
            "prefix": args.prefix,
            "latest_version": latest,
            "provisioned_at_version": behind,
            "provision": {"jobs": args.provision_jobs, "times": provisioned},
            "migrate": migrated,
            "full_sample": full,
            "drop": dropped,
        }),
    )?;
    if report.failed.is_empty() && report.migrated >= n {
        Ok(())
    } else {
        Err(format!(
            "migration incomplete: {} migrated of {n}, failed {:?}",
            report.migrated, report.failed
        ))
    }
}
