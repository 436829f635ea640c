//! `/api/v1/tenants`: the caller's gardens and their members.

use salvo::oapi::extract::PathParam;
use salvo::prelude::*;

use super::invitations::{self, Invitation};
use super::model::{
    MemberCreate, MemberUpdate, NewMember, NewTenant, RoleChange, Tenant, TenantChange,
    TenantCreate, TenantUpdate,
};
use super::service;
use crate::auth::accounts::model::{EmailToken, TokenRequest};
use crate::directory::memberships::model::Member;
use crate::error::{AppError, ErrorBody};
use crate::http::depot::DepotExt;
use crate::http::json::read_json;
use crate::http::pagination::{Page, PageRequest};

pub const LIST_MAX_LIMIT: i64 = 200;

pub fn router() -> Router {
    Router::with_path("tenants")
        .hoop(crate::http::caller::require_caller)
        .get(list_tenants)
        .post(create_tenant)
        .push(crate::http::transfers::routes::import_router())
        .push(
            Router::with_path("{slug}")
                .get(get_tenant)
                .patch(update_tenant)
                .delete(delete_tenant)
                .push(
                    Router::with_path("invitations")
                        .get(list_invitations)
                        .push(Router::with_path("{invitation_key}").delete(withdraw_invitation)),
                )
                .push(
                    Router::with_path("members")
                        .get(list_members)
                        .post(add_member)
                        .push(
                            Router::with_path("{user_key}")
                                .patch(change_member_role)
                                .delete(remove_member),
                        ),
                ),
        )
}

/// Create an organisation garden; you become its admin.
#[endpoint(tags("tenants"), operation_id = "create_tenant", security(["bearer" = []]),
    status_codes(201, 400, 401, 403, 409, 413, 415, 422),
    request_body = TenantCreate,
    responses(
        (status_code = 201, description = "tenant created", body = Tenant),
        (status_code = 400, description = "MALFORMED_REQUEST", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: service accounts cannot create tenants", body = ErrorBody),
        (status_code = 409, description = "DUPLICATE_ENTRY: slug taken", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: slug rules, name length", body = ErrorBody),
    ))]
pub async fn create_tenant(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<Json<Tenant>, AppError> {
    let state = depot.app_state()?;
    let new: NewTenant = read_json(req, state.config().max_body_bytes).await?;
    let tenant = service::create(&state, depot.principal()?, &new).await?;
    res.status_code(StatusCode::CREATED);
    Ok(Json(tenant))
}

/// Your tenants with your role in each, by slug.
#[endpoint(tags("tenants"), operation_id = "list_tenants", security(["bearer" = []]),
    parameters(
        ("skip" = Option<i64>, Query, minimum = 0, maximum = 100000, description = "items to skip (default 0)"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 200, description = "page size (default 100)"),
    ),
    responses(
        (status_code = 200, description = "one page of tenants", body = Page<Tenant>),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: skip or limit out of range", body = ErrorBody),
    ))]
pub async fn list_tenants(
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Page<Tenant>>, AppError> {
    let state = depot.app_state()?;
    let page = PageRequest::from_request(req, LIST_MAX_LIMIT)?;
    Ok(Json(
        service::list_mine(&state, depot.principal()?, page).await?,
    ))
}

/// One of your tenants (any other slug is 404, whether it exists or not).
#[endpoint(tags("tenants"), operation_id = "get_tenant", security(["bearer" = []]),
    responses(
        (status_code = 200, description = "the tenant", body = Tenant),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or not a member", body = ErrorBody),
    ))]
pub async fn get_tenant(
    slug: PathParam<String>,
    depot: &mut Depot,
) -> Result<Json<Tenant>, AppError> {
    let state = depot.app_state()?;
    Ok(Json(service::get(&state, depot.principal()?, &slug).await?))
}

/// Rename a tenant (admin).
#[endpoint(tags("tenants"), operation_id = "update_tenant", security(["bearer" = []]),
    status_codes(200, 400, 401, 403, 404, 413, 415, 422),
    request_body = TenantUpdate,
    responses(
        (status_code = 200, description = "the updated tenant", body = Tenant),
        (status_code = 400, description = "MALFORMED_REQUEST", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: admin role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR", body = ErrorBody),
    ))]
