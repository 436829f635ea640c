//! The tool server's HTTP surface under `/api/v1/mcp`: the JSON-RPC endpoint (and its
//! deprecated alias) and the REST face (`/mcp/tools`). A gate answers 404 on every path while
//! `MCP_SERVER_ENABLED` is not `true`; then only API keys pass (a JWT is 401).

use salvo::http::StatusCode;
use salvo::http::header::HeaderValue;
use salvo::oapi::extract::PathParam;
use salvo::prelude::*;
use serde_json::{Value, json};

use super::dispatch;
use super::envelope::{ToolError, ToolErrorCode};
use super::registry::BoundTenant;
use super::schemas::{JsonRpcError, McpRefusal, ToolErrorRecord};
use super::transport;
use crate::auth::principal::{Credential, Principal};
use crate::error::{AppError, ErrorBody, ErrorCode, now_rfc3339};
use crate::http::depot::DepotExt;
use crate::http::pagination::{Page, PageRequest};
use crate::state::AppState;
use crate::state::audit::Activity;

pub fn router() -> Router {
    Router::with_path("mcp")
        .hoop(gate)
        .hoop(crate::http::caller::require_caller)
        .hoop(api_keys_only)
        .get(mcp_get)
        .post(mcp_post)
        .delete(mcp_delete)
        .push(Router::with_path("rpc").post(mcp_rpc))
        .push(
            Router::with_path("tools")
                .get(list_tools)
                .push(Router::with_path("{tool_name}").post(call_tool)),
        )
}

/// `GET /api/v1/users/me/mcp-activity`: the caller's own tool calls (any credential: a grower
/// in the browser sees what its keys did).
pub fn activity_router() -> Router {
    Router::with_path("users/me/mcp-activity")
        .hoop(crate::http::caller::require_caller)
        .get(my_mcp_activity)
}

/// Your own tool-server calls, newest first (90 days kept; arguments only as SHA-256). A key
/// limited to one garden sees only that garden's calls.
#[endpoint(tags("mcp"), operation_id = "my_mcp_activity", security(["bearer" = []]),
    parameters(
        ("skip" = Option<i64>, Query, minimum = 0, maximum = 100000, description = "items to skip (default 0)"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 200, description = "page size (default 100)"),
    ),
    responses(
        (status_code = 200, description = "one page of your audited tool calls", body = Page<Activity>),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: skip or limit out of range", body = ErrorBody),
    ))]
pub async fn my_mcp_activity(
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Page<Activity>>, AppError> {
    let (state, principal) = caller(depot)?;
    let page = PageRequest::from_request(req, ACTIVITY_MAX_LIMIT)?;
    let (items, total) = crate::state::audit::activity(
        state.platform_pool(),
        principal.user_id,
        principal.tenant_scope(),
        page.skip,
        page.limit,
    )
    .await?;
    Ok(Json(Page::new(items, total, page)))
}

pub const ACTIVITY_MAX_LIMIT: i64 = 200;

/// 404 for every `/mcp` path unless the tool server is enabled (before any credential check:
/// a disabled server looks like no server).
#[handler]
async fn gate(req: &mut Request, depot: &mut Depot, res: &mut Response, ctrl: &mut FlowCtrl) {
    let enabled = depot
        .app_state()
        .map(|s| s.config().mcp_server_enabled)
        .unwrap_or(false);
    if !enabled {
        AppError::new(ErrorCode::EntityNotFound, "not found").halt(req, res, ctrl);
    }
}

/// The gate for `/mcp` requests no route serves (another method such as `GET /mcp/tools/x`
/// or `PUT /mcp`, an unknown sub-path). Router hoops never run for those: salvo answers them
/// itself, with 405 and an `Allow` header that would show a disabled server's routes. Mounted
/// as the last service hoop (service hoops run for unrouted requests too) so that these get
/// the gate's 404, with the usual headers and request log.
#[handler]
pub async fn gate_unrouted(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
    ctrl: &mut FlowCtrl,
) {
    let path = req.uri().path();
    if path == "/api/v1/mcp" || path.starts_with("/api/v1/mcp/") {
        gate.handle(req, depot, res, ctrl).await;
    }
}

/// The tool server takes API keys (personal or service account) only.
#[handler]
async fn api_keys_only(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
    ctrl: &mut FlowCtrl,
) {
    let refused = match depot.principal() {
        Ok(p) => matches!(p.credential, Credential::AccessToken),
        Err(_) => true,
    };
    if refused {
        res.headers_mut()
            .insert("www-authenticate", HeaderValue::from_static("Bearer"));
        AppError::new(
            ErrorCode::Unauthorized,
            "the tool server accepts API keys only (X-API-Key or Authorization: Bearer svc_…)",
        )
        .halt(req, res, ctrl);
    }
}

fn caller(depot: &Depot) -> Result<(AppState, Principal), AppError> {
    Ok((depot.app_state()?, depot.principal()?.clone()))
}

/// JSON-RPC 2.0 over Streamable HTTP: `initialize`, `ping`, `tools/list`, `tools/call`.
#[endpoint(tags("mcp"), operation_id = "mcp_post", security(["bearer" = []]),
    responses(
        (status_code = 200, description = "JSON-RPC response (or array for a 2025-03-26 batch); `initialize` answers with header Mcp-Session-Id"),
        (status_code = 202, description = "notification or response accepted"),
        (status_code = 400, description = "parse error, invalid request, missing Mcp-Session-Id, unsupported MCP-Protocol-Version", body = JsonRpcError),
        (status_code = 401, description = "UNAUTHORIZED: no API key, or a JWT", body = ErrorBody),
        (status_code = 403, description = "Origin not allowed", body = JsonRpcError),
        (status_code = 404, description = "tool server disabled (error record), or unknown/expired session (JSON-RPC)", body = McpRefusal),
        (status_code = 406, description = "Accept names none of application/json, application/* and */* (no Accept header accepts anything)", body = JsonRpcError),
        (status_code = 413, description = "body over MAX_BODY_BYTES: the error record when Content-Length says so, else a JSON-RPC error", body = McpRefusal),
        (status_code = 415, description = "Content-Type is not application/json", body = JsonRpcError),
        (status_code = 503, description = "the session store is unavailable; retry later", body = JsonRpcError),
    ))]
