//! Invitations to a garden (`platform.invitations`). Adding a member is an invitation: an admin
//! names an e-mail address and a role (up to the admin's own); the answer is the same whether or
//! not an account with that address exists (no account is even looked up), and a mail with a
//! one-time link goes to the address. The invited person accepts or declines from their account:
//! by the link's token (`POST /invitations/accept`, which proves control of the mailbox: the way
//! for an address that registers after the invitation), or from the list of their own pending
//! invitations (`/users/me/invitations`, for a confirmed address only). An invitation expires
//! after `INVITATION_EXPIRE_DAYS`, is used up by its first answer, and only the SHA-256 of its
//! token is stored.

use salvo::oapi::ToSchema;
use serde::Serialize;
use sqlx::postgres::PgRow;
use sqlx::{PgConnection, PgExecutor, Row};
use time::OffsetDateTime;
use uuid::Uuid;

use super::model::NewMember;
use crate::auth::principal::Principal;
use crate::auth::secrets::{SecretHash, random_secret};
use crate::directory::Role;
use crate::directory::memberships::model::Member;
use crate::directory::memberships::repo;
use crate::directory::users::model::{Email, User};
use crate::error::{AppError, ErrorCode, ErrorDetail};
use crate::platform::access::resolve_for;
use crate::state::AppState;

/// An invitation as the inviting admins and the invited person see it. It says nothing about
/// whether an account with the address exists.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[salvo(schema(name = "Invitation"))]
pub struct Invitation {
    /// Invitation identifier.
    pub key: Uuid,
    pub tenant_slug: String,
    pub tenant_name: String,
    /// The invited address.
    pub email: String,
    /// The role granted on acceptance.
    pub role: Role,
    /// `pending`, `accepted`, `declined` or `revoked`.
    pub status: String,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub expires_at: OffsetDateTime,
}

const COLUMNS: &str = "i.id, t.slug, t.name, i.email, i.role, i.status, i.created_at, i.expires_at";

fn decode(row: &PgRow) -> Result<Invitation, sqlx::Error> {
    let role: String = row.try_get("role")?;
    Ok(Invitation {
        key: row.try_get("id")?,
        tenant_slug: row.try_get("slug")?,
        tenant_name: row.try_get("name")?,
        email: row.try_get("email")?,
        role: Role::parse(&role)
            .ok_or_else(|| sqlx::Error::Decode(format!("unknown role {role:?}").into()))?,
        status: row.try_get("status")?,
        created_at: row.try_get("created_at")?,
        expires_at: row.try_get("expires_at")?,
    })
}

// --- SQL ----------------------------------------------------------------------------------------

/// Whether an account with this address is already a member (the admin sees the members
/// anyway, so saying so reveals nothing new).
async fn is_member(
    db: impl PgExecutor<'_>,
    tenant: Uuid,
    email: &Email,
) -> Result<bool, sqlx::Error> {
    let row = sqlx::query(
        "SELECT EXISTS (SELECT 1 FROM platform.memberships m
                        JOIN platform.users u ON u.id = m.user_id
                        WHERE m.tenant_id = $1 AND u.email = $2) AS member",
    )
    .bind(tenant)
    .bind(email.as_str())
    .fetch_one(db)
    .await?;
    row.try_get("member")
}

/// Stores a pending invitation; `None` when one for this garden and address is still open.
async fn insert(
    conn: &mut PgConnection,
    tenant: Uuid,
    email: &Email,
    role: Role,
    token: &SecretHash,
    invited_by: Uuid,
    days: u32,
) -> Result<Option<Invitation>, sqlx::Error> {
    // An expired invitation no longer blocks a new one.
    sqlx::query(
        "UPDATE platform.invitations SET status = 'revoked', answered_at = now()
         WHERE tenant_id = $1 AND email = $2 AND status = 'pending' AND expires_at <= now()",
    )
    .bind(tenant)
    .bind(email.as_str())
    .execute(&mut *conn)
    .await?;
    let sql = sqlx::AssertSqlSafe(format!(
        "WITH i AS (
             INSERT INTO platform.invitations
                 (id, tenant_id, email, role, token_hash, invited_by, expires_at)
             VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(days => $7))
             ON CONFLICT (tenant_id, email) WHERE status = 'pending' DO NOTHING
             RETURNING id, tenant_id, email, role, status, created_at, expires_at)
         SELECT {COLUMNS} FROM i JOIN platform.tenants t ON t.id = i.tenant_id"
    ));
    let row = sqlx::query(sql)
        .bind(Uuid::now_v7())
        .bind(tenant)
        .bind(email.as_str())
        .bind(role.as_str())
        .bind(token.as_bytes().as_slice())
        .bind(invited_by)
        .bind(i32::try_from(days).unwrap_or(i32::MAX))
        .fetch_optional(&mut *conn)
        .await?;
    row.as_ref().map(decode).transpose()
}

