//! Request id and request span: every log line written while serving a request carries its id;
//! the id is echoed in `X-Request-Id` on every response. The request's count and latency go to
//! the metrics under its route template.

use std::time::Instant;

use salvo::http::HeaderValue;
use salvo::prelude::*;
use tracing::Instrument;

pub const REQUEST_ID_HEADER: &str = "x-request-id";

/// The id of the request being served.
#[derive(Debug, Clone)]
pub struct RequestId(pub String);

/// An incoming id is kept when it is short and plain (so a proxy's id links the logs);
/// anything else is replaced, so clients cannot inject text into our logs.
fn incoming_id(req: &Request) -> Option<String> {
    let raw = req.headers().get(REQUEST_ID_HEADER)?.to_str().ok()?;
    let plain = !raw.is_empty()
        && raw.len() <= 64
        && raw
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    plain.then(|| raw.to_owned())
}

#[handler]
pub async fn observe(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
    ctrl: &mut FlowCtrl,
) {
    let id = incoming_id(req).unwrap_or_else(|| uuid::Uuid::now_v7().to_string());
    if let Ok(value) = HeaderValue::from_str(&id) {
        res.headers_mut().insert(REQUEST_ID_HEADER, value);
    }
    let span = tracing::info_span!(
        "request",
        request_id = %id,
        method = %req.method(),
        path = %req.uri().path(),
        tenant = tracing::field::Empty,
        user = tracing::field::Empty,
    );
    depot.insert_typed(RequestId(id));
    depot.insert_typed(span.clone());
    let started = Instant::now();
    ctrl.call_next(req, depot, res)
        .instrument(span.clone())
        .await;
    let status = res.status_code.map_or(200, |s| s.as_u16());
    let took = started.elapsed();
    crate::metrics::http_request(req.method(), req.matched_path(), status, took);
    let latency_ms = took.as_secs_f64() * 1000.0;
    let _entered = span.enter();
    if req.uri().path().starts_with("/api/v1/health") {
        tracing::debug!(status, latency_ms, "request completed");
    } else {
        tracing::info!(status, latency_ms, "request completed");
    }
}
