//! Plant tools: list and read plants, their phase state and history, and the write tools that
//! archive, move, re-substrate and transition a plant. Each calls the plant service the REST
//! route of the same use case calls; keys are the REST keys, and a key of another garden is
//! `not_found`.

use serde_json::{Value, json};
use uuid::Uuid;

use super::shared::{actor, bound};
use super::view::{compact, counted, page, paged};
use crate::garden::plants::model::{
    ArchiveReason, LocationBody, Plant, PlantingCheck, SubstrateBody, TransitionBody,
};
use crate::garden::plants::repo::{Archived, Filter};
use crate::garden::plants::service;
use crate::mcp::args::{self, Arg, ArgKind, ArgRule, Args, KEY};
use crate::mcp::envelope::{ToolError, ToolOutput};
use crate::mcp::registry::{Ctx, Permission, Scope, Tool};
use crate::tool_handler;

/// An optional key argument that must be a UUID: anything else names nothing (`not_found`).
fn uuid_arg(args: &Args, name: &str, what: &str) -> Result<Option<Uuid>, ToolError> {
    match args.text(name) {
        None => Ok(None),
        Some(raw) => Uuid::parse_str(raw.trim())
            .map(Some)
            .map_err(|_| ToolError::not_found(what)),
    }
}

fn plant_links(out: ToolOutput, slug: &str, key: Uuid) -> ToolOutput {
    out.link_api(format!("/api/v1/t/{slug}/plant-instances/{key}"))
        .link_ui(format!("/t/{slug}/plants/{key}"))
}

/// "Tomato 1 (Solanum lycopersicum), in phase vegetative day 3 of 28, slot BOX1_A1"
fn describe(p: &Plant) -> String {
    let species = p
        .species
        .common_name
        .clone()
        .or_else(|| p.species.scientific_name.clone())
        .unwrap_or_else(|| "unknown species".into());
    let mut s = format!("{} ({species})", p.name);
    match &p.phase {
        Some(ph) => s.push_str(&format!(
            ", in phase {} day {} of {} (cycle {})",
            ph.name, ph.day_count, ph.expected_duration_days, ph.cycle_number
        )),
        None => s.push_str(&format!(", phase state {}", p.phase_state.as_str())),
    }
    if let Some(code) = &p.slot_code {
        s.push_str(&format!(", slot {code}"));
    } else if let Some(loc) = &p.location_name {
        s.push_str(&format!(", at {loc}"));
    }
    if let Some(r) = p.archive_reason {
        s.push_str(&format!(", archived ({})", r.as_str()));
    }
    s
}

fn plant_data(p: &Plant) -> Value {
    let mut v = serde_json::to_value(p).unwrap_or(Value::Null);
    if let Some(m) = v.as_object_mut()
        && let Some(k) = m.remove("key")
    {
        m.insert("plant_key".into(), k);
    }
    compact(
        v,
        &[
            "current_phase_key",
            "phase_state",
            "substrate_batch_key",
            "removed_on",
        ],
    )
}

const INCLUDE_ARCHIVED: Arg = Arg::optional(
    "include_archived",
    ArgKind::Bool { default: false },
    "Also list archived plants (disposed, given away, died).",
);
const PLANT_KEY: Arg = Arg::required("plant_key", KEY, "Plant key (from list_plants).");

pub static LIST_PLANTS: Tool = Tool {
    name: "list_plants",
    title: "List plants",
    description: "The garden's plants, oldest first: plant_key, name, species (key and name), \
                  place (site, location, slot keys), substrate batch, planting date, current \
                  phase key and name, run. `query` matches part of the plant name; archived \
                  plants only with include_archived. `matched` counts the plants matching, \
                  `total_in_tenant` every plant of the garden. Page with offset and limit.",
    permission: Permission::Read,
    scope: Scope::Tenant,
    args: &[
        Arg::optional(
            "query",
            ArgKind::Text { min: 1, max: 100 },
            "Part of the plant name (case-insensitive).",
        ),
        INCLUDE_ARCHIVED,
        args::offset(),
        args::limit(50, 200),
    ],
    rules: &[],
    run: tool_handler!(list_plants),
};

