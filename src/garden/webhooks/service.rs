//! Webhook endpoints of a garden: admins create, list, change, delete them and rotate their
//! secret; every target is checked (no SSRF) before anything is stored.

use uuid::Uuid;

use super::model::{
    Deliveries, MAX_PER_GARDEN, NewWebhook, Webhook, WebhookList, WebhookPatch, WebhookWithSecret,
};
use super::repo::Maker;
use super::{repo, signing, target};
use crate::error::{AppError, ErrorDetail};
use crate::state::AppState;
use crate::tenancy::{TenantRecord, TenantTx};
use crate::values::json::Patch;

/// Deliveries a listing shows at most.
pub const DELIVERIES_MAX_LIMIT: i64 = 100;

fn parse_key(key: &str) -> Result<Uuid, AppError> {
    Uuid::parse_str(key).map_err(|_| AppError::not_found("webhook"))
}

/// 422 on `body.url` unless the target is an allowed one (form, then every address its name
/// resolves to).
async fn check_target(state: &AppState, url: &str) -> Result<(), AppError> {
    let allow = state.config().webhook_allow_private_targets;
    let refused = |why: target::Refused| {
        AppError::validation(vec![ErrorDetail::new("body.url", why.0, "value_error")])
    };
    let parsed = target::parse(url, allow).map_err(refused)?;
    target::resolve(&parsed, allow).await.map_err(refused)?;
    Ok(())
}

/// The secret sealed for storage (`auth::sealed`: `FERNET_KEY`, else the derived key).
pub fn seal(state: &AppState, secret: &[u8]) -> Result<String, AppError> {
    let cipher = crate::auth::sealed::with_fallback(state.config())
        .ok_or_else(|| AppError::internal("no key to seal webhook secrets with"))?;
    Ok(cipher.encrypt(secret))
}

/// Marks the garden as one the delivery worker looks into.
async fn register_garden(state: &AppState, tenant: &TenantRecord) -> Result<(), AppError> {
    sqlx::query(
        "INSERT INTO platform.webhook_gardens (tenant_id) VALUES ($1) ON CONFLICT DO NOTHING",
    )
    .bind(tenant.id)
    .execute(state.platform_pool())
    .await?;
    Ok(())
}

/// The person as a webhook's maker: its account and take-back epoch now.
async fn maker(state: &AppState, actor: Uuid) -> Result<Maker, AppError> {
    let epoch = crate::directory::grants::grants_epoch(state.platform_pool(), actor).await?;
    Ok(Maker {
        account: actor,
        epoch,
    })
}

/// A new endpoint; `actor` (a person: the route checks) becomes its maker, and the webhook
/// lives on that person's authority (`directory::grants`).
pub async fn create(
    state: &AppState,
    tenant: &TenantRecord,
    actor: Uuid,
    new: &NewWebhook,
) -> Result<WebhookWithSecret, AppError> {
    check_target(state, &new.url).await?;
    register_garden(state, tenant).await?;
    let maker = maker(state, actor).await?;
    let secret = signing::new_secret();
    let sealed = seal(state, &secret)?;
    let mut tx = TenantTx::begin(state, tenant).await?;
    if repo::count(&mut tx).await? >= MAX_PER_GARDEN {
        tx.rollback().await?;
        return Err(AppError::validation(vec![ErrorDetail::new(
            "body.url",
            format!("a garden has at most {MAX_PER_GARDEN} webhooks; delete one first"),
            "value_error",
        )]));
    }
    let webhook = repo::insert(
        &mut tx,
        Uuid::now_v7(),
        &new.url,
        &new.events,
        new.description.as_deref(),
        &sealed,
        maker,
    )
    .await?;
    tx.commit().await?;
    Ok(WebhookWithSecret {
        webhook,
        secret: signing::show_secret(&secret),
    })
}

pub async fn list(state: &AppState, tenant: &TenantRecord) -> Result<WebhookList, AppError> {
    let mut tx = TenantTx::read(state, tenant).await?;
    let items = repo::list(&mut tx).await?;
    tx.commit().await?;
    Ok(WebhookList { items })
}

pub async fn get(state: &AppState, tenant: &TenantRecord, key: &str) -> Result<Webhook, AppError> {
    let id = parse_key(key)?;
    let mut tx = TenantTx::read(state, tenant).await?;
    let found = repo::get(&mut tx, id).await?;
    tx.commit().await?;
    found.ok_or_else(|| AppError::not_found("webhook"))
}

