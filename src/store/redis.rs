//! Redis access. Redis keeps short-lived, replica-shared state; every wait on it is bounded so
//! a Redis outage degrades requests instead of hanging them.
//!
//! Two ways in: a pool for the occasional caller, and one shared multiplexed connection for the
//! per-request paths (rate limits, MCP sessions, idempotency). A pool checkout costs a recycle
//! round trip (`UNWATCH` + `PING`) before the real command; the multiplexed connection pipelines
//! every caller's commands over one socket and reconnects by itself. Only stateless commands
//! and scripts go on it: never `WATCH`/`MULTI` or blocking commands.
//!
//! With a Redis Cluster (`REDIS_URL=redis+cluster://…`) both ways hand out the same shared
//! cluster connection (multiplexed too: one socket per node, commands routed by the slot of
//! their key, `MOVED`/`ASK` followed, the slot map refreshed by itself). Every key the service
//! writes carries exactly one `{hash tag}` (`AppState::redis_key`), and every script, pipeline
//! and multi-key command touches keys of one tag only, so each runs on one node.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use deadpool_redis::{Config as PoolConfig, Pool, PoolConfig as Sizing, Runtime, Timeouts};
use redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig};
use redis::cluster::ClusterClientBuilder;
use redis::cluster_async::ClusterConnection;
use redis::cluster_routing::{MultipleNodeRoutingInfo, RoutingInfo};
use redis::{Cmd, ErrorKind, Pipeline, RedisError, RedisFuture, RedisResult, Value};

use crate::config::{RedisTarget, Secret};

/// Longest wait for a connect or an answer on the shared connection.
const SHARED_TIMEOUT: Duration = Duration::from_secs(1);
/// Longest wait for one cluster request, redirections and retries included.
const CLUSTER_REQUEST_TIMEOUT: Duration = Duration::from_secs(2);

/// A connection from either way in; commands and scripts run on it as on any connection.
pub enum RedisConn {
    /// A checked-out connection of the single-server pool.
    Pooled(deadpool_redis::Connection),
    /// The single server's shared multiplexed connection.
    Shared(ConnectionManager),
    /// The shared cluster connection.
    Cluster(ClusterConnection),
}

impl ConnectionLike for RedisConn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Self::Pooled(c) => c.req_packed_command(cmd),
            Self::Shared(c) => c.req_packed_command(cmd),
            Self::Cluster(c) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Self::Pooled(c) => c.req_packed_commands(pipeline, offset, count),
            Self::Shared(c) => c.req_packed_commands(pipeline, offset, count),
            Self::Cluster(c) => c.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Self::Pooled(c) => c.get_db(),
            Self::Shared(c) => c.get_db(),
            Self::Cluster(c) => c.get_db(),
        }
    }
}

/// Why no connection could be handed out.
#[derive(Debug, thiserror::Error)]
pub enum ConnError {
    #[error("redis pool: {0}")]
    Pool(#[from] deadpool_redis::PoolError),
    #[error("{0}")]
    Redis(#[from] RedisError),
}

/// Why the Redis clients could not be built from the configuration.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("{0}")]
    Pool(#[from] deadpool_redis::CreatePoolError),
    #[error("{0}")]
    Url(#[from] RedisError),
}

/// The shared cluster connection, made on first use (inside the runtime) and kept; while no
/// node answers, each use tries again (bounded by the connect timeout).
struct SharedCluster {
    client: redis::cluster::ClusterClient,
    connection: tokio::sync::OnceCell<ClusterConnection>,
}

impl SharedCluster {
    fn new(nodes: &[Secret]) -> RedisResult<Self> {
        let client = ClusterClientBuilder::new(nodes.iter().map(Secret::expose))
            .connection_timeout(SHARED_TIMEOUT)
            .response_timeout(SHARED_TIMEOUT)
            .overall_response_timeout(Some(CLUSTER_REQUEST_TIMEOUT))
            .retries(4)
            .min_retry_wait(10)
            .max_retry_wait(400)
            .build()?;
        Ok(Self {
            client,
            connection: tokio::sync::OnceCell::new(),
        })
    }

    async fn connection(&self) -> RedisResult<ClusterConnection> {
        let conn = self
            .connection
            .get_or_try_init(|| async {
                // Connects to the seed nodes and reads the slot map (`CLUSTER SLOTS`).
                match tokio::time::timeout(2 * SHARED_TIMEOUT, self.client.get_async_connection())
                    .await
                {
                    Ok(Ok(conn)) => Ok(conn),
                    // Unreachable nodes, a cluster that is down, or servers not in cluster
                    // mode: all mean "no cluster to talk to" (an outage, 503), never a 500.
                    Ok(Err(err)) => Err(RedisError::from((
                        ErrorKind::ClusterConnectionNotFound,
                        "no Redis Cluster node answered",
                        err.to_string(),
                    ))),
                    Err(_) => Err(RedisError::from((
                        ErrorKind::ClusterConnectionNotFound,
                        "no Redis Cluster node answered",
                        "connect timed out".to_owned(),
                    ))),
                }
            })
            .await?;
        Ok(conn.clone())
    }
}

/// The pool of the occasional callers. With a cluster it hands out the shared cluster
/// connection (multiplexed; a pool of them would only add sockets).
#[derive(Clone)]
pub struct RedisPool(PoolKind);

#[derive(Clone)]
enum PoolKind {
    Single(Pool),
    Cluster(Arc<SharedCluster>),
}

impl std::fmt::Debug for RedisPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisPool")
            .field("cluster", &self.is_cluster())
            .finish_non_exhaustive()
    }
}

impl RedisPool {
    pub async fn get(&self) -> Result<RedisConn, ConnError> {
        match &self.0 {
            PoolKind::Single(pool) => Ok(RedisConn::Pooled(pool.get().await?)),
            PoolKind::Cluster(cluster) => Ok(RedisConn::Cluster(cluster.connection().await?)),
        }
    }

