//! Tanks: the record, its current state, fills and the maintenance log with due dates.

use salvo::oapi::ToSchema;
use serde::Serialize;
use serde_json::Value;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use uuid::Uuid;

use crate::garden::fields;
use crate::values::json::{FromJson, JsonFields, Patch};

/// A closed list of snake_case names as a Rust enum: `ALL`, `as_str`, `parse`.
#[macro_export]
macro_rules! name_enum {
    ($(#[$m:meta])* $name:ident { $($variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, salvo::oapi::ToSchema)]
        #[serde(rename_all = "snake_case")]
        pub enum $name { $($variant),+ }

        impl $name {
            pub const ALL: &'static [(&'static str, $name)] = &[$(($text, $name::$variant)),+];
            pub const NAMES: &'static [&'static str] = &[$($text),+];

            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }

            pub fn parse(raw: &str) -> Option<Self> {
                Self::ALL.iter().find(|(n, _)| *n == raw).map(|(_, k)| *k)
            }
        }
    };
}

name_enum!(
    /// What the tank holds (domain 1.10).
    TankKind {
        Nutrient = "nutrient",
        Irrigation = "irrigation",
        Reservoir = "reservoir",
        Recirculation = "recirculation",
        StockSolution = "stock_solution",
    }
);

name_enum!(
    /// `full_change` replaces the solution, `top_up` adds to it, `adjustment` corrects EC or
    /// pH (and may add a little volume).
    FillType {
        FullChange = "full_change",
        TopUp = "top_up",
        Adjustment = "adjustment",
    }
);

name_enum!(
    WaterSource {
        Tap = "tap",
        Osmose = "osmose",
        Rainwater = "rainwater",
        Distilled = "distilled",
        Well = "well",
        Mixed = "mixed",
    }
);

name_enum!(
    MaintenanceType {
        WaterChange = "water_change",
        Cleaning = "cleaning",
        Sanitization = "sanitization",
        Calibration = "calibration",
        FilterChange = "filter_change",
        PumpInspection = "pump_inspection",
    }
);

pub const NAME_MAX: usize = 120;
pub const NOTES_MAX: usize = 2000;
/// Largest tank, litres (an IBC is 1000; a farm cistern 100 m³).
pub const VOLUME_MAX_L: f64 = 100_000.0;
pub const EC_MAX_MS: f64 = 10.0;
pub const WATER_TEMP_MAX_C: f64 = 50.0;
/// A timestamp may lie this far in the future (clock skew), no further.
pub const FUTURE_SLACK_SECONDS: i64 = 300;

/// The tank's last fill.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TankFill {
    pub key: Uuid,
    pub tank_key: Uuid,
    pub fill_type: FillType,
    /// Litres added (a full change: the new volume).
    pub volume_liters: f64,
    pub ec_ms: Option<f64>,
    pub ph: Option<f64>,
    pub water_source: Option<WaterSource>,
    pub water_temp_c: Option<f64>,
    pub notes: Option<String>,
    /// Litres in the tank after this fill.
    pub volume_after_liters: f64,
    #[serde(with = "time::serde::rfc3339")]
    pub filled_at: OffsetDateTime,
    /// Who filled it (`user:<key>`, `mcp:<key>`).
    pub actor: String,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct MaintenanceEntry {
    pub key: Uuid,
    pub tank_key: Uuid,
    pub maintenance_type: MaintenanceType,
    #[serde(with = "time::serde::rfc3339")]
    pub performed_at: OffsetDateTime,
    pub notes: Option<String>,
    pub actor: String,
}

/// One scheduled maintenance of a tank and when it is next due.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct MaintenanceDue {
    pub maintenance_type: MaintenanceType,
    pub interval_days: i64,
    /// Last time it was done (a full change counts as a water change); null: never.
    #[serde(with = "time::serde::rfc3339::option")]
    pub last_performed_at: Option<OffsetDateTime>,
    /// `YYYY-MM-DD` (UTC).
    pub next_due_on: String,
    /// `ok`, `due_soon` (within 3 days) or `overdue`.
    pub status: String,
}

/// What is in the tank now.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TankState {
    /// Null until the first fill.
    pub current_volume_liters: Option<f64>,
    /// current ÷ capacity × 100, 1 decimal.
    pub fill_percent: Option<f64>,
    pub ec_ms: Option<f64>,
    pub ph: Option<f64>,
    pub last_fill: Option<TankFill>,
    /// Whole days since the solution was last changed completely (`full_change`); null: never.
    pub age_days: Option<i64>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Tank {
    pub key: Uuid,
    pub name: String,
    pub kind: TankKind,
    /// Capacity in litres.
    pub volume_liters: f64,
    /// A location of this garden, or null.
    pub location_key: Option<Uuid>,
    pub notes: Option<String>,
    pub state: TankState,
    /// The scheduled maintenance of this kind of tank, soonest due first.
    pub maintenance: Vec<MaintenanceDue>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
}

