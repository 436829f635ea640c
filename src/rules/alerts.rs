//! Environment alerts: the range a plant's current phase asks of a metric, and when readings
//! open or resolve an alert. Pure rules; the scan (`garden::alerts::scan`) feeds them one
//! garden's sensors, readings, plants and plan targets.
//!
//! Ranges, each with the source the existing data gives it:
//! - EC (`ec_ms_cm`): the nutrient plan's target for the plant's phase entry, ± the mixing
//!   protocol's tolerance max(0.1, 10 %) (`feeding_diagnostics::tolerance`). A plant at rest is
//!   not fed: no EC range.
//! - pH (`ph`): the plan entry's `ph_min`..`ph_max` (one bound may be open).
//! - VPD (`vpd_kpa`, air VPD from a temperature and a humidity sensor at the same place, leaf
//!   temperature taken as the air's): the crop's sourced target where one exists, else the
//!   generic chart of the coarse phase (`calculations::VPD_PHASES`), with its note.
//! - Temperature, humidity and nutrient-water temperature on their own: the phase's range of
//!   `rules::climate` (published guides, the crop's own figures where it has them).
//!
//! Timing: `out_of_range` opens when a sensor's readings stay outside the range continuously
//! for `after` minutes (measured between readings, so a single spike never opens one) and
//! resolves when its latest reading is back inside. `sensor_silent` opens when the latest
//! reading is older than 3 × `expected_interval_minutes` (or the sensor never reported within
//! that time since it was registered) and resolves with the next reading.

use time::{Duration, OffsetDateTime};

use super::calculations::{GENERIC_VPD_NOTE, VPD_PHASE_NAMES, VPD_PHASES, crop_vpd, svp_kpa};
use super::feeding_diagnostics::{PhaseTargets, tolerance};

/// Default minutes a reading must stay out of range before an alert opens.
pub const ALERT_AFTER_MINUTES_DEFAULT: u32 = 15;
/// A sensor is silent after this many expected intervals without a reading.
pub const SILENT_INTERVALS: i64 = 3;
/// A temperature and a humidity reading further apart than this make no VPD.
pub const VPD_PAIR_SECONDS: i64 = 300;
/// The derived metric of a VPD alert.
pub const VPD_METRIC: &str = "vpd_kpa";

/// A range a metric must stay in (a bound `None`: open) and where it comes from.
#[derive(Debug, Clone, PartialEq)]
pub struct Range {
    pub metric: &'static str,
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub source: String,
}

impl Range {
    /// Whether `value` lies inside (bounds included).
    pub fn holds(&self, value: f64) -> bool {
        self.min.is_none_or(|m| value >= m - 1e-9) && self.max.is_none_or(|m| value <= m + 1e-9)
    }
}

fn plan_words(t: &PhaseTargets) -> String {
    let whose = if t.source == "run" {
        "its planting run's"
    } else {
        "the plant's"
    };
    format!(
        "nutrient plan \"{}\" ({}; {whose}), phase entry {}",
        t.plan_name, t.plan_key, t.phase_key
    )
}

fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

/// The EC range of the plan entry that applies to the plant now; none without a target or
/// at rest (not fed).
pub fn ec_range(t: &PhaseTargets) -> Option<Range> {
    if t.rest_phase {
        return None;
    }
    let target = t.target_ec_ms?;
    let tol = tolerance(target);
    Some(Range {
        metric: "ec_ms_cm",
        min: Some(round2((target - tol).max(0.0))),
        max: Some(round2(target + tol)),
        source: format!(
            "{}: target EC {target} mS/cm ± {} (tolerance max(0.1, 10 % of the target), the \
             mixing protocol's, domain 2.14)",
            plan_words(t),
            round2(tol)
        ),
    })
}

/// The pH range of the plan entry; none when it names neither bound.
pub fn ph_range(t: &PhaseTargets) -> Option<Range> {
    if t.ph_min.is_none() && t.ph_max.is_none() {
        return None;
    }
    let show = |v: Option<f64>| v.map_or("open".to_owned(), |v| v.to_string());
    Some(Range {
        metric: "ph",
        min: t.ph_min,
        max: t.ph_max,
        source: format!(
            "{}: pH {} to {}",
            plan_words(t),
            show(t.ph_min),
            show(t.ph_max)
        ),
    })
}

/// The coarse plan phase as a phase of the VPD chart (germination counts as seedling; one
/// the chart does not name is `other`).
pub fn vpd_phase(coarse: &str) -> &'static str {
    match coarse {
        "germination" => "seedling",
        p => VPD_PHASE_NAMES
            .iter()
            .find(|n| **n == p)
            .copied()
            .unwrap_or("other"),
    }
}

