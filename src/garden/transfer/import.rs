//! `kultiva tenant import --in FILE --slug NEW_SLUG [--placement P] [--with-members]`: a new
//! garden from an export file.
//!
//! The garden is registered `provisioning` (never served, its slug taken) with its schema at
//! the file's schema version; every row is loaded in one transaction (ids kept), photo files
//! are written under the new garden's folder and their keys rewritten to it; then the schema is
//! migrated to the latest version, renditions still missing are queued, members are restored
//! if asked, and the garden is activated. Any failure removes the schema, the registry row and
//! the photo files (the new garden's folder, `STORAGE_DIR/<new tenant id>/`); a process killed
//! mid-way leaves a `provisioning` row, which the reaper removes with its schema and that
//! folder.
//!
//! The file is read within the bounds of [`ReadLimits`] (lines, photo files, the unpacked
//! stream) and its photo files within the garden's photo quota; each piece is read and unpacked
//! off the async workers, in one of the process's photo decode slots ([`Source`]), so imports
//! at once take no more memory than that many decodes. The photos' recorded sizes are the
//! sizes of the files written, never the file's own.
//!
//! The new garden gets a new tenant id (so a new schema name), the original's name, and its
//! kind (`personal` or `organisation`; a `platform` or `default` garden, of which a platform
//! has one, comes back as `organisation`), unless [`ImportOptions::kind`] says otherwise: the
//! original may still exist beside it.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use sqlx::PgConnection;
use uuid::Uuid;

use crate::auth::Role;
use crate::garden::photos::gate::{self, DecodeGate};
use crate::progress::Progress;
use crate::state::AppState;
use crate::store::photos::{self as storage, PhotoStorage, StorageKey};
use crate::tenancy::migrate::{self, latest_tenant_version};
use crate::tenancy::provision::{self, ProvisionOptions};
use crate::tenancy::registry::{MigrationTrigger, TenantKind, TenantRecord};
use crate::tenancy::transfer::file::{ExportReader, Header, MemberRow, ReadLimits, Section};
use crate::tenancy::transfer::{TransferError, catalog, close, connect, quote_ident};
use crate::tenancy::{SchemaName, TenantSlug};

/// Rows are sent to PostgreSQL in chunks of about this size.
const COPY_CHUNK: usize = 256 * 1024;

#[derive(Debug, Clone, Default)]
pub struct ImportOptions {
    /// Placement of the new garden; the configured default when `None`.
    pub placement: Option<String>,
    /// Give the file's members their roles again, where their account exists here (matched
    /// by account id, then by e-mail).
    pub with_members: bool,
    /// The new garden's kind (`personal` or `organisation`); the file's when `None`.
    pub kind: Option<TenantKind>,
    /// The account made admin (and recorded as creator) when the garden is activated
    /// (`POST /tenants/import`); `None` from the command line.
    pub owner: Option<Uuid>,
    // Test hook for `tests/api/transfer.rs` (an integration test is another crate, so it must
    // be public); hidden from the documentation, no command sets it.
    /// Test hook: stop after the rows and photo files are loaded, without any cleanup, as a
    /// killed process would.
    #[doc(hidden)]
    pub abandon_after_load: bool,
}

/// The kinds an import may give a garden: a platform has one `platform` and at most one
/// `default` garden, made by the service itself.
fn importable(kind: TenantKind) -> bool {
    matches!(kind, TenantKind::Personal | TenantKind::Organisation)
}

/// The kind of the new garden: the one asked for, else the file's (an older file without it,
/// or a one-of-a-kind garden, gives `organisation`).
fn kind_of(header: &Header, asked: Option<TenantKind>) -> Result<TenantKind, TransferError> {
    match asked {
        Some(kind) if importable(kind) => Ok(kind),
        Some(kind) => Err(TransferError::Refused(format!(
            "an import cannot make a {} garden (only personal or organisation)",
            kind.as_str()
        ))),
        None => Ok(TenantKind::parse(&header.tenant.kind)
            .filter(|kind| importable(*kind))
            .unwrap_or(TenantKind::Organisation)),
    }
}

