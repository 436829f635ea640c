//! Mixing protocol (domain 2.14): how many ml of each product go into a tank so the solution
//! reaches a target EC, in the order they go in. Pipeline: base water → EC budget → dosing.
//!
//! 1. Living soil is fed by the soil life, not by EC: no dosing, a warning and
//!    `living_soil_bypass`. A rest phase (dormancy, dry or winter rest, foliage dieback, leaf
//!    renewal, …) is not fed either: no dosing, warning `rest_phase_no_feeding`.
//! 2. The phase's EC range for the substrate class (table below) bounds the result. The
//!    harvest phase is fed like fruiting (tomatoes and peppers are picked for weeks); only a
//!    phase that is literally flushing takes the flushing range.
//! 3. EC_net = max(0, target − base water EC); nothing to dose when the water meets the target.
//! 4. pH correction adds salts: a reserve of 0.02 mS (< 50 ppm alkalinity), 0.03 (50–150) or
//!    0.05 (> 150) is kept back, or, when a chosen pH adjuster's EC at its label dose is more,
//!    that (acids and bases conduct too).
//! 5. Silicate, then CalMag, are dosed first at their recipe or recommended dose (CalMag +20 %
//!    in fresh coco, which binds calcium) and their EC comes off the budget; a silicate whose EC
//!    is uncertain costs a further 0.15 mS.
//! 6. Remaining = EC_net − silicate − CalMag − reserve − 0.15 × (other products with uncertain
//!    EC).
//! 7. The other products with an EC share the remainder in the ratio of their doses: the
//!    caller's recipe (ml/L per product), else each product's label dose
//!    (`recommended_dose_ml_per_liter`), scaled by k = remaining ÷ Σ dose·EC/ml (a PK booster
//!    dosed at 0.3 ml/L on its label gets a tenth of a base part at 3 ml/L, not an equal
//!    share). A dose is capped at the product's maximum (20 ml/L when unknown), with a warning.
//!    Products without EC (biologicals) go in at their recipe or recommended dose; pH
//!    adjusters are not dosed by EC but named in the pH step.
//! 8. EC_final = base + silicate + CalMag + Σ product EC + reserve. Tolerance max(0.1, 10 % of
//!    target); the protocol is `valid` only when EC_final ≤ the range maximum and
//!    |EC_final − target| ≤ tolerance.
//!
//! Mixing order is ascending `mixing_priority` (1 first), then name. Safety checks: any calcium
//! source (CalMag, calcium nitrate, calcium chloride, a base part with calcium) after a sulfate
//! product, and silicate after a calcium source, are critical (gypsum and calcium silicate
//! precipitate); products that are not tank-safe, acidic with alkaline products, and water
//! temperature out of 5–30 °C (35 °C for biologicals) warn.
//!
//! pH: the water's pH before the nutrients does not tell the direction (mineral nutrients
//! usually lower it, a buffered water resists). The pH is read after every product is in and
//! adjusted in the direction read: down only with acids (the chosen acidic adjusters, else
//! phosphoric, nitric or citric acid), up only with bases (the chosen alkaline adjusters, else
//! potassium hydroxide or potassium carbonate). Never potassium silicate: at that step every
//! calcium source is already in the tank, and silicate after calcium precipitates calcium
//! silicate (the `silicate_after_calcium` check); a chosen silicate-based pH-up is flagged the
//! same way (`silicate_ph_up_after_calcium`).

use serde::Serialize;

use super::calculations::{
    EC_MAX_MS, FieldProblem, PH_MAX, PH_MIN, WATER_EC_MAX_MS, WATER_TEMP_MAX_C, WATER_TEMP_MIN_C,
    check_positive, check_range, round,
};

pub const VOLUME_MAX_L: f64 = 10_000.0;
pub const ALKALINITY_MAX_PPM: f64 = 500.0;
pub const PRODUCTS_MAX: usize = 20;
/// Cap of a dose when the product states no maximum, ml/L.
pub const FALLBACK_MAX_DOSE: f64 = 20.0;
/// Recipe doses, ml/L (domain 1.12: 0 < x ≤ 50).
pub const RECIPE_MAX_ML_PER_L: f64 = 50.0;
/// EC kept back per product whose EC per ml is uncertain, mS/cm.
pub const UNCERTAIN_RESERVE: f64 = 0.15;
/// CalMag dose factor in fresh coco (coco binds calcium and releases potassium).
pub const FRESH_COCO_CALMAG_FACTOR: f64 = 1.2;

/// Coarse phases the EC table knows; `rest` is not fed.
pub const EC_PHASES: &[&str] = &["seedling", "vegetative", "flowering", "flushing", "rest"];
/// Acids and bases named for a pH correction when the request chose no adjuster.
pub const GENERIC_ACIDS: &str = "phosphoric, nitric or citric acid";
pub const GENERIC_BASES: &str = "potassium hydroxide (KOH) or potassium carbonate (K2CO3)";
/// Substrate types (as `rules::substrate_mix::TYPES`) and their EC class.
pub const SUBSTRATE_TYPES: &[&str] = super::substrate_mix::TYPES;

/// How a product takes part in the budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProductRole {
    Silicate,
    CalMag,
    PhAdjuster,
    Nutrient,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PhEffect {
    Acidic,
    Alkaline,
    Neutral,
}

/// A product as the rule sees it (from the catalogue, or later a garden's own product).
#[derive(Debug, Clone, PartialEq)]
pub struct MixProduct {
    pub key: String,
    pub name: String,
    pub role: ProductRole,
    /// mS/cm added per ml/L.
    pub ec_per_ml: f64,
    pub ec_uncertain: bool,
    pub max_dose_ml_per_liter: Option<f64>,
    pub recommended_dose_ml_per_liter: f64,
    pub mixing_priority: u8,
    pub tank_safe: bool,
    pub ph_effect: PhEffect,
    pub biological: bool,
    /// Sulfate salts (Epsom salt, potassium sulfate…): no calcium source may follow them.
    pub sulfate: bool,
    /// A calcium source (CalMag, calcium nitrate, calcium chloride, a part with Ca > 0).
    pub calcium: bool,
    /// The caller's recipe dose, ml/L.
    pub recipe_ml_per_liter: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SubstrateClass {
    Hydro,
    Coco,
    Soil,
    LivingSoil,
}

pub fn substrate_class(substrate_type: &str) -> SubstrateClass {
    match substrate_type {
        "coco" | "sphagnum" | "pon_mineral" | "orchid_bark" => SubstrateClass::Coco,
        "soil" | "peat" => SubstrateClass::Soil,
        "living_soil" => SubstrateClass::LivingSoil,
        "hydro_solution" | "clay_pebbles" | "perlite" | "rockwool_slab" | "rockwool_plug"
        | "vermiculite" | "none" => SubstrateClass::Hydro,
        // Other substrates use the soil rows (domain 2.14).
        _ => SubstrateClass::Soil,
    }
}

/// The catalogue's phase keys (`phases.json`) and the coarse EC phase each is fed as.
/// Harvest is fed like fruiting (crops picked over weeks keep fruiting); rest phases are not
/// fed at all.
pub const PHASE_FEEDING: &[(&str, &str)] = &[
    ("germination", "seedling"),
    ("seedling", "seedling"),
    ("sprouting", "seedling"),
    ("rooting", "seedling"),
    ("prothallus", "seedling"),
    ("sporeling", "seedling"),
    ("establishment", "vegetative"),
    ("vegetative", "vegetative"),
    ("bulb_formation", "vegetative"),
    ("offset_production", "vegetative"),
    ("runner_production", "vegetative"),
    ("post_bloom_recovery", "vegetative"),
    ("sporulation", "vegetative"),
    ("bud_induction", "flowering"),
    ("flowering", "flowering"),
    ("fruiting", "flowering"),
    ("ripening", "flowering"),
    ("harvest", "flowering"),
    ("flushing", "flushing"),
    ("dormancy", "rest"),
    ("summer_dormancy", "rest"),
    ("dry_rest", "rest"),
    ("winter_rest", "rest"),
    ("foliage_dieback", "rest"),
    ("leaf_renewal", "rest"),
    ("vernalization", "rest"),
    ("senescence", "rest"),
];

/// A phase key mapped to a coarse EC phase (`seedling`, `vegetative`, `flowering`,
/// `flushing`, `rest`): the catalogue's keys by [`PHASE_FEEDING`], other words by what they
/// contain; `None` for a phase neither knows.
pub fn resolve_ec_phase(phase: &str) -> Option<&'static str> {
    let p = phase.trim().to_ascii_lowercase();
    if let Some((_, coarse)) = PHASE_FEEDING.iter().find(|(k, _)| *k == p) {
        return Some(coarse);
    }
    let has = |words: &[&str]| words.iter().any(|w| p.contains(w));
    if has(&["flush"]) {
        Some("flushing")
    } else if has(&["dorman", "rest", "dieback", "senescen", "vernali"]) {
        Some("rest")
    } else if has(&[
        "germin", "seedling", "sprout", "cutting", "clone", "propagat",
    ]) {
        Some("seedling")
    } else if has(&["veg", "growth", "leaf", "juvenile"]) {
        Some("vegetative")
    } else if has(&["flower", "bloom", "fruit", "ripen", "generative", "harvest"]) {
        Some("flowering")
    } else {
        None
    }
}

