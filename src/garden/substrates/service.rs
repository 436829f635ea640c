//! Use cases of substrates (global and the garden's own), mixes and substrate batches, shared
//! by the REST routes and the MCP tools; and `assert_batch_usable`, which the plants capability
//! calls inside its own transaction.

use std::collections::HashMap;

use serde_json::Value;
use time::OffsetDateTime;
use uuid::Uuid;

use super::model::{
    BatchPatch, MixComponent, MixPreview, MixRequest, NewBatch, NewMix, NewSubstrate, StoredProps,
    Substrate, SubstrateBatch, SubstratePatch, SubstrateScope, TENANT_PREFIX,
};
use super::repo::{self, BatchReuseFacts};
use crate::catalog::engine::service::{self as catalog, ListParams};
use crate::catalog::substrates::model::SUBSTRATE;
use crate::error::{AppError, ErrorCode, ErrorDetail};
use crate::rules::substrate_mix::{self, Component, SubstrateProps};
use crate::rules::substrate_reuse::{self, BatchFacts, Reusability, SubstrateFacts};
use crate::state::AppState;
use crate::tenancy::{TenantRecord, TenantTx};
use crate::values::page::{Page, PageRequest};

pub const LIST_MAX_LIMIT: i64 = 200;

/// Which substrates a listing shows.
#[derive(Debug, Clone, Default)]
pub struct SubstrateQuery {
    /// Part of the name (English or German) or brand.
    pub q: Option<String>,
    /// Only global or only the garden's own.
    pub scope: Option<SubstrateScope>,
    pub substrate_type: Option<String>,
}

fn exhausted(reason: impl Into<String>, details: Vec<ErrorDetail>) -> AppError {
    AppError::new(ErrorCode::SubstrateExhausted, reason.into()).with_details(details)
}

fn issue_details(issues: &[String]) -> Vec<ErrorDetail> {
    issues
        .iter()
        .map(|i| ErrorDetail::new("batch", i.clone(), "SUBSTRATE_EXHAUSTED"))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The placement contract.

/// Whether plants may go into a batch now (domain 2.4, as `rules::substrate_reuse` reads it
/// for a running cycle): 404 for an unknown batch, 422 `SUBSTRATE_EXHAUSTED` for a batch past
/// its reuse limit. The batch row stays locked until the caller's transaction ends.
pub async fn assert_batch_usable(tx: &mut TenantTx, batch_id: Uuid) -> Result<(), AppError> {
    if !repo::lock_batch(tx, batch_id).await? {
        return Err(AppError::not_found("substrate batch"));
    }
    let batch = repo::get_batch(tx, batch_id)
        .await?
        .ok_or_else(|| AppError::not_found("substrate batch"))?;
    substrate_reuse::usable_for_placement(facts(&batch), batch.cycles_used).map_err(|reason| {
        exhausted(
            format!("batch {} cannot take plants: {reason}", batch.label),
            issue_details(std::slice::from_ref(&reason)),
        )
    })
}

fn facts(batch: &SubstrateBatch) -> SubstrateFacts<'_> {
    SubstrateFacts {
        substrate_type: &batch.substrate_type,
        reusable: batch.reusable,
        max_reuse_cycles: batch.max_reuse_cycles,
        ec_base_ms: batch.ec_base_ms,
    }
}

// ---------------------------------------------------------------------------------------------
// Substrates.

fn text(v: &Value, name: &str) -> Option<String> {
    v.get(name).and_then(Value::as_str).map(str::to_owned)
}

fn num(v: &Value, name: &str) -> Option<f64> {
    v.get(name).and_then(Value::as_f64)
}

