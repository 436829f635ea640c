//! REST face of `/enrichment` (platform admin).

use salvo::oapi::extract::PathParam;
use salvo::prelude::*;

use super::service::{self, LookupResult, Proposal, SourceInfo};
use crate::error::{AppError, ErrorBody};
use crate::http::depot::DepotExt;
use crate::http::json::{FromJson, JsonFields, read_json};

pub fn router() -> Router {
    Router::with_path("enrichment")
        .hoop(crate::http::caller::require_platform_admin)
        .push(Router::with_path("sources").get(list_enrichment_sources))
        .push(Router::with_path("sources/{source}").get(get_enrichment_source))
        .push(Router::with_path("sources/{source}/lookup").post(enrichment_lookup))
        .push(Router::with_path("species/{key}/sources/{source}").get(enrichment_proposal))
}

/// The configured external sources.
#[endpoint(tags("enrichment"), security(["bearer" = []]), operation_id = "list_enrichment_sources",
    responses(
        (status_code = 200, description = "the sources", body = Vec<SourceInfo>),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: not a platform admin", body = ErrorBody),
    ))]
pub async fn list_enrichment_sources(depot: &mut Depot) -> Result<Json<Vec<SourceInfo>>, AppError> {
    let state = depot.app_state()?;
    Ok(Json(service::sources(&state)))
}

/// One source.
#[endpoint(tags("enrichment"), security(["bearer" = []]), operation_id = "get_enrichment_source",
    responses(
        (status_code = 200, description = "the source", body = SourceInfo),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: not a platform admin", body = ErrorBody),
        (status_code = 404, description = "ADAPTER_NOT_FOUND: no such source", body = ErrorBody),
    ))]
pub async fn get_enrichment_source(
    source: PathParam<String>,
    depot: &mut Depot,
) -> Result<Json<SourceInfo>, AppError> {
    let state = depot.app_state()?;
    Ok(Json(service::source(&state, &source)?))
}

/// Body of a lookup.
#[derive(Debug, Clone, serde::Deserialize, salvo::oapi::ToSchema)]
#[salvo(schema(name = "EnrichmentLookup"))]
#[serde(deny_unknown_fields)]
pub struct Lookup {
    /// The scientific name to look up.
    #[salvo(schema(
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub scientific_name: String,
}

impl FromJson for Lookup {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        Some(Self {
            scientific_name: f.text("scientific_name", 200)?,
        })
    }
}

/// Look a scientific name up at a source.
///
/// Sources implement one adapter trait (`catalog::enrichment::adapter::BotanicalSource`) in one
/// registry; today GBIF's species matcher (`gbif`, base URL `ENRICHMENT_GBIF_URL`, each call at most
/// `ENRICHMENT_TIMEOUT_SECONDS`). An unknown source is 404 `ADAPTER_NOT_FOUND`; an unreachable,
/// failing or unreadable one 502 `EXTERNAL_SOURCE_ERROR`; an upstream 429 answers with the
/// rate-limit shape, naming the source, with the upstream's `Retry-After` (else 60). Lookups and
/// proposals never write.
#[endpoint(tags("enrichment"), security(["bearer" = []]), operation_id = "enrichment_lookup",
    request_body = Lookup,
    responses(
        (status_code = 200, description = "the source's answer (found or not)", body = LookupResult),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: not a platform admin", body = ErrorBody),
        (status_code = 404, description = "ADAPTER_NOT_FOUND: no such source", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR", body = ErrorBody),
        (status_code = 429, description = "RATE_LIMIT_EXCEEDED: the source limits requests", body = ErrorBody),
        (status_code = 502, description = "EXTERNAL_SOURCE_ERROR: the source is unreachable or failed", body = ErrorBody),
    ))]
pub async fn enrichment_lookup(
    source: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<LookupResult>, AppError> {
    let state = depot.app_state()?;
    let body: Lookup = read_json(req, state.config().max_body_bytes).await?;
    Ok(Json(
        service::lookup(&state, &source, &body.scientific_name).await?,
    ))
}

/// What a source says about a species and where it differs from the catalogue (proposal
/// only; nothing is written).
#[endpoint(tags("enrichment"), security(["bearer" = []]), operation_id = "enrichment_proposal",
    responses(
        (status_code = 200, description = "the proposal", body = Proposal),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: not a platform admin", body = ErrorBody),
        (status_code = 404, description = "ADAPTER_NOT_FOUND (no such source) or ENTITY_NOT_FOUND (no such species)", body = ErrorBody),
        (status_code = 429, description = "RATE_LIMIT_EXCEEDED: the source limits requests", body = ErrorBody),
        (status_code = 502, description = "EXTERNAL_SOURCE_ERROR: the source is unreachable or failed", body = ErrorBody),
    ))]
pub async fn enrichment_proposal(
    key: PathParam<String>,
    source: PathParam<String>,
    depot: &mut Depot,
) -> Result<Json<Proposal>, AppError> {
    let state = depot.app_state()?;
    Ok(Json(service::propose(&state, &key, &source).await?))
}
