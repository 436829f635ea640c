//! The pest, disease and treatment kinds.

use serde_json::{Map, Value};

use crate::catalog::engine::fields::{Field, Kind};
use crate::catalog::engine::spec::Catalogued;
use crate::catalog::engine::spec::{
    Filter, FilterHow, KindSpec, KnowledgeText, NaturalKey, ordered, text,
};
use crate::catalog::vocab::*;
use crate::error::ErrorDetail;
use crate::rules::{karenz, resistance};

pub const PEST_TYPES: &[&str] = &["insect", "mite", "mollusc", "nematode", "mammal", "bird"];
pub const PATHOGENS: &[&str] = &[
    "fungal",
    "bacterial",
    "viral",
    "physiological",
    "oomycete",
    "protist",
];
pub const PLANT_PARTS: &[&str] = &["leaf", "stem", "root", "flower", "fruit"];
pub const TREATMENT_TYPES: &[&str] = &["cultural", "biological", "chemical", "mechanical"];
pub const APPLICATION: &[&str] = &["spray", "drench", "granular", "release", "cultural"];

const HOSTS: Field =
    Field::opt("host_species_keys", Kind::RefList("species", 500)).seed("host_species");

const PEST_FIELDS: &[Field] = &[
    Field::req("scientific_name", Kind::Text(NAME_MAX)),
    Field::opt("common_name_en", Kind::Text(SHORT_MAX)),
    Field::opt("common_name_de", Kind::Text(SHORT_MAX)),
    Field::opt("pest_type", Kind::Enum(PEST_TYPES)),
    Field::opt("lifecycle_days", Kind::Int(1, 3650)),
    Field::opt("optimal_temp_min", Kind::Num(-10.0, 60.0)),
    Field::opt("optimal_temp_max", Kind::Num(-10.0, 60.0)).doc("not below optimal_temp_min"),
    Field::opt("detection_difficulty", Kind::Enum(LOW_MEDIUM_HIGH)),
    Field::opt("damage_symptoms_en", Kind::LongText(TEXT_MAX)),
    Field::opt("description_en", Kind::LongText(TEXT_MAX)),
    HOSTS,
];

fn pest_rules(doc: &Map<String, Value>, errors: &mut Vec<ErrorDetail>) {
    ordered(doc, "optimal_temp_min", "optimal_temp_max", errors);
}

pub static PEST: KindSpec = KindSpec {
    kind: "pest",
    label: "pest",
    schema_name: "Pest",
    fields: PEST_FIELDS,
    natural_key: NaturalKey::Field("scientific_name"),
    search: &["scientific_name", "common_name_en", "common_name_de"],
    filters: &[
        Filter {
            param: "pest_type",
            how: FilterHow::Equals("pest_type", PEST_TYPES),
            doc: "pest type",
        },
        Filter {
            param: "detection_difficulty",
            how: FilterHow::Equals("detection_difficulty", LOW_MEDIUM_HIGH),
            doc: "how hard it is to spot",
        },
        Filter {
            param: "host",
            how: FilterHow::Ref("host_species_keys"),
            doc: "attacks this species (key)",
        },
    ],
    rules: pest_rules,
    knowledge: &[KnowledgeText {
        section: "pest",
        language: "en",
        title: Some("common_name_en"),
        body: &["description_en", "damage_symptoms_en"],
    }],
    max_limit: 200,
};

const DISEASE_FIELDS: &[Field] = &[
    Field::req("scientific_name", Kind::Text(NAME_MAX))
        .doc("pathogen, or a short English name for a disorder"),
    Field::opt("common_name_en", Kind::Text(SHORT_MAX)),
    Field::opt("common_name_de", Kind::Text(SHORT_MAX)),
    Field::opt("pathogen_type", Kind::Enum(PATHOGENS)),
    Field::opt("incubation_period_days", Kind::Int(0, 3650)),
    Field::opt(
        "environmental_triggers",
        Kind::TextList {
            items: 20,
            len: NAME_MAX,
        },
    ),
    Field::opt("affected_plant_parts", Kind::EnumList(PLANT_PARTS)),
    Field::opt("symptoms_en", Kind::LongText(TEXT_MAX)),
    Field::opt("description_en", Kind::LongText(TEXT_MAX)),
    HOSTS,
];

