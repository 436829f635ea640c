//! Query-string readers shared by the REST routes: each refuses a malformed value with a 422
//! naming `query.<name>`, never reads it as "no filter".

use salvo::Request;
use time::Date;
use uuid::Uuid;

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

/// A UUID query parameter (`None` when absent; 422 naming `query.<name>` when malformed).
pub fn uuid_query(req: &Request, name: &str) -> Result<Option<Uuid>, AppError> {
    match req.queries().get(name) {
        None => Ok(None),
        Some(raw) => crate::garden::plants::model::parse_key(raw)
            .map(Some)
            .ok_or_else(|| {
                AppError::validation(vec![ErrorDetail::new(
                    format!("query.{name}"),
                    "must be a key (UUID)",
                    "value_error",
                )])
            }),
    }
}
