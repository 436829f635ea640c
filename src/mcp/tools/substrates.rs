//! Substrate tools: the listing of global and own substrates, one substrate, the mix preview
//! and the stored mix, the garden's batches and their reusability. They call the same services
//! as the REST routes.

use serde_json::{Value, json};

use super::shared::{bound, tool_error};
use super::view::{compact, counted, page, paged};
use crate::garden::substrates::model::{
    MixComponent, MixRequest, NewMix, Substrate, SubstrateBatch, SubstrateScope,
};
use crate::garden::substrates::service::{self, SubstrateQuery};
use crate::mcp::args::{self, Arg, ArgKind, Args, KEY};
use crate::mcp::envelope::{ToolError, ToolOutput};
use crate::mcp::registry::{Ctx, Permission, Scope, Tool};
use crate::rules::substrate_mix::TYPES;
use crate::rules::substrate_reuse::Reusability;
use crate::tool_handler;

const SUBSTRATE_KEY: ArgKind = ArgKind::Text { min: 1, max: 200 };

const COMPONENT_FIELDS: &[Arg] = &[
    Arg::required(
        "substrate_key",
        SUBSTRATE_KEY,
        "A global substrate key or tenant:<uuid> of the garden's own (not a mix).",
    ),
    Arg::required(
        "fraction",
        ArgKind::Number {
            min: 0.01,
            max: 1.0,
            default: None,
        },
        "Share of the mix, 0.01-1.",
    ),
];

const COMPONENTS: Arg = Arg::required(
    "components",
    ArgKind::ObjectList {
        fields: COMPONENT_FIELDS,
        rules: &[],
        min: 2,
        max: 10,
    },
    "2-10 components; fractions sum to 1 (±0.01), each substrate once, no nested mixes.",
);

fn scope_str(s: SubstrateScope) -> &'static str {
    match s {
        SubstrateScope::Global => "global",
        SubstrateScope::Tenant => "tenant",
    }
}

/// A substrate as the tools show it.
fn substrate_view(s: &Substrate) -> Value {
    let mut v = serde_json::to_value(s).unwrap_or(Value::Null);
    if let Some(m) = v.as_object_mut()
        && let Some(key) = m.remove("key")
    {
        m.insert("substrate_key".into(), key);
    }
    compact(v, &[])
}

fn substrate_line(s: &Substrate) -> String {
    format!(
        "{} ({}, {}, pH {}, EC {} mS/cm, {})",
        s.name,
        scope_str(s.scope),
        s.props.substrate_type,
        s.props.ph_base,
        s.props.ec_base_ms,
        if s.props.reusable {
            format!("reusable {}x", s.props.max_reuse_cycles)
        } else {
            "not reusable".to_owned()
        }
    )
}

fn components_of(args: &Args) -> Vec<MixComponent> {
    args.items("components")
        .iter()
        .map(|c| MixComponent {
            substrate_key: c.key("substrate_key").to_owned(),
            fraction: c.number("fraction").unwrap_or(0.0),
        })
        .collect()
}

pub static LIST_SUBSTRATES: Tool = Tool {
    name: "list_substrates",
    title: "Substrates",
    description: "The substrates this garden can use: the global catalogue (soils, coco, clay \
                  pebbles, perlite, pon, rockwool, …) and the garden's own substrates and mixes, \
                  each marked scope global or tenant, with type, pH and EC base, structure and \
                  reuse limits. `query` matches part of the English or German name or the \
                  brand; `scope` and `type` narrow the list. Global ones come first.",
    permission: Permission::Read,
    scope: Scope::Tenant,
    args: &[
        Arg::optional(
            "query",
            args::QUERY,
            "Part of a name (English or German) or brand.",
        ),
        Arg::optional(
            "scope",
            ArgKind::Choice {
                values: &["global", "tenant"],
                default: None,
            },
            "Only global or only the garden's own substrates.",
        ),
        Arg::optional(
            "type",
            ArgKind::Choice {
                values: TYPES,
                default: None,
            },
            "Substrate type.",
        ),
        args::offset(),
        args::limit(50, 200),
    ],
    rules: &[],
    run: tool_handler!(list_substrates),
};

async fn list_substrates(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let tenant = bound(ctx)?;
    let page = page(&args);
    let query = SubstrateQuery {
        q: args.text("query").map(str::to_owned),
        scope: match args.text("scope") {
            Some("global") => Some(SubstrateScope::Global),
            Some("tenant") => Some(SubstrateScope::Tenant),
            _ => None,
        },
        substrate_type: args.text("type").map(str::to_owned),
    };
    let listed = service::list_substrates(ctx.state, tenant, &query, page)
        .await
        .map_err(tool_error)?;
    let items: Vec<Value> = listed.items.iter().map(substrate_view).collect();
    let summary = format!("{}.", counted(items.len(), listed.total, "substrate(s)"));
    Ok(ToolOutput::new(summary, paged(items, listed.total, page))
        .link_api(format!("/api/v1/t/{}/substrates", tenant.slug.as_str())))
}

