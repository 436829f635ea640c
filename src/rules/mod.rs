//! Pure domain rules: no I/O, table-driven unit tests beside each.

pub mod lockout;
pub mod names;
pub mod sequence_selection;
pub mod zones;
