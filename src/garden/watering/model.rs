//! Watering and feeding events, and a plant's diagnostics.

use salvo::oapi::ToSchema;
use serde::Serialize;
use serde_json::Value;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::garden::contracts::PhaseTargets;
use crate::garden::fields;
use crate::garden::tanks::model::{NOTES_MAX, number_value, opt_timestamp, required_number};
use crate::name_enum;
use crate::rules::feeding_diagnostics::{Series, TargetComparison};
use crate::rules::runoff::RunoffAnalysis;
use crate::values::json::{FromJson, JsonFields, is_blank};

name_enum!(
    /// How the water reached the plant.
    ApplicationMethod {
        Fertigation = "fertigation",
        Drench = "drench",
        Foliar = "foliar",
        TopDress = "top_dress",
    }
);

/// Litres of one event (a bed section).
pub const VOLUME_MAX_L: f64 = 10_000.0;
pub const EC_MAX_MS: f64 = 10.0;
pub const PLANTS_MAX: usize = 200;
pub const FERTILIZERS_MAX: usize = 20;
pub const FERTILIZER_KEY_MAX: usize = 200;
pub const ML_MAX: f64 = 100_000.0;
pub const NOTES_MAX_CHARS: usize = NOTES_MAX;

/// One product of a feeding (the key is stored as given).
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, ToSchema)]
#[salvo(schema(name = "FertilizerUse"))]
#[serde(deny_unknown_fields)]
pub struct FertilizerUse {
    #[salvo(schema(
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub fertilizer_key: String,
    /// Millilitres (or grams) of the product in this event, above 0.
    #[salvo(schema(exclusive_minimum = 0.0, maximum = 100000.0))]
    pub ml_applied: f64,
}

/// A watering (`kind` `watering`) or feeding (`feeding`: products were named).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct WateringEvent {
    pub key: Uuid,
    /// `feeding` when products were given, else `watering`.
    pub kind: String,
    #[serde(with = "time::serde::rfc3339")]
    pub occurred_at: OffsetDateTime,
    pub application_method: ApplicationMethod,
    pub is_supplemental: bool,
    /// The plants watered (a run's plants at the time, plus any named).
    pub plant_keys: Vec<Uuid>,
    pub run_key: Option<Uuid>,
    pub tank_key: Option<Uuid>,
    /// The tank's fill the water came from (the tank's last fill then), or as given by a tool.
    pub tank_fill_key: Option<Uuid>,
    /// Litres applied in total.
    pub volume_liters: f64,
    /// EC of the water before products were added, mS/cm (the input series).
    pub ec_before_ms: Option<f64>,
    /// EC of the solution as fed, after mixing (the post-feed series).
    pub ec_after_ms: Option<f64>,
    pub ph_before: Option<f64>,
    pub ph_after: Option<f64>,
    pub runoff_ec_ms: Option<f64>,
    pub runoff_ph: Option<f64>,
    pub runoff_volume_liters: Option<f64>,
    pub fertilizers_used: Vec<FertilizerUse>,
    /// Runoff analysis (domain 2.13) of the runoff against what was fed; null without a runoff
    /// EC.
    pub runoff_analysis: Option<RunoffAnalysis>,
    pub notes: Option<String>,
    pub actor: String,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
}

impl WateringEvent {
    /// The EC and pH of what was fed: the mixed solution if measured, else the water.
    pub fn fed_ec(&self) -> Option<f64> {
        self.ec_after_ms.or(self.ec_before_ms)
    }

    pub fn fed_ph(&self) -> Option<f64> {
        self.ph_after.or(self.ph_before)
    }
}

