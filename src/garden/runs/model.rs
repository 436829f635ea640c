//! Planting runs: wire shapes and bodies.

use salvo::oapi::ToSchema;
use serde::Serialize;
use serde_json::Value;
use time::{Date, OffsetDateTime};
use uuid::Uuid;

use crate::garden::plants::model::{opt_key, opt_past_date, opt_uuid, req_key};
use crate::rules::run_status::RunStatus;
use crate::values::json::{FromJson, JsonFields};

pub const NAME_MAX: usize = 200;
pub const NOTES_MAX: usize = 2000;
/// Plants added or created in one request.
pub const BATCH_MAX: usize = 200;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunType {
    Monoculture,
    Clone,
}

impl<'de> serde::Deserialize<'de> for RunType {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(d)?;
        Self::parse(&raw).ok_or_else(|| serde::de::Error::custom("unknown run type"))
    }
}

impl RunType {
    pub const ALL: &'static [(&'static str, RunType)] =
        &[("monoculture", Self::Monoculture), ("clone", Self::Clone)];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Monoculture => "monoculture",
            Self::Clone => "clone",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        Self::ALL.iter().find(|(n, _)| *n == raw).map(|(_, t)| *t)
    }
}

/// The run states on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunState {
    Planned,
    Active,
    Harvesting,
    Completed,
    Cancelled,
}

impl From<RunStatus> for RunState {
    fn from(s: RunStatus) -> Self {
        match s {
            RunStatus::Planned => Self::Planned,
            RunStatus::Active => Self::Active,
            RunStatus::Harvesting => Self::Harvesting,
            RunStatus::Completed => Self::Completed,
            RunStatus::Cancelled => Self::Cancelled,
        }
    }
}

/// A planting run.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Run {
    pub key: Uuid,
    pub name: String,
    pub run_type: RunType,
    pub status: RunState,
    pub location_key: Option<Uuid>,
    pub substrate_batch_key: Option<Uuid>,
    pub planned_quantity: Option<i32>,
    /// YYYY-MM-DD.
    pub planned_start_date: Option<String>,
    #[serde(with = "time::serde::rfc3339::option")]
    pub started_at: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339::option")]
    pub completed_at: Option<OffsetDateTime>,
    pub notes: Option<String>,
    /// Plants in the run (archived included).
    pub plant_count: i64,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
}

/// Plants of a run in one phase.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PhaseCount {
    /// Null: plants without a phase.
    pub phase_key: Option<String>,
    pub phase_name: Option<String>,
    /// Plants still in the garden.
    pub live: i64,
    /// Archived ones included.
    pub total: i64,
}

/// What a run grows (recorded by the bulk creation).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RunEntry {
    pub key: Uuid,
    pub species_key: String,
    pub cultivar_key: Option<String>,
    pub quantity: i32,
    pub id_prefix: String,
}

/// A run with its summary: plants per phase.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RunDetail {
    #[serde(flatten)]
    pub run: Run,
    pub plants_live: i64,
    pub plants_per_phase: Vec<PhaseCount>,
    pub entries: Vec<RunEntry>,
    /// The states the run may move to now.
    pub next_statuses: Vec<RunState>,
}

fn opt_any_date(f: &mut JsonFields, name: &'static str) -> Option<Option<Date>> {
    let fmt = time::macros::format_description!("[year]-[month]-[day]");
    match f.value(name) {
        None => Some(None),
        Some(Value::String(s)) => match Date::parse(s.trim(), &fmt) {
            Ok(d) if d.year() >= 1900 && d.year() <= 2100 => Some(Some(d)),
            Ok(_) => {
                f.reject_field(name, "must lie between 1900 and 2100", "value_error");
                None
            }
            Err(_) => {
                f.reject_field(name, "must be a date (YYYY-MM-DD)", "value_error");
                None
            }
        },
        Some(_) => {
            f.reject_field(name, "must be a date string (YYYY-MM-DD)", "type_error");
            None
        }
    }
}

/// Body of `POST /t/{slug}/planting-runs/`.
#[derive(Debug, Clone, serde::Deserialize, ToSchema)]
#[salvo(schema(name = "PlantingRunCreate"))]
#[serde(deny_unknown_fields)]
pub struct NewRun {
    /// Up to 200 characters with at least one visible one (trimmed).
    #[salvo(schema(
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub name: String,
    /// monoculture (default, also for null) or clone.
    pub run_type: Option<RunType>,
    pub location_key: Option<Uuid>,
    pub substrate_batch_key: Option<Uuid>,
    /// A whole number from 1 to 10000.
    #[salvo(schema(minimum = 1, maximum = 10000))]
    pub planned_quantity: Option<i32>,
    /// YYYY-MM-DD in the years 1900 to 2100.
    #[salvo(schema(value_type = Option<String>, format = "date", pattern = r"^(19[0-9]{2}|20[0-9]{2}|2100)-[0-9]{2}-[0-9]{2}$"))]
    pub planned_start_date: Option<Date>,
    /// Up to 2000 characters, several lines allowed; blank means none.
    #[salvo(schema(
        max_length = 2000,
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]*$"
    ))]
    pub notes: Option<String>,
}

