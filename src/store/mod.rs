//! Connections to the outside: PostgreSQL pools per placement (and their read pools), the Redis pool, and the rate
//! limiter kept in Redis.

pub mod pg;
pub mod photos;
pub mod rate_lease;
pub mod rate_limit;
pub mod read_pool;
pub mod redis;
