//! SQL of the calendar: garden settings (tenant), phase entries and live plants (read), and
//! the feed secrets (platform).

use sqlx::{PgExecutor, Row};
use time::{Date, OffsetDateTime};
use uuid::Uuid;

use crate::auth::secrets::SecretHash;
use crate::tenancy::TenantTx;

/// A text setting of the garden's one settings row (`column` is one of the fixed names below,
/// never input); `None` when unset or when the row does not exist yet.
async fn setting(tx: &mut TenantTx, column: &'static str) -> Result<Option<String>, sqlx::Error> {
    let sql = tx.sql(&format!(
        "SELECT {column} FROM tenant.garden_settings WHERE id"
    ));
    let value: Option<Option<String>> = sqlx::query_scalar(sql).fetch_optional(tx.conn()).await?;
    Ok(value.flatten())
}

/// Sets a text setting (null clears it), making the settings row when there is none.
async fn set_setting(
    tx: &mut TenantTx,
    column: &'static str,
    value: Option<&str>,
) -> Result<(), sqlx::Error> {
    let sql = tx.sql(&format!(
        "INSERT INTO tenant.garden_settings (id, {column}) VALUES (true, $1) \
         ON CONFLICT (id) DO UPDATE SET {column} = $1, updated_at = now()"
    ));
    sqlx::query(sql).bind(value).execute(tx.conn()).await?;
    Ok(())
}

pub async fn zone(tx: &mut TenantTx) -> Result<Option<String>, sqlx::Error> {
    setting(tx, "hardiness_zone").await
}

pub async fn set_zone(tx: &mut TenantTx, zone: Option<&str>) -> Result<(), sqlx::Error> {
    set_setting(tx, "hardiness_zone", zone).await
}

pub async fn timezone(tx: &mut TenantTx) -> Result<Option<String>, sqlx::Error> {
    setting(tx, "timezone").await
}

pub async fn set_timezone(tx: &mut TenantTx, timezone: Option<&str>) -> Result<(), sqlx::Error> {
    set_setting(tx, "timezone", timezone).await
}

/// The garden's own frost settings: hemisphere (`north`/`south`, null north), last spring and
/// first autumn frost (`MM-DD`).
pub struct FrostSettings {
    pub hemisphere: Option<String>,
    pub last_spring_frost: Option<String>,
    pub first_autumn_frost: Option<String>,
}

/// Every setting of the garden's one settings row, read at once (all `None` before the row
/// exists).
pub struct Settings {
    pub hardiness_zone: Option<String>,
    pub timezone: Option<String>,
    pub frost: FrostSettings,
}

pub async fn settings(tx: &mut TenantTx) -> Result<Settings, sqlx::Error> {
    let sql = tx.sql(
        "SELECT hardiness_zone, timezone, hemisphere, last_spring_frost, first_autumn_frost \
         FROM tenant.garden_settings WHERE id",
    );
    let row = sqlx::query(sql).fetch_optional(tx.conn()).await?;
    let text = |column: &str| -> Result<Option<String>, sqlx::Error> {
        match &row {
            Some(r) => r.try_get(column),
            None => Ok(None),
        }
    };
    Ok(Settings {
        hardiness_zone: text("hardiness_zone")?,
        timezone: text("timezone")?,
        frost: FrostSettings {
            hemisphere: text("hemisphere")?,
            last_spring_frost: text("last_spring_frost")?,
            first_autumn_frost: text("first_autumn_frost")?,
        },
    })
}

pub async fn set_frost_settings(tx: &mut TenantTx, s: &FrostSettings) -> Result<(), sqlx::Error> {
    set_setting(tx, "hemisphere", s.hemisphere.as_deref()).await?;
    set_setting(tx, "last_spring_frost", s.last_spring_frost.as_deref()).await?;
    set_setting(tx, "first_autumn_frost", s.first_autumn_frost.as_deref()).await
}

