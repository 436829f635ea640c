//! Use cases of sites, shared by the REST routes and (later) the MCP tools.

use uuid::Uuid;

use super::model::{NewSite, Site, SitePatch};
use super::repo;
use crate::error::{AppError, ErrorCode};
use crate::state::AppState;
use crate::tenancy::{TenantRecord, TenantTx};
use crate::values::page::{Page, PageRequest};

pub const LIST_MAX_LIMIT: i64 = 200;

pub async fn list_sites(
    state: &AppState,
    tenant: &TenantRecord,
    page: PageRequest,
) -> Result<Page<Site>, AppError> {
    // One statement; the count is asked separately only for a page past the end (empty, so
    // nothing it could disagree with).
    let mut tx = TenantTx::read(state, tenant).await?;
    let (items, matched) = repo::list(&mut tx, page).await?;
    let total = match matched {
        Some(n) => n,
        None => repo::count(&mut tx).await?,
    };
    tx.commit().await?;
    Ok(Page::new(items, total, page))
}

/// A key that is not a UUID cannot name a site: the same 404 as an unknown one.
pub async fn get_site(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
) -> Result<Site, AppError> {
    let id = Uuid::parse_str(key).map_err(|_| AppError::not_found("site"))?;
    let mut tx = TenantTx::read(state, tenant).await?;
    let site = repo::get(&mut tx, id).await?;
    tx.commit().await?;
    site.ok_or_else(|| AppError::not_found("site"))
}

pub async fn create_site(
    state: &AppState,
    tenant: &TenantRecord,
    new: &NewSite,
) -> Result<Site, AppError> {
    create_site_checked(state, tenant, new, true).await
}

/// Creates a site; `write: false` runs every check (the name too) and writes nothing (a tool's
/// dry run).
pub async fn create_site_checked(
    state: &AppState,
    tenant: &TenantRecord,
    new: &NewSite,
    write: bool,
) -> Result<Site, AppError> {
    let mut tx = TenantTx::begin(state, tenant).await?;
    let Some(site) = repo::insert(&mut tx, new).await? else {
        tx.rollback().await?;
        return Err(AppError::duplicate(format!(
            "a site named {:?} exists",
            new.name
        )));
    };
    if write {
        tx.commit().await?;
    } else {
        tx.rollback().await?;
    }
    Ok(site)
}

pub async fn patch_site(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
    patch: &SitePatch,
) -> Result<Site, AppError> {
    let id = Uuid::parse_str(key).map_err(|_| AppError::not_found("site"))?;
    let mut tx = TenantTx::begin(state, tenant).await?;
    let current = repo::lock(&mut tx, id)
        .await?
        .ok_or_else(|| AppError::not_found("site"))?;
    let name = patch.name.clone().unwrap_or_else(|| current.name.clone());
    if repo::name_taken(&mut tx, &name, id).await? {
        return Err(AppError::duplicate(format!("a site named {name:?} exists")));
    }
    let site = repo::update(&mut tx, &current, &name, patch)
        .await?
        .ok_or_else(|| AppError::not_found("site"))?;
    tx.commit().await?;
    Ok(site)
}

/// Deletes an empty site: 409 `STATE_CONFLICT` while locations stand in it (plants stand in
/// locations, so a site without locations has no plants).
pub async fn delete_site(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
) -> Result<(), AppError> {
    let id = Uuid::parse_str(key).map_err(|_| AppError::not_found("site"))?;
    let mut tx = TenantTx::begin(state, tenant).await?;
    if repo::lock(&mut tx, id).await?.is_none() {
        return Err(AppError::not_found("site"));
    }
    let locations = repo::location_count(&mut tx, id).await?;
    if locations > 0 {
        return Err(AppError::new(
            ErrorCode::StateConflict,
            format!("the site has {locations} location(s); move or delete them first"),
        ));
    }
    repo::delete(&mut tx, id).await?;
    tx.commit().await?;
    Ok(())
}
