//! The tool result envelope of the specification and the tool errors, in their MCP wire form.

use serde_json::{Map, Value, json};

use crate::error::{AppError, ErrorCode};

/// A link from a result to the UI or to the REST route of the same data.
#[derive(Debug, Clone)]
pub enum Link {
    Ui(String),
    Api(String),
}

impl Link {
    fn to_json(&self) -> Value {
        match self {
            Self::Ui(url) => json!({"type": "ui", "url": url}),
            Self::Api(url) => json!({"type": "api", "url": url}),
        }
    }
}

/// An image content block (`{"type":"image","data":…,"mimeType":…}`), sent after the text
/// block. Only `get_diary_entry_photos` makes them; they are not part of the envelope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageBlock {
    pub mime_type: &'static str,
    /// Base64 (standard alphabet, padded, no `data:` prefix).
    pub data: String,
}

impl ImageBlock {
    fn write_json(&self, out: &mut String) {
        // Base64 and the MIME type need no escaping.
        out.push_str(r#"{"type":"image","data":""#);
        out.push_str(&self.data);
        out.push_str(r#"","mimeType":""#);
        out.push_str(self.mime_type);
        out.push_str(r#""}"#);
    }
}

/// `images` as a JSON array (the REST face adds it beside the envelope).
pub fn images_json(images: &[ImageBlock]) -> String {
    let mut out = String::from("[");
    for (i, image) in images.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        image.write_json(&mut out);
    }
    out.push(']');
    out
}

/// What a tool hands back on success.
#[derive(Debug, Clone)]
pub struct ToolOutput {
    /// One sentence for the model (also the text content block).
    pub summary: String,
    /// The structured result; always a JSON object.
    pub data: Value,
    pub links: Vec<Link>,
    /// Image content blocks after the text block.
    pub images: Vec<ImageBlock>,
}

impl ToolOutput {
    pub fn new(summary: impl Into<String>, data: Value) -> Self {
        Self {
            summary: summary.into(),
            data,
            links: Vec::new(),
            images: Vec::new(),
        }
    }

    pub fn with_images(mut self, images: Vec<ImageBlock>) -> Self {
        self.images = images;
        self
    }

    pub fn link_api(mut self, path: impl Into<String>) -> Self {
        self.links.push(Link::Api(path.into()));
        self
    }

    pub fn link_ui(mut self, path: impl Into<String>) -> Self {
        self.links.push(Link::Ui(path.into()));
        self
    }

    /// The `structuredContent` object. Write tools carry `dry_run`, the echoed
    /// `idempotency_key` and `idempotent_replay`.
    pub fn envelope(&self, write: Option<&WriteMeta>) -> Map<String, Value> {
        self.clone().into_envelope(write)
    }

    /// [`ToolOutput::envelope`] without copying the data.
    pub fn into_envelope(self, write: Option<&WriteMeta>) -> Map<String, Value> {
        let mut env = Map::new();
        env.insert("summary".into(), Value::String(self.summary));
        let data = match self.data {
            data @ Value::Object(_) => data,
            other => json!({ "value": other }),
        };
        env.insert("data".into(), data);
        env.insert(
            "links".into(),
            Value::Array(self.links.iter().map(Link::to_json).collect()),
        );
        if let Some(meta) = write {
            env.insert("dry_run".into(), Value::Bool(meta.dry_run));
            if let Some(key) = &meta.idempotency_key {
                env.insert("idempotency_key".into(), Value::String(key.clone()));
            }
            env.insert("idempotent_replay".into(), Value::Bool(meta.replay));
        }
        env
    }
}

/// The write-tool fields of the envelope.
#[derive(Debug, Clone, Default)]
pub struct WriteMeta {
    pub dry_run: bool,
    pub idempotency_key: Option<String>,
    pub replay: bool,
}

/// The stable tool error codes: the nine of the specification plus two for faults on our side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolErrorCode {
    NotFound,
    PermissionDenied,
    Validation,
    TenantRequired,
    AlreadyClaimed,
    ConcurrentUpdate,
    NotClaimed,
    LeaseExpired,
    PayloadTooLarge,
    /// A conflict with the current state that none of the above names (a reused idempotency
    /// key with other arguments, a duplicate name).
    Conflict,
    /// Our fault; the message carries only a reference id.
    Internal,
    /// PostgreSQL or Redis did not answer; retrying later is correct.
    Unavailable,
}

impl ToolErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NotFound => "not_found",
            Self::PermissionDenied => "permission.denied",
            Self::Validation => "validation.error",
            Self::TenantRequired => "validation.tenant_required",
            Self::AlreadyClaimed => "conflict.already_claimed",
            Self::ConcurrentUpdate => "conflict.concurrent_update",
            Self::NotClaimed => "conflict.not_claimed",
            Self::LeaseExpired => "conflict.lease_expired",
            Self::PayloadTooLarge => "payload.too_large",
            Self::Conflict => "conflict.state",
            Self::Internal => "internal.error",
            Self::Unavailable => "service.unavailable",
        }
    }

    /// The HTTP status of the REST face (`POST /mcp/tools/{name}`).
    pub fn http_status(self) -> u16 {
        match self {
            Self::NotFound => 404,
            Self::PermissionDenied => 403,
            Self::Validation | Self::TenantRequired => 422,
            Self::AlreadyClaimed
            | Self::ConcurrentUpdate
            | Self::NotClaimed
            | Self::LeaseExpired
            | Self::Conflict => 409,
            Self::PayloadTooLarge => 413,
            Self::Internal => 500,
            Self::Unavailable => 503,
        }
    }

    /// The audit status of a call that failed with this code.
    pub fn audit_status(self) -> &'static str {
        match self {
            Self::PermissionDenied => "denied",
            _ => "error",
        }
    }
}

