//! The HTTP faces of `kultiva tenant export` / `import`: `GET /t/{slug}/export` (admins only,
//! member e-mails only when asked, rate limited, audited, the very file the import code
//! reads back), and `POST /tenants/import` (a new garden for the caller from such a file; a
//! slug in use, a damaged or oversized file refused with nothing left behind).

use std::path::Path;
use std::time::{Duration, Instant};

use kultiva::auth::Role;
use kultiva::garden::transfer::import;
use kultiva::tenancy::{TenantRecord, TenantSlug};
use serde_json::Value;
use uuid::Uuid;

use crate::support::{
    TestApp, TestUser, assert_error, assert_rate_limited, header, sibling_database, unique_slug,
};
use crate::transfer::{
    assert_same_rows, digests, fill, photos, pool_of, read_lines, temp_file, write_lines,
};

async fn export(
    app: &TestApp,
    slug: &str,
    query: &str,
    who: Option<&TestUser>,
) -> reqwest::Response {
    let path = format!("/api/v1/t/{slug}/export{query}");
    match who {
        Some(user) => {
            app.get_with(&path, &[("authorization", &user.bearer())])
                .await
        }
        None => app.get(&path).await,
    }
}

/// Saves an answer's body as a file.
async fn save(res: reqwest::Response, label: &str) -> std::path::PathBuf {
    let file = temp_file(label);
    std::fs::write(&file, res.bytes().await.expect("body")).expect("write");
    file
}

/// The `members` of a file's header.
fn members(file: &Path) -> Vec<Value> {
    let lines = read_lines(file);
    let header: Value = serde_json::from_slice(&lines[0]).expect("header");
    header["members"].as_array().expect("members").clone()
}

