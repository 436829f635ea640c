//! `kultiva`: serve the API, run migrations, manage tenants. A refused command exits non-zero
//! with a one-line reason on standard error.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use kultiva::auth::Role;
use kultiva::config::Config;
use kultiva::platform::operator;
use kultiva::progress::Progress;
use kultiva::state::AppState;
use kultiva::tenancy::migrate::{self, latest_tenant_version};
use kultiva::tenancy::provision::{self, ProvisionOptions};
use kultiva::tenancy::{TenantSlug, registry, transfer};
use kultiva::{serve, telemetry};

/// mimalloc instead of glibc malloc: see Cargo.toml.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(name = "kultiva", version, about = "Kultiva plant-cultivation backend")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the API (applies pending platform migrations first).
    Serve,
    /// Apply platform migrations; with --all-tenants, bring every tenant schema up to date.
    Migrate {
        #[arg(long)]
        all_tenants: bool,
        /// Tenants migrated in parallel.
        #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..=64))]
        jobs: u16,
    },
    /// Manage tenants (gardens).
    Tenant {
        #[command(subcommand)]
        command: TenantCommand,
    },
    /// Manage service accounts (API-key-only machine accounts).
    ServiceAccount {
        #[command(subcommand)]
        command: ServiceAccountCommand,
    },
    /// Load the master-data catalogue (idempotent: a second run changes nothing).
    Seed {
        /// Only validate the seed data; write nothing.
        #[arg(long)]
        check: bool,
        /// Read the seed files from this directory instead of the ones built in.
        #[arg(long)]
        dir: Option<std::path::PathBuf>,
    },
    /// Manage platform administrators (admins of the platform tenant).
    PlatformAdmin {
        #[command(subcommand)]
        command: PlatformAdminCommand,
    },
    /// A stdio MCP server for desktop clients: forwards every JSON-RPC message on stdin to the
    /// hosted tool server at KULTIVA_URL with the API key in KULTIVA_API_KEY (environment
    /// only, never arguments); answers on stdout, logs on stderr; exits 0 at end of input.
    /// Needs no database.
    McpStdio,
    /// The digest mail (daily or weekly summary of what is due in a user's gardens).
    Digest {
        #[command(subcommand)]
        command: DigestCommand,
    },
    /// Sensor readings.
    Sensors {
        #[command(subcommand)]
        command: SensorsCommand,
    },
    /// Environment alerts.
    Alerts {
        #[command(subcommand)]
        command: AlertsCommand,
    },
    /// The weather forecast of sites with coordinates (WEATHER_URL).
    Weather {
        #[command(subcommand)]
        command: WeatherCommand,
    },
}

#[derive(Subcommand)]
enum WeatherCommand {
    /// Fetch the forecast of every site with coordinates once (what the server does every
    /// WEATHER_POLL_MINUTES), store it as readings of origin weather, and open or resolve the
    /// frost alerts it implies. A forecast that cannot be fetched is reported, not fatal.
    Poll,
}

#[derive(Subcommand)]
enum AlertsCommand {
    /// Run the alert scan once in every garden (what the server does every
    /// ALERT_SCAN_SECONDS): open the alerts whose cause began, resolve those whose cause ended.
    Scan,
}

#[derive(Subcommand)]
enum SensorsCommand {
    /// Apply the retention in every garden: raw readings older than 90 days go (whole month
    /// partitions dropped, older rows of the month at the limit deleted); hourly roll-ups stay.
    Prune,
}

#[derive(Subcommand)]
enum DigestCommand {
    /// Send the digests due now (at most one per user and local day) and deliver the mails.
    Send {
        /// Regardless of the user's digest hour (and of the weekday for weekly digests).
        #[arg(long)]
        all: bool,
        /// Only this user (e-mail address).
        #[arg(long)]
        user: Option<String>,
    },
}

