//! Diary tools: the entry list (no free text), one entry, an agent's own text entry (never
//! queued for analysis), and the analysis queue (the pending list, claim under a lease, submit
//! a result; the disclaimer is the server's). They call the same services as the REST routes.

use serde_json::{Map, Value, json};
use time::Date;
use uuid::Uuid;

use super::shared::{actor, bound, key_arg, tool_error};
use super::view::{counted, page};
use crate::directory::AccountType;
use crate::garden::diary::model::{
    ACTION_MAX, ACTIONS_MAX, ANALYSIS_STATES, ANALYZED_PHOTOS_MAX, AnalysisFinding, ENTRY_TYPES,
    ERROR_MAX, EntryFilter, EntryInput, MODEL_MAX, RECIPE_VERSION_MAX, RESULT_STATUSES, TAG_MAX,
    TAGS_MAX, TITLE_MAX, WORKER_ID_MAX, entry_type_str, parse_entry_type,
};
use crate::garden::diary::service::{self, Author, QueueError, Submission};
use crate::mcp::args::{self, Arg, ArgKind, ArgRule, Args, KEY};
use crate::mcp::envelope::{ToolError, ToolErrorCode, ToolOutput};
use crate::mcp::registry::{Ctx, Permission, Scope, Tool};
use crate::rules::diary_analysis::{
    AnalysisState, LEASE_DEFAULT_SECONDS, LEASE_MAX_MINUTES, LEASE_MAX_SECONDS,
};
use crate::tool_handler;
use crate::values::json::parse_json;

const ENTRY_KEY: Arg = Arg::required("entry_key", KEY, "Diary entry key.");
const DATE: ArgKind = ArgKind::Date;

fn entry_link(slug: &str, key: impl std::fmt::Display) -> String {
    format!("/api/v1/t/{slug}/diary-entries/{key}")
}

/// The queue's refusals as the specification's tool error codes.
fn queue_error(err: QueueError) -> ToolError {
    match err {
        QueueError::App(e) => tool_error(e),
        QueueError::AlreadyClaimed { until, worker_id } => {
            let until = until.map(utc);
            ToolError::new(
                ToolErrorCode::AlreadyClaimed,
                format!(
                    "another agent holds a valid lease on this entry{}{}",
                    worker_id
                        .as_deref()
                        .map(|w| format!(" (worker {w})"))
                        .unwrap_or_default(),
                    until
                        .as_deref()
                        .map(|u| format!(" until {u}"))
                        .unwrap_or_default()
                ),
            )
            .with_details(json!({"lease_expires_at": until, "worker_id": worker_id}))
        }
        QueueError::NotQueued(state) => ToolError::new(
            ToolErrorCode::Conflict,
            format!(
                "the entry is not in the analysis queue (state: {}); only entries a user marked \
                 for analysis are",
                state.map_or("not marked", AnalysisState::as_str)
            ),
        ),
        QueueError::NotClaimed(state) => ToolError::new(
            ToolErrorCode::NotClaimed,
            format!(
                "the entry is not in progress (state: {}): claim it with claim_diary_analysis first",
                state.map_or("not marked", AnalysisState::as_str)
            ),
        ),
        QueueError::LeaseExpired => ToolError::new(
            ToolErrorCode::LeaseExpired,
            "the lease_token no longer matches the entry's lease (it ran out, or another claim \
             took over): claim the entry again",
        ),
    }
}

