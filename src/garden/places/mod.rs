//! Places: locations as a tree under a site, slots inside a location with capacity and
//! adjacency, and the placement contract the plants capability calls.

pub mod model;
pub mod repo;
pub mod routes;
pub mod service;
