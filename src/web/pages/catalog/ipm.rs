//! Pests, diseases and treatments of the catalogue: their searchable lists and their pages. A
//! pest's or disease's page names its host species and the treatments that target it; a
//! treatment's page gives its pre-harvest intervals per crop, each with the label it is read
//! from (product, authority or register, registration, the crop as the label names it), as
//! `ipm::model::crop_intervals` reads them for the harvest gate.

use std::collections::HashMap;

use maud::{Markup, html};
use salvo::prelude::*;
use serde_json::{Map, Value};

use super::{
    DISEASES_PART, PESTS_PART, Part, SPECIES_PART, TREATMENTS_PART, choice, crumbs, fact, key_of,
    linked, list_part, listed_by, local_name, open_record, text, texts, uuids, yes_no,
};
use crate::catalog::engine::service as engine;
use crate::catalog::ipm::model::{TREATMENT, applies_no_product, crop_intervals};
use crate::rules::karenz::CropInterval;
use crate::web::i18n::Lang;
use crate::web::pages::PageCtx;
use crate::web::pages::harvests::num;
use crate::web::pages::scope::GardenScope;

/// A pest's or disease's name in the page's language (its scientific name when it has none).
fn threat_name(lang: Lang, v: &Value) -> String {
    local_name(lang, v, "common_name_en", "common_name_de")
        .unwrap_or_else(|| text(v, "scientific_name").unwrap_or_default().to_owned())
}

fn threat_item(lang: Lang, here: &str, v: &Value, kind: Option<String>) -> Markup {
    html! {
        li { span.what {
            a href=(format!("{here}/{}", key_of(v))) { strong { (threat_name(lang, v)) } }
            br;
            span.meta {
                i { (text(v, "scientific_name").unwrap_or_default()) }
                @if let Some(k) = kind { " · " (k) }
            }
        } }
    }
}

fn pest_item(lang: Lang, here: &str, v: &Value) -> Markup {
    let kind = text(v, "pest_type").map(|t| choice(lang, "cat-pest-type", t));
    threat_item(lang, here, v, kind)
}

fn disease_item(lang: Lang, here: &str, v: &Value) -> Markup {
    let kind = text(v, "pathogen_type").map(|t| choice(lang, "cat-pathogen", t));
    threat_item(lang, here, v, kind)
}

fn treatment_item(lang: Lang, here: &str, v: &Value) -> Markup {
    html! {
        li { span.what {
            a href=(format!("{here}/{}", key_of(v))) { strong { (text(v, "name").unwrap_or_default()) } }
            br;
            span.meta {
                @if let Some(t) = text(v, "treatment_type") { (choice(lang, "cat-treatment-type", t)) }
                @if let Some(a) = text(v, "active_ingredient") { " · " (a) }
            }
        } }
    }
}

/// `GET /app/g/{slug}/catalog/pests`.
#[handler]
pub(super) async fn pests_page(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    list_part(req, depot, res, &PESTS_PART, pest_item).await;
}

/// `GET /app/g/{slug}/catalog/diseases`.
#[handler]
pub(super) async fn diseases_page(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    list_part(req, depot, res, &DISEASES_PART, disease_item).await;
}

/// `GET /app/g/{slug}/catalog/treatments`.
#[handler]
pub(super) async fn treatments_page(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    list_part(req, depot, res, &TREATMENTS_PART, treatment_item).await;
}

/// A temperature as the language writes it.
fn celsius(lang: Lang, v: &Value, field: &str) -> Option<String> {
    v.get(field)
        .and_then(Value::as_f64)
        .map(|t| format!("{} °C", num(lang, t)))
}

/// A pest's or disease's page: its facts, its hosts, the treatments that target it.
async fn threat_page(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
    part: &Part,
    treatment_filter: &'static str,
    facts: fn(Lang, &Value) -> Markup,
) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    let Some((scope, record)) = open_record(req, res, &ctx, part.spec).await else {
        return;
    };
    let hosts = texts(&record, "host_species_keys");
    let read = async {
        tokio::try_join!(
            listed_by(&ctx, &TREATMENT, treatment_filter, key_of(&record)),
            engine::names_by_key(&ctx.state, uuids(hosts.iter().copied())),
        )
    };
    let (treatments, names) = match read.await {
        Ok(found) => found,
        Err(e) => return ctx.fail(req, res, e),
    };
    let lang = ctx.lang;
    let title = threat_name(lang, &record);
    let here = format!("{}/treatments", super::base(&scope));
    let body = html! {
        (crumbs(lang, &scope, Some(part)))
        h1 { (title) }
        p.meta { i { (text(&record, "scientific_name").unwrap_or_default()) } }
        section.card aria-labelledby="sec-facts" {
            h2 id="sec-facts" { (lang.t("cat-facts")) }
            dl.facts { (facts(lang, &record)) }
            @if let Some(d) = text(&record, "description_en") { p { (d) } }
        }
        section.card aria-labelledby="sec-hosts" {
            h2 id="sec-hosts" { (lang.t("cat-hosts")) }
            @if hosts.is_empty() { p.empty { (lang.t("cat-none")) } }
            @else { (linked(&scope, &SPECIES_PART, &hosts, &names)) }
        }
        section.card aria-labelledby="sec-treatments" {
            h2 id="sec-treatments" { (lang.t("cat-treatments")) }
            @if treatments.is_empty() { p.empty { (lang.t("cat-none")) } }
            @else { ul.items { @for t in &treatments { (treatment_item(lang, &here, t)) } } }
        }
    };
    scope.page(req, res, lang, StatusCode::OK, title, body);
}

