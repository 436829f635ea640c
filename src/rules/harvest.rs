//! Harvest readiness and quality (domain 2.10).
//!
//! Readiness: the latest observation per indicator, stage score immature 0, approaching 50,
//! peak 100, overripe 80, weighted by the observation's reliability (default 0.5);
//! overall = Σ(score·w) ÷ Σw rounded to one decimal; recommendation ≥90 `optimal`,
//! ≥70 `approaching`, ≥50 `developing`, else `immature`; estimated days = rounded mean of the
//! estimates given. No observation: 0 and `immature`. When overripe readings carry more than
//! half the weight the recommendation is `overripe` whatever the score (overripe scores 80,
//! which alone would read "approaching": the crop is past its peak, not nearing it).
//!
//! Quality: 0.30·appearance + 0.25·aroma + 0.20·colour + 25, minus defect penalties, clamped
//! to 0–100; grade ≥90 `a_plus`, ≥75 `a`, ≥55 `b`, ≥35 `c`, else `d`.

pub const STAGES: &[&str] = &["immature", "approaching", "peak", "overripe"];
pub const GRADES: &[&str] = &["a_plus", "a", "b", "c", "d"];

pub fn stage_score(stage: &str) -> f64 {
    match stage {
        "approaching" => 50.0,
        "peak" => 100.0,
        "overripe" => 80.0,
        _ => 0.0,
    }
}

/// One indicator's latest observation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Observation<'a> {
    pub stage: &'a str,
    pub reliability: f64,
    pub days_estimate: Option<i64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Readiness {
    pub score: f64,
    pub recommendation: &'static str,
    pub estimated_days: Option<i64>,
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

pub fn recommendation(score: f64) -> &'static str {
    if score >= 90.0 {
        "optimal"
    } else if score >= 70.0 {
        "approaching"
    } else if score >= 50.0 {
        "developing"
    } else {
        "immature"
    }
}

pub fn readiness(latest: &[Observation<'_>]) -> Readiness {
    let weight: f64 = latest.iter().map(|o| o.reliability.max(0.0)).sum();
    let overripe: f64 = latest
        .iter()
        .filter(|o| o.stage == "overripe")
        .map(|o| o.reliability.max(0.0))
        .sum();
    let score = if weight > 0.0 {
        round1(
            latest
                .iter()
                .map(|o| stage_score(o.stage) * o.reliability.max(0.0))
                .sum::<f64>()
                / weight,
        )
    } else {
        0.0
    };
    let estimates: Vec<i64> = latest.iter().filter_map(|o| o.days_estimate).collect();
    let estimated_days = (!estimates.is_empty())
        .then(|| (estimates.iter().sum::<i64>() as f64 / estimates.len() as f64).round() as i64);
    Readiness {
        score,
        recommendation: if weight > 0.0 && overripe * 2.0 > weight {
            "overripe"
        } else {
            recommendation(score)
        },
        estimated_days,
    }
}

/// The UTC calendar day of a timestamp, whatever offset it was written with (a reading at
/// 23:30 −05:00 belongs to the next UTC day).
pub fn utc_day(ts: time::OffsetDateTime) -> time::Date {
    ts.to_offset(time::UtcOffset::UTC).date()
}

/// Whole UTC calendar days from `since` to `now` (never negative): a phase entered at 23:50
/// UTC has lasted one day at 00:10 UTC.
pub fn utc_days_between(since: time::OffsetDateTime, now: time::OffsetDateTime) -> i64 {
    (utc_day(now) - utc_day(since)).whole_days().max(0)
}

/// The penalty of one defect (any unknown one costs 5).
pub fn defect_penalty(defect: &str) -> f64 {
    match defect {
        "mold" => 50.0,
        "hermaphrodite" => 40.0,
        "pests" => 30.0,
        "seeded" => 25.0,
        "nutrient_burn" | "light_burn" => 15.0,
        "foxtailing" | "discoloration" => 10.0,
        _ => 5.0,
    }
}

pub fn grade(score: f64) -> &'static str {
    if score >= 90.0 {
        "a_plus"
    } else if score >= 75.0 {
        "a"
    } else if score >= 55.0 {
        "b"
    } else if score >= 35.0 {
        "c"
    } else {
        "d"
    }
}

