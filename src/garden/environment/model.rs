//! Readings as a diary entry, the diagnostics snapshot and `get_environment` show them.

use salvo::oapi::ToSchema;
use serde::Serialize;
use time::{Duration, OffsetDateTime, PrimitiveDateTime, Time};
use uuid::Uuid;

/// A sensor reading counts for an entry when it lies in this many minutes up to the entry's
/// time (the latest one of each sensor is taken).
pub const SENSOR_WINDOW_MINUTES: i64 = 60;
/// The weather hour nearest the entry's time counts when it lies at most this far from it.
pub const WEATHER_WINDOW_MINUTES: i64 = 60;
/// `source` of readings of origin `weather`: the hourly forecast of `WEATHER_URL`.
pub const WEATHER_SOURCE: &str = "forecast";

/// `environment_status` when nothing measures the plant.
pub const NO_SOURCE: &str = "no_source";
/// `environment_status` when something measures it but no reading got through in the window.
pub const UNAVAILABLE: &str = "unavailable";

/// One device reading near a plant.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[salvo(schema(name = "EnvironmentReading"))]
pub struct EnvironmentReading {
    /// `location` (a sensor at the plant's location), `site` (a sensor of the location's
    /// site) or `weather` (the site's hourly forecast, from its coordinates).
    pub origin: &'static str,
    /// `temperature_c`, `humidity_percent`, `ec_ms_cm`, … (a sensor's metric).
    pub metric: String,
    pub value: f64,
    /// `°C`, `%`, `mS/cm`, …
    pub unit: String,
    #[serde(with = "time::serde::rfc3339")]
    #[salvo(schema(value_type = String, format = "date-time"))]
    pub measured_at: OffsetDateTime,
    /// The sensor's source (`http`, `mqtt`, `home_assistant`), or `forecast` for origin
    /// `weather`.
    pub source: String,
    /// The sensor (null for origin `weather`).
    pub sensor_key: Option<Uuid>,
    pub sensor_name: Option<String>,
}

/// The readings of one entry, and why the list is empty.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Environment {
    pub readings: Vec<EnvironmentReading>,
    /// `no_source`, `unavailable`, or `None` when readings are there.
    pub status: Option<&'static str>,
}

impl Environment {
    pub fn no_source() -> Self {
        Self {
            readings: Vec::new(),
            status: Some(NO_SOURCE),
        }
    }
}

/// The instant an entry's environment is read at: when it was written, if it was written on
/// its own date (UTC); an entry dated another day (written later about that day, or ahead)
/// is read at noon UTC of its date.
pub fn entry_instant(entry_date: time::Date, created_at: OffsetDateTime) -> OffsetDateTime {
    let created = created_at.to_offset(time::UtcOffset::UTC);
    if created.date() == entry_date {
        created
    } else {
        PrimitiveDateTime::new(
            entry_date,
            Time::from_hms(12, 0, 0).unwrap_or(Time::MIDNIGHT),
        )
        .assume_utc()
    }
}

/// The sensor window ending at `at`: `(at - 60 min, at]`.
pub fn sensor_window(at: OffsetDateTime) -> (OffsetDateTime, OffsetDateTime) {
    (at - Duration::minutes(SENSOR_WINDOW_MINUTES), at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::{date, datetime};

    #[test]
    fn an_entry_is_read_when_written_unless_dated_another_day() {
        let at = datetime!(2026-05-03 08:15 UTC);
        assert_eq!(entry_instant(date!(2026 - 05 - 03), at), at);
        assert_eq!(
            entry_instant(date!(2026 - 05 - 01), at),
            datetime!(2026-05-01 12:00 UTC)
        );
    }
}
