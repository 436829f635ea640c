//! The garden's substrates: its own substrates and mixes beside the global catalogue ones, and
//! its batches of substrate with their usage cycles and readings.

pub mod model;
pub mod repo;
pub mod routes;
pub mod service;