/// What an import made.
#[derive(Debug, Clone)]
pub struct ImportReport {
    pub tenant: TenantRecord,
    /// The version the file was written at (the garden is now at the latest).
    pub file_version: i64,
    pub tables: usize,
    pub rows: u64,
    pub files: usize,
    pub members_restored: usize,
    /// Members of the file without an account here (by e-mail or id).
    pub members_skipped: Vec<String>,
}

/// The file being imported, read one piece at a time (the header, a section, a chunk of rows,
/// a photo file) on the blocking pool, each piece in one of the photo decode slots: reading
/// unpacks gzip and parses, as a decode does, and never runs on an async worker.
struct Source {
    /// `None` only while a piece is being read (or after that read was lost).
    reader: Option<ExportReader>,
    gate: &'static DecodeGate,
    /// Whose share of the slots the pieces take: the import's own (a garden not made yet).
    share: Uuid,
}

impl Source {
    async fn open(state: &AppState, input: &Path) -> Result<(Self, Header), TransferError> {
        let limits = ReadLimits::from_config(state.config());
        let gate = gate::of(state.config());
        let share = Uuid::new_v4();
        let input: PathBuf = input.to_path_buf();
        let (reader, header) =
            off_the_workers(gate, share, move || ExportReader::open(&input, limits)).await?;
        let source = Self {
            reader: Some(reader),
            gate,
            share,
        };
        Ok((source, header))
    }

    /// Runs `read` on the reader, off the async workers, in a decode slot.
    async fn read<T: Send + 'static>(
        &mut self,
        read: impl FnOnce(&mut ExportReader) -> Result<T, TransferError> + Send + 'static,
    ) -> Result<T, TransferError> {
        let mut reader = self.reader.take().ok_or_else(|| {
            TransferError::bad_file("the file could not be read past an earlier failure")
        })?;
        let (reader, result) = off_the_workers(self.gate, self.share, move || {
            let result = read(&mut reader);
            Ok((reader, result))
        })
        .await?;
        self.reader = Some(reader);
        result
    }
}

/// `work` on the blocking pool, holding a decode slot of `share` (waited for as long as it
/// takes, as the rendition workers do: every piece is bounded, so the wait is short).
async fn off_the_workers<T: Send + 'static>(
    gate: &'static DecodeGate,
    share: Uuid,
    work: impl FnOnce() -> Result<T, TransferError> + Send + 'static,
) -> Result<T, TransferError> {
    let permit = gate
        .acquire(share, None)
        .await
        .map_err(|_| TransferError::Refused("the decode slots are closed".into()))?;
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
        work()
    })
    .await
    .map_err(|e| TransferError::Io("reading the import".into(), std::io::Error::other(e)))?
}

/// Imports the file as the new garden `slug`; refuses a slug in use. On failure nothing of
/// the new garden is left.
pub async fn import_tenant(
    state: &AppState,
    input: &Path,
    slug: &TenantSlug,
    options: ImportOptions,
) -> Result<ImportReport, TransferError> {
    let (mut reader, header) = Source::open(state, input).await?;
    let latest = latest_tenant_version();
    if header.schema_version < 1 || header.schema_version > latest {
        return Err(TransferError::bad_file(format!(
            "the file holds schema version {}; this kultiva knows versions 1 to {latest}",
            header.schema_version
        )));
    }
    let kind = kind_of(&header, options.kind)?;
    let tenant = provision::prepare(
        state,
        slug,
        &header.tenant.name,
        ProvisionOptions {
            placement: options.placement.clone(),
            target_version: Some(header.schema_version),
            kind,
            owner: options.owner,
        },
    )
    .await?;
    let progress = Progress::new(
        &format!("import {slug}"),
        (header.tables.len() + header.files) as u64,
    );
    let result = build(state, &mut reader, &header, tenant, &options, &progress).await;
    match result {
        Ok(report) => {
            progress.finish(format!(
                "{} tables, {} rows, {} photo files",
                report.tables, report.rows, report.files
            ));
            Ok(report)
        }
        Err((_, err @ TransferError::Injected(_))) if options.abandon_after_load => {
            // A simulated crash: nothing is cleaned up.
            Err(err)
        }
        Err((tenant, err)) => {
            progress.finish("failed; nothing kept");
            // The schema, the photo files written (the new garden's whole folder) and the row.
            provision::discard(state, &tenant).await;
            Err(err)
        }
    }
}

