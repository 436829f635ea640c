//! SQL of locations, slots and slot adjacency. Tenant tables are named
//! `tenant.<table>`; `TenantTx::sql` renders the placeholder into the tenant's schema.
//! `plants` is read (never written) to count what stands in a place.

use sqlx::Row;
use sqlx::postgres::PgRow;
use uuid::Uuid;

use super::model::{Location, LocationConditions, NewLocation, NewSlot, Slot};
use crate::tenancy::TenantTx;
use crate::values::json::Patch;
use crate::values::page::PageRequest;

const LOC_COLUMNS: &str = "l.id, l.site_id, l.parent_id, l.depth, l.name, l.kind, l.description, \
     l.frost_exposed, l.climate_zone, l.light_situation, l.area_sqm, l.created_at, l.updated_at";

fn decode_location(row: &PgRow) -> Result<Location, sqlx::Error> {
    Ok(Location {
        key: row.try_get("id")?,
        site_key: row.try_get("site_id")?,
        parent_key: row.try_get("parent_id")?,
        depth: row.try_get("depth")?,
        name: row.try_get("name")?,
        kind: row.try_get("kind")?,
        description: row.try_get("description")?,
        frost_exposed: row.try_get("frost_exposed")?,
        climate_zone: row.try_get("climate_zone")?,
        light_situation: row.try_get("light_situation")?,
        area_sqm: row.try_get("area_sqm")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

/// Filters of the location list.
#[derive(Debug, Clone, Copy, Default)]
pub struct LocationFilter {
    pub site: Option<Uuid>,
    pub parent: Option<Uuid>,
}

const LOC_WHERE: &str =
    "($1::uuid IS NULL OR l.site_id = $1) AND ($2::uuid IS NULL OR l.parent_id = $2)";

pub async fn count_locations(tx: &mut TenantTx, f: LocationFilter) -> Result<i64, sqlx::Error> {
    let sql = tx.sql(&format!(
        "SELECT count(*) FROM tenant.locations l WHERE {LOC_WHERE}"
    ));
    sqlx::query_scalar(sql)
        .bind(f.site)
        .bind(f.parent)
        .fetch_one(tx.conn())
        .await
}

pub async fn list_locations(
    tx: &mut TenantTx,
    f: LocationFilter,
    page: PageRequest,
) -> Result<Vec<Location>, sqlx::Error> {
    let sql = tx.sql(&format!(
        "SELECT {LOC_COLUMNS} FROM tenant.locations l WHERE {LOC_WHERE} \
         ORDER BY l.created_at, l.id LIMIT $3 OFFSET $4"
    ));
    let rows = sqlx::query(sql)
        .bind(f.site)
        .bind(f.parent)
        .bind(page.limit)
        .bind(page.skip)
        .fetch_all(tx.conn())
        .await?;
    rows.iter().map(decode_location).collect()
}

pub async fn get_location(tx: &mut TenantTx, id: Uuid) -> Result<Option<Location>, sqlx::Error> {
    let sql = tx.sql(&format!(
        "SELECT {LOC_COLUMNS} FROM tenant.locations l WHERE l.id = $1"
    ));
    let row = sqlx::query(sql).bind(id).fetch_optional(tx.conn()).await?;
    row.as_ref().map(decode_location).transpose()
}

/// The location, locked against concurrent moves and deletes until the transaction ends.
pub async fn lock_location(tx: &mut TenantTx, id: Uuid) -> Result<Option<Location>, sqlx::Error> {
    let sql = tx.sql(&format!(
        "SELECT {LOC_COLUMNS} FROM tenant.locations l WHERE l.id = $1 FOR UPDATE"
    ));
    let row = sqlx::query(sql).bind(id).fetch_optional(tx.conn()).await?;
    row.as_ref().map(decode_location).transpose()
}

/// The location, held against a concurrent delete or move until the transaction ends (a
/// placement waits for a delete in flight and then sees the location gone).
pub async fn share_location(tx: &mut TenantTx, id: Uuid) -> Result<Option<Location>, sqlx::Error> {
    let sql = tx.sql(&format!(
        "SELECT {LOC_COLUMNS} FROM tenant.locations l WHERE l.id = $1 FOR KEY SHARE"
    ));
    let row = sqlx::query(sql).bind(id).fetch_optional(tx.conn()).await?;
    row.as_ref().map(decode_location).transpose()
}

pub async fn children(tx: &mut TenantTx, id: Uuid) -> Result<Vec<Location>, sqlx::Error> {
    let sql = tx.sql(&format!(
        "SELECT {LOC_COLUMNS} FROM tenant.locations l WHERE l.parent_id = $1 ORDER BY l.created_at, l.id"
    ));
    let rows = sqlx::query(sql).bind(id).fetch_all(tx.conn()).await?;
    rows.iter().map(decode_location).collect()
}

/// `None` when a location of that name exists in the site.
pub async fn insert_location(
    tx: &mut TenantTx,
    new: &NewLocation,
    depth: i32,
) -> Result<Option<Location>, sqlx::Error> {
    let sql = tx.sql(&format!(
        "INSERT INTO tenant.locations AS l (id, site_id, parent_id, depth, name, kind, description, \
         frost_exposed, climate_zone, light_situation, area_sqm) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT DO NOTHING \
         RETURNING {LOC_COLUMNS}"
    ));
    let row = sqlx::query(sql)
        .bind(Uuid::now_v7())
        .bind(new.site_id)
        .bind(new.parent_id)
        .bind(depth)
        .bind(&new.name)
        .bind(new.kind)
        .bind(&new.description)
        .bind(new.conditions.frost_exposed)
        .bind(&new.conditions.climate_zone)
        .bind(new.conditions.light_situation)
        .bind(new.conditions.area_sqm)
        .fetch_optional(tx.conn())
        .await?;
    row.as_ref().map(decode_location).transpose()
}

/// Whether another location of the site has this name (case-insensitive).
pub async fn location_name_taken(
    tx: &mut TenantTx,
    site: Uuid,
    name: &str,
    except: Uuid,
) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar(
        tx.sql("SELECT EXISTS (SELECT 1 FROM tenant.locations WHERE site_id = $1 AND lower(name) = lower($2) \
         AND id <> $3)"),
    )
    .bind(site)
    .bind(name)
    .bind(except)
    .fetch_one(tx.conn())
    .await
}

/// The ids of a location's subtree (itself included).
pub async fn subtree(tx: &mut TenantTx, id: Uuid) -> Result<Vec<Uuid>, sqlx::Error> {
    sqlx::query_scalar(tx.sql(
        "WITH RECURSIVE t(id) AS (SELECT id FROM tenant.locations WHERE id = $1 \
         UNION SELECT l.id FROM tenant.locations l JOIN t ON l.parent_id = t.id) SELECT id FROM t",
    ))
    .bind(id)
    .fetch_all(tx.conn())
    .await
}

/// Writes the plain fields of a location.
pub async fn update_location_fields(
    tx: &mut TenantTx,
    id: Uuid,
    name: &str,
    kind: Option<&str>,
    description: Option<&str>,
    parent: Option<Uuid>,
    conditions: &LocationConditions,
) -> Result<(), sqlx::Error> {
    sqlx::query(tx.sql(
        "UPDATE tenant.locations SET name = $2, kind = $3, description = $4, parent_id = $5, \
         frost_exposed = $6, climate_zone = $7, light_situation = $8, area_sqm = $9, \
         updated_at = now() WHERE id = $1",
    ))
    .bind(id)
    .bind(name)
    .bind(kind)
    .bind(description)
    .bind(parent)
    .bind(conditions.frost_exposed)
    .bind(&conditions.climate_zone)
    .bind(conditions.light_situation)
    .bind(conditions.area_sqm)
    .execute(tx.conn())
    .await?;
    Ok(())
}

/// Moves a subtree: every member gets the site and its depth shifted by `delta`.
pub async fn move_subtree(
    tx: &mut TenantTx,
    ids: &[Uuid],
    site: Uuid,
    delta: i32,
) -> Result<(), sqlx::Error> {
    sqlx::query(tx.sql(
        "UPDATE tenant.locations SET site_id = $2, depth = depth + $3, updated_at = now() \
         WHERE id = ANY($1)",
    ))
    .bind(ids)
    .bind(site)
    .bind(delta)
    .execute(tx.conn())
    .await?;
    Ok(())
}

/// Adjacency links from slots of these locations to slots outside them.
pub async fn links_leaving(tx: &mut TenantTx, locations: &[Uuid]) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(tx.sql(
        "SELECT count(*) FROM tenant.slot_neighbours n JOIN tenant.slots a ON a.id = n.slot_id \
         JOIN tenant.slots b ON b.id = n.neighbour_id \
         WHERE a.location_id = ANY($1) AND NOT (b.location_id = ANY($1))",
    ))
    .bind(locations)
    .fetch_one(tx.conn())
    .await
}

/// What stands in the way of deleting a location: (child locations, plants (live or archived)
/// in it or its slots, live ones among them).
pub async fn location_dependants(
    tx: &mut TenantTx,
    id: Uuid,
) -> Result<(i64, i64, i64), sqlx::Error> {
    let row = sqlx::query(tx.sql(
        "SELECT (SELECT count(*) FROM tenant.locations WHERE parent_id = $1) AS children, \
         (SELECT count(*) FROM tenant.plants p WHERE p.location_id = $1 \
            OR p.slot_id IN (SELECT id FROM tenant.slots WHERE location_id = $1)) AS plants, \
         (SELECT count(*) FROM tenant.plants p WHERE p.archived_at IS NULL AND (p.location_id = $1 \
            OR p.slot_id IN (SELECT id FROM tenant.slots WHERE location_id = $1))) AS live",
    ))
    .bind(id)
    .fetch_one(tx.conn())
    .await?;
    Ok((
        row.try_get("children")?,
        row.try_get("plants")?,
        row.try_get("live")?,
    ))
}

/// Deletes a location and its (empty) slots.
pub async fn delete_location(tx: &mut TenantTx, id: Uuid) -> Result<(), sqlx::Error> {
    sqlx::query(tx.sql("DELETE FROM tenant.slots WHERE location_id = $1"))
        .bind(id)
        .execute(tx.conn())
        .await?;
    sqlx::query(tx.sql("DELETE FROM tenant.locations WHERE id = $1"))
        .bind(id)
        .execute(tx.conn())
        .await?;
    Ok(())
}

pub async fn live_plants_in_location(tx: &mut TenantTx, id: Uuid) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        tx.sql("SELECT count(*) FROM tenant.plants WHERE location_id = $1 AND archived_at IS NULL"),
    )
    .bind(id)
    .fetch_one(tx.conn())
    .await
}