/// Body of `POST /t/{slug}/watering-events/`.
#[derive(serde::Deserialize, Debug, Clone, PartialEq, ToSchema)]
#[salvo(schema(name = "WateringEventCreate"))]
#[serde(deny_unknown_fields)] // states `additionalProperties: false`: the handler refuses extras
pub struct NewWateringEventBody {
    /// Plants of this garden (up to 200); with `run_key` the run's live plants are added.
    /// At least one of the two.
    #[salvo(schema(max_items = 200))]
    pub plant_keys: Option<Vec<Uuid>>,
    #[salvo(schema(format = "uuid"))]
    pub run_key: Option<Uuid>,
    /// The tank the water came from: its current volume drops by `volume_liters` (409 when it
    /// holds less).
    #[salvo(schema(format = "uuid"))]
    pub tank_key: Option<Uuid>,
    /// RFC 3339, default now, not in the future.
    #[salvo(schema(format = "date-time"))]
    pub occurred_at: Option<String>,
    /// Default `drench`.
    pub application_method: Option<ApplicationMethod>,
    /// A supplemental watering (cannot be fertigation). Default false.
    #[salvo(schema(nullable = false))]
    pub is_supplemental: Option<bool>,
    /// Litres applied in total: above 0, at most 10000.
    #[salvo(schema(exclusive_minimum = 0.0, maximum = 10000.0))]
    pub volume_liters: f64,
    #[salvo(schema(minimum = 0.0, maximum = 10.0))]
    pub ec_before_ms: Option<f64>,
    #[salvo(schema(minimum = 0.0, maximum = 10.0))]
    pub ec_after_ms: Option<f64>,
    #[salvo(schema(minimum = 0.0, maximum = 14.0))]
    pub ph_before: Option<f64>,
    #[salvo(schema(minimum = 0.0, maximum = 14.0))]
    pub ph_after: Option<f64>,
    /// Needs the fed EC (`ec_after_ms` or `ec_before_ms`).
    #[salvo(schema(minimum = 0.0, maximum = 10.0))]
    pub runoff_ec_ms: Option<f64>,
    #[salvo(schema(minimum = 0.0, maximum = 14.0))]
    pub runoff_ph: Option<f64>,
    /// At most `volume_liters`.
    #[salvo(schema(minimum = 0.0, maximum = 10000.0))]
    pub runoff_volume_liters: Option<f64>,
    #[salvo(schema(max_items = 20))]
    pub fertilizers_used: Option<Vec<FertilizerUse>>,
    #[salvo(schema(
        max_length = 2000,
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]*$"
    ))]
    pub notes: Option<String>,
}

/// A checked watering or feeding to record (from a body or a tool's arguments).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NewWateringEvent {
    pub plant_keys: Vec<Uuid>,
    pub run_key: Option<Uuid>,
    pub tank_key: Option<Uuid>,
    pub tank_fill_key: Option<Uuid>,
    pub occurred_at: Option<OffsetDateTime>,
    pub application_method: Option<ApplicationMethod>,
    pub is_supplemental: bool,
    pub volume_liters: f64,
    pub ec_before_ms: Option<f64>,
    pub ec_after_ms: Option<f64>,
    pub ph_before: Option<f64>,
    pub ph_after: Option<f64>,
    pub runoff_ec_ms: Option<f64>,
    pub runoff_ph: Option<f64>,
    pub runoff_volume_liters: Option<f64>,
    pub fertilizers_used: Vec<FertilizerUse>,
    pub notes: Option<String>,
}

/// The rules between fields (a problem names its field, without the `body.` prefix).
pub fn cross_field_problems(e: &NewWateringEvent) -> Vec<(&'static str, String)> {
    let mut p = Vec::new();
    if e.plant_keys.is_empty() && e.run_key.is_none() {
        p.push(("plant_keys", "name plant_keys or a run_key".to_owned()));
    }
    if e.is_supplemental && e.application_method == Some(ApplicationMethod::Fertigation) {
        p.push((
            "is_supplemental",
            "a supplemental watering cannot be fertigation".to_owned(),
        ));
    }
    if e.runoff_ec_ms.is_some() && e.ec_after_ms.is_none() && e.ec_before_ms.is_none() {
        p.push((
            "runoff_ec_ms",
            "a runoff EC needs the fed EC (ec_after_ms or ec_before_ms)".to_owned(),
        ));
    }
    if let Some(r) = e.runoff_volume_liters
        && r > e.volume_liters
    {
        p.push((
            "runoff_volume_liters",
            "must not exceed volume_liters".to_owned(),
        ));
    }
    p
}

