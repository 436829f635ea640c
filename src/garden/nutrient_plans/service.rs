//! Use cases of nutrient plans, shared by the REST routes and the MCP tools; and
//! [`current_phase_targets`] (the contract of `garden::contracts`), which a plant's
//! diagnostics calls inside its own transaction.
//!
//! Plan weeks count from the plant's start (planted_on, else the day it was recorded): week 1
//! is its first week. The entry that applies to a plant now is the one whose phase name is the
//! plant's current phase (coarse, `rules::plan_coverage::coarse_phase`) and whose window holds
//! the week; else the entry of that phase nearest the week; a plant without a phase takes the
//! entry whose window holds the week. A plant in a phase the plan does not name gets no
//! targets: feeding it from whatever entry the calendar week matches is the silent mistake
//! domain 2.16 warns about. A plant in a rest phase is not fed (the mixing protocol's rule,
//! `rules::mixing_protocol::is_rest_phase`, with its source): its targets are EC 0 with the
//! reason, whatever an entry copied before the rule says.

use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::{Map, Value};
use time::OffsetDateTime;
use uuid::Uuid;

use super::model::{
    AssignTarget, Assignment, CurrentTargets, NewPlan, Npk, NutrientPlan, Nutrients, Owner,
    PLAN_BODY, PlanPhase, PlanProduct, PlanSummary, PlantCoverage, PlantPlan, TENANT_PREFIX,
    TargetsPatch,
};
use super::repo::{self, PlantFacts};
use crate::catalog::engine::repo as catalog_repo;
use crate::catalog::engine::service as catalog;
use crate::error::{AppError, ErrorCode, ErrorDetail};
use crate::garden::contracts::PhaseTargets;
use crate::garden::fertilizers::service as fertilizers;
use crate::rules::mixing_protocol::{is_rest_phase, rest_phase_reason};
use crate::rules::names::normalise;
use crate::rules::plan_coverage::{self, PlanEntry, coarse_phase};
use crate::state::AppState;
use crate::tenancy::{TenantRecord, TenantTx};
use crate::values::page::{Page, PageRequest};

// ---------------------------------------------------------------------------------------------
// Templates.

const TEMPLATES_JSON: &str = include_str!("../../catalog/seed/data/nutrient_plans.json");

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TemplateFile {
    key: String,
    name: String,
    culture: String,
    description: String,
    recommended_substrate_type: String,
    reference_substrate_type: String,
    tags: Vec<String>,
    phases: Vec<TemplatePhase>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TemplatePhase {
    phase_name: String,
    sequence_order: i32,
    week_start: i32,
    week_end: i32,
    target_ec_ms: Option<f64>,
    reference_ec_ms: Option<f64>,
    ph_min: Option<f64>,
    ph_max: Option<f64>,
    npk_ratio: Option<Npk>,
    nutrients: Option<Nutrients>,
    #[serde(default)]
    products: Vec<TemplateProduct>,
    notes: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TemplateProduct {
    product_name: String,
    ml_per_liter: f64,
}

fn parse_templates(text: &str) -> Result<Vec<NutrientPlan>, serde_json::Error> {
    let files: Vec<TemplateFile> = serde_json::from_str(text)?;
    Ok(files
        .into_iter()
        .map(|t| NutrientPlan {
            phases: t
                .phases
                .into_iter()
                .map(|p| PlanPhase {
                    key: format!("{}:{}", t.key, p.sequence_order),
                    phase_name: p.phase_name,
                    sequence_order: p.sequence_order,
                    week_start: p.week_start,
                    week_end: p.week_end,
                    target_ec_ms: p.target_ec_ms,
                    reference_ec_ms: p.reference_ec_ms,
                    ph_min: p.ph_min,
                    ph_max: p.ph_max,
                    npk_ratio: p.npk_ratio,
                    nutrients: p.nutrients,
                    products: p
                        .products
                        .into_iter()
                        .map(|pr| PlanProduct {
                            fertilizer_key: None,
                            product_name: pr.product_name,
                            ml_per_liter: pr.ml_per_liter,
                        })
                        .collect(),
                    notes: p.notes,
                })
                .collect(),
            key: t.key,
            owner: Owner::Global,
            name: t.name,
            description: Some(t.description),
            culture: Some(t.culture),
            recommended_substrate_type: Some(t.recommended_substrate_type),
            reference_substrate_type: t.reference_substrate_type,
            tags: t.tags,
            cloned_from_key: None,
            version: 1,
        })
        .collect())
}

/// The global templates (compiled in; a unit test proves the file parses and is valid).
pub fn templates() -> &'static [NutrientPlan] {
    static T: OnceLock<Vec<NutrientPlan>> = OnceLock::new();
    T.get_or_init(|| {
        parse_templates(TEMPLATES_JSON).unwrap_or_else(|e| {
            tracing::error!(error = %e, "the nutrient plan templates do not parse");
            Vec::new()
        })
    })
}

fn template(key: &str) -> Option<&'static NutrientPlan> {
    templates().iter().find(|t| t.key == key)
}

