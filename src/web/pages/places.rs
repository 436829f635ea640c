//! **Places** of a garden (`/app/g/{slug}/places`): its sites, their locations (nested to any
//! depth) and slots as a tree; the garden's substrates and substrate batches. Sites, locations
//! and slots are the garden's setup (admins write them, as on REST); substrates and batches are
//! written by growers. Every form posts to the service function the REST route calls and comes
//! back here (POST-redirect-GET); a refusal shows the page again with what was wrong, nothing
//! written.

use maud::{Markup, html};
use salvo::prelude::*;
use uuid::Uuid;

use super::PageCtx;
use super::scope::{GardenScope, done, open_garden, shown_on_form};
use crate::auth::Role;
use crate::error::{AppError, ErrorCode};
use crate::garden::places::model::{
    LOCATION_KINDS, Location, LocationPatch, NewLocation, NewSlot, Slot,
};
use crate::garden::places::repo::LocationFilter;
use crate::garden::places::service as places;
use crate::garden::sites::model::{NewSite, Site, SiteKind, SitePatch};
use crate::garden::sites::service as sites;
use crate::garden::substrates::model::{
    NewBatch, NewSubstrate, Substrate, SubstrateBatch, SubstrateScope,
};
use crate::garden::substrates::service::{self as substrates, SubstrateQuery};
use crate::http::pagination::PageRequest;
use crate::rules::substrate_mix::TYPES;
use crate::web::forms::{Field, Posted, explain, parse};
use crate::web::i18n::Lang;
use crate::web::layout::{csrf_field, notice, see_other};

pub fn router() -> Router {
    Router::with_path("g/{slug}/places")
        .get(places_page)
        .push(Router::with_path("{what}").post(act))
        .push(Router::with_path("{what}/{key}/{action}").post(act))
}

/// Most records of each kind the page lists (the REST routes' largest page).
const LIST_MAX: i64 = 200;

fn all() -> PageRequest {
    PageRequest {
        skip: 0,
        limit: LIST_MAX,
    }
}

/// Everything the page shows, read before any of it is written out.
struct PlacesData {
    sites: Vec<Site>,
    locations: Vec<Location>,
    slots: Vec<Slot>,
    substrates: Vec<Substrate>,
    batches: Vec<SubstrateBatch>,
}

async fn read(ctx: &PageCtx, scope: &GardenScope<'_>) -> Result<PlacesData, AppError> {
    let state = &ctx.state;
    let tenant = &scope.garden.tenant;
    let filter = LocationFilter {
        site: None,
        parent: None,
    };
    // One after the other: a page holds one connection of the pool at a time.
    let sites = sites::list_sites(state, tenant, all()).await?;
    let locations = places::list_locations(state, tenant, filter, all()).await?;
    let slots = places::list_slots(state, tenant, None, all()).await?;
    let query = SubstrateQuery::default();
    let substrates = substrates::list_substrates(state, tenant, &query, all()).await?;
    let batches = substrates::list_batches(state, tenant, None, all()).await?;
    Ok(PlacesData {
        sites: sites.items,
        locations: locations.items,
        slots: slots.items,
        substrates: substrates.items,
        batches: batches.items,
    })
}

/// What a form did, by its `done` value.
fn news_text(lang: Lang, key: &str) -> Option<String> {
    let id = match key {
        "site-created" => "places-done-site-created",
        "site-renamed" => "places-done-site-renamed",
        "site-deleted" => "places-done-site-deleted",
        "location-created" => "places-done-location-created",
        "location-renamed" => "places-done-location-renamed",
        "location-deleted" => "places-done-location-deleted",
        "slot-created" => "places-done-slot-created",
        "slot-deleted" => "places-done-slot-deleted",
        "substrate-created" => "places-done-substrate-created",
        "batch-created" => "places-done-batch-created",
        _ => return None,
    };
    Some(lang.t(id))
}

#[handler]
async fn places_page(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    let Some(scope) = open_garden(req, res, &ctx).await else {
        return;
    };
    let news = req
        .query::<String>("done")
        .and_then(|d| news_text(ctx.lang, &d));
    show(req, res, &ctx, &scope, StatusCode::OK, news, &[]).await;
}

