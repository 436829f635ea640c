//! What plants need from the places and substrates capabilities: their placement contract
//! (`placement_target`, `assert_batch_usable`) and a few reads of theirs, in the shape the
//! plant use cases use. Plants never write place or batch tables.

use uuid::Uuid;

use crate::error::AppError;
use crate::garden::places::{repo as places_repo, service as places_service};
use crate::garden::sites::repo as sites_repo;
use crate::garden::substrates::service as substrates_service;
use crate::tenancy::TenantTx;

/// Where a plant is to stand: the location with its site, and the slot with its capacity,
/// live plant count and neighbour slots.
#[derive(Debug, Clone)]
pub struct PlacementTarget {
    pub location_id: Uuid,
    pub location_name: String,
    pub site_id: Uuid,
    pub slot: Option<SlotTarget>,
    /// A pot or other container (location kind `container`): fresh substrate each planting,
    /// so crop rotation does not apply.
    pub potted: bool,
}

#[derive(Debug, Clone)]
pub struct SlotTarget {
    pub slot_id: Uuid,
    pub code: String,
    pub capacity: i32,
    pub live_plants: i64,
    pub neighbour_slot_ids: Vec<Uuid>,
}

/// The places contract: 404 for an unknown location or slot; 422 for a slot of another
/// location or a full slot. The slot row stays locked until the transaction ends.
pub async fn placement_target(
    tx: &mut TenantTx,
    location_id: Uuid,
    slot_id: Option<Uuid>,
) -> Result<PlacementTarget, AppError> {
    let t = places_service::placement_target(tx, location_id, slot_id).await?;
    Ok(PlacementTarget {
        potted: t.location.kind.as_deref() == Some("container"),
        location_id: t.location.key,
        location_name: t.location.name,
        site_id: t.location.site_key,
        slot: t.slot.map(|s| SlotTarget {
            slot_id: s.key,
            code: s.code,
            capacity: s.capacity,
            live_plants: s.live_plants,
            neighbour_slot_ids: s.neighbour_keys,
        }),
    })
}

/// The substrates contract: 404 for an unknown batch; 422 `SUBSTRATE_EXHAUSTED` past its
/// reuse limit.
pub async fn assert_batch_usable(tx: &mut TenantTx, batch_id: Uuid) -> Result<(), AppError> {
    substrates_service::assert_batch_usable(tx, batch_id).await
}

/// The location of a slot (a slot named without its location); 404 when unknown.
pub async fn slot_location(tx: &mut TenantTx, slot_id: Uuid) -> Result<Uuid, AppError> {
    places_repo::get_slot(tx, slot_id)
        .await?
        .map(|s| s.location_key)
        .ok_or_else(|| AppError::not_found("slot"))
}

/// The slots of a location in fill order (row, column, code) with free places.
pub async fn free_slots(tx: &mut TenantTx, location_id: Uuid) -> Result<Vec<Uuid>, AppError> {
    Ok(places_repo::slots_of(tx, location_id)
        .await?
        .into_iter()
        .filter(|s| s.live_plants < i64::from(s.capacity))
        .map(|s| s.key)
        .collect())
}

/// Whether a site exists.
pub async fn site_exists(tx: &mut TenantTx, site_id: Uuid) -> Result<bool, AppError> {
    Ok(sites_repo::get(tx, site_id).await?.is_some())
}

/// Name and type of a substrate key in this garden's scope (global or own); `None` unknown.
pub async fn substrate(
    state: &crate::state::AppState,
    tx: &mut TenantTx,
    key: &str,
) -> Result<Option<(String, String)>, AppError> {
    Ok(substrates_service::resolve(state, tx, key)
        .await?
        .map(|s| (s.name, s.props.substrate_type)))
}
