//! The resistance warning (domain 2.2): the same mode of action applied to a plant [`LIMIT`]
//! times within [`WINDOW_DAYS`] refuses a further application (`RESISTANCE_WARNING`) unless
//! the grower acknowledges it; one below the limit is accepted with a warning.
//!
//! Resistance follows the mode of action, not the product: deltamethrin and pyrethrins are both
//! IRAC group 3A, tebuconazole and difenoconazole both FRAC group 3. So an application counts
//! under each resistance group of its treatment (a mixture has two), and only a treatment
//! without a group counts under its active ingredient ([`classes_of`]). Releases of beneficial
//! organisms (predatory mites, parasitic wasps, nematodes, ladybirds, lacewings) never count:
//! weekly releases are standard practice and select for nothing.
//!
//! The window counts earlier applications on the days `d-89 ..= d` of the new application's day
//! `d` (90 days including `d`); an application 90 days earlier no longer counts. Treatments
//! without an active ingredient are never counted. The class is the ingredient as the
//! catalogue spells it, trimmed, lower-cased, inner whitespace collapsed (the catalogue has no
//! separate class field; "Pyrethrin" and " pyrethrin " are one class). A group is spelled
//! as its code: "IRAC 3A", "FRAC 3", "FRAC M2", "HRAC 9" ([`is_group_code`]).

use time::{Date, Duration};

pub const WINDOW_DAYS: i64 = 90;
pub const LIMIT: usize = 3;

/// What a resistance group code looks like: the committee and the group.
pub const GROUP_PATTERN: &str = "^(IRAC|FRAC|HRAC) [A-Z0-9]{1,4}$";

/// Whether `code` is a resistance group code ("IRAC 3A", "FRAC M2", "HRAC 9").
pub fn is_group_code(code: &str) -> bool {
    let Some((committee, group)) = code.split_once(' ') else {
        return false;
    };
    matches!(committee, "IRAC" | "FRAC" | "HRAC")
        && (1..=4).contains(&group.len())
        && group
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
}

/// The classes an application counts under: its resistance groups when it names any, else its
/// active ingredient; none for a release of beneficial organisms. Sorted, without repeats.
pub fn classes_of(
    groups: &[String],
    active_ingredient: Option<&str>,
    beneficial_organism: bool,
) -> Vec<String> {
    if beneficial_organism {
        return Vec::new();
    }
    let mut out: Vec<String> = groups.iter().filter_map(|g| class_of(Some(g))).collect();
    if out.is_empty() {
        out.extend(class_of(active_ingredient));
    }
    out.sort();
    out.dedup();
    out
}

/// The class of an active ingredient; `None` when there is none.
pub fn class_of(active_ingredient: Option<&str>) -> Option<String> {
    let words: Vec<String> = active_ingredient?
        .split_whitespace()
        .map(str::to_lowercase)
        .collect();
    (!words.is_empty()).then(|| words.join(" "))
}

/// The first day of the window that ends on `day` (inclusive).
pub fn window_start(day: Date) -> Date {
    day.checked_sub(Duration::days(WINDOW_DAYS - 1))
        .unwrap_or(Date::MIN)
}

/// How many of `earlier` (days of earlier applications of the class) fall in the window of an
/// application on `day`.
pub fn count_in_window(earlier: &[Date], day: Date) -> usize {
    let start = window_start(day);
    earlier
        .iter()
        .filter(|d| **d >= start && **d <= day)
        .count()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Fewer than `LIMIT - 1` earlier applications.
    Fine,
    /// `LIMIT - 1` earlier: accepted, the next one reaches the limit.
    Warn,
    /// `LIMIT` or more earlier: refused unless acknowledged.
    Refuse,
}

