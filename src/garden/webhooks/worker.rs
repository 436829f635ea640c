//! The delivery worker: one background task per serving process. Every poll it looks into the
//! gardens that have webhooks (`platform.webhook_gardens`), leases the oldest due delivery of
//! each enabled endpoint (`FOR UPDATE SKIP LOCKED` and a lease, so replicas never send the same
//! attempt twice at once) and posts it:
//!
//! - headers `webhook-id` (`msg_<event>`, the same on every retry), `webhook-timestamp` (Unix
//!   seconds of this attempt) and `webhook-signature` (`v1,<base64 HMAC-SHA256>`);
//! - to the address the URL's name resolves to *now*, checked again (no SSRF through DNS
//!   rebinding) and pinned for the connection; no redirects; connect timeout 5 s, whole
//!   attempt `WEBHOOK_TIMEOUT_SECONDS`; at most 64 KiB of the answer is read;
//! - any 2xx is delivered; anything else is retried after the next step of
//!   `WEBHOOK_RETRY_SCHEDULE` (±20 % jitter); after the last step the delivery has failed,
//!   the endpoint is disabled and the garden's admins get a mail.

use std::time::{Duration, Instant};

use serde_json::json;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use uuid::Uuid;

use super::repo::{self, AttemptResult, Claimed, Outcome, StoredSecret};
use super::{signing, target};
use crate::mail::OutgoingMail;
use crate::state::AppState;
use crate::tenancy::context::migrate_if_behind;
use crate::tenancy::{TenantRecord, TenantTx, registry};

/// Deliveries leased per garden and round.
const BATCH: i64 = 20;
/// How long a lease holds a delivery (longer than an attempt can take).
const LEASE_SECONDS: f64 = 120.0;
/// Most of an answer read (the rest is not waited for).
pub const RESPONSE_LIMIT: usize = 64 * 1024;
/// Most of an answer kept for the deliveries listing.
const RESPONSE_KEPT: usize = 1024;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
const PURGE_EVERY: Duration = Duration::from_secs(3600);

pub struct WebhookWorker {
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

pub fn start(state: AppState) -> WebhookWorker {
    let (stop, stopped) = watch::channel(false);
    let task = tokio::spawn(run(state, stopped));
    WebhookWorker { stop, task }
}

impl WebhookWorker {
    /// Stops after the attempts in hand (at most one timeout).
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        let mut task = self.task;
        let wait = Duration::from_secs(35);
        if tokio::time::timeout(wait, &mut task).await.is_err() {
            tracing::warn!("webhook worker did not stop in time; its leases run out");
            task.abort();
        }
    }
}

async fn run(state: AppState, mut stopped: watch::Receiver<bool>) {
    let mut last_purge: Option<Instant> = None;
    let poll = state.config().webhook_poll;
    loop {
        if *stopped.borrow() {
            break;
        }
        let purge = last_purge.is_none_or(|at| at.elapsed() >= PURGE_EVERY);
        if purge {
            last_purge = Some(Instant::now());
        }
        if let Err(err) = run_once(&state, purge).await {
            tracing::warn!(error = %err, "webhook delivery round failed");
        }
        tokio::select! {
            () = tokio::time::sleep(poll) => {}
            changed = stopped.changed() => {
                if changed.is_err() {
                    break;
                }
            }
        }
    }
    tracing::info!("webhook delivery worker stopped");
}

/// One round over every garden with webhooks; returns the attempts made. The outbox's depth
/// (pending deliveries at the start of each garden's round) goes to `/metrics`.
pub async fn run_once(state: &AppState, purge: bool) -> Result<usize, sqlx::Error> {
    let ids: Vec<Uuid> = sqlx::query_scalar(
        "SELECT w.tenant_id FROM platform.webhook_gardens w
         JOIN platform.tenants t ON t.id = w.tenant_id AND t.status = 'active'",
    )
    .fetch_all(state.platform_pool())
    .await?;
    let mut attempts = 0;
    let mut pending = 0;
    for id in ids {
        let Some(tenant) = registry::find_by_id(state.platform_pool(), id).await? else {
            continue;
        };
        // A garden nobody has asked for since a deploy may be behind: its tables must have the
        // columns the worker reads (tenant/0021's sealed secrets) before it delivers.
        let tenant = match migrate_if_behind(state, tenant).await {
            Ok(tenant) => tenant,
            Err(err) => {
                tracing::warn!(tenant = %id, error = %err, "webhook garden could not be migrated");
                continue;
            }
        };
        match garden_round(state, &tenant, purge).await {
            Ok((n, waiting)) => {
                attempts += n;
                pending += waiting;
            }
            Err(err) => {
                tracing::warn!(tenant = %tenant.slug, error = %err, "webhook deliveries of a garden failed");
            }
        }
    }
    crate::metrics::webhook_outbox_pending(pending);
    Ok(attempts)
}

