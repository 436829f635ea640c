//! Tool arguments: each tool declares a table of `Arg`s (and `ArgRule`s across them); the same
//! table gives the JSON input schema (`additionalProperties: false`, bounds, formats, enums,
//! patterns, either/or rules) and validates a call's arguments, so what a client reads in
//! `tools/list` is exactly what the server enforces.
//!
//! Rules across arguments are stated with a root `not` and `dependentRequired`, never a root
//! `oneOf`/`anyOf`/`allOf`: the Anthropic Messages API refuses a tool list in which any tool's
//! `input_schema` has one of those at the top level (every request of such a client fails).
//!
//! A refusal by the table names the argument, what was expected and an example value in each
//! detail (`expected`, `example`); refusals by the rules behind the tool (a key that names
//! nothing, a date in the future) have no `expected`.

use serde_json::{Map, Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use uuid::Uuid;

use super::envelope::{ToolError, ToolErrorCode};
use crate::catalog::engine::fields::{LINE_PATTERN, PARAGRAPH_PATTERN};
use crate::values::json::{is_blank, whole_number};

#[derive(Debug, Clone, Copy)]
pub enum ArgKind {
    /// One line of `min..=max` characters (as sent) with a visible character; trimmed.
    Text {
        min: usize,
        max: usize,
    },
    /// Free text of `min..=max` characters that keeps its line breaks and tabs (other control
    /// characters are refused); trimmed.
    Paragraph {
        min: usize,
        max: usize,
    },
    /// An integer within bounds; a whole number written `2.0` counts (as in JSON Schema).
    Int {
        min: i64,
        max: i64,
        default: Option<i64>,
    },
    /// One of fixed integers.
    IntChoice {
        values: &'static [i64],
        default: Option<i64>,
    },
    /// A number within bounds.
    Number {
        min: f64,
        max: f64,
        default: Option<f64>,
    },
    Bool {
        default: bool,
    },
    /// One of fixed values.
    Choice {
        values: &'static [&'static str],
        default: Option<&'static str>,
    },
    /// A calendar date, `YYYY-MM-DD` (JSON Schema `format: date`).
    Date,
    /// An RFC 3339 date-time with its offset (JSON Schema `format: date-time`).
    DateTime,
    /// A date or a date-time (the service takes a date-time as its local day in the garden's zone).
    DateOrDateTime,
    /// A list of `min..=max` one-line texts of `item_min..=item_max` characters; repeats are
    /// dropped (after trimming).
    TextList {
        item_min: usize,
        item_max: usize,
        min: usize,
        max: usize,
    },
    /// A list of `min..=max` record ids (UUIDs, hyphenated); repeats are dropped.
    IdList {
        min: usize,
        max: usize,
    },
    /// A diary entry's measurements, read by the REST reader (`garden::diary::model`).
    Measurements,
    /// A list of `min..=max` objects, each checked against its own argument table and rules.
    ObjectList {
        fields: &'static [Arg],
        rules: &'static [ArgRule],
        min: usize,
        max: usize,
    },
}

/// A rule across arguments.
#[derive(Debug, Clone, Copy)]
pub enum ArgRule {
    /// Exactly one of these arguments.
    ExactlyOne(&'static [&'static str]),
    /// At least one of these arguments.
    AtLeastOne(&'static [&'static str]),
    /// `arg` given needs `needs` given too.
    Requires {
        arg: &'static str,
        needs: &'static str,
    },
    /// `arg` and `with` never together.
    Excludes {
        arg: &'static str,
        with: &'static str,
    },
}

#[derive(Debug, Clone, Copy)]
pub struct Arg {
    pub name: &'static str,
    pub kind: ArgKind,
    pub required: bool,
    pub description: &'static str,
}

impl Arg {
    pub const fn required(name: &'static str, kind: ArgKind, description: &'static str) -> Self {
        Self {
            name,
            kind,
            required: true,
            description,
        }
    }

    pub const fn optional(name: &'static str, kind: ArgKind, description: &'static str) -> Self {
        Self {
            name,
            kind,
            required: false,
            description,
        }
    }
}

/// A catalogue key or other record identifier.
pub const KEY: ArgKind = ArgKind::Text { min: 1, max: 100 };
/// A list of record identifiers.
pub const fn key_list(max: usize) -> ArgKind {
    ArgKind::TextList {
        item_min: 1,
        item_max: 100,
        min: 0,
        max,
    }
}
/// What an item of [`ArgKind::IdList`] looks like (a hyphenated UUID, any case).
pub const UUID_PATTERN: &str =
    "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$";

/// A free-text search term.
pub const QUERY: ArgKind = ArgKind::Text { min: 1, max: 200 };
/// Notes, descriptions, reasons: paragraphs of up to 2000 characters.
pub const NOTES: ArgKind = ArgKind::Paragraph { min: 1, max: 2000 };

pub const fn offset() -> Arg {
    Arg::optional(
        "offset",
        ArgKind::Int {
            min: 0,
            max: 100_000,
            default: Some(0),
        },
        "Items to skip.",
    )
}

