//! Credential primitives that know nothing of accounts: random secrets and their SHA-256
//! hashes compared in constant time, the argon2 pool (off the async workers), and the JWT
//! signing keys. `auth` builds identity on them (and re-exports them under its own name).

pub mod jwt;
pub mod password;
pub mod secrets;
