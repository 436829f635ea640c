//! REST face of `/overwintering`.

use salvo::prelude::*;

use super::model::ProfileKind;

crate::catalog_routes!(
    overwintering,
    ProfileKind,
    "overwintering",
    "overwintering",
    "overwintering profiles"
);

pub fn router() -> Router {
    overwintering::router()
}
