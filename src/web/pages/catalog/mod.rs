//! The **catalogue** as growers read it (`/app/g/{slug}/catalog`): species (search, names,
//! family, the four safety fields, the phase sequence, cultivars, companions), pests, diseases
//! and treatments with their per-crop pre-harvest intervals and each interval's label. Read-only
//! for every member of the garden (viewers too); garden-scoped only so the frame and the
//! navigation keep the garden, the catalogue itself is the platform's.
//!
//! Every read is the service the REST routes call: `catalog::engine::service` lists and gets
//! every kind, `species::service::phase_sequence_of` gives the sequence in force,
//! `companions::service::recommendations` the neighbours. An unknown or malformed key is the
//! service's 404, shown as the error page.

mod ipm;
mod species;

use maud::{Markup, html};
use salvo::prelude::*;
use serde_json::Value;

use super::scope::{GardenScope, open_garden};
use super::{PageCtx, url_escape};
use crate::catalog::engine::service::{self as engine, ListParams, Listed};
use crate::catalog::engine::spec::KindSpec;
use crate::catalog::ipm::model::{DISEASE, PEST, TREATMENT};
use crate::catalog::species::model::SPECIES;
use crate::error::{AppError, ErrorCode};
use crate::values::page::PageRequest;
use crate::web::i18n::Lang;
use crate::web::layout::notice;

pub fn router() -> Router {
    Router::with_path("g/{slug}/catalog")
        .get(overview)
        .push(Router::with_path("species").get(species::list_page))
        .push(Router::with_path("species/{key}").get(species::species_page))
        .push(Router::with_path("pests").get(ipm::pests_page))
        .push(Router::with_path("pests/{key}").get(ipm::pest_page))
        .push(Router::with_path("diseases").get(ipm::diseases_page))
        .push(Router::with_path("diseases/{key}").get(ipm::disease_page))
        .push(Router::with_path("treatments").get(ipm::treatments_page))
        .push(Router::with_path("treatments/{key}").get(ipm::treatment_page))
}

/// Records a list page shows at a time.
const PAGE_SIZE: i64 = 50;
/// Records a page lists under another (a species' cultivars, a pest's treatments).
const UNDER_MAX: i64 = 200;

/// One part of the catalogue: its kind, its path under the catalogue, its title.
pub(super) struct Part {
    pub spec: &'static KindSpec,
    pub path: &'static str,
    pub title: &'static str,
}

pub(super) const SPECIES_PART: Part = Part {
    spec: &SPECIES,
    path: "species",
    title: "cat-species",
};
pub(super) const PESTS_PART: Part = Part {
    spec: &PEST,
    path: "pests",
    title: "cat-pests",
};
pub(super) const DISEASES_PART: Part = Part {
    spec: &DISEASE,
    path: "diseases",
    title: "cat-diseases",
};
pub(super) const TREATMENTS_PART: Part = Part {
    spec: &TREATMENT,
    path: "treatments",
    title: "cat-treatments",
};

// ---------- reading a record ----------

/// A text field of a record.
pub(super) fn text<'a>(v: &'a Value, field: &str) -> Option<&'a str> {
    v.get(field).and_then(Value::as_str)
}

/// A list-of-texts field of a record (empty when absent).
pub(super) fn texts<'a>(v: &'a Value, field: &str) -> Vec<&'a str> {
    v.get(field)
        .and_then(Value::as_array)
        .map(|l| l.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// The record's key.
pub(super) fn key_of(v: &Value) -> &str {
    text(v, "key").unwrap_or_default()
}

/// A name in the page's language, else the English one: a text field or the first of a list
/// (`common_name_de` / `common_names_de`).
pub(super) fn local_name(lang: Lang, v: &Value, en: &str, de: &str) -> Option<String> {
    let pick = |f: &str| match v.get(f) {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Array(l)) => l.first().and_then(Value::as_str).map(str::to_owned),
        _ => None,
    };
    match lang {
        Lang::De => pick(de).or_else(|| pick(en)),
        Lang::En => pick(en),
    }
}

/// A value of a closed vocabulary in the page's language (the value itself, spaced, when the
/// texts have none).
pub(super) fn choice(lang: Lang, prefix: &str, value: &str) -> String {
    let id = format!("{prefix}-{}", value.replace('_', "-"));
    let t = lang.t(&id);
    if t == id { value.replace('_', " ") } else { t }
}

