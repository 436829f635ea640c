//! OpenAPI shapes of the tool server's own answers (documentation only: the transport writes
//! JSON-RPC values directly).

use salvo::oapi::ToSchema;
use serde::Serialize;
use serde_json::Value;

use crate::error::{ErrorBody, ErrorDetail};

/// A JSON-RPC error response; transport-level refusals carry `id: null`.
#[derive(Debug, Serialize, ToSchema)]
#[salvo(schema(name = "JsonRpcError"))]
pub struct JsonRpcError {
    /// Always `2.0`.
    pub jsonrpc: String,
    /// The request id (string or integer), or null.
    pub id: Value,
    pub error: JsonRpcErrorObject,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct JsonRpcErrorObject {
    /// -32700 parse error, -32600 invalid request, -32601 method not found, -32602 invalid
    /// params, -32001 session not found, -32000 other transport refusals.
    pub code: i64,
    pub message: String,
}

/// A refusal on the JSON-RPC endpoint: the error record (gate, credentials, size limit) or a
/// JSON-RPC error (session, transport).
#[derive(Debug, Serialize, ToSchema)]
#[serde(untagged)]
#[salvo(schema(name = "McpRefusal"))]
pub enum McpRefusal {
    Record(ErrorBody),
    Rpc(JsonRpcError),
}

/// A tool error on the REST face: the error record's fields with the tool's `error_code`
/// (`not_found`, `permission.denied`, `validation.error`, …); `data` carries structured
/// extras such as the gardens to choose from.
#[derive(Debug, Serialize, ToSchema)]
#[salvo(schema(name = "ToolErrorRecord"))]
pub struct ToolErrorRecord {
    pub error_id: String,
    pub error_code: String,
    pub message: String,
    pub details: Vec<ErrorDetail>,
    pub timestamp: String,
    pub path: String,
    pub method: String,
    pub data: Option<Value>,
}