#[derive(Subcommand)]
enum ServiceAccountCommand {
    /// Create a service account with a role in one tenant; prints the raw key (once) alone on
    /// the last line.
    Create {
        #[arg(long)]
        name: String,
        /// Tenant slug.
        #[arg(long)]
        tenant: String,
        #[arg(long, value_parser = ["viewer", "grower", "admin"])]
        role: String,
    },
    /// List service accounts.
    List,
    /// Give a service account a role in another tenant (or change it).
    AddMembership {
        /// Account key (from `list`).
        #[arg(long)]
        account: String,
        #[arg(long)]
        tenant: String,
        #[arg(long, value_parser = ["viewer", "grower", "admin"])]
        role: String,
    },
    /// Deactivate a service account and revoke all its keys.
    Revoke {
        #[arg(long)]
        account: String,
    },
}

#[derive(Subcommand)]
enum PlatformAdminCommand {
    /// Make an existing account admin of the platform tenant (created on first use).
    Grant { email: String },
}

#[derive(Subcommand)]
enum TenantCommand {
    /// Create a tenant: register it, create its schema and migrate it.
    Create {
        slug: String,
        /// Display name (defaults to the slug).
        #[arg(long)]
        name: Option<String>,
        /// Placement (PostgreSQL server) to put the schema on; defaults to DEFAULT_PLACEMENT.
        #[arg(long)]
        placement: Option<String>,
    },
    /// List tenants.
    List,
    /// Drop a tenant and ALL its data. Needs --yes.
    Drop {
        slug: String,
        /// Confirm the irreversible deletion.
        #[arg(long)]
        yes: bool,
    },
    /// Write one garden (rows, photo files, members) to a file (gzip'd; see README).
    Export {
        slug: String,
        /// The file to write (replaced if it exists).
        #[arg(long)]
        out: std::path::PathBuf,
    },
    /// Create a garden from an export file, under a new slug; ids inside the garden are kept.
    Import {
        /// The export file.
        #[arg(long = "in")]
        input: std::path::PathBuf,
        /// Slug of the new garden (refused if in use).
        #[arg(long)]
        slug: String,
        /// Placement of the new garden; defaults to DEFAULT_PLACEMENT.
        #[arg(long)]
        placement: Option<String>,
        /// Give the file's members their roles again (accounts that exist here).
        #[arg(long)]
        with_members: bool,
        /// Kind of the new garden, `personal` or `organisation`; defaults to the file's.
        #[arg(long)]
        kind: Option<String>,
    },
    /// Move a garden's schema to another placement (PostgreSQL server), or on a Citus
    /// cluster to another worker node (`--to-node host:port`, by `citus_schema_move`).
    Move {
        slug: String,
        /// The placement to move to (TENANT_PLACEMENTS).
        #[arg(long, required_unless_present = "to_node", conflicts_with = "to_node")]
        to: Option<String>,
        /// The Citus worker to move to, as `host:port` as the coordinator knows it
        /// (`pg_dist_node`).
        #[arg(long)]
        to_node: Option<String>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // The bridge runs on a desktop: no configuration, database or state of the server.
    if matches!(cli.command, Command::McpStdio) {
        return mcp_stdio();
    }
    let config = match Config::from_env() {
        Ok(config) => config,
        Err(err) => return fail(err),
    };
    telemetry::init(config.log_format);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(err) => return fail(format!("cannot start the runtime: {err}")),
    };
    match runtime.block_on(run(cli.command, config)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(reason) => fail(reason),
    }
}

