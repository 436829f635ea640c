//! SQL of diary entries and the analysis queue. Tenant tables are written `tenant.<table>` and
//! rendered by `TenantTx::sql`.

use serde_json::Value;
use sqlx::Row;
use sqlx::postgres::PgRow;
use time::{Date, OffsetDateTime};
use uuid::Uuid;

use super::model::{EntryFilter, entry_type_str};
use crate::rules::diary_analysis::AnalysisState;
use crate::tenancy::TenantTx;
use crate::values::page::PageRequest;

/// A stored entry with its analysis columns.
#[derive(Debug, Clone)]
pub struct EntryRow {
    pub id: Uuid,
    pub plant_id: Option<Uuid>,
    pub run_id: Option<Uuid>,
    pub species_key: Option<String>,
    pub entry_type: String,
    pub title: Option<String>,
    pub text: String,
    pub tags: Vec<String>,
    pub measurements: Value,
    pub entry_date: Date,
    pub author_id: Uuid,
    pub author_kind: String,
    pub written_via: String,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
    pub analysis_state: Option<AnalysisState>,
    pub consent_at: Option<OffsetDateTime>,
    pub requested_by: Option<Uuid>,
    pub requested_at: Option<OffsetDateTime>,
    pub lease_token_hash: Option<Vec<u8>>,
    pub lease_expires_at: Option<OffsetDateTime>,
    /// The claimer's label for its worker; meaningful only while the lease runs.
    pub lease_worker_id: Option<String>,
    pub analysis_result: Option<Value>,
}

const ENTRY: &str = "SELECT id, plant_id, run_id, species_key, entry_type, title, text, tags, \
    measurements, entry_date, author_id, author_kind, written_via, created_at, updated_at, \
    analysis_state, analysis_consent_at, analysis_requested_by, analysis_requested_at, \
    lease_token_hash, lease_expires_at, lease_worker_id, analysis_result \
    FROM tenant.diary_entries";

fn entry_of(r: &PgRow) -> Result<EntryRow, sqlx::Error> {
    let state: Option<String> = r.try_get("analysis_state")?;
    Ok(EntryRow {
        id: r.try_get("id")?,
        plant_id: r.try_get("plant_id")?,
        run_id: r.try_get("run_id")?,
        species_key: r.try_get("species_key")?,
        entry_type: r.try_get("entry_type")?,
        title: r.try_get("title")?,
        text: r.try_get("text")?,
        tags: r.try_get("tags")?,
        measurements: r.try_get("measurements")?,
        entry_date: r.try_get("entry_date")?,
        author_id: r.try_get("author_id")?,
        author_kind: r.try_get("author_kind")?,
        written_via: r.try_get("written_via")?,
        created_at: r.try_get("created_at")?,
        updated_at: r.try_get("updated_at")?,
        analysis_state: state.as_deref().and_then(AnalysisState::parse),
        consent_at: r.try_get("analysis_consent_at")?,
        requested_by: r.try_get("analysis_requested_by")?,
        requested_at: r.try_get("analysis_requested_at")?,
        lease_token_hash: r.try_get("lease_token_hash")?,
        lease_expires_at: r.try_get("lease_expires_at")?,
        lease_worker_id: r.try_get("lease_worker_id")?,
        analysis_result: r.try_get("analysis_result")?,
    })
}

/// Whether the run exists; `lock` keeps it from being deleted until the transaction ends (the
/// entry written next refers to it).
pub async fn run_exists(tx: &mut TenantTx, id: Uuid, lock: bool) -> Result<bool, sqlx::Error> {
    let sql = format!(
        "SELECT 1 FROM tenant.planting_runs WHERE id = $1{}",
        if lock { " FOR KEY SHARE" } else { "" }
    );
    let found: Option<i32> = sqlx::query_scalar(tx.sql(&sql))
        .bind(id)
        .fetch_optional(tx.conn())
        .await?;
    Ok(found.is_some())
}

pub async fn insert_entry(tx: &mut TenantTx, e: &EntryRow) -> Result<(), sqlx::Error> {
    sqlx::query(tx.sql(
        "INSERT INTO tenant.diary_entries (id, plant_id, run_id, species_key, entry_type, text, \
         tags, measurements, entry_date, author_id, author_kind, written_via, created_at, \
         updated_at, title) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13, $14)",
    ))
    .bind(e.id)
    .bind(e.plant_id)
    .bind(e.run_id)
    .bind(&e.species_key)
    .bind(&e.entry_type)
    .bind(&e.text)
    .bind(&e.tags)
    .bind(&e.measurements)
    .bind(e.entry_date)
    .bind(e.author_id)
    .bind(&e.author_kind)
    .bind(&e.written_via)
    .bind(e.created_at)
    .bind(&e.title)
    .execute(tx.conn())
    .await?;
    Ok(())
}

