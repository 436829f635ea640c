//! The **diary** of a garden (`/app/g/{slug}/diary`): its entries newest first with the
//! filters the diary service's list has (plant, kind, tag, analysis state, date range: read by
//! the REST route's own filter reader), an entry's page (`…/diary/{entry_key}`) with its text,
//! measurements and photos (the renditions the pages already serve), and **mark for analysis**:
//! the only way into the analysis queue (service-spec, "Diary analysis"). The page posts the
//! consent box to `diary::service::request_analysis`, the function that checks consent, role,
//! authorship and the operating mode; each refusal is said plainly next to the form, nothing
//! written. A completed analysis is shown with the disclaimer the server stored with it.

use std::collections::HashMap;

use maud::{Markup, html};
use salvo::prelude::*;
use uuid::Uuid;

use super::scope::{GardenScope, done, local_stamp, open_garden, shown_on_form};
use super::{PageCtx, url_escape};
use crate::auth::{AccountType, Credential, Role};
use crate::error::{AppError, ErrorCode};
use crate::garden::diary::model::{
    ANALYSIS_STATES, AnalysisRequestBody, ENTRY_TYPES, Entry, EntrySummary, entry_type_str,
};
use crate::garden::diary::service::{self as diary, Marker};
use crate::values::page::PageRequest;
use crate::web::forms::{Field, code_text, parse};
use crate::web::i18n::Lang;
use crate::web::layout::{csrf_field, notice, see_other};

pub fn router() -> Router {
    Router::with_path("g/{slug}/diary").get(list_page).push(
        Router::with_path("{entry_key}").get(entry_page).push(
            Router::with_path("analysis")
                .post(mark_post)
                .push(Router::with_path("withdraw").post(withdraw_post)),
        ),
    )
}

/// Entries per page of the list.
const PAGE_SIZE: i64 = 30;
/// The filters of the list form, in the order the REST query names them.
const FILTERS: &[&str] = &["plant", "entry_type", "tag", "analysis_state", "from", "to"];

fn choice(lang: Lang, prefix: &str, key: &str) -> String {
    let id = format!("{prefix}-{}", key.replace('_', "-"));
    let text = lang.t(&id);
    if text == id { key.to_owned() } else { text }
}

/// Every plant of the garden by key (archived ones too: their entries stay).
async fn plant_names(
    ctx: &PageCtx,
    scope: &GardenScope<'_>,
) -> Result<Vec<(Uuid, String)>, AppError> {
    let every = crate::garden::plants::repo::Filter {
        archived: crate::garden::plants::repo::Archived::Include,
        ..Default::default()
    };
    let all = PageRequest {
        skip: 0,
        limit: crate::garden::plants::service::LIST_MAX_LIMIT,
    };
    let plants =
        crate::garden::plants::service::list_plants(&ctx.state, &scope.garden.tenant, &every, all)
            .await?;
    Ok(plants.items.into_iter().map(|p| (p.key, p.name)).collect())
}

fn plant_link(slug: &str, key: Uuid, names: &HashMap<Uuid, String>) -> Markup {
    html! {
        @if let Some(name) = names.get(&key) {
            a href=(format!("/app/g/{slug}/plants/{key}")) { (name) }
        }
    }
}

/// An entry's heading: its title, else its kind.
fn entry_title(lang: Lang, title: Option<&str>, kind: &str) -> String {
    title.map_or_else(|| choice(lang, "pl-entry", kind), str::to_owned)
}

// ---------- the list ----------

