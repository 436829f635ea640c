//! The glossary (`/glossary`): terms in German and English, searchable.

pub mod model;
pub mod routes;
