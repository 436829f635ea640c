//! The two auth cookies: `svc_refresh` (HttpOnly, only sent to `/api/v1/auth`) and `svc_csrf`
//! (readable by scripts, echoed as `X-CSRF-Token`: a cross-site form cannot read it, so it
//! cannot echo it).

use salvo::http::cookie::{Cookie, SameSite};
use salvo::prelude::*;

use super::refresh::RefreshToken;
use super::secrets::{equal_secrets, random_secret};
use crate::config::Config;
use crate::error::{AppError, ErrorCode};

pub const REFRESH_COOKIE: &str = "svc_refresh";
pub const CSRF_COOKIE: &str = "svc_csrf";
pub const CSRF_HEADER: &str = "x-csrf-token";
const REFRESH_PATH: &str = "/api/v1/auth";

fn build(
    name: &'static str,
    value: String,
    path: &'static str,
    http_only: bool,
    config: &Config,
    remember: bool,
) -> Cookie<'static> {
    let mut cookie = Cookie::build((name, value))
        .path(path)
        .http_only(http_only)
        .same_site(SameSite::Strict)
        .secure(!config.debug)
        .build();
    if remember {
        cookie.set_max_age(time::Duration::days(i64::from(
            config.refresh_token_expire_days,
        )));
    }
    cookie
}

/// Sets a fresh refresh cookie and a fresh CSRF cookie (login and refresh). Without
/// `remember` both are session cookies.
pub fn issue(res: &mut Response, config: &Config, token: &RefreshToken, remember: bool) {
    res.add_cookie(build(
        REFRESH_COOKIE,
        token.to_cookie_value(),
        REFRESH_PATH,
        true,
        config,
        remember,
    ));
    res.add_cookie(build(
        CSRF_COOKIE,
        random_secret(),
        "/",
        false,
        config,
        remember,
    ));
}

/// Deletes both cookies (logout, a refused refresh).
pub fn clear(res: &mut Response, config: &Config) {
    for (name, path, http_only) in [
        (REFRESH_COOKIE, REFRESH_PATH, true),
        (CSRF_COOKIE, "/", false),
    ] {
        let mut cookie = build(name, String::new(), path, http_only, config, false);
        cookie.set_max_age(time::Duration::ZERO);
        cookie.set_expires(time::OffsetDateTime::UNIX_EPOCH);
        res.add_cookie(cookie);
    }
}

/// The refresh token from the cookie; `None` when absent or malformed.
pub fn refresh_token(req: &Request) -> Option<RefreshToken> {
    req.cookie(REFRESH_COOKIE)
        .and_then(|c| RefreshToken::parse(c.value()))
}

/// Double-submit check: the header must equal the cookie (compared in constant time).
pub fn check_csrf(req: &Request) -> Result<(), AppError> {
    let header = req.headers().get(CSRF_HEADER).and_then(|v| v.to_str().ok());
    let cookie = req.cookie(CSRF_COOKIE).map(|c| c.value().to_owned());
    match (header, cookie) {
        (Some(h), Some(c)) if !c.is_empty() && equal_secrets(h, &c) => Ok(()),
        _ => Err(AppError::new(
            ErrorCode::Forbidden,
            "CSRF check failed: send the value of the svc_csrf cookie as X-CSRF-Token",
        )),
    }
}