/// The VPD range of a phase (coarse plan phase), the crop's sourced target where it has one.
pub fn vpd_range(coarse_phase: &str, crop: Option<&str>) -> Range {
    let phase = vpd_phase(coarse_phase);
    if let Some(c) = crop.and_then(|c| crop_vpd(c, phase)) {
        return Range {
            metric: VPD_METRIC,
            min: Some(c.min_kpa),
            max: Some(c.max_kpa),
            source: format!("air VPD target of {} in {phase}: {}", c.crop, c.source),
        };
    }
    let (_, lo, hi) = VPD_PHASES
        .iter()
        .find(|(n, _, _)| *n == phase)
        .copied()
        .unwrap_or(("other", 0.8, 1.2));
    Range {
        metric: VPD_METRIC,
        min: Some(lo),
        max: Some(hi),
        source: format!(
            "phase {phase} ({lo}-{hi} kPa) of the {GENERIC_VPD_NOTE}; judged on the air VPD \
             (leaf temperature taken as the air's)"
        ),
    }
}

/// Air VPD, kPa (4 decimals) = SVP(T)·(1 − RH/100), the VPD rule's formula.
pub fn air_vpd(temp_c: f64, humidity_percent: f64) -> f64 {
    let v = svp_kpa(temp_c) * (1.0 - humidity_percent / 100.0);
    (v * 10_000.0).round() / 10_000.0
}

/// One reading.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub at: OffsetDateTime,
    pub value: f64,
}

/// VPD points from temperature and humidity readings (both oldest first): each temperature
/// reading paired with the nearest humidity reading within [`VPD_PAIR_SECONDS`].
pub fn vpd_series(temps: &[Point], humidities: &[Point]) -> Vec<Point> {
    temps
        .iter()
        .filter_map(|t| {
            humidities
                .iter()
                .map(|h| (h, (h.at - t.at).whole_seconds().abs()))
                .filter(|(_, d)| *d <= VPD_PAIR_SECONDS)
                .min_by_key(|(_, d)| *d)
                .map(|(h, _)| Point {
                    at: t.at,
                    value: air_vpd(t.value, h.value),
                })
        })
        .collect()
}

/// What the readings say about a range.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Out of range for long enough: open (or keep) an alert; the latest reading.
    Open(Point),
    /// The latest reading is inside: resolve an open alert.
    Fine,
    /// Out, but not for long enough yet, or nothing to judge: leave things as they are.
    Wait,
}

/// Judges readings (oldest first) against a range: the latest reading out, and the run of
/// consecutive out-of-range readings it ends spanning at least `after` minutes.
pub fn judge(points: &[Point], range: &Range, after: Duration) -> Verdict {
    let Some(last) = points.last() else {
        return Verdict::Wait;
    };
    if range.holds(last.value) {
        return Verdict::Fine;
    }
    let start = points
        .iter()
        .rev()
        .take_while(|p| !range.holds(p.value))
        .last()
        .map_or(last.at, |p| p.at);
    if last.at - start >= after {
        Verdict::Open(*last)
    } else {
        Verdict::Wait
    }
}

/// How far back before its latest reading a sensor's readings are read to judge it: the delay
/// plus one reporting interval (so the reading before the run is seen), at least twice the
/// delay.
pub fn window(after: Duration, interval_minutes: Option<i64>) -> Duration {
    let gap = Duration::minutes(interval_minutes.unwrap_or(0).max(1));
    (after + gap).max(after * 2)
}