/// A catalogue record as a garden's substrate.
pub fn global_view(v: &Value) -> Substrate {
    let substrate_type = text(v, "type").unwrap_or_else(|| "soil".to_owned());
    let defaults = SubstrateProps::of_type(&substrate_type);
    let reusable = v.get("reusable").and_then(Value::as_bool).unwrap_or(false);
    let composition = v
        .get("composition")
        .and_then(Value::as_array)
        .map(|parts| {
            parts
                .iter()
                .filter_map(|p| Some((text(p, "material")?, num(p, "fraction")?)))
                .collect()
        })
        .unwrap_or_default();
    let props = SubstrateProps {
        substrate_type,
        ph_base: num(v, "ph_base").unwrap_or(defaults.ph_base),
        ec_base_ms: num(v, "ec_base_ms").unwrap_or(defaults.ec_base_ms),
        air_porosity_percent: num(v, "air_porosity_percent")
            .unwrap_or(defaults.air_porosity_percent),
        water_retention: text(v, "water_retention"),
        buffer_capacity: text(v, "buffer_capacity"),
        water_holding_capacity_percent: num(v, "water_holding_capacity_percent"),
        easily_available_water_percent: num(v, "easily_available_water_percent"),
        cec_meq_per_100g: num(v, "cec_meq_per_100g"),
        bulk_density_g_per_l: num(v, "bulk_density_g_per_l"),
        composition,
        reusable,
        max_reuse_cycles: if reusable {
            v.get("max_reuse_cycles")
                .and_then(Value::as_i64)
                .and_then(|n| i32::try_from(n).ok())
                .unwrap_or(defaults.max_reuse_cycles)
        } else {
            1
        },
        irrigation_strategy: text(v, "irrigation_strategy").or(defaults.irrigation_strategy),
    };
    Substrate {
        key: text(v, "key").unwrap_or_default(),
        scope: SubstrateScope::Global,
        name: text(v, "name_en").unwrap_or_default(),
        name_de: text(v, "name_de"),
        brand: text(v, "brand"),
        is_mix: v.get("is_mix").and_then(Value::as_bool).unwrap_or(false),
        props,
        mix_components: Vec::new(),
        description: text(v, "description_en"),
    }
}

/// The substrate of a key in this garden's scope (global or own); `None` when unknown.
pub async fn resolve(
    state: &AppState,
    tx: &mut TenantTx,
    key: &str,
) -> Result<Option<Substrate>, AppError> {
    if let Some(own) = key.strip_prefix(TENANT_PREFIX) {
        let Ok(id) = Uuid::parse_str(own) else {
            return Ok(None);
        };
        return Ok(repo::get_substrate(tx, id).await?);
    }
    resolve_global(state, key).await
}

/// The global substrate of a key; `None` when unknown (a garden's own key included).
pub async fn resolve_global(state: &AppState, key: &str) -> Result<Option<Substrate>, AppError> {
    if Uuid::parse_str(key).is_err() {
        return Ok(None);
    }
    match catalog::get(state, &SUBSTRATE, key).await {
        Ok(v) => Ok(Some(global_view(&v))),
        Err(e) if e.code() == ErrorCode::EntityNotFound => Ok(None),
        Err(e) => Err(e),
    }
}

pub async fn list_substrates(
    state: &AppState,
    tenant: &TenantRecord,
    query: &SubstrateQuery,
    page: PageRequest,
) -> Result<Page<Substrate>, AppError> {
    let want_global = query.scope != Some(SubstrateScope::Tenant);
    let want_tenant = query.scope != Some(SubstrateScope::Global);
    // Global ones first (by name), then the garden's own (by name), paged as one list.
    let (mut items, global_total) = if want_global {
        let params = ListParams {
            q: query.q.clone(),
            filters: query
                .substrate_type
                .iter()
                .map(|t| ("type", t.clone()))
                .collect(),
        };
        let listed = catalog::list(state, &SUBSTRATE, &params, None, page).await?;
        (
            listed.items.iter().map(global_view).collect::<Vec<_>>(),
            listed.total,
        )
    } else {
        (Vec::new(), 0)
    };
    let mut tenant_total = 0;
    if want_tenant {
        let mut tx = TenantTx::snapshot(state, tenant).await?;
        let q = query.q.as_deref().map(str::trim).filter(|q| !q.is_empty());
        tenant_total = repo::count_substrates(&mut tx, q, query.substrate_type.as_deref()).await?;
        let room = page.limit - i64::try_from(items.len()).unwrap_or(page.limit);
        let skip = (page.skip - global_total).max(0);
        if room > 0 && tenant_total > skip {
            let own = repo::list_substrates(
                &mut tx,
                q,
                query.substrate_type.as_deref(),
                PageRequest { skip, limit: room },
            )
            .await?;
            items.extend(own);
        }
        tx.commit().await?;
    }
    Ok(Page::new(items, global_total + tenant_total, page))
}