/// `GET /app/g/{slug}/diary`: the entries the filters select, newest first. A filter the reader
/// refuses is the page again (422) with the reason beside its field.
#[handler]
async fn list_page(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    let Some(scope) = open_garden(req, res, &ctx).await else {
        return;
    };
    let lang = ctx.lang;
    // The filter form sends every field; one left empty filters nothing.
    let typed = |name: &str| {
        req.query::<String>(name)
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    };
    let skip = typed("skip")
        .and_then(|s| s.parse::<i64>().ok())
        .filter(|s| (0..=100_000).contains(s))
        .unwrap_or(0);
    let listed = async {
        let filter = crate::garden::diary::filter::filter_of(&typed)?;
        let page = PageRequest {
            skip,
            limit: PAGE_SIZE,
        };
        let (entries, names) = tokio::try_join!(
            diary::list_entries(&ctx.state, &scope.garden.tenant, &filter, page),
            plant_names(&ctx, &scope),
        )?;
        Ok::<_, AppError>((entries, names))
    }
    .await;
    let (status, entries, total, names, errors) = match listed {
        Ok((page, names)) => (StatusCode::OK, page.items, page.total, names, Vec::new()),
        Err(e) if e.code() == ErrorCode::ValidationError => {
            let names = match plant_names(&ctx, &scope).await {
                Ok(n) => n,
                Err(e) => return ctx.fail(req, res, e),
            };
            let errors: Vec<(String, String)> = e
                .details()
                .iter()
                .map(|d| {
                    let field = d.field.strip_prefix("query.").unwrap_or(&d.field);
                    let text = if field == "to" && d.reason.contains("before") {
                        lang.t("dy-err-order")
                    } else {
                        lang.t("err-invalid")
                    };
                    (field.to_owned(), text)
                })
                .collect();
            (e.code().status(), Vec::new(), 0, names, errors)
        }
        Err(e) => return ctx.fail(req, res, e),
    };
    let base = format!("/app/g/{}/diary", scope.slug);
    let filters: Vec<(&str, String)> = FILTERS
        .iter()
        .filter_map(|n| typed(n).map(|v| (*n, v)))
        .collect();
    let names_map: HashMap<Uuid, String> = names.iter().cloned().collect();
    let body = html! {
        h1 { (lang.t("dy-title")) " · " (scope.garden.tenant.name) }
        (filter_form(lang, &base, &names, &typed, &errors))
        section.card aria-labelledby="sec-entries" {
            h2 id="sec-entries" { (lang.t("dy-entries")) " " span.meta { "(" (total) ")" } }
            @if entries.is_empty() {
                p.empty { (lang.t(if filters.is_empty() { "today-diary-none" } else { "dy-none-match" })) }
            } @else {
                ul.items {
                    @for e in &entries { (entry_item(lang, &scope.slug, e, &names_map)) }
                }
            }
            (pager(lang, &base, &filters, skip, total))
        }
        @if scope.garden.role >= Role::Grower {
            p.meta { (lang.t("dy-write-hint")) }
        }
    };
    scope.page(
        req,
        res,
        lang,
        status,
        format!("{} · {}", lang.t("dy-title"), scope.garden.tenant.name),
        body,
    );
}

