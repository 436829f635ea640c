//! `kultiva tenant move <slug> --to <placement>`: the garden's schema to another PostgreSQL
//! server, then the registry switch, then the old copy dropped.
//!
//! The steps, and what holds at each:
//! 1. Checks, touching nothing: the target is configured, reachable, a different database, and
//!    has no schema of this name. The garden is brought to the latest schema version.
//! 2. The registry records the move (`moving_to`); the garden stays `active`, served from the
//!    source. The target schema is built by the migrations, empty.
//! 3. On the source, one `REPEATABLE READ` transaction locks the garden's write gate
//!    (`tenancy::tx::WRITE_GATE`) `ACCESS EXCLUSIVE`: it waits for the writes in flight to
//!    commit and holds new ones back (they wait, at most `WRITE_GATE_WAIT`, then answer 503
//!    with `Retry-After`). Reads go on. Every table is streamed with `COPY` into one
//!    transaction on the target, which commits; row counts are compared.
//! 4. The source's gate is closed (renamed) and that commits: from here no write can commit on
//!    the source, even if this process dies now.
//! 5. The registry row switches `placement` to the target (and announces it on the cache feed:
//!    every replica reads the new row within a second). Reads saw the source until this
//!    commit and the target after; the target holds everything the source held.
//! 6. After twice the caches' bound, the source schema is dropped and the move record cleared.
//!
//! A failure in steps 2–5 rolls back: the source gate reopened, the target schema dropped,
//! the record cleared; the garden is whole on the source and takes writes again. A process
//! killed in between leaves the record: running the same command again (any target), or the
//! server's reaper once the record is [`ABANDONED_AFTER`] old and nobody holds the move's lock,
//! finishes what the record says ([`recover`]: a closed source gate with the target's copy
//! means the copy is complete, so the move switches; after a switch, the old copy is dropped)
//! or rolls it back (anything earlier). One move per garden at a time (an advisory lock on the
//! primary server).
//!
//! Requests that resolved the garden before the switch follow it: every `TenantTx` checks the
//! garden's current placement (`tenancy::tx::current_placement`), and a write that meets the
//! closed gate reads the registry again and begins on the new server.

use std::time::{Duration, Instant};

use futures_util::TryStreamExt;
use sqlx::PgConnection;

use super::catalog::{self, Table};
use super::{TransferError, close, connect, count_rows, same_database, schema_exists};
use crate::cache::BOUND;
use crate::progress::Progress;
use crate::state::AppState;
use crate::store::pg::Placement;
use crate::tenancy::migrate::{self, apply_tenant_migrations};
use crate::tenancy::registry::{self, MigrationTrigger, TenantRecord, TenantStatus};
use crate::tenancy::tx::{CLOSED_WRITE_GATE, WRITE_GATE};
use crate::tenancy::{SchemaName, TenantSlug};

/// How long one attempt waits for the write gate (for the writes in flight, or a long
/// transaction reading the ledger, such as an export). Writes that arrive meanwhile queue
/// behind the move's request and give up after `tenancy::tx::WRITE_GATE_WAIT` (5 s), so an
/// attempt stays well below that: when it times out the queued writes go on, and the move
/// tries again a second later, `GATE_LOCK_ATTEMPTS` times before it gives up (and rolls back).
const GATE_LOCK_TIMEOUT: &str = "2s";
const GATE_LOCK_ATTEMPTS: u32 = 10;
const GATE_LOCK_PAUSE: Duration = Duration::from_secs(1);

/// How often, half a second apart, the registry row is read when the switch's answer was
/// lost, before the move is left to [`recover`].
const SWITCH_CHECKS: u32 = 10;

/// How long dropping the old copy waits for reads still running on it, per attempt.
const DROP_LOCK_TIMEOUT: &str = "10s";
const DROP_ATTEMPTS: u32 = 3;

/// The steps a test can stop a move at (see [`MoveOptions`]).
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MoveStep {
    /// The target schema is built, nothing copied.
    TargetBuilt,
    /// Every row is in the target's transaction, not committed.
    Copied,
    /// The target committed and the source gate is closed; the registry still names the source.
    Fenced,
    /// The registry names the target; the source schema is not dropped yet.
    Switched,
}

impl MoveStep {
    fn as_str(self) -> &'static str {
        match self {
            Self::TargetBuilt => "target built",
            Self::Copied => "copied",
            Self::Fenced => "fenced",
            Self::Switched => "switched",
        }
    }
}

