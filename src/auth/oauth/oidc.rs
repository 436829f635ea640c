//! The OpenID Connect side of a login, through the `openidconnect` crate: the provider's
//! endpoints and signing keys (from discovery or as registered), the authorization-code
//! exchange with the PKCE verifier, and the ID token's validation (signature through the JWKS,
//! `iss`, `aud`, `exp`, `iat`, `nonce`).
//!
//! Endpoints and keys are cached per process for [`METADATA_TTL`]; an ID token signed with a key
//! the cache does not know (`kid` rotated) fetches the JWKS once more, and again for another
//! unknown key only [`JWKS_REFRESH_GAP`] later, so a stream of forged `kid`s cannot turn the service into
//! a JWKS fetcher. The HTTP client follows no redirects (the library's advice against SSRF),
//! reads at most [`MAX_RESPONSE_BYTES`] and gives up after [`HTTP_TIMEOUT`].

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex, OnceLock};
use std::time::{Duration, Instant};

use openidconnect::core::{
    CoreClient, CoreIdTokenVerifier, CoreJsonWebKeySet, CoreProviderMetadata,
};
use openidconnect::{
    AuthType, AuthorizationCode, ClaimsVerificationError, ClientId, ClientSecret, HttpRequest,
    HttpResponse, IssuerUrl, JsonWebKeySetUrl, Nonce, PkceCodeVerifier, RedirectUrl,
    RequestTokenError, SignatureVerificationError, TokenUrl,
};

use super::model::Provider;

pub const METADATA_TTL: Duration = Duration::from_secs(3600);
pub const JWKS_REFRESH_GAP: Duration = Duration::from_secs(30);
pub const HTTP_TIMEOUT: Duration = Duration::from_secs(10);
pub const MAX_RESPONSE_BYTES: usize = 1 << 20;

/// Why a login could not be completed at the provider (each maps to an RFC 6749 error code).
#[derive(Debug, thiserror::Error)]
pub enum OidcError {
    /// The provider could not be reached or answered nonsense (discovery, JWKS, token call).
    #[error("identity provider unreachable: {0}")]
    Unreachable(String),
    /// The token endpoint refused the code (expired, used, wrong verifier, …); the RFC 6749
    /// code it sent when it is a known one.
    #[error("token endpoint refused the code: {0}")]
    Refused(&'static str),
    /// The ID token is missing or did not validate (signature, issuer, audience, expiry, nonce).
    #[error("ID token rejected: {0}")]
    BadIdToken(String),
    /// The provider row lacks what a login needs (no issuer).
    #[error("identity provider misconfigured: {0}")]
    Misconfigured(String),
}

/// What the service reads from a validated ID token.
#[derive(Debug, Clone)]
pub struct Claims {
    pub subject: String,
    pub email: Option<String>,
    pub email_verified: bool,
    pub name: Option<String>,
}

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct HttpError(String);

fn client() -> Option<&'static reqwest::Client> {
    static CLIENT: OnceLock<Option<reqwest::Client>> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
            let roots = rustls::RootCertStore {
                roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
            };
            let tls = rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .ok()?
                .with_root_certificates(roots)
                .with_no_client_auth();
            reqwest::Client::builder()
                .use_preconfigured_tls(tls)
                .redirect(reqwest::redirect::Policy::none())
                .timeout(HTTP_TIMEOUT)
                .build()
                .ok()
        })
        .as_ref()
}

/// `openidconnect`'s HTTP calls over the service's reqwest 0.13 (its own feature uses 0.12).
async fn http(request: HttpRequest) -> Result<HttpResponse, HttpError> {
    let client = client().ok_or_else(|| HttpError("no HTTP client (TLS setup failed)".into()))?;
    let request = reqwest::Request::try_from(request).map_err(|e| HttpError(e.to_string()))?;
    let mut res = client
        .execute(request)
        .await
        .map_err(|e| HttpError(e.to_string()))?;
    let mut builder = openidconnect::http::Response::builder().status(res.status());
    for (name, value) in res.headers() {
        builder = builder.header(name, value);
    }
    let mut body = Vec::new();
    while let Some(chunk) = res.chunk().await.map_err(|e| HttpError(e.to_string()))? {
        if body.len() + chunk.len() > MAX_RESPONSE_BYTES {
            return Err(HttpError("response larger than 1 MiB".into()));
        }
        body.extend_from_slice(&chunk);
    }
    builder.body(body).map_err(|e| HttpError(e.to_string()))
}

