//! Substrate reuse (domain 2.4). Whether a batch can go into another growing cycle, checked in
//! order: (1) a disposable type (rockwool plug, peat) never; (2) a substrate not marked reusable
//! never; (3) not once `cycles_used` (completed cycles) has reached `max_reuse_cycles`; then
//! (4) pH stability: the sample standard deviation of ≥2 pH readings above the type's threshold
//! is an issue; (5) EC drift: |EC now − EC base| above 1.5 mS is an issue. Any issue means no
//! reuse. A reusable batch gets the type's preparation steps; their hours give the ready date.

use salvo::oapi::ToSchema;
use serde::Serialize;
use time::{Date, Duration, OffsetDateTime};

// Calendar dates as `YYYY-MM-DD` in JSON.
use crate::values::dates::iso_date;

pub const DISPOSABLE: &[&str] = &["rockwool_plug", "peat"];
/// EC drift above this (mS/cm) from the substrate's base EC blocks reuse.
pub const EC_DRIFT_MAX: f64 = 1.5;

/// The pH standard-deviation threshold of a type.
pub fn ph_threshold(substrate_type: &str) -> f64 {
    match substrate_type {
        "coco" | "rockwool_slab" => 0.3,
        "living_soil" => 0.7,
        "clay_pebbles" | "perlite" | "pon_mineral" => 0.4,
        _ => 0.5,
    }
}

/// What the rule needs of the substrate.
#[derive(Debug, Clone, Copy)]
pub struct SubstrateFacts<'a> {
    pub substrate_type: &'a str,
    pub reusable: bool,
    pub max_reuse_cycles: i32,
    pub ec_base_ms: f64,
}

/// What the rule needs of the batch.
#[derive(Debug, Clone, Copy)]
pub struct BatchFacts<'a> {
    pub cycles_used: i32,
    /// pH readings, oldest first.
    pub ph_history: &'a [f64],
    pub ec_current_ms: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct PreparationStep {
    pub step: String,
    pub hours: u32,
}

/// The answer of a reusability check.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Reusability {
    pub can_reuse: bool,
    pub issues: Vec<String>,
    pub preparation_steps: Vec<PreparationStep>,
    pub preparation_hours: u32,
    /// When the batch is ready for the next cycle (now + preparation hours); null when it
    /// cannot be reused. YYYY-MM-DD.
    #[serde(with = "iso_date::option")]
    #[salvo(schema(value_type = Option<String>, format = Date))]
    pub ready_on: Option<Date>,
}

fn steps(substrate_type: &str) -> &'static [(&'static str, u32)] {
    match substrate_type {
        "coco" => &[
            ("Soak in a CalMag buffering solution", 24),
            ("Flush until the runoff EC is below 0.3 mS/cm", 2),
            ("Drain", 1),
        ],
        "clay_pebbles" | "pon_mineral" => &[
            ("Remove old roots and rinse", 1),
            ("Sterilise in a hydrogen peroxide soak", 4),
            ("Rinse and let dry", 12),
        ],
        "perlite" => &[
            ("Sieve out old roots and rinse", 1),
            ("Sterilise in a hydrogen peroxide soak", 4),
            ("Drain", 1),
        ],
        "living_soil" => &[
            ("Remove old roots, keep the soil life", 1),
            ("Top-dress with compost and mineral amendments", 1),
            ("Keep moist and let the soil life recover", 336),
        ],
        "rockwool_slab" => &[
            ("Flush with pH-adjusted water", 2),
            ("Sterilise", 4),
            ("Drain", 1),
        ],
        _ => &[
            ("Remove old roots and debris", 1),
            ("Amend with fresh material", 1),
            ("Let rest moist", 168),
        ],
    }
}

/// Sample standard deviation (n − 1); `None` below two values.
pub fn sample_std_dev(values: &[f64]) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    Some(var.sqrt())
}

