//! Query-string readers shared by the REST routes: each refuses a malformed value with a 422
//! naming `query.<name>`, never reads it as "no filter".

use salvo::Request;
use time::Date;

use crate::error::{AppError, ErrorDetail};

/// An optional date `YYYY-MM-DD`.
pub fn date_query(req: &Request, name: &str) -> Result<Option<Date>, AppError> {
    let fmt = time::macros::format_description!("[year]-[month]-[day]");
    match req.queries().get(name) {
        None => Ok(None),
        Some(raw) => Date::parse(raw, &fmt).map(Some).map_err(|_| {
            AppError::validation(vec![ErrorDetail::new(
                format!("query.{name}"),
                "must be a date (YYYY-MM-DD)",
                "value_error",
            )])
        }),
    }
}