/// Distinct record keys, at most `max`; absent and null mean none.
fn key_list(f: &mut JsonFields, name: &'static str, max: usize) -> Option<Vec<Uuid>> {
    let v = match f.raw(name) {
        None | Some(Value::Null) => return Some(Vec::new()),
        Some(v) => v,
    };
    let Some(items) = v.as_array() else {
        f.reject_field(name, "must be a list of record keys", "type_error");
        return None;
    };
    if items.len() > max {
        f.reject_field(
            name,
            format!("must have at most {max} entries"),
            "value_error",
        );
        return None;
    }
    let mut keys = Vec::with_capacity(items.len());
    for item in items {
        let Some(k) = item.as_str().and_then(|s| Uuid::parse_str(s.trim()).ok()) else {
            f.reject_field(
                name,
                "every entry must be a record key (UUID)",
                "value_error",
            );
            return None;
        };
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    Some(keys)
}

fn fertilizer_list(f: &mut JsonFields, name: &'static str) -> Option<Vec<FertilizerUse>> {
    let v = match f.raw(name) {
        None | Some(Value::Null) => return Some(Vec::new()),
        Some(v) => v,
    };
    let Some(items) = v.as_array() else {
        f.reject_field(
            name,
            "must be a list of {fertilizer_key, ml_applied}",
            "type_error",
        );
        return None;
    };
    if items.len() > FERTILIZERS_MAX {
        f.reject_field(
            name,
            format!("must have at most {FERTILIZERS_MAX} entries"),
            "value_error",
        );
        return None;
    }
    let mut out = Vec::with_capacity(items.len());
    let mut ok = true;
    for (i, item) in items.iter().enumerate() {
        let Some(obj) = item.as_object() else {
            f.reject_field(&format!("{name}[{i}]"), "must be an object", "type_error");
            ok = false;
            continue;
        };
        if let Some(extra) = obj
            .keys()
            .find(|k| !matches!(k.as_str(), "fertilizer_key" | "ml_applied"))
        {
            f.reject_field(
                &format!("{name}[{i}].{extra}"),
                "unknown field",
                "extra_forbidden",
            );
            ok = false;
        }
        // As the schema states it: at most 200 characters as sent, one of them visible, no
        // control characters; stored trimmed.
        let key = obj.get("fertilizer_key").and_then(Value::as_str);
        let key = match key {
            Some(k)
                if !k.trim_matches(is_blank).is_empty()
                    && k.chars().count() <= FERTILIZER_KEY_MAX
                    && !k.chars().any(char::is_control) =>
            {
                Some(k.trim_matches(is_blank).to_owned())
            }
            _ => {
                f.reject_field(
                    &format!("{name}[{i}].fertilizer_key"),
                    format!("must be a key of 1 to {FERTILIZER_KEY_MAX} characters"),
                    "value_error",
                );
                None
            }
        };
        let ml = match obj.get("ml_applied") {
            None | Some(Value::Null) => {
                f.reject_field(
                    &format!("{name}[{i}].ml_applied"),
                    "field required",
                    "missing",
                );
                None
            }
            Some(v) => number_value(f, &format!("{name}[{i}].ml_applied"), v, 0.0, ML_MAX, false),
        };
        match (key, ml) {
            (Some(fertilizer_key), Some(ml_applied)) => out.push(FertilizerUse {
                fertilizer_key,
                ml_applied,
            }),
            _ => ok = false,
        }
    }
    ok.then_some(out)
}

impl FromJson for NewWateringEvent {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let plant_keys = key_list(f, "plant_keys", PLANTS_MAX);
        let run = fields::opt_key(f, "run_key");
        let tank = fields::opt_key(f, "tank_key");
        let at = opt_timestamp(f, "occurred_at");
        let method = fields::opt_choice(f, "application_method", ApplicationMethod::ALL);
        let supplemental = f.flag("is_supplemental", false);
        let volume = required_number(f, "volume_liters", 0.0, VOLUME_MAX_L, false);
        let ec_before = fields::opt_number(f, "ec_before_ms", 0.0, EC_MAX_MS);
        let ec_after = fields::opt_number(f, "ec_after_ms", 0.0, EC_MAX_MS);
        let ph_before = fields::opt_number(f, "ph_before", 0.0, 14.0);
        let ph_after = fields::opt_number(f, "ph_after", 0.0, 14.0);
        let runoff_ec = fields::opt_number(f, "runoff_ec_ms", 0.0, EC_MAX_MS);
        let runoff_ph = fields::opt_number(f, "runoff_ph", 0.0, 14.0);
        let runoff_volume = fields::opt_number(f, "runoff_volume_liters", 0.0, VOLUME_MAX_L);
        let ferts = fertilizer_list(f, "fertilizers_used");
        let notes = f.opt_long_text("notes", NOTES_MAX);
        let e = NewWateringEvent {
            plant_keys: plant_keys?,
            run_key: run?,
            tank_key: tank?,
            tank_fill_key: None,
            occurred_at: at?,
            application_method: Some(method?.unwrap_or(ApplicationMethod::Drench)),
            is_supplemental: supplemental?,
            volume_liters: volume?,
            ec_before_ms: ec_before?,
            ec_after_ms: ec_after?,
            ph_before: ph_before?,
            ph_after: ph_after?,
            runoff_ec_ms: runoff_ec?,
            runoff_ph: runoff_ph?,
            runoff_volume_liters: runoff_volume?,
            fertilizers_used: ferts?,
            notes: notes?,
        };
        let problems = cross_field_problems(&e);
        if problems.is_empty() {
            Some(e)
        } else {
            for (field, reason) in problems {
                f.reject_field(field, reason, "value_error");
            }
            None
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Diagnostics.

/// The plant a diagnosis is of.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DiagnosedPlant {
    pub plant_key: Uuid,
    pub name: String,
    pub species_key: String,
    pub archived: bool,
    /// The phase the plant is in (null: none yet).
    pub phase_key: Option<String>,
    pub phase_name: Option<String>,
    #[serde(with = "time::serde::rfc3339::option")]
    pub phase_entered_at: Option<OffsetDateTime>,
    pub run_key: Option<Uuid>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Window {
    pub days: i64,
    #[serde(with = "time::serde::rfc3339")]
    pub from: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub to: OffsetDateTime,
    /// Events of the plant in the window.
    pub event_count: usize,
}

/// One measured value in three series: the water before products, the solution as fed, the
/// runoff.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TripleSeries {
    pub input: Series,
    pub post_feed: Series,
    pub runoff: Series,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RunoffPoint {
    #[serde(with = "time::serde::rfc3339")]
    pub at: OffsetDateTime,
    pub event_key: Uuid,
    pub ec_delta_ms: f64,
    pub ec_status: String,
    pub overall: String,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RunoffTrend {
    /// Every analysed event of the window, oldest first.
    pub points: Vec<RunoffPoint>,
    /// The runoff − fed EC deltas as a series (rising: salts building up).
    pub ec_delta: Series,
    /// The newest analysis in the window.
    pub latest: Option<RunoffAnalysis>,
}

/// The plan targets that apply to the plant now (see `garden::contracts::PhaseTargets`).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PlanTargets {
    pub plan_key: String,
    pub plan_name: String,
    /// `plant` or `run`.
    pub source: String,
    pub phase_key: String,
    pub target_ec_ms: Option<f64>,
    pub reference_ec_ms: Option<f64>,
    pub ph_min: Option<f64>,
    pub ph_max: Option<f64>,
}

impl From<PhaseTargets> for PlanTargets {
    fn from(t: PhaseTargets) -> Self {
        Self {
            plan_key: t.plan_key,
            plan_name: t.plan_name,
            source: t.source.to_owned(),
            phase_key: t.phase_key,
            target_ec_ms: t.target_ec_ms,
            reference_ec_ms: t.reference_ec_ms,
            ph_min: t.ph_min,
            ph_max: t.ph_max,
        }
    }
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DiagnosticWarning {
    /// `runoff`, `plan` or `plant`.
    pub source: String,
    pub message: String,
}

/// `GET /t/{slug}/plant-instances/{plant_key}/diagnostics`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Diagnostics {
    pub plant: DiagnosedPlant,
    pub window: Window,
    /// The plant's newest 10 events (any time), newest first.
    pub last_feedings: Vec<WateringEvent>,
    pub ec: TripleSeries,
    pub ph: TripleSeries,
    pub runoff_trend: RunoffTrend,
    /// The nutrient-plan targets for the plant's phase now; null without a plan.
    pub plan_targets: Option<PlanTargets>,
    /// The plan's targets against the newest fed EC and pH of the window.
    pub targets_vs_measured: TargetComparison,
    pub warnings: Vec<DiagnosticWarning>,
    /// The plant's newest inspections (up to 5, its location's included), newest first.
    pub inspections: Vec<crate::garden::ipm::model::Inspection>,
    /// Safety intervals still running today (empty: harvest is not blocked), and the first day
    /// harvest is allowed (YYYY-MM-DD; null for an archived plant).
    pub safety_intervals: Vec<crate::garden::harvest::model::SafetyInterval>,
    pub harvest_allowed_from: Option<String>,
    /// The plant's newest care log entries (up to 10), newest first.
    pub care_events: Vec<crate::garden::care::model::CareLogEntry>,
    /// The sensor snapshot (absent when `include_sensors` is false).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sensors: Option<SensorSnapshot>,
}

/// What measures the plant now (`garden::environment`): its location's and site's sensors
/// and its site's weather. `available: false` with the `reason` when nothing measures it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SensorSnapshot {
    pub available: bool,
    /// Why there is nothing to show (null when readings are there).
    pub reason: Option<String>,
    /// The latest reading of each sensor at the plant's location (`origin: location`) or its
    /// site (`site`), and the site's weather hour nearest now (`weather`), each with `source`,
    /// `measured_at`, `metric`, `value`, `unit` and the sensor's key and name.
    pub readings: Vec<crate::garden::environment::model::EnvironmentReading>,
}

impl SensorSnapshot {
    pub fn none_connected() -> Self {
        Self {
            available: false,
            reason: Some(
                "nothing measures this plant: no sensor at its location or site, no weather \
                 for its site"
                    .to_owned(),
            ),
            readings: Vec::new(),
        }
    }

    /// From what measures the plant now.
    pub fn of(now: &crate::garden::environment::service::Now) -> Self {
        if !now.has_source() {
            return Self::none_connected();
        }
        let readings = now.readings();
        Self {
            available: true,
            reason: readings.is_empty().then(|| {
                "its sensors have not reported yet and no weather hour is stored near now"
                    .to_owned()
            }),
            readings,
        }
    }
}