    pub fn is_cluster(&self) -> bool {
        matches!(self.0, PoolKind::Cluster(_))
    }

    /// Closes the single-server pool (the cluster connection closes when dropped).
    pub fn close(&self) {
        if let PoolKind::Single(pool) = &self.0 {
            pool.close();
        }
    }
}

fn create_pool(url: &str) -> Result<Pool, deadpool_redis::CreatePoolError> {
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
pub struct SharedRedis(SharedKind);

enum SharedKind {
    Single {
        client: redis::Client,
        manager: OnceLock<ConnectionManager>,
    },
    Cluster(Arc<SharedCluster>),
}

impl std::fmt::Debug for SharedRedis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedRedis").finish_non_exhaustive()
    }
}

/// The pool and the shared connection of `target` (nothing connects yet).
pub fn connect_lazy(target: &RedisTarget) -> Result<(RedisPool, SharedRedis), SetupError> {
    Ok(match target {
        RedisTarget::Single(url) => (
            RedisPool(PoolKind::Single(create_pool(url.expose())?)),
            SharedRedis(SharedKind::Single {
                client: redis::Client::open(url.expose())?,
                manager: OnceLock::new(),
            }),
        ),
        RedisTarget::Cluster { nodes } => {
            let cluster = Arc::new(SharedCluster::new(nodes)?);
            (
                RedisPool(PoolKind::Cluster(cluster.clone())),
                SharedRedis(SharedKind::Cluster(cluster)),
            )
        }
    })
}

impl SharedRedis {
    /// A handle on the shared connection (a cheap clone). A single server's connection is
    /// made lazily; while Redis is down, commands on it fail fast and it reconnects in the
    /// background. A cluster's is made on the first call that finds a node answering.
    pub async fn connection(&self) -> RedisResult<RedisConn> {
        match &self.0 {
            SharedKind::Single { client, manager } => {
                if let Some(manager) = manager.get() {
                    return Ok(RedisConn::Shared(manager.clone()));
                }
                let config = ConnectionManagerConfig::new()
                    .set_connection_timeout(Some(SHARED_TIMEOUT))
                    .set_response_timeout(Some(SHARED_TIMEOUT))
                    .set_number_of_retries(1)
                    .set_max_delay(SHARED_TIMEOUT);
                let fresh = ConnectionManager::new_lazy_with_config(client.clone(), config)?;
                // Two first callers may race; one manager wins and the other is dropped unused.
                Ok(RedisConn::Shared(manager.get_or_init(|| fresh).clone()))
            }
            SharedKind::Cluster(cluster) => Ok(RedisConn::Cluster(cluster.connection().await?)),
        }
    }
}

/// Readiness: `PING` with a deadline (on a cluster every master answers it) and, with a
/// cluster, `CLUSTER INFO` saying `cluster_state:ok` on every master.
pub async fn ready(pool: &RedisPool) -> bool {
    let check = async {
        let mut conn = pool.get().await.ok()?;
        redis::cmd("PING")
            .query_async::<String>(&mut conn)
            .await
            .ok()?;
        if let RedisConn::Cluster(cluster) = &mut conn {
            let info = cluster
                .route_command(
                    redis::cmd("CLUSTER").arg("INFO").clone(),
                    RoutingInfo::MultiNode((MultipleNodeRoutingInfo::AllMasters, None)),
                )
                .await
                .ok()?;
            let mut texts = Vec::new();
            collect_texts(&info, &mut texts);
            let ok = !texts.is_empty()
                && texts
                    .iter()
                    .all(|t| t.lines().any(|l| l.trim() == "cluster_state:ok"));
            return ok.then_some(());
        }
        Some(())
    };
    matches!(
        tokio::time::timeout(Duration::from_secs(2), check).await,
        Ok(Some(()))
    )
}

