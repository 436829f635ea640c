//! The mixing protocol as a use case: the products are resolved (global catalogue, or a
//! garden's products: global and its own),
//! the request checked, and `rules::mixing_protocol` computes the doses. REST
//! (`POST /calculations/mixing-protocol`) and the MCP tool `calculate_mixing_protocol` both
//! call [`mixing_protocol`].

use serde_json::Value;

use super::model::MixingProtocolBody;
use crate::catalog::engine::service as catalog;
use crate::catalog::fertilizers::model::FERTILIZER;
use crate::catalog::species::model::SPECIES;
use crate::error::{AppError, ErrorCode, ErrorDetail};
use crate::rules::calculations::FieldProblem;
use crate::rules::mixing_protocol::{
    self, MixProduct, MixRequest, MixingProtocol, PhEffect, ProductRole,
};
use crate::state::AppState;

pub const DEFAULT_TARGET_PH: f64 = 6.0;
pub const DEFAULT_BASE_WATER_PH: f64 = 7.2;
pub const DEFAULT_SUBSTRATE: &str = "coco";
pub const DEFAULT_PHASE: &str = "vegetative";

/// Where the products of a protocol come from.
///
/// `Garden` resolves a `tenant:<uuid>` key in the garden's schema and a global key in the
/// catalogue (`garden::fertilizers::service::resolve`), so a key of another garden is a 404.
#[derive(Debug, Clone, Copy)]
pub enum ProductSource<'a> {
    GlobalCatalogue,
    Garden(&'a crate::tenancy::TenantRecord),
}

fn validation(problems: Vec<FieldProblem>) -> AppError {
    AppError::validation(
        problems
            .into_iter()
            .map(|p| ErrorDetail::new(format!("body.{}", p.field), p.reason, "value_error"))
            .collect(),
    )
}

fn text<'a>(v: &'a Value, name: &str) -> Option<&'a str> {
    v.get(name).and_then(Value::as_str)
}

fn flag(v: &Value, name: &str, default: bool) -> bool {
    v.get(name).and_then(Value::as_bool).unwrap_or(default)
}

/// A catalogue fertiliser as the rule sees it.
pub fn product_of(key: &str, record: &Value, recipe: Option<f64>) -> MixProduct {
    let name = text(record, "name").unwrap_or(key).to_owned();
    let kind = text(record, "fertilizer_type").unwrap_or("base");
    let role = if kind == "silicate" {
        ProductRole::Silicate
    } else if kind == "ph_adjuster" {
        ProductRole::PhAdjuster
    } else if flag(record, "calmag", false) {
        ProductRole::CalMag
    } else {
        ProductRole::Nutrient
    };
    let lower = name.to_lowercase();
    let sulfur = record
        .pointer("/secondary/s")
        .and_then(Value::as_f64)
        .unwrap_or(0.0);
    // Domain 2.14 recognises sulfates by name; a product that is one tenth sulfur or more is
    // one whatever its name.
    let sulfate = ["sulfat", "sulphat", "epsom"]
        .iter()
        .any(|w| lower.contains(w))
        || sulfur >= 10.0;
    let calcium_content = record
        .pointer("/secondary/ca")
        .and_then(Value::as_f64)
        .unwrap_or(0.0);
    // Every calcium source counts for the gypsum check: CalMag products, calcium nitrate or
    // chloride, base parts with calcium.
    let calcium = role == ProductRole::CalMag
        || calcium_content > 0.0
        || ["calcium", "calcinit", "cal-mag", "calmag"]
            .iter()
            .any(|w| lower.contains(w));
    MixProduct {
        key: key.to_owned(),
        name,
        role,
        ec_per_ml: record
            .get("ec_contribution_per_ml")
            .and_then(Value::as_f64)
            .unwrap_or(0.0),
        ec_uncertain: flag(record, "ec_contribution_uncertain", false),
        max_dose_ml_per_liter: record.get("max_dose_ml_per_liter").and_then(Value::as_f64),
        recommended_dose_ml_per_liter: record
            .get("recommended_dose_ml_per_liter")
            .and_then(Value::as_f64)
            .unwrap_or(1.0),
        mixing_priority: record
            .get("mixing_priority")
            .and_then(Value::as_u64)
            .and_then(|p| u8::try_from(p).ok())
            .unwrap_or(50),
        tank_safe: flag(record, "tank_safe", true),
        ph_effect: match text(record, "ph_effect") {
            Some("acidic") => PhEffect::Acidic,
            Some("alkaline") => PhEffect::Alkaline,
            _ => PhEffect::Neutral,
        },
        biological: kind == "biological"
            || text(record, "bioavailability") == Some("microbial_dependent"),
        sulfate,
        calcium,
        recipe_ml_per_liter: recipe,
    }
}

