//! `GET /api/v1/t/{slug}/export`: a garden as the file `kultiva tenant export` writes;
//! `POST /api/v1/tenants/import`: a new garden from such a file, as `kultiva tenant import`.

use futures_util::StreamExt;
use salvo::http::HeaderValue;
use salvo::http::header::{CONTENT_DISPOSITION, CONTENT_LENGTH, CONTENT_TYPE};
use salvo::oapi::{ToSchema, schema};
use salvo::prelude::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::service;
use crate::auth::Role;
use crate::error::{AppError, ErrorBody, ErrorCode, ErrorDetail};
use crate::http::depot::DepotExt;
use crate::http::roles::{Admin, Requires};
use crate::platform::tenants::model::Tenant;
use crate::tenancy::TenantSlug;

/// Under `/t/{slug}`.
pub fn export_router() -> Router {
    Router::with_path("export").get(export_garden)
}

/// Under `/tenants` (before `{slug}`).
pub fn import_router() -> Router {
    Router::with_path("import").post(import_garden)
}

/// The import route, whose body may go past `MAX_BODY_BYTES`: its handler streams it to a
/// file and refuses it past `GARDEN_IMPORT_MAX_MB` itself.
pub fn is_import(method: &salvo::http::Method, path: &str) -> bool {
    method == salvo::http::Method::POST && path.trim_end_matches('/') == "/api/v1/tenants/import"
}

/// The export file in the OpenAPI document (`type: string, format: binary`).
pub struct ExportFile;

impl ToSchema for ExportFile {
    fn to_schema(_components: &mut salvo::oapi::Components) -> salvo::oapi::RefOr<schema::Schema> {
        schema::Object::with_type(schema::BasicType::String)
            .format(schema::SchemaFormat::KnownFormat(
                schema::KnownFormat::Binary,
            ))
            .into()
    }
}

/// Read a chunk of this size at a time from the export file.
const CHUNK: usize = 64 * 1024;

/// The whole garden as one file, the same `kultiva tenant export` writes (every row, the
/// photo files, the members; see the README's "Export, import and move"): gzip, downloaded as
/// `kultiva-<slug>-<date>.export.gz`, readable by `kultiva tenant import` and
/// `POST /tenants/import`. Members' e-mail addresses only with `include_member_emails=true`.
/// Admins only; at most `GARDEN_TRANSFERS_PER_ACCOUNT_PER_HOUR` (4) exports and imports an
/// hour per account; every export is audited (the tool-call audit log, action
/// `http.garden_export`).
///
/// Members' addresses are other people's data, hence opt-in. The file is written to
/// `STORAGE_DIR/.transfers/` and streamed from there (unlinked once open), so a slow download holds
/// no database snapshot; the audit row records its size.
#[endpoint(tags("tenants"), security(["bearer" = []]), operation_id = "export_garden",
    status_codes(200, 401, 403, 404, 409, 422, 429),
    parameters(
        ("slug" = String, Path, description = "tenant slug"),
        ("include_member_emails" = Option<bool>, Query, description = "put the members' e-mail addresses in the file (default false)"),
    ),
    responses(
        (status_code = 200, description = "the export file (gzip), as an attachment", content_type = "application/gzip", body = ExportFile),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: admin role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or not a member", body = ErrorBody),
        (status_code = 409, description = "STATE_CONFLICT: the garden is being moved to another placement", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: include_member_emails neither true nor false", body = ErrorBody),
        (status_code = 429, description = "RATE_LIMIT_EXCEEDED: GARDEN_TRANSFERS_PER_ACCOUNT_PER_HOUR; body {error}, header Retry-After", body = ErrorBody),
    ))]
