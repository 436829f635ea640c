//! Sensors and readings: records, bodies and the answers of the readings routes.

use salvo::oapi::ToSchema;
use serde::Serialize;
use serde_json::Value;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use uuid::Uuid;

use crate::garden::fields;
use crate::garden::tanks::model::micros;
use crate::rules::sensors::{BATCH_MAX, FUTURE_SLACK_SECONDS};
use crate::values::json::{FromJson, JsonFields, Patch};

crate::name_enum!(
    /// What a sensor measures; the unit is in the name (and in `unit`).
    SensorMetric {
        TemperatureC = "temperature_c",
        HumidityPercent = "humidity_percent",
        EcMsCm = "ec_ms_cm",
        Ph = "ph",
        PpfdUmolM2S = "ppfd_umol_m2_s",
        Co2Ppm = "co2_ppm",
        SoilMoisturePercent = "soil_moisture_percent",
        WaterTemperatureC = "water_temperature_c",
        LightLux = "light_lux",
    }
);

crate::name_enum!(
    /// How readings arrive: posted over HTTP, or taken from an MQTT topic (`mqtt`, or a Home
    /// Assistant state topic for `home_assistant`).
    SensorSource {
        Http = "http",
        Mqtt = "mqtt",
        HomeAssistant = "home_assistant",
    }
);

pub const NAME_MAX: usize = 120;
pub const TOPIC_MAX: usize = 255;
pub const INTERVAL_MAX_MINUTES: i64 = 10_080;

/// The three places a sensor can stand at; exactly one is given.
pub const PLACE_FIELDS: [&str; 3] = ["location_key", "site_key", "tank_key"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    Location(Uuid),
    Site(Uuid),
    Tank(Uuid),
}

/// A sensor of a garden.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Sensor {
    pub key: Uuid,
    pub name: String,
    pub metric: SensorMetric,
    /// Unit of the readings (`°C`, `%`, `mS/cm`, `pH`, `µmol/m²/s`, `ppm`, `lx`).
    pub unit: String,
    /// Physical range a reading must lie in (bounds included).
    pub range_min: f64,
    pub range_max: f64,
    /// Exactly one of `location_key`, `site_key`, `tank_key` is set.
    pub location_key: Option<Uuid>,
    pub site_key: Option<Uuid>,
    pub tank_key: Option<Uuid>,
    pub source: SensorSource,
    /// The MQTT topic of `mqtt` and `home_assistant` sensors; null for `http`.
    pub topic: Option<String>,
    /// How often the sensor reports, minutes (1-10080); null: irregular.
    pub expected_interval_minutes: Option<i64>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
}

