//! REST face of `/starter-kits`.

use salvo::prelude::*;

use super::model::KitKind;

crate::catalog_routes!(
    starter_kits,
    KitKind,
    "starter-kits",
    "starter kits",
    "starter kits"
);

pub fn router() -> Router {
    starter_kits::router()
}
