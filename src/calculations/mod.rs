//! Calculations (`/api/v1/calculations/…`, global: any authenticated caller, general rate
//! limit): VPD, GDD, DLI, EC temperature correction, RO + tap water mix, slot capacity, runoff
//! analysis and the mixing protocol. The arithmetic lives in `rules::{calculations, runoff,
//! mixing_protocol}`; this folder reads and checks the bodies and, for the mixing protocol,
//! resolves the products (`service`), which the MCP tool `calculate_mixing_protocol` shares.

pub mod model;
pub mod routes;
pub mod service;
