//! Planting run tools: the list, over the same service as `GET /t/{slug}/planting-runs`.

use serde_json::Value;

use super::shared::bound;
use super::view::{compact, counted, page, paged};
use crate::garden::runs::service;
use crate::mcp::args::{self, Arg, ArgKind, Args};
use crate::mcp::envelope::{ToolError, ToolOutput};
use crate::mcp::registry::{Ctx, Permission, Scope, Tool};
use crate::rules::run_status::RunStatus;
use crate::tool_handler;

pub static LIST_PLANTING_RUNS: Tool = Tool {
    name: "list_planting_runs",
    title: "List planting runs",
    description: "The garden's planting runs (plants grown together), oldest first: run key, \
                  name, type, status (planned, active, harvesting, completed, cancelled), \
                  location, planned quantity, start and completion timestamps, plant count. \
                  Filter by status; page with offset and limit.",
    permission: Permission::Read,
    scope: Scope::Tenant,
    args: &[
        Arg::optional(
            "status",
            ArgKind::Choice {
                values: &["planned", "active", "harvesting", "completed", "cancelled"],
                default: None,
            },
            "Only runs in this status.",
        ),
        args::offset(),
        args::limit(25, 100),
    ],
    rules: &[],
    run: tool_handler!(list_planting_runs),
};

async fn list_planting_runs(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let t = bound(ctx)?;
    let page = page(&args);
    let status = args.text("status").and_then(RunStatus::parse);
    let listed = service::list_runs(ctx.state, t, status, page).await?;
    let items: Vec<Value> = listed
        .items
        .iter()
        .map(|r| {
            let mut v = serde_json::to_value(r).unwrap_or(Value::Null);
            if let Some(m) = v.as_object_mut()
                && let Some(k) = m.remove("key")
            {
                m.insert("run_key".into(), k);
            }
            compact(v, &["status"])
        })
        .collect();
    let summary = format!("{}.", counted(items.len(), listed.total, "planting run(s)"));
    Ok(ToolOutput::new(summary, paged(items, listed.total, page))
        .link_api(format!("/api/v1/t/{}/planting-runs/", t.slug))
        .link_ui(format!("/t/{}/planting-runs", t.slug)))
}
