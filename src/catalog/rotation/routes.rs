//! REST face of `/crop-rotation`, with the good successors of a family.

use salvo::oapi::extract::PathParam;
use salvo::prelude::*;

use super::model::{RULE, RuleKind};
use crate::catalog::engine::routes::{ListQuery, Record, records};
use crate::catalog::engine::service::{self, ListParams};
use crate::catalog::families::model::FAMILY;
use crate::error::{AppError, ErrorBody};
use crate::http::depot::DepotExt;
use crate::http::pagination::Page;

crate::catalog_routes!(
    crop_rotation,
    RuleKind,
    "crop-rotation",
    "crop rotation",
    "rotation rules"
);

pub fn router() -> Router {
    crop_rotation::router().push(
        Router::with_path("families/{key}/successors")
            .hoop(crate::http::caller::require_caller)
            .get(family_successors),
    )
}

/// The families that follow this one well (successor rules from it).
#[endpoint(tags("crop rotation"), security(["bearer" = []]), operation_id = "family_successors",
    responses(
        (status_code = 200, description = "one page of successor rules", body = Page<Record<RuleKind>>),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown family", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: a query parameter is out of range", body = ErrorBody),
    ))]
pub async fn family_successors(
    key: PathParam<String>,
    query: ListQuery<RuleKind>,
    depot: &mut Depot,
) -> Result<Json<Page<Record<RuleKind>>>, AppError> {
    let state = depot.app_state()?;
    let mut params: ListParams = query.params;
    params.filters.retain(|(p, _)| *p != "relation");
    params.filters.push(("relation", "successor".to_owned()));
    let page = service::list_under(
        &state,
        (&FAMILY, &key),
        &RULE,
        "from_family_key",
        &params,
        query.page,
    )
    .await?;
    Ok(Json(records(page)))
}
