//! REST face of Web Push: `/api/v1/users/me/push-subscriptions` (the caller's own browsers)
//! and `GET /api/v1/push/vapid-public-key` (what a browser subscribes with).

use salvo::oapi::extract::PathParam;
use salvo::prelude::*;

use super::model::{
    NewSubscription, PushSubscribeBody, PushSubscription, PushSubscriptionList, VapidPublicKey,
};
use super::service;
use crate::error::{AppError, ErrorBody};
use crate::http::depot::DepotExt;
use crate::http::json::read_json;

pub fn router() -> Router {
    Router::with_path("users/me/push-subscriptions")
        .hoop(crate::http::caller::require_caller)
        .get(list_push_subscriptions)
        .post(create_push_subscription)
        .push(Router::with_path("{subscription_key}").delete(delete_push_subscription))
}

pub fn key_router() -> Router {
    Router::with_path("push/vapid-public-key")
        .hoop(crate::http::caller::require_caller)
        .get(get_vapid_public_key)
}

/// The application server key (VAPID) to pass to the browser's
/// `pushManager.subscribe({userVisibleOnly: true, applicationServerKey})`.
#[endpoint(tags("push"), operation_id = "get_vapid_public_key", security(["bearer" = []]),
    responses(
        (status_code = 200, description = "the VAPID public key", body = VapidPublicKey),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
    ))]
pub async fn get_vapid_public_key(depot: &mut Depot) -> Result<Json<VapidPublicKey>, AppError> {
    let state = depot.app_state()?;
    Ok(Json(VapidPublicKey {
        public_key: service::public_key(&state)?,
    }))
}

/// Your browsers' push subscriptions (the push service's host only, never the endpoint's
/// path or the browser's keys).
#[endpoint(tags("push"), operation_id = "list_push_subscriptions", security(["bearer" = []]),
    responses(
        (status_code = 200, description = "your push subscriptions", body = PushSubscriptionList),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
    ))]
pub async fn list_push_subscriptions(
    depot: &mut Depot,
) -> Result<Json<PushSubscriptionList>, AppError> {
    let state = depot.app_state()?;
    let user = depot.principal()?.user_id;
    Ok(Json(service::list(&state, user).await?))
}

/// Subscribe a browser: the body is what `PushSubscription.toJSON()` gives. The digest (with
/// `notify_push` on) is then also sent to it as a push message. The endpoint must be
/// `https://` and resolve to public addresses only (422 otherwise; nothing is stored); the
/// same endpoint again renews its keys. At most 20 per person.
///
/// In the browser (the list shows the push service's host only):
///
/// ```js
/// const { public_key } = await (await api("/api/v1/push/vapid-public-key")).json();
/// const sub = await registration.pushManager.subscribe({
///   userVisibleOnly: true,
///   applicationServerKey: public_key,          // base64url is accepted by current browsers
/// });
/// await api("/api/v1/users/me/push-subscriptions", { method: "POST", body: JSON.stringify(sub) });
/// // The service worker's "push" event: event.data.json() is
/// // {"type": "digest", "day": "2026-11-27", "title": "Kultiva: today",
/// //  "body": "3 care, 1 tasks, 1 ready to harvest", "url": "https://…/gardens/my-garden/today",
/// //  "tag": "kultiva-digest-2026-11-27"}
/// ```
///
/// `url` is the one garden's page, or the front end's start page for several gardens.
///
/// A subscription sends the account's digests to a browser, so it is made by a logged-in
/// person only: an API key (even an account-wide one) is 403 `person_required` and nothing is
/// stored. Subscriptions from before this rule that an API key may have made (their account
/// had a live key when they were made) were deleted by platform migration 0021; a take-back
/// of the account deletes all of its subscriptions.
#[endpoint(tags("push"), operation_id = "create_push_subscription", security(["bearer" = []]),
    status_codes(201, 400, 401, 403, 413, 415, 422),
    request_body = PushSubscribeBody,
    responses(
        (status_code = 201, description = "the subscription", body = PushSubscription),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: an API key (person_required)", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: endpoint not https, not resolvable or resolving to a private, loopback, link-local or metadata address; keys not a P-256 key and a 16-byte secret; more than 20 subscriptions", body = ErrorBody),
    ))]
pub async fn create_push_subscription(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<Json<PushSubscription>, AppError> {
    let state = depot.app_state()?;
    let principal = depot.principal()?;
    principal.require_person("push subscriptions are made")?;
    let user = principal.user_id;
    let body: NewSubscription = read_json(req, state.config().max_body_bytes).await?;
    let created = service::subscribe(&state, user, &body).await?;
    res.status_code(StatusCode::CREATED);
    Ok(Json(created))
}

/// Unsubscribe one of your browsers.
#[endpoint(tags("push"), operation_id = "delete_push_subscription", security(["bearer" = []]),
    status_codes(204, 401, 403, 404),
    parameters(
        ("subscription_key" = String, Path, format = Uuid, description = "push subscription key"),
    ),
    responses(
        (status_code = 204, description = "deleted"),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: an API key limited to one garden", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: no such subscription of yours", body = ErrorBody),
    ))]
pub async fn delete_push_subscription(
    subscription_key: PathParam<String>,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<(), AppError> {
    let state = depot.app_state()?;
    let principal = depot.principal()?;
    principal.require_account_wide()?;
    service::delete(&state, principal.user_id, &subscription_key).await?;
    res.status_code(StatusCode::NO_CONTENT);
    Ok(())
}
