//! The plants of a garden: the list (filters by location, phase and name, paged), creating one
//! or several plants (species search as a plain GET form, place, substrate), and a plant's page
//! (phase timeline and transition, care log, watering and feeding, inspections and treatments
//! with the safety interval each starts, harvests, diary with photos) with the forms that
//! record each of these. Every read and write is the service function the REST route and the
//! tool call; a refused form comes back with what was typed and why, nothing written.

use std::collections::HashMap;

use maud::{Markup, html};
use salvo::http::HeaderValue;
use salvo::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use salvo::prelude::*;
use serde_json::{Map, Value, json};
use time::{Date, OffsetDateTime};
use uuid::Uuid;

use super::garden::{care_type_text, signed_in};
use super::scope::{GardenScope, open_garden};
use super::{PageCtx, csrf_refused, here, url_escape};
use crate::auth::Role;
use crate::catalog::engine::service::ListParams;
use crate::error::{AppError, ErrorCode};
use crate::garden::care::model::CareLogEntry;
use crate::garden::diary::model::{EntryFilter, EntrySummary};
use crate::garden::harvest::model::{HarvestBatch, Readiness};
use crate::garden::ipm::model::{Application, Inspection};
use crate::garden::photos::model::Photo;
use crate::garden::plants::model::{PhaseHistoryEntry, PhaseStatus, Plant, PlantSummary};
use crate::garden::watering::model::WateringEvent;
use crate::http::depot::DepotExt;
use crate::http::pagination::PageRequest;
use crate::platform::access::TenantCtx;
use crate::platform::tenants::model::Tenant;
use crate::web::forms::{Field, Posted, explain, parse};
use crate::web::i18n::Lang;
use crate::web::layout::{self, Frame, csrf_field, notice, see_other};
use crate::web::session::CSRF_FIELD;

pub fn router() -> Router {
    Router::with_path("g/{slug}")
        .push(
            Router::with_path("plants")
                .get(list_page)
                .push(Router::with_path("new").get(new_form).post(create_post))
                .push(
                    Router::with_path("{plant_key}")
                        .get(show_plant)
                        .push(Router::with_path("phase").post(phase_post))
                        .push(Router::with_path("watering").post(watering_post))
                        .push(Router::with_path("inspection").post(inspection_post))
                        .push(Router::with_path("treatment").post(treatment_post))
                        .push(Router::with_path("harvest").post(harvest_post))
                        .push(Router::with_path("diary").post(diary_post)),
                ),
        )
        .push(Router::with_path("photos/{photo_key}/{size}").get(photo_get))
}

/// Plants per page of the list.
const PAGE_SIZE: i64 = 25;
/// Most plants one create form makes.
const MANY_MAX: i64 = 50;
/// Most options a choice of places, batches, treatments or fertilisers lists.
const CHOICES_MAX: i64 = 200;
/// Entries of each record list a plant's page shows (the newest).
const RECORDS: i64 = 20;
/// Species a search lists.
const SPECIES_MAX: i64 = 20;

fn page(limit: i64) -> PageRequest {
    PageRequest { skip: 0, limit }
}

/// A signed-in member's request in one garden.
struct Open {
    ctx: PageCtx,
    garden: TenantCtx,
    slug: String,
    gardens: Vec<Tenant>,
    user: Uuid,
    csrf: String,
    tz: String,
}

impl Open {
    fn lang(&self) -> Lang {
        self.ctx.lang
    }

    fn frame(&self, req: &Request, title: String) -> Frame<'_> {
        Frame {
            lang: self.ctx.lang,
            title,
            session: self.ctx.session.as_ref(),
            gardens: &self.gardens,
            garden: Some(&self.slug),
            here: here(req),
            csrf: self.csrf.clone(),
        }
    }

    fn can_write(&self) -> bool {
        self.garden.role >= Role::Grower
    }

    fn actor(&self) -> String {
        format!("user:{}", self.user)
    }

    fn base(&self) -> String {
        format!("/app/g/{}/plants", self.slug)
    }

    fn fail(&self, req: &Request, res: &mut Response, err: AppError) {
        self.ctx.fail(req, res, err);
    }
}

/// The garden of the request for its signed-in member; `None` once the redirect to the sign-in
/// or the error page is written.
async fn open(req: &Request, res: &mut Response, ctx: PageCtx) -> Option<Open> {
    let scope = open_garden(req, res, &ctx).await?;
    let (user, csrf, tz) = (
        scope.s.principal.user_id,
        scope.s.csrf.clone(),
        scope.s.prefs.timezone.clone(),
    );
    let GardenScope {
        slug,
        garden,
        gardens,
        ..
    } = scope;
    Some(Open {
        ctx,
        garden,
        slug,
        gardens,
        user,
        csrf,
        tz,
    })
}

async fn open_get(req: &mut Request, depot: &Depot, res: &mut Response) -> Option<Open> {
    let ctx = PageCtx::or_fail(req, depot, res).await?;
    open(req, res, ctx).await
}

/// A posted form of a signed-in member (at most `max` bytes), once its CSRF value is the
/// session's; a grower's at least.
async fn open_post(
    req: &mut Request,
    depot: &Depot,
    res: &mut Response,
    max: usize,
) -> Option<(Open, Posted)> {
    let ctx = PageCtx::or_fail(req, depot, res).await?;
    signed_in(req, res, &ctx)?;
    let posted = match Posted::read(req, max).await {
        Ok(p) => p,
        Err(e) => {
            ctx.fail(req, res, e);
            return None;
        }
    };
    if !ctx.csrf_ok(req, posted.get(CSRF_FIELD)) {
        csrf_refused(req, res, ctx.lang);
        return None;
    }
    let o = open(req, res, ctx).await?;
    if let Err(e) = o.garden.require(Role::Grower) {
        o.fail(req, res, e);
        return None;
    }
    Some((o, posted))
}

// ---------- how things read ----------

/// A number as the language writes it: at most two decimals, a decimal comma in German.
fn num(lang: Lang, x: f64) -> String {
    let text = format!("{x:.2}");
    let text = text.trim_end_matches('0').trim_end_matches('.').to_owned();
    match lang {
        Lang::De => text.replace('.', ","),
        Lang::En => text,
    }
}

/// The person's calendar day of an instant (their time zone).
fn local_day(tz: &str, at: OffsetDateTime) -> Date {
    let zone = jiff::tz::TimeZone::get(tz).unwrap_or(jiff::tz::TimeZone::UTC);
    match jiff::Timestamp::from_second(at.unix_timestamp()) {
        Ok(ts) => crate::platform::preferences::service::day_of(&ts.to_zoned(zone)),
        Err(_) => at.date(),
    }
}

/// Day and time of an instant where the person lives.
fn local_stamp(lang: Lang, tz: &str, at: OffsetDateTime) -> String {
    let zone = jiff::tz::TimeZone::get(tz).unwrap_or(jiff::tz::TimeZone::UTC);
    match jiff::Timestamp::from_second(at.unix_timestamp()) {
        Ok(ts) => {
            let z = ts.to_zoned(zone);
            format!(
                "{} {:02}:{:02}",
                lang.date(crate::platform::preferences::service::day_of(&z)),
                z.hour(),
                z.minute()
            )
        }
        Err(_) => lang.date(at.date()),
    }
}

