//! What a catalogue kind is: its fields, natural key, search, filters, cross-field rules and
//! the texts it gives to knowledge search. Every kind is one static `KindSpec`.

use serde_json::{Map, Value};

use super::fields::Field;
use crate::error::ErrorDetail;

/// Computes (display name, normalised natural key) from a whole record.
pub type KeyOf = fn(&Map<String, Value>) -> Option<(String, String)>;

/// What makes two records of a kind the same record (idempotent seed and import upserts, 409
/// on create).
#[derive(Debug, Clone, Copy)]
pub enum NaturalKey {
    /// A name field, unique across the kind after normalisation.
    Field(&'static str),
    /// A name field, unique within the record referenced by `scope` (a `Ref` field).
    Scoped {
        name: &'static str,
        scope: &'static str,
    },
    /// Computed from the whole record (pairs, one profile per species); `None` when the record
    /// lacks what it needs (validation has already said why).
    Computed(KeyOf),
}

/// A query parameter that narrows a list.
#[derive(Debug, Clone, Copy)]
pub struct Filter {
    pub param: &'static str,
    pub how: FilterHow,
    pub doc: &'static str,
}

#[derive(Debug, Clone, Copy)]
pub enum FilterHow {
    /// A text field equal to one of the values.
    Equals(&'static str, &'static [&'static str]),
    /// A list field containing one of the values.
    Contains(&'static str, &'static [&'static str]),
    /// A boolean field.
    Bool(&'static str),
    /// A nullable boolean at a path: `true`, `false` or `unknown` (nothing recorded).
    Known(&'static [&'static str]),
    /// A reference field naming this key.
    Ref(&'static str),
    /// Any of these reference fields naming this key (either side of a pair).
    RefAny(&'static [&'static str]),
}

/// A text of a record that knowledge search finds.
#[derive(Debug, Clone, Copy)]
pub struct KnowledgeText {
    /// `description`, `care`, `definition`, …
    pub section: &'static str,
    pub language: &'static str,
    /// Field holding the title (a text, or the first item of a list); else the record's name.
    pub title: Option<&'static str>,
    /// Fields joined into the body; the text is skipped when all are empty.
    pub body: &'static [&'static str],
}

pub type Rules = fn(&Map<String, Value>, &mut Vec<ErrorDetail>);

/// One catalogue kind.
#[derive(Debug)]
pub struct KindSpec {
    /// Stored kind and the source name in knowledge search (`species`, `pest`, …).
    pub kind: &'static str,
    /// For messages: "species", "botanical family".
    pub label: &'static str,
    /// OpenAPI component name of the record; `…Create` and `…Patch` name the bodies.
    pub schema_name: &'static str,
    pub fields: &'static [Field],
    pub natural_key: NaturalKey,
    /// Fields searched by `q` (texts and text lists), normalised.
    pub search: &'static [&'static str],
    pub filters: &'static [Filter],
    /// Rules across fields, checked on the whole record (so a patch cannot break them).
    pub rules: Rules,
    pub knowledge: &'static [KnowledgeText],
    pub max_limit: i64,
}

pub fn no_rules(_: &Map<String, Value>, _: &mut Vec<ErrorDetail>) {}

impl KindSpec {
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }
}

// ---------------------------------------------------------------------------------------------
// Helpers for cross-field rules.

pub fn num(doc: &Map<String, Value>, name: &str) -> Option<f64> {
    doc.get(name).and_then(Value::as_f64)
}

pub fn text<'a>(doc: &'a Map<String, Value>, name: &str) -> Option<&'a str> {
    doc.get(name).and_then(Value::as_str)
}

/// `min ≤ max` when both are present; the detail names the max field.
pub fn ordered(doc: &Map<String, Value>, min: &str, max: &str, errors: &mut Vec<ErrorDetail>) {
    if let (Some(a), Some(b)) = (num(doc, min), num(doc, max))
        && a > b
    {
        errors.push(ErrorDetail::new(
            format!("body.{max}"),
            format!("must not be below {min}"),
            "value_error",
        ));
    }
}

/// A catalogue kind as a type, so its schemas can be named in endpoint signatures.
pub trait Catalogued: Send + Sync + 'static {
    fn spec() -> &'static KindSpec;
}
