//! The phase definition and phase sequence kinds, and the resolved sequence view.

use salvo::oapi::ToSchema;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::catalog::engine::fields::{Field, Kind};
use crate::catalog::engine::spec::Catalogued;
use crate::catalog::engine::spec::{Filter, FilterHow, KindSpec, NaturalKey};
use crate::catalog::vocab::*;
use crate::error::ErrorDetail;

const SNAKE: Kind = Kind::Pattern {
    max: 60,
    pattern: SNAKE_PATTERN,
    check: is_snake,
};

const PHASE_FIELDS: &[Field] = &[
    Field::req("name", SNAKE).doc("snake_case, unique"),
    Field::req("display_name_en", Kind::Text(SHORT_MAX)),
    Field::opt("display_name_de", Kind::Text(SHORT_MAX)),
    Field::req("typical_duration_days", Kind::Int(1, 3650)),
    Field::opt("stress_tolerance", Kind::Enum(LOW_MEDIUM_HIGH)),
    Field::opt("watering_interval_days", Kind::Int(1, 90)),
    Field::opt("bbch_principal_stage", Kind::Int(0, 9)).doc(
        "the BBCH principal growth stage (0-9) this phase is, where it is exactly one (BBCH \
         monograph, Meier 2018): the plant-protection record takes a treated plant's growth \
         stage from it when none is given",
    ),
    Field::opt("description_en", Kind::LongText(TEXT_MAX)),
];

pub static PHASE: KindSpec = KindSpec {
    kind: "phase_definition",
    label: "phase definition",
    schema_name: "PhaseDefinition",
    fields: PHASE_FIELDS,
    natural_key: NaturalKey::Field("name"),
    search: &["name", "display_name_en", "display_name_de"],
    filters: &[Filter {
        param: "stress_tolerance",
        how: FilterHow::Equals("stress_tolerance", LOW_MEDIUM_HIGH),
        doc: "stress tolerance",
    }],
    rules: crate::catalog::engine::spec::no_rules,
    knowledge: &[],
    max_limit: 200,
};

const ENTRY_FIELDS: &[Field] = &[
    Field::req("phase_key", Kind::Ref("phase_definition")).seed("phase"),
    Field::req("order", Kind::Int(0, 49)).doc("0, 1, 2 … in list order"),
    Field::opt("override_duration_days", Kind::Int(1, 3650))
        .doc("replaces the phase's typical duration"),
    Field::req("terminal", Kind::Bool),
    Field::req("allows_harvest", Kind::Bool),
    Field::opt("recurring", Kind::Bool),
];

const SEQUENCE_FIELDS: &[Field] = &[
    Field::req("name", SNAKE).doc("snake_case, unique"),
    Field::req("display_name_en", Kind::Text(SHORT_MAX)),
    Field::opt("display_name_de", Kind::Text(SHORT_MAX)),
    Field::req("cycle_type", Kind::Enum(CYCLE_TYPES)),
    Field::req("is_repeating", Kind::Bool),
    Field::opt("cycle_restart_entry_order", Kind::Int(0, 49))
        .doc("the entry order a repeating cycle restarts at"),
    Field::opt("rest_period_required", Kind::Bool),
    Field::opt("description_en", Kind::LongText(TEXT_MAX)),
    Field::opt("repeats_yearly", Kind::Bool).doc(
        "a repeating cycle that follows the seasons: its phases from the restart entry to the \
         end add up to a year (the seed check allows 365 ± 7 days)",
    ),
    Field::opt("duration_source", Kind::LongText(TEXT_MAX)).doc(
        "where the phase durations come from (seed catalogue, extension service); required in \
         the seed for vegetable cycles and yearly ones",
    ),
    Field::req("entries", Kind::ObjectList(ENTRY_FIELDS, 50))
        .doc("ordered phases; exactly one terminal unless repeating"),
];

