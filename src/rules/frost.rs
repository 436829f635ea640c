//! Frost warnings: the temperature at or below which a forecast low endangers a plant, by its
//! species' `frost_sensitivity`, and the lowest forecast temperature of each night. Pure rules,
//! no I/O.
//!
//! ## Thresholds and their sources
//! The forecast is the hourly air temperature 2 m above ground (Open-Meteo `temperature_2m`).
//! Two published scales give the temperatures plants of a class stand:
//! - RHS hardiness ratings (Royal Horticultural Society, 2012): H1a warmer than 15 °C, H1b 10 to
//!   15, H1c 5 to 10, **H2 1 to 5 °C** ("tender: cool or frost-free glasshouse"), **H3 -5 to 1 °C**
//!   ("half hardy: unheated glasshouse / mild winter", at risk from sudden early frosts), **H4 -10
//!   to -5 °C** ("hardy: average winter"), **H5 -15 to -10 °C** ("hardy: cold winter"), H6 -20 to
//!   -15, H7 colder than -20 ("very hardy").
//! - The freeze categories of the US National Weather Service, as extension services quote them
//!   for gardens: **light freeze** -1.7 to 0 °C (29-32 °F): tender plants killed; **moderate
//!   freeze** -3.9 to -2.2 °C (25-28 °F): widely destructive to most vegetation; **severe freeze**
//!   -4.4 °C (24 °F) and colder: heavy damage to most plants.
//!
//! Each class takes the warmer (safer) of the two scales' limits, rounded towards warm:
//!
//! | `frost_sensitivity` | RHS | NWS | threshold |
//! |---|---|---|---|
//! | `sensitive` | H2: damaged below 1 °C | light freeze: 0 °C | **1 °C** |
//! | `moderate` | H3: down to -5 °C | moderate freeze: from -2.2 °C | **-2 °C** |
//! | `hardy` | H4: down to -10 °C | severe freeze: from -4.4 °C | **-4 °C** |
//! | `very_hardy` | H5-H7: down to -10 °C and colder | (no class hardier than "most plants") | **-10 °C** |
//!
//! A species without `frost_sensitivity` counts as `sensitive`: a warning too many costs a look
//! at the forecast, one too few a plant.
//!
//! ## Nights
//! The night of a local date D runs from noon on D to noon on D+1 in the garden's time zone: the
//! low before dawn on the 8th belongs to the night of the 7th. Only forecast hours from the
//! current hour to [`HORIZON_HOURS`] ahead are judged; hours gone are weather, not a warning.

use time::{Date, Duration, OffsetDateTime, PrimitiveDateTime};

/// Site kinds under the open sky, where a frost night reaches the plants.
pub const OUTDOOR_SITE_KINDS: &[&str] = &["garden", "balcony"];

/// How far ahead a forecast low opens a frost alert.
pub const HORIZON_HOURS: i64 = 48;

/// The alert's metric: the forecast low is a temperature.
pub const FROST_METRIC: &str = "temperature_c";

/// One class of frost sensitivity and the forecast low (°C, at or below) that endangers it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrostThreshold {
    pub sensitivity: &'static str,
    pub threshold_c: f64,
    /// Where the number comes from, shown with the alert as the range's source.
    pub source: &'static str,
}

pub const THRESHOLDS: &[FrostThreshold] = &[
    FrostThreshold {
        sensitivity: "sensitive",
        threshold_c: 1.0,
        source: "frost_sensitivity sensitive: 1 °C, the warmer of RHS hardiness rating H2 \
                 (tender, 1 to 5 °C) and the NWS light freeze (0 °C: tender plants killed)",
    },
    FrostThreshold {
        sensitivity: "moderate",
        threshold_c: -2.0,
        source: "frost_sensitivity moderate: -2 °C, the warmer of RHS hardiness rating H3 \
                 (half hardy, -5 to 1 °C) and the NWS moderate freeze (from -2.2 °C: widely \
                 destructive)",
    },
    FrostThreshold {
        sensitivity: "hardy",
        threshold_c: -4.0,
        source: "frost_sensitivity hardy: -4 °C, the warmer of RHS hardiness rating H4 \
                 (hardy in an average winter, -10 to -5 °C) and the NWS severe freeze (from \
                 -4.4 °C: heavy damage to most plants)",
    },
    FrostThreshold {
        sensitivity: "very_hardy",
        threshold_c: -10.0,
        source: "frost_sensitivity very_hardy: -10 °C, RHS hardiness ratings H5-H7 (hardy in a \
                 cold winter and colder, -10 °C and below)",
    },
];

/// Without a recorded sensitivity: the tender class's threshold, with a source that says so.
pub const UNKNOWN: FrostThreshold = FrostThreshold {
    sensitivity: "unknown",
    threshold_c: 1.0,
    source: "frost_sensitivity not recorded: counted as sensitive, 1 °C (RHS H2, NWS light \
             freeze)",
};

/// The threshold of a species' `frost_sensitivity` (unknown or absent: [`UNKNOWN`]).
pub fn threshold(sensitivity: Option<&str>) -> &'static FrostThreshold {
    sensitivity
        .and_then(|s| THRESHOLDS.iter().find(|t| t.sensitivity == s))
        .unwrap_or(&UNKNOWN)
}

pub fn is_outdoor(site_kind: &str) -> bool {
    OUTDOOR_SITE_KINDS.contains(&site_kind)
}

/// One forecast hour: the instant, the same instant on the garden's clock, the temperature.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ForecastHour {
    pub at: OffsetDateTime,
    pub local: PrimitiveDateTime,
    pub temperature_c: f64,
}

