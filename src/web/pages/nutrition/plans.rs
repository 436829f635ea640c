//! **Nutrient plans** (`/app/g/{slug}/nutrition/plans`): the garden's own plans and the
//! catalogue's templates, a plan's page (`…/plans/{key}`) with its phases (weeks, EC target
//! and reference, pH range, products), the clone form (a copy the garden owns, the source
//! untouched), the assignment to a plant or a planting run, and the coverage check of a plant
//! (`…/nutrition/coverage?plant_key=`). All of it through `nutrient_plans::service`, the
//! functions the REST routes and the tools call (`clone_plan`, `assign`, `plant_coverage`
//! of `validate_nutrient_plan_coverage`); refusals (a taken name, an archived plant) are said
//! on the page, nothing written. Viewers read; growers clone and assign.

use maud::{Markup, html};
use salvo::prelude::*;
use serde_json::{Map, Value};

use super::{num, nutrition_page};
use crate::auth::Role;
use crate::error::AppError;
use crate::garden::nutrient_plans::model::{
    NutrientPlan, Owner, PlanPhase, PlanSummary, PlantCoverage, assign_target, clone_name,
};
use crate::garden::nutrient_plans::service as plans;
use crate::garden::plants::model::PlantSummary;
use crate::garden::runs::model::Run;
use crate::values::page::PageRequest;
use crate::web::forms::{Field, Posted, explain};
use crate::web::i18n::Lang;
use crate::web::layout::{csrf_field, notice, refused, see_other};
use crate::web::pages::PageCtx;
use crate::web::pages::scope::{GardenScope, done, open_garden, shown_on_form};

pub fn router() -> Router {
    Router::new()
        .push(Router::with_path("coverage").get(coverage_page))
        .push(
            Router::with_path("plans").get(list_page).push(
                Router::with_path("{key}")
                    .get(plan_page)
                    .push(Router::with_path("clone").post(clone))
                    .push(Router::with_path("assign").post(assign)),
            ),
        )
}

/// Plants, runs and plans the pages offer.
const CHOICES_MAX: i64 = 200;

fn all(limit: i64) -> PageRequest {
    PageRequest { skip: 0, limit }
}

fn plan_url(slug: &str, key: &str) -> String {
    format!("/app/g/{slug}/nutrition/plans/{key}")
}

async fn plants_of(ctx: &PageCtx, scope: &GardenScope<'_>) -> Result<Vec<PlantSummary>, AppError> {
    Ok(crate::garden::plants::service::list_plants(
        &ctx.state,
        &scope.garden.tenant,
        &crate::garden::plants::repo::Filter::default(),
        all(CHOICES_MAX),
    )
    .await?
    .items)
}

async fn runs_of(ctx: &PageCtx, scope: &GardenScope<'_>) -> Result<Vec<Run>, AppError> {
    Ok(crate::garden::runs::service::list_runs(
        &ctx.state,
        &scope.garden.tenant,
        None,
        all(CHOICES_MAX),
    )
    .await?
    .items)
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
    let read = async {
        let listed = plans::list_plans(
            &ctx.state,
            &scope.garden.tenant,
            &plans::Query::default(),
            all(CHOICES_MAX),
        )
        .await?;
        Ok::<_, AppError>((listed.items, plants_of(&ctx, &scope).await?))
    };
    let (listed, plants) = match read.await {
        Ok(r) => r,
        Err(e) => return ctx.fail(req, res, e),
    };
    let lang = ctx.lang;
    let slug = &scope.slug;
    let (own, global): (Vec<&PlanSummary>, Vec<&PlanSummary>) =
        listed.iter().partition(|p| p.owner == Owner::Garden);
    let body = html! {
        (plan_list(lang, slug, "own", &lang.t("nut-plans-own"), &lang.t("nut-plans-own-none"), &own))
        (plan_list(lang, slug, "catalogue", &lang.t("nut-plans-catalogue"), &lang.t("nut-plans-catalogue-none"), &global))
        (coverage_form(lang, slug, &plants, ""))
    };
    nutrition_page(
        req,
        res,
        &ctx,
        &scope,
        StatusCode::OK,
        "plans",
        lang.t("nut-plans"),
        body,
    );
}

