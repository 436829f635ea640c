//! SQL of knowledge search: each text is matched with the query parsed in its own language's
//! configuration and ranked with `ts_rank_cd` normalised to rank/(rank+1), so scores lie in
//! [0, 1).

use sqlx::{PgConnection, Row};
use uuid::Uuid;

use crate::values::page::PageRequest;

/// One matching text.
#[derive(Debug, Clone)]
pub struct Hit {
    pub record_id: Uuid,
    pub kind: String,
    pub section: String,
    pub language: String,
    pub title: String,
    pub excerpt: String,
    /// The whole text.
    pub body: String,
    pub score: f32,
}

const MATCH: &str = "FROM knowledge_documents d JOIN catalog_records r ON r.id = d.record_id, \
     (SELECT websearch_to_tsquery('english', $1) AS en, websearch_to_tsquery('german', $1) AS de) q \
     WHERE d.tsv @@ (CASE d.language WHEN 'de' THEN q.de ELSE q.en END) \
     AND ($2::text IS NULL OR d.language = $2) AND ($3::text IS NULL OR r.kind = $3)";

pub async fn count(
    db: &mut PgConnection,
    q: &str,
    language: Option<&str>,
    kind: Option<&str>,
) -> Result<i64, sqlx::Error> {
    let sql = sqlx::AssertSqlSafe(format!("SELECT count(*) {MATCH}"));
    sqlx::query_scalar(sql)
        .bind(q)
        .bind(language)
        .bind(kind)
        .fetch_one(db)
        .await
}

pub async fn search(
    db: &mut PgConnection,
    q: &str,
    language: Option<&str>,
    kind: Option<&str>,
    page: PageRequest,
) -> Result<Vec<Hit>, sqlx::Error> {
    let sql = sqlx::AssertSqlSafe(format!(
        "SELECT d.record_id, r.kind, d.section, d.language, d.title, d.body, \
         ts_rank_cd(d.tsv, CASE d.language WHEN 'de' THEN q.de ELSE q.en END, 32) AS score, \
         ts_headline(CASE d.language WHEN 'de' THEN 'german'::regconfig ELSE 'english'::regconfig END, \
                     d.body, CASE d.language WHEN 'de' THEN q.de ELSE q.en END, \
                     'MaxWords=35, MinWords=12, StartSel=\"\", StopSel=\"\"') AS excerpt \
         {MATCH} ORDER BY score DESC, d.record_id, d.section, d.language LIMIT $4 OFFSET $5"
    ));
    let rows = sqlx::query(sql)
        .bind(q)
        .bind(language)
        .bind(kind)
        .bind(page.limit)
        .bind(page.skip)
        .fetch_all(db)
        .await?;
    rows.iter()
        .map(|row| {
            Ok(Hit {
                record_id: row.try_get("record_id")?,
                kind: row.try_get("kind")?,
                section: row.try_get("section")?,
                language: row.try_get("language")?,
                title: row.try_get("title")?,
                excerpt: row.try_get("excerpt")?,
                body: row.try_get("body")?,
                score: row.try_get("score")?,
            })
        })
        .collect()
}
