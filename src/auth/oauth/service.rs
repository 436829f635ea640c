//! Sign-in with OpenID providers: the provider registry (platform admin), the authorization
//! request, the callback (state check, code exchange, ID token, account), and the linked
//! identities of an account.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use uuid::Uuid;

use super::model::{Identity, NewProvider, Provider, ProviderUpdate, PublicProvider};
use super::oidc::{self, Claims, OidcError};
use super::repo::{self, Deleted};
use crate::auth::accounts::service::{self as accounts, NoSession, Opening, OpeningExtra, Session};
use crate::auth::secrets::{SecretHash, equal_secrets, random_secret};
use crate::directory::users::model::Email;
use crate::directory::users::repo as users;
use crate::error::{AppError, ErrorCode};
use crate::state::AppState;

/// How long a browser may take at the provider before the `state` expires.
pub const STATE_TTL_SECONDS: u64 = 600;
const DEFAULT_SCOPES: &str = "openid email profile";

pub async fn list_public(state: &AppState) -> Result<Vec<PublicProvider>, AppError> {
    let providers = repo::list(state.platform_pool(), true).await?;
    Ok(providers.into_iter().map(PublicProvider::from).collect())
}

pub async fn list(state: &AppState) -> Result<Vec<Provider>, AppError> {
    Ok(repo::list(state.platform_pool(), false).await?)
}

fn fernet(state: &AppState) -> Result<fernet::Fernet, AppError> {
    crate::auth::sealed::configured(state.config()).ok_or_else(|| {
        AppError::new(
            ErrorCode::StateConflict,
            "FERNET_KEY is not configured: identity-provider secrets cannot be stored",
        )
    })
}

/// Adds a provider; its client secret is stored only as a Fernet token under `FERNET_KEY`.
pub async fn create(state: &AppState, new: &NewProvider) -> Result<Provider, AppError> {
    let encrypted = fernet(state)?.encrypt(new.client_secret.as_bytes());
    let row = repo::NewRow {
        slug: &new.slug,
        display_name: &new.display_name,
        icon_url: new.icon_url.as_deref(),
        issuer: &new.issuer,
        authorize_url: new.authorize_url.as_deref(),
        token_url: new.token_url.as_deref(),
        jwks_url: new.jwks_url.as_deref(),
        token_auth_method: new.token_auth_method.as_deref(),
        client_id: &new.client_id,
        client_secret_encrypted: &encrypted,
        scopes: new.scopes.as_deref().unwrap_or(DEFAULT_SCOPES),
        trust_email: new.trust_email,
    };
    repo::insert(state.platform_pool(), &row)
        .await?
        .ok_or_else(|| AppError::duplicate(format!("a provider with slug {} exists", new.slug)))
}

/// Removes a provider nobody signs in with; one with linked identities is 409
/// `STATE_CONFLICT` (disable it instead: its users keep their accounts and can unlink).
pub async fn delete(state: &AppState, slug: &str) -> Result<(), AppError> {
    match repo::delete(state.platform_pool(), slug).await? {
        Deleted::Yes => Ok(()),
        Deleted::NotFound => Err(AppError::not_found("identity provider")),
        Deleted::InUse => Err(AppError::new(
            ErrorCode::StateConflict,
            "accounts sign in with this provider: disable it instead (PATCH enabled=false)",
        )),
    }
}

/// Switches new logins with the provider on or off (off takes effect at once, also for
/// flows already started) and/or the trust in its `email_verified` (`None`: kept).
pub async fn update(
    state: &AppState,
    slug: &str,
    update: &ProviderUpdate,
) -> Result<Provider, AppError> {
    repo::update(
        state.platform_pool(),
        slug,
        update.enabled,
        update.trust_email,
    )
    .await?
    .ok_or_else(|| AppError::not_found("identity provider"))
}

/// The client secret in clear text, for the code exchange (decrypted only when needed).
pub async fn client_secret(state: &AppState, slug: &str) -> Result<String, AppError> {
    let token = repo::encrypted_secret(state.platform_pool(), slug)
        .await?
        .ok_or_else(|| AppError::not_found("identity provider"))?;
    let bytes = fernet(state)?.decrypt(&token).map_err(|_| {
        AppError::internal("identity-provider secret does not decrypt with FERNET_KEY")
    })?;
    String::from_utf8(bytes).map_err(AppError::internal)
}