/// Body of `POST /t/{slug}/sensors`.
#[derive(Debug, Clone, PartialEq, serde::Deserialize, ToSchema)]
#[salvo(schema(name = "SensorCreate"))]
#[serde(deny_unknown_fields)] // states `additionalProperties: false`: the handler refuses extras
pub struct NewSensorBody {
    /// Up to 120 characters, unique per garden (case-insensitive).
    #[salvo(schema(
        min_length = 1,
        max_length = 120,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub name: String,
    pub metric: SensorMetric,
    /// A location of this garden (exactly one of location_key, site_key, tank_key).
    #[salvo(schema(format = "uuid"))]
    pub location_key: Option<Uuid>,
    /// A site of this garden.
    #[salvo(schema(format = "uuid"))]
    pub site_key: Option<Uuid>,
    /// A tank of this garden.
    #[salvo(schema(format = "uuid"))]
    pub tank_key: Option<Uuid>,
    pub source: SensorSource,
    /// Required for `mqtt` and `home_assistant` (an exact topic, no `+` or `#`) and under the
    /// garden's own prefix `kultiva/<slug>/` (topics are global on a shared broker; another is a
    /// 422 naming `topic`); refused for `http`.
    #[salvo(schema(min_length = 1, max_length = 255))]
    pub topic: Option<String>,
    #[salvo(schema(minimum = 1, maximum = 10080))]
    pub expected_interval_minutes: Option<i64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewSensor {
    pub name: String,
    pub metric: SensorMetric,
    pub place: Place,
    pub source: SensorSource,
    pub topic: Option<String>,
    pub expected_interval_minutes: Option<i64>,
}

/// The place fields of a body: exactly one, every one named when the rule is broken. `None`
/// in the inner option: none of them was sent (allowed for a patch).
fn read_place(f: &mut JsonFields, required: bool) -> Option<Option<Place>> {
    let location = fields::opt_key(f, "location_key");
    let site = fields::opt_key(f, "site_key");
    let tank = fields::opt_key(f, "tank_key");
    let (location, site, tank) = (location?, site?, tank?);
    let given: Vec<Place> = [
        location.map(Place::Location),
        site.map(Place::Site),
        tank.map(Place::Tank),
    ]
    .into_iter()
    .flatten()
    .collect();
    match given.as_slice() {
        [one] => Some(Some(*one)),
        [] if !required => Some(None),
        [] => {
            for name in PLACE_FIELDS {
                f.reject_field(
                    name,
                    "exactly one of location_key, site_key or tank_key is required",
                    "missing",
                );
            }
            None
        }
        _ => {
            let sent = [location.is_some(), site.is_some(), tank.is_some()];
            for (name, sent) in PLACE_FIELDS.iter().zip(sent) {
                if sent {
                    f.reject_field(
                        name,
                        "give only one of location_key, site_key or tank_key",
                        "value_error",
                    );
                }
            }
            None
        }
    }
}

/// A topic as sent: trimmed, one line, no MQTT wildcards.
fn topic_value(f: &mut JsonFields, v: Value) -> Option<String> {
    let mut inner = JsonFields::new([("topic".to_owned(), v)].into_iter().collect());
    let text = inner.text("topic", TOPIC_MAX);
    let Some(t) = text.filter(|t| !t.is_empty()) else {
        f.reject_field(
            "topic",
            format!("must be a topic of 1 to {TOPIC_MAX} characters"),
            "value_error",
        );
        return None;
    };
    if t.contains(['+', '#']) {
        f.reject_field(
            "topic",
            "must name one topic (no + or # wildcards)",
            "value_error",
        );
        return None;
    }
    Some(t)
}

impl FromJson for NewSensor {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let name = f.text("name", NAME_MAX);
        let metric = f.choice("metric", SensorMetric::ALL);
        let place = read_place(f, true);
        let source = f.choice("source", SensorSource::ALL);
        let topic = match f.raw("topic") {
            None | Some(Value::Null) => Some(None),
            Some(v) => topic_value(f, v).map(Some),
        };
        let interval = f.opt_int("expected_interval_minutes", 1, INTERVAL_MAX_MINUTES);
        let (source, topic) = (source?, topic?);
        check_topic(f, source, topic.as_deref())?;
        Some(Self {
            name: name?,
            metric: metric?,
            place: place??,
            source,
            topic,
            expected_interval_minutes: interval?,
        })
    }
}

/// `mqtt` and `home_assistant` read a topic; `http` has none.
pub(crate) fn check_topic(
    f: &mut JsonFields,
    source: SensorSource,
    topic: Option<&str>,
) -> Option<()> {
    match (source, topic) {
        (SensorSource::Http, Some(_)) => {
            f.reject_field("topic", "an http sensor has no topic", "value_error");
            None
        }
        (SensorSource::Mqtt | SensorSource::HomeAssistant, None) => {
            f.reject_field(
                "topic",
                "required for mqtt and home_assistant sensors",
                "missing",
            );
            None
        }
        _ => Some(()),
    }
}