/// How to move. `MoveOptions::default()` is what the command uses.
#[derive(Debug, Clone, Default)]
pub struct MoveOptions {
    /// Wait between the switch and dropping the source; twice the caches' bound when `None`.
    pub settle: Option<Duration>,
    // The fields below are test hooks for `tests/api/transfer_moves.rs` (an integration test
    // is another crate, so they must be public); hidden from the documentation, no command
    // sets them.
    /// Test hook: keep the write gate closed this much longer after the copy (a slow copy).
    #[doc(hidden)]
    pub hold_after_copy: Duration,
    /// Test hook: fail right after this step; the move rolls back as after any failure.
    #[doc(hidden)]
    pub fail_after: Option<MoveStep>,
    /// Test hook: stop right after this step without any cleanup, as a killed process would.
    #[doc(hidden)]
    pub abandon_after: Option<MoveStep>,
    /// Test hook: what goes wrong with the switch's `UPDATE` (see [`SwitchFault`]).
    #[doc(hidden)]
    pub switch_fault: Option<SwitchFault>,
}

/// Test hook: how the switch of a move goes wrong.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SwitchFault {
    /// It commits but its answer is lost (an error instead), as when the platform's
    /// connection drops right after the commit.
    AnswerLost,
    /// It never reaches the server (an error), as when the connection drops before it.
    RequestLost,
    /// Another process (a reaper that found the move abandoned) switched first: it matches
    /// no row.
    SwitchedByAnother,
}

/// What a move did.
#[derive(Debug, Clone)]
pub struct MoveReport {
    pub slug: String,
    pub from: String,
    pub to: String,
    pub tables: usize,
    pub rows: u64,
    /// From the gate's lock to the switch's commit: writes waited this long (replicas that
    /// have not yet heard of the switch may hold a write up to the caches' bound more).
    pub write_pause: Duration,
    pub total: Duration,
    /// False when the source schema could not be dropped yet (the next move command does it).
    pub source_dropped: bool,
    /// What an earlier, interrupted move left and this run finished or rolled back.
    pub recovered: Option<String>,
    /// True when the garden already was on the target (nothing copied).
    pub already_there: bool,
}

/// Moves the garden `slug` to placement `to`.
pub async fn move_tenant(
    state: &AppState,
    slug: &TenantSlug,
    to: &str,
    options: MoveOptions,
) -> Result<MoveReport, TransferError> {
    let started = Instant::now();
    let target = state
        .placements()
        .get(to)
        .ok_or_else(|| TransferError::UnknownPlacement(to.to_owned()))?
        .clone();
    let found = registry::find_by_slug(state.platform_pool(), slug)
        .await?
        .ok_or_else(|| TransferError::NotFound(slug.to_string()))?;
    let mut lock = MoveLock::take(state, &found).await?;
    let result = move_locked(state, &found, &target, options, started, &mut lock).await;
    lock.release().await;
    result
}

async fn move_locked(
    state: &AppState,
    found: &TenantRecord,
    target: &Placement,
    options: MoveOptions,
    started: Instant,
    lock: &mut MoveLock,
) -> Result<MoveReport, TransferError> {
    // By id: the lock is this tenant's, whatever became of its slug meanwhile.
    let slug = &found.slug;
    let mut tenant = fresh(state, found).await?;
    let recovered = recover(state, &tenant).await?;
    if recovered.is_some() {
        tenant = fresh(state, found).await?;
    }
    if tenant.placement == target.name() {
        return Ok(MoveReport {
            slug: slug.to_string(),
            from: tenant.placement.clone(),
            to: tenant.placement.clone(),
            tables: 0,
            rows: 0,
            write_pause: Duration::ZERO,
            total: started.elapsed(),
            source_dropped: true,
            recovered,
            already_there: true,
        });
    }
    if tenant.status != TenantStatus::Active {
        return Err(TransferError::NotActive(
            slug.to_string(),
            tenant.status.as_str(),
        ));
    }
    let source = state
        .placements()
        .get(&tenant.placement)
        .ok_or_else(|| TransferError::UnknownPlacement(tenant.placement.clone()))?
        .clone();
    // The target is built at the latest version: the source must be there too.
    migrate::migrate_tenant(state, &tenant, None, MigrationTrigger::Cli).await?;

    let mut src = connect(&source, "kultiva-move").await?;
    // The schema's migration lock, on the source, until the move ends: no migration changes
    // the source under the copy (one on another replica waits, then finds the garden moved).
    // The version is read again under it: the target is built at exactly the source's.
    let locked = async {
        migrate::take_lock(&mut src, &tenant.schema_name).await?;
        fresh(state, found).await
    }
    .await;
    tenant = match locked {
        Ok(now) if now.placement == source.name() && now.status == TenantStatus::Active => now,
        Ok(_) => {
            close(src).await;
            return Err(TransferError::Refused(format!(
                "tenant {slug} changed while the move was being prepared; run it again"
            )));
        }
        Err(err) => {
            close(src).await;
            return Err(err);
        }
    };
    let mut dst = match connect(target, "kultiva-move").await {
        Ok(conn) => conn,
        Err(err) => {
            close(src).await;
            return Err(err);
        }
    };
    if let Err(err) = preflight(&mut src, &mut dst, &tenant, target).await {
        close(src).await;
        close(dst).await;
        return Err(err);
    }
    if !registry::claim_move(
        state.platform_pool(),
        tenant.id,
        source.name(),
        target.name(),
    )
    .await?
    {
        close(src).await;
        close(dst).await;
        return Err(TransferError::Refused(format!(
            "tenant {slug} changed while the move was being prepared; run it again"
        )));
    }
    state.caches().forget_tenant(tenant.id);

    let mut run = Run {
        state,
        tenant,
        source,
        target: target.clone(),
        options,
        target_created: false,
        fenced: false,
        switched: false,
        switch_unknown: false,
        lock,
    };
    match run.copy_and_switch(&mut src, &mut dst).await {
        Ok((tables, rows, write_pause)) => {
            close(dst).await;
            let source_dropped = run.drop_source(&mut src).await;
            close(src).await;
            Ok(MoveReport {
                slug: slug.to_string(),
                from: run.source.name().to_owned(),
                to: run.target.name().to_owned(),
                tables,
                rows,
                write_pause,
                total: started.elapsed(),
                source_dropped,
                recovered,
                already_there: false,
            })
        }
        Err(TransferError::Injected(step))
            if run.options.abandon_after.map(MoveStep::as_str) == Some(step) =>
        {
            // A simulated crash: the sessions just go away, nothing is cleaned up.
            drop(src);
            drop(dst);
            Err(TransferError::Injected(step))
        }
        Err(err) if run.switch_unknown => {
            close(src).await;
            close(dst).await;
            Err(TransferError::Refused(format!(
                "{err}; whether the registry switched to {} is unknown (the platform database \
                 did not answer); the garden's copy there is complete and the old one takes no \
                 writes: run `kultiva tenant move` again (or let the server's reaper, after \
                 {} s) finish the move",
                run.target.name(),
                ABANDONED_AFTER.as_secs()
            )))
        }
        Err(err) if run.switched => {
            // The garden is served from the target: nothing may be rolled back now.
            close(src).await;
            close(dst).await;
            Err(TransferError::Refused(format!(
                "{err}; the garden is on {} already; run `kultiva tenant move` again to drop \
                 the old copy on {}",
                run.target.name(),
                run.source.name()
            )))
        }
        Err(err) => {
            // The sessions may hold open transactions (or be broken): closing them rolls
            // those back; the cleanup works on sessions of its own.
            close(src).await;
            close(dst).await;
            let cleanup = run.roll_back().await;
            match cleanup {
                Ok(()) => Err(err),
                Err(left) => Err(TransferError::Refused(format!(
                    "{err}; rolling back was incomplete ({left}); run `kultiva tenant move` \
                     again to finish it"
                ))),
            }
        }
    }
}