/// Everything after registration; hands the tenant back with the error for the cleanup.
async fn build(
    state: &AppState,
    reader: &mut Source,
    header: &Header,
    mut tenant: TenantRecord,
    options: &ImportOptions,
    progress: &Progress,
) -> Result<ImportReport, (TenantRecord, TransferError)> {
    let steps = async {
        let loaded = load(state, reader, header, &tenant, progress).await?;
        if options.abandon_after_load {
            return Err(TransferError::Injected("loaded"));
        }
        let outcome =
            migrate::migrate_tenant(state, &tenant, None, MigrationTrigger::Provision).await?;
        tenant.schema_version = outcome.to_version;
        recount_photo_bytes(state, &tenant, &loaded.written).await?;
        let Loaded {
            tables,
            rows,
            files,
            ..
        } = loaded;
        queue_missing_renditions(state, &tenant).await?;
        let (members_restored, members_skipped) = if options.with_members {
            restore_members(state, &tenant, &header.members).await?
        } else {
            (0, Vec::new())
        };
        provision::activate(state.platform_pool(), &mut tenant, options.owner).await?;
        Ok(ImportReport {
            tenant: tenant.clone(),
            file_version: header.schema_version,
            tables,
            rows,
            files,
            members_restored,
            members_skipped,
        })
    };
    let result: Result<ImportReport, TransferError> = steps.await;
    result.map_err(|err| (tenant.clone(), err))
}

/// What [`load`] loaded.
struct Loaded {
    tables: usize,
    rows: u64,
    files: usize,
    /// The size of every photo file written, by storage key.
    written: HashMap<String, i64>,
}

/// Loads every section in one transaction on the new garden's server.
async fn load(
    state: &AppState,
    reader: &mut Source,
    header: &Header,
    tenant: &TenantRecord,
    progress: &Progress,
) -> Result<Loaded, TransferError> {
    let placement = state
        .placements()
        .get(&tenant.placement)
        .ok_or_else(|| TransferError::UnknownPlacement(tenant.placement.clone()))?;
    let mut conn = connect(placement, "kultiva-import").await?;
    let result = load_on(state, &mut conn, reader, header, tenant, progress).await;
    // Closing without COMMIT (after a failure) rolls the load back.
    close(conn).await;
    result
}

