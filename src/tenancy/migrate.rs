//! Platform and tenant migrations. Tenant schemas migrate on demand (first request of a tenant
//! that is behind), on provisioning, and in bulk from the CLI; every path goes through
//! [`migrate_tenant`], which runs at most once per tenant at a time across all replicas.

use std::time::Duration;

use futures_util::StreamExt;
use sqlx::migrate::{MigrateError, Migrator};
use sqlx::{Connection, PgConnection};
use time::OffsetDateTime;

use super::names::SchemaName;
use super::registry::{self, MigrationTrigger, TenantRecord};
use crate::error::AppError;
use crate::progress::Progress;
use crate::state::AppState;

static PLATFORM: Migrator = sqlx::migrate!("./migrations/platform");
static TENANT: Migrator = sqlx::migrate!("./migrations/tenant");

#[derive(Debug, thiserror::Error)]
pub enum MigrationError {
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    #[error("migration error: {0}")]
    Migrate(#[from] MigrateError),
    #[error("tenant {0} names placement {1:?}, which is not configured")]
    UnknownPlacement(String, String),
    #[error("tenant {0} no longer exists")]
    TenantGone(String),
    /// A move is copying the garden (`kultiva tenant move`): a migration now would change the
    /// source under the copy, or reopen a source already closed to writes.
    #[error("tenant {0} is being moved to another placement; migrate it after the move")]
    Moving(String),
    /// A request's migration waited `ON_DEMAND_LOCK_WAIT` for the schema's lock (another
    /// replica's migration, or a move copying the garden, holds it): the request gets a 503
    /// to retry instead of hanging.
    #[error("tenant {0}'s schema is being changed by another process; retry shortly")]
    Busy(String),
}

/// How long a request waits in all for its garden's migration lock (the in-process single
/// flight and the schema's advisory lock) before it answers 503 (a migration of one garden
/// takes well under a second; a move holds the lock for its copy).
const ON_DEMAND_LOCK_WAIT: Duration = Duration::from_secs(10);

/// The newest tenant schema version this binary knows.
pub fn latest_tenant_version() -> i64 {
    TENANT.iter().map(|m| m.version).max().unwrap_or(0)
}

/// Applies pending platform migrations (idempotent; serialised by sqlx's own advisory lock).
///
/// On a dedicated session whose Citus settings keep the platform schema an ordinary schema of
/// the coordinator (`tenancy::citus::keep_platform_local`; nothing on plain PostgreSQL).
pub async fn migrate_platform(pool: &sqlx::PgPool) -> Result<(), MigrateError> {
    let mut migrator = Migrator::with_migrations(PLATFORM.iter().cloned().collect());
    migrator.dangerous_set_table_name("platform._sqlx_migrations");
    migrator.create_schema("platform");
    let mut conn = PgConnection::connect_with(&pool.connect_options()).await?;
    super::citus::keep_platform_local(&mut conn).await?;
    let result = migrator.run(&mut conn).await;
    if let Err(err) = conn.close().await {
        tracing::warn!(error = %err, "closing the platform migration connection failed");
    }
    result
}

/// What a migration call did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MigrationOutcome {
    pub from_version: i64,
    pub to_version: i64,
}

impl MigrationOutcome {
    fn unchanged(version: i64) -> Self {
        Self {
            from_version: version,
            to_version: version,
        }
    }

    pub fn applied(&self) -> bool {
        self.to_version != self.from_version
    }
}

/// Brings a tenant schema to `target` (latest when `None`), creating the schema if needed.
///
/// Runs on a dedicated connection under a per-tenant advisory lock, and re-reads the version
/// inside the lock, so concurrent callers (threads or replicas) migrate exactly once.
pub async fn migrate_tenant(
    state: &AppState,
    tenant: &TenantRecord,
    target: Option<i64>,
    trigger: MigrationTrigger,
) -> Result<MigrationOutcome, MigrationError> {
    let target = target.unwrap_or_else(latest_tenant_version);
    // A request waits a bounded time in all; the CLI and provisioning wait as long as it takes.
    let deadline = (trigger == MigrationTrigger::OnDemand)
        .then(|| tokio::time::Instant::now() + ON_DEMAND_LOCK_WAIT);
    let local = state.tenant_migrations().lock_for(tenant.id);
    let outcome = async {
        let _guard = match deadline {
            Some(deadline) => tokio::time::timeout_at(deadline, local.lock())
                .await
                .map_err(|_| MigrationError::Busy(tenant.slug.to_string()))?,
            None => local.lock().await,
        };
        migrate_locked(state, tenant, target, trigger, deadline).await
    }
    .await;
    drop(local);
    state.tenant_migrations().release(tenant.id);
    match &outcome {
        Ok(done) if done.applied() => crate::metrics::tenant_migration(trigger.as_str(), true),
        Ok(_) => {}
        Err(_) => crate::metrics::tenant_migration(trigger.as_str(), false),
    }
    outcome
}

