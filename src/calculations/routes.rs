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
        .hoop(crate::auth::require_caller)
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
#[endpoint(tags("calculations"), security(["bearer" = []]), operation_id = "calculate_vpd",
    status_codes(200, 400, 401, 413, 415, 422, 500),
    request_body = VpdBody,
    responses(
        (status_code = 200, description = "the result", body = VpdResult),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: a temperature, humidity, offset or phase out of range", body = ErrorBody),
    ))]
pub async fn vpd(req: &mut Request, depot: &mut Depot) -> Result<Json<VpdResult>, AppError> {
    let state = depot.app_state()?;
    let body: VpdBody = read_json(req, state.config().max_body_bytes).await?;
    Ok(Json(calculations::vpd(&input(body.input)?)))
}

/// Growing degree days: Σ max(0, (max + min)/2 − base) over the days given.
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
