use salvo::oapi::ToSchema;
use serde::{Deserialize, Serialize};

use crate::crypto::password::{PASSWORD_MAX_CHARS, PASSWORD_MIN_CHARS};
use crate::directory::users::model::Email;
use crate::values::json::{FromJson, JsonFields};

pub const DISPLAY_NAME_MAX: usize = 120;
/// Longest accepted e-mail token / address text before parsing.
const EMAIL_MAX: usize = 254;
const TOKEN_MAX: usize = 128;

fn email_field(f: &mut JsonFields, name: &'static str) -> Option<Email> {
    let raw = f.text(name, EMAIL_MAX)?;
    match Email::parse(&raw) {
        Ok(email) => Some(email),
        Err(reason) => {
            f.reject_field(name, reason, "value_error");
            None
        }
    }
}

/// Body of `POST /auth/register`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[salvo(schema(name = "RegisterRequest"))]
#[serde(deny_unknown_fields)]
pub struct RegisterRequest {
    /// E-mail address (stored lower-case).
    #[salvo(schema(format = "email", max_length = 254))]
    pub email: String,
    /// 10 to 128 characters, taken exactly as sent.
    #[salvo(schema(
        min_length = 10,
        max_length = 128,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub password: String,
    /// 1 to 120 characters with at least one visible one.
    #[salvo(schema(
        min_length = 1,
        max_length = 120,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub display_name: String,
}

pub struct Registration {
    pub email: Email,
    pub password: String,
    pub display_name: String,
}

impl FromJson for Registration {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let email = email_field(f, "email");
        let password = f.secret("password", PASSWORD_MIN_CHARS, PASSWORD_MAX_CHARS);
        let display_name = f.text("display_name", DISPLAY_NAME_MAX);
        Some(Self {
            email: email?,
            password: password?,
            display_name: display_name?,
        })
    }
}

/// Body of `POST /auth/login`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[salvo(schema(name = "LoginRequest"))]
#[serde(deny_unknown_fields)]
pub struct LoginRequest {
    #[salvo(schema(format = "email", max_length = 254))]
    pub email: String,
    #[salvo(schema(
        min_length = 1,
        max_length = 128,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub password: String,
    /// 30-day refresh cookie instead of a session cookie.
    #[serde(default)]
    pub remember_me: bool,
}

pub struct Login {
    pub email: Email,
    pub password: String,
    pub remember_me: bool,
}

impl FromJson for Login {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let email = email_field(f, "email");
        // Any length up to the maximum may be tried; a wrong one is just a wrong password.
        let password = f.secret("password", 1, PASSWORD_MAX_CHARS);
        let remember_me = f.flag("remember_me", false);
        Some(Self {
            email: email?,
            password: password?,
            remember_me: remember_me?,
        })
    }
}

/// Answer of login and refresh.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TokenResponse {
    pub access_token: String,
    /// Always `bearer`.
    pub token_type: &'static str,
    /// Seconds until the access token expires.
    pub expires_in: i64,
}

/// Body of `POST /auth/verify-email`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[salvo(schema(name = "VerifyEmailRequest"))]
#[serde(deny_unknown_fields)]
pub struct TokenRequest {
    /// The token from the e-mail link.
    #[salvo(schema(
        min_length = 1,
        max_length = 128,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub token: String,
}

pub struct EmailToken(pub String);

impl FromJson for EmailToken {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        f.secret("token", 1, TOKEN_MAX).map(Self)
    }
}

/// Body of `POST /auth/password-reset/request`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[salvo(schema(name = "PasswordResetRequest"))]
#[serde(deny_unknown_fields)]
pub struct ResetRequest {
    #[salvo(schema(format = "email", max_length = 254))]
    pub email: String,
}

pub struct ResetAddress(pub Email);

impl FromJson for ResetAddress {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        email_field(f, "email").map(Self)
    }
}

/// Body of `POST /auth/password-reset/confirm`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[salvo(schema(name = "PasswordResetConfirm"))]
#[serde(deny_unknown_fields)]
pub struct ResetConfirmRequest {
    #[salvo(schema(
        min_length = 1,
        max_length = 128,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub token: String,
    #[salvo(schema(
        min_length = 10,
        max_length = 128,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub new_password: String,
}

pub struct ResetConfirm {
    pub token: String,
    pub new_password: String,
}

impl FromJson for ResetConfirm {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let token = f.secret("token", 1, TOKEN_MAX);
        let new_password = f.secret("new_password", PASSWORD_MIN_CHARS, PASSWORD_MAX_CHARS);
        Some(Self {
            token: token?,
            new_password: new_password?,
        })
    }
}

/// A short confirmation.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Confirmation {
    pub message: &'static str,
}
