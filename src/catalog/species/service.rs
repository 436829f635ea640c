//! The phase sequence of a species: the bound one, or the one the selection rules give; and
//! binding, the one operation that changes the schedule of every plant of the species in every
//! tenant (the MCP tool `assign_species_phase_sequence` calls [`assign_phase_sequence`]).

use salvo::oapi::ToSchema;
use serde::Serialize;
use serde_json::Value;
use uuid::Uuid;

use super::model::SPECIES;
use crate::catalog::engine::{repo, service};
use crate::catalog::phases::model::{ResolvedSequence, SEQUENCE};
use crate::catalog::phases::service::resolved_by_id;
use crate::error::{AppError, ErrorCode};
use crate::rules::names::genus;
use crate::rules::sequence_selection::{SelectionInput, select};
use crate::state::AppState;

/// The link field of the binding.
pub const BINDING: &str = "phase_sequence_key";

/// Where a species' sequence comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SequenceSource {
    /// Bound explicitly.
    Bound,
    /// Given by the selection rules.
    Selected,
}

/// `GET /species/{key}/phase-sequence`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SpeciesSequence {
    pub species_key: String,
    pub source: SequenceSource,
    /// The selection rule that matched (1–7); null when bound.
    pub rule: Option<u8>,
    pub sequence: ResolvedSequence,
}

/// What the selection rules read from a species record.
pub fn selection_input(species: &Value) -> SelectionInput<'_> {
    let s = |f: &str| species.get(f).and_then(Value::as_str);
    SelectionInput {
        genus: s("genus").or_else(|| s("scientific_name").and_then(genus)),
        // The cultivation cycle type ("grown as annual") wins over the botanical one.
        cycle_type: s("cultivation_cycle_type").or_else(|| s("cycle_type")),
        flowering_strategy: s("flowering_strategy"),
        photosynthesis_type: s("photosynthesis_type"),
        photoperiod_type: s("photoperiod_type"),
        growth_habit: s("growth_habit"),
    }
}

pub async fn phase_sequence_of(state: &AppState, key: &str) -> Result<SpeciesSequence, AppError> {
    let mut db = state.platform_pool().acquire().await?;
    let id = service::require(&mut db, &SPECIES, key).await?;
    let species = service::get_by_id(&mut db, &SPECIES, id).await?;
    let bound = species
        .get(BINDING)
        .and_then(Value::as_str)
        .and_then(|k| Uuid::parse_str(k).ok());
    let (source, rule, seq_id) = match bound {
        Some(seq) => (SequenceSource::Bound, None, seq),
        None => {
            let (rule, name) = select(&selection_input(&species));
            let found = repo::find_by_norm(&mut db, SEQUENCE.kind, name).await?.ok_or_else(|| {
                AppError::new(
                    ErrorCode::EntityNotFound,
                    format!("the selected phase sequence {name} is not in the catalogue (run `kultiva seed`)"),
                )
            })?;
            (SequenceSource::Selected, Some(rule), found.id)
        }
    };
    Ok(SpeciesSequence {
        species_key: id.to_string(),
        source,
        rule,
        sequence: resolved_by_id(&mut db, seq_id).await?,
    })
}

/// Binds a species to a sequence (`None` unbinds: the selection rules decide again). The
/// binding lives on the species row of the platform schema, so every plant of the species in
/// every tenant follows it at once.
pub async fn assign_phase_sequence(
    state: &AppState,
    species_key: &str,
    sequence_key: Option<&str>,
) -> Result<SpeciesSequence, AppError> {
    let mut tx = state.platform_pool().begin().await?;
    let species = service::require(&mut tx, &SPECIES, species_key).await?;
    let targets = match sequence_key {
        Some(k) => vec![service::require(&mut tx, &SEQUENCE, k).await?],
        None => Vec::new(),
    };
    repo::set_links(&mut tx, species, BINDING, &targets).await?;
    tx.commit().await?;
    tracing::info!(%species, sequence = ?targets.first(), "species phase sequence binding changed");
    phase_sequence_of(state, species_key).await
}
