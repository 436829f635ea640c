//! A whole garden as one file: export (schema rows, members, photo files) and import into a
//! new garden, over the file format, table catalogue and connections of `tenancy::transfer`.
//! It sits with the garden because an import queues the photos' renditions and restores the
//! members with their roles.

pub mod export;
pub mod import;
