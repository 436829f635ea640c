//! The generic catalogue engine: a kind is a static field table ([`spec::KindSpec`]); one
//! validator, one repository, one service and one route template serve every kind.

pub mod fields;
pub mod repo;
pub mod routes;
pub mod service;
pub mod spec;
