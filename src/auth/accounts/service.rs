//! Account use cases. No salvo types here: routes translate cookies and headers.

use time::OffsetDateTime;
use uuid::Uuid;

use super::email_tokens::{self, Purpose};
use super::mails::{self, TakeBack};
use super::model::{Login, Registration, ResetConfirm, TokenResponse};
use crate::auth::refresh::{self, RefreshToken, Rotation};
use crate::directory::AccountType;
use crate::directory::grants::{self, Ended};
use crate::directory::users::model::{Email, User};
use crate::directory::users::repo::{self as users, NewAccount};
use crate::error::{AppError, ErrorCode, ErrorDetail};
use crate::rules::lockout::{self, FAILURES_BEFORE_LOCK};
use crate::state::AppState;
use crate::tenancy::provision::{self, ProvisionError, ProvisionOptions};
use crate::tenancy::{TenantKind, TenantRecord, TenantSlug};

/// A successful login or refresh: the access token for the body, the refresh token for the
/// cookie.
pub struct Session {
    pub access: TokenResponse,
    pub refresh: RefreshToken,
    pub remember: bool,
}

fn bad_login() -> AppError {
    AppError::new(ErrorCode::Unauthorized, "invalid e-mail or password")
}

fn locked(until: OffsetDateTime) -> AppError {
    let remaining = (until - OffsetDateTime::now_utc()).max(time::Duration::ZERO);
    let minutes = lockout::minutes_left(remaining.unsigned_abs());
    AppError::new(
        ErrorCode::AccountLocked,
        format!("account locked after too many failed logins; try again in {minutes} minutes"),
    )
    .with_details(vec![ErrorDetail::new(
        "retry_after_seconds",
        remaining.whole_seconds().max(1).to_string(),
        "ACCOUNT_LOCKED",
    )])
}

/// A slug for a personal garden: the address's local part, tidied, plus a random tail so two
/// `anna@…` never collide.
fn personal_slug(email: &Email) -> Option<TenantSlug> {
    let local = email.as_str().split('@').next().unwrap_or("garden");
    let mut base: String = local
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    base = base
        .split('-')
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("-");
    base.truncate(40);
    let base = base.trim_matches('-');
    let base = if base.is_empty() { "garden" } else { base };
    let tail = &Uuid::new_v4().simple().to_string()[..6];
    TenantSlug::parse(&format!("{base}-{tail}")).ok()
}

/// Registration is one unit: see [`open_account`].
///
/// `language`: the language the person signed up in (a tag such as `de` or `en-GB`), which
/// names their personal garden (see [`personal_garden_name`]); `None` is English.
pub async fn register(
    state: &AppState,
    form: &Registration,
    language: Option<&str>,
) -> Result<User, AppError> {
    let hash = state.passwords().hash(&form.password).await?;
    open_account(
        state,
        &Opening {
            email: &form.email,
            display_name: &form.display_name,
            password_hash: Some(&hash),
            email_verified: false,
            language,
        },
        &NothingMore,
    )
    .await
}

/// A new user account as registration and a first federated login make it.
pub struct Opening<'a> {
    pub email: &'a Email,
    pub display_name: &'a str,
    /// `None`: the account signs in only through its federated identity (until a password
    /// reset gives it one).
    pub password_hash: Option<&'a str>,
    /// Whether the address counts as confirmed already (an identity provider vouched for it);
    /// otherwise a verification link is mailed.
    pub email_verified: bool,
    /// The language the personal garden is named in (a language tag; `None`: English).
    pub language: Option<&'a str>,
}

/// The name of a new account's personal garden in the language it signed up in: German
/// "Garten von Linda", else English "Linda's garden"; at most 200 characters.
pub fn personal_garden_name(display_name: &str, language: Option<&str>) -> String {
    let primary = language
        .and_then(|tag| tag.trim().split(['-', '_']).next())
        .map(str::to_ascii_lowercase);
    let name = match primary.as_deref() {
        Some("de") => format!("Garten von {display_name}"),
        _ => format!("{display_name}'s garden"),
    };
    name.chars().take(200).collect()
}

