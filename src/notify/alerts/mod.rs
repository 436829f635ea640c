//! Environment alerts beyond the garden's own records: the scan of every garden (each garden's
//! scan is `garden::alerts::scan`, which also writes the webhook events in its transaction) and
//! the Web Push of each opening to the members who turned push on; `job` runs it on a timer.

pub mod job;

use serde_json::json;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::error::AppError;
use crate::garden::alerts::model::AlertKind;
use crate::garden::alerts::repo::Named;
use crate::garden::alerts::scan::{ScanSummary, scan_garden};
use crate::state::AppState;
use crate::tenancy::TenantRecord;
use crate::tenancy::registry::{self, TenantStatus};

/// [`scan_garden`] for every active garden, then the Web Push of each opening; one garden
/// failing does not stop the others.
pub async fn scan_all(
    state: &AppState,
    now: OffsetDateTime,
) -> Result<(ScanSummary, Vec<(String, String)>), AppError> {
    let mut summary = ScanSummary::default();
    let mut failed = Vec::new();
    for tenant in registry::list(state.platform_pool()).await? {
        if tenant.status != TenantStatus::Active {
            continue;
        }
        summary.gardens += 1;
        match scan_garden(state, &tenant, now).await {
            Ok(c) => {
                summary.opened += c.opened.len();
                summary.resolved += c.resolved.len();
                if !c.opened.is_empty() {
                    push_openings(state, &tenant, &c.opened).await;
                }
            }
            Err(e) => failed.push((tenant.slug.as_str().to_owned(), e.to_string())),
        }
    }
    Ok((summary, failed))
}

/// Web Push of new alerts to the garden's members who turned push on (`notify_push`), after
/// the scan committed: a push service that is down loses the message (the list, the Today
/// page, the digest and the webhook still have the alert). Failures are logged.
pub async fn push_openings(state: &AppState, tenant: &TenantRecord, opened: &[Named]) {
    let users: Result<Vec<Uuid>, sqlx::Error> = sqlx::query_scalar(
        "SELECT m.user_id FROM platform.memberships m
         JOIN platform.user_preferences p ON p.user_id = m.user_id AND p.notify_push
         JOIN platform.users u ON u.id = m.user_id AND u.is_active
         WHERE m.tenant_id = $1 ORDER BY m.user_id",
    )
    .bind(tenant.id)
    .fetch_all(state.platform_pool())
    .await;
    let users = match users {
        Ok(u) => u,
        Err(err) => {
            tracing::warn!(garden = %tenant.slug, error = %err, "alert push: members not read");
            return;
        }
    };
    if users.is_empty() {
        return;
    }
    // Counts by kind only: a lock screen is not the place for plant names (as the digest's
    // push); the details are behind the link.
    let count = |k: AlertKind| opened.iter().filter(|n| n.alert.kind == k).count();
    let body: Vec<String> = [
        (AlertKind::OutOfRange, "out of range"),
        (AlertKind::SensorSilent, "sensor silent"),
        (AlertKind::Frost, "frost"),
    ]
    .into_iter()
    .filter(|(k, _)| count(*k) > 0)
    .map(|(k, words)| format!("{} {words}", count(k)))
    .collect();
    let frontend = &state.config().frontend_url;
    let payload = json!({
        "type": "alert",
        "title": format!("Kultiva: {} new alert(s)", opened.len()),
        "body": body.join(", "),
        "url": format!("{frontend}/gardens/{}/today", tenant.slug),
        "tag": format!("kultiva-alert-{}", opened[0].alert.key),
        "alert_keys": opened.iter().map(|n| n.alert.key).collect::<Vec<_>>(),
    });
    for user in users {
        if let Err(err) = crate::notify::push::service::send_to_user(state, user, &payload).await {
            tracing::warn!(user = %user, error = %err, "alert push not sent");
        }
    }
}
