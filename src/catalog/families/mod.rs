//! Botanical families: `/botanical-families`, and the species of a family.

pub mod model;
pub mod routes;
