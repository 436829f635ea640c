//! CORS from `CORS_ORIGINS`: exact origins only (credentials are allowed, so never `*`), the
//! matching origin echoed, `Vary: Origin` always.

use salvo::cors::{AllowOrigin, Cors, CorsHandler};
use salvo::http::Method;

pub fn cors(origins: &[String]) -> CorsHandler {
    Cors::new()
        .allow_origin(AllowOrigin::list(
            origins.iter().filter_map(|o| o.parse().ok()),
        ))
        .allow_credentials(true)
        .allow_methods(vec![
            Method::GET,
            Method::POST,
            Method::PUT,
            Method::PATCH,
            Method::DELETE,
            Method::OPTIONS,
        ])
        .allow_headers(vec![
            "authorization",
            "content-type",
            "x-csrf-token",
            "x-api-key",
            "mcp-session-id",
            "mcp-protocol-version",
            "x-request-id",
        ])
        .expose_headers(vec!["x-request-id", "mcp-session-id", "retry-after"])
        .max_age(600u64)
        .into_handler()
}