pub async fn update_tenant(
    slug: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Tenant>, AppError> {
    let state = depot.app_state()?;
    let change: TenantChange = read_json(req, state.config().max_body_bytes).await?;
    Ok(Json(
        service::update(&state, depot.principal()?, &slug, &change).await?,
    ))
}

/// Delete an organisation tenant with all its data (admin). Personal tenants cannot be deleted.
#[endpoint(tags("tenants"), operation_id = "delete_tenant", security(["bearer" = []]),
    status_codes(204, 401, 403, 404, 409),
    responses(
        (status_code = 204, description = "deleted"),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: admin role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND", body = ErrorBody),
        (status_code = 409, description = "STATE_CONFLICT: personal, platform and default tenants cannot be deleted", body = ErrorBody),
    ))]
pub async fn delete_tenant(
    slug: PathParam<String>,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<(), AppError> {
    let state = depot.app_state()?;
    service::delete(&state, depot.principal()?, &slug).await?;
    res.status_code(StatusCode::NO_CONTENT);
    Ok(())
}

/// The members of a tenant (any member may look). Addresses are shown to the garden's admins
/// only; everyone else sees `email: null` for every member but themselves.
#[endpoint(tags("tenants"), operation_id = "list_members", security(["bearer" = []]),
    responses(
        (status_code = 200, description = "the members", body = Vec<Member>),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND", body = ErrorBody),
    ))]
pub async fn list_members(
    slug: PathParam<String>,
    depot: &mut Depot,
) -> Result<Json<Vec<Member>>, AppError> {
    let state = depot.app_state()?;
    Ok(Json(
        service::members(&state, depot.principal()?, &slug).await?,
    ))
}

/// Invite an e-mail address to the garden (admin; roles up to your own). Nobody becomes a
/// member without consent: the address gets a mail with a one-time link, and the invited
/// person accepts (`POST /invitations/accept` with the link's token, or
/// `POST /users/me/invitations/{invitation_key}/accept`). The answer is the same whether or not
/// an account with the address exists. Expires after `INVITATION_EXPIRE_DAYS` (7). Needs a
/// logged-in person (an access token; an API key is 403 `person_required`), and stays within
/// `INVITATIONS_PER_INVITER_PER_HOUR` and `INVITATIONS_PER_GARDEN_PER_HOUR` (429
/// `RATE_LIMIT_EXCEEDED`, nothing stored or mailed). The mail quotes the garden's name and the
/// inviter's display name as user-written text, with nothing of it a link.
///
/// The answer: `key, tenant_slug, tenant_name, email, role, status: "pending", created_at,
/// expires_at`. No account is looked up; the mail goes within `MAIL_PER_ADDRESS_PER_HOUR`. The
/// budgets are fixed hour windows in Redis (`<prefix>:invq:acct:{<account>}`,
/// `<prefix>:invq:garden:{<tenant>}`); `Retry-After` is the seconds until the window ends; without
/// Redis nobody is invited (503).
#[endpoint(tags("tenants"), operation_id = "add_member", security(["bearer" = []]),
    status_codes(202, 400, 401, 403, 404, 409, 413, 415, 422, 429),
    request_body = MemberCreate,
    responses(
        (status_code = 202, description = "invitation created and mailed; the member is added once it is accepted", body = Invitation),
        (status_code = 400, description = "MALFORMED_REQUEST", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: admin role needed, a role above your own, or an API key (person_required)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant or not a member", body = ErrorBody),
        (status_code = 409, description = "DUPLICATE_ENTRY: the address belongs to a member, or an invitation for it is pending", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR", body = ErrorBody),
        (status_code = 429, description = "RATE_LIMIT_EXCEEDED: the inviter's or the garden's invitation budget per hour (INVITATIONS_PER_INVITER_PER_HOUR, INVITATIONS_PER_GARDEN_PER_HOUR); nothing stored or mailed", body = ErrorBody),
    ))]