fn mcp_stdio() -> ExitCode {
    use kultiva::mcp::stdio_bridge::{self, BridgeConfig};
    let config = match BridgeConfig::from_env() {
        Ok(config) => config,
        Err(reason) => {
            // stderr first (one line, for logs), then the client's requests are answered
            // with the same reason until it closes stdin; the exit status stays a failure.
            let code = fail(format!("mcp-stdio: {reason}"));
            stdio_bridge::refuse(&reason, std::io::stdin().lock(), std::io::stdout().lock());
            return code;
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(err) => return fail(format!("cannot start the runtime: {err}")),
    };
    match runtime.block_on(stdio_bridge::run(config)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(reason) => fail(format!("mcp-stdio: {reason}")),
    }
}

fn fail(reason: impl std::fmt::Display) -> ExitCode {
    let line = reason.to_string().replace('\n', " ");
    eprintln!("kultiva: {line}");
    ExitCode::FAILURE
}

async fn run(command: Command, config: Config) -> Result<(), String> {
    let state = AppState::new(config).map_err(|e| e.to_string())?;
    migrate::migrate_platform(state.platform_pool())
        .await
        .map_err(|e| format!("platform migrations failed: {e}"))?;
    let result = match command {
        Command::McpStdio => Err("mcp-stdio runs without the server's state".to_owned()),
        Command::Serve => serve_forever(state.clone()).await,
        Command::Migrate { all_tenants, jobs } => migrate_command(&state, all_tenants, jobs).await,
        Command::Tenant { command } => tenant_command(&state, command).await,
        Command::ServiceAccount { command } => service_account_command(&state, command).await,
        Command::Seed { check, dir } => seed_command(&state, check, dir).await,
        Command::Digest {
            command: DigestCommand::Send { all, user },
        } => digest_command(&state, all, user.as_deref()).await,
        Command::Sensors {
            command: SensorsCommand::Prune,
        } => sensors_prune_command(&state).await,
        Command::Alerts {
            command: AlertsCommand::Scan,
        } => alerts_scan_command(&state).await,
        Command::Weather {
            command: WeatherCommand::Poll,
        } => weather_poll_command(&state).await,
        Command::PlatformAdmin {
            command: PlatformAdminCommand::Grant { email },
        } => {
            let user = operator::grant_platform_admin(&state, &email)
                .await
                .map_err(|e| e.to_string())?;
            println!(
                "{} is now an admin of the platform tenant {}",
                user.email.unwrap_or_default(),
                operator::PLATFORM_TENANT_SLUG
            );
            Ok(())
        }
    };
    state.close().await;
    result
}

async fn digest_command(state: &AppState, all: bool, user: Option<&str>) -> Result<(), String> {
    let summary = kultiva::notify::digest::service::send_due(state, all, user)
        .await
        .map_err(|e| format!("digest: {e}"))?;
    // Without a running service nobody else sends them: deliver what is queued now.
    kultiva::mail::worker::drain_once(state).await?;
    println!(
        "digests sent: {}, nothing to say: {}, users due: {}",
        summary.sent, summary.empty, summary.considered
    );
    Ok(())
}

async fn sensors_prune_command(state: &AppState) -> Result<(), String> {
    let now = time::OffsetDateTime::now_utc();
    let (summary, failed) = kultiva::garden::sensors::service::prune_all(state, now)
        .await
        .map_err(|e| format!("sensors prune: {e}"))?;
    println!(
        "sensor readings pruned: {} month partition(s) dropped, {} row(s) deleted",
        summary.partitions_dropped, summary.rows_deleted
    );
    if failed.is_empty() {
        return Ok(());
    }
    for (slug, reason) in &failed {
        eprintln!("sensors prune: garden {slug}: {reason}");
    }
    Err(format!(
        "sensors prune failed in {} garden(s)",
        failed.len()
    ))
}

async fn alerts_scan_command(state: &AppState) -> Result<(), String> {
    let now = time::OffsetDateTime::now_utc();
    let (summary, failed) = kultiva::notify::alerts::scan_all(state, now)
        .await
        .map_err(|e| format!("alerts scan: {e}"))?;
    println!(
        "alerts scanned in {} garden(s): {} opened, {} resolved",
        summary.gardens, summary.opened, summary.resolved
    );
    if failed.is_empty() {
        return Ok(());
    }
    for (slug, reason) in &failed {
        eprintln!("alerts scan: garden {slug}: {reason}");
    }
    Err(format!("alerts scan failed in {} garden(s)", failed.len()))
}

async fn weather_poll_command(state: &AppState) -> Result<(), String> {
    if state.config().weather_url.is_none() {
        return Err("weather poll: WEATHER_URL is not set".to_owned());
    }
    let now = time::OffsetDateTime::now_utc();
    let (s, failed) = kultiva::notify::weather::poll_all(state, now)
        .await
        .map_err(|e| format!("weather poll: {e}"))?;
    println!(
        "weather polled in {} garden(s): {} site(s), {} forecast(s) fetched, {} failed; \
         {} reading(s) stored, {} updated; {} frost alert(s) opened, {} resolved",
        s.gardens, s.sites, s.fetched, s.fetch_failures, s.stored, s.updated, s.opened, s.resolved
    );
    if failed.is_empty() {
        return Ok(());
    }
    for (slug, reason) in &failed {
        eprintln!("weather poll: garden {slug}: {reason}");
    }
    Err(format!("weather poll failed in {} garden(s)", failed.len()))
}

async fn serve_forever(state: AppState) -> Result<(), String> {
    let config = state.config();
    // A cluster URL for a single server (or the reverse) would fail every Redis command.
    kultiva::store::redis::verify_mode(&config.redis).await?;
    let mut bound = serve::bind(config.bind_address)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", config.bind_address))?;
    if let Some(addr) = config.metrics_bind_address {
        let at = bound
            .bind_metrics(addr)
            .await
            .map_err(|e| format!("cannot listen on METRICS_BIND_ADDRESS {addr}: {e}"))?;
        tracing::info!(address = %at, "metrics served at /metrics");
    }
    tracing::info!(address = %bound.local_addr(), mode = config.service_mode.as_str(),
        version = env!("CARGO_PKG_VERSION"), "kultiva serving");
    serve::stop_on_signal(bound.stopper(), config.shutdown_grace);
    bound.serve(state).await;
    Ok(())
}

async fn migrate_command(state: &AppState, all_tenants: bool, jobs: u16) -> Result<(), String> {
    println!("platform schema up to date");
    if !all_tenants {
        return Ok(());
    }
    let started = std::time::Instant::now();
    // A bar on a terminal, plain lines on stderr otherwise; none when nothing is behind.
    let report = migrate::migrate_all_tenants_with(state, usize::from(jobs), |total| {
        (total > 0).then(|| Progress::new("migrate tenants", total))
    })
    .await
    .map_err(|e| e.to_string())?;
    println!(
        "tenants migrated: {}, already current: {}, failed: {} (latest version {}, {:.1}s)",
        report.migrated,
        report.already_current,
        report.failed.len(),
        latest_tenant_version(),
        started.elapsed().as_secs_f64()
    );
    for (slug, why) in &report.failed {
        eprintln!("kultiva: tenant {slug}: {why}");
    }
    if report.failed.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} tenant(s) failed to migrate",
            report.failed.len()
        ))
    }
}

