//! Enrichment use cases: list sources, look a name up, propose changes to a species.

use salvo::oapi::ToSchema;
use serde::Serialize;
use serde_json::Value;

use super::adapter::{Http, SourceMatch, find, registry};
use crate::catalog::engine::service;
use crate::catalog::families::model::FAMILY;
use crate::catalog::species::model::SPECIES;
use crate::error::AppError;
use crate::state::AppState;

/// A configured source.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SourceInfo {
    pub name: String,
    pub description: String,
    pub base_url: String,
}

/// A source's answer for a name.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct LookupResult {
    pub source: String,
    pub query: String,
    pub found: bool,
    #[serde(rename = "match")]
    pub matched: Option<SourceMatch>,
}

/// A field where the source differs from the catalogue.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Difference {
    pub field: String,
    pub current: Option<String>,
    pub proposed: Option<String>,
}

/// What a source says about a species, and where it differs (nothing is written).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Proposal {
    pub species_key: String,
    pub lookup: LookupResult,
    pub differences: Vec<Difference>,
}

pub fn sources(state: &AppState) -> Vec<SourceInfo> {
    registry(state.config())
        .iter()
        .map(|s| SourceInfo {
            name: s.name().to_owned(),
            description: s.description().to_owned(),
            base_url: s.base_url().to_owned(),
        })
        .collect()
}

pub fn source(state: &AppState, name: &str) -> Result<SourceInfo, AppError> {
    let s = find(state.config(), name)?;
    Ok(SourceInfo {
        name: s.name().to_owned(),
        description: s.description().to_owned(),
        base_url: s.base_url().to_owned(),
    })
}

pub async fn lookup(
    state: &AppState,
    source: &str,
    scientific_name: &str,
) -> Result<LookupResult, AppError> {
    let adapter = find(state.config(), source)?;
    let matched = adapter
        .lookup(&Http::new(state.config()), scientific_name)
        .await?;
    Ok(LookupResult {
        source: adapter.name().to_owned(),
        query: scientific_name.to_owned(),
        found: matched.is_some(),
        matched,
    })
}

pub async fn propose(
    state: &AppState,
    species_key: &str,
    source: &str,
) -> Result<Proposal, AppError> {
    // An unknown source is refused before anything else is looked at.
    find(state.config(), source)?;
    let (species, family) = {
        let mut db = state.platform_pool().acquire().await?;
        let id = service::require(&mut db, &SPECIES, species_key).await?;
        let species = service::get_by_id(&mut db, &SPECIES, id).await?;
        let family = match species.get("family_key").and_then(Value::as_str) {
            Some(k) => service::get_by_id(&mut db, &FAMILY, service::parse_key(&FAMILY, k)?)
                .await
                .ok(),
            None => None,
        };
        (species, family)
    };
    let text = |v: Option<&Value>, f: &str| {
        v.and_then(|v| v.get(f))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let name = text(Some(&species), "scientific_name").unwrap_or_default();
    let lookup = lookup(state, source, &name).await?;
    let mut differences = Vec::new();
    if let Some(m) = &lookup.matched {
        for (field, current, proposed) in [
            (
                "scientific_name",
                Some(name.clone()),
                m.canonical_name.clone(),
            ),
            ("genus", text(Some(&species), "genus"), m.genus.clone()),
            ("family", text(family.as_ref(), "name"), m.family.clone()),
        ] {
            if proposed.is_some() && current != proposed {
                differences.push(Difference {
                    field: field.to_owned(),
                    current,
                    proposed,
                });
            }
        }
    }
    Ok(Proposal {
        species_key: text(Some(&species), "key").unwrap_or_default(),
        lookup,
        differences,
    })
}
