//! The resistance rule (domain 2.2): how often one mode of action may be applied to a plant
//! before a further application is refused (`RESISTANCE_WARNING`) unless the grower
//! acknowledges it; the application before the limit is accepted with a warning.
//!
//! Resistance follows the mode of action, not the product: deltamethrin and pyrethrins are both
//! IRAC group 3A, tebuconazole and difenoconazole both FRAC group 3. So an application counts
//! under each resistance group of its treatment (a mixture has two), and only a treatment
//! without a group counts under its active ingredient ([`classes_of`]). Releases of beneficial
//! organisms (predatory mites, parasitic wasps, nematodes, ladybirds, lacewings) never count:
//! weekly releases are standard practice and select for nothing.
//!
//! How much a group may be repeated depends on its resistance risk ([`rule_of`], the table
//! [`GROUP_RULES`], served at `GET /api/v1/ipm/resistance-groups`):
//! - **Outside the count**: FRAC multi-site groups M01–M12 (copper, sulphur, …) and the
//!   biologicals with multiple modes of action BM01/BM02. The FRAC Code List rates the M
//!   groups low risk without signs of resistance developing; sulphur runs 8–12 sprays a
//!   season in vines. They are never counted, never warned, never refused.
//! - **A published limit per season** where a resistance action committee or a national
//!   resistance management strategy gives one: FRAC 3 (DMI) 3, FRAC 11 (QoI) 2, FRAC 17
//!   (KRI, fenhexamid) 2. Where two sources differ the lower count holds. A season is read as
//!   the 365 days up to the application (no plant's season is longer; the longer window is
//!   the safer reading).
//! - **No published count** (every IRAC group, FRAC 9 and 12, an ingredient without a group):
//!   the precautionary default of 3 applications in 90 days, refused unless acknowledged, and
//!   labelled as a default, not as a limit anyone published. IRAC publishes no count per group:
//!   its guidance is to arrange sprays in mode-of-action windows and not to treat successive
//!   pest generations with the same group. Keeping the refusal (acknowledgeable) is the safer
//!   choice for the groups where resistance is common (pyrethroids, spinosyns, Bt in
//!   diamondback moth); the message says that it is a default.
//!
//! The window of an application on day `d` counts earlier applications on the days
//! `d-(w-1) ..= d` (`w` days including `d`); an application `w` days earlier no longer
//! counts. Treatments without an active ingredient are never counted. The class is the group
//! code or the ingredient as the catalogue spells it, trimmed, lower-cased, inner whitespace
//! collapsed ("Pyrethrin" and " pyrethrin " are one class). A group is spelled as its code:
//! "IRAC 3A", "FRAC 3", "FRAC M2", "HRAC 9" ([`is_group_code`]).

use serde::Serialize;
use time::{Date, Duration};

/// The default window (days) for a class without a published count.
pub const WINDOW_DAYS: i64 = 90;
/// The default count for a class without a published count.
pub const LIMIT: usize = 3;
/// A season, for a limit published per season: the 365 days up to the application.
pub const SEASON_DAYS: i64 = 365;

/// The general rotation advice behind the default (IRAC publishes no count per group).
pub const DEFAULT_SOURCE: &str = "no count is published for this group: precautionary default \
     of 3 applications in 90 days. IRAC Mode of Action Classification (irac-online.org, \
     \"Effective IRM strategies\"): arrange applications in mode-of-action windows; successive \
     generations of a pest should not be treated with the same group";

/// How a group is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, salvo::oapi::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Counting {
    /// Never counted (multi-site, biologicals with multiple modes of action).
    Outside,
    /// A published limit.
    Published,
    /// No published count: the precautionary default.
    Default,
}

/// The resistance risk as the committee rates it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, salvo::oapi::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Risk {
    Low,
    LowToMedium,
    Medium,
    High,
    /// Not known or not rated (IRAC rates no groups; BM: resistance not known).
    NotRated,
}

