//! Nutrient plan coverage (domain 2.16): does a plan feed every phase a plant goes through, and
//! do its week windows run without gaps or overlaps?
//!
//! Convention (the reference leaves it to us; its recommendation): entries sorted by
//! `week_start`; a **gap** when the next window starts more than one week after the previous
//! one ends (start > prev_end + 1: W1–2 then W4–6 misses week 3), an **overlap** when it starts
//! before the previous one ends (start < prev_end: W1–4 then W3–6 shares weeks 3 and 4). So
//! both W1–2 then W3–4 and a shared boundary week (W1–2 then W2–4) count as contiguous.
//! Phase names are the coarse plan phases; a sequence phase not named by any entry is an issue;
//! a coarse phase neither the plan nor the sequence uses is only a hint. Without a sequence
//! there is nothing to compare (empty lists), which is not the same as covered.
//!
//! Rest phases are not fed (`rules::mixing_protocol::is_rest_phase`, the one rule the mixing
//! protocol and the plans share, with its source): a sequence's rest phase needs no entry (it
//! is neither an issue nor a hint), and a `dormancy` entry with a target EC above 0 is
//! refused.

use std::collections::BTreeSet;

use serde::Serialize;

use super::calculations::{EC_MAX_MS, FieldProblem, check_range};
use super::mixing_protocol::{is_rest_phase, rest_phase_reason};

/// The coarse plan phase of rest phases, which is not fed.
pub const REST_PLAN_PHASE: &str = "dormancy";

/// Coarse phase names of plan entries (domain 1.12).
pub const PLAN_PHASES: &[&str] = &[
    "germination",
    "seedling",
    "vegetative",
    "flowering",
    "flushing",
    "dormancy",
    "harvest",
];
pub const WEEK_MAX: u32 = 520;
pub const ENTRIES_MAX: usize = 50;

/// One phase entry of a plan, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanEntry {
    /// Entry key when stored; else the index.
    pub key: String,
    pub phase_name: String,
    pub week_start: u32,
    pub week_end: u32,
    pub target_ec_ms: Option<f64>,
}

impl PlanEntry {
    /// Field names are `entries[i].…`.
    pub fn new(i: usize, e: PlanEntry) -> Result<Self, Vec<FieldProblem>> {
        let mut p = Vec::new();
        let field = |name: &str| format!("entries[{i}].{name}");
        if !PLAN_PHASES.contains(&e.phase_name.as_str()) {
            p.push(FieldProblem::new(
                field("phase_name"),
                format!("must be one of {}", PLAN_PHASES.join(", ")),
            ));
        }
        if e.week_start < 1 || e.week_start > WEEK_MAX {
            p.push(FieldProblem::new(
                field("week_start"),
                format!("must be between 1 and {WEEK_MAX}"),
            ));
        }
        if e.week_end < e.week_start || e.week_end > WEEK_MAX {
            p.push(FieldProblem::new(
                field("week_end"),
                format!("must be at least week_start and at most {WEEK_MAX}"),
            ));
        }
        if let Some(ec) = e.target_ec_ms {
            check_range(&mut p, &field("target_ec_ms"), ec, 0.0, EC_MAX_MS);
            if let Some(problem) =
                rest_entry_fed(&e.phase_name, Some(ec), 0, &field("target_ec_ms"))
            {
                p.push(problem);
            }
        }
        if p.is_empty() { Ok(e) } else { Err(p) }
    }
}

/// A rest-phase entry (`dormancy`) that feeds: a target EC above 0 or products. `field` names
/// what the caller gave (the target EC, or the products when the EC is 0 or absent).
pub fn rest_entry_fed(
    phase_name: &str,
    target_ec_ms: Option<f64>,
    products: usize,
    field: &str,
) -> Option<FieldProblem> {
    let fed = target_ec_ms.is_some_and(|ec| ec > 0.0) || products > 0;
    (fed && is_rest_phase(phase_name)).then(|| {
        FieldProblem::new(
            field,
            format!(
                "{phase_name}: {} Give target_ec_ms 0 (or none) and no products.",
                rest_phase_reason()
            ),
        )
    })
}

#[derive(Debug, Clone, PartialEq, Serialize, salvo::oapi::ToSchema)]
pub struct CoverageIssue {
    /// `gap`, `overlap` or `phase_not_covered`.
    pub code: String,
    pub message: String,
    /// The entries concerned (keys), in week order.
    pub entry_keys: Vec<String>,
    /// Weeks missed (gap) or shared (overlap), inclusive; null for a phase issue.
    pub weeks: Option<[u32; 2]>,
    pub phase: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, salvo::oapi::ToSchema)]
