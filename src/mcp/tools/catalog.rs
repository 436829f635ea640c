//! Catalogue tools: species and cultivars, pests, diseases and treatments, hardiness zones,
//! glossary, starter kits and overwintering profiles. Each calls the catalogue service the REST
//! route of the same data calls; keys are the REST keys.

use std::cmp::Ordering;

use serde_json::{Map, Value, json};

use super::view::{
    Names, compact, counted, keys_in, page, paged, record, species_label, species_summary, text,
};
use crate::catalog::companions::service as companions;
use crate::catalog::engine::service::{self, ListParams};
use crate::catalog::glossary::model::{CATEGORIES as GLOSSARY_CATEGORIES, TERM};
use crate::catalog::ipm::model::{DISEASE, PEST, TREATMENT};
use crate::catalog::kits::model::{DIFFICULTY, KIT};
use crate::catalog::overwintering::model::PROFILE;
use crate::catalog::species::model::{CULTIVAR, SPECIES};
use crate::catalog::zones::service as zones;
use crate::http::pagination::PageRequest;
use crate::mcp::args::{self, Arg, ArgKind, Args, KEY};
use crate::mcp::envelope::{ToolError, ToolOutput};
use crate::mcp::registry::{Ctx, Permission, Scope, Tool};
use crate::tool_handler;

/// Catalogue name searches: the REST `q` bound.
const SEARCH: ArgKind = ArgKind::Text { min: 1, max: 100 };

/// Every record of a short list (cultivars of a species, treatments of a pest) in one page.
const ALL: PageRequest = PageRequest {
    skip: 0,
    limit: 200,
};

fn search(args: &Args, name: &str) -> ListParams {
    ListParams {
        q: args.text(name).map(str::to_owned),
        filters: Vec::new(),
    }
}

// ---------------------------------------------------------------------------------------------
// Species and cultivars

pub static LIST_SPECIES: Tool = Tool {
    name: "list_species",
    title: "List species",
    description: "One page of the shared species catalogue in scientific-name order: species_key, \
                  scientific and common names (English, German), plant category and cycle type. \
                  Use it to find a species_key for get_species_info, get_species_phase_sequence \
                  or get_species_lifecycle; page with offset and limit (total says how many exist). \
                  search_plant_knowledge finds species by words in their profile and care texts.",
    permission: Permission::Read,
    scope: Scope::Global,
    args: &[args::offset(), args::limit(25, 100)],
    rules: &[],
    run: tool_handler!(list_species),
};

async fn list_species(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let page = page(&args);
    let listed = service::list(ctx.state, &SPECIES, &ListParams::default(), None, page).await?;
    let items: Vec<Value> = listed.items.iter().map(species_summary).collect();
    let summary = format!(
        "{} (offset {}).",
        counted(items.len(), listed.total, "species in the catalogue"),
        page.skip
    );
    Ok(ToolOutput::new(summary, paged(items, listed.total, page))
        .link_api("/api/v1/species")
        .link_ui("/species"))
}

pub static GET_SPECIES_INFO: Tool = Tool {
    name: "get_species_info",
    title: "Species profile",
    description: "Everything the catalogue records about one species: names, family, category, \
                  growth habit, lifecycle fields, sowing/bloom/harvest months, hardiness zones, \
                  frost sensitivity, nutrient demand, indoor/container/balcony suitability, size, \
                  light and watering, care texts, companion plants (good and bad neighbours) and, \
                  unless include_cultivars is false, its cultivars. Fields with nothing recorded \
                  are left out, except the safety fields toxicity, toxicity_severity, \
                  allergen_info and allows_harvest: they are always present and null means \
                  UNKNOWN (never read null as safe or as harvest allowed).",
    permission: Permission::Read,
    scope: Scope::Global,
    args: &[
        Arg::required(
            "species_key",
            KEY,
            "Species key (from list_species or search_plant_knowledge).",
        ),
        Arg::optional(
            "include_cultivars",
            ArgKind::Bool { default: true },
            "Include the species' cultivars.",
        ),
    ],
    rules: &[],
    run: tool_handler!(get_species_info),
};

