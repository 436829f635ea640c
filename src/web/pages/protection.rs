//! **Plant protection** of a garden (`/app/g/{slug}/protection`): the safety intervals running
//! per plant with their first allowed harvest day, the resistance groups at or near their limit
//! with the advice, the latest inspections and treatments, and the plant-protection record of a
//! season as CSV or JSON (`…/protection/record?from=&to=&format=`). Every figure comes from
//! the service functions the REST routes call (`harvest::service::watched_readiness`,
//! `ipm::service::{resistance_pressure, list_inspections, list_applications,
//! protection_record}`); nothing here counts a day or a limit itself. Members read; recording
//! happens on a plant's page.

use std::collections::HashMap;

use maud::{Markup, html};
use salvo::prelude::*;
use uuid::Uuid;

use super::PageCtx;
use super::scope::{GardenScope, local_stamp, open_garden};
use crate::error::{AppError, ErrorDetail};
use crate::garden::harvest::model::{Readiness, SafetyInterval};
use crate::garden::ipm::model::{Application, Inspection, ResistancePressure};
use crate::garden::ipm::service as ipm;
use crate::values::page::PageRequest;
use crate::web::forms::explain;
use crate::web::i18n::Lang;
use crate::web::layout::notice;

pub fn router() -> Router {
    Router::with_path("g/{slug}/protection")
        .get(protection_page)
        .push(Router::with_path("record").get(record_download))
}

/// The latest inspections and treatments the page lists (the rest: the record, or the API).
const RECENT: i64 = 20;
/// Most plants the intervals card lists.
const INTERVALS_MAX: usize = 1_000;

/// What the page shows.
struct Data {
    intervals: Vec<Readiness>,
    pressure: Vec<ResistancePressure>,
    inspections: Vec<Inspection>,
    applications: Vec<Application>,
    /// Plant names of the inspections (an inspection names its plant by key).
    names: HashMap<Uuid, String>,
}

async fn load(ctx: &PageCtx, scope: &GardenScope<'_>) -> Result<Data, AppError> {
    let (state, tenant) = (&ctx.state, &scope.garden.tenant);
    let recent = PageRequest {
        skip: 0,
        limit: RECENT,
    };
    let every = crate::garden::plants::repo::Filter::default();
    let all_plants = PageRequest {
        skip: 0,
        limit: crate::garden::plants::service::LIST_MAX_LIMIT,
    };
    // Five independent reads, each its own snapshot: concurrently, not one after another.
    let (intervals, pressure, inspections, applications, plants) = tokio::try_join!(
        crate::garden::harvest::service::watched_readiness(state, tenant, INTERVALS_MAX, |r| {
            !r.safety_intervals.is_empty()
        }),
        ipm::resistance_pressure(state, tenant),
        ipm::list_inspections(state, tenant, None, None, recent),
        ipm::list_applications(state, tenant, None, recent),
        crate::garden::plants::service::list_plants(state, tenant, &every, all_plants),
    )?;
    Ok(Data {
        intervals,
        pressure,
        inspections: inspections.items,
        applications: applications.items,
        names: plants.items.into_iter().map(|p| (p.key, p.name)).collect(),
    })
}

#[handler]
async fn protection_page(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    let Some(scope) = open_garden(req, res, &ctx).await else {
        return;
    };
    show(req, res, &ctx, &scope, StatusCode::OK, &[]).await;
}

async fn show(
    req: &Request,
    res: &mut Response,
    ctx: &PageCtx,
    scope: &GardenScope<'_>,
    status: StatusCode,
    errors: &[String],
) {
    let data = match load(ctx, scope).await {
        Ok(d) => d,
        Err(e) => {
            ctx.fail(req, res, e);
            return;
        }
    };
    let lang = ctx.lang;
    let tz = scope.s.prefs.timezone.as_str();
    let base = format!("/app/g/{}/protection", scope.slug);
    let body = html! {
        h1 { (lang.t("pp-title")) " · " (scope.garden.tenant.name) }
        (intervals_card(lang, &scope.slug, &data.intervals))
        (pressure_card(lang, &scope.slug, &data.pressure))
        (inspections_card(lang, &scope.slug, tz, &data))
        (applications_card(lang, tz, &data.applications))
        (record_card(lang, &base, req, errors))
    };
    scope.page(req, res, lang, status, lang.t("pp-title"), body);
}

