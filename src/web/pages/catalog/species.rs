//! The species of the catalogue: the searchable list, and a species' page with its names and
//! family, the four safety fields (`toxicity`, `toxicity_severity`, `allergen_info`,
//! `allows_harvest`: each said as "not recorded" when null, never read as safe), the phase
//! sequence in force with each phase's duration, its cultivars, its good and bad neighbours,
//! and the pests and diseases that attack it.

use maud::{Markup, html};
use salvo::prelude::*;
use serde_json::Value;

use super::{
    DISEASES_PART, PESTS_PART, SPECIES_PART, UNDER_MAX, base, choice, crumbs, fact, key_of,
    list_part, listed_by, local_name, open_record, text, texts, uuids, yes_no,
};
use crate::catalog::companions::service::{Companion, Recommendations, recommendations};
use crate::catalog::engine::service::{self as engine, ListParams};
use crate::catalog::ipm::model::{DISEASE, PEST};
use crate::catalog::species::model::{CULTIVAR, SPECIES};
use crate::catalog::species::service::{SpeciesSequence, phase_sequence_of};
use crate::error::{AppError, ErrorCode};
use crate::values::page::PageRequest;
use crate::web::i18n::Lang;
use crate::web::pages::PageCtx;
use crate::web::pages::harvests::num;
use crate::web::pages::scope::GardenScope;

/// A species' name in the page's language (its scientific name when it has none).
fn display_name(lang: Lang, v: &Value) -> String {
    local_name(lang, v, "common_names_en", "common_names_de")
        .unwrap_or_else(|| text(v, "scientific_name").unwrap_or_default().to_owned())
}

fn species_item(lang: Lang, here: &str, v: &Value) -> Markup {
    html! {
        li {
            span.what {
                a href=(format!("{here}/{}", key_of(v))) { strong { (display_name(lang, v)) } }
                br;
                span.meta {
                    i { (text(v, "scientific_name").unwrap_or_default()) }
                    @if let Some(c) = text(v, "plant_category") { " · " (choice(lang, "cat-category", c)) }
                }
            }
        }
    }
}

/// `GET /app/g/{slug}/catalog/species`: the species, `q` searching their names.
#[handler]
pub(super) async fn list_page(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    list_part(req, depot, res, &SPECIES_PART, species_item).await;
}

/// What a species' page shows besides the record.
struct Related {
    sequence: Option<SpeciesSequence>,
    cultivars: Vec<Value>,
    companions: Recommendations,
    pests: Vec<Value>,
    diseases: Vec<Value>,
    names: std::collections::HashMap<uuid::Uuid, String>,
}

async fn related(ctx: &PageCtx, record: &Value) -> Result<Related, AppError> {
    let state = &ctx.state;
    let key = key_of(record);
    let sequence = async {
        match phase_sequence_of(state, key).await {
            Ok(s) => Ok(Some(s)),
            // The selected sequence is not seeded: the page says there is none.
            Err(e) if e.code() == ErrorCode::EntityNotFound => Ok(None),
            Err(e) => Err(e),
        }
    };
    let under = PageRequest {
        skip: 0,
        limit: UNDER_MAX,
    };
    let none = ListParams::default();
    let (sequence, cultivars, companions, pests, diseases) = tokio::try_join!(
        sequence,
        engine::list_under(
            state,
            (&SPECIES, key),
            &CULTIVAR,
            "species_key",
            &none,
            under
        ),
        recommendations(state, key),
        listed_by(ctx, &PEST, "host", key),
        listed_by(ctx, &DISEASE, "host", key),
    )?;
    let neighbours = companions
        .compatible
        .iter()
        .chain(&companions.incompatible)
        .map(|c| c.species_key.as_str());
    let family = text(record, "family_key");
    let names = engine::names_by_key(state, uuids(neighbours.chain(family))).await?;
    Ok(Related {
        sequence,
        cultivars: cultivars.items,
        companions,
        pests,
        diseases,
        names,
    })
}

/// `GET /app/g/{slug}/catalog/species/{key}`.
#[handler]
pub(super) async fn species_page(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    let Some((scope, record)) = open_record(req, res, &ctx, &SPECIES).await else {
        return;
    };
    let data = match related(&ctx, &record).await {
        Ok(d) => d,
        Err(e) => return ctx.fail(req, res, e),
    };
    let lang = ctx.lang;
    let title = display_name(lang, &record);
    let body = html! {
        (crumbs(lang, &scope, Some(&SPECIES_PART)))
        h1 { (title) }
        p.meta { i { (text(&record, "scientific_name").unwrap_or_default()) } }
        (names_card(lang, &record, &data))
        (safety_card(lang, &record))
        (sequence_card(lang, data.sequence.as_ref()))
        (cultivars_card(lang, &data.cultivars))
        (companions_card(lang, &scope, &data))
        section.card aria-labelledby="sec-threats" {
            h2 id="sec-threats" { (lang.t("cat-threats")) }
            h3 { (lang.t("cat-pests")) }
            @if data.pests.is_empty() { p.empty { (lang.t("cat-none")) } }
            @else { (threat_list(lang, &scope, &PESTS_PART, &data.pests)) }
            h3 { (lang.t("cat-diseases")) }
            @if data.diseases.is_empty() { p.empty { (lang.t("cat-none")) } }
            @else { (threat_list(lang, &scope, &DISEASES_PART, &data.diseases)) }
        }
    };
    scope.page(req, res, lang, StatusCode::OK, title, body);
}

