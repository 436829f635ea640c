//! Platform administration under `/api/v1/admin` (admins of the platform tenant only).

pub mod routes;
pub mod service;