fn pest_facts(lang: Lang, v: &Value) -> Markup {
    let int = |f: &str| v.get(f).and_then(Value::as_i64);
    html! {
        (fact(lang, "cat-names-en", text(v, "common_name_en").map(str::to_owned)))
        (fact(lang, "cat-names-de", text(v, "common_name_de").map(str::to_owned)))
        (fact(lang, "cat-pest-type", text(v, "pest_type").map(|t| choice(lang, "cat-pest-type", t))))
        (fact(lang, "cat-lifecycle", int("lifecycle_days").map(|d| lang.t_with("cat-days", &[("days", d.into())]))))
        (fact(lang, "cat-temp-min", celsius(lang, v, "optimal_temp_min")))
        (fact(lang, "cat-temp-max", celsius(lang, v, "optimal_temp_max")))
        (fact(lang, "cat-detection", text(v, "detection_difficulty").map(|t| choice(lang, "cat-level", t))))
        (fact(lang, "cat-symptoms", text(v, "damage_symptoms_en").map(str::to_owned)))
    }
}

fn disease_facts(lang: Lang, v: &Value) -> Markup {
    let parts: Vec<String> = texts(v, "affected_plant_parts")
        .iter()
        .map(|p| choice(lang, "cat-part", p))
        .collect();
    html! {
        (fact(lang, "cat-names-en", text(v, "common_name_en").map(str::to_owned)))
        (fact(lang, "cat-names-de", text(v, "common_name_de").map(str::to_owned)))
        (fact(lang, "cat-pathogen", text(v, "pathogen_type").map(|t| choice(lang, "cat-pathogen", t))))
        (fact(lang, "cat-incubation", v.get("incubation_period_days").and_then(Value::as_i64).map(|d| lang.t_with("cat-days", &[("days", d.into())]))))
        (fact(lang, "cat-triggers", Some(texts(v, "environmental_triggers").join(", "))))
        (fact(lang, "cat-plant-parts", Some(parts.join(", "))))
        (fact(lang, "cat-symptoms", text(v, "symptoms_en").map(str::to_owned)))
    }
}

/// `GET /app/g/{slug}/catalog/pests/{key}`.
#[handler]
pub(super) async fn pest_page(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    threat_page(req, depot, res, &PESTS_PART, "pest", pest_facts).await;
}

/// `GET /app/g/{slug}/catalog/diseases/{key}`.
#[handler]
pub(super) async fn disease_page(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    threat_page(req, depot, res, &DISEASES_PART, "disease", disease_facts).await;
}

/// The crop an interval holds for: a species, a family, a crop group, or every crop the
/// label covers.
fn crop_of(
    lang: Lang,
    scope: &GardenScope<'_>,
    i: &CropInterval,
    names: &HashMap<uuid::Uuid, String>,
) -> Markup {
    let name = |k: &str| {
        uuid::Uuid::parse_str(k)
            .ok()
            .and_then(|id| names.get(&id).cloned())
            .unwrap_or_else(|| k.to_owned())
    };
    html! {
        @if let Some(k) = &i.species_key {
            a href=(format!("{}/species/{k}", super::base(scope))) { (name(k)) }
        } @else if let Some(k) = &i.family_key {
            (lang.t("cat-family")) " " (name(k))
        } @else if let Some(g) = &i.crop_group {
            (choice(lang, "cat-category", g))
        } @else {
            (lang.t("cat-every-crop"))
        }
    }
}

