//! SQL of the garden's own substrates, its batches and their readings. Tenant tables are named
//! `tenant.<table>`; `TenantTx::sql` renders the placeholder into the tenant's schema.

use sqlx::Row;
use sqlx::postgres::PgRow;
use time::Date;
use uuid::Uuid;

use super::model::{
    NewBatch, Reading, StoredProps, Substrate, SubstrateBatch, SubstrateScope, TENANT_PREFIX,
};
use crate::tenancy::TenantTx;
use crate::values::json::Patch;
use crate::values::page::PageRequest;

const SUB_COLUMNS: &str = "id, name, type, is_mix, properties";

fn decode_substrate(row: &PgRow) -> Result<Substrate, sqlx::Error> {
    let id: Uuid = row.try_get("id")?;
    let props: serde_json::Value = row.try_get("properties")?;
    let mut stored: StoredProps = serde_json::from_value(props)
        .map_err(|e| sqlx::Error::Decode(format!("substrate properties: {e}").into()))?;
    stored.props.substrate_type = row.try_get("type")?;
    Ok(Substrate {
        key: format!("{TENANT_PREFIX}{id}"),
        scope: SubstrateScope::Tenant,
        name: row.try_get("name")?,
        name_de: stored.name_de,
        brand: stored.brand,
        is_mix: row.try_get("is_mix")?,
        props: stored.props,
        mix_components: stored.mix_components,
        description: stored.description,
    })
}

const SUB_WHERE: &str = "($1::text IS NULL OR lower(name) LIKE '%' || $1 || '%' \
     OR lower(properties->>'name_de') LIKE '%' || $1 || '%' \
     OR lower(properties->>'brand') LIKE '%' || $1 || '%') AND ($2::text IS NULL OR type = $2)";

/// `q` as a LIKE-safe, lower-case fragment.
fn like_fragment(q: Option<&str>) -> Option<String> {
    q.map(|q| {
        q.to_lowercase()
            .replace('\\', "\\\\")
            .replace('%', "\\%")
            .replace('_', "\\_")
    })
}

pub async fn count_substrates(
    tx: &mut TenantTx,
    q: Option<&str>,
    substrate_type: Option<&str>,
) -> Result<i64, sqlx::Error> {
    let sql = tx.sql(&format!(
        "SELECT count(*) FROM tenant.substrates WHERE {SUB_WHERE}"
    ));
    sqlx::query_scalar(sql)
        .bind(like_fragment(q))
        .bind(substrate_type)
        .fetch_one(tx.conn())
        .await
}

pub async fn list_substrates(
    tx: &mut TenantTx,
    q: Option<&str>,
    substrate_type: Option<&str>,
    page: PageRequest,
) -> Result<Vec<Substrate>, sqlx::Error> {
    let sql = tx.sql(&format!(
        "SELECT {SUB_COLUMNS} FROM tenant.substrates WHERE {SUB_WHERE} \
         ORDER BY lower(name), id LIMIT $3 OFFSET $4"
    ));
    let rows = sqlx::query(sql)
        .bind(like_fragment(q))
        .bind(substrate_type)
        .bind(page.limit)
        .bind(page.skip)
        .fetch_all(tx.conn())
        .await?;
    rows.iter().map(decode_substrate).collect()
}

pub async fn get_substrate(tx: &mut TenantTx, id: Uuid) -> Result<Option<Substrate>, sqlx::Error> {
    let sql = tx.sql(&format!(
        "SELECT {SUB_COLUMNS} FROM tenant.substrates WHERE id = $1"
    ));
    let row = sqlx::query(sql).bind(id).fetch_optional(tx.conn()).await?;
    row.as_ref().map(decode_substrate).transpose()
}

