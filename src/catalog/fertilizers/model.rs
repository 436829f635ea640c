//! The global fertiliser kind. Field names follow the fertiliser model of the domain reference
//! (1.11). Doses are per litre of solution: ml for liquids, g for powders and granules.

use serde_json::{Map, Value};

use crate::catalog::engine::fields::{Field, Kind};
use crate::catalog::engine::spec::Catalogued;
use crate::catalog::engine::spec::{
    Filter, FilterHow, KindSpec, KnowledgeText, NaturalKey, num, ordered,
};
use crate::catalog::vocab::*;
use crate::error::ErrorDetail;

pub const FERTILIZER_TYPES: &[&str] = &[
    "base",
    "supplement",
    "booster",
    "biological",
    "ph_adjuster",
    "organic",
    "silicate",
];
pub const FORMS: &[&str] = &["liquid", "powder", "granular"];
pub const APPLICATIONS: &[&str] = &["fertigation", "drench", "foliar", "top_dress", "any"];
pub const PH_EFFECTS: &[&str] = &["acidic", "alkaline", "neutral"];
pub const BIOAVAILABILITY: &[&str] = &["immediate", "slow_release", "microbial_dependent"];
/// Where the EC per ml/L comes from.
pub const EC_SOURCES: &[&str] = &["manufacturer", "feed_chart_estimate", "salt_conductivity"];

/// Oxide-to-element factors (mass of the element in the oxide) for reading European labels,
/// which state P₂O₅, K₂O, MgO and CaO: P = P₂O₅ × 0.4364, K = K₂O × 0.8301, Mg = MgO × 0.6030,
/// Ca = CaO × 0.7147. `npk` keeps the label's oxide forms (P₂O₅, K₂O, the convention of every
/// N-P-K grade); `secondary` and `micro` hold the elements, so a label's "2 % MgO" is stored as
/// mg 1.2.
pub const P2O5_TO_P: f64 = 0.4364;
pub const K2O_TO_K: f64 = 0.8301;
pub const MGO_TO_MG: f64 = 0.6030;
pub const CAO_TO_CA: f64 = 0.7147;

const NPK_FIELDS: &[Field] = &[
    Field::req("n", Kind::Num(0.0, 100.0)).doc("total nitrogen (N), %"),
    Field::req("p", Kind::Num(0.0, 100.0))
        .doc("phosphate as the oxide P₂O₅, % (element P = × 0.4364)"),
    Field::req("k", Kind::Num(0.0, 100.0)).doc("potash as the oxide K₂O, % (element K = × 0.8301)"),
];

const SECONDARY_FIELDS: &[Field] = &[
    Field::opt("ca", Kind::Num(0.0, 100.0))
        .doc("calcium as the element Ca, % (from a label's CaO: × 0.7147)"),
    Field::opt("mg", Kind::Num(0.0, 100.0))
        .doc("magnesium as the element Mg, % (from a label's MgO: × 0.6030)"),
    Field::opt("s", Kind::Num(0.0, 100.0)).doc("sulfur as the element S, %"),
    Field::opt("si", Kind::Num(0.0, 100.0)).doc("silicon as the oxide SiO₂, %"),
];

const MICRO_FIELDS: &[Field] = &[
    Field::opt("fe", Kind::Num(0.0, 100.0)).doc("iron (Fe, element), %"),
    Field::opt("mn", Kind::Num(0.0, 100.0)).doc("manganese (Mn, element), %"),
    Field::opt("zn", Kind::Num(0.0, 100.0)).doc("zinc (Zn, element), %"),
    Field::opt("cu", Kind::Num(0.0, 100.0)).doc("copper (Cu, element), %"),
    Field::opt("b", Kind::Num(0.0, 100.0)).doc("boron (B, element), %"),
    Field::opt("mo", Kind::Num(0.0, 100.0)).doc("molybdenum (Mo, element), %"),
];

