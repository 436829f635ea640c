//! SQL of `tenant.webhooks`, `tenant.webhook_deliveries` and `tenant.webhook_attempts`.

use sqlx::Row;
use sqlx::postgres::PgRow;
use time::OffsetDateTime;
use uuid::Uuid;

use super::model::{Attempt, Delivery, Webhook};
use crate::tenancy::TenantTx;

const COLUMNS: &str =
    "id, url, events, description, enabled, disabled_reason, created_at, updated_at";

fn webhook(r: &PgRow) -> Result<Webhook, sqlx::Error> {
    Ok(Webhook {
        key: r.try_get("id")?,
        url: r.try_get("url")?,
        events: r.try_get("events")?,
        description: r.try_get("description")?,
        enabled: r.try_get("enabled")?,
        disabled_reason: r.try_get("disabled_reason")?,
        created_at: r.try_get("created_at")?,
        updated_at: r.try_get("updated_at")?,
    })
}

/// The person a webhook lives on (`created_by`): its maker's account and take-back epoch
/// (`platform.users.grants_epoch`) when it made the webhook, pointed it or enabled it again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Maker {
    pub account: Uuid,
    pub epoch: i32,
}

pub async fn count(tx: &mut TenantTx) -> Result<i64, sqlx::Error> {
    let sql = tx.sql("SELECT count(*) FROM tenant.webhooks");
    sqlx::query_scalar(sql).fetch_one(tx.conn()).await
}

pub async fn insert(
    tx: &mut TenantTx,
    id: Uuid,
    url: &str,
    events: &[String],
    description: Option<&str>,
    sealed_secret: &str,
    maker: Maker,
) -> Result<Webhook, sqlx::Error> {
    let sql = tx.sql(&format!(
        "INSERT INTO tenant.webhooks
             (id, url, events, description, secret_encrypted, created_by, maker_epoch)
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING {COLUMNS}"
    ));
    let row = sqlx::query(sql)
        .bind(id)
        .bind(url)
        .bind(events)
        .bind(description)
        .bind(sealed_secret)
        .bind(maker.account)
        .bind(maker.epoch)
        .fetch_one(tx.conn())
        .await?;
    webhook(&row)
}

pub async fn list(tx: &mut TenantTx) -> Result<Vec<Webhook>, sqlx::Error> {
    let sql = tx.sql(&format!(
        "SELECT {COLUMNS} FROM tenant.webhooks ORDER BY created_at, id"
    ));
    let rows = sqlx::query(sql).fetch_all(tx.conn()).await?;
    rows.iter().map(webhook).collect()
}

pub async fn get(tx: &mut TenantTx, id: Uuid) -> Result<Option<Webhook>, sqlx::Error> {
    let sql = tx.sql(&format!(
        "SELECT {COLUMNS} FROM tenant.webhooks WHERE id = $1"
    ));
    let row = sqlx::query(sql).bind(id).fetch_optional(tx.conn()).await?;
    row.as_ref().map(webhook).transpose()
}

/// Writes the changed fields; re-enabling clears the reason the service disabled it for.
/// `new_maker`: the person who pointed it (`url`) or enabled it again becomes its maker.
pub async fn update(
    tx: &mut TenantTx,
    id: Uuid,
    url: &str,
    events: &[String],
    description: Option<&str>,
    enabled: bool,
    new_maker: Option<Maker>,
) -> Result<Option<Webhook>, sqlx::Error> {
    let sql = tx.sql(&format!(
        "UPDATE tenant.webhooks SET url = $2, events = $3, description = $4, enabled = $5,
             disabled_reason = CASE WHEN $5 THEN NULL ELSE disabled_reason END,
             created_by = coalesce($6, created_by),
             maker_epoch = coalesce($7, maker_epoch),
             updated_at = now()
         WHERE id = $1 RETURNING {COLUMNS}"
    ));
    let row = sqlx::query(sql)
        .bind(id)
        .bind(url)
        .bind(events)
        .bind(description)
        .bind(enabled)
        .bind(new_maker.map(|m| m.account))
        .bind(new_maker.map(|m| m.epoch))
        .fetch_optional(tx.conn())
        .await?;
    row.as_ref().map(webhook).transpose()
}

