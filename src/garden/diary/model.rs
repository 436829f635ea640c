//! Diary entries and their analysis: the wire shapes and the bodies of `/diary-entries/...`.

use std::collections::BTreeMap;

use salvo::oapi::ToSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use time::{Date, OffsetDateTime};
use uuid::Uuid;

use crate::garden::fields::opt_key;
use crate::garden::ipm::input::{opt_past_date, text_list};
use crate::values::json::{FromJson, JsonFields, Patch, is_blank, parse_json};

pub const TEXT_MAX: usize = 10_000;
/// An entry's title: one line.
pub const TITLE_MAX: usize = 200;
pub const TAGS_MAX: usize = 20;
pub const TAG_MAX: usize = 50;
pub const MEASUREMENTS_MAX: usize = 20;
pub const MEASUREMENT_TEXT_MAX: usize = 200;
pub const SUMMARY_MAX: usize = 4000;
pub const FINDINGS_MAX: usize = 25;
pub const FINDING_MAX: usize = 500;
pub const FINDING_DETAIL_MAX: usize = 2000;
/// The agent's label for the worker holding a lease.
pub const WORKER_ID_MAX: usize = 200;
pub const ACTIONS_MAX: usize = 10;
pub const ACTION_MAX: usize = 500;
/// Photos an analysis may name as the ones it looked at.
pub const ANALYZED_PHOTOS_MAX: usize = 5;
pub const MODEL_MAX: usize = 200;
pub const RECIPE_VERSION_MAX: usize = 50;
/// Why a failed analysis failed.
pub const ERROR_MAX: usize = 2000;
pub const ENTRY_TYPES: &[&str] = &[
    "observation",
    "measurement",
    "care",
    "problem",
    "harvest",
    "milestone",
    "note",
];
pub const ANALYSIS_STATES: &[&str] = &["requested", "in_progress", "completed", "failed"];
pub const RESULT_STATUSES: &[&str] = &["completed", "failed"];

/// The recognised measurement keys with their bounds (`leaf_count` is a whole number).
pub const MEASUREMENT_KEYS: &[(&str, f64, f64)] = &[
    ("ec_ms_cm", 0.0, 20.0),
    ("ph", 0.0, 14.0),
    ("temperature_c", -50.0, 70.0),
    ("humidity_percent", 0.0, 100.0),
    ("height_cm", 0.0, 10_000.0),
    ("leaf_count", 0.0, 100_000.0),
];

/// The disclaimer stored with every analysis result. Set by the server: an agent can neither
/// omit nor change it (`submit_diary_analysis` has no such argument).
pub const DISCLAIMER: &str = "Automated analysis by an AI agent, made from the diary entry alone. \
    It can be wrong or incomplete and is no substitute for expert advice: check it before you \
    act on it, above all before applying any treatment.";

/// What a diary entry is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[salvo(schema(name = "DiaryEntryType"))]
#[serde(rename_all = "snake_case")]
pub enum EntryType {
    Observation,
    Measurement,
    Care,
    Problem,
    Harvest,
    Milestone,
    Note,
}

/// A measurement value as typed by a person: a number, a short text or a yes/no.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[salvo(schema(name = "DiaryMeasurementValue"))]
#[serde(untagged)]
pub enum MeasurementValue {
    Number(f64),
    Text(String),
    Flag(bool),
}

const KEY_PATTERN_MAX: usize = 40;
/// What `measurement_key_ok` accepts, as a schema pattern (REST document and tool alike).
pub const MEASUREMENT_NAME_PATTERN: &str = "^[a-z][a-z0-9_]{0,39}$";