/// What else belongs to the new account, written in its opening transaction (a federated
/// login's identity): all or nothing with the account.
pub trait OpeningExtra: Sync {
    fn write<'c>(
        &'c self,
        tx: &'c mut sqlx::PgConnection,
        user: Uuid,
    ) -> futures_util::future::BoxFuture<'c, Result<(), AppError>>;
}

/// Registration's: nothing beyond the account.
struct NothingMore;

impl OpeningExtra for NothingMore {
    fn write<'c>(
        &'c self,
        _tx: &'c mut sqlx::PgConnection,
        _user: Uuid,
    ) -> futures_util::future::BoxFuture<'c, Result<(), AppError>> {
        Box::pin(async { Ok(()) })
    }
}

/// Opens an account as one unit: the personal garden's schema is built first, in status
/// `provisioning` (never served, its slug taken); then the account, its verification token
/// and mail (unless the address is confirmed), `extra`, and the garden's activation with the
/// account as its admin commit in one transaction. A crash or a lost database before that
/// commit leaves no account, only a `provisioning` garden that is removed at once or by the
/// reaper; after it, the account has its active personal garden. No account ever exists
/// without it. A taken address is 409 `DUPLICATE_ENTRY`.
pub async fn open_account(
    state: &AppState,
    opening: &Opening<'_>,
    extra: &dyn OpeningExtra,
) -> Result<User, AppError> {
    let db = state.platform_pool();
    // A taken address is refused before a schema is built for it; the insert below still
    // decides a race.
    if users::find_by_email(db, opening.email).await?.is_some() {
        return Err(account_exists());
    }
    let name = personal_garden_name(opening.display_name, opening.language);
    let mut tenant = prepare_personal_tenant(state, opening.email, &name).await?;
    let made = async {
        let mut tx = db.begin().await?;
        let user = users::insert(
            &mut *tx,
            &NewAccount {
                email: Some(opening.email),
                display_name: opening.display_name,
                account_type: AccountType::User,
                password_hash: opening.password_hash,
                email_verified: opening.email_verified,
            },
        )
        .await?
        .ok_or_else(account_exists)?;
        if !opening.email_verified && mails::within_hourly_budget(state, opening.email).await {
            let token = email_tokens::issue(&mut *tx, user.key, Purpose::VerifyEmail).await?;
            let mail = mails::verification(&state.config().frontend_url, &token);
            mails::queue(&mut tx, opening.email, mail).await?;
        }
        extra.write(&mut tx, user.key).await?;
        provision::activate(&mut *tx, &mut tenant, Some(user.key))
            .await
            .map_err(ProvisionError::into_app_error)?;
        tx.commit().await?;
        Ok::<_, AppError>(user)
    }
    .await;
    match made {
        Ok(user) => {
            state.mail_wakeup();
            Ok(user)
        }
        Err(err) => {
            provision::discard(state, &tenant).await;
            Err(err)
        }
    }
}

fn account_exists() -> AppError {
    AppError::duplicate("an account with this e-mail address exists")
}

/// The personal garden up to its activation (status `provisioning`), under a fresh slug.
async fn prepare_personal_tenant(
    state: &AppState,
    email: &Email,
    name: &str,
) -> Result<TenantRecord, AppError> {
    for _ in 0..3 {
        let slug = personal_slug(email)
            .ok_or_else(|| AppError::internal("could not derive a personal tenant slug"))?;
        match provision::prepare(
            state,
            &slug,
            name,
            ProvisionOptions {
                kind: TenantKind::Personal,
                ..ProvisionOptions::default()
            },
        )
        .await
        {
            Ok(tenant) => return Ok(tenant),
            Err(ProvisionError::SlugTaken(_)) => continue,
            // A lost database is a 503 (with Retry-After) like anywhere else.
            Err(err) => return Err(err.into_app_error()),
        }
    }
    Err(AppError::internal(
        "no free personal tenant slug after 3 tries",
    ))
}

