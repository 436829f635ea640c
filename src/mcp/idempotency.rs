//! Idempotency records of write tools, in Redis for 24 hours. A record belongs to one account,
//! tenant, tool and key; it holds the SHA-256 of the acting arguments and, once the call has
//! succeeded, its envelope. The first call claims the key with `SET NX` (state `pending`), so
//! of two concurrent calls with one key exactly one executes: the other waits for the result
//! and replays it. A failed call releases the key (errors are not replayed).

use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use uuid::Uuid;

use super::envelope::{ToolError, ToolErrorCode};
use crate::state::AppState;

/// How long a result is replayed.
pub const WINDOW: Duration = Duration::from_secs(24 * 3600);
/// How long a claim of a running call lives (a crashed process frees the key after this).
const PENDING_TTL: Duration = Duration::from_secs(60);
/// How long a concurrent call waits for the first one's result.
const WAIT_FOR_FIRST: Duration = Duration::from_secs(15);

/// Whose record: (account, tenant, tool, key).
pub struct Scope<'a> {
    pub account: Uuid,
    pub tenant: Option<Uuid>,
    pub tool: &'a str,
    pub key: &'a str,
}

pub enum Begin {
    /// Nobody ran this yet: execute, then `finish` or `release`.
    Execute(Claim),
    /// The stored envelope of the first call.
    Replay(Map<String, Value>),
}

/// A claimed key.
pub struct Claim {
    redis_key: String,
    args_hash: String,
}

fn unavailable(err: redis::RedisError) -> ToolError {
    tracing::warn!(error = %err, "idempotency records unavailable");
    ToolError::new(
        ToolErrorCode::Unavailable,
        "idempotency records are unavailable; the call was not executed, retry later",
    )
}

fn reused() -> ToolError {
    ToolError::validation(
        "idempotency_key",
        "was already used with different arguments for this tool; use a new key",
        "idempotency_key_reused",
    )
}

/// Claims the key, or returns the earlier result.
pub async fn begin(
    state: &AppState,
    scope: &Scope<'_>,
    args_hash: &str,
) -> Result<Begin, ToolError> {
    let key_hash = hex::encode(Sha256::digest(scope.key.as_bytes()));
    let tenant = scope
        .tenant
        .map_or_else(|| "-".to_owned(), |t| t.to_string());
    let redis_key = state.redis_key(&[
        "mcp",
        "idem",
        &format!("{{{}}}", scope.account),
        &tenant,
        scope.tool,
        &key_hash,
    ]);
    let pending = json!({"state": "pending", "args": args_hash}).to_string();
    let deadline = Instant::now() + WAIT_FOR_FIRST;
    let mut conn = state.shared_redis().connection().map_err(unavailable)?;
    loop {
        let claimed: Option<String> = redis::cmd("SET")
            .arg(&redis_key)
            .arg(&pending)
            .arg("NX")
            .arg("PX")
            .arg(PENDING_TTL.as_millis() as u64)
            .query_async(&mut conn)
            .await
            .map_err(unavailable)?;
        if claimed.is_some() {
            return Ok(Begin::Execute(Claim {
                redis_key,
                args_hash: args_hash.to_owned(),
            }));
        }
        let stored: Option<String> = redis::cmd("GET")
            .arg(&redis_key)
            .query_async(&mut conn)
            .await
            .map_err(unavailable)?;
        if let Some(stored) = stored {
            let record: Value = serde_json::from_str(&stored).unwrap_or(Value::Null);
            if record["args"].as_str() != Some(args_hash) {
                return Err(reused());
            }
            if record["state"] == "done"
                && let Some(env) = record["result"].as_object()
            {
                return Ok(Begin::Replay(env.clone()));
            }
        }
        // The first call is still running (or has just released the key): wait and look again.
        if Instant::now() >= deadline {
            return Err(ToolError::new(
                ToolErrorCode::ConcurrentUpdate,
                "a call with this idempotency key is still running; retry shortly",
            ));
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

impl Claim {
    /// Stores the successful result for the window.
    pub async fn finish(self, state: &AppState, envelope: &Map<String, Value>) {
        let record =
            json!({"state": "done", "args": self.args_hash, "result": envelope}).to_string();
        let stored = async {
            let mut conn = state.shared_redis().connection()?;
            redis::cmd("SET")
                .arg(&self.redis_key)
                .arg(record)
                .arg("PX")
                .arg(WINDOW.as_millis() as u64)
                .query_async::<()>(&mut conn)
                .await
        };
        if let Err(err) = stored.await {
            // The write happened; only the replay is lost. Logged, not failed.
            tracing::error!(error = %err, "idempotency result not stored");
        }
    }

    /// Frees the key after a failed call, so a corrected retry may run.
    pub async fn release(self, state: &AppState) {
        let released = async {
            let mut conn = state.shared_redis().connection()?;
            redis::cmd("DEL")
                .arg(&self.redis_key)
                .query_async::<()>(&mut conn)
                .await
        };
        if let Err(err) = released.await {
            tracing::warn!(error = %err, "idempotency claim not released; it expires by itself");
        }
    }
}
