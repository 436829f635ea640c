//! Diary photos (issue 15): uploads (JPEG, PNG, WebP; everything else refused and nothing
//! stored), EXIF stripping of originals, renditions made by the job queue (sizes, WebP, no
//! EXIF, never upscaled), retries and give-up, two workers never rendering one job, the
//! rendition and delete routes, roles, two-tenant isolation and `get_diary_entry_photos`
//! (image blocks, pending, the payload cap).
//!
//! Every test server here has its own storage directory, and rendition workers only claim
//! jobs of their own storage, so tests that drive the queue by hand (`worker::run_once`, with
//! `PHOTO_RENDITION_WORKERS=0`) are not raced by other servers' workers.

use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::time::Duration;

use image::{DynamicImage, ImageFormat, RgbImage};
use kultiva::auth::Role;
use kultiva::garden::photos::worker::{self, Outcome};
use kultiva::tenancy::TenantRecord;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::support::{TestApp, TestUser, assert_error};

/// A diary entry of the garden, written through the diary service (the one behind
/// `POST /t/{slug}/diary-entries`).
pub async fn diary_entry(app: &TestApp, t: &TenantRecord) -> Uuid {
    diary_entry_by(app, t, Uuid::new_v4()).await
}

/// A diary entry written by `author` (whose photos only the author and admins change).
pub async fn diary_entry_by(app: &TestApp, t: &TenantRecord, author: Uuid) -> Uuid {
    use kultiva::garden::diary::{model, service};
    let input = model::EntryInput {
        title: None,
        text: "Leaves curl at the tips".into(),
        entry_type: model::EntryType::Observation,
        tags: Vec::new(),
        plant_key: None,
        run_key: None,
        entry_date: None,
        measurements: serde_json::Map::new(),
    };
    let author = service::Author {
        id: author,
        kind: "user",
        via: "rest",
    };
    service::create_entry(&app.state, t, &input, &author, true)
        .await
        .expect("diary entry")
        .key
}