pub static DISEASE: KindSpec = KindSpec {
    kind: "disease",
    label: "disease",
    schema_name: "Disease",
    fields: DISEASE_FIELDS,
    natural_key: NaturalKey::Field("scientific_name"),
    search: &["scientific_name", "common_name_en", "common_name_de"],
    filters: &[
        Filter {
            param: "pathogen_type",
            how: FilterHow::Equals("pathogen_type", PATHOGENS),
            doc: "pathogen type",
        },
        Filter {
            param: "plant_part",
            how: FilterHow::Contains("affected_plant_parts", PLANT_PARTS),
            doc: "affects this plant part",
        },
        Filter {
            param: "host",
            how: FilterHow::Ref("host_species_keys"),
            doc: "affects this species (key)",
        },
    ],
    rules: crate::catalog::engine::spec::no_rules,
    knowledge: &[KnowledgeText {
        section: "disease",
        language: "en",
        title: Some("common_name_en"),
        body: &["description_en", "symptoms_en"],
    }],
    max_limit: 200,
};

/// Where a number a grower acts on comes from: a label, a registration number, an authority page.
pub const SOURCE_MAX: usize = 400;

/// One pre-harvest interval of a treatment: for a species, a botanical family, a crop group, or
/// (none of the three) every crop the label covers; with the label it comes from, as fields a
/// grower can look up (never Kultiva itself).
const CROP_INTERVAL_FIELDS: &[Field] = &[
    Field::opt("species_key", Kind::Ref("species"))
        .seed("species")
        .doc("the crop: this species"),
    Field::opt("family_key", Kind::Ref("botanical_family"))
        .seed("family")
        .doc("the crop: every species of this botanical family"),
    Field::opt("crop_group", Kind::Enum(CROP_GROUPS)).doc(
        "the crop: every species of this plant_category; none of the three: every crop \
         (the label's interval holds for all the crops it covers)",
    ),
    Field::req("days", Kind::Int(0, 365)).doc("days between application and harvest"),
    Field::req("product", Kind::Text(NAME_MAX))
        .doc("the product (trade) name on the label, e.g. \"Teldor\""),
    Field::req("authority", Kind::Text(SOURCE_MAX)).doc(
        "the authority, register or document the days are read from, e.g. \"BVL \
         Pflanzenschutzmittel-Verzeichnis\", \"US EPA Pesticide Product Label System\", \
         \"manufacturer's label\"",
    ),
    Field::opt("registration", Kind::Text(60))
        .doc("the registration number (BVL, EPA Reg. No.) where it is known for certain"),
    Field::req("label_crop", Kind::Text(NAME_MAX))
        .doc("the crop as the label names it, e.g. \"Weinrebe (grapevine)\""),
];

/// A resistance group (mode of action) of a treatment and its source.
const GROUP_FIELDS: &[Field] = &[
    Field::req(
        "code",
        Kind::Pattern {
            max: 12,
            pattern: resistance::GROUP_PATTERN,
            check: resistance::is_group_code,
        },
    )
    .doc("IRAC, FRAC or HRAC group, e.g. \"IRAC 3A\", \"FRAC 3\", \"FRAC M2\""),
    Field::req("source", Kind::Text(SOURCE_MAX)).doc("the classification it comes from"),
];

/// The crop groups an interval may name: the species' plant categories.
pub const CROP_GROUPS: &[&str] = crate::catalog::species::model::CATEGORIES;