/// What Redis keeps for one pending authorization (single use, short-lived).
#[derive(Serialize, Deserialize)]
struct Pending {
    provider: String,
    verifier: String,
    /// Sent as `nonce`; the ID token must carry it back.
    nonce: String,
    /// The account that started the flow to link the identity to it (`/link`).
    #[serde(default)]
    link_user: Option<Uuid>,
}

fn pending_key(state: &AppState, oauth_state: &str) -> String {
    let digest = SecretHash::of(oauth_state).to_hex();
    state.redis_key("oauth", &digest, &[])
}

fn redis_down(err: impl std::fmt::Display) -> AppError {
    crate::metrics::redis_error(crate::metrics::RedisUse::OAuth);
    AppError::unavailable("session store", err.to_string())
}

/// PKCE S256: the challenge is the URL-safe Base64 SHA-256 of the verifier (RFC 7636).
pub fn pkce_challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// Where the provider sends the browser back to.
pub fn callback_url(state: &AppState, slug: &str) -> String {
    format!(
        "{}/api/v1/auth/oauth/{slug}/callback",
        state.config().public_url
    )
}

/// A started authorization: the provider URL to redirect to and the `state` the browser must
/// bring back (also set as a cookie, binding the flow to this browser).
pub struct Authorization {
    pub redirect_to: String,
    pub state: String,
}

/// Starts a login (`link_user: None`) or the linking of an identity to the caller's account.
/// A missing or disabled provider is 404; an unreachable one (discovery) 503.
pub async fn begin(
    state: &AppState,
    slug: &str,
    link_user: Option<Uuid>,
) -> Result<Authorization, AppError> {
    let provider = repo::find(state.platform_pool(), slug)
        .await?
        .filter(|p| p.enabled)
        .ok_or_else(|| AppError::not_found("identity provider"))?;
    let authorize_url = oidc::authorize_url(&provider).await.map_err(|err| {
        tracing::warn!(provider = slug, error = %err, "identity provider unreachable at login start");
        AppError::unavailable("identity provider", err.to_string())
    })?;
    let oauth_state = random_secret();
    let verifier = random_secret();
    let nonce = random_secret();
    let query = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("response_type", "code")
        .append_pair("client_id", &provider.client_id)
        .append_pair("redirect_uri", &callback_url(state, slug))
        .append_pair("scope", &provider.scopes)
        .append_pair("state", &oauth_state)
        .append_pair("nonce", &nonce)
        .append_pair("code_challenge", &pkce_challenge(&verifier))
        .append_pair("code_challenge_method", "S256")
        .finish();
    let separator = if authorize_url.contains('?') {
        '&'
    } else {
        '?'
    };
    let redirect_to = format!("{authorize_url}{separator}{query}");
    let pending = serde_json::to_string(&Pending {
        provider: provider.slug,
        verifier,
        nonce,
        link_user,
    })
    .map_err(AppError::internal)?;
    let mut conn = state.redis().get().await.map_err(redis_down)?;
    redis::cmd("SET")
        .arg(pending_key(state, &oauth_state))
        .arg(pending)
        .arg("EX")
        .arg(STATE_TTL_SECONDS)
        .query_async::<()>(&mut conn)
        .await
        .map_err(redis_down)?;
    Ok(Authorization {
        redirect_to,
        state: oauth_state,
    })
}

/// What the provider sent back to the callback.
pub struct CallbackQuery<'a> {
    pub code: Option<&'a str>,
    pub state: Option<&'a str>,
    pub error: Option<&'a str>,
    /// The `state` cookie this browser got when the flow started.
    pub cookie_state: Option<&'a str>,
}

/// Why a callback ended without a session: an RFC 6749 error code for the front end and a
/// stable reason (`error_description`). Nothing was created.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refusal {
    pub error: &'static str,
    pub reason: &'static str,
}

impl Refusal {
    const fn new(error: &'static str, reason: &'static str) -> Self {
        Self { error, reason }
    }
}

/// Missing, foreign, expired or already used `state`.
pub const INVALID_STATE: Refusal = Refusal::new("invalid_request", "invalid_state");

/// An audit event of a callback: the action and its account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub action: &'static str,
    pub user: Uuid,
    /// `None`: done; `Some(class)`: refused (audited as `denied`).
    pub refused: Option<&'static str>,
}

pub const LOGIN_ACTION: &str = "http.oauth_login";
pub const LINK_ACTION: &str = "http.oauth_identity_link";
pub const UNLINK_ACTION: &str = "http.oauth_identity_unlink";

