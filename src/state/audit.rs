//! The audit trail of tool calls (and of audited REST writes and sign-in events): every face
//! writes to it, so it sits with the shared state. A call hands its row to a bounded channel; the audit worker
//! of the serving process writes rows in batches (one INSERT for all rows queued, up to
//! [`BATCH`], so auditing adds no round trip to a call) and deletes rows past the 90-day
//! retention once an hour. On a graceful shutdown the server first finishes its requests, then
//! the worker writes everything queued, then the pools close.
//!
//! When the channel is full (PostgreSQL slower than the calls for [`CHANNEL_CAPACITY`] rows) a
//! call waits up to [`FULL_WAIT`] for room, then writes its own row directly, on its own path
//! (one INSERT, bounded by the pool's acquire timeout): load is pushed back onto the callers,
//! never onto an unbounded queue, and rows are not dropped. Each such call is counted
//! ([`AuditSink::overflowed`]) and logged; a row that cannot be written at all (PostgreSQL
//! down) is counted ([`AuditSink::lost`]) and logged as an error with its tool and account.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde::Serialize;
use sqlx::PgPool;
use time::OffsetDateTime;
use tokio::sync::{mpsc, watch};
use uuid::Uuid;

use crate::state::AppState;

/// How long rows are kept.
pub const RETENTION_DAYS: i32 = 90;
pub const CHANNEL_CAPACITY: usize = 4096;
pub const BATCH: usize = 256;
/// How long a call waits for room in a full channel before writing its row itself.
pub const FULL_WAIT: Duration = Duration::from_millis(250);
const PURGE_EVERY: Duration = Duration::from_secs(3600);

/// One tool call, as audited.
#[derive(Debug, Clone)]
pub struct AuditEntry {
    pub account_id: Uuid,
    pub api_key_id: Option<Uuid>,
    pub tenant_id: Option<Uuid>,
    pub tool_name: String,
    pub input_hash: String,
    pub response_bytes: i32,
    pub duration_ms: i32,
    pub status: &'static str,
    pub error_class: Option<&'static str>,
    pub created_at: OffsetDateTime,
}

/// The sending side, kept in the application state; the worker takes the receiver.
#[derive(Debug)]
pub struct AuditSink {
    tx: mpsc::Sender<AuditEntry>,
    rx: Mutex<Option<mpsc::Receiver<AuditEntry>>>,
    overflowed: AtomicU64,
    lost: AtomicU64,
}

impl Default for AuditSink {
    fn default() -> Self {
        let (tx, rx) = mpsc::channel(CHANNEL_CAPACITY);
        Self {
            tx,
            rx: Mutex::new(Some(rx)),
            overflowed: AtomicU64::new(0),
            lost: AtomicU64::new(0),
        }
    }
}

impl AuditSink {
    /// Rows a call wrote itself because the channel was full or closed (since start).
    pub fn overflowed(&self) -> u64 {
        self.overflowed.load(Ordering::Relaxed)
    }

    /// Rows that could not be written at all (since start; each also logged as an error).
    pub fn lost(&self) -> u64 {
        self.lost.load(Ordering::Relaxed)
    }
}

/// Queues a row for the worker. When the channel stays full for [`FULL_WAIT`], or no worker
/// will read it any more (after shutdown), the row is written directly before this returns.
pub async fn record(state: &AppState, entry: AuditEntry) {
    let sink = state.mcp_audit();
    let entry = match sink.tx.try_send(entry) {
        Ok(()) => return,
        Err(mpsc::error::TrySendError::Closed(e)) => e,
        Err(mpsc::error::TrySendError::Full(e)) => match sink.tx.send_timeout(e, FULL_WAIT).await {
            Ok(()) => return,
            Err(
                mpsc::error::SendTimeoutError::Timeout(e)
                | mpsc::error::SendTimeoutError::Closed(e),
            ) => e,
        },
    };
    let overflowed = sink.overflowed.fetch_add(1, Ordering::Relaxed) + 1;
    // One line per 1,000 such rows: enough to see it happen, not a log line per call.
    if overflowed % 1000 == 1 {
        tracing::warn!(
            overflowed,
            "audit channel full or closed: calls write their own audit rows"
        );
    }
    if let Err(err) = insert(state.platform_pool(), std::slice::from_ref(&entry)).await {
        sink.lost.fetch_add(1, Ordering::Relaxed);
        tracing::error!(error = %err, tool = %entry.tool_name, account = %entry.account_id,
            "audit row not written");
    }
}

