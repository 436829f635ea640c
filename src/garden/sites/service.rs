//! Use cases of sites, shared by the REST routes and (later) the MCP tools.

use uuid::Uuid;

use super::model::{NewSite, Site};
use super::repo;
use crate::error::AppError;
use crate::http::pagination::{Page, PageRequest};
use crate::state::AppState;
use crate::tenancy::{TenantRecord, TenantTx};

pub const LIST_MAX_LIMIT: i64 = 200;

pub async fn list_sites(
    state: &AppState,
    tenant: &TenantRecord,
    page: PageRequest,
) -> Result<Page<Site>, AppError> {
    let mut tx = TenantTx::begin(state, tenant).await?;
    let total = repo::count(&mut tx).await?;
    let items = if total > page.skip {
        repo::list(&mut tx, page).await?
    } else {
        Vec::new()
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
    let mut tx = TenantTx::begin(state, tenant).await?;
    let site = repo::get(&mut tx, id).await?;
    tx.commit().await?;
    site.ok_or_else(|| AppError::not_found("site"))
}

pub async fn create_site(
    state: &AppState,
    tenant: &TenantRecord,
    new: &NewSite,
) -> Result<Site, AppError> {
    let mut tx = TenantTx::begin(state, tenant).await?;
    let Some(site) = repo::insert(&mut tx, new).await? else {
        tx.rollback().await?;
        return Err(AppError::duplicate(format!(
            "a site named {:?} exists",
            new.name
        )));
    };
    tx.commit().await?;
    Ok(site)
}