/// Names of the garden's substrates by id.
pub async fn substrate_names(
    tx: &mut TenantTx,
    ids: &[Uuid],
) -> Result<Vec<(Uuid, String)>, sqlx::Error> {
    let rows = sqlx::query(tx.sql("SELECT id, name FROM tenant.substrates WHERE id = ANY($1)"))
        .bind(ids)
        .fetch_all(tx.conn())
        .await?;
    rows.iter()
        .map(|r| Ok((r.try_get("id")?, r.try_get("name")?)))
        .collect()
}

/// `None` when the name is taken.
pub async fn insert_substrate(
    tx: &mut TenantTx,
    name: &str,
    is_mix: bool,
    stored: &StoredProps,
) -> Result<Option<Substrate>, sqlx::Error> {
    let props = serde_json::to_value(stored)
        .map_err(|e| sqlx::Error::Encode(format!("substrate properties: {e}").into()))?;
    let sql = tx.sql(&format!(
        "INSERT INTO tenant.substrates (id, name, type, is_mix, properties) VALUES ($1, $2, $3, $4, $5) \
         ON CONFLICT DO NOTHING RETURNING {SUB_COLUMNS}"
    ));
    let row = sqlx::query(sql)
        .bind(Uuid::now_v7())
        .bind(name)
        .bind(&stored.props.substrate_type)
        .bind(is_mix)
        .bind(props)
        .fetch_optional(tx.conn())
        .await?;
    row.as_ref().map(decode_substrate).transpose()
}

// ---------------------------------------------------------------------------------------------
// Batches

const BATCH_COLUMNS: &str = "b.id, b.substrate_key, b.label, b.volume_liters::float8 AS volume_liters, \
     b.mixed_on, b.cycles_used, b.ph_current::float8 AS ph_current, \
     b.ec_current_ms::float8 AS ec_current_ms, b.substrate_type, b.reusable, b.max_reuse_cycles, \
     b.ec_base_ms::float8 AS ec_base_ms, b.created_at, b.updated_at, \
     (SELECT count(*) FROM tenant.plants p WHERE p.substrate_batch_id = b.id AND p.archived_at IS NULL) \
       AS live_plants";