async fn insert(pool: &PgPool, rows: &[AuditEntry]) -> Result<(), sqlx::Error> {
    let mut account = Vec::with_capacity(rows.len());
    let mut key = Vec::with_capacity(rows.len());
    let mut tenant = Vec::with_capacity(rows.len());
    let mut tool = Vec::with_capacity(rows.len());
    let mut hash = Vec::with_capacity(rows.len());
    let mut bytes = Vec::with_capacity(rows.len());
    let mut millis = Vec::with_capacity(rows.len());
    let mut status = Vec::with_capacity(rows.len());
    let mut class = Vec::with_capacity(rows.len());
    let mut at = Vec::with_capacity(rows.len());
    for r in rows {
        account.push(r.account_id);
        key.push(r.api_key_id);
        tenant.push(r.tenant_id);
        tool.push(r.tool_name.clone());
        hash.push(r.input_hash.clone());
        bytes.push(r.response_bytes);
        millis.push(r.duration_ms);
        status.push(r.status.to_owned());
        class.push(r.error_class.map(str::to_owned));
        at.push(r.created_at);
    }
    sqlx::query(
        "INSERT INTO platform.mcp_audit_log
           (account_id, api_key_id, tenant_id, tool_name, input_hash, response_bytes,
            duration_ms, status, error_class, created_at)
         SELECT r.account_id, r.api_key_id, r.tenant_id, r.tool_name, r.input_hash,
                r.response_bytes, r.duration_ms, r.status, r.error_class, r.created_at
         FROM UNNEST($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::text[],
                     $6::int[], $7::int[], $8::text[], $9::text[], $10::timestamptz[])
              AS r(account_id, api_key_id, tenant_id, tool_name, input_hash, response_bytes,
                   duration_ms, status, error_class, created_at)",
    )
    .bind(account)
    .bind(key)
    .bind(tenant)
    .bind(tool)
    .bind(hash)
    .bind(bytes)
    .bind(millis)
    .bind(status)
    .bind(class)
    .bind(at)
    .execute(pool)
    .await?;
    Ok(())
}

/// Deletes rows past the retention; returns how many.
pub async fn purge(pool: &PgPool) -> Result<u64, sqlx::Error> {
    let done = sqlx::query(
        "DELETE FROM platform.mcp_audit_log
         WHERE created_at < now() - make_interval(days => $1)",
    )
    .bind(RETENTION_DAYS)
    .execute(pool)
    .await?;
    Ok(done.rows_affected())
}

/// The running audit worker.
pub struct AuditWorker {
    stop: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

/// Starts the worker (once per state: a second call finds the receiver taken and returns None).
pub fn start(state: AppState) -> Option<AuditWorker> {
    let rx = state.mcp_audit().rx.lock().ok()?.take()?;
    let (stop, stopped) = watch::channel(false);
    let task = tokio::spawn(run(state, rx, stopped));
    Some(AuditWorker { stop, task })
}

impl AuditWorker {
    /// Writes what is queued, then stops.
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        let mut task = self.task;
        if tokio::time::timeout(Duration::from_secs(10), &mut task)
            .await
            .is_err()
        {
            tracing::warn!("audit worker did not stop in time");
            task.abort();
        }
    }
}

