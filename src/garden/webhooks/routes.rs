//! REST face of webhooks under `/api/v1/t/{slug}/webhooks` (garden admins only; creating one,
//! changing its url, events or enabled state, and rotating its secret need a logged-in person,
//! not an API key).

use salvo::oapi::extract::PathParam;
use salvo::prelude::*;

use super::model::{
    Deliveries, NewWebhook, Webhook, WebhookCreateBody, WebhookList, WebhookPatch,
    WebhookPatchBody, WebhookWithSecret,
};
use super::service::{self, DELIVERIES_MAX_LIMIT};
use crate::error::{AppError, ErrorBody, ErrorDetail};
use crate::http::depot::DepotExt;
use crate::http::json::read_json;
use crate::http::roles::{Admin, Requires};

pub fn router() -> Router {
    Router::with_path("webhooks")
        .get(list_webhooks)
        .post(create_webhook)
        .push(
            Router::with_path("{webhook_key}")
                .get(get_webhook)
                .patch(update_webhook)
                .delete(delete_webhook)
                .push(Router::with_path("rotate-secret").post(rotate_webhook_secret))
                .push(Router::with_path("deliveries").get(list_webhook_deliveries)),
        )
}

/// Register a webhook endpoint (admin, logged-in person): events of the garden are posted to
/// `url`, signed as Standard Webhooks has it. The answer holds the signing secret, once. The
/// URL must be `https://` and its name must resolve to public addresses only (422 otherwise;
/// nothing is stored).
#[endpoint(tags("webhooks"), security(["bearer" = []]), operation_id = "create_webhook",
    status_codes(201, 400, 401, 403, 404, 413, 415, 422),
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = WebhookCreateBody,
    responses(
        (status_code = 201, description = "the endpoint and its secret (shown once)", body = WebhookWithSecret),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: admin role needed, or an API key (person_required)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: url not https, not resolvable or resolving to a private, loopback, link-local or metadata address; unknown event type; too many webhooks", body = ErrorBody),
    ))]
pub async fn create_webhook(
    _role: Requires<Admin>,
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<Json<WebhookWithSecret>, AppError> {
    let state = depot.app_state()?;
    let principal = depot.principal()?;
    principal.require_person("webhooks are created")?;
    let actor = principal.user_id;
    let body: NewWebhook = read_json(req, state.config().max_body_bytes).await?;
    let tenant = &depot.tenant_ctx()?.tenant;
    let created = service::create(&state, tenant, actor, &body).await?;
    res.status_code(StatusCode::CREATED);
    Ok(Json(created))
}

/// The garden's webhook endpoints (admin).
#[endpoint(tags("webhooks"), security(["bearer" = []]), operation_id = "list_webhooks",
    status_codes(200, 401, 403, 404),
    parameters(("slug" = String, Path, description = "tenant slug")),
    responses(
        (status_code = 200, description = "the endpoints, oldest first", body = WebhookList),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: admin role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant", body = ErrorBody),
    ))]
pub async fn list_webhooks(
    _role: Requires<Admin>,
    depot: &mut Depot,
) -> Result<Json<WebhookList>, AppError> {
    let state = depot.app_state()?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(service::list(&state, tenant).await?))
}

/// One webhook endpoint (admin; the secret is not shown again).
#[endpoint(tags("webhooks"), security(["bearer" = []]), operation_id = "get_webhook",
    status_codes(200, 401, 403, 404),
    parameters(
        ("slug" = String, Path, description = "tenant slug"),
        ("webhook_key" = String, Path, format = Uuid, description = "webhook key"),
    ),
    responses(
        (status_code = 200, description = "the endpoint", body = Webhook),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: admin role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or webhook", body = ErrorBody),
    ))]
pub async fn get_webhook(
    _role: Requires<Admin>,
    webhook_key: PathParam<String>,
    depot: &mut Depot,
) -> Result<Json<Webhook>, AppError> {
    let state = depot.app_state()?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(service::get(&state, tenant, &webhook_key).await?))
}