pub async fn mcp_post(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<(), AppError> {
    let (state, principal) = caller(depot)?;
    transport::post(&state, &principal, req, res).await;
    Ok(())
}

/// Deprecated alias of `POST /api/v1/mcp`.
#[endpoint(tags("mcp"), operation_id = "mcp_rpc_deprecated", security(["bearer" = []]),
    responses(
        (status_code = 200, description = "as POST /api/v1/mcp; headers Deprecation and Link name the successor"),
        (status_code = 202, description = "notification or response accepted"),
        (status_code = 400, description = "as POST /api/v1/mcp", body = JsonRpcError),
        (status_code = 401, description = "UNAUTHORIZED", body = ErrorBody),
        (status_code = 403, description = "Origin not allowed", body = JsonRpcError),
        (status_code = 404, description = "tool server disabled (error record), or unknown/expired session (JSON-RPC)", body = McpRefusal),
        (status_code = 406, description = "Accept names none of application/json, application/* and */* (no Accept header accepts anything)", body = JsonRpcError),
        (status_code = 413, description = "body over MAX_BODY_BYTES: the error record when Content-Length says so, else a JSON-RPC error", body = McpRefusal),
        (status_code = 415, description = "Content-Type is not application/json", body = JsonRpcError),
        (status_code = 503, description = "the session store is unavailable; retry later", body = JsonRpcError),
    ))]
pub async fn mcp_rpc(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<(), AppError> {
    let (state, principal) = caller(depot)?;
    res.headers_mut()
        .insert("deprecation", HeaderValue::from_static("true"));
    res.headers_mut().insert(
        "link",
        HeaderValue::from_static("</api/v1/mcp>; rel=\"successor-version\""),
    );
    transport::post(&state, &principal, req, res).await;
    Ok(())
}

/// Always 405: no server-initiated stream.
#[endpoint(tags("mcp"), operation_id = "mcp_get", security(["bearer" = []]),
    responses(
        (status_code = 405, description = "no server-initiated messages; Allow: POST, DELETE", body = JsonRpcError),
        (status_code = 401, description = "UNAUTHORIZED", body = ErrorBody),
        (status_code = 404, description = "tool server disabled", body = ErrorBody),
    ))]
pub async fn mcp_get(res: &mut Response) {
    transport::get(res);
}

/// Ends the session named in `Mcp-Session-Id`.
#[endpoint(tags("mcp"), operation_id = "mcp_delete", security(["bearer" = []]),
    responses(
        (status_code = 204, description = "session ended"),
        (status_code = 400, description = "Mcp-Session-Id missing", body = JsonRpcError),
        (status_code = 403, description = "Origin not allowed", body = JsonRpcError),
        (status_code = 401, description = "UNAUTHORIZED", body = ErrorBody),
        (status_code = 404, description = "tool server disabled (error record), or no such session of yours (JSON-RPC)", body = McpRefusal),
        (status_code = 503, description = "the session store is unavailable; retry later", body = JsonRpcError),
    ))]