/// A template with its products' keys resolved against the global fertiliser catalogue by
/// name (null for a product the catalogue does not hold).
async fn with_product_keys(state: &AppState, t: &NutrientPlan) -> Result<NutrientPlan, AppError> {
    let mut db = state.platform_pool().acquire().await?;
    let names = catalog_repo::names(&mut db, "fertilizer").await?;
    let mut plan = t.clone();
    for phase in &mut plan.phases {
        for p in &mut phase.products {
            let norm = normalise(&p.product_name);
            p.fertilizer_key = names
                .iter()
                .find(|(n, _)| *n == norm)
                .map(|(_, id)| id.to_string());
        }
    }
    Ok(plan)
}

// ---------------------------------------------------------------------------------------------
// Reads.

/// A plan key in this garden's scope.
#[derive(Debug, Clone, Copy)]
enum PlanKey<'a> {
    Template(&'static NutrientPlan),
    Own(Uuid),
    #[allow(dead_code)]
    Unknown(&'a str),
}

fn parse_plan_key(key: &str) -> PlanKey<'_> {
    if let Some(own) = key.strip_prefix(TENANT_PREFIX) {
        return match Uuid::parse_str(own) {
            Ok(id) => PlanKey::Own(id),
            Err(_) => PlanKey::Unknown(key),
        };
    }
    match template(key) {
        Some(t) => PlanKey::Template(t),
        None => PlanKey::Unknown(key),
    }
}

fn plan_not_found() -> AppError {
    AppError::not_found("nutrient plan")
}

/// A plan of this garden's scope (template or own), products unresolved for templates.
async fn load_plan(tx: &mut TenantTx, key: &str) -> Result<Option<NutrientPlan>, AppError> {
    Ok(match parse_plan_key(key) {
        PlanKey::Template(t) => Some(t.clone()),
        PlanKey::Own(id) => repo::get_plan(tx, id).await?,
        PlanKey::Unknown(_) => None,
    })
}

/// Which plans a listing shows.
#[derive(Debug, Clone, Default)]
pub struct Query {
    /// Part of the name, culture or a tag.
    pub q: Option<String>,
    pub owner: Option<Owner>,
}

fn matches(p: &NutrientPlan, q: Option<&str>) -> bool {
    let Some(q) = q else { return true };
    let q = q.to_lowercase();
    p.name.to_lowercase().contains(&q)
        || p.culture.as_deref().is_some_and(|c| c.contains(&q))
        || p.tags.iter().any(|t| t.contains(&q))
}

/// Templates first (file order), then the garden's own (by name), paged as one list.
pub async fn list_plans(
    state: &AppState,
    tenant: &TenantRecord,
    query: &Query,
    page: PageRequest,
) -> Result<Page<PlanSummary>, AppError> {
    let q = query.q.as_deref().map(str::trim).filter(|q| !q.is_empty());
    let mut all: Vec<PlanSummary> = Vec::new();
    if query.owner != Some(Owner::Garden) {
        all.extend(
            templates()
                .iter()
                .filter(|t| matches(t, q))
                .map(NutrientPlan::summary),
        );
    }
    if query.owner != Some(Owner::Global) {
        let mut tx = TenantTx::snapshot(state, tenant).await?;
        let own = repo::list_plans(&mut tx).await?;
        tx.commit().await?;
        all.extend(
            own.iter()
                .filter(|p| matches(p, q))
                .map(NutrientPlan::summary),
        );
    }
    let total = i64::try_from(all.len()).unwrap_or(i64::MAX);
    let items = all
        .into_iter()
        .skip(usize::try_from(page.skip).unwrap_or(usize::MAX))
        .take(usize::try_from(page.limit).unwrap_or(0))
        .collect();
    Ok(Page::new(items, total, page))
}

