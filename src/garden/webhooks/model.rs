//! Webhook endpoints, their deliveries and the bodies that create and change them.

use salvo::oapi::ToSchema;
use serde::Serialize;
use serde_json::Value;
use time::OffsetDateTime;
use uuid::Uuid;

use super::events::EVENT_TYPES;
use crate::values::json::{FromJson, JsonFields, Patch};

/// Longest endpoint URL.
pub const URL_MAX: usize = 2000;
/// Longest description.
pub const DESCRIPTION_MAX: usize = 500;
/// Endpoints one garden may have.
pub const MAX_PER_GARDEN: i64 = 20;

/// A webhook endpoint (its secret is shown only when created or rotated).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Webhook {
    pub key: Uuid,
    pub url: String,
    /// The event types delivered to it.
    pub events: Vec<String>,
    pub description: Option<String>,
    /// A disabled endpoint gets nothing; its pending events wait until it is enabled again.
    pub enabled: bool,
    /// Why the service disabled it, if it did: its deliveries kept failing, or the authority
    /// of the person it lives on ended (that account was taken back by its owner, left the
    /// garden, lost its admin role, was deactivated or erased).
    pub disabled_reason: Option<String>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
}

/// A created endpoint with its signing secret (shown once).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct WebhookWithSecret {
    #[serde(flatten)]
    pub webhook: Webhook,
    /// `whsec_` + base64 of the key: verify signatures with it (Standard Webhooks).
    pub secret: String,
}

/// One event's delivery to one endpoint, with its attempts.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Delivery {
    pub key: Uuid,
    /// The `webhook-id` header of every attempt (`msg_…`).
    pub message_id: String,
    pub event_type: String,
    /// `pending`, `delivered` or `failed`.
    pub status: String,
    pub attempts: i32,
    #[serde(with = "time::serde::rfc3339")]
    pub next_attempt_at: OffsetDateTime,
    pub last_status_code: Option<i32>,
    pub last_error: Option<String>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option")]
    pub finished_at: Option<OffsetDateTime>,
    /// Every attempt, first first.
    pub attempt_log: Vec<Attempt>,
}

/// One attempt of a delivery.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[salvo(schema(name = "WebhookAttempt"))]
pub struct Attempt {
    pub attempt: i32,
    #[serde(with = "time::serde::rfc3339")]
    pub started_at: OffsetDateTime,
    pub duration_ms: i32,
    /// The receiver's HTTP status, if it answered.
    pub response_code: Option<i32>,
    /// The start of its answer (at most 1 KiB, kept 7 days).
    pub response_body: Option<String>,
    /// What went wrong (timeout, refused address, …), if it did.
    pub error: Option<String>,
}

/// A page of deliveries, newest first.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[salvo(schema(name = "WebhookDeliveries"))]
pub struct Deliveries {
    pub items: Vec<Delivery>,
}

/// Endpoints of the garden.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[salvo(schema(name = "WebhookList"))]
pub struct WebhookList {
    pub items: Vec<Webhook>,
}

/// Body of `POST /webhooks`.
#[derive(Debug, Clone, serde::Deserialize, ToSchema)]
#[salvo(schema(name = "WebhookCreate"))]
#[serde(deny_unknown_fields)]
pub struct WebhookCreateBody {
    /// `https://…` (http:// only to loopback with `WEBHOOK_ALLOW_PRIVATE_TARGETS=true`).
    #[salvo(schema(max_length = 2000))]
    pub url: String,
    /// Event types, at least one: plant.created, plant.phase_changed, plant.archived,
    /// treatment.applied, harvest.recorded, care.confirmed, task.completed,
    /// diary.entry_created, feeding.recorded, alert.opened, alert.resolved.
    #[salvo(schema(min_items = 1, max_items = 11))]
    pub events: Vec<String>,
    #[salvo(schema(max_length = 500))]
    pub description: Option<String>,
}

