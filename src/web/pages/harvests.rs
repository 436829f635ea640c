//! **Harvests** of a garden (`/app/g/{slug}/harvests`): the batches (newest first: plant, day,
//! fresh weight, quality), readiness across the garden (the plants ready to harvest and those
//! nearly ready, from `harvest::service::watched_readiness`), and a form recording a batch for a
//! plant through `harvest::service::create_batch`, the gate of the safety intervals: inside one
//! the service refuses (`KARENZ_VIOLATION`) and the page names each running interval with its
//! first allowed day, nothing written. Viewers read; growers record.
//!
//! The pieces a plant's own harvest form shares (the batch fields, the body for the reader, the
//! refusal of the gate) live here, once.

use std::collections::HashMap;

use maud::{Markup, html};
use salvo::prelude::*;
use serde_json::{Map, Value};
use uuid::Uuid;

use super::PageCtx;
use super::scope::{GardenScope, done, open_garden, shown_on_form};
use crate::auth::Role;
use crate::error::{AppError, ErrorCode};
use crate::garden::harvest::model::{
    HARVEST_TYPES, HarvestBatch, NewBatch, Readiness, SafetyInterval,
};
use crate::garden::harvest::repo::BatchFilter;
use crate::garden::harvest::service as harvest;
use crate::values::page::PageRequest;
use crate::web::forms::{Field, Posted, code_text, parse};
use crate::web::i18n::Lang;
use crate::web::layout::{csrf_field, notice, refused, see_other};

pub fn router() -> Router {
    Router::with_path("g/{slug}/harvests")
        .get(harvests_page)
        .post(create)
}

/// Batches the page lists (the newest).
const BATCHES_MAX: i64 = 50;
/// Plants the readiness card lists.
const READINESS_MAX: usize = 200;
/// Plants the form offers.
const PLANTS_MAX: i64 = 200;

// ---------- shared with a plant's page ----------

/// A weight or score as the language writes it: at most two decimals, a decimal comma in German.
pub(super) fn num(lang: Lang, x: f64) -> String {
    lang.decimal(x, 2)
}

/// A choice's text in the page's language (the value itself when the catalogue has none).
fn choice(lang: Lang, prefix: &str, key: &str) -> String {
    let id = format!("{prefix}-{}", key.replace('_', "-"));
    let text = lang.t(&id);
    if text == id { key.to_owned() } else { text }
}

/// The fields of a batch every harvest form has (fresh weight, kind, notes); `typed` gives what
/// a refused form had in a field.
pub(super) fn batch_fields(lang: Lang, typed: &dyn Fn(&str) -> String) -> Markup {
    let kind = typed("harvest_type");
    html! {
        label for="wet_weight_g" { (lang.t("pl-wet-weight")) }
        input type="text" inputmode="decimal" id="wet_weight_g" name="wet_weight_g" required value=(typed("wet_weight_g"));
        label for="harvest_type" { (lang.t("pl-harvest-type")) }
        select id="harvest_type" name="harvest_type" {
            @for h in HARVEST_TYPES {
                option value=(h) selected[kind == *h || (kind.is_empty() && *h == "partial")] { (choice(lang, "pl-harvest-type", h)) }
            }
        }
        label for="h-notes" { (lang.t("pl-notes")) }
        textarea id="h-notes" name="notes" rows="2" { (typed("notes")) }
    }
}

/// A harvest form as the REST body (`plant_key` set by the caller when the page names the plant).
pub(super) fn batch_body(posted: &Posted) -> Map<String, Value> {
    posted.object(&[
        ("plant_key", Field::Optional),
        ("wet_weight_g", Field::Number),
        ("harvest_date", Field::Optional),
        ("harvest_type", Field::Optional),
        ("quality_grade", Field::Optional),
        ("notes", Field::Optional),
    ])
}

/// The gate's refusal said plainly: each interval still running with its days left, its last
/// blocked day and its first allowed day, and the service's own words folded under it.
pub(super) fn karenz_refusal(
    lang: Lang,
    intervals: &[SafetyInterval],
    reasons: &[String],
) -> Markup {
    html! {
        div.notice.bad role="alert" {
            p { strong { (lang.t("pl-harvest-refused")) } }
            @for i in intervals {
                p {
                    (lang.t_with("pl-karenz-line", &[
                        ("treatment", i.treatment_name.clone().into()),
                        ("days", i.days_remaining.into()),
                        ("until", lang.iso_date(&i.last_blocked_day).into()),
                        ("from", lang.iso_date(&i.safe_on).into()),
                    ]))
                }
            }
            @if !reasons.is_empty() {
                details {
                    summary { (lang.t("pl-details")) }
                    ul.reasons { @for r in reasons { li { (r) } } }
                }
            }
        }
    }
}

