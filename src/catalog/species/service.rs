//! The phase sequence of a species: the bound one, or the one the selection rules give; and
//! binding, the one operation that changes the schedule of every plant of the species in every
//! tenant (the MCP tool `assign_species_phase_sequence` calls [`assign_phase_sequence`]).

use salvo::oapi::ToSchema;
use serde::Serialize;
use serde_json::Value;
use sqlx::PgConnection;
use uuid::Uuid;

use super::model::SPECIES;
use crate::catalog::engine::repo::Conditions;
use crate::catalog::engine::{repo, service};
use crate::catalog::phases::model::{ResolvedSequence, SEQUENCE};
use crate::catalog::phases::service::resolved_by_id;
use crate::error::{AppError, ErrorCode};
use crate::rules::names::genus;
use crate::rules::sequence_selection::{SelectionInput, select};
use crate::state::AppState;
use crate::values::page::PageRequest;

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

/// From memory while the catalogue is unchanged (see `crate::cache`): the selection result
/// is computed once per species and catalogue version.
pub async fn phase_sequence_of(state: &AppState, key: &str) -> Result<SpeciesSequence, AppError> {
    let id = service::parse_key(&SPECIES, key)?;
    let load = async {
        let mut db = state.platform_pool().acquire().await?;
        phase_sequence_in(&mut db, key).await
    };
    state
        .caches()
        .catalog_read(format!("species-sequence:{id}"), load)
        .await
}

/// [`phase_sequence_of`] as its JSON document, kept rendered since the last catalogue change:
/// the REST read answers these bytes as they are (a reference-counted buffer), with no copy of
/// the sequence and no serialisation per request.
pub async fn phase_sequence_document(
    state: &AppState,
    key: &str,
) -> Result<salvo::hyper::body::Bytes, AppError> {
    let id = service::parse_key(&SPECIES, key)?;
    let load = async {
        let seq = phase_sequence_of(state, key).await?;
        serde_json::to_vec(&seq)
            .map(salvo::hyper::body::Bytes::from)
            .map_err(AppError::internal)
    };
    state
        .caches()
        .catalog_read(format!("species-sequence-json:{id}"), load)
        .await
}

