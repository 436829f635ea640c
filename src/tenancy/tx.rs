//! `TenantTx`: the only door to tenant tables. Tenant repositories take `&mut TenantTx`, never a
//! pool, and write their statements as templates that name tenant tables `tenant.<table>`;
//! [`TenantTx::sql`] renders the placeholder into the tenant's validated, quoted schema name.
//! No connection ever carries a tenant scope: a statement names its schema itself, and the
//! session search path (`platform`, see `store::pg`) reaches no tenant table, so a statement
//! that escaped the rendering fails with "relation does not exist" instead of reading anybody's
//! rows.
//!
//! Three ways in:
//! - [`read`](TenantTx::read): a pooled connection, no transaction, nothing set on it. A garden
//!   read of one statement is one round trip.
//! - [`snapshot`](TenantTx::snapshot): a read-only `REPEATABLE READ` transaction, for reads of
//!   several statements that must agree with each other (a count and its page, a record and its
//!   children).
//! - [`begin`](TenantTx::begin): a write transaction.

use sqlx::{AssertSqlSafe, PgConnection, Postgres, Transaction};

use super::registry::{self, TenantRecord, TenantStatus};
use crate::state::AppState;
use crate::store::read_pool::PooledRead;

/// The placeholder of the tenant's schema in a statement template: `FROM tenant.plants p`.
/// Replaced only where it starts a name (not inside `x_tenant.`); no schema of that name
/// exists, so a template run unrendered fails loudly.
pub const SCHEMA_PLACEHOLDER: &str = "tenant.";

/// Renders a statement template for one schema (`quoted`: the quoted schema name). One pass,
/// one allocation of the exact size: about 0.1–0.2 µs for a 100-byte statement and 2 µs for the
/// 2 kB plant list (`rustc -O` micro-benchmark on the busy 2-core machine), about what sqlx
/// already spends hashing the same text for its statement cache, and well under a round trip
/// (50–100 µs), so rendered text is not cached.
pub fn render(template: &str, quoted: &str) -> String {
    let marks = template
        .match_indices(SCHEMA_PLACEHOLDER)
        .filter(|(at, _)| starts_a_name(template, *at));
    let mut out = String::with_capacity(template.len() + 8 * (quoted.len() + 1));
    let mut from = 0;
    for (at, _) in marks {
        out.push_str(&template[from..at]);
        out.push_str(quoted);
        out.push('.');
        from = at + SCHEMA_PLACEHOLDER.len();
    }
    out.push_str(&template[from..]);
    out
}

fn starts_a_name(template: &str, at: usize) -> bool {
    match at.checked_sub(1).map(|i| template.as_bytes()[i]) {
        None => true,
        Some(b) => !(b.is_ascii_alphanumeric() || matches!(b, b'_' | b'"' | b'.' | b'$')),
    }
}

/// The table every write transaction of a garden locks first (`ROW EXCLUSIVE`, which writers
/// share and readers never ask for): sqlx's migration ledger, present in every tenant schema.
/// A move (`tenancy::transfer::moving`) locks it `ACCESS EXCLUSIVE` while it copies, which
/// waits for the writes in flight and holds back new ones, then renames it to
/// [`CLOSED_WRITE_GATE`] before the registry switch: every write that reaches the old copy
/// afterwards fails before its `BEGIN`, also when the mover died before dropping the old copy.
pub const WRITE_GATE: &str = "_sqlx_migrations";

/// The gate's name on a garden copy that no longer takes writes (moved away).
pub const CLOSED_WRITE_GATE: &str = "_sqlx_migrations_moved";

/// Longest a write waits for a move's copy before it answers 503.
pub const WRITE_GATE_WAIT: &str = "5s";

/// The statements that take the write gate, sent before `BEGIN` in one simple-protocol
/// message. PostgreSQL runs a message of several statements as one implicit transaction that
/// the `BEGIN` turns into the explicit one, so the lock is held until the write ends; if the
/// gate is closed (or the schema gone, or the wait too long) the message stops before its
/// `BEGIN` and the implicit transaction is rolled back: the connection goes back to the pool
/// clean. (Had the lock come after `BEGIN`, its failure would leave an aborted transaction
/// open on a pooled connection, which sqlx does not roll back.) The lock timeout is reset
/// before `BEGIN`, so the write's own statements wait as they always did.
pub fn write_gate_sql(quoted_schema: &str) -> String {
    format!(
        "SET LOCAL lock_timeout = '{WRITE_GATE_WAIT}'; \
         LOCK TABLE {quoted_schema}.{WRITE_GATE} IN ROW EXCLUSIVE MODE; \
         SET LOCAL lock_timeout TO DEFAULT"
    )
}

