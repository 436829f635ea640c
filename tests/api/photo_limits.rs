//! Media that cannot exhaust memory or disk (issue 25): a decompression bomb refused from its
//! header with nothing stored; the files of deleted photos, entries and gardens removed (and
//! the sweep's reconciliation); the per-garden quota and its usage route; photo rights that
//! follow entry rights; the byte cap of one JSON-RPC batch's answers.

use std::path::Path;

use image::{DynamicImage, ImageFormat, RgbImage};
use kultiva::auth::Role;
use kultiva::garden::photos::{cleanup, worker};
use kultiva::tenancy::TenantRecord;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::photos::{app_with, diary_entry_by, encode, files, noise, picture, storage_dir};
use crate::support::{TestApp, TestUser, assert_error};

fn user_id(u: &TestUser) -> Uuid {
    u.id()
}

fn photos_path(t: &TenantRecord, entry: Uuid) -> String {
    format!("/api/v1/t/{}/diary-entries/{entry}/photos", t.slug)
}

async fn upload(
    app: &TestApp,
    t: &TenantRecord,
    entry: Uuid,
    who: &TestUser,
    body: Vec<u8>,
) -> (u16, Value) {
    let res = app
        .client
        .post(app.url(&photos_path(t, entry)))
        .header("authorization", who.bearer())
        .header("content-type", "image/png")
        .body(body)
        .send()
        .await
        .expect("upload sent");
    let s = res.status().as_u16();
    (s, res.json().await.unwrap_or(Value::Null))
}

async fn count(app: &TestApp, t: &TenantRecord, table: &str) -> i64 {
    sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "SELECT count(*) FROM {}.{table}",
        t.schema_name.quoted()
    )))
    .fetch_one(app.state.platform_pool())
    .await
    .expect("count")
}

async fn jobs(app: &TestApp, t: &TenantRecord) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM platform.photo_rendition_jobs WHERE tenant_id = $1")
        .bind(t.id)
        .fetch_one(app.state.platform_pool())
        .await
        .expect("count")
}

/// Works the rendition queue until nothing is due.
async fn render_all(app: &TestApp) {
    while worker::run_once(&app.state).await.expect("queue").is_some() {}
}

/// Whether any stored file belongs to this photo.
fn has_files(dir: &Path, t: &TenantRecord, photo: &str) -> bool {
    let prefix = format!("{}/{photo}/", t.id);
    files(dir).iter().any(|f| f.starts_with(&prefix))
}

/// The 7000 x 7000 PNG of the review: 49 megapixels (under the 50 MP limit) in a few hundred
/// KB, because it is almost all one colour. Decoding it takes 147 MB.
fn bomb_png() -> Vec<u8> {
    let mut img = RgbImage::new(7000, 7000);
    for x in 0..7000 {
        img.put_pixel(x, 3500, image::Rgb([200, 40, 40]));
    }
    // zlib's usual level (as most tools write PNGs), not the encoder's fastest default.
    let mut out = Vec::new();
    let encoder = image::codecs::png::PngEncoder::new_with_quality(
        &mut out,
        image::codecs::png::CompressionType::Default,
        image::codecs::png::FilterType::NoFilter,
    );
    DynamicImage::ImageRgb8(img)
        .write_with_encoder(encoder)
        .expect("png");
    out
}