/// One row of the table: a group (or a family of groups), its risk, how it is counted, and the
/// documents it comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, salvo::oapi::ToSchema)]
pub struct GroupRule {
    /// The group code, or the family ("FRAC M01–M12", "IRAC (every group)").
    pub group: &'static str,
    /// The group's name.
    pub name: &'static str,
    pub risk: Risk,
    pub counting: Counting,
    /// Applications allowed within `window_days` (the one after is refused); null when the
    /// group is outside the count.
    pub limit: Option<usize>,
    /// The window the limit is counted in, days; null when outside the count.
    pub window_days: Option<i64>,
    /// Where the risk and the limit come from (documents a grower can look up).
    pub source: &'static str,
}

/// The table, in the order it is served. [`rule_of`] picks the row of a class.
pub const GROUP_RULES: &[GroupRule] = &[
    GroupRule {
        group: "FRAC M01–M12",
        name: "chemical multi-site inhibitors (copper M01, sulphur M02, dithiocarbamates M03, …)",
        risk: Risk::Low,
        counting: Counting::Outside,
        limit: None,
        window_days: None,
        source: "FRAC Code List 2024 (frac.info), groups M: multi-site contact activity, \
                 generally considered a low-risk group without signs of resistance developing",
    },
    GroupRule {
        group: "FRAC BM01–BM02",
        name: "biologicals with multiple modes of action (plant extracts BM01; microbials such \
               as Bacillus subtilis, Trichoderma BM02)",
        risk: Risk::NotRated,
        counting: Counting::Outside,
        limit: None,
        window_days: None,
        source: "FRAC Code List 2024 (frac.info), groups BM: agents of biological origin with \
                 multiple mechanisms of action and no dominating one; resistance not known",
    },
    GroupRule {
        group: "FRAC 3",
        name: "DMI fungicides (demethylation inhibitors: tebuconazole, difenoconazole, …)",
        risk: Risk::Medium,
        counting: Counting::Published,
        limit: Some(3),
        window_days: Some(SEASON_DAYS),
        source: "CropLife Australia fungicide resistance management strategy, grapevine powdery \
                 mildew (published by the Australian Wine Research Institute, awri.com.au): no \
                 more than three Group 3 sprays per season, no more than two consecutive. FRAC \
                 SBI Working Group recommendations for fruit crops (frac.info, December 2018) \
                 allow at most 4 per season on vines and apples: the lower count holds. Risk \
                 medium: FRAC Code List 2024",
    },
    GroupRule {
        group: "FRAC 11",
        name: "QoI fungicides (quinone outside inhibitors, strobilurins: azoxystrobin, …)",
        risk: Risk::High,
        counting: Counting::Published,
        limit: Some(2),
        window_days: Some(SEASON_DAYS),
        source: "CropLife Australia Fungicide Resistance Management Review Group, Group 11 \
                 strategy for grapevine powdery mildew (AWRI eBulletin \"Agrochemical update \
                 June 2012\", awri.com.au): do not apply more than two sprays per season of \
                 Group 11 fungicides. Risk high: FRAC Code List 2024",
    },
    GroupRule {
        group: "FRAC 17",
        name: "KRI fungicides (3-keto reductase inhibitors, hydroxyanilides: fenhexamid)",
        risk: Risk::LowToMedium,
        counting: Counting::Published,
        limit: Some(2),
        window_days: Some(SEASON_DAYS),
        source: "FRAC SBI Working Group, KRI recommendations for Botrytis in grapes, \
                 strawberries and raspberries (frac.info, December 2018): only in strict \
                 alternation; at most 1 application in programmes of up to 3 treatments a \
                 season, at most 2 in programmes of 4–5. Risk low to medium: FRAC Code List 2024",
    },
    GroupRule {
        group: "FRAC 9",
        name: "AP fungicides (anilinopyrimidines: cyprodinil, pyrimethanil)",
        risk: Risk::Medium,
        counting: Counting::Default,
        limit: Some(LIMIT),
        window_days: Some(WINDOW_DAYS),
        source: "risk medium: FRAC AP Working Group (frac.info). No count per season was found \
                 that could be checked: precautionary default of 3 applications in 90 days",
    },
    GroupRule {
        group: "FRAC 12",
        name: "PP fungicides (phenylpyrroles: fludioxonil)",
        risk: Risk::LowToMedium,
        counting: Counting::Default,
        limit: Some(LIMIT),
        window_days: Some(WINDOW_DAYS),
        source: "risk low to medium: FRAC Code List 2024. No count per season was found that \
                 could be checked: precautionary default of 3 applications in 90 days",
    },
    GroupRule {
        group: "IRAC (every group)",
        name: "insecticide and acaricide modes of action (3A pyrethroids, 4A neonicotinoids, 5 \
               spinosyns, 6 avermectins, 11A Bacillus thuringiensis, 31 granuloviruses, …)",
        risk: Risk::NotRated,
        counting: Counting::Default,
        limit: Some(LIMIT),
        window_days: Some(WINDOW_DAYS),
        source: DEFAULT_SOURCE,
    },
    GroupRule {
        group: "other (any other group, or an active ingredient without a group)",
        name: "a mode of action without a published count",
        risk: Risk::NotRated,
        counting: Counting::Default,
        limit: Some(LIMIT),
        window_days: Some(WINDOW_DAYS),
        source: DEFAULT_SOURCE,
    },
];

