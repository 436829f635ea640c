//! Nutrient plans (domain 1.12): global templates (compiled in from
//! `catalog/seed/data/nutrient_plans.json`) and the garden's own plans, each a list of phase
//! entries with a window of plan weeks, products and doses, target and reference EC, pH range
//! and NPK ratio. Bodies are checked against field tables (`catalog::engine::fields`), which
//! also give their OpenAPI schemas.

use salvo::oapi::ToSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::catalog::engine::fields::{Field, Kind};
use crate::catalog::engine::spec::Catalogued;
use crate::catalog::engine::spec::{KindSpec, NaturalKey};
use crate::error::{AppError, ErrorDetail};
use crate::rules::plan_coverage::{PLAN_PHASES, WEEK_MAX, rest_entry_fed};
use crate::rules::substrate_mix::TYPES;

/// Prefix of a plan (or fertiliser) the garden owns; a template's key is its slug.
pub const TENANT_PREFIX: &str = "tenant:";
pub const NAME_MAX: usize = 200;
pub const TEXT_MAX: usize = 2000;
pub const PHASES_MAX: usize = 50;
pub const PRODUCTS_MAX: usize = 20;
/// Dose of a product in a plan, ml (or g) per litre (domain 1.12: 0 < x ≤ 50).
pub const DOSE_MIN: f64 = 0.001;
pub const DOSE_MAX: f64 = 50.0;
pub const EC_MAX: f64 = 10.0;
pub const LIST_MAX_LIMIT: i64 = 200;

/// Who owns a plan or a fertiliser.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Owner {
    /// Shared by every garden; read-only for gardens.
    Global,
    /// Owned by this garden.
    Garden,
}

impl Owner {
    pub fn parse(raw: &str) -> Option<Self> {
        match raw {
            "global" => Some(Self::Global),
            "garden" => Some(Self::Garden),
            _ => None,
        }
    }
}

/// N-P-K ratio (relative parts, e.g. 3-1-2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Npk {
    pub n: f64,
    pub p: f64,
    pub k: f64,
}

/// Nutrient targets of a phase, ppm in the solution.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, ToSchema)]
pub struct Nutrients {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calcium_ppm: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub magnesium_ppm: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sulfur_ppm: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iron_ppm: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub boron_ppm: Option<f64>,
}

/// A product of a phase entry and its dose.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct PlanProduct {
    /// A global fertiliser's key or `tenant:<uuid>` of the garden's own; null for a template
    /// product the global catalogue does not hold (yet).
    pub fertilizer_key: Option<String>,
    pub product_name: String,
    /// ml (or g for powders) per litre.
    pub ml_per_liter: f64,
}

/// One phase entry of a plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct PlanPhase {
    /// Entry key: a UUID in the garden's plans, `<template>:<order>` in a template.
    pub key: String,
    /// germination, seedling, vegetative, flowering, flushing, dormancy or harvest.
    pub phase_name: String,
    pub sequence_order: i32,
    /// First plan week (1 = the plant's first week), inclusive.
    pub week_start: i32,
    /// Last plan week, inclusive (≥ week_start).
    pub week_end: i32,
    /// EC to feed, mS/cm (0–10).
    pub target_ec_ms: Option<f64>,
    /// The EC on the plan's reference substrate, mS/cm (0–10).
    pub reference_ec_ms: Option<f64>,
    pub ph_min: Option<f64>,
    pub ph_max: Option<f64>,
    pub npk_ratio: Option<Npk>,
    pub nutrients: Option<Nutrients>,
    pub products: Vec<PlanProduct>,
    pub notes: Option<String>,
}

/// A nutrient plan with its phases.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct NutrientPlan {
    /// A template's slug or `tenant:<uuid>` of the garden's own.
    pub key: String,
    pub owner: Owner,
    pub name: String,
    pub description: Option<String>,
    /// The culture a template is written for (tomato, chili, orchids, …); null for own plans.
    pub culture: Option<String>,
    pub recommended_substrate_type: Option<String>,
    /// The substrate `reference_ec_ms` is calibrated for.
    pub reference_substrate_type: String,
    pub tags: Vec<String>,
    /// The plan this one was cloned from.
    pub cloned_from_key: Option<String>,
    pub version: i32,
    /// Ordered by sequence_order, then week.
    pub phases: Vec<PlanPhase>,
}

