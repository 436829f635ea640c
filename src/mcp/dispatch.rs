//! One tool call from name and raw arguments to envelope, the same for both faces:
//! (1) find the tool, (2) validate the arguments, (3) bind the tenant, (4) check the
//! permission for the role there, (5) dry run / idempotency / run, (6) audit. Every call, also
//! a refused one, leaves exactly one audit row.
//!
//! What a call costs besides its tool: no Redis command (the rate limit and the session are
//! the transport's) and no PostgreSQL statement on its path while the caller's gardens are in
//! memory (at most one load per 0.9 s per account and replica; see `memberships`); the audit
//! row goes to the batching writer. The result is serialised once.

use std::sync::Arc;
use std::time::Instant;

use serde_json::{Map, Value};
use time::OffsetDateTime;

use super::args;
use super::envelope::{ImageBlock, ToolError, ToolErrorCode, WriteMeta};
use super::idempotency::{self, Begin};
use super::registry::{self, BoundTenant, Ctx, Scope, Tool};
use crate::auth::cached::Memberships;
use crate::auth::principal::{Credential, Principal};
use crate::directory::Role;
use crate::error::AppError;
use crate::platform::access::resolve_for;
use crate::state::AppState;
use crate::state::audit::{self, AuditEntry};
use crate::tenancy::registry::TenantKind;
use crate::values::json::args_hash;

/// The tenants a caller may address through the tool server, with its role in each: active
/// memberships, narrowed to the key's `tenant_scope` (the rule of
/// `platform::tenants::service::active_memberships`, over the account's memberships in memory).
pub async fn visible_tenants(
    state: &AppState,
    principal: &Principal,
) -> Result<Vec<BoundTenant>, ToolError> {
    let all = memberships(state, principal.user_id).await?;
    let scope = principal.tenant_scope();
    Ok(all
        .iter()
        .filter(|(t, _)| t.status == crate::tenancy::TenantStatus::Active)
        .filter(|(t, _)| scope.is_none_or(|s| s == t.id))
        .map(|(record, role)| BoundTenant {
            record: record.clone(),
            role: *role,
        })
        .collect())
}

/// Every membership of the account. Kept in memory for at most 0.9 s per replica (a new
/// membership announces nothing on the cache feed; a removed one, a role change and a changed
/// tenant drop the entry at once), so a busy key reads them once per 0.9 s, not per call.
async fn memberships(state: &AppState, user: uuid::Uuid) -> Result<Memberships, ToolError> {
    let caches = state.caches();
    if let Some(all) = caches.memberships(user) {
        return Ok(all);
    }
    let ticket = caches.ticket();
    let all = Arc::new(
        crate::directory::memberships::repo::tenants_of(state.platform_pool(), user)
            .await
            .map_err(AppError::from)?,
    );
    caches.keep_memberships(user, Arc::clone(&all), ticket);
    Ok(all)
}

/// The tools a caller may use in at least one of its gardens (`tools/list`).
pub async fn listed_tools(
    state: &AppState,
    principal: &Principal,
) -> Result<(Vec<&'static Tool>, Vec<BoundTenant>), ToolError> {
    let tenants = visible_tenants(state, principal).await?;
    let strongest = tenants.iter().map(|t| t.role).max();
    let in_platform = tenants
        .iter()
        .find(|t| t.record.kind == TenantKind::Platform)
        .map(|t| t.role);
    let tools = super::tools::ALL
        .iter()
        .copied()
        .filter(|t| {
            let role = match t.scope {
                Scope::Platform => in_platform,
                Scope::Tenant | Scope::Global => strongest,
            };
            role.is_some_and(|r| t.permission.granted_to(r))
        })
        .collect();
    Ok((tools, tenants))
}

/// How a call ended, for the audit row.
struct Ending {
    status: &'static str,
    error_class: Option<&'static str>,
}

tokio::task_local! {
    /// Bytes the answers of the current JSON-RPC batch may still take
    /// (`MCP_MAX_BATCH_RESPONSE_MB` less what earlier calls answered); unset outside a batch.
    static BATCH_BUDGET: usize;
}

/// Runs `f` (the calls of one batch message) with `remaining` bytes of answer left.
pub async fn with_batch_budget<F: std::future::Future>(remaining: usize, f: F) -> F::Output {
    BATCH_BUDGET.scope(remaining, f).await
}

/// What the current batch's answers may still take, inside a batch.
pub fn batch_budget() -> Option<usize> {
    BATCH_BUDGET.try_with(|b| *b).ok()
}

/// The bytes a call's JSON-RPC answer takes at most: the envelope twice (the text block of an
/// older protocol revision and `structuredContent`), the images, and the frame.
fn answer_bytes(envelope_json: &str, images: &[ImageBlock]) -> usize {
    2 * envelope_json.len() + images.iter().map(|i| i.data.len() + 64).sum::<usize>() + 256
}

