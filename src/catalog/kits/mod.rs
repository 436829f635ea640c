//! Starter kits (`/starter-kits`): curated species sets for a first garden.

pub mod model;
pub mod routes;
