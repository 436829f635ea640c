//! What the REST face records and limits around actions that read or write a whole garden or
//! account (garden export and import, the personal export, erasure): an hourly budget per
//! account and a row in the audit log (the tool-call audit log, `state::audit`, with the action
//! as its tool name).

use std::time::Instant;

use serde_json::Value;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::auth::{Credential, Principal};
use crate::error::AppError;
use crate::state::AppState;
use crate::state::audit::{self, AuditEntry};

/// The account's hourly budget of garden exports, imports and personal exports together
/// (`GARDEN_TRANSFERS_PER_ACCOUNT_PER_HOUR`): beyond it 429 with `Retry-After`. Counted in
/// Redis like the invitation budgets, and closed without it (each transfer reads or writes a
/// whole garden). Light mode has no limits.
pub async fn within_transfer_budget(
    state: &AppState,
    principal: &Principal,
) -> Result<(), AppError> {
    if principal.is_light() {
        return Ok(());
    }
    let cap = state.config().garden_transfers_per_account_per_hour;
    let count = crate::auth::accounts::mails::count_this_hour(
        state,
        "xferq:acct",
        &principal.user_id.to_string(),
    )
    .await
    .map_err(|err| AppError::unavailable("the garden transfer budget", err))?;
    if count.n > i64::from(cap) {
        return Err(AppError::rate_limited(
            format!(
                "rate limit exceeded: at most {cap} garden exports and imports per hour per account \
                 (personal exports count too)"
            ),
            count.seconds_left,
        ));
    }
    Ok(())
}

/// One audit row: who did it, in which garden, with which arguments (hashed), how big the
/// file was, how it ended.
pub async fn record(
    state: &AppState,
    principal: &Principal,
    tenant_id: Option<Uuid>,
    action: &str,
    args: &Value,
    outcome: Result<u64, &'static str>,
    started: Instant,
) {
    let (status, error_class, bytes) = match outcome {
        Ok(bytes) => ("ok", None, bytes),
        Err(class) => ("error", Some(class), 0),
    };
    let entry = AuditEntry {
        account_id: principal.user_id,
        api_key_id: match principal.credential {
            Credential::ApiKey { key_id, .. } => Some(key_id),
            _ => None,
        },
        tenant_id,
        tool_name: action.to_owned(),
        input_hash: crate::values::json::args_hash(args),
        response_bytes: i32::try_from(bytes).unwrap_or(i32::MAX),
        duration_ms: i32::try_from(started.elapsed().as_millis()).unwrap_or(i32::MAX),
        status,
        error_class,
        created_at: OffsetDateTime::now_utc(),
    };
    audit::record(state, entry).await;
}
