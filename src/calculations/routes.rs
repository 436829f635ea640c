//! REST face of `/api/v1/calculations/…`: global (no garden), for any authenticated caller,
//! under the general rate limit. Each route reads its body (422 naming each field that is
//! missing, mistyped or outside its physical range) and returns the rule's result.

use salvo::prelude::*;

use super::model::*;
use super::service::{self, ProductSource};
use crate::error::{AppError, ErrorBody};
use crate::http::depot::DepotExt;
use crate::http::json::read_json;
use crate::rules::calculations::{
    self, DliResult, EcCorrectionResult, GddResult, SlotCapacityResult, VpdResult, WaterMixResult,
};
use crate::rules::mixing_protocol::MixingProtocol;
use crate::rules::runoff::{self as runoff_rule, RunoffAnalysis};

pub fn router() -> Router {
    Router::with_path("calculations")
        .hoop(crate::http::caller::require_caller)
        .push(Router::with_path("vpd").post(vpd))
        .push(Router::with_path("gdd").post(gdd))
        .push(Router::with_path("dli").post(dli))
        .push(Router::with_path("ec-correction").post(ec_correction))
        .push(Router::with_path("water-mix").post(water_mix))
        .push(Router::with_path("slot-capacity").post(slot_capacity))
        .push(Router::with_path("runoff").post(runoff))
        .push(Router::with_path("mixing-protocol").post(mixing_protocol))
}

/// The body's checked input (set by `FromJson` whenever it returns a body).
fn input<T>(input: Option<T>) -> Result<T, AppError> {
    input.ok_or_else(|| AppError::internal("a calculation body without its checked input"))
}

/// Vapour-pressure deficit of air and leaf (Tetens; leaf temperature = air + offset), judged against the phase's range, with the humidity that reaches the range's midpoint.
///
/// Body: `air_temp_c` (°C, −50 to 60), `humidity_percent` (0–100), `leaf_temp_offset_c` (leaf − air,
/// −10 to 10; default 0), `phase` (`seedling, vegetative, flowering, flushing, ripening, dormancy,
/// other`; default vegetative), `crop` (optional: `tomato`). SVP(T) = 0.6108·e^(17.27·T/(T+237.3)) kPa. `air_vpd_kpa` =
/// SVP(T_air)·(1 − RH/100); `vpd_kpa` (leaf VPD, the one judged) = SVP(T_air + offset) −
/// SVP(T_air)·RH/100, 4 decimals. `status` low/optimal/high against the phase's range in kPa:
/// seedling and dormancy 0.4–0.8; vegetative, flushing and other 0.8–1.2; flowering 1.0–1.5;
/// ripening 1.2–1.6 (a generic chart, `target_basis` `leaf`). With `crop` (`tomato`) and a
/// phase the crop has a sourced target for (vegetative, flowering, ripening), the crop's range
/// judges the **air** VPD (`target_basis` `air`: greenhouse tomato 0.5–1.0 kPa, from whole-crop
/// trials at controlled air VPD); `target_source` names the documents, or says the generic
/// chart has none. `target_kpa` is the midpoint; `humidity_for_target_percent` = (SVP_leaf −
/// target) ÷ SVP_air × 100 (air basis: (SVP_air − target) ÷ SVP_air × 100), clamped 0–100; a
/// `recommendation`. Nothing is stored.
#[endpoint(tags("calculations"), security(["bearer" = []]), operation_id = "calculate_vpd",
    status_codes(200, 400, 401, 413, 415, 422, 500),
    request_body = VpdBody,
    responses(
        (status_code = 200, description = "the result", body = VpdResult),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: a temperature, humidity, offset, phase or crop out of range", body = ErrorBody),
    ))]
pub async fn vpd(req: &mut Request, depot: &mut Depot) -> Result<Json<VpdResult>, AppError> {
    let state = depot.app_state()?;
    let body: VpdBody = read_json(req, state.config().max_body_bytes).await?;
    Ok(Json(calculations::vpd(&input(body.input)?)))
}

/// Growing degree days: Σ max(0, (max + min)/2 − base) over the days given.
///
/// Body: `daily_temps` (1–366 objects `{max_c, min_c}`, −50 to 60 °C, max ≥ min), `base_temp_c` (−10
/// to 30; default 10). Answers `accumulated_gdd` (2 decimals), `days_counted` and `average_daily_gdd`.
#[endpoint(tags("calculations"), security(["bearer" = []]), operation_id = "calculate_gdd",
    status_codes(200, 400, 401, 413, 415, 422, 500),
    request_body = GddBody,
    responses(
        (status_code = 200, description = "the result", body = GddResult),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: no days, more than 366, a day whose maximum is below its minimum, a temperature out of range", body = ErrorBody),
    ))]
