//! The wire shape of a diary photo on the REST routes.

use salvo::oapi::ToSchema;
use serde::Serialize;
use time::OffsetDateTime;
use uuid::Uuid;

use super::repo::PhotoRow;

/// Raw image bytes in the OpenAPI document (`type: string, format: binary`): the upload body
/// and the renditions.
pub struct ImageBytes;

impl ToSchema for ImageBytes {
    fn to_schema(
        _components: &mut salvo::oapi::Components,
    ) -> salvo::oapi::RefOr<salvo::oapi::Schema> {
        salvo::oapi::Object::with_type(salvo::oapi::BasicType::String)
            .format(salvo::oapi::SchemaFormat::KnownFormat(
                salvo::oapi::KnownFormat::Binary,
            ))
            .into()
    }
}

/// Photos one diary entry may hold.
pub const PHOTOS_PER_ENTRY_MAX: i64 = 20;

/// A photo of a diary entry: what exists, never where it is stored.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Photo {
    pub key: Uuid,
    pub entry_key: Uuid,
    /// Order within the entry (delivery order).
    pub position: i32,
    /// Type of the original: image/jpeg, image/png or image/webp.
    pub content_type: String,
    /// Size of the stored original in bytes (after metadata stripping).
    pub byte_size: i64,
    /// Pixels of the upright picture.
    pub width: i32,
    pub height: i32,
    /// `pending` (renditions not made yet), `ready`, `unavailable` (the job gave up).
    pub rendition_status: String,
    /// Rendition sizes that exist (longest edge in px), ascending; each is served as
    /// image/webp at `/t/{slug}/photos/{key}/renditions/512` (or `/1280`).
    pub renditions: Vec<u32>,
    /// Whether EXIF and other metadata were removed from the stored original.
    pub exif_stripped: bool,
    #[serde(with = "time::serde::rfc3339")]
    #[salvo(schema(value_type = String, format = "date-time"))]
    pub created_at: OffsetDateTime,
}

impl From<&PhotoRow> for Photo {
    fn from(r: &PhotoRow) -> Self {
        Self {
            key: r.id,
            entry_key: r.entry_id,
            position: r.position,
            content_type: r.content_type.clone(),
            byte_size: r.byte_size,
            width: r.width,
            height: r.height,
            rendition_status: r.rendition_status.clone(),
            renditions: super::media::RENDITION_SIZES
                .into_iter()
                .filter(|s| r.rendition(*s).is_some())
                .collect(),
            exif_stripped: r.exif_stripped,
            created_at: r.created_at,
        }
    }
}

/// A garden's photo storage (`GET /t/{slug}/storage`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct StorageUsage {
    /// Bytes of the garden's photos: stored originals and their renditions.
    pub bytes_used: i64,
    /// The garden's quota in bytes (`PHOTO_QUOTA_MB_PER_GARDEN`).
    pub quota_bytes: i64,
    /// Photos in the garden.
    pub photo_count: i64,
}