/// The callback's end.
pub enum CallbackOutcome {
    /// Logged in: the session to set and the account's new access token.
    LoggedIn {
        session: Session,
        user: Uuid,
        /// The account was made by this login.
        created: bool,
        events: Vec<Event>,
    },
    Refused {
        refusal: Refusal,
        /// A refusal that concerns an existing account (e-mail takeover attempt).
        events: Vec<Event>,
    },
}

fn refused(error: &'static str, reason: &'static str) -> CallbackOutcome {
    CallbackOutcome::Refused {
        refusal: Refusal::new(error, reason),
        events: Vec::new(),
    }
}

/// The provider's error, passed on only when it is one of RFC 6749's codes (never raw text).
fn provider_error(raw: &str) -> &'static str {
    const KNOWN: &[&str] = &[
        "access_denied",
        "invalid_request",
        "unauthorized_client",
        "unsupported_response_type",
        "invalid_scope",
        "server_error",
        "temporarily_unavailable",
    ];
    KNOWN
        .iter()
        .find(|k| **k == raw)
        .copied()
        .unwrap_or("server_error")
}

/// The callback: the provider must exist (404 otherwise); `state` must equal this browser's
/// cookie and be a pending, unused authorization of this provider (it is consumed either way);
/// the provider must still be enabled; then the code is exchanged, the ID token validated and
/// the account found, linked or made. Every refusal creates nothing.
pub async fn callback(
    state: &AppState,
    slug: &str,
    query: &CallbackQuery<'_>,
) -> Result<CallbackOutcome, AppError> {
    let Some(provider) = repo::find(state.platform_pool(), slug).await? else {
        return Err(AppError::not_found("identity provider"));
    };
    let (Some(presented), Some(cookie)) = (query.state, query.cookie_state) else {
        return Ok(refused(INVALID_STATE.error, INVALID_STATE.reason));
    };
    if presented.is_empty() || presented.len() > 200 || !equal_secrets(presented, cookie) {
        return Ok(refused(INVALID_STATE.error, INVALID_STATE.reason));
    }
    let mut conn = state.redis().get().await.map_err(redis_down)?;
    let pending: Option<String> = redis::cmd("GETDEL")
        .arg(pending_key(state, presented))
        .query_async(&mut conn)
        .await
        .map_err(redis_down)?;
    drop(conn);
    let pending = match pending.and_then(|raw| serde_json::from_str::<Pending>(&raw).ok()) {
        Some(p) if p.provider == slug => p,
        _ => return Ok(refused(INVALID_STATE.error, INVALID_STATE.reason)),
    };
    if let Some(error) = query.error {
        return Ok(refused(provider_error(error), "provider_error"));
    }
    let Some(code) = query.code.filter(|c| !c.is_empty() && c.len() <= 2048) else {
        return Ok(refused("invalid_request", "missing_code"));
    };
    if !provider.enabled {
        return Ok(refused("access_denied", "provider_disabled"));
    }
    let secret = match client_secret(state, slug).await {
        Ok(secret) => secret,
        Err(err) => {
            tracing::error!(provider = slug, error = %err, "identity-provider secret unusable");
            return Ok(refused("server_error", "provider_misconfigured"));
        }
    };
    let redirect_uri = callback_url(state, slug);
    let exchanged = oidc::exchange(
        &provider,
        &oidc::Exchange {
            code,
            verifier: &pending.verifier,
            nonce: &pending.nonce,
            redirect_uri: &redirect_uri,
            client_secret: &secret,
        },
    )
    .await;
    let claims = match exchanged {
        Ok(claims) => claims,
        Err(err) => {
            tracing::warn!(provider = slug, error = %err, "federated login failed at the provider");
            return Ok(match err {
                OidcError::Unreachable(_) => {
                    refused("temporarily_unavailable", "provider_unreachable")
                }
                OidcError::Refused(code) => refused(code, "code_refused"),
                OidcError::BadIdToken(_) => refused("invalid_grant", "id_token_invalid"),
                OidcError::Misconfigured(_) => refused("server_error", "provider_misconfigured"),
            });
        }
    };
    if claims.subject.is_empty() || claims.subject.chars().count() > 255 {
        return Ok(refused("invalid_grant", "id_token_invalid"));
    }
    sign_in(state, &provider, &claims, pending.link_user).await
}

