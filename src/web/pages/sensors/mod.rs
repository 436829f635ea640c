//! **Sensors** of a garden (`/app/g/{slug}/sensors`): each with its metric, place, source and
//! latest reading; where its readings go in (the ingest URL of an `http` sensor, the topic of
//! an `mqtt` or `home_assistant` one) in a read-only field with a copy button (`app.js`; the
//! field is selectable without it). Admins register a sensor (the form is read by `NewSensor`,
//! the reader of `POST /api/v1/t/{slug}/sensors`, and goes to `create_sensor`: a refusal comes
//! back next to its field, nothing written) and delete one after ticking a confirmation.
//! Growers and viewers read. Beside it, a location's page (`…/locations/{key}`,
//! [`location`]) and the environment section of a plant's page ([`environment`]).

pub mod environment;
pub mod location;

use maud::{Markup, html};
use salvo::prelude::*;
use uuid::Uuid;

use super::PageCtx;
use super::scope::{GardenScope, done, local_stamp, open_garden, shown_on_form};
use crate::auth::Role;
use crate::error::{AppError, ErrorCode};
use crate::garden::places::repo::LocationFilter;
use crate::garden::places::service as places;
use crate::garden::sensors::model::{
    INTERVAL_MAX_MINUTES, NAME_MAX, NewSensor, ReadingOut, Sensor, SensorMetric, SensorSource,
    TOPIC_MAX,
};
use crate::garden::sensors::service as sensors;
use crate::garden::sites::service as sites;
use crate::garden::tanks::service as tanks;
use crate::values::page::PageRequest;
use crate::web::forms::{Field, Posted, explain, parse};
use crate::web::i18n::Lang;
use crate::web::layout::{add_card, csrf_field, notice, see_other};

pub fn router() -> Router {
    Router::with_path("g/{slug}")
        .push(
            Router::with_path("sensors")
                .get(list_page)
                .post(create)
                .push(Router::with_path("{key}/delete").post(delete)),
        )
        .push(Router::with_path("locations/{location_key}").get(location::page))
}

/// Most records of each kind the page lists (the REST routes' largest page).
const LIST_MAX: i64 = 200;

fn all() -> PageRequest {
    PageRequest {
        skip: 0,
        limit: LIST_MAX,
    }
}

pub fn sensors_url(slug: &str) -> String {
    format!("/app/g/{slug}/sensors")
}

/// A metric as the page names it.
pub fn metric_text(lang: Lang, metric: SensorMetric) -> String {
    lang.t(&format!("sensor-metric-{}", metric.as_str()))
}

pub fn source_text(lang: Lang, source: SensorSource) -> String {
    lang.t(&format!("sensor-source-{}", source.as_str()))
}

/// A reading with its unit, the language's way (`21.5 °C`, `21,5 °C`).
pub fn value_text(lang: Lang, value: f64, unit: &str) -> String {
    format!("{} {unit}", lang.decimal(value, 2))
}

/// The places a sensor can stand at, each with the form's value (`location:<key>`) and name.
struct Places {
    locations: Vec<(Uuid, String)>,
    sites: Vec<(Uuid, String)>,
    tanks: Vec<(Uuid, String)>,
}

impl Places {
    fn name_of(&self, s: &Sensor) -> String {
        let find = |list: &[(Uuid, String)], key: Option<Uuid>| {
            key.and_then(|k| list.iter().find(|(id, _)| *id == k).map(|(_, n)| n.clone()))
        };
        find(&self.locations, s.location_key)
            .or_else(|| find(&self.sites, s.site_key))
            .or_else(|| find(&self.tanks, s.tank_key))
            .unwrap_or_default()
    }
}

/// Everything the page shows, read before any of it is written out.
struct SensorsData {
    sensors: Vec<Sensor>,
    latest: Vec<(Uuid, ReadingOut)>,
    places: Places,
    /// The garden's time zone: the readings' times are written in it.
    tz: String,
}

