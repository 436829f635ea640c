//! **Calendar** of a garden (`/app/g/{slug}/calendar[?month=YYYY-MM]`): a month of the
//! garden's events (the list `GET /calendar/events` answers, from the same service function),
//! the current month being the one of today where the person lives (their `timezone`
//! preference); and the person's iCal feed of the garden: created, rotated or revoked with the
//! feed service the REST routes call. The feed's address carries its secret: it is shown once,
//! in the answer to the create or rotate form, and never again.

use std::collections::BTreeMap;

use maud::{Markup, html};
use salvo::prelude::*;
use time::{Date, Duration, Month};

use super::PageCtx;
use super::scope::{GardenScope, done, local_day, open_garden, shown_on_form};
use crate::auth::Role;
use crate::error::{AppError, ErrorCode, ErrorDetail};
use crate::garden::calendar::feeds;
use crate::garden::calendar::model::{FeedSecret, FeedStatus, Window};
use crate::garden::calendar::service as calendar;
use crate::garden::contracts::CalendarEvent;
use crate::platform::preferences::service::{day_of, local_now};
use crate::web::forms::explain;
use crate::web::i18n::Lang;
use crate::web::layout::{csrf_field, notice, see_other};

pub fn router() -> Router {
    Router::with_path("g/{slug}/calendar")
        .get(calendar_page)
        .push(Router::with_path("feed/{action}").post(feed_action))
}

/// `YYYY-MM` (years 1900–2200, as the events route reads its days): the month's first day.
fn parse_month(raw: &str) -> Option<Date> {
    let (y, m) = raw.trim().split_once('-')?;
    if y.len() != 4 || m.len() != 2 {
        return None;
    }
    let year: i32 = y.parse().ok()?;
    let month: u8 = m.parse().ok()?;
    if !(1900..=2200).contains(&year) {
        return None;
    }
    Date::from_calendar_date(year, Month::try_from(month).ok()?, 1).ok()
}

fn month_param(first: Date) -> String {
    format!("{:04}-{:02}", first.year(), u8::from(first.month()))
}

fn first_of(day: Date) -> Date {
    day.replace_day(1).unwrap_or(day)
}

fn last_of(first: Date) -> Date {
    let next = first
        .checked_add(Duration::days(31))
        .map(first_of)
        .unwrap_or(first);
    next.previous_day().unwrap_or(first)
}

fn month_title(lang: Lang, first: Date) -> String {
    format!(
        "{} {}",
        lang.t(&format!("month-{}", u8::from(first.month()))),
        first.year()
    )
}

fn day_title(lang: Lang, day: Date) -> String {
    format!(
        "{}, {}",
        lang.t(&format!("weekday-{}", day.weekday().number_from_monday())),
        lang.date(day)
    )
}

fn kind_text(lang: Lang, kind: &str) -> String {
    match kind {
        "care_reminder" | "harvest" | "phase" | "sowing" | "task" | "treatment" => {
            lang.t(&format!("event-kind-{kind}"))
        }
        other => other.to_owned(),
    }
}

/// What the page shows besides the month.
#[derive(Default)]
struct Extras<'a> {
    news: Option<String>,
    errors: Vec<String>,
    secret: Option<&'a FeedSecret>,
}

#[handler]
async fn calendar_page(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    let Some(scope) = open_garden(req, res, &ctx).await else {
        return;
    };
    let lang = ctx.lang;
    let mut extras = Extras {
        news: match req.query::<String>("done").as_deref() {
            Some("revoked") => Some(lang.t("calendar-feed-revoked")),
            _ => None,
        },
        ..Extras::default()
    };
    let asked = req.query::<String>("month");
    let month = match asked.as_deref().map(parse_month) {
        Some(Some(first)) => Some(first),
        Some(None) => {
            // Not a month: this month, and a sentence that says so (nothing else depends on it).
            let err = AppError::validation(vec![ErrorDetail::new(
                "query.month",
                "must be a month YYYY-MM",
                "value_error",
            )]);
            extras.errors = explain(lang, &err, &|_| Some(lang.t("field-month")));
            None
        }
        None => None,
    };
    let status = if extras.errors.is_empty() {
        StatusCode::OK
    } else {
        StatusCode::UNPROCESSABLE_ENTITY
    };
    show(req, res, &ctx, &scope, month, status, &extras).await;
}

