//! SQL of the garden's own fertilisers (`tenant.fertilizers`: name + the checked document).

use serde_json::{Map, Value};
use sqlx::Row;
use sqlx::postgres::PgRow;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use uuid::Uuid;

use super::model::{GardenFertilizer, TENANT_PREFIX};
use crate::tenancy::TenantTx;

const COLUMNS: &str = "id, doc, created_at, updated_at";

fn decode(row: &PgRow) -> Result<GardenFertilizer, sqlx::Error> {
    let id: Uuid = row.try_get("id")?;
    let doc: Value = row.try_get("doc")?;
    let created: OffsetDateTime = row.try_get("created_at")?;
    let updated: OffsetDateTime = row.try_get("updated_at")?;
    let mut m = match doc {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    m.insert("key".into(), Value::from(format!("{TENANT_PREFIX}{id}")));
    m.insert("owner".into(), Value::from("garden"));
    m.insert(
        "created_at".into(),
        Value::from(created.format(&Rfc3339).unwrap_or_default()),
    );
    m.insert(
        "updated_at".into(),
        Value::from(updated.format(&Rfc3339).unwrap_or_default()),
    );
    Ok(GardenFertilizer(Value::Object(m)))
}

/// `q` as a LIKE-safe, lower-case fragment.
fn like(q: Option<&str>) -> Option<String> {
    q.map(|q| {
        q.to_lowercase()
            .replace('\\', "\\\\")
            .replace('%', "\\%")
            .replace('_', "\\_")
    })
}

const WHERE: &str = "($1::text IS NULL OR lower(name) LIKE '%' || $1 || '%' \
     OR lower(doc->>'brand') LIKE '%' || $1 || '%') \
     AND ($2::text IS NULL OR doc->>'fertilizer_type' = $2) \
     AND ($3::text IS NULL OR doc->>'form' = $3) \
     AND ($4::boolean IS NULL OR coalesce((doc->>'is_organic')::boolean, false) = $4)";

/// Filters of a listing.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub q: Option<String>,
    pub fertilizer_type: Option<String>,
    pub form: Option<String>,
    pub is_organic: Option<bool>,
}

pub async fn count(tx: &mut TenantTx, f: &Filter) -> Result<i64, sqlx::Error> {
    let sql = tx.sql(&format!(
        "SELECT count(*) FROM tenant.fertilizers WHERE {WHERE}"
    ));
    sqlx::query_scalar(sql)
        .bind(like(f.q.as_deref()))
        .bind(&f.fertilizer_type)
        .bind(&f.form)
        .bind(f.is_organic)
        .fetch_one(tx.conn())
        .await
}

pub async fn list(
    tx: &mut TenantTx,
    f: &Filter,
    skip: i64,
    limit: i64,
) -> Result<Vec<GardenFertilizer>, sqlx::Error> {
    let sql = tx.sql(&format!(
        "SELECT {COLUMNS} FROM tenant.fertilizers WHERE {WHERE} \
         ORDER BY lower(name), id LIMIT $5 OFFSET $6"
    ));
    let rows = sqlx::query(sql)
        .bind(like(f.q.as_deref()))
        .bind(&f.fertilizer_type)
        .bind(&f.form)
        .bind(f.is_organic)
        .bind(limit)
        .bind(skip)
        .fetch_all(tx.conn())
        .await?;
    rows.iter().map(decode).collect()
}

pub async fn get(tx: &mut TenantTx, id: Uuid) -> Result<Option<GardenFertilizer>, sqlx::Error> {
    let sql = tx.sql(&format!(
        "SELECT {COLUMNS} FROM tenant.fertilizers WHERE id = $1"
    ));
    let row = sqlx::query(sql).bind(id).fetch_optional(tx.conn()).await?;
    row.as_ref().map(decode).transpose()
}

pub async fn get_for_update(
    tx: &mut TenantTx,
    id: Uuid,
) -> Result<Option<GardenFertilizer>, sqlx::Error> {
    let sql = tx.sql(&format!(
        "SELECT {COLUMNS} FROM tenant.fertilizers WHERE id = $1 FOR UPDATE"
    ));
    let row = sqlx::query(sql).bind(id).fetch_optional(tx.conn()).await?;
    row.as_ref().map(decode).transpose()
}

/// `None` when the name is taken.
pub async fn insert(
    tx: &mut TenantTx,
    name: &str,
    doc: &Map<String, Value>,
) -> Result<Option<GardenFertilizer>, sqlx::Error> {
    let sql = tx.sql(&format!(
        "INSERT INTO tenant.fertilizers (id, name, doc) VALUES ($1, $2, $3) \
         ON CONFLICT DO NOTHING RETURNING {COLUMNS}"
    ));
    let row = sqlx::query(sql)
        .bind(Uuid::now_v7())
        .bind(name)
        .bind(Value::Object(doc.clone()))
        .fetch_optional(tx.conn())
        .await?;
    row.as_ref().map(decode).transpose()
}

/// `None` when the new name is taken by another product.
pub async fn update(
    tx: &mut TenantTx,
    id: Uuid,
    name: &str,
    doc: &Map<String, Value>,
) -> Result<Option<GardenFertilizer>, sqlx::Error> {
    let sql = tx.sql(
        "SELECT EXISTS (SELECT 1 FROM tenant.fertilizers WHERE lower(name) = lower($1) AND id <> $2)",
    );
    let taken: bool = sqlx::query_scalar(sql)
        .bind(name)
        .bind(id)
        .fetch_one(tx.conn())
        .await?;
    if taken {
        return Ok(None);
    }
    let sql = tx.sql(&format!(
        "UPDATE tenant.fertilizers SET name = $2, doc = $3, updated_at = now() WHERE id = $1 \
         RETURNING {COLUMNS}"
    ));
    let row = sqlx::query(sql)
        .bind(id)
        .bind(name)
        .bind(Value::Object(doc.clone()))
        .fetch_optional(tx.conn())
        .await?;
    row.as_ref().map(decode).transpose()
}

pub async fn delete(tx: &mut TenantTx, id: Uuid) -> Result<bool, sqlx::Error> {
    let sql = tx.sql("DELETE FROM tenant.fertilizers WHERE id = $1");
    Ok(sqlx::query(sql)
        .bind(id)
        .execute(tx.conn())
        .await?
        .rows_affected()
        == 1)
}
