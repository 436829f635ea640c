//! REST face of `/fertilizers` (global fertilisers; platform admins write).

use salvo::prelude::*;

use super::model::FertilizerKind;

crate::catalog_routes!(
    fertilizers,
    FertilizerKind,
    "fertilizers",
    "fertilizers",
    "global fertilisers"
);

pub fn router() -> Router {
    fertilizers::router()
}
