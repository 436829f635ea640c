//! **Tanks** (`/app/g/{slug}/nutrition/tanks`): the garden's tanks with what they hold now and
//! when their maintenance is next due (overdue marked), a form creating one, and a tank's page
//! (`…/tanks/{key}`) with its fills and maintenance log, a form recording a fill (litres and
//! the water test: EC, pH, source, temperature) and one logging a maintenance. All of it through
//! `tanks::service`, the functions `POST /api/v1/t/{slug}/tanks…` call, read by the same body
//! readers (`NewTank`, `NewFill`, `MaintenanceBody`), so a page refuses what the API refuses (an
//! overflowing fill, a capacity out of range, a date in the future) with nothing written.
//! Viewers read; growers write (403 otherwise, as on REST).

use maud::{Markup, html};
use salvo::prelude::*;
use serde_json::{Map, Value};

use super::{num, nutrition_page};
use crate::auth::Role;
use crate::error::AppError;
use crate::garden::tanks::model::{
    FillType, MaintenanceBody, MaintenanceDue, MaintenanceEntry, MaintenanceType, NAME_MAX,
    NOTES_MAX, NewFill, NewTank, Tank, TankFill, TankKind, WaterSource,
};
use crate::garden::tanks::service as tanks;
use crate::values::page::PageRequest;
use crate::web::forms::{Field, Posted, explain, parse};
use crate::web::i18n::Lang;
use crate::web::layout::{add_card, notice, see_other};
use crate::web::pages::PageCtx;
use crate::web::pages::scope::{GardenScope, done, local_stamp, open_garden, shown_on_form};

pub fn router() -> Router {
    Router::with_path("tanks").get(list_page).post(create).push(
        Router::with_path("{key}")
            .get(tank_page)
            .push(Router::with_path("fills").post(fill))
            .push(Router::with_path("maintenance").post(maintain)),
    )
}

/// Fills and maintenance entries a tank's page lists (the newest; the rest through the API).
const RECENT: i64 = 50;

fn all(limit: i64) -> PageRequest {
    PageRequest { skip: 0, limit }
}

fn tanks_url(slug: &str) -> String {
    format!("/app/g/{slug}/nutrition/tanks")
}

fn tank_url(slug: &str, key: &str) -> String {
    format!("/app/g/{slug}/nutrition/tanks/{key}")
}

/// Field labels for refusal sentences: every form field is named as the REST body names it.
fn label(lang: Lang) -> impl Fn(&str) -> Option<String> {
    move |field: &str| {
        let name = field.strip_prefix("body.").unwrap_or(field);
        const KNOWN: &[&str] = &[
            "name",
            "kind",
            "volume_liters",
            "notes",
            "fill_type",
            "ec_ms",
            "ph",
            "water_source",
            "water_temp_c",
            "maintenance_type",
            "performed_at",
        ];
        KNOWN
            .contains(&name)
            .then(|| lang.t(&format!("nut-tank-{name}")))
    }
}

/// The refusal in the page's language, with the service's own reasons beneath.
fn refusal(lang: Lang, err: &AppError) -> Vec<String> {
    let mut lines = explain(lang, err, &label(lang));
    lines.extend(err.details().iter().map(|d| d.reason.clone()));
    lines
}

/// What was typed into one form of the page (its name) after a refusal.
type Typed<'a> = Option<(&'a str, &'a Posted)>;

fn typed_in<'a>(typed: Typed<'a>, form: &str) -> Option<&'a Posted> {
    typed.and_then(|(f, p)| (f == form).then_some(p))
}

/// The refusal's lines for the form that was sent, none for the others.
fn errors_in<'e>(typed: Typed<'_>, errors: &'e [String], form: &str) -> &'e [String] {
    if typed.is_some_and(|(f, _)| f == form) {
        errors
    } else {
        &[]
    }
}

fn value(posted: Option<&Posted>, name: &str) -> String {
    posted.and_then(|p| p.get(name)).unwrap_or("").to_owned()
}