async fn run(
    state: AppState,
    mut rx: mpsc::Receiver<AuditEntry>,
    mut stopped: watch::Receiver<bool>,
) {
    let pool = state.platform_pool();
    let sink = state.mcp_audit();
    let mut purge_tick = tokio::time::interval(PURGE_EVERY);
    let mut batch = Vec::with_capacity(BATCH);
    loop {
        tokio::select! {
            n = rx.recv_many(&mut batch, BATCH) => {
                if n == 0 {
                    break;
                }
                write(pool, sink, &mut batch).await;
            }
            _ = purge_tick.tick() => match purge(pool).await {
                Ok(0) => {}
                Ok(n) => tracing::info!(rows = n, "audit rows past retention deleted"),
                Err(err) => tracing::warn!(error = %err, "audit purge failed; retried next hour"),
            },
            _ = stopped.changed() => break,
        }
    }
    rx.close();
    while rx.recv_many(&mut batch, BATCH).await > 0 {
        write(pool, sink, &mut batch).await;
    }
}

/// Writes one batch; a failed INSERT is tried twice more (after 0.25 and 1 s) before its rows
/// are counted as lost. Meanwhile the channel fills and calls write their own rows.
async fn write(pool: &PgPool, sink: &AuditSink, batch: &mut Vec<AuditEntry>) {
    let mut waits = [Duration::from_millis(250), Duration::from_secs(1)].into_iter();
    loop {
        match insert(pool, batch).await {
            Ok(()) => break,
            Err(err) => match waits.next() {
                Some(wait) => {
                    tracing::warn!(error = %err, rows = batch.len(), "audit rows not written; retrying");
                    tokio::time::sleep(wait).await;
                }
                None => {
                    sink.lost.fetch_add(batch.len() as u64, Ordering::Relaxed);
                    tracing::error!(error = %err, rows = batch.len(), "audit rows not written");
                    break;
                }
            },
        }
    }
    batch.clear();
}

/// One row of a caller's own history.
#[derive(Debug, Serialize, salvo::oapi::ToSchema)]
pub struct Activity {
    pub tool_name: String,
    pub tenant_slug: Option<String>,
    pub status: String,
    pub error_class: Option<String>,
    pub input_hash: String,
    pub response_bytes: i32,
    pub duration_ms: i32,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
}

/// The account's own calls, newest first, and how many there are in all.
/// An account's tool calls, newest first; `tenant` narrows them to one garden (a key scoped
/// to a garden sees only that garden's calls).
pub async fn activity(
    pool: &PgPool,
    account: Uuid,
    tenant: Option<Uuid>,
    offset: i64,
    limit: i64,
) -> Result<(Vec<Activity>, i64), sqlx::Error> {
    use sqlx::Row;
    let total: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM platform.mcp_audit_log
         WHERE account_id = $1 AND ($2::uuid IS NULL OR tenant_id = $2)",
    )
    .bind(account)
    .bind(tenant)
    .fetch_one(pool)
    .await?;
    let rows = sqlx::query(
        "SELECT a.tool_name, t.slug, a.status, a.error_class, a.input_hash, a.response_bytes,
                a.duration_ms, a.created_at
         FROM platform.mcp_audit_log a LEFT JOIN platform.tenants t ON t.id = a.tenant_id
         WHERE a.account_id = $1 AND ($4::uuid IS NULL OR a.tenant_id = $4)
         ORDER BY a.created_at DESC, a.id DESC OFFSET $2 LIMIT $3",
    )
    .bind(account)
    .bind(offset)
    .bind(limit)
    .bind(tenant)
    .fetch_all(pool)
    .await?;
    let items = rows
        .iter()
        .map(|r| {
            Ok(Activity {
                tool_name: r.try_get(0)?,
                tenant_slug: r.try_get(1)?,
                status: r.try_get(2)?,
                error_class: r.try_get(3)?,
                input_hash: r.try_get(4)?,
                response_bytes: r.try_get(5)?,
                duration_ms: r.try_get(6)?,
                created_at: r.try_get(7)?,
            })
        })
        .collect::<Result<_, sqlx::Error>>()?;
    Ok((items, total))
}
