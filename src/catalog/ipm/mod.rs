//! Pests, diseases and treatments: `/ipm/pests`, `/ipm/diseases`, `/ipm/treatments`.

pub mod model;
pub mod routes;