fn species_label(lang: Lang, record: &Value) -> String {
    let common = |field: &str| {
        record
            .get(field)
            .and_then(Value::as_array)
            .and_then(|a| a.first())
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let scientific = record
        .get("scientific_name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let own = match lang {
        Lang::De => common("common_names_de").or_else(|| common("common_names_en")),
        Lang::En => common("common_names_en"),
    };
    match own {
        Some(name) if !scientific.is_empty() => format!("{name} ({scientific})"),
        Some(name) => name,
        None => scientific,
    }
}

fn plant_species(p: &Plant) -> String {
    match (&p.species.common_name, &p.species.scientific_name) {
        (Some(c), Some(s)) => format!("{c} ({s})"),
        (Some(c), None) => c.clone(),
        (None, Some(s)) => s.clone(),
        (None, None) => p.species.key.clone(),
    }
}

fn text_of(v: &Value, field: &str) -> String {
    v.get(field)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

fn choice_text(lang: Lang, prefix: &str, key: &str) -> String {
    let id = format!("{prefix}-{}", key.replace('_', "-"));
    let text = lang.t(&id);
    if text == id { key.to_owned() } else { text }
}

/// Every field a form of these pages names, as the person reads it.
fn label(lang: Lang, field: &str) -> Option<String> {
    let base = field.split(['[', '.']).next().unwrap_or(field);
    let id = match (base, field.ends_with("ml_applied")) {
        ("fertilizers_used", true) => "pl-fertilizer-amount",
        ("fertilizers_used", false) => "pl-fertilizer",
        ("species_key", _) => "pl-species",
        ("name", _) => "pl-name",
        ("count", _) => "pl-count",
        ("location_key" | "location", _) => "pl-location",
        ("phase", _) => "pl-phase",
        ("slot_key", _) => "pl-slot",
        ("substrate_batch_key", _) => "pl-substrate",
        ("planted_on", _) => "pl-planted-on",
        ("notes", _) => "pl-notes",
        ("target_phase_key", _) => "pl-phase-target",
        ("volume_liters", _) => "pl-volume",
        ("ec_after_ms", _) => "pl-ec",
        ("ph_after", _) => "pl-ph",
        ("pressure_level", _) => "pl-pressure",
        ("symptoms_observed", _) => "pl-symptom",
        ("treatment_key", _) => "pl-treatment",
        ("dose", _) => "pl-dose",
        ("dose_unit", _) => "pl-dose-unit",
        ("wet_weight_g", _) => "pl-wet-weight",
        ("harvest_date", _) => "pl-harvest-date",
        ("label", _) => "pl-batch-label",
        ("title", _) => "pl-title",
        ("text", _) => "pl-text",
        ("entry_type", _) => "pl-entry-type",
        ("photo", _) => "pl-photos",
        _ => return None,
    };
    Some(lang.t(id))
}

/// A refused form: which one, what to say, what was typed.
struct Failure<'a> {
    form: &'static str,
    lines: Vec<String>,
    /// The service's own words (English), shown folded under the sentences.
    details: Vec<String>,
    posted: &'a Posted,
    /// A conflict the grower may plant or treat through with this checkbox.
    acknowledge: Option<&'static str>,
}

impl Failure<'_> {
    fn of(&self, form: &str) -> Option<&Self> {
        (self.form == form).then_some(self)
    }
}

/// What a refusal says, in the page's language.
fn explain_here(lang: Lang, err: &AppError) -> (Vec<String>, Vec<String>, Option<&'static str>) {
    let reasons = || err.details().iter().map(|d| d.reason.clone()).collect();
    match err.code() {
        ErrorCode::RotationViolation => (
            vec![lang.t("pl-err-rotation")],
            reasons(),
            Some("acknowledge_rotation"),
        ),
        ErrorCode::IncompatibleCompanion => (
            vec![lang.t("pl-err-companion")],
            reasons(),
            Some("acknowledge_companions"),
        ),
        ErrorCode::ResistanceWarning => (
            vec![lang.t("pl-err-resistance")],
            vec![err.to_string()],
            Some("acknowledge_resistance"),
        ),
        ErrorCode::SubstrateExhausted => (vec![lang.t("pl-err-substrate")], reasons(), None),
        ErrorCode::PhaseTransitionInvalid => (vec![lang.t("pl-err-phase")], reasons(), None),
        ErrorCode::UnsupportedMediaType => (vec![lang.t("pl-err-photo-type")], vec![], None),
        ErrorCode::ImageTooCompressed => (vec![lang.t("pl-err-photo-bad")], vec![], None),
        ErrorCode::StorageQuotaExceeded => (vec![lang.t("pl-err-photo-quota")], vec![], None),
        ErrorCode::KarenzViolation => (vec![lang.t("pl-err-karenz")], reasons(), None),
        _ => (explain(lang, err, &|f| label(lang, f)), vec![], None),
    }
}

fn failure<'a>(lang: Lang, form: &'static str, err: &AppError, posted: &'a Posted) -> Failure<'a> {
    let (lines, details, acknowledge) = explain_here(lang, err);
    Failure {
        form,
        lines,
        details,
        posted,
        acknowledge,
    }
}

/// What a refused form had in a field (empty otherwise).
fn typed<'a>(f: Option<&'a Failure<'_>>, name: &str) -> &'a str {
    f.and_then(|f| f.posted.get(name)).unwrap_or("")
}

fn failure_notice(f: Option<&Failure<'_>>) -> Markup {
    html! {
        @if let Some(f) = f {
            div.notice.bad role="alert" {
                @for l in &f.lines { p { (l) } }
                @if !f.details.is_empty() {
                    ul.reasons { @for d in &f.details { li { (d) } } }
                }
            }
        }
    }
}

fn acknowledge_box(lang: Lang, f: Option<&Failure<'_>>) -> Markup {
    html! {
        @if let Some(name) = f.and_then(|f| f.acknowledge) {
            label.check {
                input type="checkbox" name=(name) value="true";
                (lang.t("pl-acknowledge"))
            }
        }
    }
}

// ---------- the list ----------

