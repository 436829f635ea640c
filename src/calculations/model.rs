//! Request bodies of the calculation routes. Each is read field by field (`FromJson`): a
//! missing or mistyped field and a value outside its physical range (checked by the rule's
//! constructor) each get a `details` entry in one 422. The schema attributes state the same
//! bounds as the rules' constants (`rules::calculations`, `rules::mixing_protocol`).

use salvo::oapi::ToSchema;
use serde_json::Value;

use crate::garden::substrates::model::SubstrateType;
use crate::rules::calculations::{
    DliInput, EcCorrectionInput, FieldProblem, GddInput, SlotCapacityInput, VpdInput, WaterMixInput,
};
use crate::rules::mixing_protocol::PRODUCTS_MAX;
use crate::rules::runoff::RunoffInput;
use crate::values::json::{FromJson, JsonFields};

/// A required number; null, absent or not a number is refused.
fn number(f: &mut JsonFields, name: &'static str) -> Option<f64> {
    match f.raw(name) {
        None => {
            f.reject_field(name, "field required", "missing");
            None
        }
        Some(Value::Number(n)) => n.as_f64(),
        Some(_) => {
            f.reject_field(name, "must be a number", "type_error");
            None
        }
    }
}

/// An optional number: absent or null is `Some(None)`.
fn opt_number(f: &mut JsonFields, name: &'static str) -> Option<Option<f64>> {
    match f.raw(name) {
        None | Some(Value::Null) => Some(None),
        Some(Value::Number(n)) => Some(n.as_f64()),
        Some(_) => {
            f.reject_field(name, "must be a number", "type_error");
            None
        }
    }
}

/// Records the rule's range problems as field details.
fn checked<T>(f: &mut JsonFields, result: Result<T, Vec<FieldProblem>>) -> Option<T> {
    match result {
        Ok(v) => Some(v),
        Err(problems) => {
            for p in problems {
                f.reject_field(&p.field, p.reason, "value_error");
            }
            None
        }
    }
}

/// Phases with a VPD range (schema of `phase`).
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum VpdPhase {
    Seedling,
    Vegetative,
    Flowering,
    Flushing,
    Ripening,
    Dormancy,
    Other,
}

/// Body of `POST /calculations/vpd`.
#[derive(Debug, Clone, serde::Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[salvo(schema(name = "VpdRequest"))]
pub struct VpdBody {
    /// Air temperature, °C (−50 to 60).
    #[salvo(schema(minimum = -50, maximum = 60))]
    pub air_temp_c: f64,
    /// Relative humidity, % (0 to 100).
    #[salvo(schema(minimum = 0, maximum = 100))]
    pub humidity_percent: f64,
    /// Leaf minus air temperature, °C (−10 to 10; default 0: leaf VPD equals air VPD). Give
    /// your measured difference (an infrared leaf thermometer) for the leaf VPD; a crop target
    /// judges the air VPD whatever the offset, as its trials did.
    #[salvo(schema(minimum = -10, maximum = 10))]
    pub leaf_temp_offset_c: Option<f64>,
    /// Phase whose VPD range judges the result (default vegetative).
    pub phase: Option<VpdPhase>,
    /// A crop with a sourced VPD target (`tomato`: greenhouse tomato, 0.5–1.0 kPa air VPD from
    /// vegetative growth to ripening); absent: the generic chart.
    #[salvo(schema(pattern = r"^tomato$"))]
    pub crop: Option<String>,
    #[serde(skip)]
    #[salvo(schema(ignore))]
    pub input: Option<VpdInput>,
}

impl FromJson for VpdBody {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let t = number(f, "air_temp_c");
        let rh = number(f, "humidity_percent");
        let off = opt_number(f, "leaf_temp_offset_c");
        let phase = match f.raw("phase") {
            None | Some(Value::Null) => Some("vegetative".to_owned()),
            Some(Value::String(s)) => Some(s),
            Some(_) => {
                f.reject_field("phase", "must be a string", "type_error");
                None
            }
        };
        let crop = match f.raw("crop") {
            None | Some(Value::Null) => Some(None),
            Some(Value::String(s)) => Some(Some(s)),
            Some(_) => {
                f.reject_field("crop", "must be a string", "type_error");
                None
            }
        };
        let (t, rh, off, phase, crop) = (t?, rh?, off?, phase?, crop?);
        let input = checked(
            f,
            VpdInput::for_crop(t, rh, off.unwrap_or(0.0), &phase, crop.as_deref()),
        )?;
        Some(Self {
            air_temp_c: t,
            humidity_percent: rh,
            leaf_temp_offset_c: off,
            phase: None,
            crop,
            input: Some(input),
        })
    }
}

