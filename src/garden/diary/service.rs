//! Use cases of the diary and its analysis queue, shared by the REST routes and the MCP tools.
//! Writes take `commit`: false checks everything inside the transaction, then rolls it back (a
//! tool's dry run).

use serde_json::{Map, Value};
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use super::model::*;
use super::repo::{self, EntryRow};
use crate::auth::secrets::{SecretHash, random_secret};
use crate::error::{AppError, ErrorCode, ErrorDetail};
use crate::garden::environment::model::Environment;
use crate::garden::environment::service::{self as environment, EntryAt};
use crate::garden::ipm::input::today;
use crate::garden::ipm::service::require_plants;
use crate::garden::photos::repo::{PhotoDescriptor, descriptors_for_entries};
use crate::garden::photos::service::require_photos_of_entry;
use crate::rules::diary_analysis::{self as rule, AnalysisState, ClaimVerdict, SubmitVerdict};
use crate::state::AppState;
use crate::tenancy::{TenantRecord, TenantTx};
use crate::values::json::Patch;
use crate::values::page::{Page, PageRequest};

pub const LIST_MAX_LIMIT: i64 = 100;

fn not_found_at(what: &str, field: &str) -> AppError {
    AppError::not_found(what).with_details(vec![ErrorDetail::new(
        field,
        format!("no {what} with this key"),
        "not_found",
    )])
}

/// Now, at the precision PostgreSQL stores (microseconds), so what a write answers is what a
/// later read shows.
fn now() -> OffsetDateTime {
    let t = OffsetDateTime::now_utc();
    t.replace_nanosecond(t.nanosecond() / 1000 * 1000)
        .unwrap_or(t)
}

fn entry_not_found() -> AppError {
    AppError::not_found("diary entry")
}

/// A key that is not a UUID cannot name an entry: the same 404 as an unknown one.
pub fn parse_key(key: &str) -> Result<Uuid, AppError> {
    Uuid::parse_str(key.trim()).map_err(|_| entry_not_found())
}

async fn finish(tx: TenantTx, commit: bool) -> Result<(), AppError> {
    if commit {
        tx.commit().await?;
    } else {
        tx.rollback().await?;
    }
    Ok(())
}

/// Who writes an entry, and through which face.
#[derive(Debug, Clone)]
pub struct Author {
    pub id: Uuid,
    /// `user` or `service`.
    pub kind: &'static str,
    /// `rest` or `mcp`.
    pub via: &'static str,
}

/// Who changes or deletes an entry: its author, or an admin of the garden.
#[derive(Debug, Clone)]
pub struct Editor {
    pub id: Uuid,
    pub admin: bool,
}

/// Who marks an entry for analysis, and how they proved it.
#[derive(Debug, Clone)]
pub struct Marker {
    pub id: Uuid,
    /// Light mode: nobody authenticated.
    pub light: bool,
    /// A person signed in with a session (an access token), not an API key or a machine account.
    pub signed_in_person: bool,
}

fn forbidden(message: &'static str) -> AppError {
    AppError::new(ErrorCode::Forbidden, message)
}

fn effective(row: &EntryRow, now: OffsetDateTime) -> Option<String> {
    rule::effective(row.analysis_state, row.lease_expires_at, now).map(|s| s.as_str().to_owned())
}

fn photo_view(d: &PhotoDescriptor) -> Photo {
    Photo {
        key: d.key,
        position: d.position,
        content_type: d.content_type.clone(),
        width: d.width,
        height: d.height,
        byte_size: d.byte_size,
        rendition_status: d.rendition_status.clone(),
        renditions: d.renditions.clone(),
    }
}

/// Photos whose renditions are not ready: `thumbnail_pending` or `unavailable`.
fn pending_of(photos: &[PhotoDescriptor]) -> Vec<PendingPhoto> {
    photos
        .iter()
        .filter(|p| p.rendition_status != "ready")
        .map(|p| PendingPhoto {
            key: p.key,
            status: if p.rendition_status == "unavailable" {
                "unavailable".to_owned()
            } else {
                "thumbnail_pending".to_owned()
            },
        })
        .collect()
}

fn measurements_of(v: &Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}

fn entry_type_of(row: &EntryRow) -> EntryType {
    parse_entry_type(&row.entry_type).unwrap_or(EntryType::Note)
}

