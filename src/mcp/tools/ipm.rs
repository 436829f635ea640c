//! Pest and disease tools: a plant's inspections, a new inspection, a treatment application
//! (the resistance rule applies). They read their arguments through the same body readers as
//! the REST routes and call the same services.

use serde_json::{Value, json};

use super::shared::{actor, body_of, bound, key_arg, tool_error};
use super::view::counted;
use crate::garden::ipm::model::{
    Application, DOSE_UNITS, FINDINGS_MAX, Inspection, LIST_MAX, NewApplication, NewInspection,
    PRESSURE, SEVERITY, SYMPTOM_MAX,
};
use crate::garden::ipm::service;
use crate::http::pagination::PageRequest;
use crate::mcp::args::{Arg, ArgKind, ArgRule, Args, KEY, NOTES, key_list};
use crate::mcp::envelope::{ToolError, ToolOutput};
use crate::mcp::registry::{Ctx, Permission, Scope, Tool};
use crate::tool_handler;
use crate::values::json::parse_json;

const PLANT_KEY: Arg = Arg::required("plant_key", KEY, "Plant key.");

fn inspection_line(i: &Inspection) -> String {
    let named: Vec<String> = i
        .findings
        .iter()
        .filter_map(|f| {
            f.pest_key
                .clone()
                .or_else(|| f.disease_key.clone())
                .or_else(|| f.symptom.clone())
        })
        .collect();
    let pressure = serde_json::to_value(i.pressure_level)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    format!(
        "{} inspection on {} by {}, pressure {pressure}{}",
        if i.plant_key.is_some() {
            "plant"
        } else {
            "location"
        },
        crate::rules::harvest::utc_day(i.inspected_at),
        i.inspector,
        if named.is_empty() {
            String::new()
        } else {
            format!(", {} finding(s)", named.len())
        }
    )
}

fn inspection_view(i: &Inspection) -> Value {
    let mut v = serde_json::to_value(i).unwrap_or(Value::Null);
    if let Some(m) = v.as_object_mut()
        && let Some(k) = m.remove("key")
    {
        m.insert("inspection_key".into(), k);
    }
    v
}

pub static GET_PLANT_INSPECTIONS: Tool = Tool {
    name: "get_plant_inspections",
    title: "A plant's pest and disease inspections",
    description: "The inspections of a plant, newest first, including those of the location it \
                  stands at: pressure level (none, low, medium, high, critical), symptoms, \
                  findings (pest_key or disease_key of the catalogue, severity, confidence \
                  0-1, affected plant part and share), photo references and notes.",
    permission: Permission::Read,
    scope: Scope::Tenant,
    args: &[
        PLANT_KEY,
        Arg::optional(
            "limit",
            ArgKind::Int {
                min: 1,
                max: 100,
                default: Some(20),
            },
            "How many (default 20, at most 100).",
        ),
    ],
    rules: &[],
    run: tool_handler!(get_plant_inspections),
};

async fn get_plant_inspections(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let tenant = bound(ctx)?;
    key_arg(&args, "plant_key", "plant")?;
    let plant = uuid::Uuid::parse_str(args.key("plant_key").trim()).ok();
    let page = PageRequest {
        skip: 0,
        limit: args.int("limit").unwrap_or(20),
    };
    let listed = service::list_inspections(ctx.state, tenant, plant, None, page)
        .await
        .map_err(tool_error)?;
    let items: Vec<Value> = listed.items.iter().map(inspection_view).collect();
    let mut summary = format!("{}.", counted(items.len(), listed.total, "inspection(s)"));
    if let Some(first) = listed.items.first() {
        summary = format!("{summary} Latest: {}.", inspection_line(first));
    }
    Ok(ToolOutput::new(
        summary,
        json!({"plant_key": plant, "items": items, "count": items.len(), "total": listed.total}),
    )
    .link_api(format!(
        "/api/v1/t/{}/ipm/inspections?plant={}",
        tenant.slug.as_str(),
        args.key("plant_key").trim()
    )))
}

