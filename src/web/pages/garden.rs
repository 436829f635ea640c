//! The signed-in pages of a garden: the home (garden switcher) and **Today** (care due by
//! urgency, confirmed or snoozed in place; tasks due; plants ready to harvest; safety intervals
//! running with their end dates; the latest diary entries). Every list comes from the service
//! function the REST route and the tool call.

use maud::{Markup, html};
use salvo::prelude::*;
use time::Date;

use super::{PageCtx, csrf_refused, here, url_escape};
use crate::auth::Role;
use crate::error::AppError;
use crate::garden::care::service::{self as care, CareAction, Target};
use crate::garden::diary::model::EntryFilter;
use crate::garden::harvest::model::Readiness;
use crate::garden::tasks::model::Task;
use crate::http::pagination::PageRequest;
use crate::platform::access::{TenantCtx, resolve_for};
use crate::platform::tenants::model::Tenant;
use crate::web::forms::{Field, Posted, explain, parse};
use crate::web::i18n::Lang;
use crate::web::layout::{self, Frame, csrf_field, is_htmx, notice, see_other};
use crate::web::session::{self, CSRF_FIELD, WebSession};

pub fn router() -> Router {
    Router::with_path("g/{slug}")
        .get(today)
        .push(Router::with_path("care/{reminder_key}/{action}").post(care_action))
}

/// Hoop: the sign-in and registration pages' posts draw from the REST routes' budget of the
/// client address; over it, a page that says so (429) instead of the API's JSON record.
#[handler]
pub async fn auth_budget(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
    ctrl: &mut FlowCtrl,
) {
    crate::http::rate_limit::auth_limit
        .handle(req, depot, res, ctrl)
        .await;
    if ctrl.is_ceased() && res.status_code == Some(StatusCode::TOO_MANY_REQUESTS) {
        let lang = session::visitor_lang(req);
        let err = AppError::new(crate::error::ErrorCode::RateLimitExceeded, "auth budget");
        super::error_page(req, res, lang, &err, String::new());
    }
}

/// The first page query of everything: up to this many entries per list.
const LIST_LIMIT: i64 = 50;
/// Most plants Today lists as ready or under a safety interval.
const READINESS_MAX: usize = 1_000;

fn page_request(limit: i64) -> PageRequest {
    PageRequest { skip: 0, limit }
}

/// The signed-in person, or a redirect to the sign-in that returns here.
pub(super) fn signed_in<'a>(
    req: &Request,
    res: &mut Response,
    ctx: &'a PageCtx,
) -> Option<&'a WebSession> {
    if ctx.session.is_none() {
        let back = url_escape(&here(req));
        session::clear(res, ctx.state.config());
        see_other(req, res, &format!("/app/login?next={back}"));
    }
    ctx.session.as_ref()
}

pub(super) async fn gardens_of(ctx: &PageCtx, s: &WebSession) -> Result<Vec<Tenant>, AppError> {
    Ok(
        crate::platform::tenants::service::active_memberships(&ctx.state, &s.principal)
            .await?
            .into_iter()
            .map(|(t, role)| Tenant::from_record(&t, role))
            .collect(),
    )
}

/// `/app`: the person's gardens (straight into the only one).
#[handler]
pub async fn home(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    let Some(s) = signed_in(req, res, &ctx) else {
        return;
    };
    let lang = ctx.lang;
    let gardens = match gardens_of(&ctx, s).await {
        Ok(g) => g,
        Err(e) => return ctx.fail(req, res, e),
    };
    let joined = req.query::<String>("done").as_deref() == Some("joined");
    if gardens.len() == 1 && !joined {
        return see_other(req, res, &format!("/app/g/{}", gardens[0].slug));
    }
    let frame = Frame {
        lang,
        title: lang.t("gardens-title"),
        session: Some(s),
        gardens: &gardens,
        garden: None,
        here: here(req),
        csrf: s.csrf.clone(),
    };
    let body = html! {
        h1 { (lang.t("gardens-title")) }
        @if joined { (notice("ok", &lang.t("invitation-joined"))) }
        @if gardens.is_empty() {
            p.empty { (lang.t("gardens-none")) }
        } @else {
            section.card {
                ul.items {
                    @for g in &gardens {
                        li {
                            span.what { a href=(format!("/app/g/{}", g.slug)) { (g.name) } }
                            span.meta { (role_text(lang, g.role)) }
                        }
                    }
                }
            }
        }
    };
    layout::render(res, StatusCode::OK, layout::document(&frame, body));
}

