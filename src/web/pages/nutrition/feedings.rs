//! **Feeding records** (`/app/g/{slug}/nutrition/feedings`): the garden's latest waterings and
//! feedings, and a form recording one through `watering::service::record_event`, the function
//! `POST /api/v1/t/{slug}/watering-events` and the tool `record_feeding_event` call (the same
//! reader, so the same rules: plants or a run, litres, EC and pH before and after, runoff, the
//! products given, drawn from a tank or not). A refusal (an archived plant, a tank holding
//! less, a runoff EC without a fed EC, …) shows the form again with the reason, nothing
//! written. Viewers see the records without the form.

use std::collections::HashMap;

use maud::{Markup, html};
use salvo::prelude::*;
use serde_json::{Map, Value};
use uuid::Uuid;

use super::{fertilizer_choices, fertilizer_options, num, nutrition_page};
use crate::auth::Role;
use crate::error::AppError;
use crate::garden::fertilizers::model::GardenFertilizer;
use crate::garden::plants::model::PlantSummary;
use crate::garden::runs::model::Run;
use crate::garden::tanks::model::Tank;
use crate::garden::watering::model::{ApplicationMethod, NewWateringEvent, WateringEvent};
use crate::garden::watering::repo::Filter;
use crate::garden::watering::service as watering;
use crate::values::page::PageRequest;
use crate::web::forms::{Field, Posted, explain, parse};
use crate::web::i18n::Lang;
use crate::web::layout::{add_card, notice, refused, see_other};
use crate::web::pages::PageCtx;
use crate::web::pages::scope::{GardenScope, done, local_stamp, open_garden, shown_on_form};

pub fn router() -> Router {
    Router::with_path("feedings")
        .get(feedings_page)
        .post(record)
}

/// Records the page lists (the newest; the rest through the API).
const RECENT: i64 = 30;
/// Plants, runs and tanks the form offers.
const CHOICES_MAX: i64 = 200;
/// Product rows of the form.
const PRODUCT_ROWS: usize = 4;

/// The number fields of the form, named as the REST body names them.
const NUMBERS: &[&str] = &[
    "volume_liters",
    "ec_before_ms",
    "ec_after_ms",
    "ph_before",
    "ph_after",
    "runoff_ec_ms",
    "runoff_ph",
    "runoff_volume_liters",
];

fn all(limit: i64) -> PageRequest {
    PageRequest { skip: 0, limit }
}

struct Data {
    events: Vec<WateringEvent>,
    plants: Vec<PlantSummary>,
    runs: Vec<Run>,
    tanks: Vec<Tank>,
    products: Vec<GardenFertilizer>,
}

async fn load(ctx: &PageCtx, scope: &GardenScope<'_>) -> Result<Data, AppError> {
    let (state, tenant) = (&ctx.state, &scope.garden.tenant);
    let events = watering::list_events(state, tenant, &Filter::default(), all(RECENT)).await?;
    let plants = crate::garden::plants::service::list_plants(
        state,
        tenant,
        &crate::garden::plants::repo::Filter::default(),
        all(CHOICES_MAX),
    )
    .await?;
    let runs =
        crate::garden::runs::service::list_runs(state, tenant, None, all(CHOICES_MAX)).await?;
    let tanks = crate::garden::tanks::service::list_tanks(state, tenant, all(CHOICES_MAX)).await?;
    let products = fertilizer_choices(ctx, scope).await?;
    Ok(Data {
        events: events.items,
        plants: plants.items,
        runs: runs.items,
        tanks: tanks.items,
        products,
    })
}

#[handler]
async fn feedings_page(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    let Some(scope) = open_garden(req, res, &ctx).await else {
        return;
    };
    let news = (req.query::<String>("done").as_deref() == Some("recorded"))
        .then(|| ctx.lang.t("nut-feed-done"));
    show(req, res, &ctx, &scope, StatusCode::OK, news, &[], None).await;
}

/// Field labels for refusal sentences.
fn label(lang: Lang) -> impl Fn(&str) -> Option<String> {
    move |field: &str| {
        let base = field
            .strip_prefix("body.")
            .unwrap_or(field)
            .split(['[', '.'])
            .next()
            .unwrap_or(field);
        let id = match base {
            "plant_keys" => "nut-feed-plants",
            "run_key" => "nut-feed-run",
            "tank_key" => "nut-feed-tank",
            "application_method" => "nut-feed-method",
            "is_supplemental" => "nut-feed-supplemental",
            "fertilizers_used" => "nut-feed-products",
            "notes" => "nut-feed-notes",
            n if NUMBERS.contains(&n) => return Some(lang.t(&format!("nut-feed-{n}"))),
            _ => return None,
        };
        Some(lang.t(id))
    }
}

/// The refusal in the page's language, with the service's own reasons beneath.
fn refusal(lang: Lang, err: &AppError) -> Vec<String> {
    let mut lines = explain(lang, err, &label(lang));
    for d in err.details() {
        lines.push(d.reason.clone());
    }
    if err.details().is_empty() && err.code() == crate::error::ErrorCode::StateConflict {
        // The service's sentence (how much the tank holds), without the code before it.
        let said = err.to_string();
        lines.push(
            said.split_once(": ")
                .map_or(said.as_str(), |(_, m)| m)
                .to_owned(),
        );
    }
    lines
}

