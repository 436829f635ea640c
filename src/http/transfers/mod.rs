//! The REST face of garden export and import (`GET /t/{slug}/export`, `POST /tenants/import`)
//! over the CLI's own transfer code in `tenancy::transfer`. It lives with the faces because it
//! writes the audit rows of the tool-call audit log (`mcp::audit`), which the layers below may
//! not reach.

pub mod routes;
pub mod service;