pub async fn gdd(req: &mut Request, depot: &mut Depot) -> Result<Json<GddResult>, AppError> {
    let state = depot.app_state()?;
    let body: GddBody = read_json(req, state.config().max_body_bytes).await?;
    Ok(Json(calculations::gdd(&input(body.input)?)))
}

/// Daily light integral: PPFD × hours × 3600 ÷ 10⁶ mol/m²/day.
///
/// Body: `ppfd` (µmol/m²/s, 0–3000), `photoperiod_hours` (0–24). `dli_mol_m2_day` has 2 decimals:
/// PPFD 400 for 18 hours is 25.92.
#[endpoint(tags("calculations"), security(["bearer" = []]), operation_id = "calculate_dli",
    status_codes(200, 400, 401, 413, 415, 422, 500),
    request_body = DliBody,
    responses(
        (status_code = 200, description = "the result", body = DliResult),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: PPFD or hours out of range", body = ErrorBody),
    ))]
pub async fn dli(req: &mut Request, depot: &mut Depot) -> Result<Json<DliResult>, AppError> {
    let state = depot.app_state()?;
    let body: DliBody = read_json(req, state.config().max_body_bytes).await?;
    Ok(Json(calculations::dli(&input(body.input)?)))
}

/// EC corrected to 25 °C: EC ÷ (1 + 0.02·(T − 25)).
///
/// Body: `ec_ms` (mS/cm, 0–10), `water_temp_c` (0–50). `ec_25_ms` has 3 decimals.
#[endpoint(tags("calculations"), security(["bearer" = []]), operation_id = "calculate_ec_correction",
    status_codes(200, 400, 401, 413, 415, 422, 500),
    request_body = EcCorrectionBody,
    responses(
        (status_code = 200, description = "the result", body = EcCorrectionResult),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: EC above 10 mS/cm, a temperature out of 0–50 °C", body = ErrorBody),
    ))]
pub async fn ec_correction(
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<EcCorrectionResult>, AppError> {
    let state = depot.app_state()?;
    let body: EcCorrectionBody = read_json(req, state.config().max_body_bytes).await?;
    Ok(Json(calculations::ec_temperature_correction(&input(
        body.input,
    )?)))
}

/// RO and tap water mixed: EC, pH, alkalinity, Ca, Mg and chlorine of the mix, the Ca:Mg check, and the RO share for a target EC. The pH comes from the carbonate system: each water's alkalinity (bicarbonate) and the CO₂ its pH implies (CO₂ = HCO₃⁻·10^(6.35 − pH)) are mixed by volume and the mix's pH solved from them; a buffered tap water keeps nearly its pH when diluted. Without the alkalinity of a water in the mix, `ph` is null with `ph_unknown_reason`. A target EC outside the two waters' ECs is `target_ec_reachable: false` with a warning, not a clamped share.
///
/// Body: `ro_percent` (0–100), `ec_ro_ms`, `ec_tap_ms` (0–5), `ph_ro`, `ph_tap` (0–14); optional
/// `ro_alkalinity_ppm`, `tap_alkalinity_ppm` (as CaCO₃), `tap_calcium_ppm`, `tap_magnesium_ppm`,
/// `tap_chlorine_ppm` (0–1000) and `target_ec_ms` (0–5). With r the RO share: `ec_ms` = r·EC_ro +
/// (1 − r)·EC_tap; `alkalinity_ppm` mixed by volume; Ca, Mg and chlorine × (1 − r); `ca_mg_ratio`
/// warns below 2:1 and above 5:1 (ideal 3–4:1); `ro_percent_for_target` = (EC_tap − target) ÷
/// (EC_tap − EC_ro). Example: 50 % RO at pH 6.0 with tap at pH 7.5 and 200 ppm gives pH 7.49.
#[endpoint(tags("calculations"), security(["bearer" = []]), operation_id = "calculate_water_mix",
    status_codes(200, 400, 401, 413, 415, 422, 500),
    request_body = WaterMixBody,
    responses(
        (status_code = 200, description = "the result", body = WaterMixResult),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: a share, EC, pH or ppm value out of range (a negative alkalinity names body.ro_alkalinity_ppm or body.tap_alkalinity_ppm)", body = ErrorBody),
    ))]