const FINDING_FIELDS: &[Arg] = &[
    Arg::optional("pest_key", KEY, "A pest of the catalogue (list_pests)."),
    Arg::optional(
        "disease_key",
        KEY,
        "A disease of the catalogue (list_diseases).",
    ),
    Arg::optional(
        "symptom",
        ArgKind::Text { min: 1, max: 500 },
        "What was seen (a finding names a pest, a disease or a symptom).",
    ),
    Arg::optional(
        "severity",
        ArgKind::Choice {
            values: SEVERITY,
            default: None,
        },
        "How bad.",
    ),
    Arg::optional(
        "confidence",
        ArgKind::Number {
            min: 0.0,
            max: 1.0,
            default: None,
        },
        "How sure, 0.0-1.0.",
    ),
    Arg::optional(
        "affected_plant_part",
        ArgKind::Choice {
            values: crate::catalog::ipm::model::PLANT_PARTS,
            default: None,
        },
        "leaf, stem, root, flower or fruit.",
    ),
    Arg::optional(
        "affected_share",
        ArgKind::Number {
            min: 0.0,
            max: 1.0,
            default: None,
        },
        "Share affected, 0.0-1.0.",
    ),
    Arg::optional(
        "rationale",
        ArgKind::Paragraph { min: 1, max: 2000 },
        "Why (up to 2000 characters).",
    ),
];

/// A finding names a pest, a disease or a symptom (the REST reader's rule).
const FINDING_RULES: &[ArgRule] = &[ArgRule::AtLeastOne(&["pest_key", "disease_key", "symptom"])];

pub static CREATE_INSPECTION: Tool = Tool {
    name: "create_inspection",
    title: "Record a pest and disease inspection",
    description: "Records an inspection of a plant: pressure level (default none) and up to 25 \
                  findings, each naming a pest_key or disease_key of the catalogue (unknown \
                  keys are not_found) or a symptom, with severity, confidence 0-1, affected \
                  plant part and share; symptoms_observed, detected_pest_keys and \
                  detected_disease_keys are lists merged with the findings (deduplicated, each \
                  key checked). The inspector defaults to this account. \
                  get_plant_inspections shows it afterwards. dry_run: true checks everything \
                  and stores nothing.",
    permission: Permission::Write,
    scope: Scope::Tenant,
    args: &[
        PLANT_KEY,
        Arg::optional(
            "pressure_level",
            ArgKind::Choice {
                values: PRESSURE,
                default: Some("none"),
            },
            "none, low, medium, high or critical.",
        ),
        Arg::optional(
            "findings",
            ArgKind::ObjectList {
                fields: FINDING_FIELDS,
                rules: FINDING_RULES,
                min: 0,
                max: FINDINGS_MAX,
            },
            "Up to 25 findings.",
        ),
        Arg::optional(
            "symptoms_observed",
            ArgKind::TextList {
                item_min: 1,
                item_max: SYMPTOM_MAX,
                min: 0,
                max: LIST_MAX,
            },
            "What was seen, one symptom per entry (merged with the findings' symptoms).",
        ),
        Arg::optional(
            "detected_pest_keys",
            key_list(LIST_MAX),
            "Pests of the catalogue seen (list_pests; merged with the findings, each checked).",
        ),
        Arg::optional(
            "detected_disease_keys",
            key_list(LIST_MAX),
            "Diseases of the catalogue seen (list_diseases; merged with the findings, each \
             checked).",
        ),
        Arg::optional(
            "inspector",
            ArgKind::Text { min: 1, max: 200 },
            "Who inspected (default mcp:<account>).",
        ),
        Arg::optional(
            "inspected_at",
            ArgKind::DateTime,
            "RFC 3339 date-time, not in the future (default now).",
        ),
        Arg::optional("notes", NOTES, "Up to 2000 characters."),
    ],
    rules: &[],
    run: tool_handler!(create_inspection),
};

