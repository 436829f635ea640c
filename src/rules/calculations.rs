//! Grower calculations (domain 2.13): vapour-pressure deficit with a leaf temperature offset,
//! growing degree days, daily light integral, EC temperature correction, mixing RO with tap
//! water, and how many plants fit a slot. Pure functions over checked inputs: every input
//! struct is built by `new`, which refuses values outside the physical range with the field
//! named, so a route answers 422 and the arithmetic never sees an absurd number.

use serde::Serialize;

/// A value outside its physical range: the field (as the request names it) and why.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldProblem {
    pub field: String,
    pub reason: String,
}

impl FieldProblem {
    pub fn new(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            reason: reason.into(),
        }
    }
}

/// Records a problem when `v` is not finite or outside `min..=max`.
pub fn check_range(problems: &mut Vec<FieldProblem>, field: &str, v: f64, min: f64, max: f64) {
    if !v.is_finite() || v < min || v > max {
        problems.push(FieldProblem::new(
            field,
            format!("must be between {min} and {max}"),
        ));
    }
}

/// Records a problem when `v` is not finite or outside `(min, max]` (zero refused).
pub fn check_positive(problems: &mut Vec<FieldProblem>, field: &str, v: f64, max: f64) {
    if !v.is_finite() || v <= 0.0 || v > max {
        problems.push(FieldProblem::new(
            field,
            format!("must be above 0 and at most {max}"),
        ));
    }
}

fn done<T>(problems: Vec<FieldProblem>, value: T) -> Result<T, Vec<FieldProblem>> {
    if problems.is_empty() {
        Ok(value)
    } else {
        Err(problems)
    }
}

pub fn round(v: f64, decimals: i32) -> f64 {
    let f = 10f64.powi(decimals);
    (v * f).round() / f
}

// ---------------------------------------------------------------------------------------------
// Physical bounds (stated in the OpenAPI schemas and the calculations' operation descriptions).

/// Air and leaf temperatures a grow room or field can have, °C.
pub const AIR_TEMP_MIN_C: f64 = -50.0;
pub const AIR_TEMP_MAX_C: f64 = 60.0;
/// Leaf minus air temperature, °C (transpiring leaves run cooler; lamps can heat them).
pub const LEAF_OFFSET_MAX_C: f64 = 10.0;
/// Nutrient solutions and water, °C.
pub const WATER_TEMP_MIN_C: f64 = 0.0;
pub const WATER_TEMP_MAX_C: f64 = 50.0;
/// EC of any nutrient solution, mS/cm (the bound).
pub const EC_MAX_MS: f64 = 10.0;
/// EC of base water (tap, RO, well), mS/cm.
pub const WATER_EC_MAX_MS: f64 = 5.0;
pub const PH_MIN: f64 = 0.0;
pub const PH_MAX: f64 = 14.0;
/// PPFD, µmol/m²/s (full sun is about 2000).
pub const PPFD_MAX: f64 = 3000.0;
pub const GDD_BASE_MIN_C: f64 = -10.0;
pub const GDD_BASE_MAX_C: f64 = 30.0;
pub const GDD_DAYS_MAX: usize = 366;
/// Slot area, m², and plant spacing, cm.
pub const AREA_MAX_M2: f64 = 10_000.0;
pub const SPACING_MIN_CM: f64 = 1.0;
pub const SPACING_MAX_CM: f64 = 1_000.0;
/// Tap-water alkalinity, calcium, magnesium and chlorine, ppm.
pub const WATER_PPM_MAX: f64 = 1_000.0;

// ---------------------------------------------------------------------------------------------
// VPD

/// The coarse phases with a VPD range (kPa), domain 2.13; any other phase uses `other`.
pub const VPD_PHASES: &[(&str, f64, f64)] = &[
    ("seedling", 0.4, 0.8),
    ("vegetative", 0.8, 1.2),
    ("flowering", 1.0, 1.5),
    ("flushing", 0.8, 1.2),
    ("ripening", 1.2, 1.6),
    ("dormancy", 0.4, 0.8),
    ("other", 0.8, 1.2),
];

pub const VPD_PHASE_NAMES: &[&str] = &[
    "seedling",
    "vegetative",
    "flowering",
    "flushing",
    "ripening",
    "dormancy",
    "other",
];

/// A crop's VPD range for some phases, from the documents named in `source`. The trials behind
/// these ranges controlled the greenhouse **air** VPD (air temperature and humidity), so the
/// range judges the air VPD, whatever leaf offset is given.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CropVpd {
    pub crop: &'static str,
    pub phases: &'static [&'static str],
    pub min_kpa: f64,
    pub max_kpa: f64,
    pub source: &'static str,
}

/// Crop VPD targets with a published source. Greenhouse tomato (vegetative growth through
/// fruit ripening, the phases of the cited whole-crop trials): 0.5–1.0 kPa air VPD. Below it
/// the crop lost yield and calcium uptake (0.4–0.5 kPa against 0.8–0.97 kPa; 0.15–0.25 kPa cut
/// leaf area with calcium deficiency); the best yields came at the range's top (0.8–0.97 kPa,
/// the highest VPDs tested).
pub const VPD_CROPS: &[CropVpd] = &[CropVpd {
    crop: "tomato",
    phases: &["vegetative", "flowering", "ripening"],
    min_kpa: 0.5,
    max_kpa: 1.0,
    source: "greenhouse tomato, whole-crop trials at controlled air VPD: Iraqi, Gagnon, Dubé & \
             Gosselin 1995, HortScience 30(4):846 (0.8 kPa day and night raised yield and \
             photosynthesis over 0.5 kPa); Iraqi et al. 1997, Canadian Journal of Plant Science \
             77(2):267-272 (0.97 kPa raised yield and leaf Ca, Mg and K over 0.4 kPa); Holder & \
             Cockshull 1990, Journal of Horticultural Science 65(1):31-39 (0.15-0.25 kPa reduced \
             leaf area with calcium deficiency)",
}];

/// Crops `crop` accepts.
pub const VPD_CROP_NAMES: &[&str] = &["tomato"];

/// What the generic chart is (no crop trial behind it).
pub const GENERIC_VPD_NOTE: &str = "generic leaf-VPD chart by coarse phase (seedling and \
     dormancy 0.4-0.8, vegetative 0.8-1.2, flowering 1.0-1.5, ripening 1.2-1.6 kPa), not a \
     crop-specific target and without a crop trial behind it; crops with sourced targets: tomato";

/// The sourced target of a crop in a phase, if any.
pub fn crop_vpd(crop: &str, phase: &str) -> Option<&'static CropVpd> {
    VPD_CROPS
        .iter()
        .find(|c| c.crop == crop && c.phases.contains(&phase))
}

