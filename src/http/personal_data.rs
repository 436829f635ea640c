//! The REST face of a person's own data: `GET /users/me/export` (everything about the person,
//! one JSON document, streamed), `DELETE /users/me` (erasure, confirmed by password or mailed
//! link), `POST /users/me/erasure-confirmation` (the link, for accounts without a password),
//! and the platform admins' `DELETE /admin/users/{user_key}`. The work is
//! `platform::personal_data`; this face adds the budget, the audit rows and the streaming.

use std::time::Instant;

use salvo::http::HeaderValue;
use salvo::http::header::{CACHE_CONTROL, CONTENT_DISPOSITION, CONTENT_TYPE};
use salvo::oapi::extract::PathParam;
use salvo::prelude::*;
use serde_json::json;
use tokio::sync::mpsc;

use crate::auth::AccountType;
use crate::crypto::password::PASSWORD_MAX_CHARS;
use crate::error::{AppError, ErrorBody, ErrorCode};
use crate::http::audited::{record, within_transfer_budget};
use crate::http::depot::DepotExt;
use crate::http::json::{FromJson, JsonFields, read_json};
use crate::platform::personal_data::erasure::{self, Confirmation, Erased};
use crate::platform::personal_data::export::{self, ExportError, Sink};

/// The audit names of the actions.
pub const EXPORT_ACTION: &str = "http.personal_export";
pub const ERASURE_ACTION: &str = "http.account_erasure";
pub const ADMIN_ERASURE_ACTION: &str = "http.admin_account_erasure";

/// Chunks of the export waiting for a slow client (each at most a page of rows).
const CHANNEL: usize = 8;

/// Under `/api/v1`. The erasure itself (`DELETE /users/me`) sits beside the profile
/// (`platform::users::routes`).
pub fn router() -> Router {
    Router::with_path("users/me")
        .hoop(crate::http::caller::require_caller)
        .push(Router::with_path("export").get(export_me))
        .push(Router::with_path("erasure-confirmation").post(request_erasure_confirmation))
}

/// Under `/admin/users`.
pub fn admin_router() -> Router {
    Router::with_path("{user_key}").delete(admin_erase_user)
}

fn person_only(depot: &Depot, what: &str) -> Result<(), AppError> {
    let principal = depot.principal()?;
    principal.require_person(what)?;
    principal.require_account_wide()?;
    if principal.account_type != AccountType::User {
        return Err(AppError::new(
            ErrorCode::Forbidden,
            "only a person's account has personal data to export or erase here",
        ));
    }
    Ok(())
}

/// The personal export document, for the OpenAPI document (written piece by piece by
/// `platform::personal_data::export`, never built as this struct).
#[derive(salvo::oapi::ToSchema)]
#[salvo(schema(name = "PersonalExport"))]
#[allow(dead_code)]
pub struct PersonalExport {
    /// `kultiva.personal_export`.
    format: String,
    version: u32,
    generated_at: String,
    account: crate::directory::users::model::User,
    /// Null until preferences are set.
    #[salvo(schema(value_type = Option<Object>))]
    preferences: Option<serde_json::Value>,
    #[salvo(schema(value_type = Vec<Object>))]
    memberships: Vec<serde_json::Value>,
    /// Sign-ins at identity providers linked to the account.
    #[salvo(schema(value_type = Vec<Object>))]
    identities: Vec<serde_json::Value>,
    #[salvo(schema(value_type = Vec<Object>))]
    api_keys: Vec<serde_json::Value>,
    #[salvo(schema(value_type = Vec<Object>))]
    service_accounts: Vec<serde_json::Value>,
    #[salvo(schema(value_type = Vec<Object>))]
    calendar_feeds: Vec<serde_json::Value>,
    #[salvo(schema(value_type = Vec<Object>))]
    invitations_sent: Vec<serde_json::Value>,
    #[salvo(schema(value_type = Vec<Object>))]
    invitations_received: Vec<serde_json::Value>,
    #[salvo(schema(value_type = Vec<Object>))]
    notifications: Vec<serde_json::Value>,
    /// The days a digest mail was considered (sent or with nothing to say).
    #[salvo(schema(value_type = Vec<Object>))]
    digests: Vec<serde_json::Value>,
    #[salvo(schema(value_type = Vec<Object>))]
    sessions: Vec<serde_json::Value>,
    #[salvo(schema(value_type = Vec<Object>))]
    audit: Vec<serde_json::Value>,
    /// Per garden: tenant_key, slug, name, role, and `records` (rows per table).
    #[salvo(schema(value_type = Vec<Object>))]
    gardens: Vec<serde_json::Value>,
}