/// ISO 8601 in UTC with `Z`, as the diary tools write instants.
fn utc(t: time::OffsetDateTime) -> String {
    t.to_offset(time::UtcOffset::UTC)
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

fn date_arg(args: &Args, name: &str) -> Result<Option<Date>, ToolError> {
    let fmt = time::macros::format_description!("[year]-[month]-[day]");
    match args.text(name) {
        None => Ok(None),
        Some(raw) => Date::parse(raw, &fmt)
            .map(Some)
            .map_err(|_| ToolError::validation(name, "must be a date YYYY-MM-DD", "value_error")),
    }
}

fn with_key(v: Value, from: &str, to: &str) -> Value {
    let mut v = v;
    if let Some(m) = v.as_object_mut()
        && let Some(k) = m.remove(from)
    {
        m.insert(to.to_owned(), k);
    }
    v
}

// ---------- list_diary_entries ----------

pub static LIST_DIARY_ENTRIES: Tool = Tool {
    name: "list_diary_entries",
    title: "List diary entries",
    description: "The garden's diary entries, newest first (entry date, then when written), \
                  without their text (read one with get_diary_entry): entry key, plant or \
                  planting run, species, entry type, title, tags, measurements, entry date, author \
                  kind, how it was written (rest or mcp), photo count and analysis state. \
                  Filters: plant_key, species_key, entry_type, tag, analysis_state (requested \
                  includes entries whose lease ran out), date_from and date_to; no free-text \
                  search. Page with offset and limit.",
    permission: Permission::Read,
    scope: Scope::Tenant,
    args: &[
        Arg::optional("plant_key", KEY, "Only entries about this plant."),
        Arg::optional(
            "species_key",
            KEY,
            "Only entries about plants of this species.",
        ),
        Arg::optional(
            "entry_type",
            ArgKind::Choice {
                values: ENTRY_TYPES,
                default: None,
            },
            "Only entries of this type.",
        ),
        Arg::optional(
            "tag",
            ArgKind::Text {
                min: 1,
                max: TAG_MAX,
            },
            "Only entries carrying this tag (case-insensitive).",
        ),
        Arg::optional(
            "analysis_state",
            ArgKind::Choice {
                values: ANALYSIS_STATES,
                default: None,
            },
            "Only entries in this analysis state.",
        ),
        Arg::optional("date_from", DATE, "Entry date on or after (YYYY-MM-DD)."),
        Arg::optional("date_to", DATE, "Entry date on or before (YYYY-MM-DD)."),
        args::offset(),
        args::limit(20, 100),
    ],
    rules: &[],
    run: tool_handler!(list_diary_entries),
};

async fn list_diary_entries(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let tenant = bound(ctx)?;
    key_arg(&args, "plant_key", "plant")?;
    let from = date_arg(&args, "date_from")?;
    let to = date_arg(&args, "date_to")?;
    if let (Some(a), Some(b)) = (from, to)
        && a > b
    {
        return Err(ToolError::validation(
            "date_to",
            "must not lie before date_from",
            "value_error",
        ));
    }
    let filter = EntryFilter {
        plant: args.text("plant_key").and_then(|k| Uuid::parse_str(k).ok()),
        run: None,
        species: args.text("species_key").map(str::to_owned),
        entry_type: args.text("entry_type").and_then(parse_entry_type),
        tag: args.text("tag").map(str::to_lowercase),
        analysis_state: args.text("analysis_state").and_then(AnalysisState::parse),
        from,
        to,
    };
    let listed = service::list_entries(ctx.state, tenant, &filter, page(&args))
        .await
        .map_err(tool_error)?;
    let items: Vec<Value> = listed
        .items
        .iter()
        .map(|e| {
            with_key(
                serde_json::to_value(e).unwrap_or(Value::Null),
                "key",
                "entry_key",
            )
        })
        .collect();
    let summary = format!(
        "{} (text withheld; read one with get_diary_entry).",
        counted(items.len(), listed.total, "diary entr(ies)")
    );
    Ok(ToolOutput::new(
        summary,
        json!({"items": items, "count": items.len(), "total": listed.total}),
    )
    .link_api(format!("/api/v1/t/{}/diary-entries", tenant.slug.as_str())))
}

// ---------- get_diary_entry ----------

pub static GET_DIARY_ENTRY: Tool = Tool {
    name: "get_diary_entry",
    title: "A diary entry",
    description: "One diary entry whole: title (null when none), text, entry type, tags, \
                  measurements typed by a person \
                  (ec_ms_cm, ph, temperature_c, humidity_percent, height_cm, leaf_count and any \
                  further key), environment (device readings near the entry's time, kept \
                  apart from measurements: of each sensor at the plant's location or site the \
                  latest reading in the hour before, and the site's weather hour nearest it; \
                  each with origin location/site/weather, source, measured_at, metric, value, \
                  unit, sensor_key), environment_status (no_source: nothing measures the \
                  plant; unavailable: nothing reported then; null with readings), photos (descriptors; the images \
                  come from get_diary_entry_photos), pending (photos without a rendition: \
                  thumbnail_pending or unavailable), and the analysis: state (requested, \
                  in_progress, completed, failed), lease expiry and worker_id (the label the \
                  claimer gave its worker; both only while a lease runs) and the stored result \
                  (summary, findings, recommended_actions, analyzed_photo_ids, model, \
                  recipe_version, error) with its disclaimer. Never the lease token.",
    permission: Permission::Read,
    scope: Scope::Tenant,
    args: &[ENTRY_KEY],
    rules: &[],
    run: tool_handler!(get_diary_entry),
};

async fn get_diary_entry(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let tenant = bound(ctx)?;
    let key = args.key("entry_key");
    let (entry, analysis) = service::get_entry_with_analysis(ctx.state, tenant, key)
        .await
        .map_err(tool_error)?;
    let mut data = with_key(
        serde_json::to_value(&entry).unwrap_or(Value::Null),
        "key",
        "entry_key",
    );
    data["analysis"] = serde_json::to_value(&analysis).unwrap_or(Value::Null);
    if let Some(m) = data["analysis"].as_object_mut() {
        m.remove("entry_key");
    }
    let state = entry.analysis_state.as_deref().unwrap_or("not marked");
    let about = match (entry.plant_key, entry.run_key) {
        (Some(p), _) => format!("plant {p}"),
        (_, Some(r)) => format!("planting run {r}"),
        _ => "the garden".to_owned(),
    };
    let summary = format!(
        "{} entry of {} about {about}: {} photo(s), {} pending; analysis {state}.",
        entry_type_str(entry.entry_type),
        entry.entry_date,
        entry.photos.len(),
        entry.pending.len()
    );
    Ok(ToolOutput::new(summary, data).link_api(entry_link(tenant.slug.as_str(), entry.key)))
}

// ---------- add_plant_diary_entry ----------

pub static ADD_PLANT_DIARY_ENTRY: Tool = Tool {
    name: "add_plant_diary_entry",
    title: "Write a diary entry about a plant",
    description: "Writes a text entry (no photos) in a plant's diary, authored by this account. \
                  Entries written here are never queued for analysis (only a person marks \
                  entries, in the web UI). title is optional (one line, up to 200 characters; \
                  leave it out for none). entry_type defaults to note; tags are a JSON array \
                  (up to 20 of 1-50 characters, stored in lower case); the text keeps its line \
                  breaks; entry_date defaults to today and may not lie in the future. dry_run: true \
                  checks everything and stores nothing.",
    permission: Permission::Write,
    scope: Scope::Tenant,
    args: &[
        Arg::required("plant_key", KEY, "The plant the entry is about."),
        Arg::optional(
            "title",
            ArgKind::Text {
                min: 1,
                max: TITLE_MAX,
            },
            "A title, one line of up to 200 characters (leave it out for none).",
        ),
        Arg::required(
            "text",
            ArgKind::Paragraph {
                min: 1,
                max: 10_000,
            },
            "The entry, 1 to 10000 characters; paragraphs and line breaks are kept.",
        ),
        Arg::optional(
            "entry_type",
            ArgKind::Choice {
                values: ENTRY_TYPES,
                default: Some("note"),
            },
            "observation, measurement, care, problem, harvest, milestone or note.",
        ),
        Arg::optional(
            "tags",
            ArgKind::TextList {
                item_min: 1,
                item_max: TAG_MAX,
                min: 0,
                max: TAGS_MAX,
            },
            "Tags as a JSON array, e.g. [\"yellow leaves\", \"week 3\"] (stored in lower case).",
        ),
        Arg::optional(
            "measurements",
            ArgKind::Measurements,
            "Measurements, e.g. {\"ph\": 6.2, \"height_cm\": 41}: ec_ms_cm 0-20, ph 0-14, \
             temperature_c -50-70, humidity_percent 0-100, height_cm >= 0, leaf_count a whole \
             number; other lowercase names hold a number, true/false or a short text (up to 20).",
        ),
        Arg::optional(
            "entry_date",
            DATE,
            "YYYY-MM-DD, not in the future (default today).",
        ),
    ],
    rules: &[],
    run: tool_handler!(add_plant_diary_entry),
};

async fn add_plant_diary_entry(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let tenant = bound(ctx)?;
    key_arg(&args, "plant_key", "plant")?;
    let map: Map<String, Value> = args.acting();
    let bytes = serde_json::to_vec(&Value::Object(map)).unwrap_or_default();
    let new: EntryInput = parse_json(&bytes).map_err(tool_error)?;
    let author = Author {
        id: ctx.principal.user_id,
        kind: if ctx.principal.account_type == AccountType::Service {
            "service"
        } else {
            "user"
        },
        via: "mcp",
    };
    let entry = service::create_entry(ctx.state, tenant, &new, &author, !ctx.dry_run)
        .await
        .map_err(tool_error)?;
    let line = format!(
        "{} entry of {} about plant {}",
        entry_type_str(entry.entry_type),
        entry.entry_date,
        args.key("plant_key")
    );
    let mut data = with_key(
        serde_json::to_value(&entry).unwrap_or(Value::Null),
        "key",
        "entry_key",
    );
    if ctx.dry_run {
        if let Some(m) = data.as_object_mut() {
            m.remove("entry_key");
        }
        return Ok(ToolOutput::new(
            format!("Dry run: the {line} can be written; nothing was stored."),
            data,
        ));
    }
    Ok(ToolOutput::new(
        format!("Wrote the {line} (never queued for analysis)."),
        data,
    )
    .link_api(entry_link(tenant.slug.as_str(), entry.key)))
}

// ---------- list_pending_diary_analyses ----------

pub static LIST_PENDING_DIARY_ANALYSES: Tool = Tool {
    name: "list_pending_diary_analyses",
    title: "Diary entries waiting for analysis",
    description: "The work queue: diary entries a user marked for analysis (with consent) that \
                  no agent holds a valid lease on, oldest request first, without their text \
                  (title shown). lease_lapsed: an agent claimed it before and its lease ran out \
                  without a result; include_stale: false leaves those out (only entries never \
                  claimed). Take one with claim_diary_analysis, read it with get_diary_entry, \
                  answer with submit_diary_analysis.",
    permission: Permission::Read,
    scope: Scope::Tenant,
    args: &[
        Arg::optional(
            "include_stale",
            ArgKind::Bool { default: true },
            "Also entries whose lease ran out without a result (default true); false: only \
             entries never claimed.",
        ),
        args::offset(),
        args::limit(20, 100),
    ],
    rules: &[],
    run: tool_handler!(list_pending_diary_analyses),
};

async fn list_pending_diary_analyses(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let tenant = bound(ctx)?;
    let include_stale = args.flag("include_stale");
    let listed = service::list_pending(ctx.state, tenant, include_stale, page(&args))
        .await
        .map_err(tool_error)?;
    let items: Vec<Value> = listed
        .items
        .iter()
        .map(|p| serde_json::to_value(p).unwrap_or(Value::Null))
        .collect();
    let summary = format!(
        "{} waiting for analysis{}.",
        counted(items.len(), listed.total, "diary entr(ies)"),
        if include_stale {
            ""
        } else {
            " (never claimed; lapsed leases left out)"
        }
    );
    Ok(ToolOutput::new(
        summary,
        json!({"items": items, "count": items.len(), "total": listed.total,
               "include_stale": include_stale}),
    )
    .link_api(format!(
        "/api/v1/t/{}/diary-entries?analysis_state=requested",
        tenant.slug.as_str()
    )))
}

// ---------- claim_diary_analysis ----------

pub static CLAIM_DIARY_ANALYSIS: Tool = Tool {
    name: "claim_diary_analysis",
    title: "Claim a diary entry for analysis",
    description: "Takes a lease on an entry of the analysis queue (state requested, or in \
                  progress with a lease that ran out): the entry turns in_progress and the \
                  answer carries a lease_token, shown once, to send with \
                  submit_diary_analysis before lease_expires_at. The lease length is \
                  lease_seconds (1-3600) or lease_minutes (1-60), not both; default 15 minutes; \
                  a lease that runs out puts the entry back in the queue. worker_id: your own \
                  label for the worker holding the lease, shown with it (get_diary_entry) until \
                  it ends. An entry under another valid lease is conflict.already_claimed \
                  (details name its lease_expires_at and worker_id); one that is not in \
                  the queue (never marked, completed, failed) is conflict.state. dry_run: true \
                  checks the claim and takes no lease.",
    permission: Permission::Write,
    scope: Scope::Tenant,
    args: &[
        ENTRY_KEY,
        Arg::optional(
            "worker_id",
            ArgKind::Text {
                min: 1,
                max: WORKER_ID_MAX,
            },
            "Your label for the worker holding the lease (one line, up to 200 characters); \
             shown with the lease until it ends.",
        ),
        Arg::optional(
            "lease_seconds",
            ArgKind::Int {
                min: 1,
                max: LEASE_MAX_SECONDS,
                default: Some(LEASE_DEFAULT_SECONDS),
            },
            "Lease length in seconds (default 900, at most 3600). Not with lease_minutes.",
        ),
        Arg::optional(
            "lease_minutes",
            ArgKind::Int {
                min: 1,
                max: LEASE_MAX_MINUTES,
                default: None,
            },
            "Lease length in minutes (1-60; the default is 15). Not with lease_seconds.",
        ),
    ],
    rules: &[ArgRule::Excludes {
        arg: "lease_seconds",
        with: "lease_minutes",
    }],
    run: tool_handler!(claim_diary_analysis),
};

async fn claim_diary_analysis(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let tenant = bound(ctx)?;
    let key = args.key("entry_key");
    // The table lets at most one of the two through; lease_seconds carries the default.
    let seconds = match args.int("lease_minutes") {
        Some(m) => m * 60,
        None => args.int("lease_seconds").unwrap_or(LEASE_DEFAULT_SECONDS),
    };
    let lease = service::claim(
        ctx.state,
        tenant,
        key,
        ctx.principal.user_id,
        seconds,
        args.text("worker_id"),
        !ctx.dry_run,
    )
    .await
    .map_err(queue_error)?;
    let until = utc(lease.lease_expires_at);
    // Whole minutes stay integers (what clients of lease_minutes read before).
    let minutes = if lease.lease_seconds % 60 == 0 {
        json!(lease.lease_seconds / 60)
    } else {
        json!(lease.lease_seconds as f64 / 60.0)
    };
    let data = json!({
        "entry_key": lease.entry_key,
        "lease_token": lease.lease_token,
        "lease_expires_at": until,
        "lease_seconds": lease.lease_seconds,
        "lease_minutes": minutes,
        "worker_id": lease.worker_id,
        "took_over_lapsed_lease": lease.took_over,
        "analysis_state": "in_progress",
    });
    let link = entry_link(tenant.slug.as_str(), lease.entry_key);
    if ctx.dry_run {
        return Ok(ToolOutput::new(
            format!(
                "Dry run: the entry can be claimed for {} second(s); no lease was taken.",
                lease.lease_seconds
            ),
            data,
        )
        .link_api(link));
    }
    Ok(ToolOutput::new(
        format!(
            "Claimed the entry until {until}: read it with get_diary_entry and send the result \
             with submit_diary_analysis and this lease_token before then."
        ),
        data,
    )
    .link_api(link))
}

// ---------- submit_diary_analysis ----------

const FINDING_FIELDS: &[Arg] = &[
    Arg::required(
        "finding",
        ArgKind::Text { min: 1, max: 500 },
        "What was found (up to 500 characters).",
    ),
    Arg::required(
        "confidence",
        ArgKind::Number {
            min: 0.0,
            max: 1.0,
            default: None,
        },
        "How sure, 0.0-1.0.",
    ),
    Arg::optional(
        "category",
        ArgKind::Text { min: 1, max: 100 },
        "A catalogue key or a short category (pest, disease, deficiency, ...).",
    ),
    Arg::optional(
        "detail",
        ArgKind::Paragraph { min: 1, max: 2000 },
        "Why (up to 2000 characters).",
    ),
];

pub static SUBMIT_DIARY_ANALYSIS: Tool = Tool {
    name: "submit_diary_analysis",
    title: "Submit a diary analysis",
    description: "Stores the result of a claimed entry and ends the lease: status completed \
                  (summary required, no error) or failed (error: the reason; a summary alone \
                  is still accepted as the reason), up to 25 findings each with confidence \
                  0.0-1.0, up to 10 recommended_actions, analyzed_photo_ids (up to 5 ids of \
                  this entry's photos; any other id refuses the submission), model and \
                  recipe_version (your own labels). Needs the lease_token of claim_diary_analysis \
                  before the lease runs out: an entry not in progress (never claimed, already \
                  submitted) is conflict.not_claimed; a lease that ran out or was taken over is \
                  conflict.lease_expired. The server stores its own disclaimer with the \
                  result; it cannot be omitted or changed. The grower reads the result in the \
                  web UI. dry_run: true checks everything and stores nothing.",
    permission: Permission::Write,
    scope: Scope::Tenant,
    args: &[
        ENTRY_KEY,
        Arg::required(
            "lease_token",
            ArgKind::Text { min: 1, max: 200 },
            "The lease_token claim_diary_analysis returned.",
        ),
        Arg::required(
            "status",
            ArgKind::Choice {
                values: RESULT_STATUSES,
                default: None,
            },
            "completed or failed.",
        ),
        Arg::optional(
            "summary",
            ArgKind::Paragraph { min: 1, max: 4000 },
            "The analysis in short (required when completed; when failed, error says why).",
        ),
        Arg::optional(
            "error",
            ArgKind::Paragraph {
                min: 1,
                max: ERROR_MAX,
            },
            "Why the analysis failed (required when failed unless summary says it; not with \
             completed).",
        ),
        Arg::optional(
            "findings",
            ArgKind::ObjectList {
                fields: FINDING_FIELDS,
                rules: &[],
                min: 0,
                max: 25,
            },
            "Up to 25 findings.",
        ),
        Arg::optional(
            "recommended_actions",
            ArgKind::TextList {
                item_min: 1,
                item_max: ACTION_MAX,
                min: 0,
                max: ACTIONS_MAX,
            },
            "What the grower could do next: a JSON array of up to 10 lines of up to 500 \
             characters.",
        ),
        Arg::optional(
            "analyzed_photo_ids",
            ArgKind::IdList {
                min: 0,
                max: ANALYZED_PHOTOS_MAX,
            },
            "The photos you looked at: up to 5 ids from the entry's photos (get_diary_entry).",
        ),
        Arg::optional(
            "model",
            ArgKind::Text {
                min: 1,
                max: MODEL_MAX,
            },
            "The model that made the analysis, as you name it (up to 200 characters).",
        ),
        Arg::optional(
            "recipe_version",
            ArgKind::Text {
                min: 1,
                max: RECIPE_VERSION_MAX,
            },
            "Your version of the analysis recipe (up to 50 characters).",
        ),
    ],
    rules: &[],
    run: tool_handler!(submit_diary_analysis),
};

async fn submit_diary_analysis(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let tenant = bound(ctx)?;
    let status = args
        .text("status")
        .and_then(AnalysisState::parse)
        .unwrap_or(AnalysisState::Failed);
    let summary = args.text("summary").map(str::to_owned);
    let findings: Vec<AnalysisFinding> = args
        .items("findings")
        .iter()
        .map(|f| AnalysisFinding {
            finding: f.key("finding").to_owned(),
            confidence: f.number("confidence").unwrap_or_default(),
            category: f.text("category").map(str::to_owned),
            detail: f.text("detail").map(str::to_owned),
        })
        .collect();
    let owned = |name: &str| args.text(name).map(str::to_owned);
    let sub = Submission {
        lease_token: args.key("lease_token").to_owned(),
        status,
        summary,
        findings,
        recommended_actions: args
            .texts("recommended_actions")
            .into_iter()
            .map(str::to_owned)
            .collect(),
        analyzed_photo_ids: args.ids("analyzed_photo_ids"),
        model: owned("model"),
        recipe_version: owned("recipe_version"),
        error: owned("error"),
    };
    let key = args.key("entry_key");
    let analysis = service::submit(ctx.state, tenant, key, &sub, &actor(ctx), !ctx.dry_run)
        .await
        .map_err(queue_error)?;
    let data = serde_json::to_value(&analysis).unwrap_or(Value::Null);
    let link = format!(
        "{}/analysis",
        entry_link(tenant.slug.as_str(), analysis.entry_key)
    );
    let line = format!(
        "the {} analysis with {} finding(s)",
        status.as_str(),
        sub.findings.len()
    );
    if ctx.dry_run {
        return Ok(ToolOutput::new(
            format!("Dry run: {line} can be stored; nothing was written and the lease still runs."),
            data,
        )
        .link_api(link));
    }
    Ok(ToolOutput::new(
        format!("Stored {line}; the lease ended. The grower sees it with the server's disclaimer."),
        data,
    )
    .link_api(link))
}
