//! REST face of `/ipm/…`.

use salvo::prelude::*;

use super::model::{DiseaseKind, PestKind, TreatmentKind};

crate::catalog_routes!(pests, PestKind, "pests", "ipm", "pests");
crate::catalog_routes!(diseases, DiseaseKind, "diseases", "ipm", "diseases");
crate::catalog_routes!(treatments, TreatmentKind, "treatments", "ipm", "treatments");

pub fn router() -> Router {
    Router::with_path("ipm")
        .push(pests::router())
        .push(diseases::router())
        .push(treatments::router())
}
