//! Use cases of onboarding.

use serde_json::Value;
use uuid::Uuid;

use super::model::{Applied, ApplyKit, KitPlant, Status, Step};
use super::repo;
use crate::catalog::engine::service as catalog;
use crate::catalog::kits::model::KIT;
use crate::error::{AppError, ErrorCode};
use crate::garden::calendar::{feeds, repo as calendar_repo};
use crate::garden::places::model::{LocationConditions, NewLocation};
use crate::garden::plants::catalog::species_with_sequence;
use crate::garden::plants::model::StartPhase;
use crate::garden::plants::places::placement_target;
use crate::garden::plants::service::{Creation, insert_plant};
use crate::garden::sites::model::{NewSite, SiteKind};
use crate::garden::statements::GardenTx;
use crate::state::AppState;
use crate::tenancy::{TenantRecord, TenantTx};

pub async fn status(
    state: &AppState,
    tenant: &TenantRecord,
    user: Uuid,
) -> Result<Status, AppError> {
    let mut tx = TenantTx::read(state, tenant).await?;
    let repo::Progress {
        zone,
        kit,
        site,
        plants,
    } = repo::progress(&mut tx).await?;
    tx.commit().await?;
    let feed = feeds::status(state, tenant.id, user).await?.active;
    Ok(Status {
        completed: zone.is_some() && site && plants,
        steps: vec![
            Step {
                step: "hardiness_zone",
                done: zone.is_some(),
            },
            Step {
                step: "starter_kit",
                done: kit.is_some(),
            },
            Step {
                step: "site",
                done: site,
            },
            Step {
                step: "plants",
                done: plants,
            },
            Step {
                step: "calendar_feed",
                done: feed,
            },
        ],
        kit,
    })
}

/// Whether the garden still lacks a site or a live plant: one statement, so a page read on every
/// visit (Today) asks it before the whole [`status`].
pub async fn lacks_site_or_plant(
    state: &AppState,
    tenant: &TenantRecord,
) -> Result<bool, AppError> {
    let mut tx = TenantTx::read(state, tenant).await?;
    let (site, plants) = repo::has_site_and_plant(&mut tx).await?;
    tx.commit().await?;
    Ok(!(site && plants))
}

fn already_applied() -> AppError {
    AppError::new(
        ErrorCode::StateConflict,
        "a starter kit was applied to this garden already; add further plants one by one",
    )
}

/// Location kind for a kit's site type.
fn location_kind(site: SiteKind) -> &'static str {
    match site {
        SiteKind::Garden => "bed",
        SiteKind::Balcony => "balcony",
        SiteKind::Greenhouse => "greenhouse",
        SiteKind::GrowTent => "tent",
        SiteKind::Windowsill => "shelf",
        SiteKind::Apartment => "room",
    }
}

/// Applies a kit: the site, one location and one plant per species, all in one transaction,
/// with the kit recorded so a second apply is refused (409 `STATE_CONFLICT`).
pub async fn apply_kit(
    state: &AppState,
    tenant: &TenantRecord,
    body: &ApplyKit,
    actor: &str,
) -> Result<Applied, AppError> {
    let kit = catalog::get(state, &KIT, &body.kit_key.to_string()).await?;
    let text = |f: &str| kit.get(f).and_then(Value::as_str).map(str::to_owned);
    let slug = text("slug").unwrap_or_default();
    let kit_name = text("name_en").unwrap_or_else(|| slug.clone());
    let kind = text("site_type")
        .and_then(|t| SiteKind::parse(&t))
        .unwrap_or(SiteKind::Garden);
    let species_keys: Vec<String> = kit
        .get("species_keys")
        .and_then(Value::as_array)
        .map(|l| {
            l.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    // Catalogue reads first (no tenant transaction open while the platform is asked).
    let mut species = Vec::with_capacity(species_keys.len());
    for k in &species_keys {
        species.push(species_with_sequence(state, k).await?);
    }

    let mut tx = GardenTx::begin(state, tenant).await?;
    if repo::applied(tx.inner()).await?.is_some() {
        return Err(already_applied());
    }
    let site_name = body.site_name.clone().unwrap_or(kit_name);
    let site = crate::garden::sites::repo::insert(
        tx.inner(),
        &NewSite {
            name: site_name.clone(),
            kind,
            description: Some(format!("Set up from the starter kit {slug}.")),
            climate_zone: None,
            latitude: None,
            longitude: None,
        },
    )
    .await?
    .ok_or_else(|| AppError::duplicate(format!("a site named {site_name:?} exists")))?;
    let location_name = "Main spot".to_owned();
    let location = crate::garden::places::repo::insert_location(
        tx.inner(),
        &NewLocation {
            site_id: site.key,
            parent_id: None,
            name: location_name.clone(),
            kind: Some(location_kind(kind)),
            description: None,
            conditions: LocationConditions::default(),
        },
        0,
    )
    .await?
    .ok_or_else(|| AppError::internal("a new site already had a location"))?;
    let target = placement_target(tx.inner(), location.key, None).await?;
    let mut plants = Vec::with_capacity(species.len());
    for (info, sequence) in &species {
        let name = info.label();
        let id = insert_plant(
            state,
            &mut tx,
            Creation {
                name: name.clone(),
                species: info,
                sequence,
                cultivar_key: None,
                target: Some(&target),
                batch: None,
                planted_on: None,
                start: StartPhase::First,
                notes: None,
                actor,
                reason: "starter kit",
                // Conflicts needing an acknowledgement refuse here; the plant routes take the flags.
                acknowledge: Default::default(),
            },
        )
        .await?
        .0;
        plants.push(KitPlant {
            plant_key: id,
            name,
            species_key: info.key.clone(),
        });
    }
    if let Some(z) = &body.hardiness_zone {
        calendar_repo::set_zone(tx.inner(), Some(z)).await?;
    }
    let ids: Vec<Uuid> = plants.iter().map(|p| p.plant_key).collect();
    if !repo::record(
        tx.inner(),
        &body.kit_key.to_string(),
        &slug,
        site.key,
        location.key,
        &ids,
        actor,
    )
    .await?
    {
        return Err(already_applied());
    }
    let zone = calendar_repo::zone(tx.inner()).await?;
    tx.commit().await?;
    Ok(Applied {
        kit_key: body.kit_key.to_string(),
        kit_slug: slug,
        site_key: site.key,
        site_name: site.name,
        location_key: location.key,
        location_name,
        hardiness_zone: zone,
        plants,
    })
}