fn batch_too_large(remaining: usize) -> ToolError {
    ToolError::new(
        ToolErrorCode::PayloadTooLarge,
        format!(
            "this call's answer does not fit in what is left of the batch's answer cap \
             ({remaining} bytes of MCP_MAX_BATCH_RESPONSE_MB); send it again in a batch of its own"
        ),
    )
    .with_details(serde_json::json!({ "batch_bytes_left": remaining }))
}

/// A finished tool call.
#[derive(Debug)]
pub struct Called {
    /// The envelope (`structuredContent`) or the error.
    pub outcome: Result<Map<String, Value>, ToolError>,
    /// The envelope, or the error's envelope, as JSON text: serialised once, audited as
    /// `response_bytes` by its length, and sent as it is by both faces.
    pub envelope_json: String,
    /// Image content blocks of a successful call (outside the envelope).
    pub images: Vec<ImageBlock>,
}

/// Runs one tool call.
pub async fn call(state: &AppState, principal: &Principal, name: &str, raw_args: &Value) -> Called {
    let started = Instant::now();
    let tool = registry::find(name);
    let mut tenant_id = None;
    let mut images = Vec::new();
    let budget = batch_budget();
    let inner = match budget {
        // The batch's answers are used up: nothing more runs.
        Some(0) => Err(batch_too_large(0)),
        _ => call_inner(state, principal, tool, raw_args, &mut tenant_id).await,
    };
    let (outcome, ending) = match inner {
        Ok((env, status, blocks)) => (
            Ok({
                images = blocks;
                env
            }),
            Ending {
                status,
                error_class: None,
            },
        ),
        Err(err) => {
            let ending = Ending {
                status: err.code.audit_status(),
                error_class: Some(err.code.as_str()),
            };
            (Err(err), ending)
        }
    };
    // A map of JSON values always serialises; the fallback only keeps this path panic-free.
    let envelope_json = match &outcome {
        Ok(env) => serde_json::to_string(env),
        Err(err) => serde_json::to_string(&err.envelope()),
    }
    .unwrap_or_else(|_| "{}".to_owned());
    // A read's answer that does not fit in the batch is replaced by payload.too_large (a
    // write's answer is small and kept: it has happened, so its answer must arrive).
    let (outcome, ending, envelope_json) = match budget {
        Some(left)
            if outcome.is_ok()
                && !tool.is_some_and(|t| t.writes())
                && answer_bytes(&envelope_json, &images) > left =>
        {
            images.clear();
            let err = batch_too_large(left);
            let json = serde_json::to_string(&err.envelope()).unwrap_or_else(|_| "{}".to_owned());
            let ending = Ending {
                status: err.code.audit_status(),
                error_class: Some(err.code.as_str()),
            };
            (Err(err), ending, json)
        }
        _ => (outcome, ending, envelope_json),
    };
    crate::metrics::tool_call(
        tool.map(|t| t.name),
        ending.error_class.unwrap_or(ending.status),
    );
    let response_bytes = envelope_json.len() + images.iter().map(|i| i.data.len()).sum::<usize>();
    let tool_name: String = if let Some(tool) = tool {
        tool.name.to_owned()
    } else {
        // Unknown names are audited too, bounded and printable.
        let shown: String = name.chars().filter(|c| !c.is_control()).take(100).collect();
        if shown.is_empty() {
            "(empty)".into()
        } else {
            shown
        }
    };
    audit::record(
        state,
        AuditEntry {
            account_id: principal.user_id,
            api_key_id: match principal.credential {
                Credential::ApiKey { key_id, .. } => Some(key_id),
                _ => None,
            },
            tenant_id,
            tool_name,
            input_hash: args_hash(raw_args),
            response_bytes: i32::try_from(response_bytes).unwrap_or(i32::MAX),
            duration_ms: i32::try_from(started.elapsed().as_millis()).unwrap_or(i32::MAX),
            status: ending.status,
            error_class: ending.error_class,
            created_at: OffsetDateTime::now_utc(),
        },
    )
    .await;
    Called {
        outcome,
        envelope_json,
        images,
    }
}