pub(super) fn role_text(lang: Lang, role: Role) -> String {
    lang.t(match role {
        Role::Admin => "role-admin",
        Role::Grower => "role-grower",
        Role::Viewer => "role-viewer",
    })
}

pub(super) fn care_type_text(lang: Lang, kind: &str) -> String {
    match kind {
        "watering" => lang.t("care-watering"),
        "fertilizing" => lang.t("care-fertilizing"),
        "repotting" => lang.t("care-repotting"),
        "pruning" => lang.t("care-pruning"),
        "pest_check" => lang.t("care-pest-check"),
        "overwintering" => lang.t("care-overwintering"),
        other => other.to_owned(),
    }
}

/// Everything Today shows of the garden (the same for every member on one day), read before
/// any of it is written out; kept in the garden reads (`cache`) until the garden's next write.
struct TodayData {
    /// The garden lacks a site or a live plant: the first-steps card is read.
    new_garden: bool,
    overdue: Vec<crate::garden::care::model::Reminder>,
    due_today: Vec<crate::garden::care::model::Reminder>,
    tasks: Vec<Task>,
    readiness: Vec<Readiness>,
    diary: Vec<crate::garden::diary::model::EntrySummary>,
    alerts: Vec<crate::garden::alerts::repo::Named>,
}

/// Today's garden data from the garden reads, else read now. Kept only for gardens on the
/// primary server, whose writes the cache's listener hears (`cache`, "Garden reads"), and
/// for at most `GARDEN_READ_CACHE_SECONDS`.
async fn today_data(
    ctx: &PageCtx,
    garden: &TenantCtx,
    day: Date,
) -> Result<std::sync::Arc<TodayData>, AppError> {
    let max_age = ctx.state.config().garden_read_cache;
    if max_age.is_zero() || garden.tenant.placement != crate::config::PRIMARY_PLACEMENT {
        return read_today(ctx, garden, day).await.map(std::sync::Arc::new);
    }
    ctx.state
        .caches()
        .garden_read(
            garden.tenant.id,
            format!("today:{day}"),
            max_age,
            read_today(ctx, garden, day),
        )
        .await
}

async fn read_today(ctx: &PageCtx, garden: &TenantCtx, day: Date) -> Result<TodayData, AppError> {
    let state = &ctx.state;
    let tenant = &garden.tenant;
    // Due on the person's own day (their time zone), as the digest counts it.
    let due = care::due_reminders_on(
        state,
        tenant,
        "actionable",
        "urgency",
        page_request(LIST_LIMIT),
        day,
    )
    .await?;
    let tasks =
        crate::garden::tasks::service::open_tasks_due_by(state, tenant, day, LIST_LIMIT).await?;
    // Only what Today shows: plants ready to harvest and plants with an interval running.
    let readiness =
        crate::garden::harvest::service::watched_readiness(state, tenant, READINESS_MAX, |r| {
            r.ready || !r.safety_intervals.is_empty()
        })
        .await?;
    let diary = crate::garden::diary::service::list_entries(
        state,
        tenant,
        &EntryFilter::default(),
        page_request(5),
    )
    .await?
    .items;
    let alerts = crate::garden::alerts::service::open_alerts(state, tenant).await?;
    let new_garden = crate::garden::onboarding::service::lacks_site_or_plant(state, tenant).await?;
    Ok(TodayData {
        new_garden,
        overdue: due.overdue.unwrap_or_default(),
        due_today: due.due_today.unwrap_or_default(),
        tasks,
        readiness,
        diary,
        alerts,
    })
}