/// Saturation vapour pressure over water, kPa (Tetens).
pub fn svp_kpa(temp_c: f64) -> f64 {
    0.6108 * (17.27 * temp_c / (temp_c + 237.3)).exp()
}

#[derive(Debug, Clone, PartialEq)]
pub struct VpdInput {
    pub air_temp_c: f64,
    pub humidity_percent: f64,
    pub leaf_temp_offset_c: f64,
    pub phase: &'static str,
    /// A crop of [`VPD_CROP_NAMES`]; none: the generic chart.
    pub crop: Option<&'static str>,
}

impl VpdInput {
    pub fn new(
        air_temp_c: f64,
        humidity_percent: f64,
        leaf_temp_offset_c: f64,
        phase: &str,
    ) -> Result<Self, Vec<FieldProblem>> {
        Self::for_crop(
            air_temp_c,
            humidity_percent,
            leaf_temp_offset_c,
            phase,
            None,
        )
    }

    /// As [`VpdInput::new`], judged against the crop's sourced target where it has one.
    pub fn for_crop(
        air_temp_c: f64,
        humidity_percent: f64,
        leaf_temp_offset_c: f64,
        phase: &str,
        crop: Option<&str>,
    ) -> Result<Self, Vec<FieldProblem>> {
        let mut p = Vec::new();
        check_range(
            &mut p,
            "air_temp_c",
            air_temp_c,
            AIR_TEMP_MIN_C,
            AIR_TEMP_MAX_C,
        );
        check_range(&mut p, "humidity_percent", humidity_percent, 0.0, 100.0);
        check_range(
            &mut p,
            "leaf_temp_offset_c",
            leaf_temp_offset_c,
            -LEAF_OFFSET_MAX_C,
            LEAF_OFFSET_MAX_C,
        );
        let phase = VPD_PHASE_NAMES.iter().find(|n| **n == phase).copied();
        if phase.is_none() {
            p.push(FieldProblem::new(
                "phase",
                format!("must be one of {}", VPD_PHASE_NAMES.join(", ")),
            ));
        }
        let crop = match crop {
            None => None,
            Some(c) => {
                let known = VPD_CROP_NAMES.iter().find(|n| **n == c).copied();
                if known.is_none() {
                    p.push(FieldProblem::new(
                        "crop",
                        format!(
                            "must be one of {} (crops with a sourced VPD target), or absent",
                            VPD_CROP_NAMES.join(", ")
                        ),
                    ));
                }
                known
            }
        };
        done(
            p,
            Self {
                air_temp_c,
                humidity_percent,
                leaf_temp_offset_c,
                phase: phase.unwrap_or("other"),
                crop,
            },
        )
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, salvo::oapi::ToSchema)]
pub struct VpdResult {
    /// Air VPD = SVP(T_air)·(1 − RH/100), kPa, 4 decimals.
    pub air_vpd_kpa: f64,
    /// Leaf VPD = SVP(T_air + offset) − SVP(T_air)·RH/100, kPa, 4 decimals; the value judged.
    pub vpd_kpa: f64,
    pub leaf_temp_c: f64,
    pub svp_air_kpa: f64,
    pub svp_leaf_kpa: f64,
    pub phase: String,
    pub target_min_kpa: f64,
    pub target_max_kpa: f64,
    /// Midpoint of the phase range.
    pub target_kpa: f64,
    /// Relative humidity that gives the target VPD at these temperatures, 0–100, 1 decimal.
    pub humidity_for_target_percent: f64,
    /// `low`, `optimal` or `high`.
    pub status: String,
    pub recommendation: String,
    /// The crop whose sourced target judged the result; null: the generic chart.
    pub crop: Option<String>,
    /// `air`: the range judges `air_vpd_kpa` (a crop target from trials at controlled air
    /// VPD); `leaf`: it judges `vpd_kpa` (the generic leaf-VPD chart).
    pub target_basis: String,
    /// Where the range comes from: the documents of a crop target, or what the generic chart is.
    pub target_source: String,
}

pub fn vpd(i: &VpdInput) -> VpdResult {
    let svp_air = svp_kpa(i.air_temp_c);
    let leaf_temp = i.air_temp_c + i.leaf_temp_offset_c;
    let svp_leaf = svp_kpa(leaf_temp);
    let actual = svp_air * i.humidity_percent / 100.0;
    let air_vpd = svp_air * (1.0 - i.humidity_percent / 100.0);
    let leaf_vpd = svp_leaf - actual;
    let crop_target = i.crop.and_then(|c| crop_vpd(c, i.phase));
    let (lo, hi, basis, source) = match crop_target {
        Some(c) => (c.min_kpa, c.max_kpa, "air", c.source.to_owned()),
        None => {
            let (_, lo, hi) = VPD_PHASES
                .iter()
                .find(|(n, _, _)| *n == i.phase)
                .copied()
                .unwrap_or(("other", 0.8, 1.2));
            let note = match i.crop {
                Some(c) => format!(
                    "no sourced {c} target for the phase {}: {GENERIC_VPD_NOTE}",
                    i.phase
                ),
                None => GENERIC_VPD_NOTE.to_owned(),
            };
            (lo, hi, "leaf", note)
        }
    };
    let target = (lo + hi) / 2.0;
    // Humidity for the target: leaf basis SVP_leaf − SVP_air·RH/100 = target; air basis
    // SVP_air·(1 − RH/100) = target.
    let judged = if basis == "air" { air_vpd } else { leaf_vpd };
    let svp_judged = if basis == "air" { svp_air } else { svp_leaf };
    let rh_target = ((svp_judged - target) / svp_air * 100.0).clamp(0.0, 100.0);
    let what = if basis == "air" { "Air VPD" } else { "VPD" };
    let scope = if crop_target.is_some() {
        "this crop and phase"
    } else {
        "this phase"
    };
    let (status, recommendation) = if judged < lo {
        (
            "low",
            format!(
                "{what} below {lo} kPa: the air is too humid for {scope}; lower the humidity \
                 towards {:.0} % or raise the temperature.",
                rh_target
            ),
        )
    } else if judged > hi {
        (
            "high",
            format!(
                "{what} above {hi} kPa: the plants transpire too hard; raise the humidity \
                 towards {:.0} % or lower the temperature.",
                rh_target
            ),
        )
    } else {
        (
            "optimal",
            format!("{what} within {lo}-{hi} kPa for {scope}."),
        )
    };
    VpdResult {
        air_vpd_kpa: round(air_vpd, 4),
        vpd_kpa: round(leaf_vpd, 4),
        leaf_temp_c: round(leaf_temp, 2),
        svp_air_kpa: round(svp_air, 4),
        svp_leaf_kpa: round(svp_leaf, 4),
        phase: i.phase.to_owned(),
        target_min_kpa: lo,
        target_max_kpa: hi,
        target_kpa: round(target, 4),
        humidity_for_target_percent: round(rh_target, 1),
        status: status.to_owned(),
        recommendation,
        crop: i.crop.map(str::to_owned),
        target_basis: basis.to_owned(),
        target_source: source,
    }
}

