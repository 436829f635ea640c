//! The pre-harvest interval (Karenz, domain 2.1) by whole days of the garden's calendar.
//!
//! Every safety day is a local day in the garden's time zone (its IANA zone, UTC when none is
//! set; `PUT /t/{slug}/calendar/settings`), DST-correct through jiff's bundled zone database.
//! An application's day is the local day of its instant ([`local_day`]); a harvest's day is
//! the grower's local date as given, or the local day of a date-time ([`DayOrInstant`]);
//! "today" is the garden's local today ([`today`]).
//!
//! A treatment applied on local day `A` with an interval of `N` days blocks harvests dated
//! `A`, `A+1`, …, `A+N-1` (the last blocked day) and allows one on `A+N` (`safe_on`). A
//! harvest dated before the application is not affected by it (the fruit was off the plant).
//! An interval of 0 days blocks nothing. The days are derived from the application's instant
//! and the zone whenever they are read ([`SafetyDays::of`]), so changing the garden's zone
//! re-counts running intervals at once, the same way everywhere.
//!
//! A treatment's interval depends on the crop: labels give one per crop (species, botanical
//! family or crop group), and every entry names the label it comes from ([`LabelSource`]: the
//! product, the authority or register, the registration where known, the crop as the label
//! names it). [`interval_for`] picks the longest entry naming the plant's crop, else the
//! longest entry whose label covers every crop, else none: a product with no label interval
//! for the crop is not applied to it (the caller refuses), never given a guessed value.

pub use jiff::tz::TimeZone;
use time::{Date, Duration, OffsetDateTime, UtcOffset};

/// The garden's local day of an instant in `tz`. In Los Angeles, 18:00 local on 29 November
/// (PST, 02:00 UTC on the 30th) is 29 November; in Sydney, 08:00 local on 2 June (AEST, 22:00
/// UTC on 1 June) is 2 June.
pub fn local_day(at: OffsetDateTime, tz: &TimeZone) -> Date {
    let utc = at.to_offset(UtcOffset::UTC);
    let offset = jiff::Timestamp::from_second(utc.unix_timestamp())
        .map(|ts| tz.to_offset(ts).seconds())
        .unwrap_or(0);
    utc.checked_add(Duration::seconds(i64::from(offset)))
        .unwrap_or(utc)
        .date()
}

/// The instant a local day starts in `tz`: local midnight, or the first instant of the day
/// where a daylight-saving change skips midnight (São Paulo, 18 October 2015: 01:00 -02:00).
/// `None` only for a day outside the zone database's range.
pub fn day_start(day: Date, tz: &TimeZone) -> Option<OffsetDateTime> {
    let civil = jiff::civil::Date::new(
        i16::try_from(day.year()).ok()?,
        i8::try_from(u8::from(day.month())).ok()?,
        i8::try_from(day.day()).ok()?,
    )
    .ok()?;
    let start = civil.to_zoned(tz.clone()).ok()?.start_of_day().ok()?;
    let ts = start.timestamp();
    OffsetDateTime::from_unix_timestamp(ts.as_second()).ok()
}

/// The garden's today at `now`.
pub fn today_at(now: OffsetDateTime, tz: &TimeZone) -> Date {
    local_day(now, tz)
}

/// The garden's today (now).
pub fn today(tz: &TimeZone) -> Date {
    today_at(OffsetDateTime::now_utc(), tz)
}

/// How a harvest is dated: a plain date is the grower's local date; a date-time (with its
/// offset) counts as its local day in the garden's zone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DayOrInstant {
    Day(Date),
    At(OffsetDateTime),
}

impl DayOrInstant {
    /// The garden's local day this names.
    pub fn local_day(self, tz: &TimeZone) -> Date {
        match self {
            Self::Day(d) => d,
            Self::At(at) => local_day(at, tz),
        }
    }
}

impl<'de> serde::Deserialize<'de> for DayOrInstant {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        let s = s.trim();
        let day = time::macros::format_description!("[year]-[month]-[day]");
        if let Ok(d) = Date::parse(s, day) {
            return Ok(Self::Day(d));
        }
        OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339)
            .map(Self::At)
            .map_err(|_| {
                serde::de::Error::custom("a date (YYYY-MM-DD) or a date-time with its UTC offset")
            })
    }
}