/// Attempts made, and the pending deliveries found at the start.
async fn garden_round(
    state: &AppState,
    tenant: &TenantRecord,
    purge: bool,
) -> Result<(usize, i64), Box<dyn std::error::Error + Send + Sync>> {
    let mut tx = TenantTx::begin(state, tenant).await?;
    if purge {
        repo::purge(&mut tx).await?;
    }
    seal_raw_secrets(state, &mut tx).await?;
    let pending = repo::pending_count(&mut tx).await?;
    tx.commit().await?;
    let mut total = 0;
    loop {
        let mut tx = TenantTx::begin(state, tenant).await?;
        let claimed = repo::claim_due(&mut tx, BATCH, LEASE_SECONDS).await?;
        tx.commit().await?;
        if claimed.is_empty() {
            return Ok((total, pending));
        }
        let claimed = with_standing_makers(state, tenant, claimed).await?;
        if claimed.is_empty() {
            continue;
        }
        total += claimed.len();
        // One attempt per endpoint at a time (each is its endpoint's oldest): concurrently.
        let results =
            futures_util::future::join_all(claimed.iter().map(|c| attempt(state, c))).await;
        for (c, result) in claimed.iter().zip(results) {
            finish(state, tenant, c, &result).await?;
        }
    }
}

/// The claimed deliveries whose webhook's maker still has the authority the webhook was made
/// with (`directory::grants::maker_verdict`). The others are not attempted: their makers'
/// webhooks are disabled with the reason and their pending deliveries failed, whatever missed
/// that at the take-back, removal or demotion (a garden that did not answer then, a webhook
/// made in the same instant, one from before the rule).
async fn with_standing_makers(
    state: &AppState,
    tenant: &TenantRecord,
    claimed: Vec<Claimed>,
) -> Result<Vec<Claimed>, Box<dyn std::error::Error + Send + Sync>> {
    use crate::directory::grants::{self, WebhookEnd};
    let mut makers: Vec<Uuid> = claimed.iter().filter_map(|c| c.maker).collect();
    makers.sort();
    makers.dedup();
    let standings = grants::maker_standings(state.platform_pool(), tenant.id, &makers).await?;
    let verdict = |c: &Claimed| match c.maker {
        None => Some(WebhookEnd::MakerGone),
        Some(m) => grants::maker_verdict(
            standings.iter().find(|(id, _)| *id == m).map(|(_, s)| *s),
            c.maker_epoch,
        ),
    };
    let refused: Vec<(Uuid, Option<Uuid>, WebhookEnd)> = claimed
        .iter()
        .filter_map(|c| verdict(c).map(|why| (c.webhook_id, c.maker, why)))
        .collect();
    if refused.is_empty() {
        return Ok(claimed);
    }
    let mut tx = TenantTx::begin(state, tenant).await?;
    let mut done: Vec<Option<Uuid>> = Vec::new();
    for (hook, maker, why) in &refused {
        tracing::warn!(tenant = %tenant.slug, webhook = %hook, reason = ?why,
            "webhook refused before delivery: its maker's authority ended");
        if !done.contains(maker) {
            grants::end_webhooks_in(&mut tx, *maker, *why).await?;
            done.push(*maker);
        }
    }
    tx.commit().await?;
    Ok(claimed
        .into_iter()
        .filter(|c| !refused.iter().any(|(hook, _, _)| *hook == c.webhook_id))
        .collect())
}

