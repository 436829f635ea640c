//! Schema-per-tenant: names, the registry, provisioning, migrations, resolution and `TenantTx`.

pub mod context;
pub mod migrate;
pub mod names;
pub mod provision;
pub mod reaper;
pub mod registry;
pub mod tx;

pub use context::TenantCtx;
pub use names::{SchemaName, TenantSlug};
pub use registry::{TenantKind, TenantRecord, TenantStatus};
pub use tx::TenantTx;