/// The source of the rest-phase rule: a plant at rest takes up almost nothing, so it is not
/// fed (salts would build up in the root zone).
pub const REST_FEEDING_SOURCE: &str = "Iowa State University Extension and Outreach, \
     Horticulture and Home Pest News, FAQ \"How often should I fertilize houseplants?\" \
     (hortnews.extension.iastate.edu/faq/how-often-should-i-fertilize-houseplants): fertilize \
     when actively growing in spring and summer; do not fertilize during the winter months, \
     when most houseplants are not actively growing";

/// Whether a phase is a rest phase, which is not fed: the one rule the mixing protocol, the
/// nutrient plans (their entries, a plant's current targets) and plan coverage share. A rest
/// phase is one [`resolve_ec_phase`] maps to `rest`: dormancy, summer dormancy, dry and winter
/// rest, foliage dieback, leaf renewal, vernalization, senescence, and any phase named for
/// rest or dormancy.
pub fn is_rest_phase(phase: &str) -> bool {
    resolve_ec_phase(phase) == Some("rest")
}

/// Why a rest phase is not fed, with its source (shown by every face that refuses to feed).
pub fn rest_phase_reason() -> String {
    format!(
        "a rest phase is not fed: the plant takes up almost nothing and salts would build up \
         in the root zone (source: {REST_FEEDING_SOURCE})."
    )
}

/// EC range (mS/cm) per substrate class and coarse phase; unknown phases (0.8, 2.0).
pub fn ec_range(class: SubstrateClass, phase: Option<&str>) -> (f64, f64) {
    let class = match class {
        SubstrateClass::LivingSoil => SubstrateClass::Soil,
        c => c,
    };
    match (class, phase) {
        (_, Some("flushing" | "rest")) => (0.0, 0.3),
        (SubstrateClass::Hydro, Some("seedling")) => (0.8, 1.2),
        (SubstrateClass::Hydro, Some("vegetative")) => (1.6, 2.4),
        (SubstrateClass::Hydro, Some("flowering")) => (1.8, 2.8),
        (SubstrateClass::Coco, Some("seedling")) => (0.8, 1.0),
        (SubstrateClass::Coco, Some("vegetative")) => (1.6, 2.0),
        (SubstrateClass::Coco, Some("flowering")) => (1.8, 2.4),
        (_, Some("seedling")) => (0.4, 0.6),
        (_, Some("vegetative")) => (0.8, 1.4),
        (_, Some("flowering")) => (1.0, 1.6),
        _ => (0.8, 2.0),
    }
}

/// A crop's own EC range where a publication gives one: it takes the place of the substrate
/// class's row for the substrates it is written for, in the feeding phases (seedling,
/// vegetative, flowering; flushing and rest keep 0–0.3).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CropEcRange {
    /// The crop: a genus ("Phalaenopsis") or a binomial ("Lactuca sativa").
    pub crop: &'static str,
    /// The substrate classes the range is written for (none: every substrate).
    pub classes: &'static [SubstrateClass],
    pub min_ms: f64,
    pub max_ms: f64,
    pub source: &'static str,
}

/// The crops with a published range. Where two sources differ, the lower maximum holds.
pub const CROP_EC_RANGES: &[CropEcRange] = &[
    CropEcRange {
        crop: "Phalaenopsis",
        classes: &[],
        min_ms: 0.8,
        max_ms: 1.0,
        source: "Gan Lin Agriculture, Phalaenopsis cultivation: fertilizing (ganlinorchid.com): \
                 fertilizer EC 0.8-1.2 mS/cm, source water below 0.3; research trial \
                 \"Influence of fertilization and a high daily light integral on the growth and \
                 flowering of Phalaenopsis\" (2015): of EC 1.0 and 1.7 mS/cm, 1.0 with 14 or \
                 20 mM nitrogen gave the most spikes and no spike disease. The lower maximum \
                 (1.0) holds",
    },
    CropEcRange {
        crop: "Lactuca sativa",
        classes: &[SubstrateClass::Hydro, SubstrateClass::Coco],
        min_ms: 1.2,
        max_ms: 1.8,
        source: "University of Florida IFAS Extension, EDIS publication AE610 (citing Brechner \
                 and Both 2013, Cornell Controlled Environment Agriculture Hydroponic Lettuce \
                 Handbook): lettuce in NFT is kept at EC 1.2 dS/m during germination and \
                 1.5–1.8 dS/m during production (1 dS/m = 1 mS/cm)",
    },
];

/// The crop's own range for a substrate class and a coarse phase, where [`CROP_EC_RANGES`]
/// has one: matched by binomial first, then by genus (the first word), case-insensitively.
/// `None` for flushing and rest (0–0.3 for every crop), an unknown phase, a crop without a
/// range, or a substrate the range is not written for.
pub fn crop_ec_range(
    scientific_name: &str,
    class: SubstrateClass,
    phase: Option<&str>,
) -> Option<&'static CropEcRange> {
    if !matches!(phase, Some("seedling" | "vegetative" | "flowering")) {
        return None;
    }
    let class = match class {
        SubstrateClass::LivingSoil => SubstrateClass::Soil,
        c => c,
    };
    let words: Vec<String> = scientific_name
        .split_whitespace()
        .map(str::to_lowercase)
        .collect();
    let binomial = words.iter().take(2).cloned().collect::<Vec<_>>().join(" ");
    let genus = words.first()?.clone();
    let fits = |r: &&CropEcRange| r.classes.is_empty() || r.classes.contains(&class);
    CROP_EC_RANGES
        .iter()
        .filter(fits)
        .find(|r| r.crop.to_lowercase() == binomial)
        .or_else(|| {
            CROP_EC_RANGES
                .iter()
                .filter(fits)
                .find(|r| !r.crop.contains(' ') && r.crop.to_lowercase() == genus)
        })
}

/// A product named as a silicate (potassium or sodium silicate pH-up, AgSil, …).
pub fn is_silicate_name(name: &str) -> bool {
    let n = name.to_lowercase();
    n.contains("silicat") || n.contains("agsil")
}

pub fn ph_reserve(alkalinity_ppm: f64) -> f64 {
    if alkalinity_ppm < 50.0 {
        0.02
    } else if alkalinity_ppm <= 150.0 {
        0.03
    } else {
        0.05
    }
}

/// The checked request.
#[derive(Debug, Clone, PartialEq)]
pub struct MixRequest {
    pub products: Vec<MixProduct>,
    pub target_volume_liters: f64,
    pub target_ec_ms: f64,
    pub base_water_ec_ms: f64,
    pub target_ph: f64,
    pub base_water_ph: f64,
    pub alkalinity_ppm: f64,
    pub substrate_type: String,
    /// Cycles the substrate has been used; 0 = fresh (CalMag +20 % in coco).
    pub substrate_cycles_used: Option<u32>,
    pub phase: String,
    pub water_temp_c: Option<f64>,
    /// The crop's scientific name, where known: its own EC range ([`crop_ec_range`]) takes the
    /// place of the substrate class's.
    pub crop: Option<String>,
}

