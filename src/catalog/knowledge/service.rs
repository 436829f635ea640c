//! Knowledge search use case: query checks, ranking, and source references.

use salvo::oapi::ToSchema;
use serde::Serialize;

use super::repo;
use crate::error::{AppError, ErrorDetail};
use crate::state::AppState;
use crate::values::page::{Page, PageRequest};

pub const Q_MAX: usize = 200;
pub const LANGUAGES: &[&str] = &["de", "en"];
/// Searchable sources and the REST collection each record lives in.
pub const SOURCES: &[(&str, &str)] = &[
    ("species", "species"),
    ("glossary_term", "glossary"),
    ("pest", "ipm/pests"),
    ("disease", "ipm/diseases"),
    ("treatment", "ipm/treatments"),
    ("botanical_family", "botanical-families"),
];

/// A language of the texts (documents the `language` parameter).
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Language {
    De,
    En,
}

/// A kind of source (documents the `source` parameter).
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    Species,
    GlossaryTerm,
    Pest,
    Disease,
    Treatment,
    BotanicalFamily,
}

/// A text that matches, with where it comes from.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct KnowledgeHit {
    /// `species`, `glossary_term`, `pest`, `disease`, `treatment` or `botanical_family`.
    pub source_type: String,
    pub source_key: String,
    /// REST path of the source record.
    pub source_url: String,
    /// `profile`, `care`, `definition`, …
    pub section: String,
    pub language: String,
    pub title: String,
    /// The best matching passage.
    pub excerpt: String,
    /// Relevance from 0 to 1 (higher is better).
    pub score: f64,
}

/// The parameters of a search, as sent.
#[derive(Debug, Clone, Default)]
pub struct SearchParams {
    pub q: Option<String>,
    pub language: Option<String>,
    pub source: Option<String>,
}

pub async fn search(
    state: &AppState,
    params: &SearchParams,
    page: PageRequest,
) -> Result<Page<KnowledgeHit>, AppError> {
    let (hits, total) = search_texts(state, params, page, Q_MAX).await?;
    Ok(Page::new(
        hits.into_iter().map(|h| h.hit).collect(),
        total,
        page,
    ))
}

/// A hit with the whole text it was found in.
#[derive(Debug, Clone)]
pub struct FullHit {
    pub hit: KnowledgeHit,
    pub body: String,
}

/// The search behind [`search`], with the whole texts and a caller-chosen bound on the query
/// length (the tool server accepts longer questions than the REST query parameter): one page
/// of hits, best first, and the number of matching texts.
pub async fn search_texts(
    state: &AppState,
    params: &SearchParams,
    page: PageRequest,
    q_max: usize,
) -> Result<(Vec<FullHit>, i64), AppError> {
    let mut errors = Vec::new();
    let q = params.q.as_deref().map(str::trim).unwrap_or_default();
    let raw_len = params.q.as_deref().map_or(0, |q| q.chars().count());
    if params
        .q
        .as_deref()
        .is_some_and(|q| q.chars().any(char::is_control))
        || raw_len > q_max
    {
        errors.push(ErrorDetail::new(
            "query.q",
            format!("at most {q_max} characters, no control characters"),
            "value_error",
        ));
    } else if q.is_empty() {
        errors.push(ErrorDetail::new(
            "query.q",
            "a search text is required",
            "missing",
        ));
    }
    let language = params.language.as_deref();
    if language.is_some_and(|l| !LANGUAGES.contains(&l)) {
        errors.push(ErrorDetail::new(
            "query.language",
            "must be de or en",
            "value_error",
        ));
    }
    let source = params.source.as_deref();
    if source.is_some_and(|s| !SOURCES.iter().any(|(k, _)| *k == s)) {
        let all: Vec<&str> = SOURCES.iter().map(|(k, _)| *k).collect();
        errors.push(ErrorDetail::new(
            "query.source",
            format!("must be one of: {}", all.join(", ")),
            "value_error",
        ));
    }
    if !errors.is_empty() {
        return Err(AppError::validation(errors));
    }
    let mut db = state.platform_pool().acquire().await?;
    let total = repo::count(&mut db, q, language, source).await?;
    let hits = if total > page.skip {
        repo::search(&mut db, q, language, source, page).await?
    } else {
        Vec::new()
    };
    let items = hits
        .into_iter()
        .map(|h| {
            let collection = SOURCES
                .iter()
                .find(|(k, _)| *k == h.kind)
                .map_or("species", |(_, c)| *c);
            FullHit {
                hit: KnowledgeHit {
                    source_url: format!("/api/v1/{collection}/{}", h.record_id),
                    source_key: h.record_id.to_string(),
                    source_type: h.kind,
                    section: h.section,
                    language: h.language,
                    title: h.title,
                    excerpt: h.excerpt,
                    score: (f64::from(h.score) * 10_000.0).round() / 10_000.0,
                },
                body: h.body,
            }
        })
        .collect();
    Ok((items, total))
}