/// The lowest forecast temperature of one night and when it falls.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NightLow {
    pub night: Date,
    pub low_c: f64,
    pub low_at: OffsetDateTime,
}

/// The night a local wall-clock time belongs to (noon to noon).
pub fn night_of(local: PrimitiveDateTime) -> Date {
    (local - Duration::hours(12)).date()
}

/// The lowest temperature of each night among the hours from the current hour (the hour
/// holding `now`) to `now` + [`HORIZON_HOURS`], by night in date order.
pub fn night_lows(hours: &[ForecastHour], now: OffsetDateTime) -> Vec<NightLow> {
    let from = now - Duration::hours(1);
    let to = now + Duration::hours(HORIZON_HOURS);
    let mut lows: Vec<NightLow> = Vec::new();
    for h in hours.iter().filter(|h| h.at > from && h.at <= to) {
        let night = night_of(h.local);
        match lows.iter_mut().find(|l| l.night == night) {
            Some(l) if h.temperature_c < l.low_c => {
                l.low_c = h.temperature_c;
                l.low_at = h.at;
            }
            Some(_) => {}
            None => lows.push(NightLow {
                night,
                low_c: h.temperature_c,
                low_at: h.at,
            }),
        }
    }
    lows.sort_by_key(|l| l.night);
    lows
}

/// The nights whose low is at or below the threshold.
pub fn frost_nights(lows: &[NightLow], threshold: &FrostThreshold) -> Vec<NightLow> {
    lows.iter()
        .filter(|l| l.low_c <= threshold.threshold_c)
        .copied()
        .collect()
}

/// Whether the night of `night` is over at `now` (its noon-to-noon span ended), on the
/// garden's clock `local_now`.
pub fn night_is_over(night: Date, local_now: PrimitiveDateTime) -> bool {
    night_of(local_now) > night
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::{date, datetime};

    #[test]
    fn thresholds_by_sensitivity() {
        let cases = [
            (Some("sensitive"), 1.0),
            (Some("moderate"), -2.0),
            (Some("hardy"), -4.0),
            (Some("very_hardy"), -10.0),
            (None, 1.0),
            (Some("made_up"), 1.0),
        ];
        for (s, want) in cases {
            assert_eq!(threshold(s).threshold_c, want, "{s:?}");
        }
        // Hardier classes stand colder nights; every source names its class.
        for pair in THRESHOLDS.windows(2) {
            assert!(pair[0].threshold_c > pair[1].threshold_c);
        }
        for t in THRESHOLDS {
            assert!(t.source.contains(t.sensitivity) && t.source.contains("RHS"));
        }
    }

    #[test]
    fn outdoor_kinds() {
        assert!(is_outdoor("garden") && is_outdoor("balcony"));
        for kind in ["apartment", "greenhouse", "windowsill", "grow_tent"] {
            assert!(!is_outdoor(kind), "{kind}");
        }
    }

    #[test]
    fn nights_run_noon_to_noon() {
        assert_eq!(night_of(datetime!(2026-12-07 18:00)), date!(2026 - 12 - 07));
        assert_eq!(night_of(datetime!(2026-12-08 05:00)), date!(2026 - 12 - 07));
        assert_eq!(night_of(datetime!(2026-12-08 12:00)), date!(2026 - 12 - 08));
        assert!(!night_is_over(
            date!(2026 - 12 - 07),
            datetime!(2026-12-08 11:59)
        ));
        assert!(night_is_over(
            date!(2026 - 12 - 07),
            datetime!(2026-12-08 12:00)
        ));
    }

    fn hour(at: OffsetDateTime, t: f64) -> ForecastHour {
        // A garden one hour ahead of UTC.
        let local = at + Duration::hours(1);
        ForecastHour {
            at,
            local: PrimitiveDateTime::new(local.date(), local.time()),
            temperature_c: t,
        }
    }

    #[test]
    fn lows_per_night_within_the_horizon() {
        let now = datetime!(2026-12-07 10:30 UTC);
        let hours = [
            hour(datetime!(2026-12-07 08:00 UTC), -9.0), // gone
            hour(datetime!(2026-12-07 10:00 UTC), 3.0),  // the current hour
            hour(datetime!(2026-12-08 04:00 UTC), -2.5), // night of the 7th (05:00 local)
            hour(datetime!(2026-12-08 05:00 UTC), -1.0),
            hour(datetime!(2026-12-09 03:00 UTC), 0.5), // night of the 8th
            hour(datetime!(2026-12-09 11:00 UTC), -8.0), // beyond 48 h
        ];
        let lows = night_lows(&hours, now);
        assert_eq!(
            lows.iter().map(|l| (l.night, l.low_c)).collect::<Vec<_>>(),
            [
                (date!(2026 - 12 - 06), 3.0),
                (date!(2026 - 12 - 07), -2.5),
                (date!(2026 - 12 - 08), 0.5)
            ]
        );
        assert_eq!(lows[1].low_at, datetime!(2026-12-08 04:00 UTC));
        let nights = |s| {
            frost_nights(&lows, threshold(Some(s)))
                .iter()
                .map(|l| l.night)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            nights("sensitive"),
            [date!(2026 - 12 - 07), date!(2026 - 12 - 08)]
        );
        assert_eq!(nights("moderate"), [date!(2026 - 12 - 07)]);
        assert!(nights("hardy").is_empty());
        // At the threshold counts.
        let at = [NightLow {
            night: date!(2026 - 12 - 07),
            low_c: -4.0,
            low_at: now,
        }];
        assert_eq!(frost_nights(&at, threshold(Some("hardy"))).len(), 1);
    }
}