// ---------------------------------------------------------------------------------------------
// Slots

const SLOT_COLUMNS: &str = "s.id, s.location_id, s.code, s.capacity, s.position_x, s.position_y, \
     s.substrate_batch_id, s.created_at, s.updated_at, \
     (SELECT count(*) FROM tenant.plants p WHERE p.slot_id = s.id AND p.archived_at IS NULL) AS live_plants, \
     ARRAY(SELECT n.neighbour_id FROM tenant.slot_neighbours n WHERE n.slot_id = s.id \
           ORDER BY n.neighbour_id) AS neighbour_ids";

fn decode_slot(row: &PgRow) -> Result<Slot, sqlx::Error> {
    Ok(Slot {
        key: row.try_get("id")?,
        location_key: row.try_get("location_id")?,
        code: row.try_get("code")?,
        capacity: row.try_get("capacity")?,
        position_x: row.try_get("position_x")?,
        position_y: row.try_get("position_y")?,
        live_plants: row.try_get("live_plants")?,
        neighbour_keys: row.try_get("neighbour_ids")?,
        substrate_batch_key: row.try_get("substrate_batch_id")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

pub async fn count_slots(tx: &mut TenantTx, location: Option<Uuid>) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        tx.sql(
            "SELECT count(*) FROM tenant.slots s WHERE ($1::uuid IS NULL OR s.location_id = $1)",
        ),
    )
    .bind(location)
    .fetch_one(tx.conn())
    .await
}

pub async fn list_slots(
    tx: &mut TenantTx,
    location: Option<Uuid>,
    page: PageRequest,
) -> Result<Vec<Slot>, sqlx::Error> {
    let sql = tx.sql(&format!(
        "SELECT {SLOT_COLUMNS} FROM tenant.slots s WHERE ($1::uuid IS NULL OR s.location_id = $1) \
         ORDER BY s.position_y NULLS LAST, s.position_x NULLS LAST, s.code LIMIT $2 OFFSET $3"
    ));
    let rows = sqlx::query(sql)
        .bind(location)
        .bind(page.limit)
        .bind(page.skip)
        .fetch_all(tx.conn())
        .await?;
    rows.iter().map(decode_slot).collect()
}

/// Every slot of a location, in position order.
pub async fn slots_of(tx: &mut TenantTx, location: Uuid) -> Result<Vec<Slot>, sqlx::Error> {
    list_slots(
        tx,
        Some(location),
        PageRequest {
            skip: 0,
            limit: 10_000,
        },
    )
    .await
}

pub async fn get_slot(tx: &mut TenantTx, id: Uuid) -> Result<Option<Slot>, sqlx::Error> {
    let sql = tx.sql(&format!(
        "SELECT {SLOT_COLUMNS} FROM tenant.slots s WHERE s.id = $1"
    ));
    let row = sqlx::query(sql).bind(id).fetch_optional(tx.conn()).await?;
    row.as_ref().map(decode_slot).transpose()
}

/// Locks the slot row until the transaction ends (placements into one slot serialise, so two
/// concurrent ones cannot both take its last place). `false` when it does not exist.
pub async fn lock_slot(tx: &mut TenantTx, id: Uuid) -> Result<bool, sqlx::Error> {
    let found: Option<Uuid> =
        sqlx::query_scalar(tx.sql("SELECT id FROM tenant.slots WHERE id = $1 FOR UPDATE"))
            .bind(id)
            .fetch_optional(tx.conn())
            .await?;
    Ok(found.is_some())
}

/// `None` when the code is taken in the garden.
pub async fn insert_slot(tx: &mut TenantTx, new: &NewSlot) -> Result<Option<Uuid>, sqlx::Error> {
    sqlx::query_scalar(tx.sql(
        "INSERT INTO tenant.slots (id, location_id, code, capacity, position_x, position_y) \
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING RETURNING id",
    ))
    .bind(Uuid::now_v7())
    .bind(new.location_id)
    .bind(&new.code)
    .bind(i32::try_from(new.capacity).unwrap_or(1))
    .bind(new.position_x.and_then(|v| i32::try_from(v).ok()))
    .bind(new.position_y.and_then(|v| i32::try_from(v).ok()))
    .fetch_optional(tx.conn())
    .await
}

pub async fn slot_code_taken(
    tx: &mut TenantTx,
    code: &str,
    except: Uuid,
) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar(
        tx.sql("SELECT EXISTS (SELECT 1 FROM tenant.slots WHERE code = $1 AND id <> $2)"),
    )
    .bind(code)
    .bind(except)
    .fetch_one(tx.conn())
    .await
}