impl FromJson for NewRun {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let name = f.text("name", NAME_MAX);
        let run_type = match f.value("run_type") {
            None => Some(None),
            Some(Value::String(s)) => match RunType::parse(&s) {
                Some(t) => Some(Some(t)),
                None => {
                    f.reject_field(
                        "run_type",
                        "must be one of: monoculture, clone",
                        "value_error",
                    );
                    None
                }
            },
            Some(_) => {
                f.reject_field("run_type", "must be a string", "type_error");
                None
            }
        };
        let location_key = opt_uuid(f, "location_key");
        let substrate_batch_key = opt_uuid(f, "substrate_batch_key");
        let planned_quantity = f.opt_int("planned_quantity", 1, 10_000);
        let planned_start_date = opt_any_date(f, "planned_start_date");
        let notes = f.opt_long_text("notes", NOTES_MAX);
        Some(Self {
            name: name?,
            run_type: run_type?,
            location_key: location_key?,
            substrate_batch_key: substrate_batch_key?,
            planned_quantity: planned_quantity?.and_then(|q| i32::try_from(q).ok()),
            planned_start_date: planned_start_date?,
            notes: notes?,
        })
    }
}

/// Schema of `POST /t/{slug}/planting-runs/{run_id}/status` (read as [`StatusBody`]).
#[derive(Debug, Clone, serde::Deserialize, ToSchema)]
#[salvo(schema(name = "PlantingRunStatusChange"))]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // a schema only
pub struct StatusChangeBody {
    /// The state to move to.
    pub status: RunState,
}

/// `POST /t/{slug}/planting-runs/{run_id}/status` as read.
#[derive(Debug, Clone)]
pub struct StatusBody {
    pub status: Option<RunStatus>,
}

impl FromJson for StatusBody {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        Some(Self {
            status: Some(f.choice("status", RunStatus::ALL)?),
        })
    }
}

/// Body of `POST /t/{slug}/planting-runs/{run_id}/plants`: existing plants to add.
#[derive(Debug, Clone, serde::Deserialize, ToSchema)]
#[salvo(schema(name = "PlantingRunAddPlants"))]
#[serde(deny_unknown_fields)]
pub struct AddPlantsBody {
    /// 1 to 200 plant keys of this garden.
    #[salvo(schema(min_items = 1, max_items = 200))]
    pub plant_keys: Vec<Uuid>,
}

impl FromJson for AddPlantsBody {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let Some(value) = f.value("plant_keys") else {
            f.reject_field("plant_keys", "field required", "missing");
            return None;
        };
        let Value::Array(items) = value else {
            f.reject_field("plant_keys", "must be a list of plant keys", "type_error");
            return None;
        };
        if items.is_empty() || items.len() > BATCH_MAX {
            f.reject_field(
                "plant_keys",
                format!("must hold 1 to {BATCH_MAX} plant keys"),
                "value_error",
            );
            return None;
        }
        let mut keys = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            match item.as_str().and_then(|s| Uuid::parse_str(s).ok()) {
                Some(k) => keys.push(k),
                None => {
                    f.reject_field(
                        &format!("plant_keys[{i}]"),
                        "must be a plant key (UUID)",
                        "value_error",
                    );
                    return None;
                }
            }
        }
        keys.sort();
        keys.dedup();
        Some(Self { plant_keys: keys })
    }
}

/// Body of `POST /t/{slug}/planting-runs/{run_id}/create-plants`: N new plants of one species,
/// one per free slot of the location in order (row, column, code), all or nothing.
#[derive(Debug, Clone, serde::Deserialize, ToSchema)]
#[salvo(schema(name = "PlantingRunCreatePlants"))]
#[serde(deny_unknown_fields)]
pub struct CreatePlantsBody {
    #[salvo(schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub species_key: String,
    #[salvo(schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub cultivar_key: Option<String>,
    #[salvo(schema(minimum = 1, maximum = 200))]
    pub quantity: i32,
    /// Two to five capital letters; plants are named `{PREFIX}_{NN}`.
    #[salvo(schema(pattern = r"^[A-Z]{2,5}$"))]
    pub id_prefix: String,
    /// Defaults to the run's location.
    pub location_key: Option<Uuid>,
    /// YYYY-MM-DD, from 1900-01-01 up to today (a later date is refused with 422).
    #[salvo(schema(value_type = Option<String>, format = "date", pattern = r"^(19|20)[0-9]{2}-[0-9]{2}-[0-9]{2}$"))]
    pub planted_on: Option<Date>,
}

impl FromJson for CreatePlantsBody {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let species_key = req_key(f, "species_key");
        let cultivar_key = opt_key(f, "cultivar_key");
        let quantity = f.opt_int("quantity", 1, BATCH_MAX as i64);
        // Checked exactly as sent, as the schema's pattern states it (no trimming).
        let id_prefix = match f.value("id_prefix") {
            None => {
                f.reject_field("id_prefix", "field required", "missing");
                None
            }
            Some(Value::String(p)) => Some(p),
            Some(_) => {
                f.reject_field("id_prefix", "must be a string", "type_error");
                None
            }
        };
        let location_key = opt_uuid(f, "location_key");
        let planted_on = opt_past_date(f, "planted_on");
        let quantity = match quantity? {
            Some(q) => Some(q),
            None => {
                f.reject_field("quantity", "field required", "missing");
                None
            }
        };
        let id_prefix = match id_prefix {
            Some(p) if (2..=5).contains(&p.len()) && p.chars().all(|c| c.is_ascii_uppercase()) => {
                Some(p)
            }
            Some(_) => {
                f.reject_field("id_prefix", "must be 2 to 5 capital letters", "value_error");
                None
            }
            None => None,
        };
        Some(Self {
            species_key: species_key?,
            cultivar_key: cultivar_key?,
            quantity: i32::try_from(quantity?).ok()?,
            id_prefix: id_prefix?,
            location_key: location_key?,
            planted_on: planted_on?,
        })
    }
}