pub struct Coverage {
    /// No issue (hints do not count). False when there is no entry at all.
    pub complete: bool,
    pub issues: Vec<CoverageIssue>,
    /// Coarse phases neither the sequence nor the plan uses.
    pub hints: Vec<String>,
    /// The sequence's phases (coarse), in order; empty without a sequence.
    pub sequence_phases: Vec<String>,
    pub phases_not_covered: Vec<String>,
    /// Phases of entries without a target EC.
    pub phases_without_target_ec: Vec<String>,
    pub first_week: Option<u32>,
    pub last_week: Option<u32>,
}

/// Coverage of `entries` against the sequence's coarse phases (may be empty).
pub fn coverage(entries: &[PlanEntry], sequence_phases: &[String]) -> Coverage {
    let mut sorted: Vec<&PlanEntry> = entries.iter().collect();
    sorted.sort_by(|a, b| {
        (a.week_start, a.week_end, &a.key).cmp(&(b.week_start, b.week_end, &b.key))
    });
    let mut issues = Vec::new();
    // The furthest week reached so far and the entry that reached it: an entry nested inside
    // a long one overlaps that one, not its immediate predecessor.
    let mut reach: Option<(u32, &PlanEntry)> = None;
    for e in &sorted {
        if let Some((end, prev)) = reach {
            if e.week_start > end + 1 {
                issues.push(CoverageIssue {
                    code: "gap".into(),
                    message: format!(
                        "Weeks {}-{} are not covered between {} (W{}-{}) and {} (W{}-{}).",
                        end + 1,
                        e.week_start - 1,
                        prev.phase_name,
                        prev.week_start,
                        prev.week_end,
                        e.phase_name,
                        e.week_start,
                        e.week_end
                    ),
                    entry_keys: vec![prev.key.clone(), e.key.clone()],
                    weeks: Some([end + 1, e.week_start - 1]),
                    phase: None,
                });
            } else if e.week_start < end {
                let shared_end = end.min(e.week_end);
                issues.push(CoverageIssue {
                    code: "overlap".into(),
                    message: format!(
                        "{} (W{}-{}) and {} (W{}-{}) both cover weeks {}-{}.",
                        prev.phase_name,
                        prev.week_start,
                        prev.week_end,
                        e.phase_name,
                        e.week_start,
                        e.week_end,
                        e.week_start,
                        shared_end
                    ),
                    entry_keys: vec![prev.key.clone(), e.key.clone()],
                    weeks: Some([e.week_start, shared_end]),
                    phase: None,
                });
            }
        }
        if reach.is_none_or(|(end, _)| e.week_end > end) {
            reach = Some((e.week_end, e));
        }
    }
    let named: BTreeSet<&str> = entries.iter().map(|e| e.phase_name.as_str()).collect();
    let mut not_covered = Vec::new();
    for phase in sequence_phases {
        if !named.contains(phase.as_str())
            && !not_covered.contains(phase)
            && phase != REST_PLAN_PHASE
        {
            not_covered.push(phase.clone());
            issues.push(CoverageIssue {
                code: "phase_not_covered".into(),
                message: format!(
                    "No entry for the {phase} phase: a plant in it is fed from whatever entry \
                     its calendar week matches, i.e. from the wrong phase."
                ),
                entry_keys: Vec::new(),
                weeks: None,
                phase: Some(phase.clone()),
            });
        }
    }
    let hints = PLAN_PHASES
        .iter()
        .filter(|p| {
            **p != REST_PLAN_PHASE
                && !named.contains(**p)
                && !sequence_phases.iter().any(|s| s == **p)
        })
        .map(|p| (*p).to_owned())
        .collect();
    let mut without_ec = Vec::new();
    for e in &sorted {
        if e.target_ec_ms.is_none() && !without_ec.contains(&e.phase_name) {
            without_ec.push(e.phase_name.clone());
        }
    }
    Coverage {
        complete: issues.is_empty() && !entries.is_empty(),
        issues,
        hints,
        sequence_phases: sequence_phases.to_vec(),
        phases_not_covered: not_covered,
        phases_without_target_ec: without_ec,
        first_week: sorted.first().map(|e| e.week_start),
        last_week: sorted.iter().map(|e| e.week_end).max(),
    }
}

