//! **Planting runs** of a garden (`/app/g/{slug}/runs`): the list with a form for a new run,
//! and a run's page (`/app/g/{slug}/runs/{key}`) with its plants, plants per phase, the status
//! changes the run allows now and a form adding the garden's plants that belong to no run.
//! Every form posts to the service function the REST route calls (grower role) and comes back
//! (POST-redirect-GET); a refusal (`INVALID_RUN_STATE`, a status change not allowed) is said
//! plainly on the page, nothing written. Viewers see the runs without forms.

use maud::{Markup, html};
use salvo::prelude::*;
use serde_json::{Map, Value};

use super::PageCtx;
use super::scope::{GardenScope, done, open_garden, shown_on_form};
use crate::auth::Role;
use crate::error::{AppError, ErrorCode};
use crate::garden::places::model::Location;
use crate::garden::places::repo::LocationFilter;
use crate::garden::plants::model::PlantSummary;
use crate::garden::plants::repo::Filter;
use crate::garden::runs::model::{
    AddPlantsBody, BATCH_MAX, NewRun, Run, RunDetail, RunState, RunType, StatusBody,
};
use crate::garden::runs::service::{self as runs, LIST_MAX_LIMIT};
use crate::values::page::PageRequest;
use crate::web::forms::{Field, Posted, explain, parse};
use crate::web::i18n::Lang;
use crate::web::layout::{add_card, csrf_field, notice, refused, see_other};

pub fn router() -> Router {
    Router::with_path("g/{slug}/runs")
        .get(list_page)
        .post(create)
        .push(
            Router::with_path("{key}")
                .get(run_page)
                .push(Router::with_path("status").post(change))
                .push(Router::with_path("plants").post(add_plants)),
        )
}

/// Plants and locations the forms offer.
const CHOICES_MAX: i64 = 200;

fn all(limit: i64) -> PageRequest {
    PageRequest { skip: 0, limit }
}

fn state_str(s: RunState) -> &'static str {
    match s {
        RunState::Planned => "planned",
        RunState::Active => "active",
        RunState::Harvesting => "harvesting",
        RunState::Completed => "completed",
        RunState::Cancelled => "cancelled",
    }
}

fn state_text(lang: Lang, s: RunState) -> String {
    lang.t(&format!("run-status-{}", state_str(s)))
}

fn type_text(lang: Lang, t: RunType) -> String {
    lang.t(&format!("run-type-{}", t.as_str()))
}

/// Field labels of the forms, for error sentences.
fn label(lang: Lang) -> impl Fn(&str) -> Option<String> {
    move |field: &str| {
        let base = field.split(['[', '.']).next().unwrap_or(field);
        let id = match base {
            "name" => "run-field-name",
            "run_type" => "run-field-type",
            "location_key" => "run-field-location",
            "planned_quantity" => "run-field-quantity",
            "planned_start_date" => "run-field-start",
            "notes" => "run-field-notes",
            "plant_keys" => "run-field-plants",
            "status" => "run-field-status",
            _ => return None,
        };
        Some(lang.t(id))
    }
}

/// What a refusal says, in the page's language; `status` is the run's, where known.
fn refusal(lang: Lang, err: &AppError, status: Option<RunState>) -> Vec<String> {
    match err.code() {
        ErrorCode::InvalidRunState => {
            let now = status.map_or_else(String::new, |s| state_text(lang, s));
            vec![lang.t_with("run-err-state", &[("status", now.into())])]
        }
        ErrorCode::InvalidStatusTransition => {
            let now = status.map_or_else(String::new, |s| state_text(lang, s));
            vec![lang.t_with("run-err-transition", &[("status", now.into())])]
        }
        ErrorCode::ValidationError
            if err
                .details()
                .iter()
                .any(|d| d.reason.contains("another run")) =>
        {
            vec![lang.t("run-err-plant-taken")]
        }
        ErrorCode::ValidationError
            if err.details().iter().any(|d| d.reason.contains("archived")) =>
        {
            vec![lang.t("run-err-plant-archived")]
        }
        _ => explain(lang, err, &label(lang)),
    }
}

fn news_text(lang: Lang, key: &str) -> Option<String> {
    let id = match key {
        "created" => "run-done-created",
        "status" => "run-done-status",
        "plants" => "run-done-plants",
        _ => return None,
    };
    Some(lang.t(id))
}

// ---------- the list ----------

struct ListData {
    runs: Vec<Run>,
    locations: Vec<Location>,
}

