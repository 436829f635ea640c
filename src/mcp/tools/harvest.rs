//! Harvest tools: readiness of the garden's plants and recording a harvest batch (the
//! safety-interval gate applies: the same service function as `POST /harvest/batches`).

use serde_json::{Value, json};

use super::shared::{actor, body_of, bound, key_arg, tool_error};
use super::view::counted;
use crate::garden::harvest::model::{HARVEST_TYPES, HarvestBatch, NewBatch, Readiness};
use crate::garden::harvest::service;
use crate::http::pagination::PageRequest;
use crate::mcp::args::{Arg, ArgKind, ArgRule, Args, KEY, NOTES};
use crate::mcp::envelope::{ToolError, ToolOutput};
use crate::mcp::registry::{Ctx, Permission, Scope, Tool};
use crate::rules::harvest::GRADES;
use crate::tool_handler;

fn readiness_line(r: &Readiness) -> String {
    let gate = if r.safety_intervals.is_empty() {
        "no safety interval".to_owned()
    } else {
        format!("safety interval until {}", r.harvest_allowed_from)
    };
    format!(
        "{}: {} ({}), phase {}, {gate}",
        r.plant_name,
        r.recommendation,
        r.score,
        r.phase_key.as_deref().unwrap_or("none")
    )
}

pub static GET_HARVEST_READINESS: Tool = Tool {
    name: "get_harvest_readiness",
    title: "Harvest readiness",
    description: "How close the garden's plants are to harvest: whether the current phase \
                  allows harvest, days in phase, the latest ripeness observation per \
                  indicator, a score 0-100 with a recommendation (optimal, approaching, \
                  developing, immature, overripe), the safety intervals still running and the first day a \
                  harvest is allowed. `ready` = phase allows harvest, optimal, no interval. \
                  plant_key narrows to one plant.",
    permission: Permission::Read,
    scope: Scope::Tenant,
    args: &[
        Arg::optional("plant_key", KEY, "Only this plant."),
        Arg::optional(
            "limit",
            ArgKind::Int {
                min: 1,
                max: 200,
                default: Some(50),
            },
            "How many plants (default 50, at most 200).",
        ),
    ],
    rules: &[],
    run: tool_handler!(get_harvest_readiness),
};

async fn get_harvest_readiness(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let tenant = bound(ctx)?;
    key_arg(&args, "plant_key", "plant")?;
    let slug = tenant.slug.as_str();
    if let Some(key) = args.text("plant_key") {
        let r = service::plant_readiness(ctx.state, tenant, key.trim())
            .await
            .map_err(tool_error)?;
        return Ok(ToolOutput::new(
            format!("{}.", readiness_line(&r)),
            serde_json::to_value(&r).unwrap_or(Value::Null),
        )
        .link_api(format!(
            "/api/v1/t/{slug}/harvest/readiness/{}",
            r.plant_key
        )));
    }
    let page = PageRequest {
        skip: 0,
        limit: args.int("limit").unwrap_or(50),
    };
    let listed = service::readiness(ctx.state, tenant, page)
        .await
        .map_err(tool_error)?;
    let ready = listed.items.iter().filter(|r| r.ready).count();
    let blocked = listed
        .items
        .iter()
        .filter(|r| !r.safety_intervals.is_empty())
        .count();
    let summary = format!(
        "{}: {ready} ready, {blocked} under a safety interval.",
        counted(listed.items.len(), listed.total, "plant(s)")
    );
    let items: Vec<Value> = listed
        .items
        .iter()
        .map(|r| serde_json::to_value(r).unwrap_or(Value::Null))
        .collect();
    Ok(ToolOutput::new(
        summary,
        json!({"items": items, "count": items.len(), "total": listed.total, "ready": ready}),
    )
    .link_api(format!("/api/v1/t/{slug}/harvest/readiness")))
}

fn batch_line(b: &HarvestBatch) -> String {
    let grade = b
        .quality_grade
        .and_then(|g| serde_json::to_value(g).ok())
        .and_then(|v| v.as_str().map(str::to_owned));
    format!(
        "batch {} of {} g on {}{}",
        b.label,
        b.wet_weight_g,
        b.harvest_date,
        grade.map(|g| format!(", grade {g}")).unwrap_or_default()
    )
}

const SCORE: ArgKind = ArgKind::Number {
    min: 0.0,
    max: 100.0,
    default: None,
};
/// Wet weight: above 0 (the smallest a kitchen scale shows).
const WET: ArgKind = ArgKind::Number {
    min: 0.01,
    max: 1_000_000.0,
    default: None,
};
const WEIGHT: ArgKind = ArgKind::Number {
    min: 0.0,
    max: 1_000_000.0,
    default: None,
};