pub static GET_SUBSTRATE: Tool = Tool {
    name: "get_substrate",
    title: "A substrate",
    description: "One substrate by key (a global key, or tenant:<uuid> of the garden's own): \
                  type, brand, pH and EC base, air porosity, water retention, buffer capacity, \
                  water-holding capacity, CEC, bulk density, composition, irrigation strategy, \
                  whether it is reusable and how many cycles, and a mix's components.",
    permission: Permission::Read,
    scope: Scope::Tenant,
    args: &[Arg::required(
        "substrate_key",
        SUBSTRATE_KEY,
        "Substrate key (global) or tenant:<uuid>.",
    )],
    rules: &[],
    run: tool_handler!(get_substrate),
};

async fn get_substrate(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let tenant = bound(ctx)?;
    let key = args.key("substrate_key");
    let s = service::get_substrate(ctx.state, tenant, key)
        .await
        .map_err(tool_error)?;
    Ok(
        ToolOutput::new(format!("{}.", substrate_line(&s)), substrate_view(&s)).link_api(format!(
            "/api/v1/t/{}/substrates/{key}",
            tenant.slug.as_str()
        )),
    )
}

pub static PREVIEW_SUBSTRATE_MIX: Tool = Tool {
    name: "preview_substrate_mix",
    title: "Preview a substrate mix",
    description: "Computes the properties of a mix of substrates without storing anything: pH, \
                  EC and air porosity as fraction-weighted sums, water retention and buffer \
                  capacity as weighted levels, composition, reusable only when every component \
                  is (max reuse cycles the smallest), the type of the largest share and the \
                  most demanding irrigation. Store it with create_substrate_mix.",
    permission: Permission::Read,
    scope: Scope::Tenant,
    args: &[COMPONENTS],
    rules: &[],
    run: tool_handler!(preview_substrate_mix),
};

async fn preview_substrate_mix(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let tenant = bound(ctx)?;
    let req = MixRequest {
        components: components_of(&args),
    };
    let p = service::preview_mix(ctx.state, tenant, &req)
        .await
        .map_err(tool_error)?;
    let summary = format!(
        "The mix would be {} with pH {}, EC {} mS/cm, air porosity {} %, {}; nothing was stored.",
        p.props.substrate_type,
        p.props.ph_base,
        p.props.ec_base_ms,
        p.props.air_porosity_percent,
        if p.props.reusable {
            format!("reusable {}x", p.props.max_reuse_cycles)
        } else {
            "not reusable".to_owned()
        }
    );
    let data = compact(serde_json::to_value(&p).unwrap_or(Value::Null), &[]);
    Ok(ToolOutput::new(summary, data).link_api(format!(
        "/api/v1/t/{}/substrate-mixes/preview",
        tenant.slug.as_str()
    )))
}

pub static CREATE_SUBSTRATE_MIX: Tool = Tool {
    name: "create_substrate_mix",
    title: "Store a substrate mix",
    description: "Stores a mix as a substrate owned by the garden (scope tenant, is_mix true), \
                  with the properties preview_substrate_mix computes. The name must be new among \
                  the garden's substrates (conflict.state otherwise). Returns the substrate with \
                  its tenant:<uuid> key, usable for substrate batches. dry_run: true checks \
                  everything and stores nothing.",
    permission: Permission::Write,
    scope: Scope::Tenant,
    args: &[
        Arg::required(
            "name_en",
            ArgKind::Text { min: 1, max: 120 },
            "Name of the mix (English or the garden's language), up to 120 characters.",
        ),
        Arg::optional(
            "name_de",
            ArgKind::Text { min: 1, max: 120 },
            "German name.",
        ),
        COMPONENTS,
    ],
    rules: &[],
    run: tool_handler!(create_substrate_mix),
};

async fn create_substrate_mix(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let tenant = bound(ctx)?;
    let new = NewMix {
        name: args.key("name_en").to_owned(),
        name_de: args.text("name_de").map(str::to_owned),
        description: None,
        components: components_of(&args),
    };
    let s = service::create_mix(ctx.state, tenant, &new, !ctx.dry_run)
        .await
        .map_err(tool_error)?;
    let slug = tenant.slug.as_str();
    let mut data = substrate_view(&s);
    if ctx.dry_run {
        if let Some(m) = data.as_object_mut() {
            m.remove("substrate_key");
        }
        return Ok(ToolOutput::new(
            format!(
                "Dry run: the mix {} can be stored; nothing was written.",
                substrate_line(&s)
            ),
            data,
        )
        .link_api(format!("/api/v1/t/{slug}/substrate-mixes")));
    }
    Ok(
        ToolOutput::new(format!("Stored the mix {}.", substrate_line(&s)), data)
            .link_api(format!("/api/v1/t/{slug}/substrates/{}", s.key)),
    )
}

