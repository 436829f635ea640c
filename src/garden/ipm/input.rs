//! Field readers the IPM and harvest bodies share (on top of `http::json::JsonFields`): numbers
//! within bounds, RFC 3339 instants and dates that may not lie in the future, lists of short
//! texts and catalogue keys, nested objects read by their own body type.

use serde_json::Value;
use time::format_description::well_known::Rfc3339;
use time::{Date, Duration, OffsetDateTime};

use crate::error::AppError;
use crate::values::json::{FromJson, JsonFields, is_blank, parse_json};

/// The earliest date or instant accepted.
pub const EARLIEST: Date = time::macros::date!(1900 - 01 - 01);
/// Clock skew allowed for an instant "now" sent by a client.
pub const SKEW: Duration = Duration::minutes(5);

/// The UTC day today. The safety-interval gate and the harvest dates count the garden's own
/// day instead (`rules::karenz::today` in the garden's time zone).
pub fn today() -> Date {
    OffsetDateTime::now_utc().date()
}

/// The latest local date anywhere on Earth now (UTC+14): a date after it is in the future in
/// every time zone; the garden's own today is checked where its zone is known.
pub fn latest_local_today() -> Date {
    (OffsetDateTime::now_utc() + Duration::hours(14)).date()
}

/// An optional number within `min..=max` (`min` exclusive when `above_min`).
pub fn opt_number(
    f: &mut JsonFields,
    name: &'static str,
    min: f64,
    max: f64,
    above_min: bool,
) -> Option<Option<f64>> {
    match f.value(name) {
        None => Some(None),
        Some(Value::Number(n)) => match n.as_f64() {
            Some(x)
                if x.is_finite() && (if above_min { x > min } else { x >= min }) && x <= max =>
            {
                Some(Some(x))
            }
            _ => {
                let low = if above_min { "above" } else { "at least" };
                f.reject_field(
                    name,
                    format!("must be {low} {min} and at most {max}"),
                    "value_error",
                );
                None
            }
        },
        Some(_) => {
            f.reject_field(name, "must be a number", "type_error");
            None
        }
    }
}

/// An optional RFC 3339 instant, not in the future (5 minutes of skew) nor before 1900.
pub fn opt_instant(f: &mut JsonFields, name: &'static str) -> Option<Option<OffsetDateTime>> {
    match f.value(name) {
        None => Some(None),
        Some(Value::String(s)) => match OffsetDateTime::parse(s.trim(), &Rfc3339) {
            Ok(t) if t > OffsetDateTime::now_utc() + SKEW => {
                f.reject_field(name, "must not be in the future", "value_error");
                None
            }
            Ok(t) if t.to_offset(time::UtcOffset::UTC).date() < EARLIEST => {
                f.reject_field(name, "must not be before 1900-01-01", "value_error");
                None
            }
            Ok(t) => Some(Some(t)),
            Err(_) => {
                f.reject_field(name, instant_reason(&s), "value_error");
                None
            }
        },
        Some(_) => {
            f.reject_field(name, "must be a date-time string (RFC 3339)", "type_error");
            None
        }
    }
}

/// Why a text is not an instant; a date-time without its offset is named as such (its day
/// would depend on a time zone nobody stated).
fn instant_reason(s: &str) -> &'static str {
    let local = time::macros::format_description!(
        "[year]-[month]-[day]T[hour]:[minute][optional [:[second][optional [.[subsecond]]]]]"
    );
    if time::PrimitiveDateTime::parse(s.trim(), local).is_ok() {
        "must state its UTC offset (Z or ±hh:mm, e.g. 2026-06-01T09:30:00-08:00)"
    } else {
        "must be a date-time (RFC 3339, e.g. 2026-06-01T09:30:00Z)"
    }
}

/// An optional harvest day from 1900-01-01 on: a date (YYYY-MM-DD), the grower's local date,
/// or an RFC 3339 date-time with its offset, which counts as its local day in the garden's
/// time zone (`rules::karenz::DayOrInstant`). Here only what is in the future everywhere is
/// refused (a date after the latest local today on Earth, an instant past now); the service
/// checks the garden's own today once it knows the zone.
pub fn opt_past_day(
    f: &mut JsonFields,
    name: &'static str,
) -> Option<Option<crate::rules::karenz::DayOrInstant>> {
    use crate::rules::karenz::DayOrInstant;
    let fmt = time::macros::format_description!("[year]-[month]-[day]");
    match f.value(name) {
        None => Some(None),
        Some(Value::String(s)) => {
            let s = s.trim();
            let day = if s.len() == 10 {
                Date::parse(s, &fmt)
                    .map(DayOrInstant::Day)
                    .map_err(|_| "must be a date (YYYY-MM-DD) or a date-time with its UTC offset")
            } else {
                OffsetDateTime::parse(s, &Rfc3339)
                    .map(DayOrInstant::At)
                    .map_err(|_| instant_reason(s))
            };
            let future = |d: &DayOrInstant| match d {
                DayOrInstant::Day(d) => *d > latest_local_today(),
                DayOrInstant::At(t) => *t > OffsetDateTime::now_utc() + SKEW,
            };
            let early = |d: &DayOrInstant| match d {
                DayOrInstant::Day(d) => *d < EARLIEST,
                DayOrInstant::At(t) => t.to_offset(time::UtcOffset::UTC).date() < EARLIEST,
            };
            match day {
                Ok(d) if future(&d) => {
                    f.reject_field(name, "must not be in the future", "value_error");
                    None
                }
                Ok(d) if early(&d) => {
                    f.reject_field(name, "must not be before 1900-01-01", "value_error");
                    None
                }
                Ok(d) => Some(Some(d)),
                Err(reason) => {
                    f.reject_field(name, reason, "value_error");
                    None
                }
            }
        }
        Some(_) => {
            f.reject_field(name, "must be a date string (YYYY-MM-DD)", "type_error");
            None
        }
    }
}

