//! SQL of import jobs (`platform.catalog_imports`).

use sqlx::postgres::PgRow;
use sqlx::{PgConnection, Row};
use uuid::Uuid;

use super::model::{ImportJob, ImportStatus};
use crate::values::page::PageRequest;

const COLUMNS: &str =
    "id, kind, status, row_count, errors, preview, summary, created_at, confirmed_at";

fn from_json<T: serde::de::DeserializeOwned>(v: serde_json::Value) -> Result<T, sqlx::Error> {
    serde_json::from_value(v).map_err(|e| sqlx::Error::Decode(e.into()))
}

fn to_json<T: serde::Serialize>(v: &T) -> serde_json::Value {
    serde_json::to_value(v).unwrap_or_default()
}

fn decode(row: &PgRow) -> Result<ImportJob, sqlx::Error> {
    let json = |name: &str| -> Result<serde_json::Value, sqlx::Error> { row.try_get(name) };
    let status: String = row.try_get("status")?;
    let rows: i32 = row.try_get("row_count")?;
    let errors: Vec<super::model::RowError> = from_json(json("errors")?)?;
    let summary: Option<serde_json::Value> = row.try_get("summary")?;
    Ok(ImportJob {
        key: row.try_get("id")?,
        kind: row.try_get("kind")?,
        status: if status == "confirmed" {
            ImportStatus::Confirmed
        } else {
            ImportStatus::Previewed
        },
        rows: usize::try_from(rows).unwrap_or(0),
        valid: errors.is_empty(),
        errors,
        preview: from_json(json("preview")?)?,
        summary: summary.map(from_json).transpose()?,
        created_at: row.try_get("created_at")?,
        confirmed_at: row.try_get("confirmed_at")?,
    })
}

pub async fn insert(
    db: &mut PgConnection,
    job: &ImportJob,
    csv: &str,
) -> Result<ImportJob, sqlx::Error> {
    let sql = sqlx::AssertSqlSafe(format!(
        "INSERT INTO catalog_imports (id, kind, status, csv, row_count, errors, preview) \
         VALUES ($1, $2, 'previewed', $3, $4, $5, $6) RETURNING {COLUMNS}"
    ));
    let row = sqlx::query(sql)
        .bind(job.key)
        .bind(&job.kind)
        .bind(csv)
        .bind(i32::try_from(job.rows).unwrap_or(i32::MAX))
        .bind(to_json(&job.errors))
        .bind(to_json(&job.preview))
        .fetch_one(db)
        .await?;
    decode(&row)
}

/// The job and its file, locked for the rest of the transaction.
pub async fn get_for_update(
    db: &mut PgConnection,
    id: Uuid,
) -> Result<Option<(ImportJob, String)>, sqlx::Error> {
    let sql = sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS}, csv FROM catalog_imports WHERE id = $1 FOR UPDATE"
    ));
    let row = sqlx::query(sql).bind(id).fetch_optional(db).await?;
    row.map(|r| Ok((decode(&r)?, r.try_get("csv")?)))
        .transpose()
}

pub async fn get(db: &mut PgConnection, id: Uuid) -> Result<Option<ImportJob>, sqlx::Error> {
    let sql = sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM catalog_imports WHERE id = $1"
    ));
    let row = sqlx::query(sql).bind(id).fetch_optional(db).await?;
    row.as_ref().map(decode).transpose()
}

pub async fn confirm(
    db: &mut PgConnection,
    id: Uuid,
    summary: &serde_json::Value,
) -> Result<ImportJob, sqlx::Error> {
    let sql = sqlx::AssertSqlSafe(format!(
        "UPDATE catalog_imports SET status = 'confirmed', summary = $2, confirmed_at = now() \
         WHERE id = $1 RETURNING {COLUMNS}"
    ));
    let row = sqlx::query(sql)
        .bind(id)
        .bind(summary)
        .fetch_one(db)
        .await?;
    decode(&row)
}

pub async fn count(db: &mut PgConnection) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar("SELECT count(*) FROM catalog_imports")
        .fetch_one(db)
        .await
}

pub async fn list(db: &mut PgConnection, page: PageRequest) -> Result<Vec<ImportJob>, sqlx::Error> {
    let sql = sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM catalog_imports ORDER BY created_at DESC, id LIMIT $1 OFFSET $2"
    ));
    let rows = sqlx::query(sql)
        .bind(page.limit)
        .bind(page.skip)
        .fetch_all(db)
        .await?;
    rows.iter().map(decode).collect()
}