async fn call_inner(
    state: &AppState,
    principal: &Principal,
    tool: Option<&'static Tool>,
    raw_args: &Value,
    tenant_id: &mut Option<uuid::Uuid>,
) -> Result<(Map<String, Value>, &'static str, Vec<ImageBlock>), ToolError> {
    let tool = tool
        .ok_or_else(|| ToolError::new(ToolErrorCode::NotFound, "unknown tool; see tools/list"))?;
    let args = args::validate(tool.all_args(), tool.rules, raw_args)?;
    let (tenant, role) = bind_tenant(state, principal, tool, args.text(args::TENANT.name)).await?;
    *tenant_id = tenant.as_ref().map(|t| t.record.id);
    if !tool.permission.granted_to(role) {
        return Err(ToolError::new(
            ToolErrorCode::PermissionDenied,
            format!(
                "{} needs {}; your role here is {}",
                tool.name,
                tool.permission.as_str(),
                role.as_str()
            ),
        ));
    }
    let dry_run = tool.writes() && args.flag(args::DRY_RUN.name);
    let idempotency_key = tool
        .writes()
        .then(|| args.text(args::IDEMPOTENCY_KEY.name).map(str::to_owned))
        .flatten();
    let meta = |replay| WriteMeta {
        dry_run,
        idempotency_key: idempotency_key.clone(),
        replay,
    };
    let claim = match (&idempotency_key, dry_run) {
        (Some(key), false) => {
            let scope = idempotency::Scope {
                account: principal.user_id,
                tenant: *tenant_id,
                tool: tool.name,
                key,
            };
            let acting = args_hash(&Value::Object(args.acting()));
            match idempotency::begin(state, &scope, &acting).await? {
                Begin::Replay(mut env) => {
                    env.insert("idempotent_replay".into(), Value::Bool(true));
                    return Ok((env, "replay", Vec::new()));
                }
                Begin::Execute(claim) => Some(claim),
            }
        }
        _ => None,
    };
    let ctx = Ctx {
        state,
        principal,
        tenant,
        dry_run,
    };
    match (tool.run)(&ctx, args).await {
        Ok(mut output) => {
            let images = std::mem::take(&mut output.images);
            let env = output.into_envelope(tool.writes().then(|| meta(false)).as_ref());
            if let Some(claim) = claim {
                claim.finish(state, &env).await;
            }
            Ok((env, if dry_run { "dry_run" } else { "ok" }, images))
        }
        Err(err) => {
            if let Some(claim) = claim {
                claim.release(state).await;
            }
            Err(err)
        }
    }
}

/// A master-data write addressed to a garden other than the platform garden.
fn platform_only(tool: &Tool) -> ToolError {
    ToolError::new(
        ToolErrorCode::PermissionDenied,
        format!(
            "{} changes shared master data that every garden uses: it needs {} in the \
             platform garden (platform administrators), not in a garden of your own",
            tool.name,
            tool.permission.as_str()
        ),
    )
}

fn tenant_not_found() -> ToolError {
    ToolError::not_found("tenant")
}

/// Binds the call's tenant (the specification: resolved before permissions; outside the
/// caller's gardens is `not_found`, never `permission.denied`) and returns the role that
/// decides the permission.
async fn bind_tenant(
    state: &AppState,
    principal: &Principal,
    tool: &Tool,
    slug: Option<&str>,
) -> Result<(Option<BoundTenant>, Role), ToolError> {
    if let Some(slug) = slug {
        let ctx = resolve_for(state, principal, slug)
            .await
            .map_err(|e| match e.code() {
                crate::error::ErrorCode::EntityNotFound => tenant_not_found(),
                _ => ToolError::from(e),
            })?;
        if tool.scope == Scope::Platform && ctx.tenant.kind != TenantKind::Platform {
            return Err(platform_only(tool));
        }
        let role = ctx.role;
        return Ok((
            Some(BoundTenant {
                record: ctx.tenant,
                role,
            }),
            role,
        ));
    }
    let mut visible = visible_tenants(state, principal).await?;
    match tool.scope {
        Scope::Tenant => match visible.len() {
            0 => Err(ToolError::new(
                ToolErrorCode::NotFound,
                "this key covers no garden",
            )),
            1 => {
                let bound = visible.remove(0);
                let role = bound.role;
                // A garden behind on migrations is brought up to date, as on REST.
                let record =
                    crate::tenancy::context::migrate_if_behind(state, bound.record).await?;
                Ok((Some(BoundTenant { record, role }), role))
            }
            _ => Err(ToolError::new(
                ToolErrorCode::TenantRequired,
                "this key covers several gardens: name one in the argument tenant",
            )
            .with_details(serde_json::json!({
                "tenants": visible.iter().map(|t| t.record.slug.as_str()).collect::<Vec<_>>()
            }))),
        },
        Scope::Platform => {
            let bound = visible
                .into_iter()
                .find(|t| t.record.kind == TenantKind::Platform)
                .ok_or_else(|| platform_only(tool))?;
            let role = bound.role;
            Ok((Some(bound), role))
        }
        Scope::Global => {
            let role = visible.iter().map(|t| t.role).max().ok_or_else(|| {
                ToolError::new(
                    ToolErrorCode::PermissionDenied,
                    "this key covers no garden, so it holds no tool permission",
                )
            })?;
            Ok((None, role))
        }
    }
}