fn measurement_key_ok(k: &str) -> bool {
    let mut chars = k.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && k.len() <= KEY_PATTERN_MAX
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// The JSON Schema of what [`measurements`] accepts (the tool server publishes it).
pub fn measurements_schema() -> Value {
    let mut known = Map::new();
    for (name, min, max) in MEASUREMENT_KEYS {
        let kind = if *name == "leaf_count" {
            "integer"
        } else {
            "number"
        };
        known.insert(
            (*name).to_owned(),
            serde_json::json!({"type": kind, "minimum": min, "maximum": max}),
        );
    }
    serde_json::json!({
        "type": "object",
        "maxProperties": MEASUREMENTS_MAX,
        "propertyNames": {"pattern": MEASUREMENT_NAME_PATTERN},
        "properties": known,
        "additionalProperties": {"anyOf": [
            {"type": "number"},
            {"type": "boolean"},
            {"type": "string", "minLength": 1, "maxLength": MEASUREMENT_TEXT_MAX,
             "pattern": crate::catalog::engine::fields::LINE_PATTERN},
        ]},
    })
}

/// Reads `measurements`: an object of at most 20 keys (`^[a-z][a-z0-9_]{0,39}$`). The
/// recognised keys are numbers within their bounds; any further key holds a number, a text
/// of 1 to 200 characters or a boolean. Absent or null: empty.
pub fn measurements(f: &mut JsonFields, name: &'static str) -> Option<Map<String, Value>> {
    let Some(v) = f.value(name) else {
        return Some(Map::new());
    };
    let Value::Object(map) = v else {
        f.reject_field(name, "must be an object of measurements", "type_error");
        return None;
    };
    if map.len() > MEASUREMENTS_MAX {
        f.reject_field(
            name,
            format!("at most {MEASUREMENTS_MAX} measurements"),
            "too_long",
        );
        return None;
    }
    let mut out = Map::new();
    let mut ok = true;
    for (k, v) in map {
        let field = format!("{name}.{}", k.chars().take(64).collect::<String>());
        if !measurement_key_ok(&k) {
            f.reject_field(
                &field,
                "a measurement name is 1 to 40 characters: a lowercase letter, then lowercase \
                 letters, digits or _",
                "value_error",
            );
            ok = false;
            continue;
        }
        if let Some((_, min, max)) = MEASUREMENT_KEYS.iter().find(|(n, _, _)| *n == k) {
            let n = v.as_f64().filter(|x| x.is_finite());
            // A count is an integer as JSON Schema counts them (`12.0` too), stored as `12`.
            let stored = if k == "leaf_count" {
                crate::values::json::whole_number(&v).map(Value::from)
            } else {
                Some(v)
            };
            match (n, stored) {
                (Some(x), Some(stored)) if x >= *min && x <= *max => {
                    out.insert(k, stored);
                }
                _ => {
                    f.reject_field(
                        &field,
                        format!(
                            "must be a {} from {min} to {max}",
                            if k == "leaf_count" {
                                "whole number"
                            } else {
                                "number"
                            }
                        ),
                        "value_error",
                    );
                    ok = false;
                }
            }
            continue;
        }
        let good = match &v {
            Value::Number(n) => n.as_f64().is_some_and(f64::is_finite),
            Value::Bool(_) => true,
            Value::String(s) => {
                let t = s.trim_matches(is_blank);
                !t.is_empty()
                    && s.chars().count() <= MEASUREMENT_TEXT_MAX
                    && !s.chars().any(char::is_control)
            }
            _ => false,
        };
        if good {
            let v = match v {
                Value::String(s) => Value::String(s.trim_matches(is_blank).to_owned()),
                other => other,
            };
            out.insert(k, v);
        } else {
            f.reject_field(
                &field,
                format!(
                    "must be a number, a boolean or a text of 1 to {MEASUREMENT_TEXT_MAX} \
                     characters without control characters"
                ),
                "value_error",
            );
            ok = false;
        }
    }
    ok.then_some(out)
}

/// Tags: at most 20 of 1 to 50 characters, stored in lower case, duplicates dropped.
pub fn tags(f: &mut JsonFields, name: &'static str) -> Option<Vec<String>> {
    let list = text_list(f, name, TAGS_MAX, TAG_MAX)?;
    let mut out: Vec<String> = Vec::with_capacity(list.len());
    for t in list {
        let t = t.to_lowercase();
        if !out.contains(&t) {
            out.push(t);
        }
    }
    Some(out)
}

fn entry_type(f: &mut JsonFields, name: &'static str) -> Option<Option<EntryType>> {
    crate::garden::ipm::input::opt_choice(f, name, ENTRY_TYPES)
        .map(|c| c.and_then(|s| serde_json::from_value(Value::from(s)).ok()))
}

/// Body of `POST /t/{slug}/diary-entries`: about a plant, a planting run, or (neither) the
/// garden as a whole; at most one of `plant_key` and `run_key`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[salvo(schema(name = "DiaryEntryCreate"))]
#[serde(deny_unknown_fields)]
pub struct NewEntry {
    /// Up to 200 characters on one line; blank or null means none.
    #[salvo(schema(max_length = 200, pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$"))]
    pub title: Option<String>,
    /// The entry, 1 to 10000 characters, several lines allowed.
    #[salvo(schema(
        min_length = 1,
        max_length = 10000,
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]*$"
    ))]
    pub text: String,
    /// Default `note`.
    pub entry_type: Option<EntryType>,
    /// Up to 20 tags of 1 to 50 characters (stored in lower case).
    #[salvo(schema(max_items = 20))]
    #[serde(default)]
    pub tags: Vec<String>,
    /// A plant of this garden (archived plants too).
    pub plant_key: Option<Uuid>,
    /// A planting run of this garden.
    pub run_key: Option<Uuid>,
    /// YYYY-MM-DD, from 1900-01-01 up to today (UTC); default today.
    #[salvo(schema(value_type = Option<String>, format = "date", pattern = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"))]
    pub entry_date: Option<String>,
    /// Values typed by a person, up to 20: recognised `ec_ms_cm` (0-20), `ph` (0-14),
    /// `temperature_c` (-50-70), `humidity_percent` (0-100), `height_cm` (0-10000),
    /// `leaf_count` (whole, 0-100000); any further key (`^[a-z][a-z0-9_]{0,39}$`) holds a
    /// number, a boolean or a text of 1 to 200 characters.
    #[serde(default)]
    pub measurements: BTreeMap<String, MeasurementValue>,
}

