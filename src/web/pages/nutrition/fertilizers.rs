//! **Fertilisers** (`/app/g/{slug}/nutrition/fertilizers`): the garden's own products and the
//! catalogue's (name, maker, type and form, N-P₂O₅-K₂O, mixing priority, where the analysis
//! was read), a search over both, a product's page (`…/fertilizers/{key}`: doses, EC,
//! secondary and micro nutrients) and a form adding one of the garden's own. All of it through
//! `fertilizers::service` (`list`, `get`, `create`), the functions `GET/POST
//! /api/v1/t/{slug}/fertilizers` call, so the catalogue's field rules refuse what the API
//! refuses (an N-P-K over 100 %, a maximum dose below the recommended one), nothing written.
//! Viewers read; growers add (403 otherwise, as on REST).

use maud::{Markup, html};
use salvo::prelude::*;
use serde_json::{Map, Value};

use super::{num, nutrition_page};
use crate::auth::Role;
use crate::catalog::fertilizers::model::{FERTILIZER_TYPES, FORMS};
use crate::error::AppError;
use crate::garden::fertilizers::model::{GardenFertilizer, LIST_MAX_LIMIT, Owner};
use crate::garden::fertilizers::service as products;
use crate::values::page::PageRequest;
use crate::web::forms::{Field, Posted, explain};
use crate::web::i18n::Lang;
use crate::web::layout::{add_card, notice, see_other};
use crate::web::pages::PageCtx;
use crate::web::pages::scope::{GardenScope, done, open_garden, shown_on_form};

pub fn router() -> Router {
    Router::with_path("fertilizers")
        .get(list_page)
        .post(create)
        .push(Router::with_path("{key}").get(product_page))
}

fn list_url(slug: &str) -> String {
    format!("/app/g/{slug}/nutrition/fertilizers")
}

fn product_url(slug: &str, key: &str) -> String {
    format!("/app/g/{slug}/nutrition/fertilizers/{key}")
}

/// The number fields of the add form, named as the catalogue names them.
const NUMBERS: &[&str] = &[
    "ec_contribution_per_ml",
    "recommended_dose_ml_per_liter",
    "max_dose_ml_per_liter",
];
/// The fields a refusal may name, each with its label `nut-fert-{field}`.
const LABELLED: &[&str] = &[
    "name",
    "brand",
    "fertilizer_type",
    "form",
    "npk",
    "ec_contribution_per_ml",
    "recommended_dose_ml_per_liter",
    "max_dose_ml_per_liter",
    "mixing_priority",
    "label_source",
];

fn text<'a>(f: &'a GardenFertilizer, name: &str) -> Option<&'a str> {
    f.0.get(name).and_then(Value::as_str)
}

fn number(f: &GardenFertilizer, path: &[&str]) -> Option<f64> {
    let mut v = &f.0;
    for p in path {
        v = v.get(p)?;
    }
    v.as_f64()
}

fn flag(f: &GardenFertilizer, name: &str) -> Option<bool> {
    f.0.get(name).and_then(Value::as_bool)
}

/// `N-P-K` as the label states it.
fn npk(lang: Lang, f: &GardenFertilizer) -> String {
    let part = |k: &str| number(f, &["npk", k]).map_or("?".to_owned(), |x| num(lang, x));
    format!("{}-{}-{}", part("n"), part("p"), part("k"))
}

