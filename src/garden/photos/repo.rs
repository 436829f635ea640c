//! SQL of diary photos. Tenant tables are written `tenant.<table>` and rendered by
//! `TenantTx::sql`.

use std::collections::HashMap;

use serde::Serialize;
use sqlx::Row;
use uuid::Uuid;

use crate::tenancy::TenantTx;

/// One photo of a diary entry as reads show it: what exists, never where it is stored.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PhotoDescriptor {
    pub key: Uuid,
    pub position: i32,
    pub content_type: String,
    pub width: i32,
    pub height: i32,
    pub byte_size: i64,
    /// `pending` (renditions not made yet), `ready`, or `unavailable` (the job gave up).
    pub rendition_status: String,
    /// Rendition sizes (longest edge in px) that exist, ascending.
    pub renditions: Vec<u32>,
}

/// The photos of each entry, in their order; entries without photos are absent.
pub async fn descriptors_for_entries(
    tx: &mut TenantTx,
    entry_ids: &[Uuid],
) -> Result<HashMap<Uuid, Vec<PhotoDescriptor>>, sqlx::Error> {
    let rows = sqlx::query(tx.sql(
        "SELECT id, entry_id, position, content_type, width, height, byte_size, rendition_status, \
         rendition_512_key IS NOT NULL AS has_512, rendition_1280_key IS NOT NULL AS has_1280 \
         FROM tenant.diary_photos WHERE entry_id = ANY($1) ORDER BY entry_id, position",
    ))
    .bind(entry_ids)
    .fetch_all(tx.conn())
    .await?;
    let mut out: HashMap<Uuid, Vec<PhotoDescriptor>> = HashMap::new();
    for r in rows {
        let mut renditions = Vec::new();
        if r.try_get::<bool, _>("has_512")? {
            renditions.push(512);
        }
        if r.try_get::<bool, _>("has_1280")? {
            renditions.push(1280);
        }
        out.entry(r.try_get("entry_id")?)
            .or_default()
            .push(PhotoDescriptor {
                key: r.try_get("id")?,
                position: r.try_get("position")?,
                content_type: r.try_get("content_type")?,
                width: r.try_get("width")?,
                height: r.try_get("height")?,
                byte_size: r.try_get("byte_size")?,
                rendition_status: r.try_get("rendition_status")?,
                renditions,
            });
    }
    Ok(out)
}

/// A photo row as the photo room itself needs it (storage keys included).
#[derive(Debug, Clone)]
pub struct PhotoRow {
    pub id: Uuid,
    pub entry_id: Uuid,
    pub position: i32,
    pub content_type: String,
    pub byte_size: i64,
    pub width: i32,
    pub height: i32,
    pub original_key: String,
    pub rendition_512_key: Option<String>,
    pub rendition_512_bytes: Option<i64>,
    pub rendition_1280_key: Option<String>,
    pub rendition_1280_bytes: Option<i64>,
    pub rendition_status: String,
    pub exif_stripped: bool,
    pub uploaded_by: Uuid,
    pub created_at: time::OffsetDateTime,
}

impl PhotoRow {
    /// The stored key and byte size of a rendition, when it exists.
    pub fn rendition(&self, size: u32) -> Option<(&str, i64)> {
        match size {
            512 => self
                .rendition_512_key
                .as_deref()
                .zip(self.rendition_512_bytes),
            1280 => self
                .rendition_1280_key
                .as_deref()
                .zip(self.rendition_1280_bytes),
            _ => None,
        }
    }
}

const PHOTO_COLUMNS: &str = "id, entry_id, position, content_type, byte_size, width, height, \
    original_key, rendition_512_key, rendition_512_bytes, rendition_1280_key, \
    rendition_1280_bytes, rendition_status, exif_stripped, uploaded_by, created_at";

fn photo_of(r: &sqlx::postgres::PgRow) -> Result<PhotoRow, sqlx::Error> {
    Ok(PhotoRow {
        id: r.try_get("id")?,
        entry_id: r.try_get("entry_id")?,
        position: r.try_get("position")?,
        content_type: r.try_get("content_type")?,
        byte_size: r.try_get("byte_size")?,
        width: r.try_get("width")?,
        height: r.try_get("height")?,
        original_key: r.try_get("original_key")?,
        rendition_512_key: r.try_get("rendition_512_key")?,
        rendition_512_bytes: r.try_get("rendition_512_bytes")?,
        rendition_1280_key: r.try_get("rendition_1280_key")?,
        rendition_1280_bytes: r.try_get("rendition_1280_bytes")?,
        rendition_status: r.try_get("rendition_status")?,
        exif_stripped: r.try_get("exif_stripped")?,
        uploaded_by: r.try_get("uploaded_by")?,
        created_at: r.try_get("created_at")?,
    })
}

