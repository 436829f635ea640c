//! `/api/v1/admin/…`: platform administration.

use salvo::oapi::extract::PathParam;
use salvo::prelude::*;

use super::service::{self, AdminTenant};
use crate::auth::api_keys::repo::{ServiceAccountRow, service_accounts};
use crate::directory::AccountType;
use crate::directory::users::model::User;
use crate::error::{AppError, ErrorBody, ErrorDetail};
use crate::http::depot::DepotExt;
use crate::http::pagination::{Page, PageRequest};

pub const LIST_MAX_LIMIT: i64 = 200;

/// `/admin` and its platform-admin gate; `app` adds the identity providers' routes.
pub fn router() -> Router {
    Router::with_path("admin")
        .hoop(crate::http::caller::require_platform_admin)
        .push(
            Router::with_path("tenants")
                .get(admin_list_tenants)
                .push(Router::with_path("{slug}/deactivate").post(admin_deactivate_tenant))
                .push(Router::with_path("{slug}/reactivate").post(admin_reactivate_tenant)),
        )
        .push(
            Router::with_path("users")
                .get(admin_list_users)
                .push(Router::with_path("{user_key}/deactivate").post(admin_deactivate_user))
                .push(Router::with_path("{user_key}/reactivate").post(admin_reactivate_user))
                .push(crate::http::personal_data::admin_router()),
        )
        .push(Router::with_path("service-accounts").get(admin_list_service_accounts))
}

/// A search text from the query: trimmed, at most 100 characters, no control characters.
fn search_text(req: &Request) -> Result<Option<String>, AppError> {
    let Some(q) = req.query::<String>("q") else {
        return Ok(None);
    };
    if q.chars().count() > 100 || q.chars().any(char::is_control) {
        return Err(AppError::validation(vec![ErrorDetail::new(
            "query.q",
            "at most 100 characters, no control characters",
            "value_error",
        )]));
    }
    let q = q.trim();
    Ok((!q.is_empty()).then(|| q.to_owned()))
}

/// All tenants, oldest first; `q` searches slug and name.
#[endpoint(tags("admin"), operation_id = "admin_list_tenants", security(["bearer" = []]),
    parameters(
        ("q" = Option<String>, Query, max_length = 100, pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$", description = "part of slug or name"),
        ("skip" = Option<i64>, Query, minimum = 0, maximum = 100000, description = "items to skip (default 0)"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 200, description = "page size (default 100)"),
    ),
    responses(
        (status_code = 200, description = "one page of tenants", body = Page<AdminTenant>),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: not an admin of the platform tenant", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: q, skip or limit", body = ErrorBody),
    ))]
pub async fn admin_list_tenants(
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Page<AdminTenant>>, AppError> {
    let state = depot.app_state()?;
    let page = PageRequest::from_request(req, LIST_MAX_LIMIT)?;
    let q = search_text(req)?;
    Ok(Json(
        service::search_tenants(&state, q.as_deref(), page).await?,
    ))
}

/// Deactivate (suspend) a tenant: it answers 404 to everybody until reactivated.
#[endpoint(tags("admin"), operation_id = "admin_deactivate_tenant", security(["bearer" = []]),
    responses(
        (status_code = 200, description = "the tenant", body = AdminTenant),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND", body = ErrorBody),
        (status_code = 409, description = "STATE_CONFLICT: the platform tenant cannot be deactivated", body = ErrorBody),
    ))]
pub async fn admin_deactivate_tenant(
    slug: PathParam<String>,
    depot: &mut Depot,
) -> Result<Json<AdminTenant>, AppError> {
    let state = depot.app_state()?;
    Ok(Json(
        service::set_tenant_active(&state, &slug, false).await?,
    ))
}

/// Reactivate a tenant.
#[endpoint(tags("admin"), operation_id = "admin_reactivate_tenant", security(["bearer" = []]),
    responses(
        (status_code = 200, description = "the tenant", body = AdminTenant),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND", body = ErrorBody),
    ))]
pub async fn admin_reactivate_tenant(
    slug: PathParam<String>,
    depot: &mut Depot,
) -> Result<Json<AdminTenant>, AppError> {
    let state = depot.app_state()?;
    Ok(Json(service::set_tenant_active(&state, &slug, true).await?))
}

/// All accounts, oldest first; `q` searches e-mail and display name.
#[endpoint(tags("admin"), operation_id = "admin_list_users", security(["bearer" = []]),
    parameters(
        ("q" = Option<String>, Query, max_length = 100, pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$", description = "part of e-mail or display name"),
        ("account_type" = Option<AccountType>, Query, description = "only this kind of account"),
        ("skip" = Option<i64>, Query, minimum = 0, maximum = 100000, description = "items to skip (default 0)"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 200, description = "page size (default 100)"),
    ),
    responses(
        (status_code = 200, description = "one page of users", body = Page<User>),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: q, account_type, skip or limit", body = ErrorBody),
    ))]
pub async fn admin_list_users(
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Page<User>>, AppError> {
    let state = depot.app_state()?;
    let page = PageRequest::from_request(req, LIST_MAX_LIMIT)?;
    let q = search_text(req)?;
    let account_type = match req.query::<String>("account_type") {
        None => None,
        Some(raw) => Some(AccountType::parse(&raw).ok_or_else(|| {
            AppError::validation(vec![ErrorDetail::new(
                "query.account_type",
                "must be one of: user, service, system",
                "value_error",
            )])
        })?),
    };
    Ok(Json(
        service::search_users(&state, q.as_deref(), account_type, page).await?,
    ))
}

/// Deactivate an account: its sessions, access tokens and API keys stop working at once.
#[endpoint(tags("admin"), operation_id = "admin_deactivate_user", security(["bearer" = []]),
    responses(
        (status_code = 200, description = "the user", body = User),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: not a platform admin, or your own account", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND", body = ErrorBody),
        (status_code = 503, description = "SERVICE_UNAVAILABLE: session store unreachable", body = ErrorBody),
    ))]
pub async fn admin_deactivate_user(
    user_key: PathParam<String>,
    depot: &mut Depot,
) -> Result<Json<User>, AppError> {
    let state = depot.app_state()?;
    Ok(Json(
        service::set_user_active(&state, depot.principal()?, &user_key, false).await?,
    ))
}

/// Reactivate an account.
#[endpoint(tags("admin"), operation_id = "admin_reactivate_user", security(["bearer" = []]),
    responses(
        (status_code = 200, description = "the user", body = User),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND", body = ErrorBody),
    ))]
pub async fn admin_reactivate_user(
    user_key: PathParam<String>,
    depot: &mut Depot,
) -> Result<Json<User>, AppError> {
    let state = depot.app_state()?;
    Ok(Json(
        service::set_user_active(&state, depot.principal()?, &user_key, true).await?,
    ))
}

/// Every service account with its number of active keys and last use.
#[endpoint(tags("admin"), operation_id = "admin_list_service_accounts", security(["bearer" = []]),
    responses(
        (status_code = 200, description = "the service accounts", body = Vec<ServiceAccountRow>),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN", body = ErrorBody),
    ))]
pub async fn admin_list_service_accounts(
    depot: &mut Depot,
) -> Result<Json<Vec<ServiceAccountRow>>, AppError> {
    let state = depot.app_state()?;
    Ok(Json(service_accounts(state.platform_pool()).await?))
}
