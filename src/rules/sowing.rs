//! The sowing calendar of one species in one year (domain 2.9), from the flat species fields
//! (indoor sowing, direct sowing, bloom and harvest months) and the garden's frost dates.
//!
//! The months of the catalogue are written for the reference last frost of **May 1** (the
//! domain's default). A garden whose hardiness zone has a later or earlier typical last frost
//! sees every bar moved by the difference in days (zone 5a, last frost May 25: 24 days later;
//! zone 9a, March 25: 37 days earlier). A zone without curated frost dates, or a garden without
//! a zone, uses the defaults (last frost May 1, Eisheilige May 15). The Eisheilige stand for
//! the day frost-sensitive plants may go out: in the default they come 14 days after the last
//! frost, and a zone with its own last frost keeps that margin (zone 9a, March 25: April 8;
//! zone 5a, May 25: June 8) instead of the Central European May 15.
//!
//! Bars, in this order:
//! 1. `indoor_sowing`: each run of indoor months, moved, clipped to Jan 1 and to the day before
//!    the last frost;
//! 2. `outdoor_planting`: each run of direct-sow months, moved; a start on or before the latest
//!    indoor end moves to the day after it; frost-sensitive species start after the Eisheilige
//!    (May 15, or the zone's last frost + 14 days); an empty bar is dropped;
//! 3. `harvest` (or `flowering` for an ornamental: no harvest allowed, bloom months given): each
//!    run, moved; a bar that starts on or before the latest sowing end starts the day after it,
//!    unless the bar lies wholly before the sowing (a year-crossing harvest is kept unchanged);
//! 4. `growth`: the gap between the latest sowing end and the next terminal bar.
//!
//! Every bar is clipped to the requested year. Month runs (2.9a): sorted, deduplicated,
//! consecutive months grouped; a run starting in January and one ending in December merge into
//! a wrapping run, drawn from its start month to Dec 31.
//!
//! **Hemisphere.** The catalogue's months are written for the northern hemisphere. In a
//! southern garden every catalogue month moves by six months (January becomes July, May
//! becomes November) and the reference last frost is **November 1**; the harvest of a crop sown
//! in spring (October–December) then falls in January–March, which the terminal rule above
//! keeps as a year-crossing bar. **Own frost dates.** A garden that sets its own average last
//! spring frost (`MM-DD`) has every bar moved by its difference to the reference of its
//! hemisphere; that is the frost source the calendar prefers. A hardiness zone is only an
//! estimate (a USDA zone is the average annual extreme winter minimum, not a frost date), used
//! when the garden has no own last frost, and only in the northern hemisphere, for which the
//! zones' typical dates are written.

use serde::Serialize;
use time::{Date, Duration, Month};

/// What the calendar needs of a species.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SowingInput {
    pub indoor_months: Vec<u8>,
    pub direct_sow_months: Vec<u8>,
    pub bloom_months: Vec<u8>,
    pub harvest_months: Vec<u8>,
    /// `frost_sensitivity` = `sensitive`.
    pub frost_sensitive: bool,
    /// Ornamental: harvest not allowed; its terminal bars are flowering.
    pub ornamental: bool,
}

/// The half of the globe a garden lies in (its seasons).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Hemisphere {
    #[default]
    North,
    South,
}

impl Hemisphere {
    pub const NAMES: &'static [&'static str] = &["north", "south"];

    pub fn parse(raw: &str) -> Option<Self> {
        match raw {
            "north" => Some(Self::North),
            "south" => Some(Self::South),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::North => "north",
            Self::South => "south",
        }
    }

    /// A garden's hemisphere: its setting (`north`/`south`); unset, the hemisphere of the
    /// garden's time zone (`rules::care::Hemisphere::of_timezone`: `Australia/…`,
    /// `Pacific/Auckland`, … are south); else the north.
    pub fn of_garden(setting: Option<&str>, timezone: Option<&str>) -> Self {
        setting.and_then(Self::parse).unwrap_or_else(|| {
            match timezone.and_then(crate::rules::care::Hemisphere::of_timezone) {
                Some(crate::rules::care::Hemisphere::South) => Self::South,
                _ => Self::North,
            }
        })
    }

    /// The month of this hemisphere that matches a catalogue (northern) month: the same in
    /// the north, six months on in the south (1 → 7, 7 → 1, 12 → 6).
    pub fn month(self, catalogue_month: u8) -> u8 {
        match self {
            Self::North => catalogue_month,
            Self::South if (1..=12).contains(&catalogue_month) => (catalogue_month + 5) % 12 + 1,
            Self::South => catalogue_month,
        }
    }

    /// The reference last frost the catalogue months stand for, as `(month, day)`: May 1 in
    /// the north (domain 2.9), six months on (November 1) in the south.
    pub fn reference_last_frost(self) -> (u8, u8) {
        match self {
            Self::North => (5, 1),
            Self::South => (11, 1),
        }
    }
}