/// The days one application's interval covers on one plant, in the garden's calendar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SafetyDays {
    /// The local day of the application: the first blocked day (when `days > 0`).
    pub applied_on: Date,
    /// The interval in days (0: nothing is blocked).
    pub days: i64,
    /// The first local day a harvest is allowed again: `applied_on + days`.
    pub safe_on: Date,
}

impl SafetyDays {
    /// The interval of `days` of an application at `applied_at`, counted in `tz`.
    pub fn of(applied_at: OffsetDateTime, days: i64, tz: &TimeZone) -> Self {
        Self::from_day(local_day(applied_at, tz), days)
    }

    /// The interval of `days` from the local day `applied_on`.
    pub fn from_day(applied_on: Date, days: i64) -> Self {
        let days = days.max(0);
        Self {
            applied_on,
            days,
            safe_on: safe_on(applied_on, days),
        }
    }

    /// The last blocked day (`None` for an interval of 0 days).
    pub fn last_blocked_day(&self) -> Option<Date> {
        last_blocked_day(self.applied_on, self.days)
    }

    /// Whether a harvest dated `harvest_on` is refused; the days still to wait when it is.
    pub fn blocks(&self, harvest_on: Date) -> Option<i64> {
        blocks(self.applied_on, self.safe_on, harvest_on)
    }

    /// Whether the interval blocks `day` or a later day (it is still to run on `day`).
    pub fn runs_after(&self, day: Date) -> bool {
        self.days > 0 && self.safe_on > day
    }

    /// Whether the interval blocks any day of `from..=to`.
    pub fn overlaps(&self, from: Date, to: Date) -> bool {
        self.days > 0 && self.applied_on <= to && self.safe_on > from
    }
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