/// Body of `PATCH /webhooks/{key}`: any field; an omitted field stays.
#[derive(Debug, Clone, serde::Deserialize, ToSchema)]
#[salvo(schema(name = "WebhookPatch"))]
#[serde(deny_unknown_fields)]
pub struct WebhookPatchBody {
    #[salvo(schema(nullable = false, max_length = 2000))]
    pub url: Option<String>,
    #[salvo(schema(nullable = false, min_items = 1, max_items = 11))]
    pub events: Option<Vec<String>>,
    #[salvo(schema(max_length = 500))]
    pub description: Option<String>,
    #[salvo(schema(nullable = false))]
    pub enabled: Option<bool>,
}

/// A new endpoint as read from the body.
#[derive(Debug, Clone)]
pub struct NewWebhook {
    pub url: String,
    pub events: Vec<String>,
    pub description: Option<String>,
}

/// A change as read from the body.
#[derive(Debug, Clone, Default)]
pub struct WebhookPatch {
    pub url: Option<String>,
    pub events: Option<Vec<String>>,
    pub description: Patch<String>,
    pub enabled: Option<bool>,
}

fn url_field(f: &mut JsonFields, required: bool) -> Option<Option<String>> {
    match f.value("url") {
        None if required => {
            f.reject_field("url", "field required", "missing");
            None
        }
        None => Some(None),
        Some(Value::String(s)) if s.is_empty() => {
            f.reject_field("url", "must not be blank", "string_too_short");
            None
        }
        Some(Value::String(s)) if s.chars().count() > URL_MAX => {
            f.reject_field(
                "url",
                format!("must have at most {URL_MAX} characters"),
                "string_too_long",
            );
            None
        }
        Some(Value::String(s)) => Some(Some(s)),
        Some(_) => {
            f.reject_field("url", "must be a string", "type_error");
            None
        }
    }
}

fn events_field(f: &mut JsonFields, required: bool) -> Option<Option<Vec<String>>> {
    let list = match f.value("events") {
        None if required => {
            f.reject_field("events", "field required", "missing");
            return None;
        }
        None => return Some(None),
        Some(Value::Array(list)) => list,
        Some(_) => {
            f.reject_field("events", "must be a list of event types", "type_error");
            return None;
        }
    };
    if list.is_empty() {
        f.reject_field("events", "must name at least one event type", "too_short");
        return None;
    }
    let mut out: Vec<String> = Vec::with_capacity(list.len());
    for item in list {
        match item {
            Value::String(s) if EVENT_TYPES.contains(&s.as_str()) => {
                if !out.contains(&s) {
                    out.push(s);
                }
            }
            _ => {
                f.reject_field(
                    "events",
                    format!("each must be one of: {}", EVENT_TYPES.join(", ")),
                    "value_error",
                );
                return None;
            }
        }
    }
    Some(Some(out))
}

impl FromJson for NewWebhook {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let url = url_field(f, true);
        let events = events_field(f, true);
        let description = f.opt_long_text("description", DESCRIPTION_MAX);
        Some(Self {
            url: url??,
            events: events??,
            description: description?,
        })
    }
}

impl FromJson for WebhookPatch {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let mut nulls = false;
        for name in ["url", "events", "enabled"] {
            if f.has(name) && !f.has_value(name) {
                f.reject_field(name, "must not be null", "type_error");
                nulls = true;
            }
        }
        let url = url_field(f, false);
        let events = events_field(f, false);
        let description = f.patch_clearable("description", DESCRIPTION_MAX);
        let enabled = match f.value("enabled") {
            None => Some(None),
            Some(Value::Bool(b)) => Some(Some(b)),
            Some(_) => {
                f.reject_field("enabled", "must be true or false", "type_error");
                None
            }
        };
        if nulls {
            return None;
        }
        Some(Self {
            url: url?,
            events: events?,
            description: description?,
            enabled: enabled?,
        })
    }
}