async fn fresh(state: &AppState, found: &TenantRecord) -> Result<TenantRecord, TransferError> {
    registry::find_by_id(state.platform_pool(), found.id)
        .await?
        .ok_or_else(|| TransferError::NotFound(found.slug.to_string()))
}

/// The checks that change nothing: another database, no schema of this name there.
async fn preflight(
    src: &mut PgConnection,
    dst: &mut PgConnection,
    tenant: &TenantRecord,
    target: &Placement,
) -> Result<(), TransferError> {
    if same_database(src, dst).await? {
        return Err(TransferError::Refused(format!(
            "placements {:?} and {:?} are the same database",
            tenant.placement,
            target.name()
        )));
    }
    // Kultiva's move relies on its write gate (a table lock) holding every write of the garden
    // back while it copies. On Citus the garden's rows live on a worker and that lock did not
    // hold them all: a test moving a garden off a coordinator under writes lost acknowledged
    // ones. So a move never starts from or into a Citus database; Citus moves gardens itself.
    for (side, conn) in [
        (&tenant.placement, &mut *src),
        (&target.name().to_owned(), dst),
    ] {
        if crate::tenancy::citus::is_citus(conn).await? {
            return Err(TransferError::Refused(format!(
                "placement {side:?} is a Citus database: Kultiva's own move does not run on \
                 Citus; move a garden between the cluster's workers with --to-node, or take it \
                 off the cluster with tenant export and tenant import"
            )));
        }
    }
    if schema_exists(dst, &tenant.schema_name).await? {
        return Err(TransferError::Refused(format!(
            "placement {:?} already has a schema {}; nothing was changed (drop it there if it \
             is a leftover)",
            target.name(),
            tenant.schema_name
        )));
    }
    Ok(())
}

/// One move in progress and what it has made so far (for the roll-back).
struct Run<'a> {
    state: &'a AppState,
    tenant: TenantRecord,
    source: Placement,
    target: Placement,
    options: MoveOptions,
    target_created: bool,
    fenced: bool,
    /// The registry names the target: past the point of no return.
    switched: bool,
    /// The switch's answer was lost and the registry could not be read: it may have
    /// committed, so nothing is rolled back; [`recover`] settles it.
    switch_unknown: bool,
    /// The move's lock, checked before the point of no return.
    lock: &'a mut MoveLock,
}