/// A provider's endpoints and keys, as used for one login.
#[derive(Clone)]
struct Endpoints {
    issuer: IssuerUrl,
    token_url: TokenUrl,
    authorize_url: String,
    jwks_url: JsonWebKeySetUrl,
    jwks: CoreJsonWebKeySet,
    /// client_secret_post only when the provider does not offer client_secret_basic.
    post_auth: bool,
    fetched: Instant,
    /// When an unknown `kid` last made the keys be fetched again.
    kid_refresh: Option<Instant>,
}

/// The cache key: everything of the row that decides where endpoints come from, so a changed
/// row never meets an old entry.
fn cache_key(p: &Provider) -> String {
    format!(
        "{}\n{}\n{}\n{}",
        p.issuer.as_deref().unwrap_or(""),
        p.authorize_url.as_deref().unwrap_or(""),
        p.token_url.as_deref().unwrap_or(""),
        p.jwks_url.as_deref().unwrap_or("")
    )
}

static CACHE: LazyLock<Mutex<HashMap<String, Endpoints>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

fn cached(key: &str) -> Option<Endpoints> {
    let cache = CACHE.lock().ok()?;
    cache
        .get(key)
        .filter(|e| e.fetched.elapsed() < METADATA_TTL)
        .cloned()
}

fn keep(key: String, endpoints: Endpoints) {
    if let Ok(mut cache) = CACHE.lock() {
        cache.insert(key, endpoints);
    }
}

fn unreachable(err: impl std::fmt::Display) -> OidcError {
    OidcError::Unreachable(err.to_string())
}

fn bad_url(what: &str) -> impl Fn(url::ParseError) -> OidcError + '_ {
    move |e| OidcError::Misconfigured(format!("{what}: {e}"))
}

