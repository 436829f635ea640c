//! Tool-server sessions in Redis: issued by `initialize`, bound to the account of the key that
//! made them, expiring after an idle period (use renews it). Any replica sharing the Redis
//! server and key prefix serves any session.
//!
//! Each replica keeps the sessions it has confirmed in Redis in memory for [`crate::cache::BOUND`]
//! (0.9 s): a busy session costs one `GETEX` (which also renews it) per 0.9 s per replica, not
//! one per call. A session ended or expired in Redis is therefore refused by every replica
//! within 0.9 s, and at once by the replica that ended it.
//!
//! An account holds at most `MCP_SESSIONS_PER_ACCOUNT` sessions: each account has a sorted set
//! of its session ids by creation time (`<prefix>:mcp:sessions:{<account>}`), and a new
//! session beyond the cap ends the oldest ones. The set and the sessions live in different
//! hash slots, so each step is a single-key command (cluster-safe); a session that expired by
//! idleness stays in the set until it is evicted, which ends nothing but its entry.

use std::time::Duration;

use rand::Rng;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::state::AppState;

/// Idle time after which a session is gone (the client then re-initialises).
pub const IDLE: Duration = Duration::from_secs(12 * 3600);

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Session {
    pub account: Uuid,
    /// The negotiated protocol revision.
    pub version: String,
}

/// `<prefix>:mcp:session:{<id>}`: the session is its own hash tag.
pub fn redis_key(state: &AppState, id: &str) -> String {
    state.redis_key("mcp:session", id, &[])
}

/// A session id: 32 random bytes, hex (visible ASCII as the transport requires).
fn new_id() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    hex::encode(bytes)
}

/// Whether a presented id can be one of ours (anything else is unknown without a lookup).
fn well_formed(id: &str) -> bool {
    id.len() == 64 && id.bytes().all(|b| b.is_ascii_hexdigit())
}

/// `<prefix>:mcp:sessions:{<account>}`: the account's session ids by creation time.
fn account_key(state: &AppState, account: Uuid) -> String {
    state.redis_key("mcp:sessions", &account.to_string(), &[])
}

pub async fn create(state: &AppState, session: &Session) -> Result<String, redis::RedisError> {
    let id = new_id();
    let ticket = state.caches().ticket();
    let mut conn = state.shared_redis().connection().await?;
    redis::cmd("SET")
        .arg(redis_key(state, &id))
        .arg(serde_json::to_string(session).unwrap_or_default())
        .arg("EX")
        .arg(IDLE.as_secs())
        .query_async::<()>(&mut conn)
        .await?;
    state
        .caches()
        .keep_mcp_session(&id, session.clone(), ticket);
    let cap = state.config().mcp_sessions_per_account.max(1);
    let account = account_key(state, session.account);
    let now_ms = time::OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000;
    let (_, _, count): ((), (), i64) = redis::pipe()
        .cmd("ZADD")
        .arg(&account)
        .arg(i64::try_from(now_ms).unwrap_or(i64::MAX))
        .arg(&id)
        .cmd("EXPIRE")
        .arg(&account)
        .arg(IDLE.as_secs())
        .cmd("ZCARD")
        .arg(&account)
        .query_async(&mut conn)
        .await?;
    let over = count - i64::from(cap);
    if over > 0 {
        let evicted: Vec<(String, f64)> = redis::cmd("ZPOPMIN")
            .arg(&account)
            .arg(over)
            .query_async(&mut conn)
            .await?;
        for (old, _) in evicted {
            let _: i64 = redis::cmd("DEL")
                .arg(redis_key(state, &old))
                .query_async(&mut conn)
                .await?;
            state.caches().forget_mcp_session(&old);
        }
    }
    Ok(id)
}

/// The session of an id; `None` when unknown, expired or another account's. From memory when
/// this replica confirmed it less than 0.9 s ago, else read from Redis and renewed.
pub async fn touch(
    state: &AppState,
    id: &str,
    account: Uuid,
) -> Result<Option<Session>, redis::RedisError> {
    if !well_formed(id) {
        return Ok(None);
    }
    if let Some(session) = state.caches().mcp_session(id) {
        return Ok((session.account == account).then_some(session));
    }
    // Taken before the read: the entry's age counts from here, so a session ended in Redis
    // while this read was under way is still refused within the bound.
    let ticket = state.caches().ticket();
    let mut conn = state.shared_redis().connection().await?;
    let raw: Option<String> = redis::cmd("GETEX")
        .arg(redis_key(state, id))
        .arg("EX")
        .arg(IDLE.as_secs())
        .query_async(&mut conn)
        .await?;
    let Some(session) = raw.and_then(|r| serde_json::from_str::<Session>(&r).ok()) else {
        return Ok(None);
    };
    state.caches().keep_mcp_session(id, session.clone(), ticket);
    Ok((session.account == account).then_some(session))
}

/// Ends a session of the account; false when there was none.
pub async fn end(state: &AppState, id: &str, account: Uuid) -> Result<bool, redis::RedisError> {
    if touch(state, id, account).await?.is_none() {
        return Ok(false);
    }
    let mut conn = state.shared_redis().connection().await?;
    let removed: Result<i64, _> = redis::cmd("DEL")
        .arg(redis_key(state, id))
        .query_async(&mut conn)
        .await;
    let _: Result<i64, _> = redis::cmd("ZREM")
        .arg(account_key(state, account))
        .arg(id)
        .query_async(&mut conn)
        .await;
    // Also when DEL failed: this replica must not keep serving a session it was told to end.
    state.caches().forget_mcp_session(id);
    Ok(removed? > 0)
}

/// Sessions in the caches of `crate::cache` (young-only: an idle expiry or a `DELETE` on
/// another replica announces nothing).
impl crate::cache::Caches {
    /// A tool-server session confirmed in Redis less than [`crate::cache::BOUND`] ago.
    pub fn mcp_session(&self, id: &str) -> Option<Session> {
        crate::cache::typed(&self.mcp_sessions.get_young(&id.to_owned())?)
    }

    pub fn keep_mcp_session(&self, id: &str, session: Session, ticket: crate::cache::Ticket) {
        self.mcp_sessions.insert(
            id.to_owned(),
            std::sync::Arc::new(session),
            crate::cache::Deps::default(),
            ticket,
            &self.feed,
        );
    }

    /// This process ended the session (call it after the session is gone from Redis): refused
    /// here at once, other replicas within [`crate::cache::BOUND`]. The generation is bumped
    /// first, so a read of the session that overlapped its deletion is not kept.
    pub fn forget_mcp_session(&self, id: &str) {
        self.feed.bump();
        self.mcp_sessions.remove(&id.to_owned());
    }
}