/// The four fields a reader must see even when nothing is recorded.
const SAFETY: &[&str] = &[
    "toxicity",
    "toxicity_severity",
    "allergen_info",
    "allows_harvest",
];

fn toxicity_phrase(sp: &Value) -> String {
    match sp.get("toxicity") {
        Some(t) if t.get("is_toxic") == Some(&Value::Bool(true)) => {
            let to: Vec<&str> = t
                .get("toxic_to")
                .and_then(Value::as_array)
                .map(|l| l.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let mut s = if to.is_empty() {
                "toxic".to_owned()
            } else {
                format!("toxic to {}", to.join(", "))
            };
            if let Some(sev) = text(sp, "toxicity_severity") {
                s.push_str(&format!(" (severity {sev})"));
            }
            s
        }
        Some(t) if t.get("is_toxic") == Some(&Value::Bool(false)) => {
            "recorded as not toxic".to_owned()
        }
        _ => "toxicity unknown".to_owned(),
    }
}

fn harvest_phrase(sp: &Value) -> &'static str {
    match sp.get("allows_harvest").and_then(Value::as_bool) {
        Some(true) => "harvest allowed",
        Some(false) => "not for harvest",
        None => "whether it may be harvested is unknown",
    }
}

async fn get_species_info(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let key = args.key("species_key");
    let species = service::get(ctx.state, &SPECIES, key).await?;
    let companions = companions::recommendations(ctx.state, key).await?;
    let partners = companions
        .compatible
        .iter()
        .chain(&companions.incompatible)
        .filter_map(|c| uuid::Uuid::parse_str(&c.species_key).ok());
    let names = Names::of(
        ctx.state,
        keys_in(&species, "family_key").into_iter().chain(partners),
    )
    .await?;
    let neighbours = |list: &[companions::Companion]| -> Vec<Value> {
        list.iter()
            .map(|c| {
                compact(
                    json!({
                        "species_key": c.species_key,
                        "scientific_name": names.get(&c.species_key),
                        "score": c.score,
                        "reason": c.reason,
                    }),
                    &[],
                )
            })
            .collect()
    };
    let mut data = record(species.clone(), "species_key");
    if let Some(family) = text(&species, "family_key").and_then(|k| names.get(k)) {
        data.insert("family_name".into(), json!(family));
    }
    data.insert(
        "companions".into(),
        json!({
            "compatible": neighbours(&companions.compatible),
            "incompatible": neighbours(&companions.incompatible),
        }),
    );
    let mut data = compact(Value::Object(data), SAFETY);
    let mut cultivar_count = None;
    if args.flag("include_cultivars") {
        let listed = service::list_under(
            ctx.state,
            (&SPECIES, key),
            &CULTIVAR,
            "species_key",
            &ListParams::default(),
            ALL,
        )
        .await?;
        cultivar_count = Some(listed.total);
        let cultivars: Vec<Value> = listed
            .items
            .into_iter()
            .map(|c| cultivar_view(c, false))
            .collect();
        // Asked for: an empty list says there are none.
        data["cultivars"] = Value::Array(cultivars);
    }
    let mut summary = format!(
        "{}: {}; {}",
        species_label(&species),
        toxicity_phrase(&species),
        harvest_phrase(&species)
    );
    if let Some(n) = cultivar_count {
        summary.push_str(&format!("; {n} cultivar(s)"));
    }
    summary.push('.');
    Ok(ToolOutput::new(summary, data)
        .link_api(format!("/api/v1/species/{key}"))
        .link_ui(format!("/species/{key}")))
}

fn cultivar_view(c: Value, with_species: bool) -> Value {
    let mut m = record(c, "cultivar_key");
    if !with_species {
        m.remove("species_key");
    }
    compact(Value::Object(m), &[])
}