pub async fn get_substrate(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
) -> Result<Substrate, AppError> {
    let mut tx = TenantTx::read(state, tenant).await?;
    let found = resolve(state, &mut tx, key).await?;
    tx.commit().await?;
    found.ok_or_else(|| AppError::not_found("substrate"))
}

pub async fn create_substrate(
    state: &AppState,
    tenant: &TenantRecord,
    new: &NewSubstrate,
) -> Result<Substrate, AppError> {
    let mut tx = TenantTx::begin(state, tenant).await?;
    let Some(created) =
        repo::insert_substrate(&mut tx, &new.name, new.is_mix, &new.stored.0).await?
    else {
        return Err(AppError::duplicate(format!(
            "a substrate named {:?} exists in this garden",
            new.name
        )));
    };
    tx.commit().await?;
    Ok(created)
}

/// Resolves the components and computes the mix (nothing is written).
async fn compute_mix(
    state: &AppState,
    tx: &mut TenantTx,
    components: &[MixComponent],
) -> Result<SubstrateProps, AppError> {
    let mut resolved = Vec::with_capacity(components.len());
    for c in components {
        let s = resolve(state, tx, &c.substrate_key)
            .await?
            .ok_or_else(|| AppError::not_found(&format!("substrate {}", c.substrate_key)))?;
        resolved.push(s);
    }
    let parts: Vec<Component<'_>> = components
        .iter()
        .zip(&resolved)
        .map(|(c, s)| Component {
            key: &c.substrate_key,
            fraction: c.fraction,
            is_mix: s.is_mix,
            props: &s.props,
        })
        .collect();
    substrate_mix::preview(&parts).map_err(|problems| {
        AppError::validation(
            problems
                .into_iter()
                .map(|p| ErrorDetail::new(format!("body.{}", p.field), p.reason, "value_error"))
                .collect(),
        )
    })
}

pub async fn preview_mix(
    state: &AppState,
    tenant: &TenantRecord,
    req: &MixRequest,
) -> Result<MixPreview, AppError> {
    let mut tx = TenantTx::read(state, tenant).await?;
    let props = compute_mix(state, &mut tx, &req.components).await?;
    tx.rollback().await?;
    Ok(MixPreview {
        props,
        components: req.components.clone(),
    })
}

/// Stores the mix as the garden's own substrate; `write: false` checks everything (also the
/// name) and writes nothing.
pub async fn create_mix(
    state: &AppState,
    tenant: &TenantRecord,
    new: &NewMix,
    write: bool,
) -> Result<Substrate, AppError> {
    let mut tx = TenantTx::begin(state, tenant).await?;
    let props = compute_mix(state, &mut tx, &new.components).await?;
    let stored = StoredProps {
        props,
        name_de: new.name_de.clone(),
        brand: None,
        mix_components: new.components.clone(),
        description: new.description.clone(),
    };
    let Some(created) = repo::insert_substrate(&mut tx, &new.name, true, &stored).await? else {
        return Err(AppError::duplicate(format!(
            "a substrate named {:?} exists in this garden",
            new.name
        )));
    };
    if write {
        tx.commit().await?;
    } else {
        tx.rollback().await?;
    }
    Ok(created)
}

// ---------------------------------------------------------------------------------------------
// Batches.

/// Fills `substrate_name` of batches (one catalogue and one tenant query, whatever their number).
async fn name_batches(
    state: &AppState,
    tx: &mut TenantTx,
    batches: &mut [SubstrateBatch],
) -> Result<(), AppError> {
    let mut global = Vec::new();
    let mut own = Vec::new();
    for b in batches.iter() {
        match b.substrate_key.strip_prefix(TENANT_PREFIX) {
            Some(id) => own.extend(Uuid::parse_str(id).ok()),
            None => global.extend(Uuid::parse_str(&b.substrate_key).ok()),
        }
    }
    let mut names: HashMap<String, String> = HashMap::new();
    if !global.is_empty() {
        for (id, name) in catalog::names_by_key(state, global).await? {
            names.insert(id.to_string(), name);
        }
    }
    if !own.is_empty() {
        for (id, name) in repo::substrate_names(tx, &own).await? {
            names.insert(format!("{TENANT_PREFIX}{id}"), name);
        }
    }
    for b in batches.iter_mut() {
        b.substrate_name = names.get(&b.substrate_key).cloned();
    }
    Ok(())
}

