//! The tool registry: every tool as one static record (name, permission, scope, argument
//! table, handler). Tools register in `tools::ALL`.

use std::future::Future;
use std::pin::Pin;

use serde_json::{Value, json};

use super::args::{self, Arg, ArgRule, Args};
use super::envelope::{ToolError, ToolOutput, output_schema};
use crate::auth::principal::Principal;
use crate::directory::Role;
use crate::state::AppState;
use crate::tenancy::registry::TenantRecord;

/// The permission a tool needs in the addressed tenant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Permission {
    Read,
    Write,
    Setup,
}

impl Permission {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Read => "mcp.read",
            Self::Write => "mcp.write",
            Self::Setup => "mcp.setup",
        }
    }

    /// Whether a role grants it (the specification's table: viewer read, grower + write,
    /// admin + setup).
    pub fn granted_to(self, role: Role) -> bool {
        role.mcp_permissions().contains(&self.as_str())
    }
}

/// Where a tool's data lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Garden data: the call binds exactly one tenant (`tenant`, or the only membership).
    Tenant,
    /// Shared master data or the caller's own records: `tenant` is optional; when given it
    /// binds like a garden tool, otherwise the strongest role the caller holds in any of its
    /// gardens decides.
    Global,
    /// Writes to shared master data, which every garden sees: the role that decides is the
    /// caller's role in the platform garden (its admins administer the catalogue), so a
    /// garden's admin cannot change what other gardens run on.
    Platform,
}

/// The tenant a call is bound to, with the caller's role there.
#[derive(Debug, Clone)]
pub struct BoundTenant {
    pub record: TenantRecord,
    pub role: Role,
}

impl BoundTenant {
    /// How a garden is shown to a tool-server caller (`list_tenants`, `GET /mcp/tools`).
    pub fn listing(&self) -> Value {
        json!({
            "tenant_key": self.record.id,
            "slug": self.record.slug.as_str(),
            "name": self.record.name,
            "role": self.role.as_str(),
            "mcp_permissions": self.role.mcp_permissions(),
        })
    }
}

/// Everything a handler may use.
pub struct Ctx<'a> {
    pub state: &'a AppState,
    pub principal: &'a Principal,
    pub tenant: Option<BoundTenant>,
    /// Write tools: compute and validate, write nothing.
    pub dry_run: bool,
}

pub type ToolFuture<'a> = Pin<Box<dyn Future<Output = Result<ToolOutput, ToolError>> + Send + 'a>>;
pub type Handler = for<'a> fn(&'a Ctx<'a>, Args) -> ToolFuture<'a>;

pub struct Tool {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    pub permission: Permission,
    pub scope: Scope,
    /// The tool's own arguments (`tenant`, `dry_run`, `idempotency_key` are added).
    pub args: &'static [Arg],
    /// Rules across the arguments (either/or, pairs).
    pub rules: &'static [ArgRule],
    pub run: Handler,
}

impl Tool {
    /// Write and setup tools take `dry_run` and `idempotency_key`.
    pub fn writes(&self) -> bool {
        self.permission != Permission::Read
    }

    /// The full argument table.
    pub fn all_args(&self) -> impl Iterator<Item = &Arg> + Clone {
        let extra: &'static [Arg] = if self.writes() {
            &[args::TENANT, args::DRY_RUN, args::IDEMPOTENCY_KEY]
        } else {
            &[args::TENANT]
        };
        self.args.iter().chain(extra.iter())
    }

    /// The `tools/list` entry. `modern`: the revision knows `title` and `outputSchema`.
    pub fn listing(&self, modern: bool) -> Value {
        let mut entry = json!({
            "name": self.name,
            "description": self.description,
            "inputSchema": args::input_schema(self.all_args(), self.rules),
            "annotations": {
                "readOnlyHint": !self.writes(),
                "destructiveHint": false,
                "idempotentHint": !self.writes(),
                "openWorldHint": false,
            },
        });
        if modern {
            entry["title"] = json!(self.title);
            entry["outputSchema"] = output_schema();
        }
        entry
    }
}

/// A tool's handler from an `async fn(&Ctx, Args) -> Result<ToolOutput, ToolError>`.
#[macro_export]
macro_rules! tool_handler {
    ($f:path) => {{
        fn run<'a>(
            ctx: &'a $crate::mcp::registry::Ctx<'a>,
            args: $crate::mcp::args::Args,
        ) -> $crate::mcp::registry::ToolFuture<'a> {
            Box::pin($f(ctx, args))
        }
        run
    }};
}

/// The tool of a name.
pub fn find(name: &str) -> Option<&'static Tool> {
    super::tools::ALL.iter().copied().find(|t| t.name == name)
}
