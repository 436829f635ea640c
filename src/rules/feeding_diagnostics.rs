//! What a plant's feedings say (its diagnostics): the trend of a measured series (EC or pH of
//! the input water, the fed solution, the runoff) and the plan's targets against what was
//! measured. Pure functions; the diagnostics service feeds them the rows of one snapshot.
//!
//! - A series' direction compares its latest value with its first: a change within
//!   ±[`TREND_BAND`] is `stable`, above `rising`, below `falling`; fewer than two samples
//!   `unknown`.
//! - EC against the plan: on target within a tolerance of max(0.1, 10 % of the target) (the
//!   mixing protocol's tolerance, domain 2.14), else `below` / `above`. pH against the plan's
//!   range: `below`, `in_range`, `above` (bounds inclusive). No plan: `no_plan`; a plan but no
//!   measurement (or no target for that value): `no_measurement` / `no_target`. A plant in a
//!   rest phase is not fed (the mixing protocol's rule): its EC target is 0, its EC status
//!   `rest_phase`, with a warning naming the rule and its source.

use serde::Serialize;

use super::calculations::round;

/// The nutrient-plan targets that apply to a plant today: the plan assigned to the plant, else
/// its run's, and within it the phase entry for the plant's current phase and week. Defined
/// here, where it is judged; the garden offers it as `garden::contracts::PhaseTargets`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PhaseTargets {
    pub plan_key: String,
    pub plan_name: String,
    /// `plant` (assigned to the plant) or `run` (inherited from its planting run).
    pub source: &'static str,
    pub phase_key: String,
    pub target_ec_ms: Option<f64>,
    pub reference_ec_ms: Option<f64>,
    pub ph_min: Option<f64>,
    pub ph_max: Option<f64>,
    /// The plant is in a rest phase, which is not fed (`rules::mixing_protocol::is_rest_phase`):
    /// the target EC is 0 whatever the entry says.
    pub rest_phase: bool,
}

/// The band within which a series counts as stable (mS/cm for EC, pH units for pH).
pub const TREND_BAND: f64 = 0.1;
/// Samples a series returns at most (the newest).
pub const SERIES_MAX_SAMPLES: usize = 50;

#[derive(Debug, Clone, PartialEq, Serialize, salvo::oapi::ToSchema)]
pub struct Sample {
    /// When it was measured (the event's time), RFC 3339.
    pub at: String,
    pub value: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, salvo::oapi::ToSchema)]
pub struct Series {
    pub sample_count: usize,
    pub first: Option<f64>,
    pub latest: Option<f64>,
    /// latest − first, 2 decimals.
    pub delta: Option<f64>,
    /// `rising`, `falling`, `stable` (within ±0.1) or `unknown` (fewer than two samples).
    pub direction: String,
    /// Oldest first, at most the newest 50.
    pub samples: Vec<Sample>,
}

/// A series from samples oldest first.
pub fn series(samples: Vec<Sample>) -> Series {
    let first = samples.first().map(|s| s.value);
    let latest = samples.last().map(|s| s.value);
    let delta = match (first, latest) {
        (Some(a), Some(b)) if samples.len() >= 2 => Some(round(b - a, 2)),
        _ => None,
    };
    let direction = match delta {
        None => "unknown",
        Some(d) if d > TREND_BAND => "rising",
        Some(d) if d < -TREND_BAND => "falling",
        Some(_) => "stable",
    };
    let count = samples.len();
    let skip = count.saturating_sub(SERIES_MAX_SAMPLES);
    Series {
        sample_count: count,
        first,
        latest,
        delta,
        direction: direction.to_owned(),
        samples: samples.into_iter().skip(skip).collect(),
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, salvo::oapi::ToSchema)]
pub struct EcComparison {
    pub target_ec_ms: Option<f64>,
    pub measured_ec_ms: Option<f64>,
    /// measured − target, 2 decimals.
    pub delta_ms: Option<f64>,
    /// max(0.1, 10 % of the target), 2 decimals.
    pub tolerance_ms: Option<f64>,
    /// `below`, `on_target`, `above`, `no_target`, `no_measurement`, `no_plan` or
    /// `rest_phase` (the plant is at rest and not fed).
    pub status: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, salvo::oapi::ToSchema)]
pub struct PhComparison {
    pub ph_min: Option<f64>,
    pub ph_max: Option<f64>,
    pub measured_ph: Option<f64>,
    /// `below`, `in_range`, `above`, `no_target`, `no_measurement` or `no_plan`.
    pub status: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, salvo::oapi::ToSchema)]
pub struct TargetComparison {
    pub ec: EcComparison,
    pub ph: PhComparison,
}