/// Yes, no, or not recorded.
pub(super) fn yes_no(lang: Lang, v: Option<bool>) -> String {
    lang.t(match v {
        Some(true) => "cat-yes",
        Some(false) => "cat-no",
        None => "cat-unknown",
    })
}

/// The keys among texts that are record keys.
pub(super) fn uuids<'a>(keys: impl IntoIterator<Item = &'a str>) -> Vec<uuid::Uuid> {
    keys.into_iter()
        .filter_map(|k| uuid::Uuid::parse_str(k).ok())
        .collect()
}

// ---------- shared pieces of the pages ----------

/// The catalogue's address in this garden.
pub(super) fn base(scope: &GardenScope<'_>) -> String {
    format!("/app/g/{}/catalog", scope.slug)
}

/// The way back: the catalogue, and the part a record belongs to.
pub(super) fn crumbs(lang: Lang, scope: &GardenScope<'_>, part: Option<&Part>) -> Markup {
    let root = base(scope);
    html! {
        nav.crumbs aria-label=(lang.t("cat-breadcrumb")) {
            a href=(root) { (lang.t("nav-catalog")) }
            @if let Some(p) = part {
                " › " a href=(format!("{root}/{}", p.path)) { (lang.t(p.title)) }
            }
        }
    }
}

/// A definition row when the value is there.
pub(super) fn fact(lang: Lang, label: &str, value: Option<String>) -> Markup {
    html! {
        @if let Some(v) = value.filter(|v| !v.is_empty()) {
            dt { (lang.t(label)) }
            dd { (v) }
        }
    }
}

/// Links to records of a part by key, named by `names` (the key when a name is missing).
pub(super) fn linked(
    scope: &GardenScope<'_>,
    part: &Part,
    keys: &[&str],
    names: &std::collections::HashMap<uuid::Uuid, String>,
) -> Markup {
    let root = base(scope);
    html! {
        ul {
            @for k in keys {
                @let name = uuid::Uuid::parse_str(k).ok().and_then(|id| names.get(&id).cloned());
                li { a href=(format!("{root}/{}/{k}", part.path)) { (name.unwrap_or_else(|| (*k).to_owned())) } }
            }
        }
    }
}

/// The records of another kind that point at this one through a filter (a pest's treatments,
/// the pests of a species), as the REST list with that filter answers them.
pub(super) async fn listed_by(
    ctx: &PageCtx,
    spec: &KindSpec,
    filter: &'static str,
    key: &str,
) -> Result<Vec<Value>, AppError> {
    let params = ListParams {
        q: None,
        filters: vec![(filter, key.to_owned())],
    };
    let page = PageRequest {
        skip: 0,
        limit: UNDER_MAX,
    };
    Ok(engine::list(&ctx.state, spec, &params, None, page)
        .await?
        .items)
}

/// A record page's opening: the context, the garden and the record of the path's key, or
/// `None` once the sign-in redirect or the error page (404 for an unknown key) is written.
pub(super) async fn open_record<'a>(
    req: &Request,
    res: &mut Response,
    ctx: &'a PageCtx,
    spec: &KindSpec,
) -> Option<(GardenScope<'a>, Value)> {
    let scope = open_garden(req, res, ctx).await?;
    let key = req.param::<String>("key").unwrap_or_default();
    match engine::get(&ctx.state, spec, &key).await {
        Ok(record) => Some((scope, record)),
        Err(e) => {
            ctx.fail(req, res, e);
            None
        }
    }
}

