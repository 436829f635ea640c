//! Phase tools: phase definitions, sequences, the sequence and lifecycle of a species, the
//! reverse lookup, and the one setup tool that rebinds a species to a sequence.

use serde_json::{Value, json};

use super::view::{Names, compact, counted, page, paged, record};
use crate::catalog::engine::service::{self, ListParams};
use crate::catalog::phases::model::{PHASE, ResolvedSequence};
use crate::catalog::phases::service as phases;
use crate::catalog::species::service::{self as species, SequenceSource, SpeciesSequence};
use crate::mcp::args::{self, Arg, ArgKind, Args, KEY};
use crate::mcp::envelope::{ToolError, ToolOutput};
use crate::mcp::registry::{Ctx, Permission, Scope, Tool};
use crate::tool_handler;

/// A sequence as the tools show it: its shape facts, and its ordered phases when asked.
fn sequence_view(s: &ResolvedSequence, with_entries: bool) -> Value {
    // `key` as the REST routes name it, `sequence_key` as the tools' arguments do.
    let mut v = json!({
        "sequence_key": s.key,
        "key": s.key,
        "name": s.name,
        "display_name_en": s.display_name_en,
        "display_name_de": s.display_name_de,
        "cycle_type": s.cycle_type,
        "is_repeating": s.is_repeating,
        "rest_period_required": s.rest_period_required,
        "cycle_restart_entry_order": s.cycle_restart_entry_order,
        "entry_count": s.entries.len(),
        "total_duration_days": s.total_duration_days,
        "has_harvest_phase": s.entries.iter().any(|e| e.allows_harvest),
        "terminates_in_harvest": s.terminates_in_harvest,
    });
    if with_entries {
        v["entries"] = s
            .entries
            .iter()
            .map(|e| {
                compact(
                    json!({
                        "sequence_order": e.order,
                        "phase_key": e.phase_key,
                        "name": e.phase_name,
                        "display_name_en": e.display_name_en,
                        "display_name_de": e.display_name_de,
                        "effective_duration_days": e.effective_duration_days,
                        "is_terminal": e.terminal,
                        "allows_harvest": e.allows_harvest,
                        "is_recurring": e.recurring,
                    }),
                    &[],
                )
            })
            .collect();
    }
    compact(v, &["cycle_restart_entry_order"])
}

fn source_str(s: SequenceSource) -> &'static str {
    match s {
        SequenceSource::Bound => "bound",
        SequenceSource::Selected => "selected",
    }
}

/// "annual_harvest (bound)" or "evergreen_foliage_perennial (selected by rule 7)".
fn origin(s: &SpeciesSequence) -> String {
    match (s.source, s.rule) {
        (SequenceSource::Selected, Some(rule)) => {
            format!("{} (selected by rule {rule})", s.sequence.name)
        }
        (source, _) => format!("{} ({})", s.sequence.name, source_str(source)),
    }
}

/// "annual, not repeating, 3 phases over 51 days"
fn shape(s: &ResolvedSequence) -> String {
    format!(
        "{}, {}, {} phase(s) over {} days",
        if s.cycle_type.is_empty() {
            "unknown cycle"
        } else {
            &s.cycle_type
        },
        if s.is_repeating {
            "repeating"
        } else {
            "not repeating"
        },
        s.entries.len(),
        s.total_duration_days
    )
}

fn species_sequence_data(s: &SpeciesSequence) -> Value {
    json!({
        "species_key": s.species_key,
        "source": source_str(s.source),
        "rule": s.rule,
        "sequence": sequence_view(&s.sequence, true),
    })
}

async fn species_name(ctx: &Ctx<'_>, key: &str) -> Result<String, ToolError> {
    let names = Names::of(ctx.state, uuid::Uuid::parse_str(key).ok()).await?;
    Ok(names.get(key).unwrap_or(key).to_owned())
}

pub static LIST_PHASE_DEFINITIONS: Tool = Tool {
    name: "list_phase_definitions",
    title: "Phase definitions",
    description: "The reusable growth-phase building blocks (germination, seedling, vegetative, \
                  flowering, ripening, dormancy, …) that phase sequences are assembled from: \
                  phase_key, name, display names, typical duration in days, stress tolerance and \
                  watering interval. `name_filter` matches part of the name or display name.",
    permission: Permission::Read,
    scope: Scope::Global,
    args: &[
        Arg::optional(
            "name_filter",
            ArgKind::Text { min: 1, max: 100 },
            "Part of a phase name or display name (case-insensitive).",
        ),
        args::offset(),
        args::limit(50, 200),
    ],
    rules: &[],
    run: tool_handler!(list_phase_definitions),
};

async fn list_phase_definitions(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let page = page(&args);
    let params = ListParams {
        q: args.text("name_filter").map(str::to_owned),
        filters: Vec::new(),
    };
    let listed = service::list(ctx.state, &PHASE, &params, None, page).await?;
    let items: Vec<Value> = listed
        .items
        .into_iter()
        .map(|p| compact(Value::Object(record(p, "phase_key")), &[]))
        .collect();
    let summary = format!(
        "{}.",
        counted(items.len(), listed.total, "phase definition(s)")
    );
    Ok(ToolOutput::new(summary, paged(items, listed.total, page)).link_api("/api/v1/phases"))
}