/// An optional date (YYYY-MM-DD) between 1900-01-01 and today.
pub fn opt_past_date(f: &mut JsonFields, name: &'static str) -> Option<Option<Date>> {
    let fmt = time::macros::format_description!("[year]-[month]-[day]");
    match f.value(name) {
        None => Some(None),
        Some(Value::String(s)) => match Date::parse(s.trim(), &fmt) {
            Ok(d) if d > today() => {
                f.reject_field(name, "must not be in the future", "value_error");
                None
            }
            Ok(d) if d < EARLIEST => {
                f.reject_field(name, "must not be before 1900-01-01", "value_error");
                None
            }
            Ok(d) => Some(Some(d)),
            Err(_) => {
                f.reject_field(name, "must be a date (YYYY-MM-DD)", "value_error");
                None
            }
        },
        Some(_) => {
            f.reject_field(name, "must be a date string (YYYY-MM-DD)", "type_error");
            None
        }
    }
}

/// An optional single-line text of 1..=max visible characters; absent, null and blank mean none.
pub fn opt_line(f: &mut JsonFields, name: &'static str, max: usize) -> Option<Option<String>> {
    match f.value(name) {
        None => Some(None),
        Some(Value::String(raw)) => {
            if raw.chars().any(char::is_control) {
                f.reject_field(name, "must not contain control characters", "value_error");
                None
            } else if raw.chars().count() > max {
                f.reject_field(
                    name,
                    format!("must have at most {max} characters"),
                    "string_too_long",
                );
                None
            } else {
                let t = raw.trim_matches(is_blank);
                Some((!t.is_empty()).then(|| t.to_owned()))
            }
        }
        Some(_) => {
            f.reject_field(name, "must be a string", "type_error");
            None
        }
    }
}

/// An optional list (absent or null: empty) of at most `items` single-line texts of 1..=len
/// visible characters each; duplicates are dropped, order kept.
pub fn text_list(
    f: &mut JsonFields,
    name: &'static str,
    items: usize,
    len: usize,
) -> Option<Vec<String>> {
    let Some(v) = f.value(name) else {
        return Some(Vec::new());
    };
    let Value::Array(list) = v else {
        f.reject_field(name, "must be a list of strings", "type_error");
        return None;
    };
    if list.len() > items {
        f.reject_field(name, format!("at most {items} items"), "too_long");
        return None;
    }
    let mut out: Vec<String> = Vec::new();
    let mut ok = true;
    for (i, item) in list.iter().enumerate() {
        let good = item.as_str().and_then(|s| {
            let t = s.trim_matches(is_blank);
            (!t.is_empty() && s.chars().count() <= len && !s.chars().any(char::is_control))
                .then(|| t.to_owned())
        });
        match good {
            Some(t) => {
                if !out.contains(&t) {
                    out.push(t);
                }
            }
            None => {
                ok = false;
                f.reject_field(
                    &format!("{name}[{i}]"),
                    format!("must be a string of 1 to {len} characters, not blank, no control characters"),
                    "value_error",
                );
            }
        }
    }
    ok.then_some(out)
}

/// An optional list of nested objects, each read as `T`; an item's errors are reported as
/// `<name>[i].<field>`.
pub fn object_list<T: FromJson>(
    f: &mut JsonFields,
    name: &'static str,
    max: usize,
) -> Option<Vec<T>> {
    let Some(v) = f.value(name) else {
        return Some(Vec::new());
    };
    let Value::Array(list) = v else {
        f.reject_field(name, "must be a list of objects", "type_error");
        return None;
    };
    if list.len() > max {
        f.reject_field(name, format!("at most {max} items"), "too_long");
        return None;
    }
    let mut out = Vec::with_capacity(list.len());
    let mut ok = true;
    for (i, item) in list.into_iter().enumerate() {
        let bytes = serde_json::to_vec(&item).unwrap_or_default();
        match parse_json::<T>(&bytes) {
            Ok(t) => out.push(t),
            Err(e) => {
                ok = false;
                nest(f, name, i, e);
            }
        }
    }
    ok.then_some(out)
}

fn nest(f: &mut JsonFields, name: &str, i: usize, e: AppError) {
    if e.details().is_empty() {
        f.reject_field(&format!("{name}[{i}]"), "must be an object", "type_error");
    }
    for d in e.details() {
        let inner = d.field.strip_prefix("body").unwrap_or(&d.field);
        let inner = inner.strip_prefix('.').map(|s| format!(".{s}"));
        f.reject_field(
            &format!("{name}[{i}]{}", inner.unwrap_or_default()),
            d.reason.clone(),
            &d.code,
        );
    }
}

/// Reads a value from a list of allowed names; absent or null: `default`.
pub fn opt_choice(
    f: &mut JsonFields,
    name: &'static str,
    allowed: &'static [&'static str],
) -> Option<Option<&'static str>> {
    match f.value(name) {
        None => Some(None),
        Some(Value::String(s)) => match allowed.iter().find(|a| **a == s) {
            Some(a) => Some(Some(*a)),
            None => {
                f.reject_field(
                    name,
                    format!("must be one of: {}", allowed.join(", ")),
                    "value_error",
                );
                None
            }
        },
        Some(_) => {
            f.reject_field(
                name,
                format!("must be a string, one of: {}", allowed.join(", ")),
                "type_error",
            );
            None
        }
    }
}
