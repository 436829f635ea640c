//! REST face of `/companion-planting`, with recommendations per species.

use salvo::oapi::extract::PathParam;
use salvo::prelude::*;

use super::model::PairKind;
use super::service::Recommendations;
use crate::error::{AppError, ErrorBody};
use crate::http::depot::DepotExt;

crate::catalog_routes!(
    companion_planting,
    PairKind,
    "companion-planting",
    "companion planting",
    "companion pairs"
);

pub fn router() -> Router {
    companion_planting::router().push(
        Router::with_path("species/{key}/recommendations")
            .hoop(crate::http::caller::require_caller)
            .get(companion_recommendations),
    )
}

/// Good neighbours (best score first) and neighbours to avoid.
#[endpoint(tags("companion planting"), security(["bearer" = []]), operation_id = "companion_recommendations",
    responses(
        (status_code = 200, description = "the recommendations", body = Recommendations),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown species", body = ErrorBody),
    ))]
pub async fn companion_recommendations(
    key: PathParam<String>,
    depot: &mut Depot,
) -> Result<Json<Recommendations>, AppError> {
    let state = depot.app_state()?;
    Ok(Json(super::service::recommendations(&state, &key).await?))
}
