//! Idempotency records of write tools, in Redis for 24 hours. A record belongs to one account,
//! tenant, tool and key; it holds the SHA-256 of the acting arguments and, once the call has
//! succeeded, its envelope. The first call claims the key with `SET NX` (state `pending`), so
//! of two concurrent calls with one key exactly one executes: the other waits for the result
//! and replays it. A failed call releases the key (errors are not replayed).
//!
//! A claim carries an owner token (a fresh UUID in the pending record). While the call runs, a
//! keeper task extends the claim every third of its lifetime, so a slow call never loses its key
//! to a second caller; a crashed process stops extending and the claim runs out. Finishing and
//! releasing compare the whole pending record (owner included) in one script: a call whose claim
//! was taken over can neither overwrite nor free the new owner's record.
//!
//! Secrets a result shows once (the lease token of `claim_diary_analysis`, see
//! [`SECRET_RESULT_FIELDS`]) are not kept: the stored result holds their SHA-256
//! (`<field>_sha256`) and `null` in their place, so a replay says which lease was taken but
//! does not hand the token out a second time (nor does Redis hold it for 24 hours). A caller
//! that lost the first answer waits for the lease to run out (`lease_expires_at`) and claims
//! again.

use std::sync::LazyLock;
use std::time::{Duration, Instant};

use redis::Script;

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use uuid::Uuid;

use super::envelope::{ToolError, ToolErrorCode};
use crate::state::AppState;

/// How long a result is replayed.
pub const WINDOW: Duration = Duration::from_secs(24 * 3600);
/// How long a claim lives without being extended (a crashed process frees the key after this;
/// a running call extends it every third of this).
const PENDING_TTL: Duration = Duration::from_secs(60);
/// How long a concurrent call waits for the first one's result.
const WAIT_FOR_FIRST: Duration = Duration::from_secs(15);

/// Fields of a result's `data` that are secrets shown once: stored (and replayed) as their
/// SHA-256 only.
pub const SECRET_RESULT_FIELDS: &[&str] = &["lease_token"];

/// The envelope as the record keeps it: every [`SECRET_RESULT_FIELDS`] string of `data`
/// becomes `null`, with its SHA-256 (hex) beside it as `<field>_sha256`.
pub fn without_secrets(envelope: &Map<String, Value>) -> Map<String, Value> {
    let mut kept = envelope.clone();
    if let Some(Value::Object(data)) = kept.get_mut("data") {
        for field in SECRET_RESULT_FIELDS {
            if let Some(Value::String(secret)) = data.get(*field) {
                let digest = hex::encode(Sha256::digest(secret.as_bytes()));
                data.insert((*field).to_owned(), Value::Null);
                data.insert(format!("{field}_sha256"), Value::String(digest));
            }
        }
    }
    kept
}

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

/// A claimed key; extended in the background until finished, released or dropped.
pub struct Claim {
    redis_key: String,
    args_hash: String,
    /// The exact pending record written by this claim (its owner token inside).
    pending: String,
    keeper: tokio::task::JoinHandle<()>,
}

impl Drop for Claim {
    fn drop(&mut self) {
        self.keeper.abort();
    }
}

/// KEYS[1]: the record; ARGV[1]: the owner's pending record; ARGV[2]: new lifetime (ms).
static EXTEND: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
",
    )
});

/// KEYS[1]: the record; ARGV[1]: the owner's pending record; ARGV[2]: the done record;
/// ARGV[3]: its lifetime (ms).
static FINISH: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  return 1
end
return 0
",
    )
});

/// KEYS[1]: the record; ARGV[1]: the owner's pending record.
static RELEASE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
",
    )
});

/// Extends the claim every third of its lifetime while it is still this owner's.
fn keep_alive(
    state: &AppState,
    redis_key: String,
    pending: String,
    ttl: Duration,
) -> tokio::task::JoinHandle<()> {
    let state = state.clone();
    tokio::spawn(async move {
        let every = (ttl / 3).max(Duration::from_millis(10));
        loop {
            tokio::time::sleep(every).await;
            let extended = async {
                let mut conn = state.shared_redis().connection().await?;
                EXTEND
                    .key(&redis_key)
                    .arg(&pending)
                    .arg(ttl.as_millis() as u64)
                    .invoke_async::<i64>(&mut conn)
                    .await
            };
            match extended.await {
                Ok(1) => {}
                Ok(_) => {
                    tracing::warn!("idempotency claim lost while its call ran");
                    return;
                }
                // Redis may come back before the claim runs out: keep trying.
                Err(err) => {
                    crate::metrics::redis_error(crate::metrics::RedisUse::Idempotency);
                    tracing::warn!(error = %err, "idempotency claim not extended");
                }
            }
        }
    })
}

