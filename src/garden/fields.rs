//! Body getters the garden's bodies share beyond `http::json` (record keys, numbers, dates and
//! clearable patches of them). Each records its own `details` entry, as the json getters do.

use serde_json::Value;
use time::Date;
use time::macros::format_description;
use uuid::Uuid;

use crate::values::json::{JsonFields, Patch};

fn as_key(v: &Value) -> Option<Uuid> {
    v.as_str().and_then(|s| Uuid::parse_str(s.trim()).ok())
}

/// A required record key (UUID).
pub fn key(f: &mut JsonFields, name: &'static str) -> Option<Uuid> {
    match f.raw(name) {
        None | Some(Value::Null) => {
            f.reject_field(name, "field required", "missing");
            None
        }
        Some(v) => {
            let k = as_key(&v);
            if k.is_none() {
                f.reject_field(name, "must be a record key (UUID)", "value_error");
            }
            k
        }
    }
}

/// An optional record key; absent and null mean none.
pub fn opt_key(f: &mut JsonFields, name: &'static str) -> Option<Option<Uuid>> {
    match f.raw(name) {
        None | Some(Value::Null) => Some(None),
        Some(v) => match as_key(&v) {
            Some(k) => Some(Some(k)),
            None => {
                f.reject_field(name, "must be a record key (UUID)", "value_error");
                None
            }
        },
    }
}

/// A patch of a long text (several lines allowed): absent keeps, null or blank clears.
pub fn patch_long_text(
    f: &mut JsonFields,
    name: &'static str,
    max: usize,
) -> Option<Patch<String>> {
    match f.raw(name) {
        None => Some(Patch::Keep),
        Some(Value::Null) => Some(Patch::Clear),
        Some(v) => {
            // The long-text reader works on a field set; this one holds only the value.
            let mut inner = JsonFields::new([(name.to_owned(), v)].into_iter().collect());
            match inner.opt_long_text(name, max) {
                Some(Some(t)) => Some(Patch::Set(t)),
                Some(None) => Some(Patch::Clear),
                None => {
                    f.reject_field(
                        name,
                        format!(
                            "must be a text of at most {max} characters without control characters"
                        ),
                        "value_error",
                    );
                    None
                }
            }
        }
    }
}

/// A patch of a record key: absent keeps, null clears.
pub fn patch_key(f: &mut JsonFields, name: &'static str) -> Option<Patch<Uuid>> {
    match f.raw(name) {
        None => Some(Patch::Keep),
        Some(Value::Null) => Some(Patch::Clear),
        Some(v) => match as_key(&v) {
            Some(k) => Some(Patch::Set(k)),
            None => {
                f.reject_field(name, "must be a record key (UUID)", "value_error");
                None
            }
        },
    }
}

/// A patch of a key that cannot be cleared: absent keeps, null is refused.
pub fn patch_required_key(f: &mut JsonFields, name: &'static str) -> Option<Option<Uuid>> {
    match patch_key(f, name)? {
        Patch::Keep => Some(None),
        Patch::Set(k) => Some(Some(k)),
        Patch::Clear => {
            f.reject_field(
                name,
                "cannot be null; omit it to keep the value",
                "type_error",
            );
            None
        }
    }
}

fn number_in(f: &mut JsonFields, name: &str, v: &Value, min: f64, max: f64) -> Option<f64> {
    match v.as_f64() {
        Some(n) if (min..=max).contains(&n) => Some(n),
        Some(_) => {
            f.reject_field(
                name,
                format!("must be between {min} and {max}"),
                "value_error",
            );
            None
        }
        None => {
            f.reject_field(name, "must be a number", "type_error");
            None
        }
    }
}

/// An optional number within bounds; absent and null mean none.
pub fn opt_number(
    f: &mut JsonFields,
    name: &'static str,
    min: f64,
    max: f64,
) -> Option<Option<f64>> {
    match f.raw(name) {
        None | Some(Value::Null) => Some(None),
        Some(v) => number_in(f, name, &v, min, max).map(Some),
    }
}

/// A patch of a number: absent keeps, null clears.
pub fn patch_number(
    f: &mut JsonFields,
    name: &'static str,
    min: f64,
    max: f64,
) -> Option<Patch<f64>> {
    match f.raw(name) {
        None => Some(Patch::Keep),
        Some(Value::Null) => Some(Patch::Clear),
        Some(v) => number_in(f, name, &v, min, max).map(Patch::Set),
    }
}