fn entry_view(
    row: &EntryRow,
    photos: &[PhotoDescriptor],
    env: Environment,
    now: OffsetDateTime,
) -> Entry {
    Entry {
        key: row.id,
        plant_key: row.plant_id,
        run_key: row.run_id,
        species_key: row.species_key.clone(),
        entry_type: entry_type_of(row),
        title: row.title.clone(),
        text: row.text.clone(),
        tags: row.tags.clone(),
        measurements: measurements_of(&row.measurements),
        entry_date: row.entry_date.to_string(),
        author_key: row.author_id,
        author_kind: row.author_kind.clone(),
        written_via: row.written_via.clone(),
        environment: env.readings,
        environment_status: env.status.map(str::to_owned),
        photos: photos.iter().map(photo_view).collect(),
        pending: pending_of(photos),
        analysis_state: effective(row, now),
        created_at: row.created_at,
        updated_at: row.updated_at,
    }
}

fn summary_view(row: &EntryRow, photos: usize, now: OffsetDateTime) -> EntrySummary {
    EntrySummary {
        key: row.id,
        plant_key: row.plant_id,
        run_key: row.run_id,
        species_key: row.species_key.clone(),
        entry_type: entry_type_of(row),
        title: row.title.clone(),
        tags: row.tags.clone(),
        measurements: measurements_of(&row.measurements),
        entry_date: row.entry_date.to_string(),
        author_key: row.author_id,
        author_kind: row.author_kind.clone(),
        written_via: row.written_via.clone(),
        photo_count: photos,
        analysis_state: effective(row, now),
        created_at: row.created_at,
        updated_at: row.updated_at,
    }
}

fn analysis_view(row: &EntryRow, now: OffsetDateTime) -> Analysis {
    let state = rule::effective(row.analysis_state, row.lease_expires_at, now);
    // A lapsed lease has ended for readers: neither its expiry nor its worker is shown.
    let leased = state == Some(AnalysisState::InProgress);
    Analysis {
        entry_key: row.id,
        analysis_state: state.map(|s| s.as_str().to_owned()),
        consent_at: row.consent_at,
        requested_at: row.requested_at,
        requested_by: row.requested_by,
        lease_expires_at: leased.then_some(row.lease_expires_at).flatten(),
        worker_id: leased.then(|| row.lease_worker_id.clone()).flatten(),
        result: row
            .analysis_result
            .clone()
            .and_then(|v| serde_json::from_value(v).ok()),
    }
}

/// What measured the entry's plant around the entry's time (`garden::environment`).
async fn environment_of(
    state: &AppState,
    tx: &mut TenantTx,
    row: &EntryRow,
) -> Result<Environment, AppError> {
    let at = EntryAt {
        entry: row.id,
        plant: row.plant_id,
        entry_date: row.entry_date,
        created_at: row.created_at,
    };
    let mut found = environment::of_entries(tx, environment::weather_on(state), &[at]).await?;
    Ok(found.remove(&row.id).unwrap_or_else(Environment::no_source))
}

async fn entry_with_photos(
    state: &AppState,
    tx: &mut TenantTx,
    row: &EntryRow,
    now: OffsetDateTime,
) -> Result<Entry, AppError> {
    let mut photos = descriptors_for_entries(tx, &[row.id]).await?;
    let mine = photos.remove(&row.id).unwrap_or_default();
    let env = environment_of(state, tx, row).await?;
    Ok(entry_view(row, &mine, env, now))
}

// ---------- entries ----------

