//! Calendar tools: the sowing calendar of the garden's zone and species. The tool calls the
//! calendar service the REST route `GET /t/{slug}/calendar/sowing` calls.

use serde_json::json;

use super::shared::bound;
use crate::garden::calendar::service::{self, SowingQuery};
use crate::mcp::args::{Arg, ArgKind, Args, KEY, QUERY};
use crate::mcp::envelope::{ToolError, ToolOutput};
use crate::mcp::registry::{Ctx, Permission, Scope, Tool};
use crate::rules::zones::ZONE_NAMES;
use crate::tool_handler;

/// At most this many species per answer; more matches need a `query`.
pub const SOWING_LIMIT_MAX: i64 = 25;

pub static GET_SOWING_CALENDAR: Tool = Tool {
    name: "get_sowing_calendar",
    title: "Sowing calendar",
    description: "When to sow indoors, sow or plant out, and harvest (or see flowering) each \
                  species growing in the garden (or at one site: site_key), as dated bars of one year (indoor_sowing, \
                  outdoor_planting, growth, harvest, flowering), moved to the last frost used: `zone` \
                  (1a…13b, an estimate) if given, else the garden's own frost dates (calendar settings), \
                  else the estimate of `site_key`'s site zone or the garden's zone, else the reference \
                  (May 1; in the southern hemisphere the months move six months, reference November 1). \
                  Returns the frost dates used and what they rest on (frost.source, estimated, basis). \
                  `species_key` asks for one species (it need not grow in the garden); `query` \
                  narrows by name and is required once more than `limit` species match.",
    permission: Permission::Read,
    scope: Scope::Tenant,
    args: &[
        Arg::optional(
            "zone",
            ArgKind::Choice {
                values: ZONE_NAMES,
                default: None,
            },
            "Hardiness zone 1a…13b (default: the garden's).",
        ),
        Arg::optional(
            "site_key",
            KEY,
            "Only the species growing at this site, on the site's zone when it has one.",
        ),
        Arg::optional("species_key", KEY, "Only this species."),
        Arg::optional(
            "query",
            QUERY,
            "Part of a species' scientific or common name.",
        ),
        Arg::optional(
            "year",
            ArgKind::Int {
                min: 2000,
                max: 2100,
                default: None,
            },
            "The year (default: this year).",
        ),
        Arg::optional(
            "limit",
            ArgKind::Int {
                min: 1,
                max: SOWING_LIMIT_MAX,
                default: Some(SOWING_LIMIT_MAX),
            },
            "At most this many species.",
        ),
    ],
    rules: &[],
    run: tool_handler!(get_sowing_calendar),
};

async fn get_sowing_calendar(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let t = bound(ctx)?;
    let q = SowingQuery {
        zone: args.text("zone").map(|z| z.trim().to_owned()),
        site_key: args.text("site_key").map(|k| k.trim().to_owned()),
        species_key: args.text("species_key").map(|k| k.trim().to_owned()),
        year: args
            .int("year")
            .map(|y| i32::try_from(y).unwrap_or(i32::MAX)),
    };
    let mut cal = service::sowing_calendar(ctx.state, t, &q, "").await?;
    let limit = usize::try_from(args.int("limit").unwrap_or(SOWING_LIMIT_MAX)).unwrap_or(25);
    let query = args.text("query").map(|s| s.trim().to_lowercase());
    if let Some(needle) = &query {
        cal.items.retain(|i| {
            [&i.species_name, &i.common_name].iter().any(|n| {
                n.as_deref()
                    .is_some_and(|n| n.to_lowercase().contains(needle))
            })
        });
    }
    let matched = cal.items.len();
    if matched > limit && query.is_none() {
        return Err(ToolError::validation(
            "query",
            format!("{matched} species match, more than limit {limit}: name a query"),
            "missing",
        ));
    }
    cal.items.truncate(limit);
    cal.count = cal.items.len();
    let summary = format!(
        "Sowing calendar {} for {} of {matched} species; zone {}, last frost {} ({}).",
        cal.year,
        cal.count,
        cal.zone.as_deref().unwrap_or("not set"),
        cal.frost.last,
        cal.frost.source
    );
    let mut data = serde_json::to_value(&cal).unwrap_or_else(|_| json!({}));
    if let Some(m) = data.as_object_mut() {
        m.insert("total".into(), json!(matched));
    }
    Ok(ToolOutput::new(summary, data).link_api(format!("/api/v1/t/{}/calendar/sowing", t.slug)))
}
