//! Use cases of plants and their phases, shared by the REST routes and the MCP tools. Every
//! write takes `commit`: false computes and checks everything inside the transaction, then
//! rolls it back (a tool's dry run).

use std::collections::HashSet;

use serde_json::Value;
use time::OffsetDateTime;
use uuid::Uuid;

use super::catalog::{self, SpeciesInfo};
use super::model::*;
use super::places::{self, PlacementTarget};
use super::repo::{self, Filter, PlantRow};
use crate::catalog::phases::model::ResolvedSequence;
use crate::catalog::species::service::SpeciesSequence;
use crate::error::{AppError, ErrorCode, ErrorDetail};
use crate::garden::statements::{self, GardenTx};
use crate::rules::phase_transition::{self as pt, Current, Decision};
use crate::rules::{companion, rotation};
use crate::state::AppState;
use crate::tenancy::TenantRecord;
use crate::values::json::Patch;
use crate::values::page::{Page, PageRequest};

pub const LIST_MAX_LIMIT: i64 = 200;

/// A catalogue companion pair as the rule reads it: (a, b, compatible, score, reason,
/// evidence, source).
type PairRow = (
    String,
    String,
    bool,
    Option<f64>,
    Option<String>,
    Option<String>,
    Option<String>,
);
/// A catalogue rotation rule: (from, to, relation, benefit score, severe, break years).
type RuleRow = (String, String, String, f64, bool, Option<i32>);
pub const HISTORY_MAX_LIMIT: i64 = 200;

/// A key that is not a UUID cannot name a plant: the same 404 as an unknown one.
pub fn parse_plant_key(key: &str) -> Result<Uuid, AppError> {
    Uuid::parse_str(key).map_err(|_| AppError::not_found("plant"))
}

fn date_str(d: Option<time::Date>) -> Option<String> {
    d.map(|d| d.to_string())
}

fn whole_days(since: OffsetDateTime, now: OffsetDateTime) -> i64 {
    (now - since).whole_days().max(0)
}

fn state_conflict(message: impl Into<String>) -> AppError {
    AppError::new(ErrorCode::StateConflict, message.into())
}

// ---------- reading ----------

fn summary(row: PlantRow, names: &std::collections::HashMap<String, String>) -> PlantSummary {
    PlantSummary {
        key: row.id,
        species_name: names.get(&row.species_key).cloned(),
        name: row.name,
        species_key: row.species_key,
        cultivar_key: row.cultivar_key,
        site_key: row.site_id,
        location_key: row.location_id,
        slot_key: row.slot_id,
        substrate_batch_key: row.substrate_batch_id,
        planted_on: date_str(row.planted_on),
        removed_on: date_str(row.archived_at.map(OffsetDateTime::date)),
        archive_reason: row.archive_reason,
        current_phase_name: row.current_phase_key.as_ref().and(row.open_phase_name),
        current_phase_key: row.current_phase_key,
        run_key: row.run_id,
        created_at: row.created_at,
        updated_at: row.updated_at,
    }
}

/// One page of plants: ONE tenant statement (rows and the match count together) and ONE
/// catalogue lookup for the species names of the page, whatever the page size.
pub async fn list_plants(
    state: &AppState,
    tenant: &TenantRecord,
    filter: &Filter,
    page: PageRequest,
) -> Result<Page<PlantSummary>, AppError> {
    let (items, total, _) = list_inner(state, tenant, filter, page, false).await?;
    Ok(Page::new(items, total, page))
}

/// As [`list_plants`], plus the number of plants in the garden (archived included).
pub async fn list_plants_counted(
    state: &AppState,
    tenant: &TenantRecord,
    filter: &Filter,
    page: PageRequest,
) -> Result<(Vec<PlantSummary>, i64, i64), AppError> {
    let (items, total, all) = list_inner(state, tenant, filter, page, true).await?;
    Ok((items, total, all.unwrap_or(total)))
}

async fn list_inner(
    state: &AppState,
    tenant: &TenantRecord,
    filter: &Filter,
    page: PageRequest,
    count_all: bool,
) -> Result<(Vec<PlantSummary>, i64, Option<i64>), AppError> {
    // One statement (the count past the end only concerns an empty page); the garden-wide
    // count beside a page must agree with it, so that one reads a snapshot.
    let mut tx = if count_all {
        GardenTx::snapshot(state, tenant).await?
    } else {
        GardenTx::read(state, tenant).await?
    };
    let (rows, matched) = repo::list(&mut tx, filter, page).await?;
    let total = match matched {
        Some(n) => n,
        None => repo::count(&mut tx, filter).await?,
    };
    let all = if count_all {
        Some(repo::count_all(&mut tx).await?)
    } else {
        None
    };
    tx.commit().await?;
    let names = if rows.is_empty() {
        Default::default()
    } else {
        statements::catalogue_lookup(tenant.id);
        let keys: Vec<String> = rows.iter().map(|r| r.species_key.clone()).collect();
        catalog::names(state, keys).await?
    };
    let items = rows.into_iter().map(|r| summary(r, &names)).collect();
    Ok((items, total, all))
}