/// Body of `POST /t/{slug}/tanks/`.
#[derive(serde::Deserialize, Debug, Clone, PartialEq, ToSchema)]
#[salvo(schema(name = "TankCreate"))]
#[serde(deny_unknown_fields)] // states `additionalProperties: false`: the handler refuses extras
pub struct NewTank {
    /// Up to 120 characters, unique per garden (case-insensitive).
    #[salvo(schema(
        min_length = 1,
        max_length = 120,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub name: String,
    pub kind: TankKind,
    /// Capacity in litres: above 0, at most 100000.
    #[salvo(schema(exclusive_minimum = 0.0, maximum = 100000.0))]
    pub volume_liters: f64,
    /// A location of this garden.
    #[salvo(schema(format = "uuid"))]
    pub location_key: Option<Uuid>,
    #[salvo(schema(
        max_length = 2000,
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]*$"
    ))]
    pub notes: Option<String>,
}

impl FromJson for NewTank {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let name = f.text("name", NAME_MAX);
        let kind = f.choice("kind", TankKind::ALL);
        let volume = required_number(f, "volume_liters", 0.0, VOLUME_MAX_L, false);
        let location = fields::opt_key(f, "location_key");
        let notes = f.opt_long_text("notes", NOTES_MAX);
        Some(Self {
            name: name?,
            kind: kind?,
            volume_liters: volume?,
            location_key: location?,
            notes: notes?,
        })
    }
}

/// Body of `PATCH /t/{slug}/tanks/{tank_key}`: omitted fields stay; `location_key` and `notes`
/// clear with null. The capacity cannot drop below what the tank holds now.
#[derive(serde::Deserialize, Debug, Clone, PartialEq, ToSchema)]
#[salvo(schema(name = "TankPatch"))]
#[serde(deny_unknown_fields)] // states `additionalProperties: false`: the handler refuses extras
pub struct TankPatchBody {
    #[salvo(schema(
        nullable = false,
        min_length = 1,
        max_length = 120,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub name: Option<String>,
    #[salvo(schema(nullable = false))]
    pub kind: Option<TankKind>,
    #[salvo(schema(nullable = false, exclusive_minimum = 0.0, maximum = 100000.0))]
    pub volume_liters: Option<f64>,
    #[salvo(schema(format = "uuid"))]
    pub location_key: Option<Uuid>,
    #[salvo(schema(
        max_length = 2000,
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]*$"
    ))]
    pub notes: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TankPatch {
    pub name: Option<String>,
    pub kind: Option<TankKind>,
    pub volume_liters: Option<f64>,
    pub location_key: Patch<Uuid>,
    pub notes: Patch<String>,
}

impl FromJson for TankPatch {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let name = f.patch_text("name", NAME_MAX);
        let kind = match fields::patch_choice(f, "kind", TankKind::ALL) {
            Some(Patch::Keep) => Some(None),
            Some(Patch::Set(k)) => Some(Some(k)),
            Some(Patch::Clear) => {
                f.reject_field(
                    "kind",
                    "cannot be null; omit it to keep the value",
                    "type_error",
                );
                None
            }
            None => None,
        };
        let volume = match f.raw("volume_liters") {
            None => Some(None),
            Some(Value::Null) => {
                f.reject_field(
                    "volume_liters",
                    "cannot be null; omit it to keep the value",
                    "type_error",
                );
                None
            }
            Some(v) => number_value(f, "volume_liters", &v, 0.0, VOLUME_MAX_L, false).map(Some),
        };
        let location = fields::patch_key(f, "location_key");
        let notes = fields::patch_long_text(f, "notes", NOTES_MAX);
        Some(Self {
            name: name?,
            kind: kind?,
            volume_liters: volume?,
            location_key: location?,
            notes: notes?,
        })
    }
}

/// Body of `POST /t/{slug}/tanks/{tank_key}/fills`.
#[derive(serde::Deserialize, Debug, Clone, PartialEq, ToSchema)]
#[salvo(schema(name = "TankFillCreate"))]
#[serde(deny_unknown_fields)] // states `additionalProperties: false`: the handler refuses extras
pub struct NewFill {
    pub fill_type: FillType,
    /// Litres added; for a full change the new volume. Required above 0 for `full_change` and
    /// `top_up`; an `adjustment` may add 0 (default). The tank may not overflow.
    #[salvo(schema(minimum = 0.0, maximum = 100000.0))]
    pub volume_liters: Option<f64>,
    /// Measured EC after the fill, mS/cm (0–10). An adjustment needs `ec_ms` or `ph`.
    #[salvo(schema(minimum = 0.0, maximum = 10.0))]
    pub ec_ms: Option<f64>,
    #[salvo(schema(minimum = 0.0, maximum = 14.0))]
    pub ph: Option<f64>,
    pub water_source: Option<WaterSource>,
    #[salvo(schema(minimum = 0.0, maximum = 50.0))]
    pub water_temp_c: Option<f64>,
    #[salvo(schema(
        max_length = 2000,
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]*$"
    ))]
    pub notes: Option<String>,
}

