//! Use cases of diary photos, shared by the REST routes and the tool `get_diary_entry_photos`.
//!
//! An upload is checked whole before anything is written (type, signature, header dimensions,
//! full decode), its metadata stripped when `STORAGE_STRIP_EXIF` is on, stored under a
//! generated key, recorded, and queued for its renditions; the renditions are made by
//! [`super::worker`] off the request path.

use uuid::Uuid;

use std::time::Duration;

use super::media::{self, Format, PixelLimits, Rejection};
use super::model::{PHOTOS_PER_ENTRY_MAX, Photo, StorageUsage};
use super::repo::{self, PhotoRow};
use crate::error::{AppError, ErrorCode, ErrorDetail};
use crate::garden::diary::service::Editor;
use crate::state::AppState;
use crate::store::photos::{self as storage, PhotoStorage, StorageKey};
use crate::tenancy::{TenantRecord, TenantTx};
use crate::values::page::{Page, PageRequest};

pub const LIST_MAX_LIMIT: i64 = PHOTOS_PER_ENTRY_MAX;

/// A key that is not a UUID cannot name a record: the same 404 as an unknown one.
fn parse_key(key: &str, what: &str) -> Result<Uuid, AppError> {
    Uuid::parse_str(key.trim()).map_err(|_| AppError::not_found(what))
}

fn unsupported(message: String) -> AppError {
    AppError::new(ErrorCode::UnsupportedMediaType, message).with_details(vec![ErrorDetail::new(
        "header.content-type",
        format!("accepted types: {}", media::ACCEPTED_TYPES),
        "unsupported_media_type",
    )])
}

fn invalid_body(reason: impl Into<String>) -> AppError {
    AppError::validation(vec![ErrorDetail::new("body", reason, "value_error")])
}

/// The declared type of an upload (`Content-Type`, parameters removed, any case).
pub fn declared_format(content_type: Option<&str>) -> Result<Format, AppError> {
    let mime = content_type
        .map(|c| {
            c.split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase()
        })
        .unwrap_or_default();
    Format::from_content_type(&mime).ok_or_else(|| {
        let got = if mime.is_empty() {
            "no Content-Type".to_owned()
        } else {
            mime.clone()
        };
        unsupported(format!(
            "photos must be sent as {} ({got} is not accepted; HEIC and other formats: \
             convert to JPEG first)",
            media::ACCEPTED_TYPES
        ))
    })
}

fn rejection_error(rejection: Rejection, limits: PixelLimits) -> AppError {
    match rejection {
        Rejection::NotAnImage => unsupported(format!(
            "the body is not a JPEG, PNG or WebP image (accepted types: {})",
            media::ACCEPTED_TYPES
        )),
        Rejection::Mismatch { declared, found } => unsupported(format!(
            "the body is {} but was declared {}; send it with its own type (accepted types: {})",
            found.content_type(),
            declared.content_type(),
            media::ACCEPTED_TYPES
        )),
        Rejection::TooManyPixels { width, height } => invalid_body(format!(
            "the image is {width} x {height} pixels; at most {} megapixels and {} pixels a side \
             are accepted",
            limits.max_pixels / 1_000_000,
            limits.max_edge
        )),
        Rejection::TooCompressed {
            width,
            height,
            bytes,
        } => AppError::new(
            ErrorCode::ImageTooCompressed,
            format!(
                "the image is {width} x {height} pixels in {bytes} bytes: more than {} pixels per \
                 byte, which photos never have (a decompression bomb); nothing was stored",
                limits.max_pixels_per_byte
            ),
        )
        .with_details(vec![ErrorDetail::new(
            "body",
            format!(
                "at most {} pixels per byte of file above {} megapixels (PHOTO_MAX_PIXELS_PER_BYTE)",
                limits.max_pixels_per_byte,
                media::DENSITY_CHECK_MIN_PIXELS / 1_000_000
            ),
            "image_too_compressed",
        )]),
        Rejection::Undecodable(why) => invalid_body(format!(
            "the image cannot be decoded (corrupt or truncated): {why}"
        )),
    }
}

