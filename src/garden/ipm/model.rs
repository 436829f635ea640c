//! Inspections and treatment applications: the wire shapes and the bodies of `/ipm/...`.

use salvo::oapi::ToSchema;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

use super::input::{object_list, opt_choice, opt_instant, opt_line, opt_number, text_list};
use crate::catalog::ipm::model::{APPLICATION, PLANT_PARTS};
use crate::garden::plants::model::{opt_uuid, req_key};
use crate::values::json::{FromJson, JsonFields};

pub const NOTES_MAX: usize = 2000;
pub const WHO_MAX: usize = 200;
pub const FINDINGS_MAX: usize = 25;
pub const LIST_MAX: usize = 50;
pub const PLANTS_MAX: usize = 200;
pub const PRESSURE: &[&str] = &["none", "low", "medium", "high", "critical"];
pub const SEVERITY: &[&str] = &["low", "medium", "high", "critical"];
pub const DOSE_UNITS: &[&str] = &["ml_per_l", "g_per_l", "ml", "g", "count"];
pub const PHOTO_REF_MAX: usize = 200;
pub const SYMPTOM_MAX: usize = 500;

/// How hard pests or diseases press on the plant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum PressureLevel {
    None,
    Low,
    Medium,
    High,
    Critical,
}

/// How bad one finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Low,
    Medium,
    High,
    Critical,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum PlantPart {
    Leaf,
    Stem,
    Root,
    Flower,
    Fruit,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ApplicationMethod {
    Spray,
    Drench,
    Granular,
    Release,
    Cultural,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DoseUnit {
    MlPerL,
    GPerL,
    Ml,
    G,
    Count,
}

/// One finding of an inspection: a pest or disease of the catalogue (or a symptom alone).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[salvo(schema(name = "InspectionFinding"))]
#[serde(deny_unknown_fields)]
pub struct Finding {
    /// A pest of the catalogue (key).
    #[salvo(schema(format = "uuid"))]
    pub pest_key: Option<String>,
    /// A disease of the catalogue (key).
    #[salvo(schema(format = "uuid"))]
    pub disease_key: Option<String>,
    /// What was seen, up to 500 characters. A finding names a pest, a disease or a symptom.
    #[salvo(schema(
        min_length = 1,
        max_length = 500,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub symptom: Option<String>,
    pub severity: Option<Severity>,
    /// How sure the inspector is, 0.0 to 1.0.
    #[salvo(schema(minimum = 0.0, maximum = 1.0))]
    pub confidence: Option<f64>,
    pub affected_plant_part: Option<PlantPart>,
    /// Share of the plant (or of the location's plants) affected, 0.0 to 1.0.
    #[salvo(schema(minimum = 0.0, maximum = 1.0))]
    pub affected_share: Option<f64>,
    /// Why, up to 2000 characters.
    #[salvo(schema(
        max_length = 2000,
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]*$"
    ))]
    pub rationale: Option<String>,
}

impl FromJson for Finding {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let pest_key = opt_line(f, "pest_key", 100);
        let disease_key = opt_line(f, "disease_key", 100);
        let symptom = opt_line(f, "symptom", SYMPTOM_MAX);
        let severity = opt_choice(f, "severity", SEVERITY);
        let confidence = opt_number(f, "confidence", 0.0, 1.0, false);
        let part = opt_choice(f, "affected_plant_part", PLANT_PARTS);
        let share = opt_number(f, "affected_share", 0.0, 1.0, false);
        let rationale = f.opt_long_text("rationale", NOTES_MAX);
        let (pest_key, disease_key, symptom) = (pest_key?, disease_key?, symptom?);
        if pest_key.is_none() && disease_key.is_none() && symptom.is_none() {
            f.reject_field(
                "pest_key",
                "a finding names a pest_key, a disease_key or a symptom",
                "missing",
            );
            return None;
        }
        Some(Self {
            pest_key,
            disease_key,
            symptom,
            severity: severity?.and_then(|s| serde_json::from_value(s.into()).ok()),
            confidence: confidence?,
            affected_plant_part: part?.and_then(|s| serde_json::from_value(s.into()).ok()),
            affected_share: share?,
            rationale: rationale?,
        })
    }
}

