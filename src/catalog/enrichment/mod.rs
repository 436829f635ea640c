//! Enrichment (`/enrichment`, platform admin): named external botanical sources behind one
//! adapter trait, base URLs configurable. An unknown source is 404 `ADAPTER_NOT_FOUND`, an
//! unreachable or failing one 502 `EXTERNAL_SOURCE_ERROR`, an upstream rate limit 429
//! `RATE_LIMIT_EXCEEDED`. Lookups propose; nothing is written to the catalogue.

pub mod adapter;
pub mod gbif;
pub mod routes;
pub mod service;