pub async fn add_member(
    slug: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<Json<Invitation>, AppError> {
    let state = depot.app_state()?;
    let new: NewMember = read_json(req, state.config().max_body_bytes).await?;
    let invitation = invitations::invite(&state, depot.principal()?, &slug, &new).await?;
    res.status_code(StatusCode::ACCEPTED);
    Ok(Json(invitation))
}

/// The garden's open invitations (admin).
#[endpoint(tags("tenants"), operation_id = "list_invitations", security(["bearer" = []]),
    responses(
        (status_code = 200, description = "pending, unexpired invitations, newest first", body = Vec<Invitation>),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: admin role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND", body = ErrorBody),
    ))]
pub async fn list_invitations(
    slug: PathParam<String>,
    depot: &mut Depot,
) -> Result<Json<Vec<Invitation>>, AppError> {
    let state = depot.app_state()?;
    Ok(Json(
        invitations::of_tenant(&state, depot.principal()?, &slug).await?,
    ))
}

/// Withdraw an open invitation (admin); its link stops working.
#[endpoint(tags("tenants"), operation_id = "withdraw_invitation", security(["bearer" = []]),
    status_codes(204, 401, 403, 404),
    responses(
        (status_code = 204, description = "withdrawn"),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: admin role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: tenant or open invitation", body = ErrorBody),
    ))]
pub async fn withdraw_invitation(
    slug: PathParam<String>,
    invitation_key: PathParam<String>,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<(), AppError> {
    let state = depot.app_state()?;
    invitations::withdraw(&state, depot.principal()?, &slug, &invitation_key).await?;
    res.status_code(StatusCode::NO_CONTENT);
    Ok(())
}

/// `/api/v1/users/me/invitations`: the invitations to your (confirmed) address.
pub fn my_invitations_router() -> Router {
    Router::with_path("users/me/invitations")
        .hoop(crate::http::caller::require_caller)
        .get(list_my_invitations)
        .push(Router::with_path("{invitation_key}/accept").post(accept_my_invitation))
        .push(Router::with_path("{invitation_key}/decline").post(decline_my_invitation))
}

/// `/api/v1/invitations/accept`: accept with the token of the invitation mail.
pub fn invitation_token_router() -> Router {
    Router::with_path("invitations/accept")
        .hoop(crate::http::caller::require_caller)
        .post(accept_invitation)
}

/// Your open invitations (your e-mail address must be confirmed).
#[endpoint(tags("tenants"), operation_id = "list_my_invitations", security(["bearer" = []]),
    responses(
        (status_code = 200, description = "pending, unexpired invitations to your address", body = Vec<Invitation>),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "EMAIL_NOT_VERIFIED (use the mailed link instead), or FORBIDDEN: an API key limited to one garden", body = ErrorBody),
    ))]
pub async fn list_my_invitations(depot: &mut Depot) -> Result<Json<Vec<Invitation>>, AppError> {
    let state = depot.app_state()?;
    Ok(Json(invitations::mine(&state, depot.principal()?).await?))
}

/// Accept one of your invitations: you become a member with its role.
///
/// 200 with the membership and the invited role. Needs a confirmed address (403
/// `EMAIL_NOT_VERIFIED`: whoever registered an unconfirmed address may not own it); a key limited
/// to one garden cannot answer invitations (403). An invitation is used up by its first answer.
#[endpoint(tags("tenants"), operation_id = "accept_my_invitation", security(["bearer" = []]),
    responses(
        (status_code = 200, description = "you are a member", body = Member),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "EMAIL_NOT_VERIFIED, or FORBIDDEN: an API key limited to one garden", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: no open invitation of yours with that key", body = ErrorBody),
    ))]
pub async fn accept_my_invitation(
    invitation_key: PathParam<String>,
    depot: &mut Depot,
) -> Result<Json<Member>, AppError> {
    let state = depot.app_state()?;
    let member = invitations::answer_mine(&state, depot.principal()?, &invitation_key, true)
        .await?
        .ok_or_else(|| AppError::not_found("invitation"))?;
    Ok(Json(member))
}

