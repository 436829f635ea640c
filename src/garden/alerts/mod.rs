//! Environment alerts: a reading outside the range of the plant's current phase, a sensor gone
//! silent, a frost night. The scan opens and resolves the first two, the weather poll
//! (`garden::weather`) the frost alerts; the list shows them.

pub mod model;
pub mod repo;
pub mod routes;
pub mod scan;
pub mod service;
