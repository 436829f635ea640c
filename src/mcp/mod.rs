//! The in-process Model Context Protocol tool server.
//!
//! Two faces over one dispatcher: JSON-RPC 2.0 over Streamable HTTP (`transport`, with
//! `session`s in Redis) and a plain REST face (`rest`). The dispatcher (`dispatch`) resolves
//! the tenant, checks the tool's permission, handles dry runs and idempotency and writes one
//! `audit` row per call; tools (`tools/`) only call the same services as the REST routes.

pub mod args;
pub mod dispatch;
pub mod envelope;
pub mod idempotency;
pub mod registry;
pub mod routes;
pub mod schemas;
pub mod session;
pub mod stdio_bridge;
pub mod tools;
pub mod transport;