fn refused(issue: String) -> Reusability {
    Reusability {
        can_reuse: false,
        issues: vec![issue],
        preparation_steps: Vec::new(),
        preparation_hours: 0,
        ready_on: None,
    }
}

/// The reusability of a batch at `now`.
pub fn check(sub: SubstrateFacts<'_>, batch: BatchFacts<'_>, now: OffsetDateTime) -> Reusability {
    if DISPOSABLE.contains(&sub.substrate_type) {
        return refused(format!(
            "{} is disposable and cannot be reused",
            sub.substrate_type
        ));
    }
    if !sub.reusable {
        return refused("the substrate is not reusable".to_owned());
    }
    if batch.cycles_used >= sub.max_reuse_cycles {
        return refused(format!(
            "Max reuse cycles exceeded ({}/{})",
            batch.cycles_used, sub.max_reuse_cycles
        ));
    }
    let mut issues = Vec::new();
    let threshold = ph_threshold(sub.substrate_type);
    if let Some(sd) = sample_std_dev(batch.ph_history)
        && sd > threshold
    {
        issues.push(format!(
            "pH unstable: standard deviation {sd:.2} over {} readings exceeds {threshold} for {}",
            batch.ph_history.len(),
            sub.substrate_type
        ));
    }
    if let Some(ec) = batch.ec_current_ms {
        let drift = (ec - sub.ec_base_ms).abs();
        if drift > EC_DRIFT_MAX {
            issues.push(format!(
                "EC drift {drift:.2} mS/cm from the base {} exceeds {EC_DRIFT_MAX}",
                sub.ec_base_ms
            ));
        }
    }
    if !issues.is_empty() {
        return Reusability {
            can_reuse: false,
            issues,
            preparation_steps: Vec::new(),
            preparation_hours: 0,
            ready_on: None,
        };
    }
    let preparation_steps: Vec<PreparationStep> = steps(sub.substrate_type)
        .iter()
        .map(|(step, hours)| PreparationStep {
            step: (*step).to_owned(),
            hours: *hours,
        })
        .collect();
    let preparation_hours = preparation_steps.iter().map(|s| s.hours).sum();
    let ready_on = (now + Duration::hours(i64::from(preparation_hours))).date();
    Reusability {
        can_reuse: true,
        issues,
        preparation_steps,
        preparation_hours,
        ready_on: Some(ready_on),
    }
}