pub async fn create_entry(
    state: &AppState,
    tenant: &TenantRecord,
    new: &EntryInput,
    author: &Author,
    commit: bool,
) -> Result<Entry, AppError> {
    let mut tx = TenantTx::begin(state, tenant).await?;
    let mut species_key = None;
    if let Some(p) = new.plant_key {
        let plant = require_plants(&mut tx, &[p], "body.plant_key", true, false).await?;
        species_key = plant.first().map(|p| p.species_key.clone());
    }
    if let Some(r) = new.run_key
        && !repo::run_exists(&mut tx, r, true).await?
    {
        return Err(not_found_at("planting run", "body.run_key"));
    }
    let now = now();
    let row = EntryRow {
        id: Uuid::now_v7(),
        plant_id: new.plant_key,
        run_id: new.run_key,
        species_key,
        entry_type: entry_type_str(new.entry_type).to_owned(),
        title: new.title.clone(),
        text: new.text.clone(),
        tags: new.tags.clone(),
        measurements: Value::Object(new.measurements.clone()),
        entry_date: new.entry_date.unwrap_or_else(today),
        author_id: author.id,
        author_kind: author.kind.to_owned(),
        written_via: author.via.to_owned(),
        created_at: now,
        updated_at: now,
        analysis_state: None,
        consent_at: None,
        requested_by: None,
        requested_at: None,
        lease_token_hash: None,
        lease_expires_at: None,
        lease_worker_id: None,
        analysis_result: None,
    };
    repo::insert_entry(&mut tx, &row).await?;
    // The text stays in the garden: receivers fetch it with a credential if they need it.
    crate::garden::webhooks::events::emit(
        &mut tx,
        tenant,
        "diary.entry_created",
        serde_json::json!({
            "key": row.id,
            "entry_type": row.entry_type,
            "title": row.title,
            "plant_key": row.plant_id,
            "run_key": row.run_id,
            "entry_date": row.entry_date.to_string(),
        }),
    )
    .await?;
    let env = environment_of(state, &mut tx, &row).await?;
    let entry = entry_view(&row, &[], env, now);
    finish(tx, commit).await?;
    Ok(entry)
}

/// Entries newest first (text withheld). A plant or run filter must name one of this garden.
pub async fn list_entries(
    state: &AppState,
    tenant: &TenantRecord,
    filter: &EntryFilter,
    page: PageRequest,
) -> Result<Page<EntrySummary>, AppError> {
    let mut tx = TenantTx::snapshot(state, tenant).await?;
    if let Some(p) = filter.plant {
        require_plants(&mut tx, &[p], "query.plant", false, false).await?;
    }
    if let Some(r) = filter.run
        && !repo::run_exists(&mut tx, r, false).await?
    {
        return Err(not_found_at("planting run", "query.run"));
    }
    let now = now();
    let (rows, total) = repo::list_entries(&mut tx, filter, now, page).await?;
    let ids: Vec<Uuid> = rows.iter().map(|r| r.id).collect();
    let photos = descriptors_for_entries(&mut tx, &ids).await?;
    tx.commit().await?;
    let items = rows
        .iter()
        .map(|r| summary_view(r, photos.get(&r.id).map_or(0, Vec::len), now))
        .collect();
    Ok(Page::new(items, total, page))
}

pub async fn get_entry(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
) -> Result<Entry, AppError> {
    Ok(get_entry_with_analysis(state, tenant, key).await?.0)
}

/// The entry and its analysis (one snapshot).
pub async fn get_entry_with_analysis(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
) -> Result<(Entry, Analysis), AppError> {
    let id = parse_key(key)?;
    let mut tx = TenantTx::snapshot(state, tenant).await?;
    let row = repo::get_entry(&mut tx, id, false)
        .await?
        .ok_or_else(entry_not_found)?;
    let now = now();
    let entry = entry_with_photos(state, &mut tx, &row, now).await?;
    tx.commit().await?;
    Ok((entry, analysis_view(&row, now)))
}

/// The locked entry an editor may change: 404 when missing, 403 for someone who is neither
/// its author nor an admin.
async fn editable(tx: &mut TenantTx, id: Uuid, editor: &Editor) -> Result<EntryRow, AppError> {
    let row = repo::get_entry(tx, id, true)
        .await?
        .ok_or_else(entry_not_found)?;
    if row.author_id != editor.id && !editor.admin {
        return Err(forbidden(
            "only the author of a diary entry or an admin of the garden may change it",
        ));
    }
    Ok(row)
}

pub async fn update_entry(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
    patch: &EntryPatch,
    editor: &Editor,
) -> Result<Entry, AppError> {
    let id = parse_key(key)?;
    let mut tx = TenantTx::begin(state, tenant).await?;
    let mut row = editable(&mut tx, id, editor).await?;
    match &patch.title {
        Patch::Keep => {}
        Patch::Clear => row.title = None,
        Patch::Set(t) => row.title = Some(t.clone()),
    }
    if let Some(t) = &patch.text {
        row.text = t.clone();
    }
    if let Some(k) = patch.entry_type {
        row.entry_type = entry_type_str(k).to_owned();
    }
    if let Some(t) = &patch.tags {
        row.tags = t.clone();
    }
    if let Some(d) = patch.entry_date {
        row.entry_date = d;
    }
    if let Some(m) = &patch.measurements {
        row.measurements = Value::Object(m.clone());
    }
    let now = now();
    row.updated_at = now;
    repo::update_entry(&mut tx, &row).await?;
    let entry = entry_with_photos(state, &mut tx, &row, now).await?;
    tx.commit().await?;
    Ok(entry)
}