/// 404 unless the diary entry exists in this garden.
pub async fn require_entry(
    state: &AppState,
    tenant: &TenantRecord,
    entry_key: &str,
) -> Result<Uuid, AppError> {
    let entry = parse_key(entry_key, "diary entry")?;
    let mut tx = TenantTx::read(state, tenant).await?;
    let exists = repo::entry_author(&mut tx, entry, false).await?.is_some();
    tx.commit().await?;
    if !exists {
        return Err(AppError::not_found("diary entry"));
    }
    Ok(entry)
}

/// Photos of an entry are part of it: adding or deleting one needs the right to edit the
/// entry (its author, or an admin of the garden), as `PATCH /diary-entries/{key}` does.
fn may_edit(author: Uuid, editor: &Editor) -> Result<(), AppError> {
    if author != editor.id && !editor.admin {
        return Err(AppError::new(
            ErrorCode::Forbidden,
            "only the author of a diary entry or an admin of the garden may add or delete its \
             photos",
        ));
    }
    Ok(())
}

/// The entry's id when it exists in this garden (404) and `editor` may change it (403); checked
/// before an upload's body is read.
pub async fn require_editable_entry(
    state: &AppState,
    tenant: &TenantRecord,
    entry_key: &str,
    editor: &Editor,
) -> Result<Uuid, AppError> {
    let entry = parse_key(entry_key, "diary entry")?;
    let mut tx = TenantTx::read(state, tenant).await?;
    let author = repo::entry_author(&mut tx, entry, false).await?;
    tx.commit().await?;
    may_edit(
        author.ok_or_else(|| AppError::not_found("diary entry"))?,
        editor,
    )?;
    Ok(entry)
}

fn quota_exceeded(used: i64, adding: usize, quota: u64) -> AppError {
    AppError::new(
        ErrorCode::StorageQuotaExceeded,
        format!(
            "the garden's photos take {used} bytes of its {quota} (PHOTO_QUOTA_MB_PER_GARDEN); \
             {adding} more do not fit. Delete photos or ask the operator for a larger quota; \
             nothing was stored"
        ),
    )
}

/// Adds a photo to a diary entry. `bytes` is the whole body, `content_type` the header.
pub async fn upload(
    state: &AppState,
    tenant: &TenantRecord,
    entry_key: &str,
    content_type: Option<&str>,
    bytes: Vec<u8>,
    editor: &Editor,
) -> Result<Photo, AppError> {
    let entry = require_editable_entry(state, tenant, entry_key, editor).await?;
    let declared = declared_format(content_type)?;
    if bytes.is_empty() {
        return Err(invalid_body("the photo is empty (0 bytes)"));
    }
    let limits = PixelLimits::from_config(state.config());
    // The header alone refuses a bomb, before any wait or decode.
    media::screen(&bytes, declared, limits).map_err(|r| rejection_error(r, limits))?;
    let quota = state.config().photo_quota_bytes_per_garden;
    // A full garden is refused before the decode too (checked again, locked, when recording).
    let before = garden_usage(state, tenant).await?;
    if before.bytes_used.saturating_add(bytes.len() as i64) as u64 > quota {
        return Err(quota_exceeded(before.bytes_used, bytes.len(), quota));
    }
    // Checking decodes the whole picture: off the async threads, in one of the process's
    // decode slots (at most PHOTO_DECODE_PER_GARDEN of them for this garden).
    let wait = Duration::from_secs(u64::from(state.config().photo_decode_wait_seconds));
    let permit = super::gate::of(state.config())
        .acquire(tenant.id, Some(wait))
        .await
        .map_err(|_| {
            AppError::new(
                ErrorCode::ServiceUnavailable,
                "photo decoding is busy (PHOTO_DECODE_CONCURRENCY, PHOTO_DECODE_PER_GARDEN); \
                 retry after the Retry-After seconds",
            )
        })?;
    let strip = state.config().storage_strip_exif;
    let (checked, stored) = tokio::task::spawn_blocking(move || {
        let _permit = permit;
        let checked = media::check(&bytes, declared, limits)?;
        let stored = if strip {
            media::strip_metadata(&bytes, checked.format).map_err(Rejection::Undecodable)?
        } else {
            bytes
        };
        Ok::<_, Rejection>((checked, stored))
    })
    .await
    .map_err(AppError::internal)?
    .map_err(|r| rejection_error(r, limits))?;

    let store = storage::from_config(state.config());
    let id = Uuid::now_v7();
    let key = StorageKey::original(tenant.id, id, checked.format);
    let mut tx = TenantTx::begin(state, tenant).await?;
    let Some(author) = repo::entry_author(&mut tx, entry, true).await? else {
        return Err(AppError::not_found("diary entry"));
    };
    may_edit(author, editor)?;
    let (count, position) = repo::count_and_next_position(&mut tx, entry).await?;
    if count >= PHOTOS_PER_ENTRY_MAX {
        return Err(AppError::new(
            ErrorCode::StateConflict,
            format!("a diary entry holds at most {PHOTOS_PER_ENTRY_MAX} photos"),
        ));
    }
    // One upload of this garden at a time past this point, so two cannot both fit.
    repo::lock_garden_quota(&mut tx, tenant.id).await?;
    let (used, _) = repo::usage(&mut tx).await?;
    if used.saturating_add(stored.len() as i64) as u64 > quota {
        return Err(quota_exceeded(used, stored.len(), quota));
    }
    let row = PhotoRow {
        id,
        entry_id: entry,
        position,
        content_type: checked.format.content_type().to_owned(),
        byte_size: stored.len() as i64,
        width: checked.width as i32,
        height: checked.height as i32,
        original_key: key.as_str().to_owned(),
        rendition_512_key: None,
        rendition_512_bytes: None,
        rendition_1280_key: None,
        rendition_1280_bytes: None,
        rendition_status: "pending".into(),
        exif_stripped: strip,
        uploaded_by: editor.id,
        created_at: time::OffsetDateTime::now_utc(),
    };
    repo::insert_photo(&mut tx, &row).await?;
    store.put(&key, stored).await.map_err(AppError::internal)?;
    if let Err(err) = tx.commit().await {
        forget_files(&store, tenant.id, id).await;
        return Err(err.into());
    }
    // The photo is recorded; its job follows. Should the queue not take it, the upload is
    // undone (the caller may retry) rather than leaving a photo no worker will render.
    if let Err(err) = repo::insert_job(state.platform_pool(), tenant.id, id, store.identity()).await
    {
        if let Ok(mut tx) = TenantTx::begin(state, tenant).await
            && repo::delete_photo(&mut tx, entry, id).await.is_ok()
        {
            let _ = tx.commit().await;
        }
        forget_files(&store, tenant.id, id).await;
        return Err(err.into());
    }
    super::worker::wake();
    Ok(Photo::from(&row))
}