impl Run<'_> {
    fn hook(&self, step: MoveStep) -> Result<(), TransferError> {
        if self.options.fail_after == Some(step) || self.options.abandon_after == Some(step) {
            return Err(TransferError::Injected(step.as_str()));
        }
        Ok(())
    }

    /// Steps 2–5; returns tables, rows and the write pause.
    async fn copy_and_switch(
        &mut self,
        src: &mut PgConnection,
        dst: &mut PgConnection,
    ) -> Result<(usize, u64, Duration), TransferError> {
        let schema = self.tenant.schema_name.clone();
        let slug = self.tenant.slug.to_string();
        self.target_created = true;
        let version = self.tenant.schema_version;
        let built = apply_tenant_migrations(dst, &schema, version).await?;
        if built != version {
            return Err(TransferError::Refused(format!(
                "tenant {slug} is at schema version {version}; this binary builds up to \
                 {built}: move it with the binary that migrated it"
            )));
        }
        // The target's gate stays closed until its copy commits (it is opened inside the
        // copy's transaction): a write holding a stale record that names this server fails at
        // the gate and follows the registry, instead of landing in a half-loaded copy.
        rename_gate(dst, &schema, WRITE_GATE, CLOSED_WRITE_GATE).await?;
        self.hook(MoveStep::TargetBuilt)?;

        let gate_closed = close_gate(src, &schema).await?;
        // The snapshot starts here, after every write that held the gate has committed. The
        // migration lock kept the version; the ledger confirms it.
        let ledger: Option<i64> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "SELECT max(version) FROM {}.{WRITE_GATE} WHERE success",
            schema.quoted()
        )))
        .fetch_one(&mut *src)
        .await?;
        if ledger != Some(version) {
            return Err(TransferError::Refused(format!(
                "tenant {slug}'s schema is at version {ledger:?} on {}, not {version} as the \
                 registry says; nothing was switched",
                self.source.name()
            )));
        }
        let tables = catalog::ordered_tables(src, &schema).await?;
        let sequences = catalog::sequences(src, &schema).await?;
        let progress = Progress::new(&format!("move {slug}"), tables.len() as u64);
        sqlx::query("BEGIN").execute(&mut *dst).await?;
        rename_gate(dst, &schema, CLOSED_WRITE_GATE, WRITE_GATE).await?;
        let mut rows = 0;
        for table in &tables {
            progress.set_message(table.name.clone());
            rows += copy_table(src, dst, &schema, table).await?;
            progress.inc(1);
        }
        for sequence in &sequences {
            if let Some(sql) = sequence.restore_sql(&schema) {
                sqlx::query(sqlx::AssertSqlSafe(sql))
                    .execute(&mut *dst)
                    .await?;
            }
        }
        self.hook(MoveStep::Copied)?;
        if !self.options.hold_after_copy.is_zero() {
            tokio::time::sleep(self.options.hold_after_copy).await;
        }
        // Still the only mover? A lost lock session frees the lock, and after
        // `ABANDONED_AFTER` a reaper may settle this move under our feet: stop (and roll back)
        // before anything that cannot be undone.
        self.lock.check().await?;
        sqlx::query("COMMIT").execute(&mut *dst).await?;

        rename_gate(src, &schema, WRITE_GATE, CLOSED_WRITE_GATE).await?;
        self.fenced = true;
        sqlx::query("COMMIT").execute(&mut *src).await?;
        self.hook(MoveStep::Fenced)?;

        let answer = self.switch().await;
        let switched = match answer {
            Ok(true) => true,
            Ok(false) => self.settle_switch(None).await?,
            Err(err) => self.settle_switch(Some(err)).await?,
        };
        if !switched {
            return Err(TransferError::Refused(format!(
                "the registry row of tenant {slug} changed during the move"
            )));
        }
        self.switched = true;
        let write_pause = gate_closed.elapsed();
        self.state.caches().forget_tenant(self.tenant.id);
        progress.finish(format!(
            "{} tables, {rows} rows copied; writes paused {} ms; now served from {}",
            tables.len(),
            write_pause.as_millis(),
            self.target.name()
        ));
        tracing::info!(tenant = %slug, from = self.source.name(), to = self.target.name(),
            rows, write_pause_ms = write_pause.as_millis() as u64, "tenant moved");
        self.hook(MoveStep::Switched)?;
        Ok((tables.len(), rows, write_pause))
    }

    /// Step 5, the point of no return: the registry names the target.
    async fn switch(&self) -> Result<bool, sqlx::Error> {
        let platform = self.state.platform_pool();
        let (id, source, target) = (self.tenant.id, self.source.name(), self.target.name());
        let lost = || {
            sqlx::Error::Io(std::io::Error::new(
                std::io::ErrorKind::ConnectionReset,
                "test: connection lost",
            ))
        };
        match self.options.switch_fault {
            None => registry::switch_placement(platform, id, source, target).await,
            Some(SwitchFault::AnswerLost) => {
                registry::switch_placement(platform, id, source, target).await?;
                Err(lost())
            }
            Some(SwitchFault::RequestLost) => Err(lost()),
            Some(SwitchFault::SwitchedByAnother) => {
                registry::switch_placement(platform, id, source, target).await?;
                registry::switch_placement(platform, id, source, target).await
            }
        }
    }

    /// The switch did not answer `true`. Either its answer was lost (it may have committed,
    /// or may still commit: a statement outlives its client's connection), or it matched no
    /// row (a reaper that found this move abandoned may have switched it). The source is
    /// fenced and the target's copy complete, so finishing is always right: the registry row
    /// decides, and while it still records this move the switch (conditional, so idempotent)
    /// is issued again; it waits for any earlier one still in flight on the row. `false` only
    /// when the row no longer records this move at all. A move is never rolled back on a
    /// guess: when the row cannot be read (`SWITCH_CHECKS` tries), it is left fenced for
    /// [`recover`].
    async fn settle_switch(&mut self, lost: Option<sqlx::Error>) -> Result<bool, TransferError> {
        let platform = self.state.platform_pool();
        let (id, source, target) = (self.tenant.id, self.source.name(), self.target.name());
        let mut last = lost;
        for _ in 0..SWITCH_CHECKS {
            let failed = match registry::find_by_id(platform, id).await {
                Ok(Some(row)) if row.placement == target => return Ok(true),
                Ok(Some(row))
                    if row.placement == source && row.moving_to.as_deref() == Some(target) =>
                {
                    match registry::switch_placement(platform, id, source, target).await {
                        Ok(true) => return Ok(true),
                        // Changed under us: read it again.
                        Ok(false) => continue,
                        Err(err) => err,
                    }
                }
                Ok(_) => return Ok(false),
                Err(err) => err,
            };
            tracing::warn!(tenant = %self.tenant.slug, error = %failed,
                "the move's switch has no answer and the registry cannot be settled yet");
            last = Some(failed);
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        self.switch_unknown = true;
        Err(match last {
            Some(err) => err.into(),
            None => TransferError::Refused(format!(
                "the registry row of tenant {} kept changing during the switch",
                self.tenant.slug
            )),
        })
    }

    /// Step 6: after twice the caches' bound, the old copy goes. False if it could not (yet).
    async fn drop_source(&self, src: &mut PgConnection) -> bool {
        tokio::time::sleep(self.options.settle.unwrap_or(BOUND * 2)).await;
        let schema = &self.tenant.schema_name;
        for attempt in 1..=DROP_ATTEMPTS {
            match drop_schema(src, schema).await {
                Ok(()) => {
                    if let Err(err) =
                        registry::clear_move(self.state.platform_pool(), self.tenant.id).await
                    {
                        tracing::warn!(tenant = %self.tenant.slug, error = %err,
                            "the old copy is dropped but the move record stays; the next move command clears it");
                    }
                    return true;
                }
                Err(err) => {
                    tracing::warn!(tenant = %self.tenant.slug, attempt, error = %err,
                        placement = self.source.name(), "dropping the old copy failed");
                }
            }
        }
        false
    }

    /// Undoes steps 2–5 (before the switch committed): the target schema, the closed gate,
    /// the record. Works on fresh sessions (the move's own may be broken).
    ///
    /// The gate is reopened before the target's copy is dropped: a closed gate with a target
    /// copy is what [`recover`] finishes (switches to), so the copy must never be gone while
    /// the gate is still closed.
    async fn roll_back(&self) -> Result<(), String> {
        let mut left = Vec::new();
        let schema = &self.tenant.schema_name;
        if self.fenced {
            match connect(&self.source, "kultiva-move").await {
                Ok(mut src) => {
                    if let Err(err) = reopen_gate(&mut src, schema).await {
                        left.push(format!("the write gate on {}: {err}", self.source.name()));
                    }
                    close(src).await;
                }
                Err(err) => {
                    left.push(format!("the write gate on {}: {err}", self.source.name()));
                }
            }
        }
        if self.target_created && left.is_empty() {
            match connect(&self.target, "kultiva-move").await {
                Ok(mut dst) => {
                    if let Err(err) = drop_schema(&mut dst, schema).await {
                        left.push(format!("schema {schema} on {}: {err}", self.target.name()));
                    }
                    close(dst).await;
                }
                Err(err) => left.push(format!("schema {schema} on {}: {err}", self.target.name())),
            }
        }
        if left.is_empty() {
            if let Err(err) = registry::clear_move(self.state.platform_pool(), self.tenant.id).await
            {
                left.push(format!("the move record: {err}"));
            }
            self.state.caches().forget_tenant(self.tenant.id);
        }
        if left.is_empty() {
            tracing::warn!(tenant = %self.tenant.slug, "move rolled back; the garden stays on its source");
            Ok(())
        } else {
            Err(left.join("; "))
        }
    }
}

