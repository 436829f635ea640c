//! SQL of sites. Tenant tables are named `tenant.<table>`; `TenantTx::sql` renders the
//! placeholder into the tenant's schema (see `tenancy::tx`).

use sqlx::Row;
use sqlx::postgres::PgRow;
use uuid::Uuid;

use super::model::{NewSite, Site, SiteKind, SitePatch};
use crate::tenancy::TenantTx;
use crate::values::json::Patch;
use crate::values::page::PageRequest;

const COLUMNS: &str =
    "id, name, kind, description, climate_zone, latitude, longitude, created_at, updated_at";

fn decode(row: &PgRow) -> Result<Site, sqlx::Error> {
    let kind: String = row.try_get("kind")?;
    Ok(Site {
        key: row.try_get("id")?,
        name: row.try_get("name")?,
        kind: SiteKind::parse(&kind)
            .ok_or_else(|| sqlx::Error::Decode(format!("unknown site kind {kind:?}").into()))?,
        description: row.try_get("description")?,
        climate_zone: row.try_get("climate_zone")?,
        latitude: row.try_get("latitude")?,
        longitude: row.try_get("longitude")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

pub async fn count(tx: &mut TenantTx) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(tx.sql("SELECT count(*) FROM tenant.sites"))
        .fetch_one(tx.conn())
        .await
}

/// One page of sites and the number of sites, in one statement; the number is `None` when the
/// page is past the end (no row carries it: ask [`count`]).
pub async fn list(
    tx: &mut TenantTx,
    page: PageRequest,
) -> Result<(Vec<Site>, Option<i64>), sqlx::Error> {
    let sql = tx.sql(&format!(
        "SELECT {COLUMNS}, count(*) OVER () AS matched FROM tenant.sites \
         ORDER BY created_at, id LIMIT $1 OFFSET $2"
    ));
    let rows = sqlx::query(sql)
        .bind(page.limit)
        .bind(page.skip)
        .fetch_all(tx.conn())
        .await?;
    let matched = match rows.first() {
        Some(r) => Some(r.try_get::<i64, _>("matched")?),
        None => None,
    };
    let sites = rows.iter().map(decode).collect::<Result<Vec<_>, _>>()?;
    Ok((sites, matched))
}

pub async fn get(tx: &mut TenantTx, id: Uuid) -> Result<Option<Site>, sqlx::Error> {
    let sql = tx.sql(&format!("SELECT {COLUMNS} FROM tenant.sites WHERE id = $1"));
    let row = sqlx::query(sql).bind(id).fetch_optional(tx.conn()).await?;
    row.as_ref().map(decode).transpose()
}

/// `None` when a site of that name (case-insensitive) exists.
pub async fn insert(tx: &mut TenantTx, site: &NewSite) -> Result<Option<Site>, sqlx::Error> {
    let sql = tx.sql(&format!(
        "INSERT INTO tenant.sites (id, name, kind, description, climate_zone, latitude, \
         longitude) VALUES ($1, $2, $3, $4, $5, $6, $7) \
         ON CONFLICT DO NOTHING RETURNING {COLUMNS}"
    ));
    let row = sqlx::query(sql)
        .bind(Uuid::now_v7())
        .bind(&site.name)
        .bind(site.kind.as_str())
        .bind(&site.description)
        .bind(&site.climate_zone)
        .bind(site.latitude)
        .bind(site.longitude)
        .fetch_optional(tx.conn())
        .await?;
    row.as_ref().map(decode).transpose()
}

/// Locks the site row until the transaction ends.
pub async fn lock(tx: &mut TenantTx, id: Uuid) -> Result<Option<Site>, sqlx::Error> {
    let sql = tx.sql(&format!(
        "SELECT {COLUMNS} FROM tenant.sites WHERE id = $1 FOR UPDATE"
    ));
    let row = sqlx::query(sql).bind(id).fetch_optional(tx.conn()).await?;
    row.as_ref().map(decode).transpose()
}

pub async fn name_taken(tx: &mut TenantTx, name: &str, except: Uuid) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar(tx.sql(
        "SELECT EXISTS (SELECT 1 FROM tenant.sites WHERE lower(name) = lower($1) AND id <> $2)",
    ))
    .bind(name)
    .bind(except)
    .fetch_one(tx.conn())
    .await
}

/// Writes the site as `patch` leaves it (omitted fields keep `current`'s values).
pub async fn update(
    tx: &mut TenantTx,
    current: &Site,
    name: &str,
    patch: &SitePatch,
) -> Result<Option<Site>, sqlx::Error> {
    let kept = |p: &Patch<String>, now: &Option<String>| match p {
        Patch::Keep => now.clone(),
        Patch::Clear => None,
        Patch::Set(v) => Some(v.clone()),
    };
    let coordinates = match patch.coordinates {
        Patch::Keep => current.latitude.zip(current.longitude),
        Patch::Clear => None,
        Patch::Set(c) => Some(c),
    };
    let sql = tx.sql(&format!(
        "UPDATE tenant.sites SET name = $2, kind = $3, description = $4, climate_zone = $5, \
         latitude = $6, longitude = $7, updated_at = now() WHERE id = $1 RETURNING {COLUMNS}"
    ));
    let row = sqlx::query(sql)
        .bind(current.key)
        .bind(name)
        .bind(patch.kind.unwrap_or(current.kind).as_str())
        .bind(kept(&patch.description, &current.description))
        .bind(kept(&patch.climate_zone, &current.climate_zone))
        .bind(coordinates.map(|c| c.0))
        .bind(coordinates.map(|c| c.1))
        .fetch_optional(tx.conn())
        .await?;
    row.as_ref().map(decode).transpose()
}

/// Locations of the site.
pub async fn location_count(tx: &mut TenantTx, id: Uuid) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(tx.sql("SELECT count(*) FROM tenant.locations WHERE site_id = $1"))
        .bind(id)
        .fetch_one(tx.conn())
        .await
}

pub async fn delete(tx: &mut TenantTx, id: Uuid) -> Result<(), sqlx::Error> {
    sqlx::query(tx.sql("DELETE FROM tenant.sites WHERE id = $1"))
        .bind(id)
        .execute(tx.conn())
        .await?;
    Ok(())
}