fn plan_list(
    lang: Lang,
    slug: &str,
    id: &str,
    title: &str,
    none: &str,
    list: &[&PlanSummary],
) -> Markup {
    html! {
        section.card aria-labelledby=(format!("sec-plans-{id}")) {
            h2 id=(format!("sec-plans-{id}")) { (title) " " span.meta { "(" (list.len()) ")" } }
            @if list.is_empty() {
                p.empty { (none) }
            } @else {
                ul.items {
                    @for p in list {
                        li {
                            span.what {
                                a href=(plan_url(slug, &p.key)) { (p.name) }
                                br;
                                span.meta {
                                    (lang.t_with("nut-plan-phases", &[("count", (p.phase_count as i64).into())]))
                                    @if let (Some(a), Some(b)) = (p.first_week, p.last_week) {
                                        " · " (lang.t_with("nut-plan-weeks", &[("from", a.into()), ("to", b.into())]))
                                    }
                                    @if let Some(c) = &p.culture { " · " (c) }
                                    @if let Some(s) = &p.recommended_substrate_type { " · " (s) }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn coverage_form(lang: Lang, slug: &str, plants: &[PlantSummary], chosen: &str) -> Markup {
    html! {
        section.card aria-labelledby="sec-coverage-form" {
            h2 id="sec-coverage-form" { (lang.t("nut-coverage")) }
            p { (lang.t("nut-coverage-intro")) }
            @if plants.is_empty() {
                p.empty { (lang.t("nut-feed-no-plants")) }
            } @else {
                form.stack method="get" action=(format!("/app/g/{slug}/nutrition/coverage")) {
                    label for="coverage-plant" { (lang.t("nut-plan-plant")) }
                    select id="coverage-plant" name="plant_key" {
                        @for p in plants {
                            option value=(p.key.to_string()) selected[p.key.to_string() == chosen] { (p.name) }
                        }
                    }
                    button type="submit" { (lang.t("nut-coverage-check")) }
                }
            }
        }
    }
}

// ---------- a plan ----------

#[handler]
async fn plan_page(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    let Some(scope) = open_garden(req, res, &ctx).await else {
        return;
    };
    let news = req.query::<String>("done").and_then(|d| match d.as_str() {
        "cloned" => Some(ctx.lang.t("nut-plan-done-cloned")),
        "assigned" => Some(ctx.lang.t("nut-plan-done-assigned")),
        _ => None,
    });
    show_plan(req, res, &ctx, &scope, StatusCode::OK, news, &[], None).await;
}

#[allow(clippy::too_many_arguments)]
async fn show_plan(
    req: &Request,
    res: &mut Response,
    ctx: &PageCtx,
    scope: &GardenScope<'_>,
    status: StatusCode,
    news: Option<String>,
    errors: &[String],
    typed: Option<&Posted>,
) {
    let key = req.param::<String>("key").unwrap_or_default();
    let read = async {
        let plan = plans::get_plan(&ctx.state, &scope.garden.tenant, &key).await?;
        let plants = plants_of(ctx, scope).await?;
        let runs = runs_of(ctx, scope).await?;
        Ok::<_, AppError>((plan, plants, runs))
    };
    let (plan, plants, runs) = match read.await {
        Ok(r) => r,
        Err(e) => return ctx.fail(req, res, e),
    };
    let lang = ctx.lang;
    let grower = scope.garden.role >= Role::Grower;
    let base = plan_url(&scope.slug, &plan.key);
    let csrf = &scope.s.csrf;
    let t = |name: &str| typed.and_then(|p| p.get(name)).unwrap_or("").to_owned();
    let body = html! {
        h2 { (plan.name) }
        @if let Some(text) = &news { (notice("ok", text)) }
        (refused(errors))
        (facts(lang, &scope.slug, &plan))
        section.card aria-labelledby="sec-plan-phases" {
            h2 id="sec-plan-phases" { (lang.t("nut-plan-phase-list")) }
            @if plan.phases.is_empty() {
                p.empty { (lang.t("nut-plan-no-phases")) }
            } @else {
                ul.items id="plan-phases" {
                    @for p in &plan.phases { (phase_item(lang, p)) }
                }
            }
        }
        @if grower {
            section.card aria-labelledby="sec-plan-clone" {
                h2 id="sec-plan-clone" { (lang.t("nut-plan-clone")) }
                p { (lang.t("nut-plan-clone-intro")) }
                form.stack method="post" action=(format!("{base}/clone")) novalidate {
                    (csrf_field(csrf))
                    label for="clone-name" { (lang.t("nut-plan-clone-name")) }
                    input id="clone-name" type="text" name="name" maxlength="200" value=(t("name"));
                    button type="submit" { (lang.t("nut-plan-clone")) }
                }
            }
            section.card aria-labelledby="sec-plan-assign" {
                h2 id="sec-plan-assign" { (lang.t("nut-plan-assign")) }
                p { (lang.t("nut-plan-assign-intro")) }
                @if !plants.is_empty() {
                    form.stack method="post" action=(format!("{base}/assign")) {
                        (csrf_field(csrf))
                        label for="assign-plant" { (lang.t("nut-plan-plant")) }
                        select id="assign-plant" name="plant_key" {
                            @for p in &plants {
                                option value=(p.key.to_string()) selected[t("plant_key") == p.key.to_string()] { (p.name) }
                            }
                        }
                        button type="submit" { (lang.t("nut-plan-assign-plant")) }
                    }
                }
                @if !runs.is_empty() {
                    form.stack method="post" action=(format!("{base}/assign")) {
                        (csrf_field(csrf))
                        label for="assign-run" { (lang.t("nut-feed-run")) }
                        select id="assign-run" name="run_key" {
                            @for r in &runs {
                                option value=(r.key.to_string()) selected[t("run_key") == r.key.to_string()] { (r.name) }
                            }
                        }
                        button type="submit" { (lang.t("nut-plan-assign-run")) }
                    }
                }
                @if plants.is_empty() && runs.is_empty() {
                    p.empty { (lang.t("nut-feed-no-plants")) }
                }
            }
        } @else {
            p.meta { (lang.t("nut-viewer-only")) }
        }
        (coverage_form(lang, &scope.slug, &plants, ""))
    };
    nutrition_page(
        req,
        res,
        ctx,
        scope,
        status,
        "plans",
        lang.t("nut-plans"),
        body,
    );
}

fn facts(lang: Lang, slug: &str, plan: &NutrientPlan) -> Markup {
    html! {
        section.card aria-labelledby="sec-plan-facts" {
            h2 id="sec-plan-facts" { (lang.t("nut-plan-facts")) }
            @if let Some(d) = &plan.description { p { (d) } }
            dl.facts {
                dt { (lang.t("nut-plan-owner")) }
                dd { (lang.t(&format!("nut-plan-owner-{}", match plan.owner { Owner::Garden => "garden", Owner::Global => "global" }))) }
                @if let Some(c) = &plan.culture { dt { (lang.t("nut-plan-culture")) } dd { (c) } }
                @if let Some(s) = &plan.recommended_substrate_type { dt { (lang.t("nut-plan-substrate")) } dd { (s) } }
                dt { (lang.t("nut-plan-reference-substrate")) }
                dd { (plan.reference_substrate_type) }
                @if let Some(from) = &plan.cloned_from_key {
                    dt { (lang.t("nut-plan-cloned-from")) }
                    dd { a href=(plan_url(slug, from)) { (from) } }
                }
                @if !plan.tags.is_empty() { dt { (lang.t("nut-plan-tags")) } dd { (plan.tags.join(", ")) } }
            }
        }
    }
}

fn phase_item(lang: Lang, p: &PlanPhase) -> Markup {
    html! {
        li {
            span.what {
                strong { (p.phase_name) } " · "
                (lang.t_with("nut-plan-weeks", &[("from", p.week_start.into()), ("to", p.week_end.into())]))
                br;
                span.meta {
                    (lang.t("nut-plan-target-ec")) ": "
                    @match p.target_ec_ms { Some(ec) => { (num(lang, ec)) " mS/cm" } None => { (lang.t("nut-plan-none")) } }
                    @if let Some(r) = p.reference_ec_ms { " · " (lang.t("nut-plan-reference-ec")) ": " (num(lang, r)) " mS/cm" }
                    " · pH: "
                    @match (p.ph_min, p.ph_max) {
                        (Some(a), Some(b)) => { (num(lang, a)) "–" (num(lang, b)) }
                        (Some(a), None) => { "≥ " (num(lang, a)) }
                        (None, Some(b)) => { "≤ " (num(lang, b)) }
                        (None, None) => { (lang.t("nut-plan-none")) }
                    }
                    @if let Some(npk) = &p.npk_ratio { " · NPK " (num(lang, npk.n)) "-" (num(lang, npk.p)) "-" (num(lang, npk.k)) }
                }
                @if !p.products.is_empty() {
                    br;
                    span.meta {
                        @for (i, pr) in p.products.iter().enumerate() {
                            @if i > 0 { ", " }
                            (pr.product_name) " " (num(lang, pr.ml_per_liter)) " ml/L"
                        }
                    }
                }
                @if let Some(n) = &p.notes { br; span.meta { (n) } }
            }
        }
    }
}

fn plan_label(lang: Lang) -> impl Fn(&str) -> Option<String> {
    move |field: &str| match field.strip_prefix("body.").unwrap_or(field) {
        "name" => Some(lang.t("nut-plan-clone-name")),
        "plant_key" => Some(lang.t("nut-plan-plant")),
        "run_key" => Some(lang.t("nut-feed-run")),
        _ => None,
    }
}

/// What a refusal says, with the service's own reason beneath.
fn refusal(lang: Lang, err: &AppError) -> Vec<String> {
    let mut lines = explain(lang, err, &plan_label(lang));
    lines.extend(err.details().iter().map(|d| d.reason.clone()));
    lines
}

/// `POST …/plans/{key}/clone`: a copy the garden owns (grower); back on the copy's page.
#[handler]
async fn clone(req: &mut Request, depot: &mut Depot, res: &mut Response) {
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
        let map: Map<String, Value> = posted.object(&[("name", Field::Optional)]);
        let name = clone_name(&map, "body.")?;
        plans::clone_plan(&ctx.state, &scope.garden.tenant, &key, name, true).await
    }
    .await;
    match outcome {
        Ok(copy) => see_other(req, res, &done(&plan_url(&scope.slug, &copy.key), "cloned")),
        Err(err) if shown_on_form(&err) => {
            let errors = refusal(ctx.lang, &err);
            let status = err.code().status();
            show_plan(req, res, &ctx, &scope, status, None, &errors, Some(&posted)).await;
        }
        Err(err) => ctx.fail(req, res, err),
    }
}

/// `POST …/plans/{key}/assign`: the plan for a plant or a run (grower), replacing its own.
#[handler]
async fn assign(req: &mut Request, depot: &mut Depot, res: &mut Response) {
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
        let map = posted.object(&[("plant_key", Field::Optional), ("run_key", Field::Optional)]);
        let target = assign_target(&map, "body.")?;
        plans::assign(&ctx.state, &scope.garden.tenant, &key, &target, true).await
    }
    .await;
    match outcome {
        Ok(a) => see_other(
            req,
            res,
            &done(&plan_url(&scope.slug, &a.plan_key), "assigned"),
        ),
        Err(err) if shown_on_form(&err) => {
            let errors = refusal(ctx.lang, &err);
            let status = err.code().status();
            show_plan(req, res, &ctx, &scope, status, None, &errors, Some(&posted)).await;
        }
        Err(err) => ctx.fail(req, res, err),
    }
}

// ---------- coverage ----------

/// `GET …/nutrition/coverage?plant_key=`: the coverage check of the plan a plant follows.
#[handler]
async fn coverage_page(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    let Some(scope) = open_garden(req, res, &ctx).await else {
        return;
    };
    let plant_key = req.query::<String>("plant_key").unwrap_or_default();
    let read = async {
        let c = plans::plant_coverage(&ctx.state, &scope.garden.tenant, &plant_key).await?;
        Ok::<_, AppError>((c, plants_of(&ctx, &scope).await?))
    };
    let (coverage, plants) = match read.await {
        Ok(r) => r,
        Err(e) => return ctx.fail(req, res, e),
    };
    let lang = ctx.lang;
    let name = plants
        .iter()
        .find(|p| p.key == coverage.plant_key)
        .map_or_else(|| coverage.plant_key.to_string(), |p| p.name.clone());
    let body = html! {
        (coverage_result(lang, &scope.slug, &name, &coverage))
        (coverage_form(lang, &scope.slug, &plants, &plant_key))
    };
    nutrition_page(
        req,
        res,
        &ctx,
        &scope,
        StatusCode::OK,
        "plans",
        lang.t("nut-coverage"),
        body,
    );
}

fn coverage_result(lang: Lang, slug: &str, plant: &str, c: &PlantCoverage) -> Markup {
    let cov = &c.coverage;
    html! {
        section.card aria-labelledby="sec-coverage" id="coverage" {
            h2 id="sec-coverage" { (lang.t_with("nut-coverage-of", &[("plant", plant.to_owned().into())])) }
            @match &c.plan {
                None => { (notice("warn", &lang.t("nut-coverage-no-plan"))) }
                Some(plan) => {
                    p {
                        (lang.t("nut-coverage-plan")) ": " a href=(plan_url(slug, &plan.key)) { (plan.name) }
                        @if let Some(s) = &c.source { " (" (lang.t(&format!("nut-coverage-source-{s}"))) ")" }
                    }
                    @if cov.complete {
                        (notice("ok", &lang.t("nut-coverage-complete")))
                    } @else {
                        (notice("bad", &lang.t("nut-coverage-incomplete")))
                    }
                    dl.facts {
                        dt { (lang.t("nut-coverage-current")) }
                        dd {
                            (c.current_phase.clone().unwrap_or_else(|| lang.t("nut-plan-none")))
                            @match c.current_phase_covered_by_name {
                                Some(true) => { " · " (lang.t("nut-coverage-covered")) }
                                Some(false) => { " · " (lang.t("nut-coverage-not-covered")) }
                                None => {}
                            }
                        }
                        dt { (lang.t("nut-coverage-sequence")) }
                        dd { @if cov.sequence_phases.is_empty() { (lang.t("nut-plan-none")) } @else { (cov.sequence_phases.join(" → ")) } }
                        @if !cov.phases_not_covered.is_empty() {
                            dt { (lang.t("nut-coverage-missing")) }
                            dd { (cov.phases_not_covered.join(", ")) }
                        }
                        @if !cov.phases_without_target_ec.is_empty() {
                            dt { (lang.t("nut-coverage-no-ec")) }
                            dd { (cov.phases_without_target_ec.join(", ")) }
                        }
                    }
                    @if !cov.issues.is_empty() {
                        h3 { (lang.t("nut-coverage-issues")) }
                        ul id="coverage-issues" { @for i in &cov.issues { li { (i.message) } } }
                    }
                    @if !cov.hints.is_empty() {
                        h3 { (lang.t("nut-coverage-hints")) }
                        ul { @for h in &cov.hints { li { (h) } } }
                    }
                }
            }
        }
    }
}