fn phase_now(row: &PlantRow, seq: &ResolvedSequence, now: OffsetDateTime) -> Option<PhaseNow> {
    let key = row.current_phase_key.as_deref()?;
    let started = row.current_phase_started_at?;
    let pos = seq.entries.iter().position(|e| e.phase_key == key)?;
    let e = &seq.entries[pos];
    let day_count = whole_days(started, now);
    Some(PhaseNow {
        phase_key: e.phase_key.clone(),
        name: e.phase_name.clone(),
        display_name_en: e.display_name_en.clone(),
        sequence_key: seq.key.clone(),
        sequence_name: seq.name.clone(),
        sequence_order: e.order,
        cycle_number: row.current_cycle.unwrap_or(1),
        started_at: started,
        day_count,
        expected_duration_days: e.effective_duration_days,
        expected_remaining_days: (e.effective_duration_days - day_count).max(0),
        is_terminal: e.terminal,
        allows_harvest: e.allows_harvest,
        next_phase_key: seq.entries.get(pos + 1).map(|n| n.phase_key.clone()),
    })
}

/// The phase state exactly as the specification's table says.
fn phase_state(row: &PlantRow, seq: Option<&ResolvedSequence>) -> PhaseState {
    if row.history_rows == 0 {
        return PhaseState::NeverInitialised;
    }
    let Some(key) = row.current_phase_key.as_deref() else {
        return PhaseState::BetweenCycles;
    };
    match seq {
        Some(s) if s.entries.iter().any(|e| e.phase_key == key) => PhaseState::InPhase,
        _ => PhaseState::Unresolved,
    }
}

fn current_of<'a>(row: &'a PlantRow, seq: &ResolvedSequence) -> Current<'a> {
    match phase_state(row, Some(seq)) {
        PhaseState::NeverInitialised => Current::Never,
        PhaseState::BetweenCycles => Current::BetweenCycles {
            last_cycle: row.last_cycle.unwrap_or(0),
        },
        PhaseState::Unresolved => Current::Unresolved {
            cycle: row.current_cycle.unwrap_or(1),
        },
        PhaseState::InPhase => Current::In {
            phase_key: row.current_phase_key.as_deref().unwrap_or_default(),
            cycle: row.current_cycle.unwrap_or(1),
        },
    }
}

fn entries_of(seq: &ResolvedSequence) -> Vec<pt::Entry<'_>> {
    seq.entries
        .iter()
        .map(|e| pt::Entry {
            phase_key: &e.phase_key,
            order: e.order,
            terminal: e.terminal,
            recurring: e.recurring,
        })
        .collect()
}

/// Decides a transition of the plant in `row` to `target` against `seq`.
fn decide(
    row: &PlantRow,
    seq: &ResolvedSequence,
    target: &str,
    force: bool,
) -> Result<Decision, pt::Refusal> {
    let entries = entries_of(seq);
    let shape = pt::Sequence {
        entries: &entries,
        repeating: seq.is_repeating,
        restart_order: seq.cycle_restart_entry_order,
    };
    pt::decide(&shape, current_of(row, seq), target, force)
}

fn resolve(
    row: PlantRow,
    species: Option<&SpeciesInfo>,
    seq: Option<&ResolvedSequence>,
    substrate_name: Option<String>,
) -> Plant {
    let now = OffsetDateTime::now_utc();
    let state = phase_state(&row, seq);
    let phase = match (state, seq) {
        (PhaseState::InPhase, Some(s)) => phase_now(&row, s, now),
        _ => None,
    };
    let substrate = row.substrate_key.clone().map(|key| SubstrateRef {
        name: row.tenant_substrate_name.clone().or(substrate_name),
        substrate_type: row.tenant_substrate_type.clone(),
        key,
    });
    Plant {
        key: row.id,
        name: row.name,
        species: SpeciesRef {
            key: row.species_key.clone(),
            scientific_name: species.and_then(|s| s.scientific_name.clone()),
            common_name: species.and_then(|s| s.common_name.clone()),
        },
        cultivar_key: row.cultivar_key,
        site_key: row.site_id,
        location_key: row.location_id,
        location_name: row.location_name,
        slot_key: row.slot_id,
        slot_code: row.slot_code,
        substrate_batch_key: row.substrate_batch_id,
        substrate,
        planted_on: date_str(row.planted_on),
        removed_on: date_str(row.archived_at.map(OffsetDateTime::date)),
        archived: row.archived_at.is_some(),
        archive_reason: row.archive_reason,
        current_phase_key: row.current_phase_key,
        phase_state: state,
        phase,
        run_key: row.run_id,
        notes: row.notes,
        placement_acknowledgements: serde_json::from_value(row.placement_acknowledgements)
            .unwrap_or_default(),
        placement_warnings: Vec::new(),
        created_at: row.created_at,
        updated_at: row.updated_at,
    }
}

/// Resolves a row against the catalogue as it is now.
async fn resolve_now(state: &AppState, tenant: Uuid, row: PlantRow) -> Result<Plant, AppError> {
    statements::catalogue_lookup(tenant);
    let (species, seq) = match catalog::species_with_sequence(state, &row.species_key).await {
        Ok((sp, seq)) => (Some(sp), Some(seq.sequence)),
        Err(e) if e.code() == ErrorCode::EntityNotFound => (None, None),
        Err(e) => return Err(e),
    };
    let global_substrate = match row.substrate_key.as_deref() {
        Some(k) if row.tenant_substrate_name.is_none() && Uuid::parse_str(k).is_ok() => {
            catalog::names(state, [k.to_owned()]).await?.remove(k)
        }
        _ => None,
    };
    Ok(resolve(
        row,
        species.as_ref(),
        seq.as_ref(),
        global_substrate,
    ))
}

