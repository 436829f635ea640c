//! REST face of `/botanical-families`.

use salvo::oapi::extract::PathParam;
use salvo::prelude::*;

use super::model::{FAMILY, FamilyKind};
use crate::catalog::engine::routes::{ListQuery, Record, records};
use crate::catalog::engine::service;
use crate::catalog::species::model::{SPECIES, SpeciesKind};
use crate::error::{AppError, ErrorBody};
use crate::http::depot::DepotExt;
use crate::http::pagination::Page;

crate::catalog_routes!(
    families,
    FamilyKind,
    "botanical-families",
    "botanical families",
    "botanical families"
);

pub fn router() -> Router {
    families::router().push(
        Router::with_path("{key}/species")
            .hoop(crate::http::caller::require_caller)
            .get(list_family_species),
    )
}

/// The species of a family (the species filters apply).
#[endpoint(tags("botanical families"), security(["bearer" = []]), operation_id = "list_family_species",
    responses(
        (status_code = 200, description = "one page of species", body = Page<Record<SpeciesKind>>),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown family", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: a query parameter is out of range", body = ErrorBody),
    ))]
pub async fn list_family_species(
    key: PathParam<String>,
    query: ListQuery<SpeciesKind>,
    depot: &mut Depot,
) -> Result<Json<Page<Record<SpeciesKind>>>, AppError> {
    let state = depot.app_state()?;
    let page = service::list_under(
        &state,
        (&FAMILY, &key),
        &SPECIES,
        "family_key",
        &query.params,
        query.page,
    )
    .await?;
    Ok(Json(records(page)))
}
