//! SQL of diary photos. Tenant tables are written `tenant.<table>` and rendered by
//! `TenantTx::sql`.

use std::collections::HashMap;

use serde::Serialize;
use sqlx::Row;
use uuid::Uuid;

use crate::tenancy::TenantTx;

/// One photo of a diary entry as reads show it: what exists, never where it is stored.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PhotoDescriptor {
    pub key: Uuid,
    pub position: i32,
    pub content_type: String,
    pub width: i32,
    pub height: i32,
    pub byte_size: i64,
    /// `pending` (renditions not made yet), `ready`, or `unavailable` (the job gave up).
    pub rendition_status: String,
    /// Rendition sizes (longest edge in px) that exist, ascending.
    pub renditions: Vec<u32>,
}

/// The photos of each entry, in their order; entries without photos are absent.
pub async fn descriptors_for_entries(
    tx: &mut TenantTx,
    entry_ids: &[Uuid],
) -> Result<HashMap<Uuid, Vec<PhotoDescriptor>>, sqlx::Error> {
    let rows = sqlx::query(tx.sql(
        "SELECT id, entry_id, position, content_type, width, height, byte_size, rendition_status, \
         rendition_512_key IS NOT NULL AS has_512, rendition_1280_key IS NOT NULL AS has_1280 \
         FROM tenant.diary_photos WHERE entry_id = ANY($1) ORDER BY entry_id, position",
    ))
    .bind(entry_ids)
    .fetch_all(tx.conn())
    .await?;
    let mut out: HashMap<Uuid, Vec<PhotoDescriptor>> = HashMap::new();
    for r in rows {
        let mut renditions = Vec::new();
        if r.try_get::<bool, _>("has_512")? {
            renditions.push(512);
        }
        if r.try_get::<bool, _>("has_1280")? {
            renditions.push(1280);
        }
        out.entry(r.try_get("entry_id")?)
            .or_default()
            .push(PhotoDescriptor {
                key: r.try_get("id")?,
                position: r.try_get("position")?,
                content_type: r.try_get("content_type")?,
                width: r.try_get("width")?,
                height: r.try_get("height")?,
                byte_size: r.try_get("byte_size")?,
                rendition_status: r.try_get("rendition_status")?,
                renditions,
            });
    }
    Ok(out)
}