fn filter_form(
    lang: Lang,
    base: &str,
    plants: &[(Uuid, String)],
    typed: &dyn Fn(&str) -> Option<String>,
    errors: &[(String, String)],
) -> Markup {
    let value = |n: &str| typed(n).unwrap_or_default();
    let error_of = |n: &str| errors.iter().find(|(f, _)| f == n).map(|(_, t)| t.as_str());
    let field_error = |n: &str| {
        html! {
            @if let Some(text) = error_of(n) {
                p class="notice bad" id=(format!("dy-{n}-err")) { (text) }
            }
        }
    };
    let described = |n: &str| error_of(n).map(|_| format!("dy-{n}-err"));
    let invalid = |n: &str| error_of(n).map(|_| "true");
    html! {
        section.card aria-labelledby="sec-filter" {
            h2 id="sec-filter" { (lang.t("dy-filter")) }
            @if !errors.is_empty() { (notice("bad", &lang.t("dy-err-filter"))) }
            form.stack method="get" action=(base) {
                label for="dy-plant" { (lang.t("task-field-plant")) }
                select id="dy-plant" name="plant" aria-invalid=[invalid("plant")] aria-describedby=[described("plant")] {
                    option value="" { (lang.t("dy-any")) }
                    @for (k, name) in plants {
                        option value=(k.to_string()) selected[value("plant") == k.to_string()] { (name) }
                    }
                }
                (field_error("plant"))
                label for="dy-entry_type" { (lang.t("pl-entry-type")) }
                select id="dy-entry_type" name="entry_type" aria-invalid=[invalid("entry_type")] aria-describedby=[described("entry_type")] {
                    option value="" { (lang.t("dy-any")) }
                    @for t in ENTRY_TYPES {
                        option value=(t) selected[value("entry_type") == *t] { (choice(lang, "pl-entry", t)) }
                    }
                }
                (field_error("entry_type"))
                label for="dy-tag" { (lang.t("dy-tag")) }
                input type="text" id="dy-tag" name="tag" maxlength="50" value=(value("tag"))
                    aria-invalid=[invalid("tag")] aria-describedby=[described("tag")];
                (field_error("tag"))
                label for="dy-analysis_state" { (lang.t("dy-analysis")) }
                select id="dy-analysis_state" name="analysis_state" aria-invalid=[invalid("analysis_state")] aria-describedby=[described("analysis_state")] {
                    option value="" { (lang.t("dy-any")) }
                    @for s in ANALYSIS_STATES {
                        option value=(s) selected[value("analysis_state") == *s] { (choice(lang, "dy-state", s)) }
                    }
                }
                (field_error("analysis_state"))
                label for="dy-from" { (lang.t("dy-from")) }
                input type="date" id="dy-from" name="from" value=(value("from"))
                    aria-invalid=[invalid("from")] aria-describedby=[described("from")];
                (field_error("from"))
                label for="dy-to" { (lang.t("dy-to")) }
                input type="date" id="dy-to" name="to" value=(value("to"))
                    aria-invalid=[invalid("to")] aria-describedby=[described("to")];
                (field_error("to"))
                button type="submit" { (lang.t("dy-apply")) }
            }
        }
    }
}

fn entry_item(lang: Lang, slug: &str, e: &EntrySummary, names: &HashMap<Uuid, String>) -> Markup {
    let kind = entry_type_str(e.entry_type);
    html! {
        li {
            span.what {
                a href=(format!("/app/g/{slug}/diary/{}", e.key)) { (entry_title(lang, e.title.as_deref(), kind)) }
                @if let Some(p) = e.plant_key { " · " (plant_link(slug, p, names)) }
            }
            span.meta {
                (lang.iso_date(&e.entry_date)) " · " (choice(lang, "pl-entry", kind))
                @if !e.tags.is_empty() { " · " (e.tags.join(", ")) }
                @if e.photo_count > 0 { " · " (lang.t_with("dy-photo-count", &[("count", (e.photo_count as i64).into())])) }
                @if let Some(s) = &e.analysis_state { " · " (choice(lang, "dy-state", s)) }
            }
        }
    }
}

/// Earlier and later pages, keeping the filters.
fn pager(lang: Lang, base: &str, filters: &[(&str, String)], skip: i64, total: i64) -> Markup {
    let link = |to: i64| {
        let mut q: Vec<String> = filters
            .iter()
            .map(|(k, v)| format!("{k}={}", url_escape(v)))
            .collect();
        q.push(format!("skip={to}"));
        format!("{base}?{}", q.join("&"))
    };
    html! {
        @if skip > 0 || skip + PAGE_SIZE < total {
            nav.pager aria-label=(lang.t("dy-pages")) {
                @if skip > 0 { a href=(link((skip - PAGE_SIZE).max(0))) { (lang.t("dy-newer")) } " " }
                @if skip + PAGE_SIZE < total { a href=(link(skip + PAGE_SIZE)) { (lang.t("dy-older")) } }
            }
        }
    }
}

// ---------- an entry's page ----------

/// Why marking was refused, shown beside the form.
struct Refusal {
    status: StatusCode,
    text: String,
    /// The consent box was not ticked (the sentence belongs to it).
    consent: bool,
}

#[handler]
async fn entry_page(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    let Some(scope) = open_garden(req, res, &ctx).await else {
        return;
    };
    let news = match req.query::<String>("done").as_deref() {
        Some("marked") => Some(ctx.lang.t("dy-done-marked")),
        Some("withdrawn") => Some(ctx.lang.t("dy-done-withdrawn")),
        _ => None,
    };
    show_entry(req, res, &ctx, &scope, news, None).await;
}

