//! Care reminders, domain 2.8: the style presets and how a plant's profile is derived from its
//! species and family, the urgency buckets, the interval of each reminder type (winter
//! multiplier) and the interval that adapts to how early or late the grower confirms.

use time::{Date, Month};

/// One care style's preset (domain 2.8 table).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Preset {
    pub style: &'static str,
    pub watering_days: i32,
    pub winter_multiplier: f64,
    pub fertilizing_days: i32,
    /// Fertilising months, inclusive (3–9 = March to September).
    pub fertilizing_months: (u8, u8),
    pub repotting_months: i32,
    pub pest_check_days: i32,
    /// Pruning interval in days (not in the domain table: styles that are cut back get one;
    /// see the README).
    pub pruning_days: Option<i32>,
}

/// One row of the preset table (positional, as the domain's table reads).
#[allow(clippy::too_many_arguments)]
const fn p(
    style: &'static str,
    watering_days: i32,
    winter_multiplier: f64,
    fertilizing_days: i32,
    fertilizing_months: (u8, u8),
    repotting_months: i32,
    pest_check_days: i32,
    pruning_days: Option<i32>,
) -> Preset {
    Preset {
        style,
        watering_days,
        winter_multiplier,
        fertilizing_days,
        fertilizing_months,
        repotting_months,
        pest_check_days,
        pruning_days,
    }
}

pub const PRESETS: &[Preset] = &[
    p("tropical", 7, 1.5, 14, (3, 9), 24, 14, None),
    p("succulent", 14, 3.0, 30, (4, 9), 36, 21, None),
    p("orchid", 7, 2.0, 14, (3, 10), 24, 14, None),
    p("calathea", 5, 1.5, 21, (4, 9), 24, 7, None),
    p("herb_tropical", 5, 1.5, 14, (3, 10), 12, 7, Some(30)),
    p("mediterranean", 10, 2.0, 30, (4, 9), 36, 21, Some(90)),
    p("fern", 4, 1.5, 21, (3, 9), 18, 14, None),
    p("cactus", 21, 4.0, 30, (5, 8), 48, 30, None),
    p("outdoor_annual_veg", 3, 1.0, 14, (4, 9), 12, 7, None),
    p("outdoor_perennial", 5, 2.0, 21, (3, 9), 36, 14, Some(180)),
    p("custom", 7, 1.5, 14, (3, 9), 24, 14, None),
];

pub fn preset(style: &str) -> &'static Preset {
    PRESETS
        .iter()
        .find(|p| p.style == style)
        .unwrap_or(&PRESETS[0])
}

/// The style a botanical family suggests (domain 2.8, precedence 2); `None` → tropical.
pub fn style_of_family(family_name: &str) -> Option<&'static str> {
    Some(match family_name.trim().to_lowercase().as_str() {
        "araceae" | "moraceae" => "tropical",
        "marantaceae" => "calathea",
        "orchidaceae" => "orchid",
        "cactaceae" => "cactus",
        "crassulaceae" | "asphodelaceae" => "succulent",
        "polypodiaceae" => "fern",
        "lamiaceae" => "herb_tropical",
        "oleaceae" => "mediterranean",
        _ => return None,
    })
}

/// Where a profile's values came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProfileSource {
    /// The species' own watering interval (precedence 1), the rest from the family's style.
    Species,
    Family,
    Default,
}

impl ProfileSource {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Species => "species",
            Self::Family => "family",
            Self::Default => "default",
        }
    }
}

/// A derived profile.
#[derive(Debug, Clone, PartialEq)]
pub struct Derived {
    pub preset: &'static Preset,
    pub watering_days: i32,
    pub source: ProfileSource,
}