/// Confirms an address. The first confirmation of an account that could log in unconfirmed
/// (`REQUIRE_EMAIL_VERIFICATION=false`) also ends every session and API key made before it:
/// whoever registered the address may not have been its owner.
pub async fn verify_email(state: &AppState, token: &str) -> Result<(), AppError> {
    let db = state.platform_pool();
    let mut tx = db.begin().await?;
    let Some(user) = email_tokens::consume(&mut *tx, token, Purpose::VerifyEmail).await? else {
        return Err(invalid_link());
    };
    let first = users::mark_email_verified(&mut *tx, user).await?;
    let take_back = first && !state.config().require_email_verification;
    let ended = if take_back {
        let ended = take_back_account(state, &mut tx, user).await?;
        // The owner hears what ended when anything beyond sessions did.
        if !ended.is_empty() {
            notify_taken_back(&mut tx, user, TakeBack::FirstConfirmation, &ended).await?;
        }
        Some(ended)
    } else {
        None
    };
    tx.commit().await?;
    state.caches().forget_user(user);
    if let Some(ended) = ended {
        ended.settle(state).await;
        refresh::revoke_all(state, user).await?;
        state.mail_wakeup();
    }
    Ok(())
}

/// Inside the caller's transaction: every access token (through the token generation, whose
/// one writer is `users::bump_token_generation`) and every API key of the account stop
/// working, and everything the account set up ends (`directory::grants::take_back`, the one
/// list: service accounts, calendar feeds, pending invitations, federated identities, push
/// subscriptions, webhooks in every garden, the members admitted through its invitations). The
/// removed members are mailed why. Refresh families follow with `refresh::revoke_all` after
/// the commit (and die at their next rotation anyway, their generation being old), and the
/// caller settles the result (caches, webhooks in the gardens' schemas).
async fn take_back_account(
    state: &AppState,
    tx: &mut sqlx::PgConnection,
    user: Uuid,
) -> Result<Ended, AppError> {
    users::bump_token_generation(&mut *tx, user).await?;
    let api_keys = crate::auth::api_keys::repo::revoke_all_of(&mut *tx, user).await?;
    let mut ended = grants::take_back(&mut *tx, user).await?;
    ended.api_keys = api_keys;
    grants::count_webhooks(state, &mut ended, user).await;
    for removed in &ended.members_removed {
        let Some(email) = removed.email.as_deref().and_then(|e| Email::parse(e).ok()) else {
            continue;
        };
        mails::queue(
            tx,
            &email,
            mails::removed_after_take_back(&removed.garden_name),
        )
        .await?;
    }
    tracing::info!(
        %user,
        revoked_keys = api_keys,
        service_accounts = ended.service_accounts.len(),
        calendar_feeds = ended.calendar_feeds,
        invitations = ended.invitations,
        federated_identities = ended.federated_identities.len(),
        push_subscriptions = ended.push_subscriptions,
        webhooks = ended.webhooks.enabled,
        members_removed = ended.members_removed.len(),
        "account taken back: sessions, API keys and everything it set up ended"
    );
    Ok(ended)
}

/// Queues the take-back notice to the account's address in the caller's transaction. Not
/// counted against the address's hourly budget: it follows a consumed one-time token, which
/// that budget already bounded.
async fn notify_taken_back(
    tx: &mut sqlx::PgConnection,
    user: Uuid,
    why: TakeBack,
    ended: &Ended,
) -> Result<(), AppError> {
    let Some(account) = users::get(&mut *tx, user).await? else {
        return Ok(());
    };
    let Some(email) = account.email.as_deref().and_then(|e| Email::parse(e).ok()) else {
        return Ok(());
    };
    mails::queue(tx, &email, mails::taken_back(why, ended)).await?;
    Ok(())
}

fn invalid_link() -> AppError {
    AppError::validation(vec![ErrorDetail::new(
        "body.token",
        "the link is invalid, already used or expired",
        "value_error",
    )])
}

