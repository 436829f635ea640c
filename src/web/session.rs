//! The pages' session: the `kv_session` cookie (HttpOnly, SameSite=Lax, Secure unless
//! `DEBUG=true`, path `/app`) holds the token of a refresh family opened by the sign-in page,
//! never rotated and never sent to the API. A page request checks the family in Redis (still
//! open, this token current) and the account's token generation, so logout, logout-all, a
//! password change or reset and erasure end a web session exactly as they end an API one.
//!
//! Forms carry a CSRF token: for a session, an HMAC of the cookie under the service's secret;
//! before sign-in, the value of a `kv_form` cookie of its own (double submit). A page never
//! shows the token itself but the token masked for that response ([`mask`]: a fresh random
//! pad and the pad XORed with the token, as Rails and Django do), so no two responses carry
//! the same bytes and a compressed page cannot leak the token to BREACH-style guessing. A
//! posted value is unmasked and compared with the token in constant time; the bare token, a
//! value of another session and anything malformed are refused. Nothing is ever put where
//! scripts could read it.

use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use rand::Rng;
use salvo::http::cookie::{Cookie, SameSite};
use salvo::prelude::*;
use sha2::Sha256;
use uuid::Uuid;

use super::i18n::Lang;
use crate::auth::refresh::{self, RefreshToken};
use crate::auth::secrets::{equal_secrets, random_secret};
use crate::auth::{AccountType, Credential, Principal};
use crate::config::Config;
use crate::directory::users::model::User;
use crate::error::AppError;
use crate::platform::preferences::model::Preferences;
use crate::state::AppState;

pub const SESSION_COOKIE: &str = "kv_session";
pub const FORM_COOKIE: &str = "kv_form";
pub const LANG_COOKIE: &str = "kv_lang";
/// The name of every form's CSRF field.
pub const CSRF_FIELD: &str = "_csrf";
const PATH: &str = "/app";

/// A signed-in person on the pages.
#[derive(Clone)]
pub struct WebSession {
    pub principal: Principal,
    pub user: Arc<User>,
    pub prefs: Preferences,
    pub lang: Lang,
    /// The family the cookie names (sign-out ends it).
    pub family: Uuid,
    /// The CSRF value every form of this response carries: the session's token masked for
    /// this request (read once per request), never the token itself.
    pub csrf: String,
    /// The session's CSRF token (an HMAC of the cookie), never written into a page.
    csrf_token: String,
}

impl WebSession {
    /// Whether a form's CSRF value is this session's token, masked (by any response).
    pub fn csrf_ok(&self, presented: Option<&str>) -> bool {
        presented.is_some_and(|p| masked_matches(p, &self.csrf_token))
    }
}

/// The token masked for one response: URL-safe Base64 of a fresh random pad followed by the
/// pad XORed with the token's bytes. A random pad per response makes the bytes on the page
/// differ every time while [`unmask`] still recovers the token.
pub fn mask(token: &str) -> String {
    let token = token.as_bytes();
    let mut pad = vec![0u8; token.len()];
    rand::rng().fill_bytes(&mut pad);
    let mut out = Vec::with_capacity(token.len() * 2);
    out.extend_from_slice(&pad);
    out.extend(pad.iter().zip(token).map(|(p, t)| p ^ t));
    URL_SAFE_NO_PAD.encode(out)
}

/// The token a masked value carries; `None` for anything that is not one (not Base64, an odd
/// or empty length, not text once unmasked).
fn unmask(presented: &str) -> Option<String> {
    let raw = URL_SAFE_NO_PAD.decode(presented).ok()?;
    if raw.is_empty() || raw.len() % 2 != 0 {
        return None;
    }
    let (pad, xored) = raw.split_at(raw.len() / 2);
    String::from_utf8(pad.iter().zip(xored).map(|(p, x)| p ^ x).collect()).ok()
}

/// Whether `presented` is `token` masked, compared in constant time.
fn masked_matches(presented: &str, token: &str) -> bool {
    !token.is_empty() && unmask(presented).is_some_and(|t| equal_secrets(&t, token))
}

fn cookie(name: &'static str, value: String, config: &Config) -> Cookie<'static> {
    Cookie::build((name, value))
        .path(PATH)
        .http_only(true)
        .same_site(SameSite::Lax)
        .secure(!config.debug)
        .build()
}

fn csrf_of(secret: &[u8], cookie_value: &str) -> String {
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(secret) else {
        return String::new();
    };
    mac.update(b"kultiva:web-csrf:v1:");
    mac.update(cookie_value.as_bytes());
    URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes())
}

/// Sets the session cookie after a sign-in (a session cookie unless "stay signed in").
pub fn start(res: &mut Response, config: &Config, token: &RefreshToken, remember: bool) {
    let mut c = cookie(SESSION_COOKIE, token.to_cookie_value(), config);
    if remember {
        c.set_max_age(time::Duration::days(i64::from(
            config.refresh_token_expire_days,
        )));
    }
    res.add_cookie(c);
}