/// Body of `PATCH /t/{slug}/sensors/{sensor_key}`: omitted fields stay. A place field moves
/// the sensor (exactly one of them); `topic` and `expected_interval_minutes` clear with null.
/// The metric cannot change (the readings are of it): register another sensor.
#[derive(Debug, Clone, PartialEq, serde::Deserialize, ToSchema)]
#[salvo(schema(name = "SensorPatch"))]
#[serde(deny_unknown_fields)] // states `additionalProperties: false`: the handler refuses extras
pub struct SensorPatchBody {
    #[salvo(schema(
        nullable = false,
        min_length = 1,
        max_length = 120,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub name: Option<String>,
    #[salvo(schema(format = "uuid"))]
    pub location_key: Option<Uuid>,
    #[salvo(schema(format = "uuid"))]
    pub site_key: Option<Uuid>,
    #[salvo(schema(format = "uuid"))]
    pub tank_key: Option<Uuid>,
    /// Switching to `http` clears the topic.
    #[salvo(schema(nullable = false))]
    pub source: Option<SensorSource>,
    /// Under the garden's prefix `kultiva/<slug>/`, as at creation.
    #[salvo(schema(min_length = 1, max_length = 255))]
    pub topic: Option<String>,
    #[salvo(schema(minimum = 1, maximum = 10080))]
    pub expected_interval_minutes: Option<i64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SensorPatch {
    pub name: Option<String>,
    pub place: Option<Place>,
    pub source: Option<SensorSource>,
    pub topic: Patch<String>,
    pub expected_interval_minutes: Patch<i64>,
}

impl FromJson for SensorPatch {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let name = f.patch_text("name", NAME_MAX);
        let place = read_place(f, false);
        let source = match fields::patch_choice(f, "source", SensorSource::ALL) {
            Some(Patch::Keep) => Some(None),
            Some(Patch::Set(s)) => Some(Some(s)),
            Some(Patch::Clear) => {
                f.reject_field(
                    "source",
                    "cannot be null; omit it to keep the value",
                    "type_error",
                );
                None
            }
            None => None,
        };
        let topic = match f.raw("topic") {
            None => Some(Patch::Keep),
            Some(Value::Null) => Some(Patch::Clear),
            Some(v) => topic_value(f, v).map(Patch::Set),
        };
        let interval = fields::patch_int(f, "expected_interval_minutes", 1, INTERVAL_MAX_MINUTES);
        if f.raw("metric").is_some() {
            f.reject_field(
                "metric",
                "cannot change: the readings are of this metric; register another sensor",
                "value_error",
            );
            return None;
        }
        Some(Self {
            name: name?,
            place: place?,
            source: source?,
            topic: topic?,
            expected_interval_minutes: interval?,
        })
    }
}

/// One reading as sent.
#[derive(Debug, Clone, PartialEq, serde::Deserialize, ToSchema)]
#[salvo(schema(name = "SensorReadingIn"))]
#[serde(deny_unknown_fields)]
pub struct ReadingIn {
    /// A number inside the metric's physical range (the sensor's `range_min`..`range_max`).
    pub value: f64,
    /// RFC 3339; at most 5 minutes in the future.
    #[salvo(schema(format = "date-time"))]
    pub measured_at: String,
}

/// Body of `POST /t/{slug}/sensors/{sensor_key}/readings`.
#[derive(Debug, Clone, PartialEq, serde::Deserialize, ToSchema)]
#[salvo(schema(name = "SensorReadingsCreate"))]
#[serde(deny_unknown_fields)]
pub struct ReadingsBody {
    /// 1 to 5000 readings.
    #[salvo(schema(min_items = 1, max_items = 5000))]
    pub readings: Vec<ReadingIn>,
}

/// A checked reading (the range of the sensor's metric is checked by the service).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reading {
    pub value: f64,
    pub measured_at: OffsetDateTime,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Readings(pub Vec<Reading>);

impl FromJson for Readings {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let Some(raw) = f.raw("readings").filter(|v| !v.is_null()) else {
            f.reject_field("readings", "field required", "missing");
            return None;
        };
        let Value::Array(items) = raw else {
            f.reject_field("readings", "must be a list of readings", "type_error");
            return None;
        };
        if items.is_empty() || items.len() > BATCH_MAX {
            f.reject_field(
                "readings",
                format!("must hold 1 to {BATCH_MAX} readings (got {})", items.len()),
                "value_error",
            );
            return None;
        }
        let latest = OffsetDateTime::now_utc() + time::Duration::seconds(FUTURE_SLACK_SECONDS);
        let mut out = Vec::with_capacity(items.len());
        let mut refused = 0;
        for (i, item) in items.into_iter().enumerate() {
            match reading(f, i, item, latest, refused) {
                Some(r) => out.push(r),
                None => refused += 1,
            }
        }
        (refused == 0).then_some(Readings(out))
    }
}

/// Errors name at most this many readings (a batch of 5000 bad ones is one answer, not a
/// 5000-line one).
const DETAILS_MAX: usize = 20;