fn patch_value(p: &Patch<i64>, current: Option<i32>) -> Option<i32> {
    match p {
        Patch::Keep => current,
        Patch::Clear => None,
        Patch::Set(v) => i32::try_from(*v).ok(),
    }
}

pub async fn update_slot(
    tx: &mut TenantTx,
    current: &Slot,
    code: &str,
    capacity: i32,
    position_x: &Patch<i64>,
    position_y: &Patch<i64>,
) -> Result<(), sqlx::Error> {
    sqlx::query(tx.sql(
        "UPDATE tenant.slots SET code = $2, capacity = $3, position_x = $4, position_y = $5, \
         updated_at = now() WHERE id = $1",
    ))
    .bind(current.key)
    .bind(code)
    .bind(capacity)
    .bind(patch_value(position_x, current.position_x))
    .bind(patch_value(position_y, current.position_y))
    .execute(tx.conn())
    .await?;
    Ok(())
}

/// Plants (live or archived) that reference the slot.
pub async fn plants_in_slot(tx: &mut TenantTx, id: Uuid) -> Result<(i64, i64), sqlx::Error> {
    let row = sqlx::query(tx.sql(
        "SELECT count(*) AS plants, count(*) FILTER (WHERE archived_at IS NULL) AS live \
         FROM tenant.plants WHERE slot_id = $1",
    ))
    .bind(id)
    .fetch_one(tx.conn())
    .await?;
    Ok((row.try_get("plants")?, row.try_get("live")?))
}

