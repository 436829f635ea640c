//! The photo folder of a deleted garden: recorded in the transaction that deletes the
//! garden's registry row (so a crash never forgets it), removed right after the commit, and
//! drained by the photo storage sweep when a crash came between.

use uuid::Uuid;

use crate::state::AppState;
use crate::store::photos::{self as storage, PhotoStorage};

/// Rows one drain takes, here and in the photo outbox (the rest follow in the next round).
pub const DRAIN_BATCH: i64 = 500;

/// Records, in the caller's transaction (the one deleting the garden's registry row), that the
/// garden's photo folder must go.
pub async fn record_dropped_garden(
    conn: &mut sqlx::PgConnection,
    state: &AppState,
    tenant: Uuid,
) -> Result<(), sqlx::Error> {
    let store = storage::from_config(state.config());
    sqlx::query(
        "INSERT INTO platform.photo_storage_deletions (tenant_id, storage) VALUES ($1, $2) \
         ON CONFLICT (tenant_id) DO NOTHING",
    )
    .bind(tenant)
    .bind(store.identity())
    .execute(conn)
    .await?;
    Ok(())
}

/// Removes the photo folders of deleted gardens recorded for this process's storage; how many.
pub async fn drain_dropped_gardens(state: &AppState) -> Result<usize, sqlx::Error> {
    let store = storage::from_config(state.config());
    let mut tx = state.platform_pool().begin().await?;
    let ids: Vec<Uuid> = sqlx::query_scalar(
        "SELECT tenant_id FROM platform.photo_storage_deletions WHERE storage = $1 \
         ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED",
    )
    .bind(store.identity())
    .bind(DRAIN_BATCH)
    .fetch_all(&mut *tx)
    .await?;
    let mut done = Vec::with_capacity(ids.len());
    for id in ids {
        match store.delete_garden(id).await {
            Ok(()) => done.push(id),
            Err(err) => {
                tracing::warn!(error = %err, tenant = %id, "a deleted garden's photo folder could not be removed")
            }
        }
    }
    sqlx::query("DELETE FROM platform.photo_storage_deletions WHERE tenant_id = ANY($1)")
        .bind(&done)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(done.len())
}
