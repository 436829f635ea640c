//! Tool arguments: each tool declares a table of `Arg`s; the same table gives the JSON input
//! schema (`additionalProperties: false`, bounds, defaults) and validates a call's arguments,
//! so what a client reads in `tools/list` is exactly what the server enforces.

use serde_json::{Map, Value, json};

use super::envelope::{ToolError, ToolErrorCode};

#[derive(Debug, Clone, Copy)]
pub enum ArgKind {
    /// A string of `min..=max` characters (after trimming: blank counts as empty).
    Text {
        min: usize,
        max: usize,
    },
    /// An integer within bounds.
    Int {
        min: i64,
        max: i64,
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
    /// A list of `min..=max` objects, each checked against its own argument table.
    ObjectList {
        fields: &'static [Arg],
        min: usize,
        max: usize,
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
/// A free-text search term.
pub const QUERY: ArgKind = ArgKind::Text { min: 1, max: 200 };

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
        ArgKind::Text { min, max } => json!({"type": "string", "minLength": min, "maxLength": max}),
        ArgKind::Int { min, max, default } => {
            let mut p = json!({"type": "integer", "minimum": min, "maximum": max});
            if let Some(d) = default {
                p["default"] = json!(d);
            }
            p
        }
        ArgKind::Number { min, max, default } => {
            let mut p = json!({"type": "number", "minimum": min, "maximum": max});
            if let Some(d) = default {
                p["default"] = json!(d);
            }
            p
        }
        ArgKind::Bool { default } => json!({"type": "boolean", "default": default}),
        ArgKind::ObjectList { fields, min, max } => json!({
            "type": "array",
            "minItems": min,
            "maxItems": max,
            "items": input_schema(fields.iter()),
        }),
        ArgKind::Choice { values, default } => {
            let mut p = json!({"type": "string", "enum": values});
            if let Some(d) = default {
                p["default"] = json!(d);
            }
            p
        }
    };
    p["description"] = json!(arg.description);
    p
}

/// The JSON Schema of a tool's arguments.
pub fn input_schema<'a>(args: impl Iterator<Item = &'a Arg>) -> Value {
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
    schema
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

fn detail(field: &str, reason: String, code: &str) -> Value {
    json!({"field": field, "reason": reason, "code": code})
}

/// Checks `raw` against the table: an object, no unknown names, required present, every value
/// of its type and within its bounds. All problems are reported at once.
pub fn validate<'a>(
    table: impl Iterator<Item = &'a Arg> + Clone,
    raw: &Value,
) -> Result<Args, ToolError> {
    let empty = Map::new();
    let given = match raw {
        Value::Object(m) => m,
        Value::Null => &empty,
        _ => {
            return Err(ToolError::validation(
                "arguments",
                "must be a JSON object",
                "type_error",
            ));
        }
    };
    let mut problems = Vec::new();
    for name in given.keys() {
        if !table.clone().any(|a| a.name == name) {
            let shown: String = name.chars().take(64).collect();
            problems.push(detail(&shown, "unknown argument".into(), "extra_forbidden"));
        }
    }
    let mut out = Map::new();
    for arg in table {
        let value = match given.get(arg.name) {
            None | Some(Value::Null) => {
                if arg.required {
                    problems.push(detail(arg.name, "is required".into(), "missing"));
                } else if let Some(d) = default_of(arg.kind) {
                    out.insert(arg.name.to_owned(), d);
                }
                continue;
            }
            Some(v) => v,
        };
        match check(arg.kind, value) {
            Ok(v) => {
                out.insert(arg.name.to_owned(), v);
            }
            Err((reason, code)) => problems.push(detail(arg.name, reason, code)),
        }
    }
    if problems.is_empty() {
        return Ok(Args(out));
    }
    let message = match problems.len() {
        1 => format!(
            "argument {}: {}",
            problems[0]["field"].as_str().unwrap_or_default(),
            problems[0]["reason"].as_str().unwrap_or_default()
        ),
        n => format!("{n} arguments are invalid"),
    };
    Err(ToolError::new(ToolErrorCode::Validation, message).with_details(Value::Array(problems)))
}

