//! The web app: the third face over the service layer, beside REST and the tool server.
//! Pages are HTML rendered on the server (maud), in German or English (Fluent), under `/app`,
//! with htmx (vendored, `/app/assets`) for updates in place; every form also works without
//! JavaScript. A page handler reads its form the way the REST route reads its body (the same
//! `FromJson` readers, so the same rules and limits) and calls the same service function.
//!
//! Full mode only (light mode has no sign-in). Nothing here is in the OpenAPI document.

pub mod assets;
pub mod forms;
pub mod i18n;
pub mod layout;
mod pages;
pub mod session;

use salvo::prelude::*;

/// Everything under `/app`.
pub fn router() -> Router {
    Router::with_path("app")
        .hoop(pages::frame_headers)
        .push(Router::with_path("assets/{file}").get(assets::serve))
        .push(
            Router::new()
                .hoop(pages::page_budget)
                .get(pages::garden::home)
                .push(pages::account::router())
                .push(pages::garden::router())
                .push(pages::plants::router())
                .push(pages::places::router())
                .push(pages::tasks::router())
                .push(pages::runs::router())
                .push(pages::calendar::router())
                .push(pages::members::router())
                .push(pages::settings::router()),
        )
}