/// A maintenance's due date and a badge for one due soon or overdue.
fn due_line(lang: Lang, m: &MaintenanceDue) -> Markup {
    html! {
        (lang.t(&format!("nut-tank-mt-{}", m.maintenance_type.as_str()))) ": "
        (lang.iso_date(&m.next_due_on))
        @match m.status.as_str() {
            "overdue" => { " " span.badge.overdue { (lang.t("nut-tank-status-overdue")) } }
            "due_soon" => { " " span.badge.due { (lang.t("nut-tank-status-due_soon")) } }
            _ => {}
        }
    }
}

/// Litres held of the capacity, with EC and pH when known.
fn state_line(lang: Lang, tank: &Tank) -> Markup {
    let s = &tank.state;
    html! {
        @match s.current_volume_liters {
            Some(v) => {
                (lang.t_with("nut-tank-holds", &[
                    ("now", num(lang, v).into()),
                    ("cap", num(lang, tank.volume_liters).into()),
                ]))
                @if let Some(p) = s.fill_percent { " (" (num(lang, p)) " %)" }
            }
            None => {
                (lang.t_with("nut-tank-capacity-of", &[("cap", num(lang, tank.volume_liters).into())]))
                " · " (lang.t("nut-tank-never-filled"))
            }
        }
        @if let Some(ec) = s.ec_ms { " · EC " (num(lang, ec)) " mS/cm" }
        @if let Some(ph) = s.ph { " · pH " (num(lang, ph)) }
    }
}

// ---------- the list ----------

#[handler]
async fn list_page(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    let Some(scope) = open_garden(req, res, &ctx).await else {
        return;
    };
    let news = (req.query::<String>("done").as_deref() == Some("created"))
        .then(|| ctx.lang.t("nut-tank-done-created"));
    show_list(req, res, &ctx, &scope, StatusCode::OK, news, &[], None).await;
}

#[allow(clippy::too_many_arguments)]
async fn show_list(
    req: &Request,
    res: &mut Response,
    ctx: &PageCtx,
    scope: &GardenScope<'_>,
    status: StatusCode,
    news: Option<String>,
    errors: &[String],
    typed: Option<&Posted>,
) {
    let listed =
        match tanks::list_tanks(&ctx.state, &scope.garden.tenant, all(tanks::LIST_MAX_LIMIT)).await
        {
            Ok(p) => p.items,
            Err(e) => return ctx.fail(req, res, e),
        };
    let lang = ctx.lang;
    let slug = &scope.slug;
    let tz = scope.s.prefs.timezone.as_str();
    let grower = scope.garden.role >= Role::Grower;
    let body = html! {
        @if let Some(text) = &news { (notice("ok", text)) }
        section.card aria-labelledby="sec-tank-list" {
            h2 id="sec-tank-list" { (lang.t("nut-tank-list")) " " span.meta { "(" (listed.len()) ")" } }
            @if listed.is_empty() {
                p.empty { (lang.t("nut-tank-none")) }
            } @else {
                ul.items id="tank-list" {
                    @for tank in &listed {
                        li {
                            span.what {
                                a href=(tank_url(slug, &tank.key.to_string())) { strong { (tank.name) } }
                                " · " (lang.t(&format!("nut-tank-kind-{}", tank.kind.as_str())))
                                br;
                                span.meta { (state_line(lang, tank)) }
                                @if let Some(f) = &tank.state.last_fill {
                                    br;
                                    span.meta {
                                        (lang.t("nut-tank-last-fill")) ": "
                                        (lang.t(&format!("nut-tank-fill-{}", f.fill_type.as_str())))
                                        " · " (local_stamp(lang, tz, f.filled_at))
                                    }
                                }
                                @for m in &tank.maintenance {
                                    br;
                                    span.meta { (due_line(lang, m)) }
                                }
                            }
                        }
                    }
                }
            }
        }
        @if grower {
            (create_form(lang, &tanks_url(slug), &scope.s.csrf, typed, errors))
        } @else {
            p.meta { (lang.t("nut-viewer-only")) }
        }
    };
    nutrition_page(
        req,
        res,
        ctx,
        scope,
        status,
        "tanks",
        lang.t("nut-tanks"),
        body,
    );
}

