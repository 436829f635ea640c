use salvo::oapi::ToSchema;
use serde::Serialize;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::directory::Role;
use crate::values::json::{FromJson, JsonFields};

/// Characters of a service account's name.
pub const NAME_MAX: usize = 100;

/// A service account of a garden, as the garden's admins see it.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[salvo(schema(name = "ServiceAccount"))]
pub struct ServiceAccount {
    /// Account identifier (the `account_key` of the revoke path).
    pub key: Uuid,
    pub name: String,
    /// The account's role in this garden.
    pub role: Role,
    pub is_active: bool,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    /// Latest use of any of its keys shown here (recorded at most once a minute).
    #[serde(with = "time::serde::rfc3339::option")]
    pub last_used_at: Option<OffsetDateTime>,
    /// Its unrevoked keys that work in this garden (prefixes only, never the secret).
    pub api_keys: Vec<ServiceAccountKey>,
    /// The secret of the account's key; present only in the creation response (shown once).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_key: Option<String>,
}

/// One key of a service account.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[salvo(schema(name = "ServiceAccountKey"))]
pub struct ServiceAccountKey {
    /// Key record identifier.
    pub key: Uuid,
    /// Leading characters of the secret.
    pub key_prefix: String,
    /// Tenant slug the key is limited to (keys made here are limited to this garden).
    pub tenant_scope: Option<String>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option")]
    pub last_used_at: Option<OffsetDateTime>,
}

/// Body of `POST /t/{slug}/service-accounts`.
#[derive(Debug, Clone, serde::Deserialize, ToSchema)]
#[salvo(schema(name = "ServiceAccountCreate"))]
#[serde(deny_unknown_fields)]
pub struct ServiceAccountCreate {
    /// Display name, 1-100 characters.
    #[salvo(schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub name: String,
    /// The account's role in this garden; at most your own.
    pub role: Role,
}

pub struct NewServiceAccount {
    pub name: String,
    pub role: Role,
}

impl FromJson for NewServiceAccount {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let name = f.text("name", NAME_MAX);
        let role = f.choice("role", Role::ALL);
        Some(Self {
            name: name?,
            role: role?,
        })
    }
}
