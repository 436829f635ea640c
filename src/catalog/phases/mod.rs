//! Phase definitions (`/phases`), phase sequences with ordered entries (`/phase-sequences`),
//! and the flat view of every sequence's entries (`/growth-phases`).

pub mod model;
pub mod routes;
pub mod service;
