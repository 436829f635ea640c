//! Use cases of locations and slots, shared by the REST routes and the MCP tools, and the
//! placement contract the plants capability calls inside its own transaction.

use uuid::Uuid;

use super::model::{
    Location, LocationDetail, LocationPatch, Neighbours, NewLocation, NewSlot, PlacementTarget,
    Slot, SlotBatch, SlotPatch, SlotTarget,
};
use super::repo::{self, LocationFilter};
use crate::error::{AppError, ErrorCode, ErrorDetail};
use crate::garden::sites::repo as sites;
use crate::state::AppState;
use crate::tenancy::{TenantRecord, TenantTx};
use crate::values::json::Patch;
use crate::values::page::{Page, PageRequest};

/// The reuse check of a batch before plants go into it (re-exported so the plants capability
/// finds both placement checks here).
pub use crate::garden::substrates::service::assert_batch_usable;

pub const LIST_MAX_LIMIT: i64 = 200;

fn invalid(field: &str, reason: impl Into<String>) -> AppError {
    AppError::validation(vec![ErrorDetail::new(
        format!("body.{field}"),
        reason,
        "value_error",
    )])
}

fn conflict(message: impl Into<String>) -> AppError {
    AppError::new(ErrorCode::StateConflict, message.into())
}

/// PostgreSQL's SQLSTATE of a database error.
pub(crate) fn sqlstate(err: &sqlx::Error) -> Option<String> {
    match err {
        sqlx::Error::Database(db) => db.code().map(|c| c.into_owned()),
        _ => None,
    }
}

/// A key that is not a UUID cannot name a record: the same 404 as an unknown one.
pub fn parse_key(key: &str, what: &str) -> Result<Uuid, AppError> {
    Uuid::parse_str(key).map_err(|_| AppError::not_found(what))
}

// ---------------------------------------------------------------------------------------------
// The placement contract.

/// Where a plant is to go: the location (with its site) and, when `slot_id` is given, the slot
/// with its capacity, live plants and neighbours. Unknown location or slot: 404; a slot of
/// another location or a full slot: 422 (`body.slot_key`). The slot row stays locked until the
/// caller's transaction ends, so concurrent placements into one slot cannot overfill it, and the
/// location is held against a concurrent delete.
/// `live_plants` counts every live plant in the slot, including one the caller may be moving
/// within the same slot (the caller decides about that case before calling).
pub async fn placement_target(
    tx: &mut TenantTx,
    location_id: Uuid,
    slot_id: Option<Uuid>,
) -> Result<PlacementTarget, AppError> {
    let location = repo::share_location(tx, location_id)
        .await?
        .ok_or_else(|| AppError::not_found("location"))?;
    let Some(slot_id) = slot_id else {
        return Ok(PlacementTarget {
            location,
            slot: None,
        });
    };
    if !repo::lock_slot(tx, slot_id).await? {
        return Err(AppError::not_found("slot"));
    }
    let slot = repo::get_slot(tx, slot_id)
        .await?
        .ok_or_else(|| AppError::not_found("slot"))?;
    if slot.location_key != location.key {
        return Err(invalid(
            "slot_key",
            format!("slot {} is not in location {:?}", slot.code, location.name),
        ));
    }
    if slot.live_plants >= i64::from(slot.capacity) {
        return Err(invalid(
            "slot_key",
            format!(
                "slot {} is full ({} of {} places taken)",
                slot.code, slot.live_plants, slot.capacity
            ),
        ));
    }
    Ok(PlacementTarget {
        location,
        slot: Some(SlotTarget {
            key: slot.key,
            code: slot.code,
            capacity: slot.capacity,
            live_plants: slot.live_plants,
            neighbour_keys: slot.neighbour_keys,
        }),
    })
}

// ---------------------------------------------------------------------------------------------
// Locations.

/// Serialises moves of the location tree within a garden: a cycle check reads the subtree, so
/// two crossing moves (A under B, B under A) must not run at the same time.
async fn lock_tree(tx: &mut TenantTx) -> Result<(), sqlx::Error> {
    sqlx::query("SELECT pg_advisory_xact_lock(hashtext($1 || ':location-tree'))")
        .bind(tx.schema().to_owned())
        .execute(tx.conn())
        .await?;
    Ok(())
}

