//! Curated zone texts (stored) and the zone view (limits computed, never stored).

use salvo::oapi::ToSchema;
use serde::Serialize;
use serde_json::Value;

use crate::catalog::engine::fields::{Field, Kind};
use crate::catalog::engine::spec::{KindSpec, NaturalKey};
use crate::catalog::vocab::*;
use crate::rules::zones::{ZONE_PATTERN, Zone, is_zone};

const FIELDS: &[Field] = &[
    Field::req(
        "zone",
        Kind::Pattern {
            max: 3,
            pattern: ZONE_PATTERN,
            check: is_zone,
        },
    ),
    Field::opt("description_en", Kind::LongText(TEXT_MAX)),
    Field::opt("description_de", Kind::LongText(TEXT_MAX)),
    Field::opt(
        "example_regions",
        Kind::TextList {
            items: 30,
            len: SHORT_MAX,
        },
    ),
    Field::opt(
        "typical_last_frost",
        Kind::Pattern {
            max: 5,
            pattern: MONTH_DAY_PATTERN,
            check: is_month_day,
        },
    ),
    Field::opt(
        "typical_first_frost",
        Kind::Pattern {
            max: 5,
            pattern: MONTH_DAY_PATTERN,
            check: is_month_day,
        },
    ),
];

pub static ZONE_TEXT: KindSpec = KindSpec {
    kind: "hardiness_zone",
    label: "hardiness zone",
    schema_name: "HardinessZoneText",
    fields: FIELDS,
    natural_key: NaturalKey::Field("zone"),
    search: &["zone"],
    filters: &[],
    rules: crate::catalog::engine::spec::no_rules,
    knowledge: &[],
    max_limit: 26,
};

/// A USDA hardiness zone: the annual extreme minimum temperature band.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct HardinessZone {
    /// `1a` … `13b`.
    pub zone: String,
    /// 0 for 1a … 25 for 13b.
    pub index: u8,
    pub min_temp_f: f64,
    pub max_temp_f: f64,
    /// Rounded to 0.1 °C.
    pub min_temp_c: f64,
    pub max_temp_c: f64,
    pub description_en: Option<String>,
    pub description_de: Option<String>,
    pub example_regions: Vec<String>,
    /// `MM-DD`.
    pub typical_last_frost: Option<String>,
    pub typical_first_frost: Option<String>,
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

impl HardinessZone {
    /// The zone with its computed limits and the curated text, when there is one.
    pub fn new(zone: Zone, text: Option<&Value>) -> Self {
        let l = zone.limits();
        let s = |f: &str| {
            text.and_then(|t| t.get(f))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        Self {
            zone: zone.name(),
            index: zone.index(),
            min_temp_f: l.min_f,
            max_temp_f: l.max_f,
            min_temp_c: round1(l.min_c),
            max_temp_c: round1(l.max_c),
            description_en: s("description_en"),
            description_de: s("description_de"),
            example_regions: text
                .and_then(|t| t.get("example_regions"))
                .and_then(Value::as_array)
                .map(|l| {
                    l.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default(),
            typical_last_frost: s("typical_last_frost"),
            typical_first_frost: s("typical_first_frost"),
        }
    }
}