async fn tenant_command(state: &AppState, command: TenantCommand) -> Result<(), String> {
    let parse =
        |raw: &str| TenantSlug::parse(raw).map_err(|e| format!("invalid slug {raw:?}: {e}"));
    match command {
        TenantCommand::Create {
            slug,
            name,
            placement,
        } => {
            let slug = parse(&slug)?;
            let name = name.unwrap_or_else(|| slug.to_string());
            let tenant = provision::create_tenant(
                state,
                &slug,
                &name,
                ProvisionOptions {
                    placement,
                    ..ProvisionOptions::default()
                },
            )
            .await
            .map_err(|e| e.to_string())?;
            println!(
                "created tenant {} (schema {}, placement {}, version {})",
                tenant.slug, tenant.schema_name, tenant.placement, tenant.schema_version
            );
        }
        TenantCommand::List => {
            let tenants = registry::list(state.platform_pool())
                .await
                .map_err(|e| e.to_string())?;
            println!(
                "{:<30} {:<12} {:<10} {:>7}  {:<34} NAME",
                "SLUG", "STATUS", "PLACEMENT", "VERSION", "SCHEMA"
            );
            for t in tenants {
                // A move in progress shows as `moving` (the garden stays active meanwhile).
                let status = if t.moving_to.is_some() {
                    "moving"
                } else {
                    t.status.as_str()
                };
                println!(
                    "{:<30} {:<12} {:<10} {:>7}  {:<34} {}",
                    t.slug, status, t.placement, t.schema_version, t.schema_name, t.name
                );
            }
        }
        TenantCommand::Drop { slug, yes } => {
            let slug = parse(&slug)?;
            if !yes {
                return Err(format!(
                    "refusing to drop tenant {slug} and all its data without --yes"
                ));
            }
            let tenant = provision::drop_tenant(state, &slug)
                .await
                .map_err(|e| e.to_string())?;
            println!(
                "dropped tenant {} (schema {})",
                tenant.slug, tenant.schema_name
            );
        }
        TenantCommand::Export { slug, out } => {
            let slug = parse(&slug)?;
            let report = kultiva::garden::transfer::export::export_tenant(state, &slug, &out)
                .await
                .map_err(|e| e.to_string())?;
            println!(
                "exported tenant {} (schema version {}): {} tables, {} rows, {} photo files, \
                 {} bytes to {}",
                report.slug,
                report.schema_version,
                report.tables,
                report.rows,
                report.files,
                report.bytes,
                out.display()
            );
            if report.missing_files > 0 {
                eprintln!(
                    "kultiva: {} photo file(s) named by the garden were missing from the \
                     storage and are not in the file",
                    report.missing_files
                );
            }
        }
        TenantCommand::Import {
            input,
            slug,
            placement,
            with_members,
            kind,
        } => {
            let slug = parse(&slug)?;
            let kind = kind
                .map(|raw| {
                    kultiva::tenancy::TenantKind::parse(&raw)
                        .ok_or_else(|| format!("unknown garden kind {raw:?}"))
                })
                .transpose()?;
            let options = kultiva::garden::transfer::import::ImportOptions {
                placement,
                with_members,
                kind,
                ..Default::default()
            };
            let report =
                kultiva::garden::transfer::import::import_tenant(state, &input, &slug, options)
                    .await
                    .map_err(|e| e.to_string())?;
            println!(
                "imported tenant {} (schema {}, placement {}, version {} from file version \
                 {}): {} tables, {} rows, {} photo files, {} member(s) restored",
                report.tenant.slug,
                report.tenant.schema_name,
                report.tenant.placement,
                report.tenant.schema_version,
                report.file_version,
                report.tables,
                report.rows,
                report.files,
                report.members_restored
            );
            for who in &report.members_skipped {
                eprintln!("kultiva: member {who} has no account here; not restored");
            }
        }
        TenantCommand::Move {
            slug,
            to_node: Some(node),
            ..
        } => {
            let slug = parse(&slug)?;
            let node: kultiva::tenancy::citus::Node = node.parse()?;
            let done = kultiva::tenancy::citus::move_garden(state, &slug, &node)
                .await
                .map_err(|e| e.to_string())?;
            println!(
                "moved tenant {} (schema {}) from {} to {} with citus_schema_move: {:.1}s",
                done.slug,
                done.schema,
                done.moved.from,
                done.moved.to,
                done.moved.elapsed.as_secs_f64()
            );
        }
        TenantCommand::Move { slug, to, .. } => {
            let slug = parse(&slug)?;
            let to = to.ok_or("--to or --to-node is required")?;
            let report = transfer::moving::move_tenant(
                state,
                &slug,
                &to,
                transfer::moving::MoveOptions::default(),
            )
            .await
            .map_err(|e| e.to_string())?;
            if let Some(note) = &report.recovered {
                println!("{note}");
            }
            if report.already_there {
                println!("tenant {} is on placement {}", report.slug, report.to);
            } else {
                println!(
                    "moved tenant {} from {} to {}: {} tables, {} rows; writes paused {} ms; \
                     {:.1}s in all",
                    report.slug,
                    report.from,
                    report.to,
                    report.tables,
                    report.rows,
                    report.write_pause.as_millis(),
                    report.total.as_secs_f64()
                );
                if !report.source_dropped {
                    eprintln!(
                        "kultiva: the old copy on {} is not dropped yet (reads still on it); \
                         run the same command again to drop it",
                        report.from
                    );
                }
            }
        }
    }
    Ok(())
}

