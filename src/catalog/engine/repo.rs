//! SQL of the catalogue: one document table keyed by kind (`platform.catalog_records`), the
//! references between records (`platform.catalog_links`, foreign keys both ways, so a record
//! still referenced cannot disappear) and the knowledge texts.

use serde_json::Value;
use sqlx::postgres::PgRow;
use sqlx::{PgConnection, Row};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::values::page::PageRequest;

/// A record as stored: `data` holds every field but the references.
#[derive(Debug, Clone)]
pub struct Stored {
    pub id: Uuid,
    pub kind: String,
    pub name: String,
    pub data: Value,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
}

/// What a write stores besides the data.
#[derive(Debug, Clone)]
pub struct NewRow {
    pub name: String,
    pub name_norm: String,
    pub search_text: String,
    pub data: Value,
}

const COLUMNS: &str = "id, kind, name, data, created_at, updated_at";

fn decode(row: &PgRow) -> Result<Stored, sqlx::Error> {
    Ok(Stored {
        id: row.try_get("id")?,
        kind: row.try_get("kind")?,
        name: row.try_get("name")?,
        data: row.try_get("data")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

/// A value bound to a list query.
#[derive(Debug, Clone)]
pub enum Bind {
    Text(String),
    Json(Value),
    Uuid(Uuid),
    Path(Vec<String>),
}

/// The `WHERE` of a list query over `r` (kind is always `$1`).
#[derive(Debug, Clone, Default)]
pub struct Conditions {
    sql: Vec<String>,
    binds: Vec<Bind>,
}

impl Conditions {
    fn next(&mut self, bind: Bind) -> usize {
        self.binds.push(bind);
        self.binds.len() + 1
    }

    /// `data @> json`
    pub fn contains(&mut self, json: Value) {
        let n = self.next(Bind::Json(json));
        self.sql.push(format!("r.data @> ${n}::jsonb"));
    }

    /// Nothing recorded at the path (absent or null).
    pub fn unknown(&mut self, path: &[&str]) {
        let n = self.next(Bind::Path(path.iter().map(|s| (*s).to_owned()).collect()));
        self.sql.push(format!(
            "coalesce(r.data #> ${n}::text[], 'null'::jsonb) = 'null'::jsonb"
        ));
    }

    /// A substring of the normalised search text.
    pub fn search(&mut self, normalised: &str) {
        let escaped = normalised
            .replace('\\', "\\\\")
            .replace('%', "\\%")
            .replace('_', "\\_");
        let n = self.next(Bind::Text(format!("%{escaped}%")));
        self.sql.push(format!("r.search_text LIKE ${n}"));
    }

    /// The record references `target` through `field`.
    pub fn links_to(&mut self, field: &str, target: Uuid) {
        let f = self.next(Bind::Text(field.to_owned()));
        let t = self.next(Bind::Uuid(target));
        self.sql.push(format!(
            "EXISTS (SELECT 1 FROM catalog_links l WHERE l.owner_id = r.id \
             AND l.field = ${f} AND l.target_id = ${t})"
        ));
    }

    /// The record references `target` through any of `fields`.
    pub fn links_to_any(&mut self, fields: &[&str], target: Uuid) {
        let f = self.next(Bind::Path(fields.iter().map(|s| (*s).to_owned()).collect()));
        let t = self.next(Bind::Uuid(target));
        self.sql.push(format!(
            "EXISTS (SELECT 1 FROM catalog_links l WHERE l.owner_id = r.id \
             AND l.field = ANY(${f}::text[]) AND l.target_id = ${t})"
        ));
    }

    fn where_sql(&self) -> String {
        let mut sql = String::from("r.kind = $1");
        for c in &self.sql {
            sql.push_str(" AND ");
            sql.push_str(c);
        }
        sql
    }

    fn bind<'q>(
        &'q self,
        mut q: sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments>,
    ) -> sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments> {
        for b in &self.binds {
            q = match b {
                Bind::Text(s) => q.bind(s),
                Bind::Json(v) => q.bind(v),
                Bind::Uuid(u) => q.bind(u),
                Bind::Path(p) => q.bind(p),
            };
        }
        q
    }
}

pub async fn count(db: &mut PgConnection, kind: &str, c: &Conditions) -> Result<i64, sqlx::Error> {
    let sql = sqlx::AssertSqlSafe(format!(
        "SELECT count(*) FROM catalog_records r WHERE {}",
        c.where_sql()
    ));
    let q = c.bind(sqlx::query(sql).bind(kind));
    q.fetch_one(db).await?.try_get(0)
}

pub async fn list(
    db: &mut PgConnection,
    kind: &str,
    c: &Conditions,
    page: PageRequest,
) -> Result<Vec<Stored>, sqlx::Error> {
    let n = c.binds.len() + 2;
    let sql = sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM catalog_records r WHERE {} ORDER BY r.name_norm, r.id \
         LIMIT ${n} OFFSET ${}",
        c.where_sql(),
        n + 1
    ));
    let q = c.bind(sqlx::query(sql).bind(kind));
    let rows = q.bind(page.limit).bind(page.skip).fetch_all(db).await?;
    rows.iter().map(decode).collect()
}