    fn zone(name: &str) -> TimeZone {
        TimeZone::get(name).unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    /// The local day of an instant, around local midnight and across every daylight-saving
    /// change of 2026 in both hemispheres (the offsets checked against the IANA database).
    #[test]
    fn the_day_of_an_instant_is_its_local_day_in_the_gardens_zone() {
        // (zone, instant, local day)
        let cases = [
            // The example: 18:00 PST on 29 November is 02:00 UTC on the 30th.
            (
                "America/Los_Angeles",
                datetime!(2026-11-30 02:00 UTC),
                date!(2026 - 11 - 29),
            ),
            (
                "America/Los_Angeles",
                datetime!(2026-11-29 18:00 -08:00),
                date!(2026 - 11 - 29),
            ),
            // Around local midnight.
            (
                "America/Los_Angeles",
                datetime!(2026-11-30 07:59:59 UTC),
                date!(2026 - 11 - 29),
            ),
            (
                "America/Los_Angeles",
                datetime!(2026-11-30 08:00 UTC),
                date!(2026 - 11 - 30),
            ),
            // Spring forward (8 March, 02:00 PST -> 03:00 PDT): midnight before is -08:00,
            // the next one -07:00.
            (
                "America/Los_Angeles",
                datetime!(2026-03-08 07:59:59 UTC),
                date!(2026 - 03 - 07),
            ),
            (
                "America/Los_Angeles",
                datetime!(2026-03-08 08:00 UTC),
                date!(2026 - 03 - 08),
            ),
            (
                "America/Los_Angeles",
                datetime!(2026-03-09 06:59:59 UTC),
                date!(2026 - 03 - 08),
            ),
            (
                "America/Los_Angeles",
                datetime!(2026-03-09 07:00 UTC),
                date!(2026 - 03 - 09),
            ),
            // Fall back (1 November, 02:00 PDT -> 01:00 PST): a day of 25 hours.
            (
                "America/Los_Angeles",
                datetime!(2026-11-01 06:59:59 UTC),
                date!(2026 - 10 - 31),
            ),
            (
                "America/Los_Angeles",
                datetime!(2026-11-01 07:00 UTC),
                date!(2026 - 11 - 01),
            ),
            (
                "America/Los_Angeles",
                datetime!(2026-11-02 07:59:59 UTC),
                date!(2026 - 11 - 01),
            ),
            (
                "America/Los_Angeles",
                datetime!(2026-11-02 08:00 UTC),
                date!(2026 - 11 - 02),
            ),
            // Berlin, spring (29 March, 02:00 CET -> 03:00 CEST) and autumn (25 October).
            (
                "Europe/Berlin",
                datetime!(2026-03-28 22:59:59 UTC),
                date!(2026 - 03 - 28),
            ),
            (
                "Europe/Berlin",
                datetime!(2026-03-28 23:00 UTC),
                date!(2026 - 03 - 29),
            ),
            (
                "Europe/Berlin",
                datetime!(2026-03-29 21:59:59 UTC),
                date!(2026 - 03 - 29),
            ),
            (
                "Europe/Berlin",
                datetime!(2026-03-29 22:00 UTC),
                date!(2026 - 03 - 30),
            ),
            (
                "Europe/Berlin",
                datetime!(2026-10-24 22:00 UTC),
                date!(2026 - 10 - 25),
            ),
            (
                "Europe/Berlin",
                datetime!(2026-10-25 22:59:59 UTC),
                date!(2026 - 10 - 25),
            ),
            (
                "Europe/Berlin",
                datetime!(2026-10-25 23:00 UTC),
                date!(2026 - 10 - 26),
            ),
            // Sydney: southern winter (AEST +10), summer (AEDT +11), DST from 4 October, to
            // 5 April.
            (
                "Australia/Sydney",
                datetime!(2026-06-01 22:00 UTC),
                date!(2026 - 06 - 02),
            ),
            (
                "Australia/Sydney",
                datetime!(2026-01-15 12:59:59 UTC),
                date!(2026 - 01 - 15),
            ),
            (
                "Australia/Sydney",
                datetime!(2026-01-15 13:00 UTC),
                date!(2026 - 01 - 16),
            ),
            (
                "Australia/Sydney",
                datetime!(2026-10-03 14:00 UTC),
                date!(2026 - 10 - 04),
            ),
            (
                "Australia/Sydney",
                datetime!(2026-10-04 13:00 UTC),
                date!(2026 - 10 - 05),
            ),
            (
                "Australia/Sydney",
                datetime!(2026-04-04 13:00 UTC),
                date!(2026 - 04 - 05),
            ),
            (
                "Australia/Sydney",
                datetime!(2026-04-05 13:59:59 UTC),
                date!(2026 - 04 - 05),
            ),
            (
                "Australia/Sydney",
                datetime!(2026-04-05 14:00 UTC),
                date!(2026 - 04 - 06),
            ),
            // The offset the client sent does not matter, only the instant and the zone.
            (
                "Australia/Sydney",
                datetime!(2026-06-01 14:00 -08:00),
                date!(2026 - 06 - 02),
            ),
            // UTC (a garden with no zone set) and the extremes of the offsets.
            (
                "UTC",
                datetime!(2026-06-01 23:59:59 UTC),
                date!(2026 - 06 - 01),
            ),
            (
                "UTC",
                datetime!(2026-06-01 20:00 -08:00),
                date!(2026 - 06 - 02),
            ),
            (
                "Pacific/Kiritimati",
                datetime!(2026-06-01 10:00 UTC),
                date!(2026 - 06 - 02),
            ),
            (
                "Etc/GMT+12",
                datetime!(2026-06-01 11:59 UTC),
                date!(2026 - 05 - 31),
            ),
        ];
        for (name, at, day) in cases {
            assert_eq!(local_day(at, &zone(name)), day, "{name} {at}");
        }
        assert_eq!(
            today_at(
                datetime!(2026-11-30 02:00 UTC),
                &zone("America/Los_Angeles")
            ),
            date!(2026 - 11 - 29)
        );
        assert_eq!(
            today_at(datetime!(2026-11-30 02:00 UTC), &zone("Australia/Sydney")),
            date!(2026 - 11 - 30)
        );
    }

    /// The first instant of a local day: midnight at that day's offset, or the end of the gap
    /// where a change skips midnight; the instant before it is the day before.
    #[test]
    fn a_local_day_starts_at_its_own_midnight() {
        // (zone, day, first instant)
        let cases = [
            (
                "UTC",
                date!(2026 - 06 - 01),
                datetime!(2026-06-01 00:00 UTC),
            ),
            (
                "America/Los_Angeles",
                date!(2026 - 11 - 29),
                datetime!(2026-11-29 08:00 UTC),
            ),
            (
                "America/Los_Angeles",
                date!(2026 - 03 - 08),
                datetime!(2026-03-08 08:00 UTC),
            ),
            (
                "America/Los_Angeles",
                date!(2026 - 03 - 09),
                datetime!(2026-03-09 07:00 UTC),
            ),
            (
                "America/Los_Angeles",
                date!(2026 - 11 - 01),
                datetime!(2026-11-01 07:00 UTC),
            ),
            (
                "America/Los_Angeles",
                date!(2026 - 11 - 02),
                datetime!(2026-11-02 08:00 UTC),
            ),
            (
                "Europe/Berlin",
                date!(2026 - 03 - 29),
                datetime!(2026-03-28 23:00 UTC),
            ),
            (
                "Europe/Berlin",
                date!(2026 - 03 - 30),
                datetime!(2026-03-29 22:00 UTC),
            ),
            (
                "Europe/Berlin",
                date!(2026 - 10 - 25),
                datetime!(2026-10-24 22:00 UTC),
            ),
            (
                "Europe/Berlin",
                date!(2026 - 10 - 26),
                datetime!(2026-10-25 23:00 UTC),
            ),
            (
                "Australia/Sydney",
                date!(2026 - 10 - 04),
                datetime!(2026-10-03 14:00 UTC),
            ),
            (
                "Australia/Sydney",
                date!(2026 - 10 - 05),
                datetime!(2026-10-04 13:00 UTC),
            ),
            (
                "Australia/Sydney",
                date!(2026 - 04 - 05),
                datetime!(2026-04-04 13:00 UTC),
            ),
            (
                "Australia/Sydney",
                date!(2026 - 04 - 06),
                datetime!(2026-04-05 14:00 UTC),
            ),
            // Midnight skipped: 18 October 2015 starts at 01:00 -02:00.
            (
                "America/Sao_Paulo",
                date!(2015 - 10 - 18),
                datetime!(2015-10-18 03:00 UTC),
            ),
        ];
        for (name, day, start) in cases {
            let tz = zone(name);
            assert_eq!(day_start(day, &tz), Some(start), "{name} {day}");
            assert_eq!(local_day(start, &tz), day, "{name} {day}");
            assert_eq!(
                local_day(start - Duration::seconds(1), &tz).next_day(),
                Some(day),
                "{name} {day}"
            );
        }
    }

    /// The gate in the garden's calendar: (zone, application instant, days, harvest date,
    /// days still to wait or None when the harvest is allowed).
    #[test]
    fn the_gate_counts_local_days() {
        let la = "America/Los_Angeles";
        let cases = [
            // The example: 1 day, sprayed 18:00 PST on 29 November (02:00 UTC on the
            // 30th). Dated the 29th: inside the interval; the 30th: a full local day later.
            (
                la,
                datetime!(2026-11-30 02:00 UTC),
                1,
                date!(2026 - 11 - 28),
                None,
            ),
            (
                la,
                datetime!(2026-11-30 02:00 UTC),
                1,
                date!(2026 - 11 - 29),
                Some(1),
            ),
            (
                la,
                datetime!(2026-11-30 02:00 UTC),
                1,
                date!(2026 - 11 - 30),
                None,
            ),
            // Counted in UTC the same spray would pass the 29th and refuse the 30th.
            (
                "UTC",
                datetime!(2026-11-30 02:00 UTC),
                1,
                date!(2026 - 11 - 29),
                None,
            ),
            (
                "UTC",
                datetime!(2026-11-30 02:00 UTC),
                1,
                date!(2026 - 11 - 30),
                Some(1),
            ),
            // Sydney, a 7-day label sprayed 08:00 AEST on 2 June (22:00 UTC on 1 June): the
            // sixth local day after it (8 June) is still refused, the seventh allowed.
            (
                "Australia/Sydney",
                datetime!(2026-06-01 22:00 UTC),
                7,
                date!(2026 - 06 - 01),
                None,
            ),
            (
                "Australia/Sydney",
                datetime!(2026-06-01 22:00 UTC),
                7,
                date!(2026 - 06 - 02),
                Some(7),
            ),
            (
                "Australia/Sydney",
                datetime!(2026-06-01 22:00 UTC),
                7,
                date!(2026 - 06 - 08),
                Some(1),
            ),
            (
                "Australia/Sydney",
                datetime!(2026-06-01 22:00 UTC),
                7,
                date!(2026 - 06 - 09),
                None,
            ),
            (
                "UTC",
                datetime!(2026-06-01 22:00 UTC),
                7,
                date!(2026 - 06 - 08),
                None,
            ),
            // A minute either side of local midnight: two different first days.
            (
                la,
                datetime!(2026-11-30 07:59 UTC),
                2,
                date!(2026 - 11 - 29),
                Some(2),
            ),
            (
                la,
                datetime!(2026-11-30 07:59 UTC),
                2,
                date!(2026 - 12 - 01),
                None,
            ),
            (
                la,
                datetime!(2026-11-30 08:01 UTC),
                2,
                date!(2026 - 11 - 29),
                None,
            ),
            (
                la,
                datetime!(2026-11-30 08:01 UTC),
                2,
                date!(2026 - 12 - 01),
                Some(1),
            ),
            (
                la,
                datetime!(2026-11-30 08:01 UTC),
                2,
                date!(2026 - 12 - 02),
                None,
            ),
            // Daylight saving: each instant reads as another day at the other offset.
            // 00:30 PDT on 9 March (23:30 on the 8th at PST).
            (
                la,
                datetime!(2026-03-09 07:30 UTC),
                1,
                date!(2026 - 03 - 08),
                None,
            ),
            (
                la,
                datetime!(2026-03-09 07:30 UTC),
                1,
                date!(2026 - 03 - 09),
                Some(1),
            ),
            // 23:30 PST on 1 November (00:30 on the 2nd at PDT).
            (
                la,
                datetime!(2026-11-02 07:30 UTC),
                1,
                date!(2026 - 11 - 01),
                Some(1),
            ),
            (
                la,
                datetime!(2026-11-02 07:30 UTC),
                1,
                date!(2026 - 11 - 02),
                None,
            ),
            // Berlin: 00:30 CEST on 30 March; 23:30 CET on 25 October.
            (
                "Europe/Berlin",
                datetime!(2026-03-29 22:30 UTC),
                3,
                date!(2026 - 03 - 29),
                None,
            ),
            (
                "Europe/Berlin",
                datetime!(2026-03-29 22:30 UTC),
                3,
                date!(2026 - 04 - 01),
                Some(1),
            ),
            (
                "Europe/Berlin",
                datetime!(2026-03-29 22:30 UTC),
                3,
                date!(2026 - 04 - 02),
                None,
            ),
            (
                "Europe/Berlin",
                datetime!(2026-10-25 22:30 UTC),
                3,
                date!(2026 - 10 - 25),
                Some(3),
            ),
            (
                "Europe/Berlin",
                datetime!(2026-10-25 22:30 UTC),
                3,
                date!(2026 - 10 - 28),
                None,
            ),
            // Sydney: 00:30 AEDT on 5 October; 23:30 AEST on 5 April.
            (
                "Australia/Sydney",
                datetime!(2026-10-04 13:30 UTC),
                1,
                date!(2026 - 10 - 04),
                None,
            ),
            (
                "Australia/Sydney",
                datetime!(2026-10-04 13:30 UTC),
                1,
                date!(2026 - 10 - 05),
                Some(1),
            ),
            (
                "Australia/Sydney",
                datetime!(2026-04-05 13:30 UTC),
                1,
                date!(2026 - 04 - 05),
                Some(1),
            ),
            (
                "Australia/Sydney",
                datetime!(2026-04-05 13:30 UTC),
                1,
                date!(2026 - 04 - 06),
                None,
            ),
            // 0 days blocks nothing, not even the day itself.
            (
                la,
                datetime!(2026-11-30 02:00 UTC),
                0,
                date!(2026 - 11 - 29),
                None,
            ),
        ];
        for (name, at, days, harvest, remaining) in cases {
            let s = SafetyDays::of(at, days, &zone(name));
            assert_eq!(
                s.blocks(harvest),
                remaining,
                "{name} {at} +{days}: {harvest}"
            );
            assert_eq!(
                s.safe_on,
                s.applied_on + Duration::days(days),
                "{name} {at}"
            );
        }
    }

    /// Changing the garden's zone re-counts an interval from the same instant: every view
    /// (first day, last day, first allowed day, running, overlapping) moves together.
    #[test]
    fn a_new_zone_recounts_the_same_application() {
        let at = datetime!(2026-11-30 02:00 UTC);
        // (zone, first day, last blocked day, first allowed day)
        let cases = [
            (
                "America/Los_Angeles",
                date!(2026 - 11 - 29),
                date!(2026 - 11 - 30),
                date!(2026 - 12 - 01),
            ),
            (
                "UTC",
                date!(2026 - 11 - 30),
                date!(2026 - 12 - 01),
                date!(2026 - 12 - 02),
            ),
            (
                "Australia/Sydney",
                date!(2026 - 11 - 30),
                date!(2026 - 12 - 01),
                date!(2026 - 12 - 02),
            ),
            (
                "Pacific/Honolulu",
                date!(2026 - 11 - 29),
                date!(2026 - 11 - 30),
                date!(2026 - 12 - 01),
            ),
        ];
        for (name, first, last, allowed) in cases {
            let s = SafetyDays::of(at, 2, &zone(name));
            assert_eq!(
                (s.applied_on, s.last_blocked_day(), s.safe_on),
                (first, Some(last), allowed),
                "{name}"
            );
            assert!(s.runs_after(last) && !s.runs_after(allowed), "{name}");
            assert!(
                s.overlaps(last, allowed) && !s.overlaps(allowed, allowed),
                "{name}"
            );
            assert!(!s.overlaps(first - Duration::days(3), first - Duration::days(1)));
        }
        let none = SafetyDays::of(at, 0, &zone("UTC"));
        assert_eq!(none.last_blocked_day(), None);
        assert!(!none.runs_after(date!(2026 - 11 - 01)));
        assert!(!none.overlaps(date!(2026 - 11 - 01), date!(2026 - 12 - 31)));
        // A negative count is no interval.
        assert_eq!(SafetyDays::from_day(date!(2026 - 11 - 30), -3).days, 0);
    }

    /// A harvest dated with a plain date is that local date; a date-time is its local day.
    #[test]
    fn a_harvest_date_is_the_growers_local_date() {
        let la = zone("America/Los_Angeles");
        let sydney = zone("Australia/Sydney");
        // (dated, zone, local day)
        let cases = [
            (
                DayOrInstant::Day(date!(2026 - 11 - 29)),
                &la,
                date!(2026 - 11 - 29),
            ),
            (
                DayOrInstant::Day(date!(2026 - 11 - 29)),
                &sydney,
                date!(2026 - 11 - 29),
            ),
            (
                DayOrInstant::At(datetime!(2026-11-30 02:00 UTC)),
                &la,
                date!(2026 - 11 - 29),
            ),
            (
                DayOrInstant::At(datetime!(2026-11-30 02:00 UTC)),
                &sydney,
                date!(2026 - 11 - 30),
            ),
            (
                DayOrInstant::At(datetime!(2026-06-01 23:00 +01:00)),
                &sydney,
                date!(2026 - 06 - 02),
            ),
        ];
        for (dated, tz, day) in cases {
            assert_eq!(dated.local_day(tz), day, "{dated:?}");
        }
        let read = |s: &str| serde_json::from_value::<DayOrInstant>(serde_json::json!(s));
        assert_eq!(
            read("2026-11-29").ok(),
            Some(DayOrInstant::Day(date!(2026 - 11 - 29)))
        );
        assert_eq!(
            read("2026-11-29T18:00:00-08:00").ok(),
            Some(DayOrInstant::At(datetime!(2026-11-29 18:00 -08:00)))
        );
        assert!(read("2026-11-29T18:00:00").is_err());
        assert!(read("29.11.2026").is_err());
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
