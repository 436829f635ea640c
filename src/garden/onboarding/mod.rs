//! Onboarding (`/t/{slug}/onboarding`): which first steps a garden has done, and applying a
//! starter kit, which creates a site, a location and one plant per species of the kit in one
//! transaction. A garden takes one kit: a second apply is 409 `STATE_CONFLICT`.

pub mod model;
pub mod repo;
pub mod routes;
pub mod service;
