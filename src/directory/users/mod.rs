//! The user record: e-mail, display name, account type, login state, the profile and
//! password forms, and its SQL.

pub mod model;
pub mod repo;
