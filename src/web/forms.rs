//! Form posts, read as the REST routes read their bodies: the fields become a JSON object and
//! go through the same `FromJson` reader, so a page and the API accept exactly the same values
//! and refuse the rest with the same details. Errors become sentences in the page's language.

use salvo::prelude::*;
use serde_json::{Map, Value};

use super::i18n::Lang;
use crate::error::{AppError, ErrorCode};
use crate::values::json::{FromJson, JsonFields};

/// The text fields of a posted form (urlencoded or multipart), first value of each name, and
/// the files of a multipart form (a file input left empty sends none).
pub struct Posted {
    fields: Vec<(String, String)>,
    files: Vec<PostedFile>,
}

/// One file of a multipart form, read into memory (the form's size limit bounds it).
pub struct PostedFile {
    /// The form field it came in.
    pub field: String,
    /// The type the browser declared.
    pub content_type: Option<String>,
    pub bytes: Vec<u8>,
}

impl Posted {
    pub async fn read(req: &mut Request, max_bytes: usize) -> Result<Self, AppError> {
        let data = req
            .form_data_max_size(max_bytes)
            .await
            .map_err(|e| AppError::malformed(format!("the form could not be read: {e}")))?;
        let mut fields = Vec::new();
        for (name, values) in data.fields.iter_all() {
            if let Some(first) = values.first() {
                fields.push((name.clone(), first.clone()));
            }
        }
        let mut files = Vec::new();
        for (name, parts) in data.files.iter_all() {
            for part in parts {
                // An empty file input still sends a part: no name, no bytes.
                if part.size() == 0 && part.name().is_none_or(str::is_empty) {
                    continue;
                }
                let bytes = tokio::fs::read(part.path())
                    .await
                    .map_err(|e| AppError::malformed(format!("the form could not be read: {e}")))?;
                files.push(PostedFile {
                    field: name.clone(),
                    content_type: part.content_type().map(|m| m.to_string()),
                    bytes,
                });
            }
        }
        Ok(Self { fields, files })
    }

    /// The files sent in the named field.
    pub fn files(&self, field: &str) -> impl Iterator<Item = &PostedFile> {
        self.files.iter().filter(move |f| f.field == field)
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The named fields as a JSON object, each read as its kind says (an absent text stays
    /// absent; an empty optional one is left out so the reader's default applies).
    pub fn object(&self, spec: &[(&str, Field)]) -> Map<String, Value> {
        let mut map = Map::new();
        for (name, kind) in spec {
            let raw = self.get(name);
            let value = match (kind, raw) {
                (Field::Checkbox, raw) => Some(Value::Bool(raw.is_some())),
                (_, None) => None,
                (Field::Text, Some(v)) => Some(Value::String(v.to_owned())),
                (Field::Optional, Some(v)) if v.trim().is_empty() => None,
                (Field::Optional, Some(v)) => Some(Value::String(v.to_owned())),
                // Not a whole number: passed on as text, refused by the reader as a type error.
                (Field::Int, Some(v)) => Some(
                    v.trim()
                        .parse::<i64>()
                        .map_or_else(|_| Value::String(v.to_owned()), Value::from),
                ),
                (Field::Number, Some(v)) if v.trim().is_empty() => None,
                // A decimal comma (as German is typed) or point; anything else goes on as text
                // and the reader refuses it as a type error.
                (Field::Number, Some(v)) => Some(
                    v.trim()
                        .replace(',', ".")
                        .parse::<f64>()
                        .ok()
                        .filter(|x| x.is_finite())
                        .and_then(serde_json::Number::from_f64)
                        .map_or_else(|| Value::String(v.to_owned()), Value::Number),
                ),
            };
            if let Some(value) = value {
                map.insert((*name).to_owned(), value);
            }
        }
        map
    }
}

/// How a form field becomes a JSON value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// Text as typed (an empty one too).
    Text,
    /// Text, or absent when left empty.
    Optional,
    /// A whole number.
    Int,
    /// A decimal number (point or comma), absent when left empty.
    Number,
    /// A checkbox: true when sent.
    Checkbox,
}

/// Reads a body type from a form's fields with the REST reader.
pub fn parse<T: FromJson>(map: Map<String, Value>) -> Result<T, AppError> {
    let mut fields = JsonFields::new(map);
    let value = T::from_json(&mut fields);
    fields.finish(value)
}

/// The message a person reads for an error: per field for a validation error (the field's
/// label in this language and what is wrong), else a sentence per error code.
pub fn explain(lang: Lang, err: &AppError, label: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
    match err.code() {
        ErrorCode::ValidationError if !err.details().is_empty() => err
            .details()
            .iter()
            .map(|d| {
                let field = d.field.strip_prefix("body.").unwrap_or(&d.field);
                let what = match d.code.as_str() {
                    "missing" => lang.t("err-missing"),
                    "string_too_short" => lang.t("err-too-short"),
                    "string_too_long" => lang.t("err-too-long"),
                    _ => lang.t("err-invalid"),
                };
                match label(field) {
                    Some(name) => format!("{name}: {what}"),
                    None => what,
                }
            })
            .collect(),
        code => vec![lang.t(code_text(code))],
    }
}

/// The catalogue entry for an error code.
pub fn code_text(code: ErrorCode) -> &'static str {
    match code {
        ErrorCode::EntityNotFound => "err-not-found",
        ErrorCode::DuplicateEntry => "err-duplicate",
        ErrorCode::Unauthorized => "err-unauthorized",
        ErrorCode::InvalidToken => "err-link-invalid",
        ErrorCode::Forbidden => "err-forbidden",
        ErrorCode::EmailNotVerified => "err-email-not-verified",
        ErrorCode::AccountLocked => "err-locked",
        ErrorCode::RateLimitExceeded => "err-too-many",
        ErrorCode::ServiceUnavailable => "err-unavailable",
        ErrorCode::PayloadTooLarge => "err-too-large",
        ErrorCode::StateConflict => "err-conflict",
        ErrorCode::InternalError => "err-internal",
        _ => "err-refused",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorDetail;

    #[test]
    fn validation_details_read_as_sentences_with_field_labels() {
        let err = AppError::validation(vec![
            ErrorDetail::new("body.email", "not an address", "value_error"),
            ErrorDetail::new("body.password", "too short", "string_too_short"),
        ]);
        let label = |f: &str| (f == "email").then(|| "E-Mail".to_owned());
        let lines = explain(Lang::De, &err, &label);
        assert_eq!(lines.len(), 2);
        assert!(lines[0].starts_with("E-Mail: "), "{lines:?}");
        assert_eq!(lines[1], Lang::De.t("err-too-short"));
        let locked = AppError::new(ErrorCode::AccountLocked, "locked");
        assert_eq!(
            explain(Lang::En, &locked, &|_| None),
            vec![Lang::En.t("err-locked")]
        );
    }
}
