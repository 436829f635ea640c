//! Web Push (RFC 8030) with VAPID (RFC 8292): a person's browser subscriptions under
//! `/api/v1/users/me/push-subscriptions`, the application server key a browser subscribes with
//! (`GET /api/v1/push/vapid-public-key`), and the digest sent as a push message to every
//! subscription of a user with `notify_push` on.
//!
//! The message is encrypted for the browser as RFC 8291 has it (aes128gcm) by
//! `web-push-native`; the VAPID token (ES256) is signed here with p256's ECDSA. A push service
//! answering 404 or 410 says the subscription is gone: its row is deleted. Endpoints pass the
//! webhooks' target checks (no SSRF) when subscribed and again at every send.

pub mod model;
pub mod repo;
pub mod routes;
pub mod service;
pub mod vapid;