impl MixRequest {
    /// Checks bounds; field names are the request's (`products[i].…` for a product).
    pub fn new(r: MixRequest) -> Result<Self, Vec<FieldProblem>> {
        let mut p = Vec::new();
        if r.products.is_empty() || r.products.len() > PRODUCTS_MAX {
            p.push(FieldProblem::new(
                "fertilizers",
                format!("give 1 to {PRODUCTS_MAX} products"),
            ));
        }
        for (i, prod) in r.products.iter().enumerate() {
            if r.products[..i].iter().any(|o| o.key == prod.key) {
                p.push(FieldProblem::new(
                    format!("fertilizers[{i}].fertilizer_key"),
                    "appears twice; give each product once",
                ));
            }
            if let Some(d) = prod.recipe_ml_per_liter {
                check_positive(
                    &mut p,
                    &format!("fertilizers[{i}].ml_per_liter"),
                    d,
                    RECIPE_MAX_ML_PER_L,
                );
            }
        }
        check_positive(
            &mut p,
            "target_volume_liters",
            r.target_volume_liters,
            VOLUME_MAX_L,
        );
        check_positive(&mut p, "target_ec_ms", r.target_ec_ms, EC_MAX_MS);
        check_range(
            &mut p,
            "base_water_ec_ms",
            r.base_water_ec_ms,
            0.0,
            WATER_EC_MAX_MS,
        );
        check_range(&mut p, "target_ph", r.target_ph, PH_MIN, PH_MAX);
        check_range(&mut p, "base_water_ph", r.base_water_ph, PH_MIN, PH_MAX);
        check_range(
            &mut p,
            "alkalinity_ppm",
            r.alkalinity_ppm,
            0.0,
            ALKALINITY_MAX_PPM,
        );
        if !SUBSTRATE_TYPES.contains(&r.substrate_type.as_str()) {
            p.push(FieldProblem::new(
                "substrate_type",
                format!("must be one of {}", SUBSTRATE_TYPES.join(", ")),
            ));
        }
        if r.phase.trim().is_empty() || r.phase.chars().count() > 50 {
            p.push(FieldProblem::new("phase", "must be 1 to 50 characters"));
        }
        if let Some(t) = r.water_temp_c {
            check_range(
                &mut p,
                "water_temp_c",
                t,
                WATER_TEMP_MIN_C,
                WATER_TEMP_MAX_C,
            );
        }
        if p.is_empty() { Ok(r) } else { Err(p) }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, salvo::oapi::ToSchema)]
pub struct Dosage {
    pub fertilizer_key: String,
    pub product_name: String,
    pub mixing_priority: u8,
    /// ml per litre, 2 decimals.
    pub ml_per_liter: f64,
    /// ml for the whole tank, 1 decimal.
    pub total_ml: f64,
    /// mS/cm this product adds, 3 decimals.
    pub ec_contribution: f64,
    /// The dose hit the product's maximum.
    pub capped: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, salvo::oapi::ToSchema)]
pub struct MixWarning {
    /// Stable code: `living_soil_bypass`, `rest_phase_no_feeding`, `base_water_meets_target`,
    /// `target_above_range`, `budget_exhausted`, `dose_capped`, `ec_above_range`,
    /// `ec_off_target`, `calcium_after_sulfate`, `silicate_after_calcium`, `not_tank_safe`,
    /// `ph_conflict`, `water_cold`, `water_warm`, `water_too_hot_for_biologicals`,
    /// `no_ec_products`.
    pub code: String,
    /// `critical` or `warning`.
    pub severity: String,
    pub message: String,
}

/// The pH step: read after all additions, adjusted in the direction read.
#[derive(Debug, Clone, PartialEq, Serialize, salvo::oapi::ToSchema)]
pub struct PhAdjustment {
    /// True whenever products go in: the pH is read after the last one (the water's pH before
    /// the nutrients does not tell the direction; mineral nutrients usually lower it).
    pub measure_after_additions: bool,
    pub target_ph: f64,
    /// Acids for a reading above the target: the chosen acidic adjusters, else phosphoric,
    /// nitric or citric acid.
    pub lower_with: Vec<String>,
    /// Bases for a reading below the target: the chosen alkaline adjusters, else potassium
    /// hydroxide (KOH) or potassium carbonate (K2CO3); never a silicate once calcium is in.
    pub raise_with: Vec<String>,
    /// EC the correction is expected to add, mS/cm (the pH reserve): the chosen adjusters'
    /// EC at their label dose, at least the alkalinity reserve.
    pub expected_ec_ms: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, salvo::oapi::ToSchema)]
pub struct MixingProtocol {
    pub valid: bool,
    pub living_soil_bypass: bool,
    /// The phase is a rest phase (dormancy, dry rest, …): nothing is fed.
    pub rest_phase: bool,
    pub target_volume_liters: f64,
    pub target_ec_ms: f64,
    pub base_water_ec_ms: f64,
    pub phase: String,
    /// The coarse phase the EC table used (`seedling`, `vegetative`, `flowering`, `flushing`,
    /// `rest`); null when the phase is not known to it.
    pub resolved_ec_phase: Option<String>,
    /// `hydro`, `coco`, `soil` or `living_soil`.
    pub substrate_class: String,
    pub ec_range_min_ms: f64,
    pub ec_range_max_ms: f64,
    /// `crop` when the range is the crop's own (Phalaenopsis, lettuce in soilless culture),
    /// else `substrate_class`.
    pub ec_range_basis: String,
    /// The crop whose range was used; null when the substrate class's row was.
    pub ec_range_crop: Option<String>,
    /// The publication the crop's range comes from; null when the substrate class's row was.
    pub ec_range_source: Option<String>,
    pub ec_net: f64,
    pub ec_ph_reserve: f64,
    pub ec_uncertainty_reserve: f64,
    /// EC the solution should read after mixing, 3 decimals.
    pub calculated_ec: f64,
    pub tolerance_ms: f64,
    /// In mixing order.
    pub dosages: Vec<Dosage>,
    pub ph_adjustment: PhAdjustment,
    pub instructions: Vec<String>,
    pub warnings: Vec<MixWarning>,
}

fn warn(ws: &mut Vec<MixWarning>, code: &str, severity: &str, message: String) {
    ws.push(MixWarning {
        code: code.to_owned(),
        severity: severity.to_owned(),
        message,
    });
}

