//! Feeding tools: `record_feeding_event` (the service of `POST /t/{slug}/watering-events`) and
//! `get_plant_diagnostics` (the service of `GET /t/{slug}/plant-instances/{key}/diagnostics`).
//! A feeding recorded through the first shows in the second.

use serde_json::{Value, json};
use uuid::Uuid;

use super::shared::{actor, bound, tool_error};
use super::view::compact;
use crate::error::AppError;
use crate::garden::watering::model::{
    ApplicationMethod, FERTILIZERS_MAX, FertilizerUse, ML_MAX, NOTES_MAX_CHARS, NewWateringEvent,
    VOLUME_MAX_L,
};
use crate::garden::watering::service::{self, WINDOW_DEFAULT_DAYS, WINDOW_MAX_DAYS};
use crate::mcp::args::{Arg, ArgKind, Args, KEY};
use crate::mcp::envelope::{ToolError, ToolOutput};
use crate::mcp::registry::{Ctx, Permission, Scope, Tool};
use crate::tool_handler;

const fn number(min: f64, max: f64) -> ArgKind {
    ArgKind::Number {
        min,
        max,
        default: None,
    }
}

const PRODUCT_FIELDS: &[Arg] = &[
    Arg::required(
        "fertilizer_key",
        ArgKind::Text { min: 1, max: 200 },
        "Key of the fertiliser (stored as given).",
    ),
    Arg::required(
        "ml_applied",
        number(0.001, ML_MAX),
        "Millilitres (or grams) of the product in this feeding, above 0.",
    ),
];

const PLANT_KEY: Arg = Arg::required("plant_key", KEY, "Plant key (from list_plants).");

/// The tool's argument names for the service's body fields.
const FIELD_NAMES: &[(&str, &str)] = &[
    ("plant_keys", "plant_key"),
    ("volume_liters", "volume_applied_liters"),
    ("ec_before_ms", "measured_ec_before"),
    ("ec_after_ms", "measured_ec_after"),
    ("ph_before", "measured_ph_before"),
    ("ph_after", "measured_ph_after"),
    ("runoff_ec_ms", "runoff_ec"),
];

fn feeding_error(err: AppError) -> ToolError {
    let mut e = tool_error(err);
    if let Some(Value::Array(details)) = e.details.as_mut() {
        for d in details {
            if let Some(f) = d.get("field").and_then(Value::as_str)
                && let Some((_, arg)) = FIELD_NAMES.iter().find(|(body, _)| *body == f)
            {
                d["field"] = json!(arg);
            }
        }
    }
    e
}

fn uuid_arg(args: &Args, name: &str, what: &str) -> Result<Option<Uuid>, ToolError> {
    match args.text(name) {
        None => Ok(None),
        Some(raw) => Uuid::parse_str(raw.trim())
            .map(Some)
            .map_err(|_| ToolError::not_found(what)),
    }
}

pub static RECORD_FEEDING_EVENT: Tool = Tool {
    name: "record_feeding_event",
    title: "Record a feeding",
    description: "Records a feeding (or plain watering) of one plant: litres applied, the \
                  products given, EC and pH of the water before products (measured_*_before) \
                  and of the solution as fed (measured_*_after), runoff EC, pH and litres. The \
                  runoff analysis (salt build-up, pH drift, runoff share) is computed and \
                  returned. With tank_key the litres come out of that tank (conflict when it \
                  holds less). The feeding shows in get_plant_diagnostics. dry_run: true checks \
                  and analyses without recording.",
    permission: Permission::Write,
    scope: Scope::Tenant,
    args: &[
        PLANT_KEY,
        Arg::required(
            "volume_applied_liters",
            number(0.001, VOLUME_MAX_L),
            "Litres applied, above 0 (up to 10000).",
        ),
        Arg::optional(
            "application_method",
            ArgKind::Choice {
                values: ApplicationMethod::NAMES,
                default: Some("fertigation"),
            },
            "How it was applied.",
        ),
        Arg::optional(
            "is_supplemental",
            ArgKind::Bool { default: false },
            "A supplemental watering (cannot be fertigation).",
        ),
        Arg::optional(
            "fertilizers_used",
            ArgKind::ObjectList {
                fields: PRODUCT_FIELDS,
                rules: &[],
                min: 0,
                max: FERTILIZERS_MAX,
            },
            "Products given (up to 20).",
        ),
        Arg::optional(
            "measured_ec_before",
            number(0.0, 10.0),
            "EC of the water before products, mS/cm.",
        ),
        Arg::optional(
            "measured_ec_after",
            number(0.0, 10.0),
            "EC of the solution as fed, mS/cm.",
        ),
        Arg::optional("measured_ph_before", number(0.0, 14.0), "pH of the water."),
        Arg::optional("measured_ph_after", number(0.0, 14.0), "pH as fed."),
        Arg::optional(
            "runoff_ec",
            number(0.0, 10.0),
            "Runoff EC, mS/cm (needs a measured EC).",
        ),
        Arg::optional("runoff_ph", number(0.0, 14.0), "Runoff pH."),
        Arg::optional(
            "runoff_volume_liters",
            number(0.0, VOLUME_MAX_L),
            "Runoff litres (at most the litres applied).",
        ),
        Arg::optional(
            "tank_key",
            KEY,
            "Tank the solution came from (its volume drops).",
        ),
        Arg::optional(
            "tank_fill_event_key",
            KEY,
            "The tank fill the solution came from (a fill of this garden; default with \
             tank_key: the tank's last fill).",
        ),
        Arg::optional(
            "notes",
            ArgKind::Paragraph {
                min: 1,
                max: NOTES_MAX_CHARS,
            },
            "Notes (up to 2000 characters).",
        ),
    ],
    rules: &[],
    run: tool_handler!(record_feeding_event),
};