/// One record of a kind by key or normalised name.
#[derive(Debug, Clone, Copy)]
enum One<'a> {
    Id(Uuid),
    LockedId(Uuid),
    Name(&'a str),
}

async fn one(
    db: &mut PgConnection,
    kind: &str,
    by: One<'_>,
) -> Result<Option<Stored>, sqlx::Error> {
    let filter = match by {
        One::Id(_) => "id = $2",
        One::LockedId(_) => "id = $2 FOR UPDATE",
        One::Name(_) => "name_norm = $2",
    };
    let sql = sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM catalog_records WHERE kind = $1 AND {filter}"
    ));
    let q = sqlx::query(sql).bind(kind);
    let q = match by {
        One::Id(id) | One::LockedId(id) => q.bind(id),
        One::Name(name) => q.bind(name),
    };
    let row = q.fetch_optional(db).await?;
    row.as_ref().map(decode).transpose()
}

pub async fn get(
    db: &mut PgConnection,
    kind: &str,
    id: Uuid,
) -> Result<Option<Stored>, sqlx::Error> {
    one(db, kind, One::Id(id)).await
}

/// Locks the row for the rest of the transaction (patches read, merge and write it).
pub async fn get_for_update(
    db: &mut PgConnection,
    kind: &str,
    id: Uuid,
) -> Result<Option<Stored>, sqlx::Error> {
    one(db, kind, One::LockedId(id)).await
}

pub async fn find_by_norm(
    db: &mut PgConnection,
    kind: &str,
    name_norm: &str,
) -> Result<Option<Stored>, sqlx::Error> {
    one(db, kind, One::Name(name_norm)).await
}

/// Every record of a kind as (normalised name, id): the seed resolves names with it.
pub async fn names(db: &mut PgConnection, kind: &str) -> Result<Vec<(String, Uuid)>, sqlx::Error> {
    sqlx::query_as("SELECT name_norm, id FROM catalog_records WHERE kind = $1")
        .bind(kind)
        .fetch_all(db)
        .await
}

/// The display names of records by key (any kind); unknown keys are left out.
pub async fn display_names(
    db: &mut PgConnection,
    ids: &[Uuid],
) -> Result<Vec<(Uuid, String)>, sqlx::Error> {
    sqlx::query_as("SELECT id, name FROM catalog_records WHERE id = ANY($1)")
        .bind(ids)
        .fetch_all(db)
        .await
}

/// `None` when the natural key is taken.
pub async fn insert(
    db: &mut PgConnection,
    kind: &str,
    row: &NewRow,
) -> Result<Option<Stored>, sqlx::Error> {
    let sql = sqlx::AssertSqlSafe(format!(
        "INSERT INTO catalog_records (id, kind, name, name_norm, search_text, data) \
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (kind, name_norm) DO NOTHING \
         RETURNING {COLUMNS}"
    ));
    let found = sqlx::query(sql)
        .bind(Uuid::now_v7())
        .bind(kind)
        .bind(&row.name)
        .bind(&row.name_norm)
        .bind(&row.search_text)
        .bind(&row.data)
        .fetch_optional(db)
        .await?;
    found.as_ref().map(decode).transpose()
}

