//! Nutrition tools: the mixing protocol (a read: it computes and stores nothing). It calls the
//! same service as `POST /api/v1/t/{slug}/mixing-protocol`: the products are the global
//! fertilisers and the garden's own (`ProductSource::Garden`).

use serde_json::Value;

use super::shared::{bound, tool_error};
use super::view::compact;
use crate::calculations::model::{MixingProtocolBody, ProductChoice};
use crate::calculations::service::{self, ProductSource};
use crate::mcp::args::{Arg, ArgKind, ArgRule, Args};
use crate::mcp::envelope::{ToolError, ToolOutput};
use crate::mcp::registry::{Ctx, Permission, Scope, Tool};
use crate::rules::mixing_protocol::SUBSTRATE_TYPES;
use crate::tool_handler;

const PRODUCT_FIELDS: &[Arg] = &[
    Arg::required(
        "fertilizer_key",
        ArgKind::Text { min: 1, max: 200 },
        "Key of a global fertiliser or tenant:<uuid> of the garden's own (list_fertilizers).",
    ),
    Arg::optional(
        "ml_per_liter",
        ArgKind::Number {
            min: 0.001,
            max: 50.0,
            default: None,
        },
        "Recipe dose in ml (or g for powders) per litre; with a recipe the products keep \
         their ratio and are scaled together to the target EC.",
    ),
];

const fn number(min: f64, max: f64, default: Option<f64>) -> ArgKind {
    ArgKind::Number { min, max, default }
}

pub static CALCULATE_MIXING_PROTOCOL: Tool = Tool {
    name: "calculate_mixing_protocol",
    title: "Mixing protocol for a tank",
    description: "Products (fertilizer_keys, or fertilizers with recipe doses), target volume and EC in, per-product doses in mixing order out (ml per litre \
                  and for the whole tank): the base water's EC comes off the budget, a pH \
                  reserve by alkalinity (or a chosen pH adjuster's EC), silicate and CalMag \
                  first, the other products share the rest in the ratio of the recipe or else \
                  of their label doses, each dose capped at the product's maximum. Harvest is \
                  fed like fruiting; rest phases (dormancy, dry rest, ...) are not fed. \
                  Returns the expected EC, the pH step (measure after all additions; acids \
                  down, bases up), instructions, and warnings with valid=false when the \
                  target cannot be met (dose capped, EC off target or above the phase range, \
                  products that precipitate in this order). Stores nothing.",
    permission: Permission::Read,
    scope: Scope::Tenant,
    args: &[
        Arg::optional(
            "fertilizer_keys",
            ArgKind::TextList {
                item_min: 1,
                item_max: 200,
                min: 1,
                max: 20,
            },
            "1-20 products by key (list_fertilizers), dosed in the ratio of their label doses. \
             Give this or fertilizers, not both.",
        ),
        Arg::optional(
            "fertilizers",
            ArgKind::ObjectList {
                fields: PRODUCT_FIELDS,
                rules: &[],
                min: 1,
                max: 20,
            },
            "1-20 products, each once, with recipe doses (ml_per_liter). Give this or \
             fertilizer_keys, not both.",
        ),
        Arg::required(
            "target_volume_liters",
            number(0.001, 10_000.0, None),
            "Tank volume in litres (up to 10000).",
        ),
        Arg::required(
            "target_ec_ms",
            number(0.01, 10.0, None),
            "EC wanted in mS/cm (up to 10).",
        ),
        Arg::optional(
            "base_water_ec_ms",
            number(0.0, 5.0, Some(0.0)),
            "EC of the water before any product, mS/cm (0-5).",
        ),
        Arg::optional(
            "target_ph",
            number(0.0, 14.0, Some(service::DEFAULT_TARGET_PH)),
            "pH wanted.",
        ),
        Arg::optional(
            "base_water_ph",
            number(0.0, 14.0, Some(service::DEFAULT_BASE_WATER_PH)),
            "pH of the water.",
        ),
        Arg::optional(
            "alkalinity_ppm",
            number(0.0, 500.0, Some(0.0)),
            "Alkalinity of the water as CaCO3, ppm (0-500).",
        ),
        Arg::optional(
            "substrate_type",
            ArgKind::Choice {
                values: SUBSTRATE_TYPES,
                default: Some(service::DEFAULT_SUBSTRATE),
            },
            "Substrate the EC range is for; living_soil is not dosed. Give this or \
             substrate_key, not both.",
        ),
        Arg::optional(
            "substrate_key",
            ArgKind::Text { min: 1, max: 200 },
            "A substrate (list_substrates; global, or the garden's own tenant:<uuid>) whose \
             type the EC range is for. Give this or substrate_type, not both.",
        ),
        Arg::optional(
            "substrate_cycles_used",
            ArgKind::Int {
                min: 0,
                max: 50,
                default: None,
            },
            "Times the substrate has been used; 0 = fresh (CalMag +20 % in coco).",
        ),
        Arg::optional(
            "phase",
            ArgKind::Text { min: 1, max: 50 },
            "Phase: seedling, vegetative (default), flowering, flushing, or a fine phase key \
             such as germination, fruiting or harvest (fed like fruiting); rest phases such \
             as dormancy are not fed.",
        ),
        Arg::optional(
            "water_temp_c",
            number(0.0, 50.0, None),
            "Water temperature, °C.",
        ),
        Arg::optional(
            "species_key",
            ArgKind::Text { min: 1, max: 200 },
            "The crop (list_species key): where a publication gives it its own EC range \
             (Phalaenopsis, lettuce in hydroponics or coco) that range bounds the result \
             instead of the substrate's, with its source.",
        ),
    ],
    rules: &[
        ArgRule::ExactlyOne(&["fertilizer_keys", "fertilizers"]),
        ArgRule::Excludes {
            arg: "substrate_type",
            with: "substrate_key",
        },
    ],
    run: tool_handler!(calculate_mixing_protocol),
};