async fn show(
    req: &Request,
    res: &mut Response,
    ctx: &PageCtx,
    scope: &GardenScope<'_>,
    month: Option<Date>,
    status: StatusCode,
    extras: &Extras<'_>,
) {
    let lang = ctx.lang;
    let today = day_of(&local_now(&scope.s.prefs.timezone));
    let first = month.unwrap_or_else(|| first_of(today));
    let window = Window {
        from: first,
        to: last_of(first),
    };
    let tenant = &scope.garden.tenant;
    let read = tokio::try_join!(
        calendar::events(&ctx.state, tenant, window),
        feeds::status(&ctx.state, tenant.id, scope.s.principal.user_id),
    );
    let (events, feed) = match read {
        Ok(both) => both,
        Err(e) => return ctx.fail(req, res, e),
    };
    let public = ctx
        .state
        .config()
        .public_url
        .trim_end_matches('/')
        .to_owned();
    let body = body(lang, scope, window, today, &events, &feed, extras, &public);
    scope.page(
        req,
        res,
        lang,
        status,
        format!("{} · {}", lang.t("nav-calendar"), scope.garden.tenant.name),
        body,
    );
}

#[allow(clippy::too_many_arguments)]
fn body(
    lang: Lang,
    scope: &GardenScope<'_>,
    window: Window,
    today: Date,
    events: &[CalendarEvent],
    feed: &FeedStatus,
    extras: &Extras<'_>,
    public: &str,
) -> Markup {
    let base = format!("/app/g/{}/calendar", scope.slug);
    let csrf = &scope.s.csrf;
    let first = window.from;
    let prev = first_of(first.previous_day().unwrap_or(first));
    let next = window.to.next_day().unwrap_or(first);
    // Each event under its first day in the month (a span that began earlier: the 1st).
    let mut days: BTreeMap<Date, Vec<&CalendarEvent>> = BTreeMap::new();
    for e in events {
        days.entry(e.date.max(first)).or_default().push(e);
    }
    let grower = scope.garden.role >= Role::Grower;
    html! {
        h1 { (lang.t("nav-calendar")) " · " (scope.garden.tenant.name) }
        @if let Some(text) = &extras.news { (notice("ok", text)) }
        @for e in &extras.errors { (notice("bad", e)) }
        nav.month aria-label=(lang.t("calendar-months")) {
            a.button.secondary href=(format!("{base}?month={}", month_param(prev))) rel="prev" {
                "← " (month_title(lang, prev))
            }
            @if first != first_of(today) {
                a href=(base.clone()) { (lang.t("calendar-this-month")) }
            }
            a.button.secondary href=(format!("{base}?month={}", month_param(next))) rel="next" {
                (month_title(lang, next)) " →"
            }
        }
        section.card aria-labelledby="sec-month" {
            h2 id="sec-month" { (month_title(lang, first)) }
            @if days.is_empty() {
                p.empty { (lang.t("calendar-none")) }
            } @else {
                ol.days {
                    @for (day, list) in &days {
                        @let is_today = *day == today;
                        li id=(format!("day-{day}")) {
                            h3 {
                                @if is_today {
                                    span aria-current="date" { (day_title(lang, *day)) } " " span.badge.due { (lang.t("calendar-today")) }
                                } @else {
                                    (day_title(lang, *day))
                                }
                            }
                            ul.items {
                                @for e in list {
                                    li {
                                        span.what { span.badge { (kind_text(lang, e.kind)) } " " (e.title) }
                                        @if let Some(end) = e.end_date {
                                            span.meta { (lang.date(e.date)) " – " (lang.date(end)) }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        section.card aria-labelledby="sec-feed" {
            h2 id="sec-feed" { (lang.t("calendar-feed")) }
            p { (lang.t("calendar-feed-intro")) }
            @if let Some(secret) = extras.secret {
                @let url = format!("{public}{}", secret.path);
                div.secret role="status" {
                    p { strong { (lang.t("calendar-feed-shown-once")) } }
                    label for="feed-url" { (lang.t("calendar-feed-url")) }
                    input id="feed-url" type="text" readonly value=(url);
                }
            }
            @if feed.active {
                p.meta {
                    (lang.t("calendar-feed-active"))
                    @if let Some(at) = feed.rotated_at { " " (lang.t("calendar-feed-since")) " " (lang.date(local_day(scope.s, at))) }
                }
                div.actions {
                    @if grower {
                        form method="post" action=(format!("{base}/feed/rotate")) {
                            (csrf_field(csrf))
                            button type="submit" { (lang.t("calendar-feed-rotate")) }
                        }
                    }
                    form method="post" action=(format!("{base}/feed/revoke")) {
                        (csrf_field(csrf))
                        button.secondary type="submit" { (lang.t("calendar-feed-revoke")) }
                    }
                }
            } @else {
                p.meta { (lang.t("calendar-feed-none")) }
                @if grower {
                    form method="post" action=(format!("{base}/feed/create")) {
                        (csrf_field(csrf))
                        button type="submit" { (lang.t("calendar-feed-create")) }
                    }
                }
            }
        }
    }
}

/// `POST /app/g/{slug}/calendar/feed/create|rotate|revoke`. Creating and rotating need a
/// grower (the REST floor of a write), revoking is open to every member; a new address is
/// shown in the answer itself (never in a redirect's URL, which browsers and proxies keep).
#[handler]
async fn feed_action(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    let Some(scope) = open_garden(req, res, &ctx).await else {
        return;
    };
    let lang = ctx.lang;
    // The feed forms carry nothing but their CSRF value.
    let Some(_form) = ctx.form_of(req, res, scope.s).await else {
        return;
    };
    let state = &ctx.state;
    let tenant = scope.garden.tenant.id;
    let principal = &scope.s.principal;
    let outcome = match req.param::<String>("action").as_deref() {
        Some("create") => match scope.garden.require(Role::Grower) {
            Ok(()) => feeds::create(state, principal, tenant).await.map(Some),
            Err(e) => Err(e),
        },
        Some("rotate") => match scope.garden.require(Role::Grower) {
            Ok(()) => feeds::rotate(state, principal, tenant).await.map(Some),
            Err(e) => Err(e),
        },
        Some("revoke") => feeds::revoke(state, tenant, principal.user_id)
            .await
            .map(|()| None),
        _ => Err(AppError::not_found("page")),
    };
    match outcome {
        Ok(Some(secret)) => {
            let extras = Extras {
                news: Some(lang.t("calendar-feed-made")),
                secret: Some(&secret),
                ..Extras::default()
            };
            show(req, res, &ctx, &scope, None, StatusCode::OK, &extras).await;
        }
        Ok(None) => see_other(
            req,
            res,
            &done(&format!("/app/g/{}/calendar", scope.slug), "revoked"),
        ),
        Err(err) if shown_on_form(&err) => {
            let errors = if err.code() == ErrorCode::DuplicateEntry {
                vec![lang.t("calendar-feed-exists")]
            } else {
                explain(lang, &err, &|_| None)
            };
            let extras = Extras {
                errors,
                ..Extras::default()
            };
            show(req, res, &ctx, &scope, None, err.code().status(), &extras).await;
        }
        Err(err) => ctx.fail(req, res, err),
    }
}
