//! Alerts as the list answers them.

use salvo::oapi::ToSchema;
use serde::Serialize;
use serde_json::Value;
use time::OffsetDateTime;
use uuid::Uuid;

crate::name_enum!(
    /// `out_of_range`: readings outside the current phase's range for `ALERT_AFTER_MINUTES`;
    /// `sensor_silent`: no reading for three times the sensor's expected interval; `frost`: a
    /// forecast low at or below a plant's frost threshold.
    AlertKind {
        OutOfRange = "out_of_range",
        SensorSilent = "sensor_silent",
        Frost = "frost",
    }
);

crate::name_enum!(
    /// `open`: the cause lasts; `resolved`: it ended (`resolved_at`).
    AlertState {
        Open = "open",
        Resolved = "resolved",
    }
);

/// The reading that opened the alert (for `sensor_silent` the last one heard, if any).
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[salvo(schema(name = "AlertReading"))]
pub struct AlertReading {
    pub value: f64,
    #[serde(with = "time::serde::rfc3339")]
    pub measured_at: OffsetDateTime,
}

/// The range that was broken and where it comes from.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[salvo(schema(name = "AlertRange"))]
pub struct AlertRange {
    /// A sensor metric (`ec_ms_cm`, `ph`, …) or `vpd_kpa` (air VPD from a temperature and a
    /// humidity sensor at the same place).
    pub metric: String,
    /// Lower bound (included); null: open.
    pub min: Option<f64>,
    /// Upper bound (included); null: open.
    pub max: Option<f64>,
    /// Where the range comes from: the nutrient plan and its phase entry, or the VPD chart or
    /// crop target with its documents.
    pub source: String,
}

/// An alert of a garden.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Alert {
    pub key: Uuid,
    pub kind: AlertKind,
    pub state: AlertState,
    /// The metric judged (`vpd_kpa` for VPD; the sensor's metric for `sensor_silent`).
    pub metric: String,
    /// What it concerns (null where the kind has none).
    pub plant_key: Option<Uuid>,
    pub sensor_key: Option<Uuid>,
    pub location_key: Option<Uuid>,
    pub site_key: Option<Uuid>,
    pub tank_key: Option<Uuid>,
    pub reading: Option<AlertReading>,
    /// Null for `sensor_silent`.
    pub range: Option<AlertRange>,
    /// Kind-specific facts: `silent_after_minutes` and `expected_interval_minutes` of a silent
    /// sensor; `humidity_sensor_key` of a VPD alert; `night` (the local date the night begins),
    /// `low_c`, `low_at`, `threshold_c`, `frost_sensitivity` and `timezone` of a frost alert.
    #[salvo(schema(value_type = Object))]
    pub detail: Value,
    #[serde(with = "time::serde::rfc3339")]
    pub opened_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option")]
    pub resolved_at: Option<OffsetDateTime>,
}

/// Filters of the list.
#[derive(Debug, Clone, Copy, Default)]
pub struct AlertFilter {
    pub state: Option<AlertState>,
    pub kind: Option<AlertKind>,
}
