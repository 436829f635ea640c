//! Runoff analysis (domain 2.13): what the water leaving the pot says about the root zone.
//! EC Δ = runoff − input: above 0.5 mS/cm salts build up (`salt_buildup`), above 0.3 they start
//! to (`warning`), below −0.3 the plant takes more than it gets (`underfed`), else `ok`.
//! pH Δ beyond ±0.5 is `drift` (rising or falling). Runoff should be 10–30 % of the input
//! volume (`low` / `high` otherwise). Overall: `poor` with salt build-up, `fair` with any other
//! finding, else `good`.

use serde::Serialize;

use super::calculations::{
    EC_MAX_MS, FieldProblem, PH_MAX, PH_MIN, check_positive, check_range, round,
};

pub const EC_SALT_BUILDUP: f64 = 0.5;
pub const EC_WARNING: f64 = 0.3;
pub const EC_UNDERFED: f64 = -0.3;
pub const PH_DRIFT: f64 = 0.5;
pub const RUNOFF_MIN_PERCENT: f64 = 10.0;
pub const RUNOFF_MAX_PERCENT: f64 = 30.0;
/// Litres of one watering (a large tub or a bed section).
pub const VOLUME_MAX_L: f64 = 10_000.0;

/// The measurements of one watering with runoff.
#[derive(Debug, Clone, PartialEq)]
pub struct RunoffInput {
    pub input_ec_ms: f64,
    pub runoff_ec_ms: f64,
    pub input_ph: Option<f64>,
    pub runoff_ph: Option<f64>,
    pub input_volume_liters: Option<f64>,
    pub runoff_volume_liters: Option<f64>,
}

impl RunoffInput {
    pub fn new(i: RunoffInput) -> Result<Self, Vec<FieldProblem>> {
        let mut p = Vec::new();
        check_range(&mut p, "input_ec_ms", i.input_ec_ms, 0.0, EC_MAX_MS);
        check_range(&mut p, "runoff_ec_ms", i.runoff_ec_ms, 0.0, EC_MAX_MS);
        for (name, v) in [("input_ph", i.input_ph), ("runoff_ph", i.runoff_ph)] {
            if let Some(v) = v {
                check_range(&mut p, name, v, PH_MIN, PH_MAX);
            }
        }
        if i.input_ph.is_some() != i.runoff_ph.is_some() {
            p.push(FieldProblem::new(
                if i.input_ph.is_none() {
                    "input_ph"
                } else {
                    "runoff_ph"
                },
                "give both pH values or neither",
            ));
        }
        if let Some(v) = i.input_volume_liters {
            check_positive(&mut p, "input_volume_liters", v, VOLUME_MAX_L);
        }
        if let Some(v) = i.runoff_volume_liters {
            check_range(&mut p, "runoff_volume_liters", v, 0.0, VOLUME_MAX_L);
        }
        if i.input_volume_liters.is_some() != i.runoff_volume_liters.is_some() {
            p.push(FieldProblem::new(
                if i.input_volume_liters.is_none() {
                    "input_volume_liters"
                } else {
                    "runoff_volume_liters"
                },
                "give both volumes or neither",
            ));
        }
        if let (Some(a), Some(b)) = (i.input_volume_liters, i.runoff_volume_liters)
            && b > a
        {
            p.push(FieldProblem::new(
                "runoff_volume_liters",
                "must not exceed input_volume_liters",
            ));
        }
        if p.is_empty() { Ok(i) } else { Err(p) }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, salvo::oapi::ToSchema)]
pub struct RunoffAnalysis {
    /// runoff − input, mS/cm, 2 decimals.
    pub ec_delta_ms: f64,
    /// `salt_buildup`, `warning`, `underfed` or `ok`.
    pub ec_status: String,
    /// runoff − input, 2 decimals; null without pH values.
    pub ph_delta: Option<f64>,
    /// `drift` or `ok`; null without pH values.
    pub ph_status: Option<String>,
    /// `rising` or `falling` when drifting.
    pub ph_direction: Option<String>,
    /// runoff ÷ input × 100, 1 decimal; null without volumes.
    pub runoff_percent: Option<f64>,
    /// `low`, `ok` or `high`; null without volumes.
    pub runoff_status: Option<String>,
    /// `good`, `fair` or `poor`.
    pub overall: String,
    pub recommendations: Vec<String>,
}