/// The garden's photo storage: bytes of originals and renditions, and the quota.
pub async fn garden_usage(
    state: &AppState,
    tenant: &TenantRecord,
) -> Result<StorageUsage, AppError> {
    let mut tx = TenantTx::read(state, tenant).await?;
    let (bytes_used, photo_count) = repo::usage(&mut tx).await?;
    tx.commit().await?;
    let quota_bytes = state.config().photo_quota_bytes_per_garden;
    Ok(StorageUsage {
        bytes_used,
        quota_bytes: i64::try_from(quota_bytes).unwrap_or(i64::MAX),
        photo_count,
    })
}

/// After a delete committed: the deleted photos' files go now (what fails here stays in the
/// outbox for the sweep, so the delete itself has succeeded either way).
pub async fn forget_deleted(state: &AppState, tenant: &TenantRecord) {
    if let Err(err) = super::cleanup::drain_garden(state, tenant).await {
        tracing::warn!(tenant = %tenant.slug, error_code = err.code().as_str(),
            "deleted photos' files are left to the sweep");
    }
}

async fn forget_files(store: &dyn PhotoStorage, tenant: Uuid, photo: Uuid) {
    if let Err(err) = store.delete_photo(tenant, photo).await {
        tracing::warn!(error = %err, %photo, "photo files could not be removed");
    }
}

/// The photos of an entry, in their order (a 404 for an unknown entry).
pub async fn list(
    state: &AppState,
    tenant: &TenantRecord,
    entry_key: &str,
    page: PageRequest,
) -> Result<Page<Photo>, AppError> {
    let entry = parse_key(entry_key, "diary entry")?;
    let rows = entry_photos(state, tenant, entry).await?;
    let total = rows.len() as i64;
    let items = rows
        .iter()
        .skip(page.skip.max(0) as usize)
        .take(page.limit.max(0) as usize)
        .map(Photo::from)
        .collect();
    Ok(Page::new(items, total, page))
}