/// Body of `POST /t/{slug}/ipm/inspections`: exactly one of `plant_key` and `location_key`.
/// Pest and disease keys (of findings and the `detected_*` lists) must be catalogue keys (404
/// otherwise); they are merged and deduplicated.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[salvo(schema(name = "InspectionCreate"))]
#[serde(deny_unknown_fields)]
pub struct NewInspection {
    pub plant_key: Option<Uuid>,
    pub location_key: Option<Uuid>,
    /// Default `none`.
    pub pressure_level: Option<PressureLevel>,
    /// Who inspected (up to 200 characters); default: the caller.
    #[salvo(schema(
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub inspector: Option<String>,
    /// RFC 3339, not in the future; default now.
    #[salvo(schema(value_type = Option<String>, format = "date-time"))]
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub inspected_at: Option<OffsetDateTime>,
    #[salvo(schema(max_items = 50))]
    #[serde(default)]
    pub symptoms_observed: Vec<String>,
    #[salvo(schema(max_items = 50))]
    #[serde(default)]
    pub detected_pest_keys: Vec<String>,
    #[salvo(schema(max_items = 50))]
    #[serde(default)]
    pub detected_disease_keys: Vec<String>,
    #[salvo(schema(max_items = 25))]
    #[serde(default)]
    pub findings: Vec<Finding>,
    /// Keys of photos (stored by the diary later), up to 50.
    #[salvo(schema(max_items = 50))]
    #[serde(default)]
    pub photo_refs: Vec<String>,
    #[salvo(schema(
        max_length = 2000,
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]*$"
    ))]
    pub notes: Option<String>,
}

impl FromJson for NewInspection {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let plant_key = opt_uuid(f, "plant_key");
        let location_key = opt_uuid(f, "location_key");
        let pressure = opt_choice(f, "pressure_level", PRESSURE);
        let inspector = opt_line(f, "inspector", WHO_MAX);
        let inspected_at = opt_instant(f, "inspected_at");
        let symptoms = text_list(f, "symptoms_observed", LIST_MAX, SYMPTOM_MAX);
        let pests = text_list(f, "detected_pest_keys", LIST_MAX, 100);
        let diseases = text_list(f, "detected_disease_keys", LIST_MAX, 100);
        let findings = object_list::<Finding>(f, "findings", FINDINGS_MAX);
        let photos = text_list(f, "photo_refs", LIST_MAX, PHOTO_REF_MAX);
        let notes = f.opt_long_text("notes", NOTES_MAX);
        let (plant_key, location_key) = (plant_key?, location_key?);
        if plant_key.is_some() == location_key.is_some() {
            f.reject_field(
                "plant_key",
                "name exactly one of plant_key and location_key",
                "value_error",
            );
            return None;
        }
        Some(Self {
            plant_key,
            location_key,
            pressure_level: pressure?.and_then(|s| serde_json::from_value(s.into()).ok()),
            inspector: inspector?,
            inspected_at: inspected_at?,
            symptoms_observed: symptoms?,
            detected_pest_keys: pests?,
            detected_disease_keys: diseases?,
            findings: findings?,
            photo_refs: photos?,
            notes: notes?,
        })
    }
}

/// An inspection as stored.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Inspection {
    pub key: Uuid,
    pub plant_key: Option<Uuid>,
    pub location_key: Option<Uuid>,
    pub inspector: String,
    #[serde(with = "time::serde::rfc3339")]
    #[salvo(schema(value_type = String, format = "date-time"))]
    pub inspected_at: OffsetDateTime,
    pub pressure_level: PressureLevel,
    pub symptoms_observed: Vec<String>,
    /// Every pest named (by the list or a finding), deduplicated.
    pub detected_pest_keys: Vec<String>,
    pub detected_disease_keys: Vec<String>,
    pub findings: Vec<Finding>,
    pub photo_refs: Vec<String>,
    pub notes: Option<String>,
    pub created_by: String,
    #[serde(with = "time::serde::rfc3339")]
    #[salvo(schema(value_type = String, format = "date-time"))]
    pub created_at: OffsetDateTime,
}