pub fn calculate(r: &MixRequest) -> MixingProtocol {
    let class = substrate_class(&r.substrate_type);
    let resolved = resolve_ec_phase(&r.phase);
    let by_crop = r
        .crop
        .as_deref()
        .and_then(|c| crop_ec_range(c, class, resolved));
    let (ec_min, ec_max) = match by_crop {
        Some(c) => (c.min_ms, c.max_ms),
        None => ec_range(class, resolved),
    };
    let mut warnings: Vec<MixWarning> = Vec::new();
    let adjusters = |effect: PhEffect| -> Vec<String> {
        r.products
            .iter()
            .filter(|p| p.role == ProductRole::PhAdjuster && p.ph_effect == effect)
            .map(|p| p.name.clone())
            .collect()
    };
    let acids = adjusters(PhEffect::Acidic);
    // A silicate pH-up read after the calcium sources would precipitate calcium silicate, the
    // same reaction `silicate_after_calcium` calls critical: it is not named for the pH step.
    let any_calcium = r.products.iter().any(|p| p.calcium);
    let (silicate_bases, bases): (Vec<String>, Vec<String>) = adjusters(PhEffect::Alkaline)
        .into_iter()
        .partition(|name| any_calcium && is_silicate_name(name));
    // Only one direction is corrected, so the larger adjuster EC is the one to keep back.
    let adjuster_ec = r
        .products
        .iter()
        .filter(|p| p.role == ProductRole::PhAdjuster)
        .map(|p| p.recommended_dose_ml_per_liter * p.ec_per_ml)
        .fold(0.0, f64::max);
    let reserve = ph_reserve(r.alkalinity_ppm).max(round(adjuster_ec, 3));
    let ph_adjustment = PhAdjustment {
        measure_after_additions: true,
        target_ph: r.target_ph,
        lower_with: if acids.is_empty() {
            vec![GENERIC_ACIDS.to_owned()]
        } else {
            acids.clone()
        },
        raise_with: if bases.is_empty() {
            vec![GENERIC_BASES.to_owned()]
        } else {
            bases.clone()
        },
        expected_ec_ms: reserve,
    };
    for name in &silicate_bases {
        warn(
            &mut warnings,
            "silicate_ph_up_after_calcium",
            "warning",
            format!(
                "{name} is a silicate: at the pH step the calcium is already in the tank and \
                 calcium silicate would precipitate. Raise the pH with {GENERIC_BASES} instead."
            ),
        );
    }
    let mut protocol = MixingProtocol {
        valid: true,
        living_soil_bypass: false,
        rest_phase: false,
        target_volume_liters: r.target_volume_liters,
        target_ec_ms: r.target_ec_ms,
        base_water_ec_ms: r.base_water_ec_ms,
        phase: r.phase.clone(),
        resolved_ec_phase: resolved.map(str::to_owned),
        substrate_class: match class {
            SubstrateClass::Hydro => "hydro",
            SubstrateClass::Coco => "coco",
            SubstrateClass::Soil => "soil",
            SubstrateClass::LivingSoil => "living_soil",
        }
        .to_owned(),
        ec_range_min_ms: ec_min,
        ec_range_max_ms: ec_max,
        ec_range_basis: if by_crop.is_some() {
            "crop"
        } else {
            "substrate_class"
        }
        .to_owned(),
        ec_range_crop: by_crop.map(|c| c.crop.to_owned()),
        ec_range_source: by_crop.map(|c| c.source.to_owned()),
        ec_net: 0.0,
        ec_ph_reserve: 0.0,
        ec_uncertainty_reserve: 0.0,
        calculated_ec: r.base_water_ec_ms,
        tolerance_ms: round((0.1 * r.target_ec_ms).max(0.1), 3),
        dosages: Vec::new(),
        ph_adjustment,
        instructions: Vec::new(),
        warnings: Vec::new(),
    };
    if class == SubstrateClass::LivingSoil {
        warn(
            &mut warnings,
            "living_soil_bypass",
            "warning",
            "Living soil is fed by its soil life: no EC dosing. Top-dress organic amendments \
             and water with plain (dechlorinated) water instead."
                .to_owned(),
        );
        protocol.living_soil_bypass = true;
        protocol.ph_adjustment.measure_after_additions = false;
        protocol.ph_adjustment.expected_ec_ms = 0.0;
        protocol.warnings = warnings;
        protocol.instructions = vec![format!(
            "Fill {} litres of water; do not add mineral nutrients.",
            r.target_volume_liters
        )];
        return protocol;
    }
    if resolved == Some("rest") {
        warn(
            &mut warnings,
            "rest_phase_no_feeding",
            "warning",
            format!(
                "{}: {} Water sparingly with plain water.",
                r.phase,
                rest_phase_reason()
            ),
        );
        protocol.rest_phase = true;
        protocol.ph_adjustment.measure_after_additions = false;
        protocol.ph_adjustment.expected_ec_ms = 0.0;
        protocol.warnings = warnings;
        protocol.instructions = vec![format!(
            "Rest phase ({}): no nutrients. Water only when the substrate calls for it, with \
             plain water ({} mS/cm).",
            r.phase, r.base_water_ec_ms
        )];
        return protocol;
    }
    if r.target_ec_ms > ec_max {
        warn(
            &mut warnings,
            "target_above_range",
            "warning",
            format!(
                "Target EC {} mS/cm is above the {ec_min}-{ec_max} mS/cm range for this phase \
                 in this substrate.",
                r.target_ec_ms
            ),
        );
    }
    let ec_net = (r.target_ec_ms - r.base_water_ec_ms).max(0.0);
    if ec_net <= 0.0 {
        warn(
            &mut warnings,
            "base_water_meets_target",
            "warning",
            format!(
                "The base water ({} mS/cm) meets or exceeds the target ({} mS/cm): nothing \
                 can be dosed; dilute with RO water.",
                r.base_water_ec_ms, r.target_ec_ms
            ),
        );
    }
    let fresh_coco = class == SubstrateClass::Coco && r.substrate_cycles_used == Some(0);

    // Mixing order first: every later step walks the products in it.
    let mut ordered: Vec<&MixProduct> = r.products.iter().collect();
    ordered.sort_by(|a, b| {
        a.mixing_priority
            .cmp(&b.mixing_priority)
            .then_with(|| a.name.cmp(&b.name))
    });

    let cap = |p: &MixProduct, dose: f64, ws: &mut Vec<MixWarning>| -> (f64, bool) {
        let max = p.max_dose_ml_per_liter.unwrap_or(FALLBACK_MAX_DOSE);
        if dose > max {
            warn(
                ws,
                "dose_capped",
                "warning",
                format!(
                    "{}: {:.2} ml/L needed, capped at its maximum of {max} ml/L.",
                    p.name, dose
                ),
            );
            (max, true)
        } else {
            (dose, false)
        }
    };

    // Step 5: pre-deductions (only when there is a budget at all).
    let mut doses: Vec<(&MixProduct, f64, bool)> = Vec::new();
    let mut pre_ec = 0.0;
    let mut uncertain = 0.0;
    if ec_net > 0.0 {
        for role in [ProductRole::Silicate, ProductRole::CalMag] {
            for p in ordered.iter().filter(|p| p.role == role) {
                let mut dose = p
                    .recipe_ml_per_liter
                    .unwrap_or(p.recommended_dose_ml_per_liter);
                if role == ProductRole::CalMag && fresh_coco {
                    dose *= FRESH_COCO_CALMAG_FACTOR;
                }
                let (dose, capped) = cap(p, dose, &mut warnings);
                pre_ec += dose * p.ec_per_ml;
                if role == ProductRole::Silicate && p.ec_uncertain {
                    uncertain += UNCERTAIN_RESERVE;
                }
                doses.push((p, dose, capped));
            }
        }
    }
    // Step 6 and 7: the nutrients share what is left.
    let nutrients: Vec<&MixProduct> = ordered
        .iter()
        .copied()
        .filter(|p| p.role == ProductRole::Nutrient)
        .collect();
    let with_ec: Vec<&MixProduct> = nutrients
        .iter()
        .copied()
        .filter(|p| p.ec_per_ml > 0.0)
        .collect();
    uncertain += UNCERTAIN_RESERVE * with_ec.iter().filter(|p| p.ec_uncertain).count() as f64;
    let remaining_raw = ec_net - pre_ec - reserve - uncertain;
    let remaining = remaining_raw.max(0.0);
    if ec_net > 0.0 && remaining_raw <= 0.0 && !with_ec.is_empty() {
        warn(
            &mut warnings,
            "budget_exhausted",
            "warning",
            format!(
                "Silicate, CalMag and the reserves use the whole EC budget of {:.3} mS/cm: the \
                 base nutrients get nothing.",
                ec_net
            ),
        );
    }
    if ec_net > 0.0 && with_ec.is_empty() {
        warn(
            &mut warnings,
            "no_ec_products",
            "warning",
            "None of the chosen base products states an EC contribution, so none can be dosed \
             to the target."
                .to_owned(),
        );
    }
    if ec_net > 0.0 && !with_ec.is_empty() {
        // The ratio: the caller's recipe, else each product's label dose.
        let ratio = |p: &MixProduct| {
            p.recipe_ml_per_liter
                .unwrap_or(p.recommended_dose_ml_per_liter)
        };
        let ec_ratio: f64 = with_ec.iter().map(|p| ratio(p) * p.ec_per_ml).sum();
        let k = if ec_ratio > 0.0 {
            remaining / ec_ratio
        } else {
            0.0
        };
        for p in &with_ec {
            let (dose, capped) = cap(p, k * ratio(p), &mut warnings);
            doses.push((p, dose, capped));
        }
    }
    // Products without EC (biologicals, enzymes) at their recipe or recommended dose.
    for p in nutrients.iter().filter(|p| p.ec_per_ml <= 0.0) {
        let dose = p
            .recipe_ml_per_liter
            .unwrap_or(p.recommended_dose_ml_per_liter);
        let (dose, capped) = cap(p, dose, &mut warnings);
        doses.push((p, dose, capped));
    }
    // Back into mixing order.
    doses.sort_by(|a, b| {
        a.0.mixing_priority
            .cmp(&b.0.mixing_priority)
            .then_with(|| a.0.name.cmp(&b.0.name))
    });

    let products_ec: f64 = doses.iter().map(|(p, d, _)| d * p.ec_per_ml).sum();
    let applied_reserve = if ec_net > 0.0 { reserve } else { 0.0 };
    let calculated = r.base_water_ec_ms + products_ec + applied_reserve;
    protocol.ec_net = round(ec_net, 3);
    protocol.ec_ph_reserve = applied_reserve;
    protocol.ec_uncertainty_reserve = round(uncertain, 3);
    protocol.calculated_ec = round(calculated, 3);
    protocol.dosages = doses
        .iter()
        .map(|(p, d, capped)| Dosage {
            fertilizer_key: p.key.clone(),
            product_name: p.name.clone(),
            mixing_priority: p.mixing_priority,
            ml_per_liter: round(*d, 2),
            total_ml: round(d * r.target_volume_liters, 1),
            ec_contribution: round(d * p.ec_per_ml, 3),
            capped: *capped,
        })
        .collect();

    let mut valid = true;
    if calculated > ec_max + 1e-9 {
        valid = false;
        warn(
            &mut warnings,
            "ec_above_range",
            "critical",
            format!(
                "The solution would read {:.3} mS/cm, above the phase maximum of {ec_max} \
                 mS/cm.",
                calculated
            ),
        );
    }
    if (calculated - r.target_ec_ms).abs() > protocol.tolerance_ms + 1e-9 {
        valid = false;
        warn(
            &mut warnings,
            "ec_off_target",
            "warning",
            format!(
                "The solution would read {:.3} mS/cm, more than {} mS/cm from the target {}.",
                calculated, protocol.tolerance_ms, r.target_ec_ms
            ),
        );
    }

    // Safety checks over the mixing order.
    let in_order: Vec<&MixProduct> = doses.iter().map(|(p, _, _)| *p).collect();
    for (i, p) in in_order.iter().enumerate() {
        let before = &in_order[..i];
        if p.calcium
            && let Some(s) = before.iter().find(|b| b.sulfate && b.key != p.key)
        {
            valid = false;
            warn(
                &mut warnings,
                "calcium_after_sulfate",
                "critical",
                format!(
                    "{} (a calcium source) goes in after {} (a sulfate): calcium sulfate \
                     (gypsum) precipitates. Add the calcium first and let it mix in.",
                    p.name, s.name
                ),
            );
        }
        if p.role == ProductRole::Silicate
            && let Some(c) = before.iter().find(|b| b.calcium)
        {
            valid = false;
            warn(
                &mut warnings,
                "silicate_after_calcium",
                "critical",
                format!(
                    "{} (silicate) goes in after {} (a calcium source): calcium silicate \
                     precipitates. Add silicate first.",
                    p.name, c.name
                ),
            );
        }
    }
    for p in r.products.iter().filter(|p| !p.tank_safe) {
        warn(
            &mut warnings,
            "not_tank_safe",
            "warning",
            format!(
                "{} is not tank-safe: apply it by hand (drench or top dressing), not through a \
                 fertigation tank.",
                p.name
            ),
        );
    }
    let acidic = r.products.iter().find(|p| p.ph_effect == PhEffect::Acidic);
    let alkaline = r
        .products
        .iter()
        .find(|p| p.ph_effect == PhEffect::Alkaline);
    if let (Some(a), Some(b)) = (acidic, alkaline) {
        warn(
            &mut warnings,
            "ph_conflict",
            "warning",
            format!(
                "{} acidifies and {} alkalises: they work against each other; check pH after \
                 each.",
                a.name, b.name
            ),
        );
    }
    if let Some(t) = r.water_temp_c {
        if t < 5.0 {
            warn(
                &mut warnings,
                "water_cold",
                "warning",
                format!("Water at {t} °C: salts dissolve poorly below 5 °C; use 18-22 °C."),
            );
        } else if t > 35.0 && r.products.iter().any(|p| p.biological) {
            warn(
                &mut warnings,
                "water_too_hot_for_biologicals",
                "warning",
                format!("Water at {t} °C kills the microbes of biological products."),
            );
        } else if t > 30.0 {
            warn(
                &mut warnings,
                "water_warm",
                "warning",
                format!(
                    "Water at {t} °C: above 30 °C nutrients degrade and oxygen drops; use \
                     18-22 °C."
                ),
            );
        }
    }

    let mut instructions = vec![format!(
        "Fill {} litres of water at 18-22 °C.",
        r.target_volume_liters
    )];
    for d in &protocol.dosages {
        let silicate = in_order
            .iter()
            .any(|p| p.key == d.fertilizer_key && p.role == ProductRole::Silicate);
        instructions.push(format!(
            "Add {} ml of {} ({} ml/L) and mix thoroughly{}.",
            d.total_ml,
            d.product_name,
            d.ml_per_liter,
            if silicate {
                "; wait 5 minutes before the next product"
            } else {
                ""
            }
        ));
    }
    instructions.push(format!(
        "Stir, then measure the pH with everything in (the nutrients move it; the water's pH \
         before them does not tell which way). Above {t}: lower it with {} (acids). Below {t}: \
         raise it with {} (bases). Add in small steps, stir and measure again.",
        protocol.ph_adjustment.lower_with.join(", "),
        protocol.ph_adjustment.raise_with.join(", "),
        t = r.target_ph,
    ));
    instructions.push(format!(
        "Verify the EC: it should read about {:.2} mS/cm (target {}).",
        calculated, r.target_ec_ms
    ));
    protocol.instructions = instructions;
    protocol.valid = valid;
    protocol.warnings = warnings;
    protocol
}