async fn migrate_locked(
    state: &AppState,
    tenant: &TenantRecord,
    target: i64,
    trigger: MigrationTrigger,
    deadline: Option<tokio::time::Instant>,
) -> Result<MigrationOutcome, MigrationError> {
    // The caller's record may be stale (a replica's cache, or a move that switched since):
    // the registry row decides where the schema is, read again under the lock, on the server
    // that row names. A move that switched between the two reads sends this round to the new
    // server.
    for _ in 0..3 {
        let row = current_row(state, tenant, target).await?;
        if row.schema_version >= target {
            return Ok(MigrationOutcome::unchanged(row.schema_version));
        }
        let placement = state.placements().get(&row.placement).ok_or_else(|| {
            MigrationError::UnknownPlacement(tenant.slug.to_string(), row.placement.clone())
        })?;
        let mut conn = placement.dedicated().await?;
        let result = migrate_on(state, &mut conn, &row, target, trigger, deadline).await;
        // Closing the session releases the advisory lock and discards the session search_path.
        if let Err(err) = conn.close().await {
            tracing::warn!(error = %err, "closing the migration connection failed");
        }
        match result {
            Ok(Some(outcome)) => return Ok(outcome),
            Ok(None) => continue,
            Err(err) => return Err(err),
        }
    }
    Err(MigrationError::Moving(tenant.slug.to_string()))
}

/// The tenant's registry row; refused while a move is copying it and it is behind `target`
/// (a garden already there needs nothing, moving or not).
async fn current_row(
    state: &AppState,
    tenant: &TenantRecord,
    target: i64,
) -> Result<TenantRecord, MigrationError> {
    let row = registry::find_by_id(state.platform_pool(), tenant.id)
        .await?
        .ok_or_else(|| MigrationError::TenantGone(tenant.slug.to_string()))?;
    if row.schema_version < target && row.moving_to.is_some() {
        return Err(MigrationError::Moving(tenant.slug.to_string()));
    }
    Ok(row)
}

/// One round on the server `row` names: under the schema's lock there (a move holds it on
/// its source from before it records the move until it ends), the row read again. `None`
/// when the garden moved meanwhile (the caller goes again).
async fn migrate_on(
    state: &AppState,
    conn: &mut PgConnection,
    row: &TenantRecord,
    target: i64,
    trigger: MigrationTrigger,
    deadline: Option<tokio::time::Instant>,
) -> Result<Option<MigrationOutcome>, MigrationError> {
    let platform = state.platform_pool();
    match deadline {
        Some(deadline) => {
            if !try_lock_until(conn, &row.schema_name, deadline).await? {
                // A move that claimed the garden meanwhile says so; else someone else is busy.
                current_row(state, row, target).await?;
                return Err(MigrationError::Busy(row.slug.to_string()));
            }
        }
        None => take_lock(conn, &row.schema_name).await?,
    }
    // Another replica may have finished while this one waited for the lock, or a move may
    // have come and gone.
    let now = current_row(state, row, target).await?;
    let current = now.schema_version;
    if current >= target {
        return Ok(Some(MigrationOutcome::unchanged(current)));
    }
    if now.placement != row.placement {
        return Ok(None);
    }
    let started_at = OffsetDateTime::now_utc();
    let reached = apply_tenant_migrations(conn, &row.schema_name, target).await?;
    registry::set_version(platform, row.id, reached).await?;
    state.caches().forget_tenant(row.id);
    registry::record_migration(platform, row.id, current, reached, trigger, started_at).await?;
    tracing::info!(tenant = %row.slug, schema = %row.schema_name, from = current,
        to = reached, trigger = trigger.as_str(), "tenant schema migrated");
    Ok(Some(MigrationOutcome {
        from_version: current,
        to_version: reached,
    }))
}

/// Takes the schema's migration lock for the session (waits for a migration or a move
/// holding it). Released when the session closes.
pub(crate) async fn take_lock(
    conn: &mut PgConnection,
    schema: &SchemaName,
) -> Result<(), sqlx::Error> {
    sqlx::query("SELECT pg_advisory_lock(hashtextextended($1, 0))")
        .bind(lock_key(schema))
        .execute(conn)
        .await?;
    Ok(())
}

