//! The GBIF species API adapter: `GET {base}/species/match?name=…` (the "backbone" name
//! matcher). `matchType: NONE` means no such taxon.

use futures_util::future::BoxFuture;
use serde_json::Value;

use super::adapter::{BotanicalSource, Http, SourceError, SourceMatch};

pub struct Gbif {
    base_url: String,
}

impl Gbif {
    pub fn new(base_url: &str) -> Self {
        Self {
            base_url: base_url.trim_end_matches('/').to_owned(),
        }
    }
}

/// Reads GBIF's match answer.
pub fn parse_match(v: &Value) -> Option<SourceMatch> {
    let s = |f: &str| v.get(f).and_then(Value::as_str).map(str::to_owned);
    if s("matchType").as_deref() == Some("NONE") || v.get("usageKey").is_none() {
        return None;
    }
    Some(SourceMatch {
        external_id: v
            .get("usageKey")
            .map(|k| k.as_i64().map_or_else(|| k.to_string(), |n| n.to_string())),
        scientific_name: s("scientificName"),
        canonical_name: s("canonicalName"),
        rank: s("rank"),
        status: s("status"),
        family: s("family"),
        genus: s("genus"),
        confidence: v.get("confidence").and_then(Value::as_i64),
    })
}

impl BotanicalSource for Gbif {
    fn name(&self) -> &'static str {
        "gbif"
    }

    fn description(&self) -> &'static str {
        "GBIF backbone taxonomy: accepted name, family, genus and rank of a scientific name"
    }

    fn base_url(&self) -> &str {
        &self.base_url
    }

    fn lookup<'a>(
        &'a self,
        http: &'a Http,
        scientific_name: &'a str,
    ) -> BoxFuture<'a, Result<Option<SourceMatch>, SourceError>> {
        Box::pin(async move {
            let url = reqwest::Url::parse_with_params(
                &format!("{}/species/match", self.base_url),
                &[("name", scientific_name), ("kingdom", "Plantae")],
            )
            .map_err(|e| SourceError::Unreachable("gbif", format!("bad base URL: {e}")))?;
            let body = http.get_json("gbif", url).await?;
            if !body.is_object() {
                return Err(SourceError::Unreadable("gbif", "not a JSON object".into()));
            }
            Ok(parse_match(&body))
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn reads_a_match_and_a_miss() {
        let hit = json!({"usageKey": 2930137, "scientificName": "Solanum lycopersicum L.", "canonicalName": "Solanum lycopersicum",
            "rank": "SPECIES", "status": "ACCEPTED", "confidence": 98, "matchType": "EXACT", "family": "Solanaceae", "genus": "Solanum"});
        let m = parse_match(&hit).expect("match");
        assert_eq!(m.external_id.as_deref(), Some("2930137"));
        assert_eq!(m.family.as_deref(), Some("Solanaceae"));
        assert_eq!(m.confidence, Some(98));
        assert_eq!(
            parse_match(&json!({"matchType": "NONE", "confidence": 100})),
            None
        );
    }
}
