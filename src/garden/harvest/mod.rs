//! Harvest: readiness, observations, batches behind the safety-interval gate, yields
//! (`/t/{slug}/harvest/...`).

pub mod model;
pub mod repo;
pub mod routes;
pub mod service;