/// Decline one of your invitations.
///
/// Answers 204. Needs a confirmed address (403 `EMAIL_NOT_VERIFIED`); a key limited to one garden
/// is 403.
#[endpoint(tags("tenants"), operation_id = "decline_my_invitation", security(["bearer" = []]),
    status_codes(204, 401, 403, 404),
    responses(
        (status_code = 204, description = "declined"),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "EMAIL_NOT_VERIFIED, or FORBIDDEN: an API key limited to one garden", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: no open invitation of yours with that key", body = ErrorBody),
    ))]
pub async fn decline_my_invitation(
    invitation_key: PathParam<String>,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<(), AppError> {
    let state = depot.app_state()?;
    invitations::answer_mine(&state, depot.principal()?, &invitation_key, false).await?;
    res.status_code(StatusCode::NO_CONTENT);
    Ok(())
}

/// Accept an invitation with the token from its mail; your account's address must be the
/// invited one (register with it first if you have no account).
///
/// Body `{token}`: the token proves control of the mailbox, so no confirmation of the address is
/// needed. A different address, and an unknown, used, withdrawn or expired token, are 404
/// `ENTITY_NOT_FOUND`.
#[endpoint(tags("tenants"), operation_id = "accept_invitation", security(["bearer" = []]),
    status_codes(200, 400, 401, 403, 404, 413, 415, 422),
    request_body = TokenRequest,
    responses(
        (status_code = 200, description = "you are a member", body = Member),
        (status_code = 400, description = "MALFORMED_REQUEST", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: an API key limited to one garden", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: the token is unknown, used, expired, or for another address", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR", body = ErrorBody),
    ))]
pub async fn accept_invitation(
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Member>, AppError> {
    let state = depot.app_state()?;
    let EmailToken(token) = read_json(req, state.config().max_body_bytes).await?;
    Ok(Json(
        invitations::accept_by_token(&state, depot.principal()?, &token).await?,
    ))
}

/// Change a member's role (admin). The last admin cannot be demoted. Needs a logged-in person
/// (an API key is 403 `person_required`). A demotion ends the service accounts the member
/// created in the garden and withdraws its pending invitations there (nothing is reassigned).
#[endpoint(tags("tenants"), operation_id = "change_member_role", security(["bearer" = []]),
    status_codes(200, 400, 401, 403, 404, 409, 413, 415, 422),
    request_body = MemberUpdate,
    responses(
        (status_code = 200, description = "the member", body = Member),
        (status_code = 400, description = "MALFORMED_REQUEST", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: admin role needed, or an API key (person_required)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: tenant or member", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE", body = ErrorBody),
        (status_code = 409, description = "STATE_CONFLICT: the last admin cannot be demoted", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: role", body = ErrorBody),
    ))]
pub async fn change_member_role(
    slug: PathParam<String>,
    user_key: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Member>, AppError> {
    let state = depot.app_state()?;
    let RoleChange(role) = read_json(req, state.config().max_body_bytes).await?;
    Ok(Json(
        service::change_role(&state, depot.principal()?, &slug, &user_key, role).await?,
    ))
}

/// Remove a member (admin), or leave (yourself). The last admin cannot be removed. Needs a
/// logged-in person (an API key is 403 `person_required`). What the member made in the garden
/// ends with it: the service accounts it created leave the garden (deactivated when they have
/// no other), its pending invitations are withdrawn and its calendar feed is deleted.
#[endpoint(tags("tenants"), operation_id = "remove_member", security(["bearer" = []]),
    status_codes(204, 401, 403, 404, 409),
    responses(
        (status_code = 204, description = "removed"),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: admin role needed, or an API key (person_required)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: tenant or member", body = ErrorBody),
        (status_code = 409, description = "STATE_CONFLICT: the last admin cannot be removed", body = ErrorBody),
    ))]
pub async fn remove_member(
    slug: PathParam<String>,
    user_key: PathParam<String>,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<(), AppError> {
    let state = depot.app_state()?;
    service::remove_member(&state, depot.principal()?, &slug, &user_key).await?;
    res.status_code(StatusCode::NO_CONTENT);
    Ok(())
}