pub static GET_SPECIES_PHASE_SEQUENCE: Tool = Tool {
    name: "get_species_phase_sequence",
    title: "Phase sequence of a species",
    description: "The growth-phase sequence a species runs on, which drives the schedule of \
                  every plant of it: source `bound` (set explicitly) or `selected` (by the \
                  selection rules, with the rule number), the cycle type, whether it repeats, \
                  whether a rest period is required, total length, whether it ends in a \
                  terminal harvest, and the ordered phases with effective duration and the \
                  flags is_terminal and allows_harvest. Use it to check that a perennial is not \
                  scheduled like a 4-month vegetable; fix a wrong one with \
                  assign_species_phase_sequence.",
    permission: Permission::Read,
    scope: Scope::Global,
    args: &[Arg::required("species_key", KEY, "Species key.")],
    rules: &[],
    run: tool_handler!(get_species_phase_sequence),
};

async fn get_species_phase_sequence(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let key = args.key("species_key");
    let seq = species::phase_sequence_of(ctx.state, key).await?;
    let name = species_name(ctx, key).await?;
    let mut summary = format!("{name} runs on {}: {}", origin(&seq), shape(&seq.sequence));
    if seq.sequence.terminates_in_harvest {
        summary.push_str(", ending in a terminal harvest");
    }
    summary.push('.');
    Ok(ToolOutput::new(summary, species_sequence_data(&seq))
        .link_api(format!("/api/v1/species/{key}/phase-sequence"))
        .link_ui(format!("/species/{key}")))
}

pub static LIST_PHASE_SEQUENCES: Tool = Tool {
    name: "list_phase_sequences",
    title: "Phase sequences",
    description: "The catalogue of phase sequences (annual_harvest, evergreen_foliage_perennial, \
                  cam_succulent_rest, …) with the facts to pick one by: cycle type, repeating, \
                  rest period, number of phases, total days, whether any phase allows harvest and \
                  whether the cycle ends in a terminal harvest. `query` matches part of the name \
                  or display name; include_entries adds each sequence's ordered phases. Use the \
                  sequence_key with assign_species_phase_sequence or \
                  list_species_by_phase_sequence.",
    permission: Permission::Read,
    scope: Scope::Global,
    args: &[
        Arg::optional(
            "query",
            ArgKind::Text { min: 1, max: 100 },
            "Part of a sequence name or display name (case-insensitive).",
        ),
        Arg::optional(
            "include_entries",
            ArgKind::Bool { default: false },
            "Include each sequence's ordered phases.",
        ),
        args::offset(),
        args::limit(25, 100),
    ],
    rules: &[],
    run: tool_handler!(list_phase_sequences),
};

async fn list_phase_sequences(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let page = page(&args);
    let params = ListParams {
        q: args.text("query").map(str::to_owned),
        filters: Vec::new(),
    };
    let (sequences, total) = phases::list_resolved(ctx.state, &params, page).await?;
    let with_entries = args.flag("include_entries");
    let items: Vec<Value> = sequences
        .iter()
        .map(|s| sequence_view(s, with_entries))
        .collect();
    let summary = format!("{}.", counted(items.len(), total, "phase sequence(s)"));
    Ok(ToolOutput::new(summary, paged(items, total, page)).link_api("/api/v1/phase-sequences"))
}

pub static LIST_SPECIES_BY_PHASE_SEQUENCE: Tool = Tool {
    name: "list_species_by_phase_sequence",
    title: "Species on a phase sequence",
    description: "The reverse lookup: every species that runs on one phase sequence, whether \
                  bound to it explicitly (source `bound`) or given it by the selection rules \
                  (source `selected`, with the rule). A sequence carrying an odd mix of species \
                  (a tree next to leeks) points at a wrong assignment.",
    permission: Permission::Read,
    scope: Scope::Global,
    args: &[
        Arg::required(
            "sequence_key",
            KEY,
            "Phase sequence key (from list_phase_sequences).",
        ),
        args::offset(),
        args::limit(100, 100),
    ],
    rules: &[],
    run: tool_handler!(list_species_by_phase_sequence),
};

async fn list_species_by_phase_sequence(
    ctx: &Ctx<'_>,
    args: Args,
) -> Result<ToolOutput, ToolError> {
    let key = args.key("sequence_key");
    let page = page(&args);
    let (sequence, on, total) = species::species_on_sequence(ctx.state, key, page).await?;
    let items: Vec<Value> = on
        .iter()
        .map(|s| compact(serde_json::to_value(s).unwrap_or(Value::Null), &["rule"]))
        .collect();
    let summary = format!(
        "{} run(s) on {} ({}).",
        counted(items.len(), total, "species"),
        sequence.name,
        shape(&sequence)
    );
    let mut data = paged(items, total, page);
    data["sequence"] = sequence_view(&sequence, false);
    Ok(ToolOutput::new(summary, data).link_api(format!("/api/v1/phase-sequences/{key}")))
}