async fn read_list(ctx: &PageCtx, scope: &GardenScope<'_>) -> Result<ListData, AppError> {
    let state = &ctx.state;
    let tenant = &scope.garden.tenant;
    let runs = runs::list_runs(state, tenant, None, all(LIST_MAX_LIMIT)).await?;
    let filter = LocationFilter {
        site: None,
        parent: None,
    };
    let locations =
        crate::garden::places::service::list_locations(state, tenant, filter, all(CHOICES_MAX))
            .await?;
    Ok(ListData {
        runs: runs.items,
        locations: locations.items,
    })
}

#[handler]
async fn list_page(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    let Some(scope) = open_garden(req, res, &ctx).await else {
        return;
    };
    let news = req
        .query::<String>("done")
        .and_then(|d| news_text(ctx.lang, &d));
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
    let data = match read_list(ctx, scope).await {
        Ok(d) => d,
        Err(e) => return ctx.fail(req, res, e),
    };
    let lang = ctx.lang;
    let base = format!("/app/g/{}/runs", scope.slug);
    let grower = scope.garden.role >= Role::Grower;
    let csrf = &scope.s.csrf;
    let t = |name: &str| typed.and_then(|p| p.get(name)).unwrap_or("").to_owned();
    let body = html! {
        h1 { (lang.t("nav-runs")) " · " (scope.garden.tenant.name) }
        @if let Some(text) = &news { (notice("ok", text)) }
        (refused(errors))
        section.card aria-labelledby="sec-runs" {
            h2 id="sec-runs" { (lang.t("run-list")) }
            @if data.runs.is_empty() {
                p.empty { (lang.t("run-list-none")) }
            } @else {
                ul.items {
                    @for r in &data.runs {
                        li {
                            span.what {
                                a href=(format!("{base}/{}", r.key)) { (r.name) }
                                br;
                                span.meta {
                                    (type_text(lang, r.run_type))
                                    " · " (lang.t_with("run-plant-count", &[("count", r.plant_count.into())]))
                                    @if let Some(d) = &r.planned_start_date { " · " (lang.t("run-field-start")) " " (lang.iso_date(d)) }
                                }
                            }
                            span.badge { (state_text(lang, r.status)) }
                        }
                    }
                }
            }
        }
        @if grower {
            (add_card(
                "sec-new-run",
                &lang.t("run-new"),
                typed.is_some(),
                &[],
                &base,
                csrf,
                html! {
                    label for="run-name" { (lang.t("run-field-name")) }
                    input id="run-name" type="text" name="name" required maxlength="200" value=(t("name"));
                    label for="run-type" { (lang.t("run-field-type")) }
                    select id="run-type" name="run_type" {
                        @for (k, rt) in RunType::ALL {
                            option value=(k) selected[t("run_type") == *k] { (type_text(lang, *rt)) }
                        }
                    }
                    label for="run-location" { (lang.t("run-field-location")) }
                    select id="run-location" name="location_key" {
                        option value="" { (lang.t("run-no-location")) }
                        @for l in &data.locations {
                            option value=(l.key.to_string()) selected[t("location_key") == l.key.to_string()] { (l.name) }
                        }
                    }
                    label for="run-start" { (lang.t("run-field-start")) }
                    input id="run-start" type="date" name="planned_start_date" value=(t("planned_start_date"));
                    label for="run-quantity" { (lang.t("run-field-quantity")) }
                    input id="run-quantity" type="number" name="planned_quantity" min="1" max="10000" inputmode="numeric" value=(t("planned_quantity"));
                    label for="run-notes" { (lang.t("run-field-notes")) }
                    textarea id="run-notes" name="notes" rows="2" maxlength="2000" { (t("notes")) }
                    button type="submit" { (lang.t("run-create")) }
                },
            ))
        } @else {
            p.meta { (lang.t("run-viewer-only")) }
        }
    };
    scope.page(
        req,
        res,
        lang,
        status,
        format!("{} · {}", lang.t("nav-runs"), scope.garden.tenant.name),
        body,
    );
}

/// `POST /app/g/{slug}/runs`: a new run (planned).
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
        let new: NewRun = parse(posted.object(&[
            ("name", Field::Text),
            ("run_type", Field::Optional),
            ("location_key", Field::Optional),
            ("planned_start_date", Field::Optional),
            ("planned_quantity", Field::Number),
            ("notes", Field::Optional),
        ]))?;
        runs::create_run(&ctx.state, &scope.garden.tenant, &new).await
    }
    .await;
    match outcome {
        Ok(d) => see_other(
            req,
            res,
            &done(
                &format!("/app/g/{}/runs/{}", scope.slug, d.run.key),
                "created",
            ),
        ),
        Err(err) if shown_on_form(&err) => {
            let errors = refusal(ctx.lang, &err, None);
            let status = err.code().status();
            show_list(req, res, &ctx, &scope, status, None, &errors, Some(&posted)).await;
        }
        Err(err) => ctx.fail(req, res, err),
    }
}

