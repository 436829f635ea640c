//! Memberships: a user's role in a garden, the members of a garden, and the gardens of a user
//! as the user sees them.

pub mod model;
pub mod repo;