/// With `REQUIRE_EMAIL_VERIFICATION=true`: an address nobody confirmed starts no session.
pub const EMAIL_NOT_VERIFIED: Refusal = Refusal::new("access_denied", "email_not_verified");

/// Whether a session could start for the account (active, not locked, its address confirmed
/// where that is required): checked before any identity is written, so a refusal creates
/// nothing. `federated_session` checks the same again.
async fn eligible(state: &AppState, user: Uuid) -> Result<Option<Refusal>, AppError> {
    let account = users::credentials_by_id(state.platform_pool(), user).await?;
    let require_verified = state.config().require_email_verification;
    Ok(match account {
        Some(a) if !a.user.is_active => Some(Refusal::new("access_denied", "account_inactive")),
        Some(a)
            if a.locked_until
                .is_some_and(|t| t > time::OffsetDateTime::now_utc()) =>
        {
            Some(Refusal::new("access_denied", "account_locked"))
        }
        Some(a) if require_verified && !a.user.email_verified => Some(EMAIL_NOT_VERIFIED),
        Some(_) => None,
        None => Some(Refusal::new("access_denied", "account_inactive")),
    })
}

/// The identity row of a new account, written in the account's opening transaction.
struct NewIdentity<'a> {
    provider: &'a str,
    claims: &'a Claims,
}

impl OpeningExtra for NewIdentity<'_> {
    fn write<'c>(
        &'c self,
        tx: &'c mut sqlx::PgConnection,
        user: Uuid,
    ) -> futures_util::future::BoxFuture<'c, Result<(), AppError>> {
        Box::pin(async move {
            if repo::insert_identity(
                tx,
                user,
                self.provider,
                &self.claims.subject,
                self.claims.email.as_deref(),
            )
            .await?
            {
                Ok(())
            } else {
                // A concurrent first login with the same identity won.
                Err(AppError::duplicate("this identity is linked already"))
            }
        })
    }
}

/// A display name from the provider's `name`, else the address's local part.
fn display_name(claims: &Claims, email: &Email) -> String {
    let clean = |raw: &str| -> String {
        raw.chars()
            .filter(|c| !c.is_control())
            .collect::<String>()
            .trim()
            .chars()
            .take(120)
            .collect()
    };
    let name = claims.name.as_deref().map(clean).unwrap_or_default();
    if !name.is_empty() {
        return name;
    }
    let local = clean(email.as_str().split('@').next().unwrap_or(""));
    if local.is_empty() {
        "Gardener".to_owned()
    } else {
        local
    }
}

/// Whether the provider vouches for the address in the ID token: it is trusted with addresses
/// (`trust_email`) and says it confirmed this one. Nothing else joins or confirms by address.
fn vouches(provider: &Provider, claims: &Claims) -> bool {
    provider.trust_email && claims.email_verified
}