/// Derives a profile: the species' watering interval first, then the family's style, then
/// tropical.
pub fn derive(species_watering_days: Option<i32>, family_name: Option<&str>) -> Derived {
    let style = family_name.and_then(style_of_family);
    let preset = preset(style.unwrap_or("tropical"));
    match species_watering_days.filter(|d| (1..=90).contains(d)) {
        Some(d) => Derived {
            preset,
            watering_days: d,
            source: ProfileSource::Species,
        },
        None => Derived {
            preset,
            watering_days: preset.watering_days,
            source: if style.is_some() {
                ProfileSource::Family
            } else {
                ProfileSource::Default
            },
        },
    }
}

/// The reminder types.
pub const REMINDER_TYPES: &[&str] = &[
    "watering",
    "fertilizing",
    "repotting",
    "pruning",
    "pest_check",
    "overwintering",
];

/// Phases in which only the pest check is due (dormancy guard).
pub const RESTING_PHASES: &[&str] = &[
    "dormancy",
    "senescence",
    "hardening_off",
    "maintenance",
    "acclimatization",
    "repotting_recovery",
];

/// Whether a plant in this phase rests (only pest checks).
pub fn resting(phase: Option<&str>) -> bool {
    phase.is_some_and(|p| {
        let p = p.trim().to_lowercase().replace([' ', '-'], "_");
        RESTING_PHASES.iter().any(|r| p.contains(r))
    })
}

/// Winter: December to February (northern hemisphere; the garden has no hemisphere yet).
pub fn is_winter(day: Date) -> bool {
    matches!(
        day.month(),
        Month::December | Month::January | Month::February
    )
}

/// The watering interval on `day`: the learned interval else the profile's, times the winter
/// multiplier in winter, truncated.
pub fn watering_interval(base: i32, learned: Option<i32>, multiplier: f64, day: Date) -> i32 {
    let days = learned.unwrap_or(base);
    if is_winter(day) {
        ((f64::from(days) * multiplier).trunc() as i32).max(1)
    } else {
        days
    }
}

/// Whether `month` lies in the inclusive range (a range may wrap the year end: 10–3).
pub fn in_months(month: u8, (from, to): (u8, u8)) -> bool {
    if from <= to {
        (from..=to).contains(&month)
    } else {
        month >= from || month <= to
    }
}

/// Urgency of a reminder due on `due` seen on `today` (days = due − today).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Urgency {
    Overdue,
    DueToday,
    Upcoming,
    NotDue,
}

impl Urgency {
    pub const ALL: &'static [(&'static str, Urgency)] = &[
        ("overdue", Self::Overdue),
        ("due_today", Self::DueToday),
        ("upcoming", Self::Upcoming),
        ("not_due", Self::NotDue),
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Overdue => "overdue",
            Self::DueToday => "due_today",
            Self::Upcoming => "upcoming",
            Self::NotDue => "not_due",
        }
    }

    /// The bucket's place in the due list (0 overdue … 3 not due): the due statement computes
    /// the same number in SQL (`garden::care::repo::due_page`).
    pub fn rank(self) -> i16 {
        match self {
            Self::Overdue => 0,
            Self::DueToday => 1,
            Self::Upcoming => 2,
            Self::NotDue => 3,
        }
    }

    pub fn of(due: Date, today: Date) -> Self {
        match (due - today).whole_days() {
            d if d < 0 => Self::Overdue,
            0 => Self::DueToday,
            1 | 2 => Self::Upcoming,
            _ => Self::NotDue,
        }
    }
}

/// Which buckets a filter asks for: `actionable` (overdue and due today), `all`, or one bucket.
pub fn urgency_filter(raw: &str) -> Option<&'static [Urgency]> {
    use Urgency::*;
    Some(match raw {
        "actionable" => &[Overdue, DueToday],
        "all" => &[Overdue, DueToday, Upcoming, NotDue],
        "overdue" => &[Overdue],
        "due_today" => &[DueToday],
        "upcoming" => &[Upcoming],
        "not_due" => &[NotDue],
        _ => return None,
    })
}

pub const URGENCY_FILTERS: &[&str] = &[
    "actionable",
    "all",
    "overdue",
    "due_today",
    "upcoming",
    "not_due",
];