// ---------- a run ----------

struct RunData {
    detail: RunDetail,
    /// The run's plants.
    plants: Vec<PlantSummary>,
    /// The garden's plants in no run (what may be added).
    free: Vec<PlantSummary>,
    location: Option<String>,
}

async fn read_run(ctx: &PageCtx, scope: &GardenScope<'_>, key: &str) -> Result<RunData, AppError> {
    let state = &ctx.state;
    let tenant = &scope.garden.tenant;
    let detail = runs::get_run(state, tenant, key).await?;
    let list = crate::garden::plants::service::list_plants;
    let mine = Filter {
        run_id: Some(detail.run.key),
        archived: crate::garden::plants::repo::Archived::Include,
        ..Filter::default()
    };
    let plants = list(state, tenant, &mine, all(CHOICES_MAX)).await?.items;
    let free = list(state, tenant, &Filter::default(), all(CHOICES_MAX))
        .await?
        .items
        .into_iter()
        .filter(|p| p.run_key.is_none())
        .collect();
    let location = match detail.run.location_key {
        Some(l) => crate::garden::places::service::get_location(state, tenant, &l.to_string())
            .await
            .ok()
            .map(|l| l.location.name),
        None => None,
    };
    Ok(RunData {
        detail,
        plants,
        free,
        location,
    })
}

#[handler]
async fn run_page(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    let Some(scope) = open_garden(req, res, &ctx).await else {
        return;
    };
    let key = req.param::<String>("key").unwrap_or_default();
    let news = req
        .query::<String>("done")
        .and_then(|d| news_text(ctx.lang, &d));
    show_run(req, res, &ctx, &scope, &key, StatusCode::OK, news, None).await;
}

/// Writes a run's page; `refused` is the error of a form that did not go through.
#[allow(clippy::too_many_arguments)]
async fn show_run(
    req: &Request,
    res: &mut Response,
    ctx: &PageCtx,
    scope: &GardenScope<'_>,
    key: &str,
    status: StatusCode,
    news: Option<String>,
    refused: Option<&AppError>,
) {
    let data = match read_run(ctx, scope, key).await {
        Ok(d) => d,
        Err(e) => return ctx.fail(req, res, e),
    };
    let lang = ctx.lang;
    let errors = refused.map_or_else(Vec::new, |e| refusal(lang, e, Some(data.detail.run.status)));
    let body = run_body(lang, scope, &data, news.as_deref(), &errors);
    scope.page(
        req,
        res,
        lang,
        status,
        format!("{} · {}", data.detail.run.name, lang.t("nav-runs")),
        body,
    );
}

