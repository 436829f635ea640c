//! The read pool: connections for single-statement garden reads (`TenantTx::read`), one pool
//! per placement beside the shared sqlx pool.
//!
//! sqlx's pool tests every connection it takes back (a `Sync`, then a wait for
//! `ReadyForQuery`): for a read of one statement that is a second round trip, on the service
//! and on PostgreSQL, after every request (seen with strace on the hot path: `B…E…C…S`, the
//! answer, then a lone `S` and its `Z`). Here a connection goes back as it is. That is safe
//! because a sqlx PostgreSQL connection puts itself right before its next statement: a
//! statement cancelled halfway (the request dropped) left its `Sync` counted, and the next
//! statement first reads everything up to the pending `ReadyForQuery`s (`wait_until_ready`).
//! What the release test would still find is a broken connection (the server restarted or
//! the connection was cut); that is tested here when a connection is taken out and its last
//! test is `TEST_EVERY` (100 ms) old or more: under load about ten tests a second per
//! connection against thousands of reads, and always after a pause. A connection that fails
//! the test is dropped and another one taken, so the request does not see it. Reads on a
//! connection cut less than `TEST_EVERY` ago fail like any database outage (503 with
//! `Retry-After`), at most for that moment; with sqlx's pool the first read on each cut
//! connection fails the same way.
//!
//! Lifetime and idle time follow `DB_MAX_LIFETIME_SECS` and `DB_IDLE_TIMEOUT_SECS`, as in the
//! shared pool; the size is `DB_READ_CONNECTIONS`. The connections name themselves
//! `kultiva-reads` in `pg_stat_activity`.

use std::time::{Duration, Instant};

use deadpool::managed::{self, Metrics, Pool, PoolError, RecycleError, RecycleResult};
use sqlx::postgres::PgConnectOptions;
use sqlx::{Connection, PgConnection};

/// A connection is tested before use when its last test is this old.
const TEST_EVERY: Duration = Duration::from_millis(100);

/// Prepared statements kept per read connection. Garden statements name their schema, so each
/// garden has its own texts, and a spread of reads over many gardens on few connections needs
/// all of them kept: a miss costs a `Parse` round trip and a plan, which halved the reads per
/// second over 600 gardens with the shared pool's 400 (`loadtest/tenant_scale`). 4,096 holds
/// the two hottest reads of 2,000 gardens. Each kept statement holds 12–20 kB in its
/// PostgreSQL backend (see `store::pg::STATEMENT_CACHE_CAPACITY`) until the connection is
/// recycled (`DB_MAX_LIFETIME_SECS`).
pub const READ_STATEMENT_CACHE_CAPACITY: usize = 4096;

/// The application name of read connections in `pg_stat_activity`.
pub const APPLICATION_NAME: &str = "kultiva-reads";

/// One read connection and when it was last known to work.
pub struct ReadConnection {
    conn: PgConnection,
    tested: Instant,
}

impl std::fmt::Debug for ReadConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadConnection").finish_non_exhaustive()
    }
}

impl ReadConnection {
    pub fn conn(&mut self) -> &mut PgConnection {
        &mut self.conn
    }
}

/// Makes and tests read connections (deadpool's manager).
pub struct ReadConnectionManager {
    options: PgConnectOptions,
    max_lifetime: Duration,
}

impl managed::Manager for ReadConnectionManager {
    type Type = ReadConnection;
    type Error = sqlx::Error;

    async fn create(&self) -> Result<ReadConnection, sqlx::Error> {
        Ok(ReadConnection {
            conn: PgConnection::connect_with(&self.options).await?,
            tested: Instant::now(),
        })
    }

    async fn recycle(
        &self,
        conn: &mut ReadConnection,
        metrics: &Metrics,
    ) -> RecycleResult<sqlx::Error> {
        // Dropped without `Terminate`: PostgreSQL takes a plain disconnect outside a
        // transaction silently (its "unexpected EOF" is DEBUG1 then).
        if metrics.age() >= self.max_lifetime {
            return Err(RecycleError::message("older than DB_MAX_LIFETIME_SECS"));
        }
        if conn.tested.elapsed() >= TEST_EVERY {
            conn.conn.ping().await?;
            conn.tested = Instant::now();
        }
        Ok(())
    }
}

/// A checked-out read connection; it goes back to its pool when dropped.
pub type PooledRead = managed::Object<ReadConnectionManager>;

/// The read pool of one placement. Cheap to clone.
#[derive(Clone)]
pub struct ReadPool {
    pool: Pool<ReadConnectionManager>,
    idle_timeout: Duration,
    max_lifetime: Duration,
}

impl std::fmt::Debug for ReadPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadPool")
            .field("status", &self.pool.status())
            .finish_non_exhaustive()
    }
}

/// Open, idle and maximum connections of a read pool, sampled at once.
#[derive(Debug, Clone, Copy)]
pub struct ReadPoolStatus {
    pub open: usize,
    pub idle: usize,
    pub max: usize,
}

impl ReadPool {
    /// A pool that connects on first use.
    pub fn new(
        options: &PgConnectOptions,
        size: u32,
        acquire_timeout: Duration,
        max_lifetime: Duration,
        idle_timeout: Duration,
    ) -> Result<Self, sqlx::Error> {
        let manager = ReadConnectionManager {
            options: options
                .clone()
                .application_name(APPLICATION_NAME)
                .statement_cache_capacity(READ_STATEMENT_CACHE_CAPACITY),
            max_lifetime,
        };
        let pool = Pool::builder(manager)
            .max_size(usize::try_from(size).unwrap_or(1).max(1))
            .wait_timeout(Some(acquire_timeout))
            .create_timeout(Some(acquire_timeout))
            .recycle_timeout(Some(acquire_timeout))
            .runtime(deadpool::Runtime::Tokio1)
            .build()
            .map_err(|err| sqlx::Error::Configuration(err.to_string().into()))?;
        Ok(Self {
            pool,
            idle_timeout,
            max_lifetime,
        })
    }

    /// A connection for one read. Errors are sqlx's own kinds (a full pool that stays full
    /// is `PoolTimedOut`), so they answer as the shared pool's do.
    pub async fn acquire(&self) -> Result<PooledRead, sqlx::Error> {
        self.pool.get().await.map_err(|err| match err {
            PoolError::Backend(err) => err,
            PoolError::Timeout(_) => sqlx::Error::PoolTimedOut,
            PoolError::Closed => sqlx::Error::PoolClosed,
            other => sqlx::Error::Configuration(other.to_string().into()),
        })
    }

    /// Closes the idle connections unused for `DB_IDLE_TIMEOUT_SECS` or older than
    /// `DB_MAX_LIFETIME_SECS` (deadpool has no reaper of its own; the service's reaper calls
    /// this every pass, so a pool that falls quiet after a spread over many gardens gives
    /// back its connections and their catalogue caches). Returns how many it closed.
    pub fn sweep(&self) -> usize {
        let (idle_timeout, max_lifetime) = (self.idle_timeout, self.max_lifetime);
        self.pool
            .retain(|_, metrics| metrics.last_used() < idle_timeout && metrics.age() < max_lifetime)
            .removed
            .len()
    }

    pub fn status(&self) -> ReadPoolStatus {
        let status = self.pool.status();
        ReadPoolStatus {
            open: status.size,
            idle: status.available,
            max: status.max_size,
        }
    }

    pub fn close(&self) {
        self.pool.close();
    }
}
