//! Who is calling, as established by the authentication hoop.

use std::sync::Arc;

use salvo::oapi::ToSchema;
use serde::Serialize;
use uuid::Uuid;

use crate::platform::users::model::User;

/// A role in one tenant. Ordered: each role can do everything the previous one can.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Viewer,
    Grower,
    Admin,
}

impl Role {
    pub const ALL: &'static [(&'static str, Role)] = &[
        ("viewer", Role::Viewer),
        ("grower", Role::Grower),
        ("admin", Role::Admin),
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Viewer => "viewer",
            Self::Grower => "grower",
            Self::Admin => "admin",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        Self::ALL.iter().find(|(n, _)| *n == raw).map(|(_, r)| *r)
    }

    /// The tool-server permissions this role grants (specification table).
    pub fn mcp_permissions(self) -> &'static [&'static str] {
        match self {
            Self::Viewer => &["mcp.read"],
            Self::Grower => &["mcp.read", "mcp.write"],
            Self::Admin => &["mcp.read", "mcp.write", "mcp.setup"],
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AccountType {
    /// A person: e-mail and password.
    User,
    /// A machine account: API keys only, no password, no interactive login.
    Service,
    /// Light mode's built-in owner of everything.
    System,
}

impl AccountType {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Service => "service",
            Self::System => "system",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        match raw {
            "user" => Some(Self::User),
            "service" => Some(Self::Service),
            "system" => Some(Self::System),
            _ => None,
        }
    }
}

/// How the caller proved who it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credential {
    /// A JWT access token.
    AccessToken,
    /// An API key; `tenant_scope` limits it to one tenant.
    ApiKey {
        key_id: Uuid,
        tenant_scope: Option<Uuid>,
    },
    /// Light mode: nobody authenticates, the system user acts.
    Light,
}

#[derive(Debug, Clone)]
pub struct Principal {
    pub user_id: Uuid,
    pub account_type: AccountType,
    pub credential: Credential,
    /// The caller's user record, read by the same statement that checked the credential, so
    /// `GET /users/me` needs no second query. `None` in light mode.
    pub account: Option<Arc<User>>,
}

impl Principal {
    pub fn is_light(&self) -> bool {
        self.credential == Credential::Light
    }

    /// Account-wide actions (logout-all, password and profile changes, key management,
    /// creating gardens, answering invitations) are not for a key scoped to one garden: 403.
    pub fn require_account_wide(&self) -> Result<(), crate::error::AppError> {
        if self.tenant_scope().is_some() {
            return Err(crate::error::AppError::new(
                crate::error::ErrorCode::Forbidden,
                "this API key is limited to one garden; account-wide actions need an access \
                 token or an unscoped key",
            ));
        }
        Ok(())
    }

    /// Grants (calendar feeds, invitations, role changes, removals, service accounts) need a
    /// person: an access token from a login (or light mode), never an API key, so a leaked
    /// key cannot make itself or anyone else permanent. 403 `FORBIDDEN` naming the rule.
    pub fn require_person(&self, what: &str) -> Result<(), crate::error::AppError> {
        match self.credential {
            Credential::AccessToken | Credential::Light => Ok(()),
            Credential::ApiKey { .. } => Err(crate::error::AppError::new(
                crate::error::ErrorCode::Forbidden,
                format!(
                    "{what} by a logged-in person only: send an access token from a login, \
                     not an API key"
                ),
            )
            .with_details(vec![crate::error::ErrorDetail::new(
                "authorization",
                "an API key cannot grant access",
                "person_required",
            )])),
        }
    }

    /// The tenant an API key is limited to, if any.
    pub fn tenant_scope(&self) -> Option<Uuid> {
        match self.credential {
            Credential::ApiKey { tenant_scope, .. } => tenant_scope,
            _ => None,
        }
    }
}

impl<'de> serde::Deserialize<'de> for Role {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(d)?;
        Role::parse(&raw).ok_or_else(|| serde::de::Error::custom("unknown role"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_are_ordered_and_map_to_permissions() {
        assert!(Role::Viewer < Role::Grower && Role::Grower < Role::Admin);
        assert_eq!(Role::Viewer.mcp_permissions(), ["mcp.read"]);
        assert_eq!(Role::Grower.mcp_permissions(), ["mcp.read", "mcp.write"]);
        assert_eq!(Role::Admin.mcp_permissions().len(), 3);
        for (name, role) in Role::ALL {
            assert_eq!(Role::parse(name), Some(*role));
            assert_eq!(role.as_str(), *name);
        }
        assert_eq!(Role::parse("owner"), None);
    }
}