/// Seals the garden's secrets still stored raw (rows from before tenant migration 0021, which
/// cannot seal them: SQL has no key).
async fn seal_raw_secrets(
    state: &AppState,
    tx: &mut TenantTx,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    for (id, raw) in repo::raw_secrets(tx).await? {
        let sealed = super::service::seal(state, &raw)
            .map_err(|_| "a raw webhook secret could not be sealed")?;
        repo::seal_secret(tx, id, &sealed).await?;
    }
    Ok(())
}

/// The signing key of a claimed delivery.
fn signing_key(state: &AppState, c: &Claimed) -> Result<Vec<u8>, String> {
    match &c.secret {
        StoredSecret::Raw(raw) => Ok(raw.clone()),
        StoredSecret::Sealed(token) => crate::auth::sealed::with_fallback(state.config())
            .ok_or("no key to open webhook secrets with")?
            .decrypt(token)
            .map_err(|_| {
                "the signing secret does not open with FERNET_KEY or the derived key".into()
            }),
    }
}

/// The retry schedule's step after the `attempt`-th failure, jittered; `None`: give up.
fn retry_after(state: &AppState, attempt: i32) -> Option<f64> {
    let schedule = &state.config().webhook_retry_schedule;
    let step = usize::try_from(attempt).ok()?.checked_sub(1)?;
    let base = *schedule.get(step)?;
    let jitter: f64 = rand::random_range(0.8..1.2);
    Some(base * jitter)
}

async fn finish(
    state: &AppState,
    tenant: &TenantRecord,
    c: &Claimed,
    result: &AttemptResult,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let ok = result.error.is_none()
        && result
            .response_code
            .is_some_and(|s| (200..300).contains(&s));
    let outcome = if ok {
        Outcome::Delivered
    } else {
        match retry_after(state, c.attempt) {
            Some(s) => Outcome::RetryIn(s),
            None => Outcome::Failed,
        }
    };
    crate::metrics::webhook_delivery(match outcome {
        Outcome::Delivered => "delivered",
        Outcome::RetryIn(_) => "retry",
        Outcome::Failed => "failed",
    });
    let mut tx = TenantTx::begin(state, tenant).await?;
    repo::record_attempt(&mut tx, c, result, outcome).await?;
    let disabled = if outcome == Outcome::Failed {
        let reason = format!(
            "deliveries kept failing: event {} gave up after {} attempts ({})",
            repo::message_id(c.event_id),
            c.attempt,
            describe(result)
        );
        repo::disable(&mut tx, c.webhook_id, &reason).await?
    } else {
        false
    };
    tx.commit().await?;
    if disabled {
        tracing::warn!(tenant = %tenant.slug, webhook = %c.webhook_id, "webhook disabled after its last attempt");
        tell_admins(state, tenant, c).await?;
    }
    Ok(())
}

fn describe(result: &AttemptResult) -> String {
    match (&result.error, result.response_code) {
        (Some(e), _) => e.clone(),
        (None, Some(code)) => format!("HTTP {code}"),
        (None, None) => "no answer".into(),
    }
}

/// Mails every admin of the garden that an endpoint was disabled.
async fn tell_admins(
    state: &AppState,
    tenant: &TenantRecord,
    c: &Claimed,
) -> Result<(), sqlx::Error> {
    let admins: Vec<String> = sqlx::query_scalar(
        "SELECT u.email FROM platform.memberships m JOIN platform.users u ON u.id = m.user_id
         WHERE m.tenant_id = $1 AND m.role = 'admin' AND u.is_active AND u.email IS NOT NULL",
    )
    .bind(tenant.id)
    .fetch_all(state.platform_pool())
    .await?;
    if admins.is_empty() {
        return Ok(());
    }
    let host = url::Url::parse(&c.url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned))
        .unwrap_or_default();
    let link = format!(
        "{}/gardens/{}/settings/webhooks/{}",
        state.config().frontend_url,
        tenant.slug,
        c.webhook_id
    );
    let mut tx = state.platform_pool().begin().await?;
    for to in admins {
        let mail = OutgoingMail {
            recipient: to,
            subject: format!("Kultiva: a webhook of {} was disabled", tenant.name),
            body_text: format!(
                "Hello,\n\nthe webhook {} (to {host}) of the garden {} kept failing: its \
                 deliveries were retried for about a day and then given up, and the webhook \
                 was disabled. Events are kept for it; enable it again once the receiver \
                 answers with a 2xx status:\n\n{link}\n",
                c.webhook_id, tenant.name
            ),
            kind: "webhook_disabled".into(),
        };
        crate::mail::enqueue(&mut tx, &mail).await?;
    }
    tx.commit().await?;
    state.mail_wakeup();
    Ok(())
}