/// Everything Kultiva holds about you, as one JSON document (an attachment, streamed): your
/// account and preferences, memberships and roles, your API keys and the service accounts you
/// made (labels and prefixes, never a secret or hash), your sessions, calendar feeds,
/// invitations you sent and received, the mails sent to you (subject and dates), the audit log
/// of your calls, and per garden the records you wrote there (diary entries, photos' records,
/// phase changes, waterings, inspections, treatments, harvest observations, tasks, care
/// confirmations). A logged-in person only (an access token, not an API key). Counts against
/// `GARDEN_TRANSFERS_PER_ACCOUNT_PER_HOUR`; audited (`http.personal_export`). A download that
/// breaks off mid-way is not valid JSON: nothing partial looks whole.
///
/// Members: `format` (`kultiva.personal_export`), `version` (1), `generated_at`; `account` (your
/// user record); `preferences` (null until you set any); `memberships` (every garden, your role and
/// since when); `identities` (provider, subject, the address it gave, dates; no provider token is
/// kept); `api_keys` (label, prefix, scope, created, last used, revoked; never the key or its hash);
/// `service_accounts` (the ones you made, their gardens and keys: labels and prefixes only);
/// `calendar_feeds` (gardens and dates, never the token); `invitations_sent` (garden, role, status;
/// not the invitee's address, which is theirs) and `invitations_received`; `notifications` (the mails
/// sent to you: kind, subject, status, dates; not their bodies, which held one-time links and are
/// wiped once sent); `digests` (the days a digest was considered for you: date, items, whether a mail
/// went out); `push_subscriptions` (the endpoint's host only); `sessions` (logins still known: id,
/// remember me, revoked, opened, expires; never a token); `audit` (your tool calls and recorded
/// actions; 90 days are kept); `gardens[]` (key, slug, name, your role, and `records`: the rows you
/// wrote there, table by table: `diary_entries`, `diary_photos`, `plant_phase_history`,
/// `watering_events`, `tank_fills`, `tank_maintenance`, `ipm_inspections`, `ipm_applications`,
/// `harvest_observations`, `tasks`, `care_confirmations`, `onboarding_kits`, `webhooks` without their
/// signing secret, exactly as stored).
///
/// Downloaded as `kultiva-personal-export-<date>.json`. The rows are read in pages while the download
/// runs, so a record written meanwhile may or may not be in it. Photo files are not inlined: each
/// `diary_photos` row names its photo, which `GET /t/{slug}/diary-entries/{entry}/photos/{photo}`
/// serves. The count against `GARDEN_TRANSFERS_PER_ACCOUNT_PER_HOUR` is shared with garden exports
/// and imports.
#[endpoint(tags("users"), operation_id = "export_me", security(["bearer" = []]),
    status_codes(200, 401, 403, 429),
    responses(
        (status_code = 200, description = "the document (application/json, as an attachment): format, version, generated_at, account, preferences, memberships, identities, api_keys, service_accounts, calendar_feeds, invitations_sent, invitations_received, notifications, digests, sessions, audit, gardens[].records", body = PersonalExport),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: an API key, or not a person's account", body = ErrorBody),
        (status_code = 429, description = "RATE_LIMIT_EXCEEDED: GARDEN_TRANSFERS_PER_ACCOUNT_PER_HOUR; body {error}, header Retry-After", body = ErrorBody),
    ))]