/// The interval learned from the grower's confirmations (watering and fertilising): `dates` are
/// the days of the `confirmed` confirmations, oldest first, the new one included. Needs three;
/// takes the last five, their day gaps without zero gaps, needs two gaps; the target is the
/// rounded mean, clamped to [max(1, ⌊0.7·base⌋), ⌊1.3·base⌋]; the stored interval (`current`,
/// else the base) moves towards it by at most one day. `None`: not enough data, keep as is.
pub fn adapted_interval(base: i32, current: Option<i32>, dates: &[Date]) -> Option<i32> {
    if dates.len() < 3 {
        return None;
    }
    let last = &dates[dates.len().saturating_sub(5)..];
    let gaps: Vec<i64> = last
        .windows(2)
        .map(|w| (w[1] - w[0]).whole_days())
        .filter(|g| *g != 0)
        .collect();
    if gaps.len() < 2 {
        return None;
    }
    let mean = gaps.iter().sum::<i64>() as f64 / gaps.len() as f64;
    let lo = ((f64::from(base) * 0.7).floor() as i32).max(1);
    let hi = ((f64::from(base) * 1.3).floor() as i32).max(lo);
    let target = (mean.round() as i32).clamp(lo, hi);
    let from = current.unwrap_or(base);
    Some(from + (target - from).clamp(-1, 1))
}

