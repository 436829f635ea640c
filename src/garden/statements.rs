//! A statement counter for the garden read paths (plants, runs): every statement their repos
//! send through [`GardenTx::conn`], every transaction they open and every catalogue lookup they
//! make is noted against the tenant, but only for tenants a test asked to watch, so the
//! production path pays one relaxed atomic load. The integration tests that prove "one query
//! per page" and "one round trip per read" read it.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use sqlx::PgConnection;
use uuid::Uuid;

use crate::state::AppState;
use crate::tenancy::{TenantRecord, TenantTx};

static ANY: AtomicBool = AtomicBool::new(false);
static COUNTS: Mutex<Option<HashMap<Uuid, Counts>>> = Mutex::new(None);

/// Statements sent for one watched tenant.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Statements on the tenant's schema (transaction control not counted).
    pub tenant: u64,
    /// Transactions opened (`BEGIN …`, one round trip each; a plain read opens none).
    pub transactions: u64,
    /// Lookups in the platform catalogue.
    pub catalogue: u64,
}

/// Starts (or restarts from zero) counting for a tenant.
pub fn watch(tenant: Uuid) {
    if let Ok(mut g) = COUNTS.lock() {
        g.get_or_insert_with(HashMap::new)
            .insert(tenant, Counts::default());
        ANY.store(true, Ordering::Relaxed);
    }
}

/// What was counted for a watched tenant since [`watch`].
pub fn read(tenant: Uuid) -> Counts {
    COUNTS
        .lock()
        .ok()
        .and_then(|g| g.as_ref().and_then(|m| m.get(&tenant).copied()))
        .unwrap_or_default()
}

fn note(tenant: Uuid, f: impl FnOnce(&mut Counts)) {
    if !ANY.load(Ordering::Relaxed) {
        return;
    }
    if let Ok(mut g) = COUNTS.lock()
        && let Some(c) = g.as_mut().and_then(|m| m.get_mut(&tenant))
    {
        f(c);
    }
}

/// Notes one catalogue lookup made for a tenant's request.
pub fn catalogue_lookup(tenant: Uuid) {
    note(tenant, |c| c.catalogue += 1);
}

/// A tenant transaction that counts the statements sent through it.
pub struct GardenTx {
    tx: TenantTx,
    tenant: Uuid,
}

impl std::fmt::Debug for GardenTx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("GardenTx")
    }
}

impl GardenTx {
    /// A write transaction ([`TenantTx::begin`]).
    pub async fn begin(
        state: &AppState,
        tenant: &TenantRecord,
    ) -> Result<Self, crate::error::AppError> {
        note(tenant.id, |c| c.transactions += 1);
        Ok(Self {
            tx: TenantTx::begin(state, tenant).await?,
            tenant: tenant.id,
        })
    }

    /// A read of one statement ([`TenantTx::read`]): no transaction.
    pub async fn read(
        state: &AppState,
        tenant: &TenantRecord,
    ) -> Result<Self, crate::error::AppError> {
        Ok(Self {
            tx: TenantTx::read(state, tenant).await?,
            tenant: tenant.id,
        })
    }

    /// A read of several statements on one snapshot ([`TenantTx::snapshot`]).
    pub async fn snapshot(
        state: &AppState,
        tenant: &TenantRecord,
    ) -> Result<Self, crate::error::AppError> {
        note(tenant.id, |c| c.transactions += 1);
        Ok(Self {
            tx: TenantTx::snapshot(state, tenant).await?,
            tenant: tenant.id,
        })
    }

    /// A statement template rendered for the tenant ([`TenantTx::sql`]).
    pub fn sql(&self, template: &str) -> sqlx::AssertSqlSafe<String> {
        self.tx.sql(template)
    }

    /// The executor for one statement (counted).
    pub fn conn(&mut self) -> &mut PgConnection {
        note(self.tenant, |c| c.tenant += 1);
        self.tx.conn()
    }

    /// The plain handle, for other capabilities' functions (places).
    pub fn inner(&mut self) -> &mut TenantTx {
        note(self.tenant, |c| c.tenant += 1);
        &mut self.tx
    }

    pub fn tenant(&self) -> Uuid {
        self.tenant
    }

    pub async fn commit(self) -> Result<(), sqlx::Error> {
        self.tx.commit().await
    }

    pub async fn rollback(self) -> Result<(), sqlx::Error> {
        self.tx.rollback().await
    }

    /// Commits, or rolls back for a dry run.
    pub async fn finish(self, commit: bool) -> Result<(), sqlx::Error> {
        if commit {
            self.commit().await
        } else {
            self.rollback().await
        }
    }
}
