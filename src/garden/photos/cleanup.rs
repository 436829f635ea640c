//! Storage that forgets: the files of deleted photos and deleted gardens are removed.
//!
//! - A deleted photo row (by any path: the photo route, its entry, the entry's plant or run)
//!   leaves its id in the garden's `photo_file_outbox` in the same transaction (a trigger), and
//!   a deleted garden leaves its id in `platform.photo_storage_deletions` in the transaction
//!   that deletes its registry row. So a crash never forgets a file: the record stays until
//!   the files are gone.
//! - The deleting request drains the outbox right after its commit ([`drain_garden`],
//!   [`drain_dropped_gardens`]); the periodic [`sweep`] drains what a crash left, and
//!   reconciles the disk with the rows: a photo folder no row names, or a garden folder of a
//!   garden that no longer exists, older than `PHOTO_ORPHAN_GRACE_MINUTES`, is removed (the
//!   grace covers an upload between its file write and its commit).

use std::time::{Duration, SystemTime};

use sqlx::Row;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use uuid::Uuid;

use crate::error::AppError;
use crate::state::AppState;
use crate::store::photos::{self as storage, PhotoStorage};
use crate::tenancy::garden_files::DRAIN_BATCH;
use crate::tenancy::{TenantRecord, TenantStatus, TenantTx};

/// Removes the files of photos deleted in this garden, then their outbox rows and any rendition
/// jobs left for them. Returns how many photos' files went. A file that cannot be removed
/// keeps its row for the next round.
pub async fn drain_garden(state: &AppState, tenant: &TenantRecord) -> Result<usize, AppError> {
    let store = storage::from_config(state.config());
    let mut removed = 0;
    loop {
        let mut tx = TenantTx::begin(state, tenant).await?;
        let ids: Vec<Uuid> = sqlx::query_scalar(tx.sql(
            "SELECT photo_id FROM tenant.photo_file_outbox ORDER BY deleted_at, photo_id \
             LIMIT $1 FOR UPDATE SKIP LOCKED",
        ))
        .bind(DRAIN_BATCH)
        .fetch_all(tx.conn())
        .await?;
        if ids.is_empty() {
            tx.commit().await?;
            return Ok(removed);
        }
        let mut done = Vec::with_capacity(ids.len());
        for id in &ids {
            match store.delete_photo(tenant.id, *id).await {
                Ok(()) => done.push(*id),
                Err(err) => {
                    tracing::warn!(error = %err, photo = %id, "photo files could not be removed; kept in the outbox")
                }
            }
        }
        sqlx::query(tx.sql("DELETE FROM tenant.photo_file_outbox WHERE photo_id = ANY($1)"))
            .bind(&done)
            .execute(tx.conn())
            .await?;
        tx.commit().await?;
        sqlx::query(
            "DELETE FROM platform.photo_rendition_jobs WHERE tenant_id = $1 AND photo_id = ANY($2)",
        )
        .bind(tenant.id)
        .bind(&done)
        .execute(state.platform_pool())
        .await?;
        removed += done.len();
        if done.len() < ids.len() || (ids.len() as i64) < DRAIN_BATCH {
            return Ok(removed);
        }
    }
}

/// What one sweep removed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Swept {
    /// Photos whose files went through an outbox.
    pub outbox_photos: usize,
    /// Gardens whose folder went through the deleted-gardens record.
    pub outbox_gardens: usize,
    /// Photo folders no row named (older than the grace period).
    pub orphan_photos: usize,
    /// Folders of gardens that no longer exist (older than the grace period).
    pub orphan_gardens: usize,
}

fn older_than(modified: SystemTime, grace: Duration) -> bool {
    SystemTime::now()
        .duration_since(modified)
        .is_ok_and(|age| age >= grace)
}