fn decode_batch(row: &PgRow) -> Result<SubstrateBatch, sqlx::Error> {
    Ok(SubstrateBatch {
        key: row.try_get("id")?,
        substrate_key: row.try_get("substrate_key")?,
        substrate_name: None,
        substrate_type: row.try_get("substrate_type")?,
        reusable: row.try_get("reusable")?,
        max_reuse_cycles: row.try_get("max_reuse_cycles")?,
        ec_base_ms: row.try_get("ec_base_ms")?,
        label: row.try_get("label")?,
        volume_liters: row.try_get("volume_liters")?,
        mixed_on: row.try_get("mixed_on")?,
        cycles_used: row.try_get("cycles_used")?,
        ph_current: row.try_get("ph_current")?,
        ec_current_ms: row.try_get("ec_current_ms")?,
        live_plants: row.try_get("live_plants")?,
        ph_history: None,
        ec_history: None,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

pub async fn count_batches(
    tx: &mut TenantTx,
    substrate_key: Option<&str>,
) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        tx.sql("SELECT count(*) FROM tenant.substrate_batches b WHERE ($1::text IS NULL OR b.substrate_key = $1)"),
    )
    .bind(substrate_key)
    .fetch_one(tx.conn())
    .await
}

pub async fn list_batches(
    tx: &mut TenantTx,
    substrate_key: Option<&str>,
    page: PageRequest,
) -> Result<Vec<SubstrateBatch>, sqlx::Error> {
    let sql = tx.sql(&format!(
        "SELECT {BATCH_COLUMNS} FROM tenant.substrate_batches b \
         WHERE ($1::text IS NULL OR b.substrate_key = $1) \
         ORDER BY b.created_at, b.id LIMIT $2 OFFSET $3"
    ));
    let rows = sqlx::query(sql)
        .bind(substrate_key)
        .bind(page.limit)
        .bind(page.skip)
        .fetch_all(tx.conn())
        .await?;
    rows.iter().map(decode_batch).collect()
}

pub async fn get_batch(tx: &mut TenantTx, id: Uuid) -> Result<Option<SubstrateBatch>, sqlx::Error> {
    let sql = tx.sql(&format!(
        "SELECT {BATCH_COLUMNS} FROM tenant.substrate_batches b WHERE b.id = $1"
    ));
    let row = sqlx::query(sql).bind(id).fetch_optional(tx.conn()).await?;
    row.as_ref().map(decode_batch).transpose()
}

/// Locks the batch row until the transaction ends; `false` when it does not exist.
pub async fn lock_batch(tx: &mut TenantTx, id: Uuid) -> Result<bool, sqlx::Error> {
    let found: Option<Uuid> = sqlx::query_scalar(
        tx.sql("SELECT id FROM tenant.substrate_batches WHERE id = $1 FOR UPDATE"),
    )
    .bind(id)
    .fetch_optional(tx.conn())
    .await?;
    Ok(found.is_some())
}

/// The reuse facts the batch was made with.
pub struct BatchReuseFacts {
    pub substrate_type: String,
    pub reusable: bool,
    pub max_reuse_cycles: i32,
    pub ec_base_ms: f64,
}

/// `None` when the label is taken.
pub async fn insert_batch(
    tx: &mut TenantTx,
    new: &NewBatch,
    facts: &BatchReuseFacts,
) -> Result<Option<Uuid>, sqlx::Error> {
    let id: Option<Uuid> = sqlx::query_scalar(tx.sql(
        "INSERT INTO tenant.substrate_batches (id, substrate_key, label, volume_liters, mixed_on, \
         cycles_used, ph_current, ec_current_ms, substrate_type, reusable, max_reuse_cycles, \
         ec_base_ms) VALUES ($1, $2, $3, $4::float8, $5, $6, $7::float8, $8::float8, $9, $10, \
         $11, $12::float8) ON CONFLICT DO NOTHING RETURNING id",
    ))
    .bind(Uuid::now_v7())
    .bind(&new.substrate_key)
    .bind(&new.label)
    .bind(new.volume_liters)
    .bind(new.mixed_on)
    .bind(i32::try_from(new.cycles_used).unwrap_or(0))
    .bind(new.ph_current)
    .bind(new.ec_current_ms)
    .bind(&facts.substrate_type)
    .bind(facts.reusable)
    .bind(facts.max_reuse_cycles)
    .bind(facts.ec_base_ms)
    .fetch_optional(tx.conn())
    .await?;
    if let Some(id) = id
        && (new.ph_current.is_some() || new.ec_current_ms.is_some())
    {
        add_reading(tx, id, new.ph_current, new.ec_current_ms).await?;
    }
    Ok(id)
}

pub async fn label_taken(
    tx: &mut TenantTx,
    label: &str,
    except: Uuid,
) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar(
        tx.sql("SELECT EXISTS (SELECT 1 FROM tenant.substrate_batches WHERE lower(label) = lower($1) AND id <> $2)"),
    )
    .bind(label)
    .bind(except)
    .fetch_one(tx.conn())
    .await
}

pub async fn add_reading(
    tx: &mut TenantTx,
    batch: Uuid,
    ph: Option<f64>,
    ec: Option<f64>,
) -> Result<(), sqlx::Error> {
    sqlx::query(tx.sql(
        "INSERT INTO tenant.substrate_batch_readings (id, batch_id, ph, ec_ms) \
         VALUES ($1, $2, $3::float8, $4::float8)",
    ))
    .bind(Uuid::now_v7())
    .bind(batch)
    .bind(ph)
    .bind(ec)
    .execute(tx.conn())
    .await?;
    Ok(())
}