fn unavailable(err: redis::RedisError) -> ToolError {
    crate::metrics::redis_error(crate::metrics::RedisUse::Idempotency);
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
    begin_with(state, scope, args_hash, PENDING_TTL).await
}

/// [`begin`] with another claim lifetime (tests use a short one).
pub async fn begin_with(
    state: &AppState,
    scope: &Scope<'_>,
    args_hash: &str,
    pending_ttl: Duration,
) -> Result<Begin, ToolError> {
    let key_hash = hex::encode(Sha256::digest(scope.key.as_bytes()));
    let tenant = scope
        .tenant
        .map_or_else(|| "-".to_owned(), |t| t.to_string());
    let redis_key = state.redis_key(
        "mcp:idem",
        &scope.account.to_string(),
        &[&tenant, scope.tool, &key_hash],
    );
    let owner = Uuid::new_v4().to_string();
    let pending = json!({"state": "pending", "args": args_hash, "owner": owner}).to_string();
    let deadline = Instant::now() + WAIT_FOR_FIRST;
    let mut conn = state
        .shared_redis()
        .connection()
        .await
        .map_err(unavailable)?;
    loop {
        let claimed: Option<String> = redis::cmd("SET")
            .arg(&redis_key)
            .arg(&pending)
            .arg("NX")
            .arg("PX")
            .arg(pending_ttl.as_millis() as u64)
            .query_async(&mut conn)
            .await
            .map_err(unavailable)?;
        if claimed.is_some() {
            let keeper = keep_alive(state, redis_key.clone(), pending.clone(), pending_ttl);
            return Ok(Begin::Execute(Claim {
                redis_key,
                args_hash: args_hash.to_owned(),
                pending,
                keeper,
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
    /// Stores the successful result for the window, if the claim is still this call's.
    pub async fn finish(self, state: &AppState, envelope: &Map<String, Value>) {
        self.keeper.abort();
        let record = json!({"state": "done", "args": self.args_hash,
                            "result": without_secrets(envelope)})
        .to_string();
        let stored = async {
            let mut conn = state.shared_redis().connection().await?;
            FINISH
                .key(&self.redis_key)
                .arg(&self.pending)
                .arg(record)
                .arg(WINDOW.as_millis() as u64)
                .invoke_async::<i64>(&mut conn)
                .await
        };
        match stored.await {
            Ok(1) => {}
            // The write happened; only the replay is lost. Logged, not failed.
            Ok(_) => tracing::error!("idempotency result not stored: the claim was lost"),
            Err(err) => {
                crate::metrics::redis_error(crate::metrics::RedisUse::Idempotency);
                tracing::error!(error = %err, "idempotency result not stored");
            }
        }
    }

    /// Frees the key after a failed call, so a corrected retry may run (only this call's own
    /// claim).
    pub async fn release(self, state: &AppState) {
        self.keeper.abort();
        let released = async {
            let mut conn = state.shared_redis().connection().await?;
            RELEASE
                .key(&self.redis_key)
                .arg(&self.pending)
                .invoke_async::<i64>(&mut conn)
                .await
        };
        if let Err(err) = released.await {
            crate::metrics::redis_error(crate::metrics::RedisUse::Idempotency);
            tracing::warn!(error = %err, "idempotency claim not released; it expires by itself");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_result_keeps_only_the_digest_of_a_lease_token() {
        let envelope = json!({"ok": true, "summary": "claimed",
            "data": {"entry_key": "e1", "lease_token": "raw-secret", "lease_minutes": 15}});
        let kept = without_secrets(envelope.as_object().expect("object"));
        let text = Value::Object(kept.clone()).to_string();
        assert!(!text.contains("raw-secret"), "{text}");
        assert_eq!(kept["data"]["lease_token"], Value::Null);
        assert_eq!(
            kept["data"]["lease_token_sha256"],
            hex::encode(Sha256::digest(b"raw-secret"))
        );
        assert_eq!(kept["data"]["entry_key"], "e1");
        // Results without secrets are kept as they are.
        let plain = json!({"ok": true, "data": {"lease_token": null, "n": 1}});
        let plain = plain.as_object().expect("object");
        assert_eq!(&without_secrets(plain), plain);
    }
}