async fn load(tx: &mut GardenTx, id: Uuid) -> Result<PlantRow, AppError> {
    repo::get(tx, id)
        .await?
        .ok_or_else(|| AppError::not_found("plant"))
}

async fn load_locked(tx: &mut GardenTx, id: Uuid) -> Result<PlantRow, AppError> {
    repo::lock(tx, id)
        .await?
        .ok_or_else(|| AppError::not_found("plant"))
}

/// The plant locked for a change only a plant still in the garden may take: 409
/// `STATE_CONFLICT` with `refusal` when it is archived (the caller's transaction is dropped,
/// which rolls it back).
async fn load_live(tx: &mut GardenTx, id: Uuid, refusal: &str) -> Result<PlantRow, AppError> {
    let row = load_locked(tx, id).await?;
    if row.archived_at.is_some() {
        return Err(state_conflict(refusal));
    }
    Ok(row)
}

pub async fn get_plant(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
) -> Result<Plant, AppError> {
    let id = parse_plant_key(key)?;
    let mut tx = GardenTx::read(state, tenant).await?;
    let row = load(&mut tx, id).await?;
    tx.commit().await?;
    resolve_now(state, tenant.id, row).await
}

pub async fn phase_status(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
) -> Result<PhaseStatus, AppError> {
    let id = parse_plant_key(key)?;
    let mut tx = GardenTx::read(state, tenant).await?;
    let row = load(&mut tx, id).await?;
    tx.commit().await?;
    let seq = catalog::sequence_of(state, &row.species_key).await?;
    let now = OffsetDateTime::now_utc();
    let ps = phase_state(&row, seq.as_ref());
    let phase = match (ps, seq.as_ref()) {
        (PhaseState::InPhase, Some(s)) => phase_now(&row, s, now),
        _ => None,
    };
    let allowed_targets = match seq.as_ref() {
        Some(s) => s
            .entries
            .iter()
            .filter(|e| decide(&row, s, &e.phase_key, false).is_ok())
            .map(|e| e.phase_key.clone())
            .collect(),
        None => Vec::new(),
    };
    Ok(PhaseStatus {
        plant_key: row.id,
        phase_state: ps,
        phase_key: row.current_phase_key.clone(),
        phase,
        sequence_key: seq.as_ref().map(|s| s.key.clone()),
        sequence_name: seq.as_ref().map(|s| s.name.clone()),
        cycle_type: seq.as_ref().map(|s| s.cycle_type.clone()),
        is_repeating: seq.as_ref().map(|s| s.is_repeating),
        cycle_number: row.current_cycle.or(row.last_cycle),
        has_harvest_phase: seq
            .as_ref()
            .map(|s| s.entries.iter().any(|e| e.allows_harvest)),
        transition_count: (row.history_rows - 1).max(0),
        allowed_targets,
    })
}

pub async fn phase_history(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
    page: PageRequest,
) -> Result<Page<PhaseHistoryEntry>, AppError> {
    let id = parse_plant_key(key)?;
    let mut tx = GardenTx::snapshot(state, tenant).await?;
    load(&mut tx, id).await?;
    let (items, total) = repo::history(&mut tx, id, page).await?;
    tx.commit().await?;
    Ok(Page::new(items, total, page))
}

// ---------- placing ----------

fn refusal(code: ErrorCode, field: &str, message: String) -> AppError {
    AppError::new(code, message.clone()).with_details(vec![ErrorDetail::new(
        field,
        message,
        code.as_str(),
    )])
}

