//! REST face of `/knowledge/search`.

use salvo::prelude::*;

use super::service::{self, KnowledgeHit, Language, SearchParams, Source};
use crate::error::{AppError, ErrorBody};
use crate::http::depot::DepotExt;
use crate::http::pagination::{Page, PageRequest};

pub fn router() -> Router {
    Router::with_path("knowledge/search")
        .hoop(crate::http::caller::require_caller)
        .get(search_knowledge)
}

/// Full-text search over species profiles and care guides, glossary definitions and family,
/// pest, disease and treatment texts (German and English), best match first.
#[endpoint(tags("knowledge"), security(["bearer" = []]), operation_id = "search_knowledge",
    parameters(
        ("q" = String, Query, min_length = 1, max_length = 200, pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$", description = "search text (web-search syntax: words, \"phrases\", -exclusions, or)"),
        ("language" = Option<Language>, Query, description = "only texts in this language"),
        ("source" = Option<Source>, Query, description = "only this kind of source"),
        ("skip" = Option<i64>, Query, minimum = 0, maximum = 100000, description = "items to skip (default 0)"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 50, description = "page size (default 50)"),
    ),
    responses(
        (status_code = 200, description = "matching texts, best first", body = Page<KnowledgeHit>),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: q missing or too long, unknown language or source", body = ErrorBody),
    ))]
pub async fn search_knowledge(
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Page<KnowledgeHit>>, AppError> {
    let state = depot.app_state()?;
    let page = PageRequest::from_request(req, 50)?;
    let params = SearchParams {
        q: req.queries().get("q").cloned(),
        language: req.queries().get("language").cloned(),
        source: req.queries().get("source").cloned(),
    };
    Ok(Json(service::search(&state, &params, page).await?))
}