/// The quality score (one decimal) and its grade.
pub fn quality(appearance: f64, aroma: f64, color: f64, defects: &[String]) -> (f64, &'static str) {
    let weighted = 0.30 * appearance + 0.25 * aroma + 0.20 * color + 25.0;
    let penalty: f64 = defects.iter().map(|d| defect_penalty(d)).sum();
    let score = round1((weighted - penalty).clamp(0.0, 100.0));
    (score, grade(score))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obs(stage: &str, reliability: f64, days: Option<i64>) -> Observation<'_> {
        Observation {
            stage,
            reliability,
            days_estimate: days,
        }
    }

    #[test]
    fn readiness_table() {
        // (observations, score, recommendation, estimated days)
        let cases = [
            (vec![], 0.0, "immature", None),
            // one peak: 100
            (vec![obs("peak", 0.5, Some(0))], 100.0, "optimal", Some(0)),
            // peak w0.9 + approaching w0.3: (90 + 15) / 1.2 = 87.5 → approaching; days (2+5)/2 = 3.5 → 4
            (
                vec![obs("peak", 0.9, Some(2)), obs("approaching", 0.3, Some(5))],
                87.5,
                "approaching",
                Some(4),
            ),
            // overripe w0.5 + immature w0.5: (40 + 0) / 1 = 40 → immature
            (
                vec![obs("overripe", 0.5, None), obs("immature", 0.5, None)],
                40.0,
                "immature",
                None,
            ),
            // approaching + peak + overripe at 0.5: (25+50+40)/1.5 = 76.666… → 76.7 approaching
            (
                vec![
                    obs("approaching", 0.5, None),
                    obs("peak", 0.5, None),
                    obs("overripe", 0.5, None),
                ],
                76.7,
                "approaching",
                None,
            ),
            // approaching alone: exactly 50 → developing (the boundary is inclusive)
            (
                vec![obs("approaching", 1.0, None)],
                50.0,
                "developing",
                None,
            ),
            // zero reliability everywhere: no weight, score 0
            (vec![obs("peak", 0.0, None)], 0.0, "immature", None),
            // all overripe: 80, past the peak, not "approaching"
            (vec![obs("overripe", 0.5, None)], 80.0, "overripe", None),
            (
                vec![obs("overripe", 0.9, Some(0)), obs("overripe", 0.4, Some(0))],
                80.0,
                "overripe",
                Some(0),
            ),
            // overripe carrying most of the weight: (72 + 20) / 1.1 = 83.6 → overripe
            (
                vec![obs("overripe", 0.9, None), obs("peak", 0.2, None)],
                83.6,
                "overripe",
                None,
            ),
        ];
        for (list, score, rec, days) in cases {
            let r = readiness(&list);
            assert_eq!(r.score, score, "{list:?}");
            assert_eq!(r.recommendation, rec, "{list:?}");
            assert_eq!(r.estimated_days, days, "{list:?}");
        }
    }

    #[test]
    fn utc_days_whatever_the_offset() {
        use time::macros::datetime;
        // 23:30 at −05:00 is 04:30 UTC the next day; 01:00 at +09:00 is 16:00 UTC the day before.
        assert_eq!(
            utc_day(datetime!(2026-03-10 23:30 -05:00)),
            time::macros::date!(2026 - 03 - 11)
        );
        assert_eq!(
            utc_day(datetime!(2026-03-10 01:00 +09:00)),
            time::macros::date!(2026 - 03 - 09)
        );
        let now = datetime!(2026-03-12 00:10 UTC);
        // Entered 2026-03-11 23:50 UTC (written east of UTC): one UTC day, not zero.
        assert_eq!(utc_days_between(datetime!(2026-03-12 01:50 +02:00), now), 1);
        // Entered 19:00 −05:00 on the 11th = 00:00 UTC on the 12th: the same UTC day as now.
        assert_eq!(utc_days_between(datetime!(2026-03-11 19:00 -05:00), now), 0);
        // Written west of UTC on the 10th, already the 11th in UTC: one day.
        assert_eq!(utc_days_between(datetime!(2026-03-10 22:00 -04:00), now), 1);
        // A start in the future counts zero.
        assert_eq!(utc_days_between(datetime!(2026-03-13 00:00 UTC), now), 0);
    }

    #[test]
    fn quality_table() {
        let d = |l: &[&str]| l.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        // (appearance, aroma, colour, defects, score, grade)
        let cases = [
            // 30 + 25 + 20 + 25 = 100 → a_plus
            (100.0, 100.0, 100.0, d(&[]), 100.0, "a_plus"),
            // 0.3·80 + 0.25·80 + 0.2·80 + 25 = 24 + 20 + 16 + 25 = 85 → a
            (80.0, 80.0, 80.0, d(&[]), 85.0, "a"),
            // 85 − 10 (discoloration) = 75 → a (inclusive)
            (80.0, 80.0, 80.0, d(&["discoloration"]), 75.0, "a"),
            // 85 − 30 (pests) = 55 → b
            (80.0, 80.0, 80.0, d(&["pests"]), 55.0, "b"),
            // 0.3·50 + 0.25·40 + 0.2·60 + 25 = 15 + 10 + 12 + 25 = 62 − 15 − 5 (unknown) = 42 → c
            (50.0, 40.0, 60.0, d(&["light_burn", "bruised"]), 42.0, "c"),
            // 25 − 50 (mold) = −25 → clamped 0 → d
            (0.0, 0.0, 0.0, d(&["mold"]), 0.0, "d"),
            // 0.3·60 + 0.25·60 + 0.2·60 + 25 = 18 + 15 + 12 + 25 = 70 → b
            (60.0, 60.0, 60.0, d(&[]), 70.0, "b"),
            // 0.3·95 + 0.25·92 + 0.2·90 + 25 = 28.5 + 23 + 18 + 25 = 94.5 → a_plus
            (95.0, 92.0, 90.0, d(&[]), 94.5, "a_plus"),
        ];
        for (a, r, c, defects, score, g) in cases {
            assert_eq!(
                quality(a, r, c, &defects),
                (score, g),
                "{a} {r} {c} {defects:?}"
            );
        }
        assert_eq!(grade(89.9), "a");
        assert_eq!(grade(34.9), "d");
    }
}