async fn load_on(
    state: &AppState,
    conn: &mut PgConnection,
    reader: &mut Source,
    header: &Header,
    tenant: &TenantRecord,
    progress: &Progress,
) -> Result<Loaded, TransferError> {
    let schema = &tenant.schema_name;
    sqlx::query("BEGIN").execute(&mut *conn).await?;
    let known: HashMap<String, BTreeSet<String>> = catalog::ordered_tables(conn, schema)
        .await?
        .into_iter()
        .map(|t| (t.name, t.columns.into_iter().collect()))
        .collect();
    let sequences: BTreeSet<String> = catalog::sequences(conn, schema)
        .await?
        .into_iter()
        .map(|s| s.name)
        .collect();
    let store = storage::from_config(state.config());
    let quota = state.config().photo_quota_bytes_per_garden;
    let mut loaded: BTreeMap<String, u64> = BTreeMap::new();
    let mut files = 0;
    let mut written: HashMap<String, i64> = HashMap::new();
    let mut written_bytes: u64 = 0;
    let mut buf = Vec::with_capacity(COPY_CHUNK * 2);
    loop {
        match reader.read(|r| r.next_section()).await? {
            Section::Table { name, columns } => {
                progress.set_message(name.clone());
                check_table(&known, &name, &columns, &loaded)?;
                let table = catalog::Table {
                    name: name.clone(),
                    columns,
                };
                let mut copy = conn.copy_in_raw(&table.copy_in_sql(schema)).await?;
                loop {
                    let mut chunk = std::mem::take(&mut buf);
                    chunk.clear();
                    let read = reader
                        .read(move |r| {
                            let ended = r.rows_into(&mut chunk, COPY_CHUNK)?;
                            Ok((ended, chunk))
                        })
                        .await;
                    let ended = match read {
                        Ok((ended, chunk)) => {
                            buf = chunk;
                            ended
                        }
                        Err(err) => {
                            let _ = copy.abort("the export file is unreadable").await;
                            return Err(err);
                        }
                    };
                    if !buf.is_empty() {
                        copy.send(buf.as_slice()).await?;
                    }
                    if ended {
                        break;
                    }
                }
                let rows = copy.finish().await?;
                loaded.insert(name, rows);
                progress.inc(1);
                touch(state, tenant).await?;
            }
            Section::Sequence { name, last_value } => {
                if !sequences.contains(&name) {
                    return Err(TransferError::bad_file(format!(
                        "the file sets sequence {name:?}, which schema version {} does not have",
                        tenant.schema_version
                    )));
                }
                let sequence = catalog::Sequence { name, last_value };
                if let Some(sql) = sequence.restore_sql(schema) {
                    sqlx::query(sqlx::AssertSqlSafe(sql))
                        .execute(&mut *conn)
                        .await?;
                }
            }
            Section::File { path, bytes } => {
                progress.set_message("photo files");
                let key = photo_key(tenant.id, &path)?;
                // Refused before the file is read: the quota counts every byte written (a
                // file written twice twice), not what the photo rows say.
                if written_bytes.saturating_add(bytes) > quota {
                    return Err(over_quota(quota));
                }
                let data = reader.read(move |r| r.file_bytes(bytes)).await?;
                written_bytes += data.len() as u64;
                written.insert(key.as_str().to_owned(), data.len() as i64);
                store
                    .put(&key, data)
                    .await
                    .map_err(|e| TransferError::Io(key.as_str().to_owned(), e))?;
                files += 1;
                progress.inc(1);
                touch(state, tenant).await?;
            }
            Section::End {
                rows,
                files: expected_files,
            } => {
                let announced: BTreeSet<&String> = header.tables.iter().collect();
                if rows != loaded
                    || expected_files != files
                    || announced != loaded.keys().collect::<BTreeSet<_>>()
                {
                    return Err(TransferError::bad_file(format!(
                        "the file's header or trailer does not match its content \
                         (trailer: {} tables, {expected_files} files; read: {} tables, {files} files)",
                        rows.len(),
                        loaded.len()
                    )));
                }
                break;
            }
        }
    }
    rewrite_photo_keys(conn, schema, tenant.id, &known).await?;
    sqlx::query("COMMIT").execute(&mut *conn).await?;
    Ok(Loaded {
        tables: loaded.len(),
        rows: loaded.values().sum(),
        files,
        written,
    })
}

fn over_quota(quota: u64) -> TransferError {
    TransferError::OverQuota(format!(
        "the file's photo files take more than the garden's photo quota of {quota} bytes \
         (PHOTO_QUOTA_MB_PER_GARDEN); nothing was imported"
    ))
}