async fn show_entry(
    req: &Request,
    res: &mut Response,
    ctx: &PageCtx,
    scope: &GardenScope<'_>,
    news: Option<String>,
    refused: Option<&Refusal>,
) {
    let key = req.param::<String>("entry_key").unwrap_or_default();
    let read = async {
        let (entry, analysis) =
            diary::get_entry_with_analysis(&ctx.state, &scope.garden.tenant, &key).await?;
        let names: HashMap<Uuid, String> = plant_names(ctx, scope).await?.into_iter().collect();
        Ok::<_, AppError>((entry, analysis, names))
    };
    // Another garden's entry (or none) is the 404 page: nothing of it is read out.
    let (entry, analysis, names) = match read.await {
        Ok(found) => found,
        Err(e) => return ctx.fail(req, res, e),
    };
    let lang = ctx.lang;
    let tz = scope.s.prefs.timezone.as_str();
    let kind = entry_type_str(entry.entry_type);
    let title = entry_title(lang, entry.title.as_deref(), kind);
    let base = format!("/app/g/{}/diary", scope.slug);
    let body = html! {
        p.crumbs { a href=(base) { (lang.t("dy-all")) } }
        h1 { (title) }
        @if let Some(text) = &news { (notice("ok", text)) }
        section.card aria-labelledby="sec-entry" {
            h2 id="sec-entry" { (lang.t("dy-entry")) }
            dl.facts {
                dt { (lang.t("dy-date")) } dd { (lang.iso_date(&entry.entry_date)) }
                dt { (lang.t("pl-entry-type")) } dd { (choice(lang, "pl-entry", kind)) }
                @if let Some(p) = entry.plant_key {
                    dt { (lang.t("task-field-plant")) } dd { (plant_link(&scope.slug, p, &names)) }
                }
                @if !entry.tags.is_empty() {
                    dt { (lang.t("dy-tag")) } dd { (entry.tags.join(", ")) }
                }
                @for (k, v) in &entry.measurements {
                    dt { (k) } dd { (v.as_str().map_or_else(|| v.to_string(), str::to_owned)) }
                }
                dt { (lang.t("dy-written")) } dd { (local_stamp(lang, tz, entry.created_at)) }
            }
            div.entry-text { @for line in entry.text.lines() { p { (line) } } }
        }
        (photos_card(lang, &scope.slug, &entry))
        (analysis_card(lang, scope, &entry, &analysis, refused))
    };
    let status = refused.map_or(StatusCode::OK, |r| r.status);
    scope.page(
        req,
        res,
        lang,
        status,
        format!("{title} · {}", lang.t("dy-title")),
        body,
    );
}

fn photos_card(lang: Lang, slug: &str, entry: &Entry) -> Markup {
    html! {
        section.card aria-labelledby="sec-photos" {
            h2 id="sec-photos" { (lang.t("pl-photos")) }
            @if entry.photos.is_empty() {
                p.empty { (lang.t("dy-photos-none")) }
            } @else {
                div.photos {
                    @for (i, ph) in entry.photos.iter().enumerate() {
                        @let alt = lang.t_with("pl-photo-alt", &[("n", (i as i64 + 1).into())]);
                        @if ph.renditions.contains(&512) {
                            @if ph.renditions.contains(&1280) {
                                a href=(format!("/app/g/{slug}/photos/{}/1280", ph.key)) {
                                    img src=(format!("/app/g/{slug}/photos/{}/512", ph.key)) alt=(alt) width="320" height="240" loading="lazy";
                                }
                            } @else {
                                img src=(format!("/app/g/{slug}/photos/{}/512", ph.key)) alt=(alt) width="320" height="240" loading="lazy";
                            }
                        } @else {
                            span.pending { (lang.t("pl-photo-pending")) }
                        }
                    }
                }
            }
        }
    }
}

