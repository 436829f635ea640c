//! The platform: accounts, tenants and memberships, and platform administration.

pub mod access;
pub mod admin;
pub mod operator;
pub mod personal_data;
pub mod preferences;
pub mod service_accounts;
pub mod tenants;
pub mod users;