pub static GET_SPECIES_LIFECYCLE: Tool = Tool {
    name: "get_species_lifecycle",
    title: "Lifecycle of a species",
    description: "What the catalogue says about a species' lifecycle: botanical cycle type \
                  (annual, biennial, perennial), cultivation cycle type (a perennial grown as an \
                  annual), the effective one, flowering strategy (monocarpic/polycarpic), \
                  photoperiod, photosynthesis type and growth habit, with the phase sequence \
                  this gives. `lifecycle: null` is a finding, not an error: nothing is \
                  recorded, so the sequence comes from the selection rules' safe fallback.",
    permission: Permission::Read,
    scope: Scope::Global,
    args: &[Arg::required("species_key", KEY, "Species key.")],
    rules: &[],
    run: tool_handler!(get_species_lifecycle),
};

async fn get_species_lifecycle(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let key = args.key("species_key");
    let (record_value, lifecycle, seq) = species::lifecycle_of(ctx.state, key).await?;
    let name = record_value
        .get("scientific_name")
        .and_then(Value::as_str)
        .unwrap_or(key)
        .to_owned();
    let sequence = json!({
        "sequence_key": seq.sequence.key,
        "name": seq.sequence.name,
        "source": source_str(seq.source),
        "rule": seq.rule,
        "is_repeating": seq.sequence.is_repeating,
        "rest_period_required": seq.sequence.rest_period_required,
        "terminates_in_harvest": seq.sequence.terminates_in_harvest,
    });
    let summary = match &lifecycle {
        Some(l) => format!(
            "{name} is {}{}; it runs on {}.",
            l.effective_cycle_type,
            match (&l.cycle_type, &l.cultivation_cycle_type) {
                (Some(botanical), Some(_)) => format!(" in cultivation ({botanical} botanically)"),
                _ => String::new(),
            },
            origin(&seq)
        ),
        None => format!(
            "{name} has no lifecycle recorded (no cycle type), so its phase sequence comes from \
             the selection rules alone: {}.",
            origin(&seq)
        ),
    };
    let lifecycle = lifecycle
        .map(|l| compact(serde_json::to_value(l).unwrap_or(Value::Null), &[]))
        .unwrap_or(Value::Null);
    Ok(ToolOutput::new(
        summary,
        json!({
            "species_key": key,
            "scientific_name": name,
            "lifecycle": lifecycle,
            "phase_sequence": sequence,
        }),
    )
    .link_api(format!("/api/v1/species/{key}"))
    .link_ui(format!("/species/{key}")))
}

pub static ASSIGN_SPECIES_PHASE_SEQUENCE: Tool = Tool {
    name: "assign_species_phase_sequence",
    title: "Bind a species to a phase sequence",
    description: "Binds a species to a phase sequence, replacing the bound or rule-selected one. \
                  This is catalogue-wide: the schedule of every plant of the species in every \
                  garden follows at once. Returns the sequence now in force (as \
                  get_species_phase_sequence shows it) and replaced_sequence_key. Check the \
                  candidates with list_phase_sequences first; dry_run: true shows the result \
                  without changing anything. Needs mcp.setup in the platform garden \
                  (platform administrators): a garden's own admin role does not reach shared \
                  master data.",
    permission: Permission::Setup,
    scope: Scope::Platform,
    args: &[
        Arg::required("species_key", KEY, "Species key."),
        Arg::required(
            "sequence_key",
            KEY,
            "Phase sequence key (from list_phase_sequences).",
        ),
    ],
    rules: &[],
    run: tool_handler!(assign_species_phase_sequence),
};

async fn assign_species_phase_sequence(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let key = args.key("species_key");
    let change = species::assign_phase_sequence(
        ctx.state,
        key,
        Some(args.key("sequence_key")),
        !ctx.dry_run,
    )
    .await?;
    let name = species_name(ctx, key).await?;
    let mut data = species_sequence_data(&change.after);
    data["replaced_sequence_key"] = json!(change.before.sequence.key);
    data["replaced_sequence_name"] = json!(change.before.sequence.name);
    data["replaced_source"] = json!(source_str(change.before.source));
    let summary = if ctx.dry_run {
        format!(
            "Dry run: {name} would run on {} instead of {}: {}; nothing was changed.",
            change.after.sequence.name,
            origin(&change.before),
            shape(&change.after.sequence)
        )
    } else {
        format!(
            "{name} now runs on {} instead of {}: {}; every plant of the species follows it.",
            change.after.sequence.name,
            origin(&change.before),
            shape(&change.after.sequence)
        )
    };
    Ok(ToolOutput::new(summary, data)
        .link_api(format!("/api/v1/species/{key}/phase-sequence"))
        .link_ui(format!("/species/{key}")))
}