/// Whether plants may be placed in a batch in its current cycle. A fresh batch (no completed
/// cycle) always may; a batch past its first cycle is a reuse, so the hard limits apply
/// (disposable type, not reusable, more completed cycles than the limit allows). pH and EC
/// issues are preparation advice for the next cycle and do not block the running one.
pub fn usable_for_placement(sub: SubstrateFacts<'_>, cycles_used: i32) -> Result<(), String> {
    if cycles_used == 0 {
        return Ok(());
    }
    if DISPOSABLE.contains(&sub.substrate_type) {
        return Err(format!(
            "{} is disposable and was already used for {cycles_used} cycle(s)",
            sub.substrate_type
        ));
    }
    if !sub.reusable {
        return Err(format!(
            "the substrate is not reusable and was already used for {cycles_used} cycle(s)"
        ));
    }
    if cycles_used > sub.max_reuse_cycles {
        return Err(format!(
            "batch exceeded max reuse cycles ({cycles_used}/{})",
            sub.max_reuse_cycles
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    const NOW: OffsetDateTime = datetime!(2026-05-01 10:00 UTC);

    fn sub(t: &str, reusable: bool, max: i32) -> SubstrateFacts<'_> {
        SubstrateFacts {
            substrate_type: t,
            reusable,
            max_reuse_cycles: max,
            ec_base_ms: 0.5,
        }
    }

    fn batch(cycles: i32, ph: &[f64], ec: Option<f64>) -> BatchFacts<'_> {
        BatchFacts {
            cycles_used: cycles,
            ph_history: ph,
            ec_current_ms: ec,
        }
    }

    #[test]
    fn the_rules_in_order() {
        // (substrate, batch, can_reuse, first issue contains)
        let cases: &[(SubstrateFacts<'_>, BatchFacts<'_>, bool, &str)] = &[
            (
                sub("peat", true, 5),
                batch(0, &[], None),
                false,
                "disposable",
            ),
            (
                sub("rockwool_plug", true, 5),
                batch(0, &[], None),
                false,
                "disposable",
            ),
            (
                sub("soil", false, 1),
                batch(0, &[], None),
                false,
                "not reusable",
            ),
            (sub("coco", true, 3), batch(3, &[], None), false, "(3/3)"),
            (sub("coco", true, 3), batch(4, &[], None), false, "(4/3)"),
            (sub("coco", true, 3), batch(2, &[], None), true, ""),
            // coco threshold 0.3: [5.5, 6.0] sd 0.354 → issue; living soil 0.7 tolerates it.
            (
                sub("coco", true, 3),
                batch(0, &[5.5, 6.0], None),
                false,
                "pH unstable",
            ),
            (
                sub("living_soil", true, 5),
                batch(0, &[5.5, 6.0], None),
                true,
                "",
            ),
            // One reading says nothing about stability.
            (sub("coco", true, 3), batch(0, &[4.0], None), true, ""),
            // EC drift: 2.0 − 0.5 = 1.5 is not above the limit; 2.01 is.
            (
                sub("clay_pebbles", true, 10),
                batch(1, &[], Some(2.0)),
                true,
                "",
            ),
            (
                sub("clay_pebbles", true, 10),
                batch(1, &[], Some(2.01)),
                false,
                "EC drift",
            ),
        ];
        for (i, (s, b, can, issue)) in cases.iter().enumerate() {
            let r = check(*s, *b, NOW);
            assert_eq!(r.can_reuse, *can, "case {i}: {r:?}");
            if *can {
                assert!(r.issues.is_empty(), "case {i}");
                assert!(r.preparation_hours > 0, "case {i}");
                assert!(r.ready_on.is_some(), "case {i}");
            } else {
                assert!(r.issues[0].contains(issue), "case {i}: {:?}", r.issues);
                assert!(r.preparation_steps.is_empty() && r.ready_on.is_none());
            }
        }
    }

    #[test]
    fn both_soft_issues_are_reported() {
        let r = check(sub("coco", true, 3), batch(1, &[5.0, 6.5], Some(3.0)), NOW);
        assert_eq!(r.issues.len(), 2);
    }

    #[test]
    fn coco_preparation_gives_the_ready_date() {
        let r = check(sub("coco", true, 3), batch(1, &[5.8, 5.9], Some(0.6)), NOW);
        assert_eq!(
            r.preparation_steps
                .iter()
                .map(|s| s.hours)
                .collect::<Vec<_>>(),
            [24, 2, 1]
        );
        assert_eq!(r.preparation_hours, 27);
        // 10:00 + 27 h = next day 13:00.
        assert_eq!(r.ready_on, Some(time::macros::date!(2026 - 05 - 02)));
    }

    #[test]
    fn std_dev_is_the_sample_one() {
        assert_eq!(sample_std_dev(&[1.0]), None);
        let sd = sample_std_dev(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).expect("sd");
        assert!((sd - 2.138).abs() < 0.001, "{sd}");
    }

    #[test]
    fn placement_of_a_running_cycle() {
        for (s, cycles, ok) in [
            (sub("peat", false, 1), 0, true),
            (sub("peat", false, 1), 1, false),
            (sub("soil", false, 1), 1, false),
            (sub("coco", true, 3), 3, true),
            (sub("coco", true, 3), 4, false),
        ] {
            assert_eq!(
                usable_for_placement(s, cycles).is_ok(),
                ok,
                "{} {cycles}",
                s.substrate_type
            );
        }
    }
}