async fn read(ctx: &PageCtx, scope: &GardenScope<'_>) -> Result<SensorsData, AppError> {
    let state = &ctx.state;
    let tenant = &scope.garden.tenant;
    // One after the other: a page holds one connection of the pool at a time.
    let listed = sensors::list_sensors(state, tenant, all()).await?.items;
    let keys: Vec<Uuid> = listed.iter().map(|s| s.key).collect();
    let latest = sensors::latest_readings(state, tenant, &keys).await?;
    let filter = LocationFilter {
        site: None,
        parent: None,
    };
    let site_list = sites::list_sites(state, tenant, all()).await?.items;
    let locations = places::list_locations(state, tenant, filter, all())
        .await?
        .items;
    let tank_list = tanks::list_tanks(state, tenant, all()).await?.items;
    let tz = environment::garden_zone(state, tenant).await?;
    let site_name = |key: Uuid| {
        site_list
            .iter()
            .find(|s| s.key == key)
            .map(|s| s.name.clone())
            .unwrap_or_default()
    };
    let places = Places {
        locations: locations
            .iter()
            .map(|l| (l.key, format!("{} ({})", l.name, site_name(l.site_key))))
            .collect(),
        sites: site_list.iter().map(|s| (s.key, s.name.clone())).collect(),
        tanks: tank_list.iter().map(|t| (t.key, t.name.clone())).collect(),
    };
    Ok(SensorsData {
        sensors: listed,
        latest,
        places,
        tz,
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
    let news = req.query::<String>("done").and_then(|d| match d.as_str() {
        "created" => Some(ctx.lang.t("sensor-done-created")),
        "deleted" => Some(ctx.lang.t("sensor-done-deleted")),
        _ => None,
    });
    let shown = Shown {
        news,
        ..Shown::default()
    };
    show(req, res, &ctx, &scope, StatusCode::OK, &shown).await;
}

/// What the page shows beside the records: the news of a form that worked, or the refusal of
/// one that did not.
#[derive(Default)]
struct Shown<'a> {
    news: Option<String>,
    /// The refusal of the register form, by field (`""`: the whole form).
    create: Vec<(&'static str, String)>,
    typed: Option<&'a Posted>,
    /// The refusal of a delete: the sensor and the sentence.
    delete: Option<(Uuid, String)>,
}

async fn show(
    req: &Request,
    res: &mut Response,
    ctx: &PageCtx,
    scope: &GardenScope<'_>,
    status: StatusCode,
    shown: &Shown<'_>,
) {
    let data = match read(ctx, scope).await {
        Ok(d) => d,
        Err(e) => return ctx.fail(req, res, e),
    };
    let lang = ctx.lang;
    let base = ctx
        .state
        .config()
        .public_url
        .trim_end_matches('/')
        .to_owned();
    let body = body(lang, scope, &data, &base, shown);
    scope.page(
        req,
        res,
        lang,
        status,
        format!("{} · {}", lang.t("nav-sensors"), scope.garden.tenant.name),
        body,
    );
}

fn body(
    lang: Lang,
    scope: &GardenScope<'_>,
    data: &SensorsData,
    public_url: &str,
    shown: &Shown<'_>,
) -> Markup {
    let admin = scope.garden.role >= Role::Admin;
    let slug = &scope.slug;
    html! {
        h1 { (lang.t("nav-sensors")) " · " (scope.garden.tenant.name) }
        @if let Some(text) = &shown.news { (notice("ok", text)) }
        section.card aria-labelledby="sec-sensor-list" {
            h2 id="sec-sensor-list" { (lang.t("sensor-list")) " " span.meta { "(" (data.sensors.len()) ")" } }
            @if data.sensors.is_empty() {
                p.empty { (lang.t("sensor-none")) }
            } @else {
                ul.items id="sensor-list" {
                    @for s in &data.sensors {
                        (sensor_item(lang, scope, data, public_url, s, shown))
                    }
                }
            }
            p.meta { (lang.t_with("sensor-times-in", &[("zone", data.tz.clone().into())])) }
        }
        @if admin {
            (create_form(lang, &sensors_url(slug), &scope.s.csrf, &data.places, shown))
        } @else {
            p.meta { (lang.t("sensor-admin-only")) }
        }
    }
}

fn sensor_item(
    lang: Lang,
    scope: &GardenScope<'_>,
    data: &SensorsData,
    public_url: &str,
    s: &Sensor,
    shown: &Shown<'_>,
) -> Markup {
    let key = s.key;
    let latest = data
        .latest
        .iter()
        .find(|(id, _)| *id == key)
        .map(|(_, r)| r);
    let (target_label, target) = match (&s.source, &s.topic) {
        (SensorSource::Http, _) | (_, None) => (
            lang.t("sensor-ingest-url"),
            format!(
                "{public_url}/api/v1/t/{}/sensors/{key}/readings",
                scope.slug
            ),
        ),
        (_, Some(topic)) => (lang.t("sensor-topic"), topic.clone()),
    };
    let field = format!("sensor-{key}-target");
    let refused = shown
        .delete
        .as_ref()
        .filter(|(k, _)| *k == key)
        .map(|(_, t)| t);
    html! {
        li id=(format!("sensor-{key}")) {
            div.what {
                strong { (s.name) }
                br;
                span.meta {
                    (metric_text(lang, s.metric)) " · " (data.places.name_of(s))
                    " · " (source_text(lang, s.source))
                    @if let Some(m) = s.expected_interval_minutes {
                        " · " (lang.t_with("sensor-every", &[("minutes", m.into())]))
                    }
                }
                br;
                span.latest {
                    @match latest {
                        Some(r) => {
                            (lang.t("sensor-latest")) ": " strong { (value_text(lang, r.value, &s.unit)) }
                            " · " (local_stamp(lang, &data.tz, r.measured_at))
                        }
                        None => { (lang.t("sensor-no-reading")) }
                    }
                }
                label for=(field) { (target_label) }
                div.copy {
                    input id=(field) type="text" readonly value=(target);
                    button.secondary type="button" hidden data-copy=(field)
                        data-copied=(lang.t("sensor-copied")) aria-describedby=(format!("{field}-status")) { (lang.t("sensor-copy")) }
                    span.meta id=(format!("{field}-status")) role="status" {}
                }
                @if scope.garden.role >= Role::Admin {
                    (delete_form(lang, scope, s, refused))
                }
            }
        }
    }
}

/// Delete after ticking a box (a confirmation that needs no script); open with its refusal.
fn delete_form(
    lang: Lang,
    scope: &GardenScope<'_>,
    s: &Sensor,
    refused: Option<&String>,
) -> Markup {
    let key = s.key;
    let name = s.name.clone();
    html! {
        details.edit open[refused.is_some()] {
            summary { (lang.t("sensor-delete")) span.visually-hidden { " " (name) } }
            @if let Some(text) = refused { (notice("bad", text)) }
            form.stack method="post" action=(format!("{}/{key}/delete", sensors_url(&scope.slug))) {
                (csrf_field(&scope.s.csrf))
                label.check {
                    input type="checkbox" name="confirm" value="yes";
                    (lang.t_with("sensor-delete-confirm", &[("name", name.clone().into())]))
                }
                button.secondary type="submit" { (lang.t_with("sensor-delete-named", &[("name", name.into())])) }
            }
        }
    }
}

/// The sentences of a refusal next to one field.
fn field_errors(shown: &Shown<'_>, field: &str) -> Markup {
    let id = format!("sensor-{field}-error");
    let lines: Vec<&String> = shown
        .create
        .iter()
        .filter(|(f, _)| *f == field)
        .map(|(_, l)| l)
        .collect();
    html! {
        @if !lines.is_empty() {
            p.field-error id=(id) { @for l in lines { (l) " " } }
        }
    }
}

/// `aria-describedby`/`aria-invalid` of a field with a refusal.
fn invalid(shown: &Shown<'_>, field: &str) -> Option<String> {
    shown
        .create
        .iter()
        .any(|(f, _)| *f == field)
        .then(|| format!("sensor-{field}-error"))
}

fn create_form(lang: Lang, action: &str, csrf: &str, places: &Places, shown: &Shown<'_>) -> Markup {
    let t = |name: &str| {
        shown
            .typed
            .and_then(|p| p.get(name))
            .unwrap_or("")
            .to_owned()
    };
    let place = t("place");
    let metric = t("metric");
    let source = match t("source").as_str() {
        "" => "http".to_owned(),
        s => s.to_owned(),
    };
    let whole: Vec<String> = if shown.create.is_empty() {
        Vec::new()
    } else {
        let mut lines = vec![lang.t("sensor-refused")];
        lines.extend(
            shown
                .create
                .iter()
                .filter(|(f, _)| f.is_empty())
                .map(|(_, l)| l.clone()),
        );
        lines
    };
    let described = |field: &str, hint: Option<&str>| {
        let ids: Vec<String> = hint
            .map(str::to_owned)
            .into_iter()
            .chain(invalid(shown, field))
            .collect();
        (!ids.is_empty()).then(|| ids.join(" "))
    };
    add_card(
        "sec-sensor-new",
        &lang.t("sensor-new"),
        !shown.create.is_empty(),
        &whole,
        action,
        csrf,
        html! {
            label for="sensor-name" { (lang.t("sensor-field-name")) }
            input id="sensor-name" type="text" name="name" maxlength=(NAME_MAX) value=(t("name"))
                aria-invalid=[invalid(shown, "name").map(|_| "true")] aria-describedby=[described("name", None)];
            (field_errors(shown, "name"))
            label for="sensor-metric" { (lang.t("sensor-field-metric")) }
            select id="sensor-metric" name="metric" aria-invalid=[invalid(shown, "metric").map(|_| "true")]
                aria-describedby=[described("metric", None)] {
                @for (_, m) in SensorMetric::ALL {
                    option value=(m.as_str()) selected[m.as_str() == metric] { (metric_text(lang, *m)) }
                }
            }
            (field_errors(shown, "metric"))
            label for="sensor-place" { (lang.t("sensor-field-place")) }
            select id="sensor-place" name="place" aria-invalid=[invalid(shown, "place").map(|_| "true")]
                aria-describedby=[described("place", None)] {
                option value="" { "—" }
                @for (group, prefix, list) in [
                    ("sensor-place-locations", "location", &places.locations),
                    ("sensor-place-sites", "site", &places.sites),
                    ("sensor-place-tanks", "tank", &places.tanks),
                ] {
                    @if !list.is_empty() {
                        optgroup label=(lang.t(group)) {
                            @for (key, name) in list {
                                @let value = format!("{prefix}:{key}");
                                option value=(value) selected[value == place] { (name) }
                            }
                        }
                    }
                }
            }
            (field_errors(shown, "place"))
            label for="sensor-source" { (lang.t("sensor-field-source")) }
            select id="sensor-source" name="source" aria-invalid=[invalid(shown, "source").map(|_| "true")]
                aria-describedby=[described("source", None)] {
                @for (_, s) in SensorSource::ALL {
                    option value=(s.as_str()) selected[s.as_str() == source] { (source_text(lang, *s)) }
                }
            }
            (field_errors(shown, "source"))
            label for="sensor-topic" { (lang.t("sensor-field-topic")) }
            input id="sensor-topic" type="text" name="topic" maxlength=(TOPIC_MAX) value=(t("topic"))
                autocapitalize="none" spellcheck="false"
                aria-invalid=[invalid(shown, "topic").map(|_| "true")] aria-describedby=[described("topic", Some("sensor-topic-hint"))];
            p.meta id="sensor-topic-hint" { (lang.t("sensor-topic-hint")) }
            (field_errors(shown, "topic"))
            label for="sensor-interval" { (lang.t("sensor-field-interval")) }
            input id="sensor-interval" type="number" name="expected_interval_minutes" min="1"
                max=(INTERVAL_MAX_MINUTES) inputmode="numeric" value=(t("expected_interval_minutes"))
                aria-invalid=[invalid(shown, "expected_interval_minutes").map(|_| "true")]
                aria-describedby=[described("expected_interval_minutes", Some("sensor-interval-hint"))];
            p.meta id="sensor-interval-hint" { (lang.t("sensor-interval-hint")) }
            (field_errors(shown, "expected_interval_minutes"))
            button type="submit" { (lang.t("sensor-create")) }
        },
    )
}

/// The form field a body field belongs to (the three place keys are the one place choice).
fn form_field(body_field: &str) -> &'static str {
    match body_field.strip_prefix("body.").unwrap_or(body_field) {
        "name" => "name",
        "metric" => "metric",
        "location_key" | "site_key" | "tank_key" => "place",
        "source" => "source",
        "topic" => "topic",
        "expected_interval_minutes" => "expected_interval_minutes",
        _ => "",
    }
}

fn label(lang: Lang) -> impl Fn(&str) -> Option<String> {
    move |field: &str| {
        let id = match form_field(field) {
            "name" => "sensor-field-name",
            "metric" => "sensor-field-metric",
            "place" => "sensor-field-place",
            "source" => "sensor-field-source",
            "topic" => "sensor-field-topic",
            "expected_interval_minutes" => "sensor-field-interval",
            _ => return None,
        };
        Some(lang.t(id))
    }
}

/// The refusal of the register form in the page's words, by field, each sentence once.
fn refusal(lang: Lang, err: &AppError) -> Vec<(&'static str, String)> {
    let mut out: Vec<(&'static str, String)> = Vec::new();
    let mut push = |field: &'static str, line: String| {
        if !out.iter().any(|(f, l)| *f == field && *l == line) {
            out.push((field, line));
        }
    };
    match err.code() {
        ErrorCode::DuplicateEntry => push("name", lang.t("sensor-err-duplicate")),
        ErrorCode::ValidationError if !err.details().is_empty() => {
            let lines = explain(lang, err, &label(lang));
            for (d, line) in err.details().iter().zip(lines) {
                let field = form_field(&d.field);
                // The topic's two rules get their own sentence; the rest the reader's kind.
                let line = match (field, d.code.as_str()) {
                    ("topic", "value_error") if d.reason.contains("http") => {
                        lang.t("sensor-err-topic-http")
                    }
                    ("topic", "value_error") if d.reason.contains("wildcard") => {
                        lang.t("sensor-err-topic-wildcard")
                    }
                    ("topic", "missing") => lang.t("sensor-err-topic-missing"),
                    ("place", _) => lang.t("sensor-err-place"),
                    _ => line,
                };
                push(field, line);
            }
        }
        _ => {
            for line in explain(lang, err, &label(lang)) {
                push("", line);
            }
        }
    }
    out
}

/// The register form as the REST body: the place choice (`location:<key>`) becomes its key
/// field; an empty interval is left out (none), any other goes to the reader as typed.
fn body_of(posted: &Posted) -> serde_json::Map<String, serde_json::Value> {
    let interval_given = posted
        .get("expected_interval_minutes")
        .is_some_and(|v| !v.trim().is_empty());
    let mut spec = vec![
        ("name", Field::Text),
        ("metric", Field::Text),
        ("source", Field::Text),
        ("topic", Field::Optional),
    ];
    if interval_given {
        spec.push(("expected_interval_minutes", Field::Int));
    }
    let mut map = posted.object(&spec);
    if let Some((kind, key)) = posted.get("place").and_then(|p| p.split_once(':')) {
        let field = match kind {
            "location" => Some("location_key"),
            "site" => Some("site_key"),
            "tank" => Some("tank_key"),
            _ => None,
        };
        if let Some(field) = field {
            map.insert(field.to_owned(), serde_json::Value::String(key.to_owned()));
        }
    }
    map
}

/// `POST /app/g/{slug}/sensors`: registers a sensor (admin).
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
        scope.garden.require(Role::Admin)?;
        let new: NewSensor = parse(body_of(&posted))?;
        sensors::create_sensor(&ctx.state, &scope.garden.tenant, &new).await
    }
    .await;
    match outcome {
        Ok(s) => see_other(
            req,
            res,
            &format!(
                "{}#sensor-{}",
                done(&sensors_url(&scope.slug), "created"),
                s.key
            ),
        ),
        Err(err) if shown_on_form(&err) => {
            let shown = Shown {
                create: refusal(ctx.lang, &err),
                typed: Some(&posted),
                ..Shown::default()
            };
            show(req, res, &ctx, &scope, err.code().status(), &shown).await;
        }
        Err(err) => ctx.fail(req, res, err),
    }
}