pub async fn login(state: &AppState, form: &Login) -> Result<Session, AppError> {
    let db = state.platform_pool();
    let account = users::credentials_by_email(db, &form.email)
        .await?
        .filter(|c| c.user.account_type == AccountType::User);
    if let Some(until) = account.as_ref().and_then(|a| a.locked_until)
        && until > OffsetDateTime::now_utc()
    {
        return Err(locked(until));
    }
    // Unknown accounts verify against a decoy hash: same cost, same answer.
    let stored = account.as_ref().and_then(|a| a.password_hash.as_deref());
    let matched = state.passwords().verify(&form.password, stored).await?;
    let Some(account) = account else {
        return Err(bad_login());
    };
    if !matched {
        let lock = users::record_failed_login(db, account.user.key, FAILURES_BEFORE_LOCK, &|n| {
            lockout::lock_duration(n).as_secs() as i64
        })
        .await?;
        return Err(match lock {
            Some(until) => locked(until),
            None => bad_login(),
        });
    }
    if !account.user.is_active {
        return Err(AppError::new(
            ErrorCode::Forbidden,
            "this account is deactivated",
        ));
    }
    if state.config().require_email_verification && !account.user.email_verified {
        return Err(AppError::new(
            ErrorCode::EmailNotVerified,
            "confirm your e-mail address before the first login",
        ));
    }
    // Checked again after the hash: a concurrent guess may have locked the account meanwhile.
    if let Err(until) = users::record_login_success(db, account.user.key).await? {
        return Err(locked(until));
    }
    let refresh = refresh::start_family(
        state,
        account.user.key,
        account.token_generation,
        form.remember_me,
    )
    .await?;
    state.caches().forget_user(account.user.key);
    Ok(Session {
        access: access_token(state, account.user.key, account.token_generation)?,
        refresh,
        remember: form.remember_me,
    })
}

/// Why a federated sign-in found no session to start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoSession {
    /// The account is deactivated (or gone).
    Inactive,
    /// Locked after failed password logins; a federated login waits as a password would.
    Locked,
    /// `REQUIRE_EMAIL_VERIFICATION=true` and the account's address is not confirmed: as for a
    /// password login, no session before the confirmation.
    EmailNotVerified,
}

/// The session of an account just opened by [`register`] (its password was chosen a moment
/// ago): under `REQUIRE_EMAIL_VERIFICATION=false` the person is signed in at once, with the
/// same refresh family and access token as a password login (a session cookie); where
/// confirmation is required, `Err(NoSession::EmailNotVerified)` as for a login.
pub async fn signed_up_session(
    state: &AppState,
    user: Uuid,
) -> Result<Result<Session, NoSession>, AppError> {
    federated_session(state, user).await
}

/// A session for an account whose identity a provider vouched for (no password involved),
/// under the same `REQUIRE_EMAIL_VERIFICATION` as a password login:
/// the same refresh family and access token as a password login, a session cookie (no
/// `remember_me`).
pub async fn federated_session(
    state: &AppState,
    user: Uuid,
) -> Result<Result<Session, NoSession>, AppError> {
    let db = state.platform_pool();
    let Some(account) = users::credentials_by_id(db, user)
        .await?
        .filter(|a| a.user.is_active && a.user.account_type == AccountType::User)
    else {
        return Ok(Err(NoSession::Inactive));
    };
    if state.config().require_email_verification && !account.user.email_verified {
        return Ok(Err(NoSession::EmailNotVerified));
    }
    if users::record_login_success(db, user).await?.is_err() {
        return Ok(Err(NoSession::Locked));
    }
    let refresh = refresh::start_family(state, user, account.token_generation, false).await?;
    state.caches().forget_user(user);
    Ok(Ok(Session {
        access: access_token(state, user, account.token_generation)?,
        refresh,
        remember: false,
    }))
}