pub async fn water_mix(
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<WaterMixResult>, AppError> {
    let state = depot.app_state()?;
    let body: WaterMixBody = read_json(req, state.config().max_body_bytes).await?;
    Ok(Json(calculations::water_mix(&input(body.input)?)))
}

/// How many plants fit an area at a spacing: maximum, optimal range (70–90 %), plants per m².
///
/// Body: `area_m2` (above 0, ≤ 10000), `spacing_cm` (1–1000). `max_plants` = floor(area ÷
/// (spacing/100)²); `optimal_min` = max(1, floor(0.7·max)) (0 when max is 0); `optimal_max` =
/// floor(0.9·max) but never below `optimal_min` (1 plant: 1–1); `plants_per_m2` = 1 ÷ spacing² (in
/// metres), 2 decimals.
#[endpoint(tags("calculations"), security(["bearer" = []]), operation_id = "calculate_slot_capacity",
    status_codes(200, 400, 401, 413, 415, 422, 500),
    request_body = SlotCapacityBody,
    responses(
        (status_code = 200, description = "the result", body = SlotCapacityResult),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: area not above 0 or above 10000 m², spacing out of 1–1000 cm", body = ErrorBody),
    ))]
pub async fn slot_capacity(
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<SlotCapacityResult>, AppError> {
    let state = depot.app_state()?;
    let body: SlotCapacityBody = read_json(req, state.config().max_body_bytes).await?;
    Ok(Json(calculations::slot_capacity(&input(body.input)?)))
}

/// Runoff analysis: salt build-up, underfeeding and pH drift from input and runoff, runoff share 10–30 %.
///
/// Body: `input_ec_ms`, `runoff_ec_ms` (0–10); `input_ph` and `runoff_ph` (0–14, both or neither);
/// `input_volume_liters` (above 0, ≤ 10000) and `runoff_volume_liters` (0–10000, not above the input;
/// both or neither). EC Δ = runoff − input: > 0.5 `salt_buildup`, > 0.3 `warning`, < −0.3
/// `underfed`, else `ok`; a pH Δ beyond ±0.5 is `drift` (`ph_direction` rising or falling); a runoff
/// share of 10–30 % is `ok`, else `low`/`high`; `overall` is poor with salt build-up, fair with any
/// other finding, else good; `recommendations`. Watering events store the same analysis.
#[endpoint(tags("calculations"), security(["bearer" = []]), operation_id = "calculate_runoff",
    status_codes(200, 400, 401, 413, 415, 422, 500),
    request_body = RunoffBody,
    responses(
        (status_code = 200, description = "the result", body = RunoffAnalysis),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: an EC, pH or volume out of range, one of a pair missing, more runoff than input", body = ErrorBody),
    ))]