/// One day of temperatures.
#[derive(Debug, Clone, serde::Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[salvo(schema(name = "GddDay"))]
pub struct GddDay {
    /// Daily maximum, °C (−50 to 60), not below the minimum.
    #[salvo(schema(minimum = -50, maximum = 60))]
    pub max_c: f64,
    /// Daily minimum, °C (−50 to 60).
    #[salvo(schema(minimum = -50, maximum = 60))]
    pub min_c: f64,
}

/// Body of `POST /calculations/gdd`.
#[derive(Debug, Clone, serde::Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[salvo(schema(name = "GddRequest"))]
pub struct GddBody {
    /// 1 to 366 days.
    #[salvo(schema(min_items = 1, max_items = 366))]
    pub daily_temps: Vec<GddDay>,
    /// Base temperature, °C (−10 to 30; default 10).
    #[salvo(schema(minimum = -10, maximum = 30))]
    pub base_temp_c: Option<f64>,
    #[serde(skip)]
    #[salvo(schema(ignore))]
    pub input: Option<GddInput>,
}

impl FromJson for GddBody {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let days = match f.raw("daily_temps") {
            None | Some(Value::Null) => {
                f.reject_field("daily_temps", "field required", "missing");
                None
            }
            Some(Value::Array(items)) => {
                let mut out = Vec::new();
                let mut ok = true;
                for (i, item) in items.iter().enumerate() {
                    let obj = item.as_object();
                    let get = |k: &str| obj.and_then(|o| o.get(k)).and_then(Value::as_f64);
                    let extra = obj.is_some_and(|o| o.keys().any(|k| k != "max_c" && k != "min_c"));
                    match (get("max_c"), get("min_c")) {
                        (Some(max), Some(min)) if !extra => out.push((max, min)),
                        _ => {
                            ok = false;
                            f.reject_field(
                                &format!("daily_temps[{i}]"),
                                "must be an object {max_c, min_c} of two numbers",
                                "type_error",
                            );
                        }
                    }
                }
                ok.then_some(out)
            }
            Some(_) => {
                f.reject_field("daily_temps", "must be a list of days", "type_error");
                None
            }
        };
        let base = opt_number(f, "base_temp_c");
        let (days, base) = (days?, base?);
        let input = checked(f, GddInput::new(days, base.unwrap_or(10.0)))?;
        Some(Self {
            daily_temps: Vec::new(),
            base_temp_c: base,
            input: Some(input),
        })
    }
}

/// Body of `POST /calculations/dli`.
#[derive(Debug, Clone, serde::Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[salvo(schema(name = "DliRequest"))]
pub struct DliBody {
    /// Photosynthetic photon flux density at the canopy, µmol/m²/s (0 to 3000).
    #[salvo(schema(minimum = 0, maximum = 3000))]
    pub ppfd: f64,
    /// Hours of light per day (0 to 24).
    #[salvo(schema(minimum = 0, maximum = 24))]
    pub photoperiod_hours: f64,
    #[serde(skip)]
    #[salvo(schema(ignore))]
    pub input: Option<DliInput>,
}

impl FromJson for DliBody {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let ppfd = number(f, "ppfd");
        let hours = number(f, "photoperiod_hours");
        let (ppfd, hours) = (ppfd?, hours?);
        let input = checked(f, DliInput::new(ppfd, hours))?;
        Some(Self {
            ppfd,
            photoperiod_hours: hours,
            input: Some(input),
        })
    }
}