/// Waits (bounded) for `n` audit rows of the action in the garden; returns (account, status).
async fn audit_rows(app: &TestApp, action: &str, tenant: Uuid, n: usize) -> Vec<(Uuid, String)> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let rows: Vec<(Uuid, String)> = sqlx::query_as(
            "SELECT account_id, status FROM platform.mcp_audit_log \
             WHERE tool_name = $1 AND tenant_id = $2 ORDER BY id",
        )
        .bind(action)
        .bind(tenant)
        .fetch_all(app.state.platform_pool())
        .await
        .expect("audit rows");
        if rows.len() >= n || Instant::now() > deadline {
            return rows;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn an_admin_downloads_the_cli_file_and_the_import_code_reads_it_back() {
    let dir = crate::photos::storage_dir();
    let app = crate::photos::app_with(&dir, &[]).await;
    let source = app.tenant("hexp").await;
    fill(&app, &source, 12).await;
    photos(&app, &source).await;
    let admin = app.member(&source, Role::Admin).await;
    app.member(&source, Role::Viewer).await;
    let before = digests(&pool_of(&app, &source), &source).await;
    let slug = source.slug.as_str();

    let res = export(&app, slug, "", Some(&admin)).await;
    assert_eq!(res.status().as_u16(), 200);
    assert_eq!(
        header(&res, "content-type").as_deref(),
        Some("application/gzip")
    );
    let today = time::OffsetDateTime::now_utc().date();
    assert_eq!(
        header(&res, "content-disposition"),
        Some(format!(
            "attachment; filename=\"kultiva-{slug}-{today}.export.gz\""
        ))
    );
    let length: u64 = header(&res, "content-length")
        .and_then(|v| v.parse().ok())
        .expect("content-length");
    let file = save(res, "http-export").await;
    assert_eq!(std::fs::metadata(&file).expect("file").len(), length);

    // No member's address unless asked for.
    let listed = members(&file);
    assert_eq!(listed.len(), 2, "{listed:?}");
    assert!(listed.iter().all(|m| m["email"].is_null()), "{listed:?}");

    // The import code of the CLI reads it back into an equal garden.
    let copy_slug = TenantSlug::parse(&unique_slug("hcopy")).expect("slug");
    let imported = import::import_tenant(&app.state, &file, &copy_slug, Default::default())
        .await
        .expect("imported");
    assert!(imported.files >= 2, "photo files travel too: {imported:?}");
    let copy: TenantRecord = imported.tenant;
    let after = digests(&pool_of(&app, &copy), &copy).await;
    assert_same_rows(&before, &after);

    // Asked for: the addresses are in the file.
    let res = export(&app, slug, "?include_member_emails=true", Some(&admin)).await;
    assert_eq!(res.status().as_u16(), 200);
    let with = save(res, "http-export-emails").await;
    let listed = members(&with);
    assert!(
        listed.iter().any(|m| m["email"] == admin.email.as_str()),
        "{listed:?}"
    );
    assert!(listed.iter().all(|m| m["email"].is_string()), "{listed:?}");

    let res = export(&app, slug, "?include_member_emails=yes", Some(&admin)).await;
    assert_error(res, 422, "VALIDATION_ERROR").await;

    // Who exported which garden, once per export.
    let rows = audit_rows(&app, "http.garden_export", source.id, 2).await;
    assert_eq!(
        rows,
        vec![(admin.id(), "ok".to_owned()), (admin.id(), "ok".to_owned())]
    );
    // Nothing of the exports is left on disk.
    let left: Vec<_> = std::fs::read_dir(dir.join(".transfers"))
        .expect("transfer folder")
        .collect();
    assert!(left.is_empty(), "{left:?}");
    for f in [&file, &with] {
        let _ = std::fs::remove_file(f);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn only_the_gardens_admins_export_it() {
    let dir = crate::photos::storage_dir();
    let app = crate::photos::app_with(&dir, &[]).await;
    let garden = app.tenant("hown").await;
    let other = app.tenant("hoth").await;
    let viewer = app.member(&garden, Role::Viewer).await;
    let grower = app.member(&garden, Role::Grower).await;
    let stranger = app.member(&other, Role::Admin).await;
    let slug = garden.slug.as_str();

    assert_error(export(&app, slug, "", None).await, 401, "UNAUTHORIZED").await;
    assert_error(
        export(&app, slug, "", Some(&viewer)).await,
        403,
        "FORBIDDEN",
    )
    .await;
    assert_error(
        export(&app, slug, "", Some(&grower)).await,
        403,
        "FORBIDDEN",
    )
    .await;
    assert_error(
        export(&app, slug, "", Some(&stranger)).await,
        404,
        "ENTITY_NOT_FOUND",
    )
    .await;
    let unknown = unique_slug("nosuch");
    assert_error(
        export(&app, &unknown, "", Some(&stranger)).await,
        404,
        "ENTITY_NOT_FOUND",
    )
    .await;
    // None of them got anything, nor an audit row.
    assert!(
        audit_rows(&app, "http.garden_export", garden.id, 0)
            .await
            .is_empty()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn exports_are_limited_per_account_and_hour() {
    let dir = crate::photos::storage_dir();
    let app =
        crate::photos::app_with(&dir, &[("GARDEN_TRANSFERS_PER_ACCOUNT_PER_HOUR", "2")]).await;
    let garden = app.tenant("hlim").await;
    let admin = app.member(&garden, Role::Admin).await;
    let slug = garden.slug.as_str();
    for _ in 0..2 {
        assert_eq!(
            export(&app, slug, "", Some(&admin)).await.status().as_u16(),
            200
        );
    }
    let (seconds, text) = assert_rate_limited(export(&app, slug, "", Some(&admin)).await).await;
    assert!(seconds <= 3600, "{seconds}");
    assert!(
        text.contains("garden exports and imports per hour"),
        "{text}"
    );
    // Another admin of the garden has a budget of its own.
    let second = app.member(&garden, Role::Admin).await;
    assert_eq!(
        export(&app, slug, "", Some(&second))
            .await
            .status()
            .as_u16(),
        200
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `POST /tenants/import?slug=…` with the file's bytes.
async fn import_http(
    app: &TestApp,
    slug: &str,
    content_type: &str,
    body: Vec<u8>,
    who: &TestUser,
) -> reqwest::Response {
    app.client
        .post(app.url(&format!("/api/v1/tenants/import?slug={slug}")))
        .header("authorization", who.bearer())
        .header("content-type", content_type)
        .body(body)
        .send()
        .await
        .expect("request sent")
}

async fn export_bytes(app: &TestApp, t: &TenantRecord, admin: &TestUser) -> Vec<u8> {
    let res = export(app, t.slug.as_str(), "", Some(admin)).await;
    assert_eq!(res.status().as_u16(), 200, "export");
    res.bytes().await.expect("body").to_vec()
}

#[tokio::test]
async fn a_garden_comes_back_over_http_for_the_caller_and_a_slug_in_use_is_refused() {
    let dir = crate::photos::storage_dir();
    let app = crate::photos::app_with(&dir, &[]).await;
    let source = app.tenant("hround").await;
    fill(&app, &source, 9).await;
    photos(&app, &source).await;
    let admin = app.member(&source, Role::Admin).await;
    let before = digests(&pool_of(&app, &source), &source).await;
    let file = export_bytes(&app, &source, &admin).await;

    let importer = app.user("importer").await;
    let slug = unique_slug("hback");
    let res = import_http(&app, &slug, "application/gzip", file.clone(), &importer).await;
    assert_eq!(res.status().as_u16(), 201);
    let body: Value = res.json().await.expect("tenant");
    assert_eq!(body["slug"], slug.as_str(), "{body}");
    let copy = kultiva::tenancy::registry::find_by_slug(
        app.state.platform_pool(),
        &TenantSlug::parse(&slug).expect("slug"),
    )
    .await
    .expect("registry")
    .expect("the new garden");
    assert_ne!(copy.id, source.id);
    let after = digests(&pool_of(&app, &copy), &copy).await;
    assert_same_rows(&before, &after);
    // The caller is its only member, an admin; it serves to them.
    let res = app
        .get_with(
            &format!("/api/v1/tenants/{slug}/members"),
            &[("authorization", &importer.bearer())],
        )
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let members: Value = res.json().await.expect("members");
    let members = members.as_array().expect("array");
    assert_eq!(members.len(), 1, "{members:?}");
    assert_eq!(members[0]["role"], "admin");
    let res = app
        .get_with(
            &format!("/api/v1/t/{slug}/sites/"),
            &[("authorization", &importer.bearer())],
        )
        .await;
    assert_eq!(res.status().as_u16(), 200);

    // The slug is in use now: 409, and nothing else is made.
    let gardens = |u: &TestUser| {
        let id = u.id();
        let pool = app.state.platform_pool().clone();
        async move {
            sqlx::query_scalar::<_, i64>(
                "SELECT count(*) FROM platform.tenants WHERE created_by = $1",
            )
            .bind(id)
            .fetch_one(&pool)
            .await
            .expect("count")
        }
    };
    let made = gardens(&importer).await;
    let res = import_http(&app, &slug, "application/gzip", file, &importer).await;
    assert_error(res, 409, "DUPLICATE_ENTRY").await;
    assert_eq!(gardens(&importer).await, made);

    let rows = audit_rows(&app, "http.garden_import", copy.id, 1).await;
    assert_eq!(rows, vec![(importer.id(), "ok".to_owned())]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_damaged_oversized_or_mistyped_import_leaves_nothing_behind() {
    // A registry of its own: the test counts schemas and tenants.
    let url = sibling_database("transfer_http").await;
    let dir = crate::photos::storage_dir();
    let app = crate::photos::app_with(
        &dir,
        &[("DATABASE_URL", &url), ("GARDEN_IMPORT_MAX_MB", "1")],
    )
    .await;
    let source = app.tenant("hdmg").await;
    fill(&app, &source, 5).await;
    photos(&app, &source).await;
    let admin = app.member(&source, Role::Admin).await;
    let file = export_bytes(&app, &source, &admin).await;
    let importer = app.user("dmgimp").await;

    let saved = temp_file("http-damaged");
    std::fs::write(&saved, &file).expect("write");
    let lines = read_lines(&saved);
    write_lines(&saved, &lines[..lines.len() * 2 / 3]);
    let truncated = std::fs::read(&saved).expect("read");

    let schemas = app.schema_count().await;
    let tenants = app.tenant_count().await;
    let folders = || {
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .expect("storage")
            .map(|e| e.expect("entry").file_name().into_string().expect("name"))
            .filter(|n| !n.starts_with('.'))
            .collect();
        names.sort();
        names
    };
    let kept = folders();
    let nothing_left = || async {
        assert_eq!(app.schema_count().await, schemas, "no schema left");
        assert_eq!(app.tenant_count().await, tenants, "no registry row left");
        assert_eq!(folders(), kept, "no photo files left");
        let uploads: Vec<_> = std::fs::read_dir(dir.join(".transfers"))
            .expect("transfer folder")
            .collect();
        assert!(uploads.is_empty(), "no upload left: {uploads:?}");
    };

    let slug = unique_slug("hdmg");
    let res = import_http(&app, &slug, "application/gzip", truncated, &importer).await;
    let body = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert!(
        body["details"][0]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("ends early")),
        "{body}"
    );
    nothing_left().await;

    let res = import_http(&app, &slug, "application/json", file.clone(), &importer).await;
    assert_error(res, 415, "UNSUPPORTED_MEDIA_TYPE").await;
    let res = import_http(
        &app,
        "Not A Slug",
        "application/gzip",
        file.clone(),
        &importer,
    )
    .await;
    assert_error(res, 422, "VALIDATION_ERROR").await;
    let big = vec![0u8; 1024 * 1024 + 1];
    let res = import_http(&app, &slug, "application/gzip", big, &importer).await;
    assert_error(res, 413, "PAYLOAD_TOO_LARGE").await;
    let res = app
        .post_raw(
            &format!("/api/v1/tenants/import?slug={slug}"),
            "application/gzip",
            file,
        )
        .await;
    assert_error(res, 401, "UNAUTHORIZED").await;
    // Only POST is the import: other methods still reach a garden of that slug (none here).
    let res = app
        .get_with(
            "/api/v1/tenants/import",
            &[("authorization", &importer.bearer())],
        )
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    nothing_left().await;
    let _ = std::fs::remove_file(&saved);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn an_import_counts_against_the_garden_cap_and_a_body_without_length_is_cut_at_the_limit() {
    let dir = crate::photos::storage_dir();
    let app = crate::photos::app_with(
        &dir,
        &[
            ("MAX_GARDENS_PER_ACCOUNT", "1"),
            ("GARDEN_IMPORT_MAX_MB", "1"),
        ],
    )
    .await;
    let source = app.tenant("hcap").await;
    let admin = app.member(&source, Role::Admin).await;
    let file = export_bytes(&app, &source, &admin).await;
    // The importer's personal garden is its one garden.
    let importer = app.user("capped").await;
    let slug = unique_slug("hcap");
    let res = import_http(&app, &slug, "application/gzip", file, &importer).await;
    let body = assert_error(res, 409, "STATE_CONFLICT").await;
    assert!(
        body["message"]
            .as_str()
            .is_some_and(|m| m.contains("garden limit")),
        "{body}"
    );
    assert!(
        kultiva::tenancy::registry::find_by_slug(
            app.state.platform_pool(),
            &TenantSlug::parse(&slug).expect("slug"),
        )
        .await
        .expect("registry")
        .is_none()
    );

    // Chunked, no Content-Length: counted as it streams in, refused past the limit.
    let roomy = app.user("roomy").await;
    sqlx::query("UPDATE platform.tenants SET created_by = NULL WHERE created_by = $1")
        .bind(roomy.id())
        .execute(app.state.platform_pool())
        .await
        .expect("no garden of its own");
    let chunks = (0..20).map(|_| Ok::<_, std::io::Error>(vec![0u8; 128 * 1024]));
    let res = app
        .client
        .post(app.url(&format!("/api/v1/tenants/import?slug={slug}")))
        .header("authorization", roomy.bearer())
        .header("content-type", "application/gzip")
        .body(reqwest::Body::wrap_stream(futures_util::stream::iter(
            chunks,
        )))
        .send()
        .await
        .expect("request sent");
    assert_error(res, 413, "PAYLOAD_TOO_LARGE").await;
    let uploads: Vec<_> = std::fs::read_dir(dir.join(".transfers"))
        .expect("transfer folder")
        .collect();
    assert!(uploads.is_empty(), "no upload left: {uploads:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Gzip of these lines, as `POST /tenants/import` receives them.
fn gzip(lines: &[Vec<u8>]) -> Vec<u8> {
    let file = temp_file("hostile");
    write_lines(&file, lines);
    let bytes = std::fs::read(&file).expect("read");
    let _ = std::fs::remove_file(&file);
    bytes
}

/// A `file` section and its base64 line, for a photo file of `bytes` bytes.
fn photo_file(path: &str, declared: usize, bytes: &[u8]) -> [Vec<u8>; 2] {
    use base64::Engine;
    let section = serde_json::json!({"file": {"path": path, "bytes": declared}});
    let mut head = serde_json::to_vec(&section).expect("json");
    head.push(b'\n');
    let mut body = base64::engine::general_purpose::STANDARD
        .encode(bytes)
        .into_bytes();
    body.push(b'\n');
    [head, body]
}

/// Where the file's photo files start (its first `file` section), its trailer excluded.
fn before_files(lines: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let first = lines
        .iter()
        .position(|l| l.starts_with(b"{\"file\""))
        .expect("a photo file in the export");
    lines[..first].to_vec()
}

/// Every name in the storage folder but the transfer folder.
fn folders(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("storage")
        .map(|e| e.expect("entry").file_name().into_string().expect("name"))
        .filter(|n| !n.starts_with('.'))
        .collect();
    names.sort();
    names
}

/// The refusal's text (message and details) names no server path.
fn names_no_path(body: &Value, dir: &Path) {
    let text = body.to_string();
    assert!(!text.contains(&*dir.to_string_lossy()), "{text}");
    assert!(!text.contains(".transfers"), "{text}");
    assert!(!text.contains(".gz"), "{text}");
}

#[tokio::test]
async fn hostile_import_files_are_refused_early_and_leave_nothing_behind() {
    // A registry of its own: the test counts schemas and tenants. The file may unpack to
    // 8 MiB (4 x GARDEN_IMPORT_MAX_MB), a line be 4 MiB, a photo file 1 MiB.
    let url = sibling_database("transfer_hostile").await;
    let dir = crate::photos::storage_dir();
    let app = crate::photos::app_with(
        &dir,
        &[
            ("DATABASE_URL", &url),
            ("GARDEN_IMPORT_MAX_MB", "2"),
            ("PHOTO_MAX_UPLOAD_MB", "1"),
            ("GARDEN_TRANSFERS_PER_ACCOUNT_PER_HOUR", "100"),
        ],
    )
    .await;
    let source = app.tenant("hhost").await;
    fill(&app, &source, 3).await;
    photos(&app, &source).await;
    let admin = app.member(&source, Role::Admin).await;
    let saved = temp_file("hostile-export");
    std::fs::write(&saved, export_bytes(&app, &source, &admin).await).expect("write");
    let lines = read_lines(&saved);
    let _ = std::fs::remove_file(&saved);
    let importer = app.user("hostimp").await;

    let schemas = app.schema_count().await;
    let tenants = app.tenant_count().await;
    let kept = folders(&dir);
    let nothing_left = || async {
        assert_eq!(app.schema_count().await, schemas, "no schema left");
        assert_eq!(app.tenant_count().await, tenants, "no registry row left");
        assert_eq!(folders(&dir), kept, "no photo files left");
        let uploads: Vec<_> = std::fs::read_dir(dir.join(".transfers"))
            .expect("transfer folder")
            .collect();
        assert!(uploads.is_empty(), "no upload left: {uploads:?}");
    };
    let slug = unique_slug("hhost");
    let send = |body: Vec<u8>| import_http(&app, &slug, "application/gzip", body, &importer);

    // A line of 6 MiB without a newline, in a few KB of gzip: as a first line, and as a row.
    let huge = vec![b'x'; 6 * 1024 * 1024];
    for file in [
        gzip(std::slice::from_ref(&huge)),
        gzip(&[lines[0].clone(), lines[1].clone(), huge.clone()]),
    ] {
        assert!(file.len() < 64 * 1024, "{} bytes of gzip", file.len());
        let body = assert_error(send(file).await, 413, "PAYLOAD_TOO_LARGE").await;
        let message = body["message"].as_str().unwrap_or_default();
        assert!(message.contains("longer than 4 MiB"), "{body}");
        names_no_path(&body, &dir);
        nothing_left().await;
    }

    // A photo file grown to 2 MB of zeros, its section saying so: past PHOTO_MAX_UPLOAD_MB.
    let photo = Uuid::new_v4();
    let path = format!("{photo}/original.png");
    let zeros = vec![0u8; 2 * 1024 * 1024];
    let mut grown = before_files(&lines);
    grown.extend(photo_file(&path, zeros.len(), &zeros));
    let body = assert_error(send(gzip(&grown)).await, 413, "PAYLOAD_TOO_LARGE").await;
    assert!(
        body["message"]
            .as_str()
            .is_some_and(|m| m.contains("PHOTO_MAX_UPLOAD_MB")),
        "{body}"
    );
    names_no_path(&body, &dir);
    nothing_left().await;
    // The same file with its section left as it was: refused once past what it says.
    let mut grown = before_files(&lines);
    grown.extend(photo_file(&path, 1000, &zeros));
    let body = assert_error(send(gzip(&grown)).await, 422, "VALIDATION_ERROR").await;
    assert!(
        body["details"][0]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("longer than its section says")),
        "{body}"
    );
    names_no_path(&body, &dir);
    nothing_left().await;

    // A decompression bomb: seven photo files of 1,000,000 zeros each (within every per-file
    // bound) unpack to 9.3 MB, past the 8 MiB the file may unpack to; the first ones were
    // already written, and go again.
    let zeros = vec![0u8; 1_000_000];
    let mut bomb = before_files(&lines);
    for _ in 0..7 {
        bomb.extend(photo_file(
            &format!("{}/original.png", Uuid::new_v4()),
            zeros.len(),
            &zeros,
        ));
    }
    let bomb = gzip(&bomb);
    assert!(bomb.len() < 256 * 1024, "{} bytes of gzip", bomb.len());
    let body = assert_error(send(bomb).await, 413, "PAYLOAD_TOO_LARGE").await;
    assert!(
        body["message"]
            .as_str()
            .is_some_and(|m| m.contains("unpacks to more than 8 MiB")),
        "{body}"
    );
    names_no_path(&body, &dir);
    nothing_left().await;

    // A section line of 5 MiB (a table name nobody has): past the line cap too.
    let mut long_section = b"{\"table\":{\"name\":\"".to_vec();
    long_section.extend(vec![b'a'; 5 * 1024 * 1024]);
    long_section.extend(b"\",\"columns\":[\"id\"]}}\n");
    let body = assert_error(
        send(gzip(&[lines[0].clone(), long_section])).await,
        413,
        "PAYLOAD_TOO_LARGE",
    )
    .await;
    names_no_path(&body, &dir);
    nothing_left().await;

    // The export itself still imports.
    let res = send(gzip(&lines)).await;
    assert_eq!(res.status().as_u16(), 201);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn imported_photos_count_against_the_quota_with_the_sizes_of_their_files() {
    let url = sibling_database("transfer_quota").await;
    let dir = crate::photos::storage_dir();
    let app = crate::photos::app_with(
        &dir,
        &[
            ("DATABASE_URL", &url),
            ("PHOTO_MAX_UPLOAD_MB", "1"),
            ("PHOTO_QUOTA_MB_PER_GARDEN", "3"),
            ("GARDEN_TRANSFERS_PER_ACCOUNT_PER_HOUR", "100"),
        ],
    )
    .await;
    let source = app.tenant("hquota").await;
    fill(&app, &source, 3).await;
    photos(&app, &source).await;
    let admin = app.member(&source, Role::Admin).await;
    let saved = temp_file("quota-export");
    std::fs::write(&saved, export_bytes(&app, &source, &admin).await).expect("write");
    let lines = read_lines(&saved);
    let _ = std::fs::remove_file(&saved);
    let importer = app.user("quotaimp").await;
    let schemas = app.schema_count().await;
    let tenants = app.tenant_count().await;
    let kept = folders(&dir);

    // Four photo files of 1,000,000 bytes: each within PHOTO_MAX_UPLOAD_MB, together past the
    // 3 MiB quota. Refused at the fourth, before it is read; the three written go again.
    let zeros = vec![0u8; 1_000_000];
    let mut over = before_files(&lines);
    for _ in 0..4 {
        over.extend(photo_file(
            &format!("{}/original.png", Uuid::new_v4()),
            zeros.len(),
            &zeros,
        ));
    }
    let slug = unique_slug("hquota");
    let res = import_http(&app, &slug, "application/gzip", gzip(&over), &importer).await;
    let body = assert_error(res, 413, "STORAGE_QUOTA_EXCEEDED").await;
    assert!(
        body["message"]
            .as_str()
            .is_some_and(|m| m.contains("PHOTO_QUOTA_MB_PER_GARDEN")),
        "{body}"
    );
    names_no_path(&body, &dir);
    assert_eq!(app.schema_count().await, schemas, "no schema left");
    assert_eq!(app.tenant_count().await, tenants, "no registry row left");
    assert_eq!(folders(&dir), kept, "no photo files left");

    // An original grown to 600,000 bytes, its section saying so and its row not: the import
    // is taken, and the garden's storage counts the bytes written, not the row's figure.
    let mut grown = lines.clone();
    let at = grown
        .iter()
        .position(|l| l.starts_with(b"{\"file\"") && l.windows(8).any(|w| w == b"original"))
        .expect("an original in the export");
    let section: Value = serde_json::from_slice(&grown[at]).expect("section");
    let path = section["file"]["path"].as_str().expect("path").to_owned();
    let old: u64 = section["file"]["bytes"].as_u64().expect("bytes");
    let big = vec![0u8; 600_000];
    let [head, body] = photo_file(&path, big.len(), &big);
    grown[at] = head;
    grown[at + 1] = body;
    let on_disk: u64 = grown
        .iter()
        .filter(|l| l.starts_with(b"{\"file\""))
        .map(|l| {
            let v: Value = serde_json::from_slice(l).expect("section");
            v["file"]["bytes"].as_u64().expect("bytes")
        })
        .sum();
    let res = import_http(&app, &slug, "application/gzip", gzip(&grown), &importer).await;
    assert_eq!(res.status().as_u16(), 201);
    let res = app
        .get_with(
            &format!("/api/v1/t/{slug}/storage"),
            &[("authorization", &importer.bearer())],
        )
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let usage: Value = res.json().await.expect("usage");
    assert_eq!(usage["bytes_used"], serde_json::json!(on_disk), "{usage}");
    // The photo's row says what was written, not what the file's row said.
    let copy = kultiva::tenancy::registry::find_by_slug(
        app.state.platform_pool(),
        &TenantSlug::parse(&slug).expect("slug"),
    )
    .await
    .expect("registry")
    .expect("the new garden");
    let photo: Uuid = path.split('/').next().expect("id").parse().expect("uuid");
    let recorded: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "SELECT byte_size FROM {}.diary_photos WHERE id = $1",
        copy.schema_name.quoted()
    )))
    .bind(photo)
    .fetch_one(&pool_of(&app, &copy))
    .await
    .expect("photo row");
    assert_eq!(recorded, 600_000);
    assert_ne!(old, 600_000);
    let _ = std::fs::remove_dir_all(&dir);
}