/// What the rotation and companion checks say about placing `species` in the target's slot
/// (nothing to check without a slot). `plant`: the plant being moved (its own history and
/// presence do not count). Reads only.
pub(crate) async fn review_placement(
    state: &AppState,
    tx: &mut GardenTx,
    species: &SpeciesInfo,
    target: &PlacementTarget,
    plant: Option<Uuid>,
) -> Result<PlantingReview, AppError> {
    let mut review = PlantingReview {
        species_key: species.key.clone(),
        allowed: true,
        ..PlantingReview::default()
    };
    let Some(slot) = &target.slot else {
        review.rotation.window_years = rotation::WINDOW_YEARS;
        return Ok(review);
    };
    review.slot_key = Some(slot.slot_id);
    let today = today();
    let rules = match species.family_key.as_deref() {
        Some(f) => catalog::rotation_rules(state, f).await?,
        None => Vec::new(),
    };
    let text = |v: &Value, f: &str| v.get(f).and_then(Value::as_str).map(str::to_owned);
    let rule_data: Vec<RuleRow> = rules
        .iter()
        .map(|r| {
            (
                text(r, "from_family_key").unwrap_or_default(),
                text(r, "to_family_key").unwrap_or_default(),
                text(r, "relation").unwrap_or_default(),
                r.get("benefit_score")
                    .and_then(Value::as_f64)
                    .unwrap_or(0.0),
                text(r, "severity").as_deref() == Some("severe"),
                r.get("break_years")
                    .and_then(Value::as_i64)
                    .and_then(|y| i32::try_from(y).ok()),
            )
        })
        .collect();
    let mut family_rules: Vec<rotation::FamilyRule> = Vec::new();
    for (from, to, relation, score, severe, break_years) in &rule_data {
        if relation == "successor" {
            family_rules.push(rotation::FamilyRule::Successor {
                from,
                to,
                benefit_score: *score,
            });
        } else {
            family_rules.push(rotation::FamilyRule::Incompatible {
                a: from,
                b: to,
                severe: *severe,
            });
            if let Some(years) = break_years.filter(|_| from == to) {
                family_rules.push(rotation::FamilyRule::Break {
                    family: from,
                    years,
                });
            }
        }
    }
    let years = rotation::window_years(species.family_key.as_deref(), &family_rules);
    let since = rotation::window_start(today, years);
    let history = repo::slot_history(tx, slot.slot_id, since, today, plant).await?;
    let mut near: Vec<Uuid> = vec![slot.slot_id];
    near.extend(slot.neighbour_slot_ids.iter().copied());
    let neighbours = repo::live_in_slots(tx, &near, plant).await?;
    let keys: HashSet<String> = history
        .iter()
        .map(|(s, ..)| s.clone())
        .chain(neighbours.iter().map(|(_, s)| s.clone()))
        .collect();
    let others = catalog::species_many(state, keys).await?;
    let family_of = |k: &str| others.get(k).and_then(|s| s.family_key.as_deref());

    let past: Vec<rotation::Past> = history
        .iter()
        .map(|(s, placed_on, last_seen, active)| rotation::Past {
            species_key: s,
            family_key: family_of(s),
            placed_on: *placed_on,
            last_seen: *last_seen,
            active: *active,
        })
        .collect();
    let slot_kind = rotation::SlotKind {
        capacity: slot.capacity,
        potted: target.potted,
    };
    let findings = rotation::check(
        species.family_key.as_deref(),
        today,
        years,
        &past,
        &family_rules,
        slot_kind,
    );
    review.rotation.window_years = years;
    if target.potted {
        review.rotation.exempt = findings.first().map(|f| f.message.clone());
    }
    for f in &findings {
        let critical = f.level == rotation::Level::Critical;
        let message = format!("slot {}: {}", slot.code, f.message);
        if matches!(f.level, rotation::Level::Warning | rotation::Level::Info) {
            review.warnings.push(message.clone());
        }
        review.rotation.findings.push(RotationFinding {
            level: level_str(f.level).to_owned(),
            message,
            species_key: f.species_key.clone(),
            needs_acknowledgement: critical,
        });
    }

    if !neighbours.is_empty() {
        let pairs = catalog::companion_pairs(state, &species.key).await?;
        let pair_data: Vec<PairRow> = pairs
            .iter()
            .map(|p| {
                (
                    text(p, "species_a_key").unwrap_or_default(),
                    text(p, "species_b_key").unwrap_or_default(),
                    text(p, "relation").as_deref() == Some("compatible"),
                    p.get("score").and_then(Value::as_f64),
                    text(p, "reason"),
                    text(p, "evidence"),
                    text(p, "source"),
                )
            })
            .collect();
        let pairs: Vec<companion::Pair> = pair_data
            .iter()
            .map(
                |(a, b, compatible, score, reason, evidence, source)| companion::Pair {
                    a,
                    b,
                    compatible: *compatible,
                    score: *score,
                    reason: reason.as_deref(),
                    evidence: companion::Evidence::parse(evidence.as_deref()),
                    source: source.as_deref(),
                },
            )
            .collect();
        let plant_keys: Vec<String> = neighbours.iter().map(|(p, _)| p.to_string()).collect();
        let near: Vec<companion::Neighbour> = neighbours
            .iter()
            .zip(&plant_keys)
            .map(|((_, s), k)| companion::Neighbour {
                plant_key: k,
                species_key: s,
            })
            .collect();
        let outcome = companion::check(&species.key, &near, &pairs);
        for c in &outcome.conflicts {
            let other = others
                .get(&c.species_key)
                .map_or_else(|| c.species_key.clone(), SpeciesInfo::label);
            let message = format!(
                "{} and {other} (plant {}) are incompatible companions ({}){}",
                species.label(),
                c.plant_key,
                c.evidence.as_str(),
                c.reason
                    .as_deref()
                    .map(|r| format!(": {r}"))
                    .unwrap_or_default()
            );
            if !c.needs_acknowledgement() {
                review.warnings.push(message);
            }
            review.companions.conflicts.push(CompanionConflict {
                plant_key: c.plant_key.clone(),
                species_key: c.species_key.clone(),
                species_name: other,
                reason: c.reason.clone(),
                evidence: c.evidence.as_str().to_owned(),
                source: c.source.clone(),
                needs_acknowledgement: c.needs_acknowledgement(),
            });
        }
        review.companions.benefits = outcome
            .benefits
            .iter()
            .map(|b| CompanionBenefit {
                plant_key: b.plant_key.clone(),
                species_key: b.species_key.clone(),
                score: b.score,
            })
            .collect();
    }
    if review
        .rotation
        .findings
        .iter()
        .any(|f| f.needs_acknowledgement)
    {
        review
            .needs_acknowledgement
            .push("acknowledge_rotation".into());
    }
    if review
        .companions
        .conflicts
        .iter()
        .any(|c| c.needs_acknowledgement)
    {
        review
            .needs_acknowledgement
            .push("acknowledge_companions".into());
    }
    review.allowed = review.needs_acknowledgement.is_empty();
    Ok(review)
}