#[cfg(test)]
mod tests {
    use super::*;

    fn product(key: &str, role: ProductRole, ec: f64, priority: u8) -> MixProduct {
        MixProduct {
            key: key.to_owned(),
            name: key.to_owned(),
            role,
            ec_per_ml: ec,
            ec_uncertain: false,
            max_dose_ml_per_liter: Some(10.0),
            recommended_dose_ml_per_liter: 1.0,
            mixing_priority: priority,
            tank_safe: true,
            ph_effect: PhEffect::Neutral,
            biological: false,
            sulfate: false,
            calcium: role == ProductRole::CalMag,
            recipe_ml_per_liter: None,
        }
    }

    fn request(products: Vec<MixProduct>) -> MixRequest {
        MixRequest {
            products,
            target_volume_liters: 20.0,
            target_ec_ms: 1.8,
            base_water_ec_ms: 0.4,
            target_ph: 6.0,
            base_water_ph: 7.2,
            alkalinity_ppm: 100.0,
            substrate_type: "coco".into(),
            substrate_cycles_used: None,
            phase: "vegetative".into(),
            water_temp_c: Some(20.0),
            crop: None,
        }
    }

    /// Coco, vegetative (range 1.6–2.0), 20 L, target 1.8, base 0.4, alkalinity 10 → reserve
    /// 0.02. Products: CalMag (EC 0.1/ml, recommended 1 ml/L, priority 20), A and B (EC 0.2/ml,
    /// priorities 30 and 31), no recipe.
    /// EC_net = 1.8 − 0.4 = 1.4. CalMag 1 ml/L → 0.1 mS. Remaining = 1.4 − 0.1 − 0.02 = 1.28.
    /// Equal share 0.64 each → dose 0.64 ÷ 0.2 = 3.2 ml/L (total 64 ml).
    /// EC_final = 0.4 + 0.1 + 0.64·2 + 0.02 = 1.8 → valid. Order: CalMag, A, B.
    /// pH: measured after all additions; no adjuster chosen, so the generic acids and bases.
    #[test]
    fn equal_share_reaches_the_target() {
        let mut req = request(vec![
            product("b", ProductRole::Nutrient, 0.2, 31),
            product("a", ProductRole::Nutrient, 0.2, 30),
            product("calmag", ProductRole::CalMag, 0.1, 20),
        ]);
        req.alkalinity_ppm = 10.0;
        let r = MixRequest::new(req).expect("valid");
        let p = calculate(&r);
        assert!(p.valid, "{:?}", p.warnings);
        assert_eq!(p.ec_net, 1.4);
        assert_eq!(p.ec_ph_reserve, 0.02);
        assert_eq!(p.calculated_ec, 1.8);
        assert_eq!((p.ec_range_min_ms, p.ec_range_max_ms), (1.6, 2.0));
        let keys: Vec<_> = p
            .dosages
            .iter()
            .map(|d| d.fertilizer_key.as_str())
            .collect();
        assert_eq!(keys, ["calmag", "a", "b"]);
        assert_eq!(p.dosages[0].ml_per_liter, 1.0);
        assert_eq!(p.dosages[0].total_ml, 20.0);
        assert_eq!(p.dosages[1].ml_per_liter, 3.2);
        assert_eq!(p.dosages[1].total_ml, 64.0);
        assert_eq!(p.dosages[1].ec_contribution, 0.64);
        assert!(p.ph_adjustment.measure_after_additions);
        assert_eq!(p.ph_adjustment.lower_with, [GENERIC_ACIDS]);
        assert_eq!(p.ph_adjustment.raise_with, [GENERIC_BASES]);
        assert_eq!(p.ph_adjustment.expected_ec_ms, 0.02);
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        assert_eq!(p.instructions.len(), 1 + 3 + 2);
    }

