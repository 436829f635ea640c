//! SQL of tanks, their fills and maintenance log.

use sqlx::Row;
use sqlx::postgres::PgRow;
use time::OffsetDateTime;
use uuid::Uuid;

use super::model::*;
use crate::tenancy::TenantTx;
use crate::values::page::PageRequest;

/// A tank row with what its state and schedule are computed from.
#[derive(Debug, Clone)]
pub struct TankRow {
    pub id: Uuid,
    pub name: String,
    pub kind: TankKind,
    pub volume_liters: f64,
    pub location_id: Option<Uuid>,
    pub notes: Option<String>,
    pub current_volume_liters: Option<f64>,
    pub current_ec_ms: Option<f64>,
    pub current_ph: Option<f64>,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
    pub last_fill: Option<TankFill>,
    pub last_full_change: Option<OffsetDateTime>,
    /// (maintenance type, last performed) per type done at least once.
    pub last_maintenance: Vec<(String, OffsetDateTime)>,
}

const FILL_COLUMNS: &str = "id, tank_id, fill_type, volume_liters, ec_ms, ph, water_source, \
                            water_temp_c, notes, volume_after_liters, filled_at, actor";

/// The tank with its last fill, last full change and last maintenance per type, in one
/// statement (`{where}` filters `t`).
fn select(where_: &str, tail: &str) -> String {
    format!(
        "SELECT t.id, t.name, t.kind, t.volume_liters, t.location_id, t.notes, \
         t.current_volume_liters, t.current_ec_ms, t.current_ph, t.created_at, t.updated_at, \
         f.id AS f_id, f.tank_id AS f_tank_id, f.fill_type AS f_fill_type, \
         f.volume_liters AS f_volume_liters, f.ec_ms AS f_ec_ms, f.ph AS f_ph, \
         f.water_source AS f_water_source, f.water_temp_c AS f_water_temp_c, f.notes AS f_notes, \
         f.volume_after_liters AS f_volume_after_liters, f.filled_at AS f_filled_at, \
         f.actor AS f_actor, \
         (SELECT max(x.filled_at) FROM tenant.tank_fills x \
            WHERE x.tank_id = t.id AND x.fill_type = 'full_change') AS last_full_change, \
         (SELECT array_agg(m.maintenance_type ORDER BY m.maintenance_type) FROM \
            (SELECT maintenance_type, max(performed_at) AS last FROM tenant.tank_maintenance \
             WHERE tank_id = t.id GROUP BY maintenance_type) m) AS m_types, \
         (SELECT array_agg(m.last ORDER BY m.maintenance_type) FROM \
            (SELECT maintenance_type, max(performed_at) AS last FROM tenant.tank_maintenance \
             WHERE tank_id = t.id GROUP BY maintenance_type) m) AS m_lasts \
         {tail_cols} \
         FROM tenant.tanks t \
         LEFT JOIN LATERAL (SELECT {FILL_COLUMNS} FROM tenant.tank_fills \
            WHERE tank_id = t.id ORDER BY filled_at DESC, id DESC LIMIT 1) f ON true \
         {where_}",
        tail_cols = tail,
    )
}

fn parse<T>(raw: &str, parse: fn(&str) -> Option<T>, what: &str) -> Result<T, sqlx::Error> {
    parse(raw).ok_or_else(|| sqlx::Error::Decode(format!("unknown {what} {raw:?}").into()))
}

fn decode_fill(row: &PgRow, p: &str) -> Result<Option<TankFill>, sqlx::Error> {
    let col = |c: &str| format!("{p}{c}");
    let Some(id) = row.try_get::<Option<Uuid>, _>(col("id").as_str())? else {
        return Ok(None);
    };
    let fill_type: String = row.try_get(col("fill_type").as_str())?;
    let source: Option<String> = row.try_get(col("water_source").as_str())?;
    Ok(Some(TankFill {
        key: id,
        tank_key: row.try_get(col("tank_id").as_str())?,
        fill_type: parse(&fill_type, FillType::parse, "fill type")?,
        volume_liters: row.try_get(col("volume_liters").as_str())?,
        ec_ms: row.try_get(col("ec_ms").as_str())?,
        ph: row.try_get(col("ph").as_str())?,
        water_source: source
            .map(|s| parse(&s, WaterSource::parse, "water source"))
            .transpose()?,
        water_temp_c: row.try_get(col("water_temp_c").as_str())?,
        notes: row.try_get(col("notes").as_str())?,
        volume_after_liters: row.try_get(col("volume_after_liters").as_str())?,
        filled_at: row.try_get(col("filled_at").as_str())?,
        actor: row.try_get(col("actor").as_str())?,
    }))
}

