//! Crop rotation (domain 2.5): what stood in a slot within the window (3 years by default, a
//! family's own break where the catalogue gives a longer one: brassicas 4 for clubroot;
//! plants since moved or archived included, live ones too) against the family of the planned
//! species. The same botanical family within the window is critical: the planting needs the
//! grower's acknowledgement (`ROTATION_VIOLATION` without it). Rotation is about a slot's
//! history, so a plant of the same family placed beside it in the same season in a slot made
//! for several is co-planting, not a violation; and a pot (a `container` location) gets fresh
//! soil, so rotation does not apply there. Catalogue rules between families are advisory (a
//! good successor, families that should not follow each other). Findings are sorted critical,
//! warning, info, ok.

use time::{Date, Duration};

/// The default window (domain 2.5).
pub const WINDOW_YEARS: i32 = 3;
/// A plant placed in the slot at most this many days ago and still standing was planted in the
/// same season as a new one.
pub const SEASON_DAYS: i64 = 183;

/// A planting the slot has seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Past<'a> {
    pub species_key: &'a str,
    /// `None`: the species names no family.
    pub family_key: Option<&'a str>,
    /// The first day it stood in the slot.
    pub placed_on: Date,
    /// The last day it stood in the slot (today while it still stands).
    pub last_seen: Date,
    /// Whether it still stands there.
    pub active: bool,
}

/// What the slot is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotKind {
    /// How many plants the slot holds.
    pub capacity: i32,
    /// A pot or other container (fresh substrate each planting).
    pub potted: bool,
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
    /// A family's own break between two crops in one slot, in years (brassicas: 4).
    Break { family: &'a str, years: i32 },
}

/// The window for a family: the longest of the default and the family's own break (where
/// sources disagree, the safer value holds).
pub fn window_years(family: Option<&str>, rules: &[FamilyRule]) -> i32 {
    rules
        .iter()
        .filter_map(|r| match *r {
            FamilyRule::Break { family: f, years } if Some(f) == family => Some(years),
            _ => None,
        })
        .fold(WINDOW_YEARS, i32::max)
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
    slot: SlotKind,
) -> Vec<Finding> {
    let start = window_start(today, years);
    let mut out = Vec::new();
    if slot.potted {
        out.push(Finding {
            level: Level::Info,
            message: "a pot gets fresh substrate: crop rotation does not apply".into(),
            species_key: None,
        });
        return out;
    }
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
        let same_season = p.active && today - p.placed_on <= Duration::days(SEASON_DAYS);
        if before == family && slot.capacity > 1 && same_season {
            out.push(Finding {
                level: Level::Info,
                message: format!(
                    "{family} placed beside it this season (since {}): co-planting in a slot \
                     for several, not a rotation question",
                    p.placed_on
                ),
                species_key: Some(p.species_key.to_owned()),
            });
            continue;
        }
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
            placed_on: last_seen - Duration::days(120),
            last_seen,
            active: last_seen == TODAY,
        }
    }

    const BED: SlotKind = SlotKind {
        capacity: 1,
        potted: false,
    };

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
            let got: Vec<Level> = check(family, TODAY, WINDOW_YEARS, &history, RULES, BED)
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
            BED,
        );
        assert!(violation(&f).is_some_and(|v| v.message.contains("solanaceae")));
        let f = check(
            Some("solanaceae"),
            TODAY,
            3,
            &[past("bean", Some("fabaceae"), TODAY)],
            RULES,
            BED,
        );
        assert!(violation(&f).is_none());
    }

    #[test]
    fn brassicas_rest_four_years() {
        let rules = [
            FamilyRule::Break {
                family: "brassicaceae",
                years: 4,
            },
            FamilyRule::Break {
                family: "fabaceae",
                years: 2,
            },
        ];
        assert_eq!(window_years(Some("brassicaceae"), &rules), 4);
        // A shorter break never shortens the default.
        assert_eq!(window_years(Some("fabaceae"), &rules), 3);
        assert_eq!(window_years(Some("solanaceae"), &rules), 3);
        assert_eq!(window_years(None, &rules), 3);
        // Cabbage 3½ years ago: outside 3 years, inside the brassicas' 4.
        let cabbage = [past("cabbage", Some("brassicaceae"), date!(2022 - 12 - 15))];
        let years = window_years(Some("brassicaceae"), &rules);
        let f = check(Some("brassicaceae"), TODAY, years, &cabbage, &rules, BED);
        assert!(
            violation(&f).is_some_and(|v| v.message.contains("4 years")),
            "{f:?}"
        );
        let f = check(Some("brassicaceae"), TODAY, 3, &cabbage, &rules, BED);
        assert!(violation(&f).is_none());
    }

    #[test]
    fn co_planting_and_pots_are_not_rotation() {
        let standing = Past {
            species_key: "tomato",
            family_key: Some("solanaceae"),
            placed_on: TODAY - Duration::days(20),
            last_seen: TODAY,
            active: true,
        };
        let shared = SlotKind {
            capacity: 4,
            potted: false,
        };
        // A second tomato beside one placed this season in a slot for four: info, no violation.
        let f = check(Some("solanaceae"), TODAY, 3, &[standing], RULES, shared);
        assert_eq!(f.iter().map(|f| f.level).collect::<Vec<_>>(), [Level::Info]);
        assert!(violation(&f).is_none());
        // The same in a slot for one plant (it would be full, but a moved plant counts): critical.
        let f = check(Some("solanaceae"), TODAY, 3, &[standing], RULES, BED);
        assert!(violation(&f).is_some());
        // Standing since last year (placed over a season ago): history, a violation.
        let old = Past {
            placed_on: TODAY - Duration::days(400),
            ..standing
        };
        assert!(violation(&check(Some("solanaceae"), TODAY, 3, &[old], RULES, shared)).is_some());
        // Removed this season: history too.
        let gone = Past {
            active: false,
            last_seen: TODAY - Duration::days(3),
            ..standing
        };
        assert!(violation(&check(Some("solanaceae"), TODAY, 3, &[gone], RULES, shared)).is_some());
        // A pot: rotation does not apply at all.
        let pot = SlotKind {
            capacity: 1,
            potted: true,
        };
        let f = check(Some("solanaceae"), TODAY, 3, &[old, gone], RULES, pot);
        assert_eq!(f.iter().map(|f| f.level).collect::<Vec<_>>(), [Level::Info]);
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
