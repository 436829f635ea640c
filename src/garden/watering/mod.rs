//! Watering and feeding events (domain 1.13) with the runoff analysis of domain 2.13, and a
//! plant's diagnostics (last feedings, EC/pH series, runoff trend, plan targets vs measured).

pub mod model;
pub mod repo;
pub mod routes;
pub mod service;
