//! The reaper of abandoned work.
//!
//! - Provisioning: a tenant still `provisioning` longer than
//!   `TENANT_PROVISIONING_TIMEOUT_SECONDS` after its last progress belongs to a creation (or an
//!   import) that died (process killed, database lost mid-way). The reaper drops its schema if
//!   present, removes the photo files an import wrote for it (`STORAGE_DIR/<tenant id>/`) and
//!   deletes its row, which frees its slug. Under a PostgreSQL advisory lock, so that one
//!   replica at a time does it.
//! - Moves: a `kultiva tenant move` whose process died leaves its record; the reaper finishes
//!   or rolls it back ([`moving::recover_abandoned`], the same code as the command's rerun,
//!   under the move's own advisory lock).
//!
//! It runs at `serve` start and periodically; every step is idempotent, so a reaper that dies
//! mid-way leaves work the next pass finishes.

use std::time::Duration;

use sqlx::{Connection, PgConnection};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::provision;
use super::registry::{self, TenantRecord};
use super::transfer::moving;
use crate::state::AppState;

/// Key of the session advisory lock one reaper pass holds (any replica, any process).
pub const REAPER_LOCK_KEY: i64 = 0x6b75_6c74_7265_6170; // "kultreap"

/// How long the reaper waits for locks on a schema it drops (a migration still running on it
/// after the bound): it gives up and tries again next pass rather than hang.
const DROP_LOCK_TIMEOUT: &str = "5s";

/// Time between passes: half the bound, at least 1 s, at most 60 s.
pub fn interval(bound: Duration) -> Duration {
    (bound / 2).clamp(Duration::from_secs(1), Duration::from_secs(60))
}

/// One pass: removes every tenant stuck in `provisioning` for longer than `older_than`.
/// Returns how many it removed; `None` when another process holds the reaper's lock.
///
/// The pass runs on a connection of its own (like the cache feed), never one of the request
/// pools: it holds the lock across several statements and must not starve requests (or wait
/// for itself in a small pool).
pub async fn reap_stale(
    state: &AppState,
    older_than: Duration,
) -> Result<Option<u64>, sqlx::Error> {
    let primary = state.placements().primary();
    let options = primary
        .connect_options()
        .clone()
        .application_name("kultiva-reaper");
    let mut conn = PgConnection::connect_with(&options).await?;
    let locked: bool = sqlx::query_scalar("SELECT pg_try_advisory_lock($1)")
        .bind(REAPER_LOCK_KEY)
        .fetch_one(&mut conn)
        .await?;
    let reaped = if locked {
        reap_locked(state, &mut conn, older_than).await.map(Some)
    } else {
        Ok(None)
    };
    // Closing the session releases the lock (also when a statement above failed).
    let _ = conn.close().await;
    reaped
}

async fn reap_locked(
    state: &AppState,
    conn: &mut PgConnection,
    older_than: Duration,
) -> Result<u64, sqlx::Error> {
    let seconds = older_than.as_secs_f64();
    let sql = sqlx::AssertSqlSafe(format!(
        "SELECT {} FROM platform.tenants WHERE status = 'provisioning' \
         AND updated_at < now() - make_interval(secs => $1) ORDER BY updated_at",
        registry::COLUMNS
    ));
    let stale: Vec<TenantRecord> = sqlx::query(sql)
        .bind(seconds)
        .fetch_all(&mut *conn)
        .await?
        .iter()
        .map(registry::decode)
        .collect::<Result<_, _>>()?;
    let mut reaped = 0;
    for tenant in stale {
        match reap_one(state, conn, &tenant, seconds).await {
            Ok(true) => {
                reaped += 1;
                tracing::warn!(tenant = %tenant.slug, schema = %tenant.schema_name,
                    placement = %tenant.placement, since = %tenant.updated_at,
                    "reaped a tenant stuck in provisioning; its slug is free again");
            }
            Ok(false) => {}
            Err(err) => {
                tracing::warn!(tenant = %tenant.slug, error = %err,
                    "reaping a tenant stuck in provisioning failed; next pass retries");
            }
        }
    }
    Ok(reaped)
}

