//! Nutrient plans (`/t/{slug}/nutrient-plans`, domain 1.12 and 2.16): global templates and the
//! garden's own plans, cloning, phase targets, assignment to plants and runs, the plan that
//! applies to a plant now, and coverage against the species' phase sequence.

pub mod model;
pub mod repo;
pub mod routes;
pub mod service;