/// A part's list: the search form (`q` searches the names as the REST list does), one page
/// of records (`skip`), each written by `item`.
pub(super) async fn list_part(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
    part: &Part,
    item: fn(Lang, &str, &Value) -> Markup,
) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    let Some(scope) = open_garden(req, res, &ctx).await else {
        return;
    };
    let lang = ctx.lang;
    let q = req
        .query::<String>("q")
        .unwrap_or_default()
        .trim()
        .to_owned();
    let skip = req
        .query::<String>("skip")
        .and_then(|s| s.trim().parse::<i64>().ok())
        .unwrap_or(0)
        .clamp(0, 100_000);
    let params = ListParams {
        q: (!q.is_empty()).then(|| q.clone()),
        filters: Vec::new(),
    };
    let request = PageRequest {
        skip,
        limit: PAGE_SIZE,
    };
    let (listed, refused) = match engine::list(&ctx.state, part.spec, &params, None, request).await
    {
        Ok(l) => (l, None),
        // A search the service refuses (too long, control characters): said, nothing listed.
        Err(e) if e.code() == ErrorCode::ValidationError => (
            Listed {
                items: Vec::new(),
                total: 0,
                page: request,
            },
            Some(e.code().status()),
        ),
        Err(e) => return ctx.fail(req, res, e),
    };
    let here = format!("{}/{}", base(&scope), part.path);
    let first = listed.page.skip + 1;
    let last = listed.page.skip + listed.items.len() as i64;
    let link = |to: i64| {
        let mut parts = Vec::new();
        if !q.is_empty() {
            parts.push(format!("q={}", url_escape(&q)));
        }
        if to > 0 {
            parts.push(format!("skip={to}"));
        }
        if parts.is_empty() {
            here.clone()
        } else {
            format!("{here}?{}", parts.join("&"))
        }
    };
    let title = lang.t(part.title);
    let body = html! {
        (crumbs(lang, &scope, None))
        h1 { (title) }
        form.filters method="get" action=(here) role="search" aria-label=(lang.t("cat-search")) {
            div.field {
                label for="cat-q" { (lang.t("cat-search-label")) }
                input type="search" id="cat-q" name="q" value=(q) maxlength="100";
            }
            button type="submit" { (lang.t("cat-search-button")) }
        }
        @if refused.is_some() { (notice("bad", &lang.t("cat-search-refused"))) }
        section.card aria-labelledby="sec-results" {
            h2 id="sec-results" { (lang.t("cat-results")) }
            @if listed.items.is_empty() {
                p.empty { (lang.t(if q.is_empty() { "cat-none" } else { "cat-none-found" })) }
            } @else {
                ul.items { @for v in &listed.items { (item(lang, &here, v)) } }
                p.meta { (lang.t_with("cat-showing", &[("first", first.into()), ("last", last.into()), ("total", listed.total.into())])) }
            }
            @if listed.page.skip > 0 || last < listed.total {
                nav.pager aria-label=(lang.t("pl-pages")) {
                    @if listed.page.skip > 0 {
                        a rel="prev" href=(link((listed.page.skip - PAGE_SIZE).max(0))) { (lang.t("pl-previous")) }
                    }
                    @if last < listed.total {
                        a rel="next" href=(link(listed.page.skip + PAGE_SIZE)) { (lang.t("pl-next")) }
                    }
                }
            }
        }
    };
    let status = refused.unwrap_or(StatusCode::OK);
    scope.page(req, res, lang, status, title, body);
}

/// `GET /app/g/{slug}/catalog`: the parts, each with how many records it holds.
#[handler]
async fn overview(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    let Some(scope) = open_garden(req, res, &ctx).await else {
        return;
    };
    let lang = ctx.lang;
    let one = PageRequest { skip: 0, limit: 1 };
    let none = ListParams::default();
    let state = &ctx.state;
    let totals = tokio::try_join!(
        engine::list(state, &SPECIES, &none, None, one),
        engine::list(state, &PEST, &none, None, one),
        engine::list(state, &DISEASE, &none, None, one),
        engine::list(state, &TREATMENT, &none, None, one),
    );
    let (s, p, d, t) = match totals {
        Ok(found) => found,
        Err(e) => return ctx.fail(req, res, e),
    };
    let root = base(&scope);
    let parts = [
        (&SPECIES_PART, s.total, "cat-species-intro"),
        (&PESTS_PART, p.total, "cat-pests-intro"),
        (&DISEASES_PART, d.total, "cat-diseases-intro"),
        (&TREATMENTS_PART, t.total, "cat-treatments-intro"),
    ];
    let body = html! {
        h1 { (lang.t("nav-catalog")) }
        p { (lang.t("cat-intro")) }
        ul.items {
            @for (part, total, intro) in parts {
                li {
                    span.what {
                        a href=(format!("{root}/{}", part.path)) { strong { (lang.t(part.title)) } }
                        br;
                        span.meta { (lang.t(intro)) " · " (lang.t_with("cat-count", &[("count", total.into())])) }
                    }
                }
            }
        }
    };
    scope.page(req, res, lang, StatusCode::OK, lang.t("nav-catalog"), body);
}