/// Opens the copy's `REPEATABLE READ` transaction on the source and locks the garden's write
/// gate in it, waiting `GATE_LOCK_TIMEOUT` per attempt (see there). Returns when the lock was
/// asked for (writes queue behind it from then on).
async fn close_gate(src: &mut PgConnection, schema: &SchemaName) -> Result<Instant, TransferError> {
    let mut attempt = 1;
    loop {
        sqlx::query("BEGIN ISOLATION LEVEL REPEATABLE READ")
            .execute(&mut *src)
            .await?;
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "SET LOCAL lock_timeout = '{GATE_LOCK_TIMEOUT}'"
        )))
        .execute(&mut *src)
        .await?;
        let asked = Instant::now();
        let locked = sqlx::query(sqlx::AssertSqlSafe(format!(
            "LOCK TABLE {}.{WRITE_GATE} IN ACCESS EXCLUSIVE MODE",
            schema.quoted()
        )))
        .execute(&mut *src)
        .await;
        match locked {
            Ok(_) => return Ok(asked),
            Err(err) if lock_timed_out(&err) && attempt < GATE_LOCK_ATTEMPTS => {
                sqlx::query("ROLLBACK").execute(&mut *src).await?;
                tracing::info!(schema = %schema, attempt,
                    "the write gate is busy (a long transaction on the garden); trying again");
                tokio::time::sleep(GATE_LOCK_PAUSE).await;
                attempt += 1;
            }
            Err(err) => return Err(err.into()),
        }
    }
}