async fn record_feeding_event(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let t = bound(ctx)?;
    let plant = uuid_arg(&args, "plant_key", "plant")?.unwrap_or_default();
    let tank = uuid_arg(&args, "tank_key", "tank")?;
    let fill = uuid_arg(&args, "tank_fill_event_key", "tank fill")?;
    let new = NewWateringEvent {
        plant_keys: vec![plant],
        run_key: None,
        tank_key: tank,
        tank_fill_key: fill,
        occurred_at: None,
        application_method: args
            .text("application_method")
            .and_then(ApplicationMethod::parse),
        is_supplemental: args.flag("is_supplemental"),
        volume_liters: args.number("volume_applied_liters").unwrap_or(0.0),
        ec_before_ms: args.number("measured_ec_before"),
        ec_after_ms: args.number("measured_ec_after"),
        ph_before: args.number("measured_ph_before"),
        ph_after: args.number("measured_ph_after"),
        runoff_ec_ms: args.number("runoff_ec"),
        runoff_ph: args.number("runoff_ph"),
        runoff_volume_liters: args.number("runoff_volume_liters"),
        fertilizers_used: args
            .items("fertilizers_used")
            .iter()
            .map(|p| FertilizerUse {
                fertilizer_key: p.key("fertilizer_key").trim().to_owned(),
                ml_applied: p.number("ml_applied").unwrap_or(0.0),
            })
            .collect(),
        notes: args.text("notes").map(|n| n.trim().to_owned()),
    };
    let e = service::record_event(ctx.state, t, &new, &actor(ctx), !ctx.dry_run)
        .await
        .map_err(feeding_error)?;
    let analysis = e
        .runoff_analysis
        .as_ref()
        .map(|a| format!(" Runoff: {} (EC Δ {} mS/cm).", a.overall, a.ec_delta_ms))
        .unwrap_or_default();
    let summary = if ctx.dry_run {
        format!(
            "Dry run: a {} of {} litres may be recorded; nothing was changed.{analysis}",
            e.kind, e.volume_liters
        )
    } else {
        format!(
            "{} of {} litres recorded.{analysis}",
            e.kind, e.volume_liters
        )
    };
    let mut data = compact(serde_json::to_value(&e).unwrap_or(Value::Null), &[]);
    if let Some(m) = data.as_object_mut()
        && let Some(k) = m.remove("key")
    {
        m.insert("event_key".into(), k);
    }
    Ok(ToolOutput::new(summary, data)
        .link_api(format!("/api/v1/t/{}/watering-events/{}", t.slug, e.key)))
}

pub static GET_PLANT_DIAGNOSTICS: Tool = Tool {
    name: "get_plant_diagnostics",
    title: "Diagnostics of a plant",
    description: "One read of a plant's feeding state: its phase, last feedings (newest 10), \
                  EC and pH series of the water (input), the solution as fed (post_feed) and \
                  the runoff over window_days (each: sample_count, first, latest, delta, \
                  direction rising/falling/stable within 0.1/unknown, samples), the runoff \
                  trend with the latest analysis, the nutrient-plan targets for its phase \
                  against the newest measurement, open warnings, the newest inspections, the \
                  safety intervals running (harvest_allowed_from), recent care, and the \
                  sensor snapshot (include_sensors, default true): available with the \
                  latest readings of the sensors at its location and site and its site's \
                  weather hour (origin, source, measured_at, metric, value, unit), or \
                  available false with the reason when nothing measures it.",
    permission: Permission::Read,
    scope: Scope::Tenant,
    args: &[
        PLANT_KEY,
        Arg::optional(
            "window_days",
            ArgKind::Int {
                min: 1,
                max: WINDOW_MAX_DAYS,
                default: Some(WINDOW_DEFAULT_DAYS),
            },
            "Days of history for the series (1-365, default 14).",
        ),
        Arg::optional(
            "include_sensors",
            ArgKind::Bool { default: true },
            "false leaves the sensor snapshot out.",
        ),
    ],
    rules: &[],
    run: tool_handler!(get_plant_diagnostics),
};

async fn get_plant_diagnostics(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let t = bound(ctx)?;
    let days = args.int("window_days").unwrap_or(WINDOW_DEFAULT_DAYS);
    let d = service::plant_diagnostics(
        ctx.state,
        t,
        args.key("plant_key").trim(),
        days,
        args.flag("include_sensors"),
    )
    .await
    .map_err(tool_error)?;
    let runoff = d
        .runoff_trend
        .latest
        .as_ref()
        .map_or("no runoff measured".to_owned(), |a| {
            format!("latest runoff {}", a.overall)
        });
    let summary = format!(
        "{}: {} event(s) in {} day(s), {}, EC post-feed {}; {} warning(s).",
        d.plant.name,
        d.window.event_count,
        d.window.days,
        runoff,
        d.ec.post_feed.direction,
        d.warnings.len()
    );
    let data = serde_json::to_value(&d).unwrap_or(Value::Null);
    Ok(ToolOutput::new(summary, data).link_api(format!(
        "/api/v1/t/{}/plant-instances/{}/diagnostics?days={days}",
        t.slug, d.plant.plant_key
    )))
}
