//! Shaping catalogue records for tool results: `key` named for what it is, timestamps left
//! out, empty fields dropped (a model reads absence more reliably than a wall of nulls), and
//! referenced keys paired with names.

use std::collections::HashMap;

use serde_json::{Map, Value, json};
use uuid::Uuid;

use crate::catalog::engine::service;
use crate::error::AppError;
use crate::http::pagination::PageRequest;
use crate::mcp::args::Args;
use crate::state::AppState;

/// `offset` and `limit` as a page request.
pub fn page(args: &Args) -> PageRequest {
    PageRequest {
        skip: args.offset(),
        limit: args.limit(),
    }
}

/// Whether a value says nothing: null, blank text, an empty list or object.
fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.trim().is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

/// Drops empty fields of an object, except those named in `keep` (always present, null when
/// unknown).
pub fn compact(value: Value, keep: &[&str]) -> Value {
    match value {
        Value::Object(mut m) => {
            m.retain(|k, v| keep.contains(&k.as_str()) || !is_empty(v));
            Value::Object(m)
        }
        other => other,
    }
}

/// A catalogue record as a tool shows it: `key` renamed to `key_name`, without timestamps.
pub fn record(mut value: Value, key_name: &str) -> Map<String, Value> {
    let mut out = Map::new();
    if let Some(m) = value.as_object_mut() {
        if let Some(key) = m.remove("key") {
            out.insert(key_name.to_owned(), key);
        }
        m.remove("created_at");
        m.remove("updated_at");
        out.extend(std::mem::take(m));
    }
    out
}

pub fn text<'a>(v: &'a Value, field: &str) -> Option<&'a str> {
    v.get(field).and_then(Value::as_str)
}

/// The first entry of a list of names.
pub fn first<'a>(v: &'a Value, field: &str) -> Option<&'a str> {
    v.get(field).and_then(|l| l.get(0)).and_then(Value::as_str)
}

/// The keys in a field holding one key or a list of keys.
pub fn keys_in(v: &Value, field: &str) -> Vec<Uuid> {
    match v.get(field) {
        Some(Value::String(s)) => Uuid::parse_str(s).ok().into_iter().collect(),
        Some(Value::Array(l)) => l
            .iter()
            .filter_map(Value::as_str)
            .filter_map(|s| Uuid::parse_str(s).ok())
            .collect(),
        _ => Vec::new(),
    }
}

/// Names for referenced keys.
pub struct Names(HashMap<Uuid, String>);

impl Names {
    pub async fn of(
        state: &AppState,
        keys: impl IntoIterator<Item = Uuid>,
    ) -> Result<Self, AppError> {
        Ok(Self(service::names_by_key(state, keys).await?))
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        Uuid::parse_str(key)
            .ok()
            .and_then(|k| self.0.get(&k))
            .map(String::as_str)
    }

    /// `[{<key_name>: key, name}]` for the keys in `field` of `v`.
    pub fn refs(&self, v: &Value, field: &str, key_name: &str, name_field: &str) -> Value {
        Value::Array(
            keys_in(v, field)
                .into_iter()
                .map(|k| {
                    let mut m = Map::new();
                    m.insert(key_name.to_owned(), json!(k));
                    m.insert(name_field.to_owned(), json!(self.0.get(&k)));
                    Value::Object(m)
                })
                .collect(),
        )
    }
}

/// A species in a list: key, names, category and lifecycle.
pub fn species_summary(sp: &Value) -> Value {
    compact(
        json!({
            "species_key": sp.get("key"),
            "scientific_name": text(sp, "scientific_name"),
            "common_name_en": first(sp, "common_names_en"),
            "common_name_de": first(sp, "common_names_de"),
            "plant_category": text(sp, "plant_category"),
            "cycle_type": text(sp, "cycle_type"),
        }),
        &[],
    )
}

/// "Tomato (Solanum lycopersicum)", or the scientific name alone.
pub fn species_label(sp: &Value) -> String {
    let scientific = text(sp, "scientific_name").unwrap_or("unnamed species");
    match first(sp, "common_names_en") {
        Some(common) => format!("{common} ({scientific})"),
        None => scientific.to_owned(),
    }
}

/// A page of a list: items, total, offset and limit.
pub fn paged(items: Vec<Value>, total: i64, page: PageRequest) -> Value {
    json!({
        "items": items,
        "count": items.len(),
        "total": total,
        "offset": page.skip,
        "limit": page.limit,
    })
}

/// "3 of 12 …" or "12 …" when one page holds them all.
pub fn counted(shown: usize, total: i64, what: &str) -> String {
    if i64::try_from(shown).is_ok_and(|s| s == total) {
        format!("{total} {what}")
    } else {
        format!("{shown} of {total} {what}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_keeps_the_named_fields_and_drops_empty_ones() {
        let v = compact(
            json!({"a": null, "b": [], "c": "", "d": 0, "e": false, "toxicity": null}),
            &["toxicity"],
        );
        assert_eq!(v, json!({"d": 0, "e": false, "toxicity": null}));
    }

    #[test]
    fn record_renames_the_key_and_drops_timestamps() {
        let r = record(
            json!({"key": "k", "name": "n", "created_at": "t", "updated_at": "t"}),
            "pest_key",
        );
        assert_eq!(Value::Object(r), json!({"pest_key": "k", "name": "n"}));
    }

    #[test]
    fn counted_says_of_only_for_partial_pages() {
        assert_eq!(counted(3, 3, "pests"), "3 pests");
        assert_eq!(counted(2, 3, "pests"), "2 of 3 pests");
    }
}