/// Whether a sensor is silent at `now`: it has an expected interval and no reading for
/// [`SILENT_INTERVALS`] of them (counted from its registration when it never reported).
pub fn is_silent(
    now: OffsetDateTime,
    interval_minutes: Option<i64>,
    latest: Option<OffsetDateTime>,
    registered: OffsetDateTime,
) -> bool {
    let Some(every) = interval_minutes.filter(|m| *m > 0) else {
        return false;
    };
    let since = latest.unwrap_or(registered);
    now - since > Duration::minutes(every * SILENT_INTERVALS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn targets(ec: Option<f64>, ph: (Option<f64>, Option<f64>), rest: bool) -> PhaseTargets {
        PhaseTargets {
            plan_key: "tenant:p".into(),
            plan_name: "Tomato".into(),
            source: "plant",
            phase_key: "e1".into(),
            target_ec_ms: ec,
            reference_ec_ms: None,
            ph_min: ph.0,
            ph_max: ph.1,
            rest_phase: rest,
        }
    }

    fn at(min: i64) -> OffsetDateTime {
        OffsetDateTime::UNIX_EPOCH + Duration::days(20_000) + Duration::minutes(min)
    }

    fn pts(values: &[(i64, f64)]) -> Vec<Point> {
        values
            .iter()
            .map(|(m, v)| Point {
                at: at(*m),
                value: *v,
            })
            .collect()
    }

    /// EC 2.0: tolerance max(0.1, 0.2) = 0.2 → 1.8..2.2; EC 0.8: tolerance 0.1 → 0.7..0.9.
    #[test]
    fn ec_ranges_from_the_plan_with_the_tolerance() {
        let r = ec_range(&targets(Some(2.0), (None, None), false)).expect("range");
        assert_eq!((r.min, r.max), (Some(1.8), Some(2.2)));
        assert!(r.source.contains("Tomato") && r.source.contains("2.14"));
        let r = ec_range(&targets(Some(0.8), (None, None), false)).expect("range");
        assert_eq!((r.min, r.max), (Some(0.7), Some(0.9)));
        assert!(ec_range(&targets(None, (None, None), false)).is_none());
        assert!(ec_range(&targets(Some(2.0), (None, None), true)).is_none());
    }

    #[test]
    fn ph_ranges_may_have_one_bound() {
        let r = ph_range(&targets(None, (Some(5.8), Some(6.3)), false)).expect("range");
        assert!(r.holds(5.8) && r.holds(6.3) && !r.holds(6.31) && !r.holds(5.7));
        let r = ph_range(&targets(None, (None, Some(6.5)), false)).expect("range");
        assert!(r.holds(3.0) && !r.holds(6.6));
        assert!(r.source.contains("open to 6.5"));
        assert!(ph_range(&targets(None, (None, None), false)).is_none());
    }

    #[test]
    fn vpd_ranges_by_phase_and_crop() {
        let r = vpd_range("vegetative", None);
        assert_eq!((r.min, r.max), (Some(0.8), Some(1.2)));
        assert!(r.source.contains("generic"));
        assert_eq!(vpd_range("germination", None).max, Some(0.8));
        assert_eq!(vpd_range("harvest", None).min, Some(0.8)); // other
        let t = vpd_range("flowering", Some("tomato"));
        assert_eq!((t.min, t.max), (Some(0.5), Some(1.0)));
        assert!(t.source.contains("Iraqi"));
    }

    /// 25 °C: SVP 3.1677 kPa; at 60 % the air VPD is 3.1677 × 0.4 = 1.2671.
    #[test]
    fn vpd_pairs_readings_within_five_minutes() {
        assert_eq!(air_vpd(25.0, 60.0), 1.2671);
        let temps = pts(&[(0, 25.0), (10, 25.0), (30, 25.0)]);
        let hums = pts(&[(2, 60.0), (9, 100.0)]);
        let v = vpd_series(&temps, &hums);
        assert_eq!(v.len(), 2, "the reading at 30 has no humidity near it");
        assert_eq!(v[0].value, 1.2671);
        assert_eq!(v[1].value, 0.0, "the nearer humidity (at 9) pairs with 10");
    }

    fn range() -> Range {
        Range {
            metric: "ec_ms_cm",
            min: Some(1.8),
            max: Some(2.2),
            source: "s".into(),
        }
    }

    #[test]
    fn out_of_range_opens_only_after_the_delay() {
        let after = Duration::minutes(15);
        // Out from minute 0 to 20: opens.
        let p = pts(&[(0, 2.0), (1, 2.9), (11, 2.9), (21, 3.0)]);
        assert_eq!(judge(&p, &range(), after), Verdict::Open(p[3]));
        // Out for exactly 15 minutes: opens (bound inclusive).
        let p = pts(&[(0, 2.9), (15, 2.9)]);
        assert!(matches!(judge(&p, &range(), after), Verdict::Open(_)));
        // Out for 14: waits.
        let p = pts(&[(0, 2.0), (1, 2.9), (15, 2.9)]);
        assert_eq!(judge(&p, &range(), after), Verdict::Wait);
        // A single spike, then back: fine.
        let p = pts(&[(0, 2.0), (5, 9.0), (6, 2.0)]);
        assert_eq!(judge(&p, &range(), after), Verdict::Fine);
        // A single spike at the end: waits (no run long enough).
        let p = pts(&[(0, 2.0), (20, 9.0)]);
        assert_eq!(judge(&p, &range(), after), Verdict::Wait);
        // An in-range reading breaks the run.
        let p = pts(&[(0, 2.9), (10, 2.0), (11, 2.9), (20, 2.9)]);
        assert_eq!(judge(&p, &range(), after), Verdict::Wait);
        assert_eq!(judge(&[], &range(), after), Verdict::Wait);
    }

    #[test]
    fn windows_cover_the_delay_and_one_interval() {
        let after = Duration::minutes(15);
        assert_eq!(window(after, None), Duration::minutes(30));
        assert_eq!(window(after, Some(60)), Duration::minutes(75));
    }

    #[test]
    fn silence_is_three_intervals_without_a_reading() {
        let reg = at(0);
        assert!(!is_silent(at(100), None, None, reg), "no interval: never");
        assert!(
            !is_silent(at(30), Some(10), Some(at(0)), reg),
            "exactly 3 × 10"
        );
        assert!(is_silent(at(31), Some(10), Some(at(0)), reg));
        assert!(is_silent(at(31), Some(10), None, reg), "never reported");
        assert!(!is_silent(at(35), Some(10), Some(at(10)), reg));
    }
}