/// Deletes an entry with its photos (rows, then files) (and its analysis, whatever its state: an agent's
/// later submit finds nothing).
pub async fn delete_entry(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
    editor: &Editor,
) -> Result<(), AppError> {
    let id = parse_key(key)?;
    let mut tx = TenantTx::begin(state, tenant).await?;
    editable(&mut tx, id, editor).await?;
    repo::delete_entry(&mut tx, id).await?;
    tx.commit().await?;
    // The photos' rows went with the entry and left their ids in the outbox: their files now.
    crate::garden::photos::service::forget_deleted(state, tenant).await;
    Ok(())
}

// ---------- marking (the web UI's side of the queue) ----------

/// Marks an entry for analysis. Only its author, signed in as a person (a session, not an API
/// key, not a machine account, not light mode), with consent; never an entry the tool server
/// wrote. An entry already in the queue or in progress stays as it is; a completed or failed
/// one is queued again (its old result is dropped).
pub async fn request_analysis(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
    marker: &Marker,
) -> Result<Analysis, AppError> {
    let id = parse_key(key)?;
    let mut tx = TenantTx::begin(state, tenant).await?;
    let row = repo::get_entry(&mut tx, id, true)
        .await?
        .ok_or_else(entry_not_found)?;
    if marker.light {
        return Err(forbidden(
            "in light mode nobody signs in, so no consent can be tied to a person: marking \
             entries for analysis needs full mode",
        ));
    }
    if !marker.signed_in_person {
        return Err(forbidden(
            "only a person signed in to the web UI marks entries for analysis (not an API key \
             or a service account)",
        ));
    }
    if row.author_id != marker.id {
        return Err(forbidden(
            "only the author of a diary entry may mark it for analysis",
        ));
    }
    if row.written_via != "rest" {
        return Err(AppError::new(
            ErrorCode::StateConflict,
            "entries written through the tool server (add_plant_diary_entry) are never queued \
             for analysis",
        ));
    }
    let now = now();
    let current = rule::effective(row.analysis_state, row.lease_expires_at, now);
    if matches!(
        current,
        Some(AnalysisState::Requested) | Some(AnalysisState::InProgress)
    ) {
        tx.commit().await?;
        return Ok(analysis_view(&row, now));
    }
    repo::mark(&mut tx, id, marker.id, now).await?;
    let row = repo::get_entry(&mut tx, id, false)
        .await?
        .ok_or_else(entry_not_found)?;
    tx.commit().await?;
    Ok(analysis_view(&row, now))
}

pub async fn get_analysis(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
) -> Result<Analysis, AppError> {
    let id = parse_key(key)?;
    let mut tx = TenantTx::read(state, tenant).await?;
    let row = repo::get_entry(&mut tx, id, false)
        .await?
        .ok_or_else(entry_not_found)?;
    tx.commit().await?;
    Ok(analysis_view(&row, now()))
}

/// Withdraws the request (the author or an admin): the entry leaves the queue, a lease in
/// progress ends (the agent's submit gets `conflict.not_claimed`), a result is deleted. 409 when
/// the entry was never marked.
pub async fn withdraw_analysis(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
    editor: &Editor,
) -> Result<(), AppError> {
    let id = parse_key(key)?;
    let mut tx = TenantTx::begin(state, tenant).await?;
    let row = editable(&mut tx, id, editor).await?;
    if row.analysis_state.is_none() {
        return Err(AppError::new(
            ErrorCode::StateConflict,
            "the entry is not marked for analysis",
        ));
    }
    repo::withdraw(&mut tx, id).await?;
    tx.commit().await?;
    Ok(())
}

// ---------- the agent's side of the queue ----------

/// Errors of claim and submit: the queue's own codes beside the ordinary ones.
#[derive(Debug)]
pub enum QueueError {
    App(AppError),
    /// In progress under a valid lease: until when, and the holder's worker label if any.
    AlreadyClaimed {
        until: Option<OffsetDateTime>,
        worker_id: Option<String>,
    },
    /// Not in the work queue (never marked, or already completed or failed).
    NotQueued(Option<AnalysisState>),
    /// Submit on an entry that is not in progress.
    NotClaimed(Option<AnalysisState>),
    /// The lease ran out, or the token is not the current lease's.
    LeaseExpired,
}