async fn list_plants(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let t = bound(ctx)?;
    let page = page(&args);
    let filter = Filter {
        name: args.text("query").map(|q| q.trim().to_owned()),
        archived: if args.flag("include_archived") {
            Archived::Include
        } else {
            Archived::Exclude
        },
        ..Filter::default()
    };
    let (items, matched, all) = service::list_plants_counted(ctx.state, t, &filter, page).await?;
    let items: Vec<Value> = items
        .iter()
        .map(|p| {
            let mut v = serde_json::to_value(p).unwrap_or(Value::Null);
            if let Some(m) = v.as_object_mut()
                && let Some(k) = m.remove("key")
            {
                m.insert("plant_key".into(), k);
            }
            compact(v, &["current_phase_key"])
        })
        .collect();
    let summary = format!(
        "{} (of {all} in the garden).",
        counted(items.len(), matched, "plant(s) matching")
    );
    let mut data = paged(items, matched, page);
    data["matched"] = json!(matched);
    data["total_in_tenant"] = json!(all);
    Ok(ToolOutput::new(summary, data)
        .link_api(format!("/api/v1/t/{}/plant-instances/", t.slug))
        .link_ui(format!("/t/{}/plants", t.slug)))
}

pub static GET_PLANT: Tool = Tool {
    name: "get_plant",
    title: "Get a plant",
    description: "One plant with everything resolved: species (key, scientific and common \
                  name), cultivar, place (site, location, slot), substrate batch and substrate \
                  (key, name, type), planting and removal dates, current_phase_key (null when \
                  it has no phase), phase_state (never_initialised, unresolved, between_cycles, \
                  in_phase) and, in a phase, its name, day count, expected remaining days and \
                  the next phase.",
    permission: Permission::Read,
    scope: Scope::Tenant,
    args: &[PLANT_KEY],
    rules: &[],
    run: tool_handler!(get_plant),
};

async fn get_plant(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let t = bound(ctx)?;
    let p = service::get_plant(ctx.state, t, args.key("plant_key")).await?;
    let summary = format!("{}.", describe(&p));
    Ok(plant_links(
        ToolOutput::new(summary, plant_data(&p)),
        t.slug.as_str(),
        p.key,
    ))
}

pub static LIST_PLANTS_AT_LOCATION: Tool = Tool {
    name: "list_plants_at_location",
    title: "Plants at a place",
    description: "The plants standing in a site, a location or a slot (name at least one; \
                  several narrow it down), oldest first, archived ones only with \
                  include_archived. Keys come from the place tools or from get_plant.",
    permission: Permission::Read,
    scope: Scope::Tenant,
    args: &[
        Arg::optional("site_key", KEY, "Site key."),
        Arg::optional("location_key", KEY, "Location key."),
        Arg::optional("slot_key", KEY, "Slot key."),
        INCLUDE_ARCHIVED,
        args::offset(),
        args::limit(200, 200),
    ],
    rules: &[ArgRule::AtLeastOne(&[
        "site_key",
        "location_key",
        "slot_key",
    ])],
    run: tool_handler!(list_plants_at_location),
};

async fn list_plants_at_location(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let t = bound(ctx)?;
    let site = uuid_arg(&args, "site_key", "site")?;
    let location = uuid_arg(&args, "location_key", "location")?;
    let slot = uuid_arg(&args, "slot_key", "slot")?;
    service::check_places(ctx.state, t, site, location, slot).await?;
    let page = page(&args);
    let filter = Filter {
        site_id: site,
        location_id: location,
        slot_id: slot,
        archived: if args.flag("include_archived") {
            Archived::Include
        } else {
            Archived::Exclude
        },
        ..Filter::default()
    };
    let listed = service::list_plants(ctx.state, t, &filter, page).await?;
    let items: Vec<Value> = listed
        .items
        .iter()
        .map(|p| compact(serde_json::to_value(p).unwrap_or(Value::Null), &[]))
        .collect();
    let summary = format!(
        "{} at this place.",
        counted(items.len(), listed.total, "plant(s)")
    );
    Ok(ToolOutput::new(summary, paged(items, listed.total, page))
        .link_api(format!("/api/v1/t/{}/plant-instances/", t.slug)))
}

pub static GET_PLANT_PHASE_STATUS: Tool = Tool {
    name: "get_plant_phase_status",
    title: "Phase status of a plant",
    description: "Where a plant stands in its species' phase sequence: phase_state, the current \
                  phase (key, name, days in phase, expected remaining days, terminal, harvest \
                  allowed, next phase), the sequence (key, name, cycle type, repeating), cycle \
                  number, whether any phase allows harvest, the number of transitions so far, \
                  and allowed_targets: the phase keys transition_plant_phase accepts now.",
    permission: Permission::Read,
    scope: Scope::Tenant,
    args: &[PLANT_KEY],
    rules: &[],
    run: tool_handler!(get_plant_phase_status),
};

