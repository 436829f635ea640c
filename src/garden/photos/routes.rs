//! REST face of diary photos: upload, list, read and delete under
//! `/api/v1/t/{slug}/diary-entries/{entry_key}/photos`, and the renditions under
//! `/api/v1/t/{slug}/photos/{photo_key}/renditions/{512|1280}`. Reads for every member, writes for
//! growers and admins.

use salvo::http::header::{CACHE_CONTROL, CONTENT_TYPE, HeaderValue};
use salvo::oapi::extract::PathParam;
use salvo::prelude::*;

use super::model::{ImageBytes, Photo, StorageUsage};
use super::service::{self, LIST_MAX_LIMIT};
use crate::auth::Role;
use crate::error::{AppError, ErrorBody, ErrorCode};
use crate::garden::diary::service::Editor;
use crate::http::depot::DepotExt;
use crate::http::pagination::{Page, PageRequest};
use crate::http::roles::{Admin, Requires};

/// Whether a request is a photo upload (`POST /api/v1/t/{slug}/diary-entries/{entry}/photos`,
/// or the web page's diary form with photos, `POST /app/g/{slug}/plants/{plant}/diary`), which
/// the body limit lets through up to `PHOTO_MAX_UPLOAD_MB` (the page's handler bounds its form
/// by the same limit).
pub fn is_upload(method: &salvo::http::Method, path: &str) -> bool {
    if method != salvo::http::Method::POST {
        return false;
    }
    let parts: Vec<&str> = path.trim_end_matches('/').split('/').collect();
    matches!(
        parts.as_slice(),
        ["", "api", "v1", "t", slug, "diary-entries", entry, "photos"]
            | ["", "app", "g", slug, "plants", entry, "diary"]
            if !slug.is_empty() && !entry.is_empty()
    )
}

pub fn entry_router() -> Router {
    Router::with_path("diary-entries/{entry_key}/photos")
        .get(list_photos)
        .post(upload_photo)
        .push(
            Router::with_path("{photo_key}")
                .get(get_photo)
                .delete(delete_photo),
        )
}

/// The garden's photo storage: usage and quota.
pub fn storage_router() -> Router {
    Router::with_path("storage").get(get_storage)
}

/// Photos of an entry are changed by whoever may edit the entry: its author or an admin.
fn editor(depot: &Depot) -> Result<Editor, AppError> {
    Ok(Editor {
        id: depot.principal()?.user_id,
        admin: depot.tenant_ctx()?.role == Role::Admin,
    })
}

/// One route per rendition size (a size is not a record: no path parameter for it).
pub fn renditions_router() -> Router {
    Router::with_path("photos/{photo_key}/renditions")
        .push(Router::with_path("512").get(get_rendition_512))
        .push(Router::with_path("1280").get(get_rendition_1280))
}

/// Upload a photo to a diary entry: the raw image as the request body, sent as `image/jpeg`,
/// `image/png` or `image/webp` (HEIC and every other type: 415 naming the accepted ones).
/// At most `PHOTO_MAX_UPLOAD_MB` (default 20 MB) and `PHOTO_MAX_MEGAPIXELS` (default 50,
/// checked from the header before decoding); at most 20 photos per entry. EXIF, XMP and
/// other metadata (GPS among them) are removed from the stored original when
/// `STORAGE_STRIP_EXIF` is true (the default). The 512 px and 1280 px WebP renditions follow
/// off the request path: `rendition_status` is `pending` until then.
///
/// Only the entry's author or an admin of the garden adds photos to it (as for editing the
/// entry). A picture over 4 megapixels with more than `PHOTO_MAX_PIXELS_PER_BYTE` (default
/// 100) pixels per byte of file is refused from its header, before decoding: 422
/// `IMAGE_TOO_COMPRESSED` (photos have 3 to 50; a decompression bomb hundreds). Decoding runs
/// in at most `PHOTO_DECODE_CONCURRENCY` (default 2) slots per process, at most
/// `PHOTO_DECODE_PER_GARDEN` (default 1) of them for one garden; an upload that finds no slot
/// within `PHOTO_DECODE_WAIT_SECONDS` (default 10) gets 503 with `Retry-After`. The garden's
/// photos (originals and renditions) may take at most `PHOTO_QUOTA_MB_PER_GARDEN` (default
/// 2048): beyond it 413 `STORAGE_QUOTA_EXCEEDED`. Every refusal stores nothing.
///
/// In detail: bytes that do not match the declared type are 415 too; an empty body, an image that
/// does not decode (corrupt, a JPEG cut before its end marker) or more than 30,000 px a side (read
/// from the header) are 422. Phone JPEGs carry 3–10 pixels per byte, PNG screenshots up to about 50,
/// a 7000 × 7000 PNG bomb of 186 KB 263; below 4 megapixels a decode costs at most 16 MB. Decoding
/// runs under the `image` crate's limits (`max_alloc` 4 bytes a pixel plus 64 MB). The ICC profile
/// stays when metadata is stripped (without re-encoding); with `STORAGE_STRIP_EXIF=false` the
/// original is kept byte for byte. File names are generated, never taken from the client.
#[endpoint(tags("diary"), security(["bearer" = []]), operation_id = "upload_diary_photo",
    status_codes(201, 401, 403, 404, 409, 413, 415, 422, 500, 503),
    parameters(
        ("slug" = String, Path, description = "tenant slug"),
        ("entry_key" = String, Path, description = "diary entry key"),
    ),
    request_body(content = ImageBytes, content_type = "image/jpeg",
        description = "the image itself (not JSON, not multipart), Content-Type image/jpeg, image/png or image/webp"),
    responses(
        (status_code = 201, description = "photo stored; renditions pending", body = Photo),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed, and the entry's author or an admin", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or diary entry", body = ErrorBody),
        (status_code = 409, description = "STATE_CONFLICT: the entry holds 20 photos already", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: larger than PHOTO_MAX_UPLOAD_MB; STORAGE_QUOTA_EXCEEDED: the garden's photos would exceed PHOTO_QUOTA_MB_PER_GARDEN", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: not image/jpeg, image/png or image/webp (by header or by content)", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: empty, undecodable (corrupt, truncated) or too many pixels; IMAGE_TOO_COMPRESSED: over 4 MP with more than PHOTO_MAX_PIXELS_PER_BYTE pixels per byte (a decompression bomb)", body = ErrorBody),
        (status_code = 503, description = "SERVICE_UNAVAILABLE: no decode slot free within PHOTO_DECODE_WAIT_SECONDS; retry after Retry-After", body = ErrorBody),
    ))]