pub const fn limit(default: i64, max: i64) -> Arg {
    Arg::optional(
        "limit",
        ArgKind::Int {
            min: 1,
            max,
            default: Some(default),
        },
        "Most items to return.",
    )
}

/// `tenant`: every tool takes it (see the dispatcher for how it binds).
pub const TENANT: Arg = Arg::optional(
    "tenant",
    ArgKind::Text { min: 1, max: 63 },
    "Garden slug. Optional when the key covers exactly one garden.",
);
/// The two arguments every write tool adds.
pub const DRY_RUN: Arg = Arg::optional(
    "dry_run",
    ArgKind::Bool { default: false },
    "Validate and compute the result without writing anything.",
);
pub const IDEMPOTENCY_KEY: Arg = Arg::optional(
    "idempotency_key",
    ArgKind::Text { min: 1, max: 200 },
    "Replays the first result for 24 hours instead of executing again (same account, garden and tool).",
);

fn property(arg: &Arg) -> Value {
    let mut p = match arg.kind {
        ArgKind::Text { min, max } => json!({
            "type": "string", "minLength": min, "maxLength": max, "pattern": LINE_PATTERN,
        }),
        ArgKind::Paragraph { min, max } => json!({
            "type": "string", "minLength": min, "maxLength": max, "pattern": PARAGRAPH_PATTERN,
        }),
        ArgKind::Int { min, max, .. } => json!({"type": "integer", "minimum": min, "maximum": max}),
        ArgKind::IntChoice { values, .. } => json!({"type": "integer", "enum": values}),
        ArgKind::Number { min, max, .. } => {
            json!({"type": "number", "minimum": min, "maximum": max})
        }
        ArgKind::Bool { .. } => json!({"type": "boolean"}),
        ArgKind::Choice { values, .. } => json!({"type": "string", "enum": values}),
        ArgKind::Measurements => crate::garden::diary::model::measurements_schema(),
        ArgKind::Date => json!({"type": "string", "format": "date"}),
        ArgKind::DateTime => json!({"type": "string", "format": "date-time"}),
        ArgKind::DateOrDateTime => json!({
            "type": "string",
            "anyOf": [{"format": "date"}, {"format": "date-time"}],
        }),
        ArgKind::TextList {
            item_min,
            item_max,
            min,
            max,
        } => json!({
            "type": "array",
            "minItems": min,
            "maxItems": max,
            "items": {
                "type": "string",
                "minLength": item_min,
                "maxLength": item_max,
                "pattern": LINE_PATTERN,
            },
        }),
        ArgKind::IdList { min, max } => json!({
            "type": "array",
            "minItems": min,
            "maxItems": max,
            "items": {"type": "string", "format": "uuid", "pattern": UUID_PATTERN},
        }),
        ArgKind::ObjectList {
            fields,
            rules,
            min,
            max,
        } => json!({
            "type": "array",
            "minItems": min,
            "maxItems": max,
            "items": object_schema(fields.iter(), rules),
        }),
    };
    if let Some(d) = default_of(arg.kind) {
        p["default"] = d;
    }
    p["description"] = json!(arg.description);
    p
}

fn none_of(names: &[&str]) -> Value {
    let given: Vec<Value> = names.iter().map(|n| json!({"required": [n]})).collect();
    json!({"not": {"anyOf": given}})
}

/// The schema of an object of arguments. Rules become one root `not` (the situations they
/// forbid) and `dependentRequired`.
fn object_schema<'a>(args: impl Iterator<Item = &'a Arg>, rules: &[ArgRule]) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for arg in args {
        properties.insert(arg.name.to_owned(), property(arg));
        if arg.required {
            required.push(Value::String(arg.name.to_owned()));
        }
    }
    let mut schema = json!({
        "type": "object",
        "properties": properties,
        "additionalProperties": false,
    });
    if !required.is_empty() {
        schema["required"] = Value::Array(required);
    }
    let mut forbidden = Vec::new();
    let mut dependent = Map::new();
    for rule in rules {
        match *rule {
            ArgRule::ExactlyOne(names) => {
                forbidden.push(none_of(names));
                for (i, a) in names.iter().enumerate() {
                    for b in &names[i + 1..] {
                        forbidden.push(json!({"required": [a, b]}));
                    }
                }
            }
            ArgRule::AtLeastOne(names) => forbidden.push(none_of(names)),
            ArgRule::Excludes { arg, with } => forbidden.push(json!({"required": [arg, with]})),
            ArgRule::Requires { arg, needs } => {
                dependent.insert(arg.to_owned(), json!([needs]));
            }
        }
    }
    match forbidden.len() {
        0 => {}
        1 => schema["not"] = forbidden.remove(0),
        _ => schema["not"] = json!({"anyOf": forbidden}),
    }
    if !dependent.is_empty() {
        schema["dependentRequired"] = Value::Object(dependent);
    }
    schema
}

/// The JSON Schema of a tool's arguments.
pub fn input_schema<'a>(args: impl Iterator<Item = &'a Arg>, rules: &[ArgRule]) -> Value {
    object_schema(args, rules)
}

