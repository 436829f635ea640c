//! Cross-cutting HTTP for the REST face: hoops every response passes through, JSON bodies,
//! pagination, query readers, roles, rate limits. The routers are assembled above, in `app`.

pub mod audited;
pub mod caller;
pub mod compression;
pub mod cors;
pub mod depot;
pub mod headers;
pub mod health;
pub mod json;
pub mod metrics;
pub mod observe;
pub mod pagination;
pub mod personal_data;
pub mod query;
pub mod rate_limit;
pub mod roles;
pub mod tenant;
pub mod transfers;
