//! REST face of `/ipm/…`.

use salvo::prelude::*;

use super::model::{DiseaseKind, PestKind, TreatmentKind};
use crate::error::{AppError, ErrorBody};
use crate::rules::resistance::{self, GroupRule};

crate::catalog_routes!(pests, PestKind, "pests", "ipm", "pests");
crate::catalog_routes!(diseases, DiseaseKind, "diseases", "ipm", "diseases");
crate::catalog_routes!(treatments, TreatmentKind, "treatments", "ipm", "treatments");

pub fn router() -> Router {
    Router::with_path("ipm")
        .push(pests::router())
        .push(diseases::router())
        .push(treatments::router())
        .push(
            Router::with_path("resistance-groups")
                .hoop(crate::http::caller::require_caller)
                .get(list_resistance_groups),
        )
}

/// The resistance rule's table: every row, in order.
#[derive(Debug, serde::Serialize, salvo::oapi::ToSchema)]
pub struct ResistanceGroups {
    /// Group (or family of groups) → risk, how it is counted, limit, window, source. A
    /// treatment's group takes the first row that names it; a group no row names, and an
    /// active ingredient without a group, take the last (the precautionary default).
    pub items: Vec<GroupRule>,
}

/// How often one mode of action may be applied to a plant: FRAC multi-site (M01–M12) and
/// multi-mode biological (BM01–BM02) groups are outside the count (never counted, warned or
/// refused); FRAC 3, 11 and 17 have a published limit per season (counted over the 365 days up
/// to the application, the lower count where two sources differ); every other group (all IRAC
/// groups, FRAC 9 and 12) and an active ingredient without a group take the precautionary
/// default of 3 in 90 days, labelled as a default. The application that reaches the limit is
/// refused with `RESISTANCE_WARNING` unless `acknowledge_resistance` is set; the one before
/// it is accepted with a warning. Refusals and warnings name the group, the limit and the
/// source.
#[endpoint(tags("ipm"), security(["bearer" = []]), operation_id = "list_resistance_groups",
    responses(
        (status_code = 200, description = "the table", body = ResistanceGroups),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
    ))]
pub async fn list_resistance_groups() -> Result<Json<ResistanceGroups>, AppError> {
    Ok(Json(ResistanceGroups {
        items: resistance::GROUP_RULES.to_vec(),
    }))
}
