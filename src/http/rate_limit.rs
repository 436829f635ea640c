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
//!   credential fails, are counted per client IP. One Redis round trip per request, or per
//!   batch with a quota of 200 a minute or more (`store::rate_lease`); login and register draw
//!   on both budgets (two).
//!
//! Over the limit: 429, `Retry-After` in whole seconds (at least 1), body `{"error": "…"}`
//! naming the limit. Keys: `<prefix>:rl:{<identity>}:<auth|general>`, identity `ip:<v4>`,
//! `ip6:<v6 /64>` or `acct:<user key>`.

use salvo::http::HeaderValue;
use salvo::http::header::RETRY_AFTER;
use salvo::prelude::*;

use crate::auth::Principal;
use crate::config::ServiceMode;
use crate::error::RateLimitBody;
use crate::http::depot::DepotExt;
use crate::rules::client_ip::{client_ip, limit_identity};
use crate::state::AppState;
use crate::store::rate_lease::lease_size;
use crate::store::rate_limit::{Decision, Limit};

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
        Limit::Registration => "register",
        Limit::RegistrationPerClient => "register",
    };
    state.redis_key("rl", identity, &[class])
}

/// Renders the 429 of `limit` and stops the chain.
fn refuse(
    state: &AppState,
    res: &mut Response,
    ctrl: &mut FlowCtrl,
    limit: Limit,
    per: &str,
    retry_after: std::time::Duration,
) {
    render_limited(state, res, limit, per, retry_after);
    ctrl.skip_rest();
}

/// The 429 answer: `{error}` naming the limit, `Retry-After` in whole seconds (at least 1).
fn render_limited(
    state: &AppState,
    res: &mut Response,
    limit: Limit,
    per: &str,
    retry_after: std::time::Duration,
) {
    let what = match limit {
        Limit::Auth => {
            "login and registration requests (e-mail verification and password reset included)"
        }
        Limit::General => "API requests",
        Limit::Registration | Limit::RegistrationPerClient => "registrations",
    };
    let error = format!(
        "rate limit exceeded: at most {} {what} per minute per {per}",
        state.rate_limits().per_minute(limit)
    );
    crate::metrics::rate_limited(limit.label());
    let seconds = retry_after.as_micros().div_ceil(1_000_000).max(1);
    let seconds = u64::try_from(seconds).unwrap_or(u64::MAX);
    res.status_code(StatusCode::TOO_MANY_REQUESTS);
    res.headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from(seconds));
    res.render(Json(RateLimitBody { error }));
}

/// The general budget for a face that knows its caller itself (the web pages read their
/// session cookie): the account's bucket when `user` is known, else the client IP's, as
/// [`general_limit`] counts API requests. Over the limit it renders the 429 (with
/// `Retry-After`), stops the chain and returns false.
pub async fn general_budget_of(
    state: &AppState,
    req: &Request,
    res: &mut Response,
    ctrl: &mut FlowCtrl,
    user: Option<uuid::Uuid>,
) -> bool {
    if state.config().service_mode == ServiceMode::Light {
        return true;
    }
    match user {
        Some(user) => {
            let identity = format!("acct:{user}");
            enforce(state, res, ctrl, Limit::General, &identity, "account", 1)
                .await
                .is_none()
        }
        None => {
            let address = client_identity(state, req);
            enforce(state, res, ctrl, Limit::General, &address, "client IP", 1)
                .await
                .is_none()
        }
    }
}

/// Draws `cost` requests from a bucket; over the limit, renders the 429, stops the chain and
/// returns the wait.
async fn enforce(
    state: &AppState,
    res: &mut Response,
    ctrl: &mut FlowCtrl,
    limit: Limit,
    identity: &str,
    per: &str,
    cost: u32,
) -> Option<std::time::Duration> {
    let key = bucket_key(state, identity, limit);
    let Decision::Deny { retry_after } = draw(state, limit, &key, cost).await else {
        return None;
    };
    refuse(state, res, ctrl, limit, per, retry_after);
    Some(retry_after)
}

