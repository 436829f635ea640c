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

/// Mediterranean herbs by genus or species (scientific name, lower case, prefix match): dry,
/// lean-soil subshrubs of the Lamiaceae that rot when watered like basil or mint (RHS growing
/// guides for rosemary, lavender, thyme, sage, oregano and winter savory). Checked before the
/// family's style: the family (Lamiaceae → herb_tropical) fits basil and mint, not these.
pub const MEDITERRANEAN_SPECIES: &[&str] = &[
    "salvia rosmarinus",
    "rosmarinus",
    "lavandula",
    "thymus",
    "origanum",
    "salvia officinalis",
    "satureja montana",
    "helichrysum italicum",
    "santolina",
];

/// The style the species itself suggests (precedence before the family's style).
pub fn style_of_species(scientific_name: &str) -> Option<&'static str> {
    let name = scientific_name
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase();
    MEDITERRANEAN_SPECIES
        .iter()
        .any(|m| name == *m || name.starts_with(&format!("{m} ")))
        .then_some("mediterranean")
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

/// Derives a profile: the species' watering interval first; the style from the species (the
/// Mediterranean herbs), else its family, else tropical.
pub fn derive(
    species_watering_days: Option<i32>,
    scientific_name: Option<&str>,
    family_name: Option<&str>,
) -> Derived {
    let style = scientific_name
        .and_then(style_of_species)
        .or_else(|| family_name.and_then(style_of_family));
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

/// Phases in which no watering, feeding, repotting or pruning is scheduled, only the pest
/// check (dormancy guard): the domain's list plus the catalogue's rest phases. Watering has its
/// own, narrower rule ([`watering_withheld`]): a plant in winter rest or dying back is still
/// watered, less often. `dormancy` also covers `summer_dormancy`.
pub const RESTING_PHASES: &[&str] = &[
    "dormancy",
    "senescence",
    "hardening_off",
    "maintenance",
    "acclimatization",
    "repotting_recovery",
    "dry_rest",
    "winter_rest",
    "foliage_dieback",
    "leaf_renewal",
];

/// The only phases in which watering reminders stop, each with the reason a grower is shown.
/// Winter rest is not one of them: its own text says "do not let it dry out", so it waters
/// less ([`REDUCED_WATERING_PHASES`]), not never. `dormancy` also covers `summer_dormancy`.
pub const WATERING_WITHHELD: &[(&str, &str)] = &[
    (
        "dry_rest",
        "dry rest: cacti and succulents are kept cool and almost dry through winter, which sets \
         their flower buds and prevents rot; watering resumes when the rest ends",
    ),
    (
        "leaf_renewal",
        "leaf renewal: a Lithops gets no water until the old leaf pair has shrivelled, or the \
         new pair rots or splits",
    ),
    (
        "dormancy",
        "dormancy: growth has stopped (often leafless, or a bulb resting); water is withheld \
         until it sprouts again",
    ),
];

/// Phases that water less, not never: the plant's own interval (learned, else its profile's)
/// times its care profile's winter multiplier, for the whole phase whatever the month.
pub const REDUCED_WATERING_PHASES: &[&str] = &["winter_rest"];

/// A phase name or key in the form the lists use (lower case, underscores).
fn phase_token(phase: &str) -> String {
    phase.trim().to_lowercase().replace([' ', '-'], "_")
}

/// Phase names as SQL `LIKE` patterns over a phase name or key in [`phase_token`]'s form
/// (lower case, spaces and hyphens as underscores), the underscore escaped (in `LIKE` it is any
/// one character): the due-list statements match with them what [`resting`] and
/// [`watering_withheld`] match here (`contains`). A `LIKE` costs about a tenth of the regular
/// expression it replaced, which PostgreSQL ran once per reminder row (loadtest/pages).
fn like_patterns_of<'a>(names: impl Iterator<Item = &'a str>) -> Vec<String> {
    names
        .map(|p| format!("%{}%", p.replace('_', "\\_")))
        .collect()
}

/// The resting phases as `LIKE` patterns (see [`like_patterns_of`]).
pub fn resting_like_patterns() -> Vec<String> {
    like_patterns_of(RESTING_PHASES.iter().copied())
}

