//! Reading JSON objects field by field, the one reader of REST bodies and tool arguments:
//! JSON that does not parse is a 400, and every invalid field (missing, wrong type, out of
//! range, unknown) gets its own `details` entry in one 422, so a client fixes a form in one
//! round trip. No HTTP here: `http::json` reads the body and hands the bytes over.

use serde_json::{Map, Value};

use crate::error::{AppError, ErrorDetail};

/// One field of a partial update.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Patch<T> {
    /// Omitted: stays as it was.
    #[default]
    Keep,
    /// Sent as null (or blank): removed.
    Clear,
    Set(T),
}

/// A body type read field by field. Implementations call every getter they need first (each
/// records its own error), then assemble the value from the returned options.
pub trait FromJson: Sized {
    fn from_json(fields: &mut JsonFields) -> Option<Self>;
}

/// Parses bytes as a JSON object: not JSON is a 400, not an object a 422.
pub fn parse_object(bytes: &[u8]) -> Result<Map<String, Value>, AppError> {
    let value: Value =
        serde_json::from_slice(bytes).map_err(|e| AppError::malformed(e.to_string()))?;
    let Value::Object(map) = value else {
        return Err(AppError::validation(vec![ErrorDetail::new(
            "body",
            "request body must be a JSON object",
            "type_error",
        )]));
    };
    Ok(map)
}

/// Parses and validates bytes as `T` (separate from HTTP for unit tests).
pub fn parse_json<T: FromJson>(bytes: &[u8]) -> Result<T, AppError> {
    let mut fields = JsonFields::new(parse_object(bytes)?);
    let value = T::from_json(&mut fields);
    fields.finish(value)
}

/// A number JSON Schema counts as an `integer`: `3` and also `3.0` (a whole number written with
/// a fraction, as JavaScript and many language models write them). One reading for every REST
/// body and every tool argument.
pub fn whole_number(value: &Value) -> Option<i64> {
    value.as_i64().or_else(|| {
        value
            .as_f64()
            .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
            .map(|f| f as i64)
    })
}

/// Whitespace as JSON Schema's `\\s` (ECMA-262) sees it, so "blank" means the same on both sides.
pub fn is_blank(c: char) -> bool {
    c.is_whitespace() || c == '\u{feff}'
}

/// The schema patterns that describe `text` and `opt_long_text` (literals in the schema
/// attributes of body types; schemathesis checks both sides agree):
/// single line `^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$`,
/// multi line `^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]*$`.
pub struct JsonFields {
    map: Map<String, Value>,
    known: Vec<&'static str>,
    errors: Vec<ErrorDetail>,
}

fn field_path(name: &str) -> String {
    format!("body.{name}")
}

impl JsonFields {
    pub fn new(map: Map<String, Value>) -> Self {
        Self {
            map,
            known: Vec::new(),
            errors: Vec::new(),
        }
    }

    /// Records a rule the body type checks itself (after a getter accepted the value).
    pub fn reject_field(&mut self, name: &str, reason: impl Into<String>, code: &str) {
        self.reject(name, reason, code);
    }

    /// The raw value of a field the body type checks itself; `None` when absent or null.
    pub fn value(&mut self, name: &'static str) -> Option<Value> {
        self.take(name)
    }

    /// Whether the body names the field at all (null included): partial updates tell
    /// "omitted" (keep) from null (clear).
    pub fn has(&self, name: &str) -> bool {
        self.map.contains_key(name)
    }

    /// Whether the body gives the field a value (present and not null).
    pub fn has_value(&self, name: &str) -> bool {
        self.map.get(name).is_some_and(|v| !v.is_null())
    }

    pub(crate) fn reject(&mut self, name: &str, reason: impl Into<String>, code: &str) {
        self.errors
            .push(ErrorDetail::new(field_path(name), reason, code));
    }

    /// The raw value; `None` when absent or null.
    pub(crate) fn take(&mut self, name: &'static str) -> Option<Value> {
        self.known.push(name);
        match self.map.remove(name) {
            None | Some(Value::Null) => None,
            Some(v) => Some(v),
        }
    }