fn analysis_card(
    lang: Lang,
    scope: &GardenScope<'_>,
    entry: &Entry,
    analysis: &crate::garden::diary::model::Analysis,
    refused: Option<&Refusal>,
) -> Markup {
    let tz = scope.s.prefs.timezone.as_str();
    let state = analysis.analysis_state.as_deref();
    let author = entry.author_key == scope.s.principal.user_id;
    let grower = scope.garden.role >= Role::Grower;
    let by_agent = entry.written_via != "rest";
    // Marking again is possible once an analysis ended (the old result goes).
    let markable = matches!(state, None | Some("completed" | "failed"));
    let action = format!("/app/g/{}/diary/{}/analysis", scope.slug, entry.key);
    let consent_err = refused.filter(|r| r.consent);
    html! {
        section.card aria-labelledby="sec-analysis" id="analysis" {
            h2 id="sec-analysis" { (lang.t("dy-analysis")) }
            p {
                strong { (choice(lang, "dy-state", state.unwrap_or("none"))) }
                @if let Some(at) = analysis.requested_at { " · " (lang.t("dy-requested-at")) " " (local_stamp(lang, tz, at)) }
            }
            @if let Some(result) = &analysis.result {
                @if result.status == "completed" {
                    @if let Some(s) = &result.summary { p { (s) } }
                    @if !result.findings.is_empty() {
                        h3 { (lang.t("dy-findings")) }
                        ul.items {
                            @for f in &result.findings {
                                li {
                                    span.what { (f.finding) }
                                    span.meta {
                                        (lang.t_with("dy-confidence", &[("percent", ((f.confidence * 100.0).round() as i64).into())]))
                                        @if let Some(c) = &f.category { " · " (c) }
                                        @if let Some(d) = &f.detail { " · " (d) }
                                    }
                                }
                            }
                        }
                    }
                    @if !result.recommended_actions.is_empty() {
                        h3 { (lang.t("dy-actions")) }
                        ul { @for a in &result.recommended_actions { li { (a) } } }
                    }
                    // The server's fixed words, stored with the result: shown as stored.
                    p.notice.warn role="note" { strong { (lang.t("dy-disclaimer")) ": " } (result.disclaimer) }
                    p.meta {
                        (local_stamp(lang, tz, result.submitted_at))
                        @if let Some(m) = &result.model { " · " (m) }
                    }
                } @else {
                    (notice("warn", &lang.t("dy-failed")))
                    @if let Some(why) = result.error.as_ref().or(result.summary.as_ref()) { p.meta { (why) } }
                }
            }
            @if let Some(r) = refused.filter(|r| !r.consent) {
                (notice("bad", &r.text))
            }
            @if by_agent {
                p.meta { (lang.t("dy-mark-agent")) }
            } @else if !grower {
                p.meta { (lang.t("dy-mark-viewer")) }
            } @else if !author {
                p.meta { (lang.t("dy-mark-author")) }
            } @else if markable {
                form.stack method="post" action=(action) {
                    (csrf_field(&scope.s.csrf))
                    p { (lang.t("dy-mark-explain")) }
                    label.check {
                        input type="checkbox" id="dy-consent" name="consent" value="true"
                            aria-invalid=[consent_err.map(|_| "true")] aria-describedby=[consent_err.map(|_| "dy-consent-err")];
                        (lang.t("dy-consent"))
                    }
                    @if let Some(r) = consent_err {
                        p class="notice bad" id="dy-consent-err" { (r.text) }
                    }
                    button type="submit" { (lang.t(if state.is_none() { "dy-mark" } else { "dy-mark-again" })) }
                }
            }
            // Withdrawing: the author or an administrator, while the entry is marked.
            @if state.is_some() && grower && (author || scope.garden.role >= Role::Admin) {
                form method="post" action=(format!("{action}/withdraw")) {
                    (csrf_field(&scope.s.csrf))
                    p.meta { (lang.t("dy-withdraw-explain")) }
                    button type="submit" { (lang.t("dy-withdraw")) }
                }
            }
        }
    }
}

