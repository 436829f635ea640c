//! The web app: the third face over the service layer, beside REST and the tool server.
//! Pages are HTML rendered on the server (maud), in German or English (Fluent), under `/app`,
//! with htmx (vendored, `/app/assets`) for updates in place; every form also works without
//! JavaScript. A page handler reads its form the way the REST route reads its body (the same
//! `FromJson` readers, so the same rules and limits) and calls the same service function.
//!
//! Full mode only (light mode has no sign-in). Nothing here is in the OpenAPI document.

pub mod assets;
pub mod chart;
pub mod forms;
pub mod i18n;
pub mod layout;
mod pages;
pub mod session;

use salvo::http::HeaderValue;
use salvo::http::header::{CACHE_CONTROL, LOCATION};
use salvo::prelude::*;

/// The web face's routes: everything under `/app`, and beside it `/` (to `/app`) and
/// `/favicon.ico`. Everything here is compressed (`http::compression`; pages are safe to
/// compress because their CSRF values are masked per response).
pub fn router() -> Router {
    Router::new()
        .hoop(crate::http::compression::pages())
        .push(Router::new().get(root))
        .push(Router::with_path("favicon.ico").get(assets::favicon))
        .push(app_router())
}

/// `GET /`: a 303 to `/app` for every client (a browser lands on the sign-in or its gardens;
/// an API client learns where the pages are; the API itself lives under `/api/v1`).
#[handler]
async fn root(res: &mut Response) {
    res.status_code(StatusCode::SEE_OTHER);
    res.headers_mut()
        .insert(LOCATION, HeaderValue::from_static("/app"));
    res.headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
}

/// Everything under `/app`.
fn app_router() -> Router {
    Router::with_path("app")
        .hoop(pages::frame_headers)
        .push(Router::with_path("assets/{file}").get(assets::serve))
        .push(Router::with_path("manifest.webmanifest").get(assets::manifest))
        .push(
            Router::new()
                .hoop(pages::page_budget)
                .get(pages::garden::home)
                .push(pages::account::router())
                .push(pages::garden::router())
                .push(pages::start::router())
                .push(pages::plants::router())
                .push(pages::places::router())
                .push(pages::tasks::router())
                .push(pages::runs::router())
                .push(pages::calendar::router())
                .push(pages::protection::router())
                .push(pages::harvests::router())
                .push(pages::diary::router())
                .push(pages::catalog::router())
                .push(pages::nutrition::router())
                .push(pages::sensors::router())
                .push(pages::members::router())
                .push(pages::settings::router()),
        )
}