fn row(group: &str) -> &'static GroupRule {
    GROUP_RULES
        .iter()
        .find(|r| r.group == group)
        .unwrap_or(&GROUP_RULES[GROUP_RULES.len() - 1])
}

/// Whether a FRAC group (after "FRAC ") is a multi-site group M01–M12 ("M2" and "M02" alike).
fn is_multi_site(group: &str) -> bool {
    group
        .strip_prefix('M')
        .and_then(|n| n.parse::<u8>().ok())
        .is_some_and(|n| (1..=12).contains(&n))
}

/// Whether a FRAC group is a biological with multiple modes of action BM01/BM02.
fn is_multi_mode_biological(group: &str) -> bool {
    group
        .strip_prefix("BM")
        .and_then(|n| n.parse::<u8>().ok())
        .is_some_and(|n| (1..=2).contains(&n))
}

/// The rule of a class ([`classes_of`]: a lower-cased group code or an ingredient).
pub fn rule_of(class: &str) -> &'static GroupRule {
    let upper = class.trim().to_ascii_uppercase();
    let Some((committee, group)) = upper.split_once(' ') else {
        return row("other (any other group, or an active ingredient without a group)");
    };
    let group = group.trim();
    match committee {
        "FRAC" if is_multi_site(group) => row("FRAC M01–M12"),
        "FRAC" if is_multi_mode_biological(group) => row("FRAC BM01–BM02"),
        "FRAC" if matches!(group, "3" | "11" | "17" | "9" | "12") => GROUP_RULES
            .iter()
            .find(|r| r.group.strip_prefix("FRAC ") == Some(group))
            .unwrap_or(&GROUP_RULES[GROUP_RULES.len() - 1]),
        "IRAC" if is_group_code(&format!("IRAC {group}")) => row("IRAC (every group)"),
        _ => row("other (any other group, or an active ingredient without a group)"),
    }
}

/// Whether applications of a class are counted at all.
pub fn is_counted(class: &str) -> bool {
    rule_of(class).counting != Counting::Outside
}

/// What a resistance group code looks like: the committee and the group.
pub const GROUP_PATTERN: &str = "^(IRAC|FRAC|HRAC) [A-Z0-9]{1,4}$";

/// Whether `code` is a resistance group code ("IRAC 3A", "FRAC M2", "HRAC 9").
pub fn is_group_code(code: &str) -> bool {
    let Some((committee, group)) = code.split_once(' ') else {
        return false;
    };
    matches!(committee, "IRAC" | "FRAC" | "HRAC")
        && (1..=4).contains(&group.len())
        && group
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
}

/// The classes an application counts under: its resistance groups when it names any, else its
/// active ingredient; none for a release of beneficial organisms. Sorted, without repeats.
pub fn classes_of(
    groups: &[String],
    active_ingredient: Option<&str>,
    beneficial_organism: bool,
) -> Vec<String> {
    if beneficial_organism {
        return Vec::new();
    }
    let mut out: Vec<String> = groups.iter().filter_map(|g| class_of(Some(g))).collect();
    if out.is_empty() {
        out.extend(class_of(active_ingredient));
    }
    out.sort();
    out.dedup();
    out
}

