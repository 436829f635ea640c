//! What every tool module uses, in one place so that no tool module imports another: the
//! garden a call is bound to, the actor its writes record, key arguments, and service errors
//! and REST body readers in the tools' terms.

use serde_json::{Map, Value, json};

use crate::error::AppError;
use crate::mcp::args::Args;
use crate::mcp::envelope::ToolError;
use crate::mcp::registry::Ctx;
use crate::tenancy::TenantRecord;
use crate::values::json::{FromJson, parse_json};

/// The garden a tenant-scoped call is bound to (the dispatcher always binds one).
pub fn bound<'a>(ctx: &'a Ctx<'_>) -> Result<&'a TenantRecord, ToolError> {
    ctx.tenant
        .as_ref()
        .map(|t| &t.record)
        .ok_or_else(|| ToolError::not_found("tenant"))
}

/// Who a tool's write is recorded as: `mcp:<user>`.
pub fn actor(ctx: &Ctx<'_>) -> String {
    format!("mcp:{}", ctx.principal.user_id)
}

/// A service error as a tool error, with field names as the tool's arguments name them
/// (`components[0].fraction`, not `body.components[0].fraction`).
pub fn tool_error(err: AppError) -> ToolError {
    let mut e = ToolError::from(err);
    if let Some(Value::Array(details)) = e.details.as_mut() {
        for d in details {
            if let Some(f) = d.get("field").and_then(Value::as_str)
                && let Some(rest) = f.strip_prefix("body.")
            {
                d["field"] = json!(rest);
            }
        }
    }
    e
}

/// A key argument that is not a UUID names nothing: `not_found`, as for another garden's key.
pub fn key_arg(args: &Args, name: &str, what: &str) -> Result<(), ToolError> {
    match args.text(name) {
        Some(raw) if uuid::Uuid::parse_str(raw.trim()).is_err() => Err(ToolError::not_found(what)),
        _ => Ok(()),
    }
}

/// Reads the tool's acting arguments with the REST body reader of `T` (same checks, same
/// messages; field names without the `body.` prefix).
pub fn body_of<T: FromJson>(args: &Args, rename: &[(&str, &str)]) -> Result<T, ToolError> {
    let mut map: Map<String, Value> = args.acting();
    for (from, to) in rename {
        if let Some(v) = map.remove(*from) {
            map.insert((*to).to_owned(), v);
        }
    }
    let bytes = serde_json::to_vec(&Value::Object(map)).unwrap_or_default();
    parse_json::<T>(&bytes).map_err(tool_error)
}