pub fn analyse(i: &RunoffInput) -> RunoffAnalysis {
    let mut recs = Vec::new();
    let ec_delta = round(i.runoff_ec_ms - i.input_ec_ms, 2);
    let ec_status = if ec_delta > EC_SALT_BUILDUP {
        recs.push(
            "Salts are building up in the substrate: flush with plain pH-adjusted water \
             (about 3× the pot volume) or lower the feed EC."
                .to_owned(),
        );
        "salt_buildup"
    } else if ec_delta > EC_WARNING {
        recs.push(
            "Runoff EC is creeping up: water to 20-30 % runoff or lower the feed EC slightly."
                .to_owned(),
        );
        "warning"
    } else if ec_delta < EC_UNDERFED {
        recs.push(
            "Runoff EC is below the feed: the plant takes more than it gets; raise the feed EC \
             gradually."
                .to_owned(),
        );
        "underfed"
    } else {
        "ok"
    };
    let ph_delta = match (i.input_ph, i.runoff_ph) {
        (Some(a), Some(b)) => Some(round(b - a, 2)),
        _ => None,
    };
    let drifting = ph_delta.is_some_and(|d| d.abs() > PH_DRIFT);
    let ph_direction = ph_delta
        .filter(|_| drifting)
        .map(|d| if d > 0.0 { "rising" } else { "falling" }.to_owned());
    if let Some(dir) = &ph_direction {
        recs.push(format!(
            "Root-zone pH is {dir} beyond ±{PH_DRIFT}: correct the feed pH {} and check the \
             substrate's buffer.",
            if dir == "rising" { "down" } else { "up" }
        ));
    }
    let runoff_percent = match (i.input_volume_liters, i.runoff_volume_liters) {
        (Some(a), Some(b)) if a > 0.0 => Some(round(b / a * 100.0, 1)),
        _ => None,
    };
    let runoff_status = runoff_percent.map(|p| {
        if p < RUNOFF_MIN_PERCENT {
            recs.push(format!(
                "Runoff is {p} %, below {RUNOFF_MIN_PERCENT} %: salts are not washed out; \
                 water more per feeding."
            ));
            "low"
        } else if p > RUNOFF_MAX_PERCENT {
            recs.push(format!(
                "Runoff is {p} %, above {RUNOFF_MAX_PERCENT} %: feed is wasted; water less per \
                 feeding."
            ));
            "high"
        } else {
            "ok"
        }
    });
    let other_finding = ec_status != "ok" || drifting || runoff_status.is_some_and(|s| s != "ok");
    let overall = if ec_status == "salt_buildup" {
        "poor"
    } else if other_finding {
        "fair"
    } else {
        "good"
    };
    RunoffAnalysis {
        ec_delta_ms: ec_delta,
        ec_status: ec_status.to_owned(),
        ph_delta,
        ph_status: ph_delta.map(|_| if drifting { "drift" } else { "ok" }.to_owned()),
        ph_direction,
        runoff_percent,
        runoff_status: runoff_status.map(str::to_owned),
        overall: overall.to_owned(),
        recommendations: recs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(
        ec_in: f64,
        ec_out: f64,
        ph: Option<(f64, f64)>,
        vol: Option<(f64, f64)>,
    ) -> RunoffInput {
        RunoffInput::new(RunoffInput {
            input_ec_ms: ec_in,
            runoff_ec_ms: ec_out,
            input_ph: ph.map(|p| p.0),
            runoff_ph: ph.map(|p| p.1),
            input_volume_liters: vol.map(|v| v.0),
            runoff_volume_liters: vol.map(|v| v.1),
        })
        .expect("valid")
    }

    /// Cases worked by hand (EC in → out, pH in → out, litres in → out):
    /// - 1.8 → 2.5: Δ 0.7 > 0.5 salt_buildup; pH 6.0 → 6.2, Δ 0.2 ok; 2 L → 0.4 L = 20 % ok;
    ///   overall poor.
    /// - 1.8 → 2.2: Δ 0.4 (> 0.3, ≤ 0.5) warning; overall fair.
    /// - 1.8 → 1.4: Δ −0.4 < −0.3 underfed; fair.
    /// - 1.8 → 2.0: Δ 0.2 ok; pH 6.0 → 6.7, Δ 0.7 drift rising; fair.
    /// - 1.8 → 1.9: Δ 0.1 ok; pH 6.2 → 5.5, Δ −0.7 drift falling; 2 L → 0.1 L = 5 % low; fair.
    /// - 1.8 → 1.9: ok; pH 6.0 → 6.3 ok; 1 L → 0.5 L = 50 % high; fair.
    /// - 1.8 → 2.1: Δ 0.3 exactly is not above 0.3: ok; pH Δ 0.5 exactly is not beyond: ok;
    ///   1 L → 0.1 L = 10 % ok (bounds are inclusive); good.
    #[test]
    fn runoff_table() {
        type Row = (
            f64,
            f64,
            Option<(f64, f64)>,
            Option<(f64, f64)>,
            &'static str,
            Option<&'static str>,
            Option<&'static str>,
            &'static str,
        );
        let rows: [Row; 7] = [
            (
                1.8,
                2.5,
                Some((6.0, 6.2)),
                Some((2.0, 0.4)),
                "salt_buildup",
                Some("ok"),
                Some("ok"),
                "poor",
            ),
            (1.8, 2.2, None, None, "warning", None, None, "fair"),
            (1.8, 1.4, None, None, "underfed", None, None, "fair"),
            (
                1.8,
                2.0,
                Some((6.0, 6.7)),
                None,
                "ok",
                Some("drift"),
                None,
                "fair",
            ),
            (
                1.8,
                1.9,
                Some((6.2, 5.5)),
                Some((2.0, 0.1)),
                "ok",
                Some("drift"),
                Some("low"),
                "fair",
            ),
            (
                1.8,
                1.9,
                Some((6.0, 6.3)),
                Some((1.0, 0.5)),
                "ok",
                Some("ok"),
                Some("high"),
                "fair",
            ),
            (
                1.8,
                2.1,
                Some((6.0, 6.5)),
                Some((1.0, 0.1)),
                "ok",
                Some("ok"),
                Some("ok"),
                "good",
            ),
        ];
        for (ec_in, ec_out, ph, vol, ec_status, ph_status, runoff_status, overall) in rows {
            let a = analyse(&input(ec_in, ec_out, ph, vol));
            assert_eq!(a.ec_status, ec_status, "{ec_in} → {ec_out}");
            assert_eq!(a.ph_status.as_deref(), ph_status, "{ph:?}");
            assert_eq!(a.runoff_status.as_deref(), runoff_status, "{vol:?}");
            assert_eq!(a.overall, overall, "{ec_in} → {ec_out} {ph:?} {vol:?}");
            assert_eq!(a.recommendations.is_empty(), overall == "good");
        }
        let a = analyse(&input(1.8, 1.9, Some((6.2, 5.5)), Some((2.0, 0.1))));
        assert_eq!(a.ph_delta, Some(-0.7));
        assert_eq!(a.ph_direction.as_deref(), Some("falling"));
        assert_eq!(a.runoff_percent, Some(5.0));
        assert_eq!(a.ec_delta_ms, 0.1);
    }

    #[test]
    fn runoff_refuses_impossible_input() {
        let e = RunoffInput::new(RunoffInput {
            input_ec_ms: 11.0,
            runoff_ec_ms: -0.1,
            input_ph: Some(15.0),
            runoff_ph: None,
            input_volume_liters: Some(1.0),
            runoff_volume_liters: Some(2.0),
        })
        .expect_err("invalid");
        let fields: Vec<_> = e.iter().map(|p| p.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "input_ec_ms",
                "runoff_ec_ms",
                "input_ph",
                "runoff_ph",
                "runoff_volume_liters"
            ]
        );
    }
}
