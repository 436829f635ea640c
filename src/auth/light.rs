//! Light mode's identity: one system user, admin of one default tenant, made on first use and
//! cached. Nobody authenticates; every request acts as this user.

use uuid::Uuid;

use crate::directory::memberships::repo as memberships;
use crate::directory::users::repo::{self as users, NewAccount};
use crate::directory::{AccountType, Role};
use crate::error::AppError;
use crate::state::AppState;
use crate::tenancy::provision::{self, ProvisionError, ProvisionOptions};
use crate::tenancy::{TenantKind, TenantSlug, registry};

pub const SYSTEM_USER_NAME: &str = "System";
pub const DEFAULT_TENANT_SLUG: &str = "default";

pub use crate::state::LightIdentity;

pub async fn identity(state: &AppState) -> Result<LightIdentity, AppError> {
    state
        .light_identity()
        .get_or_try_init(|| ensure(state))
        .await
        .copied()
}

/// Idempotent: finds or makes the system user and the default tenant (replicas racing here
/// converge on the same rows through the unique indexes).
async fn ensure(state: &AppState) -> Result<LightIdentity, AppError> {
    let db = state.platform_pool();
    let system_user = match system_user(db).await? {
        Some(id) => id,
        None => {
            let made = users::insert(
                db,
                &NewAccount {
                    email: None,
                    display_name: SYSTEM_USER_NAME,
                    account_type: AccountType::System,
                    password_hash: None,
                    email_verified: true,
                },
            )
            .await?;
            match made {
                Some(user) => user.key,
                None => system_user(db)
                    .await?
                    .ok_or_else(|| AppError::internal("system user vanished"))?,
            }
        }
    };
    let slug = TenantSlug::parse(DEFAULT_TENANT_SLUG)
        .map_err(|_| AppError::internal("default tenant slug invalid"))?;
    let tenant = match registry::find_by_slug(db, &slug).await? {
        Some(t) => t,
        None => {
            let made = provision::create_tenant(
                state,
                &slug,
                "Default garden",
                ProvisionOptions {
                    kind: TenantKind::Default,
                    ..ProvisionOptions::default()
                },
            )
            .await;
            match made {
                Ok(t) => t,
                Err(ProvisionError::SlugTaken(_)) => registry::find_by_slug(db, &slug)
                    .await?
                    .ok_or_else(|| AppError::internal("default tenant vanished"))?,
                Err(err) => return Err(AppError::internal(err)),
            }
        }
    };
    memberships::add(db, tenant.id, system_user, Role::Admin).await?;
    Ok(LightIdentity {
        system_user,
        default_tenant: tenant.id,
    })
}

async fn system_user(db: &sqlx::PgPool) -> Result<Option<Uuid>, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT id FROM platform.users WHERE account_type = 'system' ORDER BY created_at LIMIT 1",
    )
    .fetch_optional(db)
    .await
}