/// A photo of the entry, uploaded through the service and rendered (by whichever worker of
/// this storage takes the job) before it is returned.
pub async fn rendered_photo(app: &TestApp, t: &TenantRecord, entry: &str) -> Uuid {
    let png = encode(&picture(64, 48), ImageFormat::Png);
    let photo = kultiva::garden::photos::service::upload(
        &app.state,
        t,
        entry,
        Some("image/png"),
        png,
        &admin_editor(),
    )
    .await
    .expect("photo");
    let sql = format!(
        "SELECT rendition_status FROM {}.diary_photos WHERE id = $1",
        t.schema_name.quoted()
    );
    for _ in 0..300 {
        let _ = worker::run_once(&app.state).await;
        let status: String = sqlx::query_scalar(sqlx::AssertSqlSafe(sql.clone()))
            .bind(photo.key)
            .fetch_one(app.state.platform_pool())
            .await
            .expect("status");
        if status != "pending" {
            return photo.key;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("photo {} was not rendered", photo.key);
}

/// A garden admin, for photo writes through the service (admins change any entry's photos).
pub fn admin_editor() -> kultiva::garden::diary::service::Editor {
    kultiva::garden::diary::service::Editor {
        id: Uuid::new_v4(),
        admin: true,
    }
}

pub(crate) fn storage_dir() -> PathBuf {
    std::env::temp_dir().join(format!("kultiva-photos-{}", Uuid::new_v4().simple()))
}

/// A full-mode service with the tool server on, its own storage and `env` on top.
pub(crate) async fn app_with(dir: &Path, env: &[(&'static str, &str)]) -> TestApp {
    let dir = dir.to_str().expect("utf-8 temp dir").to_owned();
    let mut all: Vec<(&'static str, &str)> = vec![
        ("MCP_SERVER_ENABLED", "true"),
        ("STORAGE_DIR", dir.as_str()),
        ("PHOTO_RENDITION_WORKERS", "0"),
    ];
    for (k, v) in env {
        all.retain(|(name, _)| name != k);
        all.push((k, v));
    }
    TestApp::full_env(&all).await
}

struct Garden {
    t: TenantRecord,
    viewer: TestUser,
    grower: TestUser,
    entry: Uuid,
}

async fn garden(app: &TestApp, prefix: &str) -> Garden {
    let t = app.tenant(prefix).await;
    let viewer = app.member(&t, Role::Viewer).await;
    let grower = app.member(&t, Role::Grower).await;
    // The grower's own entry: its photos are the grower's to add and delete.
    let entry = diary_entry_by(app, &t, grower.id()).await;
    Garden {
        t,
        viewer,
        grower,
        entry,
    }
}

fn photos_path(g: &Garden) -> String {
    format!("/api/v1/t/{}/diary-entries/{}/photos", g.t.slug, g.entry)
}

/// A picture with structure (gradients), so the codecs have something to do.
pub(crate) fn picture(w: u32, h: u32) -> DynamicImage {
    DynamicImage::ImageRgb8(RgbImage::from_fn(w, h, |x, y| {
        image::Rgb([
            (x * 255 / w) as u8,
            (y * 255 / h) as u8,
            ((x + y) % 256) as u8,
        ])
    }))
}

/// Noise: compresses badly, so renditions are large (the payload cap test).
pub(crate) fn noise(w: u32, h: u32, seed: u32) -> DynamicImage {
    let mut s = seed.wrapping_mul(2_654_435_761).max(1);
    DynamicImage::ImageRgb8(RgbImage::from_fn(w, h, |_, _| {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        image::Rgb([s as u8, (s >> 8) as u8, (s >> 16) as u8])
    }))
}

pub(crate) fn encode(img: &DynamicImage, format: ImageFormat) -> Vec<u8> {
    let mut out = Cursor::new(Vec::new());
    if format == ImageFormat::Jpeg {
        let enc = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 90);
        img.write_with_encoder(enc).expect("jpeg");
    } else {
        img.write_to(&mut out, format).expect("encode");
    }
    out.into_inner()
}

/// A JPEG carrying an EXIF block with a GPS position (kamadak-exif's writer).
pub(crate) fn jpeg_with_gps(w: u32, h: u32) -> Vec<u8> {
    use exif::experimental::Writer;
    use exif::{Field, In, Rational, Tag, Value as ExifValue};
    let jpeg = encode(&picture(w, h), ImageFormat::Jpeg);
    let lat_ref = Field {
        tag: Tag::GPSLatitudeRef,
        ifd_num: In::PRIMARY,
        value: ExifValue::Ascii(vec![b"N".to_vec()]),
    };
    let lat = Field {
        tag: Tag::GPSLatitude,
        ifd_num: In::PRIMARY,
        value: ExifValue::Rational(vec![
            Rational { num: 52, denom: 1 },
            Rational { num: 31, denom: 1 },
            Rational { num: 12, denom: 1 },
        ]),
    };
    let make = Field {
        tag: Tag::Make,
        ifd_num: In::PRIMARY,
        value: ExifValue::Ascii(vec![b"TestCam".to_vec()]),
    };
    let mut writer = Writer::new();
    writer.push_field(&lat_ref);
    writer.push_field(&lat);
    writer.push_field(&make);
    let mut tiff = Cursor::new(Vec::new());
    writer.write(&mut tiff, false).expect("exif");
    let tiff = tiff.into_inner();
    let mut app1 = b"Exif\0\0".to_vec();
    app1.extend_from_slice(&tiff);
    let len = u16::try_from(app1.len() + 2).expect("small exif");
    let mut out = vec![0xFF, 0xD8, 0xFF, 0xE1];
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(&app1);
    out.extend_from_slice(&jpeg[2..]);
    assert!(has_gps(&out), "the test input carries GPS");
    out
}

fn exif_of(bytes: &[u8]) -> Option<exif::Exif> {
    exif::Reader::new()
        .read_from_container(&mut Cursor::new(bytes))
        .ok()
}

pub(crate) fn has_gps(bytes: &[u8]) -> bool {
    exif_of(bytes).is_some_and(|e| {
        e.get_field(exif::Tag::GPSLatitude, exif::In::PRIMARY)
            .is_some()
    })
}

/// Every file under `dir` (relative paths), sorted.
pub(crate) fn files(dir: &Path) -> Vec<String> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(base, &p, out);
            } else if let Ok(rel) = p.strip_prefix(base) {
                out.push(rel.to_string_lossy().into_owned());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

async fn upload(
    app: &TestApp,
    g: &Garden,
    who: &TestUser,
    content_type: &str,
    body: Vec<u8>,
) -> (u16, Value) {
    let res = app
        .client
        .post(app.url(&photos_path(g)))
        .header("authorization", who.bearer())
        .header("content-type", content_type)
        .body(body)
        .send()
        .await
        .expect("upload sent");
    let s = res.status().as_u16();
    (s, res.json().await.unwrap_or(Value::Null))
}

async fn photo_count(app: &TestApp, t: &TenantRecord) -> i64 {
    let sql = format!(
        "SELECT count(*) FROM {}.diary_photos",
        t.schema_name.quoted()
    );
    sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
        .fetch_one(app.state.platform_pool())
        .await
        .expect("count")
}

async fn job_count(app: &TestApp, t: &TenantRecord) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM platform.photo_rendition_jobs WHERE tenant_id = $1")
        .bind(t.id)
        .fetch_one(app.state.platform_pool())
        .await
        .expect("count")
}

/// Works the queue until nothing is due; the outcomes in order.
async fn drain(app: &TestApp) -> Vec<Outcome> {
    let mut out = Vec::new();
    while let Some(o) = worker::run_once(&app.state).await.expect("queue") {
        out.push(o);
    }
    out
}

async fn rendition(app: &TestApp, g: &Garden, who: &TestUser, key: &str, size: u32) -> Vec<u8> {
    let res = app
        .rest_as(who)
        .get(&format!(
            "/api/v1/t/{}/photos/{key}/renditions/{size}",
            g.t.slug
        ))
        .await;
    assert_eq!(res.status().as_u16(), 200, "rendition {size}");
    assert_eq!(
        crate::support::header(&res, "content-type").as_deref(),
        Some("image/webp")
    );
    res.bytes().await.expect("bytes").to_vec()
}

pub(crate) fn webp_dimensions(bytes: &[u8]) -> (u32, u32) {
    assert_eq!(
        image::guess_format(bytes).expect("format"),
        ImageFormat::WebP
    );
    let img = image::load_from_memory_with_format(bytes, ImageFormat::WebP).expect("decodes");
    (img.width(), img.height())
}

fn assert_no_metadata(webp: &[u8]) {
    assert!(exif_of(webp).is_none(), "a rendition carries EXIF");
    for needle in [&b"EXIF"[..], b"Exif\0\0", b"XMP ", b"TestCam"] {
        assert!(
            !webp.windows(needle.len()).any(|w| w == needle),
            "a rendition contains {needle:?}"
        );
    }
}

#[tokio::test]
async fn photos_are_stored_stripped_and_rendered() {
    let dir = storage_dir();
    let app = app_with(&dir, &[]).await;
    let g = garden(&app, "photo").await;

    // A JPEG with a GPS tag: stored without it (STORAGE_STRIP_EXIF defaults to true).
    let (s, jpeg) = upload(&app, &g, &g.grower, "image/jpeg", jpeg_with_gps(2000, 1500)).await;
    assert_eq!(s, 201, "{jpeg}");
    assert_eq!(jpeg["rendition_status"], "pending");
    assert_eq!(jpeg["renditions"], json!([]));
    assert_eq!(jpeg["exif_stripped"], true);
    assert_eq!(
        (jpeg["width"].as_i64(), jpeg["height"].as_i64()),
        (Some(2000), Some(1500))
    );
    assert_eq!(jpeg["position"], 0);
    let jpeg_key = jpeg["key"].as_str().expect("key").to_owned();
    let stored = files(&dir);
    assert_eq!(
        stored,
        vec![format!("{}/{jpeg_key}/original.jpg", g.t.id)],
        "one generated file name"
    );
    let original = std::fs::read(dir.join(&stored[0])).expect("original");
    assert!(!has_gps(&original), "GPS never reaches storage");
    assert!(exif_of(&original).is_none(), "no EXIF at all");
    assert_eq!(jpeg["byte_size"].as_u64(), Some(original.len() as u64));
    image::load_from_memory(&original).expect("the stripped original still decodes");

    // A small PNG (never upscaled) and a WebP.
    let (s, png) = upload(
        &app,
        &g,
        &g.grower,
        "image/png",
        encode(&picture(300, 200), ImageFormat::Png),
    )
    .await;
    assert_eq!(s, 201, "{png}");
    assert_eq!(png["position"], 1);
    let (s, webp) = upload(
        &app,
        &g,
        &g.grower,
        "image/webp; charset=binary",
        encode(&picture(600, 900), ImageFormat::WebP),
    )
    .await;
    assert_eq!(s, 201, "{webp}");
    assert_eq!(webp["content_type"], "image/webp");

    // Before the worker ran: the rendition is not there yet (409), the tool lists it pending.
    let res = app
        .rest_as(&g.viewer)
        .get(&format!(
            "/api/v1/t/{}/photos/{jpeg_key}/renditions/512",
            g.t.slug
        ))
        .await;
    assert_error(res, 409, "STATE_CONFLICT").await;
    assert_eq!(job_count(&app, &g.t).await, 3);

    let outcomes = drain(&app).await;
    assert_eq!(outcomes.len(), 3, "{outcomes:?}");
    assert!(
        outcomes
            .iter()
            .all(|o| matches!(o, Outcome::Rendered { .. }))
    );
    assert_eq!(job_count(&app, &g.t).await, 0, "done jobs are gone");

    for (key, edge_512, edge_1280) in [
        (jpeg_key.as_str(), (512, 384), (1280, 960)),
        (png["key"].as_str().expect("key"), (300, 200), (300, 200)),
        (webp["key"].as_str().expect("key"), (341, 512), (600, 900)),
    ] {
        let small = rendition(&app, &g, &g.viewer, key, 512).await;
        let large = rendition(&app, &g, &g.viewer, key, 1280).await;
        assert_eq!(webp_dimensions(&small), edge_512, "{key} 512");
        assert_eq!(webp_dimensions(&large), edge_1280, "{key} 1280");
        assert_no_metadata(&small);
        assert_no_metadata(&large);
    }
    // Other sizes and the original are never served.
    for size in ["original", "2048", "0"] {
        let res = app
            .rest_as(&g.viewer)
            .get(&format!(
                "/api/v1/t/{}/photos/{jpeg_key}/renditions/{size}",
                g.t.slug
            ))
            .await;
        assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    }

    // The list: in order, ready, both sizes.
    let res = app.rest_as(&g.viewer).get(&photos_path(&g)).await;
    let list: Value = res.json().await.expect("json");
    assert_eq!(list["total"], 3, "{list}");
    let items = list["items"].as_array().expect("items");
    assert_eq!(items[0]["key"], jpeg_key.as_str());
    assert!(
        items
            .iter()
            .all(|p| p["rendition_status"] == "ready" && p["renditions"] == json!([512, 1280]))
    );
    let descriptors = {
        let mut tx = kultiva::tenancy::TenantTx::read(&app.state, &g.t)
            .await
            .expect("tx");
        kultiva::garden::photos::repo::descriptors_for_entries(&mut tx, &[g.entry])
            .await
            .expect("descriptors")
    };
    assert_eq!(descriptors[&g.entry].len(), 3);
    assert_eq!(descriptors[&g.entry][0].renditions, vec![512, 1280]);

    // Delete: row, job and files go; a viewer may not.
    let one = format!("{}/{jpeg_key}", photos_path(&g));
    let res = app.rest_auth(Some(&g.viewer.bearer())).delete(&one).await;
    assert_error(res, 403, "FORBIDDEN").await;
    let res = app.rest_auth(Some(&g.grower.bearer())).delete(&one).await;
    assert_eq!(res.status().as_u16(), 204);
    assert_eq!(photo_count(&app, &g.t).await, 2);
    assert!(
        files(&dir).iter().all(|f| !f.contains(&jpeg_key)),
        "files removed"
    );
    let res = app.rest_as(&g.viewer).get(&one).await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn exif_is_kept_on_originals_when_stripping_is_off() {
    let dir = storage_dir();
    let app = app_with(&dir, &[("STORAGE_STRIP_EXIF", "false")]).await;
    let g = garden(&app, "photokeep").await;
    let input = jpeg_with_gps(800, 600);
    let (s, p) = upload(&app, &g, &g.grower, "image/jpeg", input.clone()).await;
    assert_eq!(s, 201, "{p}");
    assert_eq!(p["exif_stripped"], false);
    let stored = files(&dir);
    let original = std::fs::read(dir.join(&stored[0])).expect("original");
    assert_eq!(original, input, "the original is kept byte for byte");
    assert!(has_gps(&original));
    drain(&app).await;
    let key = p["key"].as_str().expect("key");
    for size in [512, 1280] {
        let r = rendition(&app, &g, &g.viewer, key, size).await;
        assert_no_metadata(&r);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A PNG whose header claims `w`×`h` pixels, with a few bytes of (invalid) image data: the
/// decompression bomb shape (huge dimensions, tiny file).
fn png_claiming(w: u32, h: u32) -> Vec<u8> {
    fn crc32(bytes: &[u8]) -> u32 {
        let mut c = 0xFFFF_FFFFu32;
        for &b in bytes {
            c ^= u32::from(b);
            for _ in 0..8 {
                c = if c & 1 == 1 {
                    0xEDB8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
            }
        }
        !c
    }
    fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
        out.extend_from_slice(&(data.len() as u32).to_be_bytes());
        let mut body = kind.to_vec();
        body.extend_from_slice(data);
        out.extend_from_slice(&body);
        out.extend_from_slice(&crc32(&body).to_be_bytes());
    }
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(&w.to_be_bytes());
    ihdr.extend_from_slice(&h.to_be_bytes());
    ihdr.extend_from_slice(&[8, 2, 0, 0, 0]);
    chunk(&mut out, b"IHDR", &ihdr);
    chunk(
        &mut out,
        b"IDAT",
        &[0x78, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01],
    );
    chunk(&mut out, b"IEND", &[]);
    out
}

#[tokio::test]
async fn bad_uploads_are_refused_and_store_nothing() {
    let dir = storage_dir();
    let app = app_with(&dir, &[("PHOTO_MAX_UPLOAD_MB", "1")]).await;
    let g = garden(&app, "photobad").await;
    let jpeg = encode(&picture(640, 480), ImageFormat::Jpeg);
    let png = encode(&picture(64, 48), ImageFormat::Png);
    let heic = b"\0\0\0\x18ftypheic\0\0\0\0mif1heic".to_vec();

    let cases: Vec<(&str, &str, Vec<u8>, u16, &str)> = vec![
        (
            "HEIC declared",
            "image/heic",
            heic.clone(),
            415,
            "UNSUPPORTED_MEDIA_TYPE",
        ),
        (
            "HEIC as JPEG",
            "image/jpeg",
            heic,
            415,
            "UNSUPPORTED_MEDIA_TYPE",
        ),
        (
            "GIF",
            "image/gif",
            b"GIF89a....".to_vec(),
            415,
            "UNSUPPORTED_MEDIA_TYPE",
        ),
        (
            "JSON",
            "application/json",
            b"{}".to_vec(),
            415,
            "UNSUPPORTED_MEDIA_TYPE",
        ),
        (
            "not an image",
            "image/jpeg",
            b"just some text, not a photo".to_vec(),
            415,
            "UNSUPPORTED_MEDIA_TYPE",
        ),
        (
            "PNG declared JPEG",
            "image/jpeg",
            png.clone(),
            415,
            "UNSUPPORTED_MEDIA_TYPE",
        ),
        ("empty", "image/jpeg", Vec::new(), 422, "VALIDATION_ERROR"),
        (
            "truncated JPEG",
            "image/jpeg",
            jpeg[..jpeg.len() / 2].to_vec(),
            422,
            "VALIDATION_ERROR",
        ),
        (
            "truncated PNG",
            "image/png",
            png[..png.len() - 20].to_vec(),
            422,
            "VALIDATION_ERROR",
        ),
        (
            "bomb",
            "image/png",
            png_claiming(20_000, 20_000),
            422,
            "VALIDATION_ERROR",
        ),
        (
            "wide bomb",
            "image/png",
            png_claiming(100_000, 10),
            422,
            "VALIDATION_ERROR",
        ),
        (
            "too large",
            "image/jpeg",
            vec![0xFF; 1024 * 1024 + 10],
            413,
            "PAYLOAD_TOO_LARGE",
        ),
    ];
    for (what, content_type, body, status, code) in cases {
        let res = app
            .client
            .post(app.url(&photos_path(&g)))
            .header("authorization", g.grower.bearer())
            .header("content-type", content_type)
            .body(body)
            .send()
            .await
            .expect("sent");
        assert_eq!(res.status().as_u16(), status, "{what}");
        let body = assert_error(res, status, code).await;
        if status == 415 {
            let message = body["message"].as_str().unwrap_or_default();
            assert!(
                message.contains("image/jpeg")
                    && message.contains("image/png")
                    && message.contains("image/webp"),
                "{what}: the 415 names the accepted types: {message}"
            );
        }
    }
    // Unknown entry, malformed key, viewer: refused before anything is written too.
    let other = format!(
        "/api/v1/t/{}/diary-entries/{}/photos",
        g.t.slug,
        Uuid::new_v4()
    );
    let res = app
        .client
        .post(app.url(&other))
        .header("authorization", g.grower.bearer())
        .header("content-type", "image/jpeg")
        .body(jpeg.clone())
        .send()
        .await
        .expect("sent");
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    let (s, _) = upload(&app, &g, &g.viewer, "image/jpeg", jpeg.clone()).await;
    assert_eq!(s, 403);

    assert_eq!(photo_count(&app, &g.t).await, 0, "no photo row");
    assert_eq!(job_count(&app, &g.t).await, 0, "no job");
    assert_eq!(files(&dir), Vec::<String>::new(), "nothing stored");

    // The entry's photo limit: 20, then 409.
    for _ in 0..20 {
        let (s, body) = upload(&app, &g, &g.grower, "image/png", png.clone()).await;
        assert_eq!(s, 201, "{body}");
    }
    let stored = files(&dir).len();
    let (s, body) = upload(&app, &g, &g.grower, "image/png", png.clone()).await;
    assert_eq!(
        (s, body["error_code"].as_str()),
        (409, Some("STATE_CONFLICT"))
    );
    assert_eq!(photo_count(&app, &g.t).await, 20);
    assert_eq!(files(&dir).len(), stored);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_failed_rendition_is_retried_then_given_up() {
    let dir = storage_dir();
    let app = app_with(&dir, &[("PHOTO_RENDITION_MAX_ATTEMPTS", "2")]).await;
    let g = garden(&app, "photoretry").await;
    let (s, p) = upload(
        &app,
        &g,
        &g.grower,
        "image/jpeg",
        encode(&picture(900, 600), ImageFormat::Jpeg),
    )
    .await;
    assert_eq!(s, 201);
    let key: Uuid = p["key"].as_str().expect("key").parse().expect("uuid");
    let original = dir.join(&files(&dir)[0]);
    let bytes = std::fs::read(&original).expect("read");

    // The original is unreadable: the attempt fails, the job waits for its retry.
    std::fs::remove_file(&original).expect("remove");
    let first = worker::run_once(&app.state).await.expect("queue");
    assert!(
        matches!(&first, Some(Outcome::Failed { photo, retry: true, .. }) if *photo == key),
        "{first:?}"
    );
    let (attempts, error, later): (i32, Option<String>, bool) = sqlx::query_as(
        "SELECT attempts, last_error, run_after > now() FROM platform.photo_rendition_jobs \
         WHERE photo_id = $1",
    )
    .bind(key)
    .fetch_one(app.state.platform_pool())
    .await
    .expect("job");
    assert_eq!(attempts, 1);
    assert!(error.is_some_and(|e| e.contains("original")));
    assert!(later, "backed off");
    assert_eq!(
        worker::run_once(&app.state).await.expect("queue"),
        None,
        "not due yet"
    );

    // Due again with the file back: the retry renders it.
    std::fs::write(&original, &bytes).expect("restore");
    sqlx::query("UPDATE platform.photo_rendition_jobs SET run_after = now() WHERE photo_id = $1")
        .bind(key)
        .execute(app.state.platform_pool())
        .await
        .expect("due");
    let second = worker::run_once(&app.state).await.expect("queue");
    assert_eq!(second, Some(Outcome::Rendered { photo: key }));
    assert_eq!(job_count(&app, &g.t).await, 0);

    // Another photo fails twice: given up, marked unavailable, its job parked with the error.
    let (_, p2) = upload(
        &app,
        &g,
        &g.grower,
        "image/png",
        encode(&picture(50, 50), ImageFormat::Png),
    )
    .await;
    let key2: Uuid = p2["key"].as_str().expect("key").parse().expect("uuid");
    let file2 = files(&dir)
        .into_iter()
        .find(|f| f.contains(&key2.to_string()))
        .expect("file");
    std::fs::remove_file(dir.join(file2)).expect("remove");
    for retry in [true, false] {
        sqlx::query(
            "UPDATE platform.photo_rendition_jobs SET run_after = now() WHERE photo_id = $1",
        )
        .bind(key2)
        .execute(app.state.platform_pool())
        .await
        .expect("due");
        let o = worker::run_once(&app.state).await.expect("queue");
        assert!(
            matches!(&o, Some(Outcome::Failed { retry: r, .. }) if *r == retry),
            "{o:?}"
        );
    }
    let parked: (i32, bool) = sqlx::query_as(
        "SELECT attempts, run_after = 'infinity' FROM platform.photo_rendition_jobs WHERE photo_id = $1",
    )
    .bind(key2)
    .fetch_one(app.state.platform_pool())
    .await
    .expect("job");
    assert_eq!(parked, (2, true));
    let res = app
        .rest_as(&g.viewer)
        .get(&format!("{}/{key2}", photos_path(&g)))
        .await;
    let photo: Value = res.json().await.expect("json");
    assert_eq!(photo["rendition_status"], "unavailable");

    // The tool: the rendered photo is delivered, the other listed as unavailable.
    let api_key = app.api_key(&g.viewer, Some(g.t.slug.as_str())).await;
    let (s, out) = crate::ipm::tool(
        &app,
        &api_key,
        "get_diary_entry_photos",
        json!({"entry_key": g.entry, "size": 512}),
    )
    .await;
    assert_eq!(s, 200, "{out}");
    assert_eq!(out["data"]["photos"].as_array().map(Vec::len), Some(1));
    assert_eq!(
        out["data"]["pending"],
        json!([{"photo_key": key2, "status": "unavailable"}])
    );
    assert_eq!(out["images"].as_array().map(Vec::len), Some(1));
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn two_workers_never_render_the_same_job() {
    let dir = storage_dir();
    let app = app_with(&dir, &[]).await;
    let g = garden(&app, "photorace").await;
    let mut keys = Vec::new();
    for i in 0..6 {
        let (s, p) = upload(
            &app,
            &g,
            &g.grower,
            "image/png",
            encode(&picture(700 + i, 500), ImageFormat::Png),
        )
        .await;
        assert_eq!(s, 201);
        keys.push(
            p["key"]
                .as_str()
                .expect("key")
                .parse::<Uuid>()
                .expect("uuid"),
        );
    }
    let (a, b) = tokio::join!(drain(&app), drain(&app));
    let rendered = |outcomes: &[Outcome]| -> Vec<Uuid> {
        outcomes
            .iter()
            .map(|o| match o {
                Outcome::Rendered { photo } => *photo,
                other => panic!("{other:?}"),
            })
            .collect()
    };
    let (mut a, b) = (rendered(&a), rendered(&b));
    assert!(
        a.iter().all(|k| !b.contains(k)),
        "a job rendered twice: {a:?} {b:?}"
    );
    a.extend(b);
    a.sort();
    keys.sort();
    assert_eq!(a, keys, "every job rendered once");
    assert_eq!(job_count(&app, &g.t).await, 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn background_workers_render_and_the_tool_delivers_image_blocks() {
    let dir = storage_dir();
    let app = app_with(&dir, &[("PHOTO_RENDITION_WORKERS", "2")]).await;
    let g = garden(&app, "photomcp").await;
    let mut keys = Vec::new();
    for (w, h) in [(1600, 1200), (400, 300)] {
        let (s, p) = upload(
            &app,
            &g,
            &g.grower,
            "image/jpeg",
            encode(&picture(w, h), ImageFormat::Jpeg),
        )
        .await;
        assert_eq!(s, 201);
        keys.push(p["key"].as_str().expect("key").to_owned());
    }
    // The workers started with the server pick the jobs up on their own.
    let mut ready = false;
    for _ in 0..150 {
        let list: Value = app
            .rest_as(&g.viewer)
            .get(&photos_path(&g))
            .await
            .json()
            .await
            .expect("json");
        if list["items"]
            .as_array()
            .is_some_and(|i| i.iter().all(|p| p["rendition_status"] == "ready"))
        {
            ready = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(ready, "the background workers rendered both photos");

    // JSON-RPC: one text block, then one image block per photo in the order of `photos`.
    let api_key = app.api_key(&g.viewer, Some(g.t.slug.as_str())).await;
    let mut rpc = crate::mcp_tools::Rpc::open(&app, &api_key).await;
    let result = rpc
        .call("get_diary_entry_photos", json!({"entry_key": g.entry}))
        .await;
    assert_eq!(result["isError"], false, "{result}");
    let content = result["content"].as_array().expect("content");
    assert_eq!(content.len(), 3);
    assert_eq!(content[0]["type"], "text");
    let data = &result["structuredContent"]["data"];
    assert_eq!(data["size"], 1280);
    assert_eq!(data["pending"], json!([]));
    let photos = data["photos"].as_array().expect("photos");
    assert_eq!(photos.len(), 2);
    for (i, expected) in [(1280, 960), (400, 300)].into_iter().enumerate() {
        assert_eq!(photos[i]["photo_key"], keys[i].as_str());
        let block = &content[i + 1];
        assert_eq!(block["type"], "image");
        assert_eq!(block["mimeType"], "image/webp");
        use base64::Engine;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(block["data"].as_str().expect("data"))
            .expect("base64");
        assert_eq!(webp_dimensions(&bytes), expected);
        assert_no_metadata(&bytes);
        assert_eq!(
            photos[i]["delivered_bytes"].as_u64(),
            Some(bytes.len() as u64)
        );
    }
    // 512 on request.
    let result = rpc
        .call(
            "get_diary_entry_photos",
            json!({"entry_key": g.entry, "size": 512}),
        )
        .await;
    use base64::Engine;
    let small = base64::engine::general_purpose::STANDARD
        .decode(result["content"][1]["data"].as_str().expect("data"))
        .expect("base64");
    assert_eq!(webp_dimensions(&small), (512, 384));
    // A size other than 512 and 1280 is refused; a pending photo is listed, not dropped.
    let result = rpc
        .call(
            "get_diary_entry_photos",
            json!({"entry_key": g.entry, "size": 800}),
        )
        .await;
    assert_eq!(result["isError"], true);
    assert_eq!(
        result["structuredContent"]["error_code"],
        "validation.error"
    );
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "UPDATE {}.diary_photos SET rendition_status = 'pending', rendition_512_key = NULL, \
         rendition_512_bytes = NULL, rendition_1280_key = NULL, rendition_1280_bytes = NULL \
         WHERE id = $1",
        g.t.schema_name.quoted()
    )))
    .bind(keys[0].parse::<Uuid>().expect("uuid"))
    .execute(app.state.platform_pool())
    .await
    .expect("pending again");
    let result = rpc
        .call("get_diary_entry_photos", json!({"entry_key": g.entry}))
        .await;
    assert_eq!(result["isError"], false);
    let data = &result["structuredContent"]["data"];
    assert_eq!(
        data["pending"],
        json!([{"photo_key": keys[0], "status": "thumbnail_pending"}])
    );
    assert_eq!(data["photos"][0]["photo_key"], keys[1].as_str());
    assert_eq!(result["content"].as_array().map(Vec::len), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn over_the_payload_cap_the_tool_names_photos_and_a_smaller_size() {
    let dir = storage_dir();
    let app = app_with(&dir, &[("MCP_MAX_IMAGE_PAYLOAD_MB", "1")]).await;
    let g = garden(&app, "photocap").await;
    let mut keys = Vec::new();
    for seed in 1..=4 {
        let (s, p) = upload(
            &app,
            &g,
            &g.grower,
            "image/png",
            encode(&noise(1280, 960, seed), ImageFormat::Png),
        )
        .await;
        assert_eq!(s, 201);
        keys.push(p["key"].as_str().expect("key").to_owned());
    }
    drain(&app).await;
    let sizes: Vec<(i64, i64)> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT rendition_512_bytes, rendition_1280_bytes FROM {}.diary_photos ORDER BY position",
        g.t.schema_name.quoted()
    )))
    .fetch_all(app.state.platform_pool())
    .await
    .expect("sizes");
    let b64 = |n: i64| 4 * ((n + 2) / 3);
    let total_1280: i64 = sizes.iter().map(|s| b64(s.1)).sum();
    let total_512: i64 = sizes.iter().map(|s| b64(s.0)).sum();
    assert!(
        total_1280 > 1024 * 1024 && total_512 <= 1024 * 1024,
        "fixture sizes {sizes:?}"
    );

    let api_key = app.api_key(&g.viewer, Some(g.t.slug.as_str())).await;
    let (s, err) = crate::ipm::tool(
        &app,
        &api_key,
        "get_diary_entry_photos",
        json!({"entry_key": g.entry}),
    )
    .await;
    assert_eq!(
        (s, err["error_code"].as_str()),
        (413, Some("payload.too_large")),
        "{err}"
    );
    let message = err["message"].as_str().unwrap_or_default();
    assert!(message.contains("size 512"), "{message}");
    // Through JSON-RPC: an error result carrying the affected photos and the size that fits.
    let mut rpc = crate::mcp_tools::Rpc::open(&app, &api_key).await;
    let result = rpc
        .call("get_diary_entry_photos", json!({"entry_key": g.entry}))
        .await;
    assert_eq!(result["isError"], true);
    let env = &result["structuredContent"];
    assert_eq!(env["error_code"], "payload.too_large");
    assert_eq!(env["details"]["smaller_size_that_fits"], 512);
    let affected: Vec<&str> = env["details"]["affected_photos"]
        .as_array()
        .expect("affected")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(!affected.is_empty() && affected.iter().all(|k| keys.iter().any(|x| x == k)));
    assert_eq!(
        result["content"].as_array().map(Vec::len),
        Some(1),
        "no image on an error"
    );
    // The smaller size fits: every photo, in order.
    let result = rpc
        .call(
            "get_diary_entry_photos",
            json!({"entry_key": g.entry, "size": 512}),
        )
        .await;
    assert_eq!(result["isError"], false);
    assert_eq!(result["content"].as_array().map(Vec::len), Some(5));
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn another_gardens_photos_are_not_found() {
    let dir = storage_dir();
    let app = app_with(&dir, &[]).await;
    let a = garden(&app, "photoiso-a").await;
    let b = garden(&app, "photoiso-b").await;
    let (s, p) = upload(
        &app,
        &a,
        &a.grower,
        "image/png",
        encode(&picture(100, 80), ImageFormat::Png),
    )
    .await;
    assert_eq!(s, 201);
    drain(&app).await;
    let key = p["key"].as_str().expect("key");
    let before = files(&dir);

    // B's members, with A's keys under B's slug or A's slug: 404 everywhere.
    let a_entry_under_b = format!("/api/v1/t/{}/diary-entries/{}/photos", b.t.slug, a.entry);
    for path in [
        a_entry_under_b.clone(),
        format!("{a_entry_under_b}/{key}"),
        format!("/api/v1/t/{}/photos/{key}/renditions/512", b.t.slug),
        format!("{}/{key}", photos_path(&a)),
        format!("/api/v1/t/{}/photos/{key}/renditions/512", a.t.slug),
    ] {
        let res = app.rest_as(&b.grower).get(&path).await;
        assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    }
    let res = app
        .rest_auth(Some(&b.grower.bearer()))
        .delete(&format!("{a_entry_under_b}/{key}"))
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    let res = app
        .client
        .post(app.url(&a_entry_under_b))
        .header("authorization", b.grower.bearer())
        .header("content-type", "image/png")
        .body(encode(&picture(10, 10), ImageFormat::Png))
        .send()
        .await
        .expect("sent");
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    assert_eq!(photo_count(&app, &a.t).await, 1);
    assert_eq!(photo_count(&app, &b.t).await, 0);
    assert_eq!(files(&dir), before);

    // The tool with B's key and A's entry: not_found.
    let api_key = app.api_key(&b.viewer, Some(b.t.slug.as_str())).await;
    let (s, out) = crate::ipm::tool(
        &app,
        &api_key,
        "get_diary_entry_photos",
        json!({"entry_key": a.entry}),
    )
    .await;
    assert_eq!(
        (s, out["error_code"].as_str()),
        (404, Some("not_found")),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