/// Draws `cost` requests from the bucket `key`. A single request is first served from a batch
/// this replica drew before (`store::rate_lease`); otherwise, with a quota large enough to
/// lease, a batch is drawn, and when the batch is refused the request draws alone, so the
/// decision near the limit is the shared bucket's.
async fn draw(state: &AppState, limit: Limit, key: &str, cost: u32) -> Decision {
    let limits = state.rate_limits();
    let redis = state.shared_redis();
    if cost != 1 {
        return limits.check_n(redis, limit, key, cost).await;
    }
    let leases = state.rate_leases();
    if leases.take(key) {
        return Decision::Allow;
    }
    let batch = lease_size(limits.per_minute(limit));
    if batch > 1 && limits.check_n(redis, limit, key, batch).await == Decision::Allow {
        leases.keep(key, batch - 1);
        return Decision::Allow;
    }
    limits.check_n(redis, limit, key, 1).await
}

/// The further messages of a JSON-RPC batch on the tool server: each message counts against
/// the caller's general budget (the request itself was counted by [`general_limit`]). Over the
/// limit, the 429 is rendered, nothing of the batch runs, and `false` is returned.
pub async fn draw_batch(
    state: &AppState,
    principal: &Principal,
    messages: usize,
    res: &mut Response,
) -> bool {
    if state.config().service_mode == ServiceMode::Light || messages <= 1 {
        return true;
    }
    let extra = u32::try_from(messages - 1).unwrap_or(u32::MAX);
    let identity = format!("acct:{}", principal.user_id);
    let key = bucket_key(state, &identity, Limit::General);
    match state
        .rate_limits()
        .check_n(state.shared_redis(), Limit::General, &key, extra)
        .await
    {
        Decision::Allow => true,
        Decision::Deny { retry_after } => {
            let per = "account (each message of a batch counts)";
            render_limited(state, res, Limit::General, per, retry_after);
            false
        }
    }
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
    enforce(&state, res, ctrl, Limit::Auth, &identity, "client IP", 1).await;
}

/// The registration budgets of a well-formed registration (the route validates the body
/// first, so malformed requests never count): the client's own (a tenth of
/// `RATE_LIMIT_REGISTRATION_PER_MINUTE`, at least one), then the service-wide one (every
/// registration creates a garden schema). Over either, the 429 is rendered and `false`
/// returned; a client over its own budget draws nothing from the service-wide one. Light
/// mode has no limits.
pub async fn draw_registration(state: &AppState, req: &Request, res: &mut Response) -> bool {
    if state.config().service_mode == ServiceMode::Light {
        return true;
    }
    let identity = client_identity(state, req);
    let draws = [
        (Limit::RegistrationPerClient, identity.as_str(), "client IP"),
        (
            Limit::Registration,
            "global",
            "service (all clients together)",
        ),
    ];
    for (limit, identity, per) in draws {
        let key = bucket_key(state, identity, limit);
        if let Decision::Deny { retry_after } = draw(state, limit, &key, 1).await {
            render_limited(state, res, limit, per, retry_after);
            return false;
        }
    }
    true
}

/// Hoop: the general budget of the caller (account, else client IP). The client address is
/// looked at first: a client already known to be over its budget is refused before its
/// credential is authenticated, so random keys from an over-limit client cost no database
/// lookup (this replica learns it from the first refusal; valid credentials from that address
/// wait as well until its budget refills).
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
    let address = client_identity(&state, req);
    let caller = if crate::auth::presents_credential(req) {
        if let Some(wait) = state.rate_limits().blocked_for(&address) {
            return refuse(&state, res, ctrl, Limit::General, "client IP", wait);
        }
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
            enforce(&state, res, ctrl, Limit::General, &identity, "account", 1).await;
        }
        None => {
            let denied = enforce(&state, res, ctrl, Limit::General, &address, "client IP", 1).await;
            if let Some(wait) = denied {
                state.rate_limits().note_blocked(&address, wait);
            }
        }
    }
}