impl From<AppError> for QueueError {
    fn from(e: AppError) -> Self {
        Self::App(e)
    }
}

impl From<sqlx::Error> for QueueError {
    fn from(e: sqlx::Error) -> Self {
        Self::App(e.into())
    }
}

impl From<crate::tenancy::tx::TenantTxError> for QueueError {
    fn from(e: crate::tenancy::tx::TenantTxError) -> Self {
        Self::App(e.into())
    }
}

/// The work queue, oldest request first (text withheld). `include_stale`: also the entries
/// whose lease ran out without a result (false: only those never claimed).
pub async fn list_pending(
    state: &AppState,
    tenant: &TenantRecord,
    include_stale: bool,
    page: PageRequest,
) -> Result<Page<Pending>, AppError> {
    let mut tx = TenantTx::snapshot(state, tenant).await?;
    let now = now();
    let (rows, total) = repo::pending(&mut tx, now, include_stale, page).await?;
    let ids: Vec<Uuid> = rows.iter().map(|r| r.id).collect();
    let photos = descriptors_for_entries(&mut tx, &ids).await?;
    tx.commit().await?;
    let items = rows
        .iter()
        .map(|r| Pending {
            entry_key: r.id,
            plant_key: r.plant_id,
            run_key: r.run_id,
            species_key: r.species_key.clone(),
            entry_type: entry_type_of(r),
            title: r.title.clone(),
            tags: r.tags.clone(),
            entry_date: r.entry_date.to_string(),
            requested_at: r.requested_at,
            lease_lapsed: r.analysis_state == Some(AnalysisState::InProgress),
            photo_count: photos.get(&r.id).map_or(0, Vec::len),
        })
        .collect();
    Ok(Page::new(items, total, page))
}

/// A lease taken by a claim.
#[derive(Debug, Clone)]
pub struct Lease {
    pub entry_key: Uuid,
    /// Shown once; only its SHA-256 digest is stored. `None` for a dry run.
    pub lease_token: Option<String>,
    pub lease_expires_at: OffsetDateTime,
    pub lease_seconds: i64,
    /// The claimer's label for its worker, stored with the lease.
    pub worker_id: Option<String>,
    /// The claim took over a lease that had run out.
    pub took_over: bool,
}

/// Claims an entry of the work queue for `seconds` (1 to 3600), holding it for the worker the
/// claimer calls `worker_id` (free text, shown with the lease).
pub async fn claim(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
    holder: Uuid,
    seconds: i64,
    worker_id: Option<&str>,
    commit: bool,
) -> Result<Lease, QueueError> {
    let id = parse_key(key)?;
    let seconds = rule::lease_seconds(Some(seconds)).map_err(|reason| {
        AppError::validation(vec![ErrorDetail::new(
            "lease_seconds",
            reason,
            "value_error",
        )])
    })?;
    let mut tx = TenantTx::begin(state, tenant).await?;
    let now = now();
    let expires = now + Duration::seconds(seconds);
    let token = random_secret();
    let hash = SecretHash::of(&token);
    // The claim itself decides (one statement); the row is read only to say why not.
    let before = repo::get_entry(&mut tx, id, false)
        .await?
        .ok_or_else(entry_not_found)?;
    let took_over = before.analysis_state == Some(AnalysisState::InProgress);
    match repo::claim(
        &mut tx,
        id,
        hash.as_bytes(),
        holder,
        worker_id,
        now,
        expires,
    )
    .await?
    {
        Some(expires_at) => {
            finish(tx, commit).await?;
            Ok(Lease {
                entry_key: id,
                lease_token: commit.then_some(token),
                lease_expires_at: expires_at,
                lease_seconds: seconds,
                worker_id: worker_id.map(str::to_owned),
                took_over,
            })
        }
        None => {
            // Read again: a concurrent claim may have taken it since the first read.
            let row = repo::get_entry(&mut tx, id, false)
                .await?
                .ok_or_else(entry_not_found)?;
            tx.rollback().await?;
            match rule::claim(row.analysis_state, row.lease_expires_at, now) {
                ClaimVerdict::AlreadyClaimed | ClaimVerdict::Take => {
                    Err(QueueError::AlreadyClaimed {
                        until: row.lease_expires_at,
                        worker_id: row.lease_worker_id,
                    })
                }
                ClaimVerdict::NotQueued => Err(QueueError::NotQueued(row.analysis_state)),
            }
        }
    }
}

