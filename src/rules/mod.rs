//! Pure domain rules: no I/O, table-driven unit tests beside each.

pub mod calculations;
pub mod care;
pub mod client_ip;
pub mod companion;
pub mod feeding_diagnostics;
pub mod harvest;
pub mod hst;
pub mod ical;
pub mod karenz;
pub mod lockout;
pub mod mail;
pub mod mixing_protocol;
pub mod names;
pub mod phase_transition;
pub mod plan_coverage;
pub mod resistance;
pub mod rotation;
pub mod run_status;
pub mod runoff;
pub mod sequence_selection;
pub mod sowing;
pub mod substrate_mix;
pub mod substrate_reuse;
pub mod tank_maintenance;
pub mod task_status;
pub mod zones;
