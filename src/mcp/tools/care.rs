//! Care tools: due reminders grouped by urgency, a plant's care log, and confirming a
//! reminder. They call the same care service as `/t/{slug}/care-reminders`.

use serde_json::{Value, json};

use super::shared::{actor, bound, tool_error};
use crate::garden::care::model::{CareLogEntry, Reminder};
use crate::garden::care::service::{self, CareAction, Target};
use crate::http::pagination::PageRequest;
use crate::mcp::args::{Arg, ArgKind, Args, KEY, NOTES};
use crate::mcp::envelope::{ToolError, ToolOutput};
use crate::mcp::registry::{Ctx, Permission, Scope, Tool};
use crate::rules::care::URGENCY_FILTERS;
use crate::tool_handler;

const REMINDER_TYPES: &[&str] = &[
    "watering",
    "fertilizing",
    "repotting",
    "pruning",
    "pest_check",
    "overwintering",
];

fn reminder_line(r: &Reminder) -> String {
    format!("{} {} (due {})", r.plant_name, r.reminder_type, r.due_on)
}

pub static GET_DUE_CARE_TASKS: Tool = Tool {
    name: "get_due_care_tasks",
    title: "Due care reminders",
    description: "Care reminders of the garden's live plants (watering, fertilizing, \
                  repotting, pruning, pest_check, overwintering), grouped by urgency: overdue \
                  (due before today), due_today, upcoming (in 1-2 days), not_due. `urgency`: \
                  actionable (default: overdue and due_today), all, or one bucket. Each entry \
                  has reminder_key, plant_key, plant_name, reminder_type, due_on, \
                  days_until_due and interval_days. `watering_withheld` lists plants whose \
                  phase holds watering back (dry_rest, leaf_renewal, dormancy) with the \
                  reason; winter rest still waters, less often. Confirm with confirm_care_task.",
    permission: Permission::Read,
    scope: Scope::Tenant,
    args: &[
        Arg::optional(
            "urgency",
            ArgKind::Choice {
                values: URGENCY_FILTERS,
                default: Some("actionable"),
            },
            "actionable (overdue and due today), all, overdue, due_today, upcoming or not_due.",
        ),
        Arg::optional(
            "offset",
            ArgKind::Int {
                min: 0,
                max: 100_000,
                default: Some(0),
            },
            "Reminders to skip at the start of each group.",
        ),
        Arg::optional(
            "limit",
            ArgKind::Int {
                min: 1,
                max: service::DUE_MAX_LIMIT,
                default: Some(100),
            },
            "Most reminders listed per group; `counts` tells how many each group holds.",
        ),
    ],
    rules: &[],
    run: tool_handler!(get_due_care_tasks),
};

async fn get_due_care_tasks(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let t = bound(ctx)?;
    let urgency = args.text("urgency").unwrap_or("actionable");
    let page = PageRequest {
        skip: args.int("offset").unwrap_or(0),
        limit: args.int("limit").unwrap_or(100),
    };
    let due = service::due_reminders(ctx.state, t, urgency, "urgency", page)
        .await
        .map_err(tool_error)?;
    let mut parts = Vec::new();
    let mut listed = 0;
    for (name, n, g) in [
        ("overdue", due.counts.overdue, &due.overdue),
        ("due today", due.counts.due_today, &due.due_today),
        ("upcoming", due.counts.upcoming, &due.upcoming),
        ("not due", due.counts.not_due, &due.not_due),
    ] {
        if let Some(n) = n {
            parts.push(format!("{n} {name}"));
        }
        listed += g.as_ref().map_or(0, Vec::len);
    }
    let first = due
        .overdue
        .iter()
        .chain(due.due_today.iter())
        .chain(due.upcoming.iter())
        .flatten()
        .next()
        .map(|r| format!(" First: {}.", reminder_line(r)))
        .unwrap_or_default();
    // A page that does not hold the whole answer says so, and how to get the rest.
    let paged = if i64::try_from(listed).unwrap_or(i64::MAX) < due.total {
        format!(
            " Listed {listed} (offset {}, at most {} per group); page with offset.",
            due.skip, due.limit
        )
    } else {
        String::new()
    };
    // Watering a phase holds back is said, with the first reason, so no one waters a cactus
    // in dry rest because its reminder is "missing".
    let withheld = due
        .watering_withheld
        .first()
        .map(|w| {
            format!(
                " Watering withheld for {} resting plant(s), e.g. {} ({}).",
                due.watering_withheld_total, w.plant_name, w.reason
            )
        })
        .unwrap_or_default();
    let summary = format!(
        "{} care reminder(s) ({}) on {}.{first}{paged}{withheld}",
        due.total,
        parts.join(", "),
        due.today
    );
    let data = serde_json::to_value(&due).unwrap_or(Value::Null);
    let data = match data {
        Value::Object(mut m) => {
            m.retain(|_, v| !v.is_null());
            Value::Object(m)
        }
        v => v,
    };
    Ok(ToolOutput::new(summary, data)
        .link_api(format!(
            "/api/v1/t/{}/care-reminders?urgency={urgency}",
            t.slug
        ))
        .link_ui(format!("/t/{}/care", t.slug)))
}