// ---------- the page ----------

/// What the page shows, read before any of it is written out.
struct Data {
    batches: Vec<HarvestBatch>,
    total: i64,
    ready: Vec<Readiness>,
    near: Vec<Readiness>,
    /// The garden's plants in the garden (the form's choice).
    plants: Vec<(Uuid, String)>,
    /// Every plant's name by key, archived ones too (a batch outlives its plant in the garden).
    names: HashMap<Uuid, String>,
}

/// Not ready, but on its way: the observations say optimal or approaching (a running interval
/// or a phase without harvest holds back an optimal one).
fn is_near(r: &Readiness) -> bool {
    !r.ready && matches!(r.recommendation.as_str(), "optimal" | "approaching")
}

async fn load(ctx: &PageCtx, scope: &GardenScope<'_>) -> Result<Data, AppError> {
    let (state, tenant) = (&ctx.state, &scope.garden.tenant);
    let live = crate::garden::plants::repo::Filter::default();
    let every = crate::garden::plants::repo::Filter {
        archived: crate::garden::plants::repo::Archived::Include,
        ..Default::default()
    };
    let choices = PageRequest {
        skip: 0,
        limit: PLANTS_MAX,
    };
    let all = PageRequest {
        skip: 0,
        limit: crate::garden::plants::service::LIST_MAX_LIMIT,
    };
    let recent = PageRequest {
        skip: 0,
        limit: BATCHES_MAX,
    };
    // Independent reads, each its own snapshot: concurrently.
    let (batches, readiness, plants, named) = tokio::try_join!(
        harvest::list_batches(state, tenant, BatchFilter::default(), recent),
        harvest::watched_readiness(state, tenant, READINESS_MAX, |r| r.ready || is_near(r)),
        crate::garden::plants::service::list_plants(state, tenant, &live, choices),
        crate::garden::plants::service::list_plants(state, tenant, &every, all),
    )?;
    let (ready, near): (Vec<Readiness>, Vec<Readiness>) =
        readiness.into_iter().partition(|r| r.ready);
    Ok(Data {
        total: batches.total,
        batches: batches.items,
        ready,
        near,
        plants: plants.items.into_iter().map(|p| (p.key, p.name)).collect(),
        names: named.items.into_iter().map(|p| (p.key, p.name)).collect(),
    })
}

/// A refused form: what was typed, the sentences by field and for the whole form, and the
/// intervals that hold the gate shut (a `KARENZ_VIOLATION`).
struct Failure<'a> {
    posted: &'a Posted,
    fields: Vec<(&'static str, String)>,
    general: Vec<String>,
    karenz: Option<(Vec<SafetyInterval>, Vec<String>)>,
}

impl Failure<'_> {
    fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, m)| m.as_str())
    }
}

/// The form field a detail of the reader or the service names.
fn form_field(detail: &str) -> Option<&'static str> {
    let field = detail.strip_prefix("body.").unwrap_or(detail);
    Some(match field {
        "plant_key" => "plant_key",
        "wet_weight_g" => "wet_weight_g",
        "harvest_date" => "harvest_date",
        "harvest_type" => "harvest_type",
        "quality_grade" => "quality_grade",
        "notes" => "notes",
        _ => return None,
    })
}

async fn failure<'a>(
    ctx: &PageCtx,
    scope: &GardenScope<'_>,
    err: &AppError,
    posted: &'a Posted,
) -> Failure<'a> {
    let lang = ctx.lang;
    let mut f = Failure {
        posted,
        fields: Vec::new(),
        general: Vec::new(),
        karenz: None,
    };
    match err.code() {
        ErrorCode::KarenzViolation => {
            // The intervals running for this plant, as its readiness counts them (the
            // service's words name each blocking one too, folded under them).
            let plant = posted.get("plant_key").unwrap_or_default();
            let running = harvest::plant_readiness(&ctx.state, &scope.garden.tenant, plant)
                .await
                .map(|r| r.safety_intervals)
                .unwrap_or_default();
            let details = err.details().iter().map(|d| d.reason.clone()).collect();
            f.karenz = Some((running, details));
        }
        ErrorCode::ValidationError | ErrorCode::EntityNotFound if !err.details().is_empty() => {
            for d in err.details() {
                let text = match d.code.as_str() {
                    "missing" => lang.t("err-missing"),
                    "not_found" => lang.t("err-not-found"),
                    _ if d.reason.contains("future") => lang.t("hv-err-future"),
                    _ => lang.t("err-invalid"),
                };
                match form_field(&d.field) {
                    Some(name) => f.fields.push((name, text)),
                    None => f.general.push(text),
                }
            }
            f.general.insert(0, lang.t("hv-err-form"));
        }
        code => f.general.push(lang.t(code_text(code))),
    }
    f
}