/// One attempt: resolve and check the target, sign, post, read a bounded answer.
async fn attempt(state: &AppState, c: &Claimed) -> AttemptResult {
    let started = Instant::now();
    let outcome = post(state, c).await;
    let duration_ms = i32::try_from(started.elapsed().as_millis()).unwrap_or(i32::MAX);
    match outcome {
        Ok((code, body)) => AttemptResult {
            duration_ms,
            response_code: Some(i32::from(code)),
            response_body: Some(body),
            error: None,
        },
        Err(error) => AttemptResult {
            duration_ms,
            response_code: None,
            response_body: None,
            error: Some(error),
        },
    }
}

fn tls_config() -> Option<rustls::ClientConfig> {
    static CONFIG: std::sync::OnceLock<Option<rustls::ClientConfig>> = std::sync::OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
            let roots = rustls::RootCertStore {
                roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
            };
            Some(
                rustls::ClientConfig::builder_with_provider(provider)
                    .with_safe_default_protocol_versions()
                    .ok()?
                    .with_root_certificates(roots)
                    .with_no_client_auth(),
            )
        })
        .clone()
}

/// An HTTP client for one checked target: it connects to `addr` only (whatever `host` resolves
/// to next), follows no redirect, uses no proxy, and gives up after `timeout`. Web Push
/// deliveries (`notify::push`) use it too.
pub fn pinned_client(
    host: &str,
    addr: std::net::SocketAddr,
    timeout: std::time::Duration,
) -> Result<reqwest::Client, String> {
    let tls = tls_config().ok_or("no TLS client configuration")?;
    reqwest::Client::builder()
        .use_preconfigured_tls(tls)
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(CONNECT_TIMEOUT)
        .timeout(timeout)
        .no_proxy()
        // The connection goes to the address just checked, whatever the name resolves to next.
        .resolve(host, addr)
        .build()
        .map_err(|e| format!("client: {e}"))
}

async fn post(state: &AppState, c: &Claimed) -> Result<(u16, String), String> {
    let allow = state.config().webhook_allow_private_targets;
    let url = target::parse(&c.url, allow).map_err(|r| format!("target refused: {}", r.0))?;
    let addr = target::resolve(&url, allow)
        .await
        .map_err(|r| format!("target refused: {}", r.0))?;
    let host = url.host_str().unwrap_or_default().to_owned();
    let client = pinned_client(&host, addr, state.config().webhook_timeout)?;
    let id = repo::message_id(c.event_id);
    let timestamp = time::OffsetDateTime::now_utc().unix_timestamp();
    let body =
        serde_json::to_vec(&c.payload).unwrap_or_else(|_| json!({}).to_string().into_bytes());
    let signature = signing::sign(&signing_key(state, c)?, &id, timestamp, &body);
    let mut res = client
        .post(url)
        .header("content-type", "application/json")
        .header("user-agent", "Kultiva-Webhooks/1")
        .header("webhook-id", &id)
        .header("webhook-timestamp", timestamp.to_string())
        .header("webhook-signature", signature)
        .body(body)
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
    let mut kept: Vec<u8> = Vec::new();
    let mut read = 0usize;
    while read < RESPONSE_LIMIT {
        match res.chunk().await {
            Ok(Some(chunk)) => {
                read += chunk.len();
                if kept.len() < RESPONSE_KEPT {
                    let room = RESPONSE_KEPT - kept.len();
                    kept.extend_from_slice(&chunk[..chunk.len().min(room)]);
                }
            }
            Ok(None) | Err(_) => break,
        }
    }
    Ok((status, String::from_utf8_lossy(&kept).into_owned()))
}