/// The photos' recorded sizes become those of the files written (a key whose file the import
/// did not have counts 0 for an original, nothing for a rendition): the garden's storage use
/// and quota are then what is on disk, whatever the file's rows said. At the latest schema.
async fn recount_photo_bytes(
    state: &AppState,
    tenant: &TenantRecord,
    written: &HashMap<String, i64>,
) -> Result<(), TransferError> {
    let placement = state
        .placements()
        .get(&tenant.placement)
        .ok_or_else(|| TransferError::UnknownPlacement(tenant.placement.clone()))?;
    let (keys, sizes): (Vec<&str>, Vec<i64>) =
        written.iter().map(|(k, n)| (k.as_str(), *n)).unzip();
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "WITH written(key, size) AS (SELECT * FROM unnest($1::text[], $2::bigint[])) \
         UPDATE {}.diary_photos SET \
           byte_size = COALESCE((SELECT size FROM written WHERE key = original_key), 0), \
           rendition_512_bytes = (SELECT size FROM written WHERE key = rendition_512_key), \
           rendition_1280_bytes = (SELECT size FROM written WHERE key = rendition_1280_key)",
        tenant.schema_name.quoted()
    )))
    .bind(keys)
    .bind(sizes)
    .execute(placement.pool())
    .await?;
    Ok(())
}

/// A long import shows progress, or the reaper would take it for an abandoned creation.
async fn touch(state: &AppState, tenant: &TenantRecord) -> Result<(), sqlx::Error> {
    crate::tenancy::registry::touch_provisioning(state.platform_pool(), tenant.id).await
}

/// A table section must name a table of the schema, once, with columns it has.
fn check_table(
    known: &HashMap<String, BTreeSet<String>>,
    name: &str,
    columns: &[String],
    loaded: &BTreeMap<String, u64>,
) -> Result<(), TransferError> {
    let Some(has) = known.get(name) else {
        return Err(TransferError::bad_file(format!(
            "the file has rows of table {name:?}, which the schema does not have"
        )));
    };
    if loaded.contains_key(name) {
        return Err(TransferError::bad_file(format!(
            "the file has rows of table {name:?} twice"
        )));
    }
    let distinct: BTreeSet<&String> = columns.iter().collect();
    if columns.is_empty() || distinct.len() != columns.len() {
        return Err(TransferError::bad_file(format!(
            "the file's columns of table {name:?} are empty or repeated"
        )));
    }
    if let Some(unknown) = columns.iter().find(|c| !has.contains(*c)) {
        return Err(TransferError::bad_file(format!(
            "the file has column {unknown:?} of table {name:?}, which the schema does not have"
        )));
    }
    Ok(())
}

/// `<photo id>/<file>` of the file → the new garden's storage key and the photo id.
fn photo_key(tenant: Uuid, relative: &str) -> Result<StorageKey, TransferError> {
    // The key's shape is `<tenant>/<photo id>/<known file name>`: nothing else parses.
    StorageKey::parse(&format!("{tenant}/{relative}"))
        .ok_or_else(|| TransferError::bad_file(format!("malformed photo file path {relative:?}")))
}

/// Photo keys name their garden first (`<tenant id>/<photo>/<file>`): point them at the new
/// garden's folder, where the files were written.
async fn rewrite_photo_keys(
    conn: &mut PgConnection,
    schema: &SchemaName,
    tenant: Uuid,
    known: &HashMap<String, BTreeSet<String>>,
) -> Result<(), sqlx::Error> {
    let Some(columns) = known.get("diary_photos") else {
        return Ok(());
    };
    let sets: Vec<String> = ["original_key", "rendition_512_key", "rendition_1280_key"]
        .into_iter()
        .filter(|c| columns.contains(*c))
        .map(|c| {
            let c = quote_ident(c);
            format!("{c} = $1 || substr({c}, strpos({c}, '/'))")
        })
        .collect();
    if sets.is_empty() {
        return Ok(());
    }
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "UPDATE {}.diary_photos SET {}",
        schema.quoted(),
        sets.join(", ")
    )))
    .bind(tenant.to_string())
    .execute(conn)
    .await?;
    Ok(())
}

