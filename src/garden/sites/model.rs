use salvo::oapi::ToSchema;
use serde::Serialize;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::values::json::{FromJson, JsonFields, Patch};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SiteKind {
    Apartment,
    Garden,
    Balcony,
    Greenhouse,
    Windowsill,
    GrowTent,
}

impl SiteKind {
    pub const ALL: &'static [(&'static str, SiteKind)] = &[
        ("apartment", Self::Apartment),
        ("garden", Self::Garden),
        ("balcony", Self::Balcony),
        ("greenhouse", Self::Greenhouse),
        ("windowsill", Self::Windowsill),
        ("grow_tent", Self::GrowTent),
    ];

    pub fn as_str(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, k)| *k == self)
            .map_or("garden", |(n, _)| n)
    }

    pub fn parse(raw: &str) -> Option<Self> {
        Self::ALL.iter().find(|(n, _)| *n == raw).map(|(_, k)| *k)
    }
}

pub const NAME_MAX: usize = 120;
pub const DESCRIPTION_MAX: usize = 2000;

/// A site of a garden.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Site {
    /// Site identifier.
    pub key: Uuid,
    pub name: String,
    pub kind: SiteKind,
    pub description: Option<String>,
    /// USDA hardiness zone `1a` … `13b` of the site (null: none set); the sowing calendar of
    /// the site uses it.
    #[salvo(schema(pattern = "^(1[0-3]|[1-9])[ab]$"))]
    pub climate_zone: Option<String>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
}

/// Body of `POST /t/{slug}/sites/`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, ToSchema)]
#[salvo(schema(name = "SiteCreate"))]
#[serde(deny_unknown_fields)]
pub struct NewSite {
    /// Up to 120 characters with at least one visible one (trimmed), unique per garden
    /// (case-insensitive).
    #[salvo(schema(
        min_length = 1,
        max_length = 120,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub name: String,
    pub kind: SiteKind,
    /// Up to 2000 characters; blank means none.
    #[salvo(schema(
        max_length = 2000,
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]*$"
    ))]
    pub description: Option<String>,
    /// USDA hardiness zone `1a` … `13b` (for the site's sowing calendar); null or absent: none.
    #[salvo(schema(pattern = "^(1[0-3]|[1-9])[ab]$"))]
    pub climate_zone: Option<String>,
}

impl FromJson for NewSite {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let name = f.text("name", NAME_MAX);
        let kind = f.choice("kind", SiteKind::ALL);
        let description = f.opt_long_text("description", DESCRIPTION_MAX);
        let climate_zone = crate::garden::fields::patch_zone(f, "climate_zone");
        Some(Self {
            name: name?,
            kind: kind?,
            description: description?,
            climate_zone: match climate_zone? {
                Patch::Set(z) => Some(z),
                Patch::Keep | Patch::Clear => None,
            },
        })
    }
}

impl<'de> serde::Deserialize<'de> for SiteKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(d)?;
        Self::parse(&raw).ok_or_else(|| serde::de::Error::custom("unknown site kind"))
    }
}

/// Body of `PATCH /t/{slug}/sites/{site_key}`: omitted fields stay; `description` clears with
/// null or blank.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, ToSchema)]
#[salvo(schema(name = "SitePatch"))]
#[serde(deny_unknown_fields)] // states `additionalProperties: false`: the handler refuses extras
pub struct SitePatchBody {
    /// Null is refused (omit it to keep the name).
    #[salvo(schema(
        nullable = false,
        min_length = 1,
        max_length = 120,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub name: Option<String>,
    /// Null is refused (omit it to keep the kind).
    #[salvo(schema(value_type = SiteKind, required = false))]
    pub kind: Option<SiteKind>,
    #[salvo(schema(
        max_length = 2000,
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]*$"
    ))]
    pub description: Option<String>,
    /// A hardiness zone `1a` … `13b`; null clears it.
    #[salvo(schema(pattern = "^(1[0-3]|[1-9])[ab]$"))]
    pub climate_zone: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SitePatch {
    pub name: Option<String>,
    pub kind: Option<SiteKind>,
    pub description: Patch<String>,
    pub climate_zone: Patch<String>,
}

impl FromJson for SitePatch {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let name = f.patch_text("name", NAME_MAX);
        let kind = match crate::garden::fields::patch_choice(f, "kind", SiteKind::ALL) {
            Some(Patch::Keep) => Some(None),
            Some(Patch::Set(k)) => Some(Some(k)),
            Some(Patch::Clear) => {
                f.reject_field(
                    "kind",
                    "cannot be null; omit it to keep the value",
                    "type_error",
                );
                None
            }
            None => None,
        };
        let description = crate::garden::fields::patch_long_text(f, "description", DESCRIPTION_MAX);
        let climate_zone = crate::garden::fields::patch_zone(f, "climate_zone");
        Some(Self {
            name: name?,
            kind: kind?,
            description: description?,
            climate_zone: climate_zone?,
        })
    }
}