/// `/app/g/{slug}`: Today.
#[handler]
async fn today(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    let Some(s) = signed_in(req, res, &ctx) else {
        return;
    };
    let lang = ctx.lang;
    let slug = req.param::<String>("slug").unwrap_or_default();
    let news = match req.query::<String>("done").as_deref() {
        Some("confirmed") => Some(lang.t("care-confirmed")),
        Some("snoozed") => Some(lang.t("care-snoozed")),
        Some("kit") => Some(lang.t("start-kit-applied")),
        _ => None,
    };
    show_today(req, res, &ctx, s, &slug, StatusCode::OK, news, &[]).await;
}

/// Writes Today of the garden `slug`; `refused`: why the starter-kit form did not go through.
#[allow(clippy::too_many_arguments)]
pub(super) async fn show_today(
    req: &Request,
    res: &mut Response,
    ctx: &PageCtx,
    s: &WebSession,
    slug: &str,
    status: StatusCode,
    news: Option<String>,
    refused: &[String],
) {
    let lang = ctx.lang;
    let garden = match resolve_for(&ctx.state, &s.principal, slug).await {
        Ok(g) => g,
        Err(e) => return ctx.fail(req, res, e),
    };
    // Today's date where the person lives (their `timezone` preference).
    let day = crate::platform::preferences::service::day_of(
        &crate::platform::preferences::service::local_now(&s.prefs.timezone),
    );
    let (gardens, data) = match tokio::try_join!(gardens_of(ctx, s), today_data(ctx, &garden, day))
    {
        Ok(all) => all,
        Err(e) => return ctx.fail(req, res, e),
    };
    let first = if data.new_garden {
        match super::start::read(ctx, &garden, s.principal.user_id).await {
            Ok(f) => Some(f),
            Err(e) => return ctx.fail(req, res, e),
        }
    } else {
        None
    };
    let frame = Frame {
        lang,
        title: format!("{} · {}", lang.t("nav-today"), garden.tenant.name),
        session: Some(s),
        gardens: &gardens,
        garden: Some(slug),
        here: here(req),
        csrf: s.csrf.clone(),
    };
    // The card while the garden is new; a refusal of the kit form on its own once it is not.
    let start = match &first {
        Some(f) => Some(super::start::card(
            lang,
            slug,
            f,
            &s.csrf,
            garden.role,
            refused,
        )),
        None if !refused.is_empty() => Some(html! { @for l in refused { (notice("bad", l)) } }),
        None => None,
    };
    let body = today_body(
        lang,
        slug,
        &garden.tenant.name,
        day,
        &data,
        &s.csrf,
        garden.role >= Role::Grower,
        news.as_deref(),
        start,
    );
    layout::render(res, status, layout::document(&frame, body));
}