async fn sign_in(
    state: &AppState,
    provider: &Provider,
    claims: &Claims,
    link_user: Option<Uuid>,
) -> Result<CallbackOutcome, AppError> {
    let db = state.platform_pool();
    let slug = provider.slug.as_str();
    let vouched = vouches(provider, claims);
    let owner = repo::identity_owner(db, slug, &claims.subject).await?;
    let email = claims.email.as_deref();
    let event = |action, user| Event {
        action,
        user,
        refused: None,
    };
    let (user, created, mut events) = match (owner, link_user) {
        (Some(owner), Some(linker)) if owner != linker => {
            return Ok(refused(
                "access_denied",
                "identity_linked_to_another_account",
            ));
        }
        (Some(owner), _) => {
            if let Some(refusal) = eligible(state, owner).await? {
                return Ok(refused(refusal.error, refusal.reason));
            }
            repo::touch_identity(db, slug, &claims.subject, email).await?;
            (owner, false, Vec::new())
        }
        (None, Some(linker)) => {
            if let Some(refusal) = eligible(state, linker).await? {
                return Ok(refused(refusal.error, refusal.reason));
            }
            if !repo::insert_identity(db, linker, slug, &claims.subject, email).await? {
                return Ok(refused(
                    "access_denied",
                    "identity_linked_to_another_account",
                ));
            }
            (linker, false, vec![event(LINK_ACTION, linker)])
        }
        (None, None) => {
            let Some(address) = email.and_then(|e| Email::parse(e).ok()) else {
                return Ok(refused("access_denied", "email_required"));
            };
            match users::find_by_email(db, &address).await? {
                Some(local) => {
                    // Only a provider that vouches for the address, and a confirmed local
                    // address, join the identity to an existing account: anything less would
                    // hand the account to whoever asserts its address (pre-hijack, nOAuth).
                    if !(vouched && local.email_verified) {
                        let (reason, class) = if provider.trust_email {
                            ("account_exists_email_unverified", "email_not_verified")
                        } else {
                            ("account_exists_provider_untrusted", "provider_untrusted")
                        };
                        return Ok(CallbackOutcome::Refused {
                            refusal: Refusal::new("access_denied", reason),
                            events: vec![Event {
                                action: LINK_ACTION,
                                user: local.key,
                                refused: Some(class),
                            }],
                        });
                    }
                    if let Some(refusal) = eligible(state, local.key).await? {
                        return Ok(refused(refusal.error, refusal.reason));
                    }
                    if !repo::insert_identity(db, local.key, slug, &claims.subject, email).await? {
                        return Ok(refused(
                            "access_denied",
                            "identity_linked_to_another_account",
                        ));
                    }
                    (local.key, false, vec![event(LINK_ACTION, local.key)])
                }
                None => {
                    // An address nobody vouched for opens no account where confirmation is
                    // required (it could sign in to nothing), and an unconfirmed one elsewhere.
                    if !vouched && state.config().require_email_verification {
                        return Ok(refused(EMAIL_NOT_VERIFIED.error, EMAIL_NOT_VERIFIED.reason));
                    }
                    let name = display_name(claims, &address);
                    let opened = accounts::open_account(
                        state,
                        &Opening {
                            email: &address,
                            display_name: &name,
                            password_hash: None,
                            email_verified: vouched,
                            language: None,
                        },
                        &NewIdentity {
                            provider: slug,
                            claims,
                        },
                    )
                    .await;
                    match opened {
                        Ok(user) => (user.key, true, vec![event(LINK_ACTION, user.key)]),
                        // A concurrent login made the account or linked the identity first.
                        Err(err) if err.code() == ErrorCode::DuplicateEntry => {
                            return Ok(refused("temporarily_unavailable", "concurrent_sign_in"));
                        }
                        Err(err) => return Err(err),
                    }
                }
            }
        }
    };
    match accounts::federated_session(state, user).await? {
        Ok(session) => {
            events.push(event(LOGIN_ACTION, user));
            Ok(CallbackOutcome::LoggedIn {
                session,
                user,
                created,
                events,
            })
        }
        Err(NoSession::Inactive) => Ok(refused("access_denied", "account_inactive")),
        Err(NoSession::Locked) => Ok(refused("access_denied", "account_locked")),
        Err(NoSession::EmailNotVerified) => {
            Ok(refused(EMAIL_NOT_VERIFIED.error, EMAIL_NOT_VERIFIED.reason))
        }
    }
}

/// The caller's linked identities, oldest first.
pub async fn identities(state: &AppState, user: Uuid) -> Result<Vec<Identity>, AppError> {
    Ok(repo::identities_of(state.platform_pool(), user).await?)
}

/// Removes one of the caller's identities; returns its provider. The last way to sign in
/// (no password, one identity) stays: 409 `STATE_CONFLICT`.
pub async fn unlink(state: &AppState, user: Uuid, id: Uuid) -> Result<String, AppError> {
    let mut tx = state.platform_pool().begin().await?;
    let (has_password, count) = repo::sign_in_ways_for_update(&mut *tx, user).await?;
    let provider = repo::delete_identity(&mut *tx, user, id)
        .await?
        .ok_or_else(|| AppError::not_found("linked identity"))?;
    if !has_password && count <= 1 {
        return Err(AppError::new(
            ErrorCode::StateConflict,
            "this is the account's only way to sign in: set a password (password reset) or link              another provider first",
        ));
    }
    tx.commit().await?;
    Ok(provider)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pkce_challenge_is_base64url_sha256_of_the_verifier() {
        // Expected value computed independently (Python: hashlib.sha256 + urlsafe_b64encode).
        assert_eq!(
            pkce_challenge("dBjftJeZ4CVP-mB92K27uhbUHU1p1r_wW1gFWFOEjXk"),
            "TesshWscHNssug8Bm0UPy8s830algAk9wCMHKOKbolI"
        );
    }

    #[test]
    fn only_known_provider_errors_pass() {
        assert_eq!(provider_error("access_denied"), "access_denied");
        assert_eq!(provider_error("<script>"), "server_error");
    }
}
