//! Per-member iCal feeds: a secret token in the URL (32 random bytes, shown once; only its
//! SHA-256 is stored and compared in constant time), rotatable and revocable. The feed is
//! served while the token is the member's current one, the member still belongs to the
//! garden and the account is active; anything else is the same 404. A feed is a standing
//! grant of read access: creating or rotating one needs a person (an access token, not an API
//! key), and it ends with the member's removal, deactivation, erasure or the account being
//! taken back (`directory::grants`). Any member, a viewer too, may revoke their own.

use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use super::model::{FeedSecret, FeedStatus, Window};
use super::{repo, service};
use crate::auth::Principal;
use crate::auth::secrets::{SecretHash, random_secret};
use crate::error::AppError;
use crate::rules::ical::{self, IcalEvent};
use crate::state::AppState;
use crate::tenancy::context::migrate_if_behind;
use crate::tenancy::registry::{self, TenantStatus};

/// Days before today the feed reaches back; it then runs one year ahead.
pub const FEED_DAYS_BACK: i64 = 30;

fn not_found() -> AppError {
    AppError::not_found("calendar feed")
}

/// The path a calendar app subscribes to.
pub fn feed_path(token: &str) -> String {
    format!("/api/v1/calendar/feeds/{token}.ics")
}

pub async fn status(state: &AppState, tenant: Uuid, user: Uuid) -> Result<FeedStatus, AppError> {
    let row = repo::feed_of(state.platform_pool(), tenant, user).await?;
    Ok(FeedStatus {
        active: row.is_some(),
        created_at: row.as_ref().map(|r| r.created_at),
        rotated_at: row.as_ref().map(|r| r.rotated_at),
    })
}

/// A new feed: 409 `DUPLICATE_ENTRY` when the member has one (rotate it instead).
pub async fn create(
    state: &AppState,
    principal: &Principal,
    tenant: Uuid,
) -> Result<FeedSecret, AppError> {
    principal.require_person("calendar feeds are created")?;
    let user = principal.user_id;
    let token = random_secret();
    let at = repo::insert_feed(state.platform_pool(), tenant, user, &SecretHash::of(&token))
        .await?
        .ok_or_else(|| {
            AppError::duplicate("you have a calendar feed in this garden; rotate it for a new link")
        })?;
    Ok(FeedSecret {
        path: feed_path(&token),
        token,
        rotated_at: at,
    })
}

/// A new token for the member's feed; the old one stops working at once (a member without a
/// feed gets one).
pub async fn rotate(
    state: &AppState,
    principal: &Principal,
    tenant: Uuid,
) -> Result<FeedSecret, AppError> {
    principal.require_person("calendar feeds are rotated")?;
    let user = principal.user_id;
    let token = random_secret();
    let at =
        repo::rotate_feed(state.platform_pool(), tenant, user, &SecretHash::of(&token)).await?;
    Ok(FeedSecret {
        path: feed_path(&token),
        token,
        rotated_at: at,
    })
}

/// Revokes the member's feed; revoking when there is none is the same success (the end state
/// is the same: no working link).
pub async fn revoke(state: &AppState, tenant: Uuid, user: Uuid) -> Result<(), AppError> {
    repo::delete_feed(state.platform_pool(), tenant, user).await?;
    Ok(())
}

/// The feed text of a presented token (with or without `.ics`), or 404.
pub async fn serve(state: &AppState, presented: &str) -> Result<String, AppError> {
    let token = presented.strip_suffix(".ics").unwrap_or(presented);
    // Every issued token is 43 URL-safe characters; nothing else can match.
    if token.len() != 43
        || !token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return Err(not_found());
    }
    let hash = SecretHash::of(token);
    let (tenant_id, stored) = repo::feed_by_hash(state.platform_pool(), &hash)
        .await?
        .ok_or_else(not_found)?;
    if !SecretHash::from_bytes(&stored).is_some_and(|s| s.matches(&hash)) {
        return Err(not_found());
    }
    let tenant = registry::find_by_id(state.platform_pool(), tenant_id)
        .await?
        .filter(|t| t.status == TenantStatus::Active)
        .ok_or_else(not_found)?;
    let tenant = migrate_if_behind(state, tenant).await?;
    let now = OffsetDateTime::now_utc();
    let today = now.date();
    let from = today
        .checked_sub(Duration::days(FEED_DAYS_BACK))
        .unwrap_or(today);
    let to = from
        .checked_add(Duration::days(super::model::MAX_WINDOW_DAYS - 1))
        .unwrap_or(today);
    let events = service::events(state, &tenant, Window { from, to }).await?;
    let ical: Vec<IcalEvent<'_>> = events
        .iter()
        .map(|e| IcalEvent {
            uid: &e.uid,
            summary: &e.title,
            description: e.detail.as_deref(),
            categories: e.kind,
            start: e.date,
            end: e.end_date,
        })
        .collect();
    Ok(ical::render(
        &format!("Kultiva: {}", tenant.name),
        &ical,
        now,
    ))
}