/// Why a `begin` did not get through the write gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum GateRefusal {
    /// The gate table is gone (renamed by a move, `42P01`) or the schema is (`3F000`): the
    /// garden no longer takes writes on this server.
    Closed,
    /// A move's copy held the gate longer than [`WRITE_GATE_WAIT`] (`55P03`).
    Busy,
}

fn gate_refusal(err: &sqlx::Error) -> Option<GateRefusal> {
    let db = err.as_database_error()?;
    // On Citus the gate lock runs on the garden's worker too; a garden moved off the cluster
    // meanwhile fails there, which Citus reports as the lost node.
    if crate::error::citus_node_lost(db.message()) {
        return Some(GateRefusal::Closed);
    }
    match db.code()?.as_ref() {
        "42P01" | "3F000" => Some(GateRefusal::Closed),
        "55P03" => Some(GateRefusal::Busy),
        _ => None,
    }
}

/// How often, and how many times, a write that met a closed gate reads the registry again
/// while it still names the fenced copy and records a move: the switch normally commits a few
/// milliseconds after the gate closed. About a second in all, then 503.
const SWITCH_POLL: std::time::Duration = std::time::Duration::from_millis(50);
const SWITCH_POLLS: u32 = 20;

enum Scope {
    /// A single-statement read: a connection of the placement's read pool, outside any
    /// transaction.
    Conn(PooledRead),
    /// A transaction (`snapshot` when `read_only`, else `begin`).
    Tx {
        tx: Transaction<'static, Postgres>,
        read_only: bool,
    },
}

pub struct TenantTx {
    scope: Scope,
    /// The tenant's schema, quoted for SQL text.
    schema: String,
    /// A write's garden, forgotten by this replica's garden reads once it commits.
    written: Option<(AppState, uuid::Uuid)>,
}