/// Renames a garden's gate (`WRITE_GATE` ⇄ `CLOSED_WRITE_GATE`) in the session's transaction,
/// or on its own when there is none.
async fn rename_gate(
    conn: &mut PgConnection,
    schema: &SchemaName,
    from: &str,
    to: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "ALTER TABLE {}.{from} RENAME TO {to}",
        schema.quoted()
    )))
    .execute(conn)
    .await?;
    Ok(())
}

/// PostgreSQL's `lock_not_available` (55P03): a `lock_timeout` ran out.
fn lock_timed_out(err: &sqlx::Error) -> bool {
    err.as_database_error()
        .and_then(|db| db.code())
        .is_some_and(|code| code == "55P03")
}

/// Streams one table from the source's transaction into the target's; the counts must agree.
async fn copy_table(
    src: &mut PgConnection,
    dst: &mut PgConnection,
    schema: &SchemaName,
    table: &Table,
) -> Result<u64, TransferError> {
    let mut sink = dst.copy_in_raw(&table.copy_in_sql(schema)).await?;
    let mut sent = 0;
    {
        let mut stream = src.copy_out_raw(&table.copy_out_sql(schema)).await?;
        loop {
            let chunk = match stream.try_next().await {
                Ok(Some(chunk)) => chunk,
                Ok(None) => break,
                Err(err) => {
                    drop(stream);
                    let _ = sink.abort("reading the source failed").await;
                    return Err(err.into());
                }
            };
            sent += count_rows(&chunk);
            sink.send(chunk).await?;
        }
    }
    let loaded = sink.finish().await?;
    if loaded != sent {
        return Err(TransferError::Refused(format!(
            "table {} sent {sent} rows but {loaded} arrived",
            table.name
        )));
    }
    Ok(loaded)
}

async fn drop_schema(conn: &mut PgConnection, schema: &SchemaName) -> Result<(), sqlx::Error> {
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "SET lock_timeout = '{DROP_LOCK_TIMEOUT}'"
    )))
    .execute(&mut *conn)
    .await?;
    let dropped = sqlx::query(sqlx::AssertSqlSafe(format!(
        "DROP SCHEMA IF EXISTS {} CASCADE",
        schema.quoted()
    )))
    .execute(&mut *conn)
    .await;
    sqlx::query("RESET lock_timeout")
        .execute(&mut *conn)
        .await?;
    dropped.map(|_| ())
}

/// Reopens a write gate closed by a move that did not switch (idempotent).
async fn reopen_gate(conn: &mut PgConnection, schema: &SchemaName) -> Result<(), sqlx::Error> {
    let closed: Option<String> = sqlx::query_scalar("SELECT to_regclass($1)::text")
        .bind(format!("{}.{CLOSED_WRITE_GATE}", schema.quoted()))
        .fetch_one(&mut *conn)
        .await?;
    if closed.is_some() {
        rename_gate(conn, schema, CLOSED_WRITE_GATE, WRITE_GATE).await?;
    }
    Ok(())
}