/// Holds the row (still `provisioning`, still old) locked while the schema is dropped and the
/// row deleted, so a creation finishing at this instant either activates first (and the
/// reaper skips it) or finds its tenant gone (`ProvisionError::Expired`). A schema on the
/// primary server is dropped in the same transaction.
async fn reap_one(
    state: &AppState,
    conn: &mut PgConnection,
    tenant: &TenantRecord,
    seconds: f64,
) -> Result<bool, sqlx::Error> {
    let mut tx = conn.begin().await?;
    let still = sqlx::query(
        "SELECT id FROM platform.tenants WHERE id = $1 AND status = 'provisioning' \
         AND updated_at < now() - make_interval(secs => $2) FOR UPDATE SKIP LOCKED",
    )
    .bind(tenant.id)
    .bind(seconds)
    .fetch_optional(&mut *tx)
    .await?;
    if still.is_none() {
        return Ok(false);
    }
    let lock_timeout =
        sqlx::AssertSqlSafe(format!("SET LOCAL lock_timeout = '{DROP_LOCK_TIMEOUT}'"));
    if tenant.placement == state.placements().primary().name() {
        sqlx::query(lock_timeout).execute(&mut *tx).await?;
        provision::drop_schema(&mut *tx, tenant).await?;
    } else if let Some(placement) = state.placements().get(&tenant.placement) {
        let mut drop_tx = placement.pool().begin().await?;
        sqlx::query(lock_timeout).execute(&mut *drop_tx).await?;
        provision::drop_schema(&mut *drop_tx, tenant).await?;
        drop_tx.commit().await?;
    } else {
        // Its schema lives on a server this process does not know: the row goes, the
        // schema (if any was made) stays for the operator.
        tracing::warn!(tenant = %tenant.slug, placement = %tenant.placement,
            "stuck tenant on an unknown placement: its schema, if any, is left in place");
    }
    // Files first: if this fails, the row stays and the next pass tries again.
    provision::remove_files(state, tenant.id)
        .await
        .map_err(sqlx::Error::Io)?;
    let deleted = sqlx::query("DELETE FROM platform.tenants WHERE id = $1")
        .bind(tenant.id)
        .execute(&mut *tx)
        .await?
        .rows_affected();
    tx.commit().await?;
    state.caches().forget_tenant(tenant.id);
    Ok(deleted == 1)
}

/// The periodic reaper of one `serve` process; stopped with the server.
pub struct ReaperWorker {
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl ReaperWorker {
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }
}

/// Runs a pass at once and then every [`interval`] of the configured bound.
pub fn start(state: AppState) -> ReaperWorker {
    let (stop, mut stopped) = watch::channel(false);
    let task = tokio::spawn(async move {
        let bound = state.config().provisioning_timeout;
        let every = interval(bound);
        loop {
            let closed = state.placements().sweep_reads();
            if closed > 0 {
                tracing::debug!(closed, "idle read connections closed");
            }
            match reap_stale(&state, bound).await {
                Ok(Some(n)) if n > 0 => {
                    tracing::info!(reaped = n, "provisioning reaper pass done");
                }
                Ok(_) => {}
                Err(err) => {
                    tracing::warn!(error = %err, "provisioning reaper pass failed; retrying later");
                }
            }
            match moving::recover_abandoned(&state, moving::ABANDONED_AFTER).await {
                Ok(done) if !done.is_empty() => {
                    tracing::info!(recovered = done.len(), "abandoned moves recovered");
                }
                Ok(_) => {}
                Err(err) => {
                    tracing::warn!(error = %err, "recovering abandoned moves failed; retrying later");
                }
            }
            tokio::select! {
                _ = stopped.changed() => break,
                () = tokio::time::sleep(every) => {}
            }
            if *stopped.borrow() {
                break;
            }
        }
    });
    ReaperWorker { stop, task }
}