async fn calculate_mixing_protocol(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    // Tenant-bound already (the tenant is resolved and checked): the garden's own products
    // resolve through it, another garden's are not_found.
    let tenant = bound(ctx)?;
    let body = MixingProtocolBody {
        fertilizers: if args.has("fertilizer_keys") {
            args.texts("fertilizer_keys")
                .into_iter()
                .map(|key| ProductChoice {
                    fertilizer_key: key.to_owned(),
                    ml_per_liter: None,
                })
                .collect()
        } else {
            args.items("fertilizers")
                .iter()
                .map(|p| ProductChoice {
                    fertilizer_key: p.key("fertilizer_key").to_owned(),
                    ml_per_liter: p.number("ml_per_liter"),
                })
                .collect()
        },
        target_volume_liters: args.number("target_volume_liters").unwrap_or(0.0),
        target_ec_ms: args.number("target_ec_ms").unwrap_or(0.0),
        base_water_ec_ms: args.number("base_water_ec_ms"),
        target_ph: args.number("target_ph"),
        base_water_ph: args.number("base_water_ph"),
        alkalinity_ppm: args.number("alkalinity_ppm"),
        substrate_type: args.text("substrate_type").map(str::to_owned),
        substrate_key: args.text("substrate_key").map(str::to_owned),
        substrate_cycles_used: args
            .int("substrate_cycles_used")
            .and_then(|c| u32::try_from(c).ok()),
        phase: args.text("phase").map(str::to_owned),
        water_temp_c: args.number("water_temp_c"),
        species_key: args.text("species_key").map(str::to_owned),
    };
    let p = service::mixing_protocol(ctx.state, ProductSource::Garden(tenant), &body)
        .await
        .map_err(tool_error)?;
    let doses: Vec<String> = p
        .dosages
        .iter()
        .map(|d| format!("{} {} ml", d.product_name, d.total_ml))
        .collect();
    let summary = format!(
        "{} litres at {} mS/cm: {}; expected EC {} mS/cm, {}{}.",
        p.target_volume_liters,
        p.target_ec_ms,
        if doses.is_empty() {
            "no product dosed".to_owned()
        } else {
            doses.join(", ")
        },
        p.calculated_ec,
        if p.valid {
            "valid"
        } else {
            "NOT valid (see warnings)"
        },
        if p.warnings.is_empty() {
            String::new()
        } else {
            format!(", {} warning(s)", p.warnings.len())
        }
    );
    let data = compact(serde_json::to_value(&p).unwrap_or(Value::Null), &[]);
    Ok(ToolOutput::new(summary, data).link_api(format!(
        "/api/v1/t/{}/mixing-protocol",
        tenant.slug.as_str()
    )))
}