    /// Checks the text exactly as sent (so the rules match the published schema: `maxLength`
    /// and a `pattern` without control characters), then trims it for storage.
    fn checked_text(
        &mut self,
        name: &'static str,
        value: Value,
        max: usize,
        multiline: bool,
    ) -> Option<String> {
        let Value::String(raw) = value else {
            self.reject(name, "must be a string", "type_error");
            return None;
        };
        // PostgreSQL text cannot hold NUL; other control characters have no place in names.
        let allowed_control = |c: char| multiline && matches!(c, '\n' | '\r' | '\t');
        if raw.chars().any(|c| c.is_control() && !allowed_control(c)) {
            self.reject(name, "must not contain control characters", "value_error");
            None
        } else if raw.chars().count() > max {
            self.reject(
                name,
                format!("must have at most {max} characters"),
                "string_too_long",
            );
            None
        } else {
            Some(raw.trim_matches(is_blank).to_owned())
        }
    }

    /// A required single-line string of at most `max` characters with at least one visible
    /// character, trimmed.
    pub fn text(&mut self, name: &'static str, max: usize) -> Option<String> {
        match self.take(name) {
            None => {
                self.reject(name, "field required", "missing");
                None
            }
            Some(v) => {
                let text = self.checked_text(name, v, max, false)?;
                if text.is_empty() {
                    self.reject(name, "must not be blank", "string_too_short");
                    return None;
                }
                Some(text)
            }
        }
    }

    /// An optional multi-line string; absent, null and blank all mean "none".
    pub fn opt_long_text(&mut self, name: &'static str, max: usize) -> Option<Option<String>> {
        match self.take(name) {
            None => Some(None),
            Some(v) => self
                .checked_text(name, v, max, true)
                .map(|t| (!t.is_empty()).then_some(t)),
        }
    }

    /// A required value from a fixed list of names.
    pub fn choice<T: Copy>(&mut self, name: &'static str, options: &[(&str, T)]) -> Option<T> {
        let allowed = || {
            options
                .iter()
                .map(|(n, _)| *n)
                .collect::<Vec<_>>()
                .join(", ")
        };
        match self.take(name) {
            None => {
                self.reject(name, "field required", "missing");
                None
            }
            Some(Value::String(s)) => {
                let found = options.iter().find(|(n, _)| *n == s).map(|(_, v)| *v);
                if found.is_none() {
                    self.reject(
                        name,
                        format!("must be one of: {}", allowed()),
                        "value_error",
                    );
                }
                found
            }
            Some(_) => {
                self.reject(
                    name,
                    format!("must be a string, one of: {}", allowed()),
                    "type_error",
                );
                None
            }
        }
    }

    /// An optional boolean with a default.
    pub fn flag(&mut self, name: &'static str, default: bool) -> Option<bool> {
        // Absent means the default; an explicit null is not a boolean (the schema says so).
        if matches!(self.map.get(name), Some(Value::Null)) {
            self.take(name);
            self.reject(name, "must be true or false", "type_error");
            return None;
        }
        match self.take(name) {
            None => Some(default),
            Some(Value::Bool(b)) => Some(b),
            Some(_) => {
                self.reject(name, "must be true or false", "type_error");
                None
            }
        }
    }

    /// An optional integer within bounds.
    pub fn opt_int(&mut self, name: &'static str, min: i64, max: i64) -> Option<Option<i64>> {
        match self.take(name) {
            None => Some(None),
            Some(v @ Value::Number(_)) => match whole_number(&v) {
                Some(i) if (min..=max).contains(&i) => Some(Some(i)),
                Some(_) => {
                    self.reject(
                        name,
                        format!("must be between {min} and {max}"),
                        "value_error",
                    );
                    None
                }
                None => {
                    self.reject(name, "must be a whole number", "type_error");
                    None
                }
            },
            Some(_) => {
                self.reject(name, "must be a whole number", "type_error");
                None
            }
        }
    }

