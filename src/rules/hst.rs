//! Training (high-stress) measures per phase, domain 2.3, the constant rules (no activity
//! catalogue exists yet): which measure a phase forbids, and how long a plant recovers after
//! one. A refusal is `HST_VIOLATION` (422).

use time::{Duration, OffsetDateTime};

/// A task name as the rules compare it: lower case, spaces and `-` become `_`.
pub fn normalise(name: &str) -> String {
    name.trim()
        .to_lowercase()
        .chars()
        .map(|c| if c == ' ' || c == '-' { '_' } else { c })
        .collect()
}

/// Measures forbidden in flowering and in these phases (the seeded Topping/FIM/Mainlining
/// activities; heavy defoliation from the constant fallback).
const HEAVY: &[&str] = &["topping", "fim", "mainlining", "heavy_defoliation"];
const HEAVY_PHASES: &[&str] = &[
    "flower",
    "harvest",
    "ripening",
    "senescence",
    "dormancy",
    "budding",
];
/// Measures forbidden from mid flowering on.
const LATE: &[&str] = &["supercropping", "transplant", "transplanting"];
const LATE_PHASES: &[&str] = &["mid_flower", "late_flower", "ripening"];
/// Every measure the recovery check knows (a training task named otherwise is not checked).
const KNOWN: &[&str] = &[
    "topping",
    "fim",
    "mainlining",
    "heavy_defoliation",
    "supercropping",
    "transplant",
    "transplanting",
    "lollipopping",
];

/// The measure a task name names: the known measure the normalised name starts with or
/// contains as a word (`Topping the tomato` → `topping`).
pub fn measure(task_name: &str) -> Option<&'static str> {
    let n = normalise(task_name);
    let words: Vec<&str> = n.split('_').collect();
    // Longest first, so `transplanting` wins over `transplant` and two-word names match.
    let mut known: Vec<&'static str> = KNOWN.to_vec();
    known.sort_by_key(|k| std::cmp::Reverse(k.len()));
    known.into_iter().find(|k| {
        let parts: Vec<&str> = k.split('_').collect();
        words.windows(parts.len()).any(|w| w == parts.as_slice())
    })
}

/// Why the phase forbids the measure, or `None` when it allows it.
pub fn phase_refusal(measure: &str, phase: &str) -> Option<String> {
    let phase = normalise(phase);
    if HEAVY.contains(&measure)
        && let Some(p) = HEAVY_PHASES.iter().find(|p| phase.contains(*p))
    {
        return Some(format!("{measure} is not allowed in phase {phase} ({p})"));
    }
    if LATE.contains(&measure)
        && let Some(p) = LATE_PHASES.iter().find(|p| phase.contains(*p))
    {
        return Some(format!("{measure} is not allowed in phase {phase} ({p})"));
    }
    None
}

/// Days a plant of this species needs after the measure (species matched by part of its
/// name): lollipopping 7 (cannabis 10), transplanting 5 (cannabis 3), the others 5 (cannabis
/// 7, tomato 3, pepper 5).
pub fn recovery_days(measure: &str, species_name: &str) -> i64 {
    let s = species_name.to_lowercase();
    let cannabis = s.contains("cannabis");
    match measure {
        "lollipopping" if cannabis => 10,
        "lollipopping" => 7,
        "transplant" | "transplanting" if cannabis => 3,
        "transplant" | "transplanting" => 5,
        _ if cannabis => 7,
        _ if s.contains("tomato") || s.contains("lycopersicum") => 3,
        _ => 5,
    }
}

/// Whole days (rounded up) until a plant trained at `last_done` has recovered; `None` when it
/// has.
pub fn days_remaining(
    last_done: OffsetDateTime,
    recovery_days: i64,
    now: OffsetDateTime,
) -> Option<i64> {
    let end = last_done + Duration::days(recovery_days);
    if now >= end {
        return None;
    }
    let left = end - now;
    Some((left.whole_seconds() + 86_399) / 86_400)
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    #[test]
    fn measures_are_found_in_task_names() {
        let table = [
            ("Topping", Some("topping")),
            ("topping the main stem", Some("topping")),
            ("FIM", Some("fim")),
            ("Heavy-Defoliation", Some("heavy_defoliation")),
            ("Transplanting to 11 l", Some("transplanting")),
            ("transplant", Some("transplant")),
            ("Lollipopping", Some("lollipopping")),
            ("Water the basil", None),
            ("Toppings check", None),
        ];
        for (name, want) in table {
            assert_eq!(measure(name), want, "{name}");
        }
    }

    #[test]
    fn phases_forbid_measures() {
        // (measure, phase, refused?)
        let table = [
            ("topping", "vegetative", false),
            ("topping", "flowering", true),
            ("topping", "early_flower", true),
            ("topping", "Harvest", true),
            ("fim", "dormancy", true),
            ("mainlining", "seedling", false),
            ("supercropping", "vegetative", false),
            ("supercropping", "early_flower", false),
            ("supercropping", "mid_flower", true),
            ("transplanting", "late flower", true),
            ("transplanting", "ripening", true),
            ("lollipopping", "flowering", false),
        ];
        for (m, phase, refused) in table {
            assert_eq!(phase_refusal(m, phase).is_some(), refused, "{m} in {phase}");
        }
    }

    #[test]
    fn recovery_by_species_and_measure() {
        let table = [
            ("topping", "Cannabis sativa", 7),
            ("topping", "Tomato", 3),
            ("topping", "Solanum lycopersicum", 3),
            ("topping", "Pepper", 5),
            ("topping", "Basil", 5),
            ("lollipopping", "Cannabis sativa", 10),
            ("lollipopping", "Tomato", 7),
            ("transplanting", "Cannabis", 3),
            ("transplanting", "Tomato", 5),
        ];
        for (m, s, want) in table {
            assert_eq!(recovery_days(m, s), want, "{m} on {s}");
        }
    }

    #[test]
    fn days_remaining_rounds_up_and_ends_on_the_boundary() {
        let done = datetime!(2026-05-01 12:00 UTC);
        // 5 days of recovery end 2026-05-06 12:00.
        assert_eq!(
            days_remaining(done, 5, datetime!(2026-05-01 12:00 UTC)),
            Some(5)
        );
        // 4 days and 1 hour left → 5 whole days started.
        assert_eq!(
            days_remaining(done, 5, datetime!(2026-05-02 11:00 UTC)),
            Some(5)
        );
        assert_eq!(
            days_remaining(done, 5, datetime!(2026-05-06 11:59 UTC)),
            Some(1)
        );
        assert_eq!(
            days_remaining(done, 5, datetime!(2026-05-06 12:00 UTC)),
            None
        );
        assert_eq!(
            days_remaining(done, 5, datetime!(2026-06-01 00:00 UTC)),
            None
        );
    }
}