/// One reading of the batch; `refused_before`: how many earlier ones were refused (the first
/// [`DETAILS_MAX`] refusals are named, then one line says there are more, so a refusal is
/// always recorded whatever its position).
fn reading(
    f: &mut JsonFields,
    i: usize,
    item: Value,
    latest: OffsetDateTime,
    refused_before: usize,
) -> Option<Reading> {
    let reject = |f: &mut JsonFields, field: &str, reason: &str, code: &str| {
        if refused_before < DETAILS_MAX {
            f.reject_field(&format!("readings[{i}]{field}"), reason, code);
        } else if refused_before == DETAILS_MAX {
            f.reject_field("readings", "more readings are invalid", "value_error");
        }
    };
    let Value::Object(mut m) = item else {
        reject(
            f,
            "",
            "must be an object {value, measured_at}",
            "type_error",
        );
        return None;
    };
    let value = match m.remove("value") {
        None | Some(Value::Null) => {
            reject(f, ".value", "field required", "missing");
            None
        }
        Some(v) => match v.as_f64().filter(|n| n.is_finite()) {
            Some(n) => Some(n),
            None => {
                reject(f, ".value", "must be a number", "type_error");
                None
            }
        },
    };
    let at = match m.remove("measured_at") {
        None | Some(Value::Null) => {
            reject(f, ".measured_at", "field required", "missing");
            None
        }
        Some(v) => match v
            .as_str()
            .and_then(|s| OffsetDateTime::parse(s, &Rfc3339).ok())
        {
            None => {
                reject(
                    f,
                    ".measured_at",
                    "must be an RFC 3339 timestamp",
                    "value_error",
                );
                None
            }
            Some(t) if t > latest => {
                reject(
                    f,
                    ".measured_at",
                    "must not be more than 5 minutes in the future",
                    "value_error",
                );
                None
            }
            Some(t) if t.year() < 2000 => {
                reject(
                    f,
                    ".measured_at",
                    "must be in the year 2000 or later",
                    "value_error",
                );
                None
            }
            Some(t) => Some(micros(t.to_offset(time::UtcOffset::UTC))),
        },
    };
    let mut extra: Vec<String> = m.keys().cloned().collect();
    extra.sort();
    for name in &extra {
        reject(f, &format!(".{name}"), "unknown field", "extra_forbidden");
    }
    if !extra.is_empty() {
        return None;
    }
    Some(Reading {
        value: value?,
        measured_at: at?,
    })
}

/// What a batch did: `stored` readings are new, `already_present` were stored before (or
/// repeated within the batch) and changed nothing.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ReadingsStored {
    pub sensor_key: Uuid,
    pub received: i64,
    pub stored: i64,
    pub already_present: i64,
    /// True for a tool's dry run: nothing was written.
    pub dry_run: bool,
}

/// One stored reading.
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[salvo(schema(name = "SensorReading"))]
pub struct ReadingOut {
    pub value: f64,
    #[serde(with = "time::serde::rfc3339")]
    pub measured_at: OffsetDateTime,
}

/// One chart bucket: readings with `start <= measured_at < start + step`.
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
pub struct ReadingBucket {
    #[serde(with = "time::serde::rfc3339")]
    pub start: OffsetDateTime,
    pub min: f64,
    pub avg: f64,
    pub max: f64,
    pub count: i64,
}

/// Answer of `GET …/sensors/{sensor_key}/readings`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ReadingSeries {
    pub sensor_key: Uuid,
    pub metric: SensorMetric,
    pub unit: String,
    /// Where the numbers come from: the sensor's source (`http`, `mqtt`, `home_assistant`).
    pub source: SensorSource,
    #[serde(with = "time::serde::rfc3339")]
    pub from: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub to: OffsetDateTime,
    /// The step asked for; null: raw readings.
    pub step: Option<String>,
    /// `raw` (the readings, kept 90 days) or `hourly` (roll-ups, kept for good; steps of whole
    /// hours read these) or `raw_buckets` (steps below an hour).
    pub resolution: String,
    /// Raw readings in time order (empty with a step).
    pub readings: Vec<ReadingOut>,
    /// Buckets in time order, only those holding readings (empty without a step).
    pub buckets: Vec<ReadingBucket>,
    /// Raw mode: most readings in this answer.
    pub limit: i64,
    /// Raw mode: set when more readings follow; ask again with `from` set to it.
    #[serde(with = "time::serde::rfc3339::option")]
    pub next_from: Option<OffsetDateTime>,
}
