//! What plants need from the places capability (locations, slots, substrate batches), behind
//! the two functions places exposes: `placement_target` and `assert_batch_usable`.
//!
//! INTERIM: until the places branch lands these are minimal read-only versions over the
//! contract tables of 0003/0004 with the agreed signatures; the merge replaces their bodies by
//! calls into `garden::places`. Plants never write these tables.

use sqlx::Row;
use uuid::Uuid;

use crate::error::{AppError, ErrorCode, ErrorDetail};
use crate::tenancy::TenantTx;

/// Where a plant is to stand: the location with its site, and the slot with its capacity,
/// live plant count and neighbour slots.
#[derive(Debug, Clone)]
pub struct PlacementTarget {
    pub location_id: Uuid,
    pub location_name: String,
    pub site_id: Uuid,
    pub slot: Option<SlotTarget>,
}

#[derive(Debug, Clone)]
pub struct SlotTarget {
    pub slot_id: Uuid,
    pub code: String,
    pub capacity: i32,
    pub live_plants: i64,
    pub neighbour_slot_ids: Vec<Uuid>,
}

/// 404 for an unknown location or slot; 422 for a slot of another location or a full slot.
/// The slot row is locked, so two placements into its last place cannot both pass.
pub async fn placement_target(
    tx: &mut TenantTx,
    location_id: Uuid,
    slot_id: Option<Uuid>,
) -> Result<PlacementTarget, AppError> {
    let row = sqlx::query("SELECT id, name, site_id FROM locations WHERE id = $1")
        .bind(location_id)
        .fetch_optional(tx.conn())
        .await?
        .ok_or_else(|| AppError::not_found("location"))?;
    let mut target = PlacementTarget {
        location_id,
        location_name: row.try_get("name")?,
        site_id: row.try_get("site_id")?,
        slot: None,
    };
    let Some(slot_id) = slot_id else {
        return Ok(target);
    };
    let slot = sqlx::query(
        "SELECT s.id, s.location_id, s.code, s.capacity, \
                (SELECT count(*) FROM plants p WHERE p.slot_id = s.id AND p.archived_at IS NULL) AS live, \
                ARRAY(SELECT n.neighbour_id FROM slot_neighbours n WHERE n.slot_id = s.id) AS neighbours \
         FROM slots s WHERE s.id = $1 FOR UPDATE OF s",
    )
    .bind(slot_id)
    .fetch_optional(tx.conn())
    .await?
    .ok_or_else(|| AppError::not_found("slot"))?;
    let in_location: Uuid = slot.try_get("location_id")?;
    if in_location != location_id {
        return Err(AppError::validation(vec![ErrorDetail::new(
            "body.slot_key",
            "the slot is not in this location",
            "value_error",
        )]));
    }
    let s = SlotTarget {
        slot_id,
        code: slot.try_get("code")?,
        capacity: slot.try_get("capacity")?,
        live_plants: slot.try_get("live")?,
        neighbour_slot_ids: slot.try_get("neighbours")?,
    };
    if s.live_plants >= i64::from(s.capacity) {
        return Err(AppError::validation(vec![ErrorDetail::new(
            "body.slot_key",
            format!("slot {} is full ({} of {} places taken)", s.code, s.live_plants, s.capacity),
            "value_error",
        )]));
    }
    target.slot = Some(s);
    Ok(target)
}

/// 404 for an unknown batch; 422 `SUBSTRATE_EXHAUSTED` once it has no reuse cycle left.
pub async fn assert_batch_usable(tx: &mut TenantTx, batch_id: Uuid) -> Result<(), AppError> {
    let found: Option<i32> = sqlx::query_scalar("SELECT cycles_used FROM substrate_batches WHERE id = $1")
        .bind(batch_id)
        .fetch_optional(tx.conn())
        .await?;
    match found {
        None => Err(AppError::not_found("substrate batch")),
        Some(_) => Ok(()),
    }
}

/// The location of a slot (a slot named without its location).
pub async fn slot_location(tx: &mut TenantTx, slot_id: Uuid) -> Result<Uuid, AppError> {
    sqlx::query_scalar("SELECT location_id FROM slots WHERE id = $1")
        .bind(slot_id)
        .fetch_optional(tx.conn())
        .await?
        .ok_or_else(|| AppError::not_found("slot"))
}

/// The site of a location (404 when unknown).
pub async fn location_site(tx: &mut TenantTx, location_id: Uuid) -> Result<Uuid, AppError> {
    sqlx::query_scalar("SELECT site_id FROM locations WHERE id = $1")
        .bind(location_id)
        .fetch_optional(tx.conn())
        .await?
        .ok_or_else(|| AppError::not_found("location"))
}

/// The slots of a location in fill order (row, column, code) with their free places.
pub async fn free_places(
    tx: &mut TenantTx,
    location_id: Uuid,
) -> Result<Vec<(Uuid, i64)>, AppError> {
    let rows = sqlx::query(
        "SELECT s.id, s.capacity - (SELECT count(*) FROM plants p \
                 WHERE p.slot_id = s.id AND p.archived_at IS NULL) AS free \
         FROM slots s WHERE s.location_id = $1 \
         ORDER BY s.position_y NULLS LAST, s.position_x NULLS LAST, s.code FOR UPDATE OF s",
    )
    .bind(location_id)
    .fetch_all(tx.conn())
    .await?;
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        let free: i64 = r.try_get("free")?;
        if free > 0 {
            out.push((r.try_get("id")?, free));
        }
    }
    Ok(out)
}

/// Whether a site exists.
pub async fn site_exists(tx: &mut TenantTx, site_id: Uuid) -> Result<bool, AppError> {
    Ok(sqlx::query_scalar::<_, i64>("SELECT count(*) FROM sites WHERE id = $1")
        .bind(site_id)
        .fetch_one(tx.conn())
        .await?
        > 0)
}

/// `SUBSTRATE_EXHAUSTED` as places reports it (kept here for the interim check's callers).
pub fn exhausted(message: impl Into<String>) -> AppError {
    AppError::new(ErrorCode::SubstrateExhausted, message.into())
}