pub async fn upload_photo(
    entry_key: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<Json<Photo>, AppError> {
    let state = depot.app_state()?;
    depot.tenant_ctx()?.require(Role::Grower)?;
    // The entry and the right to edit it first (another garden's entry is a 404 whatever the
    // body), then the type before the body is read: a HEIC upload is refused at once.
    let editor = editor(depot)?;
    service::require_editable_entry(&state, &depot.tenant_ctx()?.tenant, &entry_key, &editor)
        .await?;
    let content_type = req
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    service::declared_format(content_type.as_deref())?;
    let max = state.config().photo_max_upload_bytes;
    let too_large = || {
        AppError::new(
            ErrorCode::PayloadTooLarge,
            format!(
                "a photo may be at most {} MB (PHOTO_MAX_UPLOAD_MB)",
                max / (1024 * 1024)
            ),
        )
    };
    if req
        .headers()
        .get(salvo::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        .is_some_and(|n| n > max as u64)
    {
        return Err(too_large());
    }
    let bytes = match req.payload_with_max_size(max).await {
        Ok(bytes) => bytes.to_vec(),
        Err(salvo::http::ParseError::PayloadTooLarge) => return Err(too_large()),
        Err(err) => {
            return Err(AppError::malformed(format!(
                "request body could not be read: {err}"
            )));
        }
    };
    let tenant = &depot.tenant_ctx()?.tenant;
    let photo = service::upload(
        &state,
        tenant,
        &entry_key,
        content_type.as_deref(),
        bytes,
        &editor,
    )
    .await?;
    res.status_code(StatusCode::CREATED);
    Ok(Json(photo))
}

/// The photos of a diary entry in their order.
///
/// `skip`, `limit` up to 20 (an entry holds at most 20 photos).
#[endpoint(tags("diary"), security(["bearer" = []]), operation_id = "list_diary_photos",
    status_codes(200, 401, 404, 422, 500),
    parameters(
        ("slug" = String, Path, description = "tenant slug"),
        ("entry_key" = String, Path, description = "diary entry key"),
        ("skip" = Option<i64>, Query, minimum = 0, maximum = 100000, description = "items to skip (default 0)"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 20, description = "page size (default 20)"),
    ),
    responses(
        (status_code = 200, description = "the entry's photos", body = Page<Photo>),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or diary entry", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: skip or limit out of range", body = ErrorBody),
    ))]
pub async fn list_photos(
    entry_key: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Page<Photo>>, AppError> {
    let state = depot.app_state()?;
    let page = PageRequest::from_request(req, LIST_MAX_LIMIT)?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(service::list(&state, tenant, &entry_key, page).await?))
}

/// One photo of a diary entry.
#[endpoint(tags("diary"), security(["bearer" = []]), operation_id = "get_diary_photo",
    status_codes(200, 401, 404, 500),
    parameters(
        ("slug" = String, Path, description = "tenant slug"),
        ("entry_key" = String, Path, description = "diary entry key"),
        ("photo_key" = String, Path, description = "photo key"),
    ),
    responses(
        (status_code = 200, description = "the photo", body = Photo),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant, entry or photo", body = ErrorBody),
    ))]