/// Open invitations of a garden (pending, not expired), newest first.
async fn pending_of_tenant(
    db: impl PgExecutor<'_>,
    tenant: Uuid,
) -> Result<Vec<Invitation>, sqlx::Error> {
    let sql = sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM platform.invitations i JOIN platform.tenants t ON t.id = i.tenant_id
         WHERE i.tenant_id = $1 AND i.status = 'pending' AND i.expires_at > now()
         ORDER BY i.created_at DESC, i.id"
    ));
    let rows = sqlx::query(sql).bind(tenant).fetch_all(db).await?;
    rows.iter().map(decode).collect()
}

/// Open invitations to an address, in active gardens, newest first.
async fn pending_for(db: impl PgExecutor<'_>, email: &str) -> Result<Vec<Invitation>, sqlx::Error> {
    let sql = sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM platform.invitations i JOIN platform.tenants t ON t.id = i.tenant_id
         WHERE i.email = $1 AND i.status = 'pending' AND i.expires_at > now()
               AND t.status = 'active'
         ORDER BY i.created_at DESC, i.id"
    ));
    let rows = sqlx::query(sql).bind(email).fetch_all(db).await?;
    rows.iter().map(decode).collect()
}

/// How an answer names its invitation.
enum Which<'a> {
    Id(Uuid),
    Token(&'a SecretHash),
}

/// An accepted (or declined) invitation: its id, garden and role.
type Answered = (Uuid, Uuid, Role);

/// Answers an open invitation to `email` (single use: one statement moves it out of
/// `pending`). Returns it, or `None` when there is no such open one.
async fn answer(
    conn: &mut PgConnection,
    which: Which<'_>,
    email: &str,
    accept: bool,
) -> Result<Option<Answered>, sqlx::Error> {
    let (by_id, by_token) = match which {
        Which::Id(id) => (Some(id), None),
        Which::Token(hash) => (None, Some(hash.as_bytes().to_vec())),
    };
    let row = sqlx::query(
        "UPDATE platform.invitations i SET status = $4, answered_at = now()
         FROM platform.tenants t
         WHERE t.id = i.tenant_id AND t.status = 'active'
           AND ($1::uuid IS NULL OR i.id = $1) AND ($2::bytea IS NULL OR i.token_hash = $2)
           AND ($1::uuid IS NOT NULL OR $2::bytea IS NOT NULL)
           AND i.email = $3 AND i.status = 'pending' AND i.expires_at > now()
         RETURNING i.id, i.tenant_id, i.role",
    )
    .bind(by_id)
    .bind(by_token)
    .bind(email)
    .bind(if accept { "accepted" } else { "declined" })
    .fetch_optional(&mut *conn)
    .await?;
    row.map(|row| {
        let role: String = row.try_get("role")?;
        let role = Role::parse(&role)
            .ok_or_else(|| sqlx::Error::Decode(format!("unknown role {role:?}").into()))?;
        Ok((row.try_get("id")?, row.try_get("tenant_id")?, role))
    })
    .transpose()
}

