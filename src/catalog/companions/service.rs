//! Companion recommendations of a species: good neighbours (best first) and ones to avoid.

use salvo::oapi::ToSchema;
use serde::Serialize;
use serde_json::Value;

use super::model::PAIR;
use crate::catalog::engine::repo::Conditions;
use crate::catalog::engine::service;
use crate::catalog::species::model::SPECIES;
use crate::error::AppError;
use crate::state::AppState;

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

/// The recommendations of a species (404 when it does not exist).
pub async fn recommendations(state: &AppState, key: &str) -> Result<Recommendations, AppError> {
    let mut db = state.platform_pool().acquire().await?;
    let species = service::require(&mut db, &SPECIES, key).await?;
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
    Ok(out)
}