pub async fn export_me(depot: &mut Depot, res: &mut Response) -> Result<(), AppError> {
    person_only(depot, "your data is exported")?;
    let state = depot.app_state()?;
    let principal = depot.principal()?.clone();
    within_transfer_budget(&state, &principal).await?;
    let user = crate::directory::users::repo::get(state.platform_pool(), principal.user_id)
        .await?
        .ok_or_else(|| AppError::not_found("user"))?;
    let (tx, mut rx) = mpsc::channel(CHANNEL);
    tokio::spawn(async move {
        let started = Instant::now();
        let mut sink = Sink::new(tx);
        let result = export::write(&state, &user, &mut sink).await;
        let outcome = match &result {
            Ok(()) => Ok(sink.bytes()),
            Err(ExportError::Gone(_)) => Err("client_gone"),
            Err(ExportError::App(err)) => {
                tracing::error!(error = %err, user = %user.key, "personal export failed");
                sink.fail("the export failed").await;
                Err("internal")
            }
        };
        record(
            &state,
            &principal,
            None,
            EXPORT_ACTION,
            &json!({}),
            outcome,
            started,
        )
        .await;
    });
    let filename = format!(
        "attachment; filename=\"kultiva-personal-export-{}.json\"",
        time::OffsetDateTime::now_utc().date()
    );
    let headers = res.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        CONTENT_DISPOSITION,
        HeaderValue::from_str(&filename).map_err(AppError::internal)?,
    );
    res.stream(futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx)));
    Ok(())
}

/// Body of `DELETE /users/me`: exactly one of the two.
#[derive(Debug, Clone, serde::Deserialize, salvo::oapi::ToSchema)]
#[salvo(schema(name = "AccountErasureConfirmation"))]
#[serde(deny_unknown_fields)]
pub struct ErasureBody {
    /// Your password (accounts that have one).
    #[salvo(schema(
        nullable = false,
        min_length = 1,
        max_length = 128,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub password: Option<String>,
    /// The token of the link mailed by `POST /users/me/erasure-confirmation` (accounts
    /// without a password).
    #[salvo(schema(
        nullable = false,
        min_length = 1,
        max_length = 128,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub confirmation_token: Option<String>,
}

enum ErasureForm {
    Password(String),
    Token(String),
}

impl FromJson for ErasureForm {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        match (f.has_value("password"), f.has_value("confirmation_token")) {
            (true, false) => f
                .secret("password", 1, PASSWORD_MAX_CHARS)
                .map(Self::Password),
            (false, true) => f.secret("confirmation_token", 1, 128).map(Self::Token),
            (both, _) => {
                let reason = if both {
                    "send password or confirmation_token, not both"
                } else {
                    "field required: password (or confirmation_token for an account without one)"
                };
                f.value("password");
                f.value("confirmation_token");
                f.reject_field(
                    "password",
                    reason,
                    if both { "value_error" } else { "missing" },
                );
                None
            }
        }
    }
}

/// Erase your account. Confirm with your password, or (an account without one) with the token
/// of the link from `POST /users/me/erasure-confirmation`. Gardens only you belong to are
/// dropped with all their data and photos; from gardens shared with others you are removed
/// and your records stay there, by a deleted user (`deleted_user`; diary entries with author
/// kind `deleted`). A shared garden you alone administer is never dropped or left without an
/// admin: 409 with one detail per such garden (`gardens.<slug>`, code `sole_admin`) until
/// you make another member an admin or delete the garden; nothing changes then. Every
/// session, API key, calendar feed and invitation ends; the service accounts you made are
/// deactivated; the cookies are cleared; a mail tells the address, which can register again
/// at once. Audited (`http.account_erasure`).
#[endpoint(tags("users"), operation_id = "erase_me", security(["bearer" = []]),
    status_codes(200, 400, 401, 403, 409, 413, 415, 422, 423),
    request_body = ErasureBody,
    responses(
        (status_code = 200, description = "erased: the gardens dropped and left", body = Erased),
        (status_code = 400, description = "MALFORMED_REQUEST", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: an API key, or not a person's account", body = ErrorBody),
        (status_code = 409, description = "STATE_CONFLICT: a shared garden would lose its only admin, or a garden is being moved (details name them)", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: password wrong or missing, link unknown, used or expired", body = ErrorBody),
        (status_code = 423, description = "ACCOUNT_LOCKED: too many wrong passwords", body = ErrorBody),
    ))]