/// `GET /app/g/{slug}/catalog/treatments/{key}`: the treatment, its targets, and its
/// pre-harvest intervals per crop with each interval's label.
#[handler]
pub(super) async fn treatment_page(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    let Some((scope, record)) = open_record(req, res, &ctx, &TREATMENT).await else {
        return;
    };
    let doc: Map<String, Value> = record.as_object().cloned().unwrap_or_default();
    let intervals = crop_intervals(&doc);
    let pests = texts(&record, "target_pest_keys");
    let diseases = texts(&record, "target_disease_keys");
    let avoid = texts(&record, "contraindicated_with_keys");
    let crops = intervals
        .iter()
        .filter_map(|i| i.species_key.as_deref().or(i.family_key.as_deref()));
    let referenced = pests
        .iter()
        .chain(&diseases)
        .chain(&avoid)
        .copied()
        .chain(crops);
    let names = match engine::names_by_key(&ctx.state, uuids(referenced)).await {
        Ok(n) => n,
        Err(e) => return ctx.fail(req, res, e),
    };
    let lang = ctx.lang;
    let v = &record;
    let title = text(v, "name").unwrap_or_default().to_owned();
    let groups: Vec<String> = v
        .get("resistance_groups")
        .and_then(Value::as_array)
        .map(|l| {
            l.iter()
                .map(|g| {
                    format!(
                        "{} ({})",
                        text(g, "code").unwrap_or_default(),
                        text(g, "source").unwrap_or_default()
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let body = html! {
        (crumbs(lang, &scope, Some(&TREATMENTS_PART)))
        h1 { (title) }
        section.card aria-labelledby="sec-facts" {
            h2 id="sec-facts" { (lang.t("cat-facts")) }
            dl.facts {
                (fact(lang, "cat-treatment-type", text(v, "treatment_type").map(|t| choice(lang, "cat-treatment-type", t))))
                (fact(lang, "cat-active-ingredient", text(v, "active_ingredient").map(str::to_owned)))
                (fact(lang, "cat-authorisation", text(v, "authorisation_number").map(str::to_owned)))
                (fact(lang, "cat-application", text(v, "application_method").map(|t| choice(lang, "cat-application", t))))
                (fact(lang, "cat-dosage", text(v, "dosage_per_liter").map(str::to_owned)))
                (fact(lang, "cat-equipment", Some(texts(v, "protective_equipment").join(", "))))
                (fact(lang, "cat-resistance-groups", Some(groups.join(", "))))
                @if v.get("beneficial_organism").and_then(Value::as_bool) == Some(true) {
                    dt { (lang.t("cat-beneficial")) } dd { (yes_no(lang, Some(true))) }
                }
            }
            @if let Some(d) = text(v, "description_en") { p { (d) } }
        }
        (intervals_card(lang, &scope, &doc, &intervals, &names))
        section.card aria-labelledby="sec-targets" {
            h2 id="sec-targets" { (lang.t("cat-targets")) }
            @if pests.is_empty() && diseases.is_empty() { p.empty { (lang.t("cat-none")) } }
            @if !pests.is_empty() { h3 { (lang.t("cat-pests")) } (linked(&scope, &PESTS_PART, &pests, &names)) }
            @if !diseases.is_empty() { h3 { (lang.t("cat-diseases")) } (linked(&scope, &DISEASES_PART, &diseases, &names)) }
            @if !avoid.is_empty() {
                h3 { (lang.t("cat-contraindicated")) }
                (linked(&scope, &TREATMENTS_PART, &avoid, &names))
            }
        }
    };
    scope.page(req, res, lang, StatusCode::OK, title, body);
}

fn intervals_card(
    lang: Lang,
    scope: &GardenScope<'_>,
    doc: &Map<String, Value>,
    intervals: &[CropInterval],
    names: &HashMap<uuid::Uuid, String>,
) -> Markup {
    let longest = doc
        .get("safety_interval_days")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    html! {
        section.card aria-labelledby="sec-intervals" {
            h2 id="sec-intervals" { (lang.t("cat-intervals")) }
            @if intervals.is_empty() {
                p { (lang.t(if applies_no_product(doc) { "cat-intervals-none-needed" } else { "cat-intervals-none" })) }
            } @else {
                p { (lang.t_with("cat-intervals-longest", &[("days", longest.into())])) }
                table {
                    thead { tr {
                        th scope="col" { (lang.t("cat-crop")) }
                        th scope="col" { (lang.t("cat-interval-days")) }
                        th scope="col" { (lang.t("cat-source")) }
                    } }
                    tbody {
                        @for i in intervals {
                            @let s = &i.source;
                            tr {
                                th scope="row" { (crop_of(lang, scope, i, names)) }
                                td { (lang.t_with("cat-days", &[("days", i.days.into())])) }
                                td {
                                    (lang.t("cat-product")) ": " (s.product) br;
                                    (lang.t("cat-authority")) ": " (s.authority) br;
                                    @if let Some(r) = &s.registration { (lang.t("cat-registration")) ": " (r) br; }
                                    (lang.t("cat-label-crop")) ": " (s.label_crop)
                                }
                            }
                        }
                    }
                }
                p.meta { (lang.t("cat-intervals-note")) }
            }
        }
    }
}
