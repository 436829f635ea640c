//! The starter kit kind.

use crate::catalog::engine::fields::{Field, Kind};
use crate::catalog::engine::spec::Catalogued;
use crate::catalog::engine::spec::{Filter, FilterHow, KindSpec, NaturalKey};
use crate::catalog::vocab::*;

pub const DIFFICULTY: &[&str] = &["beginner", "intermediate", "advanced"];

const FIELDS: &[Field] = &[
    Field::req(
        "slug",
        Kind::Pattern {
            max: 80,
            pattern: SLUG_PATTERN,
            check: is_slug,
        },
    ),
    Field::req("name_en", Kind::Text(SHORT_MAX)),
    Field::opt("name_de", Kind::Text(SHORT_MAX)),
    Field::opt("description_en", Kind::LongText(TEXT_MAX)),
    Field::opt("description_de", Kind::LongText(TEXT_MAX)),
    Field::req("difficulty", Kind::Enum(DIFFICULTY)),
    Field::opt("site_type", Kind::Enum(SITE_TYPES)),
    Field::opt("plant_count_suggestion", Kind::Int(1, 50)),
    Field::opt("species_keys", Kind::RefList("species", 50)).seed("species"),
    Field::opt("toxicity_warning", Kind::Bool).doc("a species is toxic to pets or children"),
    Field::opt("tags", Kind::TextList { items: 20, len: 60 }),
    Field::opt("sort_order", Kind::Int(0, 10000)),
];

pub static KIT: KindSpec = KindSpec {
    kind: "starter_kit",
    label: "starter kit",
    schema_name: "StarterKit",
    fields: FIELDS,
    natural_key: NaturalKey::Field("slug"),
    search: &["slug", "name_en", "name_de", "tags"],
    filters: &[
        Filter {
            param: "difficulty",
            how: FilterHow::Equals("difficulty", DIFFICULTY),
            doc: "difficulty",
        },
        Filter {
            param: "site_type",
            how: FilterHow::Equals("site_type", SITE_TYPES),
            doc: "site type",
        },
        Filter {
            param: "species",
            how: FilterHow::Ref("species_keys"),
            doc: "contains this species (key)",
        },
    ],
    rules: crate::catalog::engine::spec::no_rules,
    knowledge: &[],
    max_limit: 200,
};

pub struct KitKind;
impl Catalogued for KitKind {
    fn spec() -> &'static KindSpec {
        &KIT
    }
}
