//! The species and cultivar kinds.

use serde_json::{Map, Value};

use crate::catalog::engine::fields::{Field, Kind};
use crate::catalog::engine::spec::Catalogued;
use crate::catalog::engine::spec::{Filter, FilterHow, KindSpec, KnowledgeText, NaturalKey, text};
use crate::catalog::vocab::*;
use crate::error::ErrorDetail;
use crate::rules::names::genus;
use crate::rules::zones::{ZONE_PATTERN, Zone, is_zone};

pub const CATEGORIES: &[&str] = &[
    "indoor_houseplant",
    "outdoor_ornamental",
    "outdoor_vegetable",
    "balcony_plant",
    "succulent_cactus",
    "tropical_foliage",
    "orchid",
    "herb",
    "bulb_tuber",
];
pub const FLOWERING: &[&str] = &["monocarpic", "polycarpic"];
pub const PHOTOPERIOD: &[&str] = &["short_day", "long_day", "day_neutral"];
pub const PHOTOSYNTHESIS: &[&str] = &["c3", "c4", "cam"];
pub const NUTRIENT_DEMAND: &[&str] = &[
    "heavy_feeder",
    "medium_feeder",
    "light_feeder",
    "nitrogen_fixer",
];
pub const SUITABILITY: &[&str] = &["yes", "limited", "no"];
pub const SUN: &[&str] = &["full_sun", "partial_shade", "shade"];
pub const TOXIC_TO: &[&str] = &["cats", "dogs", "humans", "horses", "birds"];
pub const SEVERITY: &[&str] = &["low", "moderate", "high"];

const TOXICITY: &[Field] = &[
    Field::req("is_toxic", Kind::Bool),
    Field::opt("toxic_to", Kind::EnumList(TOXIC_TO)),
    Field::opt(
        "toxic_parts",
        Kind::TextList {
            items: 20,
            len: SHORT_MAX,
        },
    ),
    Field::opt(
        "toxic_compounds",
        Kind::TextList {
            items: 20,
            len: SHORT_MAX,
        },
    ),
];
const ALLERGEN: &[Field] = &[
    Field::req("contact_allergen", Kind::Bool),
    Field::req("pollen_allergen", Kind::Bool),
];
const NAMES: Kind = Kind::TextList {
    items: 20,
    len: SHORT_MAX,
};
const ZONE: Kind = Kind::Pattern {
    max: 3,
    pattern: ZONE_PATTERN,
    check: is_zone,
};
const SIZE: Kind = Kind::Pattern {
    max: 9,
    pattern: SIZE_PATTERN,
    check: is_size_range,
};

const EPPO: Kind = Kind::Pattern {
    max: 6,
    pattern: EPPO_PATTERN,
    check: is_eppo_code,
};

/// EPPO codes: five or six capitals or digits (`LYPES`, `1SOLG` for a genus).
pub const EPPO_PATTERN: &str = "^[0-9A-Z]{5,6}$";

pub fn is_eppo_code(raw: &str) -> bool {
    (5..=6).contains(&raw.len())
        && raw
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
}

