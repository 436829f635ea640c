//! Local accounts: registration, e-mail verification, login, refresh rotation, logout and
//! password reset (`/api/v1/auth/…`, full mode).

pub mod email_tokens;
pub mod mails;
pub mod model;
pub mod routes;
pub mod service;
