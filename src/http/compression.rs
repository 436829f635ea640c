//! Compression of the web face's answers by the service itself (a grower's phone may not sit
//! behind a proxy that compresses): pages, htmx fragments, the stylesheet, the scripts, the
//! icon and the web app manifest, in brotli (`br`) or gzip as the browser's
//! `Accept-Encoding` allows, brotli first when both are. Salvo's own middleware, built with
//! those two codings only.
//!
//! Safe for pages because every CSRF value in them is masked per response
//! (`web::session::mask`): BREACH-style guessing needs a secret that is the same bytes in
//! every response. The JSON API is deliberately not compressed: its answers are small, its
//! clients mostly sit behind their own proxies, and some (`/auth`) carry tokens beside text the
//! caller sent, which would need the same care first.
//!
//! Bodies under 1 KiB stay as they are (the coding's overhead outweighs the gain), as do
//! answers already coded (the static files come precompressed) and `Cache-Control:
//! no-transform`. Every compressible answer names `Vary: Accept-Encoding`.

use salvo::http::Mime;
use salvo_compression::{Compression, CompressionLevel};

/// Smallest body worth compressing, in bytes.
pub const MIN_LENGTH: usize = 1024;

/// The media types compressed: the web face's text (no `text/event-stream`: a stream must
/// reach the browser event by event).
fn content_types() -> Vec<Mime> {
    [
        "text/html",
        "text/css",
        "text/javascript",
        "text/plain",
        "application/javascript",
        "application/manifest+json",
        "image/svg+xml",
    ]
    .iter()
    .filter_map(|t| t.parse().ok())
    .collect()
}

/// The hoop for the web face: brotli at quality 4 (near gzip's best size at gzip's speed; a
/// page is compressed anew per response), else gzip at level 6; the server's order wins over
/// the browser's list (browsers name gzip first and brotli later at the same weight).
pub fn pages() -> Compression {
    Compression::new()
        .disable_all()
        .enable_brotli(CompressionLevel::Precise(4))
        .enable_gzip(CompressionLevel::Precise(6))
        .force_priority(true)
        .min_length(MIN_LENGTH)
        .content_types(&content_types())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_type_parses_and_event_streams_are_not_among_them() {
        let types = content_types();
        assert_eq!(types.len(), 7);
        assert!(!types.iter().any(|t| t.subtype() == "event-stream"));
        assert!(!types.iter().any(|t| t.subtype() == "json"));
    }
}