/// Why a month-day is refused (`MM-DD`, a day every year has).
pub fn check_month_day(raw: &str) -> Result<(u8, u8), &'static str> {
    let b = raw.as_bytes();
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    if b.len() != 5 || b[2] != b'-' || !digits(0..2) || !digits(3..5) {
        return Err("must be a month and day MM-DD, e.g. 04-20");
    }
    let (m, d) = (
        (b[0] - b'0') * 10 + (b[1] - b'0'),
        (b[3] - b'0') * 10 + (b[4] - b'0'),
    );
    if (m, d) == (2, 29) {
        return Err("02-29 is not a day of every year: use 02-28 or 03-01");
    }
    // 2026 is a common year: a month-day that exists in it exists every year.
    if md(2026, m, d).is_none() {
        return Err("is not a day of the calendar (month 01-12, a day the month has)");
    }
    Ok((m, d))
}

/// The frost dates used, in the requested year.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Frost {
    pub hemisphere: Hemisphere,
    #[serde(with = "crate::values::dates::iso_date")]
    pub last: Date,
    #[serde(with = "crate::values::dates::iso_date")]
    pub eisheilige: Date,
    #[serde(with = "crate::values::dates::iso_date::option")]
    pub first: Option<Date>,
}

/// One bar of the calendar.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Bar {
    pub phase: &'static str,
    pub color: &'static str,
    #[serde(with = "crate::values::dates::iso_date")]
    pub start_date: Date,
    #[serde(with = "crate::values::dates::iso_date")]
    pub end_date: Date,
}

pub const INDOOR: (&str, &str) = ("indoor_sowing", "#FDD835");
pub const OUTDOOR: (&str, &str) = ("outdoor_planting", "#66BB6A");
pub const HARVEST: (&str, &str) = ("harvest", "#FFA726");
pub const FLOWERING: (&str, &str) = ("flowering", "#EC407A");
pub const GROWTH: (&str, &str) = ("growth", "#42A5F5");

fn md(year: i32, month: u8, day: u8) -> Option<Date> {
    Date::from_calendar_date(year, Month::try_from(month).ok()?, day).ok()
}

/// Parses `MM-DD` into that day of `year` (Feb 29 in a common year: none).
pub fn month_day(year: i32, raw: &str) -> Option<Date> {
    let (m, d) = raw.split_once('-')?;
    md(year, m.parse().ok()?, d.parse().ok()?)
}

/// Days from the last frost to the day frost-sensitive plants go out: the default's May 1 to
/// the Eisheilige of May 15 (domain 2.9).
pub const FROST_SAFE_MARGIN_DAYS: i64 = 14;

/// The frost dates of a northern year (see [`frost_in`]).
pub fn frost(year: i32, last_md: Option<&str>, first_md: Option<&str>) -> Option<Frost> {
    frost_in(year, Hemisphere::North, last_md, first_md)
}

/// The frost dates of a year: the given `MM-DD` last frost (the garden's own, or a zone's
/// estimate) where there is one, else the hemisphere's reference (May 1 north, November 1
/// south); the Eisheilige, the day frost-sensitive plants may go out, are the last frost plus
/// [`FROST_SAFE_MARGIN_DAYS`] (the default's May 1 → May 15); the first frost has no default.
pub fn frost_in(
    year: i32,
    hemisphere: Hemisphere,
    last_md: Option<&str>,
    first_md: Option<&str>,
) -> Option<Frost> {
    let (rm, rd) = hemisphere.reference_last_frost();
    let last = last_md
        .and_then(|m| month_day(year, m))
        .or_else(|| md(year, rm, rd))?;
    Some(Frost {
        hemisphere,
        last,
        eisheilige: last.checked_add(Duration::days(FROST_SAFE_MARGIN_DAYS))?,
        first: first_md.and_then(|m| month_day(year, m)),
    })
}

