//! The rotation rule kind: a good successor family, or two families that should not follow
//! each other.

use serde_json::{Map, Value};

use crate::catalog::engine::fields::{Field, Kind};
use crate::catalog::engine::spec::Catalogued;
use crate::catalog::engine::spec::{Filter, FilterHow, KindSpec, NaturalKey, text};
use crate::error::ErrorDetail;

pub const RELATIONS: &[&str] = &["successor", "incompatible"];
pub const SEVERITY: &[&str] = &["mild", "severe"];

const FIELDS: &[Field] = &[
    Field::req("from_family_key", Kind::Ref("botanical_family")).seed("from"),
    Field::req("to_family_key", Kind::Ref("botanical_family")).seed("to"),
    Field::req("relation", Kind::Enum(RELATIONS))
        .doc("successor: growing `to` after `from` is good"),
    Field::opt("wait_years", Kind::Int(1, 5)).doc("successor rules only (required there)"),
    Field::opt("benefit_score", Kind::Num(0.0, 1.0)).doc("successor rules only (required there)"),
    Field::opt("severity", Kind::Enum(SEVERITY)).doc("incompatible rules only (required there)"),
    Field::opt("reason", Kind::LongText(1000)),
    Field::opt("break_years", Kind::Int(1, 10)).doc(
        "a family's own break between two of its crops in one slot, in years (incompatible \
         rules of a family with itself only); longer than the default 3 years it widens that \
         family's rotation window (brassicas: 4, clubroot)",
    ),
    Field::opt("source", Kind::LongText(1000)).doc("where the rule comes from"),
];

fn rules(doc: &Map<String, Value>, errors: &mut Vec<ErrorDetail>) {
    let has = |f: &str| doc.get(f).is_some_and(|v| !v.is_null());
    let (needed, forbidden): (&[&str], &[&str]) = match text(doc, "relation") {
        Some("successor") => (&["wait_years", "benefit_score"], &["severity"]),
        Some("incompatible") => (&["severity"], &["wait_years", "benefit_score"]),
        _ => return,
    };
    for f in needed.iter().filter(|f| !has(f)) {
        errors.push(ErrorDetail::new(
            format!("body.{f}"),
            "required for this relation",
            "missing",
        ));
    }
    for f in forbidden.iter().filter(|f| has(f)) {
        errors.push(ErrorDetail::new(
            format!("body.{f}"),
            "not used by this relation",
            "value_error",
        ));
    }
    let same_family = doc.get("from_family_key").is_some()
        && doc.get("from_family_key") == doc.get("to_family_key");
    if has("break_years") && !(text(doc, "relation") == Some("incompatible") && same_family) {
        errors.push(ErrorDetail::new(
            "body.break_years",
            "only for an incompatible rule of a family with itself",
            "value_error",
        ));
    }
}

/// Successors are directed; incompatibility is the same in either order.
fn rule_key(doc: &Map<String, Value>) -> Option<(String, String)> {
    let from = doc.get("from_family_key")?.as_str()?;
    let to = doc.get("to_family_key")?.as_str()?;
    let relation = text(doc, "relation")?;
    let (a, b) = if relation == "incompatible" && to < from {
        (to, from)
    } else {
        (from, to)
    };
    let key = format!("{relation}:{a}>{b}");
    Some((key.clone(), key))
}

pub static RULE: KindSpec = KindSpec {
    kind: "rotation_rule",
    label: "rotation rule",
    schema_name: "RotationRule",
    fields: FIELDS,
    natural_key: NaturalKey::Computed(rule_key),
    search: &[],
    filters: &[
        Filter {
            param: "family",
            how: FilterHow::RefAny(&["from_family_key", "to_family_key"]),
            doc: "either family (key)",
        },
        Filter {
            param: "from_family",
            how: FilterHow::Ref("from_family_key"),
            doc: "the earlier family (key)",
        },
        Filter {
            param: "relation",
            how: FilterHow::Equals("relation", RELATIONS),
            doc: "successor or incompatible",
        },
    ],
    rules,
    knowledge: &[],
    max_limit: 500,
};

pub struct RuleKind;
impl Catalogued for RuleKind {
    fn spec() -> &'static KindSpec {
        &RULE
    }
}
