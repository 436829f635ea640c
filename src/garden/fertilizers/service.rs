//! Use cases of a garden's fertilisers, shared by the REST routes, the MCP tools, the mixing
//! protocol (`calculations::service::ProductSource::Garden`) and nutrient plans.

use serde_json::{Map, Value};
use uuid::Uuid;

use super::model::{GardenFertilizer, Owner, TENANT_PREFIX};
use super::repo::{self, Filter};
use crate::catalog::engine::fields::{Mode, check_object};
use crate::catalog::engine::service::{self as catalog, ListParams};
use crate::catalog::fertilizers::model::FERTILIZER;
use crate::error::{AppError, ErrorCode};
use crate::state::AppState;
use crate::tenancy::{TenantRecord, TenantTx};
use crate::values::page::{Page, PageRequest};

/// A fertiliser key: a global catalogue UUID or `tenant:<uuid>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    Global(Uuid),
    Garden(Uuid),
}

pub fn parse_key(key: &str) -> Option<Key> {
    match key.strip_prefix(TENANT_PREFIX) {
        Some(own) => Uuid::parse_str(own).ok().map(Key::Garden),
        None => Uuid::parse_str(key).ok().map(Key::Global),
    }
}

/// A catalogue record marked global.
pub fn global_view(mut v: Value) -> GardenFertilizer {
    if let Some(m) = v.as_object_mut() {
        m.insert("owner".into(), Value::from("global"));
    }
    GardenFertilizer(v)
}

fn forbidden_global(what: &str) -> AppError {
    AppError::new(
        ErrorCode::Forbidden,
        format!(
            "global fertilisers are shared by every garden and cannot be {what} here; \
             create the garden's own product instead (POST /fertilizers)"
        ),
    )
}

/// The fertiliser of a key in this garden's scope (global or own); `None` when unknown, also
/// for a key of another garden's product.
pub async fn resolve(
    state: &AppState,
    tx: &mut TenantTx,
    key: &str,
) -> Result<Option<GardenFertilizer>, AppError> {
    match parse_key(key) {
        None => Ok(None),
        Some(Key::Garden(id)) => Ok(repo::get(tx, id).await?),
        Some(Key::Global(id)) => match catalog::get(state, &FERTILIZER, &id.to_string()).await {
            Ok(v) => Ok(Some(global_view(v))),
            Err(e) if e.code() == ErrorCode::EntityNotFound => Ok(None),
            Err(e) => Err(e),
        },
    }
}

/// Which fertilisers a listing shows.
#[derive(Debug, Clone, Default)]
pub struct Query {
    pub q: Option<String>,
    pub owner: Option<Owner>,
    pub fertilizer_type: Option<String>,
    pub form: Option<String>,
    pub is_organic: Option<bool>,
}

/// Global products first (by name), then the garden's own (by name), paged as one list.
pub async fn list(
    state: &AppState,
    tenant: &TenantRecord,
    query: &Query,
    page: PageRequest,
) -> Result<Page<GardenFertilizer>, AppError> {
    let q = query
        .q
        .as_deref()
        .map(str::trim)
        .filter(|q| !q.is_empty())
        .map(str::to_owned);
    let (mut items, global_total) = if query.owner != Some(Owner::Garden) {
        let mut filters = Vec::new();
        if let Some(t) = &query.fertilizer_type {
            filters.push(("fertilizer_type", t.clone()));
        }
        if let Some(f) = &query.form {
            filters.push(("form", f.clone()));
        }
        if let Some(o) = query.is_organic {
            filters.push(("is_organic", o.to_string()));
        }
        let params = ListParams {
            q: q.clone(),
            filters,
        };
        let listed = catalog::list(state, &FERTILIZER, &params, None, page).await?;
        (
            listed
                .items
                .into_iter()
                .map(global_view)
                .collect::<Vec<_>>(),
            listed.total,
        )
    } else {
        (Vec::new(), 0)
    };
    let mut own_total = 0;
    if query.owner != Some(Owner::Global) {
        let filter = Filter {
            q,
            fertilizer_type: query.fertilizer_type.clone(),
            form: query.form.clone(),
            is_organic: query.is_organic,
        };
        let mut tx = TenantTx::snapshot(state, tenant).await?;
        own_total = repo::count(&mut tx, &filter).await?;
        let room = page.limit - i64::try_from(items.len()).unwrap_or(page.limit);
        let skip = (page.skip - global_total).max(0);
        if room > 0 && own_total > skip {
            items.extend(repo::list(&mut tx, &filter, skip, room).await?);
        }
        tx.commit().await?;
    }
    Ok(Page::new(items, global_total + own_total, page))
}