/// Month runs (2.9a): `(first, last)`; a wrapping run has `first > last`.
pub fn month_runs(months: &[u8]) -> Vec<(u8, u8)> {
    let mut m: Vec<u8> = months
        .iter()
        .copied()
        .filter(|m| (1..=12).contains(m))
        .collect();
    m.sort_unstable();
    m.dedup();
    let mut runs: Vec<(u8, u8)> = Vec::new();
    for x in m {
        match runs.last_mut() {
            Some(r) if r.1 + 1 == x => r.1 = x,
            _ => runs.push((x, x)),
        }
    }
    if runs.len() > 1 && runs[0].0 == 1 && runs.last().is_some_and(|r| r.1 == 12) {
        let first = runs.remove(0);
        if let Some(last) = runs.last_mut() {
            last.1 = first.1;
        }
    }
    runs
}

fn last_of_month(year: i32, month: u8) -> Option<Date> {
    let m = Month::try_from(month).ok()?;
    md(year, month, m.length(year))
}

/// The days of a run in `year`, moved by `shift` days (a wrapping run ends on Dec 31).
fn run_span(year: i32, run: (u8, u8), shift: i64) -> Option<(Date, Date)> {
    let start = md(year, run.0, 1)?;
    let end = if run.0 > run.1 {
        md(year, 12, 31)?
    } else {
        last_of_month(year, run.1)?
    };
    Some((
        start.checked_add(Duration::days(shift))?,
        end.checked_add(Duration::days(shift))?,
    ))
}

fn bar(kind: (&'static str, &'static str), start: Date, end: Date) -> Bar {
    Bar {
        phase: kind.0,
        color: kind.1,
        start_date: start,
        end_date: end,
    }
}

