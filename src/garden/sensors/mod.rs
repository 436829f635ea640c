//! Sensors: garden records that measure one metric at one place, and their readings (raw by
//! month partition, hourly roll-ups for good).

pub mod model;
pub mod repo;
pub mod routes;
pub mod service;