pub async fn export_garden(
    _role: Requires<Admin>,
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<(), AppError> {
    let state = depot.app_state()?;
    let member_emails = match req
        .queries()
        .get("include_member_emails")
        .map(String::as_str)
    {
        None | Some("false") => false,
        Some("true") => true,
        Some(_) => {
            return Err(AppError::validation(vec![ErrorDetail::new(
                "query.include_member_emails",
                "must be true or false",
                "bool_parsing",
            )]));
        }
    };
    let tenant = &depot.tenant_ctx()?.tenant;
    let download =
        service::export_garden(&state, depot.principal()?, tenant, member_emails).await?;
    let disposition =
        HeaderValue::from_str(&format!("attachment; filename=\"{}\"", download.filename))
            .map_err(|e| AppError::internal(format!("content-disposition: {e}")))?;
    let headers = res.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/gzip"));
    headers.insert(CONTENT_DISPOSITION, disposition);
    headers.insert(CONTENT_LENGTH, HeaderValue::from(download.bytes));
    let chunks = futures_util::stream::try_unfold(download.file, |mut file| async move {
        let mut buf = vec![0u8; CHUNK];
        let n = file.read(&mut buf).await?;
        if n == 0 {
            return Ok::<_, std::io::Error>(None);
        }
        buf.truncate(n);
        Ok(Some((buf, file)))
    });
    res.stream(chunks);
    Ok(())
}

/// Make a new garden from a file of `GET /t/{slug}/export` or `kultiva tenant export`, under
/// the slug `slug`, with you as its only member and admin (the file's members are not
/// restored; invite them). The body is the file itself (`Content-Type: application/gzip`),
/// up to `GARDEN_IMPORT_MAX_MB` (1024); it is streamed to disk, never held in memory. The
/// checks of `kultiva tenant import`: a slug in use is 409, a damaged, truncated or altered
/// file 422, and either leaves nothing behind. Counts against `MAX_GARDENS_PER_ACCOUNT` and
/// `GARDEN_TRANSFERS_PER_ACCOUNT_PER_HOUR`; audited (action `http.garden_import`).
///
/// Open to any signed-in person (not a service account or a garden-scoped key: 403);
/// `MAX_GARDENS_PER_ACCOUNT` is checked before the upload too. The answer (201) is the new garden.
///
/// The file is read within bounds, counted as it unpacks, in the photo decode slots: a line
/// (a row, the header, a section) at most 4 × `MAX_BODY_BYTES` and at least 4 MiB, a photo
/// file at most `PHOTO_MAX_UPLOAD_MB`, the unpacked file at most 4 × `GARDEN_IMPORT_MAX_MB`
/// (413 `PAYLOAD_TOO_LARGE`, refused as soon as a bound is passed); its photo files together
/// within `PHOTO_QUOTA_MB_PER_GARDEN` (413 `STORAGE_QUOTA_EXCEEDED`), the photos' sizes taken
/// from the files written. Refusals name no server path.
#[endpoint(tags("tenants"), security(["bearer" = []]), operation_id = "import_garden",
    status_codes(201, 400, 401, 403, 409, 413, 415, 422, 429),
    parameters(
        ("slug" = String, Query, description = "slug of the new garden (the rules of POST /tenants)"),
    ),
    request_body(content = ExportFile, content_type = "application/gzip",
        description = "the export file itself (not JSON, not multipart)"),
    responses(
        (status_code = 201, description = "garden created from the file; you are its admin", body = Tenant),
        (status_code = 400, description = "MALFORMED_REQUEST: the body could not be read", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: service accounts and keys scoped to one garden cannot create gardens", body = ErrorBody),
        (status_code = 409, description = "DUPLICATE_ENTRY: slug taken; STATE_CONFLICT: MAX_GARDENS_PER_ACCOUNT reached", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: larger than GARDEN_IMPORT_MAX_MB, or past a bound of the reader (a line, a photo file, 4 x GARDEN_IMPORT_MAX_MB unpacked); STORAGE_QUOTA_EXCEEDED: the photo files exceed PHOTO_QUOTA_MB_PER_GARDEN", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: not application/gzip", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: slug missing or against the rules; the file is not a readable garden export (truncated, altered, from a newer kultiva)", body = ErrorBody),
        (status_code = 429, description = "RATE_LIMIT_EXCEEDED: GARDEN_TRANSFERS_PER_ACCOUNT_PER_HOUR; body {error}, header Retry-After", body = ErrorBody),
    ))]
pub async fn import_garden(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<Json<Tenant>, AppError> {
    let state = depot.app_state()?;
    let principal = depot.principal()?;
    // Everything that needs no body first: a refused request uploads nothing.
    let gzip = req
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase())
        .is_some_and(|v| v == "application/gzip" || v == "application/x-gzip");
    if !gzip {
        return Err(AppError::new(
            ErrorCode::UnsupportedMediaType,
            "send the export file as Content-Type: application/gzip",
        ));
    }
    let raw = req.queries().get("slug").cloned().unwrap_or_default();
    let slug = TenantSlug::parse(&raw).map_err(|e| {
        AppError::validation(vec![ErrorDetail::new(
            "query.slug",
            e.to_string(),
            "value_error",
        )])
    })?;
    service::may_import(&state, principal).await?;
    let max = state.config().garden_import_max_bytes;
    let too_large = || {
        AppError::new(
            ErrorCode::PayloadTooLarge,
            format!(
                "an export file may be at most {} MB (GARDEN_IMPORT_MAX_MB)",
                max / (1024 * 1024)
            ),
        )
    };
    if req
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        .is_some_and(|n| n > max)
    {
        return Err(too_large());
    }
    let upload = service::new_upload(&state).await?;
    let write_err = |e: std::io::Error| AppError::internal(format!("writing an upload: {e}"));
    let mut file = tokio::fs::File::create(&upload.path)
        .await
        .map_err(write_err)?;
    let mut body = req.take_body();
    let mut written: u64 = 0;
    while let Some(frame) = body.next().await {
        let frame =
            frame.map_err(|e| AppError::malformed(format!("the body could not be read: {e}")))?;
        let Ok(data) = frame.into_data() else {
            continue; // trailers
        };
        written += data.len() as u64;
        if written > max {
            return Err(too_large());
        }
        file.write_all(&data).await.map_err(write_err)?;
    }
    file.flush().await.map_err(write_err)?;
    drop(file);
    let tenant = service::import_garden(&state, principal, &slug, &upload).await?;
    res.status_code(StatusCode::CREATED);
    Ok(Json(Tenant::from_record(&tenant, Role::Admin)))
}
