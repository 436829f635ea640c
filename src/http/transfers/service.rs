//! The HTTP faces of export and import (`GET /t/{slug}/export`, `POST /tenants/import`): the
//! very code of `kultiva tenant export` / `import`, with what a caller over the network needs
//! around it: an hourly budget per account, an audit row, and the file on disk, never in
//! memory.
//!
//! The export is written whole to a file in `STORAGE_DIR/.transfers/`, then streamed from it.
//! A channel straight into the response would start sooner, but then a slow client would hold
//! the export's `REPEATABLE READ` snapshot (and a session of the garden's server) open for as
//! long as it takes to download; with the file the snapshot lasts as long as the database takes,
//! and the writer stays the CLI's, unchanged. The file is unlinked as soon as it is open, so
//! nothing outlives the answer, a client that leaves mid-download included.

use std::path::PathBuf;
use std::time::Instant;

use serde_json::json;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::auth::Principal;
use crate::error::AppError;
use crate::garden::transfer::export::{self, ExportOptions};
use crate::http::audited::{record, within_transfer_budget};
use crate::state::AppState;
use crate::tenancy::TenantRecord;
use crate::tenancy::provision::ProvisionError;
use crate::tenancy::transfer::TransferError;

/// Beside the photo files (a disk the service writes anyway); not an id, so the photo sweeps,
/// which look only at folders named by ids, pass it by.
const TRANSFER_DIR: &str = ".transfers";

/// The audit names of the two actions (rows of the tool-call audit log).
pub const EXPORT_ACTION: &str = "http.garden_export";
pub const IMPORT_ACTION: &str = "http.garden_import";

/// A finished export, ready to stream.
pub struct Download {
    /// Already unlinked: the handle is the only way to the bytes.
    pub file: tokio::fs::File,
    pub bytes: u64,
    /// `kultiva-<slug>-<YYYY-MM-DD>.export.gz` (UTC date).
    pub filename: String,
}

/// The folder of transfer files, made if missing.
pub async fn transfer_dir(state: &AppState) -> Result<PathBuf, AppError> {
    let dir = state.config().storage_dir.join(TRANSFER_DIR);
    tokio::fs::create_dir_all(&dir)
        .await
        .map_err(|e| AppError::internal(format!("creating {}: {e}", dir.display())))?;
    Ok(dir)
}

/// Exports the caller's garden (the route checked that the caller administers it).
pub async fn export_garden(
    state: &AppState,
    principal: &Principal,
    tenant: &TenantRecord,
    member_emails: bool,
) -> Result<Download, AppError> {
    within_transfer_budget(state, principal).await?;
    let started = Instant::now();
    let path = transfer_dir(state)
        .await?
        .join(format!("export-{}.gz", Uuid::new_v4().simple()));
    let args = json!({"slug": tenant.slug.to_string(), "include_member_emails": member_emails});
    let result =
        export::export_tenant_with(state, &tenant.slug, &path, ExportOptions { member_emails })
            .await;
    let outcome = match &result {
        Ok(report) => Ok(report.bytes),
        Err(err) => Err(error_class(err)),
    };
    record(
        state,
        principal,
        Some(tenant.id),
        EXPORT_ACTION,
        &args,
        outcome,
        started,
    )
    .await;
    let report = result?;
    let file = tokio::fs::File::open(&path).await;
    if let Err(err) = tokio::fs::remove_file(&path).await {
        tracing::warn!(error = %err, path = %path.display(), "an export file was not removed");
    }
    let file = file.map_err(|e| AppError::internal(format!("opening the export file: {e}")))?;
    Ok(Download {
        file,
        bytes: report.bytes,
        filename: format!(
            "kultiva-{}-{}.export.gz",
            tenant.slug,
            OffsetDateTime::now_utc().date()
        ),
    })
}

