//! The declarative field table of a catalogue kind: one list of fields drives body validation
//! (one `details` entry per bad field), the OpenAPI schemas (create, patch, record) and the seed.

use salvo::oapi::schema::{Array, BasicType, Object, Schema, SchemaFormat, SchemaType};
use salvo::oapi::{KnownFormat, RefOr};
use serde_json::{Map, Value};

use crate::error::ErrorDetail;
use crate::values::json::is_blank;

/// The schema pattern of a single-line text (at least one visible character, no controls).
pub const LINE_PATTERN: &str = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$";
/// The schema pattern of a multi-line text (tabs and line breaks allowed).
pub const LONG_PATTERN: &str = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]*$";
/// The schema pattern of a multi-line text with at least one visible character (a paragraph a
/// tool argument requires).
pub const PARAGRAPH_PATTERN: &str = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]*$";

/// What a field holds.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// Single-line text of at most n characters, at least one visible; trimmed.
    Text(usize),
    /// Multi-line text of at most n characters; blank means none.
    LongText(usize),
    /// Text of at most `max` characters that passes `check` (stated as `pattern`).
    Pattern {
        max: usize,
        pattern: &'static str,
        check: fn(&str) -> bool,
    },
    Enum(&'static [&'static str]),
    Int(i64, i64),
    Num(f64, f64),
    Bool,
    /// Up to `items` single-line texts of at most `len` characters each.
    TextList {
        items: usize,
        len: usize,
    },
    /// Distinct values of a fixed list.
    EnumList(&'static [&'static str]),
    /// Distinct months 1–12.
    Months,
    /// A nested object, replaced as a whole.
    Object(&'static [Field]),
    /// A list of nested objects (at most n), replaced as a whole.
    ObjectList(&'static [Field], usize),
    /// The key of a record of the named kind.
    Ref(&'static str),
    /// Distinct keys (at most n) of records of the named kind, in order.
    RefList(&'static str, usize),
}

/// One field of a body and record.
#[derive(Debug, Clone, Copy)]
pub struct Field {
    pub name: &'static str,
    pub kind: Kind,
    /// Must be sent on create and can never be null.
    pub required: bool,
    /// Always present in the record, null when nothing is recorded (the safety fields).
    pub always: bool,
    /// Set by a dedicated operation, never by create or patch.
    pub read_only: bool,
    /// Where a reference comes from in the seed files (names instead of keys).
    pub seed_name: Option<&'static str>,
    pub doc: &'static str,
}

impl Field {
    pub const fn req(name: &'static str, kind: Kind) -> Self {
        Self {
            name,
            kind,
            required: true,
            always: false,
            read_only: false,
            seed_name: None,
            doc: "",
        }
    }

    pub const fn opt(name: &'static str, kind: Kind) -> Self {
        Self {
            required: false,
            ..Self::req(name, kind)
        }
    }

    /// Optional, but always in the record: null means "nothing recorded".
    pub const fn always(name: &'static str, kind: Kind) -> Self {
        Self {
            always: true,
            ..Self::opt(name, kind)
        }
    }

    pub const fn read_only(self) -> Self {
        Self {
            read_only: true,
            ..self
        }
    }

    /// A reference that the seed files give by name under another field.
    pub const fn seed(self, seed_name: &'static str) -> Self {
        Self {
            seed_name: Some(seed_name),
            ..self
        }
    }

    pub const fn doc(self, doc: &'static str) -> Self {
        Self { doc, ..self }
    }

    pub fn is_ref(&self) -> bool {
        matches!(self.kind, Kind::Ref(_) | Kind::RefList(..))
    }
}

/// Create: every required field, nothing read-only. Patch: any subset; null clears.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Create,
    Patch,
}

/// Validates `input` against `fields`; every problem becomes one detail under `path`
/// (`body.` at the top). Create answers the whole record (`always` fields as null when
/// absent); patch answers only what was sent, null meaning "clear".
pub fn check_object(
    fields: &[Field],
    mut input: Map<String, Value>,
    mode: Mode,
    path: &str,
    errors: &mut Vec<ErrorDetail>,
) -> Map<String, Value> {
    let mut out = Map::new();
    for field in fields.iter().filter(|f| !f.read_only) {
        let at = format!("{path}{}", field.name);
        match input.remove(field.name) {
            None => {
                if mode == Mode::Create && field.required {
                    errors.push(ErrorDetail::new(at, "field required", "missing"));
                } else if mode == Mode::Create && field.always {
                    out.insert(field.name.to_owned(), Value::Null);
                }
            }
            Some(Value::Null) => {
                if field.required {
                    errors.push(ErrorDetail::new(at, "cannot be null", "type_error"));
                } else if mode == Mode::Patch || field.always {
                    out.insert(field.name.to_owned(), Value::Null);
                }
            }
            Some(value) => match check_value(&field.kind, value, &at, errors) {
                Some(Value::Null) if field.required => {
                    errors.push(ErrorDetail::new(
                        at,
                        "must not be blank",
                        "string_too_short",
                    ));
                }
                Some(Value::Null) if mode == Mode::Create && !field.always => {}
                Some(v) => {
                    out.insert(field.name.to_owned(), v);
                }
                None => {}
            },
        }
    }
    let mut extra: Vec<String> = input.keys().cloned().collect();
    extra.sort();
    for name in extra {
        errors.push(ErrorDetail::new(
            format!("{path}{name}"),
            "unknown field",
            "extra_forbidden",
        ));
    }
    out
}

fn bad(
    errors: &mut Vec<ErrorDetail>,
    at: &str,
    reason: impl Into<String>,
    code: &str,
) -> Option<Value> {
    errors.push(ErrorDetail::new(at, reason, code));
    None
}

/// Text as sent: no control characters (tabs and line breaks in long texts), at most `max`
/// characters; answers it trimmed.
fn check_text(
    raw: &str,
    max: usize,
    multiline: bool,
    at: &str,
    errors: &mut Vec<ErrorDetail>,
) -> Option<String> {
    let allowed = |c: char| multiline && matches!(c, '\n' | '\r' | '\t');
    if raw.chars().any(|c| c.is_control() && !allowed(c)) {
        bad(
            errors,
            at,
            "must not contain control characters",
            "value_error",
        );
        None
    } else if raw.chars().count() > max {
        bad(
            errors,
            at,
            format!("must have at most {max} characters"),
            "string_too_long",
        );
        None
    } else {
        Some(raw.trim_matches(is_blank).to_owned())
    }
}

/// One value; `Some(Value::Null)` for a blank long text (meaning none).
fn check_value(
    kind: &Kind,
    value: Value,
    at: &str,
    errors: &mut Vec<ErrorDetail>,
) -> Option<Value> {
    match *kind {
        Kind::Text(max) => {
            let Value::String(s) = value else {
                return bad(errors, at, "must be a string", "type_error");
            };
            let t = check_text(&s, max, false, at, errors)?;
            if t.is_empty() {
                return bad(errors, at, "must not be blank", "string_too_short");
            }
            Some(Value::String(t))
        }
        Kind::LongText(max) => {
            let Value::String(s) = value else {
                return bad(errors, at, "must be a string", "type_error");
            };
            let t = check_text(&s, max, true, at, errors)?;
            Some(if t.is_empty() {
                Value::Null
            } else {
                Value::String(t)
            })
        }
        Kind::Pattern { max, check, .. } => {
            let Value::String(s) = value else {
                return bad(errors, at, "must be a string", "type_error");
            };
            if s.chars().count() > max {
                return bad(
                    errors,
                    at,
                    format!("must have at most {max} characters"),
                    "string_too_long",
                );
            }
            if !check(&s) {
                return bad(errors, at, "has the wrong form", "value_error");
            }
            Some(Value::String(s))
        }
        Kind::Enum(options) => match value {
            Value::String(s) if options.contains(&s.as_str()) => Some(Value::String(s)),
            Value::String(_) => bad(
                errors,
                at,
                format!("must be one of: {}", options.join(", ")),
                "value_error",
            ),
            _ => bad(
                errors,
                at,
                format!("must be a string, one of: {}", options.join(", ")),
                "type_error",
            ),
        },
        Kind::Int(min, max) => match crate::values::json::whole_number(&value) {
            Some(i) if (min..=max).contains(&i) => Some(Value::from(i)),
            Some(_) => bad(
                errors,
                at,
                format!("must be between {min} and {max}"),
                "value_error",
            ),
            None => bad(errors, at, "must be a whole number", "type_error"),
        },
        Kind::Num(min, max) => match value.as_f64() {
            Some(x) if value.is_number() && x >= min && x <= max => Some(value),
            Some(_) if value.is_number() => bad(
                errors,
                at,
                format!("must be between {min} and {max}"),
                "value_error",
            ),
            _ => bad(errors, at, "must be a number", "type_error"),
        },
        Kind::Bool => match value {
            Value::Bool(_) => Some(value),
            _ => bad(errors, at, "must be true or false", "type_error"),
        },
        Kind::TextList { items, len } => {
            let list = check_list(value, items, at, errors)?;
            let mut out = Vec::with_capacity(list.len());
            for (i, item) in list.into_iter().enumerate() {
                out.push(check_value(
                    &Kind::Text(len),
                    item,
                    &format!("{at}[{i}]"),
                    errors,
                )?);
            }
            Some(Value::Array(out))
        }
        Kind::EnumList(options) => {
            let list = check_list(value, options.len(), at, errors)?;
            let mut out = Vec::with_capacity(list.len());
            for (i, item) in list.into_iter().enumerate() {
                out.push(check_value(
                    &Kind::Enum(options),
                    item,
                    &format!("{at}[{i}]"),
                    errors,
                )?);
            }
            distinct(out, at, errors)
        }
        Kind::Months => {
            let list = check_list(value, 12, at, errors)?;
            let mut out = Vec::with_capacity(list.len());
            for (i, item) in list.into_iter().enumerate() {
                out.push(check_value(
                    &Kind::Int(1, 12),
                    item,
                    &format!("{at}[{i}]"),
                    errors,
                )?);
            }
            distinct(out, at, errors)
        }
        Kind::Object(fields) => {
            let Value::Object(map) = value else {
                return bad(errors, at, "must be an object", "type_error");
            };
            let before = errors.len();
            let out = check_object(fields, map, Mode::Create, &format!("{at}."), errors);
            (errors.len() == before).then_some(Value::Object(out))
        }
        Kind::ObjectList(fields, items) => {
            let list = check_list(value, items, at, errors)?;
            let before = errors.len();
            let mut out = Vec::with_capacity(list.len());
            for (i, item) in list.into_iter().enumerate() {
                if let Some(v) =
                    check_value(&Kind::Object(fields), item, &format!("{at}[{i}]"), errors)
                {
                    out.push(v);
                }
            }
            (errors.len() == before).then_some(Value::Array(out))
        }
        Kind::Ref(_) => match value {
            Value::String(s) if uuid::Uuid::parse_str(&s).is_ok() => {
                Some(Value::String(s.to_lowercase()))
            }
            _ => bad(errors, at, "must be a record key (UUID)", "type_error"),
        },
        Kind::RefList(target, items) => {
            let list = check_list(value, items, at, errors)?;
            let mut out = Vec::with_capacity(list.len());
            for (i, item) in list.into_iter().enumerate() {
                out.push(check_value(
                    &Kind::Ref(target),
                    item,
                    &format!("{at}[{i}]"),
                    errors,
                )?);
            }
            distinct(out, at, errors)
        }
    }
}

fn check_list(
    value: Value,
    items: usize,
    at: &str,
    errors: &mut Vec<ErrorDetail>,
) -> Option<Vec<Value>> {
    let Value::Array(list) = value else {
        bad(errors, at, "must be a list", "type_error");
        return None;
    };
    if list.len() > items {
        bad(
            errors,
            at,
            format!("must have at most {items} items"),
            "value_error",
        );
        return None;
    }
    Some(list)
}

fn distinct(list: Vec<Value>, at: &str, errors: &mut Vec<ErrorDetail>) -> Option<Value> {
    for (i, item) in list.iter().enumerate() {
        if list[..i].contains(item) {
            return bad(errors, at, "items must be distinct", "value_error");
        }
    }
    Some(Value::Array(list))
}

// ---------------------------------------------------------------------------------------------
// OpenAPI schemas

fn typed(basic: BasicType, nullable: bool) -> SchemaType {
    if nullable {
        [basic, BasicType::Null].into_iter().collect()
    } else {
        SchemaType::basic(basic)
    }
}

fn string(nullable: bool) -> Object {
    Object::new().schema_type(typed(BasicType::String, nullable))
}

fn array(
    items: impl Into<RefOr<Schema>>,
    max: usize,
    unique: bool,
    nullable: bool,
) -> RefOr<Schema> {
    let items: RefOr<Schema> = items.into();
    Array::new()
        .items(items)
        .max_items(max)
        .unique_items(unique)
        .schema_type(typed(BasicType::Array, nullable))
        .into()
}

/// The schema of one value; `request` states input rules (patterns), else the stored shape.
pub fn value_schema(kind: &Kind, nullable: bool, request: bool) -> RefOr<Schema> {
    match *kind {
        Kind::Text(max) => {
            let s = string(nullable).max_length(max);
            if request {
                s.min_length(1).pattern(LINE_PATTERN)
            } else {
                s
            }
            .into()
        }
        Kind::LongText(max) => {
            let s = string(nullable).max_length(max);
            if request { s.pattern(LONG_PATTERN) } else { s }.into()
        }
        Kind::Pattern { max, pattern, .. } => {
            string(nullable).max_length(max).pattern(pattern).into()
        }
        Kind::Enum(options) => {
            let mut values: Vec<Value> = options.iter().map(|o| Value::from(*o)).collect();
            if nullable {
                values.push(Value::Null);
            }
            Object::new()
                .schema_type(typed(BasicType::String, nullable))
                .enum_values(values)
                .into()
        }
        Kind::Int(min, max) => Object::new()
            .schema_type(typed(BasicType::Integer, nullable))
            .minimum(min)
            .maximum(max)
            .into(),
        Kind::Num(min, max) => Object::new()
            .schema_type(typed(BasicType::Number, nullable))
            .minimum(min)
            .maximum(max)
            .into(),
        Kind::Bool => Object::new()
            .schema_type(typed(BasicType::Boolean, nullable))
            .into(),
        Kind::TextList { items, len } => array(
            value_schema(&Kind::Text(len), false, request),
            items,
            false,
            nullable,
        ),
        Kind::EnumList(options) => array(
            value_schema(&Kind::Enum(options), false, request),
            options.len(),
            true,
            nullable,
        ),
        Kind::Months => array(
            value_schema(&Kind::Int(1, 12), false, request),
            12,
            true,
            nullable,
        ),
        Kind::Object(fields) => object_schema(
            fields,
            if request {
                Shape::Create
            } else {
                Shape::Record
            },
            nullable,
        )
        .into(),
        Kind::ObjectList(fields, items) => array(
            object_schema(
                fields,
                if request {
                    Shape::Create
                } else {
                    Shape::Record
                },
                false,
            ),
            items,
            false,
            nullable,
        ),
        Kind::Ref(_) => string(nullable)
            .format(SchemaFormat::KnownFormat(KnownFormat::Uuid))
            .into(),
        Kind::RefList(_, items) => array(
            value_schema(&Kind::Ref(""), false, request),
            items,
            true,
            nullable,
        ),
    }
}

/// Which side of the wire a schema describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Create,
    Patch,
    Record,
}

/// The object schema of a field list.
pub fn object_schema(fields: &[Field], shape: Shape, nullable: bool) -> Object {
    let mut obj = Object::new().schema_type(typed(BasicType::Object, nullable));
    if shape != Shape::Record {
        obj = obj.additional_properties(salvo::oapi::schema::AdditionalProperties::FreeForm(false));
    }
    for f in fields {
        if f.read_only && shape != Shape::Record {
            continue;
        }
        let (nullable, required) = match shape {
            Shape::Create => (!f.required, f.required),
            Shape::Patch => (!f.required, false),
            Shape::Record => (f.always, f.required || f.always),
        };
        let mut schema = value_schema(&f.kind, nullable, shape != Shape::Record);
        if !f.doc.is_empty()
            && let RefOr::Type(Schema::Object(o)) = schema
        {
            schema = RefOr::Type(Schema::Object(Box::new(o.description(f.doc))));
        }
        obj = obj.property(f.name, schema);
        if required {
            obj = obj.required(f.name);
        }
    }
    obj
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const INNER: &[Field] = &[
        Field::req("is_toxic", Kind::Bool),
        Field::opt("parts", Kind::TextList { items: 3, len: 10 }),
    ];
    const FIELDS: &[Field] = &[
        Field::req("name", Kind::Text(10)),
        Field::opt("note", Kind::LongText(20)),
        Field::opt("kind", Kind::Enum(&["a", "b"])),
        Field::opt("n", Kind::Int(1, 5)),
        Field::opt("x", Kind::Num(0.0, 1.0)),
        Field::opt("months", Kind::Months),
        Field::always("toxicity", Kind::Object(INNER)),
        Field::opt("family_key", Kind::Ref("family")),
        Field::opt("bound", Kind::Ref("seq")).read_only(),
    ];

    fn run(body: Value, mode: Mode) -> (Map<String, Value>, Vec<(String, String)>) {
        let Value::Object(map) = body else {
            panic!("object")
        };
        let mut errors = Vec::new();
        let out = check_object(FIELDS, map, mode, "body.", &mut errors);
        (out, errors.into_iter().map(|e| (e.field, e.code)).collect())
    }

    #[test]
    fn create_fills_always_fields_with_null() {
        let (out, errors) = run(json!({"name": " Basil ", "note": "  "}), Mode::Create);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(
            Value::Object(out),
            json!({"name": "Basil", "toxicity": null})
        );
    }

    #[test]
    fn each_bad_field_is_one_detail() {
        let (_, errors) = run(
            json!({"kind": "c", "n": 9, "x": "1", "months": [1, 1], "toxicity": {"parts": []},
                   "family_key": "nope", "bound": "x", "extra": 1}),
            Mode::Create,
        );
        let want = [
            ("body.name", "missing"),
            ("body.kind", "value_error"),
            ("body.n", "value_error"),
            ("body.x", "type_error"),
            ("body.months", "value_error"),
            ("body.toxicity.is_toxic", "missing"),
            ("body.family_key", "type_error"),
            ("body.bound", "extra_forbidden"),
            ("body.extra", "extra_forbidden"),
        ];
        let want: Vec<(String, String)> = want
            .iter()
            .map(|(a, b)| ((*a).into(), (*b).into()))
            .collect();
        assert_eq!(errors, want);
    }

    #[test]
    fn patch_keeps_omitted_and_clears_null() {
        let (out, errors) = run(json!({"note": null, "n": 2}), Mode::Patch);
        assert!(errors.is_empty());
        assert_eq!(Value::Object(out), json!({"note": null, "n": 2}));
        let (_, errors) = run(json!({"name": null}), Mode::Patch);
        assert_eq!(errors, [("body.name".to_owned(), "type_error".to_owned())]);
    }

    #[test]
    fn texts_are_checked_as_sent() {
        let (_, errors) = run(json!({"name": "a\u{0007}b"}), Mode::Create);
        assert_eq!(errors[0].1, "value_error");
        let (_, errors) = run(json!({"name": "abcdefghijk"}), Mode::Create);
        assert_eq!(errors[0].1, "string_too_long");
        let (_, errors) = run(json!({"name": "   "}), Mode::Create);
        assert_eq!(errors[0].1, "string_too_short");
    }
}