fn decode(row: &PgRow) -> Result<TankRow, sqlx::Error> {
    let kind: String = row.try_get("kind")?;
    let types: Option<Vec<String>> = row.try_get("m_types")?;
    let lasts: Option<Vec<OffsetDateTime>> = row.try_get("m_lasts")?;
    Ok(TankRow {
        id: row.try_get("id")?,
        name: row.try_get("name")?,
        kind: parse(&kind, TankKind::parse, "tank kind")?,
        volume_liters: row.try_get("volume_liters")?,
        location_id: row.try_get("location_id")?,
        notes: row.try_get("notes")?,
        current_volume_liters: row.try_get("current_volume_liters")?,
        current_ec_ms: row.try_get("current_ec_ms")?,
        current_ph: row.try_get("current_ph")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
        last_fill: decode_fill(row, "f_")?,
        last_full_change: row.try_get("last_full_change")?,
        last_maintenance: types
            .unwrap_or_default()
            .into_iter()
            .zip(lasts.unwrap_or_default())
            .collect(),
    })
}

/// One page of tanks (oldest first) and the number matched (`None` past the end).
pub async fn list(
    tx: &mut TenantTx,
    page: PageRequest,
) -> Result<(Vec<TankRow>, Option<i64>), sqlx::Error> {
    let sql = tx.sql(&select(
        "ORDER BY t.created_at, t.id LIMIT $1 OFFSET $2",
        ", count(*) OVER () AS matched",
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
    Ok((
        rows.iter().map(decode).collect::<Result<Vec<_>, _>>()?,
        matched,
    ))
}

pub async fn count(tx: &mut TenantTx) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(tx.sql("SELECT count(*) FROM tenant.tanks"))
        .fetch_one(tx.conn())
        .await
}

pub async fn get(tx: &mut TenantTx, id: Uuid) -> Result<Option<TankRow>, sqlx::Error> {
    let sql = tx.sql(&select("WHERE t.id = $1", ""));
    let row = sqlx::query(sql).bind(id).fetch_optional(tx.conn()).await?;
    row.as_ref().map(decode).transpose()
}

/// Locks the tank row until the transaction ends (fills and feedings change its state).
pub async fn lock(tx: &mut TenantTx, id: Uuid) -> Result<bool, sqlx::Error> {
    let found: Option<Uuid> =
        sqlx::query_scalar(tx.sql("SELECT id FROM tenant.tanks WHERE id = $1 FOR UPDATE"))
            .bind(id)
            .fetch_optional(tx.conn())
            .await?;
    Ok(found.is_some())
}

pub async fn name_taken(tx: &mut TenantTx, name: &str, except: Uuid) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar(tx.sql(
        "SELECT EXISTS (SELECT 1 FROM tenant.tanks WHERE lower(name) = lower($1) AND id <> $2)",
    ))
    .bind(name)
    .bind(except)
    .fetch_one(tx.conn())
    .await
}

pub async fn location_exists(tx: &mut TenantTx, id: Uuid) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar(tx.sql("SELECT EXISTS (SELECT 1 FROM tenant.locations WHERE id = $1)"))
        .bind(id)
        .fetch_one(tx.conn())
        .await
}

pub async fn insert(tx: &mut TenantTx, id: Uuid, t: &NewTank) -> Result<bool, sqlx::Error> {
    let done = sqlx::query(tx.sql(
        "INSERT INTO tenant.tanks (id, name, kind, volume_liters, location_id, notes) \
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
    ))
    .bind(id)
    .bind(&t.name)
    .bind(t.kind.as_str())
    .bind(t.volume_liters)
    .bind(t.location_key)
    .bind(&t.notes)
    .execute(tx.conn())
    .await?;
    Ok(done.rows_affected() == 1)
}

#[allow(clippy::too_many_arguments)]
pub async fn update(
    tx: &mut TenantTx,
    id: Uuid,
    name: &str,
    kind: TankKind,
    volume: f64,
    location: Option<Uuid>,
    notes: Option<&str>,
) -> Result<(), sqlx::Error> {
    sqlx::query(tx.sql(
        "UPDATE tenant.tanks SET name = $2, kind = $3, volume_liters = $4, location_id = $5, \
         notes = $6, updated_at = now() WHERE id = $1",
    ))
    .bind(id)
    .bind(name)
    .bind(kind.as_str())
    .bind(volume)
    .bind(location)
    .bind(notes)
    .execute(tx.conn())
    .await?;
    Ok(())
}

pub async fn delete(tx: &mut TenantTx, id: Uuid) -> Result<(), sqlx::Error> {
    sqlx::query(tx.sql("DELETE FROM tenant.tanks WHERE id = $1"))
        .bind(id)
        .execute(tx.conn())
        .await?;
    Ok(())
}

