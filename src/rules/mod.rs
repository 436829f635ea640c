//! Pure domain rules: no I/O, table-driven unit tests beside each.

pub mod client_ip;
pub mod lockout;
pub mod mail;