// ---------------------------------------------------------------------------------------------
// GDD

#[derive(Debug, Clone, PartialEq)]
pub struct GddInput {
    /// (max, min) per day, °C.
    pub daily_temps: Vec<(f64, f64)>,
    pub base_temp_c: f64,
}

impl GddInput {
    pub fn new(daily_temps: Vec<(f64, f64)>, base_temp_c: f64) -> Result<Self, Vec<FieldProblem>> {
        let mut p = Vec::new();
        check_range(
            &mut p,
            "base_temp_c",
            base_temp_c,
            GDD_BASE_MIN_C,
            GDD_BASE_MAX_C,
        );
        if daily_temps.is_empty() || daily_temps.len() > GDD_DAYS_MAX {
            p.push(FieldProblem::new(
                "daily_temps",
                format!("must hold 1 to {GDD_DAYS_MAX} days"),
            ));
        }
        for (i, (max, min)) in daily_temps.iter().enumerate() {
            let field = format!("daily_temps[{i}]");
            let before = p.len();
            check_range(&mut p, &field, *max, AIR_TEMP_MIN_C, AIR_TEMP_MAX_C);
            check_range(&mut p, &field, *min, AIR_TEMP_MIN_C, AIR_TEMP_MAX_C);
            if p.len() > before {
                p.truncate(before + 1);
            } else if max < min {
                p.push(FieldProblem::new(
                    field,
                    "the maximum (first) must not be below the minimum (second)",
                ));
            }
        }
        done(
            p,
            Self {
                daily_temps,
                base_temp_c,
            },
        )
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, salvo::oapi::ToSchema)]
pub struct GddResult {
    /// Σ max(0, (Tmax + Tmin)/2 − Tbase), 2 decimals.
    pub accumulated_gdd: f64,
    pub days_counted: usize,
    /// Accumulated ÷ days, 2 decimals.
    pub average_daily_gdd: f64,
    pub base_temp_c: f64,
}

pub fn gdd(i: &GddInput) -> GddResult {
    let total: f64 = i
        .daily_temps
        .iter()
        .map(|(max, min)| ((max + min) / 2.0 - i.base_temp_c).max(0.0))
        .sum();
    let days = i.daily_temps.len();
    GddResult {
        accumulated_gdd: round(total, 2),
        days_counted: days,
        average_daily_gdd: round(total / days.max(1) as f64, 2),
        base_temp_c: i.base_temp_c,
    }
}

// ---------------------------------------------------------------------------------------------
// DLI

#[derive(Debug, Clone, PartialEq)]
pub struct DliInput {
    pub ppfd: f64,
    pub photoperiod_hours: f64,
}

impl DliInput {
    pub fn new(ppfd: f64, photoperiod_hours: f64) -> Result<Self, Vec<FieldProblem>> {
        let mut p = Vec::new();
        check_range(&mut p, "ppfd", ppfd, 0.0, PPFD_MAX);
        check_range(&mut p, "photoperiod_hours", photoperiod_hours, 0.0, 24.0);
        done(
            p,
            Self {
                ppfd,
                photoperiod_hours,
            },
        )
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, salvo::oapi::ToSchema)]
pub struct DliResult {
    /// PPFD × hours × 3600 ÷ 10⁶, mol/m²/day, 2 decimals.
    pub dli_mol_m2_day: f64,
    pub ppfd: f64,
    pub photoperiod_hours: f64,
}

pub fn dli(i: &DliInput) -> DliResult {
    DliResult {
        dli_mol_m2_day: round(i.ppfd * i.photoperiod_hours * 3600.0 / 1e6, 2),
        ppfd: i.ppfd,
        photoperiod_hours: i.photoperiod_hours,
    }
}

// ---------------------------------------------------------------------------------------------
// EC temperature correction

/// Temperature coefficient of nutrient solutions, per °C.
pub const EC_TEMP_COEFFICIENT: f64 = 0.02;

#[derive(Debug, Clone, PartialEq)]
pub struct EcCorrectionInput {
    pub ec_ms: f64,
    pub water_temp_c: f64,
}

impl EcCorrectionInput {
    pub fn new(ec_ms: f64, water_temp_c: f64) -> Result<Self, Vec<FieldProblem>> {
        let mut p = Vec::new();
        check_range(&mut p, "ec_ms", ec_ms, 0.0, EC_MAX_MS);
        check_range(
            &mut p,
            "water_temp_c",
            water_temp_c,
            WATER_TEMP_MIN_C,
            WATER_TEMP_MAX_C,
        );
        done(
            p,
            Self {
                ec_ms,
                water_temp_c,
            },
        )
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, salvo::oapi::ToSchema)]
pub struct EcCorrectionResult {
    /// EC25 = EC ÷ (1 + 0.02·(T − 25)), mS/cm, 3 decimals.
    pub ec_25_ms: f64,
    pub measured_ec_ms: f64,
    pub water_temp_c: f64,
}

pub fn ec_temperature_correction(i: &EcCorrectionInput) -> EcCorrectionResult {
    let factor = 1.0 + EC_TEMP_COEFFICIENT * (i.water_temp_c - 25.0);
    EcCorrectionResult {
        ec_25_ms: round(i.ec_ms / factor, 3),
        measured_ec_ms: i.ec_ms,
        water_temp_c: i.water_temp_c,
    }
}

// ---------------------------------------------------------------------------------------------
// Water mix (RO + tap)
//
// The pH of a mix follows from the carbonate system, not from averaging [H⁺]: what mixing
// conserves is each source's alkalinity and its dissolved inorganic carbon (CO₂ + HCO₃⁻ +
// CO₃²⁻), both by volume fraction. From the two mixed totals the pH is the one at which the
// carbonate species carry exactly the mixed alkalinity. A buffered tap water (bicarbonate)
// diluted with RO water keeps its HCO₃⁻/CO₂ ratio and so, nearly, its pH; averaging [H⁺] let
// the unbuffered RO water's free acid dominate (6.29 for 50 % RO at 6.0 with tap at 7.5 and
// 200 ppm, where the mix stays at 7.5).

/// First and second dissociation constants of carbonic acid at 25 °C (pKa 6.35 and 10.33),
/// and the ion product of water.
pub const CARBONIC_PKA1: f64 = 6.35;
pub const CARBONIC_PKA2: f64 = 10.33;
pub const WATER_PKW: f64 = 14.0;
/// mg CaCO₃ per milliequivalent: alkalinity as CaCO₃ ppm ÷ 50.04 = meq/L (= mmol/L HCO₃⁻).
pub const CACO3_MG_PER_MEQ: f64 = 50.04;
/// pH of the end point of an alkalinity titration: below it a water with no alkalinity holds
/// mineral acid, not only dissolved CO₂.
pub const ALKALINITY_ENDPOINT_PH: f64 = 4.5;