/// Change an endpoint (admin): `url` (checked as on creation), `events`, `description`,
/// `enabled`.
///
/// Changing `url`, `events` or `enabled` decides where the garden's events go, like creating
/// the endpoint: a logged-in person only (an API key, even an admin's, is 403
/// `person_required`, and nothing changes); `description` alone may be changed with a key.
/// Enabling clears the reason the endpoint was disabled for, and its pending events are
/// delivered then (an endpoint disabled because its maker was taken back, removed or demoted
/// has none left: they were dropped). The person who sets `url`, or enables a disabled
/// endpoint, becomes its maker: it ends when that person's authority does (take-back, removal,
/// demotion, deactivation).
#[endpoint(tags("webhooks"), security(["bearer" = []]), operation_id = "update_webhook",
    status_codes(200, 400, 401, 403, 404, 413, 415, 422),
    parameters(
        ("slug" = String, Path, description = "tenant slug"),
        ("webhook_key" = String, Path, format = Uuid, description = "webhook key"),
    ),
    request_body = WebhookPatchBody,
    responses(
        (status_code = 200, description = "the endpoint as changed", body = Webhook),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: admin role needed, or an API key changing url, events or enabled (person_required)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or webhook", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: url refused (see create), unknown event type, bad field", body = ErrorBody),
    ))]
pub async fn update_webhook(
    _role: Requires<Admin>,
    webhook_key: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Webhook>, AppError> {
    let state = depot.app_state()?;
    let patch: WebhookPatch = read_json(req, state.config().max_body_bytes).await?;
    let principal = depot.principal()?;
    if service::patch_grants(&patch) {
        principal.require_person("a webhook's url, events and enabled state are changed")?;
    }
    let actor = principal.user_id;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::update(&state, tenant, actor, &webhook_key, &patch).await?,
    ))
}

/// Delete an endpoint (admin) with its pending deliveries and their history.
#[endpoint(tags("webhooks"), security(["bearer" = []]), operation_id = "delete_webhook",
    status_codes(204, 401, 403, 404),
    parameters(
        ("slug" = String, Path, description = "tenant slug"),
        ("webhook_key" = String, Path, format = Uuid, description = "webhook key"),
    ),
    responses(
        (status_code = 204, description = "deleted"),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: admin role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or webhook", body = ErrorBody),
    ))]
pub async fn delete_webhook(
    _role: Requires<Admin>,
    webhook_key: PathParam<String>,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<(), AppError> {
    let state = depot.app_state()?;
    let tenant = &depot.tenant_ctx()?.tenant;
    service::delete(&state, tenant, &webhook_key).await?;
    res.status_code(StatusCode::NO_CONTENT);
    Ok(())
}

/// A new signing secret (admin, logged-in person), shown once; the old one signs nothing from
/// now on.
#[endpoint(tags("webhooks"), security(["bearer" = []]), operation_id = "rotate_webhook_secret",
    status_codes(200, 401, 403, 404),
    parameters(
        ("slug" = String, Path, description = "tenant slug"),
        ("webhook_key" = String, Path, format = Uuid, description = "webhook key"),
    ),
    responses(
        (status_code = 200, description = "the endpoint and its new secret (shown once)", body = WebhookWithSecret),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: admin role needed, or an API key (person_required)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or webhook", body = ErrorBody),
    ))]
pub async fn rotate_webhook_secret(
    _role: Requires<Admin>,
    webhook_key: PathParam<String>,
    depot: &mut Depot,
) -> Result<Json<WebhookWithSecret>, AppError> {
    let state = depot.app_state()?;
    depot
        .principal()?
        .require_person("webhook secrets are rotated")?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::rotate_secret(&state, tenant, &webhook_key).await?,
    ))
}

/// The newest deliveries of an endpoint (admin), each with its attempts: status, duration,
/// response code and the start of the answer (kept 7 days).
#[endpoint(tags("webhooks"), security(["bearer" = []]), operation_id = "list_webhook_deliveries",
    status_codes(200, 401, 403, 404, 422),
    parameters(
        ("slug" = String, Path, description = "tenant slug"),
        ("webhook_key" = String, Path, format = Uuid, description = "webhook key"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 100, description = "most deliveries listed (default 50)"),
    ),
    responses(
        (status_code = 200, description = "the deliveries, newest first", body = Deliveries),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: admin role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or webhook", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: limit not a whole number from 1 to 100", body = ErrorBody),
    ))]
pub async fn list_webhook_deliveries(
    _role: Requires<Admin>,
    webhook_key: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Deliveries>, AppError> {
    let state = depot.app_state()?;
    let limit = match req.queries().get("limit") {
        None => 50,
        Some(raw) => raw
            .parse::<i64>()
            .ok()
            .filter(|n| (1..=DELIVERIES_MAX_LIMIT).contains(n))
            .ok_or_else(|| {
                AppError::validation(vec![ErrorDetail::new(
                    "query.limit",
                    "must be a whole number from 1 to 100",
                    "value_error",
                )])
            })?,
    };
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::deliveries(&state, tenant, &webhook_key, limit).await?,
    ))
}
