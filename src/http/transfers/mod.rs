//! The REST face of garden export and import (`GET /t/{slug}/export`, `POST /tenants/import`)
//! over the CLI's own transfer code in `tenancy::transfer`, with the audit rows of the tool-call
//! audit log (`state::audit`).

pub mod routes;
pub mod service;
