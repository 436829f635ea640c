//! Paging on the REST face: `skip` and `limit` read from the query string (the shapes are
//! [`crate::values::page`]).

use salvo::prelude::*;

use crate::error::AppError;
pub use crate::values::page::{DEFAULT_LIMIT, MAX_SKIP, Page, PageRequest};

impl PageRequest {
    /// Reads `skip` and `limit` from the query string; both errors are reported together.
    pub fn from_request(req: &Request, max_limit: i64) -> Result<Self, AppError> {
        Self::parse(
            req.queries().get("skip").map(String::as_str),
            req.queries().get("limit").map(String::as_str),
            max_limit,
        )
    }
}