const TREATMENT_FIELDS: &[Field] = &[
    Field::req("name", Kind::Text(NAME_MAX)),
    Field::req("treatment_type", Kind::Enum(TREATMENT_TYPES)),
    Field::opt("active_ingredient", Kind::Text(NAME_MAX)).doc("required for chemical treatments"),
    Field::opt("authorisation_number", Kind::Text(50)).doc(
        "the product's authorisation (registration) number where it is authorised, e.g. \
         the BVL number in Germany: the plant-protection record carries it",
    ),
    Field::opt("application_method", Kind::Enum(APPLICATION)),
    Field::req("safety_interval_days", Kind::Int(0, 365)).doc(
        "the longest of safety_intervals (0 when none is listed): a summary, never applied \
         to a crop the labels do not name",
    ),
    Field::opt(
        "safety_intervals",
        Kind::ObjectList(CROP_INTERVAL_FIELDS, 50),
    )
    .doc(
        "pre-harvest intervals per crop, each with its label (product, authority or \
         register, registration where known, the crop the label names); required when \
         safety_interval_days is above 0. A harvest of a plant waits the longest interval \
         listed for its species, family or crop group, else the longest listed for every \
         crop. A product (chemical or biological, not a release of beneficial organisms) \
         with no such entry for a plant's crop is refused for that plant: no label interval \
         is recorded, and none is guessed",
    ),
    Field::opt("resistance_groups", Kind::ObjectList(GROUP_FIELDS, 4)).doc(
        "modes of action (IRAC/FRAC/HRAC) with sources: the resistance rule counts \
         applications per group across products; without a group, per active ingredient",
    ),
    Field::opt("beneficial_organism", Kind::Bool).doc(
        "a release of living beneficial organisms (predatory mites, parasitic wasps, \
         nematodes, ladybirds, lacewings): never counted by the resistance rule",
    ),
    Field::opt("dosage_per_liter", Kind::Text(60)),
    Field::opt(
        "protective_equipment",
        Kind::TextList { items: 20, len: 60 },
    ),
    Field::opt("description_en", Kind::LongText(TEXT_MAX)).doc("how to apply"),
    Field::opt("target_pest_keys", Kind::RefList("pest", 200)).seed("targets_pests"),
    Field::opt("target_disease_keys", Kind::RefList("disease", 200)).seed("targets_diseases"),
    Field::opt("contraindicated_with_keys", Kind::RefList("treatment", 100))
        .seed("contraindicated_with"),
];