/// The first day of `month` on or after the first day of `today`'s month (this year or next).
pub fn next_month_start(month: u8, today: Date) -> Date {
    let Ok(m) = Month::try_from(month) else {
        return today;
    };
    let this = Date::from_calendar_date(today.year(), m, 1).unwrap_or(today);
    if u8::from(today.month()) <= month {
        this
    } else {
        Date::from_calendar_date(today.year() + 1, m, 1).unwrap_or(today)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::date;

    #[test]
    fn urgency_buckets() {
        let today = date!(2026 - 06 - 10);
        // days = due − today: <0 overdue, 0 due today, 1–2 upcoming, else not due.
        let table = [
            (date!(2026 - 05 - 01), Urgency::Overdue),
            (date!(2026 - 06 - 09), Urgency::Overdue),
            (date!(2026 - 06 - 10), Urgency::DueToday),
            (date!(2026 - 06 - 11), Urgency::Upcoming),
            (date!(2026 - 06 - 12), Urgency::Upcoming),
            (date!(2026 - 06 - 13), Urgency::NotDue),
            (date!(2027 - 01 - 01), Urgency::NotDue),
        ];
        for (due, want) in table {
            assert_eq!(Urgency::of(due, today), want, "{due}");
        }
    }

    #[test]
    fn urgency_filters() {
        use Urgency::*;
        assert_eq!(urgency_filter("actionable"), Some(&[Overdue, DueToday][..]));
        assert_eq!(urgency_filter("all").map(<[_]>::len), Some(4));
        assert_eq!(urgency_filter("upcoming"), Some(&[Upcoming][..]));
        assert_eq!(urgency_filter("soon"), None);
        for f in URGENCY_FILTERS {
            assert!(urgency_filter(f).is_some(), "{f}");
        }
    }

    #[test]
    fn adaptive_interval_table() {
        let d = |day: u8| Date::from_calendar_date(2026, Month::May, day).expect("a May day");
        // (base, current learned, confirmation days, expected)
        // (base, current learned, confirmation days, expected)
        type Row = (i32, Option<i32>, Vec<Date>, Option<i32>);
        let table: &[Row] = &[
            // Two confirmations: not enough.
            (7, None, vec![d(1), d(8)], None),
            // Three on time (gaps 7, 7): target 7, stays 7.
            (7, None, vec![d(1), d(8), d(15)], Some(7)),
            // Early every time (gaps 5, 5): target 5 (floor 0.7·7 = 4 allows it); moves one day: 6.
            (7, None, vec![d(1), d(6), d(11)], Some(6)),
            // Stored 6 already: next step 5.
            (7, Some(6), vec![d(1), d(6), d(11), d(16)], Some(5)),
            // Very early (gaps 2, 2): target clamped to ⌊0.7·7⌋ = 4; from 5 → 4.
            (7, Some(5), vec![d(1), d(3), d(5)], Some(4)),
            // Late (gaps 12, 12): target clamped to ⌊1.3·7⌋ = 9; from 7 → 8.
            (7, None, vec![d(1), d(13), d(25)], Some(8)),
            // Zero gaps are ignored: gaps 0, 7 leave one gap → not enough.
            (7, None, vec![d(1), d(1), d(8)], None),
            // Only the last five count: gaps 1,1 of the old ones drop; last five gaps 6,6,6,6 → 6.
            (
                7,
                None,
                vec![d(1), d(2), d(3), d(9), d(15), d(21), d(27)],
                Some(6),
            ),
            // Base 1: lower bound never below 1; gaps 1, 1 → 1.
            (1, None, vec![d(1), d(2), d(3)], Some(1)),
            // Mean 6.5 rounds to 7 (away from zero): gaps 6, 7.
            (10, Some(10), vec![d(1), d(7), d(14)], Some(9)),
        ];
        for (base, current, dates, want) in table {
            assert_eq!(
                adapted_interval(*base, *current, dates),
                *want,
                "base {base}, current {current:?}, {dates:?}"
            );
        }
    }

    #[test]
    fn derivation_precedence() {
        // Species interval wins for watering; the family still chooses the style.
        let d = derive(Some(4), Some("Cactaceae"));
        assert_eq!(
            (d.preset.style, d.watering_days, d.source),
            ("cactus", 4, ProfileSource::Species)
        );
        let d = derive(None, Some("Lamiaceae"));
        assert_eq!(
            (d.preset.style, d.watering_days, d.source),
            ("herb_tropical", 5, ProfileSource::Family)
        );
        let d = derive(None, Some("Solanaceae"));
        assert_eq!(
            (d.preset.style, d.watering_days, d.source),
            ("tropical", 7, ProfileSource::Default)
        );
        let d = derive(None, None);
        assert_eq!(d.preset.style, "tropical");
        // Out-of-range species values are ignored.
        assert_eq!(derive(Some(0), None).watering_days, 7);
    }

    #[test]
    fn watering_in_winter() {
        // Cactus 21 d × 4.0 in January = 84; tropical 7 × 1.5 = 10.5 → 10; June unchanged.
        assert_eq!(watering_interval(21, None, 4.0, date!(2026 - 01 - 15)), 84);
        assert_eq!(watering_interval(7, None, 1.5, date!(2026 - 12 - 01)), 10);
        assert_eq!(watering_interval(7, None, 1.5, date!(2026 - 06 - 01)), 7);
        // Learned interval replaces the base.
        assert_eq!(watering_interval(7, Some(6), 1.5, date!(2026 - 02 - 28)), 9);
    }

    #[test]
    fn month_ranges_and_next_month_start() {
        assert!(in_months(3, (3, 9)));
        assert!(in_months(9, (3, 9)));
        assert!(!in_months(10, (3, 9)));
        assert!(in_months(1, (10, 3)));
        assert!(!in_months(5, (10, 3)));
        assert_eq!(
            next_month_start(10, date!(2026 - 06 - 10)),
            date!(2026 - 10 - 01)
        );
        assert_eq!(
            next_month_start(6, date!(2026 - 06 - 10)),
            date!(2026 - 06 - 01)
        );
        assert_eq!(
            next_month_start(3, date!(2026 - 06 - 10)),
            date!(2027 - 03 - 01)
        );
    }

    #[test]
    fn resting_phases() {
        assert!(resting(Some("dormancy")));
        assert!(resting(Some("Hardening-off")));
        assert!(!resting(Some("vegetative")));
        assert!(!resting(None));
    }
}
