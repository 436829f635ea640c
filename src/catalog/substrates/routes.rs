//! REST face of `/substrates` (global substrates; platform admins write).

use salvo::prelude::*;

use super::model::SubstrateKind;

crate::catalog_routes!(
    substrates,
    SubstrateKind,
    "substrates",
    "substrates",
    "global substrates"
);

pub fn router() -> Router {
    substrates::router()
}
