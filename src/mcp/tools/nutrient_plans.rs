//! Nutrient plan and fertiliser tools: the listing of templates and the garden's plans, one
//! plan, the plan a plant follows, its coverage, the garden's fertilisers; and the writes
//! (assign, clone, set phase targets) with `dry_run` and `idempotency_key`. They call the same
//! services as the REST routes (`garden::nutrient_plans`, `garden::fertilizers`).

use serde_json::{Map, Value, json};

use super::shared::{bound, tool_error};
use super::view::{compact, counted, page, paged};
use crate::garden::fertilizers::model::{GardenFertilizer, Owner};
use crate::garden::fertilizers::service as fertilizers;
use crate::garden::nutrient_plans::model::{AssignTarget, NutrientPlan, PlanSummary, TargetsPatch};
use crate::garden::nutrient_plans::model::{assign_target, clone_name};
use crate::garden::nutrient_plans::service::{self, Query};
use crate::mcp::args::{self, Arg, ArgKind, ArgRule, Args, KEY};
use crate::mcp::envelope::{ToolError, ToolOutput};
use crate::mcp::registry::{Ctx, Permission, Scope, Tool};
use crate::tool_handler;

const PLAN_KEY: ArgKind = ArgKind::Text { min: 1, max: 200 };
const OWNERS: &[&str] = &["global", "garden"];

fn owner_arg(args: &Args) -> Option<Owner> {
    args.text("owner").and_then(Owner::parse)
}

fn summary_view(p: &PlanSummary) -> Value {
    let mut v = serde_json::to_value(p).unwrap_or(Value::Null);
    if let Some(m) = v.as_object_mut() {
        if let Some(k) = m.remove("key") {
            m.insert("plan_key".into(), k);
        }
        m.insert(
            "is_global_template".into(),
            Value::Bool(p.owner == Owner::Global),
        );
    }
    compact(v, &[])
}

fn plan_view(p: &NutrientPlan) -> Value {
    let mut v = serde_json::to_value(p).unwrap_or(Value::Null);
    if let Some(m) = v.as_object_mut() {
        if let Some(k) = m.remove("key") {
            m.insert("plan_key".into(), k);
        }
        m.insert(
            "is_global_template".into(),
            Value::Bool(p.owner == Owner::Global),
        );
        if let Some(Value::Array(phases)) = m.get_mut("phases") {
            for ph in phases.iter_mut() {
                if let Some(o) = ph.as_object_mut()
                    && let Some(k) = o.remove("key")
                {
                    o.insert("phase_key".into(), k);
                }
                *ph = compact(std::mem::take(ph), &["target_ec_ms"]);
            }
        }
    }
    compact(v, &["phases"])
}

fn plan_line(p: &NutrientPlan) -> String {
    let phases: Vec<String> = p
        .phases
        .iter()
        .map(|e| {
            format!(
                "{} W{}-{}{}",
                e.phase_name,
                e.week_start,
                e.week_end,
                e.target_ec_ms
                    .map(|ec| format!(" EC {ec}"))
                    .unwrap_or_default()
            )
        })
        .collect();
    format!("{} ({}): {}", p.name, p.key, phases.join(", "))
}

fn link(tenant: &crate::tenancy::TenantRecord, rest: &str) -> String {
    format!("/api/v1/t/{}/{rest}", tenant.slug.as_str())
}

pub static LIST_NUTRIENT_PLANS: Tool = Tool {
    name: "list_nutrient_plans",
    title: "Nutrient plans",
    description: "The global nutrient plan templates (tomato, chili, short-day cannabis-type, \
                  herbs, leafy greens, houseplants, succulents, orchids, citrus, outdoor bed) and \
                  the garden's own plans, marked by owner (global or garden, and \
                  is_global_template): key, name, culture, substrate, tags, number of phase \
                  entries and the weeks they span. `query` matches name, culture or a tag.",
    permission: Permission::Read,
    scope: Scope::Tenant,
    args: &[
        Arg::optional("query", args::QUERY, "Part of the name, culture or a tag."),
        Arg::optional(
            "owner",
            ArgKind::Choice {
                values: OWNERS,
                default: None,
            },
            "Only global templates or only the garden's plans.",
        ),
        args::offset(),
        args::limit(50, 100),
    ],
    rules: &[],
    run: tool_handler!(list_nutrient_plans),
};