/// The type and form of a product in the page's language.
fn kind_of(lang: Lang, f: &GardenFertilizer) -> String {
    let t = text(f, "fertilizer_type").unwrap_or_default();
    let form = text(f, "form").unwrap_or_default();
    format!(
        "{} · {}",
        lang.t(&format!("nut-fert-type-{t}")),
        lang.t(&format!("nut-fert-form-{form}"))
    )
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
    let news = (req.query::<String>("done").as_deref() == Some("added"))
        .then(|| ctx.lang.t("nut-fert-done-added"));
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
    let q = req.query::<String>("q").unwrap_or_default();
    let page = PageRequest {
        skip: 0,
        limit: LIST_MAX_LIMIT,
    };
    let listing = |owner| products::Query {
        q: Some(q.clone()),
        owner: Some(owner),
        ..products::Query::default()
    };
    let (state, tenant) = (&ctx.state, &scope.garden.tenant);
    let read = async {
        let own = products::list(state, tenant, &listing(Owner::Garden), page).await?;
        let global = products::list(state, tenant, &listing(Owner::Global), page).await?;
        Ok::<_, AppError>((own, global))
    };
    let (own, global) = match read.await {
        Ok(r) => r,
        Err(e) => return ctx.fail(req, res, e),
    };
    let lang = ctx.lang;
    let slug = &scope.slug;
    let grower = scope.garden.role >= Role::Grower;
    let body = html! {
        @if let Some(text) = &news { (notice("ok", text)) }
        form.search method="get" action=(list_url(slug)) role="search" {
            label for="fert-q" { (lang.t("nut-fert-search")) }
            div.inline {
                input id="fert-q" type="search" name="q" value=(q);
                button type="submit" { (lang.t("nut-fert-search-go")) }
            }
        }
        (product_list(lang, slug, "own", &lang.t("nut-fert-own"), &lang.t("nut-fert-own-none"), &own.items, own.total))
        (product_list(lang, slug, "catalogue", &lang.t("nut-fert-catalogue"), &lang.t("nut-fert-catalogue-none"), &global.items, global.total))
        @if grower {
            (add_form(lang, &list_url(slug), &scope.s.csrf, typed, errors))
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
        "fertilizers",
        lang.t("nut-fertilizers"),
        body,
    );
}

fn product_list(
    lang: Lang,
    slug: &str,
    id: &str,
    title: &str,
    none: &str,
    list: &[GardenFertilizer],
    total: i64,
) -> Markup {
    let shown = i64::try_from(list.len()).unwrap_or(i64::MAX);
    html! {
        section.card aria-labelledby=(format!("sec-fert-{id}")) {
            h2 id=(format!("sec-fert-{id}")) { (title) " " span.meta { "(" (total) ")" } }
            @if list.is_empty() {
                p.empty { (none) }
            } @else {
                ul.items id=(format!("fert-{id}")) {
                    @for f in list {
                        li { span.what {
                            a href=(product_url(slug, f.key())) { strong { (f.name()) } }
                            @if let Some(b) = text(f, "brand") { " · " (b) }
                            br;
                            span.meta {
                                (kind_of(lang, f)) " · NPK " (npk(lang, f))
                                @if let Some(p) = number(f, &["mixing_priority"]) {
                                    " · " (lang.t("nut-fert-mixing_priority")) " " (num(lang, p))
                                }
                            }
                            @if let Some(s) = text(f, "label_source") {
                                br;
                                span.meta { (lang.t("nut-fert-label_source")) ": " (s) }
                            }
                        } }
                    }
                }
                @if total > shown {
                    p.meta { (lang.t_with("nut-fert-more", &[("shown", shown.into()), ("total", total.into())])) }
                }
            }
        }
    }
}

fn add_form(
    lang: Lang,
    action: &str,
    csrf: &str,
    typed: Option<&Posted>,
    errors: &[String],
) -> Markup {
    let t = |name: &str| typed.and_then(|p| p.get(name)).unwrap_or("").to_owned();
    let chosen = |name: &str, default: &str| match t(name).as_str() {
        "" => default.to_owned(),
        v => v.to_owned(),
    };
    let (kind, form) = (chosen("fertilizer_type", "base"), chosen("form", "liquid"));
    add_card(
        "sec-fert-new",
        &lang.t("nut-fert-new"),
        !errors.is_empty(),
        errors,
        action,
        csrf,
        html! {
            label for="fert-name" { (lang.t("nut-fert-name")) }
            input id="fert-name" type="text" name="name" required value=(t("name"));
            label for="fert-brand" { (lang.t("nut-fert-brand")) }
            input id="fert-brand" type="text" name="brand" required value=(t("brand"));
            label for="fert-fertilizer_type" { (lang.t("nut-fert-fertilizer_type")) }
            select id="fert-fertilizer_type" name="fertilizer_type" {
                @for k in FERTILIZER_TYPES {
                    option value=(k) selected[*k == kind] { (lang.t(&format!("nut-fert-type-{k}"))) }
                }
            }
            label for="fert-form" { (lang.t("nut-fert-form")) }
            select id="fert-form" name="form" {
                @for f in FORMS {
                    option value=(f) selected[*f == form] { (lang.t(&format!("nut-fert-form-{f}"))) }
                }
            }
            fieldset {
                legend { (lang.t("nut-fert-npk")) }
                @for e in ["n", "p", "k"] {
                    @let name = format!("npk_{e}");
                    label for=(format!("fert-{name}")) { (lang.t(&format!("nut-fert-npk-{e}"))) }
                    input id=(format!("fert-{name}")) type="text" inputmode="decimal" name=(name) value=(t(&name));
                }
            }
            @for n in NUMBERS {
                label for=(format!("fert-{n}")) { (lang.t(&format!("nut-fert-{n}"))) }
                input id=(format!("fert-{n}")) type="text" inputmode="decimal" name=(n) value=(t(n));
            }
            label for="fert-mixing_priority" { (lang.t("nut-fert-mixing_priority-hint")) }
            input id="fert-mixing_priority" type="text" inputmode="numeric" name="mixing_priority" value=(t("mixing_priority"));
            label.check {
                input type="checkbox" name="is_organic" value="true" checked[!t("is_organic").is_empty()];
                (lang.t("nut-fert-is_organic"))
            }
            label.check {
                input type="checkbox" name="calmag" value="true" checked[!t("calmag").is_empty()];
                (lang.t("nut-fert-calmag"))
            }
            label for="fert-label_source" { (lang.t("nut-fert-label_source-hint")) }
            input id="fert-label_source" type="text" name="label_source" value=(t("label_source"));
            button type="submit" { (lang.t("nut-fert-add")) }
        },
    )
}

/// The form as the REST body: the three N-P-K fields as `npk` (left out when all are empty,
/// so the reader says it is missing), a whole-number priority, the flags only when ticked.
fn body_of(posted: &Posted) -> Map<String, Value> {
    let mut spec: Vec<(&str, Field)> = NUMBERS.iter().map(|n| (*n, Field::Number)).collect();
    spec.extend([
        ("name", Field::Text),
        ("brand", Field::Text),
        ("fertilizer_type", Field::Optional),
        ("form", Field::Optional),
        ("label_source", Field::Optional),
    ]);
    let mut map = posted.object(&spec);
    let npk = posted.object(&[
        ("npk_n", Field::Number),
        ("npk_p", Field::Number),
        ("npk_k", Field::Number),
    ]);
    if !npk.is_empty() {
        let npk: Map<String, Value> = npk
            .into_iter()
            .map(|(k, v)| (k.trim_start_matches("npk_").to_owned(), v))
            .collect();
        map.insert("npk".to_owned(), Value::Object(npk));
    }
    // An empty priority is absent (missing), not a text refused as "not a number".
    if posted
        .get("mixing_priority")
        .is_some_and(|v| !v.trim().is_empty())
    {
        map.extend(posted.object(&[("mixing_priority", Field::Int)]));
    }
    for name in ["is_organic", "calmag"] {
        if posted.get(name).is_some() {
            map.insert(name.to_owned(), Value::Bool(true));
        }
    }
    map
}

fn label(lang: Lang) -> impl Fn(&str) -> Option<String> {
    move |field: &str| {
        let base = field
            .strip_prefix("body.")
            .unwrap_or(field)
            .split('.')
            .next()
            .unwrap_or(field);
        LABELLED
            .contains(&base)
            .then(|| lang.t(&format!("nut-fert-{base}")))
    }
}

/// `POST …/nutrition/fertilizers`: one of the garden's own products (grower), with the
/// catalogue's field rules; back on the list.
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
        products::create(&ctx.state, &scope.garden.tenant, body_of(&posted)).await
    }
    .await;
    match outcome {
        Ok(created) => see_other(
            req,
            res,
            &done(&product_url(&scope.slug, created.key()), "added"),
        ),
        Err(err) if shown_on_form(&err) => {
            let mut errors = explain(ctx.lang, &err, &label(ctx.lang));
            errors.extend(err.details().iter().map(|d| d.reason.clone()));
            let status = err.code().status();
            show_list(req, res, &ctx, &scope, status, None, &errors, Some(&posted)).await;
        }
        Err(err) => ctx.fail(req, res, err),
    }
}

