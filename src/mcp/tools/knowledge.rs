//! Knowledge search: the texts of the catalogue (species profiles and care guides, glossary
//! definitions, family, pest, disease and treatment texts) ranked for a question, each with its
//! source reference and score.

use serde_json::{Value, json};

use crate::catalog::knowledge::service::{self as knowledge, SearchParams};
use crate::http::pagination::PageRequest;
use crate::mcp::args::{Arg, ArgKind, Args};
use crate::mcp::envelope::{ToolError, ToolOutput};
use crate::mcp::registry::{Ctx, Permission, Scope, Tool};
use crate::tool_handler;

/// Longest question, in characters.
const QUERY_MAX: usize = 500;
/// Characters of each text returned unless `full_content` is set.
const EXCERPT_CHARS: usize = 1200;

pub static SEARCH_PLANT_KNOWLEDGE: Tool = Tool {
    name: "search_plant_knowledge",
    title: "Search plant knowledge",
    description: "Full-text search (German and English) over the plant knowledge base: species \
                  profiles and care guides, glossary definitions, and botanical family, pest, \
                  disease and treatment texts. Returns the best-matching texts, best first, each \
                  with its source reference (source_type, source_key, source_url), title, \
                  section, language, a relevance score from 0 to 1, the matching passage and the \
                  text (first 1200 characters unless full_content is true; content_truncated \
                  says when it was cut). Use the source_key with get_species_info, get_pest, \
                  get_disease or get_treatment for structured facts. Independent of any garden.",
    permission: Permission::Read,
    scope: Scope::Global,
    args: &[
        Arg::required(
            "query",
            ArgKind::Text {
                min: 1,
                max: QUERY_MAX,
            },
            "Words or a question, e.g. \"yellow leaves tomato\" (web-search syntax: \"phrase\", -exclude, or).",
        ),
        Arg::optional(
            "top_k",
            ArgKind::Int {
                min: 1,
                max: 20,
                default: Some(5),
            },
            "Most texts to return.",
        ),
        Arg::optional(
            "min_score",
            ArgKind::Number {
                min: 0.0,
                max: 1.0,
                default: Some(0.0),
            },
            "Leave out texts scoring below this (0 to 1).",
        ),
        Arg::optional(
            "doc_language",
            ArgKind::Choice {
                values: &["de", "en", "all"],
                default: Some("all"),
            },
            "Only texts in this language.",
        ),
        Arg::optional(
            "full_content",
            ArgKind::Bool { default: false },
            "Return each text whole instead of its first 1200 characters.",
        ),
    ],
    rules: &[],
    run: tool_handler!(search_plant_knowledge),
};

async fn search_plant_knowledge(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let query = args.key("query").to_owned();
    let language = args.text("doc_language").filter(|l| *l != "all");
    let params = SearchParams {
        q: Some(query.clone()),
        language: language.map(str::to_owned),
        source: None,
    };
    let page = PageRequest {
        skip: 0,
        limit: args.int("top_k").unwrap_or(5),
    };
    let min_score = args.number("min_score").unwrap_or(0.0);
    let full = args.flag("full_content");
    let (hits, total) = knowledge::search_texts(ctx.state, &params, page, QUERY_MAX).await?;
    // Hits come best first, so dropping the low scores of this page loses nothing better.
    let results: Vec<Value> = hits
        .into_iter()
        .filter(|h| h.hit.score >= min_score)
        .map(|h| {
            let truncated = !full && h.body.chars().count() > EXCERPT_CHARS;
            let content: String = if truncated {
                h.body.chars().take(EXCERPT_CHARS).collect()
            } else {
                h.body
            };
            json!({
                "source_key": h.hit.source_key,
                "source_type": h.hit.source_type,
                "source_url": h.hit.source_url,
                "title": h.hit.title,
                "section": h.hit.section,
                "language": h.hit.language,
                "score": h.hit.score,
                "passage": h.hit.excerpt,
                "content": content,
                "content_truncated": truncated,
            })
        })
        .collect();
    let summary = match results.first() {
        None => format!(
            "No knowledge text matches {query:?}{}; try other or fewer words.",
            if min_score > 0.0 {
                format!(" with a score of at least {min_score}")
            } else {
                String::new()
            }
        ),
        Some(best) => format!(
            "{} text(s) returned of {total} matching {query:?}; best: {} (score {}).",
            results.len(),
            best["title"].as_str().unwrap_or_default(),
            best["score"]
        ),
    };
    Ok(ToolOutput::new(
        summary,
        json!({
            "query": query,
            "results": results,
            "count": results.len(),
            "total_matches": total,
        }),
    )
    .link_api("/api/v1/knowledge/search"))
}