async fn list_nutrient_plans(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let tenant = bound(ctx)?;
    let page = page(&args);
    let query = Query {
        q: args.text("query").map(str::to_owned),
        owner: owner_arg(&args),
    };
    let listed = service::list_plans(ctx.state, tenant, &query, page)
        .await
        .map_err(tool_error)?;
    let items: Vec<Value> = listed.items.iter().map(summary_view).collect();
    let summary = format!(
        "{}.",
        counted(items.len(), listed.total, "nutrient plan(s)")
    );
    Ok(ToolOutput::new(summary, paged(items, listed.total, page))
        .link_api(link(tenant, "nutrient-plans")))
}

pub static GET_NUTRIENT_PLAN: Tool = Tool {
    name: "get_nutrient_plan",
    title: "One nutrient plan",
    description: "A plan with its phase entries: phase name, order, week window (plan weeks \
                  from the plant's start), target and reference EC (mS/cm), pH range, NPK \
                  ratio, Ca/Mg/S/Fe/B ppm when set, products with doses (ml or g per litre). \
                  plan_key is a template key or tenant:<uuid>; another garden's plan is \
                  not_found.",
    permission: Permission::Read,
    scope: Scope::Tenant,
    args: &[Arg::required("plan_key", PLAN_KEY, "Plan key.")],
    rules: &[],
    run: tool_handler!(get_nutrient_plan),
};

async fn get_nutrient_plan(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let tenant = bound(ctx)?;
    let p = service::get_plan(ctx.state, tenant, args.key("plan_key"))
        .await
        .map_err(tool_error)?;
    Ok(
        ToolOutput::new(format!("{}.", plan_line(&p)), plan_view(&p))
            .link_api(link(tenant, &format!("nutrient-plans/{}", p.key))),
    )
}

pub static GET_PLANT_NUTRIENT_PLAN: Tool = Tool {
    name: "get_plant_nutrient_plan",
    title: "The nutrient plan of a plant",
    description: "The plan that applies to a plant now: assigned to the plant, else to its \
                  planting run (source plant or run), else plan null; and `current`, the phase \
                  entry for the plant's current phase and plan week with its target EC and pH \
                  range (null when no entry names that phase). A plant of another garden is \
                  not_found.",
    permission: Permission::Read,
    scope: Scope::Tenant,
    args: &[Arg::required("plant_key", KEY, "Plant key.")],
    rules: &[],
    run: tool_handler!(get_plant_nutrient_plan),
};

async fn get_plant_nutrient_plan(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let tenant = bound(ctx)?;
    let pp = service::plant_plan(ctx.state, tenant, args.key("plant_key"))
        .await
        .map_err(tool_error)?;
    let summary = match (&pp.plan, &pp.current) {
        (None, _) => {
            "The plant follows no nutrient plan (none assigned to it or its run).".to_owned()
        }
        (Some(p), Some(c)) => format!(
            "The plant follows {} ({}, from its {}); week {}: {} entry, target EC {}.",
            p.name,
            p.key,
            pp.source.as_deref().unwrap_or("plant"),
            c.week,
            c.phase_name,
            c.target_ec_ms
                .map(|e| format!("{e} mS/cm"))
                .unwrap_or_else(|| "not set".into())
        ),
        (Some(p), None) => format!(
            "The plant follows {} ({}, from its {}), but no entry fits its current phase and week.",
            p.name,
            p.key,
            pp.source.as_deref().unwrap_or("plant")
        ),
    };
    let data = json!({
        "plant_key": pp.plant_key,
        "source": pp.source,
        "run_key": pp.run_key,
        "plan": pp.plan.as_ref().map(plan_view),
        "current": pp.current,
    });
    Ok(ToolOutput::new(summary, data).link_api(link(
        tenant,
        &format!("plant-nutrient-plans/{}", pp.plant_key),
    )))
}