fn level_str(l: rotation::Level) -> &'static str {
    match l {
        rotation::Level::Critical => "critical",
        rotation::Level::Warning => "warning",
        rotation::Level::Info => "info",
        rotation::Level::Ok => "ok",
    }
}

/// What a placement passed with: advice for the answer, and the conflicts acknowledged (to
/// be recorded on the plant).
#[derive(Debug, Clone, Default)]
pub(crate) struct Placed {
    pub warnings: Vec<String>,
    pub acknowledged: Vec<PlacementAcknowledgement>,
}

/// Runs the checks for placing `species` in the target's slot: a conflict that needs an
/// acknowledgement refuses the placement (422 `ROTATION_VIOLATION`, then
/// `INCOMPATIBLE_COMPANION`, naming `field`) unless `ack` carries its flag.
pub(crate) async fn check_placement(
    state: &AppState,
    tx: &mut GardenTx,
    species: &SpeciesInfo,
    target: &PlacementTarget,
    plant: Option<Uuid>,
    field: &str,
    ack: Acknowledge,
) -> Result<Placed, AppError> {
    let review = review_placement(state, tx, species, target, plant).await?;
    let Some(slot_key) = review.slot_key else {
        return Ok(Placed::default());
    };
    let now = OffsetDateTime::now_utc();
    let mut placed = Placed {
        warnings: review.warnings.clone(),
        acknowledged: Vec::new(),
    };
    let rotation: Vec<&str> = review
        .rotation
        .findings
        .iter()
        .filter(|f| f.needs_acknowledgement)
        .map(|f| f.message.as_str())
        .collect();
    if let Some(first) = rotation.first() {
        if !ack.rotation {
            return Err(refusal(
                ErrorCode::RotationViolation,
                field,
                format!("{first} (send acknowledge_rotation: true to plant anyway)"),
            ));
        }
        placed
            .acknowledged
            .extend(rotation.iter().map(|m| PlacementAcknowledgement {
                code: ErrorCode::RotationViolation.as_str().to_owned(),
                message: (*m).to_owned(),
                slot_key,
                acknowledged_at: now,
            }));
    }
    let conflicts: Vec<String> = review
        .companions
        .conflicts
        .iter()
        .filter(|c| c.needs_acknowledgement)
        .map(|c| {
            format!(
                "{} and {} (plant {}) are incompatible companions{}",
                species.label(),
                c.species_name,
                c.plant_key,
                c.reason
                    .as_deref()
                    .map(|r| format!(": {r}"))
                    .unwrap_or_default()
            )
        })
        .collect();
    if let Some(first) = conflicts.first() {
        if !ack.companions {
            return Err(refusal(
                ErrorCode::IncompatibleCompanion,
                field,
                format!("{first} (send acknowledge_companions: true to plant anyway)"),
            ));
        }
        placed
            .acknowledged
            .extend(conflicts.into_iter().map(|m| PlacementAcknowledgement {
                code: ErrorCode::IncompatibleCompanion.as_str().to_owned(),
                message: m,
                slot_key,
                acknowledged_at: now,
            }));
    }
    Ok(placed)
}

/// Records what a placement acknowledged on the plant.
async fn record_acknowledged(
    tx: &mut GardenTx,
    plant: Uuid,
    placed: &Placed,
) -> Result<(), AppError> {
    if placed.acknowledged.is_empty() {
        return Ok(());
    }
    let entries = serde_json::to_value(&placed.acknowledged)
        .map_err(|e| AppError::internal(format!("acknowledgements: {e}")))?;
    repo::add_acknowledgements(tx, plant, &entries).await?;
    Ok(())
}

/// The preview of a create or move (`validate-planting`): the same checks, nothing written.
/// 404 for an unknown species, plant, location or slot; 422 for a full slot or a slot of
/// another location, as the create would answer.
pub async fn validate_planting(
    state: &AppState,
    tenant: &TenantRecord,
    check: &PlantingCheck,
) -> Result<PlantingReview, AppError> {
    let mut tx = GardenTx::begin(state, tenant).await?;
    let moving = match check.plant_key {
        Some(id) => Some(load(&mut tx, id).await?),
        None => None,
    };
    let species_key = match (&check.species_key, &moving) {
        (Some(k), _) => k.clone(),
        (None, Some(row)) => row.species_key.clone(),
        (None, None) => {
            return Err(AppError::validation(vec![ErrorDetail::new(
                "body.species_key",
                "name a species_key or a plant_key",
                "missing",
            )]));
        }
    };
    let (species, _) = catalog::species_with_sequence(state, &species_key).await?;
    let target = target_of(&mut tx, check.location_key, check.slot_key)
        .await?
        .ok_or_else(|| AppError::not_found("location"))?;
    let review = review_placement(state, &mut tx, &species, &target, check.plant_key).await?;
    tx.rollback().await?;
    Ok(review)
}

