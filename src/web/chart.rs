//! A sensor's chart, drawn on the server as inline SVG: the hourly average as a line over the
//! band from each hour's minimum to its maximum, the value axis with the unit, and the days of
//! the window as the garden's time zone counts them. Pure: buckets in, markup out (no clock,
//! no database), so the drawing is tested on its own. No style attributes (the pages' CSP
//! forbids inline styles): every mark carries a class that `app.css` colours.
//!
//! Accessible as an image: `role="img"`, named by its `<title>` and described by a `<desc>`
//! holding the window's minimum, average and maximum; [`daily`] gives the same numbers per day
//! for the table beside it.

use maud::{Markup, html};

use super::i18n::Lang;
use crate::platform::preferences::service::local_at;

/// A local calendar day: (year, month, day).
pub type Day = (i16, i8, i8);

/// One bucket of the series: readings with `start <= measured_at < start + step`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bucket {
    /// Unix seconds.
    pub start: i64,
    pub min: f64,
    pub avg: f64,
    pub max: f64,
    pub count: i64,
}

/// What one chart shows.
pub struct Chart<'a> {
    /// A prefix unique on the page, for the ids of the title and description.
    pub id: &'a str,
    /// The chart's accessible name (metric, sensor, window).
    pub title: &'a str,
    pub unit: &'a str,
    /// The window, unix seconds, `from < to`.
    pub from: i64,
    pub to: i64,
    /// The bucket width, seconds (3600 for hourly buckets).
    pub step: i64,
    /// In time order, only buckets holding readings (a missing one is a gap in the line).
    pub buckets: &'a [Bucket],
    pub lang: Lang,
    /// The garden's time zone (an IANA name; an unknown one counts as UTC).
    pub tz: &'a str,
}

// The drawing's own units (the SVG scales to the width of its box).
const WIDTH: f64 = 400.0;
const HEIGHT: f64 = 220.0;
const LEFT: f64 = 46.0;
const RIGHT: f64 = 8.0;
const TOP: f64 = 20.0;
const BOTTOM: f64 = 26.0;

/// The value axis: the drawn range and its labelled ticks.
#[derive(Debug, Clone, PartialEq)]
pub struct Scale {
    pub lo: f64,
    pub hi: f64,
    pub ticks: Vec<f64>,
    /// Decimals the tick labels need.
    pub decimals: usize,
}

/// A step of 1, 2 or 5 times a power of ten, at least `raw`.
fn nice_step(raw: f64) -> f64 {
    let raw = if raw.is_finite() && raw > 0.0 {
        raw
    } else {
        1.0
    };
    let power = 10f64.powf(raw.log10().floor());
    let fraction = raw / power;
    let nice = if fraction <= 1.0 {
        1.0
    } else if fraction <= 2.0 {
        2.0
    } else if fraction <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * power
}

/// The value axis for these buckets: from the lowest minimum to the highest maximum, widened
/// to whole ticks (about five); one value alone (or all equal) gets room around it so the line
/// sits in the middle. `None` without buckets.
pub fn scale(buckets: &[Bucket]) -> Option<Scale> {
    let lo = buckets.iter().map(|b| b.min).fold(f64::INFINITY, f64::min);
    let hi = buckets
        .iter()
        .map(|b| b.max)
        .fold(f64::NEG_INFINITY, f64::max);
    if !lo.is_finite() || !hi.is_finite() {
        return None;
    }
    let (lo, hi) = if hi - lo < 1e-9 {
        let pad = (lo.abs() * 0.1).max(1.0);
        (lo - pad, hi + pad)
    } else {
        (lo, hi)
    };
    let step = nice_step((hi - lo) / 5.0);
    let lo = (lo / step).floor() * step;
    let hi = (hi / step).ceil() * step;
    let n = ((hi - lo) / step).round() as i64;
    let ticks = (0..=n).map(|i| lo + step * i as f64).collect();
    let decimals = if step >= 1.0 {
        0
    } else {
        (-step.log10().floor()) as usize
    };
    Some(Scale {
        lo,
        hi,
        ticks,
        decimals: decimals.min(3),
    })
}

