//! Sensor metrics, their units and physical ranges, and chart steps: pure rules, no I/O.
//!
//! The ranges are what the quantity can physically be where plants grow, not what is good for
//! a plant (that is the phase's range, judged elsewhere): a reading outside is a broken or
//! misconfigured sensor, never weather.
//! - Temperatures -50..70 °C: colder than the coldest inhabited places in winter or hotter
//!   than a sun-baked greenhouse roof is a faulty probe.
//! - Relative humidity and soil moisture 0..100 %: percentages by definition.
//! - EC 0..20 mS/cm: the strongest stock solutions sit below 20; sea water is about 55, which
//!   no grow medium sees.
//! - pH 0..14: the scale of aqueous solutions.
//! - PPFD 0..3000 µmol/m²/s: full summer sun at noon is about 2000-2300.
//! - CO₂ 0..10000 ppm: outside air is ~420, enriched rooms run 1200-1500; above 10000 is a
//!   hazard for people and beyond a grow room.
//! - Illuminance 0..200000 lx: direct sunlight peaks near 120000.

/// One metric a sensor measures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Metric {
    pub name: &'static str,
    pub unit: &'static str,
    pub min: f64,
    pub max: f64,
}

pub const METRICS: &[Metric] = &[
    Metric {
        name: "temperature_c",
        unit: "°C",
        min: -50.0,
        max: 70.0,
    },
    Metric {
        name: "humidity_percent",
        unit: "%",
        min: 0.0,
        max: 100.0,
    },
    Metric {
        name: "ec_ms_cm",
        unit: "mS/cm",
        min: 0.0,
        max: 20.0,
    },
    Metric {
        name: "ph",
        unit: "pH",
        min: 0.0,
        max: 14.0,
    },
    Metric {
        name: "ppfd_umol_m2_s",
        unit: "µmol/m²/s",
        min: 0.0,
        max: 3000.0,
    },
    Metric {
        name: "co2_ppm",
        unit: "ppm",
        min: 0.0,
        max: 10000.0,
    },
    Metric {
        name: "soil_moisture_percent",
        unit: "%",
        min: 0.0,
        max: 100.0,
    },
    Metric {
        name: "water_temperature_c",
        unit: "°C",
        min: -50.0,
        max: 70.0,
    },
    Metric {
        name: "light_lux",
        unit: "lx",
        min: 0.0,
        max: 200000.0,
    },
];

pub fn metric(name: &str) -> Option<&'static Metric> {
    METRICS.iter().find(|m| m.name == name)
}

/// Whether `value` can physically be a reading of `metric` (bounds included).
pub fn in_range(metric: &Metric, value: f64) -> bool {
    value.is_finite() && value >= metric.min && value <= metric.max
}

/// Most readings one request may carry.
pub const BATCH_MAX: usize = 5000;
/// A reading may lie this far in the future (clock skew between sensor and server).
pub const FUTURE_SLACK_SECONDS: i64 = 300;
/// Raw readings are kept this long; hourly roll-ups for good.
pub const RAW_RETENTION_DAYS: i64 = 90;
/// Shortest and longest chart step, seconds (one minute, 31 days).
pub const STEP_MIN_SECONDS: i64 = 60;
pub const STEP_MAX_SECONDS: i64 = 31 * 86_400;
/// Most buckets one aggregated answer holds.
pub const BUCKETS_MAX: i64 = 10_000;

/// A chart step `<n>m`, `<n>h` or `<n>d` in seconds; `None` when malformed or outside
/// [`STEP_MIN_SECONDS`]..=[`STEP_MAX_SECONDS`].
pub fn parse_step(raw: &str) -> Option<i64> {
    let unit = raw.chars().last()?;
    let digits = &raw[..raw.len() - unit.len_utf8()];
    if digits.is_empty() || digits.len() > 6 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: i64 = digits.parse().ok()?;
    let seconds = n.checked_mul(match unit {
        'm' => 60,
        'h' => 3600,
        'd' => 86_400,
        _ => return None,
    })?;
    (STEP_MIN_SECONDS..=STEP_MAX_SECONDS)
        .contains(&seconds)
        .then_some(seconds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps() {
        assert_eq!(parse_step("5m"), Some(300));
        assert_eq!(parse_step("1h"), Some(3600));
        assert_eq!(parse_step("1d"), Some(86_400));
        assert_eq!(parse_step("31d"), Some(31 * 86_400));
        for bad in ["", "m", "0m", "32d", "5s", "-5m", "5 m", "1.5h", "5M", "h1"] {
            assert_eq!(parse_step(bad), None, "{bad}");
        }
    }

    #[test]
    fn ranges() {
        let ph = metric("ph").expect("ph");
        assert!(in_range(ph, 0.0) && in_range(ph, 14.0) && in_range(ph, 6.2));
        assert!(!in_range(ph, 14.01) && !in_range(ph, -0.1));
        assert!(!in_range(metric("humidity_percent").expect("rh"), 101.0));
        assert!(metric("nope").is_none());
        assert_eq!(METRICS.len(), 9);
    }
}
