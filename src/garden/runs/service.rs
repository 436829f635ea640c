//! Use cases of planting runs, shared by the REST routes and the MCP tools.

use std::collections::HashSet;

use uuid::Uuid;

use super::model::*;
use super::repo;
use crate::error::{AppError, ErrorCode, ErrorDetail};
use crate::garden::plants::model::StartPhase;
use crate::garden::plants::service::{Creation, insert_plant};
use crate::garden::plants::{catalog, places};
use crate::garden::statements::GardenTx;
use crate::rules::run_status::{RunOp, RunStatus};
use crate::state::AppState;
use crate::tenancy::TenantRecord;
use crate::values::page::{Page, PageRequest};

pub const LIST_MAX_LIMIT: i64 = 100;

/// A key that is not a UUID cannot name a run: the same 404 as an unknown one.
pub fn parse_run_key(key: &str) -> Result<Uuid, AppError> {
    Uuid::parse_str(key).map_err(|_| AppError::not_found("planting run"))
}

fn invalid_state(op: RunOp, status: RunStatus) -> AppError {
    AppError::new(
        ErrorCode::InvalidRunState,
        format!(
            "operation {} is not allowed in status {}",
            op.as_str(),
            status.as_str()
        ),
    )
}

async fn detail(tx: &mut GardenTx, id: Uuid) -> Result<RunDetail, AppError> {
    let (run, status) = repo::get(tx, id)
        .await?
        .ok_or_else(|| AppError::not_found("planting run"))?;
    let plants_per_phase = repo::per_phase(tx, id).await?;
    let entries = repo::entries(tx, id).await?;
    Ok(RunDetail {
        plants_live: plants_per_phase.iter().map(|p| p.live).sum(),
        run,
        plants_per_phase,
        entries,
        next_statuses: status.next().iter().map(|s| (*s).into()).collect(),
    })
}

pub async fn create_run(
    state: &AppState,
    tenant: &TenantRecord,
    new: &NewRun,
) -> Result<RunDetail, AppError> {
    let mut tx = GardenTx::begin(state, tenant).await?;
    if let Some(l) = new.location_key {
        places::placement_target(tx.inner(), l, None).await?;
    }
    if let Some(b) = new.substrate_batch_key {
        places::assert_batch_usable(tx.inner(), b).await?;
    }
    let id = Uuid::now_v7();
    repo::insert(&mut tx, id, new).await?;
    let d = detail(&mut tx, id).await?;
    tx.commit().await?;
    Ok(d)
}

pub async fn list_runs(
    state: &AppState,
    tenant: &TenantRecord,
    status: Option<RunStatus>,
    page: PageRequest,
) -> Result<Page<Run>, AppError> {
    let mut tx = GardenTx::read(state, tenant).await?;
    let (items, matched) = repo::list(&mut tx, status, page).await?;
    let total = match matched {
        Some(n) => n,
        None => repo::count(&mut tx, status).await?,
    };
    tx.commit().await?;
    Ok(Page::new(items, total, page))
}

pub async fn get_run(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
) -> Result<RunDetail, AppError> {
    let id = parse_run_key(key)?;
    let mut tx = GardenTx::snapshot(state, tenant).await?;
    let d = detail(&mut tx, id).await?;
    tx.commit().await?;
    Ok(d)
}