pub async fn delete(tx: &mut TenantTx, id: Uuid) -> Result<bool, sqlx::Error> {
    let sql = tx.sql("DELETE FROM tenant.webhooks WHERE id = $1");
    let done = sqlx::query(sql).bind(id).execute(tx.conn()).await?;
    Ok(done.rows_affected() == 1)
}

/// A new (sealed) secret; the raw column of a row not yet converted goes with the old one.
pub async fn set_secret(
    tx: &mut TenantTx,
    id: Uuid,
    sealed_secret: &str,
) -> Result<bool, sqlx::Error> {
    let sql = tx.sql(
        "UPDATE tenant.webhooks SET secret_encrypted = $2, secret = NULL, updated_at = now()
         WHERE id = $1",
    );
    let done = sqlx::query(sql)
        .bind(id)
        .bind(sealed_secret)
        .execute(tx.conn())
        .await?;
    Ok(done.rows_affected() == 1)
}

/// The newest `limit` deliveries of an endpoint with their attempts.
pub async fn deliveries(
    tx: &mut TenantTx,
    webhook_id: Uuid,
    limit: i64,
) -> Result<Vec<Delivery>, sqlx::Error> {
    let sql = tx.sql(
        "SELECT d.id, d.event_id, e.type, d.status, d.attempts, d.next_attempt_at,
                d.last_status_code, d.last_error, d.created_at, d.finished_at,
                coalesce((SELECT jsonb_agg(jsonb_build_object(
                    'attempt', a.attempt, 'started_at', a.started_at,
                    'duration_ms', a.duration_ms, 'response_code', a.response_code,
                    'response_body', a.response_body, 'error', a.error) ORDER BY a.attempt)
                  FROM tenant.webhook_attempts a WHERE a.delivery_id = d.id), '[]') AS log
         FROM tenant.webhook_deliveries d
         JOIN tenant.webhook_events e ON e.id = d.event_id
         WHERE d.webhook_id = $1
         ORDER BY d.created_at DESC, d.id DESC
         LIMIT $2",
    );
    let rows = sqlx::query(sql)
        .bind(webhook_id)
        .bind(limit)
        .fetch_all(tx.conn())
        .await?;
    rows.iter()
        .map(|r| {
            let event: Uuid = r.try_get("event_id")?;
            let log: serde_json::Value = r.try_get("log")?;
            Ok(Delivery {
                key: r.try_get("id")?,
                message_id: message_id(event),
                event_type: r.try_get("type")?,
                status: r.try_get("status")?,
                attempts: r.try_get("attempts")?,
                next_attempt_at: r.try_get("next_attempt_at")?,
                last_status_code: r.try_get("last_status_code")?,
                last_error: r.try_get("last_error")?,
                created_at: r.try_get("created_at")?,
                finished_at: r.try_get("finished_at")?,
                attempt_log: attempt_log(&log),
            })
        })
        .collect()
}