pub fn verdict(count: usize) -> Verdict {
    if count >= LIMIT {
        Verdict::Refuse
    } else if count + 1 == LIMIT {
        Verdict::Warn
    } else {
        Verdict::Fine
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::date;

    #[test]
    fn classes() {
        let cases = [
            (Some("Pyrethrin"), Some("pyrethrin")),
            (Some("  Potassium   SOAP "), Some("potassium soap")),
            (Some("   "), None),
            (None, None),
        ];
        for (raw, class) in cases {
            assert_eq!(class_of(raw).as_deref(), class, "{raw:?}");
        }
    }

    #[test]
    fn classes_follow_the_mode_of_action() {
        let g = |l: &[&str]| l.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        // (groups, ingredient, organism, classes)
        type Case<'a> = (Vec<String>, Option<&'a str>, bool, Vec<&'a str>);
        let cases: [Case; 6] = [
            // Deltamethrin and pyrethrins share IRAC 3A: one class.
            (
                g(&["IRAC 3A"]),
                Some("Deltamethrin"),
                false,
                vec!["irac 3a"],
            ),
            (
                g(&["IRAC 3A"]),
                Some("Pyrethrins + rapeseed oil"),
                false,
                vec!["irac 3a"],
            ),
            // A mixture counts under both groups.
            (
                g(&["FRAC 9", "FRAC 12"]),
                Some("Cyprodinil + fludioxonil"),
                false,
                vec!["frac 12", "frac 9"],
            ),
            // No group: the ingredient.
            (
                g(&[]),
                Some("Potassium salts of fatty acids"),
                false,
                vec!["potassium salts of fatty acids"],
            ),
            // Releases of beneficial organisms never count.
            (
                g(&[]),
                Some("Phytoseiulus persimilis (predatory mite)"),
                true,
                vec![],
            ),
            (g(&[]), None, false, vec![]),
        ];
        for (groups, ingredient, organism, classes) in cases {
            assert_eq!(
                classes_of(&groups, ingredient, organism),
                classes,
                "{ingredient:?}"
            );
        }
        for (code, ok) in [
            ("IRAC 3A", true),
            ("FRAC M2", true),
            ("HRAC 9", true),
            ("FRAC 3", true),
            ("irac 3A", false),
            ("IRAC", false),
            ("IRAC 3A ", false),
            ("XRAC 1", false),
            ("IRAC 12345", false),
        ] {
            assert_eq!(is_group_code(code), ok, "{code:?}");
        }
    }

    #[test]
    fn window_and_verdicts() {
        let day = date!(2026 - 06 - 30);
        // 30 June back to 1 June is 29 days, to 1 May 60, to 1 April 90: so 89 days back is 2 April.
        assert_eq!(window_start(day), date!(2026 - 04 - 02));
        // (earlier days, count, verdict)
        let cases: [(&[Date], usize, Verdict); 6] = [
            (&[], 0, Verdict::Fine),
            (&[date!(2026 - 06 - 01)], 1, Verdict::Fine),
            // two inside: the third is accepted with a warning
            (
                &[date!(2026 - 06 - 01), date!(2026 - 06 - 15)],
                2,
                Verdict::Warn,
            ),
            // three inside (2 April is the first day): refused
            (
                &[
                    date!(2026 - 04 - 02),
                    date!(2026 - 06 - 01),
                    date!(2026 - 06 - 15),
                ],
                3,
                Verdict::Refuse,
            ),
            // 1 April is 90 days before 30 June: outside, so only two count
            (
                &[
                    date!(2026 - 04 - 01),
                    date!(2026 - 06 - 01),
                    date!(2026 - 06 - 15),
                ],
                2,
                Verdict::Warn,
            ),
            // a later-dated application (after `day`) is not in the window ending on `day`
            (
                &[
                    date!(2026 - 07 - 01),
                    date!(2026 - 06 - 01),
                    date!(2026 - 06 - 30),
                ],
                2,
                Verdict::Warn,
            ),
        ];
        for (earlier, count, v) in cases {
            assert_eq!(count_in_window(earlier, day), count, "{earlier:?}");
            assert_eq!(verdict(count), v, "{earlier:?}");
        }
    }
}