pub async fn list_locations(
    state: &AppState,
    tenant: &TenantRecord,
    filter: LocationFilter,
    page: PageRequest,
) -> Result<Page<Location>, AppError> {
    let mut tx = TenantTx::snapshot(state, tenant).await?;
    let total = repo::count_locations(&mut tx, filter).await?;
    let items = if total > page.skip {
        repo::list_locations(&mut tx, filter, page).await?
    } else {
        Vec::new()
    };
    tx.commit().await?;
    Ok(Page::new(items, total, page))
}

async fn detail(tx: &mut TenantTx, location: Location) -> Result<LocationDetail, AppError> {
    let children = repo::children(tx, location.key).await?;
    let slots = repo::slots_of(tx, location.key).await?;
    let live_plants = repo::live_plants_in_location(tx, location.key).await?;
    Ok(LocationDetail {
        location,
        live_plants,
        children,
        slots,
    })
}

pub async fn get_location(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
) -> Result<LocationDetail, AppError> {
    let id = parse_key(key, "location")?;
    let mut tx = TenantTx::snapshot(state, tenant).await?;
    let location = repo::get_location(&mut tx, id)
        .await?
        .ok_or_else(|| AppError::not_found("location"))?;
    let out = detail(&mut tx, location).await?;
    tx.commit().await?;
    Ok(out)
}

pub async fn create_location(
    state: &AppState,
    tenant: &TenantRecord,
    new: &NewLocation,
) -> Result<LocationDetail, AppError> {
    let mut tx = TenantTx::begin(state, tenant).await?;
    // Locked: a concurrent delete of the site waits and then sees this location.
    if sites::lock(&mut tx, new.site_id).await?.is_none() {
        return Err(AppError::not_found("site"));
    }
    let depth = match new.parent_id {
        None => 0,
        Some(parent) => {
            let parent = repo::get_location(&mut tx, parent)
                .await?
                .ok_or_else(|| AppError::not_found("parent location"))?;
            if parent.site_key != new.site_id {
                return Err(invalid(
                    "parent_key",
                    format!("location {:?} belongs to another site", parent.name),
                ));
            }
            parent.depth + 1
        }
    };
    let Some(location) = repo::insert_location(&mut tx, new, depth).await? else {
        return Err(AppError::duplicate(format!(
            "a location named {:?} exists in this site",
            new.name
        )));
    };
    let out = detail(&mut tx, location).await?;
    tx.commit().await?;
    Ok(out)
}

pub async fn patch_location(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
    patch: &LocationPatch,
) -> Result<LocationDetail, AppError> {
    let id = parse_key(key, "location")?;
    let mut tx = TenantTx::begin(state, tenant).await?;
    let moves = patch.site_id.is_some() || patch.parent_id != Patch::Keep;
    if moves {
        lock_tree(&mut tx).await?;
    }
    let current = repo::lock_location(&mut tx, id)
        .await?
        .ok_or_else(|| AppError::not_found("location"))?;
    let site = patch.site_id.unwrap_or(current.site_key);
    let site_changes = site != current.site_key;
    if site_changes && sites::lock(&mut tx, site).await?.is_none() {
        return Err(AppError::not_found("site"));
    }
    // A move to another site without a parent puts the location directly under that site.
    let parent = match patch.parent_id {
        Patch::Keep if site_changes => None,
        Patch::Keep => current.parent_key,
        Patch::Clear => None,
        Patch::Set(p) => Some(p),
    };
    let subtree = if moves {
        repo::subtree(&mut tx, id).await?
    } else {
        Vec::new()
    };
    let depth = match parent {
        None => 0,
        Some(p) => {
            if subtree.contains(&p) {
                return Err(invalid(
                    "parent_key",
                    "a location cannot move below itself or one of its own sub-locations",
                ));
            }
            let parent = repo::get_location(&mut tx, p)
                .await?
                .ok_or_else(|| AppError::not_found("parent location"))?;
            if parent.site_key != site {
                return Err(invalid(
                    "parent_key",
                    format!("location {:?} belongs to another site", parent.name),
                ));
            }
            parent.depth + 1
        }
    };
    if site_changes && repo::links_leaving(&mut tx, &subtree).await? > 0 {
        return Err(conflict(
            "slots of this location have neighbours outside it; remove those neighbours before \
             moving it to another site (adjacency stays within a site)",
        ));
    }
    let name = patch.name.clone().unwrap_or_else(|| current.name.clone());
    if repo::location_name_taken(&mut tx, site, &name, id).await? {
        return Err(AppError::duplicate(format!(
            "a location named {name:?} exists in that site"
        )));
    }
    let kind = match &patch.kind {
        Patch::Keep => current.kind.clone(),
        Patch::Clear => None,
        Patch::Set(k) => Some((*k).to_owned()),
    };
    let description = match &patch.description {
        Patch::Keep => current.description.clone(),
        Patch::Clear => None,
        Patch::Set(d) => Some(d.clone()),
    };
    let conditions = patch.conditions.apply(&current);
    let written = async {
        if moves {
            repo::move_subtree(&mut tx, &subtree, site, depth - current.depth).await?;
        }
        repo::update_location_fields(
            &mut tx,
            id,
            &name,
            kind.as_deref(),
            description.as_deref(),
            parent,
            &conditions,
        )
        .await
    }
    .await;
    if let Err(err) = written {
        // A sub-location's name already used in the target site.
        if sqlstate(&err).as_deref() == Some("23505") {
            return Err(AppError::duplicate(
                "a location of the moved subtree has the name of a location in the target site",
            ));
        }
        return Err(err.into());
    }
    let location = repo::get_location(&mut tx, id)
        .await?
        .ok_or_else(|| AppError::not_found("location"))?;
    let out = detail(&mut tx, location).await?;
    tx.commit().await?;
    Ok(out)
}

