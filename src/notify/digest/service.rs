//! Who gets a digest now, what it says, and queuing it exactly once per user and local day.

use sqlx::Row;
use uuid::Uuid;

use super::compose::{self, GardenDigest, Lang};
use super::token;
use crate::error::AppError;
use crate::garden::care::service as care;
use crate::garden::harvest::service as harvest;
use crate::garden::tasks::model::{TaskFilter, TaskState};
use crate::garden::tasks::service as tasks;
use crate::mail::OutgoingMail;
use crate::notify::push::service as push;
use crate::state::AppState;
use crate::tenancy::context::migrate_if_behind;
use crate::tenancy::registry::{self, TenantStatus};
use crate::values::page::PageRequest;

/// Most lines per section and garden.
const SECTION_MAX: i64 = 50;
const SECTION_MAX_USIZE: usize = 50;

/// A user as the digest sees them (preferences applied over the defaults).
#[derive(Debug, Clone)]
struct Recipient {
    id: Uuid,
    email: String,
    locale: String,
    timezone: String,
    digest: String,
    hour: i16,
    last_sent: Option<time::Date>,
    /// `notify_email`: the digest goes out as a mail.
    mail: bool,
    /// `notify_push`: the digest goes to the user's push subscriptions as well.
    push: bool,
}

/// What a run did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunSummary {
    /// Users looked at.
    pub considered: usize,
    /// Digests queued.
    pub sent: usize,
    /// Users with nothing to say today (recorded, no mail).
    pub empty: usize,
}

/// The user's local day, hour and weekday (Monday = 1) now; an unknown zone is UTC.
fn local_now(zone: &str) -> (time::Date, i8, i8) {
    let now = crate::platform::preferences::service::local_now(zone);
    let date = crate::platform::preferences::service::day_of(&now);
    (date, now.hour(), now.weekday().to_monday_one_offset())
}

/// Queues the digests that are due now: every user whose local hour has come (`ignore_hour`:
/// whatever the hour) and who had none today; `only`: just this address.
pub async fn send_due(
    state: &AppState,
    ignore_hour: bool,
    only: Option<&str>,
) -> Result<RunSummary, AppError> {
    let rows = sqlx::query(
        "SELECT u.id, u.email,
                coalesce(p.locale, u.locale) AS locale,
                coalesce(p.timezone, u.timezone) AS timezone,
                coalesce(p.notify_digest, 'daily') AS digest,
                coalesce(p.digest_hour, 7::smallint) AS hour,
                coalesce(p.notify_email, true) AS mail,
                coalesce(p.notify_push, false) AS push,
                (SELECT max(s.local_date) FROM platform.digest_sent s WHERE s.user_id = u.id)
                    AS last_sent
         FROM platform.users u
         LEFT JOIN platform.user_preferences p ON p.user_id = u.id
         WHERE u.account_type = 'user' AND u.is_active AND u.email IS NOT NULL
           AND (coalesce(p.notify_email, true) OR coalesce(p.notify_push, false))
           AND coalesce(p.notify_care_due, true)
           AND coalesce(p.notify_digest, 'daily') <> 'off'
           AND ($1::text IS NULL OR u.email = lower($1))
           AND EXISTS (SELECT 1 FROM platform.memberships m WHERE m.user_id = u.id)
         ORDER BY u.id",
    )
    .bind(only)
    .fetch_all(state.platform_pool())
    .await?;
    let mut summary = RunSummary::default();
    for r in rows {
        let who = Recipient {
            id: r.try_get("id")?,
            email: r.try_get("email")?,
            locale: r.try_get("locale")?,
            timezone: r.try_get("timezone")?,
            digest: r.try_get("digest")?,
            hour: r.try_get("hour")?,
            last_sent: r.try_get("last_sent")?,
            mail: r.try_get("mail")?,
            push: r.try_get("push")?,
        };
        let (day, hour, weekday) = local_now(&who.timezone);
        if who.last_sent.is_some_and(|d| d >= day)
            || (!ignore_hour && i16::from(hour) < who.hour)
            || (who.digest == "weekly" && weekday != 1 && !ignore_hour)
        {
            continue;
        }
        summary.considered += 1;
        match send_one(state, &who, day).await {
            Ok(Some(true)) => summary.sent += 1,
            Ok(Some(false)) => summary.empty += 1,
            Ok(None) => {}
            Err(err) => {
                tracing::warn!(user = %who.id, error = %err, "digest not sent");
            }
        }
    }
    if summary.sent > 0 {
        state.mail_wakeup();
    }
    Ok(summary)
}

/// Composes and records one user's digest. `Some(true)`: queued; `Some(false)`: nothing to
/// say (recorded); `None`: another sender recorded the day first.
async fn send_one(
    state: &AppState,
    who: &Recipient,
    day: time::Date,
) -> Result<Option<bool>, AppError> {
    let gardens = collect(state, who.id, day).await?;
    let items: usize = gardens.iter().map(GardenDigest::items).sum();
    let mut tx = state.platform_pool().begin().await?;
    let lang = Lang::of(&who.locale);
    let mail_id = if items > 0 && who.mail {
        let secret = state.config().jwt_secret_key.expose().as_bytes().to_vec();
        let frontend = &state.config().frontend_url;
        let link = format!(
            "{frontend}/digest/unsubscribe?token={}",
            token::issue(&secret, who.id)
        );
        let day_text = day.to_string();
        let (subject, body) = compose::render(lang, &day_text, &gardens, frontend, &link);
        Some(
            crate::mail::enqueue(
                &mut tx,
                &OutgoingMail {
                    recipient: who.email.clone(),
                    subject,
                    body_text: body,
                    kind: "digest".into(),
                },
            )
            .await?,
        )
    } else {
        None
    };
    let recorded = sqlx::query(
        "INSERT INTO platform.digest_sent (user_id, local_date, mail_id, items)
         VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
    )
    .bind(who.id)
    .bind(day)
    .bind(mail_id)
    .bind(i32::try_from(items).unwrap_or(i32::MAX))
    .execute(&mut *tx)
    .await?;
    if recorded.rows_affected() == 0 {
        // Another replica (or a CLI run) was first: its mail is the day's.
        tx.rollback().await?;
        return Ok(None);
    }
    tx.commit().await?;
    if mail_id.is_some() {
        crate::metrics::digest_mail();
    }
    if items > 0 && who.push {
        push_digest(state, who, day, lang, &gardens).await;
    }
    Ok(Some(items > 0))
}