/// Whether the diary entry exists; locked (`FOR UPDATE`) when `lock`, so two uploads to one
/// entry take their positions one after the other.
pub async fn entry_exists(tx: &mut TenantTx, entry: Uuid, lock: bool) -> Result<bool, sqlx::Error> {
    let sql = format!(
        "SELECT id FROM tenant.diary_entries WHERE id = $1{}",
        if lock { " FOR UPDATE" } else { "" }
    );
    Ok(sqlx::query(tx.sql(&sql))
        .bind(entry)
        .fetch_optional(tx.conn())
        .await?
        .is_some())
}

/// The author of the diary entry, when it exists; locked (`FOR UPDATE`) when `lock`, as
/// [`entry_exists`].
pub async fn entry_author(
    tx: &mut TenantTx,
    entry: Uuid,
    lock: bool,
) -> Result<Option<Uuid>, sqlx::Error> {
    let sql = format!(
        "SELECT author_id FROM tenant.diary_entries WHERE id = $1{}",
        if lock { " FOR UPDATE" } else { "" }
    );
    sqlx::query_scalar(tx.sql(&sql))
        .bind(entry)
        .fetch_optional(tx.conn())
        .await
}

/// Serialises the quota check of one garden's uploads until the transaction ends (a
/// transaction-level advisory lock keyed by the garden).
pub async fn lock_garden_quota(tx: &mut TenantTx, tenant: Uuid) -> Result<(), sqlx::Error> {
    sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))")
        .bind(format!("photo_quota:{tenant}"))
        .execute(tx.conn())
        .await?;
    Ok(())
}

/// Bytes the garden's photos take (originals and renditions) and how many photos it has.
pub async fn usage(tx: &mut TenantTx) -> Result<(i64, i64), sqlx::Error> {
    let row = sqlx::query(tx.sql(
        "SELECT COALESCE(sum(byte_size + COALESCE(rendition_512_bytes, 0)                 + COALESCE(rendition_1280_bytes, 0)), 0)::bigint AS used, count(*) AS n          FROM tenant.diary_photos",
    ))
    .fetch_one(tx.conn())
    .await?;
    Ok((row.try_get("used")?, row.try_get("n")?))
}

/// How many photos the entry has and the next free position.
pub async fn count_and_next_position(
    tx: &mut TenantTx,
    entry: Uuid,
) -> Result<(i64, i32), sqlx::Error> {
    let row = sqlx::query(tx.sql(
        "SELECT count(*) AS n, COALESCE(max(position) + 1, 0) AS next \
         FROM tenant.diary_photos WHERE entry_id = $1",
    ))
    .bind(entry)
    .fetch_one(tx.conn())
    .await?;
    Ok((row.try_get("n")?, row.try_get("next")?))
}

pub async fn insert_photo(tx: &mut TenantTx, p: &PhotoRow) -> Result<(), sqlx::Error> {
    sqlx::query(tx.sql(
        "INSERT INTO tenant.diary_photos (id, entry_id, position, content_type, byte_size, \
         width, height, original_key, rendition_status, exif_stripped, uploaded_by, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'pending', $9, $10, $11)",
    ))
    .bind(p.id)
    .bind(p.entry_id)
    .bind(p.position)
    .bind(&p.content_type)
    .bind(p.byte_size)
    .bind(p.width)
    .bind(p.height)
    .bind(&p.original_key)
    .bind(p.exif_stripped)
    .bind(p.uploaded_by)
    .bind(p.created_at)
    .execute(tx.conn())
    .await?;
    Ok(())
}

/// The photos of an entry in their order.
pub async fn photos_of_entry(tx: &mut TenantTx, entry: Uuid) -> Result<Vec<PhotoRow>, sqlx::Error> {
    let sql = format!(
        "SELECT {PHOTO_COLUMNS} FROM tenant.diary_photos WHERE entry_id = $1 ORDER BY position"
    );
    let rows = sqlx::query(tx.sql(&sql))
        .bind(entry)
        .fetch_all(tx.conn())
        .await?;
    rows.iter().map(photo_of).collect()
}

pub async fn photo(tx: &mut TenantTx, id: Uuid) -> Result<Option<PhotoRow>, sqlx::Error> {
    let sql = format!("SELECT {PHOTO_COLUMNS} FROM tenant.diary_photos WHERE id = $1");
    let row = sqlx::query(tx.sql(&sql))
        .bind(id)
        .fetch_optional(tx.conn())
        .await?;
    row.as_ref().map(photo_of).transpose()
}

/// Deletes a photo of an entry; whether it existed.
pub async fn delete_photo(tx: &mut TenantTx, entry: Uuid, id: Uuid) -> Result<bool, sqlx::Error> {
    let done =
        sqlx::query(tx.sql("DELETE FROM tenant.diary_photos WHERE id = $1 AND entry_id = $2"))
            .bind(id)
            .bind(entry)
            .execute(tx.conn())
            .await?;
    Ok(done.rows_affected() == 1)
}

