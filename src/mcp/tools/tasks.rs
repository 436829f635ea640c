//! Task tools: the list, over the same service as `GET /t/{slug}/tasks`.

use serde_json::Value;

use super::shared::{bound, tool_error};
use super::view::{compact, counted, page, paged};
use crate::garden::tasks::model::TaskFilter;
use crate::garden::tasks::service;
use crate::mcp::args::{self, Arg, ArgKind, Args};
use crate::mcp::envelope::{ToolError, ToolOutput};
use crate::mcp::registry::{Ctx, Permission, Scope, Tool};
use crate::rules::task_status::TaskStatus;
use crate::tool_handler;

pub static LIST_TASKS: Tool = Tool {
    name: "list_tasks",
    title: "List tasks",
    description: "The garden's tasks by due date (undated last): task key, name, category, \
                  priority, status (pending, in_progress, completed, skipped, failed, dormant), \
                  plant, due date, assignee, checklist, recurrence and the actions allowed now. \
                  Filter by status; page with offset and limit.",
    permission: Permission::Read,
    scope: Scope::Tenant,
    args: &[
        Arg::optional(
            "status",
            ArgKind::Choice {
                values: &[
                    "pending",
                    "in_progress",
                    "completed",
                    "skipped",
                    "failed",
                    "dormant",
                ],
                default: None,
            },
            "Only tasks in this status.",
        ),
        args::offset(),
        args::limit(25, 100),
    ],
    rules: &[],
    run: tool_handler!(list_tasks),
};

async fn list_tasks(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let t = bound(ctx)?;
    let page = page(&args);
    let filter = TaskFilter {
        status: args.text("status").and_then(TaskStatus::parse),
        ..TaskFilter::default()
    };
    let listed = service::list_tasks(ctx.state, t, &filter, page)
        .await
        .map_err(tool_error)?;
    let items: Vec<Value> = listed
        .items
        .iter()
        .map(|task| {
            let mut v = serde_json::to_value(task).unwrap_or(Value::Null);
            if let Some(m) = v.as_object_mut() {
                if let Some(k) = m.remove("key") {
                    m.insert("task_key".into(), k);
                }
                m.remove("created_at");
                m.remove("updated_at");
            }
            compact(v, &["status", "due_on"])
        })
        .collect();
    let summary = format!("{}.", counted(items.len(), listed.total, "task(s)"));
    Ok(ToolOutput::new(summary, paged(items, listed.total, page))
        .link_api(format!("/api/v1/t/{}/tasks", t.slug))
        .link_ui(format!("/t/{}/tasks", t.slug)))
}
