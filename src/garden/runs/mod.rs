//! Planting runs: plants grown together, with the states of domain 2.6.

pub mod model;
pub mod repo;
pub mod routes;
pub mod service;
