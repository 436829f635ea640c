//! The pre-harvest interval (Karenz, domain 2.1) by whole garden days.
//!
//! A treatment applied on day `A` with an interval of `N` days blocks harvests on `A`,
//! `A+1`, …, `A+N-1` (the last blocked day) and allows one on `A+N` (`safe_on`). A harvest dated
//! before the application is not affected by it (the fruit was off the plant). An interval of 0
//! days blocks nothing. "Today" is the garden's day: UTC, since gardens have no time zone yet,
//! and the day of an instant is its UTC day ([`utc_day`]), whatever offset the client sent.
//!
//! A treatment's interval depends on the crop: labels give one per crop (species, botanical
//! family or crop group), and every entry names the label it comes from ([`LabelSource`]: the
//! product, the authority or register, the registration where known, the crop as the label
//! names it). [`interval_for`] picks the longest entry naming the plant's crop, else the
//! longest entry whose label covers every crop, else none: a product with no label interval
//! for the crop is not applied to it (the caller refuses), never given a guessed value.

use time::{Date, Duration, OffsetDateTime, UtcOffset};

/// The garden day of an instant: its UTC day. A spray at 20:00 -08:00 on 1 June is 04:00 UTC
/// on 2 June, so its interval counts from 2 June.
pub fn utc_day(at: OffsetDateTime) -> Date {
    at.to_offset(UtcOffset::UTC).date()
}

/// The crop of a plant as the catalogue describes its species.
#[derive(Debug, Clone, Copy, Default)]
pub struct Crop<'a> {
    pub species_key: Option<&'a str>,
    pub family_key: Option<&'a str>,
    /// The species' plant category (the crop group, e.g. `herb`).
    pub crop_group: Option<&'a str>,
}

/// Where an interval comes from: an outside document a grower can look up.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LabelSource {
    /// The product (trade) name on the label, e.g. `Teldor`.
    pub product: String,
    /// The authority, register or document, e.g. `BVL Pflanzenschutzmittel-Verzeichnis`.
    pub authority: String,
    /// The registration number, where known for certain.
    pub registration: Option<String>,
    /// The crop as the label names it, e.g. `Weinrebe (grapevine)`.
    pub label_crop: String,
}

impl LabelSource {
    /// Every required part is there and none of them cites Kultiva itself.
    pub fn is_complete(&self) -> bool {
        [&self.product, &self.authority, &self.label_crop]
            .iter()
            .all(|t| !t.trim().is_empty())
            && !self.cites_kultiva()
    }

    /// Whether any part names Kultiva: our own catalogue is no source for a label value.
    pub fn cites_kultiva(&self) -> bool {
        [
            Some(&self.product),
            Some(&self.authority),
            self.registration.as_ref(),
            Some(&self.label_crop),
        ]
        .into_iter()
        .flatten()
        .any(|t| cites_kultiva(t))
    }

    /// One line for the record: `Teldor (BVL Pflanzenschutzmittel-Verzeichnis): label crop
    /// Weinrebe`.
    pub fn line(&self) -> String {
        let registration = self
            .registration
            .as_deref()
            .map(|r| format!(", {r}"))
            .unwrap_or_default();
        format!(
            "{} ({}{registration}): label crop {}",
            self.product, self.authority, self.label_crop
        )
    }
}

/// Whether a text names Kultiva (any case).
pub fn cites_kultiva(text: &str) -> bool {
    text.to_lowercase().contains("kultiva")
}

/// One interval of a treatment: for a species, a family, a crop group, or (none named) every
/// crop the label covers; with its label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CropInterval {
    pub species_key: Option<String>,
    pub family_key: Option<String>,
    pub crop_group: Option<String>,
    pub days: i64,
    pub source: LabelSource,
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