pub async fn list_batches(
    state: &AppState,
    tenant: &TenantRecord,
    substrate_key: Option<&str>,
    page: PageRequest,
) -> Result<Page<SubstrateBatch>, AppError> {
    let mut tx = TenantTx::snapshot(state, tenant).await?;
    // A filter naming no substrate of this garden's scope (another garden's, say) is a 404
    // like any unknown key, not an empty page.
    if let Some(key) = substrate_key
        && resolve(state, &mut tx, key).await?.is_none()
    {
        return Err(AppError::not_found("substrate"));
    }
    let total = repo::count_batches(&mut tx, substrate_key).await?;
    let mut items = if total > page.skip {
        repo::list_batches(&mut tx, substrate_key, page).await?
    } else {
        Vec::new()
    };
    name_batches(state, &mut tx, &mut items).await?;
    tx.commit().await?;
    Ok(Page::new(items, total, page))
}

async fn load_batch(
    state: &AppState,
    tx: &mut TenantTx,
    id: Uuid,
) -> Result<SubstrateBatch, AppError> {
    let mut batch = repo::get_batch(tx, id)
        .await?
        .ok_or_else(|| AppError::not_found("substrate batch"))?;
    let (ph, ec) = repo::readings(tx, id).await?;
    batch.ph_history = Some(ph);
    batch.ec_history = Some(ec);
    name_batches(state, tx, std::slice::from_mut(&mut batch)).await?;
    Ok(batch)
}

fn batch_id(key: &str) -> Result<Uuid, AppError> {
    Uuid::parse_str(key).map_err(|_| AppError::not_found("substrate batch"))
}

pub async fn get_batch(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
) -> Result<SubstrateBatch, AppError> {
    let id = batch_id(key)?;
    let mut tx = TenantTx::snapshot(state, tenant).await?;
    let batch = load_batch(state, &mut tx, id).await?;
    tx.commit().await?;
    Ok(batch)
}

pub async fn create_batch(
    state: &AppState,
    tenant: &TenantRecord,
    new: &NewBatch,
) -> Result<SubstrateBatch, AppError> {
    let mut tx = TenantTx::begin(state, tenant).await?;
    // A batch names its substrate by key (no foreign key): hold the garden's own substrate so
    // a concurrent delete cannot leave the batch naming nothing.
    if let Some(own) = new.substrate_key.strip_prefix(TENANT_PREFIX)
        && let Ok(id) = Uuid::parse_str(own)
    {
        repo::share_substrate(&mut tx, id).await?;
    }
    let substrate = resolve(state, &mut tx, &new.substrate_key)
        .await?
        .ok_or_else(|| AppError::not_found("substrate"))?;
    let facts = BatchReuseFacts {
        substrate_type: substrate.props.substrate_type.clone(),
        reusable: substrate.props.reusable,
        max_reuse_cycles: substrate.props.max_reuse_cycles.max(1),
        ec_base_ms: substrate.props.ec_base_ms,
    };
    let Some(id) = repo::insert_batch(&mut tx, new, &facts).await? else {
        return Err(AppError::duplicate(format!(
            "a batch labelled {:?} exists",
            new.label
        )));
    };
    let batch = load_batch(state, &mut tx, id).await?;
    tx.commit().await?;
    Ok(batch)
}

pub async fn patch_batch(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
    patch: &BatchPatch,
) -> Result<SubstrateBatch, AppError> {
    let id = batch_id(key)?;
    let mut tx = TenantTx::begin(state, tenant).await?;
    if !repo::lock_batch(&mut tx, id).await? {
        return Err(AppError::not_found("substrate batch"));
    }
    let current = repo::get_batch(&mut tx, id)
        .await?
        .ok_or_else(|| AppError::not_found("substrate batch"))?;
    let label = patch.label.clone().unwrap_or_else(|| current.label.clone());
    if repo::label_taken(&mut tx, &label, id).await? {
        return Err(AppError::duplicate(format!(
            "a batch labelled {label:?} exists"
        )));
    }
    repo::update_batch(
        &mut tx,
        &current,
        &label,
        &patch.volume_liters,
        &patch.mixed_on,
        patch.ph,
        patch.ec,
    )
    .await?;
    let batch = load_batch(state, &mut tx, id).await?;
    tx.commit().await?;
    Ok(batch)
}

