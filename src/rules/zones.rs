//! USDA hardiness zones 1a–13b. Limits are computed, never stored: index
//! i = 2·(n−1) + (0 for a, 1 for b); min °F = −60 + 5·i; max °F = min + 5; °C = (°F − 32)·5/9.

/// A zone such as `7a`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Zone {
    /// 0 for 1a … 25 for 13b.
    index: u8,
}

/// The computed limits of a zone (annual extreme minimum temperature).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ZoneLimits {
    pub min_f: f64,
    pub max_f: f64,
    pub min_c: f64,
    pub max_c: f64,
}

pub const ZONE_COUNT: u8 = 26;

impl Zone {
    /// Parses `1a`…`13b` (lower-case letter, no leading zero).
    pub fn parse(raw: &str) -> Option<Self> {
        let (number, half) = if let Some(n) = raw.strip_suffix('a') {
            (n, 0)
        } else {
            (raw.strip_suffix('b')?, 1)
        };
        if number.is_empty()
            || number.starts_with('0')
            || !number.bytes().all(|b| b.is_ascii_digit())
        {
            return None;
        }
        let n: u8 = number.parse().ok()?;
        if !(1..=13).contains(&n) {
            return None;
        }
        Some(Self {
            index: 2 * (n - 1) + half,
        })
    }

    pub fn all() -> impl Iterator<Item = Zone> {
        (0..ZONE_COUNT).map(|index| Zone { index })
    }

    pub fn index(self) -> u8 {
        self.index
    }

    pub fn name(self) -> String {
        let n = self.index / 2 + 1;
        let half = if self.index.is_multiple_of(2) {
            'a'
        } else {
            'b'
        };
        format!("{n}{half}")
    }

    pub fn limits(self) -> ZoneLimits {
        let min_f = -60.0 + 5.0 * f64::from(self.index);
        let max_f = min_f + 5.0;
        ZoneLimits {
            min_f,
            max_f,
            min_c: fahrenheit_to_celsius(min_f),
            max_c: fahrenheit_to_celsius(max_f),
        }
    }
}

pub fn fahrenheit_to_celsius(f: f64) -> f64 {
    (f - 32.0) * 5.0 / 9.0
}

/// `^(1[0-3]|[1-9])[ab]$` as a check (the same rule the OpenAPI pattern states).
pub fn is_zone(raw: &str) -> bool {
    Zone::parse(raw).is_some()
}

pub const ZONE_PATTERN: &str = "^(1[0-3]|[1-9])[ab]$";

/// Every zone name, in order, for schemas that list them as an enum (the test below keeps it
/// equal to [`Zone::all`]).
pub const ZONE_NAMES: &[&str] = &[
    "1a", "1b", "2a", "2b", "3a", "3b", "4a", "4b", "5a", "5b", "6a", "6b", "7a", "7b", "8a", "8b",
    "9a", "9b", "10a", "10b", "11a", "11b", "12a", "12b", "13a", "13b",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_list_is_every_zone_in_order() {
        let names: Vec<String> = Zone::all().map(Zone::name).collect();
        assert_eq!(names, ZONE_NAMES);
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 0.05
    }

    #[test]
    fn limits_are_computed() {
        for (zone, index, min_f, max_f, min_c, max_c) in [
            ("1a", 0, -60.0, -55.0, -51.1, -48.3),
            ("1b", 1, -55.0, -50.0, -48.3, -45.6),
            ("5b", 9, -15.0, -10.0, -26.1, -23.3),
            ("7a", 12, 0.0, 5.0, -17.8, -15.0),
            ("7b", 13, 5.0, 10.0, -15.0, -12.2),
            ("10a", 18, 30.0, 35.0, -1.1, 1.7),
            ("13b", 25, 65.0, 70.0, 18.3, 21.1),
        ] {
            let z = Zone::parse(zone).expect(zone);
            assert_eq!(z.index(), index, "{zone}");
            assert_eq!(z.name(), zone);
            let l = z.limits();
            assert!(
                close(l.min_f, min_f) && close(l.max_f, max_f),
                "{zone} {l:?}"
            );
            assert!(
                close(l.min_c, min_c) && close(l.max_c, max_c),
                "{zone} {l:?}"
            );
        }
    }

    #[test]
    fn refuses_what_is_not_a_zone() {
        for raw in [
            "", "a", "7", "0a", "14a", "07a", "7c", "7A", " 7a", "7a ", "-1a", "100a",
        ] {
            assert!(Zone::parse(raw).is_none(), "{raw:?}");
        }
    }

    #[test]
    fn twenty_six_zones_in_order() {
        let names: Vec<String> = Zone::all().map(Zone::name).collect();
        assert_eq!(names.len(), 26);
        assert_eq!(names.first().map(String::as_str), Some("1a"));
        assert_eq!(names.last().map(String::as_str), Some("13b"));
        assert!(Zone::all().all(|z| Zone::parse(&z.name()) == Some(z)));
    }
}