/// The bars of one species in `year` (see the module text).
pub fn bars(input: &SowingInput, year: i32, frost: &Frost) -> Vec<Bar> {
    let (rm, rd) = frost.hemisphere.reference_last_frost();
    let (Some(jan1), Some(dec31), Some(reference)) =
        (md(year, 1, 1), md(year, 12, 31), md(year, rm, rd))
    else {
        return Vec::new();
    };
    let shift = (frost.last - reference).whole_days();
    let local =
        |months: &[u8]| -> Vec<u8> { months.iter().map(|m| frost.hemisphere.month(*m)).collect() };
    let clip = |(s, e): (Date, Date)| (s.max(jan1), e.min(dec31));
    let mut out = Vec::new();

    let mut indoor_end: Option<Date> = None;
    for run in month_runs(&local(&input.indoor_months)) {
        let Some(span) = run_span(year, run, shift) else {
            continue;
        };
        let (s, e) = clip(span);
        let e = e.min(frost.last.previous_day().unwrap_or(frost.last));
        if s <= e {
            indoor_end = Some(indoor_end.map_or(e, |x| x.max(e)));
            out.push(bar(INDOOR, s, e));
        }
    }
    for run in month_runs(&local(&input.direct_sow_months)) {
        let Some(span) = run_span(year, run, shift) else {
            continue;
        };
        let (mut s, e) = clip(span);
        if let Some(ie) = indoor_end
            && s <= ie
        {
            s = ie.next_day().unwrap_or(ie);
        }
        if input.frost_sensitive {
            s = s.max(frost.eisheilige.next_day().unwrap_or(frost.eisheilige));
        }
        if s <= e {
            out.push(bar(OUTDOOR, s, e));
        }
    }
    let sowing_start = out.iter().map(|b| b.start_date).min();
    let sowing_end = out.iter().map(|b| b.end_date).max();

    let (terminal, months) = if input.ornamental && !input.bloom_months.is_empty() {
        (FLOWERING, &input.bloom_months)
    } else {
        (HARVEST, &input.harvest_months)
    };
    let mut terminals = Vec::new();
    for run in month_runs(&local(months)) {
        let Some(span) = run_span(year, run, shift) else {
            continue;
        };
        let (mut s, e) = clip(span);
        let wholly_before = sowing_start.is_some_and(|ss| e < ss);
        if let Some(se) = sowing_end
            && !wholly_before
            && s <= se
        {
            s = se.next_day().unwrap_or(se);
        }
        if s <= e {
            terminals.push(bar(terminal, s, e));
        }
    }
    if let Some(se) = sowing_end
        && let Some(next) = terminals
            .iter()
            .filter(|t| t.start_date > se)
            .map(|t| t.start_date)
            .min()
        && let (Some(gs), Some(ge)) = (se.next_day(), next.previous_day())
        && gs <= ge
    {
        out.push(bar(GROWTH, gs, ge));
    }
    out.extend(terminals);
    out.sort_by_key(|b| (b.start_date, b.end_date));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::date;

    #[test]
    fn month_runs_group_and_wrap() {
        for (months, want) in [
            (vec![], vec![]),
            (vec![3, 4, 5], vec![(3, 5)]),
            (vec![5, 3, 4, 4], vec![(3, 5)]),
            (vec![3, 4, 7, 8], vec![(3, 4), (7, 8)]),
            // 8–12 + 1–3 wraps into one run (8, 3).
            (vec![1, 2, 3, 8, 9, 10, 11, 12], vec![(8, 3)]),
            (vec![1, 12], vec![(12, 1)]),
            (vec![0, 13, 6], vec![(6, 6)]),
        ] {
            assert_eq!(month_runs(&months), want, "{months:?}");
        }
    }

    fn tomato() -> SowingInput {
        // Indoor Feb–Mar, direct sow May, harvest Jul–Sep, frost-sensitive.
        SowingInput {
            indoor_months: vec![2, 3],
            direct_sow_months: vec![5],
            bloom_months: vec![],
            harvest_months: vec![7, 8, 9],
            frost_sensitive: true,
            ornamental: false,
        }
    }

    fn spans(bars: &[Bar]) -> Vec<(&'static str, Date, Date)> {
        bars.iter()
            .map(|b| (b.phase, b.start_date, b.end_date))
            .collect()
    }

    /// The same species per zone: the curated last frosts of the seed (5a 05-25, 7a 05-10,
    /// 7b 04-30, 9a 03-25) and a zone without curated dates (the May 1 default).
    #[test]
    fn tomato_per_zone() {
        type Case<'a> = (&'a str, Option<&'a str>, [(&'a str, Date, Date); 4]);
        let cases: &[Case<'_>] = &[
            // Default: shift 0. Indoor Feb 1–Mar 31; outdoor May 1–31 but after the
            // Eisheilige (May 15) → May 16–31; growth Jun 1–30; harvest Jul 1–Sep 30.
            (
                "none",
                None,
                [
                    (
                        "indoor_sowing",
                        date!(2026 - 02 - 01),
                        date!(2026 - 03 - 31),
                    ),
                    (
                        "outdoor_planting",
                        date!(2026 - 05 - 16),
                        date!(2026 - 05 - 31),
                    ),
                    ("growth", date!(2026 - 06 - 01), date!(2026 - 06 - 30)),
                    ("harvest", date!(2026 - 07 - 01), date!(2026 - 09 - 30)),
                ],
            ),
            // 5a, last frost May 25: shift +24. Indoor Feb 25–Apr 24; outdoor May 25–Jun 24
            // → after the zone's Eisheilige (Jun 8) Jun 9–24; growth Jun 25–Jul 24;
            // harvest Jul 25–Oct 24.
            (
                "5a",
                Some("05-25"),
                [
                    (
                        "indoor_sowing",
                        date!(2026 - 02 - 25),
                        date!(2026 - 04 - 24),
                    ),
                    (
                        "outdoor_planting",
                        date!(2026 - 06 - 09),
                        date!(2026 - 06 - 24),
                    ),
                    ("growth", date!(2026 - 06 - 25), date!(2026 - 07 - 24)),
                    ("harvest", date!(2026 - 07 - 25), date!(2026 - 10 - 24)),
                ],
            ),
            // 7a, May 10: shift +9. Indoor Feb 10–Apr 9; outdoor May 10–Jun 9 → after the
            // zone's Eisheilige (May 24) May 25–Jun 9; growth Jun 10–Jul 9; harvest Jul 10–Oct 9.
            (
                "7a",
                Some("05-10"),
                [
                    (
                        "indoor_sowing",
                        date!(2026 - 02 - 10),
                        date!(2026 - 04 - 09),
                    ),
                    (
                        "outdoor_planting",
                        date!(2026 - 05 - 25),
                        date!(2026 - 06 - 09),
                    ),
                    ("growth", date!(2026 - 06 - 10), date!(2026 - 07 - 09)),
                    ("harvest", date!(2026 - 07 - 10), date!(2026 - 10 - 09)),
                ],
            ),
            // 9a, March 25: shift −37. Indoor Dec 26 (prev. year) → clipped to Jan 1 … Feb 22;
            // outdoor Mar 25–Apr 24 → after the zone's Eisheilige (Apr 8) Apr 9–24 (the
            // Central European May 15 used to drop it); growth Apr 25 … May 24; harvest
            // May 25–Aug 24.
            (
                "9a",
                Some("03-25"),
                [
                    (
                        "indoor_sowing",
                        date!(2026 - 01 - 01),
                        date!(2026 - 02 - 22),
                    ),
                    (
                        "outdoor_planting",
                        date!(2026 - 04 - 09),
                        date!(2026 - 04 - 24),
                    ),
                    ("growth", date!(2026 - 04 - 25), date!(2026 - 05 - 24)),
                    ("harvest", date!(2026 - 05 - 25), date!(2026 - 08 - 24)),
                ],
            ),
        ];
        for (zone, last, want) in cases {
            let f = frost(2026, *last, None).expect("frost");
            let got = spans(&bars(&tomato(), 2026, &f));
            let want: Vec<_> = want.iter().filter(|w| w.0 != "-").copied().collect();
            assert_eq!(got, want, "zone {zone}");
        }
    }

    #[test]
    fn indoor_sowing_ends_the_day_before_the_last_frost() {
        // Indoor Mar–May with the default frost: Mar 1 … Apr 30 (not into May).
        let input = SowingInput {
            indoor_months: vec![3, 4, 5],
            ..SowingInput::default()
        };
        let f = frost(2026, None, None).expect("frost");
        assert_eq!(
            spans(&bars(&input, 2026, &f)),
            vec![(
                "indoor_sowing",
                date!(2026 - 03 - 01),
                date!(2026 - 04 - 30)
            )]
        );
    }

    #[test]
    fn ornamentals_flower_and_year_crossing_harvest_stays() {
        // Ornamental with bloom Jun–Aug, direct sow Apr: outdoor Apr 1–30, growth May 1–31,
        // flowering Jun 1–Aug 31.
        let rose = SowingInput {
            direct_sow_months: vec![4],
            bloom_months: vec![6, 7, 8],
            harvest_months: vec![9],
            ornamental: true,
            ..SowingInput::default()
        };
        let f = frost(2026, None, None).expect("frost");
        assert_eq!(
            spans(&bars(&rose, 2026, &f)),
            vec![
                (
                    "outdoor_planting",
                    date!(2026 - 04 - 01),
                    date!(2026 - 04 - 30)
                ),
                ("growth", date!(2026 - 05 - 01), date!(2026 - 05 - 31)),
                ("flowering", date!(2026 - 06 - 01), date!(2026 - 08 - 31)),
            ]
        );
        // Garlic: sown in October, harvested in July: the harvest lies wholly before the
        // sowing and is kept; there is no terminal after the sowing, so no growth bar.
        let garlic = SowingInput {
            direct_sow_months: vec![10],
            harvest_months: vec![7],
            ..SowingInput::default()
        };
        assert_eq!(
            spans(&bars(&garlic, 2026, &f)),
            vec![
                ("harvest", date!(2026 - 07 - 01), date!(2026 - 07 - 31)),
                (
                    "outdoor_planting",
                    date!(2026 - 10 - 01),
                    date!(2026 - 10 - 31)
                ),
            ]
        );
    }

    #[test]
    fn frost_dates() {
        let f = frost(2026, Some("04-20"), Some("10-30")).expect("frost");
        assert_eq!(f.last, date!(2026 - 04 - 20));
        // The zone's last frost moves the Eisheilige with it (14 days on).
        assert_eq!(f.eisheilige, date!(2026 - 05 - 04));
        assert_eq!(f.first, Some(date!(2026 - 10 - 30)));
        let d = frost(2026, Some("bad"), None).expect("frost");
        assert_eq!(d.last, date!(2026 - 05 - 01));
        assert_eq!(d.eisheilige, date!(2026 - 05 - 15));
        let z = frost(2026, Some("03-25"), None).expect("frost");
        assert_eq!(z.eisheilige, date!(2026 - 04 - 08));
        assert_eq!(d.first, None);
    }
    #[test]
    fn catalogue_months_move_six_months_in_the_south() {
        for (m, north, south) in [
            (1, 1, 7),
            (5, 5, 11),
            (6, 6, 12),
            (7, 7, 1),
            (12, 12, 6),
            (0, 0, 0),
        ] {
            assert_eq!(Hemisphere::North.month(m), north, "{m}");
            assert_eq!(Hemisphere::South.month(m), south, "{m}");
        }
    }

    #[test]
    fn a_gardens_hemisphere() {
        for (setting, tz, want) in [
            (None, None, Hemisphere::North),
            (None, Some("Europe/Berlin"), Hemisphere::North),
            (None, Some("Australia/Sydney"), Hemisphere::South),
            (None, Some("Pacific/Auckland"), Hemisphere::South),
            (None, Some("UTC"), Hemisphere::North),
            (Some("north"), Some("Australia/Sydney"), Hemisphere::North),
            (Some("south"), Some("Europe/Berlin"), Hemisphere::South),
            (Some("east"), None, Hemisphere::North),
        ] {
            assert_eq!(
                Hemisphere::of_garden(setting, tz),
                want,
                "{setting:?} {tz:?}"
            );
        }
    }

    #[test]
    fn month_days_that_do_not_exist_are_refused() {
        for (raw, ok) in [
            ("04-20", Some((4, 20))),
            ("12-31", Some((12, 31))),
            ("01-01", Some((1, 1))),
            ("02-28", Some((2, 28))),
            ("02-29", None),
            ("02-30", None),
            ("04-31", None),
            ("13-01", None),
            ("00-10", None),
            ("05-00", None),
            ("5-1", None),
            ("05/01", None),
            ("2026-05-01", None),
            ("", None),
            ("ab-cd", None),
        ] {
            assert_eq!(check_month_day(raw).ok(), ok, "{raw}");
        }
    }

    #[test]
    fn frost_defaults_per_hemisphere() {
        let n = frost_in(2026, Hemisphere::North, None, None).expect("frost");
        assert_eq!(
            (n.last, n.eisheilige),
            (date!(2026 - 05 - 01), date!(2026 - 05 - 15))
        );
        let s = frost_in(2026, Hemisphere::South, None, None).expect("frost");
        assert_eq!(
            (s.last, s.eisheilige),
            (date!(2026 - 11 - 01), date!(2026 - 11 - 15))
        );
        let own = frost_in(2026, Hemisphere::South, Some("10-01"), Some("04-15")).expect("f");
        assert_eq!(own.last, date!(2026 - 10 - 01));
        assert_eq!(own.eisheilige, date!(2026 - 10 - 15));
        assert_eq!(own.first, Some(date!(2026 - 04 - 15)));
    }

    /// Both hemispheres, the garden's own frost dates, and bars crossing the year's end.
    #[test]
    fn hemispheres_and_own_frost_dates() {
        type Case<'a> = (
            &'a str,
            SowingInput,
            Hemisphere,
            Option<&'a str>,
            Vec<(&'a str, Date, Date)>,
        );
        // Lettuce-like: direct sow March, harvest May–August (north).
        let lettuce = SowingInput {
            direct_sow_months: vec![3],
            harvest_months: vec![5, 6, 7, 8],
            ..SowingInput::default()
        };
        let garlic = SowingInput {
            direct_sow_months: vec![10],
            harvest_months: vec![7],
            ..SowingInput::default()
        };
        let cases: Vec<Case<'_>> = vec![
            // South, reference Nov 1 (shift 0): months → indoor Aug–Sep, direct Nov, harvest
            // Jan–Mar. Indoor Aug 1–Sep 30; outdoor Nov 1–30 after the Eisheilige (Nov 15) →
            // Nov 16–30; the harvest Jan 1–Mar 31 lies wholly before the sowing (the crop of
            // last spring's sowing) and is kept; no terminal after Nov 30, so no growth bar.
            (
                "south default",
                tomato(),
                Hemisphere::South,
                None,
                vec![
                    ("harvest", date!(2026 - 01 - 01), date!(2026 - 03 - 31)),
                    (
                        "indoor_sowing",
                        date!(2026 - 08 - 01),
                        date!(2026 - 09 - 30),
                    ),
                    (
                        "outdoor_planting",
                        date!(2026 - 11 - 16),
                        date!(2026 - 11 - 30),
                    ),
                ],
            ),
            // South, own last frost Oct 1: shift Oct 1 − Nov 1 = −31 days. Indoor Aug 1–Sep 30
            // → Jul 1–Aug 30; outdoor Nov 1–30 → Oct 1–30, after Oct 15 → Oct 16–30; harvest
            // Jan 1–Mar 31 → Dec 1 (last year) … Feb 28 → clipped to Jan 1–Feb 28.
            (
                "south own 10-01",
                tomato(),
                Hemisphere::South,
                Some("10-01"),
                vec![
                    ("harvest", date!(2026 - 01 - 01), date!(2026 - 02 - 28)),
                    (
                        "indoor_sowing",
                        date!(2026 - 07 - 01),
                        date!(2026 - 08 - 30),
                    ),
                    (
                        "outdoor_planting",
                        date!(2026 - 10 - 16),
                        date!(2026 - 10 - 30),
                    ),
                ],
            ),
            // North, own last frost Apr 10: shift −21. Indoor Feb 1–Mar 31 → Jan 11–Mar 10;
            // outdoor May 1–31 → Apr 10–May 10, after Apr 24 → Apr 25–May 10; harvest
            // Jul 1–Sep 30 → Jun 10–Sep 9; growth May 11–Jun 9.
            (
                "north own 04-10",
                tomato(),
                Hemisphere::North,
                Some("04-10"),
                vec![
                    (
                        "indoor_sowing",
                        date!(2026 - 01 - 11),
                        date!(2026 - 03 - 10),
                    ),
                    (
                        "outdoor_planting",
                        date!(2026 - 04 - 25),
                        date!(2026 - 05 - 10),
                    ),
                    ("growth", date!(2026 - 05 - 11), date!(2026 - 06 - 09)),
                    ("harvest", date!(2026 - 06 - 10), date!(2026 - 09 - 09)),
                ],
            ),
            // South: direct March → September; harvest May–Aug → Nov–Feb, a run wrapping the
            // year (11, 2), drawn Nov 1–Dec 31; growth Oct 1–31 between them.
            (
                "south wrap",
                lettuce.clone(),
                Hemisphere::South,
                None,
                vec![
                    (
                        "outdoor_planting",
                        date!(2026 - 09 - 01),
                        date!(2026 - 09 - 30),
                    ),
                    ("growth", date!(2026 - 10 - 01), date!(2026 - 10 - 31)),
                    ("harvest", date!(2026 - 11 - 01), date!(2026 - 12 - 31)),
                ],
            ),
            // North, the same lettuce: Mar 1–31, growth Apr, harvest May 1–Aug 31.
            (
                "north lettuce",
                lettuce,
                Hemisphere::North,
                None,
                vec![
                    (
                        "outdoor_planting",
                        date!(2026 - 03 - 01),
                        date!(2026 - 03 - 31),
                    ),
                    ("growth", date!(2026 - 04 - 01), date!(2026 - 04 - 30)),
                    ("harvest", date!(2026 - 05 - 01), date!(2026 - 08 - 31)),
                ],
            ),
            // South garlic: sown in April (October north), harvested in January (July north).
            (
                "south garlic",
                garlic,
                Hemisphere::South,
                None,
                vec![
                    ("harvest", date!(2026 - 01 - 01), date!(2026 - 01 - 31)),
                    (
                        "outdoor_planting",
                        date!(2026 - 04 - 01),
                        date!(2026 - 04 - 30),
                    ),
                ],
            ),
        ];
        for (name, input, hemisphere, last, want) in cases {
            let f = frost_in(2026, hemisphere, last, None).expect("frost");
            assert_eq!(spans(&bars(&input, 2026, &f)), want, "{name}");
        }
    }
}
