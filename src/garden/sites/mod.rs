//! Sites: the roots of a garden's places.

pub mod model;
pub mod repo;
pub mod routes;
pub mod service;