fn create_form(
    lang: Lang,
    action: &str,
    csrf: &str,
    typed: Option<&Posted>,
    errors: &[String],
) -> Markup {
    let t = |name: &str| value(typed, name);
    let kind = match t("kind").as_str() {
        "" => "nutrient".to_owned(),
        k => k.to_owned(),
    };
    add_card(
        "sec-tank-new",
        &lang.t("nut-tank-new"),
        !errors.is_empty(),
        errors,
        action,
        csrf,
        html! {
            label for="tank-name" { (lang.t("nut-tank-name")) }
            input id="tank-name" type="text" name="name" required maxlength=(NAME_MAX) value=(t("name"));
            label for="tank-kind" { (lang.t("nut-tank-kind")) }
            select id="tank-kind" name="kind" {
                @for k in TankKind::NAMES {
                    option value=(k) selected[*k == kind] { (lang.t(&format!("nut-tank-kind-{k}"))) }
                }
            }
            label for="tank-volume_liters" { (lang.t("nut-tank-volume_liters")) }
            input id="tank-volume_liters" type="text" inputmode="decimal" name="volume_liters" required value=(t("volume_liters"));
            label for="tank-notes" { (lang.t("nut-tank-notes")) }
            textarea id="tank-notes" name="notes" rows="2" maxlength=(NOTES_MAX) { (t("notes")) }
            button type="submit" { (lang.t("nut-tank-create")) }
        },
    )
}

/// `POST …/nutrition/tanks`: creates a tank (grower), read as `POST /tanks` reads its body.
#[handler]
async fn create(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    let Some(scope) = open_garden(req, res, &ctx).await else {
        return;
    };
    let Some(posted) = ctx.form_of(req, res, scope.s).await else {
        return;
    };
    let outcome = async {
        scope.garden.require(Role::Grower)?;
        let map = posted.object(&[
            ("name", Field::Text),
            ("kind", Field::Optional),
            ("volume_liters", Field::Number),
            ("notes", Field::Optional),
        ]);
        let new: NewTank = parse(map)?;
        tanks::create_tank(&ctx.state, &scope.garden.tenant, &new).await
    }
    .await;
    match outcome {
        Ok(tank) => see_other(
            req,
            res,
            &done(&tank_url(&scope.slug, &tank.key.to_string()), "created"),
        ),
        Err(err) if shown_on_form(&err) => {
            let errors = refusal(ctx.lang, &err);
            let status = err.code().status();
            show_list(req, res, &ctx, &scope, status, None, &errors, Some(&posted)).await;
        }
        Err(err) => ctx.fail(req, res, err),
    }
}

// ---------- a tank ----------

#[handler]
async fn tank_page(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    let Some(scope) = open_garden(req, res, &ctx).await else {
        return;
    };
    let news = req.query::<String>("done").and_then(|d| match d.as_str() {
        "created" => Some(ctx.lang.t("nut-tank-done-created")),
        "filled" => Some(ctx.lang.t("nut-tank-done-filled")),
        "maintained" => Some(ctx.lang.t("nut-tank-done-maintained")),
        _ => None,
    });
    show_tank(req, res, &ctx, &scope, StatusCode::OK, news, &[], None).await;
}