impl FromJson for NewFill {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let fill_type = f.choice("fill_type", FillType::ALL);
        let volume = fields::opt_number(f, "volume_liters", 0.0, VOLUME_MAX_L);
        let ec = fields::opt_number(f, "ec_ms", 0.0, EC_MAX_MS);
        let ph = fields::opt_number(f, "ph", 0.0, 14.0);
        let source = fields::opt_choice(f, "water_source", WaterSource::ALL);
        let temp = fields::opt_number(f, "water_temp_c", 0.0, WATER_TEMP_MAX_C);
        let notes = f.opt_long_text("notes", NOTES_MAX);
        let (fill_type, volume, ec, ph) = (fill_type?, volume?, ec?, ph?);
        match fill_type {
            FillType::FullChange | FillType::TopUp if volume.is_none_or(|v| v <= 0.0) => {
                f.reject_field(
                    "volume_liters",
                    "a full change or top-up adds more than 0 litres",
                    "value_error",
                );
                return None;
            }
            FillType::Adjustment if ec.is_none() && ph.is_none() => {
                f.reject_field(
                    "ec_ms",
                    "an adjustment names the EC or pH it set",
                    "missing",
                );
                return None;
            }
            _ => {}
        }
        Some(Self {
            fill_type,
            volume_liters: volume,
            ec_ms: ec,
            ph,
            water_source: source?,
            water_temp_c: temp?,
            notes: notes?,
        })
    }
}

/// Body of `POST /t/{slug}/tanks/{tank_key}/maintenance`.
#[derive(serde::Deserialize, Debug, Clone, PartialEq, ToSchema)]
#[salvo(schema(name = "TankMaintenanceCreate"))]
#[serde(deny_unknown_fields)] // states `additionalProperties: false`: the handler refuses extras
pub struct NewMaintenance {
    pub maintenance_type: MaintenanceType,
    /// When it was done (RFC 3339; default now; not in the future).
    #[salvo(schema(format = "date-time"))]
    pub performed_at: Option<String>,
    #[salvo(schema(
        max_length = 2000,
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]*$"
    ))]
    pub notes: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct MaintenanceBody {
    pub maintenance_type: MaintenanceType,
    pub performed_at: Option<OffsetDateTime>,
    pub notes: Option<String>,
}

impl FromJson for MaintenanceBody {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let t = f.choice("maintenance_type", MaintenanceType::ALL);
        let at = opt_timestamp(f, "performed_at");
        let notes = f.opt_long_text("notes", NOTES_MAX);
        Some(Self {
            maintenance_type: t?,
            performed_at: at?,
            notes: notes?,
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Getters shared with watering bodies.

pub(crate) fn number_value(
    f: &mut JsonFields,
    name: &str,
    v: &Value,
    min: f64,
    max: f64,
    zero_ok: bool,
) -> Option<f64> {
    match v.as_f64() {
        Some(n) if n.is_finite() && n <= max && (n > min || (zero_ok && n >= min)) => Some(n),
        Some(_) => {
            let lower = if zero_ok {
                format!("between {min}")
            } else {
                format!("above {min} and at most")
            };
            let reason = if zero_ok {
                format!("must be {lower} and {max}")
            } else {
                format!("must be {lower} {max}")
            };
            f.reject_field(name, reason, "value_error");
            None
        }
        None => {
            f.reject_field(name, "must be a number", "type_error");
            None
        }
    }
}

/// A required number; `zero_ok: false` refuses the lower bound itself.
pub(crate) fn required_number(
    f: &mut JsonFields,
    name: &'static str,
    min: f64,
    max: f64,
    zero_ok: bool,
) -> Option<f64> {
    match f.raw(name) {
        None | Some(Value::Null) => {
            f.reject_field(name, "field required", "missing");
            None
        }
        Some(v) => number_value(f, name, &v, min, max, zero_ok),
    }
}

/// A timestamp as PostgreSQL keeps it (microseconds), so what a write returns equals what a
/// later read returns.
pub fn micros(t: OffsetDateTime) -> OffsetDateTime {
    t.replace_nanosecond(t.nanosecond() / 1000 * 1000)
        .unwrap_or(t)
}

/// An optional RFC 3339 timestamp, not more than five minutes in the future.
pub(crate) fn opt_timestamp(
    f: &mut JsonFields,
    name: &'static str,
) -> Option<Option<OffsetDateTime>> {
    match f.raw(name) {
        None | Some(Value::Null) => Some(None),
        Some(v) => {
            let Some(t) = v
                .as_str()
                .and_then(|s| OffsetDateTime::parse(s, &Rfc3339).ok())
            else {
                f.reject_field(name, "must be an RFC 3339 timestamp", "value_error");
                return None;
            };
            if t > OffsetDateTime::now_utc() + time::Duration::seconds(FUTURE_SLACK_SECONDS) {
                f.reject_field(name, "must not be in the future", "value_error");
                return None;
            }
            if t.year() < 2000 {
                f.reject_field(name, "must be in the year 2000 or later", "value_error");
                return None;
            }
            Some(Some(micros(t)))
        }
    }
}