async fn entry_photos(
    state: &AppState,
    tenant: &TenantRecord,
    entry: Uuid,
) -> Result<Vec<PhotoRow>, AppError> {
    let mut tx = TenantTx::read(state, tenant).await?;
    if !repo::entry_exists(&mut tx, entry, false).await? {
        return Err(AppError::not_found("diary entry"));
    }
    let rows = repo::photos_of_entry(&mut tx, entry).await?;
    tx.commit().await?;
    Ok(rows)
}

/// One photo of an entry.
pub async fn get(
    state: &AppState,
    tenant: &TenantRecord,
    entry_key: &str,
    photo_key: &str,
) -> Result<Photo, AppError> {
    let entry = parse_key(entry_key, "diary entry")?;
    let id = parse_key(photo_key, "photo")?;
    let mut tx = TenantTx::read(state, tenant).await?;
    let row = repo::photo(&mut tx, id).await?;
    tx.commit().await?;
    match row {
        Some(r) if r.entry_id == entry => Ok(Photo::from(&r)),
        _ => Err(AppError::not_found("photo")),
    }
}

/// Deletes a photo: its row, then (through the outbox) its files and its job. Needs the right
/// to edit its entry.
pub async fn delete(
    state: &AppState,
    tenant: &TenantRecord,
    entry_key: &str,
    photo_key: &str,
    editor: &Editor,
) -> Result<(), AppError> {
    let entry = parse_key(entry_key, "diary entry")?;
    let id = parse_key(photo_key, "photo")?;
    let mut tx = TenantTx::begin(state, tenant).await?;
    let Some(author) = repo::entry_author(&mut tx, entry, true).await? else {
        return Err(AppError::not_found("photo"));
    };
    // Another garden's photo (or one of another entry) is a 404 before any rights question.
    match repo::photo(&mut tx, id).await? {
        Some(r) if r.entry_id == entry => {}
        _ => return Err(AppError::not_found("photo")),
    }
    may_edit(author, editor)?;
    if !repo::delete_photo(&mut tx, entry, id).await? {
        return Err(AppError::not_found("photo"));
    }
    tx.commit().await?;
    forget_deleted(state, tenant).await;
    Ok(())
}

/// The bytes of one rendition (image/webp). Unknown photo or size: 404; not made yet or given
/// up: 409 naming the status.
pub async fn rendition(
    state: &AppState,
    tenant: &TenantRecord,
    photo_key: &str,
    size: u32,
) -> Result<Vec<u8>, AppError> {
    let id = parse_key(photo_key, "photo")?;
    if !media::RENDITION_SIZES.contains(&size) {
        return Err(AppError::not_found("rendition size (512 or 1280)"));
    }
    let mut tx = TenantTx::read(state, tenant).await?;
    let row = repo::photo(&mut tx, id).await?;
    tx.commit().await?;
    let row = row.ok_or_else(|| AppError::not_found("photo"))?;
    let Some((key, _)) = row.rendition(size) else {
        return Err(AppError::new(
            ErrorCode::StateConflict,
            format!(
                "the {size} px rendition does not exist (rendition status {})",
                row.rendition_status
            ),
        ));
    };
    let key = StorageKey::parse(key)
        .ok_or_else(|| AppError::internal(format!("stored rendition key {key:?} is malformed")))?;
    storage::from_config(state.config())
        .get(&key)
        .await
        .map_err(AppError::internal)
}

// ---------- delivery to the tool ----------

/// Every id in `asked` names a photo of the entry (`of_entry`); otherwise a validation error
/// naming each one that does not, under `field`. The same answer whether such an id is a photo
/// of another entry, of another garden, or nothing: it discloses nothing beyond this entry.
pub fn require_photos_of_entry(
    asked: &[Uuid],
    of_entry: &[Uuid],
    field: &str,
) -> Result<(), AppError> {
    let strangers: Vec<&Uuid> = asked.iter().filter(|p| !of_entry.contains(p)).collect();
    if strangers.is_empty() {
        return Ok(());
    }
    let named = strangers
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    Err(AppError::new(
        ErrorCode::ValidationError,
        format!("{field}: not a photo of this diary entry: {named}"),
    )
    .with_details(
        strangers
            .iter()
            .map(|p| {
                ErrorDetail::new(
                    field,
                    format!("{p} is not a photo of this diary entry"),
                    "value_error",
                )
            })
            .collect(),
    ))
}

