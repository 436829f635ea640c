//! Service accounts: API-key-only machine accounts (for tool-server clients) with a role in a
//! garden. One service serves the garden admins' REST routes (`/t/{slug}/service-accounts`)
//! and the operator CLI (`kultiva service-account …`).

pub mod model;
pub mod repo;
pub mod routes;
pub mod service;
