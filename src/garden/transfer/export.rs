//! `kultiva tenant export <slug> --out FILE`: one garden, whole, into one file (see [`file`]).
//!
//! The rows are read in one read-only `REPEATABLE READ` transaction on a session of their own,
//! so every table comes from the same instant while the garden keeps serving reads and writes.
//! The file also carries the garden's photo files (originals and renditions) and the platform
//! rows a restore needs: the tenant's name, kind and schema version, and its members.
//! Invitations, calendar-feed tokens, API keys and the tool-call audit are not exported: they
//! are secrets or history of the original garden, not its content.

use std::path::Path;

use futures_util::TryStreamExt;
use sqlx::PgConnection;
use time::format_description::well_known::Rfc3339;

use crate::progress::Progress;
use crate::state::AppState;
use crate::store::photos::{self as storage, PhotoStorage, StorageKey};
use crate::tenancy::registry::{self, TenantRecord, TenantStatus};
use crate::tenancy::transfer::catalog::{self, Table};
use crate::tenancy::transfer::file::{
    ExportWriter, FORMAT, FORMAT_VERSION, Header, MemberRow, Section, TenantFields,
};
use crate::tenancy::transfer::{TransferError, close, connect, count_rows};
use crate::tenancy::tx::WRITE_GATE;
use crate::tenancy::{SchemaName, TenantSlug};

/// What an export wrote.
#[derive(Debug, Clone)]
pub struct ExportReport {
    pub slug: String,
    pub schema_version: i64,
    pub tables: usize,
    pub rows: u64,
    pub files: usize,
    /// Photo files a row names but the storage does not have (already lost before the export).
    pub missing_files: usize,
    pub bytes: u64,
}

/// What an export leaves out.
#[derive(Debug, Clone, Copy)]
pub struct ExportOptions {
    /// Members' e-mail addresses (the CLI keeps them; over HTTP only when asked, as they are
    /// personal data of people other than the caller).
    pub member_emails: bool,
}

/// Writes the garden `slug` to `out` (replaced if it exists; written to `out.partial` first,
/// so a failed export leaves no file), members' e-mails included.
pub async fn export_tenant(
    state: &AppState,
    slug: &TenantSlug,
    out: &Path,
) -> Result<ExportReport, TransferError> {
    export_tenant_with(
        state,
        slug,
        out,
        ExportOptions {
            member_emails: true,
        },
    )
    .await
}

/// [`export_tenant`] with options (the HTTP export).
pub async fn export_tenant_with(
    state: &AppState,
    slug: &TenantSlug,
    out: &Path,
    options: ExportOptions,
) -> Result<ExportReport, TransferError> {
    let tenant = registry::find_by_slug(state.platform_pool(), slug)
        .await?
        .ok_or_else(|| TransferError::NotFound(slug.to_string()))?;
    if tenant.status == TenantStatus::Provisioning {
        return Err(TransferError::NotActive(
            slug.to_string(),
            tenant.status.as_str(),
        ));
    }
    if tenant.moving_to.is_some() {
        return Err(TransferError::Refused(format!(
            "tenant {slug} is being moved; export it after the move"
        )));
    }
    let placement = state
        .placements()
        .get(&tenant.placement)
        .ok_or_else(|| TransferError::UnknownPlacement(tenant.placement.clone()))?;
    let mut conn = connect(placement, "kultiva-export").await?;
    let result = export_on(state, &mut conn, &tenant, out, options).await;
    close(conn).await;
    result
}

