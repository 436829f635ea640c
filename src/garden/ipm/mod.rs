//! Pest and disease management: inspections, treatment applications, the safety intervals and
//! the resistance rule (`/t/{slug}/ipm/...`).

pub mod input;
pub mod model;
pub mod repo;
pub mod routes;
pub mod service;
