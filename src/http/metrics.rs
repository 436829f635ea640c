//! `GET /metrics`, two ways in:
//!
//! * the private listener on `METRICS_BIND_ADDRESS` ([`private_service`]): no credential, it
//!   is meant for a port only the scraper reaches;
//! * the main listener, only when `METRICS_TOKEN` is set ([`token_router`]): the caller shows
//!   `Authorization: Bearer <token>`, compared in constant time; anything else is 401 in the
//!   error format. Without `METRICS_TOKEN` the route does not exist there (404 like any unknown
//!   path).

use salvo::catcher::Catcher;
use salvo::http::HeaderValue;
use salvo::http::header::{AUTHORIZATION, CONTENT_TYPE, WWW_AUTHENTICATE};
use salvo::prelude::*;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use prometheus_client::encoding::prometheus_text;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use crate::error::{AppError, ErrorCode, catch_error};
use crate::http::depot::{DepotExt, InjectState};
use crate::metrics::PlacementLabels;
use crate::state::AppState;

/// The route on the main listener (when a token is configured).
pub fn token_router() -> Router {
    Router::with_path("metrics").get(scrape_with_token)
}

/// The whole service of the private listener: `/metrics` and the error record for anything
/// else.
pub fn private_service(state: AppState) -> Service {
    Service::new(Router::with_path("metrics").get(scrape_open))
        .hoop(InjectState(state))
        .catcher(Catcher::new(catch_error))
}

/// True when `authorization` is `Bearer <expected>`. Both sides are hashed first, so the
/// comparison takes the same time whatever the presented value's length or content.
fn bearer_matches(authorization: Option<&HeaderValue>, expected: &str) -> bool {
    let presented = authorization
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            let (scheme, token) = v.trim().split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
        })
        .unwrap_or("");
    let presented = Sha256::digest(presented.as_bytes());
    let expected = Sha256::digest(expected.as_bytes());
    bool::from(presented.as_slice().ct_eq(expected.as_slice()))
}

fn write_scrape(state: &AppState, res: &mut Response) -> Result<(), AppError> {
    let body = render(state).map_err(|_| AppError::internal("encoding the metrics"))?;
    res.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static(crate::metrics::CONTENT_TYPE),
    );
    res.body(body);
    Ok(())
}

#[handler]
async fn scrape_open(depot: &mut Depot, res: &mut Response) -> Result<(), AppError> {
    let state = depot.app_state()?;
    write_scrape(&state, res)
}

#[handler]
async fn scrape_with_token(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<(), AppError> {
    let state = depot.app_state()?;
    let Some(token) = state.config().metrics_token.as_ref() else {
        // Not routed without a token; kept safe if it ever is.
        return Err(AppError::not_found("route"));
    };
    if !bearer_matches(req.headers().get(AUTHORIZATION), token.expose()) {
        res.headers_mut()
            .insert(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        return Err(AppError::new(
            ErrorCode::Unauthorized,
            "the metrics need Authorization: Bearer <METRICS_TOKEN>",
        ));
    }
    write_scrape(&state, res)
}

/// The pool gauges of every placement, sampled now.
fn pool_registry(state: &AppState) -> Registry {
    let mut registry = Registry::default();
    let open = Family::<PlacementLabels, Gauge>::default();
    let idle = Family::<PlacementLabels, Gauge>::default();
    let in_use = Family::<PlacementLabels, Gauge>::default();
    let max = Family::<PlacementLabels, Gauge>::default();
    let read_open = Family::<PlacementLabels, Gauge>::default();
    let read_in_use = Family::<PlacementLabels, Gauge>::default();
    let read_max = Family::<PlacementLabels, Gauge>::default();
    let placements = state.placements();
    for name in placements.names() {
        let Some(placement) = placements.get(name) else {
            continue;
        };
        let pool = placement.pool();
        let labels = PlacementLabels {
            placement: name.to_owned(),
        };
        let size = i64::from(pool.size());
        let idle_now = i64::try_from(pool.num_idle()).unwrap_or(i64::MAX);
        open.get_or_create(&labels).set(size);
        idle.get_or_create(&labels).set(idle_now);
        // Sampled apart, so a connection may move in between: never report below zero.
        in_use.get_or_create(&labels).set((size - idle_now).max(0));
        max.get_or_create(&labels)
            .set(i64::from(pool.options().get_max_connections()));
        let reads = placement.reads().status();
        let gauge = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
        read_open.get_or_create(&labels).set(gauge(reads.open));
        read_in_use
            .get_or_create(&labels)
            .set(gauge(reads.open.saturating_sub(reads.idle)));
        read_max.get_or_create(&labels).set(gauge(reads.max));
    }
    registry.register(
        "kultiva_db_pool_open_connections",
        "Connections the placement's pool holds open (idle and in use)",
        open,
    );
    registry.register(
        "kultiva_db_pool_idle_connections",
        "Open connections of the placement's pool waiting for work",
        idle,
    );
    registry.register(
        "kultiva_db_pool_in_use_connections",
        "Connections of the placement's pool lent out to requests",
        in_use,
    );
    registry.register(
        "kultiva_db_pool_max_connections",
        "The placement's pool size limit (DB_MAX_CONNECTIONS)",
        max,
    );
    registry.register(
        "kultiva_db_read_pool_open_connections",
        "Connections the placement's read pool (single-statement garden reads) holds open",
        read_open,
    );
    registry.register(
        "kultiva_db_read_pool_in_use_connections",
        "Connections of the placement's read pool lent out to reads",
        read_in_use,
    );
    registry.register(
        "kultiva_db_read_pool_max_connections",
        "The placement's read pool size limit (DB_READ_CONNECTIONS)",
        read_max,
    );
    registry
}

/// The scrape: every series in the Prometheus text format.
pub fn render(state: &AppState) -> Result<String, std::fmt::Error> {
    let mut out = String::with_capacity(16 * 1024);
    crate::metrics::encode_counters(&mut out)?;
    prometheus_text::encode(&mut out, &pool_registry(state))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN: &str = "0123456789abcdef0123456789abcdef";

    fn header(value: &str) -> HeaderValue {
        HeaderValue::from_str(value).expect("header")
    }

    #[test]
    fn only_the_exact_bearer_token_matches() {
        assert!(bearer_matches(
            Some(&header(&format!("Bearer {TOKEN}"))),
            TOKEN
        ));
        assert!(bearer_matches(
            Some(&header(&format!("bearer  {TOKEN}"))),
            TOKEN
        ));
        assert!(!bearer_matches(None, TOKEN));
        assert!(!bearer_matches(Some(&header(TOKEN)), TOKEN));
        assert!(!bearer_matches(
            Some(&header(&format!("Basic {TOKEN}"))),
            TOKEN
        ));
        assert!(!bearer_matches(
            Some(&header(&format!("Bearer {TOKEN}x"))),
            TOKEN
        ));
        assert!(!bearer_matches(Some(&header("Bearer ")), TOKEN));
    }
}