async fn get_plant_phase_status(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let t = bound(ctx)?;
    let key = args.key("plant_key");
    let s = service::phase_status(ctx.state, t, key).await?;
    let summary = match &s.phase {
        Some(p) => format!(
            "In phase {} for {} day(s), about {} day(s) left; {} allowed next phase(s).",
            p.name,
            p.day_count,
            p.expected_remaining_days,
            s.allowed_targets.len()
        ),
        None => format!(
            "Phase state {}; {} phase(s) may be set.",
            s.phase_state.as_str(),
            s.allowed_targets.len()
        ),
    };
    let data = compact(
        serde_json::to_value(&s).unwrap_or(Value::Null),
        &["phase_key", "phase_state", "allowed_targets"],
    );
    Ok(ToolOutput::new(summary, data).link_api(format!(
        "/api/v1/t/{}/plant-instances/{}/phase",
        t.slug, s.plant_key
    )))
}

pub static GET_PLANT_PHASE_HISTORY: Tool = Tool {
    name: "get_plant_phase_history",
    title: "Phase history of a plant",
    description: "Every phase the plant went through, oldest first: phase key and name, \
                  sequence, cycle number, entered and exited timestamps, days in the phase, \
                  the reason and who made the change.",
    permission: Permission::Read,
    scope: Scope::Tenant,
    args: &[PLANT_KEY, args::offset(), args::limit(50, 200)],
    rules: &[],
    run: tool_handler!(get_plant_phase_history),
};

async fn get_plant_phase_history(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let t = bound(ctx)?;
    let key = args.key("plant_key");
    let page = page(&args);
    let h = service::phase_history(ctx.state, t, key, page).await?;
    let items: Vec<Value> = h
        .items
        .iter()
        .map(|e| {
            compact(
                serde_json::to_value(e).unwrap_or(Value::Null),
                &["exited_at"],
            )
        })
        .collect();
    let summary = format!("{}.", counted(items.len(), h.total, "phase record(s)"));
    Ok(
        ToolOutput::new(summary, paged(items, h.total, page)).link_api(format!(
            "/api/v1/t/{}/plant-instances/{key}/phase-history",
            t.slug
        )),
    )
}

pub static ARCHIVE_PLANT: Tool = Tool {
    name: "archive_plant",
    title: "Archive a plant",
    description: "Takes a plant out of the garden (disposed, given away or died); it leaves \
                  default listings and frees its slot, but is never deleted: its history stays. \
                  dry_run: true shows the result without changing anything.",
    permission: Permission::Write,
    scope: Scope::Tenant,
    args: &[
        PLANT_KEY,
        Arg::optional(
            "termination_type",
            ArgKind::Choice {
                values: &["disposed", "given_away", "died"],
                default: Some("disposed"),
            },
            "Why the plant left.",
        ),
    ],
    rules: &[],
    run: tool_handler!(archive_plant),
};

async fn archive_plant(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let t = bound(ctx)?;
    let reason = args
        .text("termination_type")
        .and_then(ArchiveReason::parse)
        .unwrap_or(ArchiveReason::Disposed);
    let p =
        service::archive_plant(ctx.state, t, args.key("plant_key"), reason, !ctx.dry_run).await?;
    let summary = if ctx.dry_run {
        format!(
            "Dry run: {} would be archived; nothing was changed.",
            p.name
        )
    } else {
        format!("{} is archived ({}).", p.name, reason.as_str())
    };
    Ok(plant_links(
        ToolOutput::new(summary, plant_data(&p)),
        t.slug.as_str(),
        p.key,
    ))
}