pub async fn mcp_delete(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<(), AppError> {
    let (state, principal) = caller(depot)?;
    transport::delete(&state, &principal, req, res).await;
    Ok(())
}

/// The tools your key unlocks in at least one garden, and those gardens.
#[endpoint(tags("mcp"), operation_id = "mcp_list_tools", security(["bearer" = []]),
    responses(
        (status_code = 200, description = "{tools: [{name, title, description, permission, input_schema}], tenants: [{slug, name, role, mcp_permissions}]}"),
        (status_code = 401, description = "UNAUTHORIZED", body = ErrorBody),
        (status_code = 404, description = "tool server disabled", body = ErrorBody),
        (status_code = 503, description = "SERVICE_UNAVAILABLE: the tool list could not be read", body = ErrorBody),
    ))]
pub async fn list_tools(depot: &mut Depot, res: &mut Response) -> Result<(), AppError> {
    let (state, principal) = caller(depot)?;
    let (tools, tenants) = dispatch::listed_tools(&state, &principal)
        .await
        .map_err(|e| AppError::new(ErrorCode::ServiceUnavailable, e.message))?;
    let tools: Vec<Value> = tools
        .iter()
        .map(|t| {
            json!({
                "name": t.name,
                "title": t.title,
                "description": t.description,
                "permission": t.permission.as_str(),
                "input_schema": super::args::input_schema(t.all_args(), t.rules),
            })
        })
        .collect();
    let tenants: Vec<Value> = tenants.iter().map(BoundTenant::listing).collect();
    res.render(Json(json!({ "tools": tools, "tenants": tenants })));
    Ok(())
}

/// Calls one tool with a JSON object of arguments. Tool errors map to HTTP statuses
/// (`not_found` 404, `permission.denied` 403, `validation.*` 422, `conflict.*` 409,
/// `payload.too_large` 413) with the error record's shape and the tool's `error_code`.
#[endpoint(tags("mcp"), operation_id = "mcp_call_tool", security(["bearer" = []]),
    responses(
        (status_code = 200, description = "the tool result envelope {summary, data, links, …}"),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED", body = ErrorBody),
        (status_code = 403, description = "permission.denied", body = ToolErrorRecord),
        (status_code = 404, description = "not_found (tool, tenant or entry), or tool server disabled", body = ToolErrorRecord),
        (status_code = 409, description = "conflict.*", body = ToolErrorRecord),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE (body over MAX_BODY_BYTES), or payload.too_large (the result is over its limit)", body = ToolErrorRecord),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE", body = ErrorBody),
        (status_code = 422, description = "validation.error or validation.tenant_required", body = ToolErrorRecord),
        (status_code = 503, description = "service.unavailable", body = ToolErrorRecord),
    ))]
pub async fn call_tool(
    tool_name: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<(), AppError> {
    let (state, principal) = caller(depot)?;
    let args = crate::http::json::read_object(req, state.config().max_body_bytes).await?;
    let called = dispatch::call(&state, &principal, &tool_name, &Value::Object(args)).await;
    match called.outcome {
        // The envelope as the dispatcher serialised it (once); image blocks (only
        // `get_diary_entry_photos` has them) ride beside it as `images`.
        Ok(_) if called.images.is_empty() => transport::render_json_text(res, called.envelope_json),
        Ok(_) => {
            let mut body = called.envelope_json;
            if body.ends_with('}') {
                body.pop();
                body.push_str(r#","images":"#);
                body.push_str(&crate::mcp::envelope::images_json(&called.images));
                body.push('}');
            }
            transport::render_json_text(res, body)
        }
        Err(err) => render_tool_error(err, req, res),
    }
    Ok(())
}

/// A tool error on the REST face: the error record with the tool's code.
fn render_tool_error(err: ToolError, req: &Request, res: &mut Response) {
    let status =
        StatusCode::from_u16(err.code.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let details = match &err.details {
        Some(Value::Array(items)) => Value::Array(items.clone()),
        _ => json!([]),
    };
    let mut body = json!({
        "error_id": format!("err_{}", uuid::Uuid::new_v4()),
        "error_code": err.code.as_str(),
        "message": err.message,
        "details": details,
        "timestamp": now_rfc3339(),
        "path": req.uri().path(),
        "method": req.method().as_str(),
    });
    if let Some(extra @ Value::Object(_)) = &err.details {
        body["data"] = extra.clone();
    }
    if err.code == ToolErrorCode::Internal {
        tracing::error!(message = %err.message, "tool call failed");
    }
    res.status_code(status);
    res.render(Json(body));
}