/// Body of `POST /t/{slug}/ipm/treatments` (a treatment application): `plant_keys`,
/// `location_key` (every live plant at that location) or both (the plants named and those at
/// the location).
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[salvo(schema(name = "TreatmentApplicationCreate"))]
#[serde(deny_unknown_fields)]
pub struct NewApplication {
    /// A treatment of the catalogue.
    #[salvo(schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub treatment_key: String,
    /// 1 to 200 plants of this garden.
    #[salvo(schema(min_items = 1, max_items = 200))]
    pub plant_keys: Option<Vec<Uuid>>,
    /// Every live plant at this location.
    pub location_key: Option<Uuid>,
    /// RFC 3339, not in the future; default now. Its local day in the garden's time zone is
    /// the first day of the safety interval.
    #[salvo(schema(value_type = Option<String>, format = "date-time"))]
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub applied_at: Option<OffsetDateTime>,
    /// Above 0, at most 100000; needs `dose_unit`.
    #[salvo(schema(exclusive_minimum = 0.0, maximum = 100000.0))]
    pub dose: Option<f64>,
    pub dose_unit: Option<DoseUnit>,
    /// Above 0, at most 10000 litres.
    #[salvo(schema(exclusive_minimum = 0.0, maximum = 10000.0))]
    pub water_volume_liters: Option<f64>,
    /// Default: the treatment's application method (else `spray`).
    pub method: Option<ApplicationMethod>,
    /// Who applied it (up to 200 characters); default: the caller.
    #[salvo(schema(
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub applied_by: Option<String>,
    #[salvo(schema(
        max_length = 2000,
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]*$"
    ))]
    pub notes: Option<String>,
    /// Overrides `RESISTANCE_WARNING` (recorded on the application). Default false.
    #[serde(default)]
    pub acknowledge_resistance: bool,
    /// The crop's BBCH growth stage, two digits (`00`-`99`); default: each plant's principal
    /// stage from its phase, where the phase is one.
    #[salvo(schema(pattern = "^[0-9]{2}$"))]
    pub bbch_code: Option<String>,
    /// Treated area in m² (above 0, at most 1000000).
    #[salvo(schema(exclusive_minimum = 0.0, maximum = 1000000.0))]
    pub treated_area_m2: Option<f64>,
    /// The pests treated (catalogue keys, up to 20): the reason in the plant-protection record.
    #[serde(default)]
    #[salvo(schema(max_items = 20))]
    pub target_pest_keys: Vec<String>,
    /// The diseases treated (catalogue keys, up to 20).
    #[serde(default)]
    #[salvo(schema(max_items = 20))]
    pub target_disease_keys: Vec<String>,
}

