//! `GET /api/v1/t/{slug}/export`: a garden as the file `kultiva tenant export` writes.

use salvo::http::HeaderValue;
use salvo::http::header::{CONTENT_DISPOSITION, CONTENT_LENGTH, CONTENT_TYPE};
use salvo::oapi::{ToSchema, schema};
use salvo::prelude::*;
use tokio::io::AsyncReadExt;

use super::service;
use crate::error::{AppError, ErrorBody, ErrorDetail};
use crate::http::depot::DepotExt;
use crate::http::roles::{Admin, Requires};

/// Under `/t/{slug}`.
pub fn export_router() -> Router {
    Router::with_path("export").get(export_garden)
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
