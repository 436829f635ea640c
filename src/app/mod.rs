//! The service assembled: every face's routers in one tree (the REST routes of every
//! capability, the tool server, the pages handed in by `serve`), the OpenAPI document made
//! from that tree, and the hoops around it. The top of the layers: it may use every face.

pub mod openapi;
pub mod redoc;

use salvo::catcher::Catcher;
use salvo::prelude::*;

use crate::config::ServiceMode;
use crate::error::catch_error;
use crate::http::tenant::tenant_hoop;
use crate::http::{cors, depot, headers, health, observe, personal_data, rate_limit, roles};
use crate::state::AppState;

/// The `/auth` sub-tree: in light mode only API-key management exists there.
fn auth_router(mode: ServiceMode) -> Router {
    let auth = Router::with_path("auth").push(crate::auth::api_keys::routes::router());
    match mode {
        ServiceMode::Light => auth,
        ServiceMode::Full => auth
            .push(crate::auth::accounts::routes::router(|r| {
                r.hoop(rate_limit::auth_limit)
            }))
            .push(crate::auth::oauth::routes::router(|r| {
                r.hoop(rate_limit::auth_limit)
            }))
            .push(crate::auth::api_keys::routes::validate_router()),
    }
}

/// `/users/me/identities` exists in full mode only (light mode has no sign-in).
fn identities_router(mode: ServiceMode) -> Vec<Router> {
    match mode {
        ServiceMode::Light => Vec::new(),
        ServiceMode::Full => vec![crate::auth::oauth::routes::identities_router()],
    }
}

/// Every API route as this mode serves it. The OpenAPI document is generated from this tree.
/// Health and mode stand apart: everything else under `/api/v1` has the general rate limit.
pub fn api_router(mode: ServiceMode) -> Router {
    let unlimited = Router::with_path("api/v1")
        .push(
            Router::with_path("health")
                .push(Router::with_path("live").get(health::live))
                .push(Router::with_path("ready").get(health::ready)),
        )
        .push(Router::with_path("mode").get(health::mode));
    let v1 = Router::with_path("api/v1")
        .push(auth_router(mode))
        .push(crate::platform::users::routes::router())
        .push(personal_data::router())
        .append(&mut identities_router(mode))
        .push(crate::platform::tenants::routes::router())
        .push(crate::platform::tenants::routes::my_invitations_router())
        .push(crate::platform::tenants::routes::invitation_token_router())
        .push(
            crate::platform::admin::routes::router()
                .push(crate::auth::oauth::routes::admin_router()),
        )
        .append(&mut crate::catalog::routers())
        .push(crate::calculations::routes::router())
        .push(crate::mcp::routes::router())
        .push(crate::mcp::routes::activity_router())
        .push(crate::platform::preferences::routes::router())
        .push(crate::garden::calendar::routes::feed_router())
        .push(crate::notify::digest::routes::router())
        .push(crate::notify::push::routes::router())
        .push(crate::notify::push::routes::key_router())
        .push(
            // Tenant scope: the caller is checked before the slug is resolved, so an anonymous
            // client cannot even learn which gardens exist; then the slug resolves together
            // with the caller's role (not a member: the same 404 as an unknown slug); then the
            // method's role floor (viewers read, writes need a grower), before any handler
            // reads a body. Stronger needs are `roles::Requires<…>` handler arguments.
            Router::with_path("t/{slug}")
                .hoop(crate::http::caller::require_caller)
                .hoop(tenant_hoop)
                .hoop(roles::role_floor)
                .push(crate::garden::sites::routes::router())
                .push(crate::garden::plants::routes::router())
                .push(crate::garden::runs::routes::router())
                .push(crate::garden::places::routes::locations_router())
                .push(crate::garden::places::routes::slots_router())
                .push(crate::garden::substrates::routes::substrates_router())
                .push(crate::garden::substrates::routes::mixes_router())
                .push(crate::garden::substrates::routes::batches_router())
                .push(crate::garden::tasks::routes::router())
                .push(crate::garden::care::routes::router())
                .push(crate::garden::ipm::routes::router())
                .push(crate::garden::diary::routes::router())
                .push(crate::garden::harvest::routes::router())
                .push(crate::garden::fertilizers::routes::router())
                .push(crate::garden::fertilizers::routes::mixing_router())
                .push(crate::garden::nutrient_plans::routes::router())
                .push(crate::garden::nutrient_plans::routes::plant_router())
                .push(crate::garden::calendar::routes::router())
                .push(crate::garden::onboarding::routes::router())
                .push(crate::garden::tanks::routes::router())
                .push(crate::garden::sensors::routes::router())
                .push(crate::garden::alerts::routes::router())
                .push(crate::garden::watering::routes::router())
                .push(crate::garden::watering::routes::diagnostics_router())
                .push(crate::garden::webhooks::routes::router())
                .push(crate::platform::service_accounts::routes::router())
                .push(crate::garden::photos::routes::entry_router())
                .push(crate::garden::photos::routes::renditions_router())
                .push(crate::garden::photos::routes::storage_router())
                .push(crate::http::transfers::routes::export_router()),
        );
    Router::new()
        .push(Router::with_path("api/health").get(health::health))
        .push(unlimited)
        .push(rate_limit::limit_general(v1, mode))
}

/// The request body limit: `MAX_BODY_BYTES`, except photo uploads, which may carry up to
/// `PHOTO_MAX_UPLOAD_MB` (their handler refuses a larger one with a message naming the limit).
struct BodyLimit {
    default: u64,
    photos: u64,
}

#[salvo::async_trait]
impl Handler for BodyLimit {
    async fn handle(
        &self,
        req: &mut Request,
        depot: &mut Depot,
        res: &mut Response,
        ctrl: &mut FlowCtrl,
    ) {
        if crate::garden::photos::routes::is_upload(req.method(), req.uri().path()) {
            req.limit_body(self.photos as usize);
            ctrl.call_next(req, depot, res).await;
        } else if crate::http::transfers::routes::is_import(req.method(), req.uri().path()) {
            // Streamed to a file by its handler, which counts and refuses past its own limit.
            ctrl.call_next(req, depot, res).await;
        } else {
            max_size(self.default).handle(req, depot, res, ctrl).await;
        }
    }
}

/// The whole service: hoops, API, docs, the pages the face above hands in (`pages`: the web
/// app's router in full mode; `http` does not import the faces above it), and the catcher
/// that gives unmatched routes, wrong methods and panics the same error record as everything
/// else.
pub fn build_service(state: AppState, pages: Option<Router>) -> Service {
    let config = state.config().clone();
    let api = api_router(config.service_mode);
    let docs = openapi::router(&api, config.service_mode, config.mcp_server_enabled);
    let mut root = Router::new()
        .hoop(CatchPanic::new())
        .hoop(BodyLimit {
            default: config.max_body_bytes as u64,
            photos: config.photo_max_upload_bytes as u64,
        })
        .push(docs)
        .push(api);
    // The web pages, outside the API tree and its document.
    if let Some(pages) = pages {
        root = root.push(pages);
    }
    // Outside the API tree: not in the OpenAPI document, not rate limited.
    if config.metrics_token.is_some() {
        root = root.push(crate::http::metrics::token_router());
    }
    Service::new(root)
        .hoop(depot::InjectState(state))
        .hoop(observe::observe)
        .hoop(headers::SecurityHeaders::new(config.debug))
        .hoop(cors::cors(&config.cors_origins))
        // Last: answered inside the headers, CORS and request log like every route.
        .hoop(crate::mcp::routes::gate_unrouted)
        .catcher(Catcher::new(catch_error))
}
