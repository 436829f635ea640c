//! Photos of diary entries: upload, storage, renditions (512 px and 1280 px WebP, no EXIF)
//! made off the request path, and delivery.
//!
//! `repo::descriptors_for_entries` is the contract the diary room reads (fixed before both
//! were built side by side): what a diary read shows of an entry's photos.

pub mod cleanup;
pub mod gate;
pub mod media;
pub mod model;
pub mod repo;
pub mod routes;
pub mod service;
pub mod worker;