#[allow(clippy::too_many_arguments)]
async fn show_tank(
    req: &Request,
    res: &mut Response,
    ctx: &PageCtx,
    scope: &GardenScope<'_>,
    status: StatusCode,
    news: Option<String>,
    errors: &[String],
    typed: Typed<'_>,
) {
    let key = req.param::<String>("key").unwrap_or_default();
    let (state, tenant) = (&ctx.state, &scope.garden.tenant);
    let read = async {
        let tank = tanks::get_tank(state, tenant, &key).await?;
        let fills = tanks::list_fills(state, tenant, &key, all(RECENT)).await?;
        let log = tanks::list_maintenance(state, tenant, &key, all(RECENT)).await?;
        Ok::<_, AppError>((tank, fills.items, log.items))
    };
    let (tank, fills, log) = match read.await {
        Ok(r) => r,
        Err(e) => return ctx.fail(req, res, e),
    };
    let lang = ctx.lang;
    let tz = scope.s.prefs.timezone.as_str();
    let grower = scope.garden.role >= Role::Grower;
    let base = tank_url(&scope.slug, &tank.key.to_string());
    let csrf = &scope.s.csrf;
    let body = html! {
        h2 { (tank.name) }
        @if let Some(text) = &news { (notice("ok", text)) }
        (facts(lang, tz, &tank))
        section.card aria-labelledby="sec-tank-due" {
            h2 id="sec-tank-due" { (lang.t("nut-tank-due")) }
            @if tank.maintenance.is_empty() {
                p.empty { (lang.t("nut-tank-due-none")) }
            } @else {
                ul.items id="tank-due" {
                    @for m in &tank.maintenance {
                        li { span.what { (due_line(lang, m))
                            br;
                            span.meta {
                                (lang.t_with("nut-tank-every", &[("days", m.interval_days.into())]))
                                " · " (lang.t("nut-tank-last-done")) ": "
                                @match m.last_performed_at {
                                    Some(at) => { (local_stamp(lang, tz, at)) }
                                    None => { (lang.t("nut-tank-never")) }
                                }
                            }
                        } }
                    }
                }
            }
        }
        (fill_list(lang, tz, &fills))
        (log_list(lang, tz, &log))
        @if grower {
            (fill_form(lang, &format!("{base}/fills"), csrf, typed_in(typed, "fill"), errors_in(typed, errors, "fill")))
            (maintenance_form(lang, &format!("{base}/maintenance"), csrf, typed_in(typed, "maintenance"), errors_in(typed, errors, "maintenance")))
        } @else {
            p.meta { (lang.t("nut-viewer-only")) }
        }
        p { a href=(tanks_url(&scope.slug)) { (lang.t("nut-tank-back")) } }
    };
    nutrition_page(
        req,
        res,
        ctx,
        scope,
        status,
        "tanks",
        lang.t("nut-tanks"),
        body,
    );
}

fn facts(lang: Lang, tz: &str, tank: &Tank) -> Markup {
    let s = &tank.state;
    html! {
        section.card aria-labelledby="sec-tank-facts" {
            h2 id="sec-tank-facts" { (lang.t("nut-tank-facts")) }
            dl.facts {
                dt { (lang.t("nut-tank-kind")) }
                dd { (lang.t(&format!("nut-tank-kind-{}", tank.kind.as_str()))) }
                dt { (lang.t("nut-tank-volume_liters")) }
                dd { (num(lang, tank.volume_liters)) " L" }
                dt { (lang.t("nut-tank-now")) }
                dd id="tank-state" { (state_line(lang, tank)) }
                @if let Some(days) = s.age_days {
                    dt { (lang.t("nut-tank-age")) }
                    dd { (lang.t_with("nut-tank-age-days", &[("days", days.into())])) }
                }
                @if let Some(f) = &s.last_fill {
                    dt { (lang.t("nut-tank-last-fill")) }
                    dd { (local_stamp(lang, tz, f.filled_at)) }
                }
                @if let Some(n) = &tank.notes {
                    dt { (lang.t("nut-tank-notes")) }
                    dd { (n) }
                }
            }
        }
    }
}

fn fill_list(lang: Lang, tz: &str, fills: &[TankFill]) -> Markup {
    html! {
        section.card aria-labelledby="sec-tank-fills" {
            h2 id="sec-tank-fills" { (lang.t("nut-tank-fills")) }
            @if fills.is_empty() {
                p.empty { (lang.t("nut-tank-fills-none")) }
            } @else {
                ul.items id="tank-fills" {
                    @for f in fills {
                        li { span.what {
                            strong { (lang.t(&format!("nut-tank-fill-{}", f.fill_type.as_str()))) }
                            " · " (num(lang, f.volume_liters)) " L → " (num(lang, f.volume_after_liters)) " L"
                            br;
                            span.meta {
                                (local_stamp(lang, tz, f.filled_at))
                                @if let Some(ec) = f.ec_ms { " · EC " (num(lang, ec)) " mS/cm" }
                                @if let Some(ph) = f.ph { " · pH " (num(lang, ph)) }
                                @if let Some(w) = f.water_source { " · " (lang.t(&format!("nut-tank-src-{}", w.as_str()))) }
                                @if let Some(c) = f.water_temp_c { " · " (num(lang, c)) " °C" }
                            }
                            @if let Some(n) = &f.notes { br; span.meta { (n) } }
                        } }
                    }
                }
            }
        }
    }
}