const FIELDS: &[Field] = &[
    Field::req("scientific_name", Kind::Pattern { max: NAME_MAX, pattern: SCIENTIFIC_NAME_PATTERN, check: is_scientific_name })
        .doc("binomial; unique with × and x treated alike"),
    Field::opt("common_names_en", NAMES).doc("the first is the display name"),
    Field::opt("common_names_de", NAMES),
    Field::req("family_key", Kind::Ref("botanical_family")).seed("family"),
    Field::opt("genus", Kind::Text(SHORT_MAX)).doc("the first word of scientific_name"),
    Field::opt("eppo_code", EPPO).doc(
        "the crop's EPPO code (gd.eppo.int, e.g. LYPES for tomato): the plant-protection \
         record names the crop by it",
    ),
    Field::opt("plant_category", Kind::Enum(CATEGORIES)),
    Field::opt("growth_habit", Kind::Enum(GROWTH_HABITS)),
    Field::opt("cycle_type", Kind::Enum(CYCLE_TYPES)).doc("botanical lifecycle; absent when unknown"),
    Field::opt("cultivation_cycle_type", Kind::Enum(&["annual"])).doc("set when a perennial is grown as an annual"),
    Field::opt("flowering_strategy", Kind::Enum(FLOWERING)),
    Field::opt("photoperiod_type", Kind::Enum(PHOTOPERIOD)),
    Field::opt("photosynthesis_type", Kind::Enum(PHOTOSYNTHESIS)),
    Field::opt("sowing_indoor_months", Kind::Months),
    Field::opt("direct_sow_months", Kind::Months),
    Field::opt("bloom_months", Kind::Months),
    Field::opt("harvest_months", Kind::Months),
    Field::opt("hardiness_zone_min", ZONE),
    Field::opt("hardiness_zone_max", ZONE).doc("not colder than hardiness_zone_min"),
    Field::opt("frost_sensitivity", Kind::Enum(FROST)),
    Field::opt("nutrient_demand_level", Kind::Enum(NUTRIENT_DEMAND)),
    Field::opt("indoor_suitable", Kind::Enum(SUITABILITY)),
    Field::opt("container_suitable", Kind::Enum(SUITABILITY)),
    Field::opt("balcony_suitable", Kind::Enum(SUITABILITY)),
    Field::opt("mature_height_cm", SIZE),
    Field::opt("spacing_cm", SIZE),
    Field::opt("sun_requirement", Kind::Enum(SUN)),
    Field::opt("watering_interval_days", Kind::Int(1, 90)),
    Field::always("toxicity", Kind::Object(TOXICITY)).doc("null when nothing is recorded (never read as not toxic)"),
    Field::always("toxicity_severity", Kind::Enum(SEVERITY)).doc("null unless toxicity says toxic"),
    Field::always("allergen_info", Kind::Object(ALLERGEN)).doc("null when nothing is recorded"),
    Field::always("allows_harvest", Kind::Bool).doc("null when unknown; never guessed"),
    Field::always("phase_sequence_key", Kind::Ref("phase_sequence"))
        .read_only()
        .doc("the explicitly bound phase sequence (PUT /species/{key}/phase-sequence); null when the selection rules decide"),
    Field::opt("description_en", Kind::LongText(TEXT_MAX)),
    Field::opt("care_en", Kind::LongText(TEXT_MAX)).doc("care guide"),
    Field::opt("care_de", Kind::LongText(TEXT_MAX)),
];

fn rules(doc: &Map<String, Value>, errors: &mut Vec<ErrorDetail>) {
    if let (Some(name), Some(g)) = (text(doc, "scientific_name"), text(doc, "genus"))
        && genus(name) != Some(g)
    {
        errors.push(ErrorDetail::new(
            "body.genus",
            "must be the first word of scientific_name",
            "value_error",
        ));
    }
    let zone = |f| text(doc, f).and_then(Zone::parse);
    if let (Some(min), Some(max)) = (zone("hardiness_zone_min"), zone("hardiness_zone_max"))
        && min > max
    {
        errors.push(ErrorDetail::new(
            "body.hardiness_zone_max",
            "must not be colder than hardiness_zone_min",
            "value_error",
        ));
    }
    let toxic = doc
        .get("toxicity")
        .and_then(|t| t.get("is_toxic"))
        .and_then(Value::as_bool);
    if toxic != Some(true) && doc.get("toxicity_severity").is_some_and(|s| !s.is_null()) {
        errors.push(ErrorDetail::new(
            "body.toxicity_severity",
            "only a species recorded as toxic has a severity",
            "value_error",
        ));
    }
    if text(doc, "cultivation_cycle_type").is_some() && text(doc, "cycle_type") == Some("annual") {
        errors.push(ErrorDetail::new(
            "body.cultivation_cycle_type",
            "only for species that are not annual themselves",
            "value_error",
        ));
    }
}