/// [`NewEntry`] as read.
#[derive(Debug, Clone)]
pub struct EntryInput {
    pub title: Option<String>,
    pub text: String,
    pub entry_type: EntryType,
    pub tags: Vec<String>,
    pub plant_key: Option<Uuid>,
    pub run_key: Option<Uuid>,
    pub entry_date: Option<Date>,
    pub measurements: Map<String, Value>,
}

fn required_long_text(f: &mut JsonFields, name: &'static str, max: usize) -> Option<String> {
    let missing = !f.has(name);
    match f.opt_long_text(name, max) {
        Some(Some(t)) => Some(t),
        Some(None) => {
            if missing {
                f.reject_field(name, "field required", "missing");
            } else {
                f.reject_field(name, "must not be blank", "string_too_short");
            }
            None
        }
        None => None,
    }
}

/// An optional one-line title: absent, null and blank all mean none.
fn title(f: &mut JsonFields) -> Option<Option<String>> {
    f.patch_clearable("title", TITLE_MAX).map(|p| match p {
        Patch::Set(t) => Some(t),
        Patch::Keep | Patch::Clear => None,
    })
}

impl FromJson for EntryInput {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let title = title(f);
        let text = required_long_text(f, "text", TEXT_MAX);
        let entry_type = entry_type(f, "entry_type");
        let tags = tags(f, "tags");
        let plant_key = opt_key(f, "plant_key");
        let run_key = opt_key(f, "run_key");
        let entry_date = opt_past_date(f, "entry_date");
        let measurements = measurements(f, "measurements");
        let (plant_key, run_key) = (plant_key?, run_key?);
        if plant_key.is_some() && run_key.is_some() {
            f.reject_field(
                "run_key",
                "an entry is about a plant or a planting run, not both",
                "value_error",
            );
            return None;
        }
        Some(Self {
            title: title?,
            text: text?,
            entry_type: entry_type?.unwrap_or(EntryType::Note),
            tags: tags?,
            plant_key,
            run_key,
            entry_date: entry_date?,
            measurements: measurements?,
        })
    }
}

/// Schema of `PATCH /t/{slug}/diary-entries/{entry_key}` (read as [`EntryPatch`]): omitted
/// fields stay; only `title` clears (with null or blank), no other field takes null (send `[]`
/// or `{}` to empty tags or measurements). What the entry is about (plant, run) does not change.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[salvo(schema(name = "DiaryEntryUpdate"))]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // a schema only: the handler reads the body as `EntryPatch`
pub struct EntryPatchBody {
    /// Up to 200 characters on one line; null or blank removes the title.
    #[salvo(schema(max_length = 200, pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$"))]
    pub title: Option<String>,
    #[salvo(schema(
        nullable = false,
        min_length = 1,
        max_length = 10000,
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]*$"
    ))]
    pub text: Option<String>,
    #[salvo(schema(nullable = false))]
    pub entry_type: Option<EntryType>,
    #[salvo(schema(nullable = false, max_items = 20))]
    pub tags: Option<Vec<String>>,
    #[salvo(schema(nullable = false, value_type = Option<String>, format = "date", pattern = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"))]
    pub entry_date: Option<String>,
    #[salvo(schema(nullable = false))]
    pub measurements: Option<BTreeMap<String, MeasurementValue>>,
}

