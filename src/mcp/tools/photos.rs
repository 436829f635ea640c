//! `get_diary_entry_photos`: the renditions of a diary entry's photos as image content blocks
//! (specification, Tool behaviour rule 2), over the same service as the REST photo routes.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

use super::shared::{bound, key_arg, tool_error};
use crate::garden::photos::model::PHOTOS_PER_ENTRY_MAX;
use crate::garden::photos::service::{self, Selection, TooLarge};
use crate::mcp::args::{self, Arg, ArgKind, Args, KEY};
use crate::mcp::envelope::{ImageBlock, ToolError, ToolErrorCode, ToolOutput};
use crate::mcp::registry::{Ctx, Permission, Scope, Tool};
use crate::tool_handler;

pub static GET_DIARY_ENTRY_PHOTOS: Tool = Tool {
    name: "get_diary_entry_photos",
    title: "A diary entry's photos",
    description: "The photos of a diary entry as image content blocks (image/webp, no EXIF), one \
                  per delivered photo in the order of the `photos` field, after one text block. \
                  Only renditions are sent, never the original: size 1280 (longest edge 1280 \
                  px, default) or 512. Photos whose renditions are not made yet are listed in \
                  `pending` (status thumbnail_pending or unavailable); the call still succeeds. \
                  photo_ids: only these photos (ids from get_diary_entry's photos), still in the \
                  entry's order; an id that is not a photo of this entry is validation.error \
                  naming it, and nothing is delivered. \
                  Over the image payload cap (MCP_MAX_IMAGE_PAYLOAD_MB of Base64) the call fails \
                  with payload.too_large naming the photos affected and a smaller size that \
                  fits, or offset/limit batches that do; no photo is dropped silently.",
    permission: Permission::Read,
    scope: Scope::Tenant,
    args: &[
        Arg::required("entry_key", KEY, "Diary entry key."),
        Arg::optional(
            "photo_ids",
            ArgKind::IdList {
                min: 1,
                max: PHOTOS_PER_ENTRY_MAX as usize,
            },
            "Only these photos of the entry (a JSON array of photo ids; default: all).",
        ),
        Arg::optional(
            "size",
            ArgKind::IntChoice {
                values: &[512, 1280],
                default: Some(1280),
            },
            "Rendition: 1280 (default) or 512 (longest edge in px).",
        ),
        args::offset(),
        args::limit(20, 20),
    ],
    rules: &[],
    run: tool_handler!(get_diary_entry_photos),
};

/// Bytes kept free in a batch for the envelope around the images (20 photo descriptors).
const ENVELOPE_ROOM: usize = 64 * 1024;

fn too_large_error(t: TooLarge) -> ToolError {
    let advice = match (t.smaller_size, t.batches.as_slice()) {
        (Some(s), _) => format!("ask for size {s}, which fits"),
        (None, batches) => format!(
            "ask in batches of offset/limit: {}",
            batches
                .iter()
                .map(|(o, l)| format!("offset {o} limit {l}"))
                .collect::<Vec<_>>()
                .join("; ")
        ),
    };
    ToolError::new(
        ToolErrorCode::PayloadTooLarge,
        format!(
            "the {} px renditions take {} bytes of Base64, over the cap of {} bytes \
             (MCP_MAX_IMAGE_PAYLOAD_MB, or what is left of a batch's MCP_MAX_BATCH_RESPONSE_MB); \
             {} photo(s) affected; {advice}",
            t.size,
            t.payload_bytes,
            t.limit_bytes,
            t.affected.len()
        ),
    )
    .with_details(json!({
        "size": t.size,
        "payload_bytes": t.payload_bytes,
        "limit_bytes": t.limit_bytes,
        "affected_photos": t.affected,
        "smaller_size_that_fits": t.smaller_size,
        "batches": t.batches.iter().map(|(o, l)| json!({"offset": o, "limit": l})).collect::<Vec<_>>(),
    }))
}

async fn get_diary_entry_photos(ctx: &Ctx<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let tenant = bound(ctx)?;
    key_arg(&args, "entry_key", "diary entry")?;
    let size = args.int("size").unwrap_or(1280);
    if size != 512 && size != 1280 {
        return Err(ToolError::validation(
            "size",
            "must be 512 or 1280",
            "value_error",
        ));
    }
    let offset = args.offset().max(0) as usize;
    let limit = args.int("limit").unwrap_or(20).max(1) as usize;
    let entry_key = args.key("entry_key").trim().to_owned();
    // Inside a JSON-RPC batch the images also count against what the batch's answers have
    // left (MCP_MAX_BATCH_RESPONSE_MB), less room for this call's own envelope.
    let budget = crate::mcp::dispatch::batch_budget().map(|b| b.saturating_sub(ENVELOPE_ROOM));
    let photo_ids = args.ids("photo_ids");
    let selection = Selection {
        only: args.has("photo_ids").then_some(photo_ids.as_slice()),
        skip: offset,
        limit,
    };
    let delivery = service::deliver(
        ctx.state,
        tenant,
        &entry_key,
        size as u32,
        selection,
        budget,
    )
    .await
    .map_err(tool_error)?
    .map_err(too_large_error)?;
    let mut photos: Vec<Value> = Vec::with_capacity(delivery.photos.len());
    let mut images = Vec::with_capacity(delivery.photos.len());
    let mut payload = 0usize;
    for (photo, bytes) in &delivery.photos {
        let mut v = serde_json::to_value(photo).unwrap_or(Value::Null);
        if let Some(m) = v.as_object_mut() {
            if let Some(k) = m.remove("key") {
                m.insert("photo_key".into(), k);
            }
            m.remove("entry_key");
            m.insert("delivered_size".into(), json!(delivery.size));
            m.insert("delivered_bytes".into(), json!(bytes.len()));
        }
        photos.push(v);
        let data = STANDARD.encode(bytes);
        payload += data.len();
        images.push(ImageBlock {
            mime_type: "image/webp",
            data,
        });
    }
    let pending: Vec<Value> = delivery
        .pending
        .iter()
        .map(|(key, status)| json!({"photo_key": key, "status": status}))
        .collect();
    let summary = format!(
        "{} photo(s) delivered as {} px WebP renditions{}{}.",
        photos.len(),
        delivery.size,
        if pending.is_empty() {
            String::new()
        } else {
            format!(", {} pending", pending.len())
        },
        if delivery.total > offset + photos.len() + pending.len() {
            let of = if args.has("photo_ids") {
                "photos asked for"
            } else {
                "photos of the entry"
            };
            format!(" ({} {of} in all)", delivery.total)
        } else {
            String::new()
        }
    );
    Ok(ToolOutput::new(
        summary,
        json!({
            "entry_key": delivery.entry,
            "size": delivery.size,
            "photos": photos,
            "pending": pending,
            "total": delivery.total,
            "offset": offset,
            "payload_bytes": payload,
        }),
    )
    .link_api(format!(
        "/api/v1/t/{}/diary-entries/{}/photos",
        tenant.slug.as_str(),
        delivery.entry
    ))
    .with_images(images))
}