fn log_list(lang: Lang, tz: &str, log: &[MaintenanceEntry]) -> Markup {
    html! {
        section.card aria-labelledby="sec-tank-log" {
            h2 id="sec-tank-log" { (lang.t("nut-tank-log")) }
            @if log.is_empty() {
                p.empty { (lang.t("nut-tank-log-none")) }
            } @else {
                ul.items id="tank-log" {
                    @for m in log {
                        li { span.what {
                            strong { (lang.t(&format!("nut-tank-mt-{}", m.maintenance_type.as_str()))) }
                            " · " (local_stamp(lang, tz, m.performed_at))
                            @if let Some(n) = &m.notes { br; span.meta { (n) } }
                        } }
                    }
                }
            }
        }
    }
}

fn fill_form(
    lang: Lang,
    action: &str,
    csrf: &str,
    typed: Option<&Posted>,
    errors: &[String],
) -> Markup {
    let t = |name: &str| value(typed, name);
    let fill_type = match t("fill_type").as_str() {
        "" => "full_change".to_owned(),
        f => f.to_owned(),
    };
    add_card(
        "sec-tank-fill",
        &lang.t("nut-tank-fill-new"),
        !errors.is_empty(),
        errors,
        action,
        csrf,
        html! {
            label for="fill-fill_type" { (lang.t("nut-tank-fill_type")) }
            select id="fill-fill_type" name="fill_type" {
                @for f in FillType::NAMES {
                    option value=(f) selected[*f == fill_type] { (lang.t(&format!("nut-tank-fill-{f}"))) }
                }
            }
            @for n in ["volume_liters", "ec_ms", "ph", "water_temp_c"] {
                label for=(format!("fill-{n}")) { (lang.t(&format!("nut-tank-fill-field-{n}"))) }
                input id=(format!("fill-{n}")) type="text" inputmode="decimal" name=(n) value=(t(n));
            }
            label for="fill-water_source" { (lang.t("nut-tank-water_source")) }
            select id="fill-water_source" name="water_source" {
                option value="" { (lang.t("nut-tank-src-none")) }
                @for w in WaterSource::NAMES {
                    option value=(w) selected[t("water_source") == *w] { (lang.t(&format!("nut-tank-src-{w}"))) }
                }
            }
            label for="fill-notes" { (lang.t("nut-tank-notes")) }
            textarea id="fill-notes" name="notes" rows="2" maxlength=(NOTES_MAX) { (t("notes")) }
            button type="submit" { (lang.t("nut-tank-fill-record")) }
        },
    )
}

fn maintenance_form(
    lang: Lang,
    action: &str,
    csrf: &str,
    typed: Option<&Posted>,
    errors: &[String],
) -> Markup {
    let t = |name: &str| value(typed, name);
    add_card(
        "sec-tank-maintain",
        &lang.t("nut-tank-maintain"),
        !errors.is_empty(),
        errors,
        action,
        csrf,
        html! {
            label for="mt-maintenance_type" { (lang.t("nut-tank-maintenance_type")) }
            select id="mt-maintenance_type" name="maintenance_type" {
                @for m in MaintenanceType::NAMES {
                    option value=(m) selected[t("maintenance_type") == *m] { (lang.t(&format!("nut-tank-mt-{m}"))) }
                }
            }
            label for="mt-performed_on" { (lang.t("nut-tank-performed_on")) }
            input id="mt-performed_on" type="date" name="performed_on" value=(t("performed_on"));
            label for="mt-notes" { (lang.t("nut-tank-notes")) }
            textarea id="mt-notes" name="notes" rows="2" maxlength=(NOTES_MAX) { (t("notes")) }
            button type="submit" { (lang.t("nut-tank-maintain-log")) }
        },
    )
}

