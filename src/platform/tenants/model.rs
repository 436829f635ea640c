use salvo::oapi::ToSchema;
use serde::Serialize;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::directory::Role;
use crate::tenancy::{TenantKind, TenantRecord, TenantSlug};
use crate::values::json::{FromJson, JsonFields};

/// A tenant (garden) as one of its members sees it.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[salvo(schema(name = "Tenant"))]
pub struct Tenant {
    /// Tenant identifier.
    pub key: Uuid,
    pub slug: String,
    pub name: String,
    pub kind: TenantKind,
    /// The caller's role in this tenant.
    pub role: Role,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
}

impl Tenant {
    pub fn from_record(t: &TenantRecord, role: Role) -> Self {
        Self {
            key: t.id,
            slug: t.slug.to_string(),
            name: t.name.clone(),
            kind: t.kind,
            role,
            created_at: t.created_at,
        }
    }
}

/// Body of `POST /tenants`.
#[derive(Debug, Clone, serde::Deserialize, ToSchema)]
#[salvo(schema(name = "TenantCreate"))]
#[serde(deny_unknown_fields)]
pub struct TenantCreate {
    /// Lower-case letters, digits and inner hyphens, 1-63 characters.
    #[salvo(schema(
        min_length = 1,
        max_length = 63,
        pattern = r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$"
    ))]
    pub slug: String,
    #[salvo(schema(
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub name: String,
}

pub struct NewTenant {
    pub slug: TenantSlug,
    pub name: String,
}

impl FromJson for NewTenant {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let slug = f.text("slug", 63);
        let name = f.text("name", 200);
        let slug = match slug.as_deref().map(TenantSlug::parse) {
            Some(Ok(slug)) => Some(slug),
            Some(Err(err)) => {
                f.reject_field("slug", err.to_string(), "value_error");
                None
            }
            None => None,
        };
        Some(Self {
            slug: slug?,
            name: name?,
        })
    }
}

/// Body of `PATCH /tenants/{slug}`.
#[derive(Debug, Clone, serde::Deserialize, ToSchema)]
#[salvo(schema(name = "TenantUpdate"))]
#[serde(deny_unknown_fields)]
pub struct TenantUpdate {
    /// Omit to keep; cannot be null.
    #[salvo(schema(
        nullable = false,
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub name: Option<String>,
}

pub struct TenantChange {
    pub name: Option<String>,
}

impl FromJson for TenantChange {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        f.patch_text("name", 200).map(|name| Self { name })
    }
}

/// Body of `POST /tenants/{slug}/members`.
#[derive(Debug, Clone, serde::Deserialize, ToSchema)]
#[salvo(schema(name = "MemberCreate"))]
#[serde(deny_unknown_fields)]
pub struct MemberCreate {
    /// E-mail address to invite (with or without an account).
    #[salvo(schema(format = "email", max_length = 254))]
    pub email: String,
    pub role: Role,
}

pub struct NewMember {
    pub email: String,
    pub role: Role,
}

impl FromJson for NewMember {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let email = f.text("email", 254);
        let role = f.choice("role", Role::ALL);
        Some(Self {
            email: email?,
            role: role?,
        })
    }
}

/// Body of `PATCH /tenants/{slug}/members/{user_key}`.
#[derive(Debug, Clone, serde::Deserialize, ToSchema)]
#[salvo(schema(name = "MemberUpdate"))]
#[serde(deny_unknown_fields)]
pub struct MemberUpdate {
    pub role: Role,
}

pub struct RoleChange(pub Role);

impl FromJson for RoleChange {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        f.choice("role", Role::ALL).map(Self)
    }
}
