//! `TenantTx`: the only door to tenant tables. It is a transaction scoped to one tenant's schema;
//! tenant repositories take `&mut TenantTx`, never a pool, so no tenant query can run unscoped.

use sqlx::{PgConnection, Postgres, Transaction};

use super::registry::TenantRecord;
use crate::state::AppState;

pub struct TenantTx {
    tx: Transaction<'static, Postgres>,
}

impl std::fmt::Debug for TenantTx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TenantTx")
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
        let placement = state
            .placements()
            .get(&tenant.placement)
            .ok_or_else(|| TenantTxError::UnknownPlacement(tenant.placement.clone()))?;
        let begin = format!(
            "BEGIN; SET LOCAL search_path TO {}",
            tenant.schema_name.quoted()
        );
        let tx = placement
            .pool()
            .begin_with(sqlx::AssertSqlSafe(begin))
            .await?;
        Ok(Self { tx })
    }

    /// The executor for tenant repositories.
    pub fn conn(&mut self) -> &mut PgConnection {
        &mut self.tx
    }

    pub async fn commit(self) -> Result<(), sqlx::Error> {
        self.tx.commit().await
    }

    pub async fn rollback(self) -> Result<(), sqlx::Error> {
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