/// Whether a change says where the garden's events go, or which (`url`, `events`, `enabled`):
/// a person's decision (the route refuses an API key), like creating the webhook.
pub fn patch_grants(patch: &WebhookPatch) -> bool {
    patch.url.is_some() || patch.events.is_some() || patch.enabled.is_some()
}

/// Changes an endpoint. The person who points it elsewhere (`url`) or enables it again after
/// it was disabled becomes its maker: the webhook lives on that person's authority from now on.
pub async fn update(
    state: &AppState,
    tenant: &TenantRecord,
    actor: Uuid,
    key: &str,
    patch: &WebhookPatch,
) -> Result<Webhook, AppError> {
    let id = parse_key(key)?;
    if let Some(url) = &patch.url {
        check_target(state, url).await?;
    }
    let actor = maker(state, actor).await?;
    let mut tx = TenantTx::begin(state, tenant).await?;
    let Some(now) = repo::get(&mut tx, id).await? else {
        tx.rollback().await?;
        return Err(AppError::not_found("webhook"));
    };
    let description = match &patch.description {
        Patch::Keep => now.description.clone(),
        Patch::Clear => None,
        Patch::Set(d) => Some(d.clone()),
    };
    let updated = repo::update(
        &mut tx,
        id,
        patch.url.as_deref().unwrap_or(&now.url),
        patch.events.as_deref().unwrap_or(&now.events),
        description.as_deref(),
        patch.enabled.unwrap_or(now.enabled),
        (patch.url.is_some() || (patch.enabled == Some(true) && !now.enabled)).then_some(actor),
    )
    .await?
    .ok_or_else(|| AppError::not_found("webhook"))?;
    tx.commit().await?;
    Ok(updated)
}

pub async fn delete(state: &AppState, tenant: &TenantRecord, key: &str) -> Result<(), AppError> {
    let id = parse_key(key)?;
    let mut tx = TenantTx::begin(state, tenant).await?;
    let gone = repo::delete(&mut tx, id).await?;
    tx.commit().await?;
    if gone {
        Ok(())
    } else {
        Err(AppError::not_found("webhook"))
    }
}

/// A new secret; the old one stops signing at once (deliveries still pending are signed with
/// the new one).
pub async fn rotate_secret(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
) -> Result<WebhookWithSecret, AppError> {
    let id = parse_key(key)?;
    let secret = signing::new_secret();
    let sealed = seal(state, &secret)?;
    let mut tx = TenantTx::begin(state, tenant).await?;
    if !repo::set_secret(&mut tx, id, &sealed).await? {
        tx.rollback().await?;
        return Err(AppError::not_found("webhook"));
    }
    let webhook = repo::get(&mut tx, id)
        .await?
        .ok_or_else(|| AppError::not_found("webhook"))?;
    tx.commit().await?;
    Ok(WebhookWithSecret {
        webhook,
        secret: signing::show_secret(&secret),
    })
}

/// The newest deliveries of an endpoint (at most `limit`), with their attempts.
pub async fn deliveries(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
    limit: i64,
) -> Result<Deliveries, AppError> {
    let id = parse_key(key)?;
    let mut tx = TenantTx::snapshot(state, tenant).await?;
    if repo::get(&mut tx, id).await?.is_none() {
        return Err(AppError::not_found("webhook"));
    }
    let items = repo::deliveries(&mut tx, id, limit.clamp(1, DELIVERIES_MAX_LIMIT)).await?;
    tx.commit().await?;
    Ok(Deliveries { items })
}

/// The garden's endpoints with their newest deliveries (the MCP read tool).
pub async fn overview(
    state: &AppState,
    tenant: &TenantRecord,
    per_webhook: i64,
) -> Result<Vec<(Webhook, Deliveries)>, AppError> {
    let mut tx = TenantTx::snapshot(state, tenant).await?;
    let hooks = repo::list(&mut tx).await?;
    let mut out = Vec::with_capacity(hooks.len());
    for hook in hooks {
        let items = repo::deliveries(&mut tx, hook.key, per_webhook).await?;
        out.push((hook, Deliveries { items }));
    }
    tx.commit().await?;
    Ok(out)
}
