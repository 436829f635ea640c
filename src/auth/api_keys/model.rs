use salvo::oapi::ToSchema;
use serde::Serialize;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::auth::secrets::{SecretHash, random_secret};
use crate::values::json::{FromJson, JsonFields};

/// Every key starts with this.
pub const KEY_PREFIX: &str = "svc_";
/// Characters of the key shown in listings (`svc_` plus 8).
pub const SHOWN_PREFIX_CHARS: usize = 12;
pub const LABEL_MAX: usize = 100;

/// A raw API key as presented or freshly made: `svc_` + 43 URL-safe characters (32 bytes).
#[derive(Clone, PartialEq, Eq)]
pub struct RawApiKey(String);

impl std::fmt::Debug for RawApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RawApiKey({}…)", self.prefix())
    }
}

impl RawApiKey {
    pub fn generate() -> Self {
        Self(format!("{KEY_PREFIX}{}", random_secret()))
    }

    /// Shape check only; whether the key exists is the repository's question.
    pub fn parse(raw: &str) -> Option<Self> {
        let body = raw.strip_prefix(KEY_PREFIX)?;
        let ok = body.len() == 43
            && body
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        ok.then(|| Self(raw.to_owned()))
    }

    pub fn expose(&self) -> &str {
        &self.0
    }

    pub fn prefix(&self) -> &str {
        &self.0[..SHOWN_PREFIX_CHARS.min(self.0.len())]
    }

    pub fn hash(&self) -> SecretHash {
        SecretHash::of(&self.0)
    }
}

/// The API key record of the specification (`raw_key` only in the creation response).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[salvo(schema(name = "ApiKey"))]
pub struct ApiKey {
    /// Key record identifier (the `key_id` of the revoke path).
    pub key: Uuid,
    pub label: String,
    /// The secret; present only in the creation response.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_key: Option<String>,
    /// Leading characters of the secret.
    pub key_prefix: String,
    /// Tenant slug the key is limited to.
    pub tenant_scope: Option<String>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option")]
    pub last_used_at: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339::option")]
    pub revoked_at: Option<OffsetDateTime>,
}

/// Body of `POST /auth/api-keys`.
#[derive(Debug, Clone, serde::Deserialize, ToSchema)]
#[salvo(schema(name = "ApiKeyCreate"))]
#[serde(deny_unknown_fields)]
pub struct NewApiKey {
    /// Free label, 1-100 characters.
    #[salvo(schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub label: String,
    /// Slug of a tenant the caller is a member of; limits the key to it.
    #[salvo(schema(max_length = 63, pattern = r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$"))]
    pub tenant_scope: Option<String>,
}

impl FromJson for NewApiKey {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let label = f.text("label", LABEL_MAX);
        // Malformed is a 422; a well-formed slug that names no garden of the caller is the
        // service's usual 404 for a garden that is not yours.
        let tenant_scope = f.opt_slug("tenant_scope");
        Some(Self {
            label: label?,
            tenant_scope: tenant_scope?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_have_the_prefix_and_enough_entropy() {
        let key = RawApiKey::generate();
        assert!(key.expose().starts_with("svc_"));
        assert_eq!(key.expose().len(), 47);
        assert_eq!(key.prefix().len(), 12);
        assert_eq!(RawApiKey::parse(key.expose()), Some(key.clone()));
        assert!(!format!("{key:?}").contains(&key.expose()[12..]));
        for bad in [
            "",
            "svc_",
            "svc_short",
            "key_0123456789012345678901234567890123456789012",
        ] {
            assert!(RawApiKey::parse(bad).is_none(), "{bad}");
        }
        let wrong_char = format!("svc_{}", "!".repeat(43));
        assert!(RawApiKey::parse(&wrong_char).is_none());
    }
}