/// Photos whose renditions were not made yet get their rendition job in the new garden
/// (jobs live in the platform schema, so they are not in the file).
async fn queue_missing_renditions(
    state: &AppState,
    tenant: &TenantRecord,
) -> Result<(), TransferError> {
    let placement = state
        .placements()
        .get(&tenant.placement)
        .ok_or_else(|| TransferError::UnknownPlacement(tenant.placement.clone()))?;
    let present: Option<String> = sqlx::query_scalar("SELECT to_regclass($1)::text")
        .bind(format!("{}.diary_photos", tenant.schema_name.quoted()))
        .fetch_one(placement.pool())
        .await?;
    if present.is_none() {
        return Ok(());
    }
    let pending: Vec<Uuid> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "SELECT id FROM {}.diary_photos WHERE rendition_status = 'pending'",
        tenant.schema_name.quoted()
    )))
    .fetch_all(placement.pool())
    .await?;
    let store = storage::from_config(state.config());
    for photo in pending {
        crate::garden::photos::repo::insert_job(
            state.platform_pool(),
            tenant.id,
            photo,
            store.identity(),
        )
        .await?;
    }
    Ok(())
}

/// Gives the file's members their roles in the new garden where their account exists here
/// (the same account, or an account with the same confirmed address); others are skipped.
async fn restore_members(
    state: &AppState,
    tenant: &TenantRecord,
    members: &[MemberRow],
) -> Result<(usize, Vec<String>), TransferError> {
    let mut restored = 0;
    let mut skipped = Vec::new();
    for member in members {
        let who = member
            .email
            .clone()
            .unwrap_or_else(|| member.user_id.to_string());
        let Some(role) = Role::parse(&member.role) else {
            skipped.push(format!("{who} (unknown role {:?})", member.role));
            continue;
        };
        // The same account (by id) if it is still active here, else an active account whose
        // address is confirmed: whoever registered an address without confirming it may not
        // own it, and must not inherit the file's role for it.
        let account: Option<Uuid> = sqlx::query_scalar(
            "SELECT id FROM platform.users WHERE id = $1 AND is_active \
             UNION ALL SELECT id FROM platform.users \
                 WHERE email = $2 AND email_verified AND is_active LIMIT 1",
        )
        .bind(member.user_id)
        .bind(member.email.as_deref())
        .fetch_optional(state.platform_pool())
        .await?;
        match account {
            Some(user) => {
                crate::directory::memberships::repo::add(
                    state.platform_pool(),
                    tenant.id,
                    user,
                    role,
                )
                .await?;
                restored += 1;
            }
            None => skipped.push(who),
        }
    }
    Ok((restored, skipped))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn photo_paths_land_in_the_new_gardens_folder_only() {
        let tenant = Uuid::new_v4();
        let photo = Uuid::new_v4();
        let key = photo_key(tenant, &format!("{photo}/original.jpg")).expect("key");
        assert_eq!(key.as_str(), format!("{tenant}/{photo}/original.jpg"));
        for bad in [
            format!("{photo}/../../etc/passwd"),
            "../x/original.jpg".to_owned(),
            format!("{photo}/evil.sh"),
            format!("{}/{photo}/original.jpg", Uuid::new_v4()),
        ] {
            assert!(photo_key(tenant, &bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn table_sections_must_match_the_schema() {
        let known: HashMap<String, BTreeSet<String>> = [(
            "sites".to_owned(),
            ["id".to_owned(), "name".to_owned()].into(),
        )]
        .into();
        let cols = |c: &[&str]| c.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let none = BTreeMap::new();
        assert!(check_table(&known, "sites", &cols(&["id", "name"]), &none).is_ok());
        assert!(check_table(&known, "plants", &cols(&["id"]), &none).is_err());
        assert!(check_table(&known, "sites", &cols(&["id", "secret"]), &none).is_err());
        assert!(check_table(&known, "sites", &cols(&["id", "id"]), &none).is_err());
        let once = [("sites".to_owned(), 1)].into();
        assert!(check_table(&known, "sites", &cols(&["id"]), &once).is_err());
    }
}