/// A plan in a listing.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct PlanSummary {
    pub key: String,
    pub owner: Owner,
    pub name: String,
    pub description: Option<String>,
    pub culture: Option<String>,
    pub recommended_substrate_type: Option<String>,
    pub tags: Vec<String>,
    pub cloned_from_key: Option<String>,
    pub phase_count: usize,
    pub first_week: Option<i32>,
    pub last_week: Option<i32>,
}

impl NutrientPlan {
    pub fn summary(&self) -> PlanSummary {
        PlanSummary {
            key: self.key.clone(),
            owner: self.owner,
            name: self.name.clone(),
            description: self.description.clone(),
            culture: self.culture.clone(),
            recommended_substrate_type: self.recommended_substrate_type.clone(),
            tags: self.tags.clone(),
            cloned_from_key: self.cloned_from_key.clone(),
            phase_count: self.phases.len(),
            first_week: self.phases.iter().map(|p| p.week_start).min(),
            last_week: self.phases.iter().map(|p| p.week_end).max(),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Bodies.

const NPK_FIELDS: &[Field] = &[
    Field::req("n", Kind::Num(0.0, 100.0)),
    Field::req("p", Kind::Num(0.0, 100.0)),
    Field::req("k", Kind::Num(0.0, 100.0)),
];

const NUTRIENT_FIELDS: &[Field] = &[
    Field::opt("calcium_ppm", Kind::Num(0.0, 1000.0)),
    Field::opt("magnesium_ppm", Kind::Num(0.0, 1000.0)),
    Field::opt("sulfur_ppm", Kind::Num(0.0, 1000.0)),
    Field::opt("iron_ppm", Kind::Num(0.0, 100.0)),
    Field::opt("boron_ppm", Kind::Num(0.0, 100.0)),
];

const PRODUCT_FIELDS: &[Field] = &[
    Field::req("fertilizer_key", Kind::Text(200))
        .doc("a global fertiliser's key or tenant:<uuid> of the garden's own"),
    Field::req("ml_per_liter", Kind::Num(DOSE_MIN, DOSE_MAX))
        .doc("dose, ml (or g) per litre, 0.001-50"),
];

const PHASE_FIELDS: &[Field] = &[
    Field::req("phase_name", Kind::Enum(PLAN_PHASES)),
    Field::opt("sequence_order", Kind::Int(1, 50)).doc("default: position in the list (1 = first)"),
    Field::req("week_start", Kind::Int(1, WEEK_MAX as i64))
        .doc("first plan week, 1 = the plant's first week"),
    Field::req("week_end", Kind::Int(1, WEEK_MAX as i64)).doc("last plan week, ≥ week_start"),
    Field::opt("target_ec_ms", Kind::Num(0.0, EC_MAX)).doc("EC to feed, mS/cm"),
    Field::opt("reference_ec_ms", Kind::Num(0.0, EC_MAX))
        .doc("EC on the reference substrate, mS/cm"),
    Field::opt("ph_min", Kind::Num(0.0, 14.0)),
    Field::opt("ph_max", Kind::Num(0.0, 14.0)).doc("≥ ph_min"),
    Field::opt("npk_ratio", Kind::Object(NPK_FIELDS)),
    Field::opt("nutrients", Kind::Object(NUTRIENT_FIELDS)),
    Field::opt("products", Kind::ObjectList(PRODUCT_FIELDS, PRODUCTS_MAX)),
    Field::opt("notes", Kind::LongText(TEXT_MAX)),
];

const PLAN_FIELDS: &[Field] = &[
    Field::req("name", Kind::Text(NAME_MAX))
        .doc("unique among the garden's plans (case-insensitive)"),
    Field::opt("description", Kind::LongText(TEXT_MAX)),
    Field::opt("recommended_substrate_type", Kind::Enum(TYPES)),
    Field::opt("reference_substrate_type", Kind::Enum(TYPES)).doc("default soil"),
    Field::opt("tags", Kind::TextList { items: 20, len: 50 }),
    Field::req("phases", Kind::ObjectList(PHASE_FIELDS, PHASES_MAX)).doc("1-50 phase entries"),
];

/// Cross-field rules of a plan body: at least one phase, week_end ≥ week_start, ph_min ≤
/// ph_max, each product once per phase, and a rest phase (`dormancy`) not fed (no target EC
/// above 0, no products: `rules::plan_coverage::rest_entry_fed`).
fn plan_rules(doc: &Map<String, Value>, errors: &mut Vec<ErrorDetail>) {
    let phases = doc.get("phases").and_then(Value::as_array);
    if phases.is_none_or(|p| p.is_empty()) {
        errors.push(ErrorDetail::new(
            "body.phases",
            "give at least one phase entry",
            "value_error",
        ));
    }
    for (i, p) in phases.into_iter().flatten().enumerate() {
        let n = |f: &str| p.get(f).and_then(Value::as_f64);
        if let (Some(s), Some(e)) = (n("week_start"), n("week_end"))
            && e < s
        {
            errors.push(ErrorDetail::new(
                format!("body.phases[{i}].week_end"),
                format!("the window ends (week {e}) before it starts (week {s})"),
                "value_error",
            ));
        }
        if let (Some(lo), Some(hi)) = (n("ph_min"), n("ph_max"))
            && hi < lo
        {
            errors.push(ErrorDetail::new(
                format!("body.phases[{i}].ph_max"),
                format!("must be at least ph_min ({lo})"),
                "value_error",
            ));
        }
        let products = p.get("products").and_then(Value::as_array);
        // Rest phases are not fed: the mixing protocol's rule, with its source.
        let product_count = products.map_or(0, Vec::len);
        let field = if n("target_ec_ms").is_some_and(|ec| ec > 0.0) {
            format!("body.phases[{i}].target_ec_ms")
        } else {
            format!("body.phases[{i}].products")
        };
        if let Some(problem) = p
            .get("phase_name")
            .and_then(Value::as_str)
            .and_then(|phase| rest_entry_fed(phase, n("target_ec_ms"), product_count, &field))
        {
            errors.push(ErrorDetail::new(
                problem.field,
                problem.reason,
                "value_error",
            ));
        }
        for (j, prod) in products.into_iter().flatten().enumerate() {
            let key = prod.get("fertilizer_key");
            if products
                .into_iter()
                .flatten()
                .take(j)
                .any(|o| o.get("fertilizer_key") == key)
            {
                errors.push(ErrorDetail::new(
                    format!("body.phases[{i}].products[{j}].fertilizer_key"),
                    "appears twice in this phase; give each product once",
                    "value_error",
                ));
            }
        }
    }
}

/// The plan body as a kind (for its field table, rules and schema `NutrientPlanCreate`).
pub static PLAN_BODY: KindSpec = KindSpec {
    kind: "nutrient_plan",
    label: "nutrient plan",
    schema_name: "NutrientPlan",
    fields: PLAN_FIELDS,
    natural_key: NaturalKey::Field("name"),
    search: &["name"],
    filters: &[],
    rules: plan_rules,
    knowledge: &[],
    max_limit: LIST_MAX_LIMIT,
};

pub struct PlanBodyKind;
impl Catalogued for PlanBodyKind {
    fn spec() -> &'static KindSpec {
        &PLAN_BODY
    }
}

/// A plan body after its fields are checked (products not yet resolved).
#[derive(Debug, Clone, Deserialize)]
pub struct NewPlan {
    pub name: String,
    pub description: Option<String>,
    pub recommended_substrate_type: Option<String>,
    pub reference_substrate_type: Option<String>,
    #[serde(default)]
    pub tags: Vec<String>,
    pub phases: Vec<NewPhase>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct NewPhase {
    pub phase_name: String,
    pub sequence_order: Option<i32>,
    pub week_start: i32,
    pub week_end: i32,
    pub target_ec_ms: Option<f64>,
    pub reference_ec_ms: Option<f64>,
    pub ph_min: Option<f64>,
    pub ph_max: Option<f64>,
    pub npk_ratio: Option<Npk>,
    pub nutrients: Option<Nutrients>,
    #[serde(default)]
    pub products: Vec<NewProduct>,
    pub notes: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct NewProduct {
    pub fertilizer_key: String,
    pub ml_per_liter: f64,
}

/// Body of `PATCH /t/{slug}/nutrient-plans/{plan_key}/phase-targets`: one phase (entry key or
/// phase name), and the targets to set; an omitted target stays, null is refused (a target can
/// never be cleared), at least one target must be sent.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[salvo(schema(name = "NutrientPlanPhaseTargets"))]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // a schema only: the handler checks the body field by field
pub struct PhaseTargetsBody {
    /// The phase entry's key, or its phase name when the plan has one entry of that name.
    #[salvo(schema(
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub phase: String,
    /// mS/cm, 0–10; not null.
    #[salvo(schema(nullable = false, minimum = 0, maximum = 10))]
    pub target_ec_ms: Option<f64>,
    /// mS/cm, 0–10; not null.
    #[salvo(schema(nullable = false, minimum = 0, maximum = 10))]
    pub reference_ec_ms: Option<f64>,
}

/// A checked phase-targets patch (that it sets something is checked once the plan is found,
/// so another garden's plan is a 404 whatever the patch).
#[derive(Debug, Clone, PartialEq)]
pub struct TargetsPatch {
    pub phase: String,
    pub target_ec_ms: Option<f64>,
    pub reference_ec_ms: Option<f64>,
}

impl TargetsPatch {
    /// Checks a body (field names `body.…`, or bare for the tool).
    pub fn check(map: &Map<String, Value>, prefix: &str) -> Result<Self, Vec<ErrorDetail>> {
        let mut errors = Vec::new();
        let at = |f: &str| format!("{prefix}{f}");
        for k in map.keys() {
            if !["phase", "target_ec_ms", "reference_ec_ms"].contains(&k.as_str()) {
                errors.push(ErrorDetail::new(at(k), "unknown field", "extra_forbidden"));
            }
        }
        let phase = match map.get("phase") {
            Some(Value::String(s))
                if !s.trim().is_empty()
                    && s.chars().count() <= 200
                    && !s.chars().any(char::is_control) =>
            {
                Some(s.trim().to_owned())
            }
            None | Some(Value::Null) => {
                errors.push(ErrorDetail::new(at("phase"), "field required", "missing"));
                None
            }
            Some(_) => {
                errors.push(ErrorDetail::new(
                    at("phase"),
                    "must be a phase entry key or phase name (1-200 characters)",
                    "value_error",
                ));
                None
            }
        };
        let mut target = |name: &str| match map.get(name) {
            None => None,
            Some(Value::Null) => {
                errors.push(ErrorDetail::new(
                    at(name),
                    "a target can never be cleared; omit it to keep the value",
                    "type_error",
                ));
                None
            }
            Some(v) => match v.as_f64() {
                Some(x) if (0.0..=EC_MAX).contains(&x) => Some(x),
                Some(_) => {
                    errors.push(ErrorDetail::new(
                        at(name),
                        format!("must be between 0 and {EC_MAX} mS/cm"),
                        "value_error",
                    ));
                    None
                }
                None => {
                    errors.push(ErrorDetail::new(at(name), "must be a number", "type_error"));
                    None
                }
            },
        };
        let target_ec_ms = target("target_ec_ms");
        let reference_ec_ms = target("reference_ec_ms");
        match phase {
            Some(phase) if errors.is_empty() => Ok(Self {
                phase,
                target_ec_ms,
                reference_ec_ms,
            }),
            _ => Err(errors),
        }
    }
}

/// Body of `POST /t/{slug}/nutrient-plans/{plan_key}/clone` (optional).
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[salvo(schema(name = "NutrientPlanClone"))]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // a schema only: the handler checks the body field by field
pub struct CloneBody {
    /// Name of the copy; default "<source> (copy)". Unique among the garden's plans.
    #[salvo(schema(
        nullable = false,
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub name: Option<String>,
}

/// Body of `POST /t/{slug}/nutrient-plans/{plan_key}/assignments`: exactly one of plant_key
/// and run_key.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[salvo(schema(name = "NutrientPlanAssign"))]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // a schema only: the handler checks the body field by field
pub struct AssignBody {
    /// The plant that follows the plan.
    #[salvo(schema(nullable = false, format = Uuid))]
    pub plant_key: Option<String>,
    /// The planting run whose plants follow the plan (unless a plant has its own).
    #[salvo(schema(nullable = false, format = Uuid))]
    pub run_key: Option<String>,
}

/// What a plan is assigned to: exactly one of the two (checked after both are looked up).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssignTarget {
    pub plant: Option<uuid::Uuid>,
    pub run: Option<uuid::Uuid>,
    /// `body.` for REST, empty for a tool (names the field of a refusal).
    pub field_prefix: String,
}

/// The answer of an assignment.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Assignment {
    pub plan_key: String,
    pub plan_name: String,
    pub plant_key: Option<uuid::Uuid>,
    pub run_key: Option<uuid::Uuid>,
    /// The plan assigned before (replaced), if any.
    pub replaced_plan_key: Option<String>,
}

/// The targets that apply to a plant now (`garden::contracts::PhaseTargets` with the week).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct CurrentTargets {
    pub plan_key: String,
    pub plan_name: String,
    /// `plant` or `run`.
    pub source: String,
    /// The phase entry's key.
    pub phase_key: String,
    pub phase_name: String,
    /// The plant's plan week now (1 = its first week).
    pub week: i32,
    pub target_ec_ms: Option<f64>,
    pub reference_ec_ms: Option<f64>,
    pub ph_min: Option<f64>,
    pub ph_max: Option<f64>,
    /// Set when the plant is in a rest phase, which is not fed (the target EC is then 0): why,
    /// with the source. Null otherwise.
    pub not_fed_reason: Option<String>,
}

/// The plan that applies to a plant (`plan: null` when none).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PlantPlan {
    pub plant_key: uuid::Uuid,
    /// `plant` (assigned to the plant), `run` (its run's), or null.
    pub source: Option<String>,
    pub run_key: Option<uuid::Uuid>,
    pub plan: Option<NutrientPlan>,
    /// The phase entry for the plant's current phase and week; null when none matches.
    pub current: Option<CurrentTargets>,
}

