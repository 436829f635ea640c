//! Erasing an account (`DELETE /users/me`, `DELETE /admin/users/{user_key}`).
//!
//! What happens, in this order, so that a failure half-way leaves an account that can simply
//! be erased again:
//! 1. **The plan.** Each garden of the person is dropped (nobody else is in it), left (others
//!    stay; someone else administers it) or blocks the erasure: a garden shared with others
//!    that only this person administers is never dropped silently, nor left without an admin;
//!    the answer is 409 naming each such garden until another admin is named or the garden is
//!    deleted. A garden being moved blocks too (until the move is done).
//! 2. **The confirmation** (own erasure): the password, or for an account without one a
//!    one-time link mailed to its address.
//! 3. **The gardens that stay**: the person's name comes off the records others keep
//!    (`authored::AUTHORED`): actors become `deleted_user`, diary entries are by a `deleted`
//!    author. The records, and their photos, stay with the garden.
//! 4. **The gardens of the person alone** are dropped with their data and photo files.
//! 5. **The account**, in one platform transaction: the service accounts it made are
//!    deactivated with their keys, its feeds deleted, the invitations it sent withdrawn (as on
//!    a take-back, `directory::grants`); invitations to its address, its mails and its audit
//!    rows go; the account row goes with its keys, memberships, preferences and tokens; a last
//!    mail tells the address. The address can register again at once.
//! 6. Sessions end (every refresh family), caches forget.

use std::collections::HashMap;

use sqlx::Row;
use uuid::Uuid;

use super::authored::{AUTHORED, Bind, actor_texts};
use crate::auth::accounts::email_tokens::{self, Purpose};
use crate::auth::accounts::mails::{self, AccountMail};
use crate::auth::refresh;
use crate::directory::AccountType;
use crate::directory::grants;
use crate::directory::users::model::{Email, User};
use crate::directory::users::repo as users;
use crate::error::{AppError, ErrorCode, ErrorDetail};
use crate::state::AppState;
use crate::tenancy::context::migrate_if_behind;
use crate::tenancy::provision::{self, ProvisionError};
use crate::tenancy::{TenantKind, TenantRecord};

