//! The plant diary: entries about a plant, a planting run or the garden (`/t/{slug}/diary-entries`),
//! and the analysis queue (the author marks an entry with consent; an agent of the tool server
//! claims it under a lease and submits a result carrying the server's disclaimer).

pub mod filter;
pub mod model;
pub mod repo;
pub mod routes;
pub mod service;
