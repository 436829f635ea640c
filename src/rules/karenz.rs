//! The pre-harvest interval (Karenz, domain 2.1) by whole garden days.
//!
//! A treatment applied on day `A` with an interval of `N` days blocks harvests on `A`,
//! `A+1`, …, `A+N-1` (the last blocked day) and allows one on `A+N` (`safe_on`). A harvest dated
//! before the application is not affected by it (the fruit was off the plant). An interval of 0
//! days blocks nothing. "Today" is the garden's day: UTC, since gardens have no time zone yet.

use time::{Date, Duration};

/// The first day a harvest is allowed again: `applied_on + days`.
pub fn safe_on(applied_on: Date, days: i64) -> Date {
    applied_on
        .checked_add(Duration::days(days.max(0)))
        .unwrap_or(Date::MAX)
}

/// The last day the interval blocks (`None` for an interval of 0 days).
pub fn last_blocked_day(applied_on: Date, days: i64) -> Option<Date> {
    (days > 0).then(|| {
        safe_on(applied_on, days)
            .previous_day()
            .unwrap_or(Date::MIN)
    })
}

/// Whether a harvest on `harvest_on` is blocked by an application on `applied_on` whose
/// interval ends with `safe_on` (exclusive); the days still to wait when it is.
pub fn blocks(applied_on: Date, safe_on: Date, harvest_on: Date) -> Option<i64> {
    (applied_on <= harvest_on && harvest_on < safe_on).then(|| (safe_on - harvest_on).whole_days())
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::date;

    #[test]
    fn safe_on_and_last_day() {
        // (applied, days, safe_on, last blocked day)
        let cases = [
            // 1 June + 7 days = 8 June; blocked 1..=7 June.
            (
                date!(2026 - 06 - 01),
                7,
                date!(2026 - 06 - 08),
                Some(date!(2026 - 06 - 07)),
            ),
            // 1 day (potassium soap): only the day of application is blocked.
            (
                date!(2026 - 06 - 01),
                1,
                date!(2026 - 06 - 02),
                Some(date!(2026 - 06 - 01)),
            ),
            // 21 days across a month end: 20 Jan + 21 = 10 Feb; last blocked 9 Feb.
            (
                date!(2026 - 01 - 20),
                21,
                date!(2026 - 02 - 10),
                Some(date!(2026 - 02 - 09)),
            ),
            // Leap year: 25 Feb 2028 + 7 = 3 Mar (29 Feb exists).
            (
                date!(2028 - 02 - 25),
                7,
                date!(2028 - 03 - 03),
                Some(date!(2028 - 03 - 02)),
            ),
            // 0 days: nothing blocked, safe the same day.
            (date!(2026 - 06 - 01), 0, date!(2026 - 06 - 01), None),
        ];
        for (applied, days, safe, last) in cases {
            assert_eq!(safe_on(applied, days), safe, "{applied} + {days}");
            assert_eq!(last_blocked_day(applied, days), last, "{applied} + {days}");
        }
    }

    #[test]
    fn day_boundaries() {
        let applied = date!(2026 - 06 - 01);
        let safe = safe_on(applied, 7); // 8 June
        // (harvest day, days remaining or None when allowed)
        let cases = [
            (date!(2026 - 05 - 31), None), // before the application: not affected
            (date!(2026 - 06 - 01), Some(7)), // the day of application: 8 - 1 = 7 days
            (date!(2026 - 06 - 04), Some(4)), // 8 - 4 = 4
            (date!(2026 - 06 - 07), Some(1)), // the last day is still blocked
            (date!(2026 - 06 - 08), None), // the day after: allowed
            (date!(2026 - 07 - 01), None),
        ];
        for (harvest, remaining) in cases {
            assert_eq!(blocks(applied, safe, harvest), remaining, "{harvest}");
        }
        // 0 days never blocks, not even on the day itself.
        assert_eq!(blocks(applied, safe_on(applied, 0), applied), None);
    }
}