pub static SET_PLANT_LOCATION: Tool = Tool {
    name: "set_plant_location",
    title: "Move a plant",
    description: "Moves a plant to a location and optionally a slot (a slot alone names its \
                  location; site_key only checks that the location is in that site). Placing \
                  in a slot runs the crop-rotation check (same family in the slot within its \
                  window: 3 years, brassicas 4; pots and co-planting this season in a slot for \
                  several are exempt) and the companion check (established incompatible live \
                  neighbours); each refuses with validation.error (ROTATION_VIOLATION, \
                  INCOMPATIBLE_COMPANION) unless acknowledge_rotation / acknowledge_companions \
                  is true, which moves the plant and records the acknowledgement on it. \
                  Traditional (folklore) companion conflicts only come back as \
                  placement_warnings. validate_planting previews all of it. dry_run: true \
                  checks without moving.",
    permission: Permission::Write,
    scope: Scope::Tenant,
    args: &[
        PLANT_KEY,
        Arg::optional("site_key", KEY, "Site key (a check only)."),
        Arg::optional("location_key", KEY, "Location key."),
        Arg::optional("slot_key", KEY, "Slot key."),
        ACK_ROTATION,
        ACK_COMPANIONS,
    ],
    rules: &[ArgRule::AtLeastOne(&["location_key", "slot_key"])],
    run: tool_handler!(set_plant_location),
};

const ACK_ROTATION: Arg = Arg::optional(
    "acknowledge_rotation",
    ArgKind::Bool { default: false },
    "Place even though the slot held the same botanical family within its rotation window \
     (recorded on the plant).",
);
const ACK_COMPANIONS: Arg = Arg::optional(
    "acknowledge_companions",
    ArgKind::Bool { default: false },
    "Place even though an established incompatible companion stands next to the slot \
     (recorded on the plant).",
);

pub static VALIDATE_PLANTING: Tool = Tool {
    name: "validate_planting",
    title: "Check a planting before doing it",
    description: "What the crop-rotation and companion checks say about planting a species in \
                  a slot, or moving plant_key there: the rotation window and findings, each \
                  companion conflict with its evidence (established needs \
                  acknowledge_companions, traditional only warns) and source, the benefits, \
                  and which acknowledge flags a move or create would need. Writes nothing; \
                  the same answer as POST /plant-instances/validate-planting.",
    permission: Permission::Read,
    scope: Scope::Tenant,
    args: &[
        Arg::optional("species_key", KEY, "Species key (else the plant's)."),
        Arg::optional("plant_key", KEY, "The plant to be moved."),
        Arg::optional("location_key", KEY, "Location key."),
        Arg::optional("slot_key", KEY, "Slot key."),
    ],
    rules: &[
        ArgRule::AtLeastOne(&["species_key", "plant_key"]),
        ArgRule::AtLeastOne(&["location_key", "slot_key"]),
    ],
    run: tool_handler!(validate_planting),
};

async fn validate_planting(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let t = bound(ctx)?;
    let check = PlantingCheck {
        species_key: args.text("species_key").map(|s| s.trim().to_owned()),
        location_key: uuid_arg(&args, "location_key", "location")?,
        slot_key: uuid_arg(&args, "slot_key", "slot")?,
        plant_key: uuid_arg(&args, "plant_key", "plant")?,
    };
    let r = service::validate_planting(ctx.state, t, &check).await?;
    let summary = if r.allowed {
        format!(
            "The planting passes the checks ({} warning(s)).",
            r.warnings.len()
        )
    } else {
        format!(
            "The planting needs {} to go ahead ({} warning(s)).",
            r.needs_acknowledgement.join(" and "),
            r.warnings.len()
        )
    };
    Ok(
        ToolOutput::new(summary, serde_json::to_value(&r).unwrap_or(Value::Null)).link_api(
            format!("/api/v1/t/{}/plant-instances/validate-planting", t.slug),
        ),
    )
}

async fn set_plant_location(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let t = bound(ctx)?;
    let body = LocationBody {
        site_key: uuid_arg(&args, "site_key", "site")?,
        location_key: uuid_arg(&args, "location_key", "location")?,
        slot_key: uuid_arg(&args, "slot_key", "slot")?,
        acknowledge_rotation: args.flag("acknowledge_rotation"),
        acknowledge_companions: args.flag("acknowledge_companions"),
    };
    let p = service::set_location(ctx.state, t, args.key("plant_key"), &body, !ctx.dry_run).await?;
    let place = p
        .slot_code
        .clone()
        .or_else(|| p.location_name.clone())
        .unwrap_or_default();
    let summary = if ctx.dry_run {
        format!(
            "Dry run: {} may move to {place}; nothing was changed.",
            p.name
        )
    } else {
        format!("{} now stands at {place}.", p.name)
    };
    Ok(plant_links(
        ToolOutput::new(summary, plant_data(&p)),
        t.slug.as_str(),
        p.key,
    ))
}

