//! Value lists shared by several kinds, and the forms of names the catalogue checks.

pub const GROWTH_HABITS: &[&str] = &[
    "herb",
    "shrub",
    "tree",
    "vine",
    "groundcover",
    "epiphyte",
    "fern",
    "bulb_geophyte",
    "palm",
    "succulent",
];
pub const FROST: &[&str] = &["sensitive", "moderate", "hardy", "very_hardy"];
pub const CYCLE_TYPES: &[&str] = &["annual", "biennial", "perennial"];
pub const LOW_MEDIUM_HIGH: &[&str] = &["low", "medium", "high"];
pub const SITE_TYPES: &[&str] = &[
    "apartment",
    "garden",
    "balcony",
    "greenhouse",
    "windowsill",
    "grow_tent",
];

/// Plain text limits.
pub const NAME_MAX: usize = 200;
pub const SHORT_MAX: usize = 120;
pub const TEXT_MAX: usize = 4000;

fn letters_token(t: &str) -> bool {
    !t.is_empty()
        && t.chars()
            .all(|c| c.is_ascii_alphabetic() || matches!(c, '×' | '.' | '-' | '\''))
}

/// A binomial (or longer) scientific name: tokens of letters (and `× . - '`) separated by
/// single spaces, at least two, the first starting with a letter or `×`.
pub fn is_scientific_name(s: &str) -> bool {
    let tokens: Vec<&str> = s.split(' ').collect();
    tokens.len() >= 2
        && tokens.iter().all(|t| letters_token(t))
        && tokens[0].starts_with(|c: char| c.is_ascii_alphabetic() || c == '×')
}
pub const SCIENTIFIC_NAME_PATTERN: &str = r"^[A-Za-z×][A-Za-z×.'\-]*( [A-Za-z×.'\-]+)+$";

/// `snake_case`: a lower-case letter, then lower-case letters, digits and `_`, at most 60.
pub fn is_snake(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_lowercase())
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}
pub const SNAKE_PATTERN: &str = "^[a-z][a-z0-9_]*$";

/// A slug: `[a-z0-9]` runs joined by single `-`.
pub fn is_slug(s: &str) -> bool {
    !s.is_empty()
        && s.split('-').all(|p| {
            !p.is_empty()
                && p.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        })
}
pub const SLUG_PATTERN: &str = "^[a-z0-9]+(-[a-z0-9]+)*$";

/// A capitalised Latin word ending in `suffix` (`aceae` for families, `ales` for orders).
pub fn latin_ending(s: &str, suffix: &str) -> bool {
    // `^[A-Z][a-z]+suffix$`: a capital, at least one small letter, then the suffix.
    s.len() > suffix.len() + 1
        && s.ends_with(suffix)
        && s.starts_with(|c: char| c.is_ascii_uppercase())
        && s.chars().skip(1).all(|c| c.is_ascii_lowercase())
}
pub fn is_family_name(s: &str) -> bool {
    latin_ending(s, "aceae")
}
pub fn is_order_name(s: &str) -> bool {
    latin_ending(s, "ales")
}
pub const FAMILY_PATTERN: &str = "^[A-Z][a-z]+aceae$";
pub const ORDER_PATTERN: &str = "^[A-Z][a-z]+ales$";

/// A size such as `40` or `40-60` (centimetres).
pub fn is_size_range(s: &str) -> bool {
    let digits = |p: &str| (1..=4).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_digit());
    match s.split_once('-') {
        None => digits(s),
        Some((a, b)) => digits(a) && digits(b),
    }
}
pub const SIZE_PATTERN: &str = "^[0-9]{1,4}(-[0-9]{1,4})?$";

/// A day of the year as `MM-DD`.
pub fn is_month_day(s: &str) -> bool {
    let Some((m, d)) = s.split_once('-') else {
        return false;
    };
    let two = |p: &str| p.len() == 2 && p.bytes().all(|b| b.is_ascii_digit());
    if !two(m) || !two(d) {
        return false;
    }
    let (m, d): (u32, u32) = (m.parse().unwrap_or(0), d.parse().unwrap_or(0));
    let days = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    (1..=12).contains(&m) && d >= 1 && d <= days[(m - 1) as usize]
}
pub const MONTH_DAY_PATTERN: &str = "^(02-(0[1-9]|[12][0-9])|(0[469]|11)-(0[1-9]|[12][0-9]|30)|(0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01]))$";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        for (s, ok) in [
            ("Solanum lycopersicum", true),
            ("Fragaria × ananassa", true),
            ("Mentha x piperita", true),
            ("Solanum", false),
            ("Solanum  lycopersicum", false),
            (" Solanum lycopersicum", false),
            ("solanum lycopersicum", true),
            ("Ficus 1", false),
        ] {
            assert_eq!(is_scientific_name(s), ok, "{s}");
        }
        assert!(
            is_family_name("Solanaceae")
                && !is_family_name("Solanales")
                && !is_family_name("aceae")
        );
        assert!(is_order_name("Solanales") && !is_order_name("Solanaceae"));
        assert!(is_slug("balkon-tomaten") && !is_slug("-x") && !is_slug("a--b") && !is_slug("A"));
        assert!(is_snake("annual_harvest") && !is_snake("Annual") && !is_snake("_x"));
        assert!(
            is_size_range("40-60")
                && is_size_range("30")
                && !is_size_range("40-")
                && !is_size_range("12345")
        );
        assert!(
            is_month_day("05-15")
                && !is_month_day("02-30")
                && !is_month_day("13-01")
                && !is_month_day("5-15")
        );
    }
}
