//! Tenant data, one folder per capability; each reaches its tables only through `TenantTx`.

pub mod plants;
pub mod runs;
pub mod sites;
pub mod statements;