fn batch_view(b: &SubstrateBatch) -> Value {
    let mut v = serde_json::to_value(b).unwrap_or(Value::Null);
    if let Some(m) = v.as_object_mut() {
        if let Some(key) = m.remove("key") {
            m.insert("batch_key".into(), key);
        }
        m.remove("created_at");
        m.remove("updated_at");
    }
    compact(v, &["ph_current", "ec_current_ms"])
}

fn batch_line(b: &SubstrateBatch) -> String {
    format!(
        "batch {} of {} ({} cycle(s) used, {} live plant(s))",
        b.label,
        b.substrate_name.as_deref().unwrap_or(&b.substrate_key),
        b.cycles_used,
        b.live_plants
    )
}

pub static LIST_SUBSTRATE_BATCHES: Tool = Tool {
    name: "list_substrate_batches",
    title: "Substrate batches",
    description: "The garden's batches of substrate (oldest first): label, substrate (key and \
                  name), volume, mixed on, completed cycles, current pH and EC, live plants in \
                  it, and the reuse facts it was made with. `substrate_key` narrows to one \
                  substrate.",
    permission: Permission::Read,
    scope: Scope::Tenant,
    args: &[
        Arg::optional(
            "substrate_key",
            SUBSTRATE_KEY,
            "Only batches of this substrate.",
        ),
        args::offset(),
        args::limit(50, 200),
    ],
    rules: &[],
    run: tool_handler!(list_substrate_batches),
};

async fn list_substrate_batches(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let tenant = bound(ctx)?;
    let page = page(&args);
    let listed = service::list_batches(ctx.state, tenant, args.text("substrate_key"), page)
        .await
        .map_err(tool_error)?;
    let items: Vec<Value> = listed.items.iter().map(batch_view).collect();
    let summary = format!(
        "{}.",
        counted(items.len(), listed.total, "substrate batch(es)")
    );
    Ok(
        ToolOutput::new(summary, paged(items, listed.total, page)).link_api(format!(
            "/api/v1/t/{}/substrate-batches",
            tenant.slug.as_str()
        )),
    )
}

pub static GET_SUBSTRATE_BATCH: Tool = Tool {
    name: "get_substrate_batch",
    title: "A substrate batch",
    description: "One batch of substrate with its pH and EC history (oldest first), completed \
                  cycles, live plants and the reuse facts of its substrate. Use \
                  check_batch_reusability before starting another cycle.",
    permission: Permission::Read,
    scope: Scope::Tenant,
    args: &[Arg::required("batch_key", KEY, "Batch key.")],
    rules: &[],
    run: tool_handler!(get_substrate_batch),
};

async fn get_substrate_batch(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let tenant = bound(ctx)?;
    let key = args.key("batch_key");
    let b = service::get_batch(ctx.state, tenant, key)
        .await
        .map_err(tool_error)?;
    let slug = tenant.slug.as_str();
    Ok(
        ToolOutput::new(format!("{}.", batch_line(&b)), batch_view(&b))
            .link_api(format!("/api/v1/t/{slug}/substrate-batches/{key}"))
            .link_ui(format!("/t/{slug}/substrate-batches/{key}")),
    )
}

pub static CHECK_BATCH_REUSABILITY: Tool = Tool {
    name: "check_batch_reusability",
    title: "Can a substrate batch be reused?",
    description: "Checks whether a batch can go into another growing cycle: a disposable type \
                  (peat, rockwool plugs) or a non-reusable substrate never; not once the \
                  completed cycles reach the limit; an unstable pH history (standard deviation \
                  above the type's threshold) or an EC drift above 1.5 mS/cm from the base are \
                  issues. Returns can_reuse, issues, preparation_steps [{step, hours}], \
                  preparation_hours and ready_on.",
    permission: Permission::Read,
    scope: Scope::Tenant,
    args: &[Arg::required("batch_key", KEY, "Batch key.")],
    rules: &[],
    run: tool_handler!(check_batch_reusability),
};

async fn check_batch_reusability(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let tenant = bound(ctx)?;
    let key = args.key("batch_key");
    let (b, r): (SubstrateBatch, Reusability) = service::check_reusability(ctx.state, tenant, key)
        .await
        .map_err(tool_error)?;
    let summary = if r.can_reuse {
        format!(
            "The {} can be reused after {} hour(s) of preparation, ready on {}.",
            batch_line(&b),
            r.preparation_hours,
            r.ready_on.map(|d| d.to_string()).unwrap_or_default()
        )
    } else {
        format!(
            "The {} cannot be reused: {}.",
            batch_line(&b),
            r.issues.join("; ")
        )
    };
    let mut data = serde_json::to_value(&r).unwrap_or(Value::Null);
    data["batch_key"] = json!(b.key);
    data["label"] = json!(b.label);
    data["cycles_used"] = json!(b.cycles_used);
    data["max_reuse_cycles"] = json!(b.max_reuse_cycles);
    Ok(ToolOutput::new(summary, data).link_api(format!(
        "/api/v1/t/{}/substrate-batches/{key}/reusability",
        tenant.slug.as_str()
    )))
}