/// Validated arguments with defaults filled in.
#[derive(Debug, Clone, Default)]
pub struct Args(Map<String, Value>);

impl Args {
    pub fn text(&self, name: &str) -> Option<&str> {
        self.0.get(name).and_then(Value::as_str)
    }

    /// A required text argument (the table guarantees it).
    pub fn key(&self, name: &str) -> &str {
        self.text(name).unwrap_or_default()
    }

    pub fn int(&self, name: &str) -> Option<i64> {
        self.0.get(name).and_then(Value::as_i64)
    }

    pub fn number(&self, name: &str) -> Option<f64> {
        self.0.get(name).and_then(Value::as_f64)
    }

    /// The texts of a list argument (empty when absent).
    pub fn texts(&self, name: &str) -> Vec<&str> {
        self.0
            .get(name)
            .and_then(Value::as_array)
            .map(|l| l.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    }

    /// The ids of an id-list argument (empty when absent).
    pub fn ids(&self, name: &str) -> Vec<Uuid> {
        self.texts(name)
            .into_iter()
            .filter_map(|s| Uuid::parse_str(s).ok())
            .collect()
    }

    /// The items of an object-list argument, each validated by its table.
    pub fn items(&self, name: &str) -> Vec<Args> {
        self.0
            .get(name)
            .and_then(Value::as_array)
            .map(|l| {
                l.iter()
                    .filter_map(|v| v.as_object().cloned().map(Args))
                    .collect()
            })
            .unwrap_or_default()
    }

    pub fn flag(&self, name: &str) -> bool {
        self.0.get(name).and_then(Value::as_bool).unwrap_or(false)
    }

    pub fn has(&self, name: &str) -> bool {
        self.0.contains_key(name)
    }

    pub fn offset(&self) -> i64 {
        self.int("offset").unwrap_or(0)
    }

    pub fn limit(&self) -> i64 {
        self.int("limit").unwrap_or(50)
    }

    /// The arguments a tool acts on: without `tenant`, `dry_run` and `idempotency_key`
    /// (what the idempotency record compares).
    pub fn acting(&self) -> Map<String, Value> {
        let mut m = self.0.clone();
        for name in [TENANT.name, DRY_RUN.name, IDEMPOTENCY_KEY.name] {
            m.remove(name);
        }
        m
    }
}

/// What an argument of a kind looks like, in words and as an example value.
fn expectation(kind: ArgKind) -> (String, Value) {
    match kind {
        ArgKind::Text { min, max } => (
            format!("one line of text, {min} to {max} characters"),
            json!("Basil"),
        ),
        ArgKind::Paragraph { min, max } => (
            format!("text of {min} to {max} characters; line breaks are fine"),
            json!("Lower leaves yellow.\nWatered less this week."),
        ),
        ArgKind::Int { min, max, default } => (
            format!("a whole number from {min} to {max}"),
            json!(default.unwrap_or(min)),
        ),
        ArgKind::IntChoice { values, default } => (
            format!(
                "one of {}",
                values
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            json!(default.or_else(|| values.first().copied())),
        ),
        ArgKind::Number { min, max, default } => (
            format!("a number from {min} to {max}"),
            json!(default.unwrap_or(min)),
        ),
        ArgKind::Bool { .. } => ("true or false".into(), json!(true)),
        ArgKind::Choice { values, default } => (
            format!("one of {}", values.join(", ")),
            json!(default.or_else(|| values.first().copied())),
        ),
        ArgKind::Measurements => (
            "an object of up to 20 measurements: ec_ms_cm, ph, temperature_c, \
             humidity_percent, height_cm, leaf_count within their bounds, other lowercase \
             names a number, true/false or a short text"
                .into(),
            json!({"ph": 6.2, "height_cm": 41}),
        ),
        ArgKind::Date => ("a date YYYY-MM-DD".into(), json!("2026-05-01")),
        ArgKind::DateTime => (
            "an RFC 3339 date-time with its offset".into(),
            json!("2026-05-01T08:30:00Z"),
        ),
        ArgKind::DateOrDateTime => (
            "a date YYYY-MM-DD or an RFC 3339 date-time with its offset".into(),
            json!("2026-05-01"),
        ),
        ArgKind::TextList {
            item_min,
            item_max,
            min,
            max,
        } => (
            format!("a JSON array of {min} to {max} texts of {item_min} to {item_max} characters"),
            json!(["yellow leaves", "week 3"]),
        ),
        ArgKind::IdList { min, max } => (
            format!("a JSON array of {min} to {max} ids (UUIDs as the records show them)"),
            json!(["0190a7e2-5b1c-7d3e-8f40-1a2b3c4d5e6f"]),
        ),
        ArgKind::ObjectList {
            fields, min, max, ..
        } => {
            let mut example = Map::new();
            for f in fields.iter().filter(|f| f.required) {
                example.insert(f.name.to_owned(), expectation(f.kind).1);
            }
            (
                format!(
                    "a JSON array of {min} to {max} objects with {}",
                    fields.iter().map(|f| f.name).collect::<Vec<_>>().join(", ")
                ),
                json!([example]),
            )
        }
    }
}

fn detail(field: &str, reason: String, code: &str, kind: Option<ArgKind>) -> Value {
    let mut d = json!({"field": field, "reason": reason, "code": code});
    if let Some(kind) = kind {
        let (expected, example) = expectation(kind);
        d["expected"] = json!(expected);
        d["example"] = example;
    }
    d
}

fn rule_detail(field: String, reason: String, expected: String, example: Value) -> Value {
    json!({"field": field, "reason": reason, "code": "value_error",
           "expected": expected, "example": example})
}

/// Checks `raw` against the table and rules: an object, no unknown names, required present,
/// every value of its type and within its bounds, the rules across arguments kept. All
/// problems are reported at once.
pub fn validate<'a>(
    table: impl Iterator<Item = &'a Arg> + Clone,
    rules: &[ArgRule],
    raw: &Value,
) -> Result<Args, ToolError> {
    let empty = Map::new();
    let given = match raw {
        Value::Object(m) => m,
        Value::Null => &empty,
        _ => {
            return Err(ToolError::new(
                ToolErrorCode::Validation,
                "arguments must be a JSON object",
            )
            .with_details(json!([{
                "field": "arguments", "reason": "must be a JSON object", "code": "type_error",
                "expected": "a JSON object of the tool's arguments (see its inputSchema)",
                "example": {},
            }])));
        }
    };
    let problems = check_object(table, rules, given, "");
    match problems {
        Ok(out) => Ok(Args(out)),
        Err(problems) => {
            let message = match problems.len() {
                1 => format!(
                    "argument {}: {}",
                    problems[0]["field"].as_str().unwrap_or_default(),
                    problems[0]["reason"].as_str().unwrap_or_default()
                ),
                n => format!("{n} arguments are invalid"),
            };
            Err(ToolError::new(ToolErrorCode::Validation, message)
                .with_details(Value::Array(problems)))
        }
    }
}

/// Checks one object of arguments; `at` prefixes field names (`findings[2].`).
fn check_object<'a>(
    table: impl Iterator<Item = &'a Arg> + Clone,
    rules: &[ArgRule],
    given: &Map<String, Value>,
    at: &str,
) -> Result<Map<String, Value>, Vec<Value>> {
    let mut problems = Vec::new();
    let names: Vec<&str> = table.clone().map(|a| a.name).collect();
    for name in given.keys() {
        if !names.contains(&name.as_str()) {
            let shown: String = name.chars().take(64).collect();
            problems.push(rule_detail(
                format!("{at}{shown}"),
                "unknown argument".into(),
                format!("one of the arguments {}", names.join(", ")),
                Value::Null,
            ));
            if let Some(last) = problems.last_mut() {
                last["code"] = json!("extra_forbidden");
            }
        }
    }
    let mut out = Map::new();
    for arg in table {
        let field = format!("{at}{}", arg.name);
        let value = match given.get(arg.name) {
            None => {
                if arg.required {
                    problems.push(detail(
                        &field,
                        "is required".into(),
                        "missing",
                        Some(arg.kind),
                    ));
                } else if let Some(d) = default_of(arg.kind) {
                    out.insert(arg.name.to_owned(), d);
                }
                continue;
            }
            Some(Value::Null) => {
                let reason = if arg.required {
                    "is required and must not be null".to_owned()
                } else {
                    "must not be null: leave the argument out instead".to_owned()
                };
                problems.push(detail(&field, reason, "type_error", Some(arg.kind)));
                continue;
            }
            Some(v) => v,
        };
        match check(arg.kind, value, &field) {
            Ok(v) => {
                out.insert(arg.name.to_owned(), v);
            }
            Err(Problem::Value(reason, code)) => {
                problems.push(detail(&field, reason, code, Some(arg.kind)));
            }
            Err(Problem::Nested(mut inner)) => problems.append(&mut inner),
        }
    }
    for rule in rules {
        let present = |n: &str| given.get(n).is_some_and(|v| !v.is_null());
        match *rule {
            ArgRule::ExactlyOne(names) => {
                let n = names.iter().filter(|n| present(n)).count();
                if n != 1 {
                    problems.push(rule_detail(
                        format!("{at}{}", names.join("|")),
                        if n == 0 {
                            format!("give exactly one of {}", names.join(", "))
                        } else {
                            format!("give only one of {}, not several", names.join(", "))
                        },
                        format!("exactly one of {}", names.join(", ")),
                        json!({names[0]: "…"}),
                    ));
                }
            }
            ArgRule::AtLeastOne(names) => {
                if !names.iter().any(|n| present(n)) {
                    problems.push(rule_detail(
                        format!("{at}{}", names.join("|")),
                        format!("give at least one of {}", names.join(", ")),
                        format!("one or more of {}", names.join(", ")),
                        json!({names[0]: "…"}),
                    ));
                }
            }
            ArgRule::Excludes { arg, with } => {
                if present(arg) && present(with) {
                    problems.push(rule_detail(
                        format!("{at}{with}"),
                        format!("must be left out when {arg} is given"),
                        format!("{arg} or {with}, not both"),
                        json!({arg: "…"}),
                    ));
                }
            }
            ArgRule::Requires { arg, needs } => {
                if present(arg) && !present(needs) {
                    problems.push(rule_detail(
                        format!("{at}{needs}"),
                        format!("is required when {arg} is given"),
                        format!("{needs} together with {arg}"),
                        json!({arg: "…", needs: "…"}),
                    ));
                }
            }
        }
    }
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(problems)
    }
}

