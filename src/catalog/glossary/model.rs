//! The glossary term kind.

use crate::catalog::engine::fields::{Field, Kind};
use crate::catalog::engine::spec::Catalogued;
use crate::catalog::engine::spec::{Filter, FilterHow, KindSpec, KnowledgeText, NaturalKey};
use crate::catalog::vocab::*;

pub const CATEGORIES: &[&str] = &[
    "environment",
    "nutrition",
    "watering",
    "substrate",
    "phases",
    "propagation",
    "pests",
    "harvest",
    "botany",
    "light",
];
const SLUG: Kind = Kind::Pattern {
    max: 80,
    pattern: SLUG_PATTERN,
    check: is_slug,
};

const FIELDS: &[Field] = &[
    Field::req("slug", SLUG),
    Field::req("label_en", Kind::Text(SHORT_MAX)),
    Field::opt("label_de", Kind::Text(SHORT_MAX)),
    Field::opt(
        "aliases_en",
        Kind::TextList {
            items: 20,
            len: SHORT_MAX,
        },
    ),
    Field::opt(
        "aliases_de",
        Kind::TextList {
            items: 20,
            len: SHORT_MAX,
        },
    ),
    Field::req("category", Kind::Enum(CATEGORIES)),
    Field::opt("definition_en", Kind::LongText(TEXT_MAX)),
    Field::opt("definition_de", Kind::LongText(TEXT_MAX)),
    Field::opt("related", Kind::TextList { items: 20, len: 80 }).doc("slugs of related terms"),
];

pub static TERM: KindSpec = KindSpec {
    kind: "glossary_term",
    label: "glossary term",
    schema_name: "GlossaryTerm",
    fields: FIELDS,
    natural_key: NaturalKey::Field("slug"),
    search: &["slug", "label_en", "label_de", "aliases_en", "aliases_de"],
    filters: &[Filter {
        param: "category",
        how: FilterHow::Equals("category", CATEGORIES),
        doc: "category",
    }],
    rules: crate::catalog::engine::spec::no_rules,
    knowledge: &[
        KnowledgeText {
            section: "definition",
            language: "en",
            title: Some("label_en"),
            body: &["definition_en"],
        },
        KnowledgeText {
            section: "definition",
            language: "de",
            title: Some("label_de"),
            body: &["definition_de"],
        },
    ],
    max_limit: 200,
};

pub struct TermKind;
impl Catalogued for TermKind {
    fn spec() -> &'static KindSpec {
        &TERM
    }
}
