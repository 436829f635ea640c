//! The pre-harvest interval (Karenz, domain 2.1) by whole garden days.
//!
//! A treatment applied on day `A` with an interval of `N` days blocks harvests on `A`,
//! `A+1`, …, `A+N-1` (the last blocked day) and allows one on `A+N` (`safe_on`). A harvest dated
//! before the application is not affected by it (the fruit was off the plant). An interval of 0
//! days blocks nothing. "Today" is the garden's day: UTC, since gardens have no time zone yet,
//! and the day of an instant is its UTC day ([`utc_day`]), whatever offset the client sent.
//!
//! A treatment's interval depends on the crop: labels give one per crop (species, botanical
//! family or crop group). [`interval_for`] picks the longest interval listed for the plant's
//! crop, else the longest of all (the conservative default). [`floor_days`] holds the shortest
//! interval the reference accepts per ingredient (domain 2.1); where the label and the
//! reference disagree the longer value holds.

use time::{Date, Duration, OffsetDateTime, UtcOffset};

/// The garden day of an instant: its UTC day. A spray at 20:00 -08:00 on 1 June is 04:00 UTC
/// on 2 June, so its interval counts from 2 June.
pub fn utc_day(at: OffsetDateTime) -> Date {
    at.to_offset(UtcOffset::UTC).date()
}

/// Shortest intervals the reference accepts (domain 2.1), by a word of the active ingredient
/// (lower case); the longest matching floor applies.
const FLOORS: &[(&str, i64)] = &[
    ("pyrethr", 7),
    ("azadirachtin", 3),
    ("neem", 3),
    ("spinosad", 14),
    ("phosphorous acid", 21),
    ("phosphonate", 21),
    ("potassium salts of fatty acids", 1),
    ("potassium soap", 1),
    ("copper", 21),
    ("bordeaux", 21),
    ("sulphur", 7),
    ("sulfur", 7),
    ("paraffin", 7),
];

/// Where the floors come from, for messages and sources.
pub const FLOOR_SOURCE: &str = "Kultiva domain reference 2.1 (seeded intervals of ipm.yaml)";

/// The shortest interval the reference accepts for an active ingredient (`None`: no floor).
pub fn floor_days(active_ingredient: Option<&str>) -> Option<i64> {
    let ingredient = active_ingredient?.to_lowercase();
    FLOORS
        .iter()
        .filter(|(word, _)| ingredient.contains(word))
        .map(|(_, days)| *days)
        .max()
}

/// The crop of a plant as the catalogue describes its species.
#[derive(Debug, Clone, Copy, Default)]
pub struct Crop<'a> {
    pub species_key: Option<&'a str>,
    pub family_key: Option<&'a str>,
    /// The species' plant category (the crop group, e.g. `herb`).
    pub crop_group: Option<&'a str>,
}

/// One interval of a treatment: for a species, a family, a crop group, or (none named) every
/// crop; with its source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CropInterval {
    pub species_key: Option<String>,
    pub family_key: Option<String>,
    pub crop_group: Option<String>,
    pub days: i64,
    pub source: String,
}

impl CropInterval {
    fn names_a_crop(&self) -> bool {
        self.species_key.is_some() || self.family_key.is_some() || self.crop_group.is_some()
    }

    fn matches(&self, crop: &Crop<'_>) -> bool {
        let hit = |listed: &Option<String>, plant: Option<&str>| {
            listed.as_deref().is_some_and(|l| plant == Some(l))
        };
        hit(&self.species_key, crop.species_key)
            || hit(&self.family_key, crop.family_key)
            || hit(&self.crop_group, crop.crop_group)
    }
}

/// The interval that applies to a plant of `crop`: the longest entry listed for its species,
/// family or crop group; when none is listed, the longest of all entries (entries that name no
/// crop included). `None` when the treatment lists no interval.
pub fn interval_for<'a>(
    intervals: &'a [CropInterval],
    crop: &Crop<'_>,
) -> Option<&'a CropInterval> {
    let listed = intervals
        .iter()
        .filter(|i| i.names_a_crop() && i.matches(crop))
        .max_by_key(|i| i.days);
    listed.or_else(|| intervals.iter().max_by_key(|i| i.days))
}

/// The first day a harvest is allowed again: `applied_on + days`.
pub fn safe_on(applied_on: Date, days: i64) -> Date {
    applied_on
        .checked_add(Duration::days(days.max(0)))
        .unwrap_or(Date::MAX)
}

/// The last day the interval blocks (`None` for an interval of 0 days).
pub fn last_blocked_day(applied_on: Date, days: i64) -> Option<Date> {
    (days > 0).then(|| {
        safe_on(applied_on, days)
            .previous_day()
            .unwrap_or(Date::MIN)
    })
}