pub async fn get_plan(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
) -> Result<NutrientPlan, AppError> {
    if let PlanKey::Template(t) = parse_plan_key(key) {
        return with_product_keys(state, t).await;
    }
    let mut tx = TenantTx::read(state, tenant).await?;
    let plan = load_plan(&mut tx, key).await?;
    tx.commit().await?;
    plan.ok_or_else(plan_not_found)
}

// ---------------------------------------------------------------------------------------------
// Writes.

fn validation_at(field: String, reason: impl Into<String>) -> AppError {
    AppError::validation(vec![ErrorDetail::new(field, reason, "value_error")])
}

/// Creates one of the garden's own plans. Every product must be a global fertiliser or one of
/// the garden's own (404 with the field otherwise). `write: false` checks everything and
/// stores nothing (a tool's dry run).
pub async fn create_plan(
    state: &AppState,
    tenant: &TenantRecord,
    body: Map<String, Value>,
    write: bool,
) -> Result<NutrientPlan, AppError> {
    let doc = catalog::check_new(&PLAN_BODY, body)?;
    let new: NewPlan = serde_json::from_value(Value::Object(doc))
        .map_err(|e| AppError::internal(format!("a checked plan body does not decode: {e}")))?;
    let mut tx = TenantTx::begin(state, tenant).await?;
    let mut phases = Vec::with_capacity(new.phases.len());
    for (i, p) in new.phases.iter().enumerate() {
        let mut products = Vec::with_capacity(p.products.len());
        for (j, prod) in p.products.iter().enumerate() {
            let Some(found) = fertilizers::resolve(state, &mut tx, &prod.fertilizer_key).await?
            else {
                return Err(AppError::not_found("fertiliser").with_details(vec![
                    ErrorDetail::new(
                        format!("body.phases[{i}].products[{j}].fertilizer_key"),
                        "no such fertiliser in this garden (global or its own)",
                        "not_found",
                    ),
                ]));
            };
            products.push(PlanProduct {
                fertilizer_key: Some(found.key().to_owned()),
                product_name: found.name().to_owned(),
                ml_per_liter: prod.ml_per_liter,
            });
        }
        phases.push(PlanPhase {
            key: String::new(),
            phase_name: p.phase_name.clone(),
            sequence_order: p
                .sequence_order
                .unwrap_or_else(|| i32::try_from(i + 1).unwrap_or(1)),
            week_start: p.week_start,
            week_end: p.week_end,
            target_ec_ms: p.target_ec_ms,
            reference_ec_ms: p.reference_ec_ms,
            ph_min: p.ph_min,
            ph_max: p.ph_max,
            npk_ratio: p.npk_ratio.clone(),
            nutrients: p.nutrients.clone(),
            products,
            notes: p.notes.clone(),
        });
    }
    let plan = NutrientPlan {
        key: String::new(),
        owner: Owner::Garden,
        name: new.name.clone(),
        description: new.description.clone(),
        culture: None,
        recommended_substrate_type: new.recommended_substrate_type.clone(),
        reference_substrate_type: new
            .reference_substrate_type
            .clone()
            .unwrap_or_else(|| "soil".to_owned()),
        tags: new.tags.iter().map(|t| t.to_lowercase()).collect(),
        cloned_from_key: None,
        version: 1,
        phases,
    };
    store(tx, plan, write).await
}

/// Inserts a plan and answers it as stored (or, when not writing, as it would be).
async fn store(
    mut tx: TenantTx,
    plan: NutrientPlan,
    write: bool,
) -> Result<NutrientPlan, AppError> {
    if repo::name_taken(&mut tx, &plan.name).await? {
        return Err(AppError::duplicate(format!(
            "a nutrient plan named {:?} exists in this garden",
            plan.name
        )));
    }
    let Some(id) = repo::insert_plan(&mut tx, &plan).await? else {
        return Err(AppError::duplicate(format!(
            "a nutrient plan named {:?} exists in this garden",
            plan.name
        )));
    };
    let stored = repo::get_plan(&mut tx, id)
        .await?
        .ok_or_else(|| AppError::internal("a stored plan is gone"))?;
    if write {
        tx.commit().await?;
        Ok(stored)
    } else {
        tx.rollback().await?;
        // Nothing was written: the answer carries no key.
        let mut preview = stored;
        preview.key = String::new();
        for p in &mut preview.phases {
            p.key = String::new();
        }
        Ok(preview)
    }
}