const FIELDS: &[Field] = &[
    Field::req("name", Kind::Text(NAME_MAX)).doc("product name with brand, unique"),
    Field::req("brand", Kind::Text(SHORT_MAX)),
    Field::req("fertilizer_type", Kind::Enum(FERTILIZER_TYPES)),
    Field::req("form", Kind::Enum(FORMS)).doc("liquid (doses in ml/L) or powder/granular (g/L)"),
    Field::req("npk", Kind::Object(NPK_FIELDS)).doc("label analysis N-P₂O₅-K₂O in %, sum ≤ 100"),
    Field::opt("secondary", Kind::Object(SECONDARY_FIELDS)),
    Field::opt("micro", Kind::Object(MICRO_FIELDS)),
    Field::req("ec_contribution_per_ml", Kind::Num(0.0, 5.0))
        .doc("mS/cm added per ml (or g) per litre"),
    Field::opt("ec_contribution_uncertain", Kind::Bool)
        .doc("default false; true keeps 0.15 mS/cm back in the mixing protocol"),
    Field::opt("ec_source", Kind::Enum(EC_SOURCES)),
    Field::req("recommended_dose_ml_per_liter", Kind::Num(0.01, 50.0))
        .doc("label dose per litre (ml, or g for powders)"),
    Field::opt("max_dose_ml_per_liter", Kind::Num(0.1, 50.0))
        .doc("never more per litre; the mixing protocol caps at 20 when absent"),
    Field::req("mixing_priority", Kind::Int(1, 100)).doc("lower goes into the tank first"),
    Field::opt("is_organic", Kind::Bool),
    Field::opt("tank_safe", Kind::Bool).doc("default true; false: not through a fertigation tank"),
    Field::opt("calmag", Kind::Bool).doc("a calcium-magnesium supplement (dosed before the base)"),
    Field::opt("recommended_application", Kind::Enum(APPLICATIONS)),
    Field::opt("ph_effect", Kind::Enum(PH_EFFECTS)),
    Field::opt("bioavailability", Kind::Enum(BIOAVAILABILITY)),
    Field::opt("description_en", Kind::LongText(TEXT_MAX)),
    Field::opt("source", Kind::Text(SHORT_MAX)).doc("where the analysis was read"),
    Field::opt("label_source", Kind::Text(LABEL_SOURCE_MAX)).doc(
        "required on a global fertiliser: the label or data sheet the analysis was read from \
         (maker, product, market, which forms it states), or the salt's chemistry; a \
         garden's own product without one gets \"entered by the garden\"",
    ),
];

pub const LABEL_SOURCE_MAX: usize = 400;
/// The label source of a garden's own product entered without one.
pub const OWN_LABEL_SOURCE: &str = "entered by the garden (not checked against a label)";

fn rules(doc: &Map<String, Value>, errors: &mut Vec<ErrorDetail>) {
    // A dose computed from an analysis carries where the analysis was read.
    if doc
        .get("label_source")
        .and_then(Value::as_str)
        .is_none_or(|s| s.trim().is_empty())
    {
        errors.push(ErrorDetail::new(
            "body.label_source",
            "field required: the label or data sheet the analysis was read from, or the salt's \
             chemistry",
            "missing",
        ));
    }
    if let Some(npk) = doc.get("npk").and_then(Value::as_object) {
        let sum: f64 = ["n", "p", "k"].iter().filter_map(|k| num(npk, k)).sum();
        if sum > 100.0 {
            errors.push(ErrorDetail::new(
                "body.npk",
                format!("N + P + K must not exceed 100 %; they sum to {sum}"),
                "value_error",
            ));
        }
    }
    ordered(
        doc,
        "recommended_dose_ml_per_liter",
        "max_dose_ml_per_liter",
        errors,
    );
}

pub static FERTILIZER: KindSpec = KindSpec {
    kind: "fertilizer",
    label: "fertiliser",
    schema_name: "GlobalFertilizer",
    fields: FIELDS,
    natural_key: NaturalKey::Field("name"),
    search: &["name", "brand"],
    filters: &[
        Filter {
            param: "fertilizer_type",
            how: FilterHow::Equals("fertilizer_type", FERTILIZER_TYPES),
            doc: "fertiliser type",
        },
        Filter {
            param: "form",
            how: FilterHow::Equals("form", FORMS),
            doc: "liquid, powder or granular",
        },
        Filter {
            param: "is_organic",
            how: FilterHow::Bool("is_organic"),
            doc: "organic products",
        },
    ],
    rules,
    knowledge: &[KnowledgeText {
        section: "description",
        language: "en",
        title: Some("name"),
        body: &["description_en"],
    }],
    max_limit: 200,
};

pub struct FertilizerKind;
impl Catalogued for FertilizerKind {
    fn spec() -> &'static KindSpec {
        &FERTILIZER
    }
}