/// The location and slot a body names: the slot alone names its location.
pub(crate) async fn target_of(
    tx: &mut GardenTx,
    location: Option<Uuid>,
    slot: Option<Uuid>,
) -> Result<Option<PlacementTarget>, AppError> {
    let location = match (location, slot) {
        (Some(l), _) => l,
        (None, Some(s)) => places::slot_location(tx.inner(), s).await?,
        (None, None) => return Ok(None),
    };
    Ok(Some(
        places::placement_target(tx.inner(), location, slot).await?,
    ))
}

// ---------- creating ----------

/// Everything needed to insert one plant.
pub struct Creation<'a> {
    pub name: String,
    pub species: &'a SpeciesInfo,
    pub sequence: &'a SpeciesSequence,
    pub cultivar_key: Option<&'a str>,
    pub target: Option<&'a PlacementTarget>,
    pub batch: Option<Uuid>,
    pub planted_on: Option<time::Date>,
    pub start: StartPhase,
    pub notes: Option<&'a str>,
    pub actor: &'a str,
    pub reason: &'a str,
    /// Which placement conflicts the grower acknowledged.
    pub acknowledge: Acknowledge,
}

/// Inserts a plant (placement checks, slot history, starting phase) inside `tx`; its key and
/// the placement's advice.
pub async fn insert_plant(
    state: &AppState,
    tx: &mut GardenTx,
    c: Creation<'_>,
) -> Result<(Uuid, Vec<String>), AppError> {
    let seq = &c.sequence.sequence;
    let first = seq.entries.iter().min_by_key(|e| e.order);
    let start = match &c.start {
        StartPhase::None => None,
        StartPhase::First => Some(first.ok_or_else(|| {
            AppError::new(
                ErrorCode::PhaseTransitionInvalid,
                "the species' phase sequence has no phases",
            )
        })?),
        StartPhase::Phase(k) => Some(seq.entries.iter().find(|e| &e.phase_key == k).ok_or_else(
            || {
                AppError::validation(vec![ErrorDetail::new(
                    "body.phase_key",
                    format!(
                        "not a phase of the sequence {} the species runs on",
                        seq.name
                    ),
                    "value_error",
                )])
            },
        )?),
    };
    let placed = match c.target {
        Some(t) => {
            check_placement(
                state,
                tx,
                c.species,
                t,
                None,
                "body.slot_key",
                c.acknowledge,
            )
            .await?
        }
        None => Placed::default(),
    };
    if let Some(b) = c.batch {
        places::assert_batch_usable(tx.inner(), b).await?;
    }
    let id = Uuid::now_v7();
    repo::insert(
        tx,
        &repo::Insert {
            id,
            name: &c.name,
            species_key: &c.species.key,
            cultivar_key: c.cultivar_key,
            location_id: c.target.map(|t| t.location_id),
            slot_id: c.target.and_then(|t| t.slot.as_ref().map(|s| s.slot_id)),
            substrate_batch_id: c.batch,
            planted_on: c.planted_on,
            notes: c.notes,
        },
    )
    .await?;
    record_acknowledged(tx, id, &placed).await?;
    if let Some(slot) = c.target.and_then(|t| t.slot.as_ref()) {
        repo::open_placement(
            tx,
            slot.slot_id,
            id,
            &c.species.key,
            c.planted_on.unwrap_or_else(today),
        )
        .await?;
    }
    if let Some(e) = start {
        repo::enter_phase(
            tx,
            &repo::Enter {
                plant_id: id,
                phase_key: &e.phase_key,
                phase_name: &e.phase_name,
                sequence_key: &seq.key,
                cycle: 1,
                reason: c.reason,
                actor: c.actor,
                warning: None,
            },
        )
        .await?;
    }
    Ok((id, placed.warnings))
}

/// Creates a plant; a placement conflict that needs an acknowledgement refuses it.
pub async fn create_plant(
    state: &AppState,
    tenant: &TenantRecord,
    new: &NewPlant,
    actor: &str,
    commit: bool,
) -> Result<Plant, AppError> {
    create_plant_acknowledged(state, tenant, new, Acknowledge::default(), actor, commit).await
}

/// Creates a plant, planting through the placement conflicts `ack` acknowledges (and
/// recording them on it).
pub async fn create_plant_acknowledged(
    state: &AppState,
    tenant: &TenantRecord,
    new: &NewPlant,
    ack: Acknowledge,
    actor: &str,
    commit: bool,
) -> Result<Plant, AppError> {
    let (species, sequence) = catalog::species_with_sequence(state, &new.species_key).await?;
    if let Some(c) = &new.cultivar_key {
        catalog::check_cultivar(state, c, &species.key).await?;
    }
    let mut tx = GardenTx::begin(state, tenant).await?;
    let target = target_of(&mut tx, new.location_key, new.slot_key).await?;
    let (id, warnings) = insert_plant(
        state,
        &mut tx,
        Creation {
            name: new.name.clone().unwrap_or_else(|| species.label()),
            species: &species,
            sequence: &sequence,
            cultivar_key: new.cultivar_key.as_deref(),
            target: target.as_ref(),
            batch: new.substrate_batch_key,
            planted_on: new.planted_on,
            start: new.start_phase.clone(),
            notes: new.notes.as_deref(),
            actor,
            reason: "initial",
            acknowledge: ack,
        },
    )
    .await?;
    let row = load(&mut tx, id).await?;
    crate::garden::webhooks::events::emit(
        tx.inner(),
        tenant,
        "plant.created",
        serde_json::json!({
            "key": id,
            "name": row.name,
            "species_key": row.species_key,
            "phase_key": row.current_phase_key,
        }),
    )
    .await?;
    tx.finish(commit).await?;
    let mut plant = resolve_now(state, tenant.id, row).await?;
    plant.placement_warnings = warnings;
    Ok(plant)
}