/// A partial update as read.
#[derive(Debug, Clone, Default)]
pub struct EntryPatch {
    pub title: Patch<String>,
    pub text: Option<String>,
    pub entry_type: Option<EntryType>,
    pub tags: Option<Vec<String>>,
    pub entry_date: Option<Date>,
    pub measurements: Option<Map<String, Value>>,
}

const PATCH_FIELDS: [&str; 5] = ["text", "entry_type", "tags", "entry_date", "measurements"];

/// The fields of a patch that were sent with a value, read like a create's (absent: keep).
struct PatchValues(EntryPatch);

impl FromJson for PatchValues {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let text = if f.has("text") {
            required_long_text(f, "text", TEXT_MAX).map(Some)
        } else {
            Some(None)
        };
        let kind = entry_type(f, "entry_type");
        let tag_list = if f.has("tags") {
            tags(f, "tags").map(Some)
        } else {
            Some(None)
        };
        let date = opt_past_date(f, "entry_date");
        let meas = if f.has("measurements") {
            measurements(f, "measurements").map(Some)
        } else {
            Some(None)
        };
        Some(Self(EntryPatch {
            title: Patch::Keep,
            text: text?,
            entry_type: kind?,
            tags: tag_list?,
            entry_date: date?,
            measurements: meas?,
        }))
    }
}

impl FromJson for EntryPatch {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        // The title clears with null or blank. Null is refused for every other field (none
        // can be cleared); their values are read like a create's, and their problems reported
        // under the same names.
        let title = f.patch_clearable("title", TITLE_MAX);
        let mut sent = Map::new();
        let mut ok = true;
        for name in PATCH_FIELDS {
            match f.raw(name) {
                None => {}
                Some(Value::Null) => {
                    f.reject_field(
                        name,
                        "cannot be null; omit it to keep the value",
                        "type_error",
                    );
                    ok = false;
                }
                Some(v) => {
                    sent.insert(name.to_owned(), v);
                }
            }
        }
        let bytes = serde_json::to_vec(&Value::Object(sent)).unwrap_or_default();
        match parse_json::<PatchValues>(&bytes) {
            Ok(PatchValues(patch)) => {
                let title = title?;
                ok.then_some(EntryPatch { title, ..patch })
            }
            Err(e) => {
                for d in e.details() {
                    let field = d.field.strip_prefix("body.").unwrap_or(&d.field).to_owned();
                    f.reject_field(&field, d.reason.clone(), &d.code);
                }
                None
            }
        }
    }
}

/// Body of `POST /t/{slug}/diary-entries/{entry_key}/analysis`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[salvo(schema(name = "DiaryAnalysisRequest"))]
#[serde(deny_unknown_fields)]
pub struct AnalysisRequestBody {
    /// Must be `true`: the author agrees that an AI agent of the garden reads this entry
    /// (text, measurements, photos) to analyse it.
    pub consent: bool,
}

impl FromJson for AnalysisRequestBody {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        match f.value("consent") {
            Some(Value::Bool(true)) => Some(Self { consent: true }),
            Some(Value::Bool(false)) => {
                f.reject_field(
                    "consent",
                    "the entry is analysed only with consent: send true",
                    "value_error",
                );
                None
            }
            None => {
                f.reject_field("consent", "field required", "missing");
                None
            }
            Some(_) => {
                f.reject_field("consent", "must be true", "type_error");
                None
            }
        }
    }
}

/// One finding of an analysis.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[salvo(schema(name = "DiaryAnalysisFinding"))]
pub struct AnalysisFinding {
    /// What the agent found, 1 to 500 characters.
    pub finding: String,
    /// How sure, 0.0 to 1.0.
    pub confidence: f64,
    /// A catalogue key or a short category (pest, disease, deficiency, ...), up to 100 characters.
    pub category: Option<String>,
    /// Why, up to 2000 characters.
    pub detail: Option<String>,
}