/// The phases that withhold watering as `LIKE` patterns (see [`like_patterns_of`]).
pub fn watering_withheld_like_patterns() -> Vec<String> {
    like_patterns_of(WATERING_WITHHELD.iter().map(|(p, _)| *p))
}

/// Whether a plant in this phase rests (only pest checks; watering see [`watering_withheld`]).
pub fn resting(phase: Option<&str>) -> bool {
    phase.is_some_and(|p| {
        let p = phase_token(p);
        RESTING_PHASES.iter().any(|r| p.contains(r))
    })
}

/// Why watering is withheld in this phase (`None`: the plant is watered).
pub fn watering_withheld(phase: Option<&str>) -> Option<&'static str> {
    let p = phase_token(phase?);
    WATERING_WITHHELD
        .iter()
        .find(|(r, _)| p.contains(r))
        .map(|(_, why)| *why)
}

/// Whether this phase waters less (winter rest).
pub fn reduced_watering(phase: Option<&str>) -> bool {
    phase.is_some_and(|p| {
        let p = phase_token(p);
        REDUCED_WATERING_PHASES.iter().any(|r| p.contains(r))
    })
}

/// The garden's half of the globe (domain 2.8: winter is Dec–Feb in the north, Jun–Aug in the
/// south).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hemisphere {
    North,
    South,
}

/// IANA time zones south of the equator (whole areas, then single zones; `America/Argentina/…`
/// by prefix). A zone not listed, `UTC` or an unknown name reads as the north.
const SOUTHERN_AREAS: &[&str] = &["Australia/", "Antarctica/", "America/Argentina/"];
const SOUTHERN_ZONES: &[&str] = &[
    "Pacific/Auckland",
    "Pacific/Chatham",
    "Pacific/Fiji",
    "Pacific/Noumea",
    "Pacific/Tongatapu",
    "Pacific/Apia",
    "Pacific/Efate",
    "Pacific/Port_Moresby",
    "Pacific/Norfolk",
    "Pacific/Tahiti",
    "Pacific/Rarotonga",
    "Pacific/Easter",
    "America/Santiago",
    "America/Punta_Arenas",
    "America/Buenos_Aires",
    "America/Sao_Paulo",
    "America/Montevideo",
    "America/Asuncion",
    "America/La_Paz",
    "America/Lima",
    "America/Bahia",
    "America/Recife",
    "America/Fortaleza",
    "America/Maceio",
    "America/Belem",
    "America/Cuiaba",
    "America/Campo_Grande",
    "America/Porto_Velho",
    "America/Rio_Branco",
    "America/Manaus",
    "America/Guayaquil",
    "Africa/Johannesburg",
    "Africa/Maputo",
    "Africa/Windhoek",
    "Africa/Harare",
    "Africa/Lusaka",
    "Africa/Gaborone",
    "Africa/Maseru",
    "Africa/Mbabane",
    "Africa/Blantyre",
    "Africa/Lubumbashi",
    "Africa/Luanda",
    "Africa/Dar_es_Salaam",
    "Africa/Kigali",
    "Africa/Bujumbura",
    "Indian/Antananarivo",
    "Indian/Mauritius",
    "Indian/Reunion",
    "Indian/Mayotte",
    "Indian/Comoro",
    "Asia/Jakarta",
    "Asia/Makassar",
    "Asia/Jayapura",
    "Asia/Dili",
    "Atlantic/St_Helena",
    "Atlantic/Stanley",
    "Atlantic/South_Georgia",
];

impl Hemisphere {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::North => "north",
            Self::South => "south",
        }
    }

    /// The hemisphere an IANA time zone lies in; `None` for a zone not known to be southern
    /// (the caller's fallback is the north, where most gardens using the service are).
    pub fn of_timezone(tz: &str) -> Option<Self> {
        let tz = tz.trim();
        let south =
            SOUTHERN_AREAS.iter().any(|a| tz.starts_with(a)) || SOUTHERN_ZONES.contains(&tz);
        south.then_some(Self::South)
    }

    /// A month (1–12) as the northern calendar reads it: the same in the north, six months
    /// later in the south (a southern April is a northern October).
    pub fn shift_month(self, month: u8) -> u8 {
        match self {
            Self::North => month,
            Self::South => (month + 5) % 12 + 1,
        }
    }
}