/// Finishes or rolls back what an interrupted move recorded (the caller holds the garden's
/// [`MoveLock`]). Returns what it did. The command's rerun and the server's reaper
/// ([`recover_abandoned`]) both come here.
///
/// - A move that died after its switch left the old copy (its gate closed): it is dropped.
/// - A move that died after closing the source's gate (step 4): the target's copy committed
///   before the gate closed, and nothing was written on the source since the copy's snapshot,
///   so the move is finished: the registry switches, and after twice the caches' bound the
///   old copy is dropped.
/// - A move that died earlier (the gate open): rolled back; the target's copy is dropped and
///   the garden stays where it is.
async fn recover(state: &AppState, tenant: &TenantRecord) -> Result<Option<String>, TransferError> {
    let placements = state.placements();
    let here = placements
        .get(&tenant.placement)
        .ok_or_else(|| TransferError::UnknownPlacement(tenant.placement.clone()))?;
    if let Some(to) = &tenant.moving_to {
        let mut src = connect(here, "kultiva-move").await?;
        let outcome = settle_unswitched(state, tenant, &mut src, to).await;
        close(src).await;
        match outcome? {
            Unswitched::RolledBack => {
                return Ok(Some(format!(
                    "rolled back an interrupted move to {to}; the garden stayed on {}",
                    tenant.placement
                )));
            }
            Unswitched::Switched => {
                // Replicas still reading the old copy learn of the switch within the bound.
                tokio::time::sleep(BOUND * 2).await;
                drop_old_copy(state, tenant, &tenant.placement, to).await?;
                return Ok(Some(format!(
                    "finished an interrupted move to {to} (its copy was complete and the old \
                     one closed to writes); the old copy on {} is dropped",
                    tenant.placement
                )));
            }
        }
    }
    if let Some(from) = &tenant.moved_from {
        // Died after its switch: the old copy (its gate closed) is dropped now.
        drop_old_copy(state, tenant, from, &tenant.placement).await?;
        return Ok(Some(format!(
            "dropped the old copy an earlier move left on {from}"
        )));
    }
    Ok(None)
}

/// What became of a move that died before its switch.
enum Unswitched {
    RolledBack,
    Switched,
}

/// A move recorded (`moving_to`) but not switched: switch it if the source's gate is closed
/// and the target holds the copy, else roll it back.
async fn settle_unswitched(
    state: &AppState,
    tenant: &TenantRecord,
    src: &mut PgConnection,
    to: &str,
) -> Result<Unswitched, TransferError> {
    let schema = &tenant.schema_name;
    let fenced = table_exists(src, schema, CLOSED_WRITE_GATE).await?;
    let mut dst = match state.placements().get(to) {
        Some(other) => {
            let mut dst = connect(other, "kultiva-move").await?;
            match same_database(src, &mut dst).await {
                // Never drop "the target's copy" when it is the source under another name.
                Ok(false) => Some(dst),
                Ok(true) => {
                    close(dst).await;
                    None
                }
                Err(err) => {
                    close(dst).await;
                    return Err(err.into());
                }
            }
        }
        None => {
            tracing::warn!(tenant = %tenant.slug, placement = %to,
                "an interrupted move's target is not configured; its copy (if any) is left there");
            None
        }
    };
    let result = async {
        let copied = match dst.as_mut() {
            Some(dst) => table_exists(dst, schema, WRITE_GATE).await?,
            None => false,
        };
        if fenced && copied {
            if !registry::switch_placement(state.platform_pool(), tenant.id, &tenant.placement, to)
                .await?
            {
                return Err(TransferError::Refused(format!(
                    "the registry row of tenant {} changed while an interrupted move was being \
                     finished",
                    tenant.slug
                )));
            }
            state.caches().forget_tenant(tenant.id);
            tracing::warn!(tenant = %tenant.slug, from = %tenant.placement, to,
                "finished an interrupted move: the garden is served from its new placement");
            return Ok(Unswitched::Switched);
        }
        if copied && !schema_exists(src, schema).await? {
            return Err(TransferError::Refused(format!(
                "an interrupted move left schema {schema} on {to:?} and none on {:?}; nothing \
                 was changed (check both servers; the registry still names {:?})",
                tenant.placement, tenant.placement
            )));
        }
        // The gate first: a closed gate with a copy on the target means "finish".
        reopen_gate(src, schema).await?;
        if let Some(dst) = dst.as_mut() {
            drop_schema(dst, schema).await?;
        }
        registry::clear_move(state.platform_pool(), tenant.id).await?;
        state.caches().forget_tenant(tenant.id);
        tracing::warn!(tenant = %tenant.slug, placement = %tenant.placement, to,
            "rolled back an interrupted move; the garden stays on its placement");
        Ok(Unswitched::RolledBack)
    }
    .await;
    if let Some(dst) = dst {
        close(dst).await;
    }
    result
}

/// Drops the copy a switched move left on `from` (the garden is on `here` now) and clears the
/// record.
async fn drop_old_copy(
    state: &AppState,
    tenant: &TenantRecord,
    from: &str,
    here: &str,
) -> Result<(), TransferError> {
    let schema = &tenant.schema_name;
    let placements = state.placements();
    let here = placements
        .get(here)
        .ok_or_else(|| TransferError::UnknownPlacement(here.to_owned()))?;
    let old = placements.get(from).ok_or_else(|| {
        TransferError::Refused(format!(
            "an earlier move left schema {schema} on placement {from:?}, which is not \
             configured; configure it (or drop the schema there and clear \
             platform.tenants.moved_from by hand)"
        ))
    })?;
    let mut cur = connect(here, "kultiva-move").await?;
    let mut src = match connect(old, "kultiva-move").await {
        Ok(conn) => conn,
        Err(err) => {
            close(cur).await;
            return Err(err);
        }
    };
    let dropped = async {
        if !same_database(&mut cur, &mut src).await? {
            drop_schema(&mut src, schema).await?;
        }
        Ok::<_, sqlx::Error>(())
    }
    .await;
    close(cur).await;
    close(src).await;
    dropped?;
    registry::clear_move(state.platform_pool(), tenant.id).await?;
    state.caches().forget_tenant(tenant.id);
    Ok(())
}