fn default_of(kind: ArgKind) -> Option<Value> {
    match kind {
        ArgKind::Int { default, .. } => default.map(Value::from),
        ArgKind::Number { default, .. } => default.map(Value::from),
        ArgKind::Bool { default } => Some(Value::Bool(default)),
        ArgKind::Choice { default, .. } => default.map(Value::from),
        ArgKind::Text { .. } | ArgKind::ObjectList { .. } => None,
    }
}

fn check(kind: ArgKind, value: &Value) -> Result<Value, (String, &'static str)> {
    match kind {
        ArgKind::Text { min, max } => {
            let s = value
                .as_str()
                .ok_or_else(|| ("must be a string".to_owned(), "type_error"))?;
            let s = s.trim();
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
            if s.chars().any(char::is_control) {
                return Err(("must not contain control characters".into(), "value_error"));
            }
            Ok(Value::String(s.to_owned()))
        }
        ArgKind::Int { min, max, .. } => {
            let n = value
                .as_i64()
                .ok_or_else(|| ("must be an integer".to_owned(), "type_error"))?;
            if n < min || n > max {
                return Err((format!("must be between {min} and {max}"), "out_of_range"));
            }
            Ok(Value::from(n))
        }
        ArgKind::Number { min, max, .. } => {
            let n = value
                .as_f64()
                .ok_or_else(|| ("must be a number".to_owned(), "type_error"))?;
            if !(min..=max).contains(&n) {
                return Err((format!("must be between {min} and {max}"), "out_of_range"));
            }
            Ok(Value::from(n))
        }
        ArgKind::ObjectList { fields, min, max } => {
            let list = value
                .as_array()
                .ok_or_else(|| ("must be a list of objects".to_owned(), "type_error"))?;
            if list.len() < min || list.len() > max {
                return Err((
                    format!("must have between {min} and {max} entries"),
                    "out_of_range",
                ));
            }
            let mut out = Vec::with_capacity(list.len());
            for (i, item) in list.iter().enumerate() {
                if !item.is_object() {
                    return Err((format!("entry {i} must be an object"), "type_error"));
                }
                match validate(fields.iter(), item) {
                    Ok(args) => out.push(Value::Object(args.0)),
                    Err(err) => return Err((format!("entry {i}: {}", err.message), "value_error")),
                }
            }
            Ok(Value::Array(out))
        }
        ArgKind::Bool { .. } => value
            .as_bool()
            .map(Value::Bool)
            .ok_or_else(|| ("must be true or false".to_owned(), "type_error")),
        ArgKind::Choice { values, .. } => {
            let s = value
                .as_str()
                .ok_or_else(|| ("must be a string".to_owned(), "type_error"))?;
            if values.contains(&s) {
                Ok(Value::String(s.to_owned()))
            } else {
                Err((format!("must be one of {}", values.join(", ")), "enum"))
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
        let args = validate(TABLE.iter(), &json!({"species_key": " abc "})).expect("valid");
        assert_eq!(args.key("species_key"), "abc");
        assert_eq!(args.limit(), 25);
        assert!(!args.flag("deep"));
        assert_eq!(args.text("language"), Some("de"));
    }

    #[test]
    fn every_problem_is_reported_once() {
        let err = validate(
            TABLE.iter(),
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
        assert!(validate(TABLE.iter(), &json!([1])).is_err());
        assert!(validate(TABLE.iter(), &json!({"species_key": "a", "limit": 2.5})).is_err());
        assert!(validate(TABLE.iter(), &json!({"species_key": "   "})).is_err());
        assert!(validate(TABLE.iter(), &json!({"species_key": "a\u{0}b"})).is_err());
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
                min: 2,
                max: 3,
            },
            "c",
        )];
        let ok = validate(
            LIST.iter(),
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
            let err = validate(LIST.iter(), &bad).expect_err("invalid");
            assert_eq!(err.code, ToolErrorCode::Validation, "{bad}");
        }
        let schema = input_schema(LIST.iter());
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
    fn schema_is_closed_and_lists_bounds() {
        let schema = input_schema(TABLE.iter());
        assert_eq!(schema["additionalProperties"], json!(false));
        assert_eq!(schema["required"], json!(["species_key"]));
        assert_eq!(schema["properties"]["limit"]["maximum"], json!(100));
        assert_eq!(
            schema["properties"]["language"]["enum"],
            json!(["de", "en"])
        );
    }
}
