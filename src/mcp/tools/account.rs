//! The caller's own view: its gardens and its tool-call history.

use serde_json::json;

use crate::mcp::args::{self, Args};
use crate::mcp::dispatch::visible_tenants;
use crate::mcp::envelope::{ToolError, ToolOutput};
use crate::mcp::registry::{BoundTenant, Ctx, Permission, Scope, Tool};
use crate::state::audit;
use crate::tool_handler;

pub static LIST_TENANTS: Tool = Tool {
    name: "list_tenants",
    title: "List gardens",
    description: "The gardens (tenants) this key can address, with the role held in each and the \
                  tool permissions that role grants. Pass a slug as `tenant` to other tools.",
    permission: Permission::Read,
    scope: Scope::Global,
    args: &[],
    rules: &[],
    run: tool_handler!(list_tenants),
};

async fn list_tenants(ctx: &Ctx<'_>, _args: Args) -> Result<ToolOutput, ToolError> {
    let tenants = visible_tenants(ctx.state, ctx.principal).await?;
    let items: Vec<_> = tenants.iter().map(BoundTenant::listing).collect();
    let summary = match items.len() {
        1 => "This key covers 1 garden.".to_owned(),
        n => format!("This key covers {n} gardens."),
    };
    Ok(
        ToolOutput::new(summary, json!({ "items": items, "total": items.len() }))
            .link_api("/api/v1/tenants/"),
    )
}

pub static GET_MCP_ACTIVITY: Tool = Tool {
    name: "get_mcp_activity",
    title: "My tool-call history",
    description: "Your own recent tool calls, newest first: tool, garden, status (ok, error, \
                  denied, dry_run, replay), error class, argument hash, response size and \
                  duration. Kept 90 days. Arguments themselves are never stored.",
    permission: Permission::Read,
    scope: Scope::Global,
    args: &[args::offset(), args::limit(50, 200)],
    rules: &[],
    run: tool_handler!(get_mcp_activity),
};

async fn get_mcp_activity(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let (items, total) = audit::activity(
        ctx.state.platform_pool(),
        ctx.principal.user_id,
        ctx.principal.tenant_scope(),
        args.offset(),
        args.limit(),
    )
    .await
    .map_err(crate::error::AppError::from)?;
    let summary = format!(
        "{} of {total} recorded tool calls (newest first).",
        items.len()
    );
    Ok(ToolOutput::new(
        summary,
        json!({ "items": items, "total": total, "offset": args.offset(), "limit": args.limit() }),
    )
    .link_api("/api/v1/users/me/mcp-activity"))
}
