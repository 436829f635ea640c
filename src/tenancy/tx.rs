//! `TenantTx`: the only door to tenant tables. It is a transaction scoped to one tenant's schema;
//! tenant repositories take `&mut TenantTx`, never a pool, so no tenant query can run unscoped.

use sqlx::{PgConnection, Postgres, Transaction};

use super::registry::TenantRecord;
use crate::state::AppState;

pub struct TenantTx {
    tx: Transaction<'static, Postgres>,
    read_only: bool,
}

impl std::fmt::Debug for TenantTx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.read_only {
            "TenantTx(read)"
        } else {
            "TenantTx"
        })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum TenantTxError {
    #[error("tenant placement {0:?} is not configured")]
    UnknownPlacement(String),
    #[error(transparent)]
    Database(#[from] sqlx::Error),
}

impl TenantTx {
    /// Begins a transaction on the tenant's server with its schema as the search path.
    ///
    /// `BEGIN` and `SET LOCAL` travel as one simple-protocol message (one round trip); the
    /// setting ends with the transaction, so a pooled connection never carries it to another
    /// tenant. The schema name is a validated `SchemaName`, never request text.
    pub async fn begin(state: &AppState, tenant: &TenantRecord) -> Result<Self, TenantTxError> {
        Self::start(state, tenant, "BEGIN", false).await
    }

    /// A read-only transaction for garden reads: like [`begin`](Self::begin), but PostgreSQL
    /// refuses any write in it, and its end costs the request nothing: [`commit`] and
    /// [`rollback`] (and a drop) queue the `ROLLBACK` on the connection, and the pool sends it
    /// with the check it runs on every returned connection, before anybody else can use it.
    /// A garden read is then two round trips: `BEGIN …; SET LOCAL …` and the query.
    ///
    /// [`commit`]: Self::commit
    /// [`rollback`]: Self::rollback
    pub async fn read(state: &AppState, tenant: &TenantRecord) -> Result<Self, TenantTxError> {
        Self::start(state, tenant, "BEGIN READ ONLY", true).await
    }

    async fn start(
        state: &AppState,
        tenant: &TenantRecord,
        begin: &str,
        read_only: bool,
    ) -> Result<Self, TenantTxError> {
        let placement = state
            .placements()
            .get(&tenant.placement)
            .ok_or_else(|| TenantTxError::UnknownPlacement(tenant.placement.clone()))?;
        let begin = format!(
            "{begin}; SET LOCAL search_path TO {}",
            tenant.schema_name.quoted()
        );
        // Not cancellable: sqlx counts a transaction only once `BEGIN` has answered, so a
        // request dropped while `BEGIN` is on its way would hand the connection back to the
        // pool inside an open transaction with this tenant's search_path. In a task of its
        // own the begin always finishes; if nobody awaits it any more, the transaction is
        // dropped there, which queues its ROLLBACK before the pool reuses the connection.
        let pool = placement.pool().clone();
        let tx = tokio::spawn(async move { pool.begin_with(sqlx::AssertSqlSafe(begin)).await })
            .await
            .map_err(|join| sqlx::Error::Protocol(format!("beginning a transaction: {join}")))??;
        Ok(Self { tx, read_only })
    }

    /// The executor for tenant repositories.
    pub fn conn(&mut self) -> &mut PgConnection {
        &mut self.tx
    }

    /// Whether this is a [`read`](Self::read) transaction.
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    pub async fn commit(self) -> Result<(), sqlx::Error> {
        if self.read_only {
            // Nothing to keep: the queued ROLLBACK ends it (see `read`).
            drop(self.tx);
            return Ok(());
        }
        self.tx.commit().await
    }

    pub async fn rollback(self) -> Result<(), sqlx::Error> {
        if self.read_only {
            drop(self.tx);
            return Ok(());
        }
        self.tx.rollback().await
    }
}

impl From<TenantTxError> for crate::error::AppError {
    fn from(err: TenantTxError) -> Self {
        match err {
            TenantTxError::Database(db) => db.into(),
            other => Self::internal(other),
        }
    }
}
