//! Sequences with their phases resolved (effective durations, names).

use std::collections::HashMap;

use serde_json::Value;
use sqlx::PgConnection;
use uuid::Uuid;

use super::model::{GrowthPhase, PHASE, ResolvedEntry, ResolvedSequence, SEQUENCE};
use crate::catalog::engine::repo::Conditions;
use crate::catalog::engine::service::{self, ListParams};
use crate::error::AppError;
use crate::state::AppState;
use crate::values::page::{Page, PageRequest};

fn str_of(v: &Value, f: &str) -> Option<String> {
    v.get(f).and_then(Value::as_str).map(str::to_owned)
}

fn flag(v: &Value, f: &str) -> bool {
    v.get(f).and_then(Value::as_bool).unwrap_or(false)
}

/// Resolves a sequence record (as the API shows it) against the phase definitions.
pub async fn resolve(
    db: &mut PgConnection,
    sequence: &Value,
) -> Result<ResolvedSequence, AppError> {
    let mut all = resolve_all(db, std::slice::from_ref(sequence)).await?;
    all.pop()
        .ok_or_else(|| AppError::internal("resolving lost a sequence"))
}

/// Resolves several sequence records, reading the phase definitions once.
pub async fn resolve_all(
    db: &mut PgConnection,
    sequences: &[Value],
) -> Result<Vec<ResolvedSequence>, AppError> {
    let phases = service::all(db, &PHASE, &Conditions::default()).await?;
    let by_key: HashMap<String, &Value> = phases
        .iter()
        .filter_map(|p| Some((str_of(p, "key")?, p)))
        .collect();
    Ok(sequences.iter().map(|s| resolve_with(&by_key, s)).collect())
}

fn resolve_with(by_key: &HashMap<String, &Value>, sequence: &Value) -> ResolvedSequence {
    let mut entries = Vec::new();
    for e in sequence
        .get("entries")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let phase_key = str_of(e, "phase_key").unwrap_or_default();
        let phase = by_key.get(&phase_key).copied();
        let typical = phase
            .and_then(|p| p.get("typical_duration_days"))
            .and_then(Value::as_i64)
            .unwrap_or(0);
        entries.push(ResolvedEntry {
            order: e.get("order").and_then(Value::as_i64).unwrap_or(0),
            phase_name: phase.and_then(|p| str_of(p, "name")).unwrap_or_default(),
            display_name_en: phase.and_then(|p| str_of(p, "display_name_en")),
            display_name_de: phase.and_then(|p| str_of(p, "display_name_de")),
            phase_key,
            effective_duration_days: e
                .get("override_duration_days")
                .and_then(Value::as_i64)
                .unwrap_or(typical),
            terminal: flag(e, "terminal"),
            allows_harvest: flag(e, "allows_harvest"),
            recurring: flag(e, "recurring"),
            bbch_principal_stage: phase
                .and_then(|p| p.get("bbch_principal_stage"))
                .and_then(Value::as_i64),
        });
    }
    let is_repeating = flag(sequence, "is_repeating");
    ResolvedSequence {
        key: str_of(sequence, "key").unwrap_or_default(),
        name: str_of(sequence, "name").unwrap_or_default(),
        display_name_en: str_of(sequence, "display_name_en").unwrap_or_default(),
        display_name_de: str_of(sequence, "display_name_de"),
        cycle_type: str_of(sequence, "cycle_type").unwrap_or_default(),
        is_repeating,
        rest_period_required: flag(sequence, "rest_period_required"),
        cycle_restart_entry_order: sequence
            .get("cycle_restart_entry_order")
            .and_then(Value::as_i64),
        total_duration_days: entries.iter().map(|e| e.effective_duration_days).sum(),
        terminates_in_harvest: !is_repeating
            && entries.iter().any(|e| e.terminal && e.allows_harvest),
        entries,
    }
}

/// One page of sequences (`q` searches the names), each resolved, and the total.
pub async fn list_resolved(
    state: &AppState,
    params: &ListParams,
    page: PageRequest,
) -> Result<(Vec<ResolvedSequence>, i64), AppError> {
    let load = async {
        let listed = service::list(state, &SEQUENCE, params, None, page).await?;
        let mut db = state.platform_pool().acquire().await?;
        let items = resolve_all(&mut db, &listed.items).await?;
        Ok((items, listed.total))
    };
    if params.q.as_deref().is_some_and(|q| !q.trim().is_empty()) {
        return load.await;
    }
    let key = format!("resolved-list:{params:?}:{}:{}", page.skip, page.limit);
    state.caches().catalog_read(key, load).await
}

pub async fn resolved_by_id(db: &mut PgConnection, id: Uuid) -> Result<ResolvedSequence, AppError> {
    let seq = service::get_by_id(db, &SEQUENCE, id).await?;
    resolve(db, &seq).await
}

pub async fn resolved(state: &AppState, key: &str) -> Result<ResolvedSequence, AppError> {
    let id = service::parse_key(&SEQUENCE, key)?;
    let load = async {
        let mut db = state.platform_pool().acquire().await?;
        resolved_by_id(&mut db, id).await
    };
    state
        .caches()
        .catalog_read(format!("resolved:{id}"), load)
        .await
}

/// Every entry of every sequence (optionally one sequence), by sequence name and order.
pub async fn growth_phases(
    state: &AppState,
    sequence: Option<&str>,
    page: PageRequest,
) -> Result<Page<GrowthPhase>, AppError> {
    let load = async {
        let mut db = state.platform_pool().acquire().await?;
        let sequences = match sequence {
            Some(key) => {
                let id = service::require(&mut db, &SEQUENCE, key).await?;
                vec![service::get_by_id(&mut db, &SEQUENCE, id).await?]
            }
            None => service::all(&mut db, &SEQUENCE, &Conditions::default()).await?,
        };
        let mut all = Vec::new();
        for r in resolve_all(&mut db, &sequences).await? {
            for entry in r.entries {
                all.push(GrowthPhase {
                    sequence_key: r.key.clone(),
                    sequence_name: r.name.clone(),
                    entry,
                });
            }
        }
        Ok(std::sync::Arc::new(all))
    };
    let all = state
        .caches()
        .catalog_read(format!("growth-phases:{sequence:?}"), load)
        .await?;
    let total = all.len() as i64;
    let items = all
        .iter()
        .skip(page.skip as usize)
        .take(page.limit as usize)
        .cloned()
        .collect();
    Ok(Page::new(items, total, page))
}