pub static LIST_CULTIVARS: Tool = Tool {
    name: "list_cultivars",
    title: "Cultivars of a species",
    description: "The cultivars (varieties) of one species: cultivar_key, name, breeder, traits \
                  (e.g. disease_resistant, compact, f1), seed type and days to maturity.",
    permission: Permission::Read,
    scope: Scope::Global,
    args: &[Arg::required("species_key", KEY, "Species key.")],
    rules: &[],
    run: tool_handler!(list_cultivars),
};

async fn list_cultivars(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let key = args.key("species_key");
    let listed = service::list_under(
        ctx.state,
        (&SPECIES, key),
        &CULTIVAR,
        "species_key",
        &ListParams::default(),
        ALL,
    )
    .await?;
    let items: Vec<Value> = listed
        .items
        .into_iter()
        .map(|c| cultivar_view(c, false))
        .collect();
    let summary = format!(
        "{}.",
        counted(items.len(), listed.total, "cultivar(s) of this species")
    );
    Ok(ToolOutput::new(
        summary,
        json!({"species_key": key, "items": items, "count": items.len(), "total": listed.total}),
    )
    .link_api(format!("/api/v1/species/{key}/cultivars"))
    .link_ui(format!("/species/{key}")))
}

pub static GET_CULTIVAR: Tool = Tool {
    name: "get_cultivar",
    title: "Cultivar",
    description: "One cultivar with its species (key and scientific name), breeder, traits, seed \
                  type, days to maturity and description.",
    permission: Permission::Read,
    scope: Scope::Global,
    args: &[Arg::required(
        "cultivar_key",
        KEY,
        "Cultivar key (from list_cultivars).",
    )],
    rules: &[],
    run: tool_handler!(get_cultivar),
};

async fn get_cultivar(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let key = args.key("cultivar_key");
    let cultivar = service::get(ctx.state, &CULTIVAR, key).await?;
    let names = Names::of(ctx.state, keys_in(&cultivar, "species_key")).await?;
    let species_key = text(&cultivar, "species_key")
        .unwrap_or_default()
        .to_owned();
    let species_name = names.get(&species_key).map(str::to_owned);
    let mut data = record(cultivar.clone(), "cultivar_key");
    data.insert("species_scientific_name".into(), json!(species_name));
    let summary = format!(
        "Cultivar {} of {}.",
        text(&cultivar, "name").unwrap_or_default(),
        species_name.as_deref().unwrap_or("an unnamed species")
    );
    Ok(ToolOutput::new(summary, compact(Value::Object(data), &[]))
        .link_api(format!("/api/v1/cultivars/{key}"))
        .link_ui(format!("/species/{species_key}")))
}

// ---------------------------------------------------------------------------------------------
// Pests, diseases, treatments

const fn query_arg(what: &'static str) -> Arg {
    Arg::optional("query", SEARCH, what)
}

pub static LIST_PESTS: Tool = Tool {
    name: "list_pests",
    title: "List pests",
    description: "Pests in the shared catalogue (insects, mites, molluscs, …), optionally only \
                  those whose scientific, English or German name contains `query`: pest_key, \
                  names, pest type and how hard they are to spot. Use get_pest for symptoms and \
                  treatments.",
    permission: Permission::Read,
    scope: Scope::Global,
    args: &[
        query_arg("Part of a scientific, English or German name (case-insensitive)."),
        args::limit(50, 200),
    ],
    rules: &[],
    run: tool_handler!(list_pests),
};