// ---------- a product ----------

#[handler]
async fn product_page(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    let Some(scope) = open_garden(req, res, &ctx).await else {
        return;
    };
    let key = req.param::<String>("key").unwrap_or_default();
    let f = match products::get(&ctx.state, &scope.garden.tenant, &key).await {
        Ok(f) => f,
        Err(e) => return ctx.fail(req, res, e),
    };
    let lang = ctx.lang;
    let news = (req.query::<String>("done").as_deref() == Some("added"))
        .then(|| lang.t("nut-fert-done-added"));
    let owner = match f.owner() {
        Owner::Garden => "nut-fert-owner-garden",
        Owner::Global => "nut-fert-owner-global",
    };
    let per = match text(&f, "form") {
        Some("liquid") => "ml/L",
        _ => "g/L",
    };
    let yes_no = |b: bool| lang.t(if b { "nut-fert-yes" } else { "nut-fert-no" });
    let elements = |group: &str, names: &[&str]| -> String {
        names
            .iter()
            .filter_map(|e| {
                number(&f, &[group, *e]).map(|x| format!("{} {} %", e.to_uppercase(), num(lang, x)))
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let secondary = elements("secondary", &["ca", "mg", "s", "si"]);
    let micro = elements("micro", &["fe", "mn", "zn", "cu", "b", "mo"]);
    let body = html! {
        h2 { (f.name()) }
        @if let Some(text) = &news { (notice("ok", text)) }
        section.card aria-labelledby="sec-fert-facts" {
            h2 id="sec-fert-facts" { (lang.t("nut-fert-facts")) }
            dl.facts id="fert-facts" {
                dt { (lang.t("nut-fert-owner")) } dd { (lang.t(owner)) }
                @if let Some(b) = text(&f, "brand") { dt { (lang.t("nut-fert-brand")) } dd { (b) } }
                dt { (lang.t("nut-fert-fertilizer_type")) } dd { (kind_of(lang, &f)) }
                dt { (lang.t("nut-fert-npk")) } dd { (npk(lang, &f)) }
                @if !secondary.is_empty() { dt { (lang.t("nut-fert-secondary")) } dd { (secondary) } }
                @if !micro.is_empty() { dt { (lang.t("nut-fert-micro")) } dd { (micro) } }
                @if let Some(x) = number(&f, &["ec_contribution_per_ml"]) {
                    dt { (lang.t("nut-fert-ec_contribution_per_ml")) } dd { (num(lang, x)) " mS/cm" }
                }
                @if let Some(x) = number(&f, &["recommended_dose_ml_per_liter"]) {
                    dt { (lang.t("nut-fert-recommended_dose_ml_per_liter")) } dd { (num(lang, x)) " " (per) }
                }
                @if let Some(x) = number(&f, &["max_dose_ml_per_liter"]) {
                    dt { (lang.t("nut-fert-max_dose_ml_per_liter")) } dd { (num(lang, x)) " " (per) }
                }
                @if let Some(x) = number(&f, &["mixing_priority"]) {
                    dt { (lang.t("nut-fert-mixing_priority")) } dd { (num(lang, x)) }
                }
                @if let Some(b) = flag(&f, "is_organic") { dt { (lang.t("nut-fert-is_organic")) } dd { (yes_no(b)) } }
                @if let Some(b) = flag(&f, "calmag") { dt { (lang.t("nut-fert-calmag")) } dd { (yes_no(b)) } }
                @if let Some(b) = flag(&f, "tank_safe") { dt { (lang.t("nut-fert-tank_safe")) } dd { (yes_no(b)) } }
                @if let Some(s) = text(&f, "label_source") { dt { (lang.t("nut-fert-label_source")) } dd { (s) } }
            }
            @if let Some(d) = text(&f, "description_en") { p { (d) } }
        }
        p { a href=(list_url(&scope.slug)) { (lang.t("nut-fert-back")) } }
    };
    nutrition_page(
        req,
        res,
        &ctx,
        &scope,
        StatusCode::OK,
        "fertilizers",
        lang.t("nut-fertilizers"),
        body,
    );
}