pub static GET_PLANT_CARE_LOG: Tool = Tool {
    name: "get_plant_care_log",
    title: "A plant's care log",
    description: "The confirmations and snoozes of a plant's care reminders, newest first: \
                  confirmed_at, confirmed_on, reminder_type, action (confirmed or snoozed), \
                  notes, interval_at_time_days, snooze_days. `reminder_type` narrows to one \
                  type (e.g. watering).",
    permission: Permission::Read,
    scope: Scope::Tenant,
    args: &[
        Arg::required("plant_key", KEY, "Plant key."),
        Arg::optional(
            "reminder_type",
            ArgKind::Choice {
                values: REMINDER_TYPES,
                default: None,
            },
            "Only this reminder type.",
        ),
        Arg::optional(
            "limit",
            ArgKind::Int {
                min: 1,
                max: 200,
                default: Some(50),
            },
            "Entries, 1-200 (default 50).",
        ),
    ],
    rules: &[],
    run: tool_handler!(get_plant_care_log),
};

fn entry_view(e: &CareLogEntry) -> Value {
    json!({
        "entry_key": e.entry_key,
        "confirmed_at": serde_json::to_value(e).ok().and_then(|v| v.get("confirmed_at").cloned()),
        "confirmed_on": e.confirmed_on,
        "reminder_type": e.reminder_type,
        "action": e.action,
        "notes": e.notes,
        "interval_at_time_days": e.interval_at_time_days,
        "snooze_days": e.snooze_days,
    })
}

async fn get_plant_care_log(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let t = bound(ctx)?;
    let plant = args.key("plant_key");
    let items = service::care_log(
        ctx.state,
        t,
        plant,
        args.text("reminder_type"),
        args.int("limit").unwrap_or(50),
    )
    .await
    .map_err(tool_error)?;
    let summary = match items.first() {
        Some(e) => format!(
            "{} care log entr(ies); latest: {} {} on {}.",
            items.len(),
            e.reminder_type,
            e.action,
            e.confirmed_on
        ),
        None => "No care log entries.".to_owned(),
    };
    let data = json!({
        "plant_key": plant,
        "reminder_type": args.text("reminder_type"),
        "items": items.iter().map(entry_view).collect::<Vec<_>>(),
    });
    Ok(ToolOutput::new(summary, data).link_api(format!(
        "/api/v1/t/{}/care-reminders/plants/{plant}/log",
        t.slug
    )))
}

pub static CONFIRM_CARE_TASK: Tool = Tool {
    name: "confirm_care_task",
    title: "Confirm a care reminder",
    description: "Records that a plant's care was given today (watering, fertilizing, \
                  repotting, pruning, pest_check, overwintering): the next reminder falls one \
                  interval later; watering and fertilizing intervals adapt to how early or late \
                  the grower confirms (after three confirmations, at most one day per \
                  confirmation). The confirmation shows in get_plant_care_log. dry_run: true \
                  checks and shows the result without writing.",
    permission: Permission::Write,
    scope: Scope::Tenant,
    args: &[
        Arg::required("plant_key", KEY, "Plant key."),
        Arg::required(
            "reminder_type",
            ArgKind::Choice {
                values: REMINDER_TYPES,
                default: None,
            },
            "The reminder to confirm.",
        ),
        Arg::optional("notes", NOTES, "Notes, up to 2000 characters."),
    ],
    rules: &[],
    run: tool_handler!(confirm_care_task),
};

async fn confirm_care_task(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let t = bound(ctx)?;
    let plant = args.key("plant_key");
    let reminder_type = args.key("reminder_type");
    let out = service::act(
        ctx.state,
        t,
        Target::PlantType {
            plant_key: plant,
            reminder_type,
        },
        &CareAction::Confirm { confirmed_on: None },
        args.text("notes"),
        &actor(ctx),
        !ctx.dry_run,
    )
    .await
    .map_err(tool_error)?;
    let summary = if ctx.dry_run {
        format!(
            "Dry run: confirming would move {} to {}; nothing was written.",
            reminder_type, out.reminder.due_on
        )
    } else {
        format!(
            "Confirmed {} of {}; next due {} (every {} day(s)).",
            reminder_type, out.reminder.plant_name, out.reminder.due_on, out.reminder.interval_days
        )
    };
    let mut data = serde_json::to_value(&out).unwrap_or(Value::Null);
    if ctx.dry_run
        && let Some(m) = data.as_object_mut()
    {
        m.remove("entry");
    }
    Ok(ToolOutput::new(summary, data).link_api(format!(
        "/api/v1/t/{}/care-reminders/plants/{plant}/log",
        t.slug
    )))
}
