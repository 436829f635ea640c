//! REST face of `/phases`, `/phase-sequences` and `/growth-phases`.

use salvo::oapi::extract::PathParam;
use salvo::prelude::*;

use super::model::{GrowthPhase, PhaseKind, ResolvedSequence, SequenceKind};
use super::service;
use crate::error::{AppError, ErrorBody};
use crate::http::depot::DepotExt;
use crate::http::pagination::{Page, PageRequest};

crate::catalog_routes!(phases, PhaseKind, "phases", "phases", "phase definitions");
crate::catalog_routes!(
    phase_sequences,
    SequenceKind,
    "phase-sequences",
    "phases",
    "phase sequences"
);

pub fn router() -> Vec<Router> {
    vec![
        phases::router(),
        phase_sequences::router().push(
            Router::with_path("{key}/resolved")
                .hoop(crate::http::caller::require_caller)
                .get(get_resolved_sequence),
        ),
        Router::with_path("growth-phases")
            .hoop(crate::http::caller::require_caller)
            .get(list_growth_phases),
    ]
}

/// A sequence with its phases resolved: effective durations, phase names, total length.
#[endpoint(tags("phases"), security(["bearer" = []]), operation_id = "get_resolved_sequence",
    responses(
        (status_code = 200, description = "the resolved sequence", body = ResolvedSequence),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND", body = ErrorBody),
    ))]
pub async fn get_resolved_sequence(
    key: PathParam<String>,
    depot: &mut Depot,
) -> Result<Json<ResolvedSequence>, AppError> {
    let state = depot.app_state()?;
    Ok(Json(service::resolved(&state, &key).await?))
}

/// Every phase of every sequence (or of one), with effective duration and flags.
#[endpoint(tags("phases"), security(["bearer" = []]), operation_id = "list_growth_phases",
    parameters(
        ("sequence" = Option<uuid::Uuid>, Query, description = "only this sequence (key)"),
        ("skip" = Option<i64>, Query, minimum = 0, maximum = 100000, description = "items to skip (default 0)"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 500, description = "page size (default 100)"),
    ),
    responses(
        (status_code = 200, description = "one page of growth phases", body = Page<GrowthPhase>),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown sequence", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: skip or limit out of range", body = ErrorBody),
    ))]
pub async fn list_growth_phases(
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Page<GrowthPhase>>, AppError> {
    let state = depot.app_state()?;
    let page = PageRequest::from_request(req, 500)?;
    let key = match req.queries().get("sequence") {
        None => None,
        Some(raw) => Some(uuid::Uuid::parse_str(raw).map_err(|_| {
            AppError::validation(vec![crate::error::ErrorDetail::new(
                "query.sequence",
                "must be a sequence key (UUID)",
                "value_error",
            )])
        })?),
    };
    let key = key.map(|u| u.to_string());
    Ok(Json(
        service::growth_phases(&state, key.as_deref(), page).await?,
    ))
}