/// Sets the tank's current state.
pub async fn set_state(
    tx: &mut TenantTx,
    id: Uuid,
    volume: Option<f64>,
    ec: Option<f64>,
    ph: Option<f64>,
) -> Result<(), sqlx::Error> {
    sqlx::query(tx.sql(
        "UPDATE tenant.tanks SET current_volume_liters = $2, current_ec_ms = $3, \
         current_ph = $4, updated_at = now() WHERE id = $1",
    ))
    .bind(id)
    .bind(volume)
    .bind(ec)
    .bind(ph)
    .execute(tx.conn())
    .await?;
    Ok(())
}

pub async fn insert_fill(tx: &mut TenantTx, f: &TankFill) -> Result<(), sqlx::Error> {
    sqlx::query(tx.sql(&format!(
        "INSERT INTO tenant.tank_fills ({FILL_COLUMNS}) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"
    )))
    .bind(f.key)
    .bind(f.tank_key)
    .bind(f.fill_type.as_str())
    .bind(f.volume_liters)
    .bind(f.ec_ms)
    .bind(f.ph)
    .bind(f.water_source.map(|s| s.as_str()))
    .bind(f.water_temp_c)
    .bind(&f.notes)
    .bind(f.volume_after_liters)
    .bind(f.filled_at)
    .bind(&f.actor)
    .execute(tx.conn())
    .await?;
    Ok(())
}

/// A tank's fills, newest first, with the number of them.
pub async fn fills(
    tx: &mut TenantTx,
    tank: Uuid,
    page: PageRequest,
) -> Result<(Vec<TankFill>, i64), sqlx::Error> {
    let sql = tx.sql(&format!(
        "SELECT {FILL_COLUMNS}, count(*) OVER () AS matched FROM tenant.tank_fills \
         WHERE tank_id = $1 ORDER BY filled_at DESC, id DESC LIMIT $2 OFFSET $3"
    ));
    let rows = sqlx::query(sql)
        .bind(tank)
        .bind(page.limit)
        .bind(page.skip)
        .fetch_all(tx.conn())
        .await?;
    let total = match rows.first() {
        Some(r) => r.try_get::<i64, _>("matched")?,
        None => {
            sqlx::query_scalar(tx.sql("SELECT count(*) FROM tenant.tank_fills WHERE tank_id = $1"))
                .bind(tank)
                .fetch_one(tx.conn())
                .await?
        }
    };
    let items = rows
        .iter()
        .map(|r| {
            decode_fill(r, "")?
                .ok_or_else(|| sqlx::Error::Decode("a fill row without an id".into()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((items, total))
}

fn decode_maintenance(row: &PgRow) -> Result<MaintenanceEntry, sqlx::Error> {
    let t: String = row.try_get("maintenance_type")?;
    Ok(MaintenanceEntry {
        key: row.try_get("id")?,
        tank_key: row.try_get("tank_id")?,
        maintenance_type: parse(&t, MaintenanceType::parse, "maintenance type")?,
        performed_at: row.try_get("performed_at")?,
        notes: row.try_get("notes")?,
        actor: row.try_get("actor")?,
    })
}

pub async fn insert_maintenance(
    tx: &mut TenantTx,
    m: &MaintenanceEntry,
) -> Result<(), sqlx::Error> {
    sqlx::query(tx.sql(
        "INSERT INTO tenant.tank_maintenance (id, tank_id, maintenance_type, performed_at, \
         notes, actor) VALUES ($1, $2, $3, $4, $5, $6)",
    ))
    .bind(m.key)
    .bind(m.tank_key)
    .bind(m.maintenance_type.as_str())
    .bind(m.performed_at)
    .bind(&m.notes)
    .bind(&m.actor)
    .execute(tx.conn())
    .await?;
    Ok(())
}

/// A tank's maintenance log, newest first, with the number of entries.
pub async fn maintenance(
    tx: &mut TenantTx,
    tank: Uuid,
    page: PageRequest,
) -> Result<(Vec<MaintenanceEntry>, i64), sqlx::Error> {
    let sql = tx.sql(
        "SELECT id, tank_id, maintenance_type, performed_at, notes, actor, \
         count(*) OVER () AS matched FROM tenant.tank_maintenance \
         WHERE tank_id = $1 ORDER BY performed_at DESC, id DESC LIMIT $2 OFFSET $3",
    );
    let rows = sqlx::query(sql)
        .bind(tank)
        .bind(page.limit)
        .bind(page.skip)
        .fetch_all(tx.conn())
        .await?;
    let total = match rows.first() {
        Some(r) => r.try_get::<i64, _>("matched")?,
        None => {
            sqlx::query_scalar(
                tx.sql("SELECT count(*) FROM tenant.tank_maintenance WHERE tank_id = $1"),
            )
            .bind(tank)
            .fetch_one(tx.conn())
            .await?
        }
    };
    Ok((
        rows.iter()
            .map(decode_maintenance)
            .collect::<Result<_, _>>()?,
        total,
    ))
}