async fn seed_command(
    state: &AppState,
    check: bool,
    dir: Option<std::path::PathBuf>,
) -> Result<(), String> {
    use kultiva::catalog::seed::{self, SeedSet};
    let set = match &dir {
        Some(d) => SeedSet::from_dir(d).map_err(|e| format!("cannot read {}: {e}", d.display()))?,
        None => SeedSet::embedded(),
    };
    if check {
        let valid = seed::validate::validate(&set).map_err(|errors| {
            print_seed_problems(&errors);
            format!("the seed data is invalid ({} problem(s))", errors.len())
        })?;
        let n: usize = valid.files.iter().map(|(_, r)| r.len()).sum();
        println!(
            "seed data valid: {n} records in {} files",
            valid.files.len()
        );
        return Ok(());
    }
    // A bar on a terminal, plain lines on stderr otherwise: one step per record.
    let progress = |total| Some(Progress::new("seed", total));
    let report = seed::load::load_with(state, &set, progress).await;
    let report = report.map_err(|e| match e {
        seed::load::SeedError::Invalid(errors) => {
            print_seed_problems(&errors);
            format!(
                "the seed data is invalid ({} problem(s)); nothing was written",
                errors.len()
            )
        }
        other => other.to_string(),
    })?;
    for (file, created, updated, unchanged) in &report.files {
        println!("{file:<22} created {created:>4}  updated {updated:>4}  unchanged {unchanged:>4}");
    }
    println!(
        "seed done: {} record(s) written, {} binding(s) changed",
        report.written(),
        report.bindings_changed
    );
    Ok(())
}