/// Deletes the session cookie (sign-out, or a session found over).
pub fn clear(res: &mut Response, config: &Config) {
    let mut c = cookie(SESSION_COOKIE, String::new(), config);
    c.set_max_age(time::Duration::ZERO);
    c.set_expires(time::OffsetDateTime::UNIX_EPOCH);
    res.add_cookie(c);
}

/// The session token the request presents, if well formed.
pub fn presented(req: &Request) -> Option<RefreshToken> {
    req.cookie(SESSION_COOKIE)
        .and_then(|c| RefreshToken::parse(c.value()))
}

/// The signed-in person, or `None` (no cookie, or a session that is over).
pub async fn current(state: &AppState, req: &Request) -> Result<Option<WebSession>, AppError> {
    let Some(token) = presented(req) else {
        return Ok(None);
    };
    let Some(family) = refresh::holder(state, &token).await? else {
        return Ok(None);
    };
    let Some(account) = crate::auth::account(state, family.user).await? else {
        return Ok(None);
    };
    if !account.user.is_active
        || account.user.account_type != AccountType::User
        || family.generation != Some(account.token_generation)
    {
        return Ok(None);
    }
    // A saved `locale` preference speaks; a person who never chose one gets the browser's.
    let stored = crate::platform::preferences::service::stored(state, family.user).await?;
    let lang = stored
        .as_ref()
        .and_then(|p| Lang::parse(&p.locale))
        .unwrap_or_else(|| visitor_lang(req));
    let prefs = stored.unwrap_or_default();
    let csrf_token = csrf_of(
        state.config().jwt_secret_key.expose().as_bytes(),
        &token.to_cookie_value(),
    );
    Ok(Some(WebSession {
        principal: Principal {
            user_id: family.user,
            account_type: account.user.account_type,
            credential: Credential::AccessToken,
            account: Some(account.user.clone()),
        },
        user: account.user,
        prefs,
        lang,
        family: token.family,
        csrf: mask(&csrf_token),
        csrf_token,
    }))
}

/// The language of a visitor: the switcher's cookie, else `Accept-Language`, else English.
pub fn visitor_lang(req: &Request) -> Lang {
    req.cookie(LANG_COOKIE)
        .and_then(|c| Lang::parse(c.value()))
        .or_else(|| {
            req.headers()
                .get("accept-language")
                .and_then(|v| v.to_str().ok())
                .and_then(Lang::from_accept_language)
        })
        .unwrap_or(Lang::En)
}

/// Remembers a visitor's language choice for a year.
pub fn remember_lang(res: &mut Response, config: &Config, lang: Lang) {
    let mut c = cookie(LANG_COOKIE, lang.code().to_owned(), config);
    c.set_max_age(time::Duration::days(365));
    res.add_cookie(c);
}

/// The CSRF value of a visitor's form (before sign-in): the `kv_form` cookie's value masked
/// for this response, the cookie set now when the browser has none.
pub fn visitor_csrf(req: &Request, res: &mut Response, config: &Config) -> String {
    if let Some(existing) = req
        .cookie(FORM_COOKIE)
        .map(|c| c.value().to_owned())
        .filter(|v| v.len() == 43)
    {
        return mask(&existing);
    }
    let fresh = random_secret();
    res.add_cookie(cookie(FORM_COOKIE, fresh.clone(), config));
    mask(&fresh)
}

/// Whether a visitor's form carries the value of its `kv_form` cookie, masked.
pub fn visitor_csrf_ok(req: &Request, presented: Option<&str>) -> bool {
    match (req.cookie(FORM_COOKIE), presented) {
        (Some(c), Some(p)) => c.value().len() == 43 && masked_matches(p, c.value()),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_csrf_token_depends_on_the_session_and_the_secret() {
        let one = csrf_of(b"secret-a", "family.secret-one");
        assert_eq!(one, csrf_of(b"secret-a", "family.secret-one"));
        assert_ne!(one, csrf_of(b"secret-a", "family.secret-two"));
        assert_ne!(one, csrf_of(b"secret-b", "family.secret-one"));
        assert_eq!(one.len(), 43);
    }

    #[test]
    fn a_masked_token_differs_every_time_and_only_its_token_matches() {
        let token = csrf_of(b"secret-a", "family.secret-one");
        let (a, b) = (mask(&token), mask(&token));
        assert_ne!(a, b);
        assert_ne!(a, token);
        assert!(!a.contains(&token));
        assert!(masked_matches(&a, &token) && masked_matches(&b, &token));
        // The bare token, another token masked, and malformed values do not match.
        assert!(!masked_matches(&token, &token));
        let other = csrf_of(b"secret-a", "family.secret-two");
        assert!(!masked_matches(&mask(&other), &token));
        for bad in ["", "!!!", "AA", &a[..a.len() - 1]] {
            assert!(!masked_matches(bad, &token), "{bad}");
        }
        assert!(!masked_matches(&mask(""), ""));
    }
}
