//! Redis access. Redis keeps short-lived, replica-shared state; every wait on it is bounded so
//! a Redis outage degrades requests instead of hanging them.
//!
//! Two ways in: a pool for the occasional caller, and one shared multiplexed connection for the
//! per-request paths (rate limits, MCP sessions, idempotency). A pool checkout costs a recycle
//! round trip (`UNWATCH` + `PING`) before the real command; the multiplexed connection pipelines
//! every caller's commands over one socket and reconnects by itself. Only stateless commands
//! and scripts go on it: never `WATCH`/`MULTI` or blocking commands.

use std::sync::OnceLock;
use std::time::Duration;

use deadpool_redis::{Config as PoolConfig, Pool, PoolConfig as Sizing, Runtime, Timeouts};
use redis::aio::{ConnectionManager, ConnectionManagerConfig};

pub type RedisPool = Pool;

/// Longest wait for a connect or an answer on the shared connection.
const SHARED_TIMEOUT: Duration = Duration::from_secs(1);

pub fn create_pool(url: &str) -> Result<RedisPool, deadpool_redis::CreatePoolError> {
    let mut cfg = PoolConfig::from_url(url);
    let mut sizing = Sizing::new(32);
    sizing.timeouts = Timeouts {
        wait: Some(Duration::from_secs(2)),
        create: Some(Duration::from_secs(2)),
        recycle: Some(Duration::from_secs(2)),
    };
    cfg.pool = Some(sizing);
    cfg.create_pool(Some(Runtime::Tokio1))
}

/// The shared multiplexed connection, opened on first use (inside the runtime) and kept.
pub struct SharedRedis {
    client: redis::Client,
    manager: OnceLock<ConnectionManager>,
}

impl std::fmt::Debug for SharedRedis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedRedis").finish_non_exhaustive()
    }
}

impl SharedRedis {
    pub fn new(url: &str) -> redis::RedisResult<Self> {
        Ok(Self {
            client: redis::Client::open(url)?,
            manager: OnceLock::new(),
        })
    }

    /// A handle on the shared connection (a cheap clone). The connection itself is made
    /// lazily; while Redis is down, commands on it fail fast and it reconnects in the
    /// background.
    pub fn connection(&self) -> redis::RedisResult<ConnectionManager> {
        if let Some(manager) = self.manager.get() {
            return Ok(manager.clone());
        }
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(SHARED_TIMEOUT))
            .set_response_timeout(Some(SHARED_TIMEOUT))
            .set_number_of_retries(1)
            .set_max_delay(SHARED_TIMEOUT);
        let manager = ConnectionManager::new_lazy_with_config(self.client.clone(), config)?;
        // Two first callers may race; one manager wins and the other is dropped unused.
        Ok(self.manager.get_or_init(|| manager).clone())
    }
}

/// `PING` with a deadline: true when Redis answered.
pub async fn ping(pool: &RedisPool) -> bool {
    let check = async {
        let mut conn = pool.get().await.ok()?;
        redis::cmd("PING")
            .query_async::<String>(&mut conn)
            .await
            .ok()
    };
    matches!(
        tokio::time::timeout(Duration::from_secs(2), check).await,
        Ok(Some(_))
    )
}