pub async fn runoff(
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<RunoffAnalysis>, AppError> {
    let state = depot.app_state()?;
    let body: RunoffBody = read_json(req, state.config().max_body_bytes).await?;
    Ok(Json(runoff_rule::analyse(&input(body.input)?)))
}

/// Doses per product, in mixing order, for a tank of the target volume and EC (domain 2.14):
/// base water EC and pH reserve (alkalinity, or a chosen pH adjuster's EC at its label dose),
/// silicate and CalMag first, the rest scaled in the ratio of the recipe or else of the label
/// doses, capped at each product's maximum; harvest fed like fruiting, rest phases not fed;
/// pH measured after all additions and corrected with acids (down) or bases (up); EC check and
/// warnings (any calcium source after a sulfate is critical). Reads only. Products are the
/// global fertilisers.
///
/// Body: `fertilizers` (1–20 `{fertilizer_key, ml_per_liter?}`, each product once; `ml_per_liter`
/// above 0, ≤ 50, makes a recipe), `target_volume_liters` (above 0, ≤ 10000), `target_ec_ms` (above 0,
/// ≤ 10), `base_water_ec_ms` (0–5; default 0), `target_ph` (0–14; 6.0), `base_water_ph` (0–14; 7.2),
/// `alkalinity_ppm` (0–500; 0), `substrate_type` (default coco) or `substrate_key` (not both),
/// `substrate_cycles_used` (0–50; 0 = fresh), `phase` (a coarse or fine phase key, 1–50 characters;
/// default vegetative), `water_temp_c` (0–50). The garden route `POST /t/{slug}/mixing-protocol` and
/// the tool `calculate_mixing_protocol` also dose the garden's own products (`tenant:<uuid>`). The
/// answer: `valid`, `living_soil_bypass`, the inputs, `resolved_ec_phase`, `substrate_class`,
/// `ec_range_min_ms`/`ec_range_max_ms`, `ec_net`, `ec_ph_reserve`, `ec_uncertainty_reserve`,
/// `calculated_ec`, `tolerance_ms`, `dosages[{fertilizer_key, product_name, mixing_priority,
/// ml_per_liter, total_ml, ec_contribution, capped}]`, `rest_phase`, `ph_adjustment{measure_after_additions,
/// target_ph, lower_with, raise_with, expected_ec_ms}`, `instructions[]` and `warnings[{code, severity,
/// message}]`. The EC table by substrate class and phase is in the README ("Fertilisers, nutrient
/// plans and mixing").
///
/// The pipeline (`src/rules/mixing_protocol.rs`): (1) living soil: no dosing, warning
/// `living_soil_bypass`. (2) The EC range by substrate class (hydro: hydro solution, clay pebbles,
/// perlite, rockwool, vermiculite, none; coco: coco, sphagnum, pon, orchid bark; soil: soil, peat,
/// others) and phase; flushing 0–0.3, a phase the table does not know 0.8–2.0. Fine phases map to
/// coarse ones (`resolved_ec_phase`: germination → seedling; fruiting, ripening and harvest →
/// flowering; only `flushing` → flushing); rest phases are not fed: a valid answer with no dosages,
/// `rest_phase: true`, warning `rest_phase_no_feeding`. (3) EC_net = max(0, target − base water EC);
/// 0 warns `base_water_meets_target`. (4) pH reserve by alkalinity: below 50 ppm 0.02, 50–150 ppm
/// 0.03, above 150 ppm 0.05 mS/cm, or a chosen pH adjuster's EC at its label dose when that is more. (5)
/// Silicates, then CalMag products at their recipe or recommended dose (CalMag × 1.2 in fresh coco)
/// come off the budget; an uncertain silicate another 0.15. (6) Remaining = EC_net − silicate −
/// CalMag − reserve − 0.15 × (other products with uncertain EC). (7) The ratio is the recipe, else each
/// product's label dose: k = remaining ÷ Σ ratio·EC/ml, dose = k·ratio, each capped at the product's
/// maximum (20 ml/L when none; warning `dose_capped`); products without EC go in at their recipe or
/// recommended dose; pH adjusters are named in the pH step. (8) `calculated_ec` = base + silicate +
/// CalMag + Σ products + reserve; tolerance max(0.1, 10 % of target); `valid` is false above the
/// range maximum (`ec_above_range`), off the target by more than the tolerance (`ec_off_target`), or
/// when the order precipitates. Order: ascending `mixing_priority`, then name; any calcium source
/// after a sulfate (a name with sulfate/sulphate/Epsom, or ≥ 10 % S; `calcium_after_sulfate`) and a
/// silicate after a calcium source (`silicate_after_calcium`) are `critical`; a product that is not
/// tank-safe, acidic with alkaline products, water below 5 °C, above 30 °C, or above 35 °C with
/// biologicals warn. `ph_adjustment`: measure after all additions; `lower_with` acids, `raise_with`
/// bases. `instructions[]`: wait 5 minutes after a silicate; verify the EC. An unknown product is 404
/// naming `body.fertilizers[i].fertilizer_key`; another garden's `substrate_key` is 404.
#[endpoint(tags("calculations"), security(["bearer" = []]), operation_id = "calculate_mixing_protocol",
    status_codes(200, 400, 401, 404, 413, 415, 422, 500),
    request_body = MixingProtocolBody,
    responses(
        (status_code = 200, description = "the protocol (valid false with warnings when the target cannot be met)", body = MixingProtocol),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: a fertilizer_key names no fertiliser", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: volume, EC, pH, alkalinity, substrate, phase or a dose out of range; a product twice", body = ErrorBody),
    ))]
pub async fn mixing_protocol(
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<MixingProtocol>, AppError> {
    let state = depot.app_state()?;
    let body: MixingProtocolBody = read_json(req, state.config().max_body_bytes).await?;
    Ok(Json(
        service::mixing_protocol(&state, ProductSource::GlobalCatalogue, &body).await?,
    ))
}