/// Body of `POST /calculations/ec-correction`.
#[derive(Debug, Clone, serde::Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[salvo(schema(name = "EcCorrectionRequest"))]
pub struct EcCorrectionBody {
    /// Measured EC, mS/cm (0 to 10).
    #[salvo(schema(minimum = 0, maximum = 10))]
    pub ec_ms: f64,
    /// Solution temperature at the measurement, °C (0 to 50).
    #[salvo(schema(minimum = 0, maximum = 50))]
    pub water_temp_c: f64,
    #[serde(skip)]
    #[salvo(schema(ignore))]
    pub input: Option<EcCorrectionInput>,
}

impl FromJson for EcCorrectionBody {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let ec = number(f, "ec_ms");
        let t = number(f, "water_temp_c");
        let (ec, t) = (ec?, t?);
        let input = checked(f, EcCorrectionInput::new(ec, t))?;
        Some(Self {
            ec_ms: ec,
            water_temp_c: t,
            input: Some(input),
        })
    }
}

/// Body of `POST /calculations/water-mix`.
#[derive(Debug, Clone, serde::Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[salvo(schema(name = "WaterMixRequest"))]
pub struct WaterMixBody {
    /// Share of RO (osmosis) water, % (0 to 100).
    #[salvo(schema(minimum = 0, maximum = 100))]
    pub ro_percent: f64,
    /// EC of the RO water, mS/cm (0 to 5).
    #[salvo(schema(minimum = 0, maximum = 5))]
    pub ec_ro_ms: f64,
    /// EC of the tap water, mS/cm (0 to 5).
    #[salvo(schema(minimum = 0, maximum = 5))]
    pub ec_tap_ms: f64,
    /// pH of the RO water (0 to 14).
    #[salvo(schema(minimum = 0, maximum = 14))]
    pub ph_ro: f64,
    /// pH of the tap water (0 to 14).
    #[salvo(schema(minimum = 0, maximum = 14))]
    pub ph_tap: f64,
    /// RO-water alkalinity (as CaCO₃), ppm (0 to 1000; RO water usually holds 0–10). With
    /// `tap_alkalinity_ppm` it gives the mix's pH; without it (and RO in the mix) `ph` is null.
    #[salvo(schema(minimum = 0, maximum = 1000))]
    pub ro_alkalinity_ppm: Option<f64>,
    /// Tap-water alkalinity (as CaCO₃), ppm (0 to 1000): its bicarbonate buffer sets the mix's
    /// pH; without it (and tap water in the mix) `ph` is null.
    #[salvo(schema(minimum = 0, maximum = 1000))]
    pub tap_alkalinity_ppm: Option<f64>,
    /// Tap-water calcium, ppm (0 to 1000).
    #[salvo(schema(minimum = 0, maximum = 1000))]
    pub tap_calcium_ppm: Option<f64>,
    /// Tap-water magnesium, ppm (0 to 1000).
    #[salvo(schema(minimum = 0, maximum = 1000))]
    pub tap_magnesium_ppm: Option<f64>,
    /// Tap-water chlorine, ppm (0 to 1000).
    #[salvo(schema(minimum = 0, maximum = 1000))]
    pub tap_chlorine_ppm: Option<f64>,
    /// EC wanted from the mix, mS/cm (0 to 5): the answer then names the RO share for it.
    #[salvo(schema(minimum = 0, maximum = 5))]
    pub target_ec_ms: Option<f64>,
    #[serde(skip)]
    #[salvo(schema(ignore))]
    pub input: Option<WaterMixInput>,
}

impl FromJson for WaterMixBody {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let ro = number(f, "ro_percent");
        let ec_ro = number(f, "ec_ro_ms");
        let ec_tap = number(f, "ec_tap_ms");
        let ph_ro = number(f, "ph_ro");
        let ph_tap = number(f, "ph_tap");
        let ro_alk = opt_number(f, "ro_alkalinity_ppm");
        let alk = opt_number(f, "tap_alkalinity_ppm");
        let ca = opt_number(f, "tap_calcium_ppm");
        let mg = opt_number(f, "tap_magnesium_ppm");
        let cl = opt_number(f, "tap_chlorine_ppm");
        let target = opt_number(f, "target_ec_ms");
        let input = WaterMixInput {
            ro_percent: ro?,
            ec_ro_ms: ec_ro?,
            ec_tap_ms: ec_tap?,
            ph_ro: ph_ro?,
            ph_tap: ph_tap?,
            ro_alkalinity_ppm: ro_alk?,
            tap_alkalinity_ppm: alk?,
            tap_calcium_ppm: ca?,
            tap_magnesium_ppm: mg?,
            tap_chlorine_ppm: cl?,
            target_ec_ms: target?,
        };
        let input = checked(f, WaterMixInput::new(input))?;
        Some(Self {
            ro_percent: input.ro_percent,
            ec_ro_ms: input.ec_ro_ms,
            ec_tap_ms: input.ec_tap_ms,
            ph_ro: input.ph_ro,
            ph_tap: input.ph_tap,
            ro_alkalinity_ppm: input.ro_alkalinity_ppm,
            tap_alkalinity_ppm: input.tap_alkalinity_ppm,
            tap_calcium_ppm: input.tap_calcium_ppm,
            tap_magnesium_ppm: input.tap_magnesium_ppm,
            tap_chlorine_ppm: input.tap_chlorine_ppm,
            target_ec_ms: input.target_ec_ms,
            input: Some(input),
        })
    }
}

