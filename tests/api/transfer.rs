//! `kultiva tenant export` / `import`: a garden to a file and back under a new slug, every row
//! and photo file equal, the copy served over HTTP, the original untouched; a slug in use and
//! a damaged file refused with nothing left behind; the commands as an operator runs them.
//! (Moves between servers: `transfer_moves.rs`.)

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use image::ImageFormat;
use kultiva::garden::transfer::{export, import};
use kultiva::tenancy::migrate::latest_tenant_version;
use kultiva::tenancy::registry::{self, TenantKind, TenantStatus};
use kultiva::tenancy::{TenantRecord, TenantSlug};
use serde_json::Value;
use uuid::Uuid;

use crate::support::{TestApp, second_server_url, sibling_database, unique_slug};

/// Rows of every kind of value a garden stores, on the garden's own server: text with tabs,
/// newlines, backslashes, quotes and emoji, NULLs, jsonb, numeric, double precision, dates,
/// a self-referencing tree and a pair of rows pointing at each other through a link table.
pub(crate) async fn fill(app: &TestApp, t: &TenantRecord, plants: u32) {
    let s = t.schema_name.quoted();
    let pool = app
        .state
        .placements()
        .get(&t.placement)
        .expect("placement")
        .pool()
        .clone();
    let sql = format!(
        r#"
        INSERT INTO {s}.sites (id, name, kind, description) VALUES
          ('00000000-0000-7000-8000-000000000001', E'Bed\t"one" \\ é 🌱\nsecond line', 'garden', NULL),
          ('00000000-0000-7000-8000-000000000002', 'Balcony', 'balcony', E'back\\slash, \\N not null');
        INSERT INTO {s}.locations (id, site_id, name, parent_id, depth, kind, area_sqm) VALUES
          ('00000000-0000-7000-8000-000000000011', '00000000-0000-7000-8000-000000000001', 'Bed', NULL, 0, 'bed', 0.1::float8 + 0.2::float8),
          ('00000000-0000-7000-8000-000000000012', '00000000-0000-7000-8000-000000000001', 'Box', '00000000-0000-7000-8000-000000000011', 1, 'container', 1e-300);
        INSERT INTO {s}.substrate_batches (id, substrate_key, label, volume_liters, ph_current) VALUES
          ('00000000-0000-7000-8000-000000000031', 'tenant:x', 'Batch 1', 12.34, 6.5);
        INSERT INTO {s}.slots (id, location_id, code, substrate_batch_id) VALUES
          ('00000000-0000-7000-8000-000000000021', '00000000-0000-7000-8000-000000000012', 'BOX1_A1', '00000000-0000-7000-8000-000000000031'),
          ('00000000-0000-7000-8000-000000000022', '00000000-0000-7000-8000-000000000012', 'BOX1_A2', NULL);
        INSERT INTO {s}.slot_neighbours (slot_id, neighbour_id) VALUES
          ('00000000-0000-7000-8000-000000000021', '00000000-0000-7000-8000-000000000022'),
          ('00000000-0000-7000-8000-000000000022', '00000000-0000-7000-8000-000000000021');
        INSERT INTO {s}.substrates (id, name, type, is_mix, properties) VALUES
          ('00000000-0000-7000-8000-000000000041', 'Mix', 'soil', true, '{{"a": [1, 2.5, "x\ny"], "b": null, "c": "\\\\"}}');
        INSERT INTO {s}.plants (id, name, species_key, location_id, slot_id, planted_on, notes, created_at)
          SELECT gen_random_uuid(), 'Plant ' || g, 'ocimum-basilicum',
                 '00000000-0000-7000-8000-000000000012',
                 CASE WHEN g % 2 = 0 THEN '00000000-0000-7000-8000-000000000021'::uuid END,
                 date '2026-03-01' + g, CASE WHEN g % 3 = 0 THEN E'note\twith\\tab' END,
                 timestamptz '2026-03-01 12:00:00.123456+00' + g * interval '1 hour'
          FROM generate_series(1, {plants}) g;
        "#
    );
    sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
        .execute(&pool)
        .await
        .expect("garden rows");
}

