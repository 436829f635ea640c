//! Knowledge search (`/knowledge/search`): PostgreSQL full-text search in the German and
//! English configurations over species profiles and care guides, glossary definitions, family,
//! pest, disease and treatment texts. Tenant-independent.

pub mod repo;
pub mod routes;
pub mod service;
