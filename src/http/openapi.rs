//! The OpenAPI document at `/api/v1/openapi.json`, Swagger UI at `/api/v1/docs`, ReDoc at
//! `/api/v1/redoc`.

use salvo::oapi::naming::{self, FlexNamer};
use salvo::oapi::security::{Http, HttpAuthScheme};
use salvo::oapi::swagger_ui::SwaggerUi;
use salvo::oapi::{OpenApi, SecurityScheme, redoc::ReDoc};
use salvo::prelude::*;

use super::health::VERSION;

pub const OPENAPI_PATH: &str = "/api/v1/openapi.json";

pub fn document(api: &Router) -> OpenApi {
    // `Page<Site>` becomes `PageOfSite`: component names must be plain identifiers.
    naming::set_namer(
        FlexNamer::new()
            .short_mode(true)
            .generic_delimiter("Of", ""),
    );
    OpenApi::new("Kultiva API", VERSION)
        .add_security_scheme(
            "bearer",
            SecurityScheme::Http(Http::new(HttpAuthScheme::Bearer).bearer_format("JWT or API key")),
        )
        .merge_router(api)
}

pub fn router(api: &Router) -> Router {
    let doc = document(api);
    Router::new()
        .push(doc.into_router(OPENAPI_PATH))
        .push(SwaggerUi::new(OPENAPI_PATH).into_router("/api/v1/docs"))
        .push(ReDoc::new(OPENAPI_PATH).into_router("/api/v1/redoc"))
}