fn reusability_of(batch: &SubstrateBatch, now: OffsetDateTime) -> Reusability {
    let ph: Vec<f64> = batch
        .ph_history
        .as_deref()
        .unwrap_or_default()
        .iter()
        .map(|r| r.value)
        .collect();
    substrate_reuse::check(
        facts(batch),
        BatchFacts {
            cycles_used: batch.cycles_used,
            ph_history: &ph,
            ec_current_ms: batch.ec_current_ms,
        },
        now,
    )
}

/// Whether the batch can go into another cycle, with the preparation it needs.
pub async fn check_reusability(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
) -> Result<(SubstrateBatch, Reusability), AppError> {
    let batch = get_batch(state, tenant, key).await?;
    let r = reusability_of(&batch, OffsetDateTime::now_utc());
    Ok((batch, r))
}

/// Ends the running cycle and starts the next one (`cycles_used` + 1) when the reuse check
/// passes; otherwise 422 `SUBSTRATE_EXHAUSTED` naming every issue, and nothing changes.
pub async fn start_cycle(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
) -> Result<SubstrateBatch, AppError> {
    let id = batch_id(key)?;
    let mut tx = TenantTx::begin(state, tenant).await?;
    if !repo::lock_batch(&mut tx, id).await? {
        return Err(AppError::not_found("substrate batch"));
    }
    let batch = load_batch(state, &mut tx, id).await?;
    let r = reusability_of(&batch, OffsetDateTime::now_utc());
    if !r.can_reuse {
        return Err(exhausted(
            format!(
                "batch {} cannot start another cycle: {}",
                batch.label,
                r.issues.join("; ")
            ),
            issue_details(&r.issues),
        ));
    }
    repo::set_cycles(&mut tx, id, batch.cycles_used + 1).await?;
    let batch = load_batch(state, &mut tx, id).await?;
    tx.commit().await?;
    Ok(batch)
}

// ---------------------------------------------------------------------------------------------
// Changes and deletes.

fn conflict(message: impl Into<String>) -> AppError {
    AppError::new(ErrorCode::StateConflict, message.into())
}

/// The id of one of the garden's own substrates. A global (catalogue) substrate that exists is
/// 403 `FORBIDDEN`: it belongs to the shared catalogue, which a garden reads but never changes
/// (platform admins edit it at `/api/v1/substrates`). Anything else is 404.
async fn own_substrate_id(state: &AppState, key: &str, action: &str) -> Result<Uuid, AppError> {
    if let Some(own) = key.strip_prefix(TENANT_PREFIX) {
        return Uuid::parse_str(own).map_err(|_| AppError::not_found("substrate"));
    }
    if Uuid::parse_str(key).is_err() {
        return Err(AppError::not_found("substrate"));
    }
    match catalog::get(state, &SUBSTRATE, key).await {
        Ok(_) => Err(AppError::new(
            ErrorCode::Forbidden,
            format!(
                "substrate {key} is a global catalogue substrate: a garden cannot {action} it \
                 (platform admins edit the catalogue at /api/v1/substrates)"
            ),
        )),
        Err(e) if e.code() == ErrorCode::EntityNotFound => Err(AppError::not_found("substrate")),
        Err(e) => Err(e),
    }
}