fn attempt_log(log: &serde_json::Value) -> Vec<Attempt> {
    let parse_time = |v: &serde_json::Value| {
        v.as_str().and_then(|s| {
            // jsonb renders timestamptz as `2026-11-27T09:00:00.123456+00:00`.
            OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).ok()
        })
    };
    let int = |v: &serde_json::Value| v.as_i64().and_then(|n| i32::try_from(n).ok());
    let text = |v: &serde_json::Value| v.as_str().map(str::to_owned);
    log.as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|a| {
                    Some(Attempt {
                        attempt: int(&a["attempt"])?,
                        started_at: parse_time(&a["started_at"])?,
                        duration_ms: int(&a["duration_ms"]).unwrap_or(0),
                        response_code: int(&a["response_code"]),
                        response_body: text(&a["response_body"]),
                        error: text(&a["error"]),
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The `webhook-id` of an event.
pub fn message_id(event: Uuid) -> String {
    format!("msg_{}", event.simple())
}

/// A delivery the worker holds.
#[derive(Debug, Clone)]
pub struct Claimed {
    pub id: Uuid,
    pub event_id: Uuid,
    pub webhook_id: Uuid,
    pub url: String,
    /// The secret as stored: sealed (a Fernet token), or raw in a row written before tenant
    /// migration 0021 that the worker has not sealed yet.
    pub secret: StoredSecret,
    pub payload: serde_json::Value,
    pub event_type: String,
    /// This attempt's number (1 for the first).
    pub attempt: i32,
    /// Whose authority the webhook lives on: checked before the attempt.
    pub maker: Option<Uuid>,
    pub maker_epoch: i32,
}

/// Secrets still raw (written before tenant migration 0021): to be sealed.
pub async fn raw_secrets(tx: &mut TenantTx) -> Result<Vec<(Uuid, Vec<u8>)>, sqlx::Error> {
    let sql = tx.sql(
        "SELECT id, secret FROM tenant.webhooks
         WHERE secret_encrypted IS NULL AND secret IS NOT NULL",
    );
    sqlx::query_as(sql).fetch_all(tx.conn()).await
}

/// Replaces a raw secret with its sealed form.
pub async fn seal_secret(tx: &mut TenantTx, id: Uuid, sealed: &str) -> Result<(), sqlx::Error> {
    let sql = tx.sql(
        "UPDATE tenant.webhooks SET secret_encrypted = $2, secret = NULL
         WHERE id = $1 AND secret_encrypted IS NULL",
    );
    sqlx::query(sql)
        .bind(id)
        .bind(sealed)
        .execute(tx.conn())
        .await?;
    Ok(())
}

/// Pending deliveries of the garden (the outbox's depth; the partial index holds them).
pub async fn pending_count(tx: &mut TenantTx) -> Result<i64, sqlx::Error> {
    let sql = tx.sql("SELECT count(*) FROM tenant.webhook_deliveries WHERE status = 'pending'");
    sqlx::query_scalar(sql).fetch_one(tx.conn()).await
}

/// A webhook's signing secret as the row holds it.
#[derive(Debug, Clone)]
pub enum StoredSecret {
    Sealed(String),
    Raw(Vec<u8>),
}

/// Leases the oldest pending delivery of each enabled endpoint when it is due (so an endpoint
/// gets its events in order), at most `limit`, and counts the attempt.
pub async fn claim_due(
    tx: &mut TenantTx,
    limit: i64,
    lease_seconds: f64,
) -> Result<Vec<Claimed>, sqlx::Error> {
    let sql = tx.sql(
        "WITH heads AS (
             SELECT DISTINCT ON (d.webhook_id) d.id
             FROM tenant.webhook_deliveries d
             JOIN tenant.webhooks w ON w.id = d.webhook_id AND w.enabled
             WHERE d.status = 'pending'
             ORDER BY d.webhook_id, d.created_at, d.id
         ), due AS (
             SELECT d.id FROM tenant.webhook_deliveries d JOIN heads h ON h.id = d.id
             WHERE d.next_attempt_at <= now()
               AND (d.locked_until IS NULL OR d.locked_until <= now())
             LIMIT $1
             FOR UPDATE OF d SKIP LOCKED
         )
         UPDATE tenant.webhook_deliveries d
         SET attempts = d.attempts + 1, locked_until = now() + make_interval(secs => $2)
         FROM due, tenant.webhooks w, tenant.webhook_events e
         WHERE d.id = due.id AND w.id = d.webhook_id AND e.id = d.event_id
         RETURNING d.id, d.event_id, d.webhook_id, w.url, w.secret, w.secret_encrypted,
                   e.payload, e.type,
                   d.attempts, w.created_by, w.maker_epoch",
    );
    let rows = sqlx::query(sql)
        .bind(limit)
        .bind(lease_seconds)
        .fetch_all(tx.conn())
        .await?;
    rows.iter()
        .map(|r| {
            Ok(Claimed {
                id: r.try_get("id")?,
                event_id: r.try_get("event_id")?,
                webhook_id: r.try_get("webhook_id")?,
                url: r.try_get("url")?,
                secret: match r.try_get::<Option<String>, _>("secret_encrypted")? {
                    Some(token) => StoredSecret::Sealed(token),
                    None => StoredSecret::Raw(
                        r.try_get::<Option<Vec<u8>>, _>("secret")?
                            .unwrap_or_default(),
                    ),
                },
                payload: r.try_get("payload")?,
                event_type: r.try_get("type")?,
                attempt: r.try_get("attempts")?,
                maker: r.try_get("created_by")?,
                maker_epoch: r.try_get("maker_epoch")?,
            })
        })
        .collect()
}

/// What one attempt came to.
#[derive(Debug, Clone)]
pub struct AttemptResult {
    pub duration_ms: i32,
    pub response_code: Option<i32>,
    pub response_body: Option<String>,
    pub error: Option<String>,
}

/// Records an attempt and the delivery's new state: `delivered`, `failed` (given up) or
/// pending again at `retry_in_seconds`.
pub async fn record_attempt(
    tx: &mut TenantTx,
    claimed: &Claimed,
    result: &AttemptResult,
    outcome: Outcome,
) -> Result<(), sqlx::Error> {
    let sql = tx.sql(
        "INSERT INTO tenant.webhook_attempts
             (id, delivery_id, attempt, started_at, duration_ms, response_code, response_body, error)
         VALUES ($1, $2, $3, now() - make_interval(secs => $4::double precision / 1000),
                 $4, $5, $6, $7)",
    );
    sqlx::query(sql)
        .bind(Uuid::now_v7())
        .bind(claimed.id)
        .bind(claimed.attempt)
        .bind(result.duration_ms)
        .bind(result.response_code)
        .bind(&result.response_body)
        .bind(&result.error)
        .execute(tx.conn())
        .await?;
    let (status, retry) = match outcome {
        Outcome::Delivered => ("delivered", 0.0),
        Outcome::Failed => ("failed", 0.0),
        Outcome::RetryIn(s) => ("pending", s),
    };
    let sql = tx.sql(
        "UPDATE tenant.webhook_deliveries
         SET status = $3, locked_until = NULL, last_status_code = $4, last_error = $5,
             next_attempt_at = $7 + make_interval(secs => $6),
             finished_at = CASE WHEN $3 = 'pending' THEN NULL ELSE $7 END
         WHERE id = $1 AND attempts = $2",
    );
    sqlx::query(sql)
        .bind(claimed.id)
        .bind(claimed.attempt)
        .bind(status)
        .bind(result.response_code)
        .bind(&result.error)
        .bind(retry)
        // Bound, not `now()`: Citus refuses a non-immutable function inside CASE here.
        .bind(time::OffsetDateTime::now_utc())
        .execute(tx.conn())
        .await?;
    Ok(())
}

/// A delivery's fate after an attempt.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Outcome {
    Delivered,
    RetryIn(f64),
    Failed,
}

/// Disables an endpoint whose delivery was given up; `false` when it was disabled already.
pub async fn disable(tx: &mut TenantTx, id: Uuid, reason: &str) -> Result<bool, sqlx::Error> {
    let sql = tx.sql(
        "UPDATE tenant.webhooks SET enabled = false, disabled_reason = $2, updated_at = now()
         WHERE id = $1 AND enabled",
    );
    let done = sqlx::query(sql)
        .bind(id)
        .bind(reason)
        .execute(tx.conn())
        .await?;
    Ok(done.rows_affected() == 1)
}

/// Clean-up: response bodies after 7 days, finished deliveries (and events nobody waits for)
/// after 30.
pub async fn purge(tx: &mut TenantTx) -> Result<(), sqlx::Error> {
    for template in [
        "UPDATE tenant.webhook_attempts SET response_body = NULL
         WHERE response_body IS NOT NULL AND started_at < now() - interval '7 days'",
        "DELETE FROM tenant.webhook_deliveries
         WHERE status <> 'pending' AND finished_at < now() - interval '30 days'",
        "DELETE FROM tenant.webhook_events e
         WHERE e.created_at < now() - interval '30 days'
           AND NOT EXISTS (SELECT 1 FROM tenant.webhook_deliveries d WHERE d.event_id = e.id)",
    ] {
        let sql = tx.sql(template);
        sqlx::query(sql).execute(tx.conn()).await?;
    }
    Ok(())
}