/// `None` when the new natural key belongs to another record.
pub async fn update(
    db: &mut PgConnection,
    id: Uuid,
    row: &NewRow,
) -> Result<Option<Stored>, sqlx::Error> {
    let sql = sqlx::AssertSqlSafe(format!(
        "UPDATE catalog_records SET name = $2, name_norm = $3, search_text = $4, data = $5, \
         updated_at = now() WHERE id = $1 RETURNING {COLUMNS}"
    ));
    let result = sqlx::query(sql)
        .bind(id)
        .bind(&row.name)
        .bind(&row.name_norm)
        .bind(&row.search_text)
        .bind(&row.data)
        .fetch_optional(db)
        .await;
    match result {
        Ok(found) => found.as_ref().map(decode).transpose(),
        Err(e) if is_code(&e, "23505") => Ok(None),
        Err(e) => Err(e),
    }
}

fn is_code(err: &sqlx::Error, code: &str) -> bool {
    err.as_database_error()
        .and_then(|d| d.code())
        .is_some_and(|c| c == code)
}

/// What deleting did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deleted {
    Yes,
    Missing,
    /// Another record still references it.
    Referenced,
}

pub async fn delete(db: &mut PgConnection, kind: &str, id: Uuid) -> Result<Deleted, sqlx::Error> {
    let result = sqlx::query("DELETE FROM catalog_records WHERE kind = $1 AND id = $2")
        .bind(kind)
        .bind(id)
        .execute(&mut *db)
        .await;
    match result {
        Ok(done) if done.rows_affected() == 0 => Ok(Deleted::Missing),
        Ok(_) => Ok(Deleted::Yes),
        Err(e) if is_code(&e, "23503") => Ok(Deleted::Referenced),
        Err(e) => Err(e),
    }
}

/// How many records reference `id` (any field).
pub async fn referrers(db: &mut PgConnection, id: Uuid) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar("SELECT count(DISTINCT owner_id) FROM catalog_links WHERE target_id = $1")
        .bind(id)
        .fetch_one(db)
        .await
}

/// The outgoing references of the records, in order: (owner, field, target).
pub async fn links_of(
    db: &mut PgConnection,
    owners: &[Uuid],
) -> Result<Vec<(Uuid, String, Uuid)>, sqlx::Error> {
    sqlx::query_as(
        "SELECT owner_id, field, target_id FROM catalog_links WHERE owner_id = ANY($1) \
         ORDER BY owner_id, field, position",
    )
    .bind(owners)
    .fetch_all(db)
    .await
}

/// Replaces the references of one field.
pub async fn set_links(
    db: &mut PgConnection,
    owner: Uuid,
    field: &str,
    targets: &[Uuid],
) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM catalog_links WHERE owner_id = $1 AND field = $2")
        .bind(owner)
        .bind(field)
        .execute(&mut *db)
        .await?;
    if targets.is_empty() {
        return Ok(());
    }
    sqlx::query(
        "INSERT INTO catalog_links (owner_id, field, position, target_id) \
         SELECT $1, $2, t.ord::int, t.target FROM unnest($3::uuid[]) WITH ORDINALITY AS t(target, ord) \
         ON CONFLICT DO NOTHING",
    )
    .bind(owner)
    .bind(field)
    .bind(targets)
    .execute(db)
    .await?;
    Ok(())
}

/// The kinds of the given records (missing ones are absent).
pub async fn kinds_of(
    db: &mut PgConnection,
    ids: &[Uuid],
) -> Result<Vec<(Uuid, String)>, sqlx::Error> {
    sqlx::query_as("SELECT id, kind FROM catalog_records WHERE id = ANY($1)")
        .bind(ids)
        .fetch_all(db)
        .await
}

/// A knowledge text of a record.
#[derive(Debug, Clone)]
pub struct KnowledgeDoc {
    pub section: &'static str,
    pub language: &'static str,
    pub title: String,
    pub body: String,
}

/// Replaces the knowledge texts of a record.
pub async fn set_knowledge(
    db: &mut PgConnection,
    record: Uuid,
    docs: &[KnowledgeDoc],
) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM knowledge_documents WHERE record_id = $1")
        .bind(record)
        .execute(&mut *db)
        .await?;
    for d in docs {
        sqlx::query(
            "INSERT INTO knowledge_documents (record_id, section, language, title, body) \
             VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(record)
        .bind(d.section)
        .bind(d.language)
        .bind(&d.title)
        .bind(&d.body)
        .execute(&mut *db)
        .await?;
    }
    Ok(())
}