    /// A required secret (password, token) taken exactly as sent, never trimmed: between `min`
    /// and `max` characters, no control characters. The value never appears in an error.
    pub fn secret(&mut self, name: &'static str, min: usize, max: usize) -> Option<String> {
        let Some(value) = self.take(name) else {
            self.reject(name, "field required", "missing");
            return None;
        };
        let Value::String(raw) = value else {
            self.reject(name, "must be a string", "type_error");
            return None;
        };
        let n = raw.chars().count();
        if raw.chars().any(char::is_control) {
            self.reject(name, "must not contain control characters", "value_error");
            None
        } else if n < min {
            self.reject(
                name,
                format!("must have at least {min} characters"),
                "string_too_short",
            );
            None
        } else if n > max {
            self.reject(
                name,
                format!("must have at most {max} characters"),
                "string_too_long",
            );
            None
        } else {
            Some(raw)
        }
    }

    /// An optional single-line text for partial updates: absent means "leave as it is"
    /// (`Some(None)`); null is refused because the field cannot be cleared.
    pub fn patch_text(&mut self, name: &'static str, max: usize) -> Option<Option<String>> {
        self.known.push(name);
        match self.map.remove(name) {
            None => Some(None),
            Some(Value::Null) => {
                self.reject(
                    name,
                    "cannot be null; omit it to keep the value",
                    "type_error",
                );
                None
            }
            Some(v) => {
                let text = self.checked_text(name, v, max, false)?;
                if text.is_empty() {
                    self.reject(name, "must not be blank", "string_too_short");
                    return None;
                }
                Some(Some(text))
            }
        }
    }

    /// An optional clearable text for partial updates: absent keeps the value, null or blank
    /// clears it.
    pub fn patch_clearable(&mut self, name: &'static str, max: usize) -> Option<Patch<String>> {
        self.known.push(name);
        match self.map.remove(name) {
            None => Some(Patch::Keep),
            Some(Value::Null) => Some(Patch::Clear),
            Some(v) => {
                let text = self.checked_text(name, v, max, false)?;
                Some(if text.is_empty() {
                    Patch::Clear
                } else {
                    Patch::Set(text)
                })
            }
        }
    }

    /// The raw value of a field the body type checks itself: `None` when absent,
    /// `Some(Value::Null)` when sent as null.
    pub fn raw(&mut self, name: &'static str) -> Option<Value> {
        self.known.push(name);
        self.map.remove(name)
    }

    /// Unknown fields are errors: a typo must not be silently ignored.
    /// The value, or one 422 with every problem recorded (unknown fields included).
    pub fn finish<T>(mut self, value: Option<T>) -> Result<T, AppError> {
        let mut extra: Vec<String> = self
            .map
            .keys()
            .filter(|k| !self.known.contains(&k.as_str()))
            .cloned()
            .collect();
        extra.sort();
        for name in extra {
            self.errors.push(ErrorDetail::new(
                field_path(&name),
                "unknown field",
                "extra_forbidden",
            ));
        }
        match (value, self.errors.is_empty()) {
            (Some(v), true) => Ok(v),
            (_, false) => Err(AppError::validation(self.errors)),
            (None, true) => Err(AppError::internal(
                "a body reader returned nothing without recording an error",
            )),
        }
    }
}

