//! Label values, each from a bounded set, as `&'static str` so recording allocates nothing.

use std::collections::HashMap;
use std::sync::{LazyLock, RwLock};

use salvo::http::Method;

/// The route label of a request no route matched (unknown path, wrong method): one value, so
/// scanners probing random paths add no series.
pub const UNMATCHED_ROUTE: &str = "unmatched";
/// The route label once [`MAX_ROUTES`] templates are known (a safety net: the router has far
/// fewer).
pub const OTHER_ROUTE: &str = "other";
const MAX_ROUTES: usize = 1024;

/// Route templates seen so far, each leaked once as its label (`/api/v1/t/{slug}/sites`): the
/// set is the router's, bounded by [`MAX_ROUTES`].
static ROUTES: LazyLock<RwLock<HashMap<Box<str>, &'static str>>> =
    LazyLock::new(|| RwLock::new(HashMap::new()));

/// The route label of a matched path template (salvo's `matched_path`, `api/v1/t/{slug}/…`):
/// the template with a leading slash; [`UNMATCHED_ROUTE`] when empty.
pub fn route(matched_path: &str) -> &'static str {
    if matched_path.is_empty() {
        return UNMATCHED_ROUTE;
    }
    if let Ok(known) = ROUTES.read()
        && let Some(label) = known.get(matched_path).copied()
    {
        return label;
    }
    let Ok(mut known) = ROUTES.write() else {
        return OTHER_ROUTE;
    };
    if let Some(label) = known.get(matched_path).copied() {
        return label;
    }
    if known.len() >= MAX_ROUTES {
        return OTHER_ROUTE;
    }
    let label: &'static str = Box::leak(format!("/{matched_path}").into_boxed_str());
    known.insert(matched_path.into(), label);
    label
}

/// The method label: the standard methods by name, anything else `OTHER`.
pub fn method(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        _ => "OTHER",
    }
}

/// `2xx`, `4xx`, …: the latency histogram's status label (exact codes would multiply its
/// buckets; the request counter keeps the exact code).
pub fn status_class(status: u16) -> &'static str {
    match status {
        100..=199 => "1xx",
        200..=299 => "2xx",
        300..=399 => "3xx",
        400..=499 => "4xx",
        _ => "5xx",
    }
}

/// What the service was doing when Redis failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedisUse {
    /// Refresh-token families (login, refresh, logout).
    RefreshToken,
    /// Pending OAuth authorisations.
    OAuth,
    /// Idempotency records of write tools.
    Idempotency,
    /// The hourly throttle of account mails.
    MailThrottle,
    /// The readiness probe's `PING`.
    Readiness,
    /// Rate-limit draws (the in-process limiter decides meanwhile).
    RateLimit,
    /// Anything else answered through the error mapping (tool server sessions among others).
    Request,
}

impl RedisUse {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::RefreshToken => "refresh_token",
            Self::OAuth => "oauth",
            Self::Idempotency => "idempotency",
            Self::MailThrottle => "mail_throttle",
            Self::Readiness => "readiness",
            Self::RateLimit => "rate_limit",
            Self::Request => "request",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_are_templates_with_a_slash_and_one_label_each() {
        let a = route("api/v1/t/{slug}/sites/{site_key}");
        assert_eq!(a, "/api/v1/t/{slug}/sites/{site_key}");
        let b = route("api/v1/t/{slug}/sites/{site_key}");
        assert!(
            std::ptr::eq(a, b),
            "the second lookup reuses the first label"
        );
        assert_eq!(route(""), UNMATCHED_ROUTE);
    }

    #[test]
    fn statuses_fall_into_classes() {
        assert_eq!(status_class(200), "2xx");
        assert_eq!(status_class(204), "2xx");
        assert_eq!(status_class(304), "3xx");
        assert_eq!(status_class(429), "4xx");
        assert_eq!(status_class(503), "5xx");
    }

    #[test]
    fn unusual_methods_share_one_label() {
        assert_eq!(method(&Method::GET), "GET");
        assert_eq!(
            method(&Method::from_bytes(b"PURGE").expect("method")),
            "OTHER"
        );
    }
}