/// `POST …/diary/{entry_key}/analysis`: `diary::service::request_analysis` with the consent box
/// read by the REST body's reader. A grower's (as on REST); the service checks authorship, the
/// person's session and the mode.
#[handler]
async fn mark_post(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    let Some(scope) = open_garden(req, res, &ctx).await else {
        return;
    };
    let Some(posted) = ctx.form_of(req, res, scope.s).await else {
        return;
    };
    let lang = ctx.lang;
    let key = req.param::<String>("entry_key").unwrap_or_default();
    let p = &scope.s.principal;
    let marker = Marker {
        id: p.user_id,
        light: p.is_light(),
        signed_in_person: p.credential == Credential::AccessToken
            && p.account_type == AccountType::User,
    };
    let outcome: Result<Result<(), (AppError, &'static str)>, AppError> = async {
        // Another garden's entry is a 404 before the role is looked at, as on the entry page.
        let entry = diary::get_entry(&ctx.state, &scope.garden.tenant, &key).await?;
        if let Err(e) = scope.garden.require(Role::Grower) {
            return Ok(Err((e, "dy-mark-viewer")));
        }
        let consent = parse::<AnalysisRequestBody>(posted.object(&[("consent", Field::Checkbox)]));
        if let Err(e) = consent {
            return Ok(Err((e, "dy-err-consent")));
        }
        match diary::request_analysis(&ctx.state, &scope.garden.tenant, &key, &marker).await {
            Ok(_) => Ok(Ok(())),
            Err(e) if e.code() == ErrorCode::Forbidden && entry.author_key != p.user_id => {
                Ok(Err((e, "dy-mark-author")))
            }
            Err(e) if e.code() == ErrorCode::StateConflict => Ok(Err((e, "dy-mark-agent"))),
            Err(e) if e.code() == ErrorCode::Forbidden => Ok(Err((e, "dy-err-mode"))),
            Err(e) => Err(e),
        }
    }
    .await;
    match outcome {
        Ok(Ok(())) => see_other(
            req,
            res,
            &format!(
                "{}#analysis",
                done(&format!("/app/g/{}/diary/{key}", scope.slug), "marked")
            ),
        ),
        Ok(Err((e, text))) => {
            let consent = text == "dy-err-consent";
            let text = match text {
                "dy-mark-viewer" | "dy-mark-author" => {
                    format!("{} {}", lang.t(text), lang.t("dy-nothing-marked"))
                }
                _ => lang.t(text),
            };
            let refusal = Refusal {
                status: e.code().status(),
                text,
                consent,
            };
            show_entry(req, res, &ctx, &scope, None, Some(&refusal)).await;
        }
        Err(e) if shown_on_form(&e) => {
            let refusal = Refusal {
                status: e.code().status(),
                text: lang.t(code_text(e.code())),
                consent: false,
            };
            show_entry(req, res, &ctx, &scope, None, Some(&refusal)).await;
        }
        Err(e) => ctx.fail(req, res, e),
    }
}

/// `POST …/diary/{entry_key}/analysis/withdraw`: `diary::service::withdraw_analysis`, as the
/// REST route calls it (a grower who wrote the entry, or an administrator): the entry leaves
/// the queue and a result is deleted.
#[handler]
async fn withdraw_post(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    let Some(scope) = open_garden(req, res, &ctx).await else {
        return;
    };
    if ctx.form_of(req, res, scope.s).await.is_none() {
        return;
    }
    let key = req.param::<String>("entry_key").unwrap_or_default();
    let editor = diary::Editor {
        id: scope.s.principal.user_id,
        admin: scope.garden.role == Role::Admin,
    };
    let outcome = async {
        scope.garden.require(Role::Grower)?;
        diary::withdraw_analysis(&ctx.state, &scope.garden.tenant, &key, &editor).await
    }
    .await;
    match outcome {
        Ok(()) => see_other(
            req,
            res,
            &format!(
                "{}#analysis",
                done(&format!("/app/g/{}/diary/{key}", scope.slug), "withdrawn")
            ),
        ),
        Err(e) if shown_on_form(&e) && e.code() != ErrorCode::Forbidden => {
            let refusal = Refusal {
                status: e.code().status(),
                text: ctx.lang.t(code_text(e.code())),
                consent: false,
            };
            show_entry(req, res, &ctx, &scope, None, Some(&refusal)).await;
        }
        Err(e) => ctx.fail(req, res, e),
    }
}
