//! Substrate properties and the mix preview (domain 2.15, base-version formula): pH, EC and air
//! porosity are fraction-weighted sums; water retention and buffer capacity map low=1,
//! medium=2, high=3, take the weighted mean and map back (≤1.5 low, ≤2.5 medium, else high);
//! water-holding capacity, easily available water, CEC and bulk density are weighted means over
//! the components that have a value (fractions renormalised); composition is the sum of the
//! component compositions times their fractions; reusable when every component is, max reuse
//! cycles the minimum (1 when not reusable); the type is the largest fraction's; irrigation the
//! most demanding strategy. Rounding: pH 2 decimals, EC 3, composition 4, the rest 1.

use std::collections::BTreeMap;

use salvo::oapi::ToSchema;
use serde::{Deserialize, Serialize};

/// Substrate types (domain 1.7).
pub const TYPES: &[&str] = &[
    "soil",
    "coco",
    "clay_pebbles",
    "perlite",
    "living_soil",
    "peat",
    "rockwool_slab",
    "rockwool_plug",
    "vermiculite",
    "none",
    "orchid_bark",
    "pon_mineral",
    "sphagnum",
    "hydro_solution",
];
pub const LEVELS: &[&str] = &["low", "medium", "high"];
/// Irrigation strategies, least demanding first.
pub const IRRIGATION: &[&str] = &["infrequent", "moderate", "frequent", "continuous"];

/// Defaults of the substrate model (domain 1.7).
pub const DEFAULT_PH: f64 = 6.5;
pub const DEFAULT_EC: f64 = 0.5;
pub const DEFAULT_POROSITY: f64 = 25.0;
pub const DEFAULT_MAX_REUSE: i32 = 3;

/// Sum of fractions must be 1 within this tolerance.
pub const FRACTION_TOLERANCE: f64 = 0.01;
pub const FRACTION_MIN: f64 = 0.01;
pub const COMPONENTS_MIN: usize = 2;
pub const COMPONENTS_MAX: usize = 10;

/// The measurable properties of a substrate (global or tenant-owned, mix or not).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SubstrateProps {
    #[serde(rename = "type")]
    pub substrate_type: String,
    pub ph_base: f64,
    pub ec_base_ms: f64,
    pub air_porosity_percent: f64,
    /// low, medium or high.
    pub water_retention: Option<String>,
    /// low, medium or high.
    pub buffer_capacity: Option<String>,
    pub water_holding_capacity_percent: Option<f64>,
    pub easily_available_water_percent: Option<f64>,
    pub cec_meq_per_100g: Option<f64>,
    pub bulk_density_g_per_l: Option<f64>,
    /// Material → fraction (sums to 1).
    #[serde(default)]
    pub composition: BTreeMap<String, f64>,
    pub reusable: bool,
    pub max_reuse_cycles: i32,
    /// infrequent, moderate, frequent or continuous.
    pub irrigation_strategy: Option<String>,
}

impl SubstrateProps {
    /// The defaults of the model for a type.
    pub fn of_type(substrate_type: &str) -> Self {
        Self {
            substrate_type: substrate_type.to_owned(),
            ph_base: DEFAULT_PH,
            ec_base_ms: DEFAULT_EC,
            air_porosity_percent: DEFAULT_POROSITY,
            water_retention: None,
            buffer_capacity: None,
            water_holding_capacity_percent: None,
            easily_available_water_percent: None,
            cec_meq_per_100g: None,
            bulk_density_g_per_l: None,
            composition: BTreeMap::new(),
            reusable: false,
            max_reuse_cycles: DEFAULT_MAX_REUSE,
            irrigation_strategy: Some(default_irrigation(substrate_type).to_owned()),
        }
    }
}

/// Default irrigation strategy per type (domain 2.4).
pub fn default_irrigation(substrate_type: &str) -> &'static str {
    match substrate_type {
        "coco" | "clay_pebbles" | "perlite" => "frequent",
        "living_soil" | "orchid_bark" => "infrequent",
        "rockwool_slab" | "rockwool_plug" | "none" | "hydro_solution" => "continuous",
        _ => "moderate",
    }
}