/// Per table of the garden's schema: row count and a digest of every row's text.
pub(crate) async fn digests(
    pool: &sqlx::PgPool,
    t: &TenantRecord,
) -> BTreeMap<String, (i64, Option<String>)> {
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
         WHERE n.nspname = $1 AND c.relkind = 'r' AND c.relname NOT LIKE '\\_sqlx%' ORDER BY 1",
    )
    .bind(t.schema_name.as_str())
    .fetch_all(pool)
    .await
    .expect("tables");
    let mut out = BTreeMap::new();
    for table in tables {
        let row: (i64, Option<String>) = sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT count(*), md5(string_agg(x::text, E'\\n' ORDER BY x::text)) FROM {}.{table} x",
            t.schema_name.quoted()
        )))
        .fetch_one(pool)
        .await
        .expect("digest");
        out.insert(table, row);
    }
    out
}

/// A copied garden has every table of the original, row for row; only the photo rows differ
/// in content (their keys name the new garden's folder), so those are compared by count.
pub(crate) fn assert_same_rows(
    before: &BTreeMap<String, (i64, Option<String>)>,
    after: &BTreeMap<String, (i64, Option<String>)>,
) {
    assert_eq!(
        after.keys().collect::<Vec<_>>(),
        before.keys().collect::<Vec<_>>()
    );
    for (table, (n, digest)) in before {
        if table == "diary_photos" {
            assert_eq!(after[table].0, *n, "{table}");
        } else {
            assert_eq!(&after[table], &(*n, digest.clone()), "{table}");
        }
    }
}

pub(crate) fn pool_of(app: &TestApp, t: &TenantRecord) -> sqlx::PgPool {
    app.state
        .placements()
        .get(&t.placement)
        .expect("placement")
        .pool()
        .clone()
}