/// One entry, locked for the rest of the transaction when `lock`.
pub async fn get_entry(
    tx: &mut TenantTx,
    id: Uuid,
    lock: bool,
) -> Result<Option<EntryRow>, sqlx::Error> {
    let sql = format!(
        "{ENTRY} WHERE id = $1{}",
        if lock { " FOR UPDATE" } else { "" }
    );
    let row = sqlx::query(tx.sql(&sql))
        .bind(id)
        .fetch_optional(tx.conn())
        .await?;
    row.as_ref().map(entry_of).transpose()
}

/// The analysis state a reader sees, in SQL (an in-progress entry whose lease ran out by
/// `$now` reads as `requested`; see `rules::diary_analysis::effective`).
const EFFECTIVE_STATE: &str = "CASE WHEN analysis_state = 'in_progress' \
    AND NOT (lease_expires_at > $1) THEN 'requested' ELSE analysis_state END";

/// Entries newest first (entry date, then when written) and how many match.
pub async fn list_entries(
    tx: &mut TenantTx,
    f: &EntryFilter,
    now: OffsetDateTime,
    page: PageRequest,
) -> Result<(Vec<EntryRow>, i64), sqlx::Error> {
    let filter = format!(
        "WHERE ($2::uuid IS NULL OR plant_id = $2) \
         AND ($3::uuid IS NULL OR run_id = $3) \
         AND ($4::text IS NULL OR species_key = $4) \
         AND ($5::text IS NULL OR entry_type = $5) \
         AND ($6::text IS NULL OR tags @> ARRAY[$6::text]) \
         AND ($7::text IS NULL OR {EFFECTIVE_STATE} = $7) \
         AND ($8::date IS NULL OR entry_date >= $8) \
         AND ($9::date IS NULL OR entry_date <= $9)"
    );
    let state = f.analysis_state.map(AnalysisState::as_str);
    let kind = f.entry_type.map(entry_type_str);
    let rows = sqlx::query(tx.sql(&format!(
        "{ENTRY} {filter} ORDER BY entry_date DESC, created_at DESC, id LIMIT $10 OFFSET $11"
    )))
    .bind(now)
    .bind(f.plant)
    .bind(f.run)
    .bind(&f.species)
    .bind(kind)
    .bind(&f.tag)
    .bind(state)
    .bind(f.from)
    .bind(f.to)
    .bind(page.limit)
    .bind(page.skip)
    .fetch_all(tx.conn())
    .await?;
    let total: i64 = sqlx::query_scalar(tx.sql(&format!(
        "SELECT count(*) FROM tenant.diary_entries {filter}"
    )))
    .bind(now)
    .bind(f.plant)
    .bind(f.run)
    .bind(&f.species)
    .bind(kind)
    .bind(&f.tag)
    .bind(state)
    .bind(f.from)
    .bind(f.to)
    .fetch_one(tx.conn())
    .await?;
    Ok((rows.iter().map(entry_of).collect::<Result<_, _>>()?, total))
}

/// The work queue: requested entries and (with `include_stale`) in-progress ones whose lease
/// ran out by `now`, oldest request first.
pub async fn pending(
    tx: &mut TenantTx,
    now: OffsetDateTime,
    include_stale: bool,
    page: PageRequest,
) -> Result<(Vec<EntryRow>, i64), sqlx::Error> {
    let filter = "WHERE analysis_state = 'requested' \
        OR ($2 AND analysis_state = 'in_progress' AND NOT (lease_expires_at > $1))";
    let rows = sqlx::query(tx.sql(&format!(
        "{ENTRY} {filter} ORDER BY analysis_requested_at, id LIMIT $3 OFFSET $4"
    )))
    .bind(now)
    .bind(include_stale)
    .bind(page.limit)
    .bind(page.skip)
    .fetch_all(tx.conn())
    .await?;
    let total: i64 = sqlx::query_scalar(tx.sql(&format!(
        "SELECT count(*) FROM tenant.diary_entries {filter}"
    )))
    .bind(now)
    .bind(include_stale)
    .fetch_one(tx.conn())
    .await?;
    Ok((rows.iter().map(entry_of).collect::<Result<_, _>>()?, total))
}