/// A water as the carbonate system sees it, mol/L: alkalinity (eq/L; negative for a mineral
/// acid) and dissolved inorganic carbon. Both mix linearly by volume.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CarbonateWater {
    pub alkalinity_eq: f64,
    pub dic_mol: f64,
}

/// Shares of CO₂(aq), HCO₃⁻ and CO₃²⁻ in the inorganic carbon at [H⁺] = h.
fn carbonate_fractions(h: f64) -> (f64, f64, f64) {
    let k1 = 10f64.powf(-CARBONIC_PKA1);
    let k2 = 10f64.powf(-CARBONIC_PKA2);
    let d = h * h + k1 * h + k1 * k2;
    (h * h / d, k1 * h / d, k1 * k2 / d)
}

impl CarbonateWater {
    /// A water from its pH and its alkalinity (as CaCO₃ ppm). The bicarbonate comes from the
    /// alkalinity; the CO₂ that holds it at this pH is CO₂ = HCO₃⁻·10^(pKa1 − pH). A water
    /// with no alkalinity is acid only through its dissolved CO₂ (its H⁺ balanced by the
    /// HCO₃⁻ the CO₂ forms) down to pH 4.5; the acid below that is mineral (negative
    /// alkalinity).
    pub fn from_ph_and_alkalinity(ph: f64, alkalinity_ppm: f64) -> Self {
        let h = 10f64.powf(-ph);
        let oh = 10f64.powf(-WATER_PKW) / h;
        let (_, a1, a2) = carbonate_fractions(h);
        let (alkalinity_eq, carbonate_alk) = if alkalinity_ppm > 0.0 {
            let alk = alkalinity_ppm / CACO3_MG_PER_MEQ / 1000.0;
            (alk, alk - oh + h)
        } else {
            let endpoint = 10f64.powf(-ALKALINITY_ENDPOINT_PH);
            let from_co2 = h.min(endpoint);
            (-(h - endpoint).max(0.0), from_co2 - oh)
        };
        let dic_mol = if carbonate_alk > 0.0 {
            carbonate_alk / (a1 + 2.0 * a2)
        } else {
            0.0
        };
        Self {
            alkalinity_eq,
            dic_mol,
        }
    }

    /// Mixes waters by volume fraction (the fractions sum to 1).
    pub fn mix(parts: &[(f64, CarbonateWater)]) -> Self {
        Self {
            alkalinity_eq: parts.iter().map(|(f, w)| f * w.alkalinity_eq).sum(),
            dic_mol: parts.iter().map(|(f, w)| f * w.dic_mol).sum(),
        }
    }