async fn list_pests(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let page = PageRequest {
        skip: 0,
        limit: args.limit(),
    };
    let listed = service::list(ctx.state, &PEST, &search(&args, "query"), None, page).await?;
    let items: Vec<Value> = listed
        .items
        .iter()
        .map(|p| {
            compact(
                json!({
                    "pest_key": p.get("key"),
                    "scientific_name": text(p, "scientific_name"),
                    "common_name_en": text(p, "common_name_en"),
                    "common_name_de": text(p, "common_name_de"),
                    "pest_type": text(p, "pest_type"),
                    "detection_difficulty": text(p, "detection_difficulty"),
                }),
                &[],
            )
        })
        .collect();
    let summary = format!("{}.", counted(items.len(), listed.total, "pest(s) match"));
    Ok(ToolOutput::new(
        summary,
        json!({"items": items, "count": items.len(), "total": listed.total}),
    )
    .link_api("/api/v1/ipm/pests"))
}

/// Gentlest first: cultural, mechanical, biological, chemical; then the shorter pre-harvest
/// interval; then the name.
fn gentleness(t: &Value) -> (u8, i64, String) {
    let rank = match text(t, "treatment_type") {
        Some("cultural") => 0,
        Some("mechanical") => 1,
        Some("biological") => 2,
        _ => 3,
    };
    (
        rank,
        t.get("safety_interval_days")
            .and_then(Value::as_i64)
            .unwrap_or(0),
        text(t, "name").unwrap_or_default().to_lowercase(),
    )
}

fn treatment_item(t: &Value) -> Value {
    compact(
        json!({
            "treatment_key": t.get("key"),
            "name": text(t, "name"),
            "treatment_type": text(t, "treatment_type"),
            "application_method": text(t, "application_method"),
            "active_ingredient": text(t, "active_ingredient"),
            "safety_interval_days": t.get("safety_interval_days"),
        }),
        &["safety_interval_days"],
    )
}

/// The treatments that target a pest or disease (`filter` = `pest` or `disease`), gentlest
/// first.
async fn treatments_for(
    ctx: &Ctx<'_>,
    filter: &'static str,
    key: &str,
) -> Result<Vec<Value>, ToolError> {
    let params = ListParams {
        q: None,
        filters: vec![(filter, key.to_owned())],
    };
    let mut listed = service::list(ctx.state, &TREATMENT, &params, None, ALL)
        .await?
        .items;
    listed.sort_by_key(gentleness);
    Ok(listed.iter().map(treatment_item).collect())
}

/// A pest or disease record with its hosts named and its treatments.
async fn ipm_detail(
    ctx: &Ctx<'_>,
    record_value: Value,
    key_name: &str,
    filter: &'static str,
) -> Result<(Value, usize), ToolError> {
    let key = text(&record_value, "key").unwrap_or_default().to_owned();
    let treatments = treatments_for(ctx, filter, &key).await?;
    let names = Names::of(ctx.state, keys_in(&record_value, "host_species_keys")).await?;
    let hosts = names.refs(
        &record_value,
        "host_species_keys",
        "species_key",
        "scientific_name",
    );
    let mut data = record(record_value, key_name);
    data.remove("host_species_keys");
    data.insert("host_species".into(), hosts);
    let n = treatments.len();
    data.insert("treatments".into(), Value::Array(treatments));
    Ok((compact(Value::Object(data), &[]), n))
}

fn ipm_label(v: &Value) -> String {
    let scientific = text(v, "scientific_name").unwrap_or_default();
    match text(v, "common_name_en") {
        Some(common) => format!("{common} ({scientific})"),
        None => scientific.to_owned(),
    }
}

pub static GET_PEST: Tool = Tool {
    name: "get_pest",
    title: "Pest",
    description: "One pest: names, type, life cycle in days, optimal temperature range, how hard \
                  it is to detect, damage symptoms, description, host species, and the \
                  treatments that target it, gentlest first (cultural, mechanical, biological, \
                  then chemical) with each one's pre-harvest interval safety_interval_days. \
                  Details of a treatment: get_treatment.",
    permission: Permission::Read,
    scope: Scope::Global,
    args: &[Arg::required(
        "pest_key",
        KEY,
        "Pest key (from list_pests).",
    )],
    rules: &[],
    run: tool_handler!(get_pest),
};