impl FromJson for NewApplication {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let treatment_key = req_key(f, "treatment_key");
        let plant_keys = uuid_list(f, "plant_keys", PLANTS_MAX);
        let location_key = opt_uuid(f, "location_key");
        let applied_at = opt_instant(f, "applied_at");
        let dose = opt_number(f, "dose", 0.0, 100_000.0, true);
        let dose_unit = opt_choice(f, "dose_unit", DOSE_UNITS);
        let water = opt_number(f, "water_volume_liters", 0.0, 10_000.0, true);
        let method = opt_choice(f, "method", APPLICATION);
        let applied_by = opt_line(f, "applied_by", WHO_MAX);
        let notes = f.opt_long_text("notes", NOTES_MAX);
        let ack = f.flag("acknowledge_resistance", false);
        let bbch = opt_line(f, "bbch_code", 2);
        let area = opt_number(f, "treated_area_m2", 0.0, 1_000_000.0, true);
        let pests = text_list(f, "target_pest_keys", TARGETS_MAX, 100);
        let diseases = text_list(f, "target_disease_keys", TARGETS_MAX, 100);
        let bbch = match bbch? {
            Some(code) if !crate::rules::bbch::is_code(&code) => {
                f.reject_field(
                    "bbch_code",
                    "must be a BBCH code of two digits, e.g. 65",
                    "value_error",
                );
                return None;
            }
            other => other,
        };
        let (plant_keys, location_key, dose, dose_unit) =
            (plant_keys?, location_key?, dose?, dose_unit?);
        if plant_keys.is_none() && location_key.is_none() {
            f.reject_field(
                "plant_keys",
                "name plant_keys, location_key or both",
                "missing",
            );
            return None;
        }
        if dose.is_some() != dose_unit.is_some() {
            f.reject_field(
                if dose.is_some() { "dose_unit" } else { "dose" },
                "dose and dose_unit go together",
                "missing",
            );
            return None;
        }
        Some(Self {
            treatment_key: treatment_key?,
            plant_keys,
            location_key,
            applied_at: applied_at?,
            dose,
            dose_unit: dose_unit.and_then(|s| serde_json::from_value(s.into()).ok()),
            water_volume_liters: water?,
            method: method?.and_then(|s| serde_json::from_value(s.into()).ok()),
            applied_by: applied_by?,
            notes: notes?,
            acknowledge_resistance: ack?,
            bbch_code: bbch,
            treated_area_m2: area?,
            target_pest_keys: pests?,
            target_disease_keys: diseases?,
        })
    }
}

/// At most this many pests (and diseases) as the reason of one application.
pub const TARGETS_MAX: usize = 20;

/// An optional list of 1..=max plant keys (UUIDs), deduplicated.
fn uuid_list(f: &mut JsonFields, name: &'static str, max: usize) -> Option<Option<Vec<Uuid>>> {
    let Some(v) = f.value(name) else {
        return Some(None);
    };
    let serde_json::Value::Array(list) = v else {
        f.reject_field(name, "must be a list of keys (UUID)", "type_error");
        return None;
    };
    if list.is_empty() || list.len() > max {
        f.reject_field(name, format!("1 to {max} keys"), "value_error");
        return None;
    }
    let mut out = Vec::new();
    let mut ok = true;
    for (i, item) in list.iter().enumerate() {
        match item
            .as_str()
            .and_then(crate::garden::plants::model::parse_key)
        {
            Some(k) => {
                if !out.contains(&k) {
                    out.push(k);
                }
            }
            None => {
                ok = false;
                f.reject_field(
                    &format!("{name}[{i}]"),
                    "must be a key (UUID)",
                    "value_error",
                );
            }
        }
    }
    ok.then_some(Some(out))
}

/// One plant an application touched and its safety interval, which depends on the plant's
/// crop: the longest interval the treatment lists for its species, family or crop group, else
/// the treatment's longest.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TouchedPlant {
    pub plant_key: Uuid,
    /// First day of the interval (YYYY-MM-DD): the local day of `applied_at` in the garden's
    /// time zone (UTC when none is set), counted when read.
    pub applied_on: String,
    /// Days between application and harvest for this plant's crop.
    pub safety_interval_days: i32,
    /// Where those days come from (label, registration number or authority page); null when
    /// the treatment has no interval.
    pub interval_source: Option<String>,
    /// Last day a harvest is refused; null when the treatment has no interval.
    pub last_blocked_day: Option<String>,
    /// First day a harvest is allowed again.
    pub safe_on: String,
    /// The crop's EPPO code (from the species in the catalogue; null when it has none).
    pub eppo_code: Option<String>,
    /// BBCH principal growth stage (0-9): from the given code, else from the plant's phase
    /// where the phase is one principal stage; null otherwise.
    pub bbch_principal: Option<i16>,
}

