//! PostgreSQL pools, one per placement (named server). The primary placement also holds the
//! `platform` schema.

use std::collections::HashMap;
use std::str::FromStr;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{ConnectOptions, Connection, PgConnection, PgPool};

use super::read_pool::ReadPool;
use crate::config::{Config, PRIMARY_PLACEMENT, PlacementConfig};

/// One PostgreSQL server that tenant schemas live on.
#[derive(Debug, Clone)]
pub struct Placement {
    name: String,
    pool: PgPool,
    reads: ReadPool,
    options: PgConnectOptions,
}

impl Placement {
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The shared pool: request traffic.
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// Connections for single-statement garden reads (`TenantTx::read`; see
    /// `store::read_pool`).
    pub fn reads(&self) -> &ReadPool {
        &self.reads
    }

    /// The options the pool connects with (dedicated helpers such as the cache listener).
    pub fn connect_options(&self) -> &PgConnectOptions {
        &self.options
    }

    /// A dedicated session outside the pool, for work that holds session state (advisory locks,
    /// a session `search_path` while migrating); closed by its owner, never returned to the pool.
    pub async fn dedicated(&self) -> Result<PgConnection, sqlx::Error> {
        PgConnection::connect_with(&self.options).await
    }
}

/// Every configured placement, keyed by name.
#[derive(Debug, Clone)]
pub struct Placements {
    primary: Placement,
    others: HashMap<String, Placement>,
    default_name: String,
}

/// The app role's session search path names no tenant schema, and no request ever changes it
/// outside a write transaction: tenant statements name their schema (`tenancy::tx`), so one
/// that escaped the rendering fails with "relation does not exist" instead of reading
/// somebody's rows.
const SESSION_SEARCH_PATH: &str = "platform";

/// Prepared statements kept per connection (sqlx's LRU cache, keyed by the statement text).
/// Tenant statements name their schema (`tenancy::tx`), so each garden has its own texts: the
/// cache must hold the statements of every garden a connection serves within its lifetime
/// (`max_lifetime` below), or spread reads turn every miss into two more round trips (prepare,
/// and close the evicted statement). 400 covers 200 gardens with their two hottest reads plus
/// the platform's statements. The cost is server memory per backend: measured on PostgreSQL 15
/// (`pg_backend_memory_contexts`), a one-table lookup holds about 12 kB once prepared and 20 kB
/// with its generic plan, the plant list page 0.2 MB and 0.5–0.6 MB; a connection whose cache
/// is full of lookups holds about 8 MB, and the ceiling, all 400 entries plant lists, is about
/// 200–250 MB, until the connection is recycled.
pub const STATEMENT_CACHE_CAPACITY: usize = 400;

pub fn connect_options(url: &str) -> Result<PgConnectOptions, sqlx::Error> {
    Ok(PgConnectOptions::from_str(url)?
        .application_name("kultiva")
        .options([("search_path", SESSION_SEARCH_PATH)])
        .statement_cache_capacity(STATEMENT_CACHE_CAPACITY)
        .log_slow_statements(tracing::log::LevelFilter::Warn, Duration::from_secs(1)))
}

impl Placements {
    /// Opens lazily-connecting pools: the first query connects, so start-up does not fail on a
    /// secondary server that is briefly down.
    pub fn connect_lazy(config: &Config) -> Result<Self, sqlx::Error> {
        Self::connect_lazy_with(config, config.db_max_connections)
    }

    pub fn connect_lazy_with(config: &Config, max_connections: u32) -> Result<Self, sqlx::Error> {
        let mut primary = None;
        let mut others = HashMap::new();
        for PlacementConfig { name, url } in &config.placements {
            let options = connect_options(url.expose())?;
            let pool = PgPoolOptions::new()
                .max_connections(max_connections)
                .min_connections(0)
                .acquire_timeout(config.db_acquire_timeout)
                // Checking a connection before every use costs a round trip per request; a
                // broken one fails the query and is dropped anyway.
                .test_before_acquire(false)
                // Each connection caches catalog entries of every tenant it touched (~1 MB per
                // tenant); recycling bounds that (`DB_MAX_LIFETIME_SECS`, `DB_IDLE_TIMEOUT_SECS`).
                .max_lifetime(config.db_max_lifetime)
                .idle_timeout(config.db_idle_timeout)
                .connect_lazy_with(options.clone());
            let reads = ReadPool::new(
                &options,
                config.db_read_connections,
                config.db_acquire_timeout,
                config.db_max_lifetime,
                config.db_idle_timeout,
            )?;
            let placement = Placement {
                name: name.clone(),
                pool,
                reads,
                options,
            };
            if name == PRIMARY_PLACEMENT {
                primary = Some(placement);
            } else {
                others.insert(name.clone(), placement);
            }
        }
        // `Config` always lists the primary placement (the DATABASE_URL server) first.
        let primary = primary.ok_or_else(|| {
            sqlx::Error::Configuration("the primary placement is not configured".into())
        })?;
        Ok(Self {
            primary,
            others,
            default_name: config.default_placement.clone(),
        })
    }

    pub fn get(&self, name: &str) -> Option<&Placement> {
        if name == PRIMARY_PLACEMENT {
            Some(&self.primary)
        } else {
            self.others.get(name)
        }
    }

    pub fn primary(&self) -> &Placement {
        &self.primary
    }

    pub fn default_name(&self) -> &str {
        &self.default_name
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        std::iter::once(PRIMARY_PLACEMENT).chain(self.others.keys().map(String::as_str))
    }

    /// Closes idle or aged read connections on every placement (see `ReadPool::sweep`).
    pub fn sweep_reads(&self) -> usize {
        std::iter::once(&self.primary)
            .chain(self.others.values())
            .map(|placement| placement.reads.sweep())
            .sum()
    }

    pub async fn close(&self) {
        self.primary.reads.close();
        self.primary.pool.close().await;
        for placement in self.others.values() {
            placement.reads.close();
            placement.pool.close().await;
        }
    }
}