pub async fn erase_me(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<Json<Erased>, AppError> {
    person_only(depot, "an account is erased")?;
    let state = depot.app_state()?;
    let principal = depot.principal()?.clone();
    let form: ErasureForm = read_json(req, state.config().max_body_bytes).await?;
    let started = Instant::now();
    let confirmation = match &form {
        ErasureForm::Password(p) => Confirmation::Password(p),
        ErasureForm::Token(t) => Confirmation::MailedToken(t),
    };
    let erased = erasure::erase_own(&state, principal.user_id, confirmation).await?;
    // The account's own audit rows went with it; this one stays, under its (now unknown) id.
    record(
        &state,
        &principal,
        None,
        ERASURE_ACTION,
        &json!({}),
        Ok(0),
        started,
    )
    .await;
    crate::auth::cookies::clear(res, state.config());
    Ok(Json(erased))
}

/// Mail yourself the link that confirms the erasure of an account without a password (one
/// that signs in through an identity provider). The link works once, for one hour; a new one
/// retires the old. Accounts with a password confirm with it: 409.
#[endpoint(tags("users"), operation_id = "request_erasure_confirmation", security(["bearer" = []]),
    status_codes(202, 401, 403, 409, 429),
    responses(
        (status_code = 202, description = "the link is on its way to your address"),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: an API key, or not a person's account", body = ErrorBody),
        (status_code = 409, description = "STATE_CONFLICT: the account has a password; confirm with it", body = ErrorBody),
        (status_code = 429, description = "RATE_LIMIT_EXCEEDED: too many mails to the address this hour", body = ErrorBody),
    ))]
pub async fn request_erasure_confirmation(
    depot: &mut Depot,
    res: &mut Response,
) -> Result<(), AppError> {
    person_only(depot, "an erasure is confirmed")?;
    let state = depot.app_state()?;
    erasure::send_confirmation(&state, depot.principal()?.user_id).await?;
    res.status_code(StatusCode::ACCEPTED);
    Ok(())
}

/// Erase someone's account, as `DELETE /users/me` does for its owner (no confirmation by the
/// person; your own account: use `DELETE /users/me`). The same 409 when a shared garden would
/// lose its only admin. Audited (`http.admin_account_erasure`, by you).
#[endpoint(tags("admin"), operation_id = "admin_erase_user", security(["bearer" = []]),
    status_codes(200, 401, 403, 404, 409),
    responses(
        (status_code = 200, description = "erased: the gardens dropped and left", body = Erased),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: not a platform admin, an API key, or your own account", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: no such user", body = ErrorBody),
        (status_code = 409, description = "STATE_CONFLICT: a shared garden would lose its only admin, a garden is being moved, or not a person's account", body = ErrorBody),
    ))]
pub async fn admin_erase_user(
    user_key: PathParam<String>,
    depot: &mut Depot,
) -> Result<Json<Erased>, AppError> {
    let state = depot.app_state()?;
    let principal = depot.principal()?.clone();
    principal.require_person("an account is erased")?;
    let started = Instant::now();
    let key = user_key.into_inner();
    let erased = erasure::erase_by_admin(&state, principal.user_id, &key).await?;
    record(
        &state,
        &principal,
        None,
        ADMIN_ERASURE_ACTION,
        &json!({"user_key": key}),
        Ok(0),
        started,
    )
    .await;
    Ok(Json(erased))
}
