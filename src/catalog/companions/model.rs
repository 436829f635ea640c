//! The companion pair kind: two species, compatible (with a score) or incompatible.

use serde_json::{Map, Value};

use crate::catalog::engine::fields::{Field, Kind};
use crate::catalog::engine::spec::Catalogued;
use crate::catalog::engine::spec::{Filter, FilterHow, KindSpec, NaturalKey, text};
use crate::error::ErrorDetail;

pub const RELATIONS: &[&str] = &["compatible", "incompatible"];
pub const EVIDENCE: &[&str] = crate::rules::companion::Evidence::ALL;

const FIELDS: &[Field] = &[
    Field::req("species_a_key", Kind::Ref("species")).seed("a"),
    Field::req("species_b_key", Kind::Ref("species"))
        .seed("b")
        .doc("another species than species_a_key"),
    Field::req("relation", Kind::Enum(RELATIONS)),
    Field::opt("score", Kind::Num(0.0, 1.0))
        .doc("how much they help each other; compatible pairs only (required there)"),
    Field::opt("reason", Kind::LongText(1000)),
    Field::opt("evidence", Kind::Enum(EVIDENCE)).doc(
        "how well the pair is supported: established (a documented mechanism or extension \
         advice; an incompatible pair then needs the grower's acknowledgement to plant anyway) \
         or traditional (garden lore: advice only); omitted reads as traditional",
    ),
    Field::opt("source", Kind::LongText(1000)).doc("where the rule comes from"),
];

fn rules(doc: &Map<String, Value>, errors: &mut Vec<ErrorDetail>) {
    if doc.get("species_a_key").is_some() && doc.get("species_a_key") == doc.get("species_b_key") {
        errors.push(ErrorDetail::new(
            "body.species_b_key",
            "a species is not its own companion",
            "value_error",
        ));
    }
    let has_score = doc.get("score").is_some_and(|s| !s.is_null());
    match text(doc, "relation") {
        Some("compatible") if !has_score => {
            errors.push(ErrorDetail::new(
                "body.score",
                "a compatible pair has a score",
                "missing",
            ));
        }
        Some("incompatible") if has_score => {
            errors.push(ErrorDetail::new(
                "body.score",
                "an incompatible pair has no score",
                "value_error",
            ));
        }
        _ => {}
    }
}

/// A pair is the same in either order.
fn pair(doc: &Map<String, Value>) -> Option<(String, String)> {
    let a = doc.get("species_a_key")?.as_str()?;
    let b = doc.get("species_b_key")?.as_str()?;
    let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
    let key = format!("{lo}+{hi}");
    Some((key.clone(), key))
}

pub static PAIR: KindSpec = KindSpec {
    kind: "companion_pair",
    label: "companion pair",
    schema_name: "CompanionPair",
    fields: FIELDS,
    natural_key: NaturalKey::Computed(pair),
    search: &[],
    filters: &[
        Filter {
            param: "species",
            how: FilterHow::RefAny(&["species_a_key", "species_b_key"]),
            doc: "either side is this species (key)",
        },
        Filter {
            param: "relation",
            how: FilterHow::Equals("relation", RELATIONS),
            doc: "compatible or incompatible",
        },
    ],
    rules,
    knowledge: &[],
    max_limit: 500,
};

pub struct PairKind;
impl Catalogued for PairKind {
    fn spec() -> &'static KindSpec {
        &PAIR
    }
}
