//! The pest, disease and treatment kinds.

use serde_json::{Map, Value};

use crate::catalog::engine::fields::{Field, Kind};
use crate::catalog::engine::http::Catalogued;
use crate::catalog::engine::spec::{
    Filter, FilterHow, KindSpec, KnowledgeText, NaturalKey, ordered, text,
};
use crate::catalog::vocab::*;
use crate::error::ErrorDetail;

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

const TREATMENT_FIELDS: &[Field] = &[
    Field::req("name", Kind::Text(NAME_MAX)),
    Field::req("treatment_type", Kind::Enum(TREATMENT_TYPES)),
    Field::opt("active_ingredient", Kind::Text(NAME_MAX)).doc("required for chemical treatments"),
    Field::opt("application_method", Kind::Enum(APPLICATION)),
    Field::req("safety_interval_days", Kind::Int(0, 365))
        .doc("pre-harvest interval in days; above 0 for chemical treatments"),
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

fn treatment_rules(doc: &Map<String, Value>, errors: &mut Vec<ErrorDetail>) {
    if text(doc, "treatment_type") != Some("chemical") {
        return;
    }
    if doc.get("safety_interval_days").and_then(Value::as_i64) == Some(0) {
        errors.push(ErrorDetail::new(
            "body.safety_interval_days",
            "a chemical treatment needs a pre-harvest interval above 0 days",
            "value_error",
        ));
    }
    if text(doc, "active_ingredient").is_none() {
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
