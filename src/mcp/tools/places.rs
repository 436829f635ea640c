//! Place tools: a location with what stands in it, and the setup tool that creates a site.
//! Both call the same services as the REST routes.

use serde_json::{Value, json};

use super::shared::{bound, tool_error};
use super::view::compact;
use crate::garden::places::model::{Location, LocationDetail, Slot};
use crate::garden::places::service as places;
use crate::garden::sites::model::NewSite;
use crate::garden::sites::service as sites;
use crate::mcp::args::{Arg, ArgKind, Args, KEY, NOTES};
use crate::mcp::envelope::{ToolError, ToolOutput};
use crate::mcp::registry::{Ctx, Permission, Scope, Tool};
use crate::rules::zones::ZONE_NAMES;
use crate::tool_handler;
use crate::values::json::parse_json;

fn location_view(l: &Location) -> Value {
    compact(
        json!({
            "location_key": l.key,
            "name": l.name,
            "kind": l.kind,
            "site_key": l.site_key,
            "parent_key": l.parent_key,
            "depth": l.depth,
            "description": l.description,
            "frost_exposed": l.frost_exposed,
            "climate_zone": l.climate_zone,
            "light_situation": l.light_situation,
            "area_sqm": l.area_sqm,
        }),
        &["parent_key", "kind"],
    )
}

/// The conditions a grower asks a location about; in the answer for the location itself they
/// are always present (null: not recorded), so "unknown" never reads as "no".
const CONDITIONS: &[&str] = &[
    "frost_exposed",
    "climate_zone",
    "light_situation",
    "area_sqm",
];

fn slot_view(s: &Slot) -> Value {
    compact(
        json!({
            "slot_key": s.key,
            "code": s.code,
            "capacity": s.capacity,
            "live_plants": s.live_plants,
            "free": (i64::from(s.capacity) - s.live_plants).max(0),
            "position_x": s.position_x,
            "position_y": s.position_y,
            "neighbour_keys": s.neighbour_keys,
            "substrate_batch_key": s.substrate_batch_key,
        }),
        &["neighbour_keys"],
    )
}

fn detail_data(d: &LocationDetail, site_name: Option<&str>) -> Value {
    let mut v = location_view(&d.location);
    let l = &d.location;
    for (name, value) in CONDITIONS.iter().zip([
        json!(l.frost_exposed),
        json!(l.climate_zone),
        json!(l.light_situation),
        json!(l.area_sqm),
    ]) {
        v[*name] = value;
    }
    v["site_name"] = json!(site_name);
    v["live_plants"] = json!(d.live_plants);
    v["children"] = d.children.iter().map(location_view).collect();
    v["slots"] = d.slots.iter().map(slot_view).collect();
    v
}

pub static GET_LOCATION: Tool = Tool {
    name: "get_location",
    title: "A location and what is in it",
    description: "One location of the garden (a room, bed, shelf, box): its name, kind, site \
                  (key and name), parent location and depth in the site's tree, the live plants \
                  standing in it, its conditions (frost_exposed, climate_zone as a hardiness zone \
                  1a-13b, light_situation full_sun/partial_shade/shade, area_sqm; null when not \
                  recorded), its child locations, and its slots with capacity, live plants, free \
                  places, neighbour slots (adjacency used by the companion check) and the \
                  substrate batch filling each. A location key of another garden is not_found.",
    permission: Permission::Read,
    scope: Scope::Tenant,
    args: &[Arg::required("location_key", KEY, "Location key.")],
    rules: &[],
    run: tool_handler!(get_location),
};

async fn get_location(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let tenant = bound(ctx)?;
    let key = args.key("location_key");
    let d = places::get_location(ctx.state, tenant, key)
        .await
        .map_err(tool_error)?;
    let site = sites::get_site(ctx.state, tenant, &d.location.site_key.to_string())
        .await
        .ok();
    let site_name = site.as_ref().map(|s| s.name.as_str());
    let free: i64 = d
        .slots
        .iter()
        .map(|s| (i64::from(s.capacity) - s.live_plants).max(0))
        .sum();
    let frost = match d.location.frost_exposed {
        Some(true) => " Frost exposed.",
        Some(false) => " Frost free.",
        None => "",
    };
    let summary = format!(
        "{} ({}) in site {}: {} live plant(s), {} child location(s), {} slot(s) with {free} free \
         place(s).{frost}",
        d.location.name,
        d.location.kind.as_deref().unwrap_or("no kind"),
        site_name.unwrap_or("?"),
        d.live_plants,
        d.children.len(),
        d.slots.len(),
    );
    let slug = tenant.slug.as_str();
    Ok(ToolOutput::new(summary, detail_data(&d, site_name))
        .link_api(format!("/api/v1/t/{slug}/locations/{key}"))
        .link_ui(format!("/t/{slug}/locations/{key}")))
}