async fn create_inspection(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let tenant = bound(ctx)?;
    key_arg(&args, "plant_key", "plant")?;
    let mut new: NewInspection = body_of(&args, &[])?;
    let actor = actor(ctx);
    if new.inspector.is_none() {
        new.inspector = Some(actor.clone());
    }
    let i = service::create_inspection(ctx.state, tenant, &new, &actor, !ctx.dry_run)
        .await
        .map_err(tool_error)?;
    let slug = tenant.slug.as_str();
    let mut data = inspection_view(&i);
    if ctx.dry_run {
        if let Some(m) = data.as_object_mut() {
            m.remove("inspection_key");
        }
        return Ok(ToolOutput::new(
            format!(
                "Dry run: the {} can be recorded; nothing was written.",
                inspection_line(&i)
            ),
            data,
        ));
    }
    Ok(
        ToolOutput::new(format!("Recorded the {}.", inspection_line(&i)), data)
            .link_api(format!("/api/v1/t/{slug}/ipm/inspections/{}", i.key)),
    )
}

fn application_line(a: &Application) -> String {
    let days = a.safety_interval_days;
    // Intervals depend on each plant's crop: name the last blocked day of any of them.
    let last = a
        .plants
        .iter()
        .filter_map(|p| p.last_blocked_day.clone())
        .max();
    let interval = match last {
        Some(last) => format!(
            "; no harvest of the treated plants through {last} (safety interval up to {days} \
             day(s), per crop)"
        ),
        None => "; no safety interval".to_owned(),
    };
    format!(
        "{} ({}) on {} plant(s) on {}{interval}",
        a.treatment_name,
        a.active_ingredient
            .as_deref()
            .unwrap_or("no active ingredient"),
        a.plants.len(),
        // The garden's local day of the application (every touched plant has the same).
        a.plants
            .first()
            .map(|p| p.applied_on.clone())
            .unwrap_or_else(|| a.applied_at.date().to_string())
    )
}

fn application_view(a: &Application) -> Value {
    let mut v = serde_json::to_value(a).unwrap_or(Value::Null);
    if let Some(m) = v.as_object_mut()
        && let Some(k) = m.remove("key")
    {
        m.insert("application_key".into(), k);
    }
    v
}

