//! The overwintering profile kind: one per species.

use serde_json::{Map, Value};

use crate::catalog::engine::fields::{Field, Kind};
use crate::catalog::engine::spec::Catalogued;
use crate::catalog::engine::spec::{Filter, FilterHow, KindSpec, NaturalKey, ordered};
use crate::catalog::vocab::*;
use crate::error::ErrorDetail;

pub const RATINGS: &[&str] = &["frost_free", "hardy", "needs_protection", "dig_and_store"];
pub const WINTER_ACTIONS: &[&str] = &["move_indoors", "mulch", "fleece", "dig_store", "none"];
pub const SPRING_ACTIONS: &[&str] = &[
    "move_outdoors",
    "harden_off",
    "uncover",
    "prune",
    "replant",
    "none",
];
pub const LIGHT: &[&str] = &["bright", "semi_bright", "dark"];
pub const WATERING: &[&str] = &["none", "minimal", "reduced", "normal"];

const FIELDS: &[Field] = &[
    Field::req("species_key", Kind::Ref("species"))
        .seed("species")
        .doc("one profile per species"),
    Field::req("hardiness_rating", Kind::Enum(RATINGS)),
    Field::opt("winter_action", Kind::Enum(WINTER_ACTIONS)),
    Field::opt("winter_action_month", Kind::Int(1, 12)),
    Field::opt("spring_action", Kind::Enum(SPRING_ACTIONS)),
    Field::opt("spring_action_month", Kind::Int(1, 12)),
    Field::opt("winter_quarter_temp_min", Kind::Num(-30.0, 40.0)),
    Field::opt("winter_quarter_temp_max", Kind::Num(-30.0, 40.0))
        .doc("not below winter_quarter_temp_min"),
    Field::opt("winter_quarter_light", Kind::Enum(LIGHT)),
    Field::opt("winter_watering", Kind::Enum(WATERING)),
    Field::opt("notes_en", Kind::LongText(TEXT_MAX)),
];

fn rules(doc: &Map<String, Value>, errors: &mut Vec<ErrorDetail>) {
    ordered(
        doc,
        "winter_quarter_temp_min",
        "winter_quarter_temp_max",
        errors,
    );
}

fn per_species(doc: &Map<String, Value>) -> Option<(String, String)> {
    let s = doc.get("species_key")?.as_str()?;
    Some((s.to_owned(), s.to_owned()))
}

pub static PROFILE: KindSpec = KindSpec {
    kind: "overwintering_profile",
    label: "overwintering profile",
    schema_name: "OverwinteringProfile",
    fields: FIELDS,
    natural_key: NaturalKey::Computed(per_species),
    search: &[],
    filters: &[
        Filter {
            param: "species",
            how: FilterHow::Ref("species_key"),
            doc: "species key",
        },
        Filter {
            param: "hardiness_rating",
            how: FilterHow::Equals("hardiness_rating", RATINGS),
            doc: "hardiness rating",
        },
        Filter {
            param: "winter_action",
            how: FilterHow::Equals("winter_action", WINTER_ACTIONS),
            doc: "winter action",
        },
    ],
    rules,
    knowledge: &[],
    max_limit: 200,
};

pub struct ProfileKind;
impl Catalogued for ProfileKind {
    fn spec() -> &'static KindSpec {
        &PROFILE
    }
}