    /// The pH at which HCO₃⁻ + 2·CO₃²⁻ + OH⁻ − H⁺ equals the alkalinity. The left side rises
    /// with the pH, so bisection over 0–14 finds the one root.
    pub fn ph(&self) -> f64 {
        let excess = |ph: f64| {
            let h = 10f64.powf(-ph);
            let (_, a1, a2) = carbonate_fractions(h);
            self.dic_mol * (a1 + 2.0 * a2) + 10f64.powf(-WATER_PKW) / h - h - self.alkalinity_eq
        };
        let (mut lo, mut hi) = (PH_MIN, PH_MAX);
        for _ in 0..100 {
            let mid = (lo + hi) / 2.0;
            if excess(mid) > 0.0 {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        (lo + hi) / 2.0
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct WaterMixInput {
    pub ro_percent: f64,
    pub ec_ro_ms: f64,
    pub ec_tap_ms: f64,
    pub ph_ro: f64,
    pub ph_tap: f64,
    /// RO water's alkalinity (as CaCO₃), ppm; usually 0–10.
    pub ro_alkalinity_ppm: Option<f64>,
    pub tap_alkalinity_ppm: Option<f64>,
    pub tap_calcium_ppm: Option<f64>,
    pub tap_magnesium_ppm: Option<f64>,
    pub tap_chlorine_ppm: Option<f64>,
    pub target_ec_ms: Option<f64>,
}

impl WaterMixInput {
    pub fn new(i: WaterMixInput) -> Result<Self, Vec<FieldProblem>> {
        let mut p = Vec::new();
        check_range(&mut p, "ro_percent", i.ro_percent, 0.0, 100.0);
        check_range(&mut p, "ec_ro_ms", i.ec_ro_ms, 0.0, WATER_EC_MAX_MS);
        check_range(&mut p, "ec_tap_ms", i.ec_tap_ms, 0.0, WATER_EC_MAX_MS);
        check_range(&mut p, "ph_ro", i.ph_ro, PH_MIN, PH_MAX);
        check_range(&mut p, "ph_tap", i.ph_tap, PH_MIN, PH_MAX);
        for (name, v) in [
            ("ro_alkalinity_ppm", i.ro_alkalinity_ppm),
            ("tap_alkalinity_ppm", i.tap_alkalinity_ppm),
            ("tap_calcium_ppm", i.tap_calcium_ppm),
            ("tap_magnesium_ppm", i.tap_magnesium_ppm),
            ("tap_chlorine_ppm", i.tap_chlorine_ppm),
        ] {
            if let Some(v) = v {
                check_range(&mut p, name, v, 0.0, WATER_PPM_MAX);
            }
        }
        if let Some(t) = i.target_ec_ms {
            check_range(&mut p, "target_ec_ms", t, 0.0, WATER_EC_MAX_MS);
        }
        done(p, i)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, salvo::oapi::ToSchema)]
pub struct WaterMixResult {
    /// r·EC_ro + (1 − r)·EC_tap, mS/cm, 3 decimals.
    pub ec_ms: f64,
    /// pH of the mix from the carbonate system (each source's alkalinity and inorganic carbon
    /// mixed by volume), 2 decimals; null when a source in the mix has no alkalinity given.
    pub ph: Option<f64>,
    /// Why `ph` is null.
    pub ph_unknown_reason: Option<String>,
    /// Mixed alkalinity r·alk_ro + (1 − r)·alk_tap (RO counted as 0 when not given), ppm as
    /// CaCO₃, 1 decimal; null without the tap value.
    pub alkalinity_ppm: Option<f64>,
    /// Tap values scaled by (1 − r), ppm, 1 decimal; null when the tap value was not given.
    pub calcium_ppm: Option<f64>,
    pub magnesium_ppm: Option<f64>,
    pub chlorine_ppm: Option<f64>,
    /// Ca:Mg (mixing keeps it), 2 decimals; ideal 3–4.
    pub ca_mg_ratio: Option<f64>,
    /// RO share that gives `target_ec_ms`: (EC_tap − target) ÷ (EC_tap − EC_ro), 0–100, 1
    /// decimal; null without a target, when both waters have the same EC, or when the target
    /// lies outside the two waters' ECs (`target_ec_reachable` false).
    pub ro_percent_for_target: Option<f64>,
    /// Whether a mix of the two waters can read `target_ec_ms`; null without a target.
    pub target_ec_reachable: Option<bool>,
    pub warnings: Vec<String>,
}

pub fn water_mix(i: &WaterMixInput) -> WaterMixResult {
    let r = i.ro_percent / 100.0;
    let tap = 1.0 - r;
    let ec = r * i.ec_ro_ms + tap * i.ec_tap_ms;
    let mut warnings = Vec::new();
    // A source that is not in the mix needs no alkalinity.
    let missing: Vec<&str> = [
        ("ro_alkalinity_ppm", r, i.ro_alkalinity_ppm),
        ("tap_alkalinity_ppm", tap, i.tap_alkalinity_ppm),
    ]
    .iter()
    .filter(|(_, share, alk)| *share > 0.0 && alk.is_none())
    .map(|(name, _, _)| *name)
    .collect();
    let (ph, ph_unknown_reason) = if missing.is_empty() {
        let ro =
            CarbonateWater::from_ph_and_alkalinity(i.ph_ro, i.ro_alkalinity_ppm.unwrap_or(0.0));
        let tp =
            CarbonateWater::from_ph_and_alkalinity(i.ph_tap, i.tap_alkalinity_ppm.unwrap_or(0.0));
        let ph = if r >= 1.0 {
            i.ph_ro
        } else if r <= 0.0 {
            i.ph_tap
        } else {
            CarbonateWater::mix(&[(r, ro), (tap, tp)]).ph()
        };
        (Some(round(ph, 2)), None)
    } else {
        let reason = format!(
            "The pH of a mix depends on each water's alkalinity (its bicarbonate buffer), not \
             on the two pH readings alone; give {} to get it.",
            missing.join(" and ")
        );
        warnings.push(format!("pH of the mix not known: {reason}"));
        (None, Some(reason))
    };
    let ratio = match (i.tap_calcium_ppm, i.tap_magnesium_ppm) {
        (Some(ca), Some(mg)) if mg > 0.0 => Some(ca / mg),
        _ => None,
    };
    if let Some(ratio) = ratio {
        if ratio < 2.0 {
            warnings.push(format!(
                "Ca:Mg is {ratio:.2}:1, low (ideal 3-4:1): calcium may run short."
            ));
        } else if ratio > 5.0 {
            warnings.push(format!(
                "Ca:Mg is {ratio:.2}:1, above 5:1: magnesium lockout is likely; add magnesium."
            ));
        }
    }
    let (lowest, highest) = (i.ec_ro_ms.min(i.ec_tap_ms), i.ec_ro_ms.max(i.ec_tap_ms));
    let mut reachable = None;
    let mut ro_for_target = None;
    if let Some(t) = i.target_ec_ms {
        let span = i.ec_tap_ms - i.ec_ro_ms;
        let within = t >= lowest - 1e-9 && t <= highest + 1e-9;
        reachable = Some(within);
        if !within {
            warnings.push(format!(
                "No mix of these waters reads {t} mS/cm: they span {lowest}-{highest} mS/cm. \
                 {}",
                if t > highest {
                    "Reach the target with nutrients instead."
                } else {
                    "Use water with a lower EC (better RO water)."
                }
            ));
        } else if span.abs() > f64::EPSILON {
            ro_for_target = Some(round(
                ((i.ec_tap_ms - t) / span * 100.0).clamp(0.0, 100.0),
                1,
            ));
        } else {
            warnings.push(format!(
                "RO and tap water have the same EC ({t} mS/cm): any share reads the target."
            ));
        }
    }
    WaterMixResult {
        ec_ms: round(ec, 3),
        ph,
        ph_unknown_reason,
        alkalinity_ppm: i
            .tap_alkalinity_ppm
            .map(|a| round(a * tap + r * i.ro_alkalinity_ppm.unwrap_or(0.0), 1)),
        calcium_ppm: i.tap_calcium_ppm.map(|v| round(v * tap, 1)),
        magnesium_ppm: i.tap_magnesium_ppm.map(|v| round(v * tap, 1)),
        chlorine_ppm: i.tap_chlorine_ppm.map(|v| round(v * tap, 1)),
        ca_mg_ratio: ratio.map(|r| round(r, 2)),
        ro_percent_for_target: ro_for_target,
        target_ec_reachable: reachable,
        warnings,
    }
}

// ---------------------------------------------------------------------------------------------
// Slot capacity

#[derive(Debug, Clone, PartialEq)]
pub struct SlotCapacityInput {
    pub area_m2: f64,
    pub spacing_cm: f64,
}

impl SlotCapacityInput {
    pub fn new(area_m2: f64, spacing_cm: f64) -> Result<Self, Vec<FieldProblem>> {
        let mut p = Vec::new();
        check_positive(&mut p, "area_m2", area_m2, AREA_MAX_M2);
        check_range(
            &mut p,
            "spacing_cm",
            spacing_cm,
            SPACING_MIN_CM,
            SPACING_MAX_CM,
        );
        done(
            p,
            Self {
                area_m2,
                spacing_cm,
            },
        )
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, salvo::oapi::ToSchema)]
pub struct SlotCapacityResult {
    /// floor(area ÷ (spacing_cm/100)²).
    pub max_plants: u64,
    /// max(1, floor(0.7·max)) when max ≥ 1, else 0.
    pub optimal_min: u64,
    /// floor(0.9·max), never below `optimal_min` (1 plant of 1 is optimal, not 1 to 0).
    pub optimal_max: u64,
    /// 1 ÷ spacing_m², 2 decimals.
    pub plants_per_m2: f64,
}

/// floor that forgives the binary fraction error of a quotient that is whole on paper
/// (0.36 ÷ 0.09 is 3.9999999999999996 in f64).
fn floor_whole(v: f64) -> u64 {
    (v + 1e-9).floor().max(0.0) as u64
}

pub fn slot_capacity(i: &SlotCapacityInput) -> SlotCapacityResult {
    let spacing_m = i.spacing_cm / 100.0;
    let per_plant = spacing_m * spacing_m;
    let max = floor_whole(i.area_m2 / per_plant);
    let optimal_min = if max == 0 {
        0
    } else {
        floor_whole(0.7 * max as f64).max(1)
    };
    SlotCapacityResult {
        max_plants: max,
        optimal_min,
        optimal_max: floor_whole(0.9 * max as f64).max(optimal_min),
        plants_per_m2: round(1.0 / per_plant, 2),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, eps: f64) -> bool {
        (a - b).abs() <= eps
    }

    /// SVP by hand: 25 °C → 17.27·25/262.3 = 1.64602, e^1.64602 = 5.18640, ×0.6108 = 3.1678 kPa;
    /// 20 °C → 17.27·20/257.3 = 1.34240, e^ = 3.82820, ×0.6108 = 2.3383 kPa;
    /// 0 °C → 0.6108.
    #[test]
    fn svp_tetens() {
        for (t, want) in [(25.0, 3.1678), (20.0, 2.3383), (0.0, 0.6108)] {
            assert!(close(svp_kpa(t), want, 0.0002), "{t}: {}", svp_kpa(t));
        }
    }

    /// Cases (air °C, RH %, offset, phase) → (air VPD, leaf VPD, status):
    /// - 25, 60, 0, vegetative: 3.1678·0.4 = 1.2671; leaf = air; above 1.2 → high.
    /// - 25, 60, −2, vegetative: SVP(23) = 0.6108·e^(17.27·23/260.3 = 1.52597) = 0.6108·4.59962
    ///   = 2.8094; leaf = 2.8094 − 3.1678·0.6 = 2.8094 − 1.9007 = 0.9087 → optimal.
    /// - 20, 80, 0, seedling: 2.3383·0.2 = 0.4677 → optimal (0.4–0.8).
    /// - 20, 95, 0, flowering: 2.3383·0.05 = 0.1169 → low.
    #[test]
    fn vpd_table() {
        for (t, rh, off, phase, air, leaf, status) in [
            (25.0, 60.0, 0.0, "vegetative", 1.2671, 1.2671, "high"),
            (25.0, 60.0, -2.0, "vegetative", 1.2671, 0.9087, "optimal"),
            (20.0, 80.0, 0.0, "seedling", 0.4677, 0.4677, "optimal"),
            (20.0, 95.0, 0.0, "flowering", 0.1169, 0.1169, "low"),
        ] {
            let r = vpd(&VpdInput::new(t, rh, off, phase).expect("valid"));
            assert!(
                close(r.air_vpd_kpa, air, 0.0003),
                "{t}/{rh}: air {}",
                r.air_vpd_kpa
            );
            assert!(
                close(r.vpd_kpa, leaf, 0.0003),
                "{t}/{rh}/{off}: leaf {}",
                r.vpd_kpa
            );
            assert_eq!(r.status, status);
        }
    }

    /// Target humidity at 25 °C, no offset, vegetative (target 1.0 kPa):
    /// (3.1678 − 1.0) ÷ 3.1678 = 68.43 % → 68.4.
    #[test]
    fn vpd_humidity_for_target() {
        let r = vpd(&VpdInput::new(25.0, 60.0, 0.0, "vegetative").expect("valid"));
        assert_eq!(r.target_kpa, 1.0);
        assert_eq!(r.humidity_for_target_percent, 68.4);
    }

    /// Crop targets judge the air VPD (the basis of their trials); the generic chart the leaf
    /// VPD. Cases (air °C, RH %, offset, phase, crop) → (judged value, status, basis):
    /// - 25, 60, 0, ripening, tomato: air 1.2671 > 1.0 → high (the generic chart's 1.2–1.6
    ///   called it optimal);
    /// - 25, 60, 0, ripening, none: leaf 1.2671 → optimal (generic);
    /// - 25, 75, 0, ripening, tomato: 3.1678·0.25 = 0.7920 → optimal;
    /// - 25, 75, −2, ripening, tomato: leaf 2.8094 − 2.3759 = 0.4336, but the air VPD 0.7920
    ///   is judged → optimal;
    /// - 20, 90, 0, flowering, tomato: 2.3383·0.1 = 0.2338 → low;
    /// - 25, 60, 0, seedling, tomato: no tomato seedling target → generic leaf chart 0.4–0.8,
    ///   1.2671 → high.
    #[test]
    fn vpd_crop_targets() {
        for (t, rh, off, phase, crop, judged, status, basis) in [
            (
                25.0,
                60.0,
                0.0,
                "ripening",
                Some("tomato"),
                1.2671,
                "high",
                "air",
            ),
            (25.0, 60.0, 0.0, "ripening", None, 1.2671, "optimal", "leaf"),
            (
                25.0,
                75.0,
                0.0,
                "ripening",
                Some("tomato"),
                0.7920,
                "optimal",
                "air",
            ),
            (
                25.0,
                75.0,
                -2.0,
                "ripening",
                Some("tomato"),
                0.7920,
                "optimal",
                "air",
            ),
            (
                20.0,
                90.0,
                0.0,
                "flowering",
                Some("tomato"),
                0.2338,
                "low",
                "air",
            ),
            (
                25.0,
                60.0,
                0.0,
                "seedling",
                Some("tomato"),
                1.2671,
                "high",
                "leaf",
            ),
        ] {
            let r = vpd(&VpdInput::for_crop(t, rh, off, phase, crop).expect("valid"));
            let got = if basis == "air" {
                r.air_vpd_kpa
            } else {
                r.vpd_kpa
            };
            assert!(close(got, judged, 0.0003), "{t}/{rh}/{phase}: {got}");
            assert_eq!(r.status, status, "{t}/{rh}/{off}/{phase}/{crop:?}");
            assert_eq!(r.target_basis, basis, "{phase}/{crop:?}");
            assert_eq!(r.crop.as_deref(), crop);
            if basis == "air" {
                assert_eq!((r.target_min_kpa, r.target_max_kpa), (0.5, 1.0));
                assert!(r.target_source.contains("HortScience 30(4):846"));
            } else {
                assert!(r.target_source.contains("generic leaf-VPD chart"));
            }
        }
        // Air basis: RH for the target 0.75 kPa at 25 °C = (3.1678 − 0.75) ÷ 3.1678 = 76.3 %.
        let r = vpd(&VpdInput::for_crop(25.0, 60.0, -2.0, "ripening", Some("tomato")).expect("ok"));
        assert_eq!(r.target_kpa, 0.75);
        assert_eq!(r.humidity_for_target_percent, 76.3);
        let e = VpdInput::for_crop(25.0, 60.0, 0.0, "ripening", Some("cannabis")).expect_err("x");
        assert_eq!(e[0].field, "crop");
    }

    #[test]
    fn vpd_refuses_out_of_range() {
        let e = VpdInput::new(80.0, 101.0, 15.0, "bloom").expect_err("invalid");
        let fields: Vec<_> = e.iter().map(|p| p.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "air_temp_c",
                "humidity_percent",
                "leaf_temp_offset_c",
                "phase"
            ]
        );
        assert!(VpdInput::new(f64::NAN, 50.0, 0.0, "other").is_err());
    }

    /// Days (max, min), base 10: (30, 20) → 25 − 10 = 15; (20, 10) → 15 − 10 = 5;
    /// (12, 4) → 8 − 10 < 0 → 0; (25.5, 14.3) → 19.9 − 10 = 9.9. Sum 29.9 over 4 days,
    /// average 7.475 → 7.48 (7.475 is stored just under, so 7.47 is also accepted).
    #[test]
    fn gdd_table() {
        let r = gdd(&GddInput::new(
            vec![(30.0, 20.0), (20.0, 10.0), (12.0, 4.0), (25.5, 14.3)],
            10.0,
        )
        .expect("valid"));
        assert_eq!(r.accumulated_gdd, 29.9);
        assert_eq!(r.days_counted, 4);
        assert!(close(r.average_daily_gdd, 7.475, 0.006));
    }

    #[test]
    fn gdd_refuses_inverted_days_and_empty_lists() {
        let e = GddInput::new(vec![(10.0, 20.0)], 10.0).expect_err("max < min");
        assert_eq!(e[0].field, "daily_temps[0]");
        let e = GddInput::new(vec![], 10.0).expect_err("empty");
        assert_eq!(e[0].field, "daily_temps");
        let e = GddInput::new(vec![(99.0, 20.0)], 45.0).expect_err("range");
        let fields: Vec<_> = e.iter().map(|p| p.field.as_str()).collect();
        assert_eq!(fields, ["base_temp_c", "daily_temps[0]"]);
    }

    /// 400 µmol × 18 h × 3600 ÷ 10⁶ = 25.92; 600 × 12 h = 25.92; 1000 × 12 = 43.2; 250 × 16 =
    /// 14.4; 0 light → 0.
    #[test]
    fn dli_table() {
        for (ppfd, h, want) in [
            (400.0, 18.0, 25.92),
            (600.0, 12.0, 25.92),
            (1000.0, 12.0, 43.2),
            (250.0, 16.0, 14.4),
            (0.0, 12.0, 0.0),
        ] {
            assert_eq!(
                dli(&DliInput::new(ppfd, h).expect("valid")).dli_mol_m2_day,
                want
            );
        }
        let e = DliInput::new(3500.0, 25.0).expect_err("invalid");
        assert_eq!(e.len(), 2);
    }

    /// EC25 = EC ÷ (1 + 0.02·(T − 25)): 1.8 at 20 °C → 1.8 ÷ 0.9 = 2.0; 2.2 at 30 °C → 2.2 ÷ 1.1
    /// = 2.0; 1.5 at 25 °C → 1.5; 1.0 at 15 °C → 1 ÷ 0.8 = 1.25.
    #[test]
    fn ec_correction_table() {
        for (ec, t, want) in [
            (1.8, 20.0, 2.0),
            (2.2, 30.0, 2.0),
            (1.5, 25.0, 1.5),
            (1.0, 15.0, 1.25),
        ] {
            let r = ec_temperature_correction(&EcCorrectionInput::new(ec, t).expect("valid"));
            assert_eq!(r.ec_25_ms, want, "{ec} at {t}");
        }
        let e = EcCorrectionInput::new(10.5, -1.0).expect_err("invalid");
        let fields: Vec<_> = e.iter().map(|p| p.field.as_str()).collect();
        assert_eq!(fields, ["ec_ms", "water_temp_c"]);
    }

    fn mix(ro: f64) -> WaterMixInput {
        WaterMixInput {
            ro_percent: ro,
            ec_ro_ms: 0.02,
            ec_tap_ms: 0.8,
            ph_ro: 6.0,
            ph_tap: 7.5,
            ro_alkalinity_ppm: Some(0.0),
            tap_alkalinity_ppm: Some(200.0),
            tap_calcium_ppm: Some(100.0),
            tap_magnesium_ppm: Some(15.0),
            tap_chlorine_ppm: None,
            target_ec_ms: Some(0.4),
        }
    }

    /// 50 % RO: EC = 0.5·0.02 + 0.5·0.8 = 0.41; alkalinity 100, Ca 50, Mg 7.5; Ca:Mg 6.67 (> 5,
    /// warns); RO % for 0.4 mS = (0.8 − 0.4) ÷ 0.78 = 51.28 % → 51.3.
    ///
    /// pH by the carbonate system (pKa1 6.35, pKa2 10.33):
    /// - Tap, pH 7.5, 200 ppm as CaCO₃: HCO₃⁻ ≈ 200 ÷ 50.04 = 3.997 mmol/L; CO₂ = HCO₃⁻·10^(6.35
    ///   − 7.5) = 3.997·0.0708 = 0.283 mmol/L (DIC with the 0.1 % carbonate: 4.273 mmol/L).
    /// - RO, pH 6.0, no alkalinity: its H⁺ (1 µmol/L) is balanced by HCO₃⁻ from CO₂, so HCO₃⁻ =
    ///   0.001 mmol/L and CO₂ = 0.001·10^0.35 = 0.0022 mmol/L: almost nothing.
    /// - Mix 1:1: HCO₃⁻ = 1.998, CO₂ = (0.283 + 0.002) ÷ 2 = 0.1425 mmol/L → pH = 6.35 +
    ///   log10(1.998 ÷ 0.1425) = 6.35 + 1.147 = 7.497; the exact solve gives 7.4948 → 7.49.
    ///   Dilution keeps the buffer's ratio; averaging [H⁺] (the old formula) gave 6.29.
    ///
    /// 0 % RO is the tap water itself; 100 % RO the RO water.
    #[test]
    fn water_mix_table() {
        let r = water_mix(&WaterMixInput::new(mix(50.0)).expect("valid"));
        assert_eq!(r.ec_ms, 0.41);
        assert_eq!(r.ph, Some(7.49));
        assert_eq!(r.ph_unknown_reason, None);
        assert_eq!(r.alkalinity_ppm, Some(100.0));
        assert_eq!(r.calcium_ppm, Some(50.0));
        assert_eq!(r.magnesium_ppm, Some(7.5));
        assert_eq!(r.chlorine_ppm, None);
        assert_eq!(r.ca_mg_ratio, Some(6.67));
        assert_eq!(r.ro_percent_for_target, Some(51.3));
        assert_eq!(r.target_ec_reachable, Some(true));
        assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
        let tap = water_mix(&WaterMixInput::new(mix(0.0)).expect("valid"));
        assert_eq!((tap.ec_ms, tap.ph), (0.8, Some(7.5)));
        let ro = water_mix(&WaterMixInput::new(mix(100.0)).expect("valid"));
        assert_eq!(
            (ro.ec_ms, ro.ph, ro.alkalinity_ppm),
            (0.02, Some(6.0), Some(0.0))
        );
    }

    /// More mixes, worked by the same steps (mmol/L):
    /// - 90 % RO (pH 6.0, 0 ppm) + tap 7.5 / 200 ppm: HCO₃⁻ = 0.1·3.997 = 0.3997, CO₂ =
    ///   0.1·0.283 + 0.9·0.0022 = 0.0303 → 6.35 + log10(13.2) = 7.47 (exact 7.4553 → 7.46):
    ///   still well above 7; only acid lowers a buffered water's pH.
    /// - 50 % RO at pH 6.0 with 10 ppm alkalinity: HCO₃⁻ 0.1998 and CO₂ 0.1998·10^0.35 =
    ///   0.448; mix HCO₃⁻ = (0.1998 + 3.997) ÷ 2 = 2.098, CO₂ = (0.448 + 0.283) ÷ 2 = 0.365 →
    ///   6.35 + log10(5.75) = 7.11 (exact 7.1096): the RO water's CO₂ now counts.
    /// - 75 % RO (pH 5.5, 0 ppm: CO₂ 0.0225 mmol/L) + tap 7.8 / 120 ppm (HCO₃⁻ 2.398, CO₂
    ///   0.0852): HCO₃⁻ 0.5995, CO₂ 0.0382 → 6.35 + log10(15.7) = 7.55 (exact 7.5283 → 7.53).
    /// - Two unbuffered waters at pH 6.0: the mix is pH 6.0.
    #[test]
    fn water_mix_follows_the_carbonate_buffer() {
        for (ro_pct, ph_ro, alk_ro, ph_tap, alk_tap, want) in [
            (90.0, 6.0, 0.0, 7.5, 200.0, 7.46),
            (50.0, 6.0, 10.0, 7.5, 200.0, 7.11),
            (75.0, 5.5, 0.0, 7.8, 120.0, 7.53),
            (50.0, 6.0, 0.0, 6.0, 0.0, 6.0),
        ] {
            let mut i = mix(ro_pct);
            (i.ph_ro, i.ro_alkalinity_ppm) = (ph_ro, Some(alk_ro));
            (i.ph_tap, i.tap_alkalinity_ppm) = (ph_tap, Some(alk_tap));
            let r = water_mix(&WaterMixInput::new(i).expect("valid"));
            assert_eq!(
                r.ph,
                Some(want),
                "{ro_pct} % RO at {ph_ro}/{alk_ro} + {ph_tap}/{alk_tap}"
            );
        }
    }

    /// Without a source's alkalinity the pH is not guessed: null, a reason naming the missing
    /// field, and a warning. A source not in the mix (0 % of it) needs none.
    #[test]
    fn water_mix_without_alkalinity_does_not_guess_the_ph() {
        let mut i = mix(50.0);
        i.tap_alkalinity_ppm = None;
        let r = water_mix(&WaterMixInput::new(i).expect("valid"));
        assert_eq!(r.ph, None);
        assert!(
            r.ph_unknown_reason
                .as_deref()
                .is_some_and(|w| w.contains("tap_alkalinity_ppm")),
            "{:?}",
            r.ph_unknown_reason
        );
        assert!(
            r.warnings
                .iter()
                .any(|w| w.starts_with("pH of the mix not known"))
        );
        let mut i = mix(50.0);
        i.ro_alkalinity_ppm = None;
        let r = water_mix(&WaterMixInput::new(i).expect("valid"));
        assert_eq!(r.ph, None);
        let mut i = mix(0.0);
        i.ro_alkalinity_ppm = None;
        assert_eq!(
            water_mix(&WaterMixInput::new(i).expect("valid")).ph,
            Some(7.5)
        );
    }

    /// Target EC outside the two waters (RO 0.02, tap 0.8): 1.0 mS needs nutrients, 0.01 a
    /// better RO; neither is clamped to a share silently.
    #[test]
    fn water_mix_reports_an_unreachable_target() {
        for target in [1.0, 0.01] {
            let mut i = mix(50.0);
            i.target_ec_ms = Some(target);
            let r = water_mix(&WaterMixInput::new(i).expect("valid"));
            assert_eq!(r.target_ec_reachable, Some(false), "{target}");
            assert_eq!(r.ro_percent_for_target, None, "{target}");
            assert!(
                r.warnings
                    .iter()
                    .any(|w| w.contains("No mix of these waters")),
                "{:?}",
                r.warnings
            );
        }
        let mut i = mix(50.0);
        i.target_ec_ms = None;
        assert_eq!(
            water_mix(&WaterMixInput::new(i).expect("valid")).target_ec_reachable,
            None
        );
    }

    #[test]
    fn water_mix_refuses_out_of_range() {
        let mut bad = mix(120.0);
        bad.ph_tap = 15.0;
        bad.tap_chlorine_ppm = Some(-1.0);
        bad.tap_alkalinity_ppm = Some(-5.0);
        bad.ro_alkalinity_ppm = Some(-0.1);
        let e = WaterMixInput::new(bad).expect_err("invalid");
        let fields: Vec<_> = e.iter().map(|p| p.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "ro_percent",
                "ph_tap",
                "ro_alkalinity_ppm",
                "tap_alkalinity_ppm",
                "tap_chlorine_ppm"
            ]
        );
    }

    /// 1 m² at 30 cm: 1 ÷ 0.09 = 11.11 → 11; optimal floor(7.7) = 7 to floor(9.9) = 9; 11.11/m².
    /// 0.36 m² at 30 cm: 0.36 ÷ 0.09 = 4 exactly (the f64 quotient is 3.9999…) → 4; 2.8 → 2, 3.6
    /// → 3. 0.05 m² at 30 cm: 0.56 → 0 plants, optimal 0–0. 2 m² at 50 cm: 2 ÷ 0.25 = 8 → 8;
    /// 5.6 → 5; 7.2 → 7; 4 per m². 1 m² at 100 cm: 1; 0.7 → max(1, 0) = 1; 0.9 → 0, raised to
    /// the minimum 1 (domain 2.13's formula gave the range 1–0). 2 m² at 100 cm: 2; 1.4 → 1;
    /// 1.8 → 1. Every row keeps min ≤ max.
    #[test]
    fn slot_capacity_table() {
        for (area, spacing, max, lo, hi, per) in [
            (1.0, 30.0, 11, 7, 9, 11.11),
            (0.36, 30.0, 4, 2, 3, 11.11),
            (0.05, 30.0, 0, 0, 0, 11.11),
            (2.0, 50.0, 8, 5, 7, 4.0),
            (1.0, 100.0, 1, 1, 1, 1.0),
            (2.0, 100.0, 2, 1, 1, 1.0),
        ] {
            let r = slot_capacity(&SlotCapacityInput::new(area, spacing).expect("valid"));
            assert_eq!(
                (r.max_plants, r.optimal_min, r.optimal_max, r.plants_per_m2),
                (max, lo, hi, per),
                "{area} m² at {spacing} cm"
            );
            assert!(r.optimal_min <= r.optimal_max);
        }
        let e = SlotCapacityInput::new(0.0, 0.5).expect_err("invalid");
        let fields: Vec<_> = e.iter().map(|p| p.field.as_str()).collect();
        assert_eq!(fields, ["area_m2", "spacing_cm"]);
    }
}
