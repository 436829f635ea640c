//! Plant instances: where they stand, what they grow in, which phase they are in.

pub mod catalog;
pub mod model;
pub mod places;
pub mod repo;
pub mod routes;
pub mod service;
