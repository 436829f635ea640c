//! Hardiness zones 1a–13b (`/hardiness-zones`): computed limits with curated texts.

pub mod model;
pub mod routes;
pub mod service;