impl TargetComparison {
    /// Warnings of a comparison that found the measurement off the plan.
    pub fn warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        if self.ec.status == "rest_phase" {
            w.push(format!(
                "The plant is in a rest phase: {}",
                super::mixing_protocol::rest_phase_reason()
            ));
        }
        if let (Some(t), Some(m)) = (self.ec.target_ec_ms, self.ec.measured_ec_ms)
            && matches!(self.ec.status.as_str(), "below" | "above")
        {
            w.push(format!(
                "Fed EC {m} mS/cm is {} the plan's target {t} mS/cm.",
                self.ec.status
            ));
        }
        if let Some(m) = self.ph.measured_ph
            && matches!(self.ph.status.as_str(), "below" | "above")
        {
            w.push(format!(
                "Fed pH {m} is {} the plan's range {}–{}.",
                self.ph.status,
                self.ph.ph_min.map_or("?".into(), |v| v.to_string()),
                self.ph.ph_max.map_or("?".into(), |v| v.to_string())
            ));
        }
        w
    }
}

/// The plan's targets against the latest measured EC and pH of what was fed.
pub fn compare_targets(
    targets: Option<&PhaseTargets>,
    measured_ec_ms: Option<f64>,
    measured_ph: Option<f64>,
) -> TargetComparison {
    let Some(t) = targets else {
        return TargetComparison {
            ec: EcComparison {
                target_ec_ms: None,
                measured_ec_ms,
                delta_ms: None,
                tolerance_ms: None,
                status: "no_plan".into(),
            },
            ph: PhComparison {
                ph_min: None,
                ph_max: None,
                measured_ph,
                status: "no_plan".into(),
            },
        };
    };
    let ec = match (t.target_ec_ms, measured_ec_ms) {
        _ if t.rest_phase => EcComparison {
            target_ec_ms: Some(0.0),
            measured_ec_ms,
            delta_ms: measured_ec_ms.map(|m| round(m, 2)),
            tolerance_ms: None,
            status: "rest_phase".into(),
        },
        (None, _) => EcComparison {
            target_ec_ms: None,
            measured_ec_ms,
            delta_ms: None,
            tolerance_ms: None,
            status: "no_target".into(),
        },
        (Some(target), None) => EcComparison {
            target_ec_ms: Some(target),
            measured_ec_ms: None,
            delta_ms: None,
            tolerance_ms: Some(round(tolerance(target), 2)),
            status: "no_measurement".into(),
        },
        (Some(target), Some(m)) => {
            let tol = tolerance(target);
            let delta = m - target;
            // Compared on the rounded delta so that 2.2 against 2.0 (tolerance 0.2, a float
            // delta of 0.20000000000000018) is on target as a reader would expect.
            let d = round(delta, 6);
            let status = if d > tol {
                "above"
            } else if d < -tol {
                "below"
            } else {
                "on_target"
            };
            EcComparison {
                target_ec_ms: Some(target),
                measured_ec_ms: Some(m),
                delta_ms: Some(round(delta, 2)),
                tolerance_ms: Some(round(tol, 2)),
                status: status.into(),
            }
        }
    };
    let ph_status = match (t.ph_min, t.ph_max, measured_ph) {
        (None, None, _) => "no_target",
        (_, _, None) => "no_measurement",
        (min, max, Some(m)) => {
            if min.is_some_and(|lo| m < lo) {
                "below"
            } else if max.is_some_and(|hi| m > hi) {
                "above"
            } else {
                "in_range"
            }
        }
    };
    TargetComparison {
        ec,
        ph: PhComparison {
            ph_min: t.ph_min,
            ph_max: t.ph_max,
            measured_ph,
            status: ph_status.into(),
        },
    }
}