pub async fn update_plant(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
    patch: &PlantPatch,
) -> Result<Plant, AppError> {
    let id = parse_plant_key(key)?;
    let mut tx = GardenTx::begin(state, tenant).await?;
    let row = load_locked(&mut tx, id).await?;
    if let Patch::Set(c) = &patch.cultivar_key {
        catalog::check_cultivar(state, c, &row.species_key).await?;
    }
    let keep_or = |p: &Patch<String>, now: &Option<String>| match p {
        Patch::Keep => now.clone(),
        Patch::Clear => None,
        Patch::Set(v) => Some(v.clone()),
    };
    let cultivar = keep_or(&patch.cultivar_key, &row.cultivar_key);
    let notes = keep_or(&patch.notes, &row.notes);
    let planted_on = match patch.planted_on {
        Patch::Keep => row.planted_on,
        Patch::Clear => None,
        Patch::Set(d) => Some(d),
    };
    let name = patch.name.clone().unwrap_or_else(|| row.name.clone());
    repo::update_fields(
        &mut tx,
        id,
        &name,
        cultivar.as_deref(),
        planted_on,
        notes.as_deref(),
    )
    .await?;
    let row = load(&mut tx, id).await?;
    tx.commit().await?;
    resolve_now(state, tenant.id, row).await
}

// ---------- archive, place, substrate ----------

pub async fn archive_plant(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
    reason: ArchiveReason,
    commit: bool,
) -> Result<Plant, AppError> {
    let id = parse_plant_key(key)?;
    let mut tx = GardenTx::begin(state, tenant).await?;
    load_live(&mut tx, id, "the plant is archived already").await?;
    repo::archive(&mut tx, id, reason).await?;
    repo::close_placement(&mut tx, id, today()).await?;
    let row = load(&mut tx, id).await?;
    crate::garden::webhooks::events::emit(
        tx.inner(),
        tenant,
        "plant.archived",
        serde_json::json!({"key": id, "name": row.name, "reason": reason}),
    )
    .await?;
    tx.finish(commit).await?;
    resolve_now(state, tenant.id, row).await
}

pub async fn set_location(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
    body: &LocationBody,
    commit: bool,
) -> Result<Plant, AppError> {
    let id = parse_plant_key(key)?;
    let mut tx = GardenTx::begin(state, tenant).await?;
    let row = load_live(&mut tx, id, "an archived plant cannot be moved").await?;
    if let Some(site) = body.site_key
        && !places::site_exists(tx.inner(), site).await?
    {
        return Err(AppError::not_found("site"));
    }
    let target = target_of(&mut tx, body.location_key, body.slot_key)
        .await?
        .ok_or_else(|| AppError::not_found("location"))?;
    if let Some(site) = body.site_key
        && site != target.site_id
    {
        return Err(AppError::validation(vec![ErrorDetail::new(
            "body.location_key",
            "the location is in another site",
            "value_error",
        )]));
    }
    let new_slot = target.slot.as_ref().map(|s| s.slot_id);
    if new_slot.is_some() && new_slot == row.slot_id {
        return Err(AppError::validation(vec![ErrorDetail::new(
            "body.slot_key",
            "the plant stands in this slot already",
            "value_error",
        )]));
    }
    let mut placed = Placed::default();
    if new_slot.is_some() {
        let species = catalog::species_many(state, [row.species_key.clone()])
            .await?
            .remove(&row.species_key)
            .unwrap_or(SpeciesInfo {
                key: row.species_key.clone(),
                scientific_name: None,
                common_name: None,
                family_key: None,
            });
        placed = check_placement(
            state,
            &mut tx,
            &species,
            &target,
            Some(id),
            "body.slot_key",
            body.acknowledge(),
        )
        .await?;
        record_acknowledged(&mut tx, id, &placed).await?;
    }
    if row.slot_id != new_slot {
        repo::close_placement(&mut tx, id, today()).await?;
        if let Some(s) = new_slot {
            repo::open_placement(&mut tx, s, id, &row.species_key, today()).await?;
        }
    }
    repo::set_place(&mut tx, id, target.location_id, new_slot).await?;
    let row = load(&mut tx, id).await?;
    tx.finish(commit).await?;
    let mut plant = resolve_now(state, tenant.id, row).await?;
    plant.placement_warnings = placed.warnings;
    Ok(plant)
}