impl TouchedPlant {
    pub fn new(
        plant_key: Uuid,
        applied_on: time::Date,
        days: i32,
        interval_source: Option<String>,
    ) -> Self {
        let days64 = i64::from(days);
        Self {
            plant_key,
            applied_on: applied_on.to_string(),
            safety_interval_days: days,
            interval_source,
            last_blocked_day: crate::rules::karenz::last_blocked_day(applied_on, days64)
                .map(|d| d.to_string()),
            safe_on: crate::rules::karenz::safe_on(applied_on, days64).to_string(),
            eppo_code: None,
            bbch_principal: None,
        }
    }

    /// With the crop facts the plant-protection record keeps.
    pub fn with_crop(mut self, eppo_code: Option<String>, bbch_principal: Option<i16>) -> Self {
        self.eppo_code = eppo_code;
        self.bbch_principal = bbch_principal;
        self
    }
}

/// A treatment application as stored (catalogue facts copied at application time).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Application {
    pub key: Uuid,
    pub treatment_key: String,
    pub treatment_name: String,
    pub treatment_type: String,
    pub active_ingredient: Option<String>,
    /// The longest interval among the touched plants (each plant's own is in `plants`).
    pub safety_interval_days: i32,
    /// The treatment's resistance groups (IRAC/FRAC/HRAC) when it was applied.
    pub resistance_groups: Vec<String>,
    pub location_key: Option<Uuid>,
    #[serde(with = "time::serde::rfc3339")]
    #[salvo(schema(value_type = String, format = "date-time"))]
    pub applied_at: OffsetDateTime,
    pub dose: Option<f64>,
    pub dose_unit: Option<String>,
    pub water_volume_liters: Option<f64>,
    pub method: String,
    pub applied_by: String,
    pub notes: Option<String>,
    /// The resistance warning was overridden with `acknowledge_resistance`.
    pub resistance_acknowledged: bool,
    /// Earlier applications of the same resistance group (else active ingredient) within 90
    /// days (the most-treated plant and group).
    pub resistance_count: i32,
    /// The product's authorisation number in the catalogue when it was applied (null: the
    /// catalogue has none).
    pub authorisation_number: Option<String>,
    /// The BBCH code given with the application (two digits); null when not given (each
    /// plant's `bbch_principal` then comes from its phase where it can).
    pub bbch_code: Option<String>,
    /// Treated area in m² when given.
    pub treated_area_m2: Option<f64>,
    /// The reason: pests and diseases treated (catalogue keys).
    pub target_pest_keys: Vec<String>,
    pub target_disease_keys: Vec<String>,
    pub plants: Vec<TouchedPlant>,
    pub created_by: String,
    #[serde(with = "time::serde::rfc3339")]
    #[salvo(schema(value_type = String, format = "date-time"))]
    pub created_at: OffsetDateTime,
    /// Advice given when it was recorded (not stored): one more application of the class
    /// reaches the resistance limit.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// One row of the plant-protection record: one treatment application, with the facts
/// Regulation (EU) 2023/564 asks for (the README maps each column to the regulation's field).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[salvo(schema(name = "PlantProtectionRow"))]
pub struct ProtectionRow {
    pub application_key: Uuid,
    /// The day of the application in the garden's time zone (YYYY-MM-DD).
    pub date: String,
    /// The moment of the application in the garden's time zone (RFC 3339 with its offset).
    pub applied_at: String,
    /// EPPO codes of the crops treated (from their species; empty where the catalogue has none).
    pub crop_eppo_codes: Vec<String>,
    /// Scientific names of the crops treated.
    pub crop_species: Vec<String>,
    /// The BBCH code given with the application.
    pub bbch_code: Option<String>,
    /// BBCH principal growth stages of the plants treated.
    pub bbch_principal_stages: Vec<i16>,
    /// `given` (bbch_code), `phase` (from the plants' phases, BBCH monograph principal stages),
    /// or `unknown`.
    pub bbch_source: String,
    pub product_name: String,
    pub authorisation_number: Option<String>,
    pub active_ingredient: Option<String>,
    pub dose: Option<f64>,
    pub dose_unit: Option<String>,
    pub water_volume_liters: Option<f64>,
    pub treated_area_m2: Option<f64>,
    /// Number of plants treated.
    pub plant_count: i64,
    /// Where: the location named by the application, else the locations of the plants treated.
    pub places: Vec<String>,
    /// Who applied it.
    pub operator: String,
    /// The reason: pests and diseases treated (catalogue names).
    pub target_pests: Vec<String>,
    pub target_diseases: Vec<String>,
    pub method: String,
    pub safety_interval_days: i32,
    pub notes: Option<String>,
}