pub async fn delete_plan(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
) -> Result<(), AppError> {
    match parse_plan_key(key) {
        PlanKey::Template(_) => Err(AppError::new(
            ErrorCode::Forbidden,
            "global nutrient plan templates cannot be deleted",
        )),
        PlanKey::Unknown(_) => Err(plan_not_found()),
        PlanKey::Own(id) => {
            let mut tx = TenantTx::begin(state, tenant).await?;
            if !repo::delete_plan(&mut tx, id).await? {
                return Err(plan_not_found());
            }
            tx.commit().await?;
            Ok(())
        }
    }
}

/// Copies a template or an own plan into a plan the garden owns (`cloned_from_key` set; the
/// source is untouched). Default name "<source> (copy)", numbered when taken; a given name
/// that is taken is a 409.
pub async fn clone_plan(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
    name: Option<String>,
    write: bool,
) -> Result<NutrientPlan, AppError> {
    let source = match parse_plan_key(key) {
        PlanKey::Template(t) => Some(with_product_keys(state, t).await?),
        _ => None,
    };
    let mut tx = TenantTx::begin(state, tenant).await?;
    let source = match source {
        Some(s) => s,
        None => load_plan(&mut tx, key).await?.ok_or_else(plan_not_found)?,
    };
    let name = match name {
        Some(n) => n,
        None => {
            let mut candidate = copy_name(&source.name, " (copy)");
            let mut n = 2;
            while repo::name_taken(&mut tx, &candidate).await? {
                candidate = copy_name(&source.name, &format!(" (copy {n})"));
                n += 1;
            }
            candidate
        }
    };
    let mut copy = source.clone();
    copy.name = name;
    copy.owner = Owner::Garden;
    copy.cloned_from_key = Some(source.key.clone());
    copy.version = 1;
    store(tx, copy, write).await
}

/// The default name of a copy: the source's name and the suffix, the name shortened so the
/// whole stays within the name limit (a client that sent no name never hears about its length).
fn copy_name(source: &str, suffix: &str) -> String {
    let room = super::model::NAME_MAX.saturating_sub(suffix.chars().count());
    let base: String = source.chars().take(room).collect();
    format!("{}{suffix}", base.trim_end())
}