/// The buckets in runs without a gap: a bucket that does not follow the one before it by one
/// step starts a new run (the line breaks there rather than bridging hours without readings).
pub fn runs(buckets: &[Bucket], step: i64) -> Vec<&[Bucket]> {
    let mut out = Vec::new();
    let mut begin = 0;
    for i in 1..buckets.len() {
        if buckets[i].start - buckets[i - 1].start > step {
            out.push(&buckets[begin..i]);
            begin = i;
        }
    }
    if begin < buckets.len() {
        out.push(&buckets[begin..]);
    }
    out
}

/// Minimum, average (weighted by the readings in each bucket) and maximum of some buckets.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    pub min: f64,
    pub avg: f64,
    pub max: f64,
    pub count: i64,
}

pub fn summary(buckets: &[Bucket]) -> Option<Summary> {
    let count: i64 = buckets.iter().map(|b| b.count.max(1)).sum();
    if buckets.is_empty() {
        return None;
    }
    let sum: f64 = buckets.iter().map(|b| b.avg * b.count.max(1) as f64).sum();
    Some(Summary {
        min: buckets.iter().map(|b| b.min).fold(f64::INFINITY, f64::min),
        avg: sum / count as f64,
        max: buckets
            .iter()
            .map(|b| b.max)
            .fold(f64::NEG_INFINITY, f64::max),
        count: buckets.iter().map(|b| b.count).sum(),
    })
}

/// The local calendar day of an instant: (year, month, day).
fn day_at(tz: &str, at: i64) -> Option<Day> {
    let ts = jiff::Timestamp::from_second(at).ok()?;
    let z = local_at(tz, ts);
    Some((z.year(), z.month(), z.day()))
}

/// A day as the axis writes it: `7 Dec`, `07.12.`.
pub fn day_label(lang: Lang, (_, month, day): Day) -> String {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    match lang {
        Lang::En => format!(
            "{day} {}",
            MONTHS[usize::try_from(month - 1).unwrap_or(0).min(11)]
        ),
        Lang::De => format!("{day:02}.{month:02}."),
    }
}

/// The summary of each local day holding buckets, in time order (a bucket counts for the day
/// it starts in).
pub fn daily(buckets: &[Bucket], tz: &str) -> Vec<(Day, Summary)> {
    let mut out: Vec<(Day, Summary)> = Vec::new();
    let mut begin = 0;
    let day_of = |b: &Bucket| day_at(tz, b.start);
    for i in 1..=buckets.len() {
        if i == buckets.len() || day_of(&buckets[i]) != day_of(&buckets[begin]) {
            if let (Some(day), Some(s)) = (day_of(&buckets[begin]), summary(&buckets[begin..i])) {
                out.push((day, s));
            }
            begin = i;
        }
    }
    out
}

/// Local midnights inside the window (unix seconds), found hour by hour (a zone's midnight may
/// move or vanish on a change of clocks; the hour the date changes is the day's start).
fn day_starts(tz: &str, from: i64, to: i64) -> Vec<(i64, Day)> {
    let mut out = Vec::new();
    let Some(mut prev) = day_at(tz, from) else {
        return out;
    };
    let first_hour = from - from.rem_euclid(3600) + 3600;
    let mut t = first_hour;
    while t < to {
        if let Some(d) = day_at(tz, t)
            && d != prev
        {
            out.push((t, d));
            prev = d;
        }
        t += 3600;
    }
    out
}

fn fmt(x: f64) -> String {
    format!("{x:.1}")
}