async fn get_pest(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let key = args.key("pest_key");
    let pest = service::get(ctx.state, &PEST, key).await?;
    let label = ipm_label(&pest);
    let (data, n) = ipm_detail(ctx, pest, "pest_key", "pest").await?;
    Ok(
        ToolOutput::new(format!("Pest {label}: {n} treatment(s) known."), data)
            .link_api(format!("/api/v1/ipm/pests/{key}")),
    )
}

pub static LIST_DISEASES: Tool = Tool {
    name: "list_diseases",
    title: "List diseases",
    description: "Plant diseases and disorders in the shared catalogue, optionally only those \
                  whose scientific, English or German name contains `query`: disease_key, names, \
                  pathogen type (fungal, bacterial, viral, …) and affected plant parts. Use \
                  get_disease for symptoms, triggers and treatments.",
    permission: Permission::Read,
    scope: Scope::Global,
    args: &[
        query_arg("Part of a scientific, English or German name (case-insensitive)."),
        args::limit(50, 200),
    ],
    rules: &[],
    run: tool_handler!(list_diseases),
};

async fn list_diseases(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let page = PageRequest {
        skip: 0,
        limit: args.limit(),
    };
    let listed = service::list(ctx.state, &DISEASE, &search(&args, "query"), None, page).await?;
    let items: Vec<Value> = listed
        .items
        .iter()
        .map(|d| {
            compact(
                json!({
                    "disease_key": d.get("key"),
                    "scientific_name": text(d, "scientific_name"),
                    "common_name_en": text(d, "common_name_en"),
                    "common_name_de": text(d, "common_name_de"),
                    "pathogen_type": text(d, "pathogen_type"),
                    "affected_plant_parts": d.get("affected_plant_parts"),
                }),
                &[],
            )
        })
        .collect();
    let summary = format!(
        "{}.",
        counted(items.len(), listed.total, "disease(s) match")
    );
    Ok(ToolOutput::new(
        summary,
        json!({"items": items, "count": items.len(), "total": listed.total}),
    )
    .link_api("/api/v1/ipm/diseases"))
}

pub static GET_DISEASE: Tool = Tool {
    name: "get_disease",
    title: "Disease",
    description: "One disease: names, pathogen type, incubation period, environmental triggers, \
                  affected plant parts, symptoms, description, host species, and the treatments \
                  that target it, gentlest first, each with its pre-harvest interval \
                  safety_interval_days.",
    permission: Permission::Read,
    scope: Scope::Global,
    args: &[Arg::required(
        "disease_key",
        KEY,
        "Disease key (from list_diseases).",
    )],
    rules: &[],
    run: tool_handler!(get_disease),
};

async fn get_disease(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let key = args.key("disease_key");
    let disease = service::get(ctx.state, &DISEASE, key).await?;
    let label = ipm_label(&disease);
    let (data, n) = ipm_detail(ctx, disease, "disease_key", "disease").await?;
    Ok(
        ToolOutput::new(format!("Disease {label}: {n} treatment(s) known."), data)
            .link_api(format!("/api/v1/ipm/diseases/{key}")),
    )
}

pub static GET_TREATMENT: Tool = Tool {
    name: "get_treatment",
    title: "Treatment",
    description: "One treatment: type (cultural, mechanical, biological, chemical), active \
                  ingredient, application method, dosage, the pre-harvest interval \
                  safety_interval_days (days to wait between application and harvest; the \
                  longest listed), safety_intervals per crop (species_key, family_key or \
                  crop_group or none for every crop on the label, days, and the label: product, \
                  authority, registration, label_crop; a crop no label names is refused by \
                  apply_treatment), resistance_groups (IRAC/FRAC/HRAC \
                  code and source), \
                  protective equipment, how to apply, the pests and diseases it targets and the \
                  treatments it must not be combined with.",
    permission: Permission::Read,
    scope: Scope::Global,
    args: &[Arg::required(
        "treatment_key",
        KEY,
        "Treatment key (from get_pest or get_disease).",
    )],
    rules: &[],
    run: tool_handler!(get_treatment),
};

