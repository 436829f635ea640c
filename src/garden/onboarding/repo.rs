//! SQL of onboarding.

use sqlx::Row;
use uuid::Uuid;

use super::model::AppliedKit;
use crate::tenancy::TenantTx;

/// What the onboarding status shows of the garden, read in one statement.
pub struct Progress {
    pub zone: Option<String>,
    pub kit: Option<AppliedKit>,
    pub site: bool,
    pub plants: bool,
}

/// The garden's zone (its settings), its applied kit, and whether it has a site and a live
/// plant: one statement.
pub async fn progress(tx: &mut TenantTx) -> Result<Progress, sqlx::Error> {
    let r = sqlx::query(tx.sql(
        "SELECT (SELECT hardiness_zone FROM tenant.garden_settings WHERE id) AS zone, \
           EXISTS (SELECT 1 FROM tenant.sites) AS s, \
           EXISTS (SELECT 1 FROM tenant.plants WHERE archived_at IS NULL) AS p, \
           k.kit_key, k.kit_slug, k.site_id, k.location_id, k.plant_ids, k.applied_at \
         FROM (SELECT 1) AS one LEFT JOIN tenant.onboarding_kits k ON k.id",
    ))
    .fetch_one(tx.conn())
    .await?;
    let kit = match r.try_get::<Option<String>, _>("kit_key")? {
        Some(kit_key) => Some(AppliedKit {
            kit_key,
            kit_slug: r.try_get("kit_slug")?,
            site_key: r.try_get("site_id")?,
            location_key: r.try_get("location_id")?,
            plant_keys: r.try_get("plant_ids")?,
            applied_at: r.try_get("applied_at")?,
        }),
        None => None,
    };
    Ok(Progress {
        zone: r.try_get("zone")?,
        kit,
        site: r.try_get("s")?,
        plants: r.try_get("p")?,
    })
}

pub async fn applied(tx: &mut TenantTx) -> Result<Option<AppliedKit>, sqlx::Error> {
    let row = sqlx::query(tx.sql(
        "SELECT kit_key, kit_slug, site_id, location_id, plant_ids, applied_at \
         FROM tenant.onboarding_kits WHERE id",
    ))
    .fetch_optional(tx.conn())
    .await?;
    row.map(|r| {
        Ok(AppliedKit {
            kit_key: r.try_get("kit_key")?,
            kit_slug: r.try_get("kit_slug")?,
            site_key: r.try_get("site_id")?,
            location_key: r.try_get("location_id")?,
            plant_keys: r.try_get("plant_ids")?,
            applied_at: r.try_get("applied_at")?,
        })
    })
    .transpose()
}

/// Records the kit; `false` when one was recorded already (a concurrent apply).
pub async fn record(
    tx: &mut TenantTx,
    kit_key: &str,
    kit_slug: &str,
    site: Uuid,
    location: Uuid,
    plants: &[Uuid],
    actor: &str,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query(tx.sql(
        "INSERT INTO tenant.onboarding_kits (id, kit_key, kit_slug, site_id, location_id, \
         plant_ids, applied_by) VALUES (true, $1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING",
    ))
    .bind(kit_key)
    .bind(kit_slug)
    .bind(site)
    .bind(location)
    .bind(plants)
    .bind(actor)
    .execute(tx.conn())
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Whether the garden has a site, and a live plant.
pub async fn has_site_and_plant(tx: &mut TenantTx) -> Result<(bool, bool), sqlx::Error> {
    let row = sqlx::query(tx.sql(
        "SELECT EXISTS (SELECT 1 FROM tenant.sites) AS s, \
         EXISTS (SELECT 1 FROM tenant.plants WHERE archived_at IS NULL) AS p",
    ))
    .fetch_one(tx.conn())
    .await?;
    Ok((row.try_get("s")?, row.try_get("p")?))
}
