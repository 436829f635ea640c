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

/// The frost dates used, in the requested year.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Frost {
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

/// The frost dates of a year: the zone's curated `MM-DD` values where given, else May 1 (last
/// frost); the Eisheilige are May 15 by default and the zone's last frost plus
/// [`FROST_SAFE_MARGIN_DAYS`] where the zone gives one; the first frost has no default.
pub fn frost(year: i32, last_md: Option<&str>, first_md: Option<&str>) -> Option<Frost> {
    let zone_last = last_md.and_then(|m| month_day(year, m));
    Some(Frost {
        last: zone_last.or_else(|| md(year, 5, 1))?,
        eisheilige: match zone_last {
            Some(l) => l + Duration::days(FROST_SAFE_MARGIN_DAYS),
            None => md(year, 5, 15)?,
        },
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
    let (Some(jan1), Some(dec31), Some(reference)) =
        (md(year, 1, 1), md(year, 12, 31), md(year, 5, 1))
    else {
        return Vec::new();
    };
    let shift = (frost.last - reference).whole_days();
    let clip = |(s, e): (Date, Date)| (s.max(jan1), e.min(dec31));
    let mut out = Vec::new();

    let mut indoor_end: Option<Date> = None;
    for run in month_runs(&input.indoor_months) {
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
    for run in month_runs(&input.direct_sow_months) {
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
    for run in month_runs(months) {
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
}