/// [`take_lock`] waiting until `deadline` at most; `false` when it is still held then.
async fn try_lock_until(
    conn: &mut PgConnection,
    schema: &SchemaName,
    deadline: tokio::time::Instant,
) -> Result<bool, sqlx::Error> {
    loop {
        let taken: bool =
            sqlx::query_scalar("SELECT pg_try_advisory_lock(hashtextextended($1, 0))")
                .bind(lock_key(schema))
                .fetch_one(&mut *conn)
                .await?;
        if taken {
            return Ok(true);
        }
        if tokio::time::Instant::now() >= deadline {
            return Ok(false);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn lock_key(schema: &SchemaName) -> String {
    format!("kultiva:tenant-migrate:{schema}")
}

/// Creates the schema if needed and applies tenant migrations up to `target` inside it.
/// Returns the version the schema is at afterwards.
pub(crate) async fn apply_tenant_migrations(
    conn: &mut PgConnection,
    schema: &SchemaName,
    target: i64,
) -> Result<i64, MigrationError> {
    let quoted = schema.quoted();
    // On a Citus coordinator the schema is made a distributed schema (placed on a worker),
    // and its migrations go one statement at a time (README "Citus").
    let citus = super::citus::is_citus(conn).await?;
    if citus {
        super::citus::distribute_tenant_schemas(conn).await?;
    }
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "CREATE SCHEMA IF NOT EXISTS {quoted}"
    )))
    .execute(&mut *conn)
    .await?;
    // Session-level on purpose: sqlx runs each migration in its own transaction on this
    // dedicated connection, which is closed afterwards.
    sqlx::query("SELECT set_config('search_path', $1, false)")
        .bind(&quoted)
        .execute(&mut *conn)
        .await?;
    let ledger = format!("{quoted}._sqlx_migrations");
    if citus {
        let migrations: Vec<_> = TENANT.iter().cloned().collect();
        super::citus::apply_split(conn, &ledger, &migrations, target).await?;
    } else {
        let mut migrator = Migrator::with_migrations(TENANT.iter().cloned().collect());
        migrator.dangerous_set_table_name(ledger);
        // Locking is ours (per tenant); sqlx's lock is per database and would serialise
        // tenants.
        migrator.set_locking(false);
        migrator.run_direct(Some(target), conn, false).await?;
    }
    let reached: Option<i64> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "SELECT max(version) FROM {quoted}._sqlx_migrations WHERE success"
    )))
    .fetch_one(&mut *conn)
    .await?;
    Ok(reached.unwrap_or(0))
}

/// Summary of a bulk run.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct BulkReport {
    pub migrated: usize,
    pub already_current: usize,
    pub failed: Vec<(String, String)>,
}

/// Migrates every tenant that is behind, `jobs` at a time. Failures are collected, not fatal:
/// one broken tenant must not hold back the others.
pub async fn migrate_all_tenants(
    state: &AppState,
    jobs: usize,
) -> Result<BulkReport, MigrationError> {
    migrate_all_tenants_with(state, jobs, |_| None).await
}

/// As [`migrate_all_tenants`], reporting each finished tenant to a progress made by
/// `progress(total)` once the number of tenants behind is known (`None`: no progress).
pub async fn migrate_all_tenants_with(
    state: &AppState,
    jobs: usize,
    progress: impl FnOnce(u64) -> Option<Progress>,
) -> Result<BulkReport, MigrationError> {
    let latest = latest_tenant_version();
    let behind = registry::list_behind(state.platform_pool(), latest).await?;
    let progress = progress(behind.len() as u64);
    let progress = progress.as_ref();
    let results: Vec<_> = futures_util::stream::iter(behind)
        .map(|tenant| async move {
            let outcome = migrate_tenant(state, &tenant, None, MigrationTrigger::Cli).await;
            if let Some(progress) = progress {
                progress.set_message(tenant.slug.as_str());
                progress.inc(1);
            }
            (tenant.slug.to_string(), outcome)
        })
        .buffer_unordered(jobs.max(1))
        .collect()
        .await;
    let mut report = BulkReport::default();
    for (slug, outcome) in results {
        match outcome {
            Ok(o) if o.applied() => report.migrated += 1,
            Ok(_) => report.already_current += 1,
            Err(err) => report.failed.push((slug, err.to_string())),
        }
    }
    if let Some(progress) = progress {
        progress.finish(format!(
            "{} migrated, {} already current, {} failed",
            report.migrated,
            report.already_current,
            report.failed.len()
        ));
    }
    Ok(report)
}

/// A tenant migration (provisioning, or on demand before a request): a lost database is a
/// 503, a garden being moved too (retry once the move is done); anything else is ours.
impl From<crate::tenancy::migrate::MigrationError> for AppError {
    fn from(err: crate::tenancy::migrate::MigrationError) -> AppError {
        use crate::tenancy::migrate::MigrationError;
        use sqlx::migrate::MigrateError;
        match err {
            MigrationError::Database(db)
            | MigrationError::Migrate(
                MigrateError::Execute(db) | MigrateError::ExecuteMigration(db, _),
            ) => db.into(),
            err @ (MigrationError::Moving(_) | MigrationError::Busy(_)) => {
                AppError::unavailable("this garden", err)
            }
            other => AppError::internal(other),
        }
    }
}