/// Writes the page (with the news of a form that worked, or the errors of one that did not).
async fn show(
    req: &Request,
    res: &mut Response,
    ctx: &PageCtx,
    scope: &GardenScope<'_>,
    status: StatusCode,
    news: Option<String>,
    errors: &[String],
) {
    let data = match read(ctx, scope).await {
        Ok(d) => d,
        Err(e) => return ctx.fail(req, res, e),
    };
    let lang = ctx.lang;
    let body = body(lang, scope, &data, news.as_deref(), errors);
    scope.page(
        req,
        res,
        lang,
        status,
        format!("{} · {}", lang.t("nav-places"), scope.garden.tenant.name),
        body,
    );
}

fn site_kind_text(lang: Lang, kind: SiteKind) -> String {
    lang.t(&format!("site-kind-{}", kind.as_str()))
}

fn location_kind_text(lang: Lang, kind: &str) -> String {
    if LOCATION_KINDS.iter().any(|(k, _)| *k == kind) {
        lang.t(&format!("location-kind-{kind}"))
    } else {
        kind.to_owned()
    }
}

fn substrate_type_text(lang: Lang, kind: &str) -> String {
    if TYPES.contains(&kind) {
        lang.t(&format!("substrate-type-{kind}"))
    } else {
        kind.to_owned()
    }
}

fn substrate_name(lang: Lang, s: &Substrate) -> String {
    match (lang, &s.name_de) {
        (Lang::De, Some(de)) => de.clone(),
        _ => s.name.clone(),
    }
}

fn body(
    lang: Lang,
    scope: &GardenScope<'_>,
    data: &PlacesData,
    news: Option<&str>,
    errors: &[String],
) -> Markup {
    let slug = &scope.slug;
    let csrf = &scope.s.csrf;
    let admin = scope.garden.role >= Role::Admin;
    let grower = scope.garden.role >= Role::Grower;
    let base = format!("/app/g/{slug}/places");
    let own: Vec<&Substrate> = data
        .substrates
        .iter()
        .filter(|s| s.scope == SubstrateScope::Tenant)
        .collect();
    html! {
        h1 { (lang.t("nav-places")) " · " (scope.garden.tenant.name) }
        @if let Some(text) = news { (notice("ok", text)) }
        @for e in errors { (notice("bad", e)) }
        section.card aria-labelledby="sec-sites" {
            h2 id="sec-sites" { (lang.t("places-sites")) }
            @if data.sites.is_empty() {
                p.empty { (lang.t("places-sites-none")) }
            }
            @for site in &data.sites {
                (site_node(lang, &base, csrf, admin, site, data))
            }
            @if admin {
                details.add {
                    summary { (lang.t("places-add-site")) }
                    form.stack method="post" action=(format!("{base}/sites")) {
                        (csrf_field(csrf))
                        label for="site-name" { (lang.t("field-place-name")) }
                        input id="site-name" type="text" name="name" required maxlength="120";
                        label for="site-kind" { (lang.t("field-kind")) }
                        select id="site-kind" name="kind" {
                            @for (_, k) in SiteKind::ALL {
                                option value=(k.as_str()) { (site_kind_text(lang, *k)) }
                            }
                        }
                        button type="submit" { (lang.t("places-add-site")) }
                    }
                }
            } @else {
                p.meta { (lang.t("places-admin-only")) }
            }
        }
        section.card aria-labelledby="sec-substrates" {
            h2 id="sec-substrates" { (lang.t("places-substrates")) }
            @if own.is_empty() {
                p.empty { (lang.t("places-substrates-none")) }
            } @else {
                ul.items {
                    @for s in &own {
                        li {
                            span.what { (substrate_name(lang, s)) }
                            span.meta {
                                (substrate_type_text(lang, &s.props.substrate_type))
                                @if s.props.reusable {
                                    " · " (lang.t_with("places-reuse-cycles", &[("cycles", s.props.max_reuse_cycles.into())]))
                                }
                            }
                        }
                    }
                }
            }
            @if grower {
                details.add {
                    summary { (lang.t("places-add-substrate")) }
                    form.stack method="post" action=(format!("{base}/substrates")) {
                        (csrf_field(csrf))
                        label for="substrate-name" { (lang.t("field-place-name")) }
                        input id="substrate-name" type="text" name="name" required maxlength="120";
                        label for="substrate-type" { (lang.t("field-substrate-type")) }
                        select id="substrate-type" name="type" {
                            @for t in TYPES {
                                option value=(t) { (substrate_type_text(lang, t)) }
                            }
                        }
                        label.check for="substrate-reusable" {
                            input id="substrate-reusable" type="checkbox" name="reusable" value="true";
                            (lang.t("field-reusable"))
                        }
                        button type="submit" { (lang.t("places-add-substrate")) }
                    }
                }
            }
        }
        section.card aria-labelledby="sec-batches" {
            h2 id="sec-batches" { (lang.t("places-batches")) }
            @if data.batches.is_empty() {
                p.empty { (lang.t("places-batches-none")) }
            } @else {
                ul.items {
                    @for b in &data.batches {
                        li {
                            span.what { strong { (b.label) } " · " (b.substrate_name.clone().unwrap_or_else(|| b.substrate_key.clone())) }
                            span.meta {
                                (lang.t_with("places-batch-cycles", &[("used", b.cycles_used.into()), ("max", b.max_reuse_cycles.into())]))
                                " · " (lang.t_with("places-live-plants", &[("count", b.live_plants.into())]))
                                @if let Some(day) = b.mixed_on { " · " (lang.t("places-mixed-on")) " " (lang.date(day)) }
                            }
                        }
                    }
                }
            }
            @if grower {
                details.add {
                    summary { (lang.t("places-add-batch")) }
                    form.stack method="post" action=(format!("{base}/batches")) {
                        (csrf_field(csrf))
                        label for="batch-substrate" { (lang.t("field-substrate")) }
                        select id="batch-substrate" name="substrate_key" required {
                            @for s in &data.substrates {
                                option value=(s.key) { (substrate_name(lang, s)) }
                            }
                        }
                        label for="batch-label" { (lang.t("field-label")) }
                        input id="batch-label" type="text" name="label" required maxlength="120";
                        label for="batch-mixed" { (lang.t("field-mixed-on")) }
                        input id="batch-mixed" type="date" name="mixed_on";
                        button type="submit" { (lang.t("places-add-batch")) }
                    }
                }
            }
        }
    }
}