/// The class of an active ingredient; `None` when there is none.
pub fn class_of(active_ingredient: Option<&str>) -> Option<String> {
    let words: Vec<String> = active_ingredient?
        .split_whitespace()
        .map(str::to_lowercase)
        .collect();
    (!words.is_empty()).then(|| words.join(" "))
}

/// A class as a grower reads it: a resistance group in its catalogue spelling (`FRAC 11`),
/// else the active ingredient (classes are kept lower-case so spellings count together).
pub fn class_label(class: &str) -> String {
    let upper = class.to_uppercase();
    if is_group_code(&upper) {
        upper
    } else {
        class.to_owned()
    }
}

/// The classes of [`classes_of`] the rule counts: those outside the count (multi-site,
/// biologicals with multiple modes of action) left out.
pub fn counted_classes_of(
    groups: &[String],
    active_ingredient: Option<&str>,
    beneficial_organism: bool,
) -> Vec<String> {
    classes_of(groups, active_ingredient, beneficial_organism)
        .into_iter()
        .filter(|c| is_counted(c))
        .collect()
}

/// The window (days) and the limit of a class; `None` when it is outside the count.
pub fn limit_of(class: &str) -> Option<(i64, usize)> {
    let r = rule_of(class);
    Some((r.window_days?, r.limit?))
}

/// The first day of the window of `window_days` days that ends on `day` (inclusive).
pub fn window_start(day: Date, window_days: i64) -> Date {
    day.checked_sub(Duration::days(window_days.max(1) - 1))
        .unwrap_or(Date::MIN)
}

/// How many of `earlier` (days of earlier applications of the class) fall in the window of
/// `window_days` days of an application on `day`.
pub fn count_in_window(earlier: &[Date], day: Date, window_days: i64) -> usize {
    let start = window_start(day, window_days);
    earlier
        .iter()
        .filter(|d| **d >= start && **d <= day)
        .count()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Fewer than `limit - 1` earlier applications.
    Fine,
    /// `limit - 1` earlier: accepted, the next one reaches the limit.
    Warn,
    /// `limit` or more earlier: refused unless acknowledged.
    Refuse,
}

