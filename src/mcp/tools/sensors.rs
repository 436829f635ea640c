//! Environment tools: the latest readings around a plant, location or site, and recording a
//! sensor's readings. Both call the same services as the REST routes.

use serde_json::{Map, Value, json};
use time::format_description::well_known::Rfc3339;
use uuid::Uuid;

use super::shared::{bound, tool_error};
use crate::garden::alerts::service as alerts;
use crate::garden::environment::service as environment;
use crate::garden::sensors::model::Readings;
use crate::garden::sensors::service::{self as sensors, Around};
use crate::mcp::args::{Arg, ArgKind, ArgRule, Args, KEY};
use crate::mcp::envelope::{ToolError, ToolOutput};
use crate::mcp::registry::{Ctx, Permission, Scope, Tool};
use crate::rules::sensors::BATCH_MAX;
use crate::tool_handler;
use crate::values::json::parse_json;

fn uuid_arg(args: &Args, name: &str, what: &str) -> Result<Option<Uuid>, ToolError> {
    match args.text(name) {
        None => Ok(None),
        Some(raw) => Uuid::parse_str(raw.trim())
            .map(Some)
            .map_err(|_| ToolError::not_found(what)),
    }
}

pub static GET_ENVIRONMENT: Tool = Tool {
    name: "get_environment",
    title: "The environment around a plant, location or site",
    description: "The latest reading of each sensor around exactly one of plant_key (the \
                  sensors of the plant's location and of that location's site), location_key \
                  (the location's and its site's) or site_key (the site's own). Each reading \
                  names its sensor (sensor_key, name), metric, unit, value, measured_at, origin \
                  (location or site: where the sensor stands) and source (http, mqtt, \
                  home_assistant); a sensor that has not reported has value and measured_at \
                  null. weather: the hour nearest now (within an hour) of the site's stored \
                  forecast (a site with latitude and longitude, on a server with WEATHER_URL), \
                  each with metric (temperature_c, humidity_percent), unit, value, \
                  measured_at, origin weather and source forecast. environment_status: \
                  no_source when nothing measures here, unavailable when nothing reported, \
                  else null. open_alerts: the open alerts there (of the plant, or of anything at \
                  the location or site, and of its silent sensors), each with key, kind \
                  (out_of_range, sensor_silent, frost), metric, plant_key, sensor_key, the \
                  reading that opened it, the range it broke with the range's source, and \
                  opened_at. A key of another garden is not_found.",
    permission: Permission::Read,
    scope: Scope::Tenant,
    args: &[
        Arg::optional("plant_key", KEY, "Plant key."),
        Arg::optional("location_key", KEY, "Location key."),
        Arg::optional("site_key", KEY, "Site key."),
    ],
    rules: &[ArgRule::ExactlyOne(&[
        "plant_key",
        "location_key",
        "site_key",
    ])],
    run: tool_handler!(get_environment),
};

async fn get_environment(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let tenant = bound(ctx)?;
    let around = if let Some(p) = uuid_arg(&args, "plant_key", "plant")? {
        Around::Plant(p)
    } else if let Some(l) = uuid_arg(&args, "location_key", "location")? {
        Around::Location(l)
    } else if let Some(s) = uuid_arg(&args, "site_key", "site")? {
        Around::Site(s)
    } else {
        return Err(ToolError::not_found("plant, location or site"));
    };
    let now = time::OffsetDateTime::now_utc();
    let env = environment::now_around(ctx.state, tenant, around, now)
        .await
        .map_err(tool_error)?;
    let found = &env.sensors;
    let readings: Vec<Value> = found
        .iter()
        .map(|r| {
            json!({
                "sensor_key": r.sensor.key,
                "name": r.sensor.name,
                "metric": r.sensor.metric,
                "unit": r.sensor.unit,
                "value": r.latest.map(|l| l.value),
                "measured_at": r.latest.and_then(|l| l.measured_at.format(&Rfc3339).ok()),
                "origin": r.origin,
                "source": r.sensor.source,
            })
        })
        .collect();
    let weather: Vec<Value> = env
        .weather
        .iter()
        .map(|w| {
            json!({
                "metric": w.metric,
                "unit": w.unit,
                "value": w.value,
                "measured_at": w.measured_at.format(&Rfc3339).ok(),
                "origin": w.origin,
                "source": w.source,
            })
        })
        .collect();
    let sensor_keys: Vec<Uuid> = found.iter().map(|r| r.sensor.key).collect();
    let (plants, locations, sites) = match around {
        Around::Plant(p) => (vec![p], vec![], vec![]),
        Around::Location(l) => (vec![], vec![l], vec![]),
        Around::Site(s) => (vec![], vec![], vec![s]),
    };
    let open = alerts::open_around(ctx.state, tenant, &plants, &sensor_keys, &locations, &sites)
        .await
        .map_err(tool_error)?;
    let open_alerts: Vec<Value> = open
        .iter()
        .map(|n| {
            let a = &n.alert;
            json!({
                "key": a.key,
                "kind": a.kind,
                "metric": a.metric,
                "plant_key": a.plant_key,
                "sensor_key": a.sensor_key,
                "reading": a.reading,
                "range": a.range,
                "opened_at": a.opened_at.format(&Rfc3339).ok(),
                "text": alerts::describe(n),
            })
        })
        .collect();
    let reporting = found.iter().filter(|r| r.latest.is_some()).count();
    let summary = if found.is_empty() {
        "No sensor measures here.".to_owned()
    } else {
        let parts: Vec<String> = found
            .iter()
            .filter_map(|r| {
                r.latest
                    .map(|l| format!("{} {} {}", r.sensor.name, l.value, r.sensor.unit))
            })
            .collect();
        format!(
            "{} sensor(s), {reporting} with a reading{}{}",
            found.len(),
            if parts.is_empty() { "" } else { ": " },
            parts.join("; ")
        )
    };
    let summary = match (env.weather_source, env.weather.is_empty()) {
        (false, _) => summary,
        (true, true) => format!("{summary} Weather: no forecast hour stored near now."),
        (true, false) => {
            let parts: Vec<String> = env
                .weather
                .iter()
                .map(|w| format!("{} {} {}", w.metric, w.value, w.unit))
                .collect();
            format!("{summary} Weather: {}.", parts.join(", "))
        }
    };
    let summary = if open.is_empty() {
        summary
    } else {
        format!("{summary}. {} open alert(s).", open.len())
    };
    Ok(ToolOutput::new(
        summary,
        json!({
            "readings": readings,
            "weather": weather,
            "environment_status": env.status(),
            "open_alerts": open_alerts,
        }),
    ))
}

