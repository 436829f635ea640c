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
use super::harvests::num;
use super::scope::{GardenScope, local_stamp, open_garden};
use super::{PageCtx, csrf_refused, fail, here, url_escape};
use crate::auth::Role;
use crate::catalog::engine::service::ListParams;
use crate::error::{AppError, ErrorCode};
use crate::garden::care::model::CareLogEntry;
use crate::garden::diary::model::{EntryFilter, EntrySummary};
use crate::garden::harvest::model::{HarvestBatch, Readiness};
use crate::garden::ipm::model::{Application, Inspection};
use crate::garden::photos::model::Photo;
use crate::garden::plants::model::{PhaseHistoryEntry, PhaseStatus, Plant, PlantSummary};
use crate::garden::sensors::service::Around;
use crate::garden::watering::model::WateringEvent;
use crate::http::depot::DepotExt;
use crate::http::pagination::PageRequest;
use crate::platform::access::TenantCtx;
use crate::platform::preferences::service::{day_of, local_at};
use crate::platform::tenants::model::Tenant;
use crate::web::forms::{Field, Posted, explain, parse};
use crate::web::i18n::Lang;
use crate::web::layout::{self, Frame, csrf_field, notice, see_other};
use crate::web::pages::sensors::environment::{self, Environment};
use crate::web::session::CSRF_FIELD;

mod care;
mod diary;
mod harvest;
mod ipm;
mod list;
mod new;
mod phases;
use care::*;
use diary::*;
use harvest::*;
use ipm::*;
use list::*;
use new::*;
use phases::*;

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

/// The person's calendar day of an instant (their time zone).
fn local_day(tz: &str, at: OffsetDateTime) -> Date {
    match jiff::Timestamp::from_second(at.unix_timestamp()) {
        Ok(ts) => day_of(&local_at(tz, ts)),
        Err(_) => at.date(),
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
    /// The sensors of its location and site, their latest readings and last seven days.
    environment: Environment,
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
    let environment =
        environment::read(state, tenant, Around::Plant(id), OffsetDateTime::now_utc()).await?;
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
        environment,
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
                        (Some(l), Some(s)) => { (location_link(o, p, l)) " · " (s) }
                        (Some(l), None) => { (location_link(o, p, l)) }
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
        (environment::section(lang, &o.slug, o.garden.role >= Role::Admin, &d.environment))
        (phase_section(o, d, &base, can_write, failed))
        (safety_section(lang, d))
        (care_section(o, d))
        (watering_section(o, d, &base, can_write, failed))
        (ipm_section(o, d, &base, can_write, failed))
        (harvest_section(o, d, &base, can_write, failed))
        (diary_section(o, d, &base, can_write, failed))
    }
}

/// The plant's location, linked to its page (readings and charts).
fn location_link(o: &Open, p: &Plant, name: &str) -> Markup {
    html! {
        @match p.location_key {
            Some(k) => { a href=(format!("/app/g/{}/locations/{k}", o.slug)) { (name) } }
            None => { (name) }
        }
    }
}

fn phase_name(d: &PlantData, key: &str) -> String {
    d.phase_names
        .get(key)
        .cloned()
        .unwrap_or_else(|| key.to_owned())
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
            fail(req, res, crate::web::session::visitor_lang(req), e);
            return None;
        }
    };
    open_post(req, depot, res, max).await
}