pub async fn delete_slot(tx: &mut TenantTx, id: Uuid) -> Result<(), sqlx::Error> {
    sqlx::query(tx.sql("DELETE FROM tenant.slots WHERE id = $1"))
        .bind(id)
        .execute(tx.conn())
        .await?;
    Ok(())
}

/// Sets (or clears) the substrate batch filling a slot.
pub async fn set_slot_batch(
    tx: &mut TenantTx,
    slot: Uuid,
    batch: Option<Uuid>,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        tx.sql("UPDATE tenant.slots SET substrate_batch_id = $2, updated_at = now() WHERE id = $1"),
    )
    .bind(slot)
    .bind(batch)
    .execute(tx.conn())
    .await?;
    Ok(())
}

/// The site of each named slot that exists: (slot, site).
pub async fn sites_of_slots(
    tx: &mut TenantTx,
    ids: &[Uuid],
) -> Result<Vec<(Uuid, Uuid)>, sqlx::Error> {
    let rows = sqlx::query(
        tx.sql("SELECT s.id, l.site_id FROM tenant.slots s JOIN tenant.locations l ON l.id = s.location_id \
         WHERE s.id = ANY($1)"),
    )
    .bind(ids)
    .fetch_all(tx.conn())
    .await?;
    rows.iter()
        .map(|r| Ok((r.try_get("id")?, r.try_get("site_id")?)))
        .collect()
}

/// Replaces the neighbours of a slot, both directions.
pub async fn set_neighbours(
    tx: &mut TenantTx,
    slot: Uuid,
    neighbours: &[Uuid],
) -> Result<(), sqlx::Error> {
    sqlx::query(
        tx.sql("DELETE FROM tenant.slot_neighbours WHERE slot_id = $1 OR neighbour_id = $1"),
    )
    .bind(slot)
    .execute(tx.conn())
    .await?;
    sqlx::query(tx.sql(
        "INSERT INTO tenant.slot_neighbours (slot_id, neighbour_id) \
         SELECT $1, n FROM UNNEST($2::uuid[]) AS n \
         UNION ALL SELECT n, $1 FROM UNNEST($2::uuid[]) AS n \
         ON CONFLICT DO NOTHING",
    ))
    .bind(slot)
    .bind(neighbours)
    .execute(tx.conn())
    .await?;
    Ok(())
}