/// `POST …/tanks/{key}/fills`: a fill, top-up or adjustment (grower), as `POST …/fills`.
#[handler]
async fn fill(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    let Some(scope) = open_garden(req, res, &ctx).await else {
        return;
    };
    let Some(posted) = ctx.form_of(req, res, scope.s).await else {
        return;
    };
    let key = req.param::<String>("key").unwrap_or_default();
    let actor = format!("user:{}", scope.s.principal.user_id);
    let outcome = async {
        scope.garden.require(Role::Grower)?;
        let map = posted.object(&[
            ("fill_type", Field::Optional),
            ("volume_liters", Field::Number),
            ("ec_ms", Field::Number),
            ("ph", Field::Number),
            ("water_source", Field::Optional),
            ("water_temp_c", Field::Number),
            ("notes", Field::Optional),
        ]);
        let new: NewFill = parse(map)?;
        tanks::fill_tank(&ctx.state, &scope.garden.tenant, &key, &new, &actor).await
    }
    .await;
    answer(
        req,
        res,
        &ctx,
        &scope,
        outcome.map(|t| t.key),
        "fill",
        "filled",
        &posted,
    )
    .await;
}

/// The day a maintenance was done as the REST body's `performed_at`: noon UTC of that day
/// (a date input has no time), or now for today so a morning entry is not "in the future".
/// Empty: absent (now). Not a date: passed on as typed, refused by the reader.
fn performed_at(raw: &str) -> Option<Value> {
    let raw = raw.trim();
    if raw.is_empty() {
        return None;
    }
    let format = time::macros::format_description!("[year]-[month]-[day]");
    let Ok(day) = time::Date::parse(raw, &format) else {
        return Some(Value::String(raw.to_owned()));
    };
    if day == time::OffsetDateTime::now_utc().date() {
        return None;
    }
    Some(Value::String(format!("{raw}T12:00:00Z")))
}

/// `POST …/tanks/{key}/maintenance`: logs a maintenance (grower), as `POST …/maintenance`.
#[handler]
async fn maintain(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    let Some(scope) = open_garden(req, res, &ctx).await else {
        return;
    };
    let Some(posted) = ctx.form_of(req, res, scope.s).await else {
        return;
    };
    let key = req.param::<String>("key").unwrap_or_default();
    let actor = format!("user:{}", scope.s.principal.user_id);
    let outcome = async {
        scope.garden.require(Role::Grower)?;
        let mut map: Map<String, Value> = posted.object(&[
            ("maintenance_type", Field::Optional),
            ("notes", Field::Optional),
        ]);
        if let Some(at) = performed_at(posted.get("performed_on").unwrap_or("")) {
            map.insert("performed_at".to_owned(), at);
        }
        let body: MaintenanceBody = parse(map)?;
        tanks::log_maintenance(&ctx.state, &scope.garden.tenant, &key, &body, &actor).await
    }
    .await;
    let outcome = outcome.map(|e| e.tank_key);
    answer(
        req,
        res,
        &ctx,
        &scope,
        outcome,
        "maintenance",
        "maintained",
        &posted,
    )
    .await;
}

/// After a tank form: back on the tank's page (POST-redirect-GET), or the form again with the
/// refusal, or the error page (not found, not allowed).
#[allow(clippy::too_many_arguments)]
async fn answer(
    req: &Request,
    res: &mut Response,
    ctx: &PageCtx,
    scope: &GardenScope<'_>,
    outcome: Result<uuid::Uuid, AppError>,
    form: &str,
    news: &str,
    posted: &Posted,
) {
    match outcome {
        Ok(key) => see_other(
            req,
            res,
            &done(&tank_url(&scope.slug, &key.to_string()), news),
        ),
        Err(err) if shown_on_form(&err) => {
            let errors = refusal(ctx.lang, &err);
            let status = err.code().status();
            show_tank(
                req,
                res,
                ctx,
                scope,
                status,
                None,
                &errors,
                Some((form, posted)),
            )
            .await;
        }
        Err(err) => ctx.fail(req, res, err),
    }
}