#[handler]
async fn harvests_page(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    let Some(scope) = open_garden(req, res, &ctx).await else {
        return;
    };
    let news = (req.query::<String>("done").as_deref() == Some("recorded"))
        .then(|| ctx.lang.t("pl-done-harvested"));
    show(req, res, &ctx, &scope, StatusCode::OK, news, None).await;
}

async fn show(
    req: &Request,
    res: &mut Response,
    ctx: &PageCtx,
    scope: &GardenScope<'_>,
    status: StatusCode,
    news: Option<String>,
    failed: Option<&Failure<'_>>,
) {
    let data = match load(ctx, scope).await {
        Ok(d) => d,
        Err(e) => return ctx.fail(req, res, e),
    };
    let lang = ctx.lang;
    let grower = scope.garden.role >= Role::Grower;
    let body = html! {
        h1 { (lang.t("hv-title")) " · " (scope.garden.tenant.name) }
        @if let Some(text) = &news { (notice("ok", text)) }
        (readiness_card(lang, &scope.slug, "hv-ready", "hv-ready-none", &data.ready))
        (readiness_card(lang, &scope.slug, "hv-near", "hv-near-none", &data.near))
        @if grower {
            (form_card(lang, scope, &data, failed))
        } @else {
            p.meta { (lang.t("hv-viewer-only")) }
        }
        (batches_card(lang, &scope.slug, &data))
    };
    scope.page(
        req,
        res,
        lang,
        status,
        format!("{} · {}", lang.t("hv-title"), scope.garden.tenant.name),
        body,
    );
}

fn plant_link(slug: &str, key: Uuid, name: &str) -> Markup {
    html! { a href=(format!("/app/g/{slug}/plants/{key}")) { (name) } }
}

