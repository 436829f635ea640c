//! `skip`/`limit` paging. A limit above the endpoint's maximum is a 422, never a silent clamp.
//! Every list answers the same shape: `{items, total, skip, limit}`.

use salvo::oapi::ToSchema;
use serde::Serialize;

use crate::error::{AppError, ErrorDetail};

pub const DEFAULT_LIMIT: i64 = 100;
/// Skips beyond this are refused: deep offsets scan and discard rows.
pub const MAX_SKIP: i64 = 100_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRequest {
    pub skip: i64,
    pub limit: i64,
}

impl PageRequest {
    pub fn parse(
        skip: Option<&str>,
        limit: Option<&str>,
        max_limit: i64,
    ) -> Result<Self, AppError> {
        let mut errors = Vec::new();
        let mut read = |name: &str, raw: Option<&str>, default: i64, min: i64, max: i64| -> i64 {
            let Some(raw) = raw else { return default };
            match raw.trim().parse::<i64>() {
                Ok(v) if (min..=max).contains(&v) => v,
                Ok(_) => {
                    errors.push(ErrorDetail::new(
                        format!("query.{name}"),
                        format!("must be between {min} and {max}"),
                        "value_error",
                    ));
                    default
                }
                Err(_) => {
                    errors.push(ErrorDetail::new(
                        format!("query.{name}"),
                        "must be a whole number",
                        "type_error",
                    ));
                    default
                }
            }
        };
        let skip = read("skip", skip, 0, 0, MAX_SKIP);
        let limit = read("limit", limit, DEFAULT_LIMIT.min(max_limit), 1, max_limit);
        if errors.is_empty() {
            Ok(Self { skip, limit })
        } else {
            Err(AppError::validation(errors))
        }
    }
}

/// One page of a list.
#[derive(Debug, Serialize, ToSchema)]
pub struct Page<T: ToSchema + 'static> {
    pub items: Vec<T>,
    /// Number of items matching the filters, over all pages.
    pub total: i64,
    pub skip: i64,
    pub limit: i64,
}

impl<T: ToSchema + 'static> Page<T> {
    pub fn new(items: Vec<T>, total: i64, page: PageRequest) -> Self {
        Self {
            items,
            total,
            skip: page.skip,
            limit: page.limit,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults() {
        assert_eq!(
            PageRequest::parse(None, None, 200).ok(),
            Some(PageRequest {
                skip: 0,
                limit: 100
            })
        );
        assert_eq!(
            PageRequest::parse(None, None, 50).ok(),
            Some(PageRequest { skip: 0, limit: 50 })
        );
    }

    #[test]
    fn bounds_are_enforced_not_clamped() {
        for (skip, limit, field) in [
            (None, Some("201"), "query.limit"),
            (None, Some("0"), "query.limit"),
            (None, Some("-1"), "query.limit"),
            (None, Some("ten"), "query.limit"),
            (Some("-1"), None, "query.skip"),
            (Some("100001"), None, "query.skip"),
            (Some("1.5"), None, "query.skip"),
        ] {
            let err = PageRequest::parse(skip, limit, 200).expect_err("refused");
            assert_eq!(err.details().len(), 1);
            assert_eq!(err.details()[0].field, field);
        }
        let err = PageRequest::parse(Some("x"), Some("999"), 200).expect_err("both");
        assert_eq!(err.details().len(), 2);
    }

    #[test]
    fn edges_accepted() {
        assert_eq!(
            PageRequest::parse(Some("100000"), Some("200"), 200).ok(),
            Some(PageRequest {
                skip: 100_000,
                limit: 200
            })
        );
        assert_eq!(
            PageRequest::parse(Some("0"), Some("1"), 200).ok(),
            Some(PageRequest { skip: 0, limit: 1 })
        );
    }
}