/// (pH readings, EC readings), oldest first.
pub async fn readings(
    tx: &mut TenantTx,
    batch: Uuid,
) -> Result<(Vec<Reading>, Vec<Reading>), sqlx::Error> {
    let rows = sqlx::query(tx.sql(
        "SELECT ph::float8 AS ph, ec_ms::float8 AS ec_ms, measured_at \
         FROM tenant.substrate_batch_readings WHERE batch_id = $1 ORDER BY measured_at, id",
    ))
    .bind(batch)
    .fetch_all(tx.conn())
    .await?;
    let mut ph = Vec::new();
    let mut ec = Vec::new();
    for r in &rows {
        let at = r.try_get("measured_at")?;
        if let Some(v) = r.try_get::<Option<f64>, _>("ph")? {
            ph.push(Reading {
                value: v,
                measured_at: at,
            });
        }
        if let Some(v) = r.try_get::<Option<f64>, _>("ec_ms")? {
            ec.push(Reading {
                value: v,
                measured_at: at,
            });
        }
    }
    Ok((ph, ec))
}

#[allow(clippy::too_many_arguments)]
pub async fn update_batch(
    tx: &mut TenantTx,
    current: &SubstrateBatch,
    label: &str,
    volume: &Patch<f64>,
    mixed_on: &Patch<Date>,
    ph: Option<f64>,
    ec: Option<f64>,
) -> Result<(), sqlx::Error> {
    let volume = match volume {
        Patch::Keep => current.volume_liters,
        Patch::Clear => None,
        Patch::Set(v) => Some(*v),
    };
    let mixed_on = match mixed_on {
        Patch::Keep => current.mixed_on,
        Patch::Clear => None,
        Patch::Set(d) => Some(*d),
    };
    sqlx::query(
        tx.sql("UPDATE tenant.substrate_batches SET label = $2, volume_liters = $3::float8, mixed_on = $4, \
         ph_current = COALESCE($5::float8, ph_current), \
         ec_current_ms = COALESCE($6::float8, ec_current_ms), updated_at = now() WHERE id = $1"),
    )
    .bind(current.key)
    .bind(label)
    .bind(volume)
    .bind(mixed_on)
    .bind(ph)
    .bind(ec)
    .execute(tx.conn())
    .await?;
    if ph.is_some() || ec.is_some() {
        add_reading(tx, current.key, ph, ec).await?;
    }
    Ok(())
}

pub async fn set_cycles(tx: &mut TenantTx, id: Uuid, cycles: i32) -> Result<(), sqlx::Error> {
    sqlx::query(tx.sql(
        "UPDATE tenant.substrate_batches SET cycles_used = $2, updated_at = now() WHERE id = $1",
    ))
    .bind(id)
    .bind(cycles)
    .execute(tx.conn())
    .await?;
    Ok(())
}

/// What refers to a batch: (live plants, archived plants, planting runs, codes of the slots it
/// fills).
pub struct BatchUsers {
    pub live_plants: i64,
    pub archived_plants: i64,
    pub runs: i64,
    pub slot_codes: Vec<String>,
}

pub async fn batch_users(tx: &mut TenantTx, id: Uuid) -> Result<BatchUsers, sqlx::Error> {
    let row = sqlx::query(tx.sql(
        "SELECT (SELECT count(*) FROM tenant.plants WHERE substrate_batch_id = $1 \
                 AND archived_at IS NULL) AS live, \
                (SELECT count(*) FROM tenant.plants WHERE substrate_batch_id = $1 \
                 AND archived_at IS NOT NULL) AS archived, \
                (SELECT count(*) FROM tenant.planting_runs WHERE substrate_batch_id = $1) AS runs, \
                ARRAY(SELECT code FROM tenant.slots WHERE substrate_batch_id = $1 ORDER BY code) \
                  AS slot_codes",
    ))
    .bind(id)
    .fetch_one(tx.conn())
    .await?;
    Ok(BatchUsers {
        live_plants: row.try_get("live")?,
        archived_plants: row.try_get("archived")?,
        runs: row.try_get("runs")?,
        slot_codes: row.try_get("slot_codes")?,
    })
}

