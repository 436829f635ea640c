//! Accounts: the user record, the caller's own profile and password change.

pub mod model;
pub mod repo;
pub mod routes;
pub mod service;