/// Body of `POST /calculations/slot-capacity`.
#[derive(Debug, Clone, serde::Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[salvo(schema(name = "SlotCapacityRequest"))]
pub struct SlotCapacityBody {
    /// Growing area, m² (above 0, at most 10000).
    #[salvo(schema(exclusive_minimum = 0, maximum = 10000))]
    pub area_m2: f64,
    /// Distance between plants, cm (1 to 1000).
    #[salvo(schema(minimum = 1, maximum = 1000))]
    pub spacing_cm: f64,
    #[serde(skip)]
    #[salvo(schema(ignore))]
    pub input: Option<SlotCapacityInput>,
}

impl FromJson for SlotCapacityBody {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let area = number(f, "area_m2");
        let spacing = number(f, "spacing_cm");
        let (area, spacing) = (area?, spacing?);
        let input = checked(f, SlotCapacityInput::new(area, spacing))?;
        Some(Self {
            area_m2: area,
            spacing_cm: spacing,
            input: Some(input),
        })
    }
}

/// Body of `POST /calculations/runoff`.
#[derive(Debug, Clone, serde::Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[salvo(schema(name = "RunoffRequest"))]
pub struct RunoffBody {
    /// EC of the solution given, mS/cm (0 to 10).
    #[salvo(schema(minimum = 0, maximum = 10))]
    pub input_ec_ms: f64,
    /// EC of the runoff, mS/cm (0 to 10).
    #[salvo(schema(minimum = 0, maximum = 10))]
    pub runoff_ec_ms: f64,
    /// pH given (0 to 14); with runoff_ph or not at all.
    #[salvo(schema(minimum = 0, maximum = 14))]
    pub input_ph: Option<f64>,
    /// pH of the runoff (0 to 14).
    #[salvo(schema(minimum = 0, maximum = 14))]
    pub runoff_ph: Option<f64>,
    /// Litres given (above 0, at most 10000); with runoff_volume_liters or not at all.
    #[salvo(schema(exclusive_minimum = 0, maximum = 10000))]
    pub input_volume_liters: Option<f64>,
    /// Litres that ran off (0 to 10000, not more than given).
    #[salvo(schema(minimum = 0, maximum = 10000))]
    pub runoff_volume_liters: Option<f64>,
    #[serde(skip)]
    #[salvo(schema(ignore))]
    pub input: Option<RunoffInput>,
}

impl FromJson for RunoffBody {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let ec_in = number(f, "input_ec_ms");
        let ec_out = number(f, "runoff_ec_ms");
        let ph_in = opt_number(f, "input_ph");
        let ph_out = opt_number(f, "runoff_ph");
        let v_in = opt_number(f, "input_volume_liters");
        let v_out = opt_number(f, "runoff_volume_liters");
        let input = RunoffInput {
            input_ec_ms: ec_in?,
            runoff_ec_ms: ec_out?,
            input_ph: ph_in?,
            runoff_ph: ph_out?,
            input_volume_liters: v_in?,
            runoff_volume_liters: v_out?,
        };
        let input = checked(f, RunoffInput::new(input))?;
        Some(Self {
            input_ec_ms: input.input_ec_ms,
            runoff_ec_ms: input.runoff_ec_ms,
            input_ph: input.input_ph,
            runoff_ph: input.runoff_ph,
            input_volume_liters: input.input_volume_liters,
            runoff_volume_liters: input.runoff_volume_liters,
            input: Some(input),
        })
    }
}

