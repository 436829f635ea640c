//! The event outbox: [`emit`] writes a change's event in the change's own transaction, one
//! delivery per enabled endpoint that takes the event type, in one statement (none for a
//! garden without such an endpoint). A rolled-back change leaves no event; a committed one
//! is delivered by the worker at least once.

use serde_json::{Value, json};
use uuid::Uuid;

use crate::tenancy::{TenantRecord, TenantTx};

/// The event types (also what `events[]` of an endpoint may name).
pub const EVENT_TYPES: &[&str] = &[
    "plant.created",
    "plant.phase_changed",
    "plant.archived",
    "treatment.applied",
    "harvest.recorded",
    "care.confirmed",
    "task.completed",
    "diary.entry_created",
    "feeding.recorded",
    "alert.opened",
    "alert.resolved",
];

/// The payload as delivered: `{type, timestamp, data}`; `data` gets the garden's slug.
pub fn payload(event: &str, timestamp: &str, tenant: &TenantRecord, mut data: Value) -> Value {
    if let Value::Object(map) = &mut data {
        map.insert("garden".into(), Value::String(tenant.slug.to_string()));
    }
    json!({"type": event, "timestamp": timestamp, "data": data})
}

/// Queues `event` with `data` (the record's key and what a receiver needs to act on it) for
/// every enabled endpoint of the garden subscribed to it, in the caller's transaction.
pub async fn emit(
    tx: &mut TenantTx,
    tenant: &TenantRecord,
    event: &'static str,
    data: Value,
) -> Result<(), sqlx::Error> {
    let timestamp = crate::error::now_rfc3339();
    let body = payload(event, &timestamp, tenant, data);
    let sql = tx.sql(
        "WITH targets AS (
             SELECT id FROM tenant.webhooks WHERE enabled AND $2 = ANY (events)
         ), ev AS (
             INSERT INTO tenant.webhook_events (id, type, payload)
             SELECT $1, $2, $3 WHERE EXISTS (SELECT 1 FROM targets)
             RETURNING id
         )
         INSERT INTO tenant.webhook_deliveries (id, event_id, webhook_id)
         SELECT gen_random_uuid(), ev.id, targets.id FROM ev, targets",
    );
    sqlx::query(sql)
        .bind(Uuid::now_v7())
        .bind(event)
        .bind(body)
        .execute(tx.conn())
        .await?;
    Ok(())
}