    /// Recipe: A 2 ml/L (EC 0.25), B 1 ml/L (EC 0.15), hydro flowering (1.8–2.8), target 2.0,
    /// base 0.0, alkalinity 0 → reserve 0.02. EC_recipe = 2·0.25 + 1·0.15 = 0.65. Remaining =
    /// 2.0 − 0.02 = 1.98; k = 1.98 ÷ 0.65 = 3.04615. A = 6.0923 ml/L → 6.09 (121.8 ml), EC
    /// 1.523; B = 3.0462 → 3.05, EC 0.457. EC_final = 1.523 + 0.457 + 0.02 = 2.0.
    #[test]
    fn recipe_is_scaled_to_the_budget() {
        let mut a = product("a", ProductRole::Nutrient, 0.25, 30);
        a.recipe_ml_per_liter = Some(2.0);
        let mut b = product("b", ProductRole::Nutrient, 0.15, 31);
        b.recipe_ml_per_liter = Some(1.0);
        let mut req = request(vec![a, b]);
        req.substrate_type = "rockwool_slab".into();
        req.phase = "fruiting".into();
        req.target_ec_ms = 2.0;
        req.base_water_ec_ms = 0.0;
        req.alkalinity_ppm = 0.0;
        let p = calculate(&MixRequest::new(req).expect("valid"));
        assert!(p.valid, "{:?}", p.warnings);
        assert_eq!(p.resolved_ec_phase.as_deref(), Some("flowering"));
        assert_eq!(p.substrate_class, "hydro");
        assert_eq!(p.dosages[0].ml_per_liter, 6.09);
        assert_eq!(p.dosages[0].total_ml, 121.8);
        assert_eq!(p.dosages[0].ec_contribution, 1.523);
        assert_eq!(p.dosages[1].ml_per_liter, 3.05);
        assert_eq!(p.calculated_ec, 2.0);
    }

    /// A dose over the maximum is capped and the target missed: soil vegetative (0.8–1.4),
    /// target 1.4, base 0.2, alkalinity 200 → reserve 0.05; one product EC 0.05/ml, max 10.
    /// Remaining = 1.2 − 0.05 = 1.15 → 23 ml/L needed, capped at 10 → EC 0.5.
    /// EC_final = 0.2 + 0.5 + 0.05 = 0.75; |0.75 − 1.4| = 0.65 > tolerance 0.14 → invalid.
    #[test]
    fn capped_dose_misses_the_target() {
        let mut req = request(vec![product("weak", ProductRole::Nutrient, 0.05, 50)]);
        req.substrate_type = "soil".into();
        req.target_ec_ms = 1.4;
        req.base_water_ec_ms = 0.2;
        req.alkalinity_ppm = 200.0;
        let p = calculate(&MixRequest::new(req).expect("valid"));
        assert!(!p.valid);
        assert_eq!(p.tolerance_ms, 0.14);
        assert_eq!(p.dosages[0].ml_per_liter, 10.0);
        assert!(p.dosages[0].capped);
        assert_eq!(p.calculated_ec, 0.75);
        let codes: Vec<_> = p.warnings.iter().map(|w| w.code.as_str()).collect();
        assert_eq!(codes, ["dose_capped", "ec_off_target"]);
    }

    /// Base water 1.0 mS, target 0.9: EC_net = 0 → nothing dosed, warning; EC_final = base =
    /// 1.0, |1.0 − 0.9| = 0.1 ≤ tolerance 0.1 → still within tolerance, but the warning stays.
    /// Target 3.0 in coco vegetative (max 2.0) warns target_above_range and the result (3.0)
    /// is above the range → invalid, critical.
    #[test]
    fn base_water_and_range_limits() {
        let mut req = request(vec![product("a", ProductRole::Nutrient, 0.2, 30)]);
        req.base_water_ec_ms = 1.0;
        req.target_ec_ms = 0.9;
        let p = calculate(&MixRequest::new(req).expect("valid"));
        assert!(p.dosages.is_empty());
        assert_eq!(p.calculated_ec, 1.0);
        assert_eq!(p.warnings[0].code, "base_water_meets_target");

        let mut req = request(vec![product("a", ProductRole::Nutrient, 0.2, 30)]);
        req.target_ec_ms = 3.0;
        let p = calculate(&MixRequest::new(req).expect("valid"));
        assert!(!p.valid);
        let codes: Vec<_> = p.warnings.iter().map(|w| w.code.as_str()).collect();
        assert!(codes.contains(&"target_above_range"));
        assert!(codes.contains(&"ec_above_range"));
    }

    /// Fresh coco (cycles 0): CalMag recommended 1 ml/L × 1.2 = 1.2 ml/L → 0.12 mS. Silicate
    /// 0.5 ml/L at EC 0.04 (uncertain) → 0.02 mS and 0.15 reserve. Base A EC 0.2 uncertain →
    /// another 0.15. Budget 1.4 − 0.12 − 0.02 − 0.03 − 0.30 = 0.93 → A 4.65 ml/L.
    /// EC_final = 0.4 + 0.02 + 0.12 + 0.93 + 0.03 = 1.5; |1.5 − 1.8| = 0.3 > 0.18 → invalid
    /// (the uncertainty margin is kept back on purpose).
    #[test]
    fn pre_deductions_and_uncertainty() {
        let mut sil = product("sil", ProductRole::Silicate, 0.04, 10);
        sil.recommended_dose_ml_per_liter = 0.5;
        sil.ec_uncertain = true;
        let calmag = product("calmag", ProductRole::CalMag, 0.1, 20);
        let mut a = product("a", ProductRole::Nutrient, 0.2, 30);
        a.ec_uncertain = true;
        let mut req = request(vec![a, calmag, sil]);
        req.substrate_cycles_used = Some(0);
        let p = calculate(&MixRequest::new(req).expect("valid"));
        let doses: Vec<_> = p
            .dosages
            .iter()
            .map(|d| (d.fertilizer_key.as_str(), d.ml_per_liter))
            .collect();
        assert_eq!(doses, [("sil", 0.5), ("calmag", 1.2), ("a", 4.65)]);
        assert_eq!(p.ec_uncertainty_reserve, 0.3);
        assert_eq!(p.calculated_ec, 1.5);
        assert!(!p.valid);
        // Silicate instruction asks to wait.
        assert!(p.instructions[1].contains("wait 5 minutes"));
    }

    /// Wrong priorities: a sulfate (priority 5) before CalMag (20), and CalMag before a
    /// silicate (30): both critical, the protocol invalid. Acidic with alkaline warns; a
    /// non-tank-safe product warns; water at 3 °C warns.
    #[test]
    fn safety_checks() {
        let mut sulfate = product("epsom", ProductRole::Nutrient, 0.1, 5);
        sulfate.sulfate = true;
        sulfate.ph_effect = PhEffect::Acidic;
        let calmag = product("calmag", ProductRole::CalMag, 0.1, 20);
        let mut sil = product("sil", ProductRole::Silicate, 0.05, 30);
        sil.ph_effect = PhEffect::Alkaline;
        sil.tank_safe = false;
        let mut req = request(vec![sulfate, calmag, sil]);
        req.water_temp_c = Some(3.0);
        let p = calculate(&MixRequest::new(req).expect("valid"));
        assert!(!p.valid);
        let codes: Vec<_> = p.warnings.iter().map(|w| w.code.as_str()).collect();
        for code in [
            "calcium_after_sulfate",
            "silicate_after_calcium",
            "not_tank_safe",
            "ph_conflict",
            "water_cold",
        ] {
            assert!(codes.contains(&code), "{code} missing from {codes:?}");
        }
    }

    #[test]
    fn living_soil_is_not_dosed() {
        let mut req = request(vec![product("a", ProductRole::Nutrient, 0.2, 30)]);
        req.substrate_type = "living_soil".into();
        let p = calculate(&MixRequest::new(req).expect("valid"));
        assert!(p.living_soil_bypass);
        assert!(p.dosages.is_empty());
        assert_eq!(p.warnings[0].code, "living_soil_bypass");
    }

