//! Use cases of alerts: the list, the open alerts around a plant or place (the environment
//! tool, the Today page, the digest), and delivering an opening (webhook event, Web Push).

use serde_json::{Value, json};
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use super::model::{Alert, AlertFilter, AlertKind, AlertState};
use super::repo::{self, Named};
use crate::error::{AppError, ErrorDetail};
use crate::state::AppState;
use crate::tenancy::{TenantRecord, TenantTx};
use crate::values::page::{Page, PageRequest};

pub const LIST_MAX_LIMIT: i64 = 200;
/// Resolved alerts stay in the list this long.
pub const RECENT_DAYS: i64 = 30;
/// Open alerts a summary (tool, page, digest) shows at most.
pub const AROUND_MAX: i64 = 50;

/// The list's filters from the query string; every bad one is its own detail.
pub fn parse_filter(state: Option<&str>, kind: Option<&str>) -> Result<AlertFilter, AppError> {
    let mut errors = Vec::new();
    let mut f = AlertFilter::default();
    if let Some(s) = state {
        f.state = AlertState::parse(s.trim());
        if f.state.is_none() {
            errors.push(ErrorDetail::new(
                "query.state",
                "must be one of: open, resolved",
                "value_error",
            ));
        }
    }
    if let Some(k) = kind {
        f.kind = AlertKind::parse(k.trim());
        if f.kind.is_none() {
            errors.push(ErrorDetail::new(
                "query.kind",
                format!("must be one of: {}", AlertKind::NAMES.join(", ")),
                "value_error",
            ));
        }
    }
    if errors.is_empty() {
        Ok(f)
    } else {
        Err(AppError::validation(errors))
    }
}

/// Open alerts first (newest first), then those resolved in the last 30 days.
pub async fn list_alerts(
    state: &AppState,
    tenant: &TenantRecord,
    filter: AlertFilter,
    page: PageRequest,
) -> Result<Page<Alert>, AppError> {
    let since = OffsetDateTime::now_utc() - Duration::days(RECENT_DAYS);
    let mut tx = TenantTx::read(state, tenant).await?;
    let (items, matched) = repo::list(&mut tx, filter, since, page).await?;
    let total = match matched {
        Some(n) => n,
        None => repo::count(&mut tx, filter, since).await?,
    };
    tx.commit().await?;
    Ok(Page::new(
        items.into_iter().map(|n| n.alert).collect(),
        total,
        page,
    ))
}

/// The open alerts around a plant, location or site (see `repo::open_around`), with names.
pub async fn open_around(
    state: &AppState,
    tenant: &TenantRecord,
    plants: &[Uuid],
    sensors: &[Uuid],
    locations: &[Uuid],
    sites: &[Uuid],
) -> Result<Vec<Named>, AppError> {
    let mut tx = TenantTx::read(state, tenant).await?;
    let found = repo::open_around(&mut tx, plants, sensors, locations, sites, AROUND_MAX).await?;
    tx.commit().await?;
    Ok(found)
}

/// Every open alert of the garden (at most [`AROUND_MAX`]), newest first, with names.
pub async fn open_alerts(state: &AppState, tenant: &TenantRecord) -> Result<Vec<Named>, AppError> {
    let mut tx = TenantTx::read(state, tenant).await?;
    let page = PageRequest {
        skip: 0,
        limit: AROUND_MAX,
    };
    let filter = AlertFilter {
        state: Some(AlertState::Open),
        kind: None,
    };
    let (items, _) = repo::list(&mut tx, filter, OffsetDateTime::now_utc(), page).await?;
    tx.commit().await?;
    Ok(items)
}

/// Who an alert is about (the plant, else the sensor) and what it says, as two parts, so that
/// a mail can quote the name (user text) apart from the service's words.
pub fn describe_parts(n: &Named) -> (String, String) {
    let a = &n.alert;
    let who = n
        .plant_name
        .as_deref()
        .or(n.sensor_name.as_deref())
        .unwrap_or("-")
        .to_owned();
    let what = match a.kind {
        AlertKind::SensorSilent => format!(
            "no reading for {} minutes",
            a.detail
                .get("silent_after_minutes")
                .and_then(Value::as_i64)
                .unwrap_or(0)
        ),
        AlertKind::Frost => format!(
            "frost night {}: forecast low {} °C (at or below {} °C)",
            a.detail.get("night").and_then(Value::as_str).unwrap_or("-"),
            a.reading.map_or("-".to_owned(), |r| r.value.to_string()),
            a.detail
                .get("threshold_c")
                .and_then(Value::as_f64)
                .map_or("-".to_owned(), |t| t.to_string()),
        ),
        _ => {
            let bound = |v: Option<f64>| v.map_or("…".to_owned(), |v| v.to_string());
            let range = a
                .range
                .as_ref()
                .map(|r| format!(" outside {}–{}", bound(r.min), bound(r.max)))
                .unwrap_or_default();
            let value = a
                .reading
                .map(|r| format!(" {}", r.value))
                .unwrap_or_default();
            format!("{}{value}{range}", a.metric)
        }
    };
    (who, what)
}

/// One line a person reads: "Tomato 1: ec_ms_cm 2.9 outside 1.8–2.2".
pub fn describe(n: &Named) -> String {
    let (who, what) = describe_parts(n);
    format!("{who}: {what}")
}

/// The webhook event of an opening or a resolution, in the scan's transaction.
pub async fn emit(
    tx: &mut TenantTx,
    tenant: &TenantRecord,
    event: &'static str,
    n: &Named,
) -> Result<(), AppError> {
    let a = &n.alert;
    let data = json!({
        "key": a.key,
        "kind": a.kind,
        "metric": a.metric,
        "plant_key": a.plant_key,
        "sensor_key": a.sensor_key,
        "location_key": a.location_key,
        "site_key": a.site_key,
        "tank_key": a.tank_key,
        "reading": a.reading,
        "range": a.range,
        "opened_at": a.opened_at.format(&time::format_description::well_known::Rfc3339).ok(),
        "resolved_at": a.resolved_at
            .and_then(|t| t.format(&time::format_description::well_known::Rfc3339).ok()),
    });
    crate::garden::webhooks::events::emit(tx, tenant, event, data).await?;
    Ok(())
}