async fn get_treatment(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let key = args.key("treatment_key");
    let t = service::get(ctx.state, &TREATMENT, key).await?;
    let fields = [
        "target_pest_keys",
        "target_disease_keys",
        "contraindicated_with_keys",
    ];
    let names = Names::of(ctx.state, fields.iter().flat_map(|f| keys_in(&t, f))).await?;
    let mut data = record(t.clone(), "treatment_key");
    for f in fields {
        data.remove(f);
    }
    if let Some(how) = data.remove("description_en") {
        data.insert("how_to_apply".into(), how);
    }
    data.insert(
        "target_pests".into(),
        names.refs(&t, "target_pest_keys", "pest_key", "name"),
    );
    data.insert(
        "target_diseases".into(),
        names.refs(&t, "target_disease_keys", "disease_key", "name"),
    );
    data.insert(
        "contraindicated_with".into(),
        names.refs(&t, "contraindicated_with_keys", "treatment_key", "name"),
    );
    let days = t
        .get("safety_interval_days")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let listed = t
        .get("safety_intervals")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    let (per_crop, labelled) = (listed > 1, listed > 0);
    let wait = if days > 0 && per_crop {
        format!(
            "wait up to {days} day(s) between application and harvest; the interval depends on \
             the crop (per crop in safety_intervals, each with its label)"
        )
    } else if days > 0 {
        format!("wait {days} day(s) between application and harvest (label in safety_intervals)")
    } else if !labelled
        && !t
            .as_object()
            .is_some_and(crate::catalog::ipm::model::applies_no_product)
    {
        "no label interval is recorded, so it is refused on every crop".to_owned()
    } else {
        "no waiting period before harvest".to_owned()
    };
    let summary = format!(
        "{} ({}): {wait}.",
        text(&t, "name").unwrap_or_default(),
        text(&t, "treatment_type").unwrap_or("treatment")
    );
    Ok(ToolOutput::new(
        summary,
        compact(Value::Object(data), &["safety_interval_days"]),
    )
    .link_api(format!("/api/v1/ipm/treatments/{key}")))
}

// ---------------------------------------------------------------------------------------------
// Zones, glossary, kits, overwintering

pub static LIST_HARDINESS_ZONES: Tool = Tool {
    name: "list_hardiness_zones",
    title: "Hardiness zones",
    description: "The 26 USDA hardiness zones 1a–13b, coldest first: the band of the annual \
                  extreme minimum temperature in °C and °F, and where curated, a description, \
                  example regions and typical last/first frost dates (MM-DD). Compare with a \
                  species' hardiness_zone_min/max from get_species_info.",
    permission: Permission::Read,
    scope: Scope::Global,
    args: &[],
    rules: &[],
    run: tool_handler!(list_hardiness_zones),
};

async fn list_hardiness_zones(ctx: &Ctx<'_>, _args: Args) -> Result<ToolOutput, ToolError> {
    let all = zones::zones(ctx.state).await?;
    let items: Vec<Value> = all
        .iter()
        .map(|z| compact(serde_json::to_value(z).unwrap_or(Value::Null), &[]))
        .collect();
    let summary = match (all.first(), all.last()) {
        (Some(a), Some(b)) => format!(
            "{} hardiness zones from {} ({} to {} °C) to {} ({} to {} °C).",
            all.len(),
            a.zone,
            a.min_temp_c,
            a.max_temp_c,
            b.zone,
            b.min_temp_c,
            b.max_temp_c
        ),
        _ => "No hardiness zones.".to_owned(),
    };
    Ok(
        ToolOutput::new(summary, json!({"items": items, "total": items.len()}))
            .link_api("/api/v1/hardiness-zones/"),
    )
}