pub static SET_PLANT_SUBSTRATE: Tool = Tool {
    name: "set_plant_substrate",
    title: "Set a plant's substrate",
    description: "Sets the substrate batch a plant grows in (a batch of this garden; a batch \
                  past its reuse limit is refused) and/or the substrate (catalogue key or \
                  `tenant:<uuid>` of the garden's own). What is not named stays. dry_run: true \
                  checks without changing.",
    permission: Permission::Write,
    scope: Scope::Tenant,
    args: &[
        PLANT_KEY,
        Arg::optional(
            "substrate_key",
            ArgKind::Text { min: 1, max: 100 },
            "Substrate key.",
        ),
        Arg::optional("substrate_batch_key", KEY, "Substrate batch key."),
    ],
    rules: &[ArgRule::AtLeastOne(&[
        "substrate_key",
        "substrate_batch_key",
    ])],
    run: tool_handler!(set_plant_substrate),
};

async fn set_plant_substrate(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let t = bound(ctx)?;
    let body = SubstrateBody {
        substrate_batch_key: uuid_arg(&args, "substrate_batch_key", "substrate batch")?,
        substrate_key: args.text("substrate_key").map(|s| s.trim().to_owned()),
    };
    let p =
        service::set_substrate(ctx.state, t, args.key("plant_key"), &body, !ctx.dry_run).await?;
    let what = p
        .substrate
        .as_ref()
        .and_then(|s| s.name.clone())
        .unwrap_or_else(|| "the named substrate".into());
    let summary = if ctx.dry_run {
        format!(
            "Dry run: {} may grow in {what}; nothing was changed.",
            p.name
        )
    } else {
        format!("{} now grows in {what}.", p.name)
    };
    Ok(plant_links(
        ToolOutput::new(summary, plant_data(&p)),
        t.slug.as_str(),
        p.key,
    ))
}

pub static TRANSITION_PLANT_PHASE: Tool = Tool {
    name: "transition_plant_phase",
    title: "Move a plant to another phase",
    description: "Puts a plant into a phase of the sequence its species runs on, or corrects an \
                  unresolved one: forward, back to a recurring phase, or the cycle restart of a \
                  repeating (perennial) sequence. Any other backward move is refused with \
                  PHASE_TRANSITION_INVALID unless force is true: then it is made and a warning \
                  is kept in the phase history (and returned in warnings). The same phase and a \
                  phase of another sequence are refused even with force. \
                  get_plant_phase_status lists the targets allowed without force. dry_run: \
                  true checks without changing.",
    permission: Permission::Write,
    scope: Scope::Tenant,
    args: &[
        PLANT_KEY,
        Arg::required(
            "target_phase_key",
            KEY,
            "Phase key of the species' sequence (see get_plant_phase_status).",
        ),
        Arg::optional(
            "reason",
            ArgKind::Paragraph { min: 1, max: 200 },
            "Why (default manual); stored in the history.",
        ),
        Arg::optional(
            "force",
            ArgKind::Bool { default: false },
            "true: make a backward move that is otherwise refused (a warning is kept).",
        ),
    ],
    rules: &[],
    run: tool_handler!(transition_plant_phase),
};

async fn transition_plant_phase(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let t = bound(ctx)?;
    let body = TransitionBody {
        target_phase_key: args.key("target_phase_key").to_owned(),
        reason: args.text("reason").map(str::to_owned),
        force: args.flag("force"),
    };
    let done = service::transition(
        ctx.state,
        t,
        args.key("plant_key"),
        &body,
        &actor(ctx),
        !ctx.dry_run,
    )
    .await?;
    let p = &done.plant;
    let phase = p.phase.as_ref().map_or("the phase", |ph| ph.name.as_str());
    let forced = if done.warning.is_some() {
        " with a warning: forced backward"
    } else {
        ""
    };
    let summary = if ctx.dry_run {
        format!(
            "Dry run: {} may move to {phase} ({}){forced}; nothing was changed.",
            p.name,
            done.kind.as_str()
        )
    } else {
        format!(
            "{} is now in {phase} ({}){forced}.",
            p.name,
            done.kind.as_str()
        )
    };
    let mut data = plant_data(p);
    data["from_phase_key"] = json!(done.from_phase_key);
    data["transition"] = json!(done.kind.as_str());
    data["warnings"] = json!(done.warning.into_iter().collect::<Vec<_>>());
    Ok(plant_links(
        ToolOutput::new(summary, data),
        t.slug.as_str(),
        p.key,
    ))
}
