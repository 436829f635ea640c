//! Dates on the wire: `YYYY-MM-DD`, for serde (`#[serde(with = "crate::values::dates::iso_date")]`).

time::serde::format_description!(pub iso_date, Date, "[year]-[month]-[day]");
