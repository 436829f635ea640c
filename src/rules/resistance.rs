//! The resistance warning (domain 2.2): the same active ingredient class applied to a plant
//! [`LIMIT`] times within [`WINDOW_DAYS`] refuses a further application (`RESISTANCE_WARNING`)
//! unless the grower acknowledges it; one below the limit is accepted with a warning.
//!
//! The window counts earlier applications on the days `d-89 ..= d` of the new application's day
//! `d` (90 days including `d`); an application 90 days earlier no longer counts. Treatments
//! without an active ingredient are never counted. The class is the ingredient as the
//! catalogue spells it, trimmed, lower-cased, inner whitespace collapsed (the catalogue has no
//! separate class field; "Pyrethrin" and " pyrethrin " are one class).

use time::{Date, Duration};

pub const WINDOW_DAYS: i64 = 90;
pub const LIMIT: usize = 3;

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