fn plant_link(slug: &str, key: Uuid, name: &str) -> Markup {
    html! { a href=(format!("/app/g/{slug}/plants/{key}")) { (name) } }
}

fn intervals_card(lang: Lang, slug: &str, intervals: &[Readiness]) -> Markup {
    let rows: Vec<(&Readiness, &SafetyInterval)> = intervals
        .iter()
        .flat_map(|r| r.safety_intervals.iter().map(move |i| (r, i)))
        .collect();
    html! {
        section.card aria-labelledby="pp-intervals" {
            h2 id="pp-intervals" { (lang.t("today-safety")) }
            @if rows.is_empty() {
                p.empty { (lang.t("today-safety-none")) }
            } @else {
                ul.items {
                    @for (plant, i) in &rows {
                        li {
                            span.what { (plant_link(slug, plant.plant_key, &plant.plant_name)) " · " strong { (i.treatment_name) } }
                            span.meta {
                                (lang.t("safety-harvest-from")) " " (lang.iso_date(&i.safe_on))
                                " (" (lang.t("safety-until")) " " (lang.iso_date(&i.last_blocked_day)) "; "
                                (lang.t("safety-source")) ": " (i.interval_source.clone().unwrap_or_else(|| lang.t("pl-no-source"))) ")"
                            }
                        }
                    }
                }
            }
        }
    }
}

fn pressure_card(lang: Lang, slug: &str, pressure: &[ResistancePressure]) -> Markup {
    html! {
        section.card aria-labelledby="pp-resistance" {
            h2 id="pp-resistance" { (lang.t("pp-resistance")) }
            @if pressure.is_empty() {
                p.empty { (lang.t("pp-resistance-none")) }
            } @else {
                p { (lang.t("pp-resistance-advice")) }
                ul.items {
                    @for g in pressure {
                        li {
                            span.what {
                                (plant_link(slug, g.plant_key, &g.plant_name)) " · " strong { (g.group) }
                            }
                            span.meta {
                                (lang.t_with(&format!("pp-resistance-{}", g.state), &[
                                    ("count", (g.applications as i64).into()),
                                    ("limit", (g.limit as i64).into()),
                                    ("window", g.window_days.into()),
                                ]))
                                " (" (lang.t("safety-source")) ": " (g.source) ")"
                            }
                        }
                    }
                }
            }
        }
    }
}

fn pressure_text(lang: Lang, i: &Inspection) -> String {
    let level = serde_json::to_value(i.pressure_level)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    lang.t(&format!("pl-pressure-{level}"))
}

fn inspections_card(lang: Lang, slug: &str, tz: &str, data: &Data) -> Markup {
    html! {
        section.card aria-labelledby="pp-inspections" {
            h2 id="pp-inspections" { (lang.t("pl-inspections")) }
            @if data.inspections.is_empty() {
                p.empty { (lang.t("pl-inspections-none")) }
            } @else {
                ul.items {
                    @for i in &data.inspections {
                        li {
                            span.what {
                                @if let Some(k) = i.plant_key {
                                    @match data.names.get(&k) {
                                        Some(name) => { (plant_link(slug, k, name)) " · " }
                                        None => {}
                                    }
                                }
                                (lang.t("pl-pressure")) ": " (pressure_text(lang, i))
                                @for s in &i.symptoms_observed { " · " (s) }
                            }
                            span.meta { (local_stamp(lang, tz, i.inspected_at)) }
                        }
                    }
                }
            }
        }
    }
}

fn applications_card(lang: Lang, tz: &str, applications: &[Application]) -> Markup {
    html! {
        section.card aria-labelledby="pp-treatments" {
            h2 id="pp-treatments" { (lang.t("pl-treatments")) }
            @if applications.is_empty() {
                p.empty { (lang.t("pl-treatments-none")) }
            } @else {
                ul.items {
                    @for a in applications {
                        li {
                            span.what {
                                strong { (a.treatment_name) }
                                @if let Some(ai) = &a.active_ingredient { " (" (ai) ")" }
                                @if !a.resistance_groups.is_empty() { " · " (a.resistance_groups.join(", ")) }
                            }
                            span.meta {
                                (local_stamp(lang, tz, a.applied_at)) " · "
                                (lang.t_with("pp-plants-treated", &[("count", (a.plants.len() as i64).into())])) " · "
                                (lang.t_with("pl-interval-days", &[("days", i64::from(a.safety_interval_days).into())]))
                            }
                        }
                    }
                }
            }
        }
    }
}

