//! Schema-per-tenant: names, the registry, provisioning, migrations, resolution, `TenantTx`,
//! and copying a garden whole (export, import, move between servers).

pub mod cached;
pub mod citus;
pub mod context;
pub mod garden_files;
pub mod migrate;
pub mod names;
pub mod provision;
pub mod reaper;
pub mod registry;
pub mod transfer;
pub mod tx;

pub use names::{SchemaName, TenantSlug};
pub use registry::{TenantKind, TenantRecord, TenantStatus};
pub use tx::TenantTx;
