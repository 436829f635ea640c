//! CSV import of master data (`/imports`, platform admin): upload a CSV in the seed files'
//! columns, get a preview with row-level errors, confirm. Rows are upserted by normalised
//! name in one transaction; a file with any bad row writes nothing.

pub mod csv;
pub mod model;
pub mod repo;
pub mod routes;
pub mod service;