#[tokio::test]
async fn a_small_png_of_49_megapixels_is_refused_before_decoding_and_nothing_is_stored() {
    let dir = storage_dir();
    let app = app_with(&dir, &[]).await;
    let t = app.tenant("bomb").await;
    let grower = app.member(&t, Role::Grower).await;
    let entry = diary_entry_by(&app, &t, user_id(&grower)).await;
    let bomb = bomb_png();
    let ratio = 49_000_000 / bomb.len();
    assert!(
        bomb.len() < 2 * 1024 * 1024 && ratio > 100,
        "fixture: {} bytes, {ratio} px/byte",
        bomb.len()
    );
    let res = app
        .client
        .post(app.url(&photos_path(&t, entry)))
        .header("authorization", grower.bearer())
        .header("content-type", "image/png")
        .body(bomb)
        .send()
        .await
        .expect("sent");
    let body = assert_error(res, 422, "IMAGE_TOO_COMPRESSED").await;
    let message = body["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("7000 x 7000"),
        "the refusal names the size: {message}"
    );
    assert_eq!(count(&app, &t, "diary_photos").await, 0, "no photo row");
    assert_eq!(jobs(&app, &t).await, 0, "no rendition job");
    assert_eq!(files(&dir), Vec::<String>::new(), "nothing stored");
    // A photo (noise, as a camera's sensor gives) of the same garden still goes in.
    let (s, p) = upload(
        &app,
        &t,
        entry,
        &grower,
        encode(&noise(640, 480, 7), ImageFormat::Png),
    )
    .await;
    assert_eq!(s, 201, "{p}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn deleting_a_photo_an_entry_or_a_garden_removes_its_files() {
    let dir = storage_dir();
    let app = app_with(&dir, &[]).await;
    let t = app.tenant("forget").await;
    let grower = app.member(&t, Role::Grower).await;
    let entry_a = diary_entry_by(&app, &t, user_id(&grower)).await;
    let entry_b = diary_entry_by(&app, &t, user_id(&grower)).await;
    let png = encode(&picture(300, 200), ImageFormat::Png);
    let mut keys = Vec::new();
    for entry in [entry_a, entry_a, entry_b] {
        let (s, p) = upload(&app, &t, entry, &grower, png.clone()).await;
        assert_eq!(s, 201, "{p}");
        keys.push(p["key"].as_str().expect("key").to_owned());
    }
    render_all(&app).await;
    // Original and two renditions each.
    assert_eq!(files(&dir).len(), 9, "{:?}", files(&dir));

    // One photo: its files go, the others stay.
    let res = app
        .rest_as(&grower)
        .delete(&format!("{}/{}", photos_path(&t, entry_a), keys[0]))
        .await;
    assert_eq!(res.status().as_u16(), 204);
    assert!(!has_files(&dir, &t, &keys[0]), "the photo's files are gone");
    assert!(has_files(&dir, &t, &keys[1]) && has_files(&dir, &t, &keys[2]));

    // An entry: its photos' files go (the rows went by cascade).
    let res = app
        .rest_as(&grower)
        .delete(&format!("/api/v1/t/{}/diary-entries/{entry_a}", t.slug))
        .await;
    assert_eq!(res.status().as_u16(), 204);
    assert!(
        !has_files(&dir, &t, &keys[1]),
        "the entry's photo files are gone"
    );
    assert!(has_files(&dir, &t, &keys[2]), "another entry's photo stays");
    assert_eq!(
        count(&app, &t, "photo_file_outbox").await,
        0,
        "outbox drained"
    );

    // The garden: its whole folder goes, and nothing is left to do.
    kultiva::tenancy::provision::drop_tenant(&app.state, &t.slug)
        .await
        .expect("dropped");
    assert_eq!(
        files(&dir),
        Vec::<String>::new(),
        "the garden's files are gone"
    );
    assert!(!dir.join(t.id.to_string()).exists());
    let left: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM platform.photo_storage_deletions WHERE tenant_id = $1",
    )
    .bind(t.id)
    .fetch_one(app.state.platform_pool())
    .await
    .expect("count");
    assert_eq!(left, 0, "the deletion record is done");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn the_sweep_removes_what_a_crash_or_a_stray_write_left() {
    let dir = storage_dir();
    let app = app_with(&dir, &[("PHOTO_ORPHAN_GRACE_MINUTES", "0")]).await;
    let t = app.tenant("sweep").await;
    let grower = app.member(&t, Role::Grower).await;
    let entry = diary_entry_by(&app, &t, user_id(&grower)).await;
    let png = encode(&picture(120, 80), ImageFormat::Png);
    let (_, kept) = upload(&app, &t, entry, &grower, png.clone()).await;
    let (_, crashed) = upload(&app, &t, entry, &grower, png).await;
    let (kept, crashed) = (
        kept["key"].as_str().expect("key").to_owned(),
        crashed["key"].as_str().expect("key").to_owned(),
    );
    // A delete whose process died after the commit: the row is gone, the outbox names it, the
    // files are still there.
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "DELETE FROM {}.diary_photos WHERE id = $1",
        t.schema_name.quoted()
    )))
    .bind(Uuid::parse_str(&crashed).expect("uuid"))
    .execute(app.state.platform_pool())
    .await
    .expect("deleted");
    assert!(has_files(&dir, &t, &crashed));
    assert_eq!(count(&app, &t, "photo_file_outbox").await, 1);
    // A folder no row names, and a folder of a garden that does not exist.
    let stray = dir.join(t.id.to_string()).join(Uuid::new_v4().to_string());
    std::fs::create_dir_all(&stray).expect("stray");
    std::fs::write(stray.join("original.png"), b"x").expect("stray file");
    let gone_garden = dir
        .join(Uuid::new_v4().to_string())
        .join(Uuid::new_v4().to_string());
    std::fs::create_dir_all(&gone_garden).expect("gone garden");
    std::fs::write(gone_garden.join("original.png"), b"x").expect("gone file");

    let swept = cleanup::sweep(&app.state).await.expect("sweep");
    assert_eq!(
        (
            swept.outbox_photos,
            swept.orphan_photos,
            swept.orphan_gardens
        ),
        (1, 1, 1),
        "{swept:?}"
    );
    assert!(!has_files(&dir, &t, &crashed));
    assert!(!stray.exists() && !gone_garden.exists());
    assert!(has_files(&dir, &t, &kept), "a photo with its row stays");
    assert_eq!(count(&app, &t, "photo_file_outbox").await, 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn the_garden_quota_refuses_uploads_and_admins_read_the_usage() {
    let dir = storage_dir();
    let app = app_with(&dir, &[("PHOTO_QUOTA_MB_PER_GARDEN", "1")]).await;
    let t = app.tenant("quota").await;
    let admin = app.member(&t, Role::Admin).await;
    let grower = app.member(&t, Role::Grower).await;
    let entry = diary_entry_by(&app, &t, user_id(&grower)).await;
    // Noise barely compresses: about 600 KB each.
    let first = encode(&noise(450, 450, 1), ImageFormat::Png);
    let second = encode(&noise(450, 450, 2), ImageFormat::Png);
    assert!(first.len() > 512 * 1024 && first.len() < 1024 * 1024);
    let (s, p) = upload(&app, &t, entry, &grower, first).await;
    assert_eq!(s, 201, "{p}");
    let before = files(&dir);
    let res = app
        .client
        .post(app.url(&photos_path(&t, entry)))
        .header("authorization", grower.bearer())
        .header("content-type", "image/png")
        .body(second)
        .send()
        .await
        .expect("sent");
    let body = assert_error(res, 413, "STORAGE_QUOTA_EXCEEDED").await;
    assert!(
        body["message"]
            .as_str()
            .unwrap_or_default()
            .contains("PHOTO_QUOTA_MB_PER_GARDEN")
    );
    assert_eq!(count(&app, &t, "diary_photos").await, 1, "no second row");
    assert_eq!(jobs(&app, &t).await, 1, "no second job");
    assert_eq!(files(&dir), before, "no second file");

    let path = format!("/api/v1/t/{}/storage", t.slug);
    let res = app.rest_as(&admin).get(&path).await;
    assert_eq!(res.status().as_u16(), 200);
    let usage: Value = res.json().await.expect("json");
    assert_eq!(usage["quota_bytes"], 1024 * 1024);
    assert_eq!(usage["photo_count"], 1);
    assert_eq!(
        usage["bytes_used"],
        json!(p["byte_size"].as_i64().expect("byte_size"))
    );
    let res = app.rest_as(&grower).get(&path).await;
    assert_error(res, 403, "FORBIDDEN").await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn only_the_author_or_an_admin_adds_or_deletes_an_entrys_photos() {
    let dir = storage_dir();
    let app = app_with(&dir, &[]).await;
    let t = app.tenant("photorights").await;
    let author = app.member(&t, Role::Grower).await;
    let other = app.member(&t, Role::Grower).await;
    let admin = app.member(&t, Role::Admin).await;
    let entry = diary_entry_by(&app, &t, user_id(&author)).await;
    let png = encode(&picture(60, 40), ImageFormat::Png);

    let res = app
        .client
        .post(app.url(&photos_path(&t, entry)))
        .header("authorization", other.bearer())
        .header("content-type", "image/png")
        .body(png.clone())
        .send()
        .await
        .expect("sent");
    assert_error(res, 403, "FORBIDDEN").await;
    assert_eq!(count(&app, &t, "diary_photos").await, 0);
    assert_eq!(files(&dir), Vec::<String>::new());

    let (s, p) = upload(&app, &t, entry, &author, png.clone()).await;
    assert_eq!(s, 201, "{p}");
    let key = p["key"].as_str().expect("key").to_owned();
    let (s, _) = upload(&app, &t, entry, &admin, png).await;
    assert_eq!(s, 201, "an admin adds photos to any entry");
    let stored = files(&dir);

    let photo = format!("{}/{key}", photos_path(&t, entry));
    let res = app.rest_as(&other).delete(&photo).await;
    assert_error(res, 403, "FORBIDDEN").await;
    assert_eq!(count(&app, &t, "diary_photos").await, 2, "nothing deleted");
    assert_eq!(files(&dir), stored, "no file removed");

    let res = app.rest_as(&admin).delete(&photo).await;
    assert_eq!(res.status().as_u16(), 204, "an admin deletes");
    assert_eq!(count(&app, &t, "diary_photos").await, 1);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Opens a 2025-03-26 session (the revision with batches); its id.
async fn batch_session(app: &TestApp, key: &str) -> String {
    let res = app
        .client
        .post(app.url("/api/v1/mcp"))
        .header("authorization", format!("Bearer {key}"))
        .header("accept", "application/json, text/event-stream")
        .json(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-03-26", "capabilities": {},
            "clientInfo": {"name": "tests", "version": "1"}}}),
        )
        .send()
        .await
        .expect("initialize sent");
    assert_eq!(res.status().as_u16(), 200);
    crate::support::header(&res, "mcp-session-id").expect("Mcp-Session-Id")
}