/// An agent's result as read from its arguments.
#[derive(Debug, Clone)]
pub struct Submission {
    pub lease_token: String,
    pub status: AnalysisState,
    pub summary: Option<String>,
    pub findings: Vec<AnalysisFinding>,
    pub recommended_actions: Vec<String>,
    /// Photos of this entry (checked here: any other id refuses the whole submission).
    pub analyzed_photo_ids: Vec<Uuid>,
    pub model: Option<String>,
    pub recipe_version: Option<String>,
    /// Why a failed analysis failed.
    pub error: Option<String>,
}

/// The result's own rules: completed needs a summary and has no error; failed needs a reason,
/// `error` (or, as before `error` existed, `summary`).
fn check_result(sub: &Submission) -> Result<(), AppError> {
    let refuse = |field: &str, reason: &str, code: &str| {
        Err(AppError::validation(vec![ErrorDetail::new(
            field, reason, code,
        )]))
    };
    match sub.status {
        AnalysisState::Completed if sub.summary.is_none() => {
            refuse("summary", "is required when status is completed", "missing")
        }
        AnalysisState::Completed if sub.error.is_some() => refuse(
            "error",
            "is only for status failed (a completed analysis states its result in summary)",
            "value_error",
        ),
        AnalysisState::Failed if sub.error.is_none() && sub.summary.is_none() => refuse(
            "error",
            "is required when status is failed: say why the analysis failed",
            "missing",
        ),
        _ => Ok(()),
    }
}

/// Stores the result of a claimed entry: only with the current lease token, before the lease
/// runs out. The disclaimer is the server's.
pub async fn submit(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
    sub: &Submission,
    submitted_by: &str,
    commit: bool,
) -> Result<Analysis, QueueError> {
    let id = parse_key(key)?;
    let mut tx = TenantTx::begin(state, tenant).await?;
    let row = repo::get_entry(&mut tx, id, true)
        .await?
        .ok_or_else(entry_not_found)?;
    // The entry first (another garden's key is not found whatever else is wrong), then the
    // result's own rules, then the lease.
    check_result(sub)?;
    if !sub.analyzed_photo_ids.is_empty() {
        let mut photos = descriptors_for_entries(&mut tx, &[id]).await?;
        let of_entry: Vec<Uuid> = photos
            .remove(&id)
            .unwrap_or_default()
            .iter()
            .map(|p| p.key)
            .collect();
        require_photos_of_entry(&sub.analyzed_photo_ids, &of_entry, "analyzed_photo_ids")?;
    }
    let now = now();
    let given = SecretHash::of(&sub.lease_token);
    let matches = row
        .lease_token_hash
        .as_deref()
        .and_then(SecretHash::from_bytes)
        .is_some_and(|h| h.matches(&given));
    match rule::submit(row.analysis_state, row.lease_expires_at, matches, now) {
        SubmitVerdict::Accept => {}
        SubmitVerdict::NotClaimed => {
            tx.rollback().await?;
            return Err(QueueError::NotClaimed(row.analysis_state));
        }
        SubmitVerdict::LeaseExpired => {
            tx.rollback().await?;
            return Err(QueueError::LeaseExpired);
        }
    }
    let result = AnalysisResult {
        status: sub.status.as_str().to_owned(),
        summary: sub.summary.clone(),
        findings: sub.findings.clone(),
        recommended_actions: sub.recommended_actions.clone(),
        analyzed_photo_ids: sub.analyzed_photo_ids.clone(),
        model: sub.model.clone(),
        recipe_version: sub.recipe_version.clone(),
        error: sub.error.clone(),
        disclaimer: DISCLAIMER.to_owned(),
        submitted_by: submitted_by.to_owned(),
        submitted_at: now,
    };
    let stored = serde_json::to_value(&result).map_err(AppError::internal)?;
    repo::complete(&mut tx, id, sub.status, &stored, now).await?;
    let after = repo::get_entry(&mut tx, id, false)
        .await?
        .ok_or_else(entry_not_found)?;
    finish(tx, commit).await?;
    Ok(analysis_view(&after, now))
}