/// The phase entry of a plan named by entry key or (unambiguous) phase name.
fn find_phase<'p>(
    plan: &'p NutrientPlan,
    phase: &str,
    field: &str,
) -> Result<&'p PlanPhase, AppError> {
    if let Some(p) = plan.phases.iter().find(|p| p.key == phase) {
        return Ok(p);
    }
    let named: Vec<&PlanPhase> = plan
        .phases
        .iter()
        .filter(|p| p.phase_name == phase.to_lowercase())
        .collect();
    match named.as_slice() {
        [one] => Ok(one),
        [] => Err(
            AppError::not_found("phase entry").with_details(vec![ErrorDetail::new(
                field,
                format!(
                    "the plan has no phase entry with this key or name; its entries: {}",
                    plan.phases
                        .iter()
                        .map(|p| format!("{} ({})", p.key, p.phase_name))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                "not_found",
            )]),
        ),
        many => Err(validation_at(
            field.to_owned(),
            format!(
                "{} entries are named {phase}; name one by its key: {}",
                many.len(),
                many.iter()
                    .map(|p| p.key.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}

/// Sets `target_ec_ms` and/or `reference_ec_ms` of one phase of a plan the garden owns. A
/// template is 403 naming the clone operation; a plan of another garden is 404.
pub async fn set_phase_targets(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
    patch: &TargetsPatch,
    field_prefix: &str,
    write: bool,
) -> Result<NutrientPlan, AppError> {
    let id = match parse_plan_key(key) {
        PlanKey::Template(t) => {
            return Err(AppError::new(
                ErrorCode::Forbidden,
                format!(
                    "{:?} is a global template and cannot be edited; clone it first \
                     (POST /nutrient-plans/{}/clone, or the tool clone_nutrient_plan) and set \
                     the targets on the copy",
                    t.name, t.key
                ),
            ));
        }
        PlanKey::Unknown(_) => return Err(plan_not_found()),
        PlanKey::Own(id) => id,
    };
    let mut tx = TenantTx::begin(state, tenant).await?;
    if !repo::lock_plan(&mut tx, id).await? {
        return Err(plan_not_found());
    }
    let plan = repo::get_plan(&mut tx, id)
        .await?
        .ok_or_else(plan_not_found)?;
    if patch.target_ec_ms.is_none() && patch.reference_ec_ms.is_none() {
        return Err(AppError::validation(vec![ErrorDetail::new(
            format!("{field_prefix}target_ec_ms"),
            "send target_ec_ms and/or reference_ec_ms: an empty patch changes nothing",
            "missing",
        )]));
    }
    let phase = find_phase(&plan, &patch.phase, &format!("{field_prefix}phase"))?;
    if let Some(problem) = plan_coverage::rest_entry_fed(
        &phase.phase_name,
        patch.target_ec_ms,
        0,
        &format!("{field_prefix}target_ec_ms"),
    ) {
        return Err(AppError::validation(vec![ErrorDetail::new(
            problem.field,
            problem.reason,
            "value_error",
        )]));
    }
    let phase_id = Uuid::parse_str(&phase.key)
        .map_err(|_| AppError::internal("an own phase entry has no UUID key"))?;
    repo::set_targets(
        &mut tx,
        id,
        phase_id,
        patch.target_ec_ms,
        patch.reference_ec_ms,
    )
    .await?;
    let updated = repo::get_plan(&mut tx, id)
        .await?
        .ok_or_else(plan_not_found)?;
    if write {
        tx.commit().await?;
    } else {
        tx.rollback().await?;
    }
    Ok(updated)
}

/// Assigns a plan (template or own) to a plant or a run, replacing the one it had.
pub async fn assign(
    state: &AppState,
    tenant: &TenantRecord,
    plan_key: &str,
    target: &AssignTarget,
    write: bool,
) -> Result<Assignment, AppError> {
    let mut tx = TenantTx::begin(state, tenant).await?;
    let plan = load_plan(&mut tx, plan_key)
        .await?
        .ok_or_else(plan_not_found)?;
    if let Some(id) = target.plant {
        let facts = repo::plant_facts(&mut tx, id)
            .await?
            .ok_or_else(|| AppError::not_found("plant"))?;
        if facts.archived && target.run.is_none() {
            return Err(AppError::new(
                ErrorCode::StateConflict,
                "the plant is archived: an archived plant follows no plan",
            ));
        }
    }
    if let Some(id) = target.run
        && !repo::run_exists(&mut tx, id).await?
    {
        return Err(AppError::not_found("planting run"));
    }
    let (plant, run) = match (target.plant, target.run) {
        (Some(p), None) => (Some(p), None),
        (None, Some(r)) => (None, Some(r)),
        _ => {
            return Err(validation_at(
                format!("{}plant_key", target.field_prefix),
                "give exactly one of plant_key and run_key",
            ));
        }
    };
    let replaced = repo::assign(&mut tx, plant, run, &plan.key).await?;
    if write {
        tx.commit().await?;
    } else {
        tx.rollback().await?;
    }
    Ok(Assignment {
        plan_key: plan.key,
        plan_name: plan.name,
        plant_key: plant,
        run_key: run,
        replaced_plan_key: replaced,
    })
}

// ---------------------------------------------------------------------------------------------
// The plan of a plant.

fn plan_week(facts: &PlantFacts, today: time::Date) -> i32 {
    let days = (today - facts.start).whole_days().max(0);
    i32::try_from(days / 7 + 1).unwrap_or(i32::MAX)
}

/// The entry for a plant's coarse phase and week (see the module comment).
fn entry_for<'p>(plan: &'p NutrientPlan, phase: Option<&str>, week: i32) -> Option<&'p PlanPhase> {
    let holds = |p: &&PlanPhase| p.week_start <= week && week <= p.week_end;
    match phase {
        Some(phase) => {
            let named: Vec<&PlanPhase> = plan
                .phases
                .iter()
                .filter(|p| p.phase_name == phase)
                .collect();
            named.iter().copied().find(holds).or_else(|| {
                named.into_iter().min_by_key(|p| {
                    if week < p.week_start {
                        p.week_start - week
                    } else {
                        week - p.week_end
                    }
                })
            })
        }
        None => plan.phases.iter().find(holds),
    }
}

fn source_of(facts: &PlantFacts) -> Option<(&'static str, &str)> {
    facts
        .plant_plan
        .as_deref()
        .map(|k| ("plant", k))
        .or_else(|| facts.run_plan.as_deref().map(|k| ("run", k)))
}

/// The plant is in a rest phase, which is not fed (`rules::mixing_protocol::is_rest_phase`,
/// the mixing protocol's rule): an entry's EC does not apply (a plan copied before the rule
/// may still carry one).
fn at_rest(facts: &PlantFacts) -> bool {
    facts.phase_name.as_deref().is_some_and(is_rest_phase)
}

fn coarse_of(facts: &PlantFacts) -> Option<&'static str> {
    facts.phase_name.as_deref().and_then(coarse_phase)
}

/// The contract of `garden::contracts`: the targets that apply to a plant today (the plan
/// assigned to the plant, else its run's; the entry for its current phase and week), `None`
/// when it follows no plan or no entry fits. An unknown plant is 404.
pub async fn current_phase_targets(
    tx: &mut TenantTx,
    plant_id: Uuid,
) -> Result<Option<PhaseTargets>, AppError> {
    let facts = repo::plant_facts(tx, plant_id)
        .await?
        .ok_or_else(|| AppError::not_found("plant"))?;
    let Some((source, key)) = source_of(&facts) else {
        return Ok(None);
    };
    let Some(plan) = load_plan(tx, key).await? else {
        return Ok(None);
    };
    let week = plan_week(&facts, OffsetDateTime::now_utc().date());
    let rest = at_rest(&facts);
    Ok(
        entry_for(&plan, coarse_of(&facts), week).map(|e| PhaseTargets {
            plan_key: plan.key.clone(),
            plan_name: plan.name.clone(),
            source,
            phase_key: e.key.clone(),
            target_ec_ms: if rest { Some(0.0) } else { e.target_ec_ms },
            reference_ec_ms: if rest { Some(0.0) } else { e.reference_ec_ms },
            ph_min: e.ph_min,
            ph_max: e.ph_max,
            rest_phase: rest,
        }),
    )
}

fn parse_plant(key: &str) -> Result<Uuid, AppError> {
    Uuid::parse_str(key).map_err(|_| AppError::not_found("plant"))
}

/// The plan that applies to a plant, with the entry for now.
pub async fn plant_plan(
    state: &AppState,
    tenant: &TenantRecord,
    plant_key: &str,
) -> Result<PlantPlan, AppError> {
    let id = parse_plant(plant_key)?;
    let mut tx = TenantTx::snapshot(state, tenant).await?;
    let facts = repo::plant_facts(&mut tx, id)
        .await?
        .ok_or_else(|| AppError::not_found("plant"))?;
    let (source, plan) = match source_of(&facts) {
        Some((s, key)) => (Some(s), load_plan(&mut tx, key).await?),
        None => (None, None),
    };
    tx.commit().await?;
    let plan = match plan {
        Some(p) if p.owner == Owner::Global => Some(with_product_keys(state, &p).await?),
        p => p,
    };
    let week = plan_week(&facts, OffsetDateTime::now_utc().date());
    let rest = at_rest(&facts);
    let current = plan.as_ref().and_then(|p| {
        entry_for(p, coarse_of(&facts), week).map(|e| CurrentTargets {
            plan_key: p.key.clone(),
            plan_name: p.name.clone(),
            source: source.unwrap_or("plant").to_owned(),
            phase_key: e.key.clone(),
            phase_name: e.phase_name.clone(),
            week,
            target_ec_ms: if rest { Some(0.0) } else { e.target_ec_ms },
            reference_ec_ms: if rest { Some(0.0) } else { e.reference_ec_ms },
            ph_min: e.ph_min,
            ph_max: e.ph_max,
            not_fed_reason: rest.then(rest_phase_reason),
        })
    });
    Ok(PlantPlan {
        plant_key: id,
        source: plan.as_ref().and(source).map(str::to_owned),
        run_key: facts.run_id,
        plan,
        current,
    })
}

fn entries_of(plan: &NutrientPlan) -> Vec<PlanEntry> {
    plan.phases
        .iter()
        .map(|p| PlanEntry {
            key: p.key.clone(),
            phase_name: p.phase_name.clone(),
            week_start: u32::try_from(p.week_start).unwrap_or(0),
            week_end: u32::try_from(p.week_end).unwrap_or(0),
            target_ec_ms: p.target_ec_ms,
        })
        .collect()
}

/// Coverage of the plan a plant follows against its species' sequence (domain 2.16).
pub async fn plant_coverage(
    state: &AppState,
    tenant: &TenantRecord,
    plant_key: &str,
) -> Result<PlantCoverage, AppError> {
    let id = parse_plant(plant_key)?;
    let mut tx = TenantTx::snapshot(state, tenant).await?;
    let facts = repo::plant_facts(&mut tx, id)
        .await?
        .ok_or_else(|| AppError::not_found("plant"))?;
    let (source, plan) = match source_of(&facts) {
        Some((s, key)) => (Some(s), load_plan(&mut tx, key).await?),
        None => (None, None),
    };
    tx.commit().await?;
    let sequence = crate::garden::plants::catalog::sequence_of(state, &facts.species_key).await?;
    let mut sequence_phases: Vec<String> = Vec::new();
    for e in sequence.iter().flat_map(|s| s.entries.iter()) {
        if let Some(c) = coarse_phase(&e.phase_name)
            && !sequence_phases.iter().any(|p| p == c)
        {
            sequence_phases.push(c.to_owned());
        }
    }
    let entries = plan.as_ref().map(entries_of).unwrap_or_default();
    let coverage = plan_coverage::coverage(&entries, &sequence_phases);
    let current_phase = coarse_of(&facts).map(str::to_owned);
    let covered = match (&plan, &current_phase) {
        (Some(p), Some(c)) => Some(p.phases.iter().any(|e| &e.phase_name == c)),
        _ => None,
    };
    Ok(PlantCoverage {
        plant_key: id,
        plan_is_global_template: plan.as_ref().is_some_and(|p| p.owner == Owner::Global),
        plan: plan.as_ref().map(NutrientPlan::summary),
        source: plan.as_ref().and(source).map(str::to_owned),
        sequence_key: sequence.map(|s| s.key),
        current_phase,
        current_phase_covered_by_name: covered,
        coverage,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::engine::fields::{Mode, check_object};

    /// A default copy name fits the limit whatever the source's length.
    #[test]
    fn copy_names_stay_within_the_limit() {
        assert_eq!(copy_name("Tomato", " (copy)"), "Tomato (copy)");
        let long = "x".repeat(super::super::model::NAME_MAX);
        let copy = copy_name(&long, " (copy 12)");
        assert_eq!(copy.chars().count(), super::super::model::NAME_MAX);
        assert!(copy.ends_with("x (copy 12)"));
        // Trailing blanks of the cut are dropped, not kept before the suffix.
        let spaced = format!("{} tail", "y".repeat(192));
        assert_eq!(
            copy_name(&spaced, " (copy)"),
            format!("{} (copy)", "y".repeat(192))
        );
    }

    /// Every template parses, passes the body's field table and rules, has contiguous week
    /// windows (no gap, no overlap) and names only products of the global seed.
    #[test]
    fn templates_are_valid_and_contiguous() {
        let plans = parse_templates(TEMPLATES_JSON).expect("templates parse");
        assert!(plans.len() >= 10, "at least 10 templates");
        let seed: Vec<Value> =
            serde_json::from_str(include_str!("../../catalog/seed/data/fertilizers.json"))
                .expect("fertilizers");
        let names: Vec<&str> = seed.iter().filter_map(|f| f["name"].as_str()).collect();
        for cult in [
            "tomato",
            "chili",
            "short_day_cannabis_type",
            "herbs",
            "leafy_greens",
            "houseplants",
            "succulents",
            "orchids",
            "citrus",
            "outdoor_bed",
        ] {
            assert!(
                plans.iter().any(|p| p.culture.as_deref() == Some(cult)),
                "a template for {cult}"
            );
        }
        for p in &plans {
            let mut body = serde_json::to_value(p).expect("json");
            let m = body.as_object_mut().expect("object");
            for extra in ["key", "owner", "culture", "cloned_from_key", "version"] {
                m.remove(extra);
            }
            for ph in m["phases"].as_array_mut().expect("phases") {
                let o = ph.as_object_mut().expect("phase");
                o.remove("key");
                for pr in o["products"].as_array_mut().expect("products") {
                    let name = pr["product_name"].as_str().expect("name").to_owned();
                    assert!(
                        names.contains(&name.as_str()),
                        "{}: {name} not seeded",
                        p.key
                    );
                    *pr = serde_json::json!({"fertilizer_key": name, "ml_per_liter": pr["ml_per_liter"]});
                }
                o.retain(|_, v| !v.is_null());
            }
            let mut errors = Vec::new();
            let doc = check_object(
                PLAN_BODY.fields,
                m.clone(),
                Mode::Create,
                "body.",
                &mut errors,
            );
            (PLAN_BODY.rules)(&doc, &mut errors);
            assert!(errors.is_empty(), "{}: {errors:?}", p.key);
            let c = plan_coverage::coverage(&entries_of(p), &[]);
            assert!(c.issues.is_empty(), "{}: {:?}", p.key, c.issues);
            for ph in &p.phases {
                let ec = ph
                    .target_ec_ms
                    .expect("every template phase has a target EC");
                assert!((0.0..=3.0).contains(&ec), "{}: EC {ec}", p.key);
            }
        }
    }

    fn plan(phases: &[(&str, i32, i32)]) -> NutrientPlan {
        let mut p = templates()[0].clone();
        p.phases = phases
            .iter()
            .enumerate()
            .map(|(i, (name, s, e))| PlanPhase {
                key: format!("e{i}"),
                phase_name: (*name).into(),
                sequence_order: i32::try_from(i + 1).unwrap_or(1),
                week_start: *s,
                week_end: *e,
                target_ec_ms: Some(1.0),
                reference_ec_ms: None,
                ph_min: None,
                ph_max: None,
                npk_ratio: None,
                nutrients: None,
                products: Vec::new(),
                notes: None,
            })
            .collect();
        p
    }

    /// seedling W1–3, vegetative W4–7, flowering W8–20.
    #[test]
    fn entry_for_phase_and_week() {
        let p = plan(&[
            ("seedling", 1, 3),
            ("vegetative", 4, 7),
            ("flowering", 8, 20),
        ]);
        let key = |phase, week| entry_for(&p, phase, week).map(|e| e.key.clone());
        // Name and window agree.
        assert_eq!(key(Some("vegetative"), 5).as_deref(), Some("e1"));
        // Flowering early (week 6): the flowering entry, not the vegetative one the week matches.
        assert_eq!(key(Some("flowering"), 6).as_deref(), Some("e2"));
        // A phase the plan does not name: nothing (never the calendar week's entry).
        assert_eq!(key(Some("dormancy"), 5), None);
        // No phase: the window decides.
        assert_eq!(key(None, 9).as_deref(), Some("e2"));
        assert_eq!(key(None, 30), None);
    }

    /// Planted 2026-01-01: on Jan 1–7 week 1, on Jan 8 week 2, on Jan 29 (28 days) week 5.
    #[test]
    fn plan_weeks_count_from_the_start() {
        let start = time::macros::date!(2026 - 01 - 01);
        let facts = PlantFacts {
            id: Uuid::nil(),
            species_key: String::new(),
            start,
            archived: false,
            phase_name: None,
            run_id: None,
            plant_plan: None,
            run_plan: None,
        };
        assert_eq!(plan_week(&facts, start), 1);
        assert_eq!(plan_week(&facts, time::macros::date!(2026 - 01 - 07)), 1);
        assert_eq!(plan_week(&facts, time::macros::date!(2026 - 01 - 08)), 2);
        assert_eq!(plan_week(&facts, time::macros::date!(2026 - 01 - 29)), 5);
    }
}