/// `GET /t/{slug}/ipm/applications/export` as JSON.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[salvo(schema(name = "PlantProtectionRecord"))]
pub struct ProtectionRecord {
    pub garden: String,
    /// The garden's time zone the dates are in (IANA name; UTC when none is set).
    pub timezone: String,
    /// First and last day covered (YYYY-MM-DD, inclusive).
    pub from: String,
    pub to: String,
    pub count: usize,
    pub rows: Vec<ProtectionRow>,
}

impl ProtectionRecord {
    /// The column names of the CSV form, in order (the JSON row's field names).
    pub const COLUMNS: &'static [&'static str] = &[
        "application_key",
        "date",
        "applied_at",
        "crop_eppo_codes",
        "crop_species",
        "bbch_code",
        "bbch_principal_stages",
        "bbch_source",
        "product_name",
        "authorisation_number",
        "active_ingredient",
        "dose",
        "dose_unit",
        "water_volume_liters",
        "treated_area_m2",
        "plant_count",
        "places",
        "operator",
        "target_pests",
        "target_diseases",
        "method",
        "safety_interval_days",
        "notes",
    ];

    /// The download's file name: `plant-protection-{garden}-{from}-{to}.{ext}`.
    pub fn file_name(&self, ext: &str) -> String {
        format!(
            "plant-protection-{}-{}-{}.{ext}",
            self.garden, self.from, self.to
        )
    }

    /// The record as CSV (RFC 4180 quoting; lists joined with `; `).
    pub fn to_csv(&self) -> Result<Vec<u8>, csv::Error> {
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record(Self::COLUMNS)?;
        let opt = |v: &Option<String>| v.clone().unwrap_or_default();
        let num = |v: Option<f64>| v.map(|n| n.to_string()).unwrap_or_default();
        for r in &self.rows {
            let stages: Vec<String> = r
                .bbch_principal_stages
                .iter()
                .map(ToString::to_string)
                .collect();
            w.write_record([
                r.application_key.to_string(),
                r.date.clone(),
                r.applied_at.clone(),
                r.crop_eppo_codes.join("; "),
                r.crop_species.join("; "),
                opt(&r.bbch_code),
                stages.join("; "),
                r.bbch_source.clone(),
                r.product_name.clone(),
                opt(&r.authorisation_number),
                opt(&r.active_ingredient),
                num(r.dose),
                opt(&r.dose_unit),
                num(r.water_volume_liters),
                num(r.treated_area_m2),
                r.plant_count.to_string(),
                r.places.join("; "),
                r.operator.clone(),
                r.target_pests.join("; "),
                r.target_diseases.join("; "),
                r.method.clone(),
                r.safety_interval_days.to_string(),
                opt(&r.notes),
            ])?;
        }
        w.into_inner().map_err(|e| e.into_error().into())
    }
}

/// A plant whose resistance group is at or one short of its limit today (the garden's local
/// day): the next application of the group is refused (`reached`) or reaches the limit
/// (`near`). Groups outside the count (FRAC M, BM) never appear.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ResistancePressure {
    pub plant_key: Uuid,
    pub plant_name: String,
    /// The counted class: a resistance group (`FRAC 3`) or, without one, the active ingredient.
    pub group: String,
    /// Applications of the group to the plant within the window ending today.
    pub applications: usize,
    pub limit: usize,
    pub window_days: i64,
    /// `near` (one more reaches the limit) or `reached` (the next one is refused unless
    /// acknowledged).
    pub state: String,
    /// Where the limit comes from.
    pub source: String,
}