/// Changes one of the garden's own substrates (see [`SubstratePatch`]); nothing changes on a
/// refusal.
pub async fn patch_substrate(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
    patch: &SubstratePatch,
) -> Result<Substrate, AppError> {
    let id = own_substrate_id(state, key, "change").await?;
    let mut tx = TenantTx::begin(state, tenant).await?;
    if !repo::lock_substrate(&mut tx, id).await? {
        return Err(AppError::not_found("substrate"));
    }
    let current = repo::get_substrate(&mut tx, id)
        .await?
        .ok_or_else(|| AppError::not_found("substrate"))?;
    let props_set = patch.property_fields();
    if current.is_mix && !props_set.is_empty() {
        return Err(AppError::validation(
            props_set
                .into_iter()
                .map(|f| {
                    ErrorDetail::new(
                        format!("body.{f}"),
                        "a mix's properties follow its components; create a new mix instead",
                        "value_error",
                    )
                })
                .collect(),
        ));
    }
    let pick = |p: &crate::values::json::Patch<String>, cur: &Option<String>| match p {
        crate::values::json::Patch::Keep => cur.clone(),
        crate::values::json::Patch::Clear => None,
        crate::values::json::Patch::Set(v) => Some(v.clone()),
    };
    let mut props = current.props.clone();
    if let Some(v) = patch.ph_base {
        props.ph_base = v;
    }
    if let Some(v) = patch.ec_base_ms {
        props.ec_base_ms = v;
    }
    if let Some(v) = patch.irrigation_strategy {
        props.irrigation_strategy = Some(v.to_owned());
    }
    let reusable = patch.reusable.unwrap_or(props.reusable);
    props.max_reuse_cycles = match (reusable, patch.max_reuse_cycles) {
        // A substrate that is not reusable takes one cycle (domain 2.4).
        (false, _) => 1,
        (true, Some(n)) => n,
        (true, None) if !props.reusable => SubstrateProps::of_type(&props.substrate_type)
            .max_reuse_cycles
            .max(1),
        (true, None) => props.max_reuse_cycles,
    };
    props.reusable = reusable;
    let stored = StoredProps {
        props,
        name_de: pick(&patch.name_de, &current.name_de),
        brand: pick(&patch.brand, &current.brand),
        mix_components: current.mix_components.clone(),
        description: pick(&patch.description, &current.description),
    };
    let name = patch.name.clone().unwrap_or_else(|| current.name.clone());
    let written = repo::update_substrate(&mut tx, id, &name, &stored).await;
    let duplicate =
        || AppError::duplicate(format!("a substrate named {name:?} exists in this garden"));
    match written {
        Ok(true) => {}
        Ok(false) => return Err(duplicate()),
        Err(sqlx::Error::Database(db)) if db.code().as_deref() == Some("23505") => {
            return Err(duplicate());
        }
        Err(e) => return Err(e.into()),
    }
    let updated = repo::get_substrate(&mut tx, id)
        .await?
        .ok_or_else(|| AppError::not_found("substrate"))?;
    tx.commit().await?;
    Ok(updated)
}

/// Deletes one of the garden's own substrates: 409 while a batch is of it, a plant names it or
/// a mix has it as a component.
pub async fn delete_substrate(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
) -> Result<(), AppError> {
    let id = own_substrate_id(state, key, "delete").await?;
    let mut tx = TenantTx::begin(state, tenant).await?;
    if !repo::lock_substrate(&mut tx, id).await? {
        return Err(AppError::not_found("substrate"));
    }
    let own_key = format!("{TENANT_PREFIX}{id}");
    let (batches, plants, mixes) = repo::substrate_users(&mut tx, &own_key).await?;
    if batches > 0 {
        return Err(conflict(format!(
            "{batches} substrate batch(es) are of this substrate; delete them first"
        )));
    }
    if plants > 0 {
        return Err(conflict(format!(
            "{plants} plant(s) (live or archived) name this substrate; set another substrate on \
             the live ones first (archived plants keep their record)"
        )));
    }
    if !mixes.is_empty() {
        return Err(conflict(format!(
            "the mix(es) {} have this substrate as a component",
            mixes.join(", ")
        )));
    }
    repo::delete_substrate(&mut tx, id).await?;
    tx.commit().await?;
    Ok(())
}

/// Deletes a batch: 409 while a live plant grows in it, a slot holds it, or an archived plant
/// or a planting run keeps it in its record.
pub async fn delete_batch(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
) -> Result<(), AppError> {
    let id = batch_id(key)?;
    let mut tx = TenantTx::begin(state, tenant).await?;
    if !repo::lock_batch(&mut tx, id).await? {
        return Err(AppError::not_found("substrate batch"));
    }
    let users = repo::batch_users(&mut tx, id).await?;
    if users.live_plants > 0 {
        return Err(conflict(format!(
            "{} live plant(s) grow in this batch; give them another substrate or archive them \
             first",
            users.live_plants
        )));
    }
    if !users.slot_codes.is_empty() {
        return Err(conflict(format!(
            "the batch fills slot(s) {}; empty them first (PUT /slots/{{slot_key}}/substrate-batch \
             with null)",
            users.slot_codes.join(", ")
        )));
    }
    if users.archived_plants > 0 || users.runs > 0 {
        return Err(conflict(format!(
            "{} archived plant(s) and {} planting run(s) keep this batch in their record",
            users.archived_plants, users.runs
        )));
    }
    repo::delete_batch(&mut tx, id).await?;
    tx.commit().await?;
    Ok(())
}