fn names_card(lang: Lang, v: &Value, data: &Related) -> Markup {
    let family = text(v, "family_key").map(|k| {
        uuid::Uuid::parse_str(k)
            .ok()
            .and_then(|id| data.names.get(&id).cloned())
            .unwrap_or_else(|| k.to_owned())
    });
    let joined = |f: &str| Some(texts(v, f).join(", "));
    let months = |f: &str| {
        let list: Vec<String> = v
            .get(f)
            .and_then(Value::as_array)
            .map(|l| {
                l.iter()
                    .filter_map(Value::as_i64)
                    .map(|m| m.to_string())
                    .collect()
            })
            .unwrap_or_default();
        Some(list.join(", "))
    };
    let vocab = |prefix: &str, f: &str| text(v, f).map(|x| choice(lang, prefix, x));
    html! {
        section.card aria-labelledby="sec-names" {
            h2 id="sec-names" { (lang.t("cat-names")) }
            dl.facts {
                (fact(lang, "cat-scientific-name", text(v, "scientific_name").map(str::to_owned)))
                (fact(lang, "cat-names-en", joined("common_names_en")))
                (fact(lang, "cat-names-de", joined("common_names_de")))
                (fact(lang, "cat-family", family))
                (fact(lang, "cat-genus", text(v, "genus").map(str::to_owned)))
                (fact(lang, "cat-category", vocab("cat-category", "plant_category")))
                (fact(lang, "cat-cycle", vocab("cat-cycle", "cycle_type")))
                (fact(lang, "cat-sowing-indoor", months("sowing_indoor_months")))
                (fact(lang, "cat-direct-sow", months("direct_sow_months")))
                (fact(lang, "cat-harvest-months", months("harvest_months")))
            }
            @if let Some(care) = local_name(lang, v, "care_en", "care_de") {
                h3 { (lang.t("cat-care")) }
                p { (care) }
            }
        }
    }
}

/// The four safety fields, each labelled; null is "not recorded", never "safe".
fn safety_card(lang: Lang, v: &Value) -> Markup {
    let toxicity = match v.get("toxicity").filter(|t| !t.is_null()) {
        None => lang.t("cat-not-recorded"),
        Some(t) => match t.get("is_toxic").and_then(Value::as_bool) {
            Some(true) => {
                let mut parts = vec![lang.t("cat-toxic")];
                let to: Vec<String> = texts(t, "toxic_to")
                    .iter()
                    .map(|x| choice(lang, "cat-toxic-to", x))
                    .collect();
                for (label, list) in [
                    ("cat-toxic-to", to),
                    ("cat-toxic-parts", own(texts(t, "toxic_parts"))),
                    ("cat-toxic-compounds", own(texts(t, "toxic_compounds"))),
                ] {
                    if !list.is_empty() {
                        parts.push(format!("{}: {}", lang.t(label), list.join(", ")));
                    }
                }
                parts.join(" · ")
            }
            Some(false) => lang.t("cat-not-toxic"),
            None => lang.t("cat-not-recorded"),
        },
    };
    let severity = text(v, "toxicity_severity").map_or_else(
        || lang.t("cat-not-recorded"),
        |s| choice(lang, "cat-severity", s),
    );
    let allergens = match v.get("allergen_info").filter(|a| !a.is_null()) {
        None => lang.t("cat-not-recorded"),
        Some(a) => format!(
            "{}: {} · {}: {}",
            lang.t("cat-contact-allergen"),
            yes_no(lang, a.get("contact_allergen").and_then(Value::as_bool)),
            lang.t("cat-pollen-allergen"),
            yes_no(lang, a.get("pollen_allergen").and_then(Value::as_bool)),
        ),
    };
    let harvest = yes_no(lang, v.get("allows_harvest").and_then(Value::as_bool));
    html! {
        section.card aria-labelledby="sec-safety" {
            h2 id="sec-safety" { (lang.t("cat-safety")) }
            dl.facts {
                dt { (lang.t("cat-toxicity")) } dd { (toxicity) }
                dt { (lang.t("cat-toxicity-severity")) } dd { (severity) }
                dt { (lang.t("cat-allergen-info")) } dd { (allergens) }
                dt { (lang.t("cat-allows-harvest")) } dd { (harvest) }
            }
            p.meta { (lang.t("cat-safety-note")) }
        }
    }
}

