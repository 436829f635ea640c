//! Companion planting (`/companion-planting`): compatible and incompatible species pairs.

pub mod model;
pub mod routes;
pub mod service;
