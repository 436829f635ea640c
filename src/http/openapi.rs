//! The OpenAPI document at `/api/v1/openapi.json`, Swagger UI at `/api/v1/docs`, ReDoc at
//! `/api/v1/redoc`.

use salvo::oapi::naming::{self, FlexNamer};
use salvo::oapi::security::{Http, HttpAuthScheme};
use salvo::oapi::swagger_ui::SwaggerUi;
use salvo::oapi::{OpenApi, SecurityScheme, redoc::ReDoc};
use salvo::prelude::*;

use super::health::VERSION;
use crate::config::ServiceMode;

pub const OPENAPI_PATH: &str = "/api/v1/openapi.json";

/// The document describes the API as this deployment serves it: in light mode nothing asks
/// for a credential, so neither security requirements nor 401 answers are listed.
pub fn document(api: &Router, mode: ServiceMode) -> OpenApi {
    // `Page<Site>` becomes `PageOfSite`: component names must be plain identifiers.
    naming::set_namer(
        FlexNamer::new()
            .short_mode(true)
            .generic_delimiter("Of", ""),
    );
    let doc = OpenApi::new("Kultiva API", VERSION);
    match mode {
        ServiceMode::Full => doc
            .add_security_scheme(
                "bearer",
                SecurityScheme::Http(
                    Http::new(HttpAuthScheme::Bearer).bearer_format("JWT or API key"),
                ),
            )
            .merge_router(api),
        ServiceMode::Light => {
            let mut doc = doc.merge_router(api);
            for item in doc.paths.values_mut() {
                for operation in item.operations.values_mut() {
                    operation.securities = None;
                    operation.responses.remove("401");
                }
            }
            doc
        }
    }
}

pub fn router(api: &Router, mode: ServiceMode) -> Router {
    let doc = document(api, mode);
    Router::new()
        .push(doc.into_router(OPENAPI_PATH))
        .push(SwaggerUi::new(OPENAPI_PATH).into_router("/api/v1/docs"))
        .push(ReDoc::new(OPENAPI_PATH).into_router("/api/v1/redoc"))
}
