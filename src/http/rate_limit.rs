//! The rate-limit hoops (full mode only; light mode has one local user and no limits).
//!
//! * [`auth_limit`] sits on `POST /auth/login` and `POST /auth/register` (through the accounts
//!   router's `limited` closure): `RATE_LIMIT_AUTH_PER_MINUTE` per client IP, one budget shared
//!   by both routes.
//! * [`general_limit`] sits on the `/api/v1` router that holds every API route except health
//!   and mode (docs and `openapi.json` live on another router):
//!   `RATE_LIMIT_GENERAL_PER_MINUTE` per caller. A request that presents a credential is
//!   authenticated here, once, and counted against its account (every key and token of an
//!   account share one budget); the `Principal` goes into the Depot, where `require_caller`
//!   finds it instead of authenticating again. Anonymous requests, and requests whose
//!   credential fails, are counted per client IP. One Redis round trip per request; login and
//!   register draw on both budgets (two).
//!
//! Over the limit: 429, `Retry-After` in whole seconds (at least 1), body `{"error": "…"}`
//! naming the limit. Keys: `<prefix>:rl:{<identity>}:<auth|general>`, identity `ip:<v4>`,
//! `ip6:<v6 /64>` or `acct:<user key>`.

use salvo::http::HeaderValue;
use salvo::http::header::RETRY_AFTER;
use salvo::oapi::ToSchema;
use salvo::prelude::*;
use serde::Serialize;

use crate::config::ServiceMode;
use crate::http::depot::DepotExt;
use crate::rules::client_ip::{client_ip, limit_identity};
use crate::state::AppState;
use crate::store::rate_limit::{Decision, Limit};

/// The 429 body: a single field, as the specification has it.
#[derive(Debug, Serialize, ToSchema)]
#[salvo(schema(name = "RateLimitError"))]
pub struct RateLimitBody {
    /// Which limit was exceeded, in words.
    pub error: String,
}

/// Puts the general limit on every route of `router` in full mode.
pub fn limit_general(router: Router, mode: ServiceMode) -> Router {
    match mode {
        ServiceMode::Full => router.hoop(general_limit),
        ServiceMode::Light => router,
    }
}

/// The limit identity of the client address (see `rules::client_ip`).
fn client_identity(state: &AppState, req: &Request) -> String {
    let forwarded_for = req
        .headers()
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok());
    match client_ip(
        req.remote_addr().ip(),
        forwarded_for,
        &state.config().trusted_proxies,
    ) {
        Some(ip) => limit_identity(ip),
        // Not an IP socket: every such client shares one bucket.
        None => "ip:unknown".to_owned(),
    }
}

fn bucket_key(state: &AppState, identity: &str, limit: Limit) -> String {
    let class = match limit {
        Limit::Auth => "auth",
        Limit::General => "general",
    };
    state.redis_key(&["rl", &format!("{{{identity}}}"), class])
}

/// Draws from a bucket; over the limit, renders the 429 and stops the chain.
async fn enforce(
    state: &AppState,
    res: &mut Response,
    ctrl: &mut FlowCtrl,
    limit: Limit,
    identity: &str,
    per: &str,
) {
    let key = bucket_key(state, identity, limit);
    let limits = state.rate_limits();
    let Decision::Deny { retry_after } = limits.check(state.shared_redis(), limit, &key).await
    else {
        return;
    };
    let what = match limit {
        Limit::Auth => {
            "login and registration requests (e-mail verification and password reset included)"
        }
        Limit::General => "API requests",
    };
    let error = format!(
        "rate limit exceeded: at most {} {what} per minute per {per}",
        limits.per_minute(limit)
    );
    let seconds = retry_after.as_micros().div_ceil(1_000_000).max(1);
    let seconds = u64::try_from(seconds).unwrap_or(u64::MAX);
    res.status_code(StatusCode::TOO_MANY_REQUESTS);
    res.headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from(seconds));
    res.render(Json(RateLimitBody { error }));
    ctrl.skip_rest();
}

/// Hoop: the login/registration budget of the client IP.
#[handler]
pub async fn auth_limit(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
    ctrl: &mut FlowCtrl,
) {
    let state = match depot.app_state() {
        Ok(state) => state,
        Err(err) => return err.halt(req, res, ctrl),
    };
    let identity = client_identity(&state, req);
    enforce(&state, res, ctrl, Limit::Auth, &identity, "client IP").await;
}

/// Hoop: the general budget of the caller (account, else client IP).
#[handler]
pub async fn general_limit(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
    ctrl: &mut FlowCtrl,
) {
    let state = match depot.app_state() {
        Ok(state) => state,
        Err(err) => return err.halt(req, res, ctrl),
    };
    let caller = if crate::auth::presents_credential(req) {
        // A failure is not answered here: the route decides whether it needs a caller (and
        // `require_caller` gives the 401), so the request counts against its IP.
        crate::auth::authenticate(&state, req).await.ok()
    } else {
        None
    };
    match caller {
        Some(principal) => {
            let identity = format!("acct:{}", principal.user_id);
            depot.insert_typed(principal);
            enforce(&state, res, ctrl, Limit::General, &identity, "account").await;
        }
        None => {
            let identity = client_identity(&state, req);
            enforce(&state, res, ctrl, Limit::General, &identity, "client IP").await;
        }
    }
}