/// The per-crop intervals of a treatment record (entries that are not objects are left out:
/// the field check refuses them before).
pub fn crop_intervals(doc: &Map<String, Value>) -> Vec<karenz::CropInterval> {
    let text = |e: &Value, f: &str| e.get(f).and_then(Value::as_str).map(str::to_owned);
    doc.get("safety_intervals")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter(|e| e.is_object())
                .map(|e| karenz::CropInterval {
                    species_key: text(e, "species_key"),
                    family_key: text(e, "family_key"),
                    crop_group: text(e, "crop_group"),
                    days: e.get("days").and_then(Value::as_i64).unwrap_or(0),
                    source: karenz::LabelSource {
                        product: text(e, "product").unwrap_or_default(),
                        authority: text(e, "authority").unwrap_or_default(),
                        registration: text(e, "registration"),
                        label_crop: text(e, "label_crop").unwrap_or_default(),
                    },
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Whether a treatment puts nothing on the crop that a label would time: a mechanical or
/// cultural measure, or a release of living beneficial organisms (not a plant-protection
/// product under Regulation (EC) No 1107/2009, so no label and no pre-harvest interval).
pub fn applies_no_product(doc: &Map<String, Value>) -> bool {
    matches!(text(doc, "treatment_type"), Some("mechanical" | "cultural"))
        || doc.get("beneficial_organism").and_then(Value::as_bool) == Some(true)
}

/// The resistance group codes of a treatment record.
pub fn resistance_groups(doc: &Map<String, Value>) -> Vec<String> {
    doc.get("resistance_groups")
        .and_then(Value::as_array)
        .map(|l| {
            l.iter()
                .filter_map(|g| g.get("code").and_then(Value::as_str).map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn interval_rules(doc: &Map<String, Value>, errors: &mut Vec<ErrorDetail>) {
    let days = doc.get("safety_interval_days").and_then(Value::as_i64);
    let intervals = crop_intervals(doc);
    for (i, e) in intervals.iter().enumerate() {
        let named = [&e.species_key, &e.family_key, &e.crop_group]
            .iter()
            .filter(|c| c.is_some())
            .count();
        if named > 1 {
            errors.push(ErrorDetail::new(
                format!("body.safety_intervals[{i}]"),
                "name one crop: species_key, family_key or crop_group (none: every crop)",
                "value_error",
            ));
        }
        let s = &e.source;
        for (field, value) in [
            ("product", Some(&s.product)),
            ("authority", Some(&s.authority)),
            ("registration", s.registration.as_ref()),
            ("label_crop", Some(&s.label_crop)),
        ] {
            if value.is_some_and(|v| karenz::cites_kultiva(v)) {
                errors.push(ErrorDetail::new(
                    format!("body.safety_intervals[{i}].{field}"),
                    "cites Kultiva: an interval is sourced to the label, register or authority \
                     it is read from, never to this catalogue",
                    "value_error",
                ));
            }
        }
    }
    let longest = intervals.iter().map(|e| e.days).max();
    match (days, longest) {
        (Some(d), None) if d > 0 => errors.push(ErrorDetail::new(
            "body.safety_intervals",
            "a pre-harvest interval above 0 days needs its source: list it in safety_intervals \
             with the product, the authority or register and the crop the label names",
            "missing",
        )),
        (Some(d), Some(l)) if d != l => errors.push(ErrorDetail::new(
            "body.safety_interval_days",
            format!("must be the longest of safety_intervals ({l} days)"),
            "value_error",
        )),
        _ => {}
    }
}

fn treatment_rules(doc: &Map<String, Value>, errors: &mut Vec<ErrorDetail>) {
    interval_rules(doc, errors);
    if doc.get("beneficial_organism").and_then(Value::as_bool) == Some(true)
        && text(doc, "treatment_type") != Some("biological")
    {
        errors.push(ErrorDetail::new(
            "body.beneficial_organism",
            "only a biological treatment releases beneficial organisms",
            "value_error",
        ));
    }
    if text(doc, "treatment_type") == Some("chemical") && text(doc, "active_ingredient").is_none() {
        errors.push(ErrorDetail::new(
            "body.active_ingredient",
            "a chemical treatment names its active ingredient",
            "missing",
        ));
    }
}

pub static TREATMENT: KindSpec = KindSpec {
    kind: "treatment",
    label: "treatment",
    schema_name: "Treatment",
    fields: TREATMENT_FIELDS,
    natural_key: NaturalKey::Field("name"),
    search: &["name", "active_ingredient"],
    filters: &[
        Filter {
            param: "treatment_type",
            how: FilterHow::Equals("treatment_type", TREATMENT_TYPES),
            doc: "treatment type",
        },
        Filter {
            param: "application_method",
            how: FilterHow::Equals("application_method", APPLICATION),
            doc: "application",
        },
        Filter {
            param: "pest",
            how: FilterHow::Ref("target_pest_keys"),
            doc: "targets this pest (key)",
        },
        Filter {
            param: "disease",
            how: FilterHow::Ref("target_disease_keys"),
            doc: "targets this disease (key)",
        },
    ],
    rules: treatment_rules,
    knowledge: &[KnowledgeText {
        section: "treatment",
        language: "en",
        title: None,
        body: &["description_en"],
    }],
    max_limit: 200,
};

pub struct PestKind;
impl Catalogued for PestKind {
    fn spec() -> &'static KindSpec {
        &PEST
    }
}
pub struct DiseaseKind;
impl Catalogued for DiseaseKind {
    fn spec() -> &'static KindSpec {
        &DISEASE
    }
}
pub struct TreatmentKind;
impl Catalogued for TreatmentKind {
    fn spec() -> &'static KindSpec {
        &TREATMENT
    }
}
