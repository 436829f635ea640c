//! Tenants as their members see them (`/api/v1/tenants`): create organisation gardens, list
//! mine, rename, delete, and manage memberships.

pub mod invitations;
pub mod model;
pub mod repo;
pub mod routes;
pub mod service;