/// Checks the request (422 naming every field out of range), resolves each product (404 with
/// the field for an unknown key), and computes the protocol. Reads only.
pub async fn mixing_protocol(
    state: &AppState,
    source: ProductSource<'_>,
    body: &MixingProtocolBody,
) -> Result<MixingProtocol, AppError> {
    // Bounds first, on placeholders: a request that is wrong in itself is a 422 whatever its
    // keys name.
    let placeholders = body
        .fertilizers
        .iter()
        .map(|c| product_of(&c.fertilizer_key, &Value::Null, c.ml_per_liter))
        .collect();
    let mut request = MixRequest::new(MixRequest {
        products: placeholders,
        target_volume_liters: body.target_volume_liters,
        target_ec_ms: body.target_ec_ms,
        base_water_ec_ms: body.base_water_ec_ms.unwrap_or(0.0),
        target_ph: body.target_ph.unwrap_or(DEFAULT_TARGET_PH),
        base_water_ph: body.base_water_ph.unwrap_or(DEFAULT_BASE_WATER_PH),
        alkalinity_ppm: body.alkalinity_ppm.unwrap_or(0.0),
        substrate_type: body
            .substrate_type
            .clone()
            .unwrap_or_else(|| DEFAULT_SUBSTRATE.to_owned()),
        substrate_cycles_used: body.substrate_cycles_used,
        phase: body
            .phase
            .as_deref()
            .map(str::trim)
            .unwrap_or(DEFAULT_PHASE)
            .to_owned(),
        water_temp_c: body.water_temp_c,
        crop: None,
    })
    .map_err(validation)?;
    if let Some(key) = &body.species_key {
        let record =
            match catalog::get(state, &SPECIES, key).await {
                Ok(r) => r,
                Err(e) if e.code() == ErrorCode::EntityNotFound => {
                    return Err(AppError::not_found("species").with_details(vec![
                        ErrorDetail::new("body.species_key", "no such species", "not_found"),
                    ]));
                }
                Err(e) => return Err(e),
            };
        request.crop = text(&record, "scientific_name").map(str::to_owned);
    }
    let mut resolved = Vec::with_capacity(body.fertilizers.len());
    let mut garden_tx = match source {
        ProductSource::Garden(tenant) => Some(crate::tenancy::TenantTx::read(state, tenant).await?),
        ProductSource::GlobalCatalogue => None,
    };
    if let Some(key) = &body.substrate_key {
        let substrate = match garden_tx.as_mut() {
            Some(tx) => crate::garden::substrates::service::resolve(state, tx, key).await?,
            None => crate::garden::substrates::service::resolve_global(state, key).await?,
        };
        let substrate = substrate.ok_or_else(|| {
            AppError::not_found("substrate").with_details(vec![ErrorDetail::new(
                "body.substrate_key",
                "no such substrate",
                "not_found",
            )])
        })?;
        request.substrate_type = substrate.props.substrate_type;
    }
    for (i, choice) in body.fertilizers.iter().enumerate() {
        let record = match garden_tx.as_mut() {
            None => catalog::get(state, &FERTILIZER, &choice.fertilizer_key).await,
            Some(tx) => {
                crate::garden::fertilizers::service::resolve(state, tx, &choice.fertilizer_key)
                    .await
                    .and_then(|f| {
                        f.map(|f| f.0)
                            .ok_or_else(|| AppError::not_found("fertiliser"))
                    })
            }
        };
        let record = match record {
            Ok(r) => r,
            Err(e) if e.code() == ErrorCode::EntityNotFound => {
                return Err(AppError::not_found("fertiliser").with_details(vec![
                    ErrorDetail::new(
                        format!("body.fertilizers[{i}].fertilizer_key"),
                        "no such fertiliser",
                        "not_found",
                    ),
                ]));
            }
            Err(e) => return Err(e),
        };
        resolved.push(product_of(
            &choice.fertilizer_key,
            &record,
            choice.ml_per_liter,
        ));
    }
    if let Some(tx) = garden_tx {
        tx.commit().await?;
    }
    request.products = resolved;
    Ok(mixing_protocol::calculate(&request))
}