pub(crate) async fn site_names(app: &TestApp, slug: &str) -> Vec<String> {
    let res = app.get(&format!("/api/v1/t/{slug}/sites/?limit=100")).await;
    assert_eq!(res.status().as_u16(), 200, "sites of {slug}");
    let page: Value = res.json().await.expect("json");
    let mut names: Vec<String> = page["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|s| s["name"].as_str().expect("name").to_owned())
        .collect();
    names.sort();
    names
}

pub(crate) fn temp_file(label: &str) -> PathBuf {
    std::env::temp_dir().join(format!("kultiva-{label}-{}.kgz", Uuid::new_v4().simple()))
}

async fn photo_app(dir: &Path, env: &[(&'static str, &str)]) -> TestApp {
    let dir = dir.to_str().expect("utf-8").to_owned();
    let mut all: Vec<(&'static str, &str)> = vec![
        ("STORAGE_DIR", dir.as_str()),
        ("PHOTO_RENDITION_WORKERS", "0"),
    ];
    all.extend_from_slice(env);
    TestApp::spawn_env(&all).await
}

/// A diary entry with a rendered photo and a photo whose renditions are still pending.
pub(crate) async fn photos(app: &TestApp, t: &TenantRecord) -> (Uuid, Uuid) {
    let entry = crate::photos::diary_entry(app, t).await;
    let rendered = crate::photos::rendered_photo(app, t, &entry.to_string()).await;
    let png = crate::photos::encode(&crate::photos::picture(40, 30), ImageFormat::Png);
    let pending = kultiva::garden::photos::service::upload(
        &app.state,
        t,
        &entry.to_string(),
        Some("image/png"),
        png,
        &crate::photos::admin_editor(),
    )
    .await
    .expect("pending photo")
    .key;
    (rendered, pending)
}

async fn rendition(app: &TestApp, slug: &str, photo: Uuid) -> Vec<u8> {
    let res = app
        .get(&format!("/api/v1/t/{slug}/photos/{photo}/renditions/512"))
        .await;
    assert_eq!(res.status().as_u16(), 200, "rendition of {photo} in {slug}");
    res.bytes().await.expect("bytes").to_vec()
}

#[tokio::test]
async fn export_then_import_copies_every_row_and_photo_and_the_copy_serves() {
    let dir = crate::photos::storage_dir();
    let app = photo_app(&dir, &[]).await;
    let source = app.tenant("exp").await;
    fill(&app, &source, 40).await;
    let (rendered, pending) = photos(&app, &source).await;
    let pool = pool_of(&app, &source);
    let before = digests(&pool, &source).await;
    let source_sites = site_names(&app, source.slug.as_str()).await;
    let source_rendition = rendition(&app, source.slug.as_str(), rendered).await;

    let file = temp_file("export");
    let exported = export::export_tenant(&app.state, &source.slug, &file)
        .await
        .expect("exported");
    let rows: i64 = before.values().map(|(n, _)| n).sum();
    assert_eq!(exported.rows, rows as u64);
    assert_eq!(exported.tables, before.len());
    assert_eq!(exported.schema_version, latest_tenant_version());
    assert!(exported.files >= 2, "original and renditions: {exported:?}");
    assert_eq!(exported.missing_files, 0);
    assert!(!Path::new(&format!("{}.partial", file.display())).exists());

    let copy_slug = TenantSlug::parse(&unique_slug("imp")).expect("slug");
    let imported = import::import_tenant(
        &app.state,
        &file,
        &copy_slug,
        import::ImportOptions::default(),
    )
    .await
    .expect("imported");
    let copy = imported.tenant;
    assert_ne!(copy.id, source.id, "a new garden beside the original");
    assert_eq!(copy.status, TenantStatus::Active);
    assert_eq!(copy.kind, TenantKind::Organisation);
    assert_eq!(copy.schema_version, latest_tenant_version());
    assert_eq!(imported.rows, rows as u64);
    assert_eq!(imported.files, exported.files);

    // Every table equal, row for row; only the photo keys changed: they name the new garden.
    let after = digests(&pool_of(&app, &copy), &copy).await;
    assert_same_rows(&before, &after);
    let photo_rows = |t: &TenantRecord| {
        let pool = pool_of(&app, t);
        let sql = format!(
            "SELECT id, entry_id, position, byte_size, rendition_status, original_key, \
                    rendition_512_key FROM {}.diary_photos ORDER BY id",
            t.schema_name.quoted()
        );
        async move {
            sqlx::query_as::<_, (Uuid, Uuid, i32, i64, String, String, Option<String>)>(
                sqlx::AssertSqlSafe(sql),
            )
            .fetch_all(&pool)
            .await
            .expect("photos")
        }
    };
    let (theirs, ours) = (photo_rows(&source).await, photo_rows(&copy).await);
    assert_eq!(theirs.len(), ours.len());
    for (a, b) in theirs.iter().zip(&ours) {
        assert_eq!((a.0, a.1, a.2, a.3, &a.4), (b.0, b.1, b.2, b.3, &b.4));
        assert_eq!(
            b.5,
            a.5.replacen(&source.id.to_string(), &copy.id.to_string(), 1)
        );
        assert!(b.5.starts_with(&copy.id.to_string()), "{}", b.5);
    }

    // The copy serves over HTTP under its slug: the places and the photo files.
    assert_eq!(site_names(&app, copy_slug.as_str()).await, source_sites);
    assert!(source_sites.iter().any(|n| n.contains("🌱\nsecond")));
    assert_eq!(
        rendition(&app, copy_slug.as_str(), rendered).await,
        source_rendition
    );
    // The photo still waiting for its renditions waits in the copy too.
    let queued: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM platform.photo_rendition_jobs WHERE tenant_id = $1 AND photo_id = $2",
    )
    .bind(copy.id)
    .bind(pending)
    .fetch_one(app.state.platform_pool())
    .await
    .expect("jobs");
    assert_eq!(queued, 1);

    // The original is untouched.
    assert_eq!(digests(&pool, &source).await, before);
    assert_eq!(
        rendition(&app, source.slug.as_str(), rendered).await,
        source_rendition
    );
    let _ = std::fs::remove_file(&file);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The file as lines, decompressed.
pub(crate) fn read_lines(file: &Path) -> Vec<Vec<u8>> {
    let mut raw = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(file).expect("open"))
        .read_to_end(&mut raw)
        .expect("gunzip");
    raw.split_inclusive(|b| *b == b'\n')
        .map(<[u8]>::to_vec)
        .collect()
}

pub(crate) fn write_lines(file: &Path, lines: &[Vec<u8>]) {
    let mut out = flate2::write::GzEncoder::new(
        std::fs::File::create(file).expect("create"),
        flate2::Compression::fast(),
    );
    for line in lines {
        out.write_all(line).expect("write");
    }
    out.finish().expect("gzip");
}

#[tokio::test]
async fn import_refuses_a_slug_in_use_and_a_damaged_file_leaves_nothing_behind() {
    // A registry of its own: the test counts schemas and tenants.
    let url = sibling_database("transfer").await;
    let dir = crate::photos::storage_dir();
    let app = photo_app(&dir, &[("DATABASE_URL", &url)]).await;
    let source = app.tenant("dmg").await;
    fill(&app, &source, 5).await;
    photos(&app, &source).await;
    let file = temp_file("damaged");
    export::export_tenant(&app.state, &source.slug, &file)
        .await
        .expect("exported");

    let err = import::import_tenant(
        &app.state,
        &file,
        &source.slug,
        import::ImportOptions::default(),
    )
    .await
    .expect_err("slug in use");
    assert!(err.to_string().contains("already exists"), "{err}");

    let lines = read_lines(&file);
    let truncated = temp_file("truncated");
    write_lines(&truncated, &lines[..lines.len() * 2 / 3]);
    // The trailer lies about one table: detected after every row and photo file was loaded.
    let lying = temp_file("lying");
    let mut changed = lines.clone();
    let last = changed.last_mut().expect("trailer");
    let mut trailer: Value = serde_json::from_slice(last).expect("trailer json");
    let sites = trailer["end"]["rows"]["sites"].as_u64().expect("sites");
    trailer["end"]["rows"]["sites"] = Value::from(sites + 1);
    *last = format!("{trailer}\n").into_bytes();
    write_lines(&lying, &changed);

    let schemas = app.schema_count().await;
    let tenants = app.tenant_count().await;
    let folders = || {
        std::fs::read_dir(&dir)
            .expect("storage")
            .map(|e| e.expect("entry").file_name().into_string().expect("name"))
            .collect::<Vec<_>>()
    };
    assert_eq!(folders(), vec![source.id.to_string()]);
    for (damaged, reason) in [(&truncated, "ends early"), (&lying, "trailer")] {
        let slug = TenantSlug::parse(&unique_slug("dmg")).expect("slug");
        let err = import::import_tenant(&app.state, damaged, &slug, Default::default())
            .await
            .expect_err("damaged file refused");
        assert!(err.to_string().contains(reason), "{reason}: {err}");
        assert!(
            registry::find_by_slug(app.state.platform_pool(), &slug)
                .await
                .expect("registry")
                .is_none(),
            "no registry row"
        );
        assert_eq!(app.schema_count().await, schemas, "no schema left");
        assert_eq!(app.tenant_count().await, tenants);
        assert_eq!(
            folders(),
            vec![source.id.to_string()],
            "no photo files left"
        );
    }
    for f in [&file, &truncated, &lying] {
        let _ = std::fs::remove_file(f);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_killed_import_leaves_no_row_schema_or_photo_file_once_the_reaper_passed() {
    let dir = crate::photos::storage_dir();
    let app = photo_app(&dir, &[]).await;
    let source = app.tenant("kill").await;
    fill(&app, &source, 3).await;
    photos(&app, &source).await;
    let file = temp_file("killed");
    export::export_tenant(&app.state, &source.slug, &file)
        .await
        .expect("exported");

    // Killed after every row and photo file was loaded, before the activation.
    let slug = TenantSlug::parse(&unique_slug("kill")).expect("slug");
    let err = import::import_tenant(
        &app.state,
        &file,
        &slug,
        import::ImportOptions {
            abandon_after_load: true,
            ..Default::default()
        },
    )
    .await
    .expect_err("abandoned");
    assert!(
        matches!(err, kultiva::tenancy::transfer::TransferError::Injected(_)),
        "{err}"
    );
    let left = registry::find_by_slug(app.state.platform_pool(), &slug)
        .await
        .expect("registry")
        .expect("the killed import's row");
    assert_eq!(left.status, TenantStatus::Provisioning);
    let folder = dir.join(left.id.to_string());
    assert!(
        std::fs::read_dir(&folder)
            .expect("photo files written")
            .count()
            >= 1,
        "the import wrote photo files"
    );
    let schema_there = |t: &TenantRecord| {
        let pool = pool_of(&app, t);
        let name = t.schema_name.as_str().to_owned();
        async move {
            sqlx::query_scalar::<_, bool>(
                "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)",
            )
            .bind(name)
            .fetch_one(&pool)
            .await
            .expect("schema lookup")
        }
    };
    assert!(schema_there(&left).await);

    // Its last progress 300 s ago; a pass with a 120 s bound takes it for abandoned.
    sqlx::query(
        "UPDATE platform.tenants SET updated_at = now() - interval '300 seconds' WHERE id = $1",
    )
    .bind(left.id)
    .execute(app.state.platform_pool())
    .await
    .expect("backdated");
    crate::tenancy::reap(&app, std::time::Duration::from_secs(120)).await;

    assert!(
        registry::find_by_id(app.state.platform_pool(), left.id)
            .await
            .expect("registry")
            .is_none(),
        "row gone, slug free"
    );
    assert!(!schema_there(&left).await, "schema gone");
    assert!(!folder.exists(), "the import's photo files gone");
    assert!(
        dir.join(source.id.to_string()).exists(),
        "the original's files stay"
    );
    // The slug is free again, and the same file imports.
    let again = import::import_tenant(&app.state, &file, &slug, Default::default())
        .await
        .expect("imported after the reaper");
    assert_eq!(again.tenant.status, TenantStatus::Active);
    let _ = std::fs::remove_file(&file);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_personal_garden_comes_back_personal_with_its_name_unless_told_otherwise() {
    let app = TestApp::spawn().await;
    let slug = TenantSlug::parse(&unique_slug("pers")).expect("slug");
    let personal = kultiva::tenancy::provision::create_tenant(
        &app.state,
        &slug,
        "Ana's balcony",
        kultiva::tenancy::provision::ProvisionOptions {
            kind: TenantKind::Personal,
            ..Default::default()
        },
    )
    .await
    .expect("personal garden");
    fill(&app, &personal, 2).await;
    let file = temp_file("personal");
    export::export_tenant(&app.state, &personal.slug, &file)
        .await
        .expect("exported");

    let copy = TenantSlug::parse(&unique_slug("pers")).expect("slug");
    let imported = import::import_tenant(&app.state, &file, &copy, Default::default())
        .await
        .expect("imported")
        .tenant;
    let stored = registry::find_by_slug(app.state.platform_pool(), &copy)
        .await
        .expect("registry")
        .expect("row");
    assert_eq!(imported.kind, TenantKind::Personal);
    assert_eq!(
        stored.kind,
        TenantKind::Personal,
        "the registry row says so"
    );
    assert_eq!(stored.name, "Ana's balcony");
    assert_eq!(
        site_names(&app, copy.as_str()).await,
        site_names(&app, personal.slug.as_str()).await
    );

    // The kind may be given; a one-of-a-kind kind is refused before anything is made.
    let other = TenantSlug::parse(&unique_slug("pers")).expect("slug");
    let imported = import::import_tenant(
        &app.state,
        &file,
        &other,
        import::ImportOptions {
            kind: Some(TenantKind::Organisation),
            ..Default::default()
        },
    )
    .await
    .expect("imported as an organisation");
    assert_eq!(imported.tenant.kind, TenantKind::Organisation);
    let refused = TenantSlug::parse(&unique_slug("pers")).expect("slug");
    let err = import::import_tenant(
        &app.state,
        &file,
        &refused,
        import::ImportOptions {
            kind: Some(TenantKind::Platform),
            ..Default::default()
        },
    )
    .await
    .expect_err("a platform garden cannot be imported");
    assert!(
        err.to_string().contains("cannot make a platform garden"),
        "{err}"
    );
    assert!(
        registry::find_by_slug(app.state.platform_pool(), &refused)
            .await
            .expect("registry")
            .is_none()
    );
    let _ = std::fs::remove_file(&file);
}

#[tokio::test]
async fn members_come_back_only_when_asked_and_only_where_their_account_exists() {
    let app = TestApp::full().await;
    let source = app.tenant("mem").await;
    let grower = app.member(&source, kultiva::auth::Role::Grower).await;
    let file = temp_file("members");
    export::export_tenant(&app.state, &source.slug, &file)
        .await
        .expect("exported");

    let bare = TenantSlug::parse(&unique_slug("mem")).expect("slug");
    let copy = import::import_tenant(&app.state, &file, &bare, Default::default())
        .await
        .expect("imported")
        .tenant;
    let members =
        kultiva::directory::memberships::repo::members(app.state.platform_pool(), copy.id)
            .await
            .expect("members");
    assert!(members.is_empty(), "no members unless asked");

    let with = TenantSlug::parse(&unique_slug("mem")).expect("slug");
    let report = import::import_tenant(
        &app.state,
        &file,
        &with,
        import::ImportOptions {
            with_members: true,
            ..Default::default()
        },
    )
    .await
    .expect("imported");
    assert_eq!(report.members_restored, 1);
    let res = app
        .rest_as(&grower)
        .get(&format!("/api/v1/t/{with}/sites/"))
        .await;
    assert_eq!(res.status().as_u16(), 200, "the grower reads the copy");
    let _ = std::fs::remove_file(&file);
}

#[tokio::test]
async fn the_cli_exports_imports_and_moves_a_garden() {
    let url = sibling_database("transfer_cli").await;
    let second = second_server_url().await;
    let placements = format!("second={second}");
    let env = [
        ("DATABASE_URL", url.as_str()),
        ("TENANT_PLACEMENTS", placements.as_str()),
    ];
    let app = TestApp::spawn_env(&env).await;
    let source = app.tenant("cli").await;
    fill(&app, &source, 3).await;
    let file = temp_file("cli");
    let path = file.to_str().expect("utf-8");

    let out = crate::cli::kultiva(
        &["tenant", "export", source.slug.as_str(), "--out", path],
        &env,
    );
    assert!(out.status.success(), "{out:?}");
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        said.contains(&format!("exported tenant {}", source.slug)),
        "{said}"
    );

    let copy = unique_slug("cli");
    let out = crate::cli::kultiva(&["tenant", "import", "--in", path, "--slug", &copy], &env);
    assert!(out.status.success(), "{out:?}");
    let personal = unique_slug("cli");
    let out = crate::cli::kultiva(
        &[
            "tenant", "import", "--in", path, "--slug", &personal, "--kind", "personal",
        ],
        &env,
    );
    assert!(out.status.success(), "{out:?}");
    let row = registry::find_by_slug(
        app.state.platform_pool(),
        &TenantSlug::parse(&personal).expect("slug"),
    )
    .await
    .expect("registry")
    .expect("row");
    assert_eq!(
        row.kind,
        TenantKind::Personal,
        "--kind overrides the file's"
    );
    let out = crate::cli::kultiva(
        &[
            "tenant",
            "import",
            "--in",
            path,
            "--slug",
            &unique_slug("cli"),
            "--kind",
            "garden",
        ],
        &env,
    );
    assert!(!out.status.success(), "an unknown kind is refused");
    let out = crate::cli::kultiva(
        &[
            "tenant",
            "import",
            "--in",
            path,
            "--slug",
            source.slug.as_str(),
        ],
        &env,
    );
    assert!(!out.status.success(), "a slug in use is refused");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("already exists"),
        "{out:?}"
    );

    let out = crate::cli::kultiva(&["tenant", "move", &copy, "--to", "second"], &env);
    assert!(out.status.success(), "{out:?}");
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        said.contains(&format!("moved tenant {copy} from primary to second")),
        "{said}"
    );
    let out = crate::cli::kultiva(&["tenant", "move", &copy, "--to", "second"], &env);
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("is on placement second"));
    assert_eq!(
        site_names(&app, &copy).await,
        site_names(&app, source.slug.as_str()).await
    );
    let out = crate::cli::kultiva(&["tenant", "export", "no-such-garden", "--out", path], &env);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no tenant"));
    let _ = std::fs::remove_file(&file);
}

#[tokio::test]
async fn imported_members_match_only_confirmed_addresses() {
    let app = TestApp::full().await;
    let source = app.tenant("memaddr").await;
    let grower = app.member(&source, kultiva::auth::Role::Grower).await;
    let file = temp_file("memaddr");
    export::export_tenant(&app.state, &source.slug, &file)
        .await
        .expect("exported");
    // The member's account is gone; someone registers its address without confirming it.
    sqlx::query("DELETE FROM platform.users WHERE id = $1::uuid")
        .bind(&grower.key)
        .execute(app.state.platform_pool())
        .await
        .expect("erased");
    let squatter = app.user("memaddr-squat").await;
    sqlx::query("UPDATE platform.users SET email = $1 WHERE id = $2::uuid")
        .bind(&grower.email)
        .bind(&squatter.key)
        .execute(app.state.platform_pool())
        .await
        .expect("address taken");
    let options = || import::ImportOptions {
        with_members: true,
        ..Default::default()
    };
    let unconfirmed = TenantSlug::parse(&unique_slug("memaddr")).expect("slug");
    let report = import::import_tenant(&app.state, &file, &unconfirmed, options())
        .await
        .expect("imported");
    assert_eq!(
        report.members_restored, 0,
        "an unconfirmed address matches nobody"
    );
    let members =
        kultiva::directory::memberships::repo::members(app.state.platform_pool(), report.tenant.id)
            .await
            .expect("members");
    assert!(members.is_empty());

    // Once the address is confirmed, the account is the member.
    sqlx::query("UPDATE platform.users SET email_verified = true WHERE id = $1::uuid")
        .bind(&squatter.key)
        .execute(app.state.platform_pool())
        .await
        .expect("confirmed");
    let confirmed = TenantSlug::parse(&unique_slug("memaddr")).expect("slug");
    let report = import::import_tenant(&app.state, &file, &confirmed, options())
        .await
        .expect("imported");
    assert_eq!(report.members_restored, 1);
    let _ = std::fs::remove_file(&file);
}