fn own(list: Vec<&str>) -> Vec<String> {
    list.into_iter().map(str::to_owned).collect()
}

/// A phase's name in the page's language.
fn phase_name(lang: Lang, en: Option<&String>, de: Option<&String>, raw: &str) -> String {
    let name = match lang {
        Lang::De => de.or(en),
        Lang::En => en,
    };
    name.cloned().unwrap_or_else(|| raw.replace('_', " "))
}

fn sequence_card(lang: Lang, seq: Option<&SpeciesSequence>) -> Markup {
    html! {
        section.card aria-labelledby="sec-sequence" {
            h2 id="sec-sequence" { (lang.t("cat-sequence")) }
            @if let Some(s) = seq {
                @let q = &s.sequence;
                p {
                    strong { (phase_name(lang, Some(&q.display_name_en), q.display_name_de.as_ref(), &q.name)) }
                    " · " (lang.t_with("cat-days-total", &[("days", q.total_duration_days.into())]))
                    @if q.is_repeating { " · " (lang.t("cat-repeating")) }
                }
                table {
                    thead { tr {
                        th scope="col" { "#" }
                        th scope="col" { (lang.t("cat-phase")) }
                        th scope="col" { (lang.t("cat-duration")) }
                        th scope="col" { (lang.t("cat-allows-harvest")) }
                    } }
                    tbody {
                        @for e in &q.entries {
                            tr {
                                td { (e.order + 1) }
                                th scope="row" { (phase_name(lang, e.display_name_en.as_ref(), e.display_name_de.as_ref(), &e.phase_name)) }
                                td { (lang.t_with("cat-days", &[("days", e.effective_duration_days.into())])) }
                                td { (yes_no(lang, Some(e.allows_harvest))) }
                            }
                        }
                    }
                }
            } @else {
                p.empty { (lang.t("cat-no-sequence")) }
            }
        }
    }
}

fn cultivars_card(lang: Lang, cultivars: &[Value]) -> Markup {
    html! {
        section.card aria-labelledby="sec-cultivars" {
            h2 id="sec-cultivars" { (lang.t("cat-cultivars")) }
            @if cultivars.is_empty() {
                p.empty { (lang.t("cat-none")) }
            } @else {
                ul.items {
                    @for c in cultivars {
                        li { span.what {
                            strong { (text(c, "name").unwrap_or_default()) }
                            br;
                            span.meta {
                                @if let Some(b) = text(c, "breeder") { (b) " · " }
                                @if let Some(t) = text(c, "seed_type") { (choice(lang, "cat-seed", t)) " · " }
                                @if let Some(d) = c.get("days_to_maturity").and_then(Value::as_i64) {
                                    (lang.t_with("cat-maturity", &[("days", d.into())]))
                                }
                            }
                            @if let Some(d) = text(c, "description_en") { br; span.meta { (d) } }
                        } }
                    }
                }
            }
        }
    }
}

fn companion_list(
    lang: Lang,
    scope: &GardenScope<'_>,
    list: &[Companion],
    names: &std::collections::HashMap<uuid::Uuid, String>,
) -> Markup {
    let root = base(scope);
    html! {
        @if list.is_empty() {
            p.empty { (lang.t("cat-none")) }
        } @else {
            ul {
                @for c in list {
                    @let name = uuid::Uuid::parse_str(&c.species_key).ok().and_then(|id| names.get(&id).cloned());
                    li {
                        a href=(format!("{root}/species/{}", c.species_key)) { (name.unwrap_or_else(|| c.species_key.clone())) }
                        @if let Some(s) = c.score { " · " (lang.t("cat-score")) " " (num(lang, s)) }
                        @if let Some(r) = &c.reason { " · " (r) }
                    }
                }
            }
        }
    }
}

fn companions_card(lang: Lang, scope: &GardenScope<'_>, data: &Related) -> Markup {
    html! {
        section.card aria-labelledby="sec-companions" {
            h2 id="sec-companions" { (lang.t("cat-companions")) }
            h3 { (lang.t("cat-companions-good")) }
            (companion_list(lang, scope, &data.companions.compatible, &data.names))
            h3 { (lang.t("cat-companions-bad")) }
            (companion_list(lang, scope, &data.companions.incompatible, &data.names))
        }
    }
}

fn threat_list(lang: Lang, scope: &GardenScope<'_>, part: &super::Part, list: &[Value]) -> Markup {
    let root = format!("{}/{}", base(scope), part.path);
    html! {
        ul {
            @for v in list {
                li {
                    a href=(format!("{root}/{}", key_of(v))) {
                        (local_name(lang, v, "common_name_en", "common_name_de")
                            .unwrap_or_else(|| text(v, "scientific_name").unwrap_or_default().to_owned()))
                    }
                    " · " i { (text(v, "scientific_name").unwrap_or_default()) }
                }
            }
        }
    }
}