pub static RECORD_HARVEST: Tool = Tool {
    name: "record_harvest",
    title: "Record a harvest",
    description: "Records a harvest batch of a plant: weights in grams (wet above 0; dry ones not \
                  above it), optional quality scores 0-100 (appearance, aroma, colour: all three; \
                  score and grade computed) or a grade alone. Refused (validation.error, detail \
                  code KARENZ_VIOLATION, one detail per blocking treatment naming the active \
                  ingredient and the last blocked day) while a safety interval runs on \
                  harvest_date (default the garden's today, in its time zone). Nothing bypasses it. A harvest in a phase \
                  that does not allow one is recorded with a harvest_readiness warning \
                  (warnings[]; the grower's call). dry_run: true checks \
                  everything and stores nothing.",
    permission: Permission::Write,
    scope: Scope::Tenant,
    args: &[
        Arg::required("plant_key", KEY, "Plant key."),
        Arg::required("wet_weight_g", WET, "Wet weight in grams, from 0.01."),
        Arg::optional(
            "harvest_date",
            ArgKind::DateOrDateTime,
            "YYYY-MM-DD (the local date), or a date-time with its offset (counts as its local \
             day in the garden's time zone); not after the garden's today (default today).",
        ),
        Arg::optional(
            "harvest_type",
            ArgKind::Choice {
                values: HARVEST_TYPES,
                default: None,
            },
            "partial, final (default) or continuous.",
        ),
        Arg::optional(
            "label",
            ArgKind::Text { min: 1, max: 100 },
            "Batch label (default H-<date>-<key part>).",
        ),
        Arg::optional("estimated_dry_weight_g", WEIGHT, "Grams."),
        Arg::optional("actual_dry_weight_g", WEIGHT, "Grams."),
        Arg::optional("appearance_score", SCORE, "0-100."),
        Arg::optional("aroma_score", SCORE, "0-100."),
        Arg::optional("color_score", SCORE, "0-100."),
        Arg::optional(
            "quality_grade",
            ArgKind::Choice {
                values: GRADES,
                default: None,
            },
            "Only without scores.",
        ),
        Arg::optional(
            "harvester",
            ArgKind::Text { min: 1, max: 200 },
            "Who harvested (default mcp:<account>).",
        ),
        Arg::optional("notes", NOTES, "Up to 2000 characters."),
    ],
    rules: &[
        // The three scores go together (each needs the next), and the grade is computed
        // from them: a grade is sent only without scores.
        ArgRule::Requires {
            arg: "appearance_score",
            needs: "aroma_score",
        },
        ArgRule::Requires {
            arg: "aroma_score",
            needs: "color_score",
        },
        ArgRule::Requires {
            arg: "color_score",
            needs: "appearance_score",
        },
        ArgRule::Excludes {
            arg: "appearance_score",
            with: "quality_grade",
        },
        ArgRule::Excludes {
            arg: "aroma_score",
            with: "quality_grade",
        },
        ArgRule::Excludes {
            arg: "color_score",
            with: "quality_grade",
        },
    ],
    run: tool_handler!(record_harvest),
};

async fn record_harvest(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let tenant = bound(ctx)?;
    key_arg(&args, "plant_key", "plant")?;
    let new: NewBatch = body_of(&args, &[])?;
    let b = service::create_batch(ctx.state, tenant, &new, &actor(ctx), !ctx.dry_run)
        .await
        .map_err(tool_error)?;
    let mut data = serde_json::to_value(&b).unwrap_or(Value::Null);
    if let Some(m) = data.as_object_mut()
        && let Some(k) = m.remove("key")
        && !ctx.dry_run
    {
        m.insert("batch_key".into(), k);
    }
    let warned: String = b
        .warnings
        .iter()
        .map(|w| format!(" Warning: {w}."))
        .collect();
    if ctx.dry_run {
        return Ok(ToolOutput::new(
            format!(
                "Dry run: the {} can be recorded; nothing was written.{warned}",
                batch_line(&b)
            ),
            data,
        ));
    }
    Ok(
        ToolOutput::new(format!("Recorded the {}.{warned}", batch_line(&b)), data).link_api(
            format!(
                "/api/v1/t/{}/harvest/batches/{}",
                tenant.slug.as_str(),
                b.key
            ),
        ),
    )
}