/// The first 50 problems, one a line.
fn print_seed_problems(errors: &[String]) {
    for e in errors.iter().take(50) {
        eprintln!("kultiva: seed: {e}");
    }
    if errors.len() > 50 {
        eprintln!("kultiva: seed: … and {} more", errors.len() - 50);
    }
}

fn role(raw: &str) -> Result<Role, String> {
    Role::parse(raw).ok_or_else(|| format!("unknown role {raw:?}"))
}

async fn service_account_command(
    state: &AppState,
    command: ServiceAccountCommand,
) -> Result<(), String> {
    match command {
        ServiceAccountCommand::Create {
            name,
            tenant,
            role: r,
        } => {
            let (user, key) = operator::create_service_account(state, &name, &tenant, role(&r)?)
                .await
                .map_err(|e| e.to_string())?;
            println!(
                "created service account {} ({})",
                user.display_name, user.key
            );
            println!(
                "role {r} in tenant {tenant}; key {} (shown once):",
                key.key_prefix
            );
            println!("{}", key.raw_key.unwrap_or_default());
        }
        ServiceAccountCommand::List => {
            let rows = kultiva::auth::api_keys::repo::service_accounts(state.platform_pool())
                .await
                .map_err(|e| e.to_string())?;
            println!("{:<36}  {:<6} {:>4}  NAME", "KEY", "ACTIVE", "KEYS");
            for row in rows {
                println!(
                    "{:<36}  {:<6} {:>4}  {}",
                    row.key, row.is_active, row.active_keys, row.display_name
                );
            }
        }
        ServiceAccountCommand::AddMembership {
            account,
            tenant,
            role: r,
        } => {
            operator::add_membership(state, &account, &tenant, role(&r)?)
                .await
                .map_err(|e| e.to_string())?;
            println!("service account {account} has role {r} in tenant {tenant}");
        }
        ServiceAccountCommand::Revoke { account } => {
            let n = operator::revoke_service_account(state, &account)
                .await
                .map_err(|e| e.to_string())?;
            println!("service account {account} deactivated; {n} key(s) revoked");
        }
    }
    Ok(())
}
