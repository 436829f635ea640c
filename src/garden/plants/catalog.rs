//! What plants read from the shared catalogue at request time: species (names, family),
//! cultivars, the sequence a species runs on, rotation rules and companion pairs. Nothing of
//! it is copied into the tenant schema, so a catalogue change reaches every garden at once.

use std::collections::HashMap;

use serde_json::Value;
use uuid::Uuid;

use crate::catalog::companions::model::PAIR;
use crate::catalog::engine::repo::Conditions;
use crate::catalog::engine::service;
use crate::catalog::phases::model::ResolvedSequence;
use crate::catalog::rotation::model::RULE;
use crate::catalog::species::model::{CULTIVAR, SPECIES};
use crate::catalog::species::service::{SpeciesSequence, phase_sequence_in, phase_sequence_of};
use crate::error::{AppError, ErrorDetail};
use crate::state::AppState;

fn text(v: &Value, f: &str) -> Option<String> {
    v.get(f).and_then(Value::as_str).map(str::to_owned)
}

/// A species as plants need it.
#[derive(Debug, Clone)]
pub struct SpeciesInfo {
    pub key: String,
    pub scientific_name: Option<String>,
    pub common_name: Option<String>,
    pub family_key: Option<String>,
}

impl SpeciesInfo {
    fn of(key: String, v: &Value) -> Self {
        Self {
            key,
            scientific_name: text(v, "scientific_name"),
            common_name: v
                .get("common_names_en")
                .and_then(|l| l.get(0))
                .and_then(Value::as_str)
                .map(str::to_owned),
            family_key: text(v, "family_key"),
        }
    }

    /// "Tomato", else the scientific name.
    pub fn label(&self) -> String {
        self.common_name
            .clone()
            .or_else(|| self.scientific_name.clone())
            .unwrap_or_else(|| self.key.clone())
    }
}

/// A species with its current sequence (404 `species` when unknown).
pub async fn species_with_sequence(
    state: &AppState,
    key: &str,
) -> Result<(SpeciesInfo, SpeciesSequence), AppError> {
    let mut db = state.platform_pool().acquire().await?;
    let id = service::require(&mut db, &SPECIES, key).await?;
    let record = service::get_by_id(&mut db, &SPECIES, id).await?;
    let sequence = phase_sequence_in(&mut db, &id.to_string()).await?;
    Ok((SpeciesInfo::of(id.to_string(), &record), sequence))
}

/// The sequence a species runs on now; `None` when the species is gone from the catalogue.
/// From memory while the catalogue is unchanged: readiness asks it once per species of the
/// garden, and a page or digest over hundreds of plants must not read the catalogue each time.
pub async fn sequence_of(
    state: &AppState,
    key: &str,
) -> Result<Option<ResolvedSequence>, AppError> {
    match phase_sequence_of(state, key).await {
        Ok(s) => Ok(Some(s.sequence)),
        Err(e) if e.code() == crate::error::ErrorCode::EntityNotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Species records by key (unknown keys are left out).
pub async fn species_many(
    state: &AppState,
    keys: impl IntoIterator<Item = String>,
) -> Result<HashMap<String, SpeciesInfo>, AppError> {
    let mut db = state.platform_pool().acquire().await?;
    let mut out = HashMap::new();
    let mut keys: Vec<String> = keys.into_iter().collect();
    keys.sort();
    keys.dedup();
    for key in keys {
        let Ok(id) = Uuid::parse_str(&key) else {
            continue;
        };
        match service::get_by_id(&mut db, &SPECIES, id).await {
            Ok(v) => {
                out.insert(key.clone(), SpeciesInfo::of(key, &v));
            }
            Err(e) if e.code() == crate::error::ErrorCode::EntityNotFound => {}
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

/// Checks that the cultivar exists (404) and belongs to the species (422).
pub async fn check_cultivar(
    state: &AppState,
    cultivar_key: &str,
    species_key: &str,
) -> Result<(), AppError> {
    let mut db = state.platform_pool().acquire().await?;
    let id = service::require(&mut db, &CULTIVAR, cultivar_key).await?;
    let cultivar = service::get_by_id(&mut db, &CULTIVAR, id).await?;
    if text(&cultivar, "species_key").as_deref() != Some(species_key) {
        return Err(AppError::validation(vec![ErrorDetail::new(
            "body.cultivar_key",
            "the cultivar is not of this species",
            "value_error",
        )]));
    }
    Ok(())
}

/// Display names of catalogue records by key (species, global substrates): one query.
pub async fn names(
    state: &AppState,
    keys: impl IntoIterator<Item = String>,
) -> Result<HashMap<String, String>, AppError> {
    let ids: Vec<Uuid> = keys
        .into_iter()
        .filter_map(|k| Uuid::parse_str(&k).ok())
        .collect();
    Ok(service::names_by_key(state, ids)
        .await?
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect())
}

/// Rotation rules naming the family (either side).
pub async fn rotation_rules(state: &AppState, family_key: &str) -> Result<Vec<Value>, AppError> {
    let Ok(family) = Uuid::parse_str(family_key) else {
        return Ok(Vec::new());
    };
    let mut db = state.platform_pool().acquire().await?;
    let mut c = Conditions::default();
    c.links_to_any(&["from_family_key", "to_family_key"], family);
    service::all(&mut db, &RULE, &c).await
}

/// Companion pairs naming the species (either side).
pub async fn companion_pairs(state: &AppState, species_key: &str) -> Result<Vec<Value>, AppError> {
    let Ok(species) = Uuid::parse_str(species_key) else {
        return Ok(Vec::new());
    };
    let mut db = state.platform_pool().acquire().await?;
    let mut c = Conditions::default();
    c.links_to_any(&["species_a_key", "species_b_key"], species);
    service::all(&mut db, &PAIR, &c).await
}