/// Whether `schema.table` exists on the session's database.
async fn table_exists(
    conn: &mut PgConnection,
    schema: &SchemaName,
    table: &str,
) -> Result<bool, sqlx::Error> {
    let found: Option<String> = sqlx::query_scalar("SELECT to_regclass($1)::text")
        .bind(format!("{}.{table}", schema.quoted()))
        .fetch_one(conn)
        .await?;
    Ok(found.is_some())
}

/// A move whose record has not changed for this long and whose lock nobody holds is taken
/// for abandoned by [`recover_abandoned`] (the server's reaper). The lock alone says the mover
/// is gone; the wait leaves a command that is rerun by hand a moment after a crash to finish
/// it itself, with its report.
pub const ABANDONED_AFTER: Duration = Duration::from_secs(30);

/// Finishes or rolls back every move whose mover is gone: the record (`moving_to` or
/// `moved_from`) is older than `older_than` and the move's advisory lock is free. Under that
/// lock, so one replica (or a rerun command) does it, the others skip it; the same
/// [`recover`] as the command's rerun. Returns what it did, one line per garden. The server's
/// reaper runs it every pass (`tenancy::reaper`).
pub async fn recover_abandoned(
    state: &AppState,
    older_than: Duration,
) -> Result<Vec<String>, TransferError> {
    let platform = state.platform_pool();
    let mut done = Vec::new();
    for found in registry::list_moves(platform, older_than).await? {
        let lock = match MoveLock::take(state, &found).await {
            Ok(lock) => lock,
            // Its mover is alive, or another replica is on it.
            Err(TransferError::Busy(_)) => continue,
            Err(err) => {
                tracing::warn!(tenant = %found.slug, error = %err,
                    "cannot take the lock of an abandoned move; next pass retries");
                continue;
            }
        };
        // Read again under the lock: the mover may have finished just before.
        let result = async {
            match registry::find_by_id(platform, found.id).await? {
                Some(tenant) => recover(state, &tenant).await,
                None => Ok(None),
            }
        }
        .await;
        lock.release().await;
        match result {
            Ok(Some(note)) => {
                tracing::warn!(tenant = %found.slug, what = %note,
                    "recovered a move whose mover is gone");
                done.push(format!("{}: {note}", found.slug));
            }
            Ok(None) => {}
            Err(err) => {
                tracing::warn!(tenant = %found.slug, error = %err,
                    "recovering a move whose mover is gone failed; next pass retries");
            }
        }
    }
    Ok(done)
}

/// The application name of a move's lock session in `pg_stat_activity`.
pub const LOCK_APPLICATION: &str = "kultiva-move-lock";

/// At most one move of a garden at a time, across processes: a session advisory lock on the
/// primary server, held by a session of its own for the whole move.
struct MoveLock {
    conn: PgConnection,
    key: String,
}

impl MoveLock {
    async fn take(state: &AppState, tenant: &TenantRecord) -> Result<Self, TransferError> {
        let mut conn = connect(state.placements().primary(), LOCK_APPLICATION).await?;
        let key = format!("kultiva:tenant-move:{}", tenant.id);
        let got: bool = sqlx::query_scalar("SELECT pg_try_advisory_lock(hashtextextended($1, 0))")
            .bind(&key)
            .fetch_one(&mut conn)
            .await?;
        if !got {
            close(conn).await;
            return Err(TransferError::Busy(tenant.slug.to_string()));
        }
        Ok(Self { conn, key })
    }

    /// The lock's session still answers, so the lock is still held (a session lock lives
    /// as long as its session).
    async fn check(&mut self) -> Result<(), TransferError> {
        sqlx::query("SELECT 1")
            .execute(&mut self.conn)
            .await
            .map(drop)
            .map_err(|err| {
                TransferError::Refused(format!(
                    "the move's lock on the primary server was lost ({err})"
                ))
            })
    }

    /// Unlocks, then closes the session. Closing alone frees the lock only once the server's
    /// backend has exited, which can be after a rerun right behind asks for it.
    async fn release(mut self) {
        if let Err(err) = sqlx::query("SELECT pg_advisory_unlock(hashtextextended($1, 0))")
            .bind(&self.key)
            .execute(&mut self.conn)
            .await
        {
            tracing::warn!(error = %err, "unlocking a move's lock failed; closing its session frees it");
        }
        close(self.conn).await;
    }
}