/// How the person confirms their own erasure.
pub enum Confirmation<'a> {
    Password(&'a str),
    /// The token of the mailed link (`POST /users/me/erasure-confirmation`).
    MailedToken(&'a str),
}

/// What an erasure did, for the answer and the log.
#[derive(Debug, Clone, serde::Serialize, salvo::oapi::ToSchema)]
#[salvo(schema(name = "Erasure"))]
pub struct Erased {
    /// The erased account's key.
    pub user_key: Uuid,
    /// Gardens dropped with all their data (the person was their only member).
    pub gardens_dropped: Vec<String>,
    /// Gardens the person left; their records stay there, by a deleted user.
    pub gardens_left: Vec<String>,
    /// Service accounts the person made, now deactivated with all their keys.
    pub service_accounts_ended: usize,
}

/// What becomes of one garden.
#[derive(Debug)]
enum Fate {
    Drop,
    Leave,
    Blocked(ErrorDetail),
}

/// The gardens of an erasure, sorted by fate.
#[derive(Debug, Default)]
pub struct Plan {
    drop: Vec<TenantRecord>,
    leave: Vec<TenantRecord>,
    /// Gardens left that the person administers (rechecked under lock at the end).
    leave_as_admin: Vec<Uuid>,
}

fn blocked(tenant: &TenantRecord, code: &str, reason: String) -> Fate {
    Fate::Blocked(ErrorDetail::new(
        format!("gardens.{}", tenant.slug),
        reason,
        code,
    ))
}

/// Decides what becomes of each garden of `user`; 409 naming every blocking garden.
pub async fn plan(state: &AppState, user: Uuid) -> Result<Plan, AppError> {
    let db = state.platform_pool();
    let memberships = crate::directory::memberships::repo::tenants_of(db, user).await?;
    let ids: Vec<Uuid> = memberships.iter().map(|(t, _)| t.id).collect();
    // Other people (not service accounts) in each garden, and how many of them administer it.
    let others: HashMap<Uuid, (i64, i64)> = sqlx::query(
        "SELECT m.tenant_id,
                count(*) FILTER (WHERE u.account_type = 'user') AS people,
                count(*) FILTER (WHERE u.account_type = 'user' AND m.role = 'admin') AS admins
         FROM platform.memberships m JOIN platform.users u ON u.id = m.user_id
         WHERE m.tenant_id = ANY($1) AND m.user_id <> $2
         GROUP BY m.tenant_id",
    )
    .bind(&ids)
    .bind(user)
    .fetch_all(db)
    .await?
    .iter()
    .map(|r| {
        Ok::<_, sqlx::Error>((
            r.try_get("tenant_id")?,
            (r.try_get("people")?, r.try_get("admins")?),
        ))
    })
    .collect::<Result<_, _>>()?;
    let mut plan = Plan::default();
    let mut refusals = Vec::new();
    for (tenant, role) in memberships {
        let (people, admins) = others.get(&tenant.id).copied().unwrap_or((0, 0));
        let is_admin = role == crate::auth::Role::Admin;
        let fate = if tenant.moving_to.is_some() {
            blocked(
                &tenant,
                "garden_moving",
                format!(
                    "{} is being moved to another server; try again once the move is done",
                    tenant.slug
                ),
            )
        } else if tenant.kind == TenantKind::Platform {
            if is_admin && admins == 0 {
                blocked(
                    &tenant,
                    "sole_admin",
                    "you are the platform's only admin: make another person a platform admin \
                     first"
                        .into(),
                )
            } else {
                Fate::Leave
            }
        } else if people == 0 && tenant.kind != TenantKind::Default {
            Fate::Drop
        } else if is_admin && admins == 0 && people > 0 {
            let remedy = if tenant.kind == TenantKind::Organisation {
                "make another member an admin, or delete the garden"
            } else {
                "make another member an admin (a personal garden cannot be deleted)"
            };
            blocked(
                &tenant,
                "sole_admin",
                format!(
                    "you are the only admin of {} ({}), which {people} other member(s) share: {remedy}",
                    tenant.slug, tenant.name
                ),
            )
        } else {
            Fate::Leave
        };
        match fate {
            Fate::Drop => plan.drop.push(tenant),
            Fate::Leave => {
                if is_admin {
                    plan.leave_as_admin.push(tenant.id);
                }
                plan.leave.push(tenant);
            }
            Fate::Blocked(detail) => refusals.push(detail),
        }
    }
    if !refusals.is_empty() {
        return Err(AppError::new(
            ErrorCode::StateConflict,
            "the account cannot be erased yet: gardens shared with others would lose their \
             only admin (see details)",
        )
        .with_details(refusals));
    }
    Ok(plan)
}

/// A person's own erasure, confirmed by password or mailed link.
pub async fn erase_own(
    state: &AppState,
    user: Uuid,
    confirmation: Confirmation<'_>,
) -> Result<Erased, AppError> {
    let account = person(state, user).await?;
    let plan = plan(state, user).await?;
    let has_password = users::credentials_by_id(state.platform_pool(), user)
        .await?
        .is_some_and(|c| c.password_hash.is_some());
    match confirmation {
        Confirmation::Password(password) if has_password => {
            crate::auth::accounts::service::check_password(state, user, password, "password")
                .await?;
        }
        Confirmation::MailedToken(token) if !has_password => {
            let holder =
                email_tokens::consume(state.platform_pool(), token, Purpose::ConfirmErasure)
                    .await?;
            if holder != Some(user) {
                return Err(AppError::validation(vec![ErrorDetail::new(
                    "body.confirmation_token",
                    "the link is unknown, used or expired: ask for a new one",
                    "value_error",
                )]));
            }
        }
        Confirmation::Password(_) => {
            return Err(AppError::validation(vec![ErrorDetail::new(
                "body.password",
                "this account has no password: confirm with the link of \
                 POST /users/me/erasure-confirmation (confirmation_token)",
                "value_error",
            )]));
        }
        Confirmation::MailedToken(_) => {
            return Err(AppError::validation(vec![ErrorDetail::new(
                "body.confirmation_token",
                "this account has a password: confirm with it (password)",
                "value_error",
            )]));
        }
    }
    carry_out(state, &account, plan).await
}

/// A platform admin erases someone else's account (no confirmation by the person: the admin's
/// session is the authority, and the audit log records it).
pub async fn erase_by_admin(
    state: &AppState,
    admin: Uuid,
    user_key: &str,
) -> Result<Erased, AppError> {
    let user = Uuid::parse_str(user_key).map_err(|_| AppError::not_found("user"))?;
    if user == admin {
        return Err(AppError::new(
            ErrorCode::Forbidden,
            "erase your own account with DELETE /users/me",
        ));
    }
    let account = person(state, user).await?;
    let plan = plan(state, user).await?;
    carry_out(state, &account, plan).await
}

/// The account to erase: a person's. Service accounts end through their gardens' admins, the
/// system account never.
async fn person(state: &AppState, user: Uuid) -> Result<User, AppError> {
    let account = users::get(state.platform_pool(), user)
        .await?
        .ok_or_else(|| AppError::not_found("user"))?;
    if account.account_type != AccountType::User {
        return Err(AppError::new(
            ErrorCode::StateConflict,
            "only a person's account is erased this way; service accounts are removed by \
             their gardens' admins",
        ));
    }
    Ok(account)
}

/// Mails the one-time link that confirms the erasure of an account without a password.
pub async fn send_confirmation(state: &AppState, user: Uuid) -> Result<(), AppError> {
    let account = person(state, user).await?;
    let credentials = users::credentials_by_id(state.platform_pool(), user).await?;
    if credentials.is_some_and(|c| c.password_hash.is_some()) {
        return Err(AppError::new(
            ErrorCode::StateConflict,
            "this account has a password: confirm the erasure with it",
        ));
    }
    let email = account
        .email
        .as_deref()
        .and_then(|e| Email::parse(e).ok())
        .ok_or_else(|| AppError::internal("a person's account without an address"))?;
    if !mails::within_hourly_budget(state, &email).await {
        return Err(AppError::rate_limited(
            "rate limit exceeded: too many mails to this address this hour".to_owned(),
            3600,
        ));
    }
    let mut tx = state.platform_pool().begin().await?;
    email_tokens::retire_unused(&mut *tx, user, Purpose::ConfirmErasure).await?;
    let token = email_tokens::issue(&mut *tx, user, Purpose::ConfirmErasure).await?;
    mails::queue(
        &mut tx,
        &email,
        confirmation_mail(&state.config().frontend_url, &token),
    )
    .await?;
    tx.commit().await?;
    state.mail_wakeup();
    Ok(())
}

fn confirmation_mail(frontend_url: &str, token: &str) -> AccountMail {
    AccountMail {
        kind: "confirm_erasure",
        subject: "Confirm the deletion of your Kultiva account".into(),
        body: format!(
            "Hello,\n\nsomeone signed in to your Kultiva account asked to delete it. Open this \
             link within one hour to confirm:\n\n\
             {frontend_url}/account/erase?token={token}\n\n\
             Deleting the account ends every session and key, drops the gardens only you \
             belong to, and leaves your records in shared gardens by a deleted user. It cannot \
             be undone.\n\nIf it was not you, ignore this message and change how you sign in.\n"
        ),
    }
}

fn farewell_mail() -> AccountMail {
    AccountMail {
        kind: "account_erased",
        subject: "Your Kultiva account was deleted".into(),
        body: "Hello,\n\nyour Kultiva account and the gardens only you belonged to were just \
               deleted; your records in shared gardens stay there without your name. Every \
               session and key has ended. The address can register again at any time.\n"
            .into(),
    }
}

async fn carry_out(state: &AppState, account: &User, plan: Plan) -> Result<Erased, AppError> {
    let user = account.key;
    // 3. The name comes off the records in the gardens that stay.
    for tenant in &plan.leave {
        erase_name_in(state, tenant.clone(), user).await?;
    }
    // 4. The gardens of the person alone go, with their photo files.
    for tenant in &plan.drop {
        match provision::drop_tenant(state, &tenant.slug).await {
            Ok(_) | Err(ProvisionError::NotFound(_)) => {}
            Err(ProvisionError::Moving(slug)) => {
                return Err(AppError::new(
                    ErrorCode::StateConflict,
                    format!("{slug} is being moved to another server; try again once it is done"),
                ));
            }
            Err(other) => return Err(other.into()),
        }
    }
    // 5. The account.
    let db = state.platform_pool();
    let mut tx = db.begin().await?;
    // Still an admin beside this person in each garden it leaves as admin (a demotion may have
    // raced the plan): the same locks as a role change take.
    for tenant in &plan.leave_as_admin {
        crate::directory::memberships::repo::lock_admins(&mut tx, *tenant).await?;
        let admins: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM platform.memberships m JOIN platform.users u ON u.id = m.user_id
             WHERE m.tenant_id = $1 AND m.role = 'admin' AND u.account_type = 'user'
               AND m.user_id <> $2",
        )
        .bind(tenant)
        .bind(user)
        .fetch_one(&mut *tx)
        .await?;
        let people: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM platform.memberships m JOIN platform.users u ON u.id = m.user_id
             WHERE m.tenant_id = $1 AND u.account_type = 'user' AND m.user_id <> $2",
        )
        .bind(tenant)
        .bind(user)
        .fetch_one(&mut *tx)
        .await?;
        if admins == 0 && people > 0 {
            return Err(AppError::new(
                ErrorCode::StateConflict,
                "another admin of a shared garden was removed meanwhile; try again",
            ));
        }
    }
    let ended = grants::end_all_made_by(&mut tx, user, grants::AccountEnd::Erased).await?;
    let email = account.email.clone().unwrap_or_default();
    sqlx::query("DELETE FROM platform.invitations WHERE email = $1")
        .bind(&email)
        .execute(&mut *tx)
        .await?;
    sqlx::query("DELETE FROM platform.mail_outbox WHERE recipient = $1")
        .bind(&email)
        .execute(&mut *tx)
        .await?;
    sqlx::query("DELETE FROM platform.mcp_audit_log WHERE account_id = $1")
        .bind(user)
        .execute(&mut *tx)
        .await?;
    let left: Vec<Uuid> = sqlx::query_scalar(
        "DELETE FROM platform.memberships WHERE user_id = $1 RETURNING tenant_id",
    )
    .bind(user)
    .fetch_all(&mut *tx)
    .await?;
    // Keys, e-mail tokens, feeds, preferences and push subscriptions go with the row (ON
    // DELETE CASCADE); what others keep that names it as maker (gardens, service accounts,
    // invitations) is kept without it (ON DELETE SET NULL).
    sqlx::query("DELETE FROM platform.users WHERE id = $1")
        .bind(user)
        .execute(&mut *tx)
        .await?;
    if let Ok(address) = Email::parse(&email) {
        mails::queue(&mut tx, &address, farewell_mail()).await?;
    }
    tx.commit().await?;
    // 6. Sessions and caches.
    state.caches().forget_user(user);
    for tenant in left {
        state.caches().forget_membership(tenant, user);
    }
    ended.settle(state).await;
    state.mail_wakeup();
    refresh::revoke_all(state, user).await?;
    tracing::info!(user = %user, dropped = plan.drop.len(), left = plan.leave.len(),
        "account erased");
    Ok(Erased {
        user_key: user,
        gardens_dropped: plan.drop.iter().map(|t| t.slug.to_string()).collect(),
        gardens_left: plan.leave.iter().map(|t| t.slug.to_string()).collect(),
        service_accounts_ended: ended.service_accounts.len(),
    })
}

/// Takes the person's name off the records of one garden that stays (one transaction).
async fn erase_name_in(state: &AppState, tenant: TenantRecord, user: Uuid) -> Result<(), AppError> {
    let tenant = migrate_if_behind(state, tenant).await?;
    let placement = state
        .placements()
        .get(&tenant.placement)
        .ok_or_else(|| AppError::internal(format!("unknown placement {}", tenant.placement)))?;
    let schema = tenant.schema_name.quoted();
    let actors = actor_texts(user);
    let mut tx = placement.pool().begin().await?;
    for table in AUTHORED {
        for (sql, bind) in table.erase_statements(&schema) {
            let query = sqlx::query(sqlx::AssertSqlSafe(sql));
            let query = match bind {
                Bind::ActorTexts => query.bind(&actors),
                Bind::Account => query.bind(user),
            };
            query.execute(&mut *tx).await?;
        }
    }
    // Pages that keep this garden's reads forget them (every replica, at the commit).
    sqlx::query("SELECT pg_notify($1, $2)")
        .bind(crate::cache::CHANNEL)
        .bind(crate::cache::garden_changed(tenant.id))
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    state.caches().forget_garden_data(tenant.id);
    Ok(())
}