pub static SEARCH_GLOSSARY: Tool = Tool {
    name: "search_glossary",
    title: "Search the glossary",
    description: "Gardening and growing terms (EC, VPD, hardening off, …) with their definitions \
                  in German (default) or English. `query` matches the term, its aliases or its \
                  slug in either language; `category` narrows. Each item says in which language \
                  its definition is given (English when no German text exists).",
    permission: Permission::Read,
    scope: Scope::Global,
    args: &[
        query_arg("Part of a term or alias, German or English (case-insensitive)."),
        Arg::optional(
            "category",
            ArgKind::Choice {
                values: GLOSSARY_CATEGORIES,
                default: None,
            },
            "Only terms of this category.",
        ),
        Arg::optional(
            "language",
            ArgKind::Choice {
                values: &["de", "en"],
                default: Some("de"),
            },
            "Language of the terms and definitions returned.",
        ),
        args::limit(50, 200),
    ],
    rules: &[],
    run: tool_handler!(search_glossary),
};

async fn search_glossary(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let mut params = search(&args, "query");
    if let Some(category) = args.text("category") {
        params.filters.push(("category", category.to_owned()));
    }
    let page = PageRequest {
        skip: 0,
        limit: args.limit(),
    };
    let german = args.text("language") == Some("de");
    let listed = service::list(ctx.state, &TERM, &params, None, page).await?;
    let items: Vec<Value> = listed
        .items
        .iter()
        .map(|t| {
            let pick = |de: &str, en: &str| -> (Option<Value>, &'static str) {
                match (german, t.get(de).filter(|v| !v.is_null()), t.get(en)) {
                    (true, Some(v), _) => (Some(v.clone()), "de"),
                    (_, _, v) => (v.cloned(), "en"),
                }
            };
            let (term, _) = pick("label_de", "label_en");
            let (aliases, _) = pick("aliases_de", "aliases_en");
            let (definition, language) = pick("definition_de", "definition_en");
            compact(
                json!({
                    "term_key": t.get("key"),
                    "slug": text(t, "slug"),
                    "term": term,
                    "aliases": aliases,
                    "category": text(t, "category"),
                    "definition": definition,
                    "language": language,
                    "related": t.get("related"),
                }),
                &[],
            )
        })
        .collect();
    let summary = match items.first() {
        None => "No glossary term matches.".to_owned(),
        Some(t) => format!(
            "{} (first: {}).",
            counted(items.len(), listed.total, "glossary term(s) match"),
            text(t, "term").unwrap_or_default()
        ),
    };
    Ok(ToolOutput::new(
        summary,
        json!({"items": items, "count": items.len(), "total": listed.total}),
    )
    .link_api("/api/v1/glossary/"))
}

pub static LIST_STARTER_KITS: Tool = Tool {
    name: "list_starter_kits",
    title: "Starter kits",
    description: "Curated starter kits for a garden (windowsill herbs, balcony tomatoes, grow \
                  tent, …): difficulty, site type, suggested plant count, whether a species in it \
                  is toxic to pets or children, and the species it contains (keys and scientific \
                  names). Optional `difficulty` narrows. The kits are the shared catalogue; the \
                  call is bound to one of your gardens (`tenant`).",
    permission: Permission::Read,
    scope: Scope::Tenant,
    args: &[Arg::optional(
        "difficulty",
        ArgKind::Choice {
            values: DIFFICULTY,
            default: None,
        },
        "Only kits of this difficulty.",
    )],
    rules: &[],
    run: tool_handler!(list_starter_kits),
};

fn sort_order(kit: &Value) -> i64 {
    kit.get("sort_order")
        .and_then(Value::as_i64)
        .unwrap_or(i64::MAX)
}