/// The chart as inline SVG; `None` without buckets (the page says there are no readings).
pub fn svg(c: &Chart<'_>) -> Option<Markup> {
    let s = scale(c.buckets)?;
    let span = (c.to - c.from).max(1) as f64;
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let x = |t: i64| LEFT + ((t - c.from) as f64 / span).clamp(0.0, 1.0) * plot_w;
    let y = |v: f64| TOP + ((s.hi - v) / (s.hi - s.lo)).clamp(0.0, 1.0) * plot_h;
    let mid = |b: &Bucket| x(b.start + c.step / 2);
    let lang = c.lang;
    let sum = summary(c.buckets)?;
    let desc = lang.t_with(
        "chart-desc",
        &[
            ("min", lang.decimal(sum.min, 2).into()),
            ("avg", lang.decimal(sum.avg, 2).into()),
            ("max", lang.decimal(sum.max, 2).into()),
            ("unit", c.unit.to_owned().into()),
        ],
    );
    let runs = runs(c.buckets, c.step);
    let mut lines = Vec::new();
    let mut bands = Vec::new();
    let mut dots = Vec::new();
    for run in &runs {
        if let [one] = run {
            dots.push((mid(one), y(one.avg), y(one.max), y(one.min)));
            continue;
        }
        let line: Vec<String> = run
            .iter()
            .enumerate()
            .map(|(i, b)| {
                format!(
                    "{}{},{}",
                    if i == 0 { "M" } else { "L" },
                    fmt(mid(b)),
                    fmt(y(b.avg))
                )
            })
            .collect();
        lines.push(line.join(" "));
        let upper = run
            .iter()
            .map(|b| format!("{},{}", fmt(mid(b)), fmt(y(b.max))));
        let lower = run
            .iter()
            .rev()
            .map(|b| format!("{},{}", fmt(mid(b)), fmt(y(b.min))));
        let points: Vec<String> = upper.chain(lower).collect();
        bands.push(format!("M{} Z", points.join(" L")));
    }
    let starts = day_starts(c.tz, c.from, c.to);
    // Each day's label in the middle of its part of the window; a part narrower than half a
    // day (the window's ends) goes unlabelled.
    let mut edges: Vec<(i64, Option<Day>)> = vec![(c.from, day_at(c.tz, c.from))];
    edges.extend(starts.iter().map(|(t, d)| (*t, Some(*d))));
    edges.push((c.to, None));
    let labels: Vec<(f64, String)> = edges
        .windows(2)
        .filter(|w| w[1].0 - w[0].0 >= 12 * 3600)
        .filter_map(|w| {
            w[0].1
                .map(|d| (x(w[0].0 + (w[1].0 - w[0].0) / 2), day_label(lang, d)))
        })
        .collect();
    let title_id = format!("{}-title", c.id);
    let desc_id = format!("{}-desc", c.id);
    Some(html! {
        svg.chart xmlns="http://www.w3.org/2000/svg" viewBox=(format!("0 0 {WIDTH} {HEIGHT}"))
            role="img" aria-labelledby=(format!("{title_id} {desc_id}")) {
            title id=(title_id) { (c.title) }
            desc id=(desc_id) { (desc) }
            text.unit x="2" y="12" { (c.unit) }
            @for v in &s.ticks {
                line.grid x1=(fmt(LEFT)) x2=(fmt(WIDTH - RIGHT)) y1=(fmt(y(*v))) y2=(fmt(y(*v))) {}
                text.ylabel x=(fmt(LEFT - 6.0)) y=(fmt(y(*v) + 4.0)) { (lang.decimal(*v, s.decimals)) }
            }
            @for (t, _) in &starts {
                line.day x1=(fmt(x(*t))) x2=(fmt(x(*t))) y1=(fmt(TOP)) y2=(fmt(HEIGHT - BOTTOM)) {}
            }
            @for (at, text) in &labels {
                text.xlabel x=(fmt(*at)) y=(fmt(HEIGHT - 8.0)) { (text) }
            }
            @for d in &bands { path.band d=(d) {} }
            @for (cx, _, top, bottom) in &dots {
                line.whisker x1=(fmt(*cx)) x2=(fmt(*cx)) y1=(fmt(*top)) y2=(fmt(*bottom)) {}
            }
            @for d in &lines { path.line d=(d) {} }
            @for (cx, cy, _, _) in &dots { circle.dot cx=(fmt(*cx)) cy=(fmt(*cy)) r="3" {} }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: i64 = 3600;
    /// 2026-12-01 00:00 UTC.
    const T0: i64 = 1_796_083_200;

    fn b(hour: i64, min: f64, avg: f64, max: f64) -> Bucket {
        Bucket {
            start: T0 + hour * H,
            min,
            avg,
            max,
            count: 4,
        }
    }

    fn chart<'a>(buckets: &'a [Bucket], tz: &'a str) -> Chart<'a> {
        Chart {
            id: "c1",
            title: "Air temperature",
            unit: "°C",
            from: T0,
            to: T0 + 7 * 24 * H,
            step: H,
            buckets,
            lang: Lang::En,
            tz,
        }
    }

    fn count(hay: &str, needle: &str) -> usize {
        hay.matches(needle).count()
    }

    #[test]
    fn the_axis_covers_every_value_in_whole_ticks() {
        let s = scale(&[b(0, 18.2, 20.0, 21.0), b(1, 19.0, 24.0, 27.9)]).expect("scale");
        assert!(s.lo <= 18.2 && s.hi >= 27.9, "{s:?}");
        assert_eq!((s.lo, s.hi), (18.0, 28.0));
        assert_eq!(s.ticks, vec![18.0, 20.0, 22.0, 24.0, 26.0, 28.0]);
        assert_eq!(s.decimals, 0);
        // pH over a tenth: ticks of 0.05 need two decimals.
        let ph = scale(&[b(0, 5.9, 6.0, 6.1)]).expect("scale");
        assert_eq!(ph.decimals, 2, "{ph:?}");
        assert!(ph.lo <= 5.9 && ph.hi >= 6.1);
        assert_eq!(scale(&[]), None);
    }

    #[test]
    fn all_equal_values_get_room_and_sit_mid_chart() {
        let flat = [
            b(0, 6.0, 6.0, 6.0),
            b(1, 6.0, 6.0, 6.0),
            b(2, 6.0, 6.0, 6.0),
        ];
        let s = scale(&flat).expect("scale");
        assert!(s.lo < 6.0 && s.hi > 6.0, "{s:?}");
        assert!(((s.lo + s.hi) / 2.0 - 6.0).abs() < 1e-9, "{s:?}");
        let out = svg(&chart(&flat, "UTC")).expect("drawn").into_string();
        // The line is drawn, at the middle of the plot (no division by a zero range).
        let mid = TOP + (HEIGHT - TOP - BOTTOM) / 2.0;
        assert!(out.contains(&format!(",{} ", fmt(mid))), "{out}");
        assert!(!out.contains("NaN") && !out.contains("inf"), "{out}");
    }

    #[test]
    fn a_gap_breaks_the_line_and_the_band() {
        let buckets = [
            b(0, 1.0, 2.0, 3.0),
            b(1, 1.0, 2.0, 3.0),
            // hours 2-4 without readings
            b(5, 1.0, 2.0, 3.0),
            b(6, 1.0, 2.0, 3.0),
        ];
        let r = runs(&buckets, H);
        assert_eq!(r.len(), 2);
        assert_eq!((r[0].len(), r[1].len()), (2, 2));
        let out = svg(&chart(&buckets, "UTC")).expect("drawn").into_string();
        assert_eq!(count(&out, r#"<path class="line""#), 2, "{out}");
        assert_eq!(count(&out, r#"<path class="band""#), 2);
        assert!(!out.contains("<circle"));
        // Without a gap: one line.
        let whole = [
            b(0, 1.0, 2.0, 3.0),
            b(1, 1.0, 2.0, 3.0),
            b(2, 1.0, 2.0, 3.0),
        ];
        assert_eq!(runs(&whole, H).len(), 1);
    }

    #[test]
    fn one_point_is_a_dot_with_its_range() {
        let one = [b(30, 20.0, 21.0, 23.0)];
        let out = svg(&chart(&one, "UTC")).expect("drawn").into_string();
        assert_eq!(count(&out, "<circle"), 1, "{out}");
        assert_eq!(count(&out, r#"class="whisker""#), 1);
        assert!(!out.contains(r#"<path class="line""#));
        // A run of one inside longer ones is a dot too.
        let mixed = [
            b(0, 1.0, 2.0, 3.0),
            b(1, 1.0, 2.0, 3.0),
            b(5, 1.0, 2.0, 3.0),
        ];
        let out = svg(&chart(&mixed, "UTC")).expect("drawn").into_string();
        assert_eq!(count(&out, "<circle"), 1);
        assert_eq!(count(&out, r#"<path class="line""#), 1);
    }

    #[test]
    fn points_lie_where_their_time_and_value_say() {
        // Two buckets: the first at the window's start, the last at its end.
        let last = 7 * 24 - 1;
        let buckets = [b(0, 10.0, 10.0, 10.0), b(last, 20.0, 20.0, 20.0)];
        let c = chart(&buckets, "UTC");
        let s = scale(&buckets).expect("scale");
        assert_eq!((s.lo, s.hi), (10.0, 20.0));
        let out = svg(&c).expect("drawn").into_string();
        let plot_w = WIDTH - LEFT - RIGHT;
        let x0 = LEFT + 0.5 / 168.0 * plot_w;
        let x1 = LEFT + (last as f64 + 0.5) / 168.0 * plot_w;
        // Lowest value at the bottom of the plot, highest at the top (a week apart: two runs
        // of one, so two dots).
        let bottom = HEIGHT - BOTTOM;
        let dot = |x: f64, y: f64| format!(r#"cx="{}" cy="{}""#, fmt(x), fmt(y));
        assert!(out.contains(&dot(x0, bottom)), "{out}");
        assert!(out.contains(&dot(x1, TOP)), "{out}");
        // Neighbours: one line from the first to the second.
        let pair = [b(0, 10.0, 10.0, 10.0), b(1, 20.0, 20.0, 20.0)];
        let out = svg(&chart(&pair, "UTC")).expect("drawn").into_string();
        let x2 = LEFT + 1.5 / 168.0 * plot_w;
        assert!(
            out.contains(&format!(
                "M{},{} L{},{}",
                fmt(x0),
                fmt(bottom),
                fmt(x2),
                fmt(TOP)
            )),
            "{out}"
        );
        // Every SVG element is closed (a `<line>` left open would swallow what follows).
        assert_eq!(count(&out, "<line"), count(&out, "</line>"));
    }

    #[test]
    fn accessible_with_title_description_and_unit() {
        let buckets = [b(0, 18.0, 19.0, 20.0), b(1, 20.0, 21.0, 22.0)];
        let out = svg(&chart(&buckets, "UTC")).expect("drawn").into_string();
        assert!(out.contains(r#"role="img""#));
        assert!(out.contains(r#"aria-labelledby="c1-title c1-desc""#));
        assert!(out.contains(r#"<title id="c1-title">Air temperature</title>"#));
        assert!(
            out.contains("Lowest 18 °C, average 20 °C, highest 22 °C"),
            "{out}"
        );
        assert!(out.contains(r#"<text class="unit""#));
        assert!(!out.contains("style="), "no inline styles under the CSP");
        assert!(svg(&chart(&[], "UTC")).is_none());
    }

    #[test]
    fn days_are_the_garden_zones() {
        let buckets = [b(0, 1.0, 2.0, 3.0), b(1, 1.0, 2.0, 3.0)];
        // UTC: the window starts at midnight; six midnights inside, seven labelled days.
        let utc = svg(&chart(&buckets, "UTC")).expect("drawn").into_string();
        assert_eq!(count(&utc, r#"class="day""#), 6, "{utc}");
        assert_eq!(count(&utc, r#"class="xlabel""#), 7);
        assert!(utc.contains(">1 Dec<") && utc.contains(">7 Dec<"), "{utc}");
        // Los Angeles (UTC-8): the window starts on 30 Nov at 16:00, seven midnights inside.
        let la = svg(&chart(&buckets, "America/Los_Angeles"))
            .expect("drawn")
            .into_string();
        assert_eq!(count(&la, r#"class="day""#), 7, "{la}");
        assert!(la.contains(">1 Dec<") && !la.contains(">30 Nov<"), "{la}");
        let de = day_label(Lang::De, (2026, 12, 7));
        assert_eq!(de, "07.12.");
    }

    #[test]
    fn summaries_per_window_and_per_day() {
        let buckets = [
            Bucket {
                count: 1,
                ..b(0, 1.0, 1.0, 1.0)
            },
            Bucket {
                count: 3,
                ..b(1, 2.0, 5.0, 9.0)
            },
            b(25, 4.0, 4.0, 4.0),
        ];
        let s = summary(&buckets).expect("summary");
        assert_eq!((s.min, s.max, s.count), (1.0, 9.0, 8));
        assert!((s.avg - (1.0 + 15.0 + 16.0) / 8.0).abs() < 1e-9, "{s:?}");
        let days = daily(&buckets, "UTC");
        assert_eq!(days.len(), 2);
        assert_eq!(days[0].0, (2026, 12, 1));
        assert!((days[0].1.avg - 4.0).abs() < 1e-9);
        assert_eq!(days[1].0, (2026, 12, 2));
        assert_eq!(summary(&[]), None);
    }
}