/// The hardiness zone of a site: `None` when the site does not exist, `Some(None)` when it
/// has no zone.
pub async fn site_zone(
    tx: &mut TenantTx,
    site: Uuid,
) -> Result<Option<Option<String>>, sqlx::Error> {
    sqlx::query_scalar(tx.sql("SELECT climate_zone FROM tenant.sites WHERE id = $1"))
        .bind(site)
        .fetch_optional(tx.conn())
        .await
}

/// A phase a plant entered.
pub struct PhaseEntry {
    pub id: Uuid,
    pub plant_id: Uuid,
    pub plant_name: String,
    pub phase_name: String,
    pub phase_key: String,
    pub entered_on: Date,
}

/// Phase entries of live and archived plants whose day (UTC) lies in the window.
pub async fn phase_entries(
    tx: &mut TenantTx,
    from: Date,
    to: Date,
) -> Result<Vec<PhaseEntry>, sqlx::Error> {
    let rows = sqlx::query(tx.sql(
        "SELECT h.id, h.plant_id, p.name AS plant_name, h.phase_name, h.phase_key, \
         (h.entered_at AT TIME ZONE 'UTC')::date AS entered_on \
         FROM tenant.plant_phase_history h JOIN tenant.plants p ON p.id = h.plant_id \
         WHERE h.entered_at >= ($1::date AT TIME ZONE 'UTC') \
           AND h.entered_at < (($2::date + 1) AT TIME ZONE 'UTC') \
         ORDER BY h.entered_at, h.id",
    ))
    .bind(from)
    .bind(to)
    .fetch_all(tx.conn())
    .await?;
    rows.iter()
        .map(|r| {
            Ok(PhaseEntry {
                id: r.try_get("id")?,
                plant_id: r.try_get("plant_id")?,
                plant_name: r.try_get("plant_name")?,
                phase_name: r.try_get("phase_name")?,
                phase_key: r.try_get("phase_key")?,
                entered_on: r.try_get("entered_on")?,
            })
        })
        .collect()
}

/// A live plant in its current phase.
pub struct LivePhase {
    pub plant_id: Uuid,
    pub plant_name: String,
    pub species_key: String,
    pub phase_key: String,
    pub cycle: i32,
    pub started_on: Date,
}

pub async fn live_phases(tx: &mut TenantTx) -> Result<Vec<LivePhase>, sqlx::Error> {
    let rows = sqlx::query(tx.sql(
        "SELECT id, name, species_key, current_phase_key, coalesce(current_cycle, 1) AS cycle, \
         (current_phase_started_at AT TIME ZONE 'UTC')::date AS started_on \
         FROM tenant.plants WHERE archived_at IS NULL AND current_phase_key IS NOT NULL \
         ORDER BY created_at, id",
    ))
    .fetch_all(tx.conn())
    .await?;
    rows.iter()
        .map(|r| {
            Ok(LivePhase {
                plant_id: r.try_get("id")?,
                plant_name: r.try_get("name")?,
                species_key: r.try_get("species_key")?,
                phase_key: r.try_get("current_phase_key")?,
                cycle: r.try_get("cycle")?,
                started_on: r.try_get("started_on")?,
            })
        })
        .collect()
}

/// The species of the garden's live plants and how many plants each has.
/// Live plants per species, of the whole garden or of one site (plants at its locations).
pub async fn species_counts(
    tx: &mut TenantTx,
    site: Option<Uuid>,
) -> Result<Vec<(String, i64)>, sqlx::Error> {
    let rows = sqlx::query(tx.sql(
        "SELECT p.species_key, count(*) AS n FROM tenant.plants p \
         LEFT JOIN tenant.locations l ON l.id = p.location_id \
         WHERE p.archived_at IS NULL AND ($1::uuid IS NULL OR l.site_id = $1) \
         GROUP BY p.species_key ORDER BY p.species_key",
    ))
    .bind(site)
    .fetch_all(tx.conn())
    .await?;
    rows.iter()
        .map(|r| Ok((r.try_get("species_key")?, r.try_get("n")?)))
        .collect()
}