pub async fn get(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
) -> Result<GardenFertilizer, AppError> {
    let mut tx = TenantTx::read(state, tenant).await?;
    let found = resolve(state, &mut tx, key).await?;
    tx.commit().await?;
    found.ok_or_else(|| AppError::not_found("fertiliser"))
}

fn name_of(doc: &Map<String, Value>) -> String {
    doc.get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// A garden's own product entered without a label source (or with it cleared: null) names the garden
/// as its source: its figures are the grower's, and every fertiliser carries a source.
fn default_label_source(doc: &mut Map<String, Value>) {
    // A value of the wrong type or a blank one is left to the field checks (422).
    if doc.get("label_source").is_none_or(Value::is_null) {
        doc.insert(
            "label_source".to_owned(),
            Value::String(crate::catalog::fertilizers::model::OWN_LABEL_SOURCE.to_owned()),
        );
    }
}

fn duplicate(name: &str) -> AppError {
    AppError::duplicate(format!("a fertiliser named {name:?} exists in this garden"))
}

/// Creates one of the garden's own fertilisers (the global products' fields and rules).
pub async fn create(
    state: &AppState,
    tenant: &TenantRecord,
    mut body: Map<String, Value>,
) -> Result<GardenFertilizer, AppError> {
    default_label_source(&mut body);
    let doc = catalog::check_new(&FERTILIZER, body)?;
    let name = name_of(&doc);
    let mut tx = TenantTx::begin(state, tenant).await?;
    let Some(created) = repo::insert(&mut tx, &name, &doc).await? else {
        return Err(duplicate(&name));
    };
    tx.commit().await?;
    Ok(created)
}

/// 404 for an unknown key, 403 for a global product, else the garden product's id.
async fn own_id(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
    what: &str,
) -> Result<Uuid, AppError> {
    match parse_key(key) {
        Some(Key::Garden(id)) => Ok(id),
        Some(Key::Global(id)) => {
            // Only a product that exists is "global": anything else is simply unknown.
            catalog::get(state, &FERTILIZER, &id.to_string()).await?;
            let _ = tenant;
            Err(forbidden_global(what))
        }
        None => Err(AppError::not_found("fertiliser")),
    }
}

/// Partial update of an own product: omitted fields stay, null clears an optional field; the
/// rules are checked on the merged record.
pub async fn patch(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
    body: Map<String, Value>,
) -> Result<GardenFertilizer, AppError> {
    let id = own_id(state, tenant, key, "changed").await?;
    let mut tx = TenantTx::begin(state, tenant).await?;
    let existing = repo::get_for_update(&mut tx, id)
        .await?
        .ok_or_else(|| AppError::not_found("fertiliser"))?;
    let mut errors = Vec::new();
    let changes = check_object(FERTILIZER.fields, body, Mode::Patch, "body.", &mut errors);
    if !errors.is_empty() {
        return Err(AppError::validation(errors));
    }
    let Value::Object(mut doc) = existing.0 else {
        return Err(AppError::internal("a stored fertiliser is not an object"));
    };
    for extra in ["key", "owner", "created_at", "updated_at"] {
        doc.remove(extra);
    }
    for (k, v) in changes {
        doc.insert(k, v);
    }
    default_label_source(&mut doc);
    (FERTILIZER.rules)(&doc, &mut errors);
    if !errors.is_empty() {
        return Err(AppError::validation(errors));
    }
    let doc = catalog::prune(&FERTILIZER, doc);
    let name = name_of(&doc);
    let Some(updated) = repo::update(&mut tx, id, &name, &doc).await? else {
        return Err(duplicate(&name));
    };
    tx.commit().await?;
    Ok(updated)
}

/// Deletes an own product; 409 while a plan of the garden doses it.
pub async fn delete(state: &AppState, tenant: &TenantRecord, key: &str) -> Result<(), AppError> {
    let id = own_id(state, tenant, key, "deleted").await?;
    let mut tx = TenantTx::begin(state, tenant).await?;
    if repo::get_for_update(&mut tx, id).await?.is_none() {
        return Err(AppError::not_found("fertiliser"));
    }
    let key = format!("{TENANT_PREFIX}{id}");
    let used = crate::garden::nutrient_plans::repo::plans_using_product(&mut tx, &key).await?;
    if used > 0 {
        return Err(AppError::new(
            ErrorCode::StateConflict,
            format!(
                "this fertiliser is dosed by {used} of the garden's nutrient plan(s); remove it there first"
            ),
        ));
    }
    repo::delete(&mut tx, id).await?;
    tx.commit().await?;
    Ok(())
}
