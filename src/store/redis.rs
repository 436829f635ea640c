//! The Redis pool. Redis keeps short-lived, replica-shared state; every wait on it is bounded so
//! a Redis outage degrades requests instead of hanging them.

use std::time::Duration;

use deadpool_redis::{Config as PoolConfig, Pool, PoolConfig as Sizing, Runtime, Timeouts};

pub type RedisPool = Pool;

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