/// A failed tool call: a result with `isError: true`, never a JSON-RPC error.
#[derive(Debug, Clone)]
pub struct ToolError {
    pub code: ToolErrorCode,
    pub message: String,
    /// Field-level reasons (`[{field, reason, code}]`) or other structured detail.
    pub details: Option<Value>,
}

impl ToolError {
    pub fn new(code: ToolErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            details: None,
        }
    }

    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    pub fn not_found(what: impl std::fmt::Display) -> Self {
        Self::new(ToolErrorCode::NotFound, format!("{what} not found"))
    }

    pub fn validation(field: &str, reason: impl Into<String>, code: &str) -> Self {
        let reason = reason.into();
        Self::new(
            ToolErrorCode::Validation,
            format!("argument {field}: {reason}"),
        )
        .with_details(json!([{ "field": field, "reason": reason, "code": code }]))
    }

    /// The `structuredContent` of the error result.
    pub fn envelope(&self) -> Map<String, Value> {
        let mut env = Map::new();
        env.insert(
            "error_code".into(),
            Value::String(self.code.as_str().into()),
        );
        env.insert("message".into(), Value::String(self.message.clone()));
        if let Some(details) = &self.details {
            env.insert("details".into(), details.clone());
        }
        env
    }
}

/// Service errors as tool errors: the REST code decides the tool code; server faults keep
/// their cause in the log under a reference id and out of the message.
impl From<AppError> for ToolError {
    fn from(err: AppError) -> Self {
        let code = match err.code() {
            ErrorCode::EntityNotFound | ErrorCode::AdapterNotFound => ToolErrorCode::NotFound,
            ErrorCode::Forbidden => ToolErrorCode::PermissionDenied,
            ErrorCode::ValidationError
            | ErrorCode::MalformedRequest
            | ErrorCode::PhaseTransitionInvalid
            | ErrorCode::InvalidStatusTransition
            | ErrorCode::KarenzViolation
            | ErrorCode::ResistanceWarning
            | ErrorCode::HstViolation
            | ErrorCode::SubstrateExhausted
            | ErrorCode::RotationViolation
            | ErrorCode::IncompatibleCompanion
            | ErrorCode::ImageTooCompressed => ToolErrorCode::Validation,
            ErrorCode::DuplicateEntry | ErrorCode::InvalidRunState | ErrorCode::StateConflict => {
                ToolErrorCode::Conflict
            }
            ErrorCode::PayloadTooLarge | ErrorCode::StorageQuotaExceeded => {
                ToolErrorCode::PayloadTooLarge
            }
            ErrorCode::ServiceUnavailable | ErrorCode::ExternalSourceError => {
                ToolErrorCode::Unavailable
            }
            _ => ToolErrorCode::Internal,
        };
        let details = (!err.details().is_empty())
            .then(|| serde_json::to_value(err.details()).unwrap_or(Value::Null));
        if code == ToolErrorCode::Internal {
            // Logs the cause under an error id, like a REST 500; the client sees only the id.
            let (_, body) = err.into_body("mcp", "tool");
            return Self::new(
                code,
                format!("internal error (reference {})", body.error_id),
            );
        }
        let message = {
            let (_, body) = err.into_body("mcp", "tool");
            body.message
        };
        Self {
            code,
            message,
            details,
        }
    }
}