/// Deletes a batch (its readings go with it).
pub async fn delete_batch(tx: &mut TenantTx, id: Uuid) -> Result<(), sqlx::Error> {
    sqlx::query(tx.sql("DELETE FROM tenant.substrate_batches WHERE id = $1"))
        .bind(id)
        .execute(tx.conn())
        .await?;
    Ok(())
}

/// Locks one of the garden's own substrates until the transaction ends; `false` when unknown.
pub async fn lock_substrate(tx: &mut TenantTx, id: Uuid) -> Result<bool, sqlx::Error> {
    let found: Option<Uuid> =
        sqlx::query_scalar(tx.sql("SELECT id FROM tenant.substrates WHERE id = $1 FOR UPDATE"))
            .bind(id)
            .fetch_optional(tx.conn())
            .await?;
    Ok(found.is_some())
}

/// Holds one of the garden's own substrates against a concurrent delete until the transaction
/// ends (a batch being made of it); a delete in flight is waited for, then the row is gone.
pub async fn share_substrate(tx: &mut TenantTx, id: Uuid) -> Result<(), sqlx::Error> {
    sqlx::query(tx.sql("SELECT id FROM tenant.substrates WHERE id = $1 FOR KEY SHARE"))
        .bind(id)
        .fetch_optional(tx.conn())
        .await?;
    Ok(())
}

/// What refers to one of the garden's substrates by its key: (batches, plants, names of the
/// mixes that have it as a component).
pub async fn substrate_users(
    tx: &mut TenantTx,
    key: &str,
) -> Result<(i64, i64, Vec<String>), sqlx::Error> {
    let row = sqlx::query(tx.sql(
        "SELECT (SELECT count(*) FROM tenant.substrate_batches WHERE substrate_key = $1) AS batches, \
                (SELECT count(*) FROM tenant.plants WHERE substrate_key = $1) AS plants, \
                ARRAY(SELECT name FROM tenant.substrates WHERE is_mix AND properties->'mix_components' \
                      @> jsonb_build_array(jsonb_build_object('substrate_key', $1::text)) \
                      ORDER BY lower(name)) AS mixes",
    ))
    .bind(key)
    .fetch_one(tx.conn())
    .await?;
    Ok((
        row.try_get("batches")?,
        row.try_get("plants")?,
        row.try_get("mixes")?,
    ))
}

pub async fn delete_substrate(tx: &mut TenantTx, id: Uuid) -> Result<(), sqlx::Error> {
    sqlx::query(tx.sql("DELETE FROM tenant.substrates WHERE id = $1"))
        .bind(id)
        .execute(tx.conn())
        .await?;
    Ok(())
}

/// Writes the name, type-independent texts and properties of one of the garden's substrates.
/// `false` when the name is taken by another of its substrates.
pub async fn update_substrate(
    tx: &mut TenantTx,
    id: Uuid,
    name: &str,
    stored: &StoredProps,
) -> Result<bool, sqlx::Error> {
    let taken: bool = sqlx::query_scalar(tx.sql(
        "SELECT EXISTS (SELECT 1 FROM tenant.substrates WHERE lower(name) = lower($1) AND id <> $2)",
    ))
    .bind(name)
    .bind(id)
    .fetch_one(tx.conn())
    .await?;
    if taken {
        return Ok(false);
    }
    let props = serde_json::to_value(stored)
        .map_err(|e| sqlx::Error::Encode(format!("substrate properties: {e}").into()))?;
    sqlx::query(tx.sql(
        "UPDATE tenant.substrates SET name = $2, properties = $3, updated_at = now() WHERE id = $1",
    ))
    .bind(id)
    .bind(name)
    .bind(props)
    .execute(tx.conn())
    .await?;
    Ok(true)
}
