//! Push subscriptions (subscribe, list, delete) and sending one message to every subscription
//! of a user.

use std::time::Duration;

use uuid::Uuid;

use super::model::{
    NewSubscription, PER_USER_MAX, PushSubscription, PushSubscriptionList, decode_key,
};
use super::repo;
use super::vapid::{TOKEN_SECONDS, VapidKey};
use crate::error::{AppError, ErrorDetail};
use crate::garden::webhooks::{target, worker};
use crate::state::AppState;

/// At most this much of a push service's answer is read (it is not kept).
const RESPONSE_LIMIT: usize = 16 * 1024;

fn refused(why: target::Refused) -> AppError {
    AppError::validation(vec![ErrorDetail::new(
        "body.endpoint",
        why.0,
        "value_error",
    )])
}

/// Subscribes (or renews the keys of) a browser of `user`. The endpoint passes the webhooks'
/// target checks: https, resolving to public addresses only (422 otherwise, nothing stored).
pub async fn subscribe(
    state: &AppState,
    user: Uuid,
    new: &NewSubscription,
) -> Result<PushSubscription, AppError> {
    let allow = state.config().webhook_allow_private_targets;
    let url = target::parse(&new.endpoint, allow).map_err(refused)?;
    target::resolve(&url, allow).await.map_err(refused)?;
    let host = url.host_str().unwrap_or_default().to_owned();
    let db = state.platform_pool();
    if repo::count_other(db, user, &new.endpoint).await? >= PER_USER_MAX {
        return Err(AppError::validation(vec![ErrorDetail::new(
            "body.endpoint",
            format!("at most {PER_USER_MAX} push subscriptions per person; delete one first"),
            "value_error",
        )]));
    }
    Ok(repo::upsert(db, user, &new.endpoint, &host, &new.p256dh, &new.auth).await?)
}

pub async fn list(state: &AppState, user: Uuid) -> Result<PushSubscriptionList, AppError> {
    let items = repo::list(state.platform_pool(), user).await?;
    let total = i64::try_from(items.len()).unwrap_or(i64::MAX);
    Ok(PushSubscriptionList { items, total })
}

/// Deletes one of the caller's subscriptions (404 for another person's or an unknown key).
pub async fn delete(state: &AppState, user: Uuid, key: &str) -> Result<(), AppError> {
    let id = Uuid::parse_str(key.trim()).map_err(|_| AppError::not_found("push subscription"))?;
    if repo::delete(state.platform_pool(), user, id).await? {
        Ok(())
    } else {
        Err(AppError::not_found("push subscription"))
    }
}

pub fn public_key(state: &AppState) -> Result<String, AppError> {
    Ok(VapidKey::from_config(state.config())?
        .public_key()
        .to_owned())
}

/// What sending to a user's subscriptions did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PushSummary {
    /// Accepted by the push service (2xx).
    pub delivered: usize,
    /// Gone (404 or 410): deleted.
    pub removed: usize,
    /// Anything else (refused target, timeout, another status): kept, tried again next time.
    pub failed: usize,
}

/// How one send ended.
enum Outcome {
    Delivered,
    Gone,
    Failed(String),
}

/// Sends `payload` (JSON, encrypted per subscription) to every subscription of `user`. Errors
/// of one subscription do not stop the others; a 404 or 410 deletes the subscription.
pub async fn send_to_user(
    state: &AppState,
    user: Uuid,
    payload: &serde_json::Value,
) -> Result<PushSummary, AppError> {
    let db = state.platform_pool();
    let subscriptions = repo::for_sending(db, user).await?;
    let mut summary = PushSummary::default();
    if subscriptions.is_empty() {
        return Ok(summary);
    }
    let key = VapidKey::from_config(state.config())?;
    let body = payload.to_string().into_bytes();
    for s in &subscriptions {
        match send_one(state, &key, s, &body).await {
            Outcome::Delivered => {
                crate::metrics::push_message("delivered");
                repo::mark_sent(db, s.id).await?;
                summary.delivered += 1;
            }
            Outcome::Gone => {
                crate::metrics::push_message("gone");
                repo::delete_gone(db, s.id).await?;
                summary.removed += 1;
            }
            Outcome::Failed(why) => {
                crate::metrics::push_message("failed");
                // The endpoint is a capability URL: its id only, never the URL, goes to the log.
                tracing::warn!(subscription = %s.id, error = %why, "push message not delivered");
                summary.failed += 1;
            }
        }
    }
    Ok(summary)
}

async fn send_one(state: &AppState, key: &VapidKey, s: &repo::Stored, body: &[u8]) -> Outcome {
    match post(state, key, s, body).await {
        Ok(code) if (200..300).contains(&code) => Outcome::Delivered,
        Ok(404 | 410) => Outcome::Gone,
        Ok(code) => Outcome::Failed(format!("push service answered {code}")),
        Err(why) => Outcome::Failed(why),
    }
}

async fn post(
    state: &AppState,
    key: &VapidKey,
    s: &repo::Stored,
    body: &[u8],
) -> Result<u16, String> {
    let allow = state.config().webhook_allow_private_targets;
    // Checked again at every send: the name may resolve elsewhere since the subscription.
    let url =
        target::parse(&s.endpoint, allow).map_err(|r| format!("endpoint refused: {}", r.0))?;
    let addr = target::resolve(&url, allow)
        .await
        .map_err(|r| format!("endpoint refused: {}", r.0))?;
    let host = url.host_str().unwrap_or_default().to_owned();
    let ua_public = decode_key(&s.p256dh, 65)
        .and_then(|b| web_push_native::p256::PublicKey::from_sec1_bytes(&b).ok())
        .ok_or("stored p256dh is not a P-256 key")?;
    let auth = decode_key(&s.auth, 16).ok_or("stored auth is not 16 bytes")?;
    let uri: http::Uri = s.endpoint.parse().map_err(|_| "endpoint is not a URI")?;
    let request = web_push_native::WebPushBuilder::new(
        uri,
        ua_public,
        web_push_native::Auth::clone_from_slice(&auth),
    )
    .with_valid_duration(Duration::from_secs(TOKEN_SECONDS.unsigned_abs()))
    .build(body.to_vec())
    .map_err(|e| format!("encryption: {e}"))?;
    let origin = url.origin().ascii_serialization();
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let authorization = key.authorization(&origin, &state.config().vapid_subject, now);
    let client = worker::pinned_client(&host, addr, state.config().webhook_timeout)?;
    let (parts, payload) = request.into_parts();
    let mut req = client.post(url).header("authorization", authorization);
    for (name, value) in &parts.headers {
        // reqwest sets the length of the body itself; a second one would be a malformed request.
        if name != http::header::CONTENT_LENGTH {
            req = req.header(name.clone(), value.clone());
        }
    }
    let mut res = req
        .header("urgency", "normal")
        .body(payload)
        .send()
        .await
        .map_err(|e| {
            if e.is_timeout() {
                "timed out".to_owned()
            } else if e.is_connect() {
                "could not connect".to_owned()
            } else {
                "request failed".to_owned()
            }
        })?;
    let status = res.status().as_u16();
    // Drain a bounded answer so the connection ends cleanly; its content is not used.
    let mut read = 0usize;
    while read < RESPONSE_LIMIT {
        match res.chunk().await {
            Ok(Some(chunk)) => read += chunk.len(),
            Ok(None) | Err(_) => break,
        }
    }
    Ok(status)
}
