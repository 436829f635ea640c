//! Pure domain rules: no I/O, table-driven unit tests beside each.

pub mod calculations;
pub mod client_ip;
pub mod companion;
pub mod lockout;
pub mod mail;
pub mod mixing_protocol;
pub mod names;
pub mod phase_transition;
pub mod plan_coverage;
pub mod rotation;
pub mod run_status;
pub mod runoff;
pub mod sequence_selection;
pub mod substrate_mix;
pub mod substrate_reuse;
pub mod zones;