/// One pass over this process's photo storage: both outboxes drained, then every garden
/// folder reconciled with the rows.
pub async fn sweep(state: &AppState) -> Result<Swept, AppError> {
    let store = storage::from_config(state.config());
    let grace = Duration::from_secs(u64::from(state.config().photo_orphan_grace_minutes) * 60);
    let mut swept = Swept {
        outbox_gardens: crate::tenancy::garden_files::drain_dropped_gardens(state).await?,
        ..Swept::default()
    };
    for (tenant_id, modified) in store.gardens().await.map_err(AppError::internal)? {
        let Some(tenant) =
            crate::tenancy::registry::find_by_id(state.platform_pool(), tenant_id).await?
        else {
            if older_than(modified, grace) {
                store
                    .delete_garden(tenant_id)
                    .await
                    .map_err(AppError::internal)?;
                swept.orphan_gardens += 1;
            }
            continue;
        };
        // A garden being created (an import writes files before its rows) or suspended
        // (being moved or dropped) is left alone this round.
        if tenant.status != TenantStatus::Active {
            continue;
        }
        match sweep_garden(state, &store, tenant, grace).await {
            Ok((outbox, orphans)) => {
                swept.outbox_photos += outbox;
                swept.orphan_photos += orphans;
            }
            Err(err) => {
                tracing::warn!(tenant = %tenant_id, error_code = err.code().as_str(),
                    "photo sweep skipped a garden this round");
            }
        }
    }
    Ok(swept)
}

async fn sweep_garden(
    state: &AppState,
    store: &dyn PhotoStorage,
    tenant: TenantRecord,
    grace: Duration,
) -> Result<(usize, usize), AppError> {
    let tenant = crate::tenancy::context::migrate_if_behind(state, tenant).await?;
    let outbox = drain_garden(state, &tenant).await?;
    let folders: Vec<(Uuid, SystemTime)> = store
        .photos_of(tenant.id)
        .await
        .map_err(AppError::internal)?
        .into_iter()
        .filter(|(_, modified)| older_than(*modified, grace))
        .collect();
    if folders.is_empty() {
        return Ok((outbox, 0));
    }
    let ids: Vec<Uuid> = folders.iter().map(|(id, _)| *id).collect();
    let mut tx = TenantTx::read(state, &tenant).await?;
    let known: Vec<Uuid> =
        sqlx::query(tx.sql("SELECT id FROM tenant.diary_photos WHERE id = ANY($1)"))
            .bind(&ids)
            .fetch_all(tx.conn())
            .await?
            .iter()
            .map(|r| r.try_get("id"))
            .collect::<Result<_, _>>()?;
    tx.commit().await?;
    let mut orphans = 0;
    for id in ids.into_iter().filter(|id| !known.contains(id)) {
        store
            .delete_photo(tenant.id, id)
            .await
            .map_err(AppError::internal)?;
        orphans += 1;
    }
    Ok((outbox, orphans))
}

/// The periodic sweep of one `serve` process (`PHOTO_SWEEP_INTERVAL_MINUTES`; 0: none). The
/// first pass runs a minute after start.
pub fn start(state: AppState, mut stopped: watch::Receiver<bool>) -> Option<JoinHandle<()>> {
    let minutes = state.config().photo_sweep_interval_minutes;
    if minutes == 0 {
        return None;
    }
    let every = Duration::from_secs(u64::from(minutes) * 60);
    Some(tokio::spawn(async move {
        let mut wait = Duration::from_secs(60).min(every);
        loop {
            tokio::select! {
                _ = stopped.changed() => break,
                () = tokio::time::sleep(wait) => {}
            }
            if *stopped.borrow() {
                break;
            }
            match sweep(&state).await {
                Ok(swept) if swept != Swept::default() => {
                    tracing::info!(?swept, "photo storage swept")
                }
                Ok(_) => {}
                Err(err) => {
                    tracing::warn!(
                        error_code = err.code().as_str(),
                        "photo storage sweep failed; retried next round"
                    )
                }
            }
            wait = every;
        }
    }))
}
