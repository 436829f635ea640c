//! API keys: `svc_` + 32 random bytes, shown once, stored as SHA-256.

pub mod model;
pub mod repo;
pub mod routes;
pub mod service;
