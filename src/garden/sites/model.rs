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
    /// WGS 84 latitude in degrees (-90 to 90), set together with `longitude`; null: none. A
    /// site with coordinates gets the hourly weather forecast (`WEATHER_URL`).
    #[salvo(schema(minimum = -90, maximum = 90))]
    pub latitude: Option<f64>,
    /// WGS 84 longitude in degrees (-180 to 180), set together with `latitude`.
    #[salvo(schema(minimum = -180, maximum = 180))]
    pub longitude: Option<f64>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
}

/// Body of `POST /t/{slug}/sites/`.
#[derive(Debug, Clone, PartialEq, serde::Deserialize, ToSchema)]
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
    /// WGS 84 latitude in degrees, -90 to 90; give both coordinates or neither.
    #[salvo(schema(minimum = -90, maximum = 90))]
    pub latitude: Option<f64>,
    /// WGS 84 longitude in degrees, -180 to 180; give both coordinates or neither.
    #[salvo(schema(minimum = -180, maximum = 180))]
    pub longitude: Option<f64>,
}

pub const LATITUDE_FIELD: &str = "latitude";
pub const LONGITUDE_FIELD: &str = "longitude";

/// The coordinates of a body: each in its range, and both or neither sent (for a patch: both
/// omitted keeps them, both null clears them). Every broken rule names its field.
fn read_coordinates(f: &mut JsonFields) -> Option<Patch<(f64, f64)>> {
    let sent = (f.has(LATITUDE_FIELD), f.has(LONGITUDE_FIELD));
    let latitude = crate::garden::fields::patch_number(f, "latitude", -90.0, 90.0);
    let longitude = crate::garden::fields::patch_number(f, "longitude", -180.0, 180.0);
    let (latitude, longitude) = (latitude?, longitude?);
    match (&latitude, &longitude) {
        (Patch::Keep, Patch::Keep) => Some(Patch::Keep),
        (Patch::Clear, Patch::Clear) => Some(Patch::Clear),
        (Patch::Set(lat), Patch::Set(lon)) => Some(Patch::Set((*lat, *lon))),
        _ => {
            // The one missing (or null while the other is a number) is the one named.
            let (lat_given, lon_given) = (
                matches!(latitude, Patch::Set(_)),
                matches!(longitude, Patch::Set(_)),
            );
            let missing = match (sent, lat_given, lon_given) {
                ((true, false), _, _) | (_, true, false) => LONGITUDE_FIELD,
                _ => LATITUDE_FIELD,
            };
            f.reject_field(
                missing,
                "latitude and longitude go together: give both or neither",
                "missing",
            );
            None
        }
    }
}

impl FromJson for NewSite {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let name = f.text("name", NAME_MAX);
        let kind = f.choice("kind", SiteKind::ALL);
        let description = f.opt_long_text("description", DESCRIPTION_MAX);
        let climate_zone = crate::garden::fields::patch_zone(f, "climate_zone");
        let coordinates = read_coordinates(f);
        let coordinates = match coordinates? {
            Patch::Set(c) => Some(c),
            Patch::Keep | Patch::Clear => None,
        };
        Some(Self {
            name: name?,
            kind: kind?,
            description: description?,
            climate_zone: match climate_zone? {
                Patch::Set(z) => Some(z),
                Patch::Keep | Patch::Clear => None,
            },
            latitude: coordinates.map(|c| c.0),
            longitude: coordinates.map(|c| c.1),
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
/// null or blank; `latitude` and `longitude` change together (both null clears them).
#[derive(Debug, Clone, PartialEq, serde::Deserialize, ToSchema)]
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
    /// -90 to 90, sent together with `longitude`; both null clear the coordinates.
    #[salvo(schema(minimum = -90, maximum = 90))]
    pub latitude: Option<f64>,
    /// -180 to 180, sent together with `latitude`.
    #[salvo(schema(minimum = -180, maximum = 180))]
    pub longitude: Option<f64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SitePatch {
    pub name: Option<String>,
    pub kind: Option<SiteKind>,
    pub description: Patch<String>,
    pub climate_zone: Patch<String>,
    /// (latitude, longitude), changed together.
    pub coordinates: Patch<(f64, f64)>,
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
        let coordinates = read_coordinates(f);
        Some(Self {
            name: name?,
            kind: kind?,
            description: description?,
            climate_zone: climate_zone?,
            coordinates: coordinates?,
        })
    }
}