/// Whether a harvest on `harvest_on` is blocked by an application on `applied_on` whose
/// interval ends with `safe_on` (exclusive); the days still to wait when it is.
pub fn blocks(applied_on: Date, safe_on: Date, harvest_on: Date) -> Option<i64> {
    (applied_on <= harvest_on && harvest_on < safe_on).then(|| (safe_on - harvest_on).whole_days())
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::{date, datetime};

    #[test]
    fn the_day_of_an_instant_is_its_utc_day() {
        // (instant, UTC day)
        let cases = [
            // 20:00 in California on 1 June is 04:00 UTC on 2 June.
            (datetime!(2026-06-01 20:00 -08:00), date!(2026 - 06 - 02)),
            // 08:00 in Tokyo on 2 June is 23:00 UTC on 1 June.
            (datetime!(2026-06-02 08:00 +09:00), date!(2026 - 06 - 01)),
            (datetime!(2026-06-01 23:59:59 UTC), date!(2026 - 06 - 01)),
            (datetime!(2026-06-01 00:00 +00:00), date!(2026 - 06 - 01)),
        ];
        for (at, day) in cases {
            assert_eq!(utc_day(at), day, "{at}");
        }
    }

    #[test]
    fn floors_of_the_reference() {
        let cases = [
            (Some("Pyrethrins + rapeseed oil"), Some(7)),
            (Some("Spinosad"), Some(14)),
            (Some("Azadirachtin A"), Some(3)),
            (Some("Copper hydroxide"), Some(21)),
            (Some("Copper octanoate"), Some(21)),
            (Some("Sulphur"), Some(7)),
            (Some("Paraffin oil"), Some(7)),
            (Some("Potassium salts of fatty acids"), Some(1)),
            (Some("Phosphorous acid"), Some(21)),
            (Some("Deltamethrin"), None),
            (None, None),
        ];
        for (ingredient, floor) in cases {
            assert_eq!(floor_days(ingredient), floor, "{ingredient:?}");
        }
    }

    fn entry(
        species: Option<&str>,
        family: Option<&str>,
        group: Option<&str>,
        days: i64,
    ) -> CropInterval {
        CropInterval {
            species_key: species.map(str::to_owned),
            family_key: family.map(str::to_owned),
            crop_group: group.map(str::to_owned),
            days,
            source: format!("label {days}"),
        }
    }

    #[test]
    fn interval_per_crop() {
        let intervals = [
            entry(None, None, None, 7),
            entry(Some("tomato"), None, None, 3),
            entry(Some("apple"), None, None, 28),
            entry(None, Some("brassicaceae"), None, 14),
            entry(None, None, Some("herb"), 10),
        ];
        let crop =
            |s: Option<&'static str>, f: Option<&'static str>, g: Option<&'static str>| Crop {
                species_key: s,
                family_key: f,
                crop_group: g,
            };
        // (crop, days)
        let cases = [
            (crop(Some("tomato"), Some("solanaceae"), None), 3),
            (crop(Some("apple"), Some("rosaceae"), None), 28),
            (crop(Some("kale"), Some("brassicaceae"), None), 14),
            (crop(Some("basil"), Some("lamiaceae"), Some("herb")), 10),
            // Listed by species and by family: the longer holds.
            (crop(Some("tomato"), Some("brassicaceae"), None), 14),
            // Not listed: the longest of all.
            (crop(Some("lettuce"), Some("asteraceae"), None), 28),
            (Crop::default(), 28),
        ];
        for (c, days) in cases {
            assert_eq!(
                interval_for(&intervals, &c).map(|i| i.days),
                Some(days),
                "{c:?}"
            );
        }
        assert_eq!(interval_for(&[], &Crop::default()), None);
    }

    #[test]
    fn safe_on_and_last_day() {
        // (applied, days, safe_on, last blocked day)
        let cases = [
            // 1 June + 7 days = 8 June; blocked 1..=7 June.
            (
                date!(2026 - 06 - 01),
                7,
                date!(2026 - 06 - 08),
                Some(date!(2026 - 06 - 07)),
            ),
            // 1 day (potassium soap): only the day of application is blocked.
            (
                date!(2026 - 06 - 01),
                1,
                date!(2026 - 06 - 02),
                Some(date!(2026 - 06 - 01)),
            ),
            // 21 days across a month end: 20 Jan + 21 = 10 Feb; last blocked 9 Feb.
            (
                date!(2026 - 01 - 20),
                21,
                date!(2026 - 02 - 10),
                Some(date!(2026 - 02 - 09)),
            ),
            // Leap year: 25 Feb 2028 + 7 = 3 Mar (29 Feb exists).
            (
                date!(2028 - 02 - 25),
                7,
                date!(2028 - 03 - 03),
                Some(date!(2028 - 03 - 02)),
            ),
            // 0 days: nothing blocked, safe the same day.
            (date!(2026 - 06 - 01), 0, date!(2026 - 06 - 01), None),
        ];
        for (applied, days, safe, last) in cases {
            assert_eq!(safe_on(applied, days), safe, "{applied} + {days}");
            assert_eq!(last_blocked_day(applied, days), last, "{applied} + {days}");
        }
    }

    #[test]
    fn day_boundaries() {
        let applied = date!(2026 - 06 - 01);
        let safe = safe_on(applied, 7); // 8 June
        // (harvest day, days remaining or None when allowed)
        let cases = [
            (date!(2026 - 05 - 31), None), // before the application: not affected
            (date!(2026 - 06 - 01), Some(7)), // the day of application: 8 - 1 = 7 days
            (date!(2026 - 06 - 04), Some(4)), // 8 - 4 = 4
            (date!(2026 - 06 - 07), Some(1)), // the last day is still blocked
            (date!(2026 - 06 - 08), None), // the day after: allowed
            (date!(2026 - 07 - 01), None),
        ];
        for (harvest, remaining) in cases {
            assert_eq!(blocks(applied, safe, harvest), remaining, "{harvest}");
        }
        // 0 days never blocks, not even on the day itself.
        assert_eq!(blocks(applied, safe_on(applied, 0), applied), None);
    }
}