fn run_body(
    lang: Lang,
    scope: &GardenScope<'_>,
    data: &RunData,
    news: Option<&str>,
    errors: &[String],
) -> Markup {
    let run = &data.detail.run;
    let slug = &scope.slug;
    let base = format!("/app/g/{slug}/runs/{}", run.key);
    let csrf = &scope.s.csrf;
    let grower = scope.garden.role >= Role::Grower;
    let can_add = matches!(run.status, RunState::Planned | RunState::Active);
    html! {
        p.crumbs { a href=(format!("/app/g/{slug}/runs")) { (lang.t("run-all")) } }
        h1 { (run.name) " " span.badge { (state_text(lang, run.status)) } }
        @if let Some(text) = news { (notice("ok", text)) }
        (refused(errors))
        section.card aria-labelledby="sec-run-facts" {
            h2 id="sec-run-facts" { (lang.t("run-facts")) }
            dl.facts {
                dt { (lang.t("run-field-type")) } dd { (type_text(lang, run.run_type)) }
                dt { (lang.t("run-field-status")) } dd { (state_text(lang, run.status)) }
                @if let Some(l) = &data.location { dt { (lang.t("run-field-location")) } dd { (l) } }
                @if let Some(d) = &run.planned_start_date { dt { (lang.t("run-field-start")) } dd { (lang.iso_date(d)) } }
                @if let Some(q) = run.planned_quantity { dt { (lang.t("run-field-quantity")) } dd { (q) } }
                @if let Some(at) = run.started_at { dt { (lang.t("run-started")) } dd { (lang.date(super::scope::local_day(scope.s, at))) } }
                @if let Some(at) = run.completed_at { dt { (lang.t("run-ended")) } dd { (lang.date(super::scope::local_day(scope.s, at))) } }
                @if let Some(n) = &run.notes { dt { (lang.t("run-field-notes")) } dd { (n) } }
            }
            @if grower && !data.detail.next_statuses.is_empty() {
                h3 { (lang.t("run-change-status")) }
                div.actions {
                    @for next in &data.detail.next_statuses {
                        form.inline method="post" action=(format!("{base}/status")) {
                            (csrf_field(csrf))
                            button.secondary[matches!(next, RunState::Cancelled)] type="submit" name="status" value=(state_str(*next)) {
                                (lang.t(&format!("run-to-{}", state_str(*next))))
                            }
                        }
                    }
                }
            }
        }
        section.card aria-labelledby="sec-run-plants" {
            h2 id="sec-run-plants" { (lang.t("run-plants")) " " span.meta { "(" (data.detail.plants_live) ")" } }
            @if data.plants.is_empty() {
                p.empty { (lang.t("run-plants-none")) }
            } @else {
                ul.items {
                    @for p in &data.plants {
                        li {
                            span.what { a href=(format!("/app/g/{slug}/plants/{}", p.key)) { (p.name) } }
                            span.meta {
                                (p.species_name.clone().unwrap_or_else(|| p.species_key.clone()))
                                @if let Some(ph) = p.current_phase_name.as_ref().or(p.current_phase_key.as_ref()) { " · " (ph) }
                                @if p.archive_reason.is_some() { " · " (lang.t("run-plant-archived")) }
                            }
                        }
                    }
                }
            }
            @if !data.detail.plants_per_phase.is_empty() {
                h3 { (lang.t("run-per-phase")) }
                ul.items {
                    @for c in &data.detail.plants_per_phase {
                        li {
                            span.what { (c.phase_name.clone().or_else(|| c.phase_key.clone()).unwrap_or_else(|| lang.t("run-no-phase"))) }
                            span.meta { (lang.t_with("run-live-of", &[("live", c.live.into()), ("total", c.total.into())])) }
                        }
                    }
                }
            }
            @if grower && can_add {
                h3 { (lang.t("run-add-plants")) }
                @if data.free.is_empty() {
                    p.empty { (lang.t("run-add-none")) }
                } @else {
                    form.stack method="post" action=(format!("{base}/plants")) {
                        (csrf_field(csrf))
                        fieldset {
                            legend { (lang.t("run-field-plants")) }
                            @for (i, p) in data.free.iter().take(BATCH_MAX).enumerate() {
                                label.check {
                                    input type="checkbox" name=(format!("plant_keys[{i}]")) value=(p.key.to_string());
                                    (p.name)
                                }
                            }
                        }
                        button type="submit" { (lang.t("run-add-plants")) }
                    }
                }
            } @else if grower {
                p.meta { (lang.t("run-add-closed")) }
            }
        }
    }
}

/// The checked plants of the add form (`plant_keys[i]`, any of them left out) as the REST body.
fn plant_keys_body(posted: &Posted) -> Map<String, Value> {
    let keys: Vec<Value> = (0..BATCH_MAX)
        .filter_map(|i| posted.get(&format!("plant_keys[{i}]")))
        .map(|k| Value::String(k.to_owned()))
        .collect();
    let mut map = Map::new();
    if !keys.is_empty() {
        map.insert("plant_keys".to_owned(), Value::Array(keys));
    }
    map
}

#[derive(Clone, Copy)]
enum RunAction {
    Status,
    AddPlants,
}

async fn act(req: &mut Request, depot: &mut Depot, res: &mut Response, action: RunAction) {
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
    let outcome = async {
        scope.garden.require(Role::Grower)?;
        let state = &ctx.state;
        let tenant = &scope.garden.tenant;
        match action {
            RunAction::Status => {
                let body: StatusBody = parse(posted.object(&[("status", Field::Text)]))?;
                let to = body
                    .status
                    .ok_or_else(|| AppError::malformed("no status"))?;
                runs::change_status(state, tenant, &key, to).await?;
                Ok::<_, AppError>("status")
            }
            RunAction::AddPlants => {
                let body: AddPlantsBody = parse(plant_keys_body(&posted))?;
                runs::add_plants(state, tenant, &key, &body.plant_keys).await?;
                Ok("plants")
            }
        }
    }
    .await;
    match outcome {
        Ok(news) => see_other(
            req,
            res,
            &done(&format!("/app/g/{}/runs/{key}", scope.slug), news),
        ),
        Err(err) if shown_on_form(&err) => {
            let status = err.code().status();
            show_run(req, res, &ctx, &scope, &key, status, None, Some(&err)).await;
        }
        Err(err) => ctx.fail(req, res, err),
    }
}

/// `POST /app/g/{slug}/runs/{key}/status`: the run moves to `status`.
#[handler]
async fn change(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    act(req, depot, res, RunAction::Status).await;
}

/// `POST /app/g/{slug}/runs/{key}/plants`: the checked plants join the run.
#[handler]
async fn add_plants(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    act(req, depot, res, RunAction::AddPlants).await;
}