// ---------- feeds (platform) ----------

pub struct FeedRow {
    pub created_at: OffsetDateTime,
    pub rotated_at: OffsetDateTime,
}

pub async fn feed_of(
    db: impl PgExecutor<'_>,
    tenant: Uuid,
    user: Uuid,
) -> Result<Option<FeedRow>, sqlx::Error> {
    let row = sqlx::query(
        "SELECT created_at, rotated_at FROM platform.calendar_feeds \
         WHERE tenant_id = $1 AND user_id = $2",
    )
    .bind(tenant)
    .bind(user)
    .fetch_optional(db)
    .await?;
    row.map(|r| {
        Ok(FeedRow {
            created_at: r.try_get("created_at")?,
            rotated_at: r.try_get("rotated_at")?,
        })
    })
    .transpose()
}

/// Inserts a feed; `None` when the member has one already.
pub async fn insert_feed(
    db: impl PgExecutor<'_>,
    tenant: Uuid,
    user: Uuid,
    hash: &SecretHash,
) -> Result<Option<OffsetDateTime>, sqlx::Error> {
    sqlx::query_scalar(
        "INSERT INTO platform.calendar_feeds (id, tenant_id, user_id, token_hash) \
         VALUES ($1, $2, $3, $4) ON CONFLICT (tenant_id, user_id) DO NOTHING RETURNING rotated_at",
    )
    .bind(Uuid::now_v7())
    .bind(tenant)
    .bind(user)
    .bind(hash.as_bytes().as_slice())
    .fetch_optional(db)
    .await
}

/// Replaces the digest, or creates the feed when the member has none.
pub async fn rotate_feed(
    db: impl PgExecutor<'_>,
    tenant: Uuid,
    user: Uuid,
    hash: &SecretHash,
) -> Result<OffsetDateTime, sqlx::Error> {
    sqlx::query_scalar(
        "INSERT INTO platform.calendar_feeds (id, tenant_id, user_id, token_hash) \
         VALUES ($1, $2, $3, $4) ON CONFLICT (tenant_id, user_id) \
         DO UPDATE SET token_hash = EXCLUDED.token_hash, rotated_at = now() RETURNING rotated_at",
    )
    .bind(Uuid::now_v7())
    .bind(tenant)
    .bind(user)
    .bind(hash.as_bytes().as_slice())
    .fetch_one(db)
    .await
}

pub async fn delete_feed(
    db: impl PgExecutor<'_>,
    tenant: Uuid,
    user: Uuid,
) -> Result<bool, sqlx::Error> {
    let done =
        sqlx::query("DELETE FROM platform.calendar_feeds WHERE tenant_id = $1 AND user_id = $2")
            .bind(tenant)
            .bind(user)
            .execute(db)
            .await?;
    Ok(done.rows_affected() > 0)
}

/// The tenant of a presented feed digest, only while its member still belongs to the garden
/// and the member's account is active.
/// Returns the stored digest too, compared again in constant time by the caller.
pub async fn feed_by_hash(
    db: impl PgExecutor<'_>,
    hash: &SecretHash,
) -> Result<Option<(Uuid, Vec<u8>)>, sqlx::Error> {
    let row = sqlx::query(
        "SELECT f.tenant_id, f.token_hash FROM platform.calendar_feeds f \
         JOIN platform.memberships m ON m.tenant_id = f.tenant_id AND m.user_id = f.user_id \
         JOIN platform.users u ON u.id = f.user_id AND u.is_active \
         WHERE f.token_hash = $1",
    )
    .bind(hash.as_bytes().as_slice())
    .fetch_optional(db)
    .await?;
    row.map(|r| Ok((r.try_get("tenant_id")?, r.try_get("token_hash")?)))
        .transpose()
}