    #[test]
    fn phases_resolve_and_unknown_phases_use_the_default_range() {
        for (phase, coarse) in [
            ("germination", Some("seedling")),
            ("vegetative_growth", Some("vegetative")),
            ("ripening", Some("flowering")),
            ("flushing", Some("flushing")),
            ("dormancy", Some("rest")),
            ("harvest", Some("flowering")),
            ("leaf_renewal", Some("rest")),
            ("bud_induction", Some("flowering")),
            ("post_bloom_recovery", Some("vegetative")),
            ("deep_winter_rest", Some("rest")),
            ("moon_phase", None),
        ] {
            assert_eq!(resolve_ec_phase(phase), coarse, "{phase}");
        }
        assert_eq!(ec_range(SubstrateClass::Coco, None), (0.8, 2.0));
        assert_eq!(ec_range(SubstrateClass::Soil, Some("flushing")), (0.0, 0.3));
        assert_eq!(substrate_class("orchid_bark"), SubstrateClass::Coco);
        assert_eq!(substrate_class("peat"), SubstrateClass::Soil);
        assert_eq!(
            (ph_reserve(49.0), ph_reserve(150.0), ph_reserve(151.0)),
            (0.02, 0.03, 0.05)
        );
    }

    /// Without a recipe the label doses give the ratio. Coco flowering (1.8–2.4), target 2.0,
    /// base 0.0, alkalinity 0 → reserve 0.02; remaining 1.98. Base A 3 ml/L at 0.2/ml (0.6 mS),
    /// base B 3 ml/L at 0.2 (0.6), PK booster 0.3 ml/L at 0.7 (0.21): Σ = 1.41; k = 1.98 ÷ 1.41
    /// = 1.40426. A and B 4.2128 → 4.21 ml/L (0.843 mS each), booster 0.4213 → 0.42 ml/L
    /// (0.295 mS). EC_final = 0.843·2 + 0.295 + 0.02 = 2.0. An equal share (the old rule) gave
    /// the booster 0.653 mS = 0.93 ml/L, three times its label dose.
    #[test]
    fn label_doses_give_the_ratio_without_a_recipe() {
        let mut a = product("a", ProductRole::Nutrient, 0.2, 30);
        a.recommended_dose_ml_per_liter = 3.0;
        let mut b = product("b", ProductRole::Nutrient, 0.2, 31);
        b.recommended_dose_ml_per_liter = 3.0;
        let mut pk = product("pk", ProductRole::Nutrient, 0.7, 50);
        pk.recommended_dose_ml_per_liter = 0.3;
        let mut req = request(vec![a, b, pk]);
        req.phase = "flowering".into();
        req.target_ec_ms = 2.0;
        req.base_water_ec_ms = 0.0;
        req.alkalinity_ppm = 0.0;
        let p = calculate(&MixRequest::new(req).expect("valid"));
        assert!(p.valid, "{:?}", p.warnings);
        let doses: Vec<_> = p
            .dosages
            .iter()
            .map(|d| (d.fertilizer_key.as_str(), d.ml_per_liter, d.ec_contribution))
            .collect();
        assert_eq!(
            doses,
            [("a", 4.21, 0.843), ("b", 4.21, 0.843), ("pk", 0.42, 0.295)]
        );
        assert_eq!(p.calculated_ec, 2.0);
    }

    /// The pH step names acids for down and bases for up, never the other way round, and
    /// reads the pH after all additions. The chosen adjusters count for EC: phosphoric acid
    /// at its label dose 0.1 ml/L × 0.5 mS = 0.05, KOH 0.1 × 0.8 = 0.08; the larger (0.08)
    /// beats the alkalinity reserve 0.02 and comes off the budget: coco vegetative, target
    /// 1.8, base 0.4 → remaining 1.4 − 0.08 = 1.32 → A at 0.2/ml 6.6 ml/L; EC_final 0.4 + 1.32 +
    /// 0.08 = 1.8.
    #[test]
    fn ph_step_measures_then_uses_acids_down_and_bases_up() {
        let mut acid = product("acid", ProductRole::PhAdjuster, 0.5, 90);
        acid.name = "Phosphoric acid".into();
        acid.ph_effect = PhEffect::Acidic;
        acid.recommended_dose_ml_per_liter = 0.1;
        let mut base = product("koh", ProductRole::PhAdjuster, 0.8, 91);
        base.name = "Potassium hydroxide".into();
        base.ph_effect = PhEffect::Alkaline;
        base.recommended_dose_ml_per_liter = 0.1;
        let a = product("a", ProductRole::Nutrient, 0.2, 30);
        let mut req = request(vec![a, acid, base]);
        req.alkalinity_ppm = 10.0;
        let p = calculate(&MixRequest::new(req).expect("valid"));
        assert!(p.valid, "{:?}", p.warnings);
        assert_eq!(p.ph_adjustment.lower_with, ["Phosphoric acid"]);
        assert_eq!(p.ph_adjustment.raise_with, ["Potassium hydroxide"]);
        assert_eq!(p.ph_adjustment.expected_ec_ms, 0.08);
        assert_eq!(p.ec_ph_reserve, 0.08);
        assert_eq!(p.dosages.len(), 1);
        assert_eq!(p.dosages[0].ml_per_liter, 6.6);
        assert_eq!(p.calculated_ec, 1.8);
        let step = p
            .instructions
            .iter()
            .find(|i| i.contains("measure the pH"))
            .expect("pH step");
        assert!(
            step.contains("lower it with Phosphoric acid")
                && step.contains("raise it with Potassium hydroxide"),
            "{step}"
        );
        // Without adjusters: generic acids down, bases up; "down … potassium hydroxide" never.
        let p = calculate(
            &MixRequest::new(request(vec![product("a", ProductRole::Nutrient, 0.2, 30)]))
                .expect("valid"),
        );
        let step = p
            .instructions
            .iter()
            .find(|i| i.contains("measure the pH"))
            .expect("pH step");
        assert!(
            step.contains(&format!("lower it with {GENERIC_ACIDS}"))
                && step.contains(&format!("raise it with {GENERIC_BASES}")),
            "{step}"
        );
    }

    /// Harvest is fed like fruiting: tomatoes in hydro at 2.2 mS during harvest are valid
    /// (range 1.8–2.8), not judged against the flushing 0–0.3. Rest phases get no feeding: a
    /// valid answer, no dosages, `rest_phase` and its warning.
    #[test]
    fn harvest_is_fed_and_rest_phases_are_not() {
        let mut req = request(vec![product("a", ProductRole::Nutrient, 0.2, 30)]);
        req.substrate_type = "rockwool_slab".into();
        req.phase = "harvest".into();
        req.target_ec_ms = 2.2;
        let p = calculate(&MixRequest::new(req).expect("valid"));
        assert!(p.valid, "{:?}", p.warnings);
        assert_eq!(p.resolved_ec_phase.as_deref(), Some("flowering"));
        assert_eq!((p.ec_range_min_ms, p.ec_range_max_ms), (1.8, 2.8));
        assert!(!p.dosages.is_empty());
        for phase in [
            "dormancy",
            "dry_rest",
            "winter_rest",
            "foliage_dieback",
            "leaf_renewal",
        ] {
            let mut req = request(vec![product("a", ProductRole::Nutrient, 0.2, 30)]);
            req.phase = phase.into();
            let p = calculate(&MixRequest::new(req).expect("valid"));
            assert!(p.valid, "{phase}");
            assert!(p.rest_phase, "{phase}");
            assert!(p.dosages.is_empty(), "{phase}");
            assert_eq!(p.resolved_ec_phase.as_deref(), Some("rest"));
            assert_eq!(p.warnings[0].code, "rest_phase_no_feeding");
            assert!(
                p.instructions[0].contains("no nutrients"),
                "{:?}",
                p.instructions
            );
        }
    }