/// A product chosen for the mixing protocol.
#[derive(Debug, Clone, PartialEq, serde::Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[salvo(schema(name = "MixingProduct"))]
pub struct ProductChoice {
    /// Key of a global fertiliser (`GET /fertilizers`).
    #[salvo(schema(
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub fertilizer_key: String,
    /// Recipe dose, ml (or g) per litre (above 0, at most 50): with a recipe the products keep
    /// their ratio and are scaled together to the target EC.
    #[salvo(schema(exclusive_minimum = 0, maximum = 50))]
    pub ml_per_liter: Option<f64>,
}

/// Body of `POST /calculations/mixing-protocol` (and the arguments of
/// `calculate_mixing_protocol`).
#[derive(Debug, Clone, PartialEq, serde::Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[salvo(schema(name = "MixingProtocolRequest"))]
pub struct MixingProtocolBody {
    /// 1 to 20 products, each once.
    #[salvo(schema(min_items = 1, max_items = 20))]
    pub fertilizers: Vec<ProductChoice>,
    /// Tank volume, litres (above 0, at most 10000).
    #[salvo(schema(exclusive_minimum = 0, maximum = 10000))]
    pub target_volume_liters: f64,
    /// EC wanted, mS/cm (above 0, at most 10).
    #[salvo(schema(exclusive_minimum = 0, maximum = 10))]
    pub target_ec_ms: f64,
    /// EC of the water before any product, mS/cm (0 to 5; default 0).
    #[salvo(schema(minimum = 0, maximum = 5))]
    pub base_water_ec_ms: Option<f64>,
    /// pH wanted (0 to 14; default 6.0).
    #[salvo(schema(minimum = 0, maximum = 14))]
    pub target_ph: Option<f64>,
    /// pH of the water (0 to 14; default 7.2). It does not set the correction's direction:
    /// the pH is measured after all additions.
    #[salvo(schema(minimum = 0, maximum = 14))]
    pub base_water_ph: Option<f64>,
    /// Alkalinity of the water (as CaCO₃), ppm (0 to 500; default 0).
    #[salvo(schema(minimum = 0, maximum = 500))]
    pub alkalinity_ppm: Option<f64>,
    /// Substrate type (default coco). Give this or `substrate_key`, not both.
    #[salvo(schema(value_type = Option<SubstrateType>))]
    pub substrate_type: Option<String>,
    /// A substrate record (global, or `tenant:<uuid>` for the garden's own on the garden
    /// route) whose type the EC range is for; unknown is 404. Give this or `substrate_type`,
    /// not both. Null is refused (omit it).
    #[salvo(schema(
        nullable = false,
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub substrate_key: Option<String>,
    /// Times the substrate has been used (0 to 50); 0 = fresh (CalMag +20 % in coco).
    #[salvo(schema(minimum = 0, maximum = 50))]
    pub substrate_cycles_used: Option<u32>,
    /// Phase, coarse (seedling, vegetative, flowering, flushing) or fine (germination,
    /// fruiting, harvest — fed like fruiting —, …); rest phases (dormancy, dry_rest, …) are not
    /// fed; 1 to 50 characters; default vegetative.
    #[salvo(schema(
        min_length = 1,
        max_length = 50,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub phase: Option<String>,
    /// Temperature of the water, °C (0 to 50).
    #[salvo(schema(minimum = 0, maximum = 50))]
    pub water_temp_c: Option<f64>,
    /// The crop (a catalogue species key; unknown is 404): where a publication gives the crop
    /// its own EC range (Phalaenopsis 0.8–1.0 mS/cm in any substrate; lettuce 1.2–1.8 in
    /// hydroponics and coco), that range bounds the result instead of the substrate class's
    /// row (`ec_range_basis` `crop`, with `ec_range_source`). Null is refused (omit it).
    #[salvo(schema(
        nullable = false,
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub species_key: Option<String>,
}