pub static APPLY_TREATMENT: Tool = Tool {
    name: "apply_treatment",
    title: "Apply a treatment",
    description: "Records a treatment of the catalogue (get_treatment) applied to one plant, to \
                  every live plant at a location, or both. It starts each plant's safety interval: no \
                  harvest from the day of application through the day before applied + \
                  safety_interval_days. The same mode of action applied to a plant as often as \
                  its group allows (FRAC multi-site and BM groups never count; FRAC 3 three and \
                  FRAC 11 and 17 two a season; otherwise a precautionary 3 in 90 days) refuses \
                  the next (validation.error, detail code RESISTANCE_WARNING, naming the group, \
                  limit and source) unless acknowledge_resistance is true, which is recorded. \
                  For the plant-protection record it also keeps the product's authorisation \
                  number, each crop's EPPO code, the growth stage (bbch_code, else from the \
                  phase), treated_area_m2 and the reason (target_pest_keys, \
                  target_disease_keys). dry_run: true checks everything and stores nothing.",
    permission: Permission::Write,
    scope: Scope::Tenant,
    args: &[
        Arg::required("treatment_key", KEY, "A treatment of the catalogue."),
        Arg::optional(
            "plant_key",
            KEY,
            "The plant treated (or give location_key).",
        ),
        Arg::optional(
            "location_key",
            KEY,
            "Every live plant at this location (or give plant_key).",
        ),
        Arg::optional(
            "applied_at",
            ArgKind::DateTime,
            "RFC 3339 date-time, not in the future (default now).",
        ),
        Arg::optional(
            "dose",
            ArgKind::Number {
                min: 0.001,
                max: 100_000.0,
                default: None,
            },
            "Above 0; dose and dose_unit go together.",
        ),
        Arg::optional(
            "dose_unit",
            ArgKind::Choice {
                values: DOSE_UNITS,
                default: None,
            },
            "Unit of dose; dose and dose_unit go together.",
        ),
        Arg::optional(
            "water_volume_liters",
            ArgKind::Number {
                min: 0.001,
                max: 10_000.0,
                default: None,
            },
            "Litres of spray or drench, above 0.",
        ),
        Arg::optional(
            "method",
            ArgKind::Choice {
                values: crate::catalog::ipm::model::APPLICATION,
                default: None,
            },
            "Default: the treatment's application method.",
        ),
        Arg::optional(
            "applied_by",
            ArgKind::Text { min: 1, max: 200 },
            "Who applied it (default mcp:<account>).",
        ),
        Arg::optional("notes", NOTES, "Up to 2000 characters."),
        Arg::optional(
            "acknowledge_resistance",
            ArgKind::Bool { default: false },
            "Apply despite the resistance limit (recorded).",
        ),
        Arg::optional(
            "bbch_code",
            ArgKind::Choice {
                values: crate::rules::bbch::CODES,
                default: None,
            },
            "The crop's BBCH growth stage, two digits (e.g. 65: full flowering); default: \
             each plant's principal stage from its phase where the phase is one stage.",
        ),
        Arg::optional(
            "treated_area_m2",
            ArgKind::Number {
                min: 0.001,
                max: 1_000_000.0,
                default: None,
            },
            "Treated area in m².",
        ),
        Arg::optional(
            "target_pest_keys",
            key_list(crate::garden::ipm::model::TARGETS_MAX),
            "The pests treated (list_pests keys): the reason in the plant-protection record.",
        ),
        Arg::optional(
            "target_disease_keys",
            key_list(crate::garden::ipm::model::TARGETS_MAX),
            "The diseases treated (list_diseases keys).",
        ),
    ],
    rules: &[
        ArgRule::AtLeastOne(&["plant_key", "location_key"]),
        ArgRule::Requires {
            arg: "dose",
            needs: "dose_unit",
        },
        ArgRule::Requires {
            arg: "dose_unit",
            needs: "dose",
        },
    ],
    run: tool_handler!(apply_treatment),
};

async fn apply_treatment(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let tenant = bound(ctx)?;
    key_arg(&args, "plant_key", "plant")?;
    key_arg(&args, "location_key", "location")?;
    // One plant on the tool; the body reader takes a list.
    let new: NewApplication = {
        let mut map = args.acting();
        if let Some(p) = map.remove("plant_key") {
            map.insert("plant_keys".into(), json!([p]));
        }
        let bytes = serde_json::to_vec(&Value::Object(map)).unwrap_or_default();
        parse_json::<NewApplication>(&bytes).map_err(|e| {
            let mut t = tool_error(e);
            if let Some(Value::Array(details)) = t.details.as_mut() {
                for d in details {
                    if let Some(f) = d.get("field").and_then(Value::as_str)
                        && f.starts_with("plant_keys")
                    {
                        d["field"] = json!("plant_key");
                    }
                }
            }
            t
        })?
    };
    let a = service::apply_treatment(ctx.state, tenant, &new, &actor(ctx), !ctx.dry_run)
        .await
        .map_err(tool_error)?;
    let mut summary = if ctx.dry_run {
        format!(
            "Dry run: {} can be recorded; nothing was written.",
            application_line(&a)
        )
    } else {
        format!("Recorded {}.", application_line(&a))
    };
    for w in &a.warnings {
        summary.push_str(&format!(" Warning: {w}."));
    }
    let mut data = application_view(&a);
    if ctx.dry_run {
        if let Some(m) = data.as_object_mut() {
            m.remove("application_key");
        }
        return Ok(ToolOutput::new(summary, data));
    }
    Ok(ToolOutput::new(summary, data).link_api(format!(
        "/api/v1/t/{}/ipm/treatments/{}",
        tenant.slug.as_str(),
        a.key
    )))
}