/// The shape rules of a sequence: orders 0, 1, 2 … without gaps; exactly one terminal entry
/// unless repeating (then at most one); a repeating cycle restarts at an existing order.
pub fn sequence_rules(doc: &Map<String, Value>, errors: &mut Vec<ErrorDetail>) {
    let entries = doc
        .get("entries")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    if entries.is_empty() {
        errors.push(ErrorDetail::new(
            "body.entries",
            "a sequence has at least one phase",
            "value_error",
        ));
        return;
    }
    for (i, e) in entries.iter().enumerate() {
        if e.get("order").and_then(Value::as_u64) != Some(i as u64) {
            errors.push(ErrorDetail::new(
                format!("body.entries[{i}].order"),
                format!("must be {i} (orders run 0, 1, 2 … in list order)"),
                "value_error",
            ));
        }
    }
    let terminals = entries
        .iter()
        .filter(|e| e.get("terminal") == Some(&Value::Bool(true)))
        .count();
    let repeating = doc.get("is_repeating") == Some(&Value::Bool(true));
    if (!repeating && terminals != 1) || terminals > 1 {
        let want = if repeating {
            "at most one"
        } else {
            "exactly one"
        };
        errors.push(ErrorDetail::new(
            "body.entries",
            format!("needs {want} terminal entry"),
            "value_error",
        ));
    }
    match (
        repeating,
        doc.get("cycle_restart_entry_order").and_then(Value::as_u64),
    ) {
        (true, Some(o)) if (o as usize) >= entries.len() => errors.push(ErrorDetail::new(
            "body.cycle_restart_entry_order",
            "must be the order of an entry",
            "value_error",
        )),
        (false, Some(_)) => errors.push(ErrorDetail::new(
            "body.cycle_restart_entry_order",
            "only a repeating sequence restarts",
            "value_error",
        )),
        _ => {}
    }
}

pub static SEQUENCE: KindSpec = KindSpec {
    kind: "phase_sequence",
    label: "phase sequence",
    schema_name: "PhaseSequence",
    fields: SEQUENCE_FIELDS,
    natural_key: NaturalKey::Field("name"),
    search: &["name", "display_name_en", "display_name_de"],
    filters: &[
        Filter {
            param: "cycle_type",
            how: FilterHow::Equals("cycle_type", CYCLE_TYPES),
            doc: "cycle type",
        },
        Filter {
            param: "is_repeating",
            how: FilterHow::Bool("is_repeating"),
            doc: "repeating cycles",
        },
        Filter {
            param: "phase",
            how: FilterHow::Ref("entries.phase_key"),
            doc: "uses this phase definition (key)",
        },
    ],
    rules: sequence_rules,
    knowledge: &[],
    max_limit: 200,
};

pub struct PhaseKind;
impl Catalogued for PhaseKind {
    fn spec() -> &'static KindSpec {
        &PHASE
    }
}
pub struct SequenceKind;
impl Catalogued for SequenceKind {
    fn spec() -> &'static KindSpec {
        &SEQUENCE
    }
}

/// One phase of a sequence with its effective duration.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ResolvedEntry {
    pub order: i64,
    pub phase_key: String,
    pub phase_name: String,
    pub display_name_en: Option<String>,
    pub display_name_de: Option<String>,
    /// The override when set, else the phase's typical duration.
    pub effective_duration_days: i64,
    pub terminal: bool,
    pub allows_harvest: bool,
    pub recurring: bool,
    /// The BBCH principal growth stage of the phase, where the catalogue gives one.
    pub bbch_principal_stage: Option<i64>,
}

/// A sequence with its phases resolved.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ResolvedSequence {
    pub key: String,
    pub name: String,
    pub display_name_en: String,
    pub display_name_de: Option<String>,
    pub cycle_type: String,
    pub is_repeating: bool,
    pub rest_period_required: bool,
    pub cycle_restart_entry_order: Option<i64>,
    /// Sum of the effective durations.
    pub total_duration_days: i64,
    /// Not repeating, and the terminal entry allows harvest.
    pub terminates_in_harvest: bool,
    pub entries: Vec<ResolvedEntry>,
}

/// One entry of `/growth-phases`: a phase as it appears in a sequence.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct GrowthPhase {
    pub sequence_key: String,
    pub sequence_name: String,
    #[serde(flatten)]
    pub entry: ResolvedEntry,
}