/// A submitted result as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[salvo(schema(name = "DiaryAnalysisResult"))]
pub struct AnalysisResult {
    /// `completed` or `failed`.
    pub status: String,
    /// Required when completed; the reason when failed.
    pub summary: Option<String>,
    pub findings: Vec<AnalysisFinding>,
    /// What the grower could do next, up to 10 of 1 to 500 characters.
    #[serde(default)]
    pub recommended_actions: Vec<String>,
    /// The entry's photos the agent looked at (up to 5).
    #[serde(default)]
    pub analyzed_photo_ids: Vec<Uuid>,
    /// The model the agent used, as it names it (up to 200 characters).
    #[serde(default)]
    pub model: Option<String>,
    /// The agent's version of its analysis recipe (up to 50 characters).
    #[serde(default)]
    pub recipe_version: Option<String>,
    /// Why it failed (status `failed`; up to 2000 characters). Older failed results carry
    /// the reason in `summary` only.
    #[serde(default)]
    pub error: Option<String>,
    /// Set by the server; the agent cannot omit or change it.
    pub disclaimer: String,
    /// `mcp:<account key>` of the agent.
    pub submitted_by: String,
    #[serde(with = "time::serde::rfc3339")]
    #[salvo(schema(value_type = String, format = "date-time"))]
    pub submitted_at: OffsetDateTime,
}

/// An entry's analysis as the grower reads it (`GET .../analysis`).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[salvo(schema(name = "DiaryAnalysis"))]
pub struct Analysis {
    pub entry_key: Uuid,
    /// null (never marked), `requested` (in the work queue; also when a lease ran out),
    /// `in_progress` (an agent holds a valid lease), `completed`, `failed`.
    pub analysis_state: Option<String>,
    #[serde(with = "time::serde::rfc3339::option")]
    #[salvo(schema(value_type = Option<String>, format = "date-time"))]
    pub consent_at: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339::option")]
    #[salvo(schema(value_type = Option<String>, format = "date-time"))]
    pub requested_at: Option<OffsetDateTime>,
    /// The user who marked it.
    pub requested_by: Option<Uuid>,
    /// End of the current lease (only while `in_progress`).
    #[serde(with = "time::serde::rfc3339::option")]
    #[salvo(schema(value_type = Option<String>, format = "date-time"))]
    pub lease_expires_at: Option<OffsetDateTime>,
    /// The label the agent gave the worker holding the current lease (only while
    /// `in_progress`, when the claim named one).
    pub worker_id: Option<String>,
    /// The submitted result (completed or failed), with the server's disclaimer.
    pub result: Option<AnalysisResult>,
}

/// A photo of an entry, as reads show it (what exists, never where it is stored).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[salvo(schema(name = "DiaryPhoto"))]
pub struct Photo {
    pub key: Uuid,
    pub position: i32,
    pub content_type: String,
    pub width: i32,
    pub height: i32,
    pub byte_size: i64,
    /// `pending`, `ready` or `unavailable`.
    pub rendition_status: String,
    /// Rendition sizes (longest edge in px) that exist.
    pub renditions: Vec<u32>,
}

/// A photo without a rendition.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[salvo(schema(name = "DiaryPendingPhoto"))]
pub struct PendingPhoto {
    pub key: Uuid,
    /// `thumbnail_pending` or `unavailable`.
    pub status: String,
}