/// Answers a JSON document already rendered (kept by a cache): the bytes go out as they are, a
/// SHA-256 of the canonical JSON of arguments (object keys sorted: serde_json's map is ordered).
pub fn args_hash(args: &Value) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(
        serde_json::to_vec(args).unwrap_or_default(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Colour {
        Red,
        Blue,
    }

    #[derive(Debug, PartialEq)]
    struct Sample {
        name: String,
        colour: Colour,
        note: Option<String>,
        count: Option<i64>,
        on: bool,
    }

    impl FromJson for Sample {
        fn from_json(f: &mut JsonFields) -> Option<Self> {
            let name = f.text("name", 5);
            let colour = f.choice("colour", &[("red", Colour::Red), ("blue", Colour::Blue)]);
            let note = f.opt_long_text("note", 10);
            let count = f.opt_int("count", 0, 10);
            let on = f.flag("on", false);
            Some(Self {
                name: name?,
                colour: colour?,
                note: note?,
                count: count?,
                on: on?,
            })
        }
    }

    fn fields_of(err: &AppError) -> Vec<(String, String)> {
        err.details()
            .iter()
            .map(|d| (d.field.clone(), d.code.clone()))
            .collect()
    }

    #[test]
    fn valid_body_parses() {
        let s: Sample =
            parse_json(br#"{"name":" ab ","colour":"red","note":"x\ny","count":3,"on":true}"#)
                .expect("valid");
        assert_eq!(
            s,
            Sample {
                name: "ab".into(),
                colour: Colour::Red,
                note: Some("x\ny".into()),
                count: Some(3),
                on: true
            }
        );
    }

    #[test]
    fn optional_fields_default() {
        let s: Sample = parse_json(br#"{"name":"a","colour":"blue","note":null}"#).expect("valid");
        assert_eq!(s.note, None);
        assert_eq!(s.count, None);
        assert!(!s.on);
        // A boolean may be left out, but null is not a boolean.
        let err = parse_json::<Sample>(br#"{"name":"a","colour":"blue","on":null}"#)
            .expect_err("null flag");
        assert_eq!(
            fields_of(&err),
            vec![("body.on".to_owned(), "type_error".to_owned())]
        );
    }

    #[test]
    fn malformed_json_is_400() {
        let err = parse_json::<Sample>(b"{\"name\": ").expect_err("malformed");
        assert_eq!(err.code(), ErrorCode::MalformedRequest);
        assert_eq!(err.code().status().as_u16(), 400);
    }

    #[test]
    fn non_object_is_422() {
        let err = parse_json::<Sample>(b"[1,2]").expect_err("not an object");
        assert_eq!(err.code(), ErrorCode::ValidationError);
        assert_eq!(
            fields_of(&err),
            [("body".to_owned(), "type_error".to_owned())]
        );
    }

    #[test]
    fn every_bad_field_is_reported_once() {
        let err =
            parse_json::<Sample>(br#"{"colour":"green","note":5,"count":11,"on":"yes","extra":1}"#)
                .expect_err("invalid");
        assert_eq!(err.code(), ErrorCode::ValidationError);
        assert_eq!(
            fields_of(&err),
            [
                ("body.name".to_owned(), "missing".to_owned()),
                ("body.colour".to_owned(), "value_error".to_owned()),
                ("body.note".to_owned(), "type_error".to_owned()),
                ("body.count".to_owned(), "value_error".to_owned()),
                ("body.on".to_owned(), "type_error".to_owned()),
                ("body.extra".to_owned(), "extra_forbidden".to_owned()),
            ]
        );
    }

    #[test]
    fn lengths_and_control_characters() {
        let err =
            parse_json::<Sample>(br#"{"name":"toolong","colour":"red","note":"12345678901"}"#)
                .expect_err("long");
        assert_eq!(
            fields_of(&err),
            [
                ("body.name".to_owned(), "string_too_long".to_owned()),
                ("body.note".to_owned(), "string_too_long".to_owned())
            ]
        );
        let err =
            parse_json::<Sample>(br#"{"name":"  \u00a0 ","colour":"red"}"#).expect_err("blank");
        assert_eq!(
            fields_of(&err),
            [("body.name".to_owned(), "string_too_short".to_owned())]
        );
        let err = parse_json::<Sample>(br#"{"name":"a\u0000b","colour":"red"}"#).expect_err("nul");
        assert_eq!(
            fields_of(&err),
            [("body.name".to_owned(), "value_error".to_owned())]
        );
    }

    #[test]
    fn lengths_count_characters_not_bytes() {
        let s: Sample =
            parse_json("{\"name\":\"ÄÖÜßé\",\"colour\":\"red\"}".as_bytes()).expect("5 characters");
        assert_eq!(s.name, "ÄÖÜßé");
    }
}
