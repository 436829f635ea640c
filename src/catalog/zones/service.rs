//! The zone list: the 26 computed zones with the curated texts where there are some.

use std::collections::HashMap;

use super::model::{HardinessZone, ZONE_TEXT};
use crate::catalog::engine::repo::Conditions;
use crate::catalog::engine::service;
use crate::error::AppError;
use crate::rules::zones::Zone;
use crate::state::AppState;

/// All 26 zones, coldest first.
pub async fn zones(state: &AppState) -> Result<Vec<HardinessZone>, AppError> {
    let mut db = state.platform_pool().acquire().await?;
    let texts = service::all(&mut db, &ZONE_TEXT, &Conditions::default()).await?;
    let by_zone: HashMap<String, &serde_json::Value> = texts
        .iter()
        .filter_map(|t| Some((t.get("zone")?.as_str()?.to_owned(), t)))
        .collect();
    Ok(Zone::all()
        .map(|z| HardinessZone::new(z, by_zone.get(&z.name()).copied()))
        .collect())
}