/// One component of a mix as the rule sees it.
#[derive(Debug, Clone)]
pub struct Component<'a> {
    pub key: &'a str,
    pub fraction: f64,
    pub is_mix: bool,
    pub props: &'a SubstrateProps,
}

/// Why a mix cannot be computed: (field, reason).
#[derive(Debug, Clone, PartialEq)]
pub struct MixProblem {
    /// `components`, or `components[i].fraction` / `components[i].substrate_key`.
    pub field: String,
    pub reason: String,
}

fn problem(field: impl Into<String>, reason: impl Into<String>) -> MixProblem {
    MixProblem {
        field: field.into(),
        reason: reason.into(),
    }
}

fn round(v: f64, decimals: i32) -> f64 {
    let f = 10f64.powi(decimals);
    (v * f).round() / f
}

fn level_value(level: &str) -> Option<f64> {
    match level {
        "low" => Some(1.0),
        "medium" => Some(2.0),
        "high" => Some(3.0),
        _ => None,
    }
}

fn level_of(v: f64) -> &'static str {
    if v <= 1.5 {
        "low"
    } else if v <= 2.5 {
        "medium"
    } else {
        "high"
    }
}

/// Weighted mean over the components that have a value, fractions renormalised.
fn renormalised(parts: impl Iterator<Item = (Option<f64>, f64)>) -> Option<f64> {
    let (sum, weight) = parts
        .filter_map(|(v, f)| v.map(|v| (v * f, f)))
        .fold((0.0, 0.0), |(s, w), (vf, f)| (s + vf, w + f));
    (weight > 0.0).then(|| sum / weight)
}

fn level_mean<'a>(parts: impl Iterator<Item = (Option<&'a str>, f64)>) -> Option<String> {
    renormalised(parts.map(|(l, f)| (l.and_then(level_value), f))).map(|v| level_of(v).to_owned())
}

