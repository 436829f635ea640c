//! Species and their cultivars: `/species`, `/cultivars`, `/species/{key}/cultivars`, and the
//! phase sequence a species runs on (`/species/{key}/phase-sequence`).

pub mod model;
pub mod routes;
pub mod service;