/// The verdict for `count` earlier applications of a class whose limit is `limit`.
pub fn verdict(count: usize, limit: usize) -> Verdict {
    if count >= limit {
        Verdict::Refuse
    } else if count + 1 == limit {
        Verdict::Warn
    } else {
        Verdict::Fine
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::date;

    #[test]
    fn class_labels() {
        for (class, label) in [
            ("frac 11", "FRAC 11"),
            ("irac 4a", "IRAC 4A"),
            ("frac m2", "FRAC M2"),
            ("spinosad", "spinosad"),
            (
                "potassium salts of fatty acids",
                "potassium salts of fatty acids",
            ),
        ] {
            assert_eq!(class_label(class), label, "{class}");
        }
    }

    #[test]
    fn classes() {
        let cases = [
            (Some("Pyrethrin"), Some("pyrethrin")),
            (Some("  Potassium   SOAP "), Some("potassium soap")),
            (Some("   "), None),
            (None, None),
        ];
        for (raw, class) in cases {
            assert_eq!(class_of(raw).as_deref(), class, "{raw:?}");
        }
    }

    #[test]
    fn classes_follow_the_mode_of_action() {
        let g = |l: &[&str]| l.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        // (groups, ingredient, organism, classes)
        type Case<'a> = (Vec<String>, Option<&'a str>, bool, Vec<&'a str>);
        let cases: [Case; 6] = [
            // Deltamethrin and pyrethrins share IRAC 3A: one class.
            (
                g(&["IRAC 3A"]),
                Some("Deltamethrin"),
                false,
                vec!["irac 3a"],
            ),
            (
                g(&["IRAC 3A"]),
                Some("Pyrethrins + rapeseed oil"),
                false,
                vec!["irac 3a"],
            ),
            // A mixture counts under both groups.
            (
                g(&["FRAC 9", "FRAC 12"]),
                Some("Cyprodinil + fludioxonil"),
                false,
                vec!["frac 12", "frac 9"],
            ),
            // No group: the ingredient.
            (
                g(&[]),
                Some("Potassium salts of fatty acids"),
                false,
                vec!["potassium salts of fatty acids"],
            ),
            // Releases of beneficial organisms never count.
            (
                g(&[]),
                Some("Phytoseiulus persimilis (predatory mite)"),
                true,
                vec![],
            ),
            (g(&[]), None, false, vec![]),
        ];
        for (groups, ingredient, organism, classes) in cases {
            assert_eq!(
                classes_of(&groups, ingredient, organism),
                classes,
                "{ingredient:?}"
            );
        }
        for (code, ok) in [
            ("IRAC 3A", true),
            ("FRAC M2", true),
            ("HRAC 9", true),
            ("FRAC 3", true),
            ("irac 3A", false),
            ("IRAC", false),
            ("IRAC 3A ", false),
            ("XRAC 1", false),
            ("IRAC 12345", false),
        ] {
            assert_eq!(is_group_code(code), ok, "{code:?}");
        }
    }

    #[test]
    fn window_and_verdicts() {
        let day = date!(2026 - 06 - 30);
        // 30 June back to 1 June is 29 days, to 1 May 60, to 1 April 90: so 89 days back is 2 April.
        assert_eq!(window_start(day, WINDOW_DAYS), date!(2026 - 04 - 02));
        assert_eq!(window_start(day, SEASON_DAYS), date!(2025 - 07 - 01));
        // (earlier days, count, verdict)
        let cases: [(&[Date], usize, Verdict); 6] = [
            (&[], 0, Verdict::Fine),
            (&[date!(2026 - 06 - 01)], 1, Verdict::Fine),
            // two inside: the third is accepted with a warning
            (
                &[date!(2026 - 06 - 01), date!(2026 - 06 - 15)],
                2,
                Verdict::Warn,
            ),
            // three inside (2 April is the first day): refused
            (
                &[
                    date!(2026 - 04 - 02),
                    date!(2026 - 06 - 01),
                    date!(2026 - 06 - 15),
                ],
                3,
                Verdict::Refuse,
            ),
            // 1 April is 90 days before 30 June: outside, so only two count
            (
                &[
                    date!(2026 - 04 - 01),
                    date!(2026 - 06 - 01),
                    date!(2026 - 06 - 15),
                ],
                2,
                Verdict::Warn,
            ),
            // a later-dated application (after `day`) is not in the window ending on `day`
            (
                &[
                    date!(2026 - 07 - 01),
                    date!(2026 - 06 - 01),
                    date!(2026 - 06 - 30),
                ],
                2,
                Verdict::Warn,
            ),
        ];
        for (earlier, count, v) in cases {
            assert_eq!(
                count_in_window(earlier, day, WINDOW_DAYS),
                count,
                "{earlier:?}"
            );
            assert_eq!(verdict(count, LIMIT), v, "{earlier:?}");
        }
    }

    #[test]
    fn rules_follow_the_risk_of_the_group() {
        // (class, counting, window, limit, a word the source names)
        type Case<'a> = (&'a str, Counting, Option<(i64, usize)>, &'a str);
        let cases: [Case; 17] = [
            // Multi-site and biologicals with several modes of action: outside the count.
            ("frac m2", Counting::Outside, None, "multi-site"),
            ("frac m1", Counting::Outside, None, "multi-site"),
            ("frac m01", Counting::Outside, None, "multi-site"),
            ("frac m12", Counting::Outside, None, "multi-site"),
            ("frac bm02", Counting::Outside, None, "biological origin"),
            ("frac bm01", Counting::Outside, None, "biological origin"),
            // Published limits per season (365 days), the lower of two sources.
            (
                "frac 3",
                Counting::Published,
                Some((365, 3)),
                "three Group 3 sprays",
            ),
            (
                "frac 11",
                Counting::Published,
                Some((365, 2)),
                "two sprays per season",
            ),
            ("frac 17", Counting::Published, Some((365, 2)), "KRI"),
            // No count published: the precautionary default, labelled as such.
            (
                "frac 9",
                Counting::Default,
                Some((90, 3)),
                "precautionary default",
            ),
            (
                "frac 12",
                Counting::Default,
                Some((90, 3)),
                "precautionary default",
            ),
            ("irac 3a", Counting::Default, Some((90, 3)), "IRAC"),
            ("irac 11a", Counting::Default, Some((90, 3)), "IRAC"),
            ("irac 31", Counting::Default, Some((90, 3)), "IRAC"),
            (
                "potassium salts of fatty acids",
                Counting::Default,
                Some((90, 3)),
                "default",
            ),
            // Not multi-site: M13 does not exist, BM03 neither.
            ("frac m13", Counting::Default, Some((90, 3)), "default"),
            ("frac bm03", Counting::Default, Some((90, 3)), "default"),
        ];
        for (class, counting, limit, word) in cases {
            let r = rule_of(class);
            assert_eq!(r.counting, counting, "{class}");
            assert_eq!(limit_of(class), limit, "{class}");
            assert_eq!(is_counted(class), counting != Counting::Outside, "{class}");
            assert!(r.source.contains(word), "{class}: {}", r.source);
            assert!(!r.source.to_lowercase().contains("kultiva"), "{class}");
        }
        // Every row is sourced, and a row outside the count has no limit.
        for r in GROUP_RULES {
            assert!(r.source.len() > 40, "{}", r.group);
            assert_eq!(
                r.counting == Counting::Outside,
                r.limit.is_none(),
                "{}",
                r.group
            );
            assert_eq!(r.limit.is_none(), r.window_days.is_none(), "{}", r.group);
        }
        let g = |l: &[&str]| l.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        // Sulphur is never counted; a mixture counts only its single-site partner.
        assert!(counted_classes_of(&g(&["FRAC M2"]), Some("Sulphur"), false).is_empty());
        assert_eq!(
            counted_classes_of(
                &g(&["FRAC M1", "FRAC 3"]),
                Some("Copper + tebuconazole"),
                false
            ),
            vec!["frac 3"]
        );
        // Without a group the ingredient counts (default rule).
        assert_eq!(
            counted_classes_of(&[], Some("Soy lecithin"), false),
            vec!["soy lecithin"]
        );
    }

    #[test]
    fn published_limits_and_seasons() {
        let day = date!(2026 - 06 - 30);
        // (class, earlier days, verdict)
        let cases: [(&str, &[Date], Verdict); 6] = [
            // QoI: one earlier this season → the second is the last (warn); two → refused.
            ("frac 11", &[date!(2026 - 01 - 10)], Verdict::Warn),
            (
                "frac 11",
                &[date!(2025 - 08 - 01), date!(2026 - 05 - 01)],
                Verdict::Refuse,
            ),
            // A year and a day back no longer counts (365-day season).
            (
                "frac 11",
                &[date!(2025 - 06 - 30), date!(2026 - 05 - 01)],
                Verdict::Warn,
            ),
            // DMI: two earlier → warn, three → refused.
            (
                "frac 3",
                &[date!(2026 - 03 - 01), date!(2026 - 05 - 01)],
                Verdict::Warn,
            ),
            (
                "frac 3",
                &[
                    date!(2025 - 09 - 01),
                    date!(2026 - 03 - 01),
                    date!(2026 - 05 - 01),
                ],
                Verdict::Refuse,
            ),
            // The default counts 90 days only: two earlier inside, one outside → warn.
            (
                "irac 5",
                &[
                    date!(2026 - 03 - 01),
                    date!(2026 - 05 - 01),
                    date!(2026 - 06 - 01),
                ],
                Verdict::Warn,
            ),
        ];
        for (class, earlier, v) in cases {
            let (window, limit) = limit_of(class).expect("counted");
            let n = count_in_window(earlier, day, window);
            assert_eq!(verdict(n, limit), v, "{class} {earlier:?}");
        }
    }
}