/// The day's digest as a push message to each of the user's subscriptions, after the day is
/// recorded: a push service that is down loses that day's message (the mail, when on, still
/// went), rather than sending it twice. Failures are logged, never the run's error.
async fn push_digest(
    state: &AppState,
    who: &Recipient,
    day: time::Date,
    lang: Lang,
    gardens: &[GardenDigest],
) {
    let (title, body) = compose::push_summary(lang, gardens);
    let frontend = &state.config().frontend_url;
    // One garden: its page; several: the front end's start page.
    let url = match gardens.iter().filter(|g| g.items() > 0).collect::<Vec<_>>()[..] {
        [one] => format!("{frontend}/gardens/{}/today", one.slug),
        _ => format!("{frontend}/"),
    };
    let payload = serde_json::json!({
        "type": "digest",
        "day": day.to_string(),
        "title": title,
        "body": body,
        "url": url,
        "tag": format!("kultiva-digest-{day}"),
    });
    match push::send_to_user(state, who.id, &payload).await {
        Ok(s) if s.delivered + s.removed + s.failed > 0 => tracing::info!(
            user = %who.id,
            delivered = s.delivered,
            removed = s.removed,
            failed = s.failed,
            "digest push sent"
        ),
        Ok(_) => {}
        Err(err) => tracing::warn!(user = %who.id, error = %err, "digest push not sent"),
    }
}

/// What is due in each garden the user belongs to on `today`, the user's local day.
async fn collect(
    state: &AppState,
    user: Uuid,
    today: time::Date,
) -> Result<Vec<GardenDigest>, AppError> {
    let ids: Vec<Uuid> = sqlx::query_scalar(
        "SELECT m.tenant_id FROM platform.memberships m
         JOIN platform.tenants t ON t.id = m.tenant_id AND t.status = 'active'
         WHERE m.user_id = $1 ORDER BY t.name, t.id",
    )
    .bind(user)
    .fetch_all(state.platform_pool())
    .await?;
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        let Some(tenant) = registry::find_by_id(state.platform_pool(), id).await? else {
            continue;
        };
        if tenant.status != TenantStatus::Active {
            continue;
        }
        let tenant = migrate_if_behind(state, tenant).await?;
        let page = PageRequest {
            skip: 0,
            limit: SECTION_MAX,
        };
        let due =
            care::due_reminders_on(state, &tenant, "actionable", "urgency", page, today).await?;
        let filter = TaskFilter {
            status: None,
            plant: None,
            due_from: None,
            due_to: Some(today),
        };
        let open = tasks::list_tasks(state, &tenant, &filter, page).await?;
        let ending = harvest::intervals_ending_on(state, &tenant, today).await?;
        let ready = harvest::ready_plants(state, &tenant, SECTION_MAX_USIZE).await?;
        let open_alerts = crate::garden::alerts::service::open_alerts(state, &tenant).await?;
        out.push(GardenDigest {
            name: tenant.name.clone(),
            slug: tenant.slug.to_string(),
            overdue: due
                .overdue
                .unwrap_or_default()
                .into_iter()
                .map(|r| (r.plant_name, r.reminder_type, -r.days_until_due))
                .collect(),
            due_today: due
                .due_today
                .unwrap_or_default()
                .into_iter()
                .map(|r| (r.plant_name, r.reminder_type))
                .collect(),
            tasks: open
                .items
                .into_iter()
                .filter(|t| matches!(t.status, TaskState::Pending | TaskState::InProgress))
                .map(|t| (t.name, t.due_on.unwrap_or_default()))
                .collect(),
            intervals_ending: ending
                .into_iter()
                .take(SECTION_MAX_USIZE)
                .map(|(plant, i)| {
                    let what = i.active_ingredient.unwrap_or(i.treatment_name);
                    (plant, what, i.safe_on)
                })
                .collect(),
            ready: ready.into_iter().map(|r| r.plant_name).collect(),
            alerts: open_alerts
                .iter()
                .map(crate::garden::alerts::service::describe_parts)
                .collect(),
        });
    }
    Ok(out)
}

/// Turns the digest off for the user a valid token names; `false` for any other token.
pub async fn unsubscribe(state: &AppState, raw: &str) -> Result<bool, AppError> {
    let secret = state.config().jwt_secret_key.expose().as_bytes().to_vec();
    let Some(user) = token::verify(&secret, raw) else {
        return Ok(false);
    };
    let done = sqlx::query(
        "INSERT INTO platform.user_preferences (user_id, units, locale, timezone,
             experience_level, notify_email, notify_push, notify_care_due, notify_digest)
         SELECT u.id, 'metric', u.locale, u.timezone, 'beginner', true, false, true, 'off'
         FROM platform.users u WHERE u.id = $1
         ON CONFLICT (user_id) DO UPDATE SET notify_digest = 'off', updated_at = now()",
    )
    .bind(user)
    .execute(state.platform_pool())
    .await?;
    Ok(done.rows_affected() == 1)
}