#[allow(clippy::too_many_arguments)]
async fn show(
    req: &Request,
    res: &mut Response,
    ctx: &PageCtx,
    scope: &GardenScope<'_>,
    status: StatusCode,
    news: Option<String>,
    errors: &[String],
    typed: Option<&Posted>,
) {
    let data = match load(ctx, scope).await {
        Ok(d) => d,
        Err(e) => return ctx.fail(req, res, e),
    };
    let lang = ctx.lang;
    let grower = scope.garden.role >= Role::Grower;
    let tz = scope.s.prefs.timezone.as_str();
    let action = format!("/app/g/{}/nutrition/feedings", scope.slug);
    let body = html! {
        @if let Some(text) = &news { (notice("ok", text)) }
        (refused(errors))
        (records(lang, &scope.slug, tz, &data))
        @if grower {
            (form(lang, &action, &scope.s.csrf, &data, typed, !errors.is_empty()))
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
        "feedings",
        lang.t("nut-feedings"),
        body,
    );
}

fn records(lang: Lang, slug: &str, tz: &str, data: &Data) -> Markup {
    let names: HashMap<Uuid, &str> = data
        .plants
        .iter()
        .map(|p| (p.key, p.name.as_str()))
        .collect();
    let products: HashMap<&str, &str> = data.products.iter().map(|f| (f.key(), f.name())).collect();
    let tanks: HashMap<Uuid, &str> = data
        .tanks
        .iter()
        .map(|t| (t.key, t.name.as_str()))
        .collect();
    html! {
        section.card aria-labelledby="sec-feed-list" {
            h2 id="sec-feed-list" { (lang.t("nut-feed-recent")) }
            @if data.events.is_empty() {
                p.empty { (lang.t("nut-feed-none")) }
            } @else {
                ul.items id="feed-list" {
                    @for e in &data.events {
                        li {
                            span.what {
                                strong { (lang.t(&format!("nut-feed-kind-{}", e.kind))) }
                                " · " (num(lang, e.volume_liters)) " L · "
                                (lang.t(&format!("nut-feed-m-{}", e.application_method.as_str())))
                                br;
                                span.meta {
                                    (local_stamp(lang, tz, e.occurred_at))
                                    @if let Some(ec) = e.fed_ec() { " · EC " (num(lang, ec)) }
                                    @if let Some(ph) = e.fed_ph() { " · pH " (num(lang, ph)) }
                                    @if let Some(t) = e.tank_key.and_then(|k| tanks.get(&k)) { " · " (t) }
                                }
                                br;
                                @for (i, p) in e.plant_keys.iter().enumerate() {
                                    @if i > 0 { ", " }
                                    @match names.get(p) {
                                        Some(n) => { a href=(format!("/app/g/{slug}/plants/{p}")) { (n) } }
                                        None => { (p.to_string()) }
                                    }
                                }
                                @if !e.fertilizers_used.is_empty() {
                                    br;
                                    span.meta {
                                        @for (i, f) in e.fertilizers_used.iter().enumerate() {
                                            @if i > 0 { ", " }
                                            (products.get(f.fertilizer_key.as_str()).copied().unwrap_or(&f.fertilizer_key))
                                            " " (num(lang, f.ml_applied)) " ml"
                                        }
                                    }
                                }
                                @if let Some(a) = &e.runoff_analysis {
                                    br;
                                    span.meta {
                                        (lang.t("nut-feed-runoff")) ": " (a.overall)
                                        @for r in &a.recommendations { " · " (r) }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn form(
    lang: Lang,
    action: &str,
    csrf: &str,
    data: &Data,
    typed: Option<&Posted>,
    open: bool,
) -> Markup {
    let t = |name: &str| typed.and_then(|p| p.get(name)).unwrap_or("").to_owned();
    let method = match t("application_method").as_str() {
        "" => "drench".to_owned(),
        m => m.to_owned(),
    };
    add_card(
        "sec-feed-new",
        &lang.t("nut-feed-new"),
        open,
        &[],
        action,
        csrf,
        html! {
            fieldset {
                legend { (lang.t("nut-feed-plants")) }
                @if data.plants.is_empty() {
                    p.empty { (lang.t("nut-feed-no-plants")) }
                }
                @for (i, p) in data.plants.iter().enumerate() {
                    @let name = format!("plant_keys[{i}]");
                    @let key = p.key.to_string();
                    label.check {
                        input type="checkbox" name=(name) value=(key) checked[t(&name) == key];
                        (p.name)
                    }
                }
            }
            label for="feed-run_key" { (lang.t("nut-feed-run")) }
            select id="feed-run_key" name="run_key" {
                option value="" { (lang.t("nut-feed-no-run")) }
                @for r in &data.runs {
                    option value=(r.key.to_string()) selected[t("run_key") == r.key.to_string()] { (r.name) }
                }
            }
            label for="feed-tank_key" { (lang.t("nut-feed-tank")) }
            select id="feed-tank_key" name="tank_key" {
                option value="" { (lang.t("nut-feed-no-tank")) }
                @for tank in &data.tanks {
                    option value=(tank.key.to_string()) selected[t("tank_key") == tank.key.to_string()] { (tank.name) }
                }
            }
            label for="feed-application_method" { (lang.t("nut-feed-method")) }
            select id="feed-application_method" name="application_method" {
                @for m in ApplicationMethod::NAMES {
                    option value=(m) selected[*m == method] { (lang.t(&format!("nut-feed-m-{m}"))) }
                }
            }
            label.check {
                input type="checkbox" name="is_supplemental" value="true" checked[!t("is_supplemental").is_empty()];
                (lang.t("nut-feed-supplemental"))
            }
            @for n in NUMBERS {
                label for=(format!("feed-{n}")) { (lang.t(&format!("nut-feed-{n}"))) }
                input id=(format!("feed-{n}")) type="text" inputmode="decimal" name=(n) value=(t(n));
            }
            fieldset {
                legend { (lang.t("nut-feed-products")) }
                @for i in 0..PRODUCT_ROWS {
                    @let product = format!("product_{i}");
                    @let ml = format!("ml_{i}");
                    label for=(format!("feed-{product}")) { (lang.t_with("nut-mix-product-n", &[("n", (i as i64 + 1).into())])) }
                    select id=(format!("feed-{product}")) name=(product.as_str()) {
                        (fertilizer_options(lang, &data.products, &t(&product)))
                    }
                    label for=(format!("feed-{ml}")) { (lang.t_with("nut-feed-ml-n", &[("n", (i as i64 + 1).into())])) }
                    input id=(format!("feed-{ml}")) type="text" inputmode="decimal" name=(ml.as_str()) value=(t(&ml));
                }
            }
            label for="feed-notes" { (lang.t("nut-feed-notes")) }
            textarea id="feed-notes" name="notes" rows="2" maxlength="5000" { (t("notes")) }
            button type="submit" { (lang.t("nut-feed-record")) }
        },
    )
}

/// The form as the REST body: checked plants as `plant_keys`, filled product rows as
/// `fertilizers_used` (a row with an amount but no product goes in with an empty key, so the
/// reader refuses it).
fn body_of(posted: &Posted) -> Map<String, Value> {
    let mut spec: Vec<(&str, Field)> = NUMBERS.iter().map(|n| (*n, Field::Number)).collect();
    spec.extend([
        ("run_key", Field::Optional),
        ("tank_key", Field::Optional),
        ("application_method", Field::Optional),
        ("is_supplemental", Field::Checkbox),
        ("notes", Field::Optional),
    ]);
    let mut map = posted.object(&spec);
    let plants: Vec<Value> = (0..crate::garden::watering::model::PLANTS_MAX)
        .filter_map(|i| posted.get(&format!("plant_keys[{i}]")))
        .map(|k| Value::String(k.to_owned()))
        .collect();
    if !plants.is_empty() {
        map.insert("plant_keys".to_owned(), Value::Array(plants));
    }
    let mut used = Vec::new();
    for i in 0..PRODUCT_ROWS {
        let key = posted
            .get(&format!("product_{i}"))
            .unwrap_or("")
            .trim()
            .to_owned();
        let ml_name = format!("ml_{i}");
        let ml = posted.object(&[(ml_name.as_str(), Field::Number)]);
        if key.is_empty() && ml.is_empty() {
            continue;
        }
        let mut item = Map::new();
        item.insert("fertilizer_key".to_owned(), Value::String(key));
        if let Some(v) = ml.get(&ml_name) {
            item.insert("ml_applied".to_owned(), v.clone());
        }
        used.push(Value::Object(item));
    }
    if !used.is_empty() {
        map.insert("fertilizers_used".to_owned(), Value::Array(used));
    }
    map
}

/// `POST …/nutrition/feedings`: records a watering or feeding (a grower's, as on REST).
#[handler]
async fn record(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    let Some(scope) = open_garden(req, res, &ctx).await else {
        return;
    };
    let Some(posted) = ctx.form_of(req, res, scope.s).await else {
        return;
    };
    let actor = format!("user:{}", scope.s.principal.user_id);
    let outcome = async {
        scope.garden.require(Role::Grower)?;
        let new: NewWateringEvent = parse(body_of(&posted))?;
        watering::record_event(&ctx.state, &scope.garden.tenant, &new, &actor, true).await
    }
    .await;
    match outcome {
        Ok(_) => see_other(
            req,
            res,
            &done(
                &format!("/app/g/{}/nutrition/feedings", scope.slug),
                "recorded",
            ),
        ),
        Err(err) if shown_on_form(&err) => {
            let errors = refusal(ctx.lang, &err);
            let status = err.code().status();
            show(req, res, &ctx, &scope, status, None, &errors, Some(&posted)).await;
        }
        Err(err) => ctx.fail(req, res, err),
    }
}