#[tokio::test]
async fn a_batch_past_its_answer_cap_answers_payload_too_large_for_the_rest() {
    let dir = storage_dir();
    let app = app_with(&dir, &[("MCP_MAX_BATCH_RESPONSE_MB", "1")]).await;
    let t = app.tenant("photobatch").await;
    let grower = app.member(&t, Role::Grower).await;
    let entry = diary_entry_by(&app, &t, user_id(&grower)).await;
    // One photo of noise: its 1280 px rendition is a few hundred KB of Base64.
    let (s, p) = upload(
        &app,
        &t,
        entry,
        &grower,
        encode(&noise(1280, 960, 3), ImageFormat::Png),
    )
    .await;
    assert_eq!(s, 201, "{p}");
    render_all(&app).await;
    let key = app.api_key(&grower, Some(t.slug.as_str())).await;
    let session = batch_session(&app, &key).await;
    // The 512 px rendition of noise: a few hundred KB of Base64, so a dozen calls are several
    // MB of answers.
    let calls: Vec<Value> = (1..=12)
        .map(|i| {
            json!({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {
                "name": "get_diary_entry_photos", "arguments": {"entry_key": entry, "size": 512}}})
        })
        .collect();
    let res = app
        .client
        .post(app.url("/api/v1/mcp"))
        .header("authorization", format!("Bearer {key}"))
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", &session)
        .json(&Value::Array(calls))
        .send()
        .await
        .expect("batch sent");
    assert_eq!(res.status().as_u16(), 200);
    let text = res.text().await.expect("body");
    assert!(
        text.len() <= 1024 * 1024 + 64 * 1024,
        "the batch's answers stay near the cap: {} bytes",
        text.len()
    );
    let replies: Vec<Value> = serde_json::from_str(&text).expect("array");
    assert_eq!(replies.len(), 12, "every call is answered");
    let mut delivered = 0;
    let mut refused = 0;
    for (i, r) in replies.iter().enumerate() {
        assert_eq!(r["id"], i + 1);
        let result = &r["result"];
        if result["isError"] == true {
            let text = result["content"][0]["text"].as_str().unwrap_or_default();
            assert!(text.contains("payload.too_large"), "{text}");
            refused += 1;
        } else {
            assert_eq!(result["content"].as_array().map(Vec::len), Some(2));
            delivered += 1;
        }
    }
    assert!(
        delivered >= 1 && refused >= 1,
        "{delivered} delivered, {refused} refused"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
