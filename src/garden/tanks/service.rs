//! Use cases of tanks, shared by the REST routes and the feeding service (a feeding draws from a
//! tank).

use time::OffsetDateTime;
use uuid::Uuid;

use super::model::*;
use super::repo::{self, TankRow};
use crate::error::{AppError, ErrorDetail};
use crate::rules::calculations::round;
use crate::rules::tank_maintenance;
use crate::state::AppState;
use crate::tenancy::{TenantRecord, TenantTx};
use crate::values::json::Patch;
use crate::values::page::{Page, PageRequest};

pub const LIST_MAX_LIMIT: i64 = 200;

/// A key that is not a UUID cannot name a tank: the same 404 as an unknown one.
pub fn parse_tank_key(key: &str) -> Result<Uuid, AppError> {
    Uuid::parse_str(key).map_err(|_| AppError::not_found("tank"))
}

fn invalid(field: &str, reason: impl Into<String>) -> AppError {
    AppError::validation(vec![ErrorDetail::new(
        format!("body.{field}"),
        reason,
        "value_error",
    )])
}

/// The tank as the API shows it: state and schedule computed from its row at `now`.
pub fn present(row: TankRow, now: OffsetDateTime) -> Tank {
    // Days of instants are UTC days, whatever offset a value carries.
    let day_of = |t: OffsetDateTime| t.to_offset(time::UtcOffset::UTC).date();
    let today = day_of(now);
    let mut maintenance: Vec<MaintenanceDue> = MaintenanceType::ALL
        .iter()
        .filter_map(|(name, t)| {
            let interval = tank_maintenance::interval_days(row.kind.as_str(), name)?;
            let mut last = row
                .last_maintenance
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, at)| *at);
            if *t == MaintenanceType::WaterChange {
                last = last.max(row.last_full_change);
            }
            let due =
                tank_maintenance::next_due(last.map(day_of), day_of(row.created_at), interval);
            Some(MaintenanceDue {
                maintenance_type: *t,
                interval_days: interval,
                last_performed_at: last,
                next_due_on: due.to_string(),
                status: tank_maintenance::status(due, today).to_owned(),
            })
        })
        .collect();
    maintenance.sort_by(|a, b| a.next_due_on.cmp(&b.next_due_on));
    let state = TankState {
        current_volume_liters: row.current_volume_liters,
        fill_percent: row
            .current_volume_liters
            .map(|v| round(v / row.volume_liters * 100.0, 1)),
        ec_ms: row.current_ec_ms,
        ph: row.current_ph,
        last_fill: row.last_fill,
        age_days: row
            .last_full_change
            .map(|at| (now - at).whole_days().max(0)),
    };
    Tank {
        key: row.id,
        name: row.name,
        kind: row.kind,
        volume_liters: row.volume_liters,
        location_key: row.location_id,
        notes: row.notes,
        state,
        maintenance,
        created_at: row.created_at,
        updated_at: row.updated_at,
    }
}

pub async fn list_tanks(
    state: &AppState,
    tenant: &TenantRecord,
    page: PageRequest,
) -> Result<Page<Tank>, AppError> {
    let mut tx = TenantTx::read(state, tenant).await?;
    let (rows, matched) = repo::list(&mut tx, page).await?;
    let total = match matched {
        Some(n) => n,
        None => repo::count(&mut tx).await?,
    };
    tx.commit().await?;
    let now = OffsetDateTime::now_utc();
    Ok(Page::new(
        rows.into_iter().map(|r| present(r, now)).collect(),
        total,
        page,
    ))
}

pub async fn get_tank(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
) -> Result<Tank, AppError> {
    let id = parse_tank_key(key)?;
    let mut tx = TenantTx::read(state, tenant).await?;
    let row = repo::get(&mut tx, id).await?;
    tx.commit().await?;
    row.map(|r| present(r, OffsetDateTime::now_utc()))
        .ok_or_else(|| AppError::not_found("tank"))
}

async fn check_location(tx: &mut TenantTx, location: Option<Uuid>) -> Result<(), AppError> {
    if let Some(l) = location
        && !repo::location_exists(tx, l).await?
    {
        return Err(AppError::not_found("location"));
    }
    Ok(())
}

async fn reload(tx: &mut TenantTx, id: Uuid) -> Result<Tank, AppError> {
    repo::get(tx, id)
        .await?
        .map(|r| present(r, OffsetDateTime::now_utc()))
        .ok_or_else(|| AppError::not_found("tank"))
}

fn duplicate(name: &str) -> AppError {
    AppError::duplicate(format!("a tank named {name:?} exists"))
}

pub async fn create_tank(
    state: &AppState,
    tenant: &TenantRecord,
    new: &NewTank,
) -> Result<Tank, AppError> {
    let mut tx = TenantTx::begin(state, tenant).await?;
    check_location(&mut tx, new.location_key).await?;
    let id = Uuid::now_v7();
    if !repo::insert(&mut tx, id, new).await? {
        return Err(duplicate(&new.name));
    }
    let tank = reload(&mut tx, id).await?;
    tx.commit().await?;
    Ok(tank)
}

