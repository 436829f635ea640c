//! Connections to the outside: PostgreSQL pools per placement, and the Redis pool.

pub mod pg;
pub mod redis;