#[allow(clippy::too_many_arguments)]
fn today_body(
    lang: Lang,
    slug: &str,
    name: &str,
    day: Date,
    data: &TodayData,
    csrf: &str,
    can_write: bool,
    news: Option<&str>,
    start: Option<Markup>,
) -> Markup {
    let ready: Vec<&Readiness> = data.readiness.iter().filter(|r| r.ready).collect();
    let intervals: Vec<(&Readiness, &crate::garden::harvest::model::SafetyInterval)> = data
        .readiness
        .iter()
        .flat_map(|r| r.safety_intervals.iter().map(move |i| (r, i)))
        .collect();
    html! {
        h1 { (lang.t("nav-today")) " · " (name) }
        p.meta { (lang.date(day)) }
        @if let Some(text) = news { (notice("ok", text)) }
        @if let Some(card) = start { (card) }
        (alerts_card(lang, &data.alerts))
        section.card aria-labelledby="sec-care" {
            h2 id="sec-care" { (lang.t("today-care")) }
            @if data.overdue.is_empty() && data.due_today.is_empty() {
                p.empty { (lang.t("today-care-none")) }
            } @else {
                ul.items {
                    @for r in data.overdue.iter().chain(data.due_today.iter()) {
                        (care_item(lang, slug, r, csrf, can_write))
                    }
                }
            }
        }
        section.card aria-labelledby="sec-tasks" {
            h2 id="sec-tasks" { (lang.t("today-tasks")) }
            @if data.tasks.is_empty() {
                p.empty { (lang.t("today-tasks-none")) }
            } @else {
                ul.items {
                    @for t in &data.tasks {
                        li {
                            span.what { (t.name) }
                            @if let Some(due) = &t.due_on {
                                span.meta { (lang.t("due-on")) " " (lang.iso_date(due)) }
                            }
                        }
                    }
                }
            }
        }
        section.card aria-labelledby="sec-harvest" {
            h2 id="sec-harvest" { (lang.t("today-harvest")) }
            @if ready.is_empty() {
                p.empty { (lang.t("today-harvest-none")) }
            } @else {
                ul.items {
                    @for r in &ready {
                        li { span.what { (r.plant_name) } }
                    }
                }
            }
        }
        section.card aria-labelledby="sec-safety" {
            h2 id="sec-safety" { (lang.t("today-safety")) }
            @if intervals.is_empty() {
                p.empty { (lang.t("today-safety-none")) }
            } @else {
                ul.items {
                    @for (plant, i) in &intervals {
                        li {
                            span.what { (plant.plant_name) " · " (i.treatment_name) }
                            span.meta { (lang.t("safety-until")) " " (lang.iso_date(&i.last_blocked_day)) "; " (lang.t("safety-harvest-from")) " " (lang.iso_date(&i.safe_on))
                                @if let Some(source) = &i.interval_source { " (" (lang.t("safety-source")) ": " (source) ")" }
                            }
                        }
                    }
                }
            }
        }
        section.card aria-labelledby="sec-diary" {
            h2 id="sec-diary" { (lang.t("today-diary")) }
            @if data.diary.is_empty() {
                p.empty { (lang.t("today-diary-none")) }
            } @else {
                ul.items {
                    @for e in &data.diary {
                        li {
                            span.what { (e.title.clone().unwrap_or_else(|| crate::garden::diary::model::entry_type_str(e.entry_type).to_owned())) }
                            span.meta { (lang.iso_date(&e.entry_date)) }
                        }
                    }
                }
            }
        }
    }
}

/// The open environment alerts (the scan's), most recent first.
fn alerts_card(lang: Lang, alerts: &[crate::garden::alerts::repo::Named]) -> Markup {
    use crate::garden::alerts::model::AlertKind;
    let bound = |v: Option<f64>| v.map_or("…".to_owned(), |v| v.to_string());
    html! {
        section.card aria-labelledby="sec-alerts" {
            h2 id="sec-alerts" { (lang.t("today-alerts")) }
            @if alerts.is_empty() {
                p.empty { (lang.t("today-alerts-none")) }
            } @else {
                ul.items {
                    @for n in alerts {
                        @let a = &n.alert;
                        li {
                            span.what {
                                strong { (n.plant_name.as_deref().or(n.sensor_name.as_deref()).unwrap_or("-")) }
                                " · "
                                span.badge.overdue { (lang.t(match a.kind {
                                    AlertKind::OutOfRange => "alert-kind-out-of-range",
                                    AlertKind::SensorSilent => "alert-kind-sensor-silent",
                                    AlertKind::Frost => "alert-kind-frost",
                                })) }
                            }
                            span.meta {
                                (a.metric)
                                @if let Some(r) = &a.reading { " " (r.value) }
                                @if let Some(r) = &a.range {
                                    "; " (lang.t("alert-range")) " " (bound(r.min)) "–" (bound(r.max)) " (" (r.source) ")"
                                }
                                @if let Some(sensor) = &n.sensor_name { "; " (lang.t("alert-sensor")) " " (sensor) }
                                "; " (lang.t("alert-since")) " " (lang.date(a.opened_at.date()))
                            }
                        }
                    }
                }
            }
        }
    }
}