/// Checks the components (count, fractions, nesting, duplicates) without computing.
pub fn check(components: &[Component<'_>]) -> Vec<MixProblem> {
    let mut problems = Vec::new();
    if components.len() < COMPONENTS_MIN {
        problems.push(problem(
            "components",
            format!("a mix needs at least {COMPONENTS_MIN} components"),
        ));
    }
    if components.len() > COMPONENTS_MAX {
        problems.push(problem(
            "components",
            format!("a mix has at most {COMPONENTS_MAX} components"),
        ));
    }
    for (i, c) in components.iter().enumerate() {
        if !(FRACTION_MIN..=1.0).contains(&c.fraction) {
            problems.push(problem(
                format!("components[{i}].fraction"),
                format!("must be between {FRACTION_MIN} and 1"),
            ));
        }
        if c.is_mix {
            problems.push(problem(
                format!("components[{i}].substrate_key"),
                "is itself a mix; nested mixes are not allowed",
            ));
        }
        if components[..i].iter().any(|o| o.key == c.key) {
            problems.push(problem(
                format!("components[{i}].substrate_key"),
                "appears twice; give each substrate once",
            ));
        }
    }
    let sum: f64 = components.iter().map(|c| c.fraction).sum();
    if !components.is_empty() && (sum - 1.0).abs() > FRACTION_TOLERANCE {
        problems.push(problem(
            "components",
            format!(
                "fractions must sum to 1 (±{FRACTION_TOLERANCE}); they sum to {}",
                round(sum, 4)
            ),
        ));
    }
    problems
}

/// The properties of the mix, or every problem of the components.
pub fn preview(components: &[Component<'_>]) -> Result<SubstrateProps, Vec<MixProblem>> {
    let problems = check(components);
    if !problems.is_empty() {
        return Err(problems);
    }
    let weighted = |get: fn(&SubstrateProps) -> f64| -> f64 {
        components.iter().map(|c| get(c.props) * c.fraction).sum()
    };
    let mut composition: BTreeMap<String, f64> = BTreeMap::new();
    for c in components {
        for (material, share) in &c.props.composition {
            *composition.entry(material.clone()).or_default() += share * c.fraction;
        }
    }
    let composition = composition
        .into_iter()
        .map(|(m, v)| (m, round(v, 4)))
        .collect();
    let reusable = components.iter().all(|c| c.props.reusable);
    let max_reuse_cycles = if reusable {
        components
            .iter()
            .map(|c| c.props.max_reuse_cycles)
            .min()
            .unwrap_or(1)
    } else {
        1
    };
    // The largest fraction's type; the first listed wins a tie.
    let main = components
        .iter()
        .fold(None::<&Component<'_>>, |best, c| match best {
            Some(b) if b.fraction >= c.fraction => Some(b),
            _ => Some(c),
        });
    let substrate_type = main.map_or_else(|| "soil".to_owned(), |c| c.props.substrate_type.clone());
    let irrigation_strategy = components
        .iter()
        .filter_map(|c| c.props.irrigation_strategy.as_deref())
        .filter_map(|s| IRRIGATION.iter().position(|i| *i == s))
        .max()
        .map(|i| IRRIGATION[i].to_owned());
    let opt = |get: fn(&SubstrateProps) -> Option<f64>| {
        renormalised(components.iter().map(|c| (get(c.props), c.fraction))).map(|v| round(v, 1))
    };
    Ok(SubstrateProps {
        substrate_type,
        ph_base: round(weighted(|p| p.ph_base), 2),
        ec_base_ms: round(weighted(|p| p.ec_base_ms), 3),
        air_porosity_percent: round(weighted(|p| p.air_porosity_percent), 1),
        water_retention: level_mean(
            components
                .iter()
                .map(|c| (c.props.water_retention.as_deref(), c.fraction)),
        ),
        buffer_capacity: level_mean(
            components
                .iter()
                .map(|c| (c.props.buffer_capacity.as_deref(), c.fraction)),
        ),
        water_holding_capacity_percent: opt(|p| p.water_holding_capacity_percent),
        easily_available_water_percent: opt(|p| p.easily_available_water_percent),
        cec_meq_per_100g: opt(|p| p.cec_meq_per_100g),
        bulk_density_g_per_l: opt(|p| p.bulk_density_g_per_l),
        composition,
        reusable,
        max_reuse_cycles,
        irrigation_strategy,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(t: &str, ph: f64, ec: f64, por: f64) -> SubstrateProps {
        SubstrateProps {
            ph_base: ph,
            ec_base_ms: ec,
            air_porosity_percent: por,
            ..SubstrateProps::of_type(t)
        }
    }

    fn comp<'a>(key: &'a str, fraction: f64, p: &'a SubstrateProps) -> Component<'a> {
        Component {
            key,
            fraction,
            is_mix: false,
            props: p,
        }
    }

    #[test]
    fn weighted_sums_and_rounding() {
        let mut coco = props("coco", 5.8, 0.4, 20.0);
        coco.composition.insert("coco_pith".into(), 1.0);
        coco.water_retention = Some("high".into());
        coco.buffer_capacity = Some("low".into());
        coco.cec_meq_per_100g = Some(60.0);
        coco.reusable = true;
        coco.max_reuse_cycles = 3;
        let mut perlite = props("perlite", 7.0, 0.0, 50.0);
        perlite.composition.insert("perlite".into(), 1.0);
        perlite.water_retention = Some("low".into());
        perlite.reusable = true;
        perlite.max_reuse_cycles = 5;
        let mix = preview(&[comp("c", 0.7, &coco), comp("p", 0.3, &perlite)]).expect("mix");
        assert_eq!(mix.substrate_type, "coco");
        assert_eq!(mix.ph_base, 6.16);
        assert_eq!(mix.ec_base_ms, 0.28);
        assert_eq!(mix.air_porosity_percent, 29.0);
        // 0.7·3 + 0.3·1 = 2.4 → medium; buffer only known for coco → low.
        assert_eq!(mix.water_retention.as_deref(), Some("medium"));
        assert_eq!(mix.buffer_capacity.as_deref(), Some("low"));
        // Renormalised over the components that have a value.
        assert_eq!(mix.cec_meq_per_100g, Some(60.0));
        assert_eq!(mix.bulk_density_g_per_l, None);
        assert_eq!(mix.composition.get("coco_pith"), Some(&0.7));
        assert_eq!(mix.composition.get("perlite"), Some(&0.3));
        assert!(mix.reusable);
        assert_eq!(mix.max_reuse_cycles, 3);
        assert_eq!(mix.irrigation_strategy.as_deref(), Some("frequent"));
    }

    #[test]
    fn level_boundaries_and_reuse_and_irrigation() {
        for (a, fa, b, expected) in [
            ("low", 0.5, "medium", "low"),     // 1.5
            ("low", 0.49, "medium", "medium"), // 1.51
            ("medium", 0.5, "high", "medium"), // 2.5
            ("high", 0.5, "medium", "medium"), // 2.5
            ("high", 0.51, "medium", "high"),  // 2.51
        ] {
            let mut p1 = props("soil", 6.5, 0.5, 25.0);
            p1.water_retention = Some(a.into());
            let mut p2 = props("soil", 6.5, 0.5, 25.0);
            p2.water_retention = Some(b.into());
            let mix = preview(&[comp("a", fa, &p1), comp("b", 1.0 - fa, &p2)]).expect("mix");
            assert_eq!(
                mix.water_retention.as_deref(),
                Some(expected),
                "{a}/{b} {fa}"
            );
        }
        let mut reusable = props("clay_pebbles", 7.0, 0.1, 40.0);
        reusable.reusable = true;
        reusable.max_reuse_cycles = 10;
        let soil = props("living_soil", 6.8, 1.0, 25.0);
        let peat = props("peat", 4.0, 0.2, 15.0);
        let mix = preview(&[comp("c", 0.5, &reusable), comp("s", 0.5, &soil)]).expect("mix");
        assert!(!mix.reusable);
        assert_eq!(mix.max_reuse_cycles, 1);
        // A tie goes to the first listed; irrigation takes the most demanding.
        assert_eq!(mix.substrate_type, "clay_pebbles");
        assert_eq!(mix.irrigation_strategy.as_deref(), Some("frequent"));
        let mix = preview(&[comp("s", 0.4, &soil), comp("p", 0.6, &peat)]).expect("mix");
        assert_eq!(mix.substrate_type, "peat");
        assert_eq!(mix.irrigation_strategy.as_deref(), Some("moderate"));
    }

    #[test]
    fn invalid_mixes_name_every_problem() {
        let p = props("soil", 6.5, 0.5, 25.0);
        let fields = |components: &[Component<'_>]| -> Vec<String> {
            preview(components)
                .expect_err("invalid")
                .into_iter()
                .map(|pr| pr.field)
                .collect()
        };
        assert_eq!(fields(&[comp("a", 1.0, &p)]), ["components"]);
        assert_eq!(fields(&[]), ["components"]);
        assert_eq!(
            fields(&[comp("a", 0.5, &p), comp("b", 0.3, &p)]),
            ["components"]
        );
        // 1 ± 0.01 passes.
        assert!(preview(&[comp("a", 0.5, &p), comp("b", 0.509, &p)]).is_ok());
        assert_eq!(
            fields(&[comp("a", 0.995, &p), comp("b", 0.005, &p)]),
            ["components[1].fraction"]
        );
        let nested = Component {
            is_mix: true,
            ..comp("m", 0.5, &p)
        };
        assert_eq!(
            fields(&[comp("a", 0.5, &p), nested]),
            ["components[1].substrate_key"]
        );
        assert_eq!(
            fields(&[comp("a", 0.5, &p), comp("a", 0.5, &p)]),
            ["components[1].substrate_key"]
        );
    }
}
