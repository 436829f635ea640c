//! Tank maintenance schedule (domain 1.10): each kind of maintenance recurs at an interval that
//! depends on the tank's kind (a nutrient solution goes off in a week, a rain-water reservoir
//! keeps a month); the next due date is the last time it was done plus the interval (or, never
//! done, the day the tank was set up plus the interval). `due_soon` starts
//! [`REMINDER_DAYS_BEFORE`] days before the due date, `overdue` the day after it.
//! A full change of the solution counts as a `water_change`.

use time::{Date, Duration};

/// Days before the due date from which a maintenance shows as due soon (domain default 3).
pub const REMINDER_DAYS_BEFORE: i64 = 3;

pub const TANK_KINDS: &[&str] = &[
    "nutrient",
    "irrigation",
    "reservoir",
    "recirculation",
    "stock_solution",
];

pub const MAINTENANCE_TYPES: &[&str] = &[
    "water_change",
    "cleaning",
    "sanitization",
    "calibration",
    "filter_change",
    "pump_inspection",
];

/// Interval in days of a maintenance type for a tank kind; `None`: not scheduled for that kind
/// (it can still be logged).
pub fn interval_days(tank_kind: &str, maintenance_type: &str) -> Option<i64> {
    let recirculating = matches!(tank_kind, "nutrient" | "recirculation");
    match maintenance_type {
        // Mixed nutrient solution: a week (recirculated: algae, pathogens, drifting ratios);
        // plain irrigation or rain water: a month; a stock concentrate keeps a quarter.
        "water_change" => Some(match tank_kind {
            "nutrient" | "recirculation" => 7,
            "stock_solution" => 90,
            _ => 30,
        }),
        "cleaning" => Some(if recirculating { 14 } else { 30 }),
        "sanitization" => Some(if recirculating { 30 } else { 90 }),
        // EC/pH meters of a nutrient tank: monthly.
        "calibration" => recirculating.then_some(30),
        "filter_change" => (tank_kind == "recirculation").then_some(60),
        "pump_inspection" => recirculating.then_some(90),
        _ => None,
    }
}

/// `ok`, `due_soon` or `overdue`.
pub fn status(next_due: Date, today: Date) -> &'static str {
    if today > next_due {
        "overdue"
    } else if next_due - today <= Duration::days(REMINDER_DAYS_BEFORE) {
        "due_soon"
    } else {
        "ok"
    }
}

/// The next due date: `last_done` (or, never done, `since`, the tank's set-up day) plus the
/// interval.
pub fn next_due(last_done: Option<Date>, since: Date, interval_days: i64) -> Date {
    last_done.unwrap_or(since) + Duration::days(interval_days)
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::date;

    /// Intervals by tank kind (hand table): nutrient water change 7, reservoir 30, stock 90;
    /// cleaning 14 recirculating / 30 otherwise; calibration only for nutrient and
    /// recirculation tanks; filter change only for recirculation.
    #[test]
    fn intervals_by_kind() {
        let rows: [(&str, &str, Option<i64>); 10] = [
            ("nutrient", "water_change", Some(7)),
            ("recirculation", "water_change", Some(7)),
            ("reservoir", "water_change", Some(30)),
            ("irrigation", "water_change", Some(30)),
            ("stock_solution", "water_change", Some(90)),
            ("nutrient", "cleaning", Some(14)),
            ("reservoir", "cleaning", Some(30)),
            ("reservoir", "calibration", None),
            ("recirculation", "filter_change", Some(60)),
            ("nutrient", "filter_change", None),
        ];
        for (kind, m, want) in rows {
            assert_eq!(interval_days(kind, m), want, "{kind} {m}");
        }
        for m in MAINTENANCE_TYPES {
            for k in TANK_KINDS {
                assert!(interval_days(k, m).is_none_or(|d| d > REMINDER_DAYS_BEFORE));
            }
        }
    }

    /// Last water change 2026-03-01 + 7 days = due 2026-03-08. On 03-04 4 days left: ok; on
    /// 03-05 3 days left: due_soon (inclusive); on 03-08 due that day: due_soon; on 03-09:
    /// overdue. Never done, tank set up 2026-02-20 + 30 = 2026-03-22.
    #[test]
    fn due_dates_and_status() {
        let due = next_due(Some(date!(2026 - 03 - 01)), date!(2026 - 01 - 01), 7);
        assert_eq!(due, date!(2026 - 03 - 08));
        assert_eq!(status(due, date!(2026 - 03 - 04)), "ok");
        assert_eq!(status(due, date!(2026 - 03 - 05)), "due_soon");
        assert_eq!(status(due, date!(2026 - 03 - 08)), "due_soon");
        assert_eq!(status(due, date!(2026 - 03 - 09)), "overdue");
        assert_eq!(
            next_due(None, date!(2026 - 02 - 20), 30),
            date!(2026 - 03 - 22)
        );
    }
}