    /// The pH-up step never names a silicate once calcium is in the tank (calcium silicate
    /// precipitates: the module's own `silicate_after_calcium` reaction). Rows: (alkaline
    /// adjuster chosen, a calcium source in the mix) → (raise_with, warned):
    /// - none, no calcium → the generic bases KOH or K2CO3, no warning;
    /// - none, calcium → the same (the generic bases hold no silicate);
    /// - "Potassium silicate pH up", calcium → the generic bases, warned;
    /// - "Potassium silicate pH up", no calcium → kept (nothing to precipitate with);
    /// - "Potassium hydroxide", calcium → kept.
    #[test]
    fn ph_up_is_never_a_silicate_after_calcium() {
        assert!(!GENERIC_BASES.to_lowercase().contains("silicat"));
        for (base, calcium, raise, warned) in [
            (None, false, GENERIC_BASES, false),
            (None, true, GENERIC_BASES, false),
            (Some("Potassium silicate pH up"), true, GENERIC_BASES, true),
            (
                Some("Potassium silicate pH up"),
                false,
                "Potassium silicate pH up",
                false,
            ),
            (
                Some("Potassium hydroxide"),
                true,
                "Potassium hydroxide",
                false,
            ),
        ] {
            let mut products = vec![product("a", ProductRole::Nutrient, 0.2, 30)];
            if calcium {
                products.push(product("calmag", ProductRole::CalMag, 0.1, 20));
            }
            if let Some(name) = base {
                let mut b = product("up", ProductRole::PhAdjuster, 0.3, 90);
                b.name = name.into();
                b.ph_effect = PhEffect::Alkaline;
                b.recommended_dose_ml_per_liter = 0.05;
                products.push(b);
            }
            let p = calculate(&MixRequest::new(request(products)).expect("valid"));
            assert_eq!(p.ph_adjustment.raise_with, [raise], "{base:?} {calcium}");
            let codes: Vec<_> = p.warnings.iter().map(|w| w.code.as_str()).collect();
            assert_eq!(
                codes.contains(&"silicate_ph_up_after_calcium"),
                warned,
                "{base:?} {calcium}: {codes:?}"
            );
            let step = p
                .instructions
                .iter()
                .find(|i| i.contains("measure the pH"))
                .expect("pH step");
            assert_eq!(
                step.to_lowercase().contains("silicate"),
                raise.to_lowercase().contains("silicate"),
                "{step}"
            );
        }
    }

    /// One rule for rest phases (the nutrient plans and plan coverage use it too): the
    /// catalogue's rest keys and rest-like words are rest, growing phases are not; the reason
    /// names its source.
    #[test]
    fn rest_phases_are_one_rule_with_a_source() {
        for (phase, rest) in [
            ("dormancy", true),
            ("summer_dormancy", true),
            ("dry_rest", true),
            ("winter_rest", true),
            ("foliage_dieback", true),
            ("leaf_renewal", true),
            ("vernalization", true),
            ("senescence", true),
            ("deep_winter_rest", true),
            ("vegetative", false),
            ("harvest", false),
            ("flushing", false),
            ("post_bloom_recovery", false),
            ("moon_phase", false),
        ] {
            assert_eq!(is_rest_phase(phase), rest, "{phase}");
        }
        let reason = rest_phase_reason();
        assert!(
            reason.contains("not fed") && reason.contains("Iowa State"),
            "{reason}"
        );
    }

    /// Every calcium source counts for the sulfate check, not only CalMag products: calcium
    /// nitrate (priority 50, Ca 19 %) after Epsom salt (priority 40) precipitates gypsum.
    #[test]
    fn calcium_nitrate_after_a_sulfate_is_critical() {
        let mut epsom = product("epsom", ProductRole::Nutrient, 0.8, 40);
        epsom.sulfate = true;
        let mut canit = product("calcinit", ProductRole::Nutrient, 1.2, 50);
        canit.calcium = true;
        let p = calculate(&MixRequest::new(request(vec![epsom, canit])).expect("valid"));
        assert!(!p.valid);
        let w = p
            .warnings
            .iter()
            .find(|w| w.code == "calcium_after_sulfate")
            .expect("flagged");
        assert_eq!(w.severity, "critical");
        assert!(w.message.starts_with("calcinit"), "{}", w.message);
    }

    #[test]
    fn request_bounds() {
        let mut req = request(vec![]);
        req.target_volume_liters = 0.0;
        req.target_ec_ms = 10.5;
        req.base_water_ec_ms = -0.1;
        req.target_ph = 14.5;
        req.alkalinity_ppm = 600.0;
        req.substrate_type = "moon_dust".into();
        let e = MixRequest::new(req).expect_err("invalid");
        let fields: Vec<_> = e.iter().map(|p| p.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "fertilizers",
                "target_volume_liters",
                "target_ec_ms",
                "base_water_ec_ms",
                "target_ph",
                "alkalinity_ppm",
                "substrate_type"
            ]
        );
    }

    /// The crop's own range replaces the substrate class's where a publication gives one.
    #[test]
    fn ec_range_follows_the_crop() {
        use SubstrateClass::*;
        // (crop, class, phase, range, basis is the crop)
        type Case<'a> = (&'a str, SubstrateClass, Option<&'a str>, (f64, f64), bool);
        let cases: [Case; 12] = [
            // Phalaenopsis in bark (the coco class would say 1.6–2.0): 0.8–1.0.
            (
                "Phalaenopsis amabilis",
                Coco,
                Some("vegetative"),
                (0.8, 1.0),
                true,
            ),
            (
                "Phalaenopsis amabilis",
                Coco,
                Some("flowering"),
                (0.8, 1.0),
                true,
            ),
            (
                "phalaenopsis  hybrid",
                Soil,
                Some("seedling"),
                (0.8, 1.0),
                true,
            ),
            (
                "Phalaenopsis amabilis",
                LivingSoil,
                Some("vegetative"),
                (0.8, 1.0),
                true,
            ),
            // Rest and flushing stay 0–0.3 for every crop.
            (
                "Phalaenopsis amabilis",
                Coco,
                Some("rest"),
                (0.0, 0.3),
                false,
            ),
            (
                "Phalaenopsis amabilis",
                Coco,
                Some("flushing"),
                (0.0, 0.3),
                false,
            ),
            // Hydroponic lettuce (the hydro class would say up to 2.4): 1.2–1.8.
            (
                "Lactuca sativa",
                Hydro,
                Some("vegetative"),
                (1.2, 1.8),
                true,
            ),
            (
                "Lactuca sativa var. capitata",
                Hydro,
                Some("seedling"),
                (1.2, 1.8),
                true,
            ),
            ("Lactuca sativa", Coco, Some("flowering"), (1.2, 1.8), true),
            // Lettuce in soil: the range is written for soilless culture, the class's row holds.
            (
                "Lactuca sativa",
                Soil,
                Some("vegetative"),
                (0.8, 1.4),
                false,
            ),
            // Another Lactuca, another orchid genus: no crop range.
            (
                "Lactuca serriola",
                Hydro,
                Some("vegetative"),
                (1.6, 2.4),
                false,
            ),
            (
                "Dendrobium nobile",
                Coco,
                Some("vegetative"),
                (1.6, 2.0),
                false,
            ),
        ];
        for (crop, class, phase, range, by_crop) in cases {
            let c = crop_ec_range(crop, class, phase);
            assert_eq!(c.is_some(), by_crop, "{crop} {class:?} {phase:?}");
            let got = c.map_or_else(|| ec_range(class, phase), |c| (c.min_ms, c.max_ms));
            assert_eq!(got, range, "{crop} {class:?} {phase:?}");
        }
        for c in CROP_EC_RANGES {
            assert!(c.min_ms < c.max_ms && c.source.len() > 60, "{}", c.crop);
            assert!(!c.source.to_lowercase().contains("kultiva"), "{}", c.crop);
        }
        // Through the protocol: orchid bark, Phalaenopsis, vegetative.
        let mut req = request(vec![product("a", ProductRole::Nutrient, 0.2, 30)]);
        req.substrate_type = "orchid_bark".into();
        req.target_ec_ms = 0.9;
        req.base_water_ec_ms = 0.1;
        req.crop = Some("Phalaenopsis amabilis".into());
        let p = calculate(&MixRequest::new(req.clone()).expect("valid"));
        assert_eq!((p.ec_range_min_ms, p.ec_range_max_ms), (0.8, 1.0));
        assert_eq!(p.ec_range_basis, "crop");
        assert_eq!(p.ec_range_crop.as_deref(), Some("Phalaenopsis"));
        assert!(
            p.ec_range_source
                .as_deref()
                .is_some_and(|s| s.contains("Phalaenopsis"))
        );
        // Without the crop: the coco class row, no source.
        req.crop = None;
        let p = calculate(&MixRequest::new(req).expect("valid"));
        assert_eq!((p.ec_range_min_ms, p.ec_range_max_ms), (1.6, 2.0));
        assert_eq!(
            (p.ec_range_basis.as_str(), p.ec_range_source),
            ("substrate_class", None)
        );
    }
}
