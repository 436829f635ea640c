//! Crop rotation (domain 2.5): what stood in a slot within the window (3 years by default,
//! plants since moved or archived included, live ones too) against the family of the planned
//! species. The same botanical family within the window is a violation (`ROTATION_VIOLATION`);
//! catalogue rules between families are advisory (a good successor, families that should not
//! follow each other). Findings are sorted critical, warning, info, ok.

use time::Date;

pub const WINDOW_YEARS: i32 = 3;

/// A planting the slot has seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Past<'a> {
    pub species_key: &'a str,
    /// `None`: the species names no family.
    pub family_key: Option<&'a str>,
    /// The last day it stood in the slot (today while it still stands).
    pub last_seen: Date,
}

/// A catalogue rule between two families.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FamilyRule<'a> {
    /// Growing `to` after `from` is good.
    Successor {
        from: &'a str,
        to: &'a str,
        benefit_score: f64,
    },
    /// The two should not follow each other (either order).
    Incompatible {
        a: &'a str,
        b: &'a str,
        severe: bool,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Critical,
    Warning,
    Info,
    Ok,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub level: Level,
    pub message: String,
    /// The earlier planting's species the finding is about (none for notes on the planned one).
    pub species_key: Option<String>,
}

/// The first day inside the window ending `today`.
pub fn window_start(today: Date, years: i32) -> Date {
    let year = today.year() - years;
    Date::from_calendar_date(year, today.month(), today.day())
        // 29 February in a year without one.
        .or_else(|_| Date::from_calendar_date(year, today.month(), 28))
        .unwrap_or(Date::MIN)
}

/// Checks planting `family` (of the planned species) in a slot with the given history.
pub fn check(
    family: Option<&str>,
    today: Date,
    years: i32,
    past: &[Past],
    rules: &[FamilyRule],
) -> Vec<Finding> {
    let start = window_start(today, years);
    let mut out = Vec::new();
    let Some(family) = family else {
        out.push(Finding {
            level: Level::Info,
            message: "the planned species names no botanical family: rotation not checked".into(),
            species_key: None,
        });
        return out;
    };
    for p in past.iter().filter(|p| p.last_seen >= start) {
        let Some(before) = p.family_key else {
            continue;
        };
        if before == family {
            out.push(Finding {
                level: Level::Critical,
                message: format!(
                    "family {family} stood in this slot within the last {years} years \
                     (until {})",
                    p.last_seen
                ),
                species_key: Some(p.species_key.to_owned()),
            });
            continue;
        }
        for rule in rules {
            match *rule {
                FamilyRule::Incompatible { a, b, severe }
                    if (a == before && b == family) || (a == family && b == before) =>
                {
                    out.push(Finding {
                        level: if severe { Level::Warning } else { Level::Info },
                        message: format!(
                            "{before} and {family} should not follow each other in one slot"
                        ),
                        species_key: Some(p.species_key.to_owned()),
                    });
                }
                FamilyRule::Successor {
                    from,
                    to,
                    benefit_score,
                } if from == before && to == family => out.push(Finding {
                    level: Level::Ok,
                    message: format!(
                        "good rotation: {family} after {before} (benefit {benefit_score})"
                    ),
                    species_key: Some(p.species_key.to_owned()),
                }),
                _ => {}
            }
        }
    }
    out.sort_by_key(|f| f.level);
    out
}

/// The finding that refuses the planting, if any.
pub fn violation(findings: &[Finding]) -> Option<&Finding> {
    findings.iter().find(|f| f.level == Level::Critical)
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::date;

    const TODAY: Date = date!(2026 - 06 - 15);

    fn past(species: &'static str, family: Option<&'static str>, last_seen: Date) -> Past<'static> {
        Past {
            species_key: species,
            family_key: family,
            last_seen,
        }
    }

    const RULES: &[FamilyRule<'static>] = &[
        FamilyRule::Successor {
            from: "fabaceae",
            to: "solanaceae",
            benefit_score: 0.95,
        },
        FamilyRule::Incompatible {
            a: "brassicaceae",
            b: "solanaceae",
            severe: true,
        },
        FamilyRule::Incompatible {
            a: "apiaceae",
            b: "solanaceae",
            severe: false,
        },
    ];

    type Case = (
        &'static str,
        Option<&'static str>,
        Vec<Past<'static>>,
        Vec<Level>,
    );

    #[test]
    fn rotation_table() {
        let cases: Vec<Case> = vec![
            ("empty slot", Some("solanaceae"), vec![], vec![]),
            (
                "same family last year",
                Some("solanaceae"),
                vec![past("tomato", Some("solanaceae"), date!(2025 - 05 - 01))],
                vec![Level::Critical],
            ),
            (
                "same family still standing (live plant counts)",
                Some("solanaceae"),
                vec![past("tomato", Some("solanaceae"), TODAY)],
                vec![Level::Critical],
            ),
            (
                "same family on the first day of the window",
                Some("solanaceae"),
                vec![past("tomato", Some("solanaceae"), date!(2023 - 06 - 15))],
                vec![Level::Critical],
            ),
            (
                "same family just outside the window",
                Some("solanaceae"),
                vec![past("tomato", Some("solanaceae"), date!(2023 - 06 - 14))],
                vec![],
            ),
            (
                "good successor",
                Some("solanaceae"),
                vec![past("bean", Some("fabaceae"), date!(2025 - 04 - 01))],
                vec![Level::Ok],
            ),
            (
                "severe incompatibility is a warning, either order",
                Some("brassicaceae"),
                vec![past("tomato", Some("solanaceae"), date!(2025 - 04 - 01))],
                vec![Level::Warning],
            ),
            (
                "mild incompatibility is info",
                Some("solanaceae"),
                vec![past("dill", Some("apiaceae"), date!(2025 - 04 - 01))],
                vec![Level::Info],
            ),
            (
                "earlier species without family is skipped",
                Some("solanaceae"),
                vec![past("x", None, date!(2025 - 04 - 01))],
                vec![],
            ),
            (
                "planned species without family",
                None,
                vec![past("tomato", Some("solanaceae"), date!(2025 - 04 - 01))],
                vec![Level::Info],
            ),
            (
                "sorted critical first",
                Some("solanaceae"),
                vec![
                    past("bean", Some("fabaceae"), date!(2025 - 04 - 01)),
                    past("pepper", Some("solanaceae"), date!(2024 - 04 - 01)),
                ],
                vec![Level::Critical, Level::Ok],
            ),
        ];
        for (name, family, history, want) in cases {
            let got: Vec<Level> = check(family, TODAY, WINDOW_YEARS, &history, RULES)
                .iter()
                .map(|f| f.level)
                .collect();
            assert_eq!(got, want, "{name}");
        }
    }

    #[test]
    fn only_critical_is_a_violation() {
        let f = check(
            Some("solanaceae"),
            TODAY,
            3,
            &[past("tomato", Some("solanaceae"), TODAY)],
            RULES,
        );
        assert!(violation(&f).is_some_and(|v| v.message.contains("solanaceae")));
        let f = check(
            Some("solanaceae"),
            TODAY,
            3,
            &[past("bean", Some("fabaceae"), TODAY)],
            RULES,
        );
        assert!(violation(&f).is_none());
    }

    #[test]
    fn window_start_handles_leap_days() {
        assert_eq!(
            window_start(date!(2028 - 02 - 29), 3),
            date!(2025 - 02 - 28)
        );
        assert_eq!(window_start(TODAY, 3), date!(2023 - 06 - 15));
    }
}