fn site_node(
    lang: Lang,
    base: &str,
    csrf: &str,
    admin: bool,
    site: &Site,
    data: &PlacesData,
) -> Markup {
    let key = site.key;
    let roots: Vec<&Location> = data
        .locations
        .iter()
        .filter(|l| l.site_key == key && l.parent_key.is_none())
        .collect();
    html! {
        div.site id=(format!("site-{key}")) {
            h3 { (site.name) " " span.meta { "(" (site_kind_text(lang, site.kind)) ")" } }
            @if admin {
                (edit_forms(lang, csrf, &format!("{base}/sites/{key}"), &site.name, &format!("site-{key}")))
            }
            @if roots.is_empty() {
                p.empty { (lang.t("places-locations-none")) }
            } @else {
                ul.tree {
                    @for l in &roots { (location_node(lang, base, csrf, admin, l, data)) }
                }
            }
            @if admin {
                (add_location_form(lang, base, csrf, key, None))
            }
        }
    }
}

fn location_node(
    lang: Lang,
    base: &str,
    csrf: &str,
    admin: bool,
    loc: &Location,
    data: &PlacesData,
) -> Markup {
    let key = loc.key;
    let children: Vec<&Location> = data
        .locations
        .iter()
        .filter(|l| l.parent_key == Some(key))
        .collect();
    let slots: Vec<&Slot> = data
        .slots
        .iter()
        .filter(|s| s.location_key == key)
        .collect();
    html! {
        li id=(format!("location-{key}")) {
            div.node {
                strong { a href=(format!("{}/locations/{key}", base.trim_end_matches("/places"))) { (loc.name) } }
                @if let Some(kind) = &loc.kind { " " span.meta { "(" (location_kind_text(lang, kind)) ")" } }
            }
            @if !slots.is_empty() {
                ul.slots aria-label=(lang.t("places-slots")) {
                    @for slot in &slots {
                        li id=(format!("slot-{}", slot.key)) {
                            span.what { code { (slot.code) } " " span.meta { (lang.t_with("places-slot-use", &[("live", slot.live_plants.into()), ("capacity", slot.capacity.into())])) } }
                            @if admin {
                                form.inline method="post" action=(format!("{base}/slots/{}/delete", slot.key)) {
                                    (csrf_field(csrf))
                                    button.secondary type="submit" aria-label=(lang.t_with("places-delete-named", &[("name", slot.code.clone().into())])) { (lang.t("places-delete")) }
                                }
                            }
                        }
                    }
                }
            }
            @if admin {
                (edit_forms(lang, csrf, &format!("{base}/locations/{key}"), &loc.name, &format!("location-{key}")))
                details.add {
                    summary { (lang.t("places-add-slot")) }
                    form.stack method="post" action=(format!("{base}/slots")) {
                        (csrf_field(csrf))
                        input type="hidden" name="location_key" value=(key.to_string());
                        label for=(format!("slot-code-{key}")) { (lang.t("field-slot-code")) }
                        input id=(format!("slot-code-{key}")) type="text" name="code" required maxlength="40" autocapitalize="characters" aria-describedby=(format!("slot-hint-{key}"));
                        p.meta id=(format!("slot-hint-{key}")) { (lang.t("places-slot-code-hint")) }
                        label for=(format!("slot-capacity-{key}")) { (lang.t("field-capacity")) }
                        input id=(format!("slot-capacity-{key}")) type="number" name="capacity" value="1" min="1" max="20" required;
                        button type="submit" { (lang.t("places-add-slot")) }
                    }
                }
                (add_location_form(lang, base, csrf, loc.site_key, Some(key)))
            }
            @if !children.is_empty() {
                ul.tree {
                    @for c in &children { (location_node(lang, base, csrf, admin, c, data)) }
                }
            }
        }
    }
}

