//! Tenant data, one folder per capability; each reaches its tables only through `TenantTx`.

pub mod fields;
pub mod places;
pub mod plants;
pub mod runs;
pub mod sites;
pub mod statements;
pub mod substrates;