/// The text answers inside a (per-node) reply.
fn collect_texts(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::BulkString(bytes) => out.push(String::from_utf8_lossy(bytes).into_owned()),
        Value::SimpleString(text) => out.push(text.clone()),
        Value::VerbatimString { text, .. } => out.push(text.clone()),
        // Per-node replies: node address → answer; only the answers count.
        Value::Map(pairs) => pairs.iter().for_each(|(_, v)| collect_texts(v, out)),
        Value::Array(items) => items.iter().for_each(|v| collect_texts(v, out)),
        _ => {}
    }
}

/// `cluster_enabled` from `INFO cluster` of one server, or `None` when it does not answer.
async fn cluster_enabled(url: &str) -> Option<bool> {
    let client = redis::Client::open(url).ok()?;
    let config = redis::AsyncConnectionConfig::new()
        .set_connection_timeout(Some(SHARED_TIMEOUT))
        .set_response_timeout(Some(SHARED_TIMEOUT));
    let ask = async {
        let mut conn = client
            .get_multiplexed_async_connection_with_config(&config)
            .await
            .ok()?;
        let info: String = redis::cmd("INFO")
            .arg("cluster")
            .query_async(&mut conn)
            .await
            .ok()?;
        Some(info.lines().any(|l| l.trim() == "cluster_enabled:1"))
    };
    tokio::time::timeout(2 * SHARED_TIMEOUT, ask)
        .await
        .ok()
        .flatten()
}

/// `host:port` of a node URL, for messages (never the credentials).
fn node_address(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let rest = rest.rsplit_once('@').map_or(rest, |(_, r)| r);
    rest.split('/').next().unwrap_or(rest).to_owned()
}

/// The start-up check: `REDIS_URL` must say what the server is. A cluster URL naming a
/// server not in cluster mode, or a single-server URL naming a cluster node, is refused with
/// a message that says what to write instead. Servers that do not answer are not refused
/// here (readiness reports them, the service degrades as for any Redis outage).
pub async fn verify_mode(target: &RedisTarget) -> Result<(), String> {
    match target {
        RedisTarget::Single(url) => {
            if url.expose().starts_with("unix://") {
                return Ok(());
            }
            match cluster_enabled(url.expose()).await {
                Some(true) => Err(format!(
                    "REDIS_URL names one Redis server ({}), but it runs in cluster mode: \
                     write REDIS_URL=redis+cluster://host:port[,host:port…]",
                    node_address(url.expose())
                )),
                Some(false) => Ok(()),
                None => {
                    tracing::warn!("Redis does not answer at start; readiness reports it");
                    Ok(())
                }
            }
        }
        RedisTarget::Cluster { nodes } => {
            let mut answered = false;
            for node in nodes {
                match cluster_enabled(node.expose()).await {
                    Some(false) => {
                        return Err(format!(
                            "REDIS_URL names a Redis Cluster (redis+cluster://), but {} is not \
                             in cluster mode: write REDIS_URL=redis://host:port/ for one server",
                            node_address(node.expose())
                        ));
                    }
                    Some(true) => answered = true,
                    None => {}
                }
            }
            if !answered {
                tracing::warn!("no Redis Cluster node answers at start; readiness reports it");
            }
            Ok(())
        }
    }
}

/// A Redis failure in a request: counted, then a 503 when the server cannot be reached.
impl From<redis::RedisError> for crate::error::AppError {
    fn from(err: redis::RedisError) -> crate::error::AppError {
        crate::metrics::redis_error(crate::metrics::RedisUse::Request);
        if crate::error::redis_unavailable(&err) {
            crate::error::AppError::unavailable("session store", err)
        } else {
            crate::error::AppError::internal(err)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_nodes_without_credentials() {
        assert_eq!(
            node_address("redis://app:hunter2@10.0.0.1:7000/"),
            "10.0.0.1:7000"
        );
        assert_eq!(node_address("redis://127.0.0.1:6379/2"), "127.0.0.1:6379");
    }

    #[test]
    fn per_node_replies_are_read_as_their_texts() {
        let reply = Value::Map(vec![
            (
                Value::BulkString(b"127.0.0.1:57001".to_vec()),
                Value::BulkString(b"cluster_state:ok\r\ncluster_slots_assigned:16384".to_vec()),
            ),
            (
                Value::BulkString(b"127.0.0.1:57002".to_vec()),
                Value::VerbatimString {
                    format: redis::VerbatimFormat::Text,
                    text: "cluster_state:fail".into(),
                },
            ),
        ]);
        let mut texts = Vec::new();
        collect_texts(&reply, &mut texts);
        assert_eq!(texts.len(), 2);
        assert!(texts[0].contains("cluster_state:ok"));
        assert!(texts[1].contains("cluster_state:fail"));
    }
}