/// Rename and delete of a site or location.
fn edit_forms(lang: Lang, csrf: &str, path: &str, name: &str, id: &str) -> Markup {
    html! {
        details.edit {
            summary { (lang.t("places-change")) span.visually-hidden { " " (name) } }
            form.stack method="post" action=(format!("{path}/rename")) {
                (csrf_field(csrf))
                label for=(format!("{id}-name")) { (lang.t("field-place-name")) }
                input id=(format!("{id}-name")) type="text" name="name" value=(name) required maxlength="120";
                button type="submit" { (lang.t("places-rename")) }
            }
            form.stack method="post" action=(format!("{path}/delete")) {
                (csrf_field(csrf))
                button.secondary type="submit" { (lang.t_with("places-delete-named", &[("name", name.to_owned().into())])) }
            }
        }
    }
}

fn add_location_form(
    lang: Lang,
    base: &str,
    csrf: &str,
    site: Uuid,
    parent: Option<Uuid>,
) -> Markup {
    let id = parent.unwrap_or(site);
    let summary = if parent.is_some() {
        lang.t("places-add-sublocation")
    } else {
        lang.t("places-add-location")
    };
    html! {
        details.add {
            summary { (summary) }
            form.stack method="post" action=(format!("{base}/locations")) {
                (csrf_field(csrf))
                input type="hidden" name="site_key" value=(site.to_string());
                @if let Some(p) = parent { input type="hidden" name="parent_key" value=(p.to_string()); }
                label for=(format!("loc-name-{id}")) { (lang.t("field-place-name")) }
                input id=(format!("loc-name-{id}")) type="text" name="name" required maxlength="120";
                label for=(format!("loc-kind-{id}")) { (lang.t("field-kind")) }
                select id=(format!("loc-kind-{id}")) name="kind" {
                    option value="" { "—" }
                    @for (k, _) in LOCATION_KINDS {
                        option value=(k) { (location_kind_text(lang, k)) }
                    }
                }
                button type="submit" { (summary) }
            }
        }
    }
}

/// One form of the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    CreateSite,
    RenameSite,
    DeleteSite,
    CreateLocation,
    RenameLocation,
    DeleteLocation,
    CreateSlot,
    DeleteSlot,
    CreateSubstrate,
    CreateBatch,
}

impl Action {
    fn of(what: &str, action: Option<&str>) -> Option<Self> {
        Some(match (what, action) {
            ("sites", None) => Self::CreateSite,
            ("sites", Some("rename")) => Self::RenameSite,
            ("sites", Some("delete")) => Self::DeleteSite,
            ("locations", None) => Self::CreateLocation,
            ("locations", Some("rename")) => Self::RenameLocation,
            ("locations", Some("delete")) => Self::DeleteLocation,
            ("slots", None) => Self::CreateSlot,
            ("slots", Some("delete")) => Self::DeleteSlot,
            ("substrates", None) => Self::CreateSubstrate,
            ("batches", None) => Self::CreateBatch,
            _ => return None,
        })
    }

    /// The role REST asks for the same write: the setup is the admins', substrates the growers'.
    fn role(self) -> Role {
        match self {
            Self::CreateSubstrate | Self::CreateBatch => Role::Grower,
            _ => Role::Admin,
        }
    }

    /// The sentence for a delete the service refuses while something stands in the place.
    fn occupied_text(self) -> Option<&'static str> {
        match self {
            Self::DeleteSite => Some("places-refused-site"),
            Self::DeleteLocation => Some("places-refused-location"),
            Self::DeleteSlot => Some("places-refused-slot"),
            _ => None,
        }
    }
}