const SITE_KINDS: &[&str] = &[
    "apartment",
    "garden",
    "balcony",
    "greenhouse",
    "windowsill",
    "grow_tent",
];

pub static CREATE_SITE: Tool = Tool {
    name: "create_site",
    title: "Create a site",
    description: "Creates a site: the root of a garden's places, of kind apartment, garden, \
                  balcony, greenhouse, windowsill or grow_tent (default apartment), optionally with \
                  its hardiness zone (climate_zone) and its coordinates (latitude and longitude, \
                  both or neither; the weather and frost warnings need them). Names are \
                  unique per garden (case-insensitive); a taken name is conflict.state. \
                  Locations and slots are then added on the REST routes. dry_run: true checks \
                  everything and creates nothing. Needs mcp.setup (the garden's admins).",
    permission: Permission::Setup,
    scope: Scope::Tenant,
    args: &[
        Arg::required(
            "name",
            ArgKind::Text { min: 1, max: 120 },
            "Site name, up to 120 characters.",
        ),
        Arg::optional(
            "kind",
            ArgKind::Choice {
                values: SITE_KINDS,
                default: Some("apartment"),
            },
            "Kind of site.",
        ),
        Arg::optional("description", NOTES, "Free text, up to 2000 characters."),
        Arg::optional(
            "climate_zone",
            ArgKind::Choice {
                values: ZONE_NAMES,
                default: None,
            },
            "USDA hardiness zone 1a…13b of the site (get_sowing_calendar with site_key uses it).",
        ),
        Arg::optional(
            "latitude",
            ArgKind::Number {
                min: -90.0,
                max: 90.0,
                default: None,
            },
            "WGS 84 latitude in degrees, -90 to 90, given together with longitude (the weather \
             poll fetches the forecast of sites with coordinates).",
        ),
        Arg::optional(
            "longitude",
            ArgKind::Number {
                min: -180.0,
                max: 180.0,
                default: None,
            },
            "WGS 84 longitude in degrees, -180 to 180, given together with latitude.",
        ),
    ],
    rules: &[],
    run: tool_handler!(create_site),
};

async fn create_site(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let tenant = bound(ctx)?;
    // The REST body reader, so the checks and messages are the same (both coordinates or
    // neither, each in its range).
    let mut body = args.acting();
    body.entry("kind")
        .or_insert_with(|| Value::String("apartment".to_owned()));
    let bytes = serde_json::to_vec(&Value::Object(body)).unwrap_or_default();
    let new: NewSite = parse_json(&bytes).map_err(tool_error)?;
    let site = sites::create_site_checked(ctx.state, tenant, &new, !ctx.dry_run)
        .await
        .map_err(tool_error)?;
    let mut data = compact(
        json!({
            "site_key": site.key,
            "name": site.name,
            "kind": site.kind,
            "description": site.description,
            "climate_zone": site.climate_zone,
            "latitude": site.latitude,
            "longitude": site.longitude,
        }),
        &[],
    );
    let slug = tenant.slug.as_str();
    if ctx.dry_run {
        // The key of a site that was not created would name nothing.
        if let Some(m) = data.as_object_mut() {
            m.remove("site_key");
        }
        return Ok(ToolOutput::new(
            format!(
                "Dry run: site {} ({}) can be created; nothing was written.",
                site.name,
                site.kind.as_str()
            ),
            data,
        )
        .link_api(format!("/api/v1/t/{slug}/sites")));
    }
    Ok(ToolOutput::new(
        format!("Created site {} ({}).", site.name, site.kind.as_str()),
        data,
    )
    .link_api(format!("/api/v1/t/{slug}/sites/{}", site.key))
    .link_ui(format!("/t/{slug}/sites/{}", site.key)))
}