/// `POST /app/g/{slug}/sensors/{key}/delete`: deletes a sensor with its readings (admin),
/// once the box is ticked.
#[handler]
async fn delete(req: &mut Request, depot: &mut Depot, res: &mut Response) {
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
        scope.garden.require(Role::Admin)?;
        // Another garden's sensor (or none) is the 404 page, ticked or not.
        let sensor = sensors::get_sensor(&ctx.state, &scope.garden.tenant, &key).await?;
        if posted.get("confirm") != Some("yes") {
            return Ok(Some(sensor.key));
        }
        sensors::delete_sensor(&ctx.state, &scope.garden.tenant, &key).await?;
        Ok::<_, AppError>(None)
    }
    .await;
    match outcome {
        Ok(None) => see_other(req, res, &done(&sensors_url(&scope.slug), "deleted")),
        Ok(Some(unconfirmed)) => {
            let shown = Shown {
                delete: Some((unconfirmed, ctx.lang.t("sensor-delete-unconfirmed"))),
                ..Shown::default()
            };
            show(
                req,
                res,
                &ctx,
                &scope,
                StatusCode::UNPROCESSABLE_ENTITY,
                &shown,
            )
            .await;
        }
        Err(err) => ctx.fail(req, res, err),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_body_field_of_the_register_form_has_its_form_field() {
        for (body, form) in [
            ("body.name", "name"),
            ("location_key", "place"),
            ("body.site_key", "place"),
            ("tank_key", "place"),
            ("body.topic", "topic"),
            ("expected_interval_minutes", "expected_interval_minutes"),
            ("body.colour", ""),
        ] {
            assert_eq!(form_field(body), form, "{body}");
        }
    }
}