/// The interval that applies to a plant of `crop`, from entries with a complete label source
/// only: the longest entry naming its species, family or crop group; else the longest entry
/// naming no crop (a label covering every crop); else `None`: no label interval is recorded
/// for this crop and the product must not be applied to it.
pub fn interval_for<'a>(
    intervals: &'a [CropInterval],
    crop: &Crop<'_>,
) -> Option<&'a CropInterval> {
    let sourced = || intervals.iter().filter(|i| i.source.is_complete());
    sourced()
        .filter(|i| i.names_a_crop() && i.matches(crop))
        .max_by_key(|i| i.days)
        .or_else(|| {
            sourced()
                .filter(|i| !i.names_a_crop())
                .max_by_key(|i| i.days)
        })
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
            source: LabelSource {
                product: format!("Product {days}"),
                authority: "BVL Pflanzenschutzmittel-Verzeichnis".into(),
                registration: None,
                label_crop: "a crop".into(),
            },
        }
    }

    fn crop(
        species: Option<&'static str>,
        family: Option<&'static str>,
        group: Option<&'static str>,
    ) -> Crop<'static> {
        Crop {
            species_key: species,
            family_key: family,
            crop_group: group,
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
        // (crop, days)
        let cases = [
            // A label for the crop holds, even when shorter than the every-crop entry.
            (crop(Some("tomato"), Some("solanaceae"), None), 3),
            (crop(Some("apple"), Some("rosaceae"), None), 28),
            (crop(Some("kale"), Some("brassicaceae"), None), 14),
            (crop(Some("basil"), Some("lamiaceae"), Some("herb")), 10),
            // Listed by species and by family: the longer holds.
            (crop(Some("tomato"), Some("brassicaceae"), None), 14),
            // Not listed: the label covering every crop.
            (crop(Some("lettuce"), Some("asteraceae"), None), 7),
            (Crop::default(), 7),
        ];
        for (c, days) in cases {
            assert_eq!(
                interval_for(&intervals, &c).map(|i| i.days),
                Some(days),
                "{c:?}"
            );
        }
    }

    /// No label for the crop and none covering every crop: nothing (the product is refused),
    /// never the longest of the others. Entries without a complete source, or citing Kultiva,
    /// are not labels.
    #[test]
    fn no_label_for_the_crop_is_no_interval() {
        let grapes_only = [
            entry(Some("grape"), None, None, 21),
            entry(None, Some("solanaceae"), None, 4),
        ];
        let unsourced = |days, f: fn(&mut LabelSource)| {
            let mut e = entry(None, None, None, days);
            f(&mut e.source);
            e
        };
        let self_cited = [
            unsourced(3, |s| s.authority = "Kultiva domain reference 2.1".into()),
            unsourced(3, |s| s.product = "Kultiva catalogue value".into()),
            unsourced(3, |s| s.registration = Some("kultiva default".into())),
            unsourced(3, |s| s.product = " ".into()),
            unsourced(3, |s| s.label_crop = String::new()),
            unsourced(3, |s| s.authority = String::new()),
        ];
        // (intervals, crop, days or None when refused)
        let cases: [(&[CropInterval], Crop<'_>, Option<i64>); 8] = [
            (
                &grapes_only,
                crop(Some("grape"), Some("vitaceae"), None),
                Some(21),
            ),
            (
                &grapes_only,
                crop(Some("potato"), Some("solanaceae"), None),
                Some(4),
            ),
            (
                &grapes_only,
                crop(Some("apple"), Some("rosaceae"), None),
                None,
            ),
            (&grapes_only, Crop::default(), None),
            (&self_cited[..], crop(Some("apple"), None, None), None),
            (&self_cited[..1], Crop::default(), None),
            (&self_cited[3..], Crop::default(), None),
            (&[], Crop::default(), None),
        ];
        for (intervals, c, days) in cases {
            assert_eq!(
                interval_for(intervals, &c).map(|i| i.days),
                days,
                "{c:?} in {intervals:?}"
            );
        }
        for e in &self_cited {
            assert!(!e.source.is_complete(), "{e:?}");
        }
        assert!(entry(None, None, None, 0).source.is_complete());
        // A 0-day label is a label: it answers 0, not a refusal.
        let bt = [entry(None, None, None, 0)];
        assert_eq!(interval_for(&bt, &Crop::default()).map(|i| i.days), Some(0));
    }

    #[test]
    fn a_label_source_reads_as_one_line() {
        let mut s = entry(None, None, None, 21).source;
        s.product = "Teldor".into();
        s.label_crop = "Weinrebe".into();
        assert_eq!(
            s.line(),
            "Teldor (BVL Pflanzenschutzmittel-Verzeichnis): label crop Weinrebe"
        );
        s.registration = Some("EPA Reg. No. 1-2".into());
        assert!(s.line().contains("Verzeichnis, EPA Reg. No. 1-2)"));
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