/// The EC tolerance of a target: max(0.1, 10 % of it) (the mixing protocol's, domain 2.14).
pub fn tolerance(target: f64) -> f64 {
    (target * 0.1).max(0.1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(values: &[f64]) -> Vec<Sample> {
        values
            .iter()
            .enumerate()
            .map(|(i, v)| Sample {
                at: format!("2026-03-0{}T08:00:00Z", i + 1),
                value: *v,
            })
            .collect()
    }

    /// Directions worked by hand: [] unknown; [1.8] unknown (one sample); 1.8 → 2.0 Δ 0.2
    /// rising; 1.8 → 1.9 Δ 0.1 stable (band inclusive); 6.2 → 5.8 Δ −0.4 falling; 2.4, 1.0, 2.45
    /// Δ 0.05 stable (only first and latest count).
    #[test]
    fn series_directions() {
        let rows: [(&[f64], &str, Option<f64>); 6] = [
            (&[], "unknown", None),
            (&[1.8], "unknown", None),
            (&[1.8, 2.0], "rising", Some(0.2)),
            (&[1.8, 1.9], "stable", Some(0.1)),
            (&[6.2, 5.8], "falling", Some(-0.4)),
            (&[2.4, 1.0, 2.45], "stable", Some(0.05)),
        ];
        for (values, dir, delta) in rows {
            let out = series(s(values));
            assert_eq!(out.direction, dir, "{values:?}");
            assert_eq!(out.delta, delta, "{values:?}");
            assert_eq!(out.sample_count, values.len());
        }
        // 60 samples: all counted, the newest 50 returned, first is still the oldest.
        let many: Vec<Sample> = (0..60)
            .map(|i| Sample {
                at: format!("t{i}"),
                value: f64::from(i) / 10.0,
            })
            .collect();
        let out = series(many);
        assert_eq!(out.sample_count, 60);
        assert_eq!(out.samples.len(), 50);
        assert_eq!(out.samples[0].value, 1.0);
        assert_eq!(out.first, Some(0.0));
        assert_eq!(out.latest, Some(5.9));
    }

    fn targets(ec: Option<f64>, ph: (Option<f64>, Option<f64>)) -> PhaseTargets {
        PhaseTargets {
            plan_key: "p".into(),
            plan_name: "Tomato".into(),
            source: "run",
            phase_key: "flowering".into(),
            target_ec_ms: ec,
            reference_ec_ms: None,
            ph_min: ph.0,
            ph_max: ph.1,
            rest_phase: false,
        }
    }

    /// A plant at rest: the EC status is `rest_phase` (target 0) whatever the entry says or
    /// was measured, with one warning naming the rule's source; pH is still compared.
    #[test]
    fn a_plant_at_rest_is_not_fed() {
        for measured in [None, Some(0.3), Some(1.2)] {
            let mut t = targets(Some(0.4), (Some(5.5), Some(6.5)));
            t.rest_phase = true;
            let c = compare_targets(Some(&t), measured, Some(6.0));
            assert_eq!(c.ec.status, "rest_phase", "{measured:?}");
            assert_eq!(c.ec.target_ec_ms, Some(0.0));
            assert_eq!(c.ph.status, "in_range");
            let w = c.warnings();
            assert_eq!(w.len(), 1, "{w:?}");
            assert!(
                w[0].contains("not fed") && w[0].contains("Iowa State"),
                "{w:?}"
            );
        }
    }

    /// Hand-worked comparisons (target EC, measured EC → tolerance, delta, status):
    /// - 2.0 vs 2.2: tolerance max(0.1, 0.2) = 0.2, Δ 0.2 on_target (bound inclusive).
    /// - 2.0 vs 2.3: Δ 0.3 > 0.2 above.
    /// - 2.0 vs 1.7: Δ −0.3 below.
    /// - 0.8 vs 0.9: tolerance max(0.1, 0.08) = 0.1, Δ 0.1 on_target.
    /// - 0.8 vs 0.95: Δ 0.15 above.
    /// - pH range 5.8–6.2: 6.0 in_range, 5.5 below, 6.5 above, 6.2 in_range (inclusive).
    /// - no plan: both no_plan; plan without EC target: no_target; no measurement:
    ///   no_measurement.
    #[test]
    fn targets_against_measured() {
        type Row = (
            Option<f64>,
            Option<f64>,
            Option<f64>,
            &'static str,
            Option<f64>,
        );
        let ec_rows: [Row; 7] = [
            (Some(2.0), Some(2.2), Some(0.2), "on_target", Some(0.2)),
            (Some(2.0), Some(2.3), Some(0.2), "above", Some(0.3)),
            (Some(2.0), Some(1.7), Some(0.2), "below", Some(-0.3)),
            (Some(0.8), Some(0.9), Some(0.1), "on_target", Some(0.1)),
            (Some(0.8), Some(0.95), Some(0.1), "above", Some(0.15)),
            (None, Some(1.0), None, "no_target", None),
            (Some(1.5), None, Some(0.15), "no_measurement", None),
        ];
        for (target, measured, tol, status, delta) in ec_rows {
            let t = targets(target, (None, None));
            let c = compare_targets(Some(&t), measured, None);
            assert_eq!(c.ec.status, status, "{target:?} vs {measured:?}");
            assert_eq!(c.ec.tolerance_ms, tol, "{target:?}");
            assert_eq!(c.ec.delta_ms, delta, "{target:?} vs {measured:?}");
            assert_eq!(c.ph.status, "no_target");
        }
        let t = targets(Some(2.0), (Some(5.8), Some(6.2)));
        for (ph, status) in [
            (Some(6.0), "in_range"),
            (Some(5.5), "below"),
            (Some(6.5), "above"),
            (Some(6.2), "in_range"),
            (None, "no_measurement"),
        ] {
            assert_eq!(compare_targets(Some(&t), None, ph).ph.status, status);
        }
        let none = compare_targets(None, Some(2.0), Some(6.0));
        assert_eq!(none.ec.status, "no_plan");
        assert_eq!(none.ph.status, "no_plan");
        assert_eq!(none.ec.measured_ec_ms, Some(2.0));
        assert!(none.warnings().is_empty());
        // Off the plan on both: two warnings naming the numbers.
        let off = compare_targets(Some(&t), Some(2.6), Some(5.2));
        let w = off.warnings();
        assert_eq!(w.len(), 2);
        assert!(w[0].contains("2.6") && w[0].contains("above"), "{w:?}");
        assert!(w[1].contains("5.2") && w[1].contains("below"), "{w:?}");
    }
}