/// Base64 length of `n` bytes (padded).
pub fn base64_len(n: i64) -> i64 {
    4 * ((n.max(0) + 2) / 3)
}

/// One photo as the delivery plan sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub key: Uuid,
    /// Bytes of the rendition of each size, where it exists: (512, 1280).
    pub bytes_512: Option<i64>,
    pub bytes_1280: Option<i64>,
    pub status: String,
}

impl Candidate {
    fn bytes(&self, size: u32) -> Option<i64> {
        if size == 512 {
            self.bytes_512
        } else {
            self.bytes_1280
        }
    }
}

/// The photos that would go over the cap and what would fit instead.
#[derive(Debug, Clone, PartialEq)]
pub struct TooLarge {
    pub limit_bytes: i64,
    pub payload_bytes: i64,
    pub size: u32,
    /// The photos from the first one that crosses the cap on.
    pub affected: Vec<Uuid>,
    /// A smaller rendition size with which every photo fits, if any.
    pub smaller_size: Option<u32>,
    /// Otherwise: ranges (skip, limit) of the photo list that fit at the smallest size.
    pub batches: Vec<(usize, usize)>,
}

/// Which photos are delivered and which are pending, or why the payload would be too large.
/// Every photo is either delivered or in `pending`; none is dropped.
pub fn plan_delivery(
    photos: &[Candidate],
    size: u32,
    limit_bytes: i64,
) -> Result<(Vec<usize>, Vec<usize>), TooLarge> {
    let mut delivered = Vec::new();
    let mut pending = Vec::new();
    let mut total = 0i64;
    let mut affected = Vec::new();
    for (i, p) in photos.iter().enumerate() {
        match p.bytes(size) {
            Some(n) => {
                total += base64_len(n);
                if total > limit_bytes {
                    affected.push(p.key);
                }
                delivered.push(i);
            }
            None => pending.push(i),
        }
    }
    if total <= limit_bytes {
        return Ok((delivered, pending));
    }
    let fits_at = |s: u32| {
        photos
            .iter()
            .filter_map(|p| p.bytes(s))
            .map(base64_len)
            .sum::<i64>()
            <= limit_bytes
    };
    let smaller_size = media::RENDITION_SIZES
        .iter()
        .copied()
        .filter(|s| *s < size)
        .rev()
        .find(|s| fits_at(*s));
    let mut batches = Vec::new();
    if smaller_size.is_none() {
        let smallest = media::RENDITION_SIZES[0];
        let (mut start, mut sum) = (0usize, 0i64);
        for (i, p) in photos.iter().enumerate() {
            let n = p.bytes(smallest).map_or(0, base64_len);
            if i > start && sum + n > limit_bytes {
                batches.push((start, i - start));
                start = i;
                sum = 0;
            }
            sum += n;
        }
        if start < photos.len() {
            batches.push((start, photos.len() - start));
        }
    }
    Err(TooLarge {
        limit_bytes,
        payload_bytes: total,
        size,
        affected,
        smaller_size,
        batches,
    })
}

/// Which of an entry's photos a delivery covers: `only` these (every photo when `None`), in
/// the entry's order, then `skip`/`limit` over them.
#[derive(Debug, Clone, Copy)]
pub struct Selection<'a> {
    pub only: Option<&'a [Uuid]>,
    pub skip: usize,
    pub limit: usize,
}