/// Records the renditions of a photo (ready); false when the photo is gone.
pub async fn set_renditions(
    tx: &mut TenantTx,
    id: Uuid,
    r512: (&str, i64),
    r1280: (&str, i64),
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query(tx.sql(
        "UPDATE tenant.diary_photos SET rendition_512_key = $2, rendition_512_bytes = $3, \
         rendition_1280_key = $4, rendition_1280_bytes = $5, rendition_status = 'ready' \
         WHERE id = $1",
    ))
    .bind(id)
    .bind(r512.0)
    .bind(r512.1)
    .bind(r1280.0)
    .bind(r1280.1)
    .execute(tx.conn())
    .await?;
    Ok(done.rows_affected() == 1)
}

/// The rendition job gave up on this photo.
pub async fn mark_unavailable(tx: &mut TenantTx, id: Uuid) -> Result<(), sqlx::Error> {
    sqlx::query(tx.sql(
        "UPDATE tenant.diary_photos SET rendition_status = 'unavailable' \
         WHERE id = $1 AND rendition_status = 'pending'",
    ))
    .bind(id)
    .execute(tx.conn())
    .await?;
    Ok(())
}

// ---------- the rendition job queue (platform schema) ----------

/// A claimed job.
#[derive(Debug, Clone)]
pub struct Job {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub photo_id: Uuid,
    /// Attempts including this one; also the claim's token (a finish checks it).
    pub attempts: i32,
}

pub async fn insert_job(
    db: &sqlx::PgPool,
    tenant: Uuid,
    photo: Uuid,
    storage: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO platform.photo_rendition_jobs (id, tenant_id, photo_id, storage) \
         VALUES ($1, $2, $3, $4)",
    )
    .bind(Uuid::now_v7())
    .bind(tenant)
    .bind(photo)
    .bind(storage)
    .execute(db)
    .await?;
    Ok(())
}

/// Claims one due job of this storage: a job no one holds (never claimed, or its lease ran
/// out), oldest due first. Concurrent claimers skip each other's locked rows, so no job is
/// handed to two workers; the lease keeps it theirs after the statement.
pub async fn claim_job(
    db: &sqlx::PgPool,
    storage: &str,
    lease_seconds: i64,
) -> Result<Option<Job>, sqlx::Error> {
    let row = sqlx::query(
        "UPDATE platform.photo_rendition_jobs j \
         SET locked_until = now() + make_interval(secs => $2), attempts = j.attempts + 1 \
         WHERE j.id = (SELECT id FROM platform.photo_rendition_jobs \
             WHERE storage = $1 AND run_after <= now() \
               AND (locked_until IS NULL OR locked_until < now()) \
             ORDER BY run_after, id LIMIT 1 FOR UPDATE SKIP LOCKED) \
         RETURNING j.id, j.tenant_id, j.photo_id, j.attempts",
    )
    .bind(storage)
    .bind(lease_seconds as f64)
    .fetch_optional(db)
    .await?;
    row.map(|r| {
        Ok(Job {
            id: r.try_get("id")?,
            tenant_id: r.try_get("tenant_id")?,
            photo_id: r.try_get("photo_id")?,
            attempts: r.try_get("attempts")?,
        })
    })
    .transpose()
}

/// The job is done (or moot): removed, if the claim is still ours.
pub async fn finish_job(db: &sqlx::PgPool, job: &Job) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM platform.photo_rendition_jobs WHERE id = $1 AND attempts = $2")
        .bind(job.id)
        .bind(job.attempts)
        .execute(db)
        .await?;
    Ok(())
}

/// The attempt failed: free the job for a retry after `retry_in_seconds`, or park it for
/// good (`None`) with the error kept.
pub async fn fail_job(
    db: &sqlx::PgPool,
    job: &Job,
    error: &str,
    retry_in_seconds: Option<i64>,
) -> Result<(), sqlx::Error> {
    let error: String = error.chars().take(1000).collect();
    sqlx::query(
        "UPDATE platform.photo_rendition_jobs SET locked_until = NULL, last_error = $3, \
         run_after = CASE WHEN $4::float8 IS NULL THEN 'infinity'::timestamptz \
                          ELSE now() + make_interval(secs => $4::float8) END \
         WHERE id = $1 AND attempts = $2",
    )
    .bind(job.id)
    .bind(job.attempts)
    .bind(error)
    .bind(retry_in_seconds.map(|s| s as f64))
    .execute(db)
    .await?;
    Ok(())
}

/// A deleted photo's job goes with it.
pub async fn delete_job_of(
    db: &sqlx::PgPool,
    tenant: Uuid,
    photo: Uuid,
) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM platform.photo_rendition_jobs WHERE tenant_id = $1 AND photo_id = $2")
        .bind(tenant)
        .bind(photo)
        .execute(db)
        .await?;
    Ok(())
}