async fn export_on(
    state: &AppState,
    conn: &mut PgConnection,
    tenant: &TenantRecord,
    out: &Path,
    options: ExportOptions,
) -> Result<ExportReport, TransferError> {
    let schema = &tenant.schema_name;
    sqlx::query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        .execute(&mut *conn)
        .await?;
    let schema_version = stored_version(conn, schema).await?;
    let tables = catalog::ordered_tables(conn, schema).await?;
    let sequences = catalog::sequences(conn, schema).await?;
    let photo_keys = photo_keys(conn, schema, &tables).await?;
    let members = crate::directory::memberships::repo::members(state.platform_pool(), tenant.id)
        .await?
        .into_iter()
        .map(|m| MemberRow {
            user_id: m.user_key,
            email: m.email.filter(|_| options.member_emails),
            role: m.role.as_str().to_owned(),
        })
        .collect();

    let progress = Progress::new(
        &format!("export {}", tenant.slug),
        (tables.len() + photo_keys.len()) as u64,
    );
    let mut writer = ExportWriter::create(out)?;
    writer.header(&Header {
        format: FORMAT.into(),
        format_version: FORMAT_VERSION,
        written_by: format!("kultiva {}", env!("CARGO_PKG_VERSION")),
        schema_version,
        exported_at: crate::error::now_rfc3339(),
        tenant: TenantFields {
            id: tenant.id,
            slug: tenant.slug.to_string(),
            name: tenant.name.clone(),
            kind: tenant.kind.as_str().to_owned(),
            placement: tenant.placement.clone(),
            created_at: tenant.created_at.format(&Rfc3339).unwrap_or_default(),
        },
        members,
        tables: tables.iter().map(|t| t.name.clone()).collect(),
        files: photo_keys.len(),
    })?;

    let mut counts = std::collections::BTreeMap::new();
    for table in &tables {
        progress.set_message(table.name.clone());
        writer.section(&Section::Table {
            name: table.name.clone(),
            columns: table.columns.clone(),
        })?;
        let mut rows = 0;
        let mut stream = conn.copy_out_raw(&table.copy_out_sql(schema)).await?;
        while let Some(chunk) = stream.try_next().await? {
            rows += count_rows(&chunk);
            writer.rows(&chunk)?;
        }
        drop(stream);
        writer.end_of_rows()?;
        counts.insert(table.name.clone(), rows);
        progress.inc(1);
    }
    for sequence in sequences {
        writer.section(&Section::Sequence {
            name: sequence.name,
            last_value: sequence.last_value,
        })?;
    }
    // The rows are read; the snapshot is not needed for the files.
    sqlx::query("ROLLBACK").execute(&mut *conn).await?;

    let store = storage::from_config(state.config());
    let prefix = format!("{}/", tenant.id);
    let (mut files, mut missing) = (0, 0);
    for key in photo_keys {
        progress.set_message("photo files");
        progress.inc(1);
        let Some(parsed) = StorageKey::parse(&key) else {
            missing += 1;
            tracing::warn!(key = %key, "a photo row names a malformed storage key; not exported");
            continue;
        };
        let bytes = match store.get(&parsed).await {
            Ok(bytes) => bytes,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                missing += 1;
                tracing::warn!(key = %key, "a photo file is missing from the storage; not exported");
                continue;
            }
            Err(err) => return Err(TransferError::Io(key, err)),
        };
        // Keys name their garden first; the file keeps only `<photo>/<file>`.
        let relative = key
            .strip_prefix(&prefix)
            .unwrap_or_else(|| key.split_once('/').map_or(key.as_str(), |(_, rest)| rest));
        writer.section(&Section::File {
            path: relative.to_owned(),
            bytes: bytes.len() as u64,
        })?;
        writer.file_bytes(&bytes)?;
        files += 1;
    }
    let rows: u64 = counts.values().sum();
    writer.section(&Section::End {
        rows: counts,
        files,
    })?;
    let bytes = writer.finish()?;
    progress.finish(format!(
        "{} tables, {rows} rows, {files} photo files, {bytes} bytes",
        tables.len()
    ));
    Ok(ExportReport {
        slug: tenant.slug.to_string(),
        schema_version,
        tables: tables.len(),
        rows,
        files,
        missing_files: missing,
        bytes,
    })
}

/// The schema version the garden's own migration ledger records (the registry's copy could
/// trail it for a moment during a migration).
async fn stored_version(
    conn: &mut PgConnection,
    schema: &SchemaName,
) -> Result<i64, TransferError> {
    let ledger = format!("{}.{WRITE_GATE}", schema.quoted());
    let exists: Option<String> = sqlx::query_scalar("SELECT to_regclass($1)::text")
        .bind(&ledger)
        .fetch_one(&mut *conn)
        .await?;
    if exists.is_none() {
        return Err(TransferError::Refused(format!(
            "schema {schema} has no migration ledger here (being moved?); try again"
        )));
    }
    let version: Option<i64> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "SELECT max(version) FROM {ledger} WHERE success"
    )))
    .fetch_one(&mut *conn)
    .await?;
    Ok(version.unwrap_or(0))
}

/// Every storage key the garden's photo rows name (originals and renditions).
async fn photo_keys(
    conn: &mut PgConnection,
    schema: &SchemaName,
    tables: &[Table],
) -> Result<Vec<String>, sqlx::Error> {
    if !tables.iter().any(|t| t.name == "diary_photos") {
        return Ok(Vec::new());
    }
    sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "SELECT k FROM {}.diary_photos p, \
         LATERAL unnest(ARRAY[p.original_key, p.rendition_512_key, p.rendition_1280_key]) k \
         WHERE k IS NOT NULL ORDER BY k",
        schema.quoted()
    )))
    .fetch_all(conn)
    .await
}