fn readiness_card(lang: Lang, slug: &str, title: &str, none: &str, list: &[Readiness]) -> Markup {
    html! {
        section.card aria-labelledby=(format!("sec-{title}")) {
            h2 id=(format!("sec-{title}")) { (lang.t(title)) " " span.meta { "(" (list.len()) ")" } }
            @if list.is_empty() {
                p.empty { (lang.t(none)) }
            } @else {
                ul.items {
                    @for r in list {
                        li {
                            span.what { (plant_link(slug, r.plant_key, &r.plant_name)) }
                            span.meta {
                                (choice(lang, "hv-rec", &r.recommendation))
                                " · " (lang.t_with("hv-score", &[("score", num(lang, r.score).into())]))
                                @if let Some(d) = r.estimated_days_to_harvest {
                                    " · " (lang.t_with("hv-days-est", &[("days", d.into())]))
                                }
                                @if r.phase_allows_harvest == Some(false) { " · " (lang.t("hv-phase-no")) }
                                @if !r.safety_intervals.is_empty() {
                                    " · " (lang.t("safety-harvest-from")) " " (lang.iso_date(&r.harvest_allowed_from))
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn batches_card(lang: Lang, slug: &str, data: &Data) -> Markup {
    html! {
        section.card aria-labelledby="sec-batches" {
            h2 id="sec-batches" { (lang.t("hv-batches")) " " span.meta { "(" (data.total) ")" } }
            @if data.batches.is_empty() {
                p.empty { (lang.t("pl-harvests-none")) }
            } @else {
                ul.items {
                    @for b in &data.batches {
                        li {
                            span.what {
                                @match data.names.get(&b.plant_key) {
                                    Some(name) => { (plant_link(slug, b.plant_key, name)) }
                                    None => { (lang.t("hv-plant-gone")) }
                                }
                                " · " strong { (num(lang, b.wet_weight_g)) " g" }
                            }
                            span.meta {
                                (lang.iso_date(&b.harvest_date)) " · " (b.label)
                                " · " (choice(lang, "pl-harvest-type", harvest_type_str(b)))
                                " · " (lang.t("hv-quality")) ": " (quality_text(lang, b))
                            }
                        }
                    }
                }
            }
        }
    }
}

fn harvest_type_str(b: &HarvestBatch) -> &'static str {
    use crate::garden::harvest::model::HarvestType as H;
    match b.harvest_type {
        H::Partial => "partial",
        H::Final => "final",
        H::Continuous => "continuous",
    }
}

/// The grade (and score when computed), or that none was given.
fn quality_text(lang: Lang, b: &HarvestBatch) -> String {
    let grade = b
        .quality_grade
        .and_then(|g| serde_json::to_value(g).ok())
        .and_then(|v| v.as_str().map(str::to_owned));
    match (grade, b.quality_score) {
        (Some(g), Some(s)) => format!("{} ({})", choice(lang, "hv-grade", &g), num(lang, s)),
        (Some(g), None) => choice(lang, "hv-grade", &g),
        (None, _) => lang.t("hv-quality-none"),
    }
}

fn form_card(
    lang: Lang,
    scope: &GardenScope<'_>,
    data: &Data,
    failed: Option<&Failure<'_>>,
) -> Markup {
    let typed = |name: &str| {
        failed
            .and_then(|f| f.posted.get(name))
            .unwrap_or_default()
            .to_owned()
    };
    let error_of = |name: &str| failed.and_then(|f| f.field(name));
    let field_error = |name: &str| {
        html! {
            @if let Some(text) = error_of(name) {
                p class="notice bad" id=(format!("hv-{name}-err")) { (text) }
            }
        }
    };
    let described = |name: &str| error_of(name).map(|_| format!("hv-{name}-err"));
    let chosen = typed("plant_key");
    let grade = typed("quality_grade");
    let base = format!("/app/g/{}/harvests", scope.slug);
    html! {
        section.card aria-labelledby="sec-record" id="record" {
            h2 id="sec-record" { (lang.t("pl-harvest-add")) }
            @if let Some(f) = failed {
                @if let Some((running, details)) = &f.karenz {
                    (karenz_refusal(lang, running, details))
                }
                (refused(&f.general))
            }
            @if data.plants.is_empty() {
                p.empty { (lang.t("hv-no-plants")) }
            } @else {
                form.stack method="post" action=(base) {
                    (csrf_field(&scope.s.csrf))
                    label for="hv-plant_key" { (lang.t("task-field-plant")) }
                    select id="hv-plant_key" name="plant_key" required aria-describedby=[described("plant_key")] {
                        @for (key, name) in &data.plants {
                            option value=(key.to_string()) selected[chosen == key.to_string()] { (name) }
                        }
                    }
                    (field_error("plant_key"))
                    label for="hv-harvest_date" { (lang.t("pl-harvest-date")) }
                    input type="date" id="hv-harvest_date" name="harvest_date" value=(typed("harvest_date")) aria-describedby=[described("harvest_date")];
                    (field_error("harvest_date"))
                    (batch_fields(lang, &typed))
                    (field_error("wet_weight_g"))
                    label for="hv-quality_grade" { (lang.t("hv-quality")) }
                    select id="hv-quality_grade" name="quality_grade" aria-describedby=[described("quality_grade")] {
                        option value="" { (lang.t("hv-quality-none")) }
                        @for g in crate::rules::harvest::GRADES {
                            option value=(g) selected[grade == *g] { (choice(lang, "hv-grade", g)) }
                        }
                    }
                    (field_error("quality_grade"))
                    (field_error("notes"))
                    button type="submit" { (lang.t("pl-save")) }
                }
            }
        }
    }
}

/// `POST /app/g/{slug}/harvests`: `harvest::service::create_batch` (a grower's, as on REST);
/// the gate's refusal is the page again (422) with the first allowed day, nothing written.
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
    let actor = format!("user:{}", scope.s.principal.user_id);
    let outcome = async {
        scope.garden.require(Role::Grower)?;
        let new: NewBatch = parse(batch_body(&posted))?;
        harvest::create_batch(&ctx.state, &scope.garden.tenant, &new, &actor, true).await
    }
    .await;
    match outcome {
        Ok(_) => see_other(
            req,
            res,
            &done(&format!("/app/g/{}/harvests", scope.slug), "recorded"),
        ),
        Err(err) if shown_on_form(&err) || err.code() == ErrorCode::EntityNotFound => {
            // An unknown plant is the form's field (the list offers only this garden's).
            let f = failure(&ctx, &scope, &err, &posted).await;
            let status = err.code().status();
            show(req, res, &ctx, &scope, status, None, Some(&f)).await;
        }
        Err(err) => ctx.fail(req, res, err),
    }
}
