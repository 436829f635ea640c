//! **Nutrition** of a garden (`/app/g/{slug}/nutrition…`): the mixing protocol as a form
//! (`mix`), the garden's feedings with a form recording one (`feedings`), the nutrient plans,
//! the garden's and the catalogue's, with a plan's phases, cloning, assigning and the coverage
//! check (`plans`), the tanks with their fills, water tests and maintenance due (`tanks`), and
//! the garden's and the catalogue's fertilisers with a form adding one (`fertilizers`). Each
//! part is a face over the service the REST route and the tool call
//! (`calculations::service::mixing_protocol`, `watering::service::record_event`,
//! `nutrient_plans::service`, `tanks::service`, `fertilizers::service`); nothing here computes
//! a dose, a target, a due date or a coverage itself.
//! Roles as on REST: every member reads and mixes (the protocol writes nothing), growers write.

mod feedings;
mod fertilizers;
mod mix;
mod plans;
mod tanks;

use maud::{Markup, html};
use salvo::prelude::*;

use super::PageCtx;
use super::scope::{GardenScope, open_garden};
use crate::error::AppError;
use crate::garden::fertilizers::model::{GardenFertilizer, Owner};
use crate::garden::fertilizers::service as products;
use crate::values::page::PageRequest;
use crate::web::i18n::Lang;

pub fn router() -> Router {
    Router::with_path("g/{slug}/nutrition")
        .get(overview)
        .push(mix::router())
        .push(feedings::router())
        .push(plans::router())
        .push(tanks::router())
        .push(fertilizers::router())
}

/// The parts of the nutrition pages, as the sub-navigation lists them.
const PARTS: &[(&str, &str)] = &[
    ("mix", "nut-mix"),
    ("feedings", "nut-feedings"),
    ("plans", "nut-plans"),
    ("tanks", "nut-tanks"),
    ("fertilizers", "nut-fertilizers"),
];

/// The links between the nutrition pages (`current`: the part shown, `""` on the overview).
fn subnav(lang: Lang, slug: &str, current: &str) -> Markup {
    html! {
        nav.gardens aria-label=(lang.t("nut-subnav")) {
            @for (part, id) in PARTS {
                @if *part == current {
                    a href=(format!("/app/g/{slug}/nutrition/{part}")) aria-current="page" { (lang.t(id)) }
                } @else {
                    a href=(format!("/app/g/{slug}/nutrition/{part}")) { (lang.t(id)) }
                }
            }
        }
    }
}

/// Writes a nutrition page in the frame, with the sub-navigation above its body.
#[allow(clippy::too_many_arguments)]
fn nutrition_page(
    req: &Request,
    res: &mut Response,
    ctx: &PageCtx,
    scope: &GardenScope<'_>,
    status: StatusCode,
    part: &str,
    title: String,
    body: Markup,
) {
    let lang = ctx.lang;
    let body = html! {
        h1 { (title) " · " (scope.garden.tenant.name) }
        (subnav(lang, &scope.slug, part))
        (body)
    };
    scope.page(req, res, lang, status, title, body);
}

/// `GET /app/g/{slug}/nutrition`: what the parts are for, with their links.
#[handler]
async fn overview(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    let Some(scope) = open_garden(req, res, &ctx).await else {
        return;
    };
    let lang = ctx.lang;
    let slug = &scope.slug;
    let body = html! {
        @for (part, id) in PARTS {
            section.card aria-labelledby=(format!("sec-{part}")) {
                h2 id=(format!("sec-{part}")) {
                    a href=(format!("/app/g/{slug}/nutrition/{part}")) { (lang.t(id)) }
                }
                p { (lang.t(&format!("{id}-intro"))) }
            }
        }
    };
    nutrition_page(
        req,
        res,
        &ctx,
        &scope,
        StatusCode::OK,
        "",
        lang.t("nav-nutrition"),
        body,
    );
}

/// Fertilisers a form offers: the garden's own first, then the catalogue's (the service's list
/// of each, one page of the largest size).
async fn fertilizer_choices(
    ctx: &PageCtx,
    scope: &GardenScope<'_>,
) -> Result<Vec<GardenFertilizer>, AppError> {
    let page = PageRequest {
        skip: 0,
        limit: crate::garden::fertilizers::model::LIST_MAX_LIMIT,
    };
    let tenant = &scope.garden.tenant;
    let mut own = products::list(
        &ctx.state,
        tenant,
        &products::Query {
            owner: Some(Owner::Garden),
            ..products::Query::default()
        },
        page,
    )
    .await?
    .items;
    let global = products::list(
        &ctx.state,
        tenant,
        &products::Query {
            owner: Some(Owner::Global),
            ..products::Query::default()
        },
        page,
    )
    .await?
    .items;
    own.extend(global);
    Ok(own)
}

/// The options of a fertiliser select, grouped by owner; `chosen` is selected.
fn fertilizer_options(lang: Lang, all: &[GardenFertilizer], chosen: &str) -> Markup {
    let own: Vec<&GardenFertilizer> = all.iter().filter(|f| f.owner() == Owner::Garden).collect();
    let global: Vec<&GardenFertilizer> =
        all.iter().filter(|f| f.owner() == Owner::Global).collect();
    // A key typed or sent that the lists do not hold (a catalogue past the list's size) stays
    // chosen, so the service can still resolve or refuse it.
    let unknown = !chosen.is_empty() && !all.iter().any(|f| f.key() == chosen);
    html! {
        option value="" { (lang.t("nut-no-product")) }
        @if unknown { option value=(chosen) selected { (chosen) } }
        @if !own.is_empty() {
            optgroup label=(lang.t("nut-own-products")) {
                @for f in &own { option value=(f.key()) selected[f.key() == chosen] { (f.name()) } }
            }
        }
        @if !global.is_empty() {
            optgroup label=(lang.t("nut-catalogue-products")) {
                @for f in &global { option value=(f.key()) selected[f.key() == chosen] { (f.name()) } }
            }
        }
    }
}

/// A dose, EC or pH as the page's language writes it (three decimals at most).
fn num(lang: Lang, x: f64) -> String {
    lang.decimal(x, 3)
}
