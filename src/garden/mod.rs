//! Tenant data, one folder per capability; each reaches its tables only through `TenantTx`.

pub mod fields;
pub mod places;
pub mod sites;
pub mod substrates;
