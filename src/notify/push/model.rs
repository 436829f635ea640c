//! Push subscriptions as the API shows them, and the subscribe body with its checks.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use salvo::oapi::ToSchema;
use serde::Serialize;
use serde_json::Value;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::values::json::{FromJson, JsonFields};

pub const ENDPOINT_MAX: usize = 2000;
/// Subscriptions a person may hold (browsers and devices).
pub const PER_USER_MAX: i64 = 20;

/// A push subscription: its key and where it points, never the browser's keys or the endpoint's
/// path (a capability of the push service).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[salvo(schema(name = "PushSubscription"))]
pub struct PushSubscription {
    pub key: Uuid,
    /// The push service's host, e.g. `fcm.googleapis.com`.
    pub endpoint_host: String,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    /// The last message the push service accepted; null before the first.
    #[serde(with = "time::serde::rfc3339::option")]
    pub last_sent_at: Option<OffsetDateTime>,
}

/// The caller's subscriptions.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[salvo(schema(name = "PushSubscriptionList"))]
pub struct PushSubscriptionList {
    pub items: Vec<PushSubscription>,
    pub total: i64,
}

/// The application server key for `pushManager.subscribe({applicationServerKey})`.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[salvo(schema(name = "VapidPublicKey"))]
pub struct VapidPublicKey {
    /// The uncompressed P-256 point (65 bytes), base64url without padding.
    pub public_key: String,
}

/// The browser's keys of a subscription (`PushSubscription.toJSON().keys`).
#[derive(Debug, Clone, serde::Deserialize, ToSchema)]
#[salvo(schema(name = "PushSubscriptionKeys"))]
#[serde(deny_unknown_fields)]
pub struct PushKeysBody {
    /// The browser's P-256 public key: 65 bytes (uncompressed point), base64url.
    #[salvo(schema(min_length = 87, max_length = 88, pattern = r"^[A-Za-z0-9_-]+=*$"))]
    pub p256dh: String,
    /// The authentication secret: 16 bytes, base64url.
    #[salvo(schema(min_length = 22, max_length = 24, pattern = r"^[A-Za-z0-9_-]+=*$"))]
    pub auth: String,
}

/// Body of `POST /users/me/push-subscriptions`: what `PushSubscription.toJSON()` gives.
#[derive(Debug, Clone, serde::Deserialize, ToSchema)]
#[salvo(schema(name = "PushSubscriptionCreate"))]
#[serde(deny_unknown_fields)]
pub struct PushSubscribeBody {
    /// The push service URL: `https://` (http:// only to loopback with
    /// `WEBHOOK_ALLOW_PRIVATE_TARGETS=true`), resolving to public addresses only.
    #[salvo(schema(min_length = 1, max_length = 2000))]
    pub endpoint: String,
    pub keys: PushKeysBody,
    /// As the browser sends it; not used (a push service's 404 or 410 ends a subscription).
    #[serde(rename = "expirationTime")]
    #[salvo(schema(minimum = 0))]
    pub expiration_time: Option<i64>,
}

/// A checked subscribe body.
#[derive(Debug, Clone)]
pub struct NewSubscription {
    pub endpoint: String,
    /// base64url without padding, as stored.
    pub p256dh: String,
    pub auth: String,
}

/// Decodes base64url (padding tolerated) to exactly `len` bytes.
pub fn decode_key(raw: &str, len: usize) -> Option<Vec<u8>> {
    URL_SAFE_NO_PAD
        .decode(raw.trim_end_matches('='))
        .ok()
        .filter(|b| b.len() == len)
}

impl FromJson for NewSubscription {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let endpoint = f.text("endpoint", ENDPOINT_MAX);
        let keys = match f.value("keys") {
            None => {
                f.reject_field("keys", "field required", "missing");
                None
            }
            Some(Value::Object(mut keys)) => {
                let p256dh = match keys.remove("p256dh") {
                    Some(Value::String(s)) => match decode_key(&s, 65) {
                        Some(bytes) if p256::PublicKey::from_sec1_bytes(&bytes).is_ok() => {
                            Some(URL_SAFE_NO_PAD.encode(bytes))
                        }
                        _ => {
                            f.reject_field(
                                "keys.p256dh",
                                "must be a P-256 public key (65 bytes, base64url)",
                                "value_error",
                            );
                            None
                        }
                    },
                    None | Some(Value::Null) => {
                        f.reject_field("keys.p256dh", "field required", "missing");
                        None
                    }
                    Some(_) => {
                        f.reject_field("keys.p256dh", "must be a string", "type_error");
                        None
                    }
                };
                let auth = match keys.remove("auth") {
                    Some(Value::String(s)) => match decode_key(&s, 16) {
                        Some(bytes) => Some(URL_SAFE_NO_PAD.encode(bytes)),
                        None => {
                            f.reject_field(
                                "keys.auth",
                                "must be 16 bytes in base64url",
                                "value_error",
                            );
                            None
                        }
                    },
                    None | Some(Value::Null) => {
                        f.reject_field("keys.auth", "field required", "missing");
                        None
                    }
                    Some(_) => {
                        f.reject_field("keys.auth", "must be a string", "type_error");
                        None
                    }
                };
                for extra in keys.keys() {
                    f.reject_field(&format!("keys.{extra}"), "unknown field", "extra_forbidden");
                }
                Some((p256dh?, auth?))
            }
            Some(_) => {
                f.reject_field("keys", "must be an object", "type_error");
                None
            }
        };
        match f.value("expirationTime") {
            None => {}
            Some(v) if v.as_i64().is_some_and(|n| n >= 0) => {}
            Some(_) => f.reject_field(
                "expirationTime",
                "must be null or a whole number of milliseconds",
                "type_error",
            ),
        }
        let (p256dh, auth) = keys?;
        Some(Self {
            endpoint: endpoint?,
            p256dh,
            auth,
        })
    }
}