fn products(f: &mut JsonFields) -> Option<Vec<ProductChoice>> {
    let items = match f.raw("fertilizers") {
        None | Some(Value::Null) => {
            f.reject_field("fertilizers", "field required", "missing");
            return None;
        }
        Some(Value::Array(items)) => items,
        Some(_) => {
            f.reject_field(
                "fertilizers",
                "must be a list of {fertilizer_key, ml_per_liter}",
                "type_error",
            );
            return None;
        }
    };
    if items.is_empty() || items.len() > PRODUCTS_MAX {
        f.reject_field(
            "fertilizers",
            format!("give 1 to {PRODUCTS_MAX} products"),
            "value_error",
        );
        return None;
    }
    let mut out = Vec::new();
    let mut ok = true;
    for (i, item) in items.iter().enumerate() {
        let Some(obj) = item.as_object() else {
            f.reject_field(
                &format!("fertilizers[{i}]"),
                "must be an object {fertilizer_key, ml_per_liter}",
                "type_error",
            );
            ok = false;
            continue;
        };
        for k in obj.keys() {
            if k != "fertilizer_key" && k != "ml_per_liter" {
                f.reject_field(
                    &format!("fertilizers[{i}].{k}"),
                    "unknown field",
                    "extra_forbidden",
                );
                ok = false;
            }
        }
        let key = match obj.get("fertilizer_key") {
            Some(Value::String(s))
                if !s.trim().is_empty()
                    && s.chars().count() <= 200
                    && !s.chars().any(char::is_control) =>
            {
                Some(s.trim().to_owned())
            }
            _ => {
                f.reject_field(
                    &format!("fertilizers[{i}].fertilizer_key"),
                    "must be a key of 1 to 200 characters",
                    "value_error",
                );
                None
            }
        };
        let dose = match obj.get("ml_per_liter") {
            None | Some(Value::Null) => Some(None),
            Some(Value::Number(n)) => Some(n.as_f64()),
            Some(_) => {
                f.reject_field(
                    &format!("fertilizers[{i}].ml_per_liter"),
                    "must be a number",
                    "type_error",
                );
                None
            }
        };
        match (key, dose) {
            (Some(fertilizer_key), Some(ml_per_liter)) => out.push(ProductChoice {
                fertilizer_key,
                ml_per_liter,
            }),
            _ => ok = false,
        }
    }
    ok.then_some(out)
}

impl FromJson for MixingProtocolBody {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        // Asked before the readers take the fields out of the body.
        let both_substrates = f.has_value("substrate_type") && f.has("substrate_key");
        let fertilizers = products(f);
        let volume = number(f, "target_volume_liters");
        let ec = number(f, "target_ec_ms");
        let base_ec = opt_number(f, "base_water_ec_ms");
        let target_ph = opt_number(f, "target_ph");
        let base_ph = opt_number(f, "base_water_ph");
        let alk = opt_number(f, "alkalinity_ppm");
        let substrate = match f.raw("substrate_type") {
            None | Some(Value::Null) => Some(None),
            Some(Value::String(s)) => Some(Some(s)),
            Some(_) => {
                f.reject_field("substrate_type", "must be a string", "type_error");
                None
            }
        };
        let substrate_key = f.patch_text("substrate_key", 200);
        if both_substrates {
            f.reject_field(
                "substrate_key",
                "give substrate_type or substrate_key, not both",
                "value_error",
            );
        }
        let cycles = f.opt_int("substrate_cycles_used", 0, 50);
        let phase = match f.raw("phase") {
            None | Some(Value::Null) => Some(None),
            Some(Value::String(s)) => Some(Some(s)),
            Some(_) => {
                f.reject_field("phase", "must be a string", "type_error");
                None
            }
        };
        let water_temp = opt_number(f, "water_temp_c");
        let species_key = f.patch_text("species_key", 200);
        Some(Self {
            fertilizers: fertilizers?,
            target_volume_liters: volume?,
            target_ec_ms: ec?,
            base_water_ec_ms: base_ec?,
            target_ph: target_ph?,
            base_water_ph: base_ph?,
            alkalinity_ppm: alk?,
            substrate_type: substrate?,
            substrate_key: substrate_key?,
            substrate_cycles_used: cycles?.map(|c| c as u32),
            phase: phase?,
            water_temp_c: water_temp?,
            species_key: species_key?,
        })
    }
}
