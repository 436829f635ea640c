//! REST face of `/glossary` (`q` searches labels and aliases in German and English).

use salvo::prelude::*;

use super::model::TermKind;

crate::catalog_routes!(glossary, TermKind, "glossary", "glossary", "glossary terms");

pub fn router() -> Router {
    glossary::router()
}