fn access_token(state: &AppState, user: Uuid, generation: i32) -> Result<TokenResponse, AppError> {
    let issued = state
        .jwt()
        .issue(user, generation)
        .map_err(AppError::internal)?;
    Ok(TokenResponse {
        access_token: issued.token,
        token_type: "bearer",
        expires_in: issued.expires_in,
    })
}

fn invalid_refresh() -> AppError {
    AppError::new(
        ErrorCode::InvalidToken,
        "the refresh token is invalid, expired or revoked; log in again",
    )
}

pub async fn refresh(
    state: &AppState,
    presented: Option<RefreshToken>,
) -> Result<Session, AppError> {
    let presented = presented.ok_or_else(invalid_refresh)?;
    let (user, remember, generation, token) = match refresh::rotate(state, &presented).await? {
        Rotation::Rotated {
            user,
            remember,
            generation,
            token,
        } => (user, remember, generation, token),
        Rotation::Reused | Rotation::Invalid => return Err(invalid_refresh()),
    };
    let account = users::credentials_by_id(state.platform_pool(), user).await?;
    // A family from before the account's last logout-all, password change or reset (or one
    // without a recorded generation) is over, whether or not the index still listed it.
    let Some(account) = account
        .filter(|a| a.user.is_active)
        .filter(|a| generation == Some(a.token_generation))
    else {
        refresh::revoke_family(state, token.family).await?;
        return Err(invalid_refresh());
    };
    Ok(Session {
        access: access_token(state, user, account.token_generation)?,
        refresh: token,
        remember,
    })
}

pub async fn logout(state: &AppState, presented: Option<RefreshToken>) -> Result<(), AppError> {
    if let Some(token) = presented {
        refresh::revoke_family(state, token.family).await?;
    }
    Ok(())
}

/// Ends every session of the user: refresh families in Redis and, through the token
/// generation in PostgreSQL, every access token issued before now.
pub async fn logout_all(state: &AppState, user: Uuid) -> Result<(), AppError> {
    users::bump_token_generation(state.platform_pool(), user).await?;
    state.caches().forget_user(user);
    refresh::revoke_all(state, user).await
}

/// Sends a reset link when the address belongs to an active account. Runs detached from the
/// request, so the answer and its timing are the same whether or not the address exists.
pub fn request_password_reset(state: &AppState, email: Email) {
    let state = state.clone();
    tokio::spawn(async move {
        if let Err(err) = send_reset(&state, &email).await {
            tracing::error!(error = %err, "password reset mail could not be queued");
        }
    });
}

async fn send_reset(state: &AppState, email: &Email) -> Result<(), AppError> {
    let db = state.platform_pool();
    let Some(user) = users::find_by_email(db, email).await? else {
        return Ok(());
    };
    if user.account_type != AccountType::User || !user.is_active {
        return Ok(());
    }
    if !mails::within_hourly_budget(state, email).await {
        return Ok(());
    }
    let mut tx = db.begin().await?;
    email_tokens::retire_unused(&mut *tx, user.key, Purpose::PasswordReset).await?;
    let token = email_tokens::issue(&mut *tx, user.key, Purpose::PasswordReset).await?;
    let mail = mails::password_reset(&state.config().frontend_url, &token);
    mails::queue(&mut tx, email, mail).await?;
    tx.commit().await?;
    state.mail_wakeup();
    Ok(())
}

/// Sets a new password with a mailed token. The token is checked and consumed before any
/// hashing work; every session and API key of the account ends with it, and everything the
/// account set up (see `take_back_account`), which takes an account back from whoever held
/// it. A notice to the address lists what was ended.
pub async fn confirm_password_reset(state: &AppState, form: &ResetConfirm) -> Result<(), AppError> {
    let db = state.platform_pool();
    let mut tx = db.begin().await?;
    let Some(user) = email_tokens::consume(&mut *tx, &form.token, Purpose::PasswordReset).await?
    else {
        return Err(invalid_link());
    };
    // A failed hash rolls the consumption back: the link still works.
    let hash = state.passwords().hash(&form.new_password).await?;
    users::set_password(&mut *tx, user, &hash).await?;
    // Following the link proved control of the mailbox.
    users::mark_email_verified(&mut *tx, user).await?;
    let ended = take_back_account(state, &mut tx, user).await?;
    notify_taken_back(&mut tx, user, TakeBack::PasswordReset, &ended).await?;
    tx.commit().await?;
    state.caches().forget_user(user);
    ended.settle(state).await;
    state.mail_wakeup();
    refresh::revoke_all(state, user).await
}