/// The field labels of the page's forms, for error sentences.
fn label(lang: Lang) -> impl Fn(&str) -> Option<String> {
    move |field: &str| {
        let id = match field {
            "name" | "label" => "field-place-name",
            "kind" => "field-kind",
            "code" => "field-slot-code",
            "capacity" => "field-capacity",
            "type" => "field-substrate-type",
            "substrate_key" => "field-substrate",
            "mixed_on" => "field-mixed-on",
            "site_key" | "parent_key" | "location_key" => "field-parent",
            _ => return None,
        };
        Some(lang.t(id))
    }
}

/// Runs one form against the service; the `done` value of the news.
async fn perform(
    ctx: &PageCtx,
    scope: &GardenScope<'_>,
    posted: &Posted,
    action: Action,
    key: &str,
) -> Result<&'static str, AppError> {
    scope.garden.require(action.role())?;
    let state = &ctx.state;
    let tenant = &scope.garden.tenant;
    Ok(match action {
        Action::CreateSite => {
            let new: NewSite = parse(posted.object(&[
                ("name", Field::Text),
                ("kind", Field::Text),
                ("description", Field::Optional),
                ("climate_zone", Field::Optional),
            ]))?;
            sites::create_site(state, tenant, &new).await?;
            "site-created"
        }
        Action::RenameSite => {
            let patch: SitePatch = parse(posted.object(&[("name", Field::Text)]))?;
            sites::patch_site(state, tenant, key, &patch).await?;
            "site-renamed"
        }
        Action::DeleteSite => {
            sites::delete_site(state, tenant, key).await?;
            "site-deleted"
        }
        Action::CreateLocation => {
            let new: NewLocation = parse(posted.object(&[
                ("site_key", Field::Text),
                ("parent_key", Field::Optional),
                ("name", Field::Text),
                ("kind", Field::Optional),
            ]))?;
            places::create_location(state, tenant, &new).await?;
            "location-created"
        }
        Action::RenameLocation => {
            let patch: LocationPatch = parse(posted.object(&[("name", Field::Text)]))?;
            places::patch_location(state, tenant, key, &patch).await?;
            "location-renamed"
        }
        Action::DeleteLocation => {
            places::delete_location(state, tenant, key).await?;
            "location-deleted"
        }
        Action::CreateSlot => {
            let new: NewSlot = parse(posted.object(&[
                ("location_key", Field::Text),
                ("code", Field::Text),
                ("capacity", Field::Int),
            ]))?;
            places::create_slot(state, tenant, &new).await?;
            "slot-created"
        }
        Action::DeleteSlot => {
            places::delete_slot(state, tenant, key).await?;
            "slot-deleted"
        }
        Action::CreateSubstrate => {
            let new: NewSubstrate = parse(posted.object(&[
                ("name", Field::Text),
                ("type", Field::Text),
                ("reusable", Field::Checkbox),
            ]))?;
            substrates::create_substrate(state, tenant, &new).await?;
            "substrate-created"
        }
        Action::CreateBatch => {
            let new: NewBatch = parse(posted.object(&[
                ("substrate_key", Field::Text),
                ("label", Field::Text),
                ("mixed_on", Field::Optional),
            ]))?;
            substrates::create_batch(state, tenant, &new).await?;
            "batch-created"
        }
    })
}

/// Every form of the page: `POST /app/g/{slug}/places/{what}[/{key}/{action}]`.
#[handler]
async fn act(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    let Some(scope) = open_garden(req, res, &ctx).await else {
        return;
    };
    let lang = ctx.lang;
    let Some(posted) = ctx.form_of(req, res, scope.s).await else {
        return;
    };
    let what = req.param::<String>("what").unwrap_or_default();
    let action_word = req.param::<String>("action");
    let key = req.param::<String>("key").unwrap_or_default();
    let Some(action) = Action::of(&what, action_word.as_deref()) else {
        return ctx.fail(req, res, AppError::not_found("page"));
    };
    match perform(&ctx, &scope, &posted, action, &key).await {
        Ok(news) => see_other(
            req,
            res,
            &done(&format!("/app/g/{}/places", scope.slug), news),
        ),
        Err(err) if shown_on_form(&err) => {
            let errors = match action.occupied_text() {
                Some(id) if err.code() == ErrorCode::StateConflict => vec![lang.t(id)],
                _ => explain(lang, &err, &label(lang)),
            };
            show(req, res, &ctx, &scope, err.code().status(), None, &errors).await;
        }
        Err(err) => ctx.fail(req, res, err),
    }
}
