//! Value shapes every layer shares and that know nothing of HTTP, storage or tenants: JSON
//! objects read field by field ([`json`]), pages of lists ([`page`]) and dates on the wire
//! ([`dates`]). The faces add their transport on top (`http::json`, `http::pagination`).

pub mod dates;
pub mod json;
pub mod page;