/// Winter: December to February in the north, June to August in the south.
pub fn is_winter(day: Date, hemisphere: Hemisphere) -> bool {
    match hemisphere {
        Hemisphere::North => matches!(
            day.month(),
            Month::December | Month::January | Month::February
        ),
        Hemisphere::South => matches!(day.month(), Month::June | Month::July | Month::August),
    }
}

/// The watering interval on `day` (domain 2.8): the current phase's watering interval (of the
/// catalogue's phase definition) first, else the learned interval, else the profile's; times
/// the winter multiplier in the garden's winter, truncated.
pub fn watering_interval(
    phase_days: Option<i32>,
    base: i32,
    learned: Option<i32>,
    multiplier: f64,
    day: Date,
    hemisphere: Hemisphere,
) -> i32 {
    let days = phase_days
        .filter(|d| (1..=90).contains(d))
        .or(learned)
        .unwrap_or(base);
    if is_winter(day, hemisphere) {
        ((f64::from(days) * multiplier).trunc() as i32).max(1)
    } else {
        days
    }
}

/// The watering interval of a plant in a phase on `day`: in a phase that waters less (winter
/// rest) the plant's own interval (learned, else the profile's) times the winter multiplier
/// all through the phase, truncated; the phase's fixed interval is not used there, because one
/// figure cannot fit a maidenhair fern that must never dry out and a palm alike. In any other
/// phase [`watering_interval`].
#[allow(clippy::too_many_arguments)]
pub fn phase_watering_interval(
    phase: Option<&str>,
    phase_days: Option<i32>,
    base: i32,
    learned: Option<i32>,
    multiplier: f64,
    day: Date,
    hemisphere: Hemisphere,
) -> i32 {
    if reduced_watering(phase) {
        let own = learned.filter(|d| (1..=90).contains(d)).unwrap_or(base);
        ((f64::from(own) * multiplier.max(1.0)).trunc() as i32).max(1)
    } else {
        watering_interval(phase_days, base, learned, multiplier, day, hemisphere)
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
        let d = derive(Some(4), None, Some("Cactaceae"));
        assert_eq!(
            (d.preset.style, d.watering_days, d.source),
            ("cactus", 4, ProfileSource::Species)
        );
        let d = derive(None, Some("Ocimum basilicum"), Some("Lamiaceae"));
        assert_eq!(
            (d.preset.style, d.watering_days, d.source),
            ("herb_tropical", 5, ProfileSource::Family)
        );
        let d = derive(None, None, Some("Solanaceae"));
        assert_eq!(
            (d.preset.style, d.watering_days, d.source),
            ("tropical", 7, ProfileSource::Default)
        );
        let d = derive(None, None, None);
        assert_eq!(d.preset.style, "tropical");
        // Out-of-range species values are ignored.
        assert_eq!(derive(Some(0), None, None).watering_days, 7);
    }

    #[test]
    fn mediterranean_herbs_are_not_tropical() {
        // (scientific name, family, style): the species decides before its family.
        let table = [
            ("Salvia rosmarinus", "Lamiaceae", "mediterranean"),
            ("Rosmarinus officinalis", "Lamiaceae", "mediterranean"),
            ("Lavandula angustifolia", "Lamiaceae", "mediterranean"),
            ("Lavandula × intermedia", "Lamiaceae", "mediterranean"),
            ("Thymus vulgaris", "Lamiaceae", "mediterranean"),
            ("Origanum vulgare", "Lamiaceae", "mediterranean"),
            ("Salvia officinalis", "Lamiaceae", "mediterranean"),
            ("Satureja montana", "Lamiaceae", "mediterranean"),
            ("Ocimum basilicum", "Lamiaceae", "herb_tropical"),
            ("Mentha spicata", "Lamiaceae", "herb_tropical"),
            ("Salvia splendens", "Lamiaceae", "herb_tropical"),
            ("Satureja hortensis", "Lamiaceae", "herb_tropical"),
            ("Thymusia fakeus", "Lamiaceae", "herb_tropical"),
        ];
        for (name, family, style) in table {
            let d = derive(Some(7), Some(name), Some(family));
            assert_eq!(d.preset.style, style, "{name}");
        }
        // Rosemary winters at the mediterranean ×2.0 (tropical herbs ×1.5), feeds every 30 days.
        let d = derive(None, Some("Salvia rosmarinus"), Some("Lamiaceae"));
        assert_eq!(
            (
                d.watering_days,
                d.preset.winter_multiplier,
                d.preset.fertilizing_days
            ),
            (10, 2.0, 30)
        );
    }

    #[test]
    fn watering_in_winter() {
        use Hemisphere::{North, South};
        // (phase interval, base, learned, multiplier, day, hemisphere, expected)
        type Row = (Option<i32>, i32, Option<i32>, f64, Date, Hemisphere, i32);
        let table: &[Row] = &[
            // Cactus 21 d × 4.0 in January = 84; tropical 7 × 1.5 = 10.5 → 10; June unchanged.
            (None, 21, None, 4.0, date!(2026 - 01 - 15), North, 84),
            (None, 7, None, 1.5, date!(2026 - 12 - 01), North, 10),
            (None, 7, None, 1.5, date!(2026 - 06 - 01), North, 7),
            // Learned interval replaces the base.
            (None, 7, Some(6), 1.5, date!(2026 - 02 - 28), North, 9),
            // The south: winter is June to August, January is summer.
            (None, 7, None, 1.5, date!(2026 - 07 - 10), South, 10),
            (None, 7, None, 1.5, date!(2026 - 01 - 15), South, 7),
            (None, 21, None, 4.0, date!(2026 - 08 - 31), South, 84),
            (None, 21, None, 4.0, date!(2026 - 09 - 01), South, 21),
            // The phase's own interval comes first (before the learned and the profile's).
            (Some(3), 7, Some(6), 1.5, date!(2026 - 06 - 01), North, 3),
            (Some(2), 7, None, 1.5, date!(2026 - 01 - 15), North, 3),
            (Some(0), 7, None, 1.5, date!(2026 - 06 - 01), North, 7),
        ];
        for (phase, base, learned, m, day, h, want) in table {
            assert_eq!(
                watering_interval(*phase, *base, *learned, *m, *day, *h),
                *want,
                "{phase:?} {base} {learned:?} {m} {day} {h:?}"
            );
        }
    }

    #[test]
    fn hemisphere_from_time_zone() {
        use Hemisphere::South;
        for tz in [
            "Australia/Sydney",
            "Pacific/Auckland",
            "America/Argentina/Buenos_Aires",
            "America/Santiago",
            "Africa/Johannesburg",
            "America/Sao_Paulo",
        ] {
            assert_eq!(Hemisphere::of_timezone(tz), Some(South), "{tz}");
        }
        for tz in [
            "Europe/Berlin",
            "America/New_York",
            "UTC",
            "Asia/Tokyo",
            "nowhere",
        ] {
            assert_eq!(Hemisphere::of_timezone(tz), None, "{tz}");
        }
        assert_eq!(Hemisphere::North.shift_month(3), 3);
        assert_eq!(Hemisphere::South.shift_month(3), 9);
        assert_eq!(Hemisphere::South.shift_month(9), 3);
        assert_eq!(Hemisphere::South.shift_month(7), 1);
        assert_eq!(Hemisphere::South.shift_month(12), 6);
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
        for p in [
            "dry_rest",
            "winter_rest",
            "foliage_dieback",
            "leaf_renewal",
            "summer_dormancy",
        ] {
            assert!(resting(Some(p)), "{p}");
        }
        let like = resting_like_patterns();
        for p in [
            "%dry\\_rest%",
            "%winter\\_rest%",
            "%foliage\\_dieback%",
            "%leaf\\_renewal%",
        ] {
            assert!(like.iter().any(|r| r == p), "{p} in {like:?}");
        }
        assert!(!resting(Some("flowering")));
        assert!(!resting(Some("rooting")));
        assert!(!resting(Some("vegetative")));
        assert!(!resting(None));
    }

    #[test]
    fn only_dry_rest_leaf_renewal_and_dormancy_withhold_watering() {
        // (phase, withheld, reason starts with, waters less)
        let table = [
            ("dry_rest", true, "dry rest", false),
            ("Dry rest", true, "dry rest", false),
            ("leaf_renewal", true, "leaf renewal", false),
            ("dormancy", true, "dormancy", false),
            ("summer_dormancy", true, "dormancy", false),
            ("fx_dry_rest", true, "dry rest", false),
            // Winter rest waters less, never not at all; the others water as usual.
            ("winter_rest", false, "", true),
            ("Winter-rest", false, "", true),
            ("foliage_dieback", false, "", false),
            ("senescence", false, "", false),
            ("hardening_off", false, "", false),
            ("vegetative", false, "", false),
        ];
        for (phase, withheld, why, less) in table {
            let got = watering_withheld(Some(phase));
            assert_eq!(got.is_some(), withheld, "{phase}");
            assert!(got.unwrap_or("").starts_with(why), "{phase}: {got:?}");
            assert_eq!(reduced_watering(Some(phase)), less, "{phase}");
        }
        assert_eq!(watering_withheld(None), None);
        assert_eq!(
            watering_withheld_like_patterns(),
            ["%dry\\_rest%", "%leaf\\_renewal%", "%dormancy%"]
        );
    }

    #[test]
    fn winter_rest_waters_at_the_plants_interval_times_its_multiplier() {
        use Hemisphere::North;
        // (phase, phase interval, base, learned, multiplier, day, expected)
        type Row = (
            Option<&'static str>,
            Option<i32>,
            i32,
            Option<i32>,
            f64,
            Date,
            i32,
        );
        let table: &[Row] = &[
            // Maidenhair fern (fern 4 d × 1.5) in winter rest: every 6 days, in November too,
            // not the phase's flat 10 (nor 15 in January).
            (
                Some("winter_rest"),
                Some(10),
                4,
                None,
                1.5,
                date!(2026 - 11 - 10),
                6,
            ),
            (
                Some("winter_rest"),
                Some(10),
                4,
                None,
                1.5,
                date!(2026 - 01 - 10),
                6,
            ),
            // The learned interval comes first: 5 × 1.5 = 7.
            (
                Some("winter_rest"),
                Some(10),
                4,
                Some(5),
                1.5,
                date!(2026 - 01 - 10),
                7,
            ),
            // A palm (tropical 7 × 1.5) → 10; a multiplier below 1 never waters more often.
            (
                Some("winter_rest"),
                Some(10),
                7,
                None,
                1.5,
                date!(2026 - 02 - 01),
                10,
            ),
            (
                Some("winter_rest"),
                Some(10),
                7,
                None,
                0.5,
                date!(2026 - 02 - 01),
                7,
            ),
            // Other phases: the phase's own interval, times the multiplier only in winter.
            (
                Some("vegetative"),
                Some(3),
                4,
                None,
                1.5,
                date!(2026 - 06 - 01),
                3,
            ),
            (
                Some("foliage_dieback"),
                Some(14),
                4,
                None,
                1.5,
                date!(2026 - 06 - 01),
                14,
            ),
            (None, None, 4, None, 1.5, date!(2026 - 01 - 10), 6),
        ];
        for (phase, days, base, learned, m, day, want) in table {
            assert_eq!(
                phase_watering_interval(*phase, *days, *base, *learned, *m, *day, North),
                *want,
                "{phase:?} {days:?} {base} {learned:?} {m} {day}"
            );
        }
        // The rest is longer than the plant's summer interval, never shorter.
        let summer = watering_interval(None, 4, None, 1.5, date!(2026 - 06 - 01), North);
        let rest = phase_watering_interval(
            Some("winter_rest"),
            Some(10),
            4,
            None,
            1.5,
            date!(2026 - 06 - 01),
            North,
        );
        assert!(rest > summer, "{rest} > {summer}");
    }
}
