//! The roles a member holds in a garden, and the kinds of account.

use salvo::oapi::ToSchema;
use serde::Serialize;

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
