//! Tanks (domain 1.10): capacity, kind, location, fills and refills, the maintenance log with
//! due dates, and the current state (volume, EC, pH, age of the solution).

pub mod model;
pub mod repo;
pub mod routes;
pub mod service;
