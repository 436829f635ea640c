//! The garden's webhooks, read only: endpoints and their newest deliveries. Creating, changing
//! and deleting webhooks stays with people (REST, a logged-in admin).

use serde_json::{Value, json};

use super::shared::{bound, tool_error};
use crate::auth::Role;
use crate::error::{AppError, ErrorCode};
use crate::garden::webhooks::service;
use crate::mcp::args::{Arg, ArgKind, Args};
use crate::mcp::envelope::{ToolError, ToolOutput};
use crate::mcp::registry::{Ctx, Permission, Scope, Tool};
use crate::tool_handler;

pub static LIST_WEBHOOKS: Tool = Tool {
    name: "list_webhooks",
    title: "Webhooks and deliveries",
    description: "The garden's webhook endpoints (URL, event types, enabled, why the service \
                  disabled one) with each one's newest deliveries (event type, status, \
                  attempts, last response code). Garden admins only; secrets are never shown. \
                  Creating or changing webhooks is for people in the app.",
    permission: Permission::Read,
    scope: Scope::Tenant,
    args: &[Arg::optional(
        "limit",
        ArgKind::Int {
            min: 1,
            max: 20,
            default: Some(5),
        },
        "Deliveries shown per webhook (default 5, at most 20).",
    )],
    rules: &[],
    run: tool_handler!(list_webhooks),
};

async fn list_webhooks(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let tenant = bound(ctx)?;
    if ctx.tenant.as_ref().is_none_or(|t| t.role < Role::Admin) {
        return Err(tool_error(AppError::new(
            ErrorCode::Forbidden,
            "webhooks are shown to the garden's admins only",
        )));
    }
    let per = args.int("limit").unwrap_or(5);
    let found = service::overview(ctx.state, tenant, per)
        .await
        .map_err(tool_error)?;
    let failing = found.iter().filter(|(w, _)| !w.enabled).count();
    let items: Vec<Value> = found
        .iter()
        .map(|(w, d)| {
            json!({
                "webhook_key": w.key,
                "url": w.url,
                "events": w.events,
                "description": w.description,
                "enabled": w.enabled,
                "disabled_reason": w.disabled_reason,
                "recent_deliveries": d.items.iter().map(|x| json!({
                    "delivery_key": x.key,
                    "message_id": x.message_id,
                    "event_type": x.event_type,
                    "status": x.status,
                    "attempts": x.attempts,
                    "last_status_code": x.last_status_code,
                    "created_at": x.created_at.unix_timestamp(),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let slug = tenant.slug.as_str();
    Ok(ToolOutput::new(
        format!("{} webhook(s), {failing} disabled.", items.len()),
        json!({"items": items, "count": items.len()}),
    )
    .link_api(format!("/api/v1/t/{slug}/webhooks")))
}
