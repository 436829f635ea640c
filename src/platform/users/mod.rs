//! The caller's own account (`/users/me`): profile and password change. The user record
//! and its SQL are `directory::users`.

pub mod routes;
pub mod service;