fn record_card(lang: Lang, base: &str, req: &Request, errors: &[String]) -> Markup {
    let typed = |name: &str| req.query::<String>(name).unwrap_or_default();
    let format = typed("format");
    html! {
        section.card aria-labelledby="pp-record" id="record" {
            h2 id="pp-record" { (lang.t("pp-record")) }
            p { (lang.t("pp-record-hint")) }
            @for e in errors { (notice("bad", e)) }
            form.stack method="get" action=(format!("{base}/record")) {
                label for="record-from" { (lang.t("pp-record-from")) }
                input type="date" id="record-from" name="from" value=(typed("from"));
                label for="record-to" { (lang.t("pp-record-to")) }
                input type="date" id="record-to" name="to" value=(typed("to"));
                label for="record-format" { (lang.t("pp-record-format")) }
                select id="record-format" name="format" {
                    option value="csv" selected[format != "json"] { "CSV" }
                    option value="json" selected[format == "json"] { "JSON" }
                }
                button type="submit" { (lang.t("pp-record-download")) }
            }
        }
    }
}

/// A day of the record form: empty is the service's default, anything else must be a date.
fn day_query(req: &Request, name: &str) -> Result<Option<time::Date>, AppError> {
    let raw = req.query::<String>(name).unwrap_or_default();
    let raw = raw.trim();
    if raw.is_empty() {
        return Ok(None);
    }
    time::Date::parse(
        raw,
        time::macros::format_description!("[year]-[month]-[day]"),
    )
    .map(Some)
    .map_err(|_| {
        AppError::validation(vec![ErrorDetail::new(
            format!("query.{name}"),
            "must be a date YYYY-MM-DD",
            "value_error",
        )])
    })
}

/// `GET …/protection/record`: the record as a download; a refused period is the page again
/// (422) with the reason beside the form.
#[handler]
async fn record_download(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    let Some(scope) = open_garden(req, res, &ctx).await else {
        return;
    };
    let csv = req.query::<String>("format").as_deref() != Some("json");
    let made = async {
        let q = ipm::RecordQuery {
            from: day_query(req, "from")?,
            to: day_query(req, "to")?,
        };
        let record = ipm::protection_record(&ctx.state, &scope.garden.tenant, q).await?;
        let (body, kind, ext) = if csv {
            let body = record
                .to_csv()
                .map_err(|e| AppError::internal(format!("writing the record as CSV: {e}")))?;
            (body, "text/csv; charset=utf-8", "csv")
        } else {
            let body = serde_json::to_vec_pretty(&record)
                .map_err(|e| AppError::internal(format!("writing the record as JSON: {e}")))?;
            (body, "application/json", "json")
        };
        let file = format!("attachment; filename=\"{}\"", record.file_name(ext));
        Ok::<_, AppError>((body, kind, file))
    }
    .await;
    match made {
        Ok((body, kind, file)) => {
            let wrote = res
                .add_header("content-type", kind, true)
                .and_then(|r| r.add_header("content-disposition", file, true))
                .map(|_| ());
            if let Err(e) = wrote.and_then(|()| res.write_body(body)) {
                ctx.fail(req, res, AppError::internal(e.to_string()));
            }
        }
        Err(e) if e.code().status() == StatusCode::UNPROCESSABLE_ENTITY => {
            let lang = ctx.lang;
            let errors = explain(lang, &e, &|field| match field {
                "query.from" => Some(lang.t("pp-record-from")),
                "query.to" => Some(lang.t("pp-record-to")),
                _ => None,
            });
            show(
                req,
                res,
                &ctx,
                &scope,
                StatusCode::UNPROCESSABLE_ENTITY,
                &errors,
            )
            .await;
        }
        Err(e) => ctx.fail(req, res, e),
    }
}