async fn list_starter_kits(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let mut params = ListParams::default();
    if let Some(d) = args.text("difficulty") {
        params.filters.push(("difficulty", d.to_owned()));
    }
    let mut kits = service::list(ctx.state, &KIT, &params, None, ALL).await?;
    kits.items
        .sort_by(|a, b| match sort_order(a).cmp(&sort_order(b)) {
            Ordering::Equal => text(a, "slug").cmp(&text(b, "slug")),
            other => other,
        });
    let names = Names::of(
        ctx.state,
        kits.items.iter().flat_map(|k| keys_in(k, "species_keys")),
    )
    .await?;
    let items: Vec<Value> = kits
        .items
        .iter()
        .map(|k| {
            let species = names.refs(k, "species_keys", "species_key", "scientific_name");
            let mut m = record(k.clone(), "kit_key");
            m.remove("species_keys");
            m.remove("sort_order");
            m.insert("species".into(), species);
            compact(Value::Object(m), &[])
        })
        .collect();
    let garden = ctx
        .tenant
        .as_ref()
        .map(|t| t.record.slug.as_str().to_owned())
        .unwrap_or_default();
    let summary = format!(
        "{} for garden {garden}.",
        counted(items.len(), kits.total, "starter kit(s)")
    );
    Ok(ToolOutput::new(
        summary,
        json!({"items": items, "count": items.len(), "total": kits.total}),
    )
    .link_api("/api/v1/starter-kits"))
}

pub static LIST_OVERWINTERING_PROFILES: Tool = Tool {
    name: "list_overwintering_profiles",
    title: "Overwintering profiles",
    description: "How species get through the winter, one profile per species: hardiness rating \
                  (frost_free, hardy, needs_protection, dig_and_store), the winter action and its \
                  month (move indoors, mulch, fleece, dig and store), the spring action and \
                  month, winter quarter temperature range, light and watering, and notes. The \
                  profiles are the shared catalogue; the call is bound to one of your gardens \
                  (`tenant`).",
    permission: Permission::Read,
    scope: Scope::Tenant,
    args: &[args::offset(), args::limit(50, 200)],
    rules: &[],
    run: tool_handler!(list_overwintering_profiles),
};

async fn list_overwintering_profiles(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let page = page(&args);
    let listed = service::list(ctx.state, &PROFILE, &ListParams::default(), None, page).await?;
    let names = Names::of(
        ctx.state,
        listed.items.iter().flat_map(|p| keys_in(p, "species_key")),
    )
    .await?;
    let items: Vec<Value> = listed
        .items
        .iter()
        .map(|p| {
            let mut m: Map<String, Value> = record(p.clone(), "profile_key");
            let name = text(p, "species_key").and_then(|k| names.get(k));
            m.insert("scientific_name".into(), json!(name));
            compact(Value::Object(m), &[])
        })
        .collect();
    let summary = format!(
        "{} (offset {}).",
        counted(items.len(), listed.total, "overwintering profile(s)"),
        page.skip
    );
    Ok(
        ToolOutput::new(summary, paged(items, listed.total, page))
            .link_api("/api/v1/overwintering"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn treatments_sort_gentlest_first() {
        let mut list = [
            json!({"name": "B", "treatment_type": "chemical", "safety_interval_days": 3}),
            json!({"name": "A", "treatment_type": "biological", "safety_interval_days": 0}),
            json!({"name": "C", "treatment_type": "cultural", "safety_interval_days": 0}),
        ];
        list.sort_by_key(gentleness);
        let names: Vec<&str> = list.iter().filter_map(|t| text(t, "name")).collect();
        assert_eq!(names, ["C", "A", "B"]);
    }

    #[test]
    fn safety_phrases_never_read_unknown_as_safe() {
        assert_eq!(
            toxicity_phrase(&json!({"toxicity": null})),
            "toxicity unknown"
        );
        assert_eq!(
            toxicity_phrase(
                &json!({"toxicity": {"is_toxic": true, "toxic_to": ["cats"]}, "toxicity_severity": "low"})
            ),
            "toxic to cats (severity low)"
        );
        assert_eq!(
            harvest_phrase(&json!({"allows_harvest": null})),
            "whether it may be harvested is unknown"
        );
    }
}