pub async fn set_substrate(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
    body: &SubstrateBody,
    commit: bool,
) -> Result<Plant, AppError> {
    let id = parse_plant_key(key)?;
    let mut tx = GardenTx::begin(state, tenant).await?;
    let row = load_live(&mut tx, id, "an archived plant cannot change substrate").await?;
    if let Some(b) = body.substrate_batch_key {
        places::assert_batch_usable(tx.inner(), b).await?;
    }
    if let Some(k) = &body.substrate_key
        && places::substrate(state, tx.inner(), k).await?.is_none()
    {
        return Err(AppError::not_found("substrate"));
    }
    // Partial: what is not named stays; a batch alone drops a substrate key that contradicts it.
    let batch = body.substrate_batch_key.or(row.substrate_batch_id);
    let substrate_key = match (&body.substrate_key, body.substrate_batch_key) {
        (Some(k), _) => Some(k.clone()),
        (None, Some(_)) => None,
        (None, None) => None,
    };
    repo::set_substrate(&mut tx, id, batch, substrate_key.as_deref()).await?;
    let row = load(&mut tx, id).await?;
    tx.finish(commit).await?;
    resolve_now(state, tenant.id, row).await
}

// ---------- phases ----------

/// The result of a transition: the plant after it, the move made and, for a forced move, the
/// warning kept in the history row.
#[derive(Debug, Clone)]
pub struct Transitioned {
    pub plant: Plant,
    pub from_phase_key: Option<String>,
    pub kind: pt::Move,
    pub warning: Option<String>,
}

/// Moves a plant to `body.target_phase_key` (a phase key of its species' sequence now);
/// `body.force` lets a backward move through with a warning. The plant row is locked first,
/// so of two simultaneous transitions the second sees the first's result.
pub async fn transition(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
    body: &TransitionBody,
    actor: &str,
    commit: bool,
) -> Result<Transitioned, AppError> {
    let target = body.target_phase_key.as_str();
    let id = parse_plant_key(key)?;
    let mut tx = GardenTx::begin(state, tenant).await?;
    let row = load_locked(&mut tx, id).await?;
    if row.archived_at.is_some() {
        tx.rollback().await?;
        return Err(AppError::new(
            ErrorCode::PhaseTransitionInvalid,
            "an archived plant does not change phase",
        ));
    }
    let Some(seq) = catalog::sequence_of(state, &row.species_key).await? else {
        tx.rollback().await?;
        return Err(AppError::new(
            ErrorCode::PhaseTransitionInvalid,
            "the plant's species is not in the catalogue: no phase sequence",
        ));
    };
    let decision = match decide(&row, &seq, target, body.force) {
        Ok(d) => d,
        Err(refused) => {
            tx.rollback().await?;
            let valid: Vec<String> = seq.entries.iter().map(|e| e.phase_key.clone()).collect();
            return Err(
                AppError::new(ErrorCode::PhaseTransitionInvalid, refused.message()).with_details(
                    vec![ErrorDetail::new(
                        "body.target_phase_key",
                        format!(
                            "{} (phases of {}: {})",
                            refused.message(),
                            seq.name,
                            valid.join(", ")
                        ),
                        ErrorCode::PhaseTransitionInvalid.as_str(),
                    )],
                ),
            );
        }
    };
    let entry = seq
        .entries
        .iter()
        .find(|e| e.phase_key == target)
        .ok_or_else(|| AppError::internal("decided target vanished"))?;
    let reason = body.reason.as_deref().unwrap_or("manual");
    let warning = (decision.kind == pt::Move::Forced).then(|| {
        let from = row
            .current_phase_key
            .as_deref()
            .and_then(|k| seq.entries.iter().find(|e| e.phase_key == k))
            .map_or(decision.target_order, |e| e.order);
        pt::forced_warning(from, decision.target_order)
    });
    repo::enter_phase(
        &mut tx,
        &repo::Enter {
            plant_id: id,
            phase_key: &entry.phase_key,
            phase_name: &entry.phase_name,
            sequence_key: &seq.key,
            cycle: decision.cycle,
            reason,
            actor,
            warning: warning.as_deref(),
        },
    )
    .await?;
    let from = row.current_phase_key.clone();
    let row = load(&mut tx, id).await?;
    crate::garden::webhooks::events::emit(
        tx.inner(),
        tenant,
        "plant.phase_changed",
        serde_json::json!({
            "key": id,
            "name": row.name,
            "from_phase_key": from,
            "phase_key": entry.phase_key,
            "forced": decision.kind == pt::Move::Forced,
        }),
    )
    .await?;
    tx.finish(commit).await?;
    Ok(Transitioned {
        plant: resolve_now(state, tenant.id, row).await?,
        from_phase_key: from,
        kind: decision.kind,
        warning,
    })
}

/// 404 unless the named site, location and slot exist in this garden (a key of another garden
/// finds nothing here).
pub async fn check_places(
    state: &AppState,
    tenant: &TenantRecord,
    site: Option<Uuid>,
    location: Option<Uuid>,
    slot: Option<Uuid>,
) -> Result<(), AppError> {
    let mut tx = GardenTx::read(state, tenant).await?;
    if let Some(s) = site
        && !places::site_exists(tx.inner(), s).await?
    {
        return Err(AppError::not_found("site"));
    }
    if let Some(l) = location {
        places::placement_target(tx.inner(), l, None).await?;
    }
    if let Some(s) = slot {
        places::slot_location(tx.inner(), s).await?;
    }
    tx.rollback().await?;
    Ok(())
}
