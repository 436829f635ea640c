//! REST face of `/companion-planting`, with recommendations per species.

use salvo::oapi::ToSchema;
use salvo::oapi::extract::PathParam;
use salvo::prelude::*;
use serde::Serialize;
use serde_json::Value;

use super::model::{PAIR, PairKind};
use crate::catalog::engine::repo::Conditions;
use crate::catalog::engine::service;
use crate::catalog::species::model::SPECIES;
use crate::error::{AppError, ErrorBody};
use crate::http::depot::DepotExt;

crate::catalog_routes!(
    companion_planting,
    PairKind,
    "companion-planting",
    "companion planting",
    "companion pairs"
);

pub fn router() -> Router {
    companion_planting::router().push(
        Router::with_path("species/{key}/recommendations")
            .hoop(crate::auth::require_caller)
            .get(companion_recommendations),
    )
}

/// A neighbour of the species.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Companion {
    pub species_key: String,
    pub score: Option<f64>,
    pub reason: Option<String>,
}

/// Good and bad neighbours of a species.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Recommendations {
    pub species_key: String,
    /// Best first.
    pub compatible: Vec<Companion>,
    pub incompatible: Vec<Companion>,
}

/// Good neighbours (best score first) and neighbours to avoid.
#[endpoint(tags("companion planting"), security(["bearer" = []]), operation_id = "companion_recommendations",
    responses(
        (status_code = 200, description = "the recommendations", body = Recommendations),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown species", body = ErrorBody),
    ))]
pub async fn companion_recommendations(
    key: PathParam<String>,
    depot: &mut Depot,
) -> Result<Json<Recommendations>, AppError> {
    let state = depot.app_state()?;
    let mut db = state.platform_pool().acquire().await?;
    let species = service::require(&mut db, &SPECIES, &key).await?;
    let mut c = Conditions::default();
    c.links_to_any(&["species_a_key", "species_b_key"], species);
    let pairs = service::all(&mut db, &PAIR, &c).await?;
    let me = species.to_string();
    let mut out = Recommendations {
        species_key: me.clone(),
        compatible: Vec::new(),
        incompatible: Vec::new(),
    };
    for p in pairs {
        let s = |f: &str| p.get(f).and_then(Value::as_str).map(str::to_owned);
        let other = if s("species_a_key").as_deref() == Some(me.as_str()) {
            s("species_b_key")
        } else {
            s("species_a_key")
        };
        let entry = Companion {
            species_key: other.unwrap_or_default(),
            score: p.get("score").and_then(Value::as_f64),
            reason: s("reason"),
        };
        if s("relation").as_deref() == Some("compatible") {
            out.compatible.push(entry);
        } else {
            out.incompatible.push(entry);
        }
    }
    out.compatible
        .sort_by(|a, b| b.score.unwrap_or(0.0).total_cmp(&a.score.unwrap_or(0.0)));
    Ok(Json(out))
}