pub static VALIDATE_NUTRIENT_PLAN_COVERAGE: Tool = Tool {
    name: "validate_nutrient_plan_coverage",
    title: "Does a plant's plan cover its phases?",
    description: "Checks the plan a plant follows against its species' phase sequence (domain \
                  rule): every sequence phase named by an entry, gaps and overlaps of the week \
                  windows, phases without a target EC, whether the current phase is covered by \
                  name. An uncovered phase means the plant is fed silently from whatever entry \
                  its calendar week matches. A species without a sequence gives empty lists \
                  (nothing to compare is not the same as covered).",
    permission: Permission::Read,
    scope: Scope::Tenant,
    args: &[Arg::required("plant_key", KEY, "Plant key.")],
    rules: &[],
    run: tool_handler!(validate_nutrient_plan_coverage),
};

async fn validate_nutrient_plan_coverage(
    ctx: &Ctx<'_>,
    args: Args,
) -> Result<ToolOutput, ToolError> {
    let tenant = bound(ctx)?;
    let c = service::plant_coverage(ctx.state, tenant, args.key("plant_key"))
        .await
        .map_err(tool_error)?;
    let summary = match &c.plan {
        None => "The plant follows no nutrient plan: nothing to validate.".to_owned(),
        Some(p) if c.coverage.complete => format!(
            "{} covers the plant's phases ({}) without gaps or overlaps.",
            p.name,
            c.coverage.sequence_phases.join(", ")
        ),
        Some(p) => format!(
            "{} has {} issue(s){}: {}.",
            p.name,
            c.coverage.issues.len(),
            if c.coverage.phases_not_covered.is_empty() {
                String::new()
            } else {
                format!(
                    " (not covered: {}; a plant in such a phase is fed from the wrong entry)",
                    c.coverage.phases_not_covered.join(", ")
                )
            },
            c.coverage
                .issues
                .iter()
                .map(|i| i.message.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        ),
    };
    let data = serde_json::to_value(&c).unwrap_or(Value::Null);
    Ok(ToolOutput::new(summary, data).link_api(link(
        tenant,
        &format!("plant-nutrient-plans/{}/coverage", c.plant_key),
    )))
}

fn fertilizer_view(f: &GardenFertilizer) -> Value {
    let v = &f.0;
    compact(
        json!({
            "fertilizer_key": f.key(),
            "owner": v.get("owner"),
            "name": f.name(),
            "brand": v.get("brand"),
            "fertilizer_type": v.get("fertilizer_type"),
            "form": v.get("form"),
            "npk": v.get("npk"),
            "secondary": v.get("secondary"),
            "micro": v.get("micro"),
            "ec_contribution_per_ml": v.get("ec_contribution_per_ml"),
            "ec_contribution_uncertain": v.get("ec_contribution_uncertain").cloned().unwrap_or(Value::Bool(false)),
            "recommended_dose_ml_per_liter": v.get("recommended_dose_ml_per_liter"),
            "max_dose_ml_per_liter": v.get("max_dose_ml_per_liter"),
            "mixing_priority": v.get("mixing_priority"),
            "is_organic": v.get("is_organic").cloned().unwrap_or(Value::Bool(false)),
        }),
        &["max_dose_ml_per_liter"],
    )
}

pub static LIST_FERTILIZERS: Tool = Tool {
    name: "list_fertilizers",
    title: "Fertilisers",
    description: "The global fertilisers and the garden's own, marked by owner (global or \
                  garden): key, name, brand, type, form, NPK (N-P2O5-K2O %), secondary and \
                  micro nutrients, EC contribution per ml (or g) per litre and whether it is \
                  uncertain, recommended and maximum dose, mixing priority (lower goes in \
                  first). Keys work in calculate_mixing_protocol and in plans.",
    permission: Permission::Read,
    scope: Scope::Tenant,
    args: &[
        Arg::optional("query", args::QUERY, "Part of the name or brand."),
        Arg::optional(
            "organic_only",
            ArgKind::Bool { default: false },
            "Only organic products.",
        ),
        Arg::optional(
            "owner",
            ArgKind::Choice {
                values: OWNERS,
                default: None,
            },
            "Only global or only the garden's own products.",
        ),
        args::offset(),
        args::limit(50, 100),
    ],
    rules: &[],
    run: tool_handler!(list_fertilizers),
};

async fn list_fertilizers(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let tenant = bound(ctx)?;
    let page = page(&args);
    let query = fertilizers::Query {
        q: args.text("query").map(str::to_owned),
        owner: owner_arg(&args),
        fertilizer_type: None,
        form: None,
        is_organic: args.flag("organic_only").then_some(true),
    };
    let listed = fertilizers::list(ctx.state, tenant, &query, page)
        .await
        .map_err(tool_error)?;
    let items: Vec<Value> = listed.items.iter().map(fertilizer_view).collect();
    let summary = format!("{}.", counted(items.len(), listed.total, "fertiliser(s)"));
    Ok(ToolOutput::new(summary, paged(items, listed.total, page))
        .link_api(link(tenant, "fertilizers")))
}

// ---------------------------------------------------------------------------------------------
// Writes.

fn dry(ctx: &Ctx<'_>, text: String) -> String {
    if ctx.dry_run {
        format!("Dry run: {text} Nothing was written.")
    } else {
        text
    }
}

pub static ASSIGN_NUTRIENT_PLAN: Tool = Tool {
    name: "assign_nutrient_plan",
    title: "Assign a nutrient plan",
    description: "Assigns a plan (a global template or the garden's own) to a plant or to a \
                  planting run (exactly one of plant_key and run_key); it replaces the plan it \
                  had (replaced_plan_key). A plant follows its own plan, else its run's: read it \
                  back with get_plant_nutrient_plan. Keys of another garden are not_found.",
    permission: Permission::Write,
    scope: Scope::Tenant,
    args: &[
        Arg::required(
            "plan_key",
            PLAN_KEY,
            "Plan key (template key or tenant:<uuid>).",
        ),
        Arg::optional("plant_key", KEY, "The plant that follows the plan."),
        Arg::optional(
            "run_key",
            KEY,
            "The planting run whose plants follow the plan.",
        ),
    ],
    rules: &[ArgRule::ExactlyOne(&["plant_key", "run_key"])],
    run: tool_handler!(assign_nutrient_plan),
};

fn keys_map(args: &Args, names: &[&str]) -> Map<String, Value> {
    names
        .iter()
        .filter_map(|n| args.text(n).map(|v| ((*n).to_owned(), Value::from(v))))
        .collect()
}

async fn assign_nutrient_plan(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let tenant = bound(ctx)?;
    let target: AssignTarget =
        assign_target(&keys_map(&args, &["plant_key", "run_key"]), "").map_err(tool_error)?;
    let a = service::assign(
        ctx.state,
        tenant,
        args.key("plan_key"),
        &target,
        !ctx.dry_run,
    )
    .await
    .map_err(tool_error)?;
    let what = match (a.plant_key, a.run_key) {
        (Some(id), _) => format!("plant {id}"),
        (_, Some(id)) => format!("run {id}"),
        _ => String::new(),
    };
    let text = format!(
        "Assigned {} ({}) to {what}{}.",
        a.plan_name,
        a.plan_key,
        a.replaced_plan_key
            .as_deref()
            .map(|r| format!(", replacing {r}"))
            .unwrap_or_default()
    );
    let data = serde_json::to_value(&a).unwrap_or(Value::Null);
    let out = ToolOutput::new(dry(ctx, text), data);
    Ok(match a.plant_key {
        Some(id) => out.link_api(link(tenant, &format!("plant-nutrient-plans/{id}"))),
        None => out.link_api(link(tenant, &format!("nutrient-plans/{}", a.plan_key))),
    })
}

pub static CLONE_NUTRIENT_PLAN: Tool = Tool {
    name: "clone_nutrient_plan",
    title: "Copy a nutrient plan",
    description: "Copies a global template or one of the garden's plans into a new plan the \
                  garden owns (cloned_from_key set; the source is untouched), so its targets can \
                  be changed with set_nutrient_plan_phase_targets. Default name \"<source> \
                  (copy)\"; a given name the garden already uses is refused.",
    permission: Permission::Write,
    scope: Scope::Tenant,
    args: &[
        Arg::required("plan_key", PLAN_KEY, "The plan to copy."),
        Arg::optional(
            "name",
            ArgKind::Text { min: 1, max: 200 },
            "Name of the copy (up to 200 characters).",
        ),
    ],
    rules: &[],
    run: tool_handler!(clone_nutrient_plan),
};

async fn clone_nutrient_plan(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let tenant = bound(ctx)?;
    let name = clone_name(&keys_map(&args, &["name"]), "").map_err(tool_error)?;
    let p = service::clone_plan(ctx.state, tenant, args.key("plan_key"), name, !ctx.dry_run)
        .await
        .map_err(tool_error)?;
    let text = format!(
        "Copied {} into the garden's plan {}{}.",
        args.key("plan_key"),
        p.name,
        if ctx.dry_run {
            String::new()
        } else {
            format!(" ({})", p.key)
        }
    );
    let out = ToolOutput::new(dry(ctx, text), plan_view(&p));
    Ok(if ctx.dry_run {
        out.link_api(link(tenant, "nutrient-plans"))
    } else {
        out.link_api(link(tenant, &format!("nutrient-plans/{}", p.key)))
    })
}

pub static SET_NUTRIENT_PLAN_PHASE_TARGETS: Tool = Tool {
    name: "set_nutrient_plan_phase_targets",
    title: "Set the EC targets of a plan phase",
    description: "Sets target_ec_ms and/or reference_ec_ms (0-10 mS/cm) of one phase entry \
                  (phase: entry key, or phase name when the plan has one entry of it) of a plan \
                  the garden owns. An omitted value stays; a value can never be cleared; at \
                  least one must be given. A global template is refused (permission.denied): \
                  clone_nutrient_plan first.",
    permission: Permission::Write,
    scope: Scope::Tenant,
    args: &[
        Arg::required("plan_key", PLAN_KEY, "The garden's plan (tenant:<uuid>)."),
        Arg::required(
            "phase",
            ArgKind::Text { min: 1, max: 200 },
            "Phase entry key or phase name (e.g. flowering).",
        ),
        Arg::optional(
            "target_ec_ms",
            ArgKind::Number {
                min: 0.0,
                max: 10.0,
                default: None,
            },
            "EC to feed, mS/cm.",
        ),
        Arg::optional(
            "reference_ec_ms",
            ArgKind::Number {
                min: 0.0,
                max: 10.0,
                default: None,
            },
            "EC on the plan's reference substrate, mS/cm.",
        ),
    ],
    rules: &[],
    run: tool_handler!(set_nutrient_plan_phase_targets),
};

async fn set_nutrient_plan_phase_targets(
    ctx: &Ctx<'_>,
    args: Args,
) -> Result<ToolOutput, ToolError> {
    let tenant = bound(ctx)?;
    let mut map = Map::new();
    map.insert("phase".into(), Value::from(args.key("phase")));
    for n in ["target_ec_ms", "reference_ec_ms"] {
        if let Some(v) = args.number(n) {
            map.insert(n.into(), Value::from(v));
        }
    }
    let patch = TargetsPatch::check(&map, "")
        .map_err(|d| tool_error(crate::error::AppError::validation(d)))?;
    let p = service::set_phase_targets(
        ctx.state,
        tenant,
        args.key("plan_key"),
        &patch,
        "",
        !ctx.dry_run,
    )
    .await
    .map_err(tool_error)?;
    let text = format!("Set the targets of {}: {}.", patch.phase, plan_line(&p));
    Ok(ToolOutput::new(dry(ctx, text), plan_view(&p))
        .link_api(link(tenant, &format!("nutrient-plans/{}", p.key))))
}