pub async fn update_entry(tx: &mut TenantTx, e: &EntryRow) -> Result<(), sqlx::Error> {
    sqlx::query(tx.sql(
        "UPDATE tenant.diary_entries SET text = $2, entry_type = $3, tags = $4, \
         measurements = $5, entry_date = $6, updated_at = $7, title = $8 WHERE id = $1",
    ))
    .bind(e.id)
    .bind(&e.text)
    .bind(&e.entry_type)
    .bind(&e.tags)
    .bind(&e.measurements)
    .bind(e.entry_date)
    .bind(e.updated_at)
    .bind(&e.title)
    .execute(tx.conn())
    .await?;
    Ok(())
}

pub async fn delete_entry(tx: &mut TenantTx, id: Uuid) -> Result<(), sqlx::Error> {
    sqlx::query(tx.sql("DELETE FROM tenant.diary_entries WHERE id = $1"))
        .bind(id)
        .execute(tx.conn())
        .await?;
    Ok(())
}

/// Puts an entry in the work queue (a new request: an earlier result is dropped).
pub async fn mark(
    tx: &mut TenantTx,
    id: Uuid,
    by: Uuid,
    now: OffsetDateTime,
) -> Result<(), sqlx::Error> {
    sqlx::query(tx.sql(
        "UPDATE tenant.diary_entries SET analysis_state = 'requested', analysis_consent_at = $3, \
         analysis_requested_by = $2, analysis_requested_at = $3, lease_token_hash = NULL, \
         lease_holder = NULL, lease_expires_at = NULL, lease_worker_id = NULL, analysis_result = NULL, \
         analysed_at = NULL WHERE id = $1",
    ))
    .bind(id)
    .bind(by)
    .bind(now)
    .execute(tx.conn())
    .await?;
    Ok(())
}

/// Withdraws the consent: the entry leaves the queue and any result is deleted.
pub async fn withdraw(tx: &mut TenantTx, id: Uuid) -> Result<(), sqlx::Error> {
    sqlx::query(tx.sql(
        "UPDATE tenant.diary_entries SET analysis_state = NULL, analysis_consent_at = NULL, \
         analysis_requested_by = NULL, analysis_requested_at = NULL, lease_token_hash = NULL, \
         lease_holder = NULL, lease_expires_at = NULL, lease_worker_id = NULL, analysis_result = NULL, \
         analysed_at = NULL WHERE id = $1",
    ))
    .bind(id)
    .execute(tx.conn())
    .await?;
    Ok(())
}

/// Takes the lease when the entry is claimable at `now` (requested, or in progress with a
/// lapsed lease). One statement: of concurrent claimers exactly one updates the row (the
/// others re-check the condition on the row it wrote and find a valid lease). The new
/// expiry, or `None` when the entry was not claimable. `worker_id` replaces the label of a
/// lapsed lease taken over (none given: none shown).
pub async fn claim(
    tx: &mut TenantTx,
    id: Uuid,
    token_hash: &[u8],
    holder: Uuid,
    worker_id: Option<&str>,
    now: OffsetDateTime,
    expires_at: OffsetDateTime,
) -> Result<Option<OffsetDateTime>, sqlx::Error> {
    sqlx::query_scalar(tx.sql(
        "UPDATE tenant.diary_entries SET analysis_state = 'in_progress', lease_token_hash = $2, \
         lease_holder = $3, lease_expires_at = $5, lease_worker_id = $6 \
         WHERE id = $1 AND (analysis_state = 'requested' \
           OR (analysis_state = 'in_progress' AND NOT (lease_expires_at > $4))) \
         RETURNING lease_expires_at",
    ))
    .bind(id)
    .bind(token_hash)
    .bind(holder)
    .bind(now)
    .bind(expires_at)
    .bind(worker_id)
    .fetch_optional(tx.conn())
    .await
}

/// Stores a result and ends the lease (the caller checked the lease on the locked row).
pub async fn complete(
    tx: &mut TenantTx,
    id: Uuid,
    state: AnalysisState,
    result: &Value,
    now: OffsetDateTime,
) -> Result<(), sqlx::Error> {
    sqlx::query(tx.sql(
        "UPDATE tenant.diary_entries SET analysis_state = $2, analysis_result = $3, \
         analysed_at = $4, lease_token_hash = NULL, lease_holder = NULL, lease_expires_at = NULL, \
         lease_worker_id = NULL WHERE id = $1",
    ))
    .bind(id)
    .bind(state.as_str())
    .bind(result)
    .bind(now)
    .execute(tx.conn())
    .await?;
    Ok(())
}