pub static SPECIES: KindSpec = KindSpec {
    kind: "species",
    label: "species",
    schema_name: "Species",
    fields: FIELDS,
    natural_key: NaturalKey::Field("scientific_name"),
    search: &["scientific_name", "common_names_en", "common_names_de"],
    filters: &[
        Filter {
            param: "family",
            how: FilterHow::Ref("family_key"),
            doc: "botanical family key",
        },
        Filter {
            param: "category",
            how: FilterHow::Equals("plant_category", CATEGORIES),
            doc: "plant category",
        },
        Filter {
            param: "growth_habit",
            how: FilterHow::Equals("growth_habit", GROWTH_HABITS),
            doc: "growth habit",
        },
        Filter {
            param: "cycle_type",
            how: FilterHow::Equals("cycle_type", CYCLE_TYPES),
            doc: "lifecycle",
        },
        Filter {
            param: "indoor_suitable",
            how: FilterHow::Equals("indoor_suitable", SUITABILITY),
            doc: "indoor suitability",
        },
        Filter {
            param: "sun_requirement",
            how: FilterHow::Equals("sun_requirement", SUN),
            doc: "light need",
        },
        Filter {
            param: "toxic",
            how: FilterHow::Known(&["toxicity", "is_toxic"]),
            doc: "recorded as toxic (true), as not toxic (false), or nothing recorded (unknown)",
        },
        Filter {
            param: "allows_harvest",
            how: FilterHow::Known(&["allows_harvest"]),
            doc: "harvest allowed, not allowed, or unknown",
        },
    ],
    rules,
    knowledge: &[
        KnowledgeText {
            section: "profile",
            language: "en",
            title: Some("common_names_en"),
            body: &["description_en"],
        },
        KnowledgeText {
            section: "care",
            language: "en",
            title: Some("common_names_en"),
            body: &["care_en"],
        },
        KnowledgeText {
            section: "care",
            language: "de",
            title: Some("common_names_de"),
            body: &["care_de"],
        },
    ],
    max_limit: 200,
};

pub struct SpeciesKind;
impl Catalogued for SpeciesKind {
    fn spec() -> &'static KindSpec {
        &SPECIES
    }
}

pub const TRAITS: &[&str] = &[
    "disease_resistant",
    "pest_resistant",
    "high_yield",
    "compact",
    "drought_tolerant",
    "cold_hardy",
    "heat_tolerant",
    "early_maturing",
    "long_season",
    "ornamental",
    "heirloom",
    "hybrid",
    "f1",
];
pub const SEED_TYPES: &[&str] = &["open_pollinated", "f1_hybrid", "clone"];

const CULTIVAR_FIELDS: &[Field] = &[
    Field::req("species_key", Kind::Ref("species")).seed("species"),
    Field::req("name", Kind::Text(SHORT_MAX)).doc("unique within the species"),
    Field::opt("breeder", Kind::Text(SHORT_MAX)),
    Field::opt("traits", Kind::EnumList(TRAITS)),
    Field::opt("seed_type", Kind::Enum(SEED_TYPES)),
    Field::opt("days_to_maturity", Kind::Int(1, 1095)),
    Field::opt("description_en", Kind::LongText(TEXT_MAX)),
];

pub static CULTIVAR: KindSpec = KindSpec {
    kind: "cultivar",
    label: "cultivar",
    schema_name: "Cultivar",
    fields: CULTIVAR_FIELDS,
    natural_key: NaturalKey::Scoped {
        name: "name",
        scope: "species_key",
    },
    search: &["name", "breeder"],
    filters: &[
        Filter {
            param: "species",
            how: FilterHow::Ref("species_key"),
            doc: "species key",
        },
        Filter {
            param: "trait",
            how: FilterHow::Contains("traits", TRAITS),
            doc: "has this trait",
        },
        Filter {
            param: "seed_type",
            how: FilterHow::Equals("seed_type", SEED_TYPES),
            doc: "seed type",
        },
    ],
    rules: crate::catalog::engine::spec::no_rules,
    knowledge: &[],
    max_limit: 200,
};

pub struct CultivarKind;
impl Catalogued for CultivarKind {
    fn spec() -> &'static KindSpec {
        &CULTIVAR
    }
}