fn care_item(
    lang: Lang,
    slug: &str,
    r: &crate::garden::care::model::Reminder,
    csrf: &str,
    can_write: bool,
) -> Markup {
    let action = |what: &str| format!("/app/g/{slug}/care/{}/{what}", r.reminder_key);
    html! {
        li id=(format!("care-{}", r.reminder_key)) {
            span.what {
                strong { (r.plant_name) } " · " (care_type_text(lang, &r.reminder_type))
                " "
                @if r.days_until_due < 0 {
                    span.badge.overdue { (lang.t_with("care-overdue-days", &[("days", (-r.days_until_due).into())])) }
                } @else {
                    span.badge.due { (lang.t("care-due-today")) }
                }
            }
            @if can_write {
                span.actions {
                    form method="post" action=(action("confirm")) hx-post=(action("confirm")) hx-target="closest li" hx-swap="outerHTML" {
                        (csrf_field(csrf))
                        input type="hidden" name="plant_key" value=(r.plant_key.to_string());
                        button type="submit" { (lang.t("care-confirm")) }
                    }
                    form method="post" action=(action("snooze")) hx-post=(action("snooze")) hx-target="closest li" hx-swap="outerHTML" {
                        (csrf_field(csrf))
                        input type="hidden" name="plant_key" value=(r.plant_key.to_string());
                        input type="hidden" name="days" value="1";
                        button.secondary type="submit" { (lang.t("care-snooze")) }
                    }
                }
            }
        }
    }
}

/// Confirms or snoozes a reminder (`POST /app/g/{slug}/care/{reminder_key}/confirm|snooze`,
/// fields `plant_key`, `days` for a snooze): `care::act` as the REST route calls it. htmx gets
/// the list item back as it now reads; a plain form goes back to Today.
#[handler]
async fn care_action(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    let Some(s) = signed_in(req, res, &ctx) else {
        return;
    };
    let lang = ctx.lang;
    let posted = match Posted::read(req, ctx.state.config().max_body_bytes).await {
        Ok(p) => p,
        Err(e) => return ctx.fail(req, res, e),
    };
    if !s.csrf_ok(posted.get(CSRF_FIELD)) {
        return csrf_refused(req, res, lang);
    }
    let slug = req.param::<String>("slug").unwrap_or_default();
    let reminder_key = req.param::<String>("reminder_key").unwrap_or_default();
    let confirm = match req.param::<String>("action").as_deref() {
        Some("confirm") => true,
        Some("snooze") => false,
        _ => return ctx.fail(req, res, AppError::not_found("page")),
    };
    let outcome = async {
        let garden = resolve_for(&ctx.state, &s.principal, &slug).await?;
        garden.require(Role::Grower)?;
        let (plant_key, action) = if confirm {
            let body: crate::garden::care::model::Confirm =
                parse(posted.object(&[("plant_key", Field::Text)]))?;
            (body.plant_key, CareAction::Confirm { confirmed_on: None })
        } else {
            let body: crate::garden::care::model::Snooze =
                parse(posted.object(&[("plant_key", Field::Text), ("days", Field::Int)]))?;
            (body.plant_key, CareAction::Snooze { days: body.days })
        };
        care::act(
            &ctx.state,
            &garden.tenant,
            Target::Key {
                reminder_key: &reminder_key,
                plant_key,
            },
            &action,
            None,
            &format!("user:{}", s.principal.user_id),
            true,
        )
        .await
    }
    .await;
    match outcome {
        Ok(done) if is_htmx(req) => {
            let text = if confirm {
                lang.t_with(
                    "care-confirmed-next",
                    &[("date", lang.iso_date(&done.reminder.due_on).into())],
                )
            } else {
                lang.t_with(
                    "care-snoozed-next",
                    &[("date", lang.iso_date(&done.reminder.due_on).into())],
                )
            };
            let item = html! {
                li id=(format!("care-{reminder_key}")) {
                    span.what { strong { (done.reminder.plant_name) } " · " (care_type_text(lang, &done.reminder.reminder_type)) }
                    span.notice.ok role="status" { (text) }
                }
            };
            layout::render(res, StatusCode::OK, item);
        }
        Ok(_) => see_other(
            req,
            res,
            &format!(
                "/app/g/{slug}?done={}",
                if confirm { "confirmed" } else { "snoozed" }
            ),
        ),
        Err(err) if is_htmx(req) => {
            let lines = explain(lang, &err, &|_| None);
            let item = html! {
                li id=(format!("care-{reminder_key}")) {
                    @for l in &lines { (notice("bad", l)) }
                }
            };
            layout::render(res, err.code().status(), item);
        }
        Err(err) => ctx.fail(req, res, err),
    }
}