/// One tool call's MCP result (`CallToolResult`) as JSON text, around the envelope already
/// serialised (`envelope_json`, which is not parsed or copied into a value again). Revisions
/// before 2025-06-18 (`modern` false) get no `structuredContent`: their text block carries the
/// envelope. `images` follow the text block (every revision knows image blocks).
pub fn result_json(
    outcome: &Result<Map<String, Value>, ToolError>,
    envelope_json: &str,
    images: &[ImageBlock],
    modern: bool,
) -> String {
    let is_error = outcome.is_err();
    let text = if !modern {
        Value::String(envelope_json.to_owned())
    } else {
        match outcome {
            Ok(env) => env
                .get("summary")
                .cloned()
                .unwrap_or(Value::String(String::new())),
            Err(err) => Value::String(format!("{}: {}", err.code.as_str(), err.message)),
        }
    };
    let mut out = String::with_capacity(envelope_json.len() * 2 + 96);
    out.push_str(r#"{"content":[{"type":"text","text":"#);
    out.push_str(&text.to_string());
    out.push('}');
    for image in images {
        out.push(',');
        image.write_json(&mut out);
    }
    out.push(']');
    if modern {
        out.push_str(r#","structuredContent":"#);
        out.push_str(envelope_json);
    }
    out.push_str(r#","isError":"#);
    out.push_str(if is_error { "true" } else { "false" });
    out.push('}');
    out
}

/// The `outputSchema` every tool declares: the envelope, or the error shape (strict clients
/// validate error results against it too).
pub fn output_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "summary": {"type": "string"},
            "data": {"type": "object"},
            "links": {"type": "array", "items": {
                "type": "object",
                "properties": {"type": {"type": "string", "enum": ["ui", "api"]}, "url": {"type": "string"}},
                "required": ["type", "url"]
            }},
            "dry_run": {"type": "boolean"},
            "idempotency_key": {"type": "string"},
            "idempotent_replay": {"type": "boolean"},
            "error_code": {"type": "string"},
            "message": {"type": "string"},
            "details": {}
        },
        "anyOf": [
            {"required": ["summary", "data", "links"]},
            {"required": ["error_code", "message"]}
        ]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The result written around the once-serialised envelope is the `CallToolResult` value it
    /// replaced, for success and error, modern and old revisions.
    #[test]
    fn the_result_text_is_the_call_tool_result() {
        let ok = ToolOutput::new("a \"quoted\" summary\n", json!({"n": 1, "s": "ü"}))
            .link_api("/api/v1/x")
            .into_envelope(None);
        let err = ToolError::validation("limit", "too big", "out_of_range");
        for outcome in [Ok(ok), Err(err)] {
            let envelope = match &outcome {
                Ok(env) => Value::Object(env.clone()),
                Err(err) => Value::Object(err.envelope()),
            };
            let envelope_json = envelope.to_string();
            let (text, is_error) = match &outcome {
                Ok(env) => (
                    env["summary"].as_str().unwrap_or_default().to_owned(),
                    false,
                ),
                Err(err) => (format!("{}: {}", err.code.as_str(), err.message), true),
            };
            let modern: Value =
                serde_json::from_str(&result_json(&outcome, &envelope_json, &[], true))
                    .expect("json");
            assert_eq!(
                modern,
                json!({"content": [{"type": "text", "text": text}],
                       "structuredContent": envelope, "isError": is_error})
            );
            let old: Value =
                serde_json::from_str(&result_json(&outcome, &envelope_json, &[], false))
                    .expect("json");
            assert_eq!(
                old,
                json!({"content": [{"type": "text", "text": envelope_json}], "isError": is_error})
            );
        }
    }
}