fn default_of(kind: ArgKind) -> Option<Value> {
    match kind {
        ArgKind::Int { default, .. } | ArgKind::IntChoice { default, .. } => {
            default.map(Value::from)
        }
        ArgKind::Number { default, .. } => default.map(Value::from),
        ArgKind::Bool { default } => Some(Value::Bool(default)),
        ArgKind::Choice { default, .. } => default.map(Value::from),
        _ => None,
    }
}

enum Problem {
    Value(String, &'static str),
    Nested(Vec<Value>),
}

impl From<(String, &'static str)> for Problem {
    fn from((reason, code): (String, &'static str)) -> Self {
        Self::Value(reason, code)
    }
}

/// A text as sent: a string of `min..=max` characters (counted before trimming, as JSON
/// Schema counts them), no control characters but those `multiline` allows, and a visible
/// character. Returned trimmed.
fn checked_text(
    value: &Value,
    min: usize,
    max: usize,
    multiline: bool,
) -> Result<String, (String, &'static str)> {
    let s = value
        .as_str()
        .ok_or_else(|| ("must be a string".to_owned(), "type_error"))?;
    let n = s.chars().count();
    if n < min {
        return Err((
            format!("must have at least {min} character(s)"),
            "string_too_short",
        ));
    }
    if n > max {
        return Err((
            format!("must have at most {max} characters"),
            "string_too_long",
        ));
    }
    let allowed = |c: char| multiline && matches!(c, '\n' | '\r' | '\t');
    if s.chars().any(|c| c.is_control() && !allowed(c)) {
        let what = if multiline {
            "must not contain control characters other than line breaks and tabs"
        } else {
            "must be one line without control characters"
        };
        return Err((what.into(), "value_error"));
    }
    let trimmed = s.trim_matches(is_blank);
    if trimmed.is_empty() {
        return Err(("must not be blank".into(), "string_too_short"));
    }
    Ok(trimmed.to_owned())
}

/// `YYYY-MM-DD`, a real calendar day.
fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    let shape = b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
    if !shape {
        return false;
    }
    let num = |from: usize, to: usize| s[from..to].parse::<u16>().unwrap_or(0);
    let month = u8::try_from(num(5, 7))
        .ok()
        .and_then(|m| time::Month::try_from(m).ok());
    let day = u8::try_from(num(8, 10)).unwrap_or(0);
    month.is_some_and(|m| time::Date::from_calendar_date(i32::from(num(0, 4)), m, day).is_ok())
}

fn is_date_time(s: &str) -> bool {
    OffsetDateTime::parse(s, &Rfc3339).is_ok()
}

/// An integer as JSON Schema counts them (`2.0` too).
fn whole(value: &Value) -> Result<i64, (String, &'static str)> {
    whole_number(value).ok_or_else(|| ("must be a whole number".to_owned(), "type_error"))
}

fn string(value: &Value) -> Result<&str, (String, &'static str)> {
    value
        .as_str()
        .ok_or_else(|| ("must be a string".to_owned(), "type_error"))
}

fn entries_within(list: &[Value], min: usize, max: usize) -> Result<(), (String, &'static str)> {
    if (min..=max).contains(&list.len()) {
        Ok(())
    } else {
        Err((
            format!("must have between {min} and {max} entries"),
            "out_of_range",
        ))
    }
}

fn check(kind: ArgKind, value: &Value, field: &str) -> Result<Value, Problem> {
    match kind {
        ArgKind::Text { min, max } => Ok(Value::String(checked_text(value, min, max, false)?)),
        ArgKind::Paragraph { min, max } => Ok(Value::String(checked_text(value, min, max, true)?)),
        ArgKind::Int { min, max, .. } => {
            let n = whole(value)?;
            if n < min || n > max {
                return Err((format!("must be between {min} and {max}"), "out_of_range").into());
            }
            Ok(Value::from(n))
        }
        ArgKind::IntChoice { values, .. } => {
            let n = whole(value)?;
            if values.contains(&n) {
                Ok(Value::from(n))
            } else {
                let shown: Vec<String> = values.iter().map(ToString::to_string).collect();
                Err((format!("must be one of {}", shown.join(", ")), "enum").into())
            }
        }
        ArgKind::Number { min, max, .. } => {
            let n = value
                .as_f64()
                .ok_or_else(|| ("must be a number".to_owned(), "type_error"))?;
            if !(min..=max).contains(&n) {
                return Err((format!("must be between {min} and {max}"), "out_of_range").into());
            }
            Ok(value.clone())
        }
        ArgKind::Bool { .. } => value
            .as_bool()
            .map(Value::Bool)
            .ok_or_else(|| ("must be true or false".to_owned(), "type_error").into()),
        ArgKind::Choice { values, .. } => {
            let s = string(value)?;
            if values.contains(&s) {
                Ok(Value::String(s.to_owned()))
            } else {
                Err((format!("must be one of {}", values.join(", ")), "enum").into())
            }
        }
        ArgKind::Measurements => {
            let mut body = Map::new();
            body.insert("measurements".into(), value.clone());
            let mut fields = crate::values::json::JsonFields::new(body);
            let read = crate::garden::diary::model::measurements(&mut fields, "measurements");
            match fields.finish(read) {
                Ok(map) => Ok(Value::Object(map)),
                Err(err) => {
                    let reasons: Vec<String> = err
                        .details()
                        .iter()
                        .map(|d| {
                            let at = d.field.trim_start_matches("body.");
                            format!("{at}: {}", d.reason)
                        })
                        .collect();
                    Err((reasons.join("; "), "value_error").into())
                }
            }
        }
        ArgKind::Date | ArgKind::DateTime | ArgKind::DateOrDateTime => {
            let s = string(value)?;
            let ok = match kind {
                ArgKind::Date => is_date(s),
                ArgKind::DateTime => is_date_time(s),
                _ => is_date(s) || is_date_time(s),
            };
            if ok {
                Ok(Value::String(s.to_owned()))
            } else {
                let what = match kind {
                    ArgKind::Date => "must be a date YYYY-MM-DD",
                    ArgKind::DateTime => {
                        "must be an RFC 3339 date-time with its offset, e.g. 2026-05-01T08:30:00Z"
                    }
                    _ => "must be a date YYYY-MM-DD or an RFC 3339 date-time with its offset",
                };
                Err((what.to_owned(), "format").into())
            }
        }
        ArgKind::TextList {
            item_min,
            item_max,
            min,
            max,
        } => {
            let list = value.as_array().ok_or_else(|| {
                (
                    "must be a JSON array of strings (not one comma-separated string)".to_owned(),
                    "type_error",
                )
            })?;
            entries_within(list, min, max)?;
            let mut out: Vec<Value> = Vec::with_capacity(list.len());
            for (i, item) in list.iter().enumerate() {
                let text = checked_text(item, item_min, item_max, false)
                    .map_err(|(reason, code)| (format!("entry {i} {reason}"), code))?;
                let text = Value::String(text);
                if !out.contains(&text) {
                    out.push(text);
                }
            }
            Ok(Value::Array(out))
        }
        ArgKind::IdList { min, max } => {
            let list = value.as_array().ok_or_else(|| {
                (
                    "must be a JSON array of ids (not one comma-separated string)".to_owned(),
                    "type_error",
                )
            })?;
            entries_within(list, min, max)?;
            let mut out: Vec<Value> = Vec::with_capacity(list.len());
            for (i, item) in list.iter().enumerate() {
                // Hyphenated only (36 characters), as the schema's pattern states.
                let id = item
                    .as_str()
                    .filter(|s| s.len() == 36)
                    .and_then(|s| Uuid::parse_str(s).ok())
                    .ok_or_else(|| (format!("entry {i} must be an id (a UUID)"), "value_error"))?;
                let id = Value::String(id.to_string());
                if !out.contains(&id) {
                    out.push(id);
                }
            }
            Ok(Value::Array(out))
        }
        ArgKind::ObjectList {
            fields,
            rules,
            min,
            max,
        } => {
            let list = value
                .as_array()
                .ok_or_else(|| ("must be a JSON array of objects".to_owned(), "type_error"))?;
            entries_within(list, min, max)?;
            let mut out = Vec::with_capacity(list.len());
            let mut problems = Vec::new();
            for (i, item) in list.iter().enumerate() {
                let Some(map) = item.as_object() else {
                    problems.push(detail(
                        &format!("{field}[{i}]"),
                        "must be an object".into(),
                        "type_error",
                        Some(kind),
                    ));
                    continue;
                };
                match check_object(fields.iter(), rules, map, &format!("{field}[{i}].")) {
                    Ok(args) => out.push(Value::Object(args)),
                    Err(mut inner) => problems.append(&mut inner),
                }
            }
            if problems.is_empty() {
                Ok(Value::Array(out))
            } else {
                Err(Problem::Nested(problems))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &[Arg] = &[
        Arg::required("species_key", KEY, "species"),
        limit(25, 100),
        Arg::optional("deep", ArgKind::Bool { default: false }, "x"),
        Arg::optional(
            "language",
            ArgKind::Choice {
                values: &["de", "en"],
                default: Some("de"),
            },
            "x",
        ),
    ];

    #[test]
    fn defaults_are_filled_and_values_kept() {
        let args = validate(TABLE.iter(), &[], &json!({"species_key": " abc "})).expect("valid");
        assert_eq!(args.key("species_key"), "abc");
        assert_eq!(args.limit(), 25);
        assert!(!args.flag("deep"));
        assert_eq!(args.text("language"), Some("de"));
    }

    #[test]
    fn every_problem_is_reported_once() {
        let err = validate(
            TABLE.iter(),
            &[],
            &json!({"limit": 101, "deep": "yes", "language": "fr", "extra": 1}),
        )
        .expect_err("invalid");
        assert_eq!(err.code, ToolErrorCode::Validation);
        let details = err.details.expect("details");
        let fields: Vec<&str> = details
            .as_array()
            .expect("array")
            .iter()
            .map(|d| d["field"].as_str().expect("field"))
            .collect();
        assert_eq!(
            fields,
            ["extra", "species_key", "limit", "deep", "language"]
        );
    }

    #[test]
    fn non_objects_and_floats_for_integers_are_refused() {
        assert!(validate(TABLE.iter(), &[], &json!([1])).is_err());
        assert!(
            validate(
                TABLE.iter(),
                &[],
                &json!({"species_key": "a", "limit": 2.5})
            )
            .is_err()
        );
        // A whole number written with a fraction is an integer, as JSON Schema counts it.
        let args = validate(
            TABLE.iter(),
            &[],
            &json!({"species_key": "a", "limit": 40.0}),
        )
        .expect("2.0 is a whole number");
        assert_eq!(args.limit(), 40);
        // null is no value of any type here: leave the argument out instead.
        let err = validate(
            TABLE.iter(),
            &[],
            &json!({"species_key": "a", "limit": null}),
        )
        .expect_err("null");
        let details = err.details.expect("details");
        assert_eq!(details[0]["field"], "limit");
        assert_eq!(details[0]["example"], 25);
        assert!(validate(TABLE.iter(), &[], &json!({"species_key": "   "})).is_err());
        assert!(validate(TABLE.iter(), &[], &json!({"species_key": "a\u{0}b"})).is_err());
    }

    #[test]
    fn object_lists_check_every_entry_and_publish_their_table() {
        const ITEM: &[Arg] = &[
            Arg::required("substrate_key", KEY, "k"),
            Arg::required(
                "fraction",
                ArgKind::Number {
                    min: 0.01,
                    max: 1.0,
                    default: None,
                },
                "f",
            ),
        ];
        const LIST: &[Arg] = &[Arg::required(
            "components",
            ArgKind::ObjectList {
                fields: ITEM,
                rules: &[],
                min: 2,
                max: 3,
            },
            "c",
        )];
        let ok = validate(
            LIST.iter(),
            &[],
            &json!({"components": [{"substrate_key": " a ", "fraction": 0.5}, {"substrate_key": "b", "fraction": 0.5}]}),
        )
        .expect("valid");
        let items = ok.items("components");
        assert_eq!(items.len(), 2);
        assert_eq!(items[0].key("substrate_key"), "a");
        assert_eq!(items[1].number("fraction"), Some(0.5));
        for bad in [
            json!({"components": [{"substrate_key": "a", "fraction": 1.0}]}),
            json!({"components": [{"substrate_key": "a", "fraction": 2.0}, {"substrate_key": "b", "fraction": 0.5}]}),
            json!({"components": [{"substrate_key": "a", "fraction": 0.5, "x": 1}, {"substrate_key": "b", "fraction": 0.5}]}),
            json!({"components": [1, 2]}),
            json!({"components": "ab"}),
        ] {
            let err = validate(LIST.iter(), &[], &bad).expect_err("invalid");
            assert_eq!(err.code, ToolErrorCode::Validation, "{bad}");
        }
        let schema = input_schema(LIST.iter(), &[]);
        let list = &schema["properties"]["components"];
        assert_eq!(
            (list["minItems"].clone(), list["maxItems"].clone()),
            (json!(2), json!(3))
        );
        assert_eq!(list["items"]["additionalProperties"], json!(false));
        assert_eq!(
            list["items"]["required"],
            json!(["substrate_key", "fraction"])
        );
    }

    #[test]
    fn paragraphs_keep_line_breaks_and_one_liners_refuse_them() {
        const T: &[Arg] = &[
            Arg::optional("title", ArgKind::Text { min: 1, max: 20 }, "t"),
            Arg::optional("text", ArgKind::Paragraph { min: 1, max: 20 }, "p"),
        ];
        let ok = validate(T.iter(), &[], &json!({"text": " a\nb\tc\r\n "})).expect("valid");
        assert_eq!(ok.text("text"), Some("a\nb\tc"));
        for bad in [
            json!({"title": "a\nb"}),
            json!({"text": "a\u{7}b"}),
            json!({"text": " \n "}),
            json!({"text": "x".repeat(21)}),
        ] {
            let err = validate(T.iter(), &[], &bad).expect_err("invalid");
            let d = &err.details.expect("details")[0];
            assert!(d["expected"].is_string() && !d["example"].is_null(), "{d}");
        }
    }

    #[test]
    fn lists_dates_and_integer_choices() {
        const T: &[Arg] = &[
            Arg::optional("tags", key_list(3), "t"),
            Arg::optional("day", ArgKind::Date, "d"),
            Arg::optional("at", ArgKind::DateTime, "a"),
            Arg::optional("when", ArgKind::DateOrDateTime, "w"),
            Arg::optional(
                "size",
                ArgKind::IntChoice {
                    values: &[512, 1280],
                    default: Some(1280),
                },
                "s",
            ),
        ];
        let ok = validate(
            T.iter(),
            &[],
            &json!({"tags": [" a", "b"], "day": "2024-02-29", "at": "2026-05-01T08:30:00+02:00",
                    "when": "2026-05-01", "size": 512.0}),
        )
        .expect("valid");
        assert_eq!(ok.texts("tags"), ["a", "b"]);
        let repeated = validate(T.iter(), &[], &json!({"tags": ["a", " a", "b"]})).expect("v");
        assert_eq!(repeated.texts("tags"), ["a", "b"], "repeats dropped");
        assert_eq!(ok.int("size"), Some(512));
        assert_eq!(
            validate(T.iter(), &[], &json!({})).expect("v").int("size"),
            Some(1280)
        );
        for bad in [
            json!({"tags": "a, b"}),
            json!({"tags": [""]}),
            json!({"tags": ["a\nb"]}),
            json!({"tags": ["a", "b", "c", "d"]}),
            json!({"day": "2023-02-29"}),
            json!({"day": "2026-5-1"}),
            json!({"at": "2026-05-01T08:30:00"}),
            json!({"when": "yesterday"}),
            json!({"size": 600}),
        ] {
            assert!(validate(T.iter(), &[], &bad).is_err(), "{bad}");
        }
        let schema = input_schema(T.iter(), &[]);
        assert_eq!(schema["properties"]["day"]["format"], "date");
        assert_eq!(schema["properties"]["at"]["format"], "date-time");
        assert_eq!(schema["properties"]["size"]["enum"], json!([512, 1280]));
        assert_eq!(schema["properties"]["tags"]["items"]["maxLength"], 100);
    }

    #[test]
    fn id_lists_take_uuids_once_each() {
        const T: &[Arg] = &[Arg::optional(
            "photo_ids",
            ArgKind::IdList { min: 1, max: 2 },
            "p",
        )];
        let a = "0190a7e2-5b1c-7d3e-8f40-1a2b3c4d5e6f";
        let ok =
            validate(T.iter(), &[], &json!({"photo_ids": [a, a.to_uppercase()]})).expect("valid");
        assert_eq!(ok.ids("photo_ids"), [Uuid::parse_str(a).expect("uuid")]);
        for bad in [
            json!({"photo_ids": []}),
            json!({"photo_ids": [a, "0190a7e2-5b1c-7d3e-8f40-1a2b3c4d5e60", "0190a7e2-5b1c-7d3e-8f40-1a2b3c4d5e61"]}),
            json!({"photo_ids": a}),
            json!({"photo_ids": ["0190a7e25b1c7d3e8f401a2b3c4d5e6f"]}),
            json!({"photo_ids": [7]}),
        ] {
            let err = validate(T.iter(), &[], &bad).expect_err("invalid");
            let d = &err.details.expect("details")[0];
            assert!(d["expected"].is_string() && !d["example"].is_null(), "{d}");
        }
        let schema = input_schema(T.iter(), &[]);
        assert_eq!(schema["properties"]["photo_ids"]["items"]["format"], "uuid");
    }

    #[test]
    fn rules_across_arguments_are_checked_and_published_without_a_root_combinator() {
        const T: &[Arg] = &[
            Arg::optional("a", KEY, "a"),
            Arg::optional("b", KEY, "b"),
            Arg::optional(
                "dose",
                ArgKind::Number {
                    min: 0.0,
                    max: 9.0,
                    default: None,
                },
                "d",
            ),
            Arg::optional("dose_unit", KEY, "u"),
        ];
        const RULES: &[ArgRule] = &[
            ArgRule::ExactlyOne(&["a", "b"]),
            ArgRule::Requires {
                arg: "dose",
                needs: "dose_unit",
            },
        ];
        assert!(validate(T.iter(), RULES, &json!({"a": "x"})).is_ok());
        assert!(
            validate(
                T.iter(),
                RULES,
                &json!({"b": "x", "dose": 1, "dose_unit": "ml"})
            )
            .is_ok()
        );
        for bad in [
            json!({}),
            json!({"a": "x", "b": "y"}),
            json!({"a": "x", "dose": 1}),
        ] {
            let err = validate(T.iter(), RULES, &bad).expect_err("invalid");
            assert!(err.details.expect("d")[0]["expected"].is_string(), "{bad}");
        }
        let schema = input_schema(T.iter(), RULES);
        for combinator in ["oneOf", "anyOf", "allOf"] {
            assert!(schema.get(combinator).is_none(), "{schema}");
        }
        assert_eq!(schema["dependentRequired"]["dose"], json!(["dose_unit"]));
        assert!(schema["not"]["anyOf"].is_array(), "{schema}");
    }

    #[test]
    fn schema_is_closed_and_lists_bounds() {
        let schema = input_schema(TABLE.iter(), &[]);
        assert_eq!(schema["additionalProperties"], json!(false));
        assert_eq!(schema["required"], json!(["species_key"]));
        assert_eq!(schema["properties"]["limit"]["maximum"], json!(100));
        assert_eq!(
            schema["properties"]["language"]["enum"],
            json!(["de", "en"])
        );
    }
}
