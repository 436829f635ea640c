//! The HTTP faces of `kultiva tenant export` / `import`: `GET /t/{slug}/export` (admins only,
//! member e-mails only when asked, rate limited, audited, the very file the import code
//! reads back).

use std::path::Path;
use std::time::{Duration, Instant};

use kultiva::auth::Role;
use kultiva::tenancy::transfer::import;
use kultiva::tenancy::{TenantRecord, TenantSlug};
use serde_json::Value;
use uuid::Uuid;

use crate::support::{TestApp, TestUser, assert_error, assert_rate_limited, header, unique_slug};
use crate::transfer::{digests, fill, photos, pool_of, read_lines, temp_file};

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

fn key(user: &TestUser) -> Uuid {
    Uuid::parse_str(&user.key).expect("uuid")
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
    assert_eq!(
        after.keys().collect::<Vec<_>>(),
        before.keys().collect::<Vec<_>>()
    );
    for (table, (n, digest)) in &before {
        if table == "diary_photos" {
            // Their keys name the new garden's folder.
            assert_eq!(after[table].0, *n, "{table}");
        } else {
            assert_eq!(&after[table], &(*n, digest.clone()), "{table}");
        }
    }

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
        vec![
            (key(&admin), "ok".to_owned()),
            (key(&admin), "ok".to_owned())
        ]
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
