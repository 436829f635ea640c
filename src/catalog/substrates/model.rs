//! The global substrate kind. Field names follow the substrate model of the domain reference;
//! `composition` is a list of `{material, fraction}` summing to 1.

use serde_json::{Map, Value};

use crate::catalog::engine::fields::{Field, Kind};
use crate::catalog::engine::spec::Catalogued;
use crate::catalog::engine::spec::{Filter, FilterHow, KindSpec, KnowledgeText, NaturalKey, text};
use crate::catalog::vocab::*;
use crate::error::ErrorDetail;
use crate::rules::substrate_mix::{FRACTION_TOLERANCE, IRRIGATION, LEVELS, TYPES};

const COMPOSITION_FIELDS: &[Field] = &[
    Field::req("material", Kind::Text(60)),
    Field::req("fraction", Kind::Num(0.0001, 1.0)),
];

const FIELDS: &[Field] = &[
    Field::req("name_en", Kind::Text(SHORT_MAX)).doc("display name, unique"),
    Field::opt("name_de", Kind::Text(SHORT_MAX)),
    Field::opt("brand", Kind::Text(SHORT_MAX)),
    Field::req("type", Kind::Enum(TYPES)),
    Field::opt("is_mix", Kind::Bool),
    Field::opt("composition", Kind::ObjectList(COMPOSITION_FIELDS, 20))
        .doc("materials and their fractions, summing to 1 (±0.01); empty for type none"),
    Field::opt("ph_base", Kind::Num(3.0, 9.0)).doc("default 6.5"),
    Field::opt("ec_base_ms", Kind::Num(0.0, 10.0)).doc("default 0.5"),
    Field::opt("air_porosity_percent", Kind::Num(0.0, 100.0)).doc("default 25"),
    Field::opt("water_retention", Kind::Enum(LEVELS)),
    Field::opt("buffer_capacity", Kind::Enum(LEVELS)),
    Field::opt("water_holding_capacity_percent", Kind::Num(0.0, 100.0)),
    Field::opt("easily_available_water_percent", Kind::Num(0.0, 100.0)),
    Field::opt("cec_meq_per_100g", Kind::Num(0.0, 500.0)),
    Field::opt("bulk_density_g_per_l", Kind::Num(0.0, 3000.0)),
    Field::opt("reusable", Kind::Bool).doc("default false"),
    Field::opt("max_reuse_cycles", Kind::Int(1, 50)).doc("default 3; 1 when not reusable"),
    Field::opt("irrigation_strategy", Kind::Enum(IRRIGATION)),
    Field::opt("description_en", Kind::LongText(TEXT_MAX)),
];

fn rules(doc: &Map<String, Value>, errors: &mut Vec<ErrorDetail>) {
    let parts = doc
        .get("composition")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if parts.is_empty() {
        return;
    }
    if text(doc, "type") == Some("none") {
        errors.push(ErrorDetail::new(
            "body.composition",
            "must be empty for type none",
            "value_error",
        ));
        return;
    }
    let sum: f64 = parts
        .iter()
        .filter_map(|p| p.get("fraction").and_then(Value::as_f64))
        .sum();
    if (sum - 1.0).abs() > FRACTION_TOLERANCE {
        errors.push(ErrorDetail::new(
            "body.composition",
            format!("fractions must sum to 1 (±{FRACTION_TOLERANCE}); they sum to {sum}"),
            "value_error",
        ));
    }
}

pub static SUBSTRATE: KindSpec = KindSpec {
    kind: "substrate",
    label: "substrate",
    schema_name: "GlobalSubstrate",
    fields: FIELDS,
    natural_key: NaturalKey::Field("name_en"),
    search: &["name_en", "name_de", "brand"],
    filters: &[
        Filter {
            param: "type",
            how: FilterHow::Equals("type", TYPES),
            doc: "substrate type",
        },
        Filter {
            param: "reusable",
            how: FilterHow::Bool("reusable"),
            doc: "reusable substrates",
        },
    ],
    rules,
    knowledge: &[KnowledgeText {
        section: "description",
        language: "en",
        title: Some("name_en"),
        body: &["description_en"],
    }],
    max_limit: 200,
};

pub struct SubstrateKind;
impl Catalogued for SubstrateKind {
    fn spec() -> &'static KindSpec {
        &SUBSTRATE
    }
}