/// What went wrong, for the audit row (never the message: it may name files or addresses).
pub fn error_class(err: &TransferError) -> &'static str {
    match err {
        TransferError::NotFound(_) => "not_found",
        TransferError::BadFile(_) => "bad_file",
        TransferError::TooLarge(_) => "too_large",
        TransferError::OverQuota(_) => "over_quota",
        TransferError::Provision(ProvisionError::SlugTaken(_)) => "slug_taken",
        TransferError::NotActive(..) | TransferError::Refused(_) | TransferError::Busy(_) => {
            "conflict"
        }
        _ => "internal",
    }
}

/// An upload waiting in the transfer folder; removed when dropped, whatever happened.
pub struct Upload {
    pub path: PathBuf,
}

impl Drop for Upload {
    fn drop(&mut self) {
        if let Err(err) = std::fs::remove_file(&self.path)
            && err.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(error = %err, path = %self.path.display(), "an upload was not removed");
        }
    }
}

/// A fresh name in the transfer folder for an upload.
pub async fn new_upload(state: &AppState) -> Result<Upload, AppError> {
    let path = transfer_dir(state)
        .await?
        .join(format!("import-{}.gz", Uuid::new_v4().simple()));
    Ok(Upload { path })
}

/// Checks an import may start at all (before its body is read): a person's account-wide
/// credential, not a service account, within the hourly budget and the garden cap.
pub async fn may_import(state: &AppState, principal: &Principal) -> Result<(), AppError> {
    if principal.account_type == crate::auth::AccountType::Service {
        return Err(AppError::new(
            crate::error::ErrorCode::Forbidden,
            "service accounts cannot create tenants",
        ));
    }
    principal.require_account_wide()?;
    within_transfer_budget(state, principal).await?;
    // An account at its garden cap is told before it uploads a large file for nothing (the
    // count is taken again, under the lock, when the garden is made).
    let mut tx = state.platform_pool().begin().await?;
    let created =
        crate::platform::tenants::repo::lock_and_count_created(&mut tx, principal.user_id).await?;
    drop(tx);
    let cap = state.config().max_gardens_per_account;
    if created >= i64::from(cap) {
        return Err(crate::platform::tenants::service::garden_limit(cap));
    }
    Ok(())
}

/// Makes the new garden `slug` from the uploaded file with the caller as its admin: the
/// checks of `kultiva tenant import` (slug in use, a damaged file; on failure nothing is
/// left), within the caller's `MAX_GARDENS_PER_ACCOUNT`.
pub async fn import_garden(
    state: &AppState,
    principal: &Principal,
    slug: &crate::tenancy::TenantSlug,
    upload: &Upload,
) -> Result<TenantRecord, AppError> {
    let started = Instant::now();
    // As in `POST /tenants`: the account's row stays locked until the garden is its own, so
    // concurrent creations of one account are counted one after the other.
    let mut tx = state.platform_pool().begin().await?;
    let cap = state.config().max_gardens_per_account;
    let created =
        crate::platform::tenants::repo::lock_and_count_created(&mut tx, principal.user_id).await?;
    if created >= i64::from(cap) {
        return Err(crate::platform::tenants::service::garden_limit(cap));
    }
    let options = crate::garden::transfer::import::ImportOptions {
        owner: Some(principal.user_id),
        ..Default::default()
    };
    let result =
        crate::garden::transfer::import::import_tenant(state, &upload.path, slug, options).await;
    let args = json!({"slug": slug.to_string()});
    let (tenant_id, outcome) = match &result {
        Ok(report) => (
            Some(report.tenant.id),
            Ok(std::fs::metadata(&upload.path).map_or(0, |m| m.len())),
        ),
        Err(err) => (None, Err(error_class(err))),
    };
    record(
        state,
        principal,
        tenant_id,
        IMPORT_ACTION,
        &args,
        outcome,
        started,
    )
    .await;
    let report = result?;
    tx.commit().await?;
    Ok(report.tenant)
}