/// What the tool delivers: photos in order with their rendition bytes, and the pending ones.
pub struct Delivery {
    pub entry: Uuid,
    pub size: u32,
    /// Photos selected (the entry's photos, or those of `only`) before `skip`/`limit`.
    pub total: usize,
    pub photos: Vec<(Photo, Vec<u8>)>,
    pub pending: Vec<(Uuid, &'static str)>,
}

/// The renditions of an entry's selected photos at `size`, within `MCP_MAX_IMAGE_PAYLOAD_MB`
/// of Base64, or within `budget` bytes when that is less (what a JSON-RPC batch has left).
/// `Ok(Err(..))`: over the cap; nothing was read from storage. An id of `only` that is not a
/// photo of the entry refuses the whole call (validation), before any file is read.
pub async fn deliver(
    state: &AppState,
    tenant: &TenantRecord,
    entry_key: &str,
    size: u32,
    selection: Selection<'_>,
    budget: Option<usize>,
) -> Result<Result<Delivery, TooLarge>, AppError> {
    let Selection { only, skip, limit } = selection;
    let entry = parse_key(entry_key, "diary entry")?;
    let mut rows = entry_photos(state, tenant, entry).await?;
    if let Some(only) = only {
        let of_entry: Vec<Uuid> = rows.iter().map(|r| r.id).collect();
        require_photos_of_entry(only, &of_entry, "photo_ids")?;
        rows.retain(|r| only.contains(&r.id));
    }
    let total = rows.len();
    let rows: Vec<PhotoRow> = rows.into_iter().skip(skip).take(limit).collect();
    let candidates: Vec<Candidate> = rows
        .iter()
        .map(|r| Candidate {
            key: r.id,
            bytes_512: r.rendition(512).map(|(_, n)| n),
            bytes_1280: r.rendition(1280).map(|(_, n)| n),
            status: r.rendition_status.clone(),
        })
        .collect();
    let cap = i64::from(state.config().mcp_max_image_payload_mb) * 1024 * 1024;
    let limit_bytes = budget.map_or(cap, |b| cap.min(i64::try_from(b).unwrap_or(i64::MAX)));
    let (delivered, pending) = match plan_delivery(&candidates, size, limit_bytes) {
        Ok(plan) => plan,
        Err(mut too_large) => {
            for b in &mut too_large.batches {
                b.0 += skip;
            }
            return Ok(Err(too_large));
        }
    };
    let store = storage::from_config(state.config());
    let mut photos = Vec::with_capacity(delivered.len());
    for i in delivered {
        let row = &rows[i];
        let Some((raw, _)) = row.rendition(size) else {
            continue;
        };
        let key = StorageKey::parse(raw).ok_or_else(|| {
            AppError::internal(format!("stored rendition key {raw:?} is malformed"))
        })?;
        let bytes = store.get(&key).await.map_err(AppError::internal)?;
        photos.push((Photo::from(row), bytes));
    }
    let pending = pending
        .into_iter()
        .map(|i| {
            let status = if rows[i].rendition_status == "unavailable" {
                "unavailable"
            } else {
                "thumbnail_pending"
            };
            (rows[i].id, status)
        })
        .collect();
    Ok(Ok(Delivery {
        entry,
        size,
        total,
        photos,
        pending,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(b512: Option<i64>, b1280: Option<i64>) -> Candidate {
        Candidate {
            key: Uuid::new_v4(),
            bytes_512: b512,
            bytes_1280: b1280,
            status: if b512.is_some() { "ready" } else { "pending" }.into(),
        }
    }

    #[test]
    fn base64_lengths() {
        assert_eq!(base64_len(0), 0);
        assert_eq!(base64_len(1), 4);
        assert_eq!(base64_len(3), 4);
        assert_eq!(base64_len(4), 8);
    }

    #[test]
    fn within_the_cap_everything_is_delivered_or_pending() {
        let photos = [
            cand(Some(30), Some(300)),
            cand(None, None),
            cand(Some(30), Some(300)),
        ];
        assert_eq!(
            plan_delivery(&photos, 1280, 1000),
            Ok((vec![0, 2], vec![1]))
        );
    }

    #[test]
    fn over_the_cap_names_the_photos_and_a_smaller_size() {
        let photos = [cand(Some(30), Some(600)), cand(Some(30), Some(600))];
        let err = plan_delivery(&photos, 1280, 1000).expect_err("too large");
        assert_eq!(err.affected, vec![photos[1].key]);
        assert_eq!(err.smaller_size, Some(512));
        assert!(err.batches.is_empty());
        assert_eq!(err.payload_bytes, 1600);
    }

    #[test]
    fn when_no_size_fits_batches_are_offered() {
        let photos = [
            cand(Some(600), Some(900)),
            cand(Some(600), Some(900)),
            cand(Some(600), Some(900)),
        ];
        let err = plan_delivery(&photos, 512, 1000).expect_err("too large");
        assert_eq!(err.smaller_size, None);
        assert_eq!(err.batches, vec![(0, 1), (1, 1), (2, 1)]);
        assert_eq!(err.affected, vec![photos[1].key, photos[2].key]);
    }
}