/// `GET /app/g/{slug}/plants`: the garden's plants, filtered by `name`, `location` and
/// `phase` (the REST list's filters, read by its reader), `skip` to page.
#[handler]
async fn list_page(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(o) = open_get(req, depot, res).await else {
        return;
    };
    let lang = o.lang();
    // A filter left at "all" comes as an empty value: no filter (the REST reader refuses an
    // empty one, as the API's document says).
    let keep: Vec<(String, String)> = ["name", "location", "phase"]
        .iter()
        .filter_map(|n| {
            req.queries()
                .get(*n)
                .filter(|v| !v.trim().is_empty())
                .map(|v| ((*n).to_owned(), v.clone()))
        })
        .collect();
    let skip = req
        .query::<String>("skip")
        .and_then(|s| s.trim().parse::<i64>().ok())
        .unwrap_or(0)
        .clamp(0, 100_000);
    let news = match req.query::<String>("done").as_deref() {
        Some("created") => {
            let n = req.query::<i64>("n").unwrap_or(1);
            Some(lang.t_with("pl-created-many", &[("count", n.into())]))
        }
        _ => None,
    };
    {
        let q = req.queries_mut();
        for n in ["name", "location", "phase"] {
            q.remove(n);
        }
        for (n, v) in &keep {
            q.insert(n.clone(), v.clone());
        }
    }
    let shown = |n: &str| {
        keep.iter()
            .find(|(k, _)| k == n)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    let state = &o.ctx.state;
    let tenant = &o.garden.tenant;
    let filter = crate::garden::plants::model::filter_from(|n| req.queries().get(n).cloned());
    let request = PageRequest {
        skip,
        limit: PAGE_SIZE,
    };
    let everything = crate::garden::plants::repo::Filter::default();
    let listed = async {
        let filter = filter?;
        let (plants, locations, all) = tokio::try_join!(
            crate::garden::plants::service::list_plants(state, tenant, &filter, request),
            locations(&o),
            // The phases the garden's plants are in, for the phase filter.
            crate::garden::plants::service::list_plants(
                state,
                tenant,
                &everything,
                page(crate::garden::plants::service::LIST_MAX_LIMIT),
            ),
        )?;
        Ok::<_, AppError>((plants, locations, all.items))
    }
    .await;
    let (plants, locations, all) = match listed {
        Ok(l) => l,
        Err(e) if e.code() == ErrorCode::ValidationError => {
            // A filter that is not one (an edited address): the list without it, and why.
            let lines = explain(lang, &e, &|f| {
                label(lang, f.strip_prefix("query.").unwrap_or(f))
            });
            let body = html! {
                h1 { (lang.t("nav-plants")) }
                @for l in &lines { (notice("bad", l)) }
                p { a href=(o.base()) { (lang.t("pl-all-plants")) } }
            };
            let frame = o.frame(req, lang.t("nav-plants"));
            return layout::render(res, e.code().status(), layout::document(&frame, body));
        }
        Err(e) => return o.fail(req, res, e),
    };
    let names = phase_names(state, lang, all.iter().map(|p| p.species_key.as_str())).await;
    let phase_text = |key: &str, recorded: Option<&String>| {
        names
            .get(key)
            .or(recorded)
            .cloned()
            .unwrap_or_else(|| key.to_owned())
    };
    let mut phases: Vec<(String, String)> = Vec::new();
    for p in &all {
        if let Some(k) = &p.current_phase_key
            && !phases.iter().any(|(pk, _)| pk == k)
        {
            phases.push((k.clone(), phase_text(k, p.current_phase_name.as_ref())));
        }
    }
    let query_of = |skip: i64| {
        let mut parts: Vec<String> = keep
            .iter()
            .map(|(k, v)| format!("{k}={}", url_escape(v)))
            .collect();
        if skip > 0 {
            parts.push(format!("skip={skip}"));
        }
        if parts.is_empty() {
            o.base()
        } else {
            format!("{}?{}", o.base(), parts.join("&"))
        }
    };
    let location_name = |k: Option<Uuid>| {
        k.and_then(|k| locations.iter().find(|(l, _)| *l == k))
            .map(|(_, n)| n.clone())
    };
    let (name_q, location_q, phase_q) = (shown("name"), shown("location"), shown("phase"));
    let first = plants.skip + 1;
    let last = plants.skip + plants.items.len() as i64;
    let body = html! {
        h1 { (lang.t("nav-plants")) " · " (o.garden.tenant.name) }
        @if let Some(text) = &news { (notice("ok", text)) }
        @if o.can_write() {
            p { a.button href=(format!("{}/new", o.base())) { (lang.t("pl-new")) } }
        }
        form.filters method="get" action=(o.base()) role="search" aria-label=(lang.t("pl-filters")) {
            div.field {
                label for="f-name" { (lang.t("pl-search-name")) }
                input type="search" id="f-name" name="name" value=(name_q) maxlength="100";
            }
            div.field {
                label for="f-location" { (lang.t("pl-location")) }
                select id="f-location" name="location" {
                    option value="" { (lang.t("pl-all")) }
                    @for (k, n) in &locations {
                        option value=(k.to_string()) selected[location_q == k.to_string()] { (n) }
                    }
                }
            }
            div.field {
                label for="f-phase" { (lang.t("pl-phase")) }
                select id="f-phase" name="phase" {
                    option value="" { (lang.t("pl-all")) }
                    @for (k, n) in &phases {
                        option value=(k) selected[&phase_q == k] { (n) }
                    }
                }
            }
            button type="submit" { (lang.t("pl-filter")) }
        }
        section.card aria-labelledby="sec-plants" {
            h2 id="sec-plants" { (lang.t("pl-list-title")) }
            @if plants.items.is_empty() {
                p.empty { (lang.t("pl-none")) }
            } @else {
                ul.items {
                    @for p in &plants.items {
                        (plant_item(lang, &o.base(), p, location_name(p.location_key),
                            p.current_phase_key.as_deref().map(|k| phase_text(k, p.current_phase_name.as_ref()))))
                    }
                }
                p.meta { (lang.t_with("pl-showing", &[("first", first.into()), ("last", last.into()), ("total", plants.total.into())])) }
            }
            @if plants.skip > 0 || last < plants.total {
                nav.pager aria-label=(lang.t("pl-pages")) {
                    @if plants.skip > 0 {
                        a rel="prev" href=(query_of((plants.skip - PAGE_SIZE).max(0))) { (lang.t("pl-previous")) }
                    }
                    @if last < plants.total {
                        a rel="next" href=(query_of(plants.skip + PAGE_SIZE)) { (lang.t("pl-next")) }
                    }
                }
            }
        }
    };
    let frame = o.frame(
        req,
        format!("{} · {}", lang.t("nav-plants"), o.garden.tenant.name),
    );
    layout::render(res, StatusCode::OK, layout::document(&frame, body));
}

fn plant_item(
    lang: Lang,
    base: &str,
    p: &PlantSummary,
    location: Option<String>,
    phase: Option<String>,
) -> Markup {
    html! {
        li {
            span.what {
                a href=(format!("{base}/{}", p.key)) { strong { (p.name) } }
                br;
                span.meta {
                    (p.species_name.clone().unwrap_or_else(|| p.species_key.clone()))
                    @if let Some(phase_now) = &phase { " · " (phase_now) }
                    @if let Some(l) = &location { " · " (l) }
                    @if let Some(d) = &p.planted_on { " · " (lang.t("pl-planted")) " " (lang.iso_date(d)) }
                }
            }
        }
    }
}

/// Phase names in the page's language, by phase key, from the sequences the species run on
/// (read from the catalogue's cache); a species that left the catalogue names none.
async fn phase_names(
    state: &crate::state::AppState,
    lang: Lang,
    species: impl Iterator<Item = &str>,
) -> HashMap<String, String> {
    let mut seen: Vec<&str> = Vec::new();
    let mut names = HashMap::new();
    for key in species {
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        let Ok(s) = crate::catalog::species::service::phase_sequence_of(state, key).await else {
            continue;
        };
        for e in &s.sequence.entries {
            let own = match lang {
                Lang::De => e.display_name_de.clone(),
                Lang::En => e.display_name_en.clone(),
            };
            names.insert(
                e.phase_key.clone(),
                own.unwrap_or_else(|| e.phase_name.clone()),
            );
        }
    }
    names
}

/// The garden's locations (key, name), for filters and forms.
async fn locations(o: &Open) -> Result<Vec<(Uuid, String)>, AppError> {
    let page = crate::garden::places::service::list_locations(
        &o.ctx.state,
        &o.garden.tenant,
        crate::garden::places::repo::LocationFilter {
            site: None,
            parent: None,
        },
        page(CHOICES_MAX),
    )
    .await?;
    Ok(page.items.into_iter().map(|l| (l.key, l.name)).collect())
}

// ---------- creating ----------

/// What the create form offers.
struct Choices {
    species: Vec<Value>,
    locations: Vec<(Uuid, String)>,
    slots: Vec<(Uuid, String)>,
    batches: Vec<(Uuid, String)>,
}

async fn choices(o: &Open, species_q: &str) -> Result<Choices, AppError> {
    let state = &o.ctx.state;
    let tenant = &o.garden.tenant;
    let params = ListParams {
        q: (!species_q.trim().is_empty()).then(|| species_q.trim().to_owned()),
        filters: Vec::new(),
    };
    let (species, locations, slots, batches) = tokio::try_join!(
        crate::catalog::engine::service::list(
            state,
            &crate::catalog::species::model::SPECIES,
            &params,
            None,
            page(SPECIES_MAX),
        ),
        locations(o),
        crate::garden::places::service::list_slots(state, tenant, None, page(CHOICES_MAX)),
        crate::garden::substrates::service::list_batches(state, tenant, None, page(CHOICES_MAX)),
    )?;
    let slots = slots
        .items
        .into_iter()
        .map(|s| {
            let place = locations
                .iter()
                .find(|(k, _)| *k == s.location_key)
                .map(|(_, n)| n.clone())
                .unwrap_or_default();
            (s.key, format!("{} · {place}", s.code))
        })
        .collect();
    let batches = batches
        .items
        .into_iter()
        .map(|b| {
            let name = b.substrate_name.clone().unwrap_or(b.substrate_key.clone());
            (b.key, format!("{} · {name}", b.label))
        })
        .collect();
    Ok(Choices {
        species: species.items,
        locations,
        slots,
        batches,
    })
}

/// `GET /app/g/{slug}/plants/new?species_q=…`: the create form; the species search is a
/// plain GET form (htmx swaps only its results in while typing).
#[handler]
async fn new_form(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(o) = open_get(req, depot, res).await else {
        return;
    };
    if let Err(e) = o.garden.require(Role::Grower) {
        return o.fail(req, res, e);
    }
    let q = req.query::<String>("species_q").unwrap_or_default();
    render_new(req, res, &o, &q, None, StatusCode::OK).await;
}

async fn render_new(
    req: &Request,
    res: &mut Response,
    o: &Open,
    species_q: &str,
    failed: Option<&Failure<'_>>,
    status: StatusCode,
) {
    let lang = o.lang();
    let c = match choices(o, species_q).await {
        Ok(c) => c,
        Err(e) if e.code() == ErrorCode::ValidationError => Choices {
            species: Vec::new(),
            locations: locations(o).await.unwrap_or_default(),
            slots: Vec::new(),
            batches: Vec::new(),
        },
        Err(e) => return o.fail(req, res, e),
    };
    let f = failed;
    let chosen = typed(f, "species_key");
    let action = format!("{}/new", o.base());
    let body = html! {
        h1 { (lang.t("pl-new-title")) }
        form.search method="get" action=(action) role="search" aria-label=(lang.t("pl-species-search")) {
            label for="species_q" { (lang.t("pl-species-search")) }
            div.inline {
                input type="search" id="species_q" name="species_q" value=(species_q) maxlength="100"
                    hx-get=(action) hx-trigger="input changed delay:400ms, search"
                    hx-select="#species-results" hx-target="#species-results" hx-swap="outerHTML";
                button.secondary type="submit" { (lang.t("pl-search")) }
            }
        }
        (failure_notice(f))
        form.stack method="post" action=(action) {
            (csrf_field(&o.csrf))
            input type="hidden" name="species_q" value=(species_q);
            fieldset id="species-results" {
                legend { (lang.t("pl-species")) }
                @if c.species.is_empty() {
                    p.empty { (lang.t("pl-species-none")) }
                }
                @for (i, s) in c.species.iter().enumerate() {
                    @let key = text_of(s, "key");
                    label.check {
                        input type="radio" name="species_key" value=(key) required
                            checked[chosen == key || (chosen.is_empty() && i == 0 && c.species.len() == 1)];
                        (species_label(lang, s))
                    }
                }
            }
            label for="name" { (lang.t("pl-name")) }
            input type="text" id="name" name="name" maxlength="120" value=(typed(f, "name"));
            p.meta { (lang.t("pl-name-hint")) }
            label for="count" { (lang.t("pl-count")) }
            input type="number" id="count" name="count" min="1" max=(MANY_MAX) inputmode="numeric"
                value=(if typed(f, "count").is_empty() { "1" } else { typed(f, "count") });
            label for="location_key" { (lang.t("pl-location")) }
            select id="location_key" name="location_key" {
                option value="" { (lang.t("pl-none-chosen")) }
                @for (k, n) in &c.locations {
                    option value=(k.to_string()) selected[typed(f, "location_key") == k.to_string()] { (n) }
                }
            }
            label for="slot_key" { (lang.t("pl-slot")) }
            select id="slot_key" name="slot_key" {
                option value="" { (lang.t("pl-none-chosen")) }
                @for (k, n) in &c.slots {
                    option value=(k.to_string()) selected[typed(f, "slot_key") == k.to_string()] { (n) }
                }
            }
            label for="substrate_batch_key" { (lang.t("pl-substrate")) }
            select id="substrate_batch_key" name="substrate_batch_key" {
                option value="" { (lang.t("pl-none-chosen")) }
                @for (k, n) in &c.batches {
                    option value=(k.to_string()) selected[typed(f, "substrate_batch_key") == k.to_string()] { (n) }
                }
            }
            label for="planted_on" { (lang.t("pl-planted-on")) }
            input type="date" id="planted_on" name="planted_on" value=(typed(f, "planted_on"));
            (acknowledge_box(lang, f))
            button type="submit" { (lang.t("pl-create")) }
        }
        p { a href=(o.base()) { (lang.t("pl-all-plants")) } }
    };
    let frame = o.frame(req, lang.t("pl-new-title"));
    layout::render(res, status, layout::document(&frame, body));
}

/// `POST /app/g/{slug}/plants/new`: one plant (`create_plant_acknowledged`, as the REST
/// create), or `count` plants named `{name} 1…n`: every one read first, the first checked
/// by a dry run of the same function, then each created by it.
#[handler]
async fn create_post(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let max = match depot.app_state() {
        Ok(s) => s.config().max_body_bytes,
        Err(e) => return super::fail(req, res, crate::web::session::visitor_lang(req), e),
    };
    let Some((o, posted)) = open_post(req, depot, res, max).await else {
        return;
    };
    let lang = o.lang();
    let state = &o.ctx.state;
    let tenant = &o.garden.tenant;
    let actor = o.actor();
    let spec = [
        ("species_key", Field::Text),
        ("name", Field::Optional),
        ("location_key", Field::Optional),
        ("slot_key", Field::Optional),
        ("substrate_batch_key", Field::Optional),
        ("planted_on", Field::Optional),
        ("acknowledge_rotation", Field::Checkbox),
        ("acknowledge_companions", Field::Checkbox),
    ];
    let count = match posted.get("count").map(str::trim).filter(|c| !c.is_empty()) {
        None => Ok(1),
        Some(raw) => raw
            .parse::<i64>()
            .ok()
            .filter(|n| (1..=MANY_MAX).contains(n))
            .ok_or_else(|| {
                AppError::validation(vec![crate::error::ErrorDetail::new(
                    "body.count",
                    format!("a whole number from 1 to {MANY_MAX}"),
                    "value_error",
                )])
            }),
    };
    let outcome = async {
        let count = count?;
        let first: crate::garden::plants::model::PlantCreate = parse(posted.object(&spec))?;
        if count == 1 {
            let plant = crate::garden::plants::service::create_plant_acknowledged(
                state,
                tenant,
                &first.plant,
                first.acknowledge,
                &actor,
                true,
            )
            .await?;
            return Ok((Some(plant.key), 1));
        }
        // The first checked without writing (species, place, substrate, conflicts); its name
        // is the species' default when none was typed.
        let dry = crate::garden::plants::service::create_plant_acknowledged(
            state,
            tenant,
            &first.plant,
            first.acknowledge,
            &actor,
            false,
        )
        .await?;
        let base = first.plant.name.clone().unwrap_or(dry.name);
        let mut all = Vec::new();
        for i in 1..=count {
            let mut map = posted.object(&spec);
            map.insert("name".into(), Value::String(format!("{base} {i}")));
            let one: crate::garden::plants::model::PlantCreate = parse(map)?;
            all.push(one);
        }
        let mut made = 0;
        for one in &all {
            if let Err(e) = crate::garden::plants::service::create_plant_acknowledged(
                state,
                tenant,
                &one.plant,
                one.acknowledge,
                &actor,
                true,
            )
            .await
            {
                // Those made stay (each is a plant of its own); the page says how many.
                tracing::info!(made, error = %e, "web: several plants, one refused");
                return Err(if made > 0 {
                    AppError::new(
                        e.code(),
                        format!("{made} of {count} plants were created; then: {e}"),
                    )
                    .with_details(e.details().to_vec())
                } else {
                    e
                });
            }
            made += 1;
        }
        Ok((None, made))
    }
    .await;
    match outcome {
        Ok((Some(key), _)) => see_other(req, res, &format!("{}/{key}?done=created", o.base())),
        Ok((None, n)) => see_other(req, res, &format!("{}?done=created&n={n}", o.base())),
        Err(e) if e.code().status().is_server_error() || e.code() == ErrorCode::Forbidden => {
            o.fail(req, res, e)
        }
        Err(e) => {
            let f = failure(lang, "create", &e, &posted);
            let q = posted.get("species_q").unwrap_or("").to_owned();
            render_new(req, res, &o, &q, Some(&f), e.code().status()).await;
        }
    }
}

// ---------- a plant's page ----------

/// Everything a plant's page shows, read before any of it is written out.
struct PlantData {
    plant: Plant,
    /// The species as the page's language names it (its catalogue record).
    species: String,
    status: PhaseStatus,
    phase_names: HashMap<String, String>,
    history: Vec<PhaseHistoryEntry>,
    care: Vec<CareLogEntry>,
    waterings: Vec<WateringEvent>,
    inspections: Vec<Inspection>,
    applications: Vec<Application>,
    batches: Vec<HarvestBatch>,
    readiness: Readiness,
    diary: Vec<(EntrySummary, Vec<Photo>)>,
    treatments: Vec<Value>,
    fertilizers: Vec<(String, String)>,
}

async fn read_plant(o: &Open, key: &str) -> Result<PlantData, AppError> {
    let state = &o.ctx.state;
    let tenant = &o.garden.tenant;
    // Another garden's plant (or no plant) is a 404 before anything else is read.
    let plant = crate::garden::plants::service::get_plant(state, tenant, key).await?;
    let id = plant.key;
    let no_filter = ListParams {
        q: None,
        filters: Vec::new(),
    };
    let water_filter = crate::garden::watering::repo::Filter {
        plant: Some(id),
        run: None,
        tank: None,
        from: None,
        to: None,
    };
    let batch_filter = crate::garden::harvest::repo::BatchFilter {
        plant: Some(id),
        run: None,
        from: None,
        to: None,
    };
    let entry_filter = EntryFilter {
        plant: Some(id),
        ..EntryFilter::default()
    };
    let fert_query = crate::garden::fertilizers::service::Query::default();
    let (status, history, care, waterings, inspections, applications, batches, readiness) = tokio::try_join!(
        crate::garden::plants::service::phase_status(state, tenant, key),
        crate::garden::plants::service::phase_history(state, tenant, key, page(50)),
        crate::garden::care::service::care_log(state, tenant, key, None, RECORDS),
        crate::garden::watering::service::list_events(state, tenant, &water_filter, page(RECORDS),),
        crate::garden::ipm::service::list_inspections(state, tenant, Some(id), None, page(RECORDS)),
        crate::garden::ipm::service::list_applications(state, tenant, Some(id), page(RECORDS)),
        crate::garden::harvest::service::list_batches(state, tenant, batch_filter, page(RECORDS),),
        crate::garden::harvest::service::plant_readiness(state, tenant, key),
    )?;
    let (entries, treatments, fertilizers) = tokio::try_join!(
        crate::garden::diary::service::list_entries(state, tenant, &entry_filter, page(10),),
        crate::catalog::engine::service::list(
            state,
            &crate::catalog::ipm::model::TREATMENT,
            &no_filter,
            None,
            page(CHOICES_MAX),
        ),
        crate::garden::fertilizers::service::list(state, tenant, &fert_query, page(CHOICES_MAX),),
    )?;
    let mut diary = Vec::new();
    for e in entries.items {
        let photos = if e.photo_count > 0 {
            crate::garden::photos::service::list(state, tenant, &e.key.to_string(), page(20))
                .await?
                .items
        } else {
            Vec::new()
        };
        diary.push((e, photos));
    }
    // The phases' names (the species' sequence; none when it left the catalogue).
    let lang = o.lang();
    let phase_names = phase_names(state, lang, std::iter::once(plant.species.key.as_str())).await;
    let species = crate::catalog::engine::service::get(
        state,
        &crate::catalog::species::model::SPECIES,
        &plant.species.key,
    )
    .await
    .map_or_else(|_| plant_species(&plant), |v| species_label(lang, &v));
    let mut applications = applications.items;
    applications.sort_by_key(|a| std::cmp::Reverse(a.applied_at));
    Ok(PlantData {
        plant,
        species,
        status,
        phase_names,
        history: history.items,
        care,
        waterings: waterings.items,
        inspections: inspections.items,
        applications,
        batches: batches.items,
        readiness,
        diary,
        treatments: treatments.items,
        fertilizers: fertilizers
            .items
            .iter()
            .map(|f| (f.key().to_owned(), f.name().to_owned()))
            .collect(),
    })
}

/// `GET /app/g/{slug}/plants/{plant_key}`: the plant's page.
#[handler]
async fn show_plant(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(o) = open_get(req, depot, res).await else {
        return;
    };
    let key = req.param::<String>("plant_key").unwrap_or_default();
    let done = req.query::<String>("done");
    render_plant(req, res, &o, &key, done.as_deref(), None, StatusCode::OK).await;
}

async fn render_plant(
    req: &Request,
    res: &mut Response,
    o: &Open,
    key: &str,
    done: Option<&str>,
    failed: Option<&Failure<'_>>,
    status: StatusCode,
) {
    let data = match read_plant(o, key).await {
        Ok(d) => d,
        Err(e) => return o.fail(req, res, e),
    };
    let lang = o.lang();
    let body = plant_body(o, &data, done, failed);
    let frame = o.frame(
        req,
        format!("{} · {}", data.plant.name, lang.t("nav-plants")),
    );
    layout::render(res, status, layout::document(&frame, body));
}

fn news_text(lang: Lang, done: Option<&str>, d: &PlantData) -> Option<String> {
    let key = match done? {
        "created" => "pl-done-created",
        "moved" => "pl-done-moved",
        "watered" => "pl-done-watered",
        "inspected" => "pl-done-inspected",
        "harvested" => "pl-done-harvested",
        "noted" => "pl-done-noted",
        "treated" => {
            // The interval the newest application started for this plant.
            let touched = d
                .applications
                .first()
                .and_then(|a| a.plants.iter().find(|p| p.plant_key == d.plant.key));
            return Some(match touched {
                Some(t) if t.safety_interval_days > 0 => lang.t_with(
                    "pl-done-treated-interval",
                    &[
                        ("days", i64::from(t.safety_interval_days).into()),
                        (
                            "until",
                            t.last_blocked_day
                                .as_deref()
                                .map(|x| lang.iso_date(x))
                                .unwrap_or_default()
                                .into(),
                        ),
                        ("from", lang.iso_date(&t.safe_on).into()),
                        (
                            "source",
                            t.interval_source
                                .clone()
                                .unwrap_or_else(|| lang.t("pl-no-source"))
                                .into(),
                        ),
                    ],
                ),
                _ => lang.t("pl-done-treated"),
            });
        }
        _ => return None,
    };
    Some(lang.t(key))
}

fn plant_body(o: &Open, d: &PlantData, done: Option<&str>, failed: Option<&Failure<'_>>) -> Markup {
    let lang = o.lang();
    let p = &d.plant;
    let base = format!("{}/{}", o.base(), p.key);
    let news = news_text(lang, done, d);
    let can_write = o.can_write() && !p.archived;
    html! {
        p.crumbs { a href=(o.base()) { (lang.t("pl-all-plants")) } }
        h1 { (p.name) }
        @if let Some(text) = &news { (notice("ok", text)) }
        @if failed.is_some() {
            (notice("bad", &lang.t("pl-form-refused")))
        }
        section.card aria-labelledby="sec-about" {
            h2 id="sec-about" { (lang.t("pl-about")) }
            dl.facts {
                dt { (lang.t("pl-species")) } dd { (d.species) }
                dt { (lang.t("pl-place")) }
                dd {
                    @match (&p.location_name, &p.slot_code) {
                        (Some(l), Some(s)) => { (l) " · " (s) }
                        (Some(l), None) => { (l) }
                        (None, Some(s)) => { (s) }
                        (None, None) => { (lang.t("pl-no-place")) }
                    }
                }
                dt { (lang.t("pl-substrate")) }
                dd { (p.substrate.as_ref().and_then(|s| s.name.clone()).unwrap_or_else(|| lang.t("pl-none-recorded"))) }
                @if let Some(day) = &p.planted_on {
                    dt { (lang.t("pl-planted-on")) } dd { (lang.iso_date(day)) }
                }
                @if p.archived {
                    dt { (lang.t("pl-archived")) } dd { (p.removed_on.as_deref().map(|x| lang.iso_date(x)).unwrap_or_default()) }
                }
            }
        }
        (phase_section(o, d, &base, can_write, failed))
        (safety_section(lang, d))
        (care_section(o, d))
        (watering_section(o, d, &base, can_write, failed))
        (ipm_section(o, d, &base, can_write, failed))
        (harvest_section(o, d, &base, can_write, failed))
        (diary_section(o, d, &base, can_write, failed))
    }
}

fn phase_name(d: &PlantData, key: &str) -> String {
    d.phase_names
        .get(key)
        .cloned()
        .unwrap_or_else(|| key.to_owned())
}

fn phase_section(
    o: &Open,
    d: &PlantData,
    base: &str,
    can_write: bool,
    failed: Option<&Failure<'_>>,
) -> Markup {
    let lang = o.lang();
    let f = failed.and_then(|f| f.of("phase"));
    let next = d
        .plant
        .phase
        .as_ref()
        .and_then(|ph| ph.next_phase_key.clone());
    let chosen = match typed(f, "target_phase_key") {
        "" => next.clone().unwrap_or_default(),
        t => t.to_owned(),
    };
    html! {
        section.card aria-labelledby="sec-phase" id="phase" {
            h2 id="sec-phase" { (lang.t("pl-phase")) }
            @if let Some(ph) = &d.plant.phase {
                p {
                    strong { (phase_name(d, &ph.phase_key)) } " · "
                    (lang.t_with("pl-phase-days", &[("days", ph.day_count.into()), ("expected", ph.expected_duration_days.into())]))
                }
            } @else {
                p.empty { (lang.t("pl-phase-none")) }
            }
            @if !d.history.is_empty() {
                h3 { (lang.t("pl-timeline")) }
                ol.timeline {
                    @for h in &d.history {
                        li {
                            strong { (d.phase_names.get(&h.phase_key).unwrap_or(&h.phase_name)) }
                            " · " (lang.date(local_day(&o.tz, h.entered_at)))
                            @if let Some(out) = h.exited_at { " – " (lang.date(local_day(&o.tz, out))) }
                            " · " (lang.t_with("pl-days", &[("days", h.duration_days.into())]))
                            @if let Some(w) = &h.warning { br; span.meta { (w) } }
                        }
                    }
                }
            }
            @if can_write && !d.status.allowed_targets.is_empty() {
                (failure_notice(f))
                form.stack method="post" action=(format!("{base}/phase")) {
                    (csrf_field(&o.csrf))
                    label for="target_phase_key" { (lang.t("pl-phase-target")) }
                    select id="target_phase_key" name="target_phase_key" {
                        @for k in &d.status.allowed_targets {
                            option value=(k) selected[&chosen == k] {
                                (phase_name(d, k))
                                @if next.as_deref() == Some(k.as_str()) { " (" (lang.t("pl-phase-next")) ")" }
                            }
                        }
                    }
                    button type="submit" { (lang.t("pl-phase-move")) }
                }
            }
        }
    }
}

fn safety_section(lang: Lang, d: &PlantData) -> Markup {
    html! {
        section.card aria-labelledby="sec-safety" id="safety" {
            h2 id="sec-safety" { (lang.t("today-safety")) }
            @if d.readiness.safety_intervals.is_empty() {
                p.empty { (lang.t("pl-safety-none")) }
            } @else {
                ul.items {
                    @for i in &d.readiness.safety_intervals {
                        li {
                            span.what { strong { (i.treatment_name) } " · " (lang.t_with("pl-days-left", &[("days", i.days_remaining.into())])) }
                            span.meta {
                                (lang.t("safety-until")) " " (lang.iso_date(&i.last_blocked_day)) "; "
                                (lang.t("safety-harvest-from")) " " (lang.iso_date(&i.safe_on))
                                " (" (lang.t("safety-source")) ": " (i.interval_source.clone().unwrap_or_else(|| lang.t("pl-no-source"))) ")"
                            }
                        }
                    }
                }
            }
        }
    }
}

fn care_section(o: &Open, d: &PlantData) -> Markup {
    let lang = o.lang();
    html! {
        section.card aria-labelledby="sec-care" id="care" {
            h2 id="sec-care" { (lang.t("pl-care-log")) }
            @if d.care.is_empty() {
                p.empty { (lang.t("pl-care-none")) }
            } @else {
                ul.items {
                    @for c in &d.care {
                        li {
                            span.what { (care_type_text(lang, &c.reminder_type)) " · " (choice_text(lang, "pl-care-action", &c.action)) }
                            span.meta { (lang.iso_date(&c.confirmed_on)) }
                        }
                    }
                }
            }
        }
    }
}

/// A `<details>` holding a record form, open when that form was refused.
fn form_box(summary: &str, open: bool, inner: Markup) -> Markup {
    html! {
        details.form open[open] {
            summary { (summary) }
            (inner)
        }
    }
}

fn watering_section(
    o: &Open,
    d: &PlantData,
    base: &str,
    can_write: bool,
    failed: Option<&Failure<'_>>,
) -> Markup {
    let lang = o.lang();
    let f = failed.and_then(|f| f.of("watering"));
    html! {
        section.card aria-labelledby="sec-water" id="watering" {
            h2 id="sec-water" { (lang.t("pl-watering")) }
            @if can_write {
                (form_box(&lang.t("pl-watering-add"), f.is_some(), html! {
                    (failure_notice(f))
                    form.stack method="post" action=(format!("{base}/watering")) {
                        (csrf_field(&o.csrf))
                        label for="volume_liters" { (lang.t("pl-volume")) }
                        input type="text" inputmode="decimal" id="volume_liters" name="volume_liters" required value=(typed(f, "volume_liters"));
                        label for="fertilizer_key" { (lang.t("pl-fertilizer")) }
                        select id="fertilizer_key" name="fertilizer_key" {
                            option value="" { (lang.t("pl-fertilizer-none")) }
                            @for (k, n) in &d.fertilizers {
                                option value=(k) selected[typed(f, "fertilizer_key") == k] { (n) }
                            }
                        }
                        label for="ml_applied" { (lang.t("pl-fertilizer-amount")) }
                        input type="text" inputmode="decimal" id="ml_applied" name="ml_applied" value=(typed(f, "ml_applied"));
                        label for="ec_after_ms" { (lang.t("pl-ec")) }
                        input type="text" inputmode="decimal" id="ec_after_ms" name="ec_after_ms" value=(typed(f, "ec_after_ms"));
                        label for="ph_after" { (lang.t("pl-ph")) }
                        input type="text" inputmode="decimal" id="ph_after" name="ph_after" value=(typed(f, "ph_after"));
                        label for="w-notes" { (lang.t("pl-notes")) }
                        textarea id="w-notes" name="notes" rows="2" { (typed(f, "notes")) }
                        button type="submit" { (lang.t("pl-save")) }
                    }
                }))
            }
            @if d.waterings.is_empty() {
                p.empty { (lang.t("pl-watering-none")) }
            } @else {
                ul.items {
                    @for w in &d.waterings {
                        li {
                            span.what {
                                (choice_text(lang, "pl-kind", &w.kind)) " · " (num(lang, w.volume_liters)) " l"
                                @for u in &w.fertilizers_used {
                                    " · " (d.fertilizers.iter().find(|(k, _)| *k == u.fertilizer_key).map_or(u.fertilizer_key.as_str(), |(_, n)| n.as_str()))
                                    " " (num(lang, u.ml_applied)) " ml"
                                }
                            }
                            span.meta {
                                (local_stamp(lang, &o.tz, w.occurred_at))
                                @if let Some(ec) = w.fed_ec() { " · EC " (num(lang, ec)) }
                                @if let Some(ph) = w.ph_after.or(w.ph_before) { " · pH " (num(lang, ph)) }
                            }
                        }
                    }
                }
            }
        }
    }
}

const PRESSURE: &[&str] = crate::garden::ipm::model::PRESSURE;
const DOSE_UNITS: &[&str] = crate::garden::ipm::model::DOSE_UNITS;

fn ipm_section(
    o: &Open,
    d: &PlantData,
    base: &str,
    can_write: bool,
    failed: Option<&Failure<'_>>,
) -> Markup {
    let lang = o.lang();
    let fi = failed.and_then(|f| f.of("inspection"));
    let ft = failed.and_then(|f| f.of("treatment"));
    let pressure = match typed(fi, "pressure_level") {
        "" => "none",
        p => p,
    };
    html! {
        section.card aria-labelledby="sec-ipm" id="ipm" {
            h2 id="sec-ipm" { (lang.t("pl-ipm")) }
            h3 { (lang.t("pl-inspections")) }
            @if can_write {
                (form_box(&lang.t("pl-inspection-add"), fi.is_some(), html! {
                    (failure_notice(fi))
                    form.stack method="post" action=(format!("{base}/inspection")) {
                        (csrf_field(&o.csrf))
                        label for="pressure_level" { (lang.t("pl-pressure")) }
                        select id="pressure_level" name="pressure_level" {
                            @for p in PRESSURE {
                                option value=(p) selected[pressure == *p] { (choice_text(lang, "pl-pressure", p)) }
                            }
                        }
                        label for="symptom" { (lang.t("pl-symptom")) }
                        input type="text" id="symptom" name="symptom" maxlength="500" value=(typed(fi, "symptom"));
                        label for="i-notes" { (lang.t("pl-notes")) }
                        textarea id="i-notes" name="notes" rows="2" { (typed(fi, "notes")) }
                        button type="submit" { (lang.t("pl-save")) }
                    }
                }))
            }
            @if d.inspections.is_empty() {
                p.empty { (lang.t("pl-inspections-none")) }
            } @else {
                ul.items {
                    @for i in &d.inspections {
                        @let level = serde_json::to_value(i.pressure_level).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
                        li {
                            span.what {
                                (lang.t("pl-pressure")) ": " (choice_text(lang, "pl-pressure", &level))
                                @for s in &i.symptoms_observed { " · " (s) }
                            }
                            span.meta { (local_stamp(lang, &o.tz, i.inspected_at)) }
                        }
                    }
                }
            }
            h3 { (lang.t("pl-treatments")) }
            @if can_write {
                (form_box(&lang.t("pl-treatment-add"), ft.is_some(), html! {
                    (failure_notice(ft))
                    form.stack method="post" action=(format!("{base}/treatment")) {
                        (csrf_field(&o.csrf))
                        label for="treatment_key" { (lang.t("pl-treatment")) }
                        select id="treatment_key" name="treatment_key" required {
                            option value="" { (lang.t("pl-choose")) }
                            @for t in &d.treatments {
                                @let key = text_of(t, "key");
                                @let days = t.get("safety_interval_days").and_then(Value::as_i64).unwrap_or(0);
                                option value=(key) selected[typed(ft, "treatment_key") == key] {
                                    (text_of(t, "name")) " · " (lang.t_with("pl-interval-days", &[("days", days.into())]))
                                }
                            }
                        }
                        p.meta { (lang.t("pl-treatment-hint")) }
                        label for="dose" { (lang.t("pl-dose")) }
                        input type="text" inputmode="decimal" id="dose" name="dose" value=(typed(ft, "dose"));
                        label for="dose_unit" { (lang.t("pl-dose-unit")) }
                        select id="dose_unit" name="dose_unit" {
                            option value="" { (lang.t("pl-none-chosen")) }
                            @for u in DOSE_UNITS {
                                option value=(u) selected[typed(ft, "dose_unit") == *u] { (choice_text(lang, "pl-unit", u)) }
                            }
                        }
                        label for="t-notes" { (lang.t("pl-notes")) }
                        textarea id="t-notes" name="notes" rows="2" { (typed(ft, "notes")) }
                        (acknowledge_box(lang, ft))
                        button type="submit" { (lang.t("pl-save")) }
                    }
                }))
            }
            @if d.applications.is_empty() {
                p.empty { (lang.t("pl-treatments-none")) }
            } @else {
                ul.items {
                    @for a in &d.applications {
                        @let mine = a.plants.iter().find(|t| t.plant_key == d.plant.key);
                        li {
                            span.what {
                                strong { (a.treatment_name) }
                                @if let Some(ai) = &a.active_ingredient { " (" (ai) ")" }
                            }
                            span.meta {
                                (local_stamp(lang, &o.tz, a.applied_at))
                                @if let Some(t) = mine {
                                    " · " (lang.t_with("pl-interval-days", &[("days", i64::from(t.safety_interval_days).into())]))
                                    @if let Some(last) = &t.last_blocked_day {
                                        "; " (lang.t("safety-until")) " " (lang.iso_date(last))
                                        "; " (lang.t("safety-harvest-from")) " " (lang.iso_date(&t.safe_on))
                                    }
                                    " (" (lang.t("safety-source")) ": " (t.interval_source.clone().unwrap_or_else(|| lang.t("pl-no-source"))) ")"
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn harvest_section(
    o: &Open,
    d: &PlantData,
    base: &str,
    can_write: bool,
    failed: Option<&Failure<'_>>,
) -> Markup {
    let lang = o.lang();
    let f = failed.and_then(|f| f.of("harvest"));
    let karenz = f.is_some_and(|f| {
        f.lines
            .first()
            .is_some_and(|l| *l == lang.t("pl-err-karenz"))
    });
    html! {
        section.card aria-labelledby="sec-harvest" id="harvest" {
            h2 id="sec-harvest" { (lang.t("pl-harvests")) }
            @if can_write {
                (form_box(&lang.t("pl-harvest-add"), f.is_some(), html! {
                    @if karenz {
                        div.notice.bad role="alert" {
                            p { strong { (lang.t("pl-harvest-refused")) } }
                            @for i in &d.readiness.safety_intervals {
                                p {
                                    (lang.t_with("pl-karenz-line", &[
                                        ("treatment", i.treatment_name.clone().into()),
                                        ("days", i.days_remaining.into()),
                                        ("until", lang.iso_date(&i.last_blocked_day).into()),
                                        ("from", lang.iso_date(&i.safe_on).into()),
                                    ]))
                                }
                            }
                            @if let Some(f) = f {
                                details {
                                    summary { (lang.t("pl-details")) }
                                    ul.reasons { @for r in &f.details { li { (r) } } }
                                }
                            }
                        }
                    } @else {
                        (failure_notice(f))
                    }
                    form.stack method="post" action=(format!("{base}/harvest")) {
                        (csrf_field(&o.csrf))
                        label for="wet_weight_g" { (lang.t("pl-wet-weight")) }
                        input type="text" inputmode="decimal" id="wet_weight_g" name="wet_weight_g" required value=(typed(f, "wet_weight_g"));
                        label for="harvest_type" { (lang.t("pl-harvest-type")) }
                        select id="harvest_type" name="harvest_type" {
                            @for h in crate::garden::harvest::model::HARVEST_TYPES {
                                option value=(h) selected[typed(f, "harvest_type") == *h || (typed(f, "harvest_type").is_empty() && *h == "partial")] { (choice_text(lang, "pl-harvest-type", h)) }
                            }
                        }
                        label for="h-notes" { (lang.t("pl-notes")) }
                        textarea id="h-notes" name="notes" rows="2" { (typed(f, "notes")) }
                        button type="submit" { (lang.t("pl-save")) }
                    }
                }))
            }
            @if d.batches.is_empty() {
                p.empty { (lang.t("pl-harvests-none")) }
            } @else {
                ul.items {
                    @for b in &d.batches {
                        li {
                            span.what { (num(lang, b.wet_weight_g)) " g · " (b.label) }
                            span.meta { (lang.iso_date(&b.harvest_date)) }
                        }
                    }
                }
            }
        }
    }
}

const ENTRY_TYPES: &[&str] = &[
    "note",
    "observation",
    "measurement",
    "care",
    "problem",
    "harvest",
    "milestone",
];

fn diary_section(
    o: &Open,
    d: &PlantData,
    base: &str,
    can_write: bool,
    failed: Option<&Failure<'_>>,
) -> Markup {
    let lang = o.lang();
    let f = failed.and_then(|f| f.of("diary"));
    let chosen = match typed(f, "entry_type") {
        "" => "observation",
        t => t,
    };
    html! {
        section.card aria-labelledby="sec-diary" id="diary" {
            h2 id="sec-diary" { (lang.t("pl-diary")) }
            @if can_write {
                (form_box(&lang.t("pl-diary-add"), f.is_some(), html! {
                    (failure_notice(f))
                    form.stack method="post" action=(format!("{base}/diary")) enctype="multipart/form-data" {
                        (csrf_field(&o.csrf))
                        label for="title" { (lang.t("pl-title")) }
                        input type="text" id="title" name="title" maxlength="200" value=(typed(f, "title"));
                        label for="text" { (lang.t("pl-text")) }
                        textarea id="text" name="text" rows="3" required { (typed(f, "text")) }
                        label for="entry_type" { (lang.t("pl-entry-type")) }
                        select id="entry_type" name="entry_type" {
                            @for t in ENTRY_TYPES {
                                option value=(t) selected[chosen == *t] { (choice_text(lang, "pl-entry", t)) }
                            }
                        }
                        label for="photo" { (lang.t("pl-photos")) }
                        input type="file" id="photo" name="photo" accept="image/*" capture="environment" multiple;
                        p.meta { (lang.t("pl-photos-hint")) }
                        button type="submit" { (lang.t("pl-save")) }
                    }
                }))
            }
            @if d.diary.is_empty() {
                p.empty { (lang.t("pl-diary-none")) }
            } @else {
                ul.items {
                    @for (e, photos) in &d.diary {
                        li {
                            span.what {
                                strong { (e.title.clone().unwrap_or_else(|| choice_text(lang, "pl-entry", crate::garden::diary::model::entry_type_str(e.entry_type)))) }
                                br;
                                span.meta { (lang.iso_date(&e.entry_date)) }
                            }
                            @if !photos.is_empty() {
                                div.photos {
                                    @for (i, ph) in photos.iter().enumerate() {
                                        @if ph.renditions.contains(&512) {
                                            img src=(format!("/app/g/{}/photos/{}/512", o.slug, ph.key))
                                                alt=(lang.t_with("pl-photo-alt", &[("n", (i as i64 + 1).into())]))
                                                width="160" height="120" loading="lazy";
                                        } @else {
                                            span.pending { (lang.t("pl-photo-pending")) }
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
}

// ---------- the record forms ----------

/// The plant the form is about: another garden's (or none) is the 404 page, before anything
/// is read from the form or written.
async fn form_plant(req: &Request, res: &mut Response, o: &Open) -> Option<(String, Plant)> {
    let key = req.param::<String>("plant_key").unwrap_or_default();
    match crate::garden::plants::service::get_plant(&o.ctx.state, &o.garden.tenant, &key).await {
        Ok(p) => Some((key, p)),
        Err(e) => {
            o.fail(req, res, e);
            None
        }
    }
}

/// After a form: back to the plant's page with the news, or the page again with the refusal.
#[allow(clippy::too_many_arguments)]
async fn after(
    req: &Request,
    res: &mut Response,
    o: &Open,
    key: &str,
    form: &'static str,
    done: &str,
    posted: &Posted,
    outcome: Result<(), AppError>,
) {
    match outcome {
        Ok(()) => see_other(req, res, &format!("{}/{key}?done={done}#{form}", o.base())),
        Err(e) if e.code().status().is_server_error() || e.code() == ErrorCode::Forbidden => {
            o.fail(req, res, e)
        }
        Err(e) => {
            let f = failure(o.lang(), form, &e, posted);
            render_plant(req, res, o, key, None, Some(&f), e.code().status()).await;
        }
    }
}

async fn small_form(
    req: &mut Request,
    depot: &Depot,
    res: &mut Response,
) -> Option<(Open, Posted)> {
    let max = match depot.app_state() {
        Ok(s) => s.config().max_body_bytes,
        Err(e) => {
            super::fail(req, res, crate::web::session::visitor_lang(req), e);
            return None;
        }
    };
    open_post(req, depot, res, max).await
}

/// `POST …/plants/{key}/phase` (`target_phase_key`): `plants::service::transition`.
#[handler]
async fn phase_post(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some((o, posted)) = small_form(req, depot, res).await else {
        return;
    };
    let Some((key, _)) = form_plant(req, res, &o).await else {
        return;
    };
    let outcome = async {
        let body: crate::garden::plants::model::TransitionBody =
            parse(posted.object(&[("target_phase_key", Field::Text)]))?;
        crate::garden::plants::service::transition(
            &o.ctx.state,
            &o.garden.tenant,
            &key,
            &body,
            &o.actor(),
            true,
        )
        .await
        .map(|_| ())
    }
    .await;
    after(req, res, &o, &key, "phase", "moved", &posted, outcome).await;
}

/// `POST …/plants/{key}/watering`: `watering::service::record_event` for this plant, with one
/// fertiliser and its amount when chosen (a feeding).
#[handler]
async fn watering_post(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some((o, posted)) = small_form(req, depot, res).await else {
        return;
    };
    let Some((key, plant)) = form_plant(req, res, &o).await else {
        return;
    };
    let outcome = async {
        let mut map = posted.object(&[
            ("volume_liters", Field::Number),
            ("ec_after_ms", Field::Number),
            ("ph_after", Field::Number),
            ("notes", Field::Optional),
        ]);
        map.insert("plant_keys".into(), json!([plant.key]));
        if let Some(fert) = posted
            .get("fertilizer_key")
            .filter(|k| !k.trim().is_empty())
        {
            let amount = posted.object(&[("ml_applied", Field::Number)]);
            let mut used = Map::new();
            used.insert("fertilizer_key".into(), Value::String(fert.to_owned()));
            if let Some(ml) = amount.get("ml_applied") {
                used.insert("ml_applied".into(), ml.clone());
            }
            map.insert("fertilizers_used".into(), json!([used]));
        }
        let new: crate::garden::watering::model::NewWateringEvent = parse(map)?;
        crate::garden::watering::service::record_event(
            &o.ctx.state,
            &o.garden.tenant,
            &new,
            &o.actor(),
            true,
        )
        .await
        .map(|_| ())
    }
    .await;
    after(req, res, &o, &key, "watering", "watered", &posted, outcome).await;
}

/// `POST …/plants/{key}/inspection`: `ipm::service::create_inspection` of this plant.
#[handler]
async fn inspection_post(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some((o, posted)) = small_form(req, depot, res).await else {
        return;
    };
    let Some((key, plant)) = form_plant(req, res, &o).await else {
        return;
    };
    let outcome = async {
        let mut map = posted.object(&[("pressure_level", Field::Text), ("notes", Field::Optional)]);
        map.insert("plant_key".into(), Value::String(plant.key.to_string()));
        if let Some(s) = posted.get("symptom").filter(|s| !s.trim().is_empty()) {
            map.insert("symptoms_observed".into(), json!([s]));
        }
        let new: crate::garden::ipm::model::NewInspection = parse(map)?;
        crate::garden::ipm::service::create_inspection(
            &o.ctx.state,
            &o.garden.tenant,
            &new,
            &o.actor(),
            true,
        )
        .await
        .map(|_| ())
    }
    .await;
    after(
        req,
        res,
        &o,
        &key,
        "inspection",
        "inspected",
        &posted,
        outcome,
    )
    .await;
}

/// `POST …/plants/{key}/treatment`: `ipm::service::apply_treatment` to this plant; the page
/// then shows the safety interval it started (days, last blocked day, source).
#[handler]
async fn treatment_post(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some((o, posted)) = small_form(req, depot, res).await else {
        return;
    };
    let Some((key, plant)) = form_plant(req, res, &o).await else {
        return;
    };
    let outcome = async {
        let mut map = posted.object(&[
            ("treatment_key", Field::Text),
            ("dose", Field::Number),
            ("dose_unit", Field::Optional),
            ("notes", Field::Optional),
            ("acknowledge_resistance", Field::Checkbox),
        ]);
        map.insert("plant_keys".into(), json!([plant.key]));
        let new: crate::garden::ipm::model::NewApplication = parse(map)?;
        crate::garden::ipm::service::apply_treatment(
            &o.ctx.state,
            &o.garden.tenant,
            &new,
            &o.actor(),
            true,
        )
        .await
        .map(|_| ())
    }
    .await;
    after(req, res, &o, &key, "treatment", "treated", &posted, outcome).await;
}

/// `POST …/plants/{key}/harvest`: `harvest::service::create_batch`; inside a safety interval
/// the service refuses (`KARENZ_VIOLATION`) and the page says until when, with the days left.
#[handler]
async fn harvest_post(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some((o, posted)) = small_form(req, depot, res).await else {
        return;
    };
    let Some((key, plant)) = form_plant(req, res, &o).await else {
        return;
    };
    let outcome = async {
        let mut map = posted.object(&[
            ("wet_weight_g", Field::Number),
            ("harvest_type", Field::Optional),
            ("notes", Field::Optional),
        ]);
        map.insert("plant_key".into(), Value::String(plant.key.to_string()));
        let new: crate::garden::harvest::model::NewBatch = parse(map)?;
        crate::garden::harvest::service::create_batch(
            &o.ctx.state,
            &o.garden.tenant,
            &new,
            &o.actor(),
            true,
        )
        .await
        .map(|_| ())
    }
    .await;
    after(req, res, &o, &key, "harvest", "harvested", &posted, outcome).await;
}

/// `POST …/plants/{key}/diary` (multipart): `diary::service::create_entry`, then each photo
/// through `photos::service::upload` (the REST upload's checks and limits). The photos' types
/// are checked before the entry is written; should an upload still be refused, the entry goes
/// again (`delete_entry`), so a refused form leaves nothing.
#[handler]
async fn diary_post(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let max = match depot.app_state() {
        Ok(s) => s.config().photo_max_upload_bytes,
        Err(e) => return super::fail(req, res, crate::web::session::visitor_lang(req), e),
    };
    let Some((o, posted)) = open_post(req, depot, res, max).await else {
        return;
    };
    let Some((key, plant)) = form_plant(req, res, &o).await else {
        return;
    };
    let state = &o.ctx.state;
    let tenant = &o.garden.tenant;
    let outcome = async {
        let mut map = posted.object(&[
            ("title", Field::Optional),
            ("text", Field::Text),
            ("entry_type", Field::Optional),
        ]);
        map.insert("plant_key".into(), Value::String(plant.key.to_string()));
        let new: crate::garden::diary::model::EntryInput = parse(map)?;
        let photos: Vec<_> = posted.files("photo").collect();
        for p in &photos {
            crate::garden::photos::service::declared_format(p.content_type.as_deref())?;
        }
        let author = crate::garden::diary::service::Author {
            id: o.user,
            kind: "user",
            via: "rest",
        };
        let entry =
            crate::garden::diary::service::create_entry(state, tenant, &new, &author, true).await?;
        let editor = crate::garden::diary::service::Editor {
            id: o.user,
            admin: o.garden.role == Role::Admin,
        };
        let entry_key = entry.key.to_string();
        for p in photos {
            if let Err(e) = crate::garden::photos::service::upload(
                state,
                tenant,
                &entry_key,
                p.content_type.as_deref(),
                p.bytes.clone(),
                &editor,
            )
            .await
            {
                if let Err(undo) =
                    crate::garden::diary::service::delete_entry(state, tenant, &entry_key, &editor)
                        .await
                {
                    tracing::warn!(error = %undo, "web: a diary entry whose photo was refused stays");
                }
                // A picture the checks refuse is named as the form's photo field.
                return Err(if e.code() == ErrorCode::ValidationError {
                    AppError::validation(vec![crate::error::ErrorDetail::new(
                        "photo",
                        e.to_string(),
                        "value_error",
                    )])
                } else {
                    e
                });
            }
        }
        Ok(())
    }
    .await;
    after(req, res, &o, &key, "diary", "noted", &posted, outcome).await;
}

/// `GET /app/g/{slug}/photos/{photo_key}/{512|1280}`: a photo's rendition for the pages (the
/// session's cookie, not a bearer token): `photos::service::rendition`, as the REST route.
#[handler]
async fn photo_get(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(o) = open_get(req, depot, res).await else {
        return;
    };
    let size = match req.param::<String>("size").as_deref() {
        Some("512") => 512,
        Some("1280") => 1280,
        _ => return o.fail(req, res, AppError::not_found("photo")),
    };
    let key = req.param::<String>("photo_key").unwrap_or_default();
    match crate::garden::photos::service::rendition(&o.ctx.state, &o.garden.tenant, &key, size)
        .await
    {
        Ok(bytes) => {
            res.headers_mut()
                .insert(CONTENT_TYPE, HeaderValue::from_static("image/webp"));
            res.headers_mut().insert(
                CACHE_CONTROL,
                HeaderValue::from_static("private, max-age=3600"),
            );
            res.status_code(StatusCode::OK);
            let _ = res.write_body(bytes);
        }
        Err(e) => o.fail(req, res, e),
    }
}
