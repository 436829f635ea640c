//! Environment alerts: a reading outside the range of the plant's current phase, a sensor gone
//! silent (and, later, a frost night). The scan opens and resolves them; the list shows them.

pub mod model;
pub mod repo;
pub mod routes;
pub mod scan;
pub mod service;
