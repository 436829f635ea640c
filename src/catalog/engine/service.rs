//! The use cases every catalogue kind shares: list (filters, search, paging), get, create,
//! partial update, delete, and the idempotent upsert by natural key that the seed and the CSV
//! import use. Records travel as JSON objects checked against the kind's field table.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::{Map, Value};
use sqlx::PgConnection;
use time::format_description::well_known::Rfc3339;
use uuid::Uuid;

use super::fields::{Field, Kind, Mode, check_object};
use super::repo::{self, Conditions, Deleted, KnowledgeDoc, NewRow, Stored};
use super::spec::{FilterHow, KindSpec, NaturalKey};
use crate::error::{AppError, ErrorCode, ErrorDetail};
use crate::rules::names::normalise;
use crate::state::AppState;
use crate::values::page::PageRequest;

/// The raw list parameters of a request: `q` and the kind's filters as sent.
#[derive(Debug, Clone, Default)]
pub struct ListParams {
    pub q: Option<String>,
    pub filters: Vec<(&'static str, String)>,
}

/// `q` longer than this is refused.
pub const Q_MAX: usize = 100;

/// A key that is not a UUID cannot name a record: the same 404 as an unknown one.
pub fn parse_key(spec: &KindSpec, key: &str) -> Result<Uuid, AppError> {
    Uuid::parse_str(key).map_err(|_| AppError::not_found(spec.label))
}

fn query_error(param: &str, reason: impl Into<String>) -> ErrorDetail {
    ErrorDetail::new(format!("query.{param}"), reason, "value_error")
}

/// Turns the list parameters into conditions; every bad parameter is one detail.
pub fn conditions(spec: &KindSpec, params: &ListParams) -> Result<Conditions, AppError> {
    let mut c = Conditions::default();
    let mut errors = Vec::new();
    let mut contains = Map::new();
    if let Some(q) = &params.q {
        if q.chars().count() > Q_MAX || q.chars().any(char::is_control) {
            errors.push(query_error(
                "q",
                format!("at most {Q_MAX} characters, no control characters"),
            ));
        } else {
            let q = normalise(q);
            if !q.is_empty() {
                c.search(&q);
            }
        }
    }
    for (param, raw) in &params.filters {
        let Some(filter) = spec.filters.iter().find(|f| f.param == *param) else {
            continue;
        };
        match filter.how {
            FilterHow::Equals(field, allowed) | FilterHow::Contains(field, allowed) => {
                if !allowed.is_empty() && !allowed.contains(&raw.as_str()) {
                    errors.push(query_error(
                        param,
                        format!("must be one of: {}", allowed.join(", ")),
                    ));
                    continue;
                }
                let v = Value::from(raw.as_str());
                let v = if matches!(filter.how, FilterHow::Contains(..)) {
                    Value::Array(vec![v])
                } else {
                    v
                };
                contains.insert(field.to_owned(), v);
            }
            FilterHow::Bool(field) => match raw.as_str() {
                "true" | "false" => {
                    contains.insert(field.to_owned(), Value::Bool(raw == "true"));
                }
                _ => errors.push(query_error(param, "must be true or false")),
            },
            FilterHow::Known(path) => match raw.as_str() {
                "true" | "false" => {
                    let mut v = Value::Bool(raw == "true");
                    for step in path.iter().rev() {
                        let mut m = Map::new();
                        m.insert((*step).to_owned(), v);
                        v = Value::Object(m);
                    }
                    c.contains(v);
                }
                "unknown" => c.unknown(path),
                _ => errors.push(query_error(param, "must be true, false or unknown")),
            },
            FilterHow::Ref(field) => match Uuid::parse_str(raw) {
                Ok(id) => c.links_to(field, id),
                Err(_) => errors.push(query_error(param, "must be a record key (UUID)")),
            },
            FilterHow::RefAny(fields) => match Uuid::parse_str(raw) {
                Ok(id) => c.links_to_any(fields, id),
                Err(_) => errors.push(query_error(param, "must be a record key (UUID)")),
            },
        }
    }
    if !errors.is_empty() {
        return Err(AppError::validation(errors));
    }
    if !contains.is_empty() {
        c.contains(Value::Object(contains));
    }
    Ok(c)
}

/// One page of records (the HTTP face types them).
#[derive(Debug, Clone)]
pub struct Listed {
    pub items: Vec<Value>,
    pub total: i64,
    pub page: PageRequest,
}

/// Lists are answered from memory while the catalogue is unchanged (see `crate::cache`).
pub async fn list(
    state: &AppState,
    spec: &KindSpec,
    params: &ListParams,
    parent: Option<(&'static str, Uuid)>,
    page: PageRequest,
) -> Result<Listed, AppError> {
    // Searches are as many as there are strings: they go to the database.
    if params.q.as_deref().is_some_and(|q| !q.trim().is_empty()) {
        return list_from_db(state, spec, params, parent, page).await;
    }
    let key = format!(
        "list:{}:{params:?}:{parent:?}:{}:{}",
        spec.kind, page.skip, page.limit
    );
    state
        .caches()
        .catalog_read(key, list_from_db(state, spec, params, parent, page))
        .await
}

async fn list_from_db(
    state: &AppState,
    spec: &KindSpec,
    params: &ListParams,
    parent: Option<(&'static str, Uuid)>,
    page: PageRequest,
) -> Result<Listed, AppError> {
    let mut c = conditions(spec, params)?;
    if let Some((field, id)) = parent {
        c.links_to(field, id);
    }
    let mut db = state.platform_pool().acquire().await?;
    let total = repo::count(&mut db, spec.kind, &c).await?;
    let rows = if total > page.skip {
        repo::list(&mut db, spec.kind, &c, page).await?
    } else {
        Vec::new()
    };
    let items = render_all(&mut db, spec, &rows).await?;
    Ok(Listed { items, total, page })
}

/// The records of `spec` that reference the `parent` record through `field` (404 when the
/// parent does not exist): a family's species, a species' cultivars, a family's successors.
pub async fn list_under(
    state: &AppState,
    parent: (&KindSpec, &str),
    spec: &KindSpec,
    field: &'static str,
    params: &ListParams,
    page: PageRequest,
) -> Result<Listed, AppError> {
    let key = format!(
        "under:{}:{}:{}:{field}:{params:?}:{}:{}",
        parent.0.kind, parent.1, spec.kind, page.skip, page.limit
    );
    let load = async {
        let parent_id = {
            let mut db = state.platform_pool().acquire().await?;
            require(&mut db, parent.0, parent.1).await?
        };
        list_from_db(state, spec, params, Some((field, parent_id)), page).await
    };
    if params.q.as_deref().is_some_and(|q| !q.trim().is_empty()) {
        return load.await;
    }
    state.caches().catalog_read(key, load).await
}

/// Every record of a kind matching the conditions (bounded lists such as zones or rules).
pub async fn all(
    db: &mut PgConnection,
    spec: &KindSpec,
    c: &Conditions,
) -> Result<Vec<Value>, AppError> {
    let page = PageRequest {
        skip: 0,
        limit: 10_000,
    };
    let rows = repo::list(db, spec.kind, c, page).await?;
    render_all(db, spec, &rows).await
}

/// One record, from memory while the catalogue is unchanged (see `crate::cache`).
pub async fn get(state: &AppState, spec: &KindSpec, key: &str) -> Result<Value, AppError> {
    let id = parse_key(spec, key)?;
    let load = async {
        let mut db = state.platform_pool().acquire().await?;
        get_by_id(&mut db, spec, id).await
    };
    state
        .caches()
        .catalog_read(format!("get:{}:{id}", spec.kind), load)
        .await
}

pub async fn get_by_id(
    db: &mut PgConnection,
    spec: &KindSpec,
    id: Uuid,
) -> Result<Value, AppError> {
    let stored = repo::get(db, spec.kind, id)
        .await?
        .ok_or_else(|| AppError::not_found(spec.label))?;
    render_one(db, spec, &stored).await
}

/// 404 unless a record of the kind has this key.
pub async fn require(db: &mut PgConnection, spec: &KindSpec, key: &str) -> Result<Uuid, AppError> {
    let id = parse_key(spec, key)?;
    repo::get(db, spec.kind, id)
        .await?
        .map(|s| s.id)
        .ok_or_else(|| AppError::not_found(spec.label))
}

/// The display names (natural-key names, e.g. a species' scientific name) of records by key,
/// so a view can name what it references; keys that are not records are left out. Kept in the
/// catalogue memory like the other catalogue reads (the tool summaries name what they show on
/// every call).
pub async fn names_by_key(
    state: &AppState,
    keys: impl IntoIterator<Item = Uuid>,
) -> Result<HashMap<Uuid, String>, AppError> {
    let mut ids: Vec<Uuid> = keys
        .into_iter()
        .collect::<HashSet<_>>()
        .into_iter()
        .collect();
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    ids.sort_unstable();
    let mut key = String::with_capacity(6 + ids.len() * 33);
    key.push_str("names:");
    for id in &ids {
        key.push_str(&id.simple().to_string());
    }
    let load = async move {
        let mut db = state.platform_pool().acquire().await?;
        Ok(repo::display_names(&mut db, &ids)
            .await?
            .into_iter()
            .collect::<HashMap<Uuid, String>>())
    };
    state.caches().catalog_read(key, load).await
}

/// Checks a create body against the field table and the kind's rules.
pub fn check_new(
    spec: &KindSpec,
    body: Map<String, Value>,
) -> Result<Map<String, Value>, AppError> {
    let mut errors = Vec::new();
    let doc = check_object(spec.fields, body, Mode::Create, "body.", &mut errors);
    if errors.is_empty() {
        (spec.rules)(&doc, &mut errors);
    }
    if errors.is_empty() {
        Ok(prune(spec, doc))
    } else {
        Err(AppError::validation(errors))
    }
}

pub async fn create(
    state: &AppState,
    spec: &KindSpec,
    body: Map<String, Value>,
) -> Result<Value, AppError> {
    let doc = check_new(spec, body)?;
    let mut tx = state.platform_pool().begin().await?;
    let stored = store(&mut tx, spec, None, &doc).await?;
    let out = render_one(&mut tx, spec, &stored).await?;
    tx.commit().await?;
    // Other replicas hear it from the database (migration 0008); this one forgets now.
    state.caches().forget_catalog();
    Ok(out)
}

/// Partial update: omitted fields stay, null clears an optional field; the kind's rules are
/// checked on the merged record.
pub async fn patch(
    state: &AppState,
    spec: &KindSpec,
    key: &str,
    body: Map<String, Value>,
) -> Result<Value, AppError> {
    let id = parse_key(spec, key)?;
    let mut tx = state.platform_pool().begin().await?;
    let existing = repo::get_for_update(&mut tx, spec.kind, id)
        .await?
        .ok_or_else(|| AppError::not_found(spec.label))?;
    let mut errors = Vec::new();
    let changes = check_object(spec.fields, body, Mode::Patch, "body.", &mut errors);
    if !errors.is_empty() {
        return Err(AppError::validation(errors));
    }
    let Value::Object(mut doc) = render_one(&mut tx, spec, &existing).await? else {
        return Err(AppError::internal("a stored record is not an object"));
    };
    for extra in ["key", "created_at", "updated_at"] {
        doc.remove(extra);
    }
    for (k, v) in changes {
        doc.insert(k, v);
    }
    (spec.rules)(&doc, &mut errors);
    if !errors.is_empty() {
        return Err(AppError::validation(errors));
    }
    let doc = prune(spec, doc);
    let stored = store(&mut tx, spec, Some(id), &doc).await?;
    let out = render_one(&mut tx, spec, &stored).await?;
    tx.commit().await?;
    // Other replicas hear it from the database (migration 0008); this one forgets now.
    state.caches().forget_catalog();
    Ok(out)
}

pub async fn delete(state: &AppState, spec: &KindSpec, key: &str) -> Result<(), AppError> {
    let id = parse_key(spec, key)?;
    let mut tx = state.platform_pool().begin().await?;
    match repo::delete(&mut tx, spec.kind, id).await? {
        Deleted::Yes => {
            tx.commit().await?;
            state.caches().forget_catalog();
            Ok(())
        }
        Deleted::Missing => Err(AppError::not_found(spec.label)),
        Deleted::Referenced => {
            tx.rollback().await?;
            let mut db = state.platform_pool().acquire().await?;
            let n = repo::referrers(&mut db, id).await?;
            Err(AppError::new(
                ErrorCode::StateConflict,
                format!(
                    "this {} is still referenced by {n} other record(s)",
                    spec.label
                ),
            ))
        }
    }
}

/// What an upsert did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Upserted {
    Created,
    Updated,
    Unchanged,
}

/// What [`upsert`] would do with this record, without writing.
pub async fn plan_upsert(
    db: &mut PgConnection,
    spec: &KindSpec,
    doc: &Map<String, Value>,
) -> Result<(Upserted, Option<Uuid>), AppError> {
    let (_, norm) = natural_key(spec, doc)?;
    let Some(existing) = repo::find_by_norm(db, spec.kind, &norm).await? else {
        return Ok((Upserted::Created, None));
    };
    let Value::Object(mut current) = render_one(db, spec, &existing).await? else {
        return Err(AppError::internal("a stored record is not an object"));
    };
    for extra in ["key", "created_at", "updated_at"] {
        current.remove(extra);
    }
    // Read-only fields (bindings) are not part of the upserted record.
    for f in spec.fields.iter().filter(|f| f.read_only) {
        current.remove(f.name);
    }
    let what = if &current == doc {
        Upserted::Unchanged
    } else {
        Upserted::Updated
    };
    Ok((what, Some(existing.id)))
}

/// Creates or updates the record with the same natural key; a record equal to the stored one
/// is not written (so running the seed twice changes nothing, not even `updated_at`).
pub async fn upsert(
    db: &mut PgConnection,
    spec: &KindSpec,
    doc: &Map<String, Value>,
) -> Result<(Upserted, Uuid), AppError> {
    match plan_upsert(db, spec, doc).await? {
        (Upserted::Unchanged, Some(id)) => Ok((Upserted::Unchanged, id)),
        (_, existing) => {
            let stored = store(db, spec, existing, doc).await?;
            let what = if existing.is_some() {
                Upserted::Updated
            } else {
                Upserted::Created
            };
            Ok((what, stored.id))
        }
    }
}

/// Drops what is empty (null, blank, empty lists) unless the field is always shown.
pub fn prune(spec: &KindSpec, mut doc: Map<String, Value>) -> Map<String, Value> {
    doc.retain(|k, v| {
        let always = spec.field(k).is_some_and(|f| f.always);
        always || !(v.is_null() || v.as_array().is_some_and(Vec::is_empty))
    });
    doc
}

pub fn natural_key(
    spec: &KindSpec,
    doc: &Map<String, Value>,
) -> Result<(String, String), AppError> {
    let missing = || AppError::internal(format!("{} record without its natural key", spec.kind));
    match spec.natural_key {
        NaturalKey::Field(f) => {
            let name = doc.get(f).and_then(Value::as_str).ok_or_else(missing)?;
            Ok((name.to_owned(), normalise(name)))
        }
        NaturalKey::Scoped { name, scope } => {
            let n = doc.get(name).and_then(Value::as_str).ok_or_else(missing)?;
            let s = doc.get(scope).and_then(Value::as_str).ok_or_else(missing)?;
            Ok((n.to_owned(), format!("{s}/{}", normalise(n))))
        }
        NaturalKey::Computed(f) => f(doc).ok_or_else(missing),
    }
}

fn uuid_of(v: &Value) -> Option<Uuid> {
    v.as_str().and_then(|s| Uuid::parse_str(s).ok())
}

/// The references of a record: per top-level field its targets, plus nested references
/// (kept in the data, linked for integrity under `field.nested`).
fn references(
    fields: &[Field],
    doc: &Map<String, Value>,
) -> Vec<(String, &'static str, Vec<Uuid>)> {
    let mut out = Vec::new();
    // Read-only references (a species' bound sequence) have operations of their own.
    for f in fields.iter().filter(|f| !f.read_only) {
        match f.kind {
            Kind::Ref(target) => {
                let ids = doc.get(f.name).and_then(uuid_of).into_iter().collect();
                out.push((f.name.to_owned(), target, ids));
            }
            Kind::RefList(target, _) => {
                let ids = doc
                    .get(f.name)
                    .and_then(Value::as_array)
                    .map(|l| l.iter().filter_map(uuid_of).collect())
                    .unwrap_or_default();
                out.push((f.name.to_owned(), target, ids));
            }
            Kind::ObjectList(inner, _) => {
                for nested in inner {
                    if let Kind::Ref(target) = nested.kind {
                        let mut seen = HashSet::new();
                        let ids = doc
                            .get(f.name)
                            .and_then(Value::as_array)
                            .map(|l| {
                                l.iter()
                                    .filter_map(|e| e.get(nested.name).and_then(uuid_of))
                                    .filter(|id| seen.insert(*id))
                                    .collect()
                            })
                            .unwrap_or_default();
                        out.push((format!("{}.{}", f.name, nested.name), target, ids));
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// Writes a checked record (insert when `id` is `None`): references must exist (404 naming
/// the field), the natural key must be free (409).
async fn store(
    db: &mut PgConnection,
    spec: &KindSpec,
    id: Option<Uuid>,
    doc: &Map<String, Value>,
) -> Result<Stored, AppError> {
    let refs = references(spec.fields, doc);
    let wanted: Vec<Uuid> = refs
        .iter()
        .flat_map(|(_, _, ids)| ids.iter().copied())
        .collect();
    if !wanted.is_empty() {
        let found: BTreeMap<Uuid, String> =
            repo::kinds_of(db, &wanted).await?.into_iter().collect();
        let mut details = Vec::new();
        for (field, target, ids) in &refs {
            if ids
                .iter()
                .any(|id| found.get(id).map(String::as_str) != Some(*target))
            {
                details.push(ErrorDetail::new(
                    format!("body.{field}"),
                    format!("no {target} has this key"),
                    "not_found",
                ));
            }
        }
        if !details.is_empty() {
            return Err(AppError::new(
                ErrorCode::EntityNotFound,
                "a referenced record does not exist",
            )
            .with_details(details));
        }
    }
    let (name, name_norm) = natural_key(spec, doc)?;
    let mut data = doc.clone();
    for f in spec.fields.iter().filter(|f| f.is_ref()) {
        data.remove(f.name);
    }
    let row = NewRow {
        name,
        name_norm,
        search_text: search_text(spec, doc),
        data: Value::Object(data),
    };
    let stored = match id {
        None => repo::insert(db, spec.kind, &row).await?,
        Some(id) => repo::update(db, id, &row).await?,
    };
    let Some(stored) = stored else {
        return Err(AppError::duplicate(format!(
            "a {} named {:?} exists",
            spec.label, row.name
        )));
    };
    for (field, _, ids) in &refs {
        repo::set_links(db, stored.id, field, ids).await?;
    }
    repo::set_knowledge(db, stored.id, &knowledge(spec, &stored.name, doc)).await?;
    Ok(stored)
}

fn search_text(spec: &KindSpec, doc: &Map<String, Value>) -> String {
    let mut parts = Vec::new();
    for f in spec.search {
        match doc.get(*f) {
            Some(Value::String(s)) => parts.push(normalise(s)),
            Some(Value::Array(l)) => {
                parts.extend(l.iter().filter_map(Value::as_str).map(normalise))
            }
            _ => {}
        }
    }
    parts.join(" | ")
}

fn knowledge(spec: &KindSpec, name: &str, doc: &Map<String, Value>) -> Vec<KnowledgeDoc> {
    let text_of = |f: &str| match doc.get(f) {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Array(l)) => l.first().and_then(Value::as_str).map(str::to_owned),
        _ => None,
    };
    spec.knowledge
        .iter()
        .filter_map(|k| {
            let body: Vec<String> = k.body.iter().filter_map(|f| text_of(f)).collect();
            if body.is_empty() {
                return None;
            }
            let title = k
                .title
                .and_then(text_of)
                .map_or_else(|| name.to_owned(), |t| format!("{t} ({name})"));
            Some(KnowledgeDoc {
                section: k.section,
                language: k.language,
                title,
                body: body.join("\n\n"),
            })
        })
        .collect()
}

async fn render_one(
    db: &mut PgConnection,
    spec: &KindSpec,
    stored: &Stored,
) -> Result<Value, AppError> {
    let mut all = render_all(db, spec, std::slice::from_ref(stored)).await?;
    all.pop()
        .ok_or_else(|| AppError::internal("rendering lost a record"))
}

/// Records as the API shows them: key, fields (references as keys), timestamps.
pub async fn render_all(
    db: &mut PgConnection,
    spec: &KindSpec,
    rows: &[Stored],
) -> Result<Vec<Value>, AppError> {
    let ids: Vec<Uuid> = rows.iter().map(|r| r.id).collect();
    let mut links: BTreeMap<(Uuid, String), Vec<Uuid>> = BTreeMap::new();
    if spec.fields.iter().any(Field::is_ref) && !ids.is_empty() {
        for (owner, field, target) in repo::links_of(db, &ids).await? {
            links.entry((owner, field)).or_default().push(target);
        }
    }
    rows.iter()
        .map(|row| {
            let mut out = Map::new();
            out.insert("key".into(), Value::String(row.id.to_string()));
            if let Value::Object(data) = &row.data {
                out.extend(data.clone());
            }
            for f in spec.fields.iter().filter(|f| f.is_ref()) {
                let targets = links.get(&(row.id, f.name.to_owned()));
                match (f.kind, targets) {
                    (Kind::Ref(_), Some(t)) if !t.is_empty() => {
                        out.insert(f.name.into(), Value::String(t[0].to_string()));
                    }
                    (Kind::RefList(..), Some(t)) if !t.is_empty() => {
                        let keys = t.iter().map(|id| Value::String(id.to_string())).collect();
                        out.insert(f.name.into(), Value::Array(keys));
                    }
                    _ if f.always => {
                        out.insert(f.name.into(), Value::Null);
                    }
                    _ => {}
                }
            }
            let ts = |t: time::OffsetDateTime| t.format(&Rfc3339).map_err(AppError::internal);
            out.insert("created_at".into(), Value::String(ts(row.created_at)?));
            out.insert("updated_at".into(), Value::String(ts(row.updated_at)?));
            Ok(Value::Object(out))
        })
        .collect()
}
