//! Request bodies: `application/json` only, bounded in size; the bytes are read field by
//! field by [`crate::values::json`].

use salvo::prelude::*;
use serde_json::{Map, Value};

use crate::error::{AppError, ErrorCode};
pub use crate::values::json::{
    FromJson, JsonFields, Patch, is_blank, parse_json, parse_object, whole_number,
};

/// Reads, size-checks and validates the request body as `T`.
pub async fn read_json<T: FromJson>(req: &mut Request, max_bytes: usize) -> Result<T, AppError> {
    let bytes = read_body(req, max_bytes).await?;
    parse_json(&bytes)
}

/// Reads and size-checks the body as a JSON object, for types that check their fields from a
/// table (the master-data catalogue) instead of a [`FromJson`] implementation.
pub async fn read_object(
    req: &mut Request,
    max_bytes: usize,
) -> Result<Map<String, Value>, AppError> {
    let bytes = read_body(req, max_bytes).await?;
    parse_object(&bytes)
}

/// Whether the request says its body is JSON (`application/json` or `application/*+json`).
pub fn has_json_body(req: &Request) -> bool {
    req.content_type().is_some_and(|m| {
        m.type_() == "application"
            && (m.subtype() == "json" || m.suffix().is_some_and(|s| s == "json"))
    })
}

/// The body bytes of an `application/json` request of at most `max_bytes`.
async fn read_body(req: &mut Request, max_bytes: usize) -> Result<Vec<u8>, AppError> {
    if !has_json_body(req) {
        return Err(AppError::new(
            ErrorCode::UnsupportedMediaType,
            "request body must be sent as Content-Type: application/json",
        ));
    }
    match req.payload_with_max_size(max_bytes).await {
        Ok(bytes) => Ok(bytes.to_vec()),
        Err(salvo::http::ParseError::PayloadTooLarge) => Err(AppError::new(
            ErrorCode::PayloadTooLarge,
            format!("request body is larger than {max_bytes} bytes"),
        )),
        Err(err) => Err(AppError::malformed(format!(
            "request body could not be read: {err}"
        ))),
    }
}

/// reference-counted buffer, with the content type `Json` would set.
pub fn render_rendered(res: &mut Response, document: salvo::hyper::body::Bytes) {
    res.headers_mut().insert(
        salvo::http::header::CONTENT_TYPE,
        salvo::http::HeaderValue::from_static("application/json; charset=utf-8"),
    );
    res.body(salvo::http::ResBody::Once(document));
}