/// Coverage of the plan a plant follows against its species' phase sequence (domain 2.16).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PlantCoverage {
    pub plant_key: uuid::Uuid,
    pub plan: Option<PlanSummary>,
    pub source: Option<String>,
    pub plan_is_global_template: bool,
    /// The species' sequence (null when the species has none).
    pub sequence_key: Option<String>,
    /// The plant's current phase, as a plan phase (null without one).
    pub current_phase: Option<String>,
    /// Whether an entry names the current phase (null without a plan or a phase).
    pub current_phase_covered_by_name: Option<bool>,
    pub coverage: crate::rules::plan_coverage::Coverage,
}

/// The optional `name` of a clone (`prefix` `body.` for REST, empty for a tool).
pub fn clone_name(
    map: &serde_json::Map<String, Value>,
    prefix: &str,
) -> Result<Option<String>, AppError> {
    let mut details = Vec::new();
    for k in map.keys().filter(|k| *k != "name") {
        details.push(ErrorDetail::new(
            format!("{prefix}{k}"),
            "unknown field",
            "extra_forbidden",
        ));
    }
    let name = match map.get("name") {
        None => None,
        Some(Value::String(s))
            if !s.trim().is_empty()
                && s.chars().count() <= NAME_MAX
                && !s.chars().any(char::is_control) =>
        {
            Some(s.trim().to_owned())
        }
        Some(_) => {
            details.push(ErrorDetail::new(
                format!("{prefix}name"),
                format!("must be a text of 1 to {NAME_MAX} characters without control characters"),
                "value_error",
            ));
            None
        }
    };
    if details.is_empty() {
        Ok(name)
    } else {
        Err(AppError::validation(details))
    }
}

/// Reads an assignment target (`prefix` `body.` for REST, empty for a tool): plant_key and
/// run_key, each a UUID when given. That exactly one is given is checked by the service after
/// the keys are looked up (another garden's key is a 404 first).
pub fn assign_target(
    map: &serde_json::Map<String, Value>,
    prefix: &str,
) -> Result<AssignTarget, AppError> {
    let mut details = Vec::new();
    for k in map.keys().filter(|k| *k != "plant_key" && *k != "run_key") {
        details.push(ErrorDetail::new(
            format!("{prefix}{k}"),
            "unknown field",
            "extra_forbidden",
        ));
    }
    let mut key = |name: &str| match map.get(name) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if uuid::Uuid::parse_str(s).is_ok() => uuid::Uuid::parse_str(s).ok(),
        Some(_) => {
            details.push(ErrorDetail::new(
                format!("{prefix}{name}"),
                "must be a key (UUID)",
                "value_error",
            ));
            None
        }
    };
    let plant = key("plant_key");
    let run = key("run_key");
    if !details.is_empty() {
        return Err(AppError::validation(details));
    }
    Ok(AssignTarget {
        plant,
        run,
        field_prefix: prefix.to_owned(),
    })
}