pub async fn change_status(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
    to: RunStatus,
) -> Result<RunDetail, AppError> {
    let id = parse_run_key(key)?;
    let mut tx = GardenTx::begin(state, tenant).await?;
    let (_, from) = repo::lock(&mut tx, id)
        .await?
        .ok_or_else(|| AppError::not_found("planting run"))?;
    if !from.can_become(to) {
        tx.rollback().await?;
        return Err(AppError::new(
            ErrorCode::InvalidStatusTransition,
            format!(
                "cannot transition from {} to {}",
                from.as_str(),
                to.as_str()
            ),
        )
        .with_details(vec![ErrorDetail::new(
            "body.status",
            format!(
                "from {} the run may become: {}",
                from.as_str(),
                if from.next().is_empty() {
                    "nothing (final)".to_owned()
                } else {
                    from.next()
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            ),
            ErrorCode::InvalidStatusTransition.as_str(),
        )]));
    }
    repo::set_status(&mut tx, id, to).await?;
    let d = detail(&mut tx, id).await?;
    tx.commit().await?;
    Ok(d)
}

/// Adds existing plants of the garden to a run (planned or active runs only).
pub async fn add_plants(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
    plants: &[Uuid],
) -> Result<RunDetail, AppError> {
    let id = parse_run_key(key)?;
    let mut tx = GardenTx::begin(state, tenant).await?;
    let (_, status) = repo::lock(&mut tx, id)
        .await?
        .ok_or_else(|| AppError::not_found("planting run"))?;
    if !RunOp::AddPlants.allowed_in(status) {
        tx.rollback().await?;
        return Err(invalid_state(RunOp::AddPlants, status));
    }
    let found = repo::plants_state(&mut tx, plants).await?;
    let known: HashSet<Uuid> = found.iter().map(|(p, _, _)| *p).collect();
    if let Some(missing) = plants.iter().find(|p| !known.contains(p)) {
        tx.rollback().await?;
        return Err(AppError::not_found(&format!("plant {missing}")));
    }
    let mut errors = Vec::new();
    for (i, p) in plants.iter().enumerate() {
        let Some((_, archived, run)) = found.iter().find(|(k, _, _)| k == p) else {
            continue;
        };
        if *archived {
            errors.push(ErrorDetail::new(
                format!("body.plant_keys[{i}]"),
                "the plant is archived",
                "value_error",
            ));
        } else if run.is_some_and(|r| r != id) {
            errors.push(ErrorDetail::new(
                format!("body.plant_keys[{i}]"),
                "the plant belongs to another run",
                "value_error",
            ));
        }
    }
    if !errors.is_empty() {
        tx.rollback().await?;
        return Err(AppError::validation(errors));
    }
    repo::add_plants(&mut tx, id, plants).await?;
    let d = detail(&mut tx, id).await?;
    tx.commit().await?;
    Ok(d)
}

/// `{PREFIX}_{NN}` names not yet taken, in order.
async fn free_names(tx: &mut GardenTx, prefix: &str, n: usize) -> Result<Vec<String>, AppError> {
    let candidates: Vec<String> = (1..=n * 2 + 100)
        .map(|i| format!("{prefix}_{i:02}"))
        .collect();
    let taken: HashSet<String> = repo_names(tx, &candidates).await?.into_iter().collect();
    let names: Vec<String> = candidates
        .into_iter()
        .filter(|c| !taken.contains(c))
        .take(n)
        .collect();
    if names.len() < n {
        return Err(AppError::validation(vec![ErrorDetail::new(
            "body.id_prefix",
            "too many plants carry this prefix already; choose another",
            "value_error",
        )]));
    }
    Ok(names)
}

async fn repo_names(tx: &mut GardenTx, names: &[String]) -> Result<Vec<String>, AppError> {
    Ok(crate::garden::plants::repo::names_taken(tx, names).await?)
}

/// Creates `quantity` plants of one species for a planned run, one per free slot of the
/// location in order, each with the rotation and companion checks and its first phase; the
/// run becomes active. All or nothing: any refusal rolls everything back.
pub async fn create_plants(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
    body: &CreatePlantsBody,
    actor: &str,
) -> Result<RunDetail, AppError> {
    let id = parse_run_key(key)?;
    let (species, sequence) = catalog::species_with_sequence(state, &body.species_key).await?;
    if let Some(c) = &body.cultivar_key {
        catalog::check_cultivar(state, c, &species.key).await?;
    }
    let mut tx = GardenTx::begin(state, tenant).await?;
    let (run, status) = repo::lock(&mut tx, id)
        .await?
        .ok_or_else(|| AppError::not_found("planting run"))?;
    if !RunOp::CreatePlants.allowed_in(status) {
        tx.rollback().await?;
        return Err(invalid_state(RunOp::CreatePlants, status));
    }
    let Some(location) = body.location_key.or(run.location_key) else {
        tx.rollback().await?;
        return Err(AppError::validation(vec![ErrorDetail::new(
            "body.location_key",
            "the run has no location: name one",
            "missing",
        )]));
    };
    places::placement_target(tx.inner(), location, None).await?;
    let free = places::free_slots(tx.inner(), location).await?;
    let n = usize::try_from(body.quantity).unwrap_or(0);
    if free.len() < n {
        tx.rollback().await?;
        return Err(AppError::validation(vec![ErrorDetail::new(
            "body.quantity",
            format!("the location has {} free slot(s), {n} asked", free.len()),
            "value_error",
        )]));
    }
    let names = free_names(&mut tx, &body.id_prefix, n).await?;
    let mut created = Vec::with_capacity(n);
    for (slot, name) in free.iter().zip(names) {
        let target = places::placement_target(tx.inner(), location, Some(*slot)).await?;
        let plant = insert_plant(
            state,
            &mut tx,
            Creation {
                name,
                species: &species,
                sequence: &sequence,
                cultivar_key: body.cultivar_key.as_deref(),
                target: Some(&target),
                batch: run.substrate_batch_key,
                planted_on: body.planted_on,
                start: StartPhase::First,
                notes: None,
                actor,
                reason: "initial",
                // Conflicts needing an acknowledgement refuse here; the plant routes take the flags.
                acknowledge: Default::default(),
            },
        )
        .await?
        .0;
        created.push(plant);
    }
    repo::add_plants(&mut tx, id, &created).await?;
    repo::insert_entry(
        &mut tx,
        id,
        &species.key,
        body.cultivar_key.as_deref(),
        body.quantity,
        &body.id_prefix,
    )
    .await?;
    repo::set_status(&mut tx, id, RunStatus::Active).await?;
    let d = detail(&mut tx, id).await?;
    tx.commit().await?;
    Ok(d)
}
