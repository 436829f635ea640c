//! The botanical family kind.

use serde_json::{Map, Value};

use crate::catalog::engine::fields::{Field, Kind};
use crate::catalog::engine::spec::Catalogued;
use crate::catalog::engine::spec::{
    Filter, FilterHow, KindSpec, KnowledgeText, NaturalKey, ordered, text,
};
use crate::catalog::vocab::*;
use crate::error::ErrorDetail;

pub const DEMAND: &[&str] = &["light", "medium", "heavy"];
pub const ROOT_DEPTH: &[&str] = &["shallow", "medium", "deep"];
pub const POLLINATION: &[&str] = &["insect", "wind", "self"];
pub const ROTATION_CATEGORIES: &[&str] = &[
    "fruit",
    "fiber",
    "herb",
    "root",
    "brassica",
    "legume",
    "cucurbit",
    "composite",
    "grain",
    "ornamental",
];

const FIELDS: &[Field] = &[
    Field::req(
        "name",
        Kind::Pattern {
            max: 60,
            pattern: FAMILY_PATTERN,
            check: is_family_name,
        },
    )
    .doc("Latin family name ending in -aceae"),
    Field::opt("common_name_en", Kind::Text(SHORT_MAX)),
    Field::opt("common_name_de", Kind::Text(SHORT_MAX)),
    Field::opt(
        "order",
        Kind::Pattern {
            max: 60,
            pattern: ORDER_PATTERN,
            check: is_order_name,
        },
    ),
    Field::opt("typical_nutrient_demand", Kind::Enum(DEMAND)),
    Field::opt("nitrogen_fixing", Kind::Bool).doc("true forbids nutrient demand heavy"),
    Field::opt("typical_root_depth", Kind::Enum(ROOT_DEPTH)),
    Field::opt("soil_ph_min", Kind::Num(3.0, 9.0)),
    Field::opt("soil_ph_max", Kind::Num(3.0, 9.0)).doc("not below soil_ph_min"),
    Field::opt("frost_tolerance", Kind::Enum(FROST)),
    Field::opt("typical_growth_forms", Kind::EnumList(GROWTH_HABITS)),
    Field::opt("pollination_type", Kind::EnumList(POLLINATION)),
    Field::opt("rotation_category", Kind::Enum(ROTATION_CATEGORIES)),
    Field::opt("description_en", Kind::LongText(TEXT_MAX)),
    Field::opt("description_de", Kind::LongText(TEXT_MAX)),
];

fn rules(doc: &Map<String, Value>, errors: &mut Vec<ErrorDetail>) {
    ordered(doc, "soil_ph_min", "soil_ph_max", errors);
    if doc.get("nitrogen_fixing") == Some(&Value::Bool(true))
        && text(doc, "typical_nutrient_demand") == Some("heavy")
    {
        errors.push(ErrorDetail::new(
            "body.typical_nutrient_demand",
            "a nitrogen-fixing family cannot have heavy nutrient demand",
            "value_error",
        ));
    }
}

pub static FAMILY: KindSpec = KindSpec {
    kind: "botanical_family",
    label: "botanical family",
    schema_name: "BotanicalFamily",
    fields: FIELDS,
    natural_key: NaturalKey::Field("name"),
    search: &["name", "common_name_en", "common_name_de"],
    filters: &[
        Filter {
            param: "rotation_category",
            how: FilterHow::Equals("rotation_category", ROTATION_CATEGORIES),
            doc: "rotation category",
        },
        Filter {
            param: "nutrient_demand",
            how: FilterHow::Equals("typical_nutrient_demand", DEMAND),
            doc: "typical nutrient demand",
        },
        Filter {
            param: "nitrogen_fixing",
            how: FilterHow::Bool("nitrogen_fixing"),
            doc: "nitrogen-fixing families",
        },
    ],
    rules,
    knowledge: &[KnowledgeText {
        section: "description",
        language: "en",
        title: Some("common_name_en"),
        body: &["description_en"],
    }],
    max_limit: 200,
};

pub struct FamilyKind;
impl Catalogued for FamilyKind {
    fn spec() -> &'static KindSpec {
        &FAMILY
    }
}
