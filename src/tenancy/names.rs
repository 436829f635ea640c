//! Newtypes that validate on construction: a tenant slug (what clients send) and a schema name
//! (what PostgreSQL sees). The schema name is derived from the tenant id, never from a request.

use std::fmt;

use uuid::Uuid;

/// Slugs that would read as system names or clash with routes.
const RESERVED_SLUGS: &[&str] = &[
    "public",
    "platform",
    "information-schema",
    "admin",
    "api",
    "auth",
    "mcp",
    "system",
    "root",
    "postgres",
    "template0",
    "template1",
];

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TenantSlug(String);

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlugError {
    Empty,
    TooLong,
    InvalidCharacter,
    EdgeHyphen,
    Reserved,
}

impl fmt::Display for SlugError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Empty => "slug is empty",
            Self::TooLong => "slug is longer than 63 characters",
            Self::InvalidCharacter => "slug may contain only a-z, 0-9 and -",
            Self::EdgeHyphen => "slug may not start or end with -",
            Self::Reserved => "slug is a reserved name",
        })
    }
}

impl std::error::Error for SlugError {}

impl TenantSlug {
    pub const MAX_LEN: usize = 63;

    pub fn parse(raw: &str) -> Result<Self, SlugError> {
        if raw.is_empty() {
            return Err(SlugError::Empty);
        }
        if raw.len() > Self::MAX_LEN {
            return Err(SlugError::TooLong);
        }
        if !raw
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        {
            return Err(SlugError::InvalidCharacter);
        }
        if raw.starts_with('-') || raw.ends_with('-') {
            return Err(SlugError::EdgeHyphen);
        }
        if RESERVED_SLUGS.contains(&raw) || raw.starts_with("pg-") {
            return Err(SlugError::Reserved);
        }
        Ok(Self(raw.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for TenantSlug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&self.0)
    }
}

/// `t_` followed by the 32 hex digits of the tenant id: always a valid, unquoted-safe
/// identifier of 34 bytes, whatever the slug, and unchanged if a slug is ever renamed.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SchemaName(String);

impl SchemaName {
    pub fn for_tenant(tenant_id: Uuid) -> Self {
        Self(format!("t_{}", tenant_id.simple()))
    }

    /// Re-validates a name read back from the registry.
    pub fn parse(raw: &str) -> Option<Self> {
        let hex = raw.strip_prefix("t_")?;
        (hex.len() == 32
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
        .then(|| Self(raw.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The identifier quoted for SQL text. Quoting is belt and braces: the validated shape
    /// already excludes every character that would need it.
    pub fn quoted(&self) -> String {
        format!("\"{}\"", self.0)
    }
}

impl fmt::Display for SchemaName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&self.0)
    }
}

/// The slug reader of request bodies and tool arguments, here with the slug's rules.
impl crate::values::json::JsonFields {
    /// An optional tenant slug; absent or null mean "none". Anything that is not slug-shaped is
    /// refused; a reserved name is slug-shaped (it simply names no garden).
    pub fn opt_slug(&mut self, name: &'static str) -> Option<Option<String>> {
        let Some(value) = self.take(name) else {
            return Some(None);
        };
        match value {
            serde_json::Value::String(raw) => match TenantSlug::parse(&raw) {
                Ok(_) | Err(SlugError::Reserved) => Some(Some(raw)),
                Err(err) => {
                    self.reject(name, err.to_string(), "value_error");
                    None
                }
            },
            _ => {
                self.reject(name, "must be a string", "type_error");
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::names_a_tenant_schema;

    #[test]
    fn tenant_schemas_are_recognised_in_database_messages() {
        let name = SchemaName::for_tenant(Uuid::now_v7());
        assert!(names_a_tenant_schema(&format!(
            "relation \"{name}.sites\" does not exist"
        )));
        assert!(names_a_tenant_schema(&format!(
            "schema \"{name}\" does not exist"
        )));
        for other in [
            "relation \"tenant.sites\" does not exist",
            "relation \"platform.users\" does not exist",
            "relation \"t_0123.sites\" does not exist",
            "relation \"t_0123456789abcdef0123456789ABCDEF.x\" does not exist",
            "\"t_",
            "",
        ] {
            assert!(!names_a_tenant_schema(other), "{other}");
        }
    }

    #[test]
    fn slugs_accepted() {
        for ok in ["a", "acme", "my-garden-2", "0", "x1-y2-z3", &"a".repeat(63)] {
            assert_eq!(
                TenantSlug::parse(ok).map(|s| s.as_str().to_owned()),
                Ok(ok.to_owned()),
                "{ok}"
            );
        }
    }

    #[test]
    fn slugs_refused() {
        let cases: &[(&str, SlugError)] = &[
            ("", SlugError::Empty),
            (&"a".repeat(64), SlugError::TooLong),
            ("Acme", SlugError::InvalidCharacter),
            ("a_b", SlugError::InvalidCharacter),
            ("a;drop", SlugError::InvalidCharacter),
            ("../x", SlugError::InvalidCharacter),
            ("a b", SlugError::InvalidCharacter),
            ("gärten", SlugError::InvalidCharacter),
            ("pg_catalog", SlugError::InvalidCharacter),
            ("information_schema", SlugError::InvalidCharacter),
            ("\"x\"", SlugError::InvalidCharacter),
            ("-a", SlugError::EdgeHyphen),
            ("a-", SlugError::EdgeHyphen),
            ("public", SlugError::Reserved),
            ("platform", SlugError::Reserved),
            ("pg-catalog", SlugError::Reserved),
            ("admin", SlugError::Reserved),
        ];
        for (raw, expected) in cases {
            assert_eq!(
                TenantSlug::parse(raw).as_ref().err(),
                Some(expected),
                "{raw:?}"
            );
        }
    }

    #[test]
    fn schema_names_derive_from_ids() {
        let id = Uuid::parse_str("0190f5a2-7c1e-7b3a-9d2e-4f5a6b7c8d9e").expect("uuid");
        let name = SchemaName::for_tenant(id);
        assert_eq!(name.as_str(), "t_0190f5a27c1e7b3a9d2e4f5a6b7c8d9e");
        assert_eq!(name.quoted(), "\"t_0190f5a27c1e7b3a9d2e4f5a6b7c8d9e\"");
        assert_eq!(SchemaName::parse(name.as_str()), Some(name));
    }

    #[test]
    fn schema_names_refuse_anything_else() {
        for bad in [
            "public",
            "t_",
            "t_XYZ",
            "t_0190f5a27c1e7b3a9d2e4f5a6b7c8d9",
            "x_0190f5a27c1e7b3a9d2e4f5a6b7c8d9e",
            "t_0190f5a27c1e7b3a9d2e4f5a6b7c8d9e\"; drop",
        ] {
            assert_eq!(SchemaName::parse(bad), None, "{bad}");
        }
    }
}