pub async fn delete_location(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
) -> Result<(), AppError> {
    let id = parse_key(key, "location")?;
    let mut tx = TenantTx::begin(state, tenant).await?;
    lock_tree(&mut tx).await?;
    if repo::lock_location(&mut tx, id).await?.is_none() {
        return Err(AppError::not_found("location"));
    }
    let (children, plants, live) = repo::location_dependants(&mut tx, id).await?;
    if children > 0 {
        return Err(conflict(format!(
            "the location has {children} sub-location(s); move or delete them first"
        )));
    }
    if live > 0 {
        return Err(conflict(format!(
            "{live} live plant(s) stand in this location; move or archive them first"
        )));
    }
    if plants > 0 {
        return Err(conflict(format!(
            "{plants} archived plant(s) keep this location in their history; it cannot be deleted"
        )));
    }
    match repo::delete_location(&mut tx, id).await {
        Ok(()) => {}
        Err(err) if sqlstate(&err).as_deref() == Some("23503") => {
            return Err(conflict("something was placed in this location meanwhile"));
        }
        Err(err) => return Err(err.into()),
    }
    tx.commit().await?;
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Slots.

pub async fn list_slots(
    state: &AppState,
    tenant: &TenantRecord,
    location: Option<Uuid>,
    page: PageRequest,
) -> Result<Page<Slot>, AppError> {
    let mut tx = TenantTx::snapshot(state, tenant).await?;
    let total = repo::count_slots(&mut tx, location).await?;
    let items = if total > page.skip {
        repo::list_slots(&mut tx, location, page).await?
    } else {
        Vec::new()
    };
    tx.commit().await?;
    Ok(Page::new(items, total, page))
}

pub async fn get_slot(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
) -> Result<Slot, AppError> {
    let id = parse_key(key, "slot")?;
    let mut tx = TenantTx::read(state, tenant).await?;
    let slot = repo::get_slot(&mut tx, id).await?;
    tx.commit().await?;
    slot.ok_or_else(|| AppError::not_found("slot"))
}

pub async fn create_slot(
    state: &AppState,
    tenant: &TenantRecord,
    new: &NewSlot,
) -> Result<Slot, AppError> {
    let mut tx = TenantTx::begin(state, tenant).await?;
    if repo::lock_location(&mut tx, new.location_id)
        .await?
        .is_none()
    {
        return Err(AppError::not_found("location"));
    }
    let Some(id) = repo::insert_slot(&mut tx, new).await? else {
        return Err(AppError::duplicate(format!(
            "a slot with code {} exists",
            new.code
        )));
    };
    let slot = repo::get_slot(&mut tx, id)
        .await?
        .ok_or_else(|| AppError::internal("slot vanished after insert"))?;
    tx.commit().await?;
    Ok(slot)
}

pub async fn patch_slot(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
    patch: &SlotPatch,
) -> Result<Slot, AppError> {
    let id = parse_key(key, "slot")?;
    let mut tx = TenantTx::begin(state, tenant).await?;
    if !repo::lock_slot(&mut tx, id).await? {
        return Err(AppError::not_found("slot"));
    }
    let current = repo::get_slot(&mut tx, id)
        .await?
        .ok_or_else(|| AppError::not_found("slot"))?;
    let code = patch.code.clone().unwrap_or_else(|| current.code.clone());
    let capacity = patch
        .capacity
        .and_then(|c| i32::try_from(c).ok())
        .unwrap_or(current.capacity);
    if i64::from(capacity) < current.live_plants {
        return Err(AppError::validation(vec![ErrorDetail::new(
            "body.capacity",
            format!(
                "{} live plant(s) stand in the slot; capacity cannot go below that",
                current.live_plants
            ),
            "value_error",
        )]));
    }
    if repo::slot_code_taken(&mut tx, &code, id).await? {
        return Err(AppError::duplicate(format!(
            "a slot with code {code} exists"
        )));
    }
    repo::update_slot(
        &mut tx,
        &current,
        &code,
        capacity,
        &patch.position_x,
        &patch.position_y,
    )
    .await?;
    let slot = repo::get_slot(&mut tx, id)
        .await?
        .ok_or_else(|| AppError::not_found("slot"))?;
    tx.commit().await?;
    Ok(slot)
}

pub async fn delete_slot(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
) -> Result<(), AppError> {
    let id = parse_key(key, "slot")?;
    let mut tx = TenantTx::begin(state, tenant).await?;
    if !repo::lock_slot(&mut tx, id).await? {
        return Err(AppError::not_found("slot"));
    }
    let (plants, live) = repo::plants_in_slot(&mut tx, id).await?;
    if live > 0 {
        return Err(conflict(format!(
            "{live} live plant(s) stand in this slot; move or archive them first"
        )));
    }
    if plants > 0 {
        return Err(conflict(format!(
            "{plants} archived plant(s) keep this slot in their history (crop rotation); it \
             cannot be deleted"
        )));
    }
    repo::delete_slot(&mut tx, id).await?;
    tx.commit().await?;
    Ok(())
}

pub async fn set_neighbours(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
    body: &Neighbours,
) -> Result<Slot, AppError> {
    let id = parse_key(key, "slot")?;
    if body.neighbour_keys.contains(&id) {
        return Err(invalid(
            "neighbour_keys",
            "a slot cannot be its own neighbour",
        ));
    }
    let mut tx = TenantTx::begin(state, tenant).await?;
    if !repo::lock_slot(&mut tx, id).await? {
        return Err(AppError::not_found("slot"));
    }
    let mut all = body.neighbour_keys.clone();
    all.push(id);
    let sites = repo::sites_of_slots(&mut tx, &all).await?;
    let site_of = |k: Uuid| sites.iter().find(|(s, _)| *s == k).map(|(_, site)| *site);
    let own_site = site_of(id).ok_or_else(|| AppError::not_found("slot"))?;
    for n in &body.neighbour_keys {
        match site_of(*n) {
            None => return Err(AppError::not_found(&format!("neighbour slot {n}"))),
            Some(site) if site != own_site => {
                return Err(invalid(
                    "neighbour_keys",
                    format!("slot {n} is in another site; neighbours share a site"),
                ));
            }
            Some(_) => {}
        }
    }
    repo::set_neighbours(&mut tx, id, &body.neighbour_keys).await?;
    let slot = repo::get_slot(&mut tx, id)
        .await?
        .ok_or_else(|| AppError::not_found("slot"))?;
    tx.commit().await?;
    Ok(slot)
}

/// Fills a slot with a substrate batch (or empties it with `None`). The batch goes through the
/// reuse rule like a batch plants go into (domain 2.4: 404 unknown, 422 `SUBSTRATE_EXHAUSTED`
/// past its limit); assigning counts no cycle (cycles are ended on the batch's own route).
pub async fn set_slot_batch(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
    body: &SlotBatch,
) -> Result<Slot, AppError> {
    let id = parse_key(key, "slot")?;
    let mut tx = TenantTx::begin(state, tenant).await?;
    if !repo::lock_slot(&mut tx, id).await? {
        return Err(AppError::not_found("slot"));
    }
    if let Some(batch) = body.batch_key {
        // Locks the batch too: a concurrent delete of it waits and then sees the slot.
        assert_batch_usable(&mut tx, batch).await?;
    }
    repo::set_slot_batch(&mut tx, id, body.batch_key).await?;
    let slot = repo::get_slot(&mut tx, id)
        .await?
        .ok_or_else(|| AppError::not_found("slot"))?;
    tx.commit().await?;
    Ok(slot)
}