impl std::fmt::Debug for TenantTx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self.scope {
            Scope::Conn(_) => "TenantTx(read)",
            Scope::Tx {
                read_only: true, ..
            } => "TenantTx(snapshot)",
            Scope::Tx { .. } => "TenantTx",
        })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum TenantTxError {
    #[error("tenant placement {0:?} is not configured")]
    UnknownPlacement(String),
    /// The garden is being moved to another server (or was just removed): retry.
    #[error("this garden is being moved or removed; retry in a moment")]
    Moving,
    #[error(transparent)]
    Database(#[from] sqlx::Error),
}

impl TenantTx {
    /// Begins a write transaction on the tenant's server.
    ///
    /// Its statements are schema-qualified like every other; `BEGIN` still carries a
    /// `SET LOCAL search_path` to the tenant's schema in the same simple-protocol message (one
    /// round trip, no extra cost), so a write statement not yet converted to the qualified form
    /// (one merged from before the change) keeps working. Nothing in `src/garden` relies on it.
    /// The setting ends with the transaction, so a pooled connection never carries it to
    /// another tenant. The schema name is a validated `SchemaName`, never request text.
    ///
    /// Before `BEGIN`, in the same message, the write takes the garden's write gate (see
    /// [`write_gate_sql`]): it waits while a move copies the garden, and fails, leaving no
    /// transaction open, once the garden has been moved away from (or dropped on) this server.
    /// A write that meets a closed gate reads the garden's registry row again (the caller's
    /// record may predate a move's switch): when the garden is on another server now, the
    /// write begins there instead (once); while the row still names this server and records
    /// a move, it waits about a second for the switch. Otherwise, and when a copy held the gate
    /// longer than [`WRITE_GATE_WAIT`], it is [`TenantTxError::Moving`], a 503 with
    /// `Retry-After`.
    pub async fn begin(state: &AppState, tenant: &TenantRecord) -> Result<Self, TenantTxError> {
        let schema = tenant.schema_name.quoted();
        // The notification is part of the transaction: sent when it commits, never when it
        // rolls back (`cache`, "Garden reads"). A uuid's text needs no quoting.
        let begin = format!(
            "{}; BEGIN; SET LOCAL search_path TO {schema}; NOTIFY {}, '{}'",
            write_gate_sql(&schema),
            crate::cache::CHANNEL,
            crate::cache::garden_changed(tenant.id)
        );
        let written = |tx: Self| Self {
            written: Some((state.clone(), tenant.id)),
            ..tx
        };
        let refused =
            match Self::start(state, &tenant.placement, &schema, begin.clone(), false).await {
                Err(TenantTxError::Database(db)) => match gate_refusal(&db) {
                    Some(refusal) => refusal,
                    None => return Err(TenantTxError::Database(db)),
                },
                other => return other.map(written),
            };
        if refused == GateRefusal::Busy {
            return Err(TenantTxError::Moving);
        }
        let Some(now) = follow_switch(state, tenant).await? else {
            return Err(TenantTxError::Moving);
        };
        tracing::info!(tenant = %tenant.slug, from = %tenant.placement, to = %now,
            "a write met the closed gate of a moved garden; it goes to the new placement");
        Self::start(state, &now, &schema, begin, false)
            .await
            .map(written)
            .map_err(|err| match err {
                TenantTxError::Database(db) if gate_refusal(&db).is_some() => TenantTxError::Moving,
                other => other,
            })
    }

    /// A garden read of one statement: a connection of the placement's read pool, no
    /// transaction, no setting. The statement names the tenant's schema itself, so it is one
    /// round trip, and the connection goes back without another (`store::read_pool`); nothing
    /// is left on it when the request ends, fails or is cancelled (sqlx drains a cancelled
    /// statement's answer before the connection serves anyone else).
    ///
    /// Every statement runs on its own (autocommit): a read of several statements that must
    /// agree takes a [`snapshot`](Self::snapshot). PostgreSQL refuses nothing here by itself;
    /// reads go through read-only repository functions.
    ///
    /// The garden's server is checked first (see [`current_placement`]): a record resolved
    /// before a move's switch reads from the new server, not from an old copy that may be
    /// dropped by now. That costs nothing while the cache holds the garden.
    pub async fn read(state: &AppState, tenant: &TenantRecord) -> Result<Self, TenantTxError> {
        let placement = current_placement(state, tenant).await?;
        let placement = state
            .placements()
            .get(&placement)
            .ok_or(TenantTxError::UnknownPlacement(placement))?;
        // Acquiring sends nothing but the occasional test (`store::read_pool`); cancel-safe.
        let conn = placement.reads().acquire().await?;
        Ok(Self {
            scope: Scope::Conn(conn),
            schema: tenant.schema_name.quoted(),
            written: None,
        })
    }

    /// A read of several statements that must see one state of the garden (a count and its
    /// page; a record and its children): `BEGIN READ ONLY ISOLATION LEVEL REPEATABLE READ`,
    /// one snapshot for all its statements; PostgreSQL refuses any write in it, and a
    /// read-only repeatable-read transaction never fails to serialise. Its end costs the
    /// request nothing: [`commit`](Self::commit), [`rollback`](Self::rollback) and a drop
    /// queue its `ROLLBACK`, which the pool sends with the check it runs on every returned
    /// connection, before anybody else can use it. No search path is set. The garden's server
    /// is checked first, as for [`read`](Self::read).
    pub async fn snapshot(state: &AppState, tenant: &TenantRecord) -> Result<Self, TenantTxError> {
        let begin = "BEGIN READ ONLY ISOLATION LEVEL REPEATABLE READ".to_owned();
        let placement = current_placement(state, tenant).await?;
        Self::start(state, &placement, &tenant.schema_name.quoted(), begin, true).await
    }

    async fn start(
        state: &AppState,
        placement: &str,
        schema: &str,
        begin: String,
        read_only: bool,
    ) -> Result<Self, TenantTxError> {
        let placement = state
            .placements()
            .get(placement)
            .ok_or_else(|| TenantTxError::UnknownPlacement(placement.to_owned()))?;
        // Not cancellable: sqlx counts a transaction only once `BEGIN` has answered, so a
        // request dropped while `BEGIN` is on its way would hand the connection back to the
        // pool inside an open transaction (with this tenant's search_path, for `begin`). In a
        // task of its own the begin always finishes; if nobody awaits it any more, the
        // transaction is dropped there, which queues its ROLLBACK before the pool reuses the
        // connection.
        let pool = placement.pool().clone();
        let tx = tokio::spawn(async move { pool.begin_with(AssertSqlSafe(begin)).await })
            .await
            .map_err(|join| sqlx::Error::Protocol(format!("beginning a transaction: {join}")))??;
        Ok(Self {
            scope: Scope::Tx { tx, read_only },
            schema: schema.to_owned(),
            written: None,
        })
    }

    /// A statement template rendered for this tenant: every `tenant.` that starts a name
    /// becomes the quoted schema name (`tenant.plants` → `"t_…".plants`). The text is what
    /// sqlx's per-connection prepared-statement cache keys on (see `store::pg`).
    pub fn sql(&self, template: &str) -> AssertSqlSafe<String> {
        AssertSqlSafe(render(template, &self.schema))
    }

    /// The tenant's schema name, quoted (as rendered into statements); a key for per-garden
    /// advisory locks.
    pub fn schema(&self) -> &str {
        &self.schema
    }

    /// The executor for tenant repositories.
    pub fn conn(&mut self) -> &mut PgConnection {
        match &mut self.scope {
            Scope::Conn(conn) => conn.conn(),
            Scope::Tx { tx, .. } => tx,
        }
    }

    pub async fn commit(self) -> Result<(), sqlx::Error> {
        match self.scope {
            Scope::Tx {
                tx,
                read_only: false,
            } => {
                let done = tx.commit().await;
                // Also after an error: the COMMIT may have gone through; forgetting is safe.
                if let Some((state, garden)) = &self.written {
                    state.caches().forget_garden_data(*garden);
                }
                done
            }
            // Nothing to keep: the connection goes back to the pool, a snapshot's ROLLBACK
            // queued on it (see `snapshot`).
            _ => Ok(()),
        }
    }

    pub async fn rollback(self) -> Result<(), sqlx::Error> {
        match self.scope {
            Scope::Tx {
                tx,
                read_only: false,
            } => tx.rollback().await,
            _ => Ok(()),
        }
    }
}

/// The server the garden is on now. A request resolves its garden once, at its start; a move
/// may switch the garden to another server after that, and drop the old copy twice the
/// caches' bound later (`tenancy::transfer::moving`). So every transaction checks again: the
/// cached record (kept at most [`crate::cache::BOUND`] after a change, usually the one the
/// request resolved a moment ago: no round trip), or, when the cache no longer holds the garden
/// (it changed, or the request is older than the bound), the registry row, which is then kept.
/// The schema name never changes with a move, only the server.
pub async fn current_placement(
    state: &AppState,
    tenant: &TenantRecord,
) -> Result<String, TenantTxError> {
    let caches = state.caches();
    if let Some(cached) = caches.tenant(tenant.slug.as_str())
        && cached.id == tenant.id
    {
        return Ok(cached.placement);
    }
    let ticket = caches.ticket();
    let Some(row) = registry::find_by_id(state.platform_pool(), tenant.id).await? else {
        // Dropped meanwhile: there is nothing to read anywhere.
        return Err(TenantTxError::Moving);
    };
    if row.status == TenantStatus::Active {
        caches.keep_tenant(&row, ticket);
    }
    if row.placement != tenant.placement {
        tracing::info!(tenant = %tenant.slug, from = %tenant.placement, to = %row.placement,
            "the garden moved after the request resolved it; following it");
    }
    Ok(row.placement)
}

/// After a write met a closed gate on `tenant.placement`: the placement the garden was switched
/// to, read from the registry (not the cache, which may still name the old one), or `None`
/// when it is still on `tenant.placement` (a move died after closing the gate, the garden is
/// being dropped) or gone. While the row records a move that has not switched yet, it asks
/// again for about a second.
async fn follow_switch(
    state: &AppState,
    tenant: &TenantRecord,
) -> Result<Option<String>, TenantTxError> {
    for poll in 0..=SWITCH_POLLS {
        let Some(row) = registry::find_by_id(state.platform_pool(), tenant.id).await? else {
            return Ok(None);
        };
        if row.placement != tenant.placement {
            state.caches().forget_tenant(tenant.id);
            return Ok(Some(row.placement));
        }
        if row.moving_to.is_none() || poll == SWITCH_POLLS {
            return Ok(None);
        }
        tokio::time::sleep(SWITCH_POLL).await;
    }
    Ok(None)
}

impl From<TenantTxError> for crate::error::AppError {
    fn from(err: TenantTxError) -> Self {
        match err {
            TenantTxError::Database(db) => db.into(),
            TenantTxError::Moving => Self::new(
                crate::error::ErrorCode::ServiceUnavailable,
                "this garden is being moved; retry in a moment",
            ),
            other => Self::internal(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const Q: &str = "\"t_0123456789abcdef0123456789abcdef\"";

    #[test]
    fn renders_every_placeholder_that_starts_a_name() {
        assert_eq!(
            render(
                "SELECT p.id FROM tenant.plants p JOIN tenant.slots s ON s.id = p.slot_id \
                 WHERE (SELECT count(*) FROM tenant.x)>0",
                Q
            ),
            format!(
                "SELECT p.id FROM {Q}.plants p JOIN {Q}.slots s ON s.id = p.slot_id \
                 WHERE (SELECT count(*) FROM {Q}.x)>0"
            )
        );
        assert_eq!(render("tenant.sites", Q), format!("{Q}.sites"));
        assert_eq!(render("(tenant.a,tenant.b)", Q), format!("({Q}.a,{Q}.b)"));
    }

    #[test]
    fn leaves_other_names_alone() {
        for t in [
            "SELECT my_tenant.x",
            "SELECT \"tenant\".x",
            "SELECT a.tenant.x",
            "SELECT 'tenant:' || id",
            "SELECT tenants.id",
            "SELECT 1",
        ] {
            assert_eq!(render(t, Q), t);
        }
    }
}