async fn revoke(db: impl PgExecutor<'_>, tenant: Uuid, id: Uuid) -> Result<bool, sqlx::Error> {
    let done = sqlx::query(
        "UPDATE platform.invitations SET status = 'revoked', answered_at = now()
         WHERE id = $1 AND tenant_id = $2 AND status = 'pending'",
    )
    .bind(id)
    .bind(tenant)
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

// --- Use cases ----------------------------------------------------------------------------------

fn invitation_mail(
    frontend_url: &str,
    inviter: &str,
    garden: &str,
    role: Role,
    token: &str,
    days: u32,
) -> crate::auth::accounts::mails::AccountMail {
    crate::auth::accounts::mails::AccountMail {
        kind: "invitation",
        subject: "You are invited to a garden on Kultiva".into(),
        // The names are user-written: quoted, on lines of their own, never a link.
        body: format!(
            "Hello,\n\na member of a garden on Kultiva invited you to join it as {role}. \
             The garden and the inviting member name themselves (their words, not \
             Kultiva's):\n\n\
             > Garden: {garden}\n\
             > Invited by: {inviter}\n\n\
             Open this link within {days} days to accept or decline:\n\n\
             {frontend_url}/invitations/accept?token={token}\n\n\
             If you have no Kultiva account yet, register with this e-mail address first, then \
             open the link again. If you do not want to join, ignore this message: the \
             invitation expires by itself. Kultiva never asks for your password in a mail.\n",
            role = role.as_str(),
            garden = crate::rules::mail::quoted_user_text(garden),
            inviter = crate::rules::mail::quoted_user_text(inviter),
        ),
    }
}

fn invalid_email(reason: &str) -> AppError {
    AppError::validation(vec![ErrorDetail::new("body.email", reason, "value_error")])
}

/// Counts the invitation against the inviter's and the garden's hourly budgets
/// (`INVITATIONS_PER_INVITER_PER_HOUR`, `INVITATIONS_PER_GARDEN_PER_HOUR`): over either, 429
/// `RATE_LIMIT_EXCEEDED` and nothing is stored or mailed. Without Redis nobody is invited
/// (the budgets keep the service from being a mail cannon; they fail closed).
async fn within_invitation_budgets(
    state: &AppState,
    inviter: Uuid,
    tenant: Uuid,
) -> Result<(), AppError> {
    use crate::auth::accounts::mails::count_this_hour;
    let config = state.config();
    let budgets = [
        (
            "invq:acct",
            inviter,
            config.invitations_per_inviter_per_hour,
            "inviting account",
        ),
        (
            "invq:garden",
            tenant,
            config.invitations_per_garden_per_hour,
            "garden",
        ),
    ];
    for (class, identity, cap, per) in budgets {
        let count = count_this_hour(state, class, &identity.to_string())
            .await
            .map_err(|err| {
                crate::metrics::redis_error(crate::metrics::RedisUse::MailThrottle);
                AppError::unavailable("the invitation budget is unavailable; retry later", err)
            })?;
        if count.n > i64::from(cap) {
            return Err(AppError::rate_limited(
                format!("rate limit exceeded: at most {cap} invitations per hour per {per}"),
                count.seconds_left,
            ));
        }
    }
    Ok(())
}

/// Invites an address to the garden (admin; roles up to the caller's own; a person, not an
/// API key; within the inviter's and the garden's hourly budgets).
pub async fn invite(
    state: &AppState,
    principal: &Principal,
    slug: &str,
    new: &NewMember,
) -> Result<Invitation, AppError> {
    let ctx = resolve_for(state, principal, slug).await?;
    principal.require_person("invitations are sent")?;
    super::service::may_grant(&ctx, new.role)?;
    let email = Email::parse(&new.email).map_err(invalid_email)?;
    let db = state.platform_pool();
    if is_member(db, ctx.tenant.id, &email).await? {
        return Err(AppError::duplicate(
            "this address already belongs to a member",
        ));
    }
    within_invitation_budgets(state, principal.user_id, ctx.tenant.id).await?;
    let token = random_secret();
    let days = state.config().invitation_expire_days;
    let mut tx = db.begin().await?;
    let invitation = insert(
        &mut tx,
        ctx.tenant.id,
        &email,
        new.role,
        &SecretHash::of(&token),
        principal.user_id,
        days,
    )
    .await?
    .ok_or_else(|| AppError::duplicate("an invitation for this address is already pending"))?;
    let mailed = crate::auth::accounts::mails::within_hourly_budget(state, &email).await;
    if mailed {
        let inviter = principal
            .account
            .as_ref()
            .map_or("A Kultiva user", |a| a.display_name.as_str());
        let mail = invitation_mail(
            &state.config().frontend_url,
            inviter,
            &ctx.tenant.name,
            new.role,
            &token,
            days,
        );
        crate::auth::accounts::mails::queue(&mut tx, &email, mail).await?;
    }
    tx.commit().await?;
    if mailed {
        state.mail_wakeup();
    }
    Ok(invitation)
}

/// The garden's open invitations (admin).
pub async fn of_tenant(
    state: &AppState,
    principal: &Principal,
    slug: &str,
) -> Result<Vec<Invitation>, AppError> {
    let ctx = resolve_for(state, principal, slug).await?;
    ctx.require(Role::Admin)?;
    Ok(pending_of_tenant(state.platform_pool(), ctx.tenant.id).await?)
}

fn not_found() -> AppError {
    AppError::not_found("invitation")
}

/// Withdraws an open invitation (admin); its link stops working.
pub async fn withdraw(
    state: &AppState,
    principal: &Principal,
    slug: &str,
    key: &str,
) -> Result<(), AppError> {
    let ctx = resolve_for(state, principal, slug).await?;
    ctx.require(Role::Admin)?;
    let id = Uuid::parse_str(key).map_err(|_| not_found())?;
    if revoke(state.platform_pool(), ctx.tenant.id, id).await? {
        Ok(())
    } else {
        Err(not_found())
    }
}

/// The caller's account record (with the light-mode fallback of reading it).
async fn account(state: &AppState, principal: &Principal) -> Result<User, AppError> {
    principal.require_account_wide()?;
    if let Some(account) = &principal.account {
        return Ok(User::clone(account));
    }
    crate::directory::users::repo::get(state.platform_pool(), principal.user_id)
        .await?
        .ok_or_else(|| AppError::not_found("user"))
}

/// The address whose invitations the caller may answer without the mailed token: a
/// confirmed one (whoever registered an unconfirmed address may not own it).
fn confirmed_address(user: &User) -> Result<&str, AppError> {
    match (&user.email, user.email_verified) {
        (Some(email), true) => Ok(email.as_str()),
        _ => Err(AppError::new(
            ErrorCode::EmailNotVerified,
            "confirm your e-mail address to see and answer your invitations here, or open the \
             link in the invitation mail",
        )),
    }
}

/// The caller's open invitations (none for an account without an address: service
/// accounts, light mode's system user).
pub async fn mine(state: &AppState, principal: &Principal) -> Result<Vec<Invitation>, AppError> {
    let user = account(state, principal).await?;
    if user.email.is_none() {
        return Ok(Vec::new());
    }
    let email = confirmed_address(&user)?;
    Ok(pending_for(state.platform_pool(), email).await?)
}

/// Makes the caller a member after an accepted answer, in the answer's transaction; the
/// membership records the invitation it came from (a take-back of the inviting account
/// removes the member again: `directory::grants`).
async fn join(
    mut tx: sqlx::Transaction<'_, sqlx::Postgres>,
    state: &AppState,
    user: Uuid,
    answered: Option<Answered>,
) -> Result<Member, AppError> {
    let (invitation, tenant, role) = answered.ok_or_else(not_found)?;
    // Already a member (joined another way meanwhile): the membership stays as it is.
    repo::add_by_invitation(&mut *tx, tenant, user, role, invitation).await?;
    tx.commit().await?;
    repo::member(state.platform_pool(), tenant, user)
        .await?
        .ok_or_else(|| AppError::not_found("member"))
}

/// Accepts or declines one of the caller's open invitations by its key.
pub async fn answer_mine(
    state: &AppState,
    principal: &Principal,
    key: &str,
    accept: bool,
) -> Result<Option<Member>, AppError> {
    let user = account(state, principal).await?;
    let id = Uuid::parse_str(key).map_err(|_| not_found())?;
    if user.email.is_none() {
        return Err(not_found());
    }
    let email = confirmed_address(&user)?.to_owned();
    let mut tx = state.platform_pool().begin().await?;
    let answered = answer(&mut tx, Which::Id(id), &email, accept).await?;
    if !accept {
        answered.ok_or_else(not_found)?;
        tx.commit().await?;
        return Ok(None);
    }
    join(tx, state, user.key, answered).await.map(Some)
}

/// Accepts an invitation with the mailed token; the caller's address must be the invited one.
pub async fn accept_by_token(
    state: &AppState,
    principal: &Principal,
    token: &str,
) -> Result<Member, AppError> {
    let user = account(state, principal).await?;
    let email = user.email.clone().ok_or_else(not_found)?;
    let mut tx = state.platform_pool().begin().await?;
    let answered = answer(&mut tx, Which::Token(&SecretHash::of(token)), &email, true).await?;
    join(tx, state, user.key, answered).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mail_names_garden_role_link_and_expiry_and_nothing_about_an_account() {
        let mail = invitation_mail(
            "https://app.test",
            "Anna",
            "Allotment 7",
            Role::Grower,
            "tok",
            7,
        );
        assert!(mail.body.contains("\"Allotment 7\""));
        assert!(mail.body.contains("as grower"));
        assert!(
            mail.body
                .contains("https://app.test/invitations/accept?token=tok")
        );
        assert!(mail.body.contains("within 7 days"));
        assert!(
            mail.body
                .contains("register with this e-mail address first")
        );
    }
}