/// [`phase_sequence_of`] on a given connection (inside a transaction it sees that
/// transaction's binding).
pub async fn phase_sequence_in(
    db: &mut PgConnection,
    key: &str,
) -> Result<SpeciesSequence, AppError> {
    let id = service::require(db, &SPECIES, key).await?;
    let species = service::get_by_id(db, &SPECIES, id).await?;
    let bound = species
        .get(BINDING)
        .and_then(Value::as_str)
        .and_then(|k| Uuid::parse_str(k).ok());
    let (source, rule, seq_id) = match bound {
        Some(seq) => (SequenceSource::Bound, None, seq),
        None => {
            let (rule, name) = select(&selection_input(&species));
            let found = repo::find_by_norm(db, SEQUENCE.kind, name).await?.ok_or_else(|| {
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
        sequence: resolved_by_id(db, seq_id).await?,
    })
}

/// A binding change: the sequence in force before and after.
#[derive(Debug, Clone)]
pub struct Reassigned {
    pub before: SpeciesSequence,
    pub after: SpeciesSequence,
}

/// Binds a species to a sequence (`None` unbinds: the selection rules decide again). The
/// binding lives on the species row of the platform schema, so every plant of the species in
/// every tenant follows it at once. With `commit: false` (a dry run) everything is checked and
/// the result computed inside the transaction, which is then rolled back: nothing changes.
pub async fn assign_phase_sequence(
    state: &AppState,
    species_key: &str,
    sequence_key: Option<&str>,
    commit: bool,
) -> Result<Reassigned, AppError> {
    let mut tx = state.platform_pool().begin().await?;
    let species = service::require(&mut tx, &SPECIES, species_key).await?;
    let targets = match sequence_key {
        Some(k) => vec![service::require(&mut tx, &SEQUENCE, k).await?],
        None => Vec::new(),
    };
    let before = phase_sequence_in(&mut tx, species_key).await?;
    repo::set_links(&mut tx, species, BINDING, &targets).await?;
    let after = phase_sequence_in(&mut tx, species_key).await?;
    if commit {
        tx.commit().await?;
        state.caches().forget_catalog();
        tracing::info!(%species, sequence = ?targets.first(), "species phase sequence binding changed");
    } else {
        tx.rollback().await?;
    }
    Ok(Reassigned { before, after })
}

/// A species that runs on a given sequence, and why.
#[derive(Debug, Clone, Serialize)]
pub struct SpeciesOnSequence {
    pub species_key: String,
    pub scientific_name: String,
    pub common_name_en: Option<String>,
    pub source: SequenceSource,
    /// The selection rule that gave the sequence; null when bound.
    pub rule: Option<u8>,
}

/// The species that run on a sequence: bound to it, or given it by the selection rules
/// (scientific name order), one page of them and the total.
pub async fn species_on_sequence(
    state: &AppState,
    sequence_key: &str,
    page: PageRequest,
) -> Result<(ResolvedSequence, Vec<SpeciesOnSequence>, i64), AppError> {
    let mut db = state.platform_pool().acquire().await?;
    let seq_id = service::require(&mut db, &SEQUENCE, sequence_key).await?;
    let sequence = resolved_by_id(&mut db, seq_id).await?;
    let all = service::all(&mut db, &SPECIES, &Conditions::default()).await?;
    let text = |v: &Value, f: &str| v.get(f).and_then(Value::as_str).map(str::to_owned);
    let on: Vec<SpeciesOnSequence> = all
        .iter()
        .filter_map(|sp| {
            let (source, rule) = match sp.get(BINDING).and_then(Value::as_str) {
                Some(bound) if bound == sequence.key => (SequenceSource::Bound, None),
                Some(_) => return None,
                None => {
                    let (rule, name) = select(&selection_input(sp));
                    if name != sequence.name {
                        return None;
                    }
                    (SequenceSource::Selected, Some(rule))
                }
            };
            Some(SpeciesOnSequence {
                species_key: text(sp, "key")?,
                scientific_name: text(sp, "scientific_name").unwrap_or_default(),
                common_name_en: sp
                    .get("common_names_en")
                    .and_then(|l| l.get(0))
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                source,
                rule,
            })
        })
        .collect();
    let total = on.len() as i64;
    let items = on
        .into_iter()
        .skip(usize::try_from(page.skip).unwrap_or(usize::MAX))
        .take(usize::try_from(page.limit).unwrap_or(0))
        .collect();
    Ok((sequence, items, total))
}

/// What a species record says about its lifecycle.
#[derive(Debug, Clone, Serialize)]
pub struct Lifecycle {
    /// Botanical: annual, biennial or perennial.
    pub cycle_type: Option<String>,
    /// `annual` when a perennial is grown as an annual.
    pub cultivation_cycle_type: Option<String>,
    /// What the schedule follows: the cultivation cycle type when set, else the botanical one.
    pub effective_cycle_type: String,
    pub flowering_strategy: Option<String>,
    pub photoperiod_type: Option<String>,
    pub photosynthesis_type: Option<String>,
    pub growth_habit: Option<String>,
}

/// The lifecycle of a species (`None` when no cycle type is recorded) and the sequence it
/// runs on (404 for an unknown species).
pub async fn lifecycle_of(
    state: &AppState,
    key: &str,
) -> Result<(Value, Option<Lifecycle>, SpeciesSequence), AppError> {
    let mut db = state.platform_pool().acquire().await?;
    let sequence = phase_sequence_in(&mut db, key).await?;
    let id = service::parse_key(&SPECIES, key)?;
    let species = service::get_by_id(&mut db, &SPECIES, id).await?;
    let text = |f: &str| species.get(f).and_then(Value::as_str).map(str::to_owned);
    let lifecycle = selection_input(&species)
        .cycle_type
        .map(|effective| Lifecycle {
            cycle_type: text("cycle_type"),
            cultivation_cycle_type: text("cultivation_cycle_type"),
            effective_cycle_type: effective.to_owned(),
            flowering_strategy: text("flowering_strategy"),
            photoperiod_type: text("photoperiod_type"),
            photosynthesis_type: text("photosynthesis_type"),
            growth_habit: text("growth_habit"),
        });
    Ok((species, lifecycle, sequence))
}