/// One diary entry, whole (`GET .../diary-entries/{entry_key}`, `get_diary_entry`).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[salvo(schema(name = "DiaryEntry"))]
pub struct Entry {
    pub key: Uuid,
    pub plant_key: Option<Uuid>,
    pub run_key: Option<Uuid>,
    /// Copied from the plant when written.
    pub species_key: Option<String>,
    pub entry_type: EntryType,
    /// null when the entry has none.
    pub title: Option<String>,
    pub text: String,
    pub tags: Vec<String>,
    /// Typed by a person; kept apart from `environment`.
    #[salvo(schema(value_type = Object))]
    pub measurements: Map<String, Value>,
    /// YYYY-MM-DD.
    pub entry_date: String,
    /// The nil UUID when the author erased their account (`author_kind` `deleted`).
    pub author_key: Uuid,
    /// `user`, `service`, or `deleted` (the author erased their account; the entry stays).
    pub author_kind: String,
    /// `rest` (the web UI) or `mcp` (an agent's add_plant_diary_entry; never analysed).
    pub written_via: String,
    /// Device readings near the entry's time, kept apart from `measurements`: of each sensor
    /// at the plant's location (`origin: location`) or its site (`site`) the latest reading in
    /// the hour up to the entry's time, and the site's weather hour nearest it, at most an hour
    /// away (`weather`, a site with coordinates). The entry's time is when it was written, or
    /// noon UTC of its date when it is dated another day. Each with `source`, `measured_at`,
    /// `origin`, `metric`, `value`, `unit` and the sensor's key and name (null for weather).
    pub environment: Vec<crate::garden::environment::model::EnvironmentReading>,
    /// Why `environment` is empty: `no_source` (no plant, or nothing measures it: no sensor at
    /// its location or site, no weather for its site) or `unavailable` (something measures it
    /// but no reading got through in the window); null when readings are there.
    pub environment_status: Option<String>,
    pub photos: Vec<Photo>,
    pub pending: Vec<PendingPhoto>,
    /// See [`Analysis::analysis_state`].
    pub analysis_state: Option<String>,
    #[serde(with = "time::serde::rfc3339")]
    #[salvo(schema(value_type = String, format = "date-time"))]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    #[salvo(schema(value_type = String, format = "date-time"))]
    pub updated_at: OffsetDateTime,
}

/// A diary entry in a list: everything but the text (withheld from list views).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[salvo(schema(name = "DiaryEntrySummary"))]
pub struct EntrySummary {
    pub key: Uuid,
    pub plant_key: Option<Uuid>,
    pub run_key: Option<Uuid>,
    pub species_key: Option<String>,
    pub entry_type: EntryType,
    pub title: Option<String>,
    pub tags: Vec<String>,
    #[salvo(schema(value_type = Object))]
    pub measurements: Map<String, Value>,
    pub entry_date: String,
    pub author_key: Uuid,
    pub author_kind: String,
    pub written_via: String,
    pub photo_count: usize,
    pub analysis_state: Option<String>,
    #[serde(with = "time::serde::rfc3339")]
    #[salvo(schema(value_type = String, format = "date-time"))]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    #[salvo(schema(value_type = String, format = "date-time"))]
    pub updated_at: OffsetDateTime,
}

/// An entry waiting in the work queue (`list_pending_diary_analyses`; text withheld).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[salvo(schema(name = "DiaryPendingAnalysis"))]
pub struct Pending {
    pub entry_key: Uuid,
    pub plant_key: Option<Uuid>,
    pub run_key: Option<Uuid>,
    pub species_key: Option<String>,
    pub entry_type: EntryType,
    pub title: Option<String>,
    pub tags: Vec<String>,
    pub entry_date: String,
    #[serde(with = "time::serde::rfc3339::option")]
    #[salvo(schema(value_type = Option<String>, format = "date-time"))]
    pub requested_at: Option<OffsetDateTime>,
    /// An agent claimed it before and its lease ran out without a result.
    pub lease_lapsed: bool,
    pub photo_count: usize,
}

/// The filters of the entry list (REST and `list_diary_entries`); no free text.
#[derive(Debug, Clone, Default)]
pub struct EntryFilter {
    pub plant: Option<Uuid>,
    pub run: Option<Uuid>,
    pub species: Option<String>,
    pub entry_type: Option<EntryType>,
    pub tag: Option<String>,
    pub analysis_state: Option<crate::rules::diary_analysis::AnalysisState>,
    pub from: Option<Date>,
    pub to: Option<Date>,
}

pub fn entry_type_str(t: EntryType) -> &'static str {
    match t {
        EntryType::Observation => "observation",
        EntryType::Measurement => "measurement",
        EntryType::Care => "care",
        EntryType::Problem => "problem",
        EntryType::Harvest => "harvest",
        EntryType::Milestone => "milestone",
        EntryType::Note => "note",
    }
}

pub fn parse_entry_type(raw: &str) -> Option<EntryType> {
    serde_json::from_value(Value::String(raw.to_owned())).ok()
}