pub async fn patch_tank(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
    patch: &TankPatch,
) -> Result<Tank, AppError> {
    let id = parse_tank_key(key)?;
    let mut tx = TenantTx::begin(state, tenant).await?;
    if !repo::lock(&mut tx, id).await? {
        return Err(AppError::not_found("tank"));
    }
    let current = repo::get(&mut tx, id)
        .await?
        .ok_or_else(|| AppError::not_found("tank"))?;
    let name = patch.name.clone().unwrap_or_else(|| current.name.clone());
    if repo::name_taken(&mut tx, &name, id).await? {
        return Err(duplicate(&name));
    }
    let volume = patch.volume_liters.unwrap_or(current.volume_liters);
    if let Some(held) = current.current_volume_liters
        && volume < held
    {
        return Err(invalid(
            "volume_liters",
            format!("the tank holds {held} litres now; the capacity cannot be less"),
        ));
    }
    let location = match patch.location_key {
        Patch::Keep => current.location_id,
        Patch::Clear => None,
        Patch::Set(l) => Some(l),
    };
    check_location(&mut tx, location).await?;
    let notes = match &patch.notes {
        Patch::Keep => current.notes.clone(),
        Patch::Clear => None,
        Patch::Set(n) => Some(n.clone()),
    };
    repo::update(
        &mut tx,
        id,
        &name,
        patch.kind.unwrap_or(current.kind),
        volume,
        location,
        notes.as_deref(),
    )
    .await?;
    let tank = reload(&mut tx, id).await?;
    tx.commit().await?;
    Ok(tank)
}

/// Deletes a tank with its fills and maintenance log; feedings drawn from it keep their record
/// (their tank becomes null).
pub async fn delete_tank(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
) -> Result<(), AppError> {
    let id = parse_tank_key(key)?;
    let mut tx = TenantTx::begin(state, tenant).await?;
    if !repo::lock(&mut tx, id).await? {
        return Err(AppError::not_found("tank"));
    }
    repo::delete(&mut tx, id).await?;
    tx.commit().await?;
    Ok(())
}

/// Records a fill and sets the tank's state: a full change replaces volume, EC and pH (a value
/// not measured becomes unknown); a top-up or adjustment adds its litres and sets what it
/// measured, keeping the last measured value otherwise. A fill that would overflow the tank is
/// refused (422 on `volume_liters`).
pub async fn fill_tank(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
    new: &NewFill,
    actor: &str,
) -> Result<Tank, AppError> {
    let id = parse_tank_key(key)?;
    let mut tx = TenantTx::begin(state, tenant).await?;
    if !repo::lock(&mut tx, id).await? {
        return Err(AppError::not_found("tank"));
    }
    let current = repo::get(&mut tx, id)
        .await?
        .ok_or_else(|| AppError::not_found("tank"))?;
    let added = new.volume_liters.unwrap_or(0.0);
    let (after, ec, ph) = match new.fill_type {
        FillType::FullChange => (added, new.ec_ms, new.ph),
        FillType::TopUp | FillType::Adjustment => (
            round(current.current_volume_liters.unwrap_or(0.0) + added, 3),
            new.ec_ms.or(current.current_ec_ms),
            new.ph.or(current.current_ph),
        ),
    };
    if after > current.volume_liters {
        return Err(invalid(
            "volume_liters",
            format!(
                "the tank holds at most {} litres; after this fill it would hold {after}",
                current.volume_liters
            ),
        ));
    }
    let fill = TankFill {
        key: Uuid::now_v7(),
        tank_key: id,
        fill_type: new.fill_type,
        volume_liters: added,
        ec_ms: new.ec_ms,
        ph: new.ph,
        water_source: new.water_source,
        water_temp_c: new.water_temp_c,
        notes: new.notes.clone(),
        volume_after_liters: after,
        filled_at: micros(OffsetDateTime::now_utc()),
        actor: actor.to_owned(),
    };
    repo::insert_fill(&mut tx, &fill).await?;
    repo::set_state(&mut tx, id, Some(after), ec, ph).await?;
    let tank = reload(&mut tx, id).await?;
    tx.commit().await?;
    Ok(tank)
}

pub async fn list_fills(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
    page: PageRequest,
) -> Result<Page<TankFill>, AppError> {
    let id = parse_tank_key(key)?;
    let mut tx = TenantTx::snapshot(state, tenant).await?;
    if repo::get(&mut tx, id).await?.is_none() {
        return Err(AppError::not_found("tank"));
    }
    let (items, total) = repo::fills(&mut tx, id, page).await?;
    tx.commit().await?;
    Ok(Page::new(items, total, page))
}

pub async fn log_maintenance(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
    body: &MaintenanceBody,
    actor: &str,
) -> Result<MaintenanceEntry, AppError> {
    let id = parse_tank_key(key)?;
    let mut tx = TenantTx::begin(state, tenant).await?;
    if !repo::lock(&mut tx, id).await? {
        return Err(AppError::not_found("tank"));
    }
    let entry = MaintenanceEntry {
        key: Uuid::now_v7(),
        tank_key: id,
        maintenance_type: body.maintenance_type,
        performed_at: body
            .performed_at
            .unwrap_or_else(|| micros(OffsetDateTime::now_utc())),
        notes: body.notes.clone(),
        actor: actor.to_owned(),
    };
    repo::insert_maintenance(&mut tx, &entry).await?;
    tx.commit().await?;
    Ok(entry)
}

pub async fn list_maintenance(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
    page: PageRequest,
) -> Result<Page<MaintenanceEntry>, AppError> {
    let id = parse_tank_key(key)?;
    let mut tx = TenantTx::snapshot(state, tenant).await?;
    if repo::get(&mut tx, id).await?.is_none() {
        return Err(AppError::not_found("tank"));
    }
    let (items, total) = repo::maintenance(&mut tx, id, page).await?;
    tx.commit().await?;
    Ok(Page::new(items, total, page))
}