/// Checks the password of a logged-in person's account like a login does (the failure counts
/// towards the lockout; a locked account is 423). `field` names the body field in the 422.
/// Accounts without a password (service, system, or signed up through a provider) are 403.
pub async fn check_password(
    state: &AppState,
    user: Uuid,
    password: &str,
    field: &str,
) -> Result<(), AppError> {
    let db = state.platform_pool();
    let account = users::credentials_by_id(db, user)
        .await?
        .filter(|a| a.user.account_type == AccountType::User && a.password_hash.is_some())
        .ok_or_else(|| AppError::new(ErrorCode::Forbidden, "this account has no password"))?;
    if let Some(until) = account.locked_until
        && until > OffsetDateTime::now_utc()
    {
        return Err(locked(until));
    }
    if !state
        .passwords()
        .verify(password, account.password_hash.as_deref())
        .await?
    {
        let lock = users::record_failed_login(db, user, FAILURES_BEFORE_LOCK, &|n| {
            lockout::lock_duration(n).as_secs() as i64
        })
        .await?;
        return Err(match lock {
            Some(until) => locked(until),
            None => AppError::validation(vec![ErrorDetail::new(
                format!("body.{field}"),
                "the password is wrong",
                "value_error",
            )]),
        });
    }
    // Checked again after the hash: concurrent wrong guesses may have locked it meanwhile.
    if let Some(until) = users::current_lock(db, user).await? {
        return Err(locked(until));
    }
    Ok(())
}

/// Password change of a logged-in user: the current password is checked like a login (and
/// counts towards the lockout); afterwards every session ends, this one included.
pub async fn change_password(
    state: &AppState,
    user: Uuid,
    current: &str,
    new: &str,
) -> Result<(), AppError> {
    check_password(state, user, current, "current_password").await?;
    let hash = state.passwords().hash(new).await?;
    let db = state.platform_pool();
    let mut tx = db.begin().await?;
    users::set_password(&mut *tx, user, &hash).await?;
    users::bump_token_generation(&mut *tx, user).await?;
    tx.commit().await?;
    state.caches().forget_user(user);
    refresh::revoke_all(state, user).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn personal_slugs_are_valid_and_distinct() {
        let cases = [
            "anna@example.org",
            "a.b+c@example.org",
            "___@example.org",
            "äöü@example.org",
            "x@example.org",
        ];
        for raw in cases {
            let email = Email::parse(raw).expect("email");
            let a = personal_slug(&email).expect("slug");
            let b = personal_slug(&email).expect("slug");
            assert_ne!(a, b, "{raw}");
        }
        let long = Email::parse(&format!("{}@example.org", "a".repeat(64))).expect("email");
        assert!(personal_slug(&long).is_some());
    }

    #[test]
    fn the_personal_garden_is_named_in_the_sign_up_language() {
        let name = "Gärtnerin Test";
        assert_eq!(
            personal_garden_name(name, Some("de")),
            "Garten von Gärtnerin Test"
        );
        assert_eq!(
            personal_garden_name(name, Some("de-AT")),
            "Garten von Gärtnerin Test"
        );
        assert_eq!(
            personal_garden_name(name, Some("en")),
            "Gärtnerin Test's garden"
        );
        assert_eq!(
            personal_garden_name(name, Some("fr")),
            "Gärtnerin Test's garden"
        );
        assert_eq!(personal_garden_name(name, None), "Gärtnerin Test's garden");
        assert_eq!(
            personal_garden_name(&"x".repeat(300), Some("de"))
                .chars()
                .count(),
            200
        );
    }
}