pub async fn get_photo(
    entry_key: PathParam<String>,
    photo_key: PathParam<String>,
    depot: &mut Depot,
) -> Result<Json<Photo>, AppError> {
    let state = depot.app_state()?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::get(&state, tenant, &entry_key, &photo_key).await?,
    ))
}

/// Delete a photo with its original and renditions: the row at once, the files right after
/// (recorded in the same transaction, so a crash between leaves them to the storage sweep).
/// Only the entry's author or an admin of the garden deletes its photos.
#[endpoint(tags("diary"), security(["bearer" = []]), operation_id = "delete_diary_photo",
    status_codes(204, 401, 403, 404, 500),
    parameters(
        ("slug" = String, Path, description = "tenant slug"),
        ("entry_key" = String, Path, description = "diary entry key"),
        ("photo_key" = String, Path, description = "photo key"),
    ),
    responses(
        (status_code = 204, description = "photo deleted"),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed, and the entry's author or an admin", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant, entry or photo", body = ErrorBody),
    ))]
pub async fn delete_photo(
    entry_key: PathParam<String>,
    photo_key: PathParam<String>,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<(), AppError> {
    let state = depot.app_state()?;
    depot.tenant_ctx()?.require(Role::Grower)?;
    let editor = editor(depot)?;
    let tenant = &depot.tenant_ctx()?.tenant;
    service::delete(&state, tenant, &entry_key, &photo_key, &editor).await?;
    res.status_code(StatusCode::NO_CONTENT);
    Ok(())
}

/// The garden's photo storage: bytes its photos take (stored originals and their renditions),
/// its quota (`PHOTO_QUOTA_MB_PER_GARDEN`) and how many photos it holds. Admins only. An upload
/// that would go over the quota is refused (413 `STORAGE_QUOTA_EXCEEDED`); renditions made
/// after an accepted upload may take the usage slightly above it.
#[endpoint(tags("diary"), security(["bearer" = []]), operation_id = "get_garden_storage",
    status_codes(200, 401, 403, 404, 500),
    parameters(("slug" = String, Path, description = "tenant slug")),
    responses(
        (status_code = 200, description = "usage and quota", body = StorageUsage),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: admin role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant", body = ErrorBody),
    ))]
pub async fn get_storage(
    _role: Requires<Admin>,
    depot: &mut Depot,
) -> Result<Json<StorageUsage>, AppError> {
    let state = depot.app_state()?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(service::garden_usage(&state, tenant).await?))
}

async fn rendition(
    photo_key: &str,
    size: u32,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<(), AppError> {
    let state = depot.app_state()?;
    let tenant = &depot.tenant_ctx()?.tenant;
    let bytes = service::rendition(&state, tenant, photo_key, size).await?;
    res.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("image/webp"));
    res.headers_mut().insert(
        CACHE_CONTROL,
        HeaderValue::from_static("private, max-age=3600"),
    );
    res.body(bytes);
    Ok(())
}

/// The 512 px rendition of a photo: `image/webp`, longest edge 512 px (a smaller original
/// keeps its size: never upscaled), without EXIF. The original is never served.
#[endpoint(tags("diary"), security(["bearer" = []]), operation_id = "get_photo_rendition_512",
    status_codes(200, 401, 404, 409, 500),
    parameters(
        ("slug" = String, Path, description = "tenant slug"),
        ("photo_key" = String, Path, description = "photo key"),
    ),
    responses(
        (status_code = 200, description = "the rendition", content_type = "image/webp", body = ImageBytes),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or photo", body = ErrorBody),
        (status_code = 409, description = "STATE_CONFLICT: the rendition is pending or unavailable", body = ErrorBody),
    ))]
pub async fn get_rendition_512(
    photo_key: PathParam<String>,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<(), AppError> {
    rendition(&photo_key, 512, depot, res).await
}

/// The 1280 px rendition of a photo: `image/webp`, longest edge 1280 px (a smaller original
/// keeps its size: never upscaled), without EXIF. The original is never served.
#[endpoint(tags("diary"), security(["bearer" = []]), operation_id = "get_photo_rendition_1280",
    status_codes(200, 401, 404, 409, 500),
    parameters(
        ("slug" = String, Path, description = "tenant slug"),
        ("photo_key" = String, Path, description = "photo key"),
    ),
    responses(
        (status_code = 200, description = "the rendition", content_type = "image/webp", body = ImageBytes),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or photo", body = ErrorBody),
        (status_code = 409, description = "STATE_CONFLICT: the rendition is pending or unavailable", body = ErrorBody),
    ))]
pub async fn get_rendition_1280(
    photo_key: PathParam<String>,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<(), AppError> {
    rendition(&photo_key, 1280, depot, res).await
}
