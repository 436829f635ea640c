//! The list of a garden's plants: filters by location, phase and name, one page at a time.

use super::*;

/// `GET /app/g/{slug}/plants`: the garden's plants, filtered by `name`, `location` and
/// `phase` (the REST list's filters, read by its reader), `skip` to page.
#[handler]
pub(super) async fn list_page(req: &mut Request, depot: &mut Depot, res: &mut Response) {
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

pub(super) fn plant_item(
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