/// A species sequence phase (fine names from the phase catalogue) as a coarse plan phase: a
/// rest phase (the mixing protocol's rule, senescence included) is `dormancy`; `None` for a
/// phase no word places.
pub fn coarse_phase(fine: &str) -> Option<&'static str> {
    let p = fine.trim().to_ascii_lowercase();
    let has = |w: &[&str]| w.iter().any(|x| p.contains(x));
    if is_rest_phase(&p) {
        Some(REST_PLAN_PHASE)
    } else if has(&["germin", "sprout"]) {
        Some("germination")
    } else if has(&["seedling", "cutting", "propagat"]) {
        Some("seedling")
    } else if has(&["veg", "growth", "juvenile"]) {
        Some("vegetative")
    } else if has(&["flower", "bloom", "fruit", "ripen"]) {
        Some("flowering")
    } else if has(&["flush"]) {
        Some("flushing")
    } else if has(&["harvest"]) {
        Some("harvest")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(key: &str, phase: &str, start: u32, end: u32, ec: Option<f64>) -> PlanEntry {
        PlanEntry::new(
            0,
            PlanEntry {
                key: key.into(),
                phase_name: phase.into(),
                week_start: start,
                week_end: end,
                target_ec_ms: ec,
            },
        )
        .expect("valid")
    }

    fn seq(phases: &[&str]) -> Vec<String> {
        phases.iter().map(|p| (*p).to_owned()).collect()
    }

    /// W1–2 seedling, W3–6 vegetative, W7–14 flowering: 3 = 2 + 1 and 7 = 6 + 1 are
    /// contiguous; the sequence (seedling, vegetative, flowering) is named in full → complete.
    /// Hints: the coarse phases nobody uses (germination, flushing, harvest); dormancy is
    /// never one (a rest phase is not fed, so it needs no entry).
    #[test]
    fn contiguous_plan_is_complete() {
        let c = coverage(
            &[
                e("f", "flowering", 7, 14, Some(1.8)),
                e("s", "seedling", 1, 2, Some(0.8)),
                e("v", "vegetative", 3, 6, Some(1.4)),
            ],
            &seq(&["seedling", "vegetative", "flowering"]),
        );
        assert!(c.complete, "{:?}", c.issues);
        assert_eq!(c.hints, ["germination", "flushing", "harvest"]);
        assert_eq!((c.first_week, c.last_week), (Some(1), Some(14)));
    }

    /// A shared boundary week (W1–2 then W2–4) is contiguous, not an overlap.
    #[test]
    fn shared_boundary_week_is_contiguous() {
        let c = coverage(
            &[
                e("a", "seedling", 1, 2, Some(0.8)),
                e("b", "vegetative", 2, 4, Some(1.2)),
            ],
            &[],
        );
        assert!(c.complete, "{:?}", c.issues);
    }

    /// W1–2 then W5–8: weeks 3–4 missing (5 > 2 + 1) → gap [3, 4].
    /// W1–6 then W4–8: 4 < 6 → overlap weeks 4–6.
    /// W1–10, W3–4 (nested), W11–12: the nested entry overlaps the long one (weeks 3–4); W11
    /// follows the long one's end (10) contiguously, no gap after the nested W4.
    #[test]
    fn gaps_and_overlaps() {
        let c = coverage(
            &[
                e("a", "seedling", 1, 2, Some(1.0)),
                e("b", "vegetative", 5, 8, Some(1.0)),
            ],
            &[],
        );
        assert_eq!(c.issues.len(), 1);
        assert_eq!(c.issues[0].code, "gap");
        assert_eq!(c.issues[0].weeks, Some([3, 4]));
        assert_eq!(c.issues[0].entry_keys, ["a", "b"]);

        let c = coverage(
            &[
                e("a", "vegetative", 1, 6, Some(1.0)),
                e("b", "flowering", 4, 8, Some(1.0)),
            ],
            &[],
        );
        assert_eq!(c.issues[0].code, "overlap");
        assert_eq!(c.issues[0].weeks, Some([4, 6]));

        let c = coverage(
            &[
                e("long", "vegetative", 1, 10, Some(1.0)),
                e("nested", "vegetative", 3, 4, Some(1.0)),
                e("next", "flowering", 11, 12, Some(1.0)),
            ],
            &[],
        );
        assert_eq!(c.issues.len(), 1, "{:?}", c.issues);
        assert_eq!(c.issues[0].code, "overlap");
        assert_eq!(c.issues[0].entry_keys, ["long", "nested"]);
        assert_eq!(c.issues[0].weeks, Some([3, 4]));
    }

    /// Sequence germination, seedling, vegetative, flowering, harvest; plan names seedling,
    /// vegetative and flowering (flowering without a target EC) → germination and harvest not
    /// covered (2 issues), flowering listed without target EC, not complete.
    #[test]
    fn phases_of_the_sequence_must_be_named() {
        let c = coverage(
            &[
                e("s", "seedling", 1, 2, Some(0.6)),
                e("v", "vegetative", 3, 6, Some(1.2)),
                e("f", "flowering", 7, 12, None),
            ],
            &seq(&[
                "germination",
                "seedling",
                "vegetative",
                "flowering",
                "harvest",
            ]),
        );
        assert!(!c.complete);
        assert_eq!(c.phases_not_covered, ["germination", "harvest"]);
        assert_eq!(c.phases_without_target_ec, ["flowering"]);
        assert_eq!(c.hints, ["flushing"]);
    }

    /// Rest phases are not fed (the mixing protocol's rule): a sequence vegetative →
    /// dormancy with only a vegetative entry is complete (no `phase_not_covered` for
    /// dormancy); a dormancy entry at EC 0 or without a target is accepted, one at 0.4 is
    /// refused naming its target EC and the source; `rest_entry_fed` also refuses products.
    #[test]
    fn rest_phases_need_no_entry_and_are_not_fed() {
        let c = coverage(
            &[e("v", "vegetative", 1, 30, Some(1.0))],
            &seq(&["vegetative", "dormancy"]),
        );
        assert!(c.complete, "{:?}", c.issues);
        assert!(c.phases_not_covered.is_empty());
        for (ec, accepted) in [(None, true), (Some(0.0), true), (Some(0.4), false)] {
            let r = PlanEntry::new(
                1,
                PlanEntry {
                    key: "d".into(),
                    phase_name: "dormancy".into(),
                    week_start: 31,
                    week_end: 52,
                    target_ec_ms: ec,
                },
            );
            assert_eq!(r.is_ok(), accepted, "{ec:?}");
            if let Err(p) = r {
                assert_eq!(p[0].field, "entries[1].target_ec_ms");
                assert!(p[0].reason.contains("not fed"), "{}", p[0].reason);
                assert!(p[0].reason.contains("Iowa State"), "{}", p[0].reason);
            }
        }
        for (phase, ec, products, refused) in [
            ("dormancy", Some(0.0), 1, true),
            ("dormancy", None, 0, false),
            ("winter_rest", Some(0.6), 0, true),
            ("vegetative", Some(1.2), 2, false),
        ] {
            assert_eq!(
                rest_entry_fed(phase, ec, products, "f").is_some(),
                refused,
                "{phase} {ec:?} {products}"
            );
        }
    }

    #[test]
    fn empty_plan_is_not_complete_and_entries_are_checked() {
        assert!(!coverage(&[], &[]).complete);
        let err = PlanEntry::new(
            2,
            PlanEntry {
                key: "x".into(),
                phase_name: "blooming".into(),
                week_start: 5,
                week_end: 3,
                target_ec_ms: Some(11.0),
            },
        )
        .expect_err("invalid");
        let fields: Vec<_> = err.iter().map(|p| p.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "entries[2].phase_name",
                "entries[2].week_end",
                "entries[2].target_ec_ms"
            ]
        );
    }

    #[test]
    fn fine_phases_map_to_coarse_ones() {
        for (fine, coarse) in [
            ("germination", Some("germination")),
            ("seedling", Some("seedling")),
            ("vegetative", Some("vegetative")),
            ("fruiting", Some("flowering")),
            ("ripening", Some("flowering")),
            ("dormancy", Some("dormancy")),
            ("harvest", Some("harvest")),
            ("senescence", Some("dormancy")),
            ("winter_rest", Some("dormancy")),
            ("dry_rest", Some("dormancy")),
            ("leaf_renewal", Some("dormancy")),
            ("foliage_dieback", Some("dormancy")),
            ("vernalization", Some("dormancy")),
            ("moon_phase", None),
        ] {
            assert_eq!(coarse_phase(fine), coarse, "{fine}");
        }
    }
}