const READING_FIELDS: &[Arg] = &[
    Arg::required(
        "value",
        ArgKind::Number {
            min: -50.0,
            max: 200_000.0,
            default: None,
        },
        "The reading, in the sensor's unit and inside its metric's physical range.",
    ),
    Arg::required(
        "measured_at",
        ArgKind::DateTime,
        "When it was measured (RFC 3339; at most 5 minutes in the future).",
    ),
];

pub static RECORD_SENSOR_READINGS: Tool = Tool {
    name: "record_sensor_readings",
    title: "Record a sensor's readings",
    description: "Stores up to 5000 readings {value, measured_at} of one sensor, all or \
                  nothing, exactly as POST /sensors/{sensor_key}/readings does. Idempotent per \
                  (sensor, measured_at): a reading stored before is not stored again and counts \
                  as already_present. Refused naming the reading (readings[3].value): a value \
                  outside the metric's physical range (the sensor's range_min..range_max: pH \
                  0-14, humidity 0-100 %, temperatures -50..70 °C, EC 0..20 mS/cm, PPFD \
                  0..3000, CO2 0..10000 ppm, lux 0..200000), a time more than 5 minutes in the \
                  future. dry_run: true checks everything, counts what would be stored and \
                  writes nothing. Needs mcp.write (growers and above). A sensor key of another \
                  garden is not_found.",
    permission: Permission::Write,
    scope: Scope::Tenant,
    args: &[
        Arg::required("sensor_key", KEY, "Sensor key."),
        Arg::required(
            "readings",
            ArgKind::ObjectList {
                fields: READING_FIELDS,
                rules: &[],
                min: 1,
                max: BATCH_MAX,
            },
            "The readings, 1 to 5000.",
        ),
    ],
    rules: &[],
    run: tool_handler!(record_sensor_readings),
};

async fn record_sensor_readings(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let tenant = bound(ctx)?;
    let key = args.key("sensor_key").trim().to_owned();
    uuid_arg(&args, "sensor_key", "sensor")?;
    // The REST body reader, so the checks and messages are the same.
    let mut body = Map::new();
    body.insert(
        "readings".to_owned(),
        args.acting().remove("readings").unwrap_or(Value::Null),
    );
    let bytes = serde_json::to_vec(&Value::Object(body)).unwrap_or_default();
    let readings: Readings = parse_json(&bytes).map_err(tool_error)?;
    let done = sensors::record_readings(ctx.state, tenant, &key, &readings, !ctx.dry_run)
        .await
        .map_err(tool_error)?;
    let summary = if ctx.dry_run {
        format!(
            "Dry run: {} of {} reading(s) would be stored, {} present already; nothing was \
             written.",
            done.stored, done.received, done.already_present
        )
    } else {
        format!(
            "Stored {} of {} reading(s); {} present already.",
            done.stored, done.received, done.already_present
        )
    };
    let slug = tenant.slug.as_str();
    Ok(ToolOutput::new(
        summary,
        json!({
            "sensor_key": done.sensor_key,
            "received": done.received,
            "stored": done.stored,
            "already_present": done.already_present,
        }),
    )
    .link_api(format!("/api/v1/t/{slug}/sensors/{key}/readings")))
}