async fn fetch(p: &Provider) -> Result<Endpoints, OidcError> {
    let issuer_raw = p
        .issuer
        .as_deref()
        .ok_or_else(|| OidcError::Misconfigured("no issuer".into()))?;
    let issuer = IssuerUrl::new(issuer_raw.to_owned()).map_err(bad_url("issuer"))?;
    let now = Instant::now();
    match (&p.authorize_url, &p.token_url, &p.jwks_url) {
        (Some(authorize), Some(token), Some(jwks_url)) => {
            let jwks_url = JsonWebKeySetUrl::new(jwks_url.clone()).map_err(bad_url("jwks_url"))?;
            let jwks = CoreJsonWebKeySet::fetch_async(&jwks_url, &http)
                .await
                .map_err(unreachable)?;
            Ok(Endpoints {
                issuer,
                token_url: TokenUrl::new(token.clone()).map_err(bad_url("token_url"))?,
                authorize_url: authorize.clone(),
                jwks_url,
                jwks,
                post_auth: p.token_auth_method.as_deref() == Some("client_secret_post"),
                fetched: now,
                kid_refresh: None,
            })
        }
        _ => {
            // Discovery also checks that the document names this issuer, and fetches the JWKS.
            let metadata = CoreProviderMetadata::discover_async(issuer.clone(), &http)
                .await
                .map_err(unreachable)?;
            let token_url = metadata
                .token_endpoint()
                .cloned()
                .ok_or_else(|| unreachable("discovery names no token endpoint"))?;
            let offered: Vec<String> = metadata
                .token_endpoint_auth_methods_supported()
                .map(|methods| {
                    methods
                        .iter()
                        .filter_map(|m| serde_json::to_value(m).ok())
                        .filter_map(|v| v.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
            // Absent, the default is client_secret_basic (OpenID Connect Discovery 1.0 §3).
            let post_auth = match p.token_auth_method.as_deref() {
                Some(method) => method == "client_secret_post",
                None => {
                    !offered.is_empty()
                        && !offered.iter().any(|m| m == "client_secret_basic")
                        && offered.iter().any(|m| m == "client_secret_post")
                }
            };
            Ok(Endpoints {
                issuer,
                token_url,
                authorize_url: metadata.authorization_endpoint().to_string(),
                jwks_url: metadata.jwks_uri().clone(),
                jwks: metadata.jwks().clone(),
                post_auth,
                fetched: now,
                kid_refresh: None,
            })
        }
    }
}

async fn endpoints(p: &Provider) -> Result<Endpoints, OidcError> {
    let key = cache_key(p);
    if let Some(hit) = cached(&key) {
        return Ok(hit);
    }
    let fresh = fetch(p).await?;
    keep(key, fresh.clone());
    Ok(fresh)
}

/// The provider's authorization endpoint: the registered one, else from discovery.
pub async fn authorize_url(p: &Provider) -> Result<String, OidcError> {
    if let Some(registered) = &p.authorize_url {
        return Ok(registered.clone());
    }
    Ok(endpoints(p).await?.authorize_url)
}

/// What the callback hands over for the exchange.
pub struct Exchange<'a> {
    pub code: &'a str,
    pub verifier: &'a str,
    pub nonce: &'a str,
    pub redirect_uri: &'a str,
    pub client_secret: &'a str,
}

/// RFC 6749 §5.2 codes passed on from the token endpoint (anything else: `server_error`).
fn token_error_code(raw: &str) -> &'static str {
    const KNOWN: &[&str] = &[
        "invalid_request",
        "invalid_client",
        "invalid_grant",
        "unauthorized_client",
        "unsupported_grant_type",
        "invalid_scope",
    ];
    KNOWN
        .iter()
        .find(|k| **k == raw)
        .copied()
        .unwrap_or("server_error")
}

/// Exchanges the code and validates the ID token; the provider's tokens are dropped here.
pub async fn exchange(p: &Provider, ex: &Exchange<'_>) -> Result<Claims, OidcError> {
    let mut ends = endpoints(p).await?;
    let redirect = RedirectUrl::new(ex.redirect_uri.to_owned()).map_err(bad_url("redirect_uri"))?;
    let build = |ends: &Endpoints| {
        CoreClient::new(
            ClientId::new(p.client_id.clone()),
            ends.issuer.clone(),
            ends.jwks.clone(),
        )
        .set_client_secret(ClientSecret::new(ex.client_secret.to_owned()))
        .set_token_uri(ends.token_url.clone())
        .set_redirect_uri(redirect.clone())
        .set_auth_type(if ends.post_auth {
            AuthType::RequestBody
        } else {
            AuthType::BasicAuth
        })
    };
    let client = build(&ends);
    let response = client
        .exchange_code(AuthorizationCode::new(ex.code.to_owned()))
        .set_pkce_verifier(PkceCodeVerifier::new(ex.verifier.to_owned()))
        .request_async(&http)
        .await
        .map_err(|err| match err {
            RequestTokenError::ServerResponse(body) => {
                OidcError::Refused(token_error_code(body.error().as_ref()))
            }
            other => unreachable(other),
        })?;
    let id_token = openidconnect::TokenResponse::id_token(&response)
        .ok_or_else(|| OidcError::BadIdToken("the token response has no id_token".into()))?
        .clone();
    let nonce = Nonce::new(ex.nonce.to_owned());
    let verified = {
        let verifier: CoreIdTokenVerifier = client.id_token_verifier();
        id_token.claims(&verifier, &nonce).cloned()
    };
    let claims = match verified {
        Ok(claims) => claims,
        Err(ClaimsVerificationError::SignatureVerification(
            SignatureVerificationError::NoMatchingKey,
        )) if ends
            .kid_refresh
            .is_none_or(|at| at.elapsed() >= JWKS_REFRESH_GAP) =>
        {
            // The provider may have rotated its keys: fetch them once more and try again.
            ends.jwks = CoreJsonWebKeySet::fetch_async(&ends.jwks_url, &http)
                .await
                .map_err(unreachable)?;
            ends.kid_refresh = Some(Instant::now());
            keep(cache_key(p), ends.clone());
            let client = build(&ends);
            let verifier: CoreIdTokenVerifier = client.id_token_verifier();
            id_token
                .claims(&verifier, &nonce)
                .cloned()
                .map_err(|e| OidcError::BadIdToken(e.to_string()))?
        }
        Err(err) => return Err(OidcError::BadIdToken(err.to_string())),
    };
    Ok(Claims {
        subject: claims.subject().as_str().to_owned(),
        email: claims.email().map(|e| e.as_str().to_owned()),
        email_verified: claims.email_verified().unwrap_or(false),
        name: claims
            .name()
            .and_then(|n| n.get(None))
            .map(|n| n.as_str().to_owned()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_rfc_6749_token_errors_pass() {
        assert_eq!(token_error_code("invalid_grant"), "invalid_grant");
        assert_eq!(token_error_code("<b>oops</b>"), "server_error");
    }
}