fn int_in(f: &mut JsonFields, name: &str, v: &Value, min: i64, max: i64) -> Option<i64> {
    match crate::values::json::whole_number(v) {
        Some(n) if (min..=max).contains(&n) => Some(n),
        Some(_) => {
            f.reject_field(
                name,
                format!("must be between {min} and {max}"),
                "value_error",
            );
            None
        }
        None => {
            f.reject_field(name, "must be a whole number", "type_error");
            None
        }
    }
}

/// A patch of an integer: absent keeps, null clears.
pub fn patch_int(f: &mut JsonFields, name: &'static str, min: i64, max: i64) -> Option<Patch<i64>> {
    match f.raw(name) {
        None => Some(Patch::Keep),
        Some(Value::Null) => Some(Patch::Clear),
        Some(v) => int_in(f, name, &v, min, max).map(Patch::Set),
    }
}

/// A patch of an integer that cannot be cleared: absent keeps, null is refused.
pub fn patch_required_int(
    f: &mut JsonFields,
    name: &'static str,
    min: i64,
    max: i64,
) -> Option<Option<i64>> {
    match f.raw(name) {
        None => Some(None),
        Some(Value::Null) => {
            f.reject_field(
                name,
                "cannot be null; omit it to keep the value",
                "type_error",
            );
            None
        }
        Some(v) => int_in(f, name, &v, min, max).map(Some),
    }
}

/// A value from a fixed list, optional for creates: absent and null mean none.
pub fn opt_choice<T: Copy>(
    f: &mut JsonFields,
    name: &'static str,
    options: &[(&str, T)],
) -> Option<Option<T>> {
    match patch_choice(f, name, options)? {
        Patch::Keep | Patch::Clear => Some(None),
        Patch::Set(v) => Some(Some(v)),
    }
}

/// A patch of a value from a fixed list: absent keeps, null clears.
pub fn patch_choice<T: Copy>(
    f: &mut JsonFields,
    name: &'static str,
    options: &[(&str, T)],
) -> Option<Patch<T>> {
    match f.raw(name) {
        None => Some(Patch::Keep),
        Some(Value::Null) => Some(Patch::Clear),
        Some(v) => {
            let found = v
                .as_str()
                .and_then(|s| options.iter().find(|(n, _)| *n == s).map(|(_, t)| *t));
            if found.is_none() {
                let allowed: Vec<&str> = options.iter().map(|(n, _)| *n).collect();
                f.reject_field(
                    name,
                    format!("must be one of: {}", allowed.join(", ")),
                    "value_error",
                );
            }
            found.map(Patch::Set)
        }
    }
}

/// A calendar date `YYYY-MM-DD`; absent and null mean none.
pub fn opt_date(f: &mut JsonFields, name: &'static str) -> Option<Option<Date>> {
    match f.raw(name) {
        None | Some(Value::Null) => Some(None),
        Some(v) => {
            let parsed = v
                .as_str()
                .and_then(|s| Date::parse(s, format_description!("[year]-[month]-[day]")).ok());
            if parsed.is_none() {
                f.reject_field(name, "must be a date YYYY-MM-DD", "value_error");
            }
            parsed.map(Some)
        }
    }
}

/// A list of distinct record keys of at most `max` entries.
pub fn key_list(f: &mut JsonFields, name: &'static str, max: usize) -> Option<Vec<Uuid>> {
    let Some(v) = f.raw(name).filter(|v| !v.is_null()) else {
        f.reject_field(name, "field required", "missing");
        return None;
    };
    let Some(items) = v.as_array() else {
        f.reject_field(name, "must be a list of record keys", "type_error");
        return None;
    };
    if items.len() > max {
        f.reject_field(
            name,
            format!("must have at most {max} entries"),
            "value_error",
        );
        return None;
    }
    let mut keys = Vec::with_capacity(items.len());
    for item in items {
        let Some(k) = as_key(item) else {
            f.reject_field(
                name,
                "every entry must be a record key (UUID)",
                "value_error",
            );
            return None;
        };
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    Some(keys)
}

/// A patch of a hardiness zone (`1a` … `13b`): absent keeps, null clears.
pub fn patch_zone(f: &mut JsonFields, name: &'static str) -> Option<Patch<String>> {
    match f.raw(name) {
        None => Some(Patch::Keep),
        Some(Value::Null) => Some(Patch::Clear),
        Some(Value::String(z)) if crate::rules::zones::is_zone(&z) => Some(Patch::Set(z)),
        Some(_) => {
            f.reject_field(
                name,
                "must be a hardiness zone 1a … 13b (number 1–13, then a or b)",
                "value_error",
            );
            None
        }
    }
}
