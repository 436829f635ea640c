//! Schema-per-tenant: provisioning, on-demand migration, isolation, hostile slugs.

use futures_util::StreamExt;
use kultiva::tenancy::migrate::latest_tenant_version;
use kultiva::tenancy::provision::{self, ProvisionError, ProvisionOptions};
use kultiva::tenancy::{TenantRecord, TenantSlug, TenantStatus, registry};
use serde_json::Value;

use crate::support::{Options, TestApp, assert_error, unique_slug};

async fn tables_of(app: &TestApp, tenant: &TenantRecord) -> Vec<String> {
    sqlx::query_scalar(
        "SELECT table_name::text FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1",
    )
    .bind(tenant.schema_name.as_str())
    .fetch_all(app.state.platform_pool())
    .await
    .expect("tables")
}

async fn migration_log(app: &TestApp, tenant: &TenantRecord) -> Vec<(i64, i64, String)> {
    sqlx::query_as(
        "SELECT from_version, to_version, trigger FROM platform.tenant_migrations WHERE tenant_id = $1 ORDER BY id",
    )
    .bind(tenant.id)
    .fetch_all(app.state.platform_pool())
    .await
    .expect("log")
}

#[tokio::test]
async fn provisioning_creates_registry_row_and_migrated_schema() {
    let app = TestApp::spawn().await;
    let tenant = app.tenant("prov").await;
    assert_eq!(tenant.status, TenantStatus::Active);
    assert_eq!(tenant.schema_version, latest_tenant_version());
    assert_eq!(tenant.placement, "primary");
    assert_eq!(
        tenant.schema_name.as_str(),
        format!("t_{}", tenant.id.simple())
    );

    let stored = registry::find_by_slug(app.state.platform_pool(), &tenant.slug)
        .await
        .expect("query")
        .expect("row");
    assert_eq!(stored.id, tenant.id);
    assert_eq!(stored.status, TenantStatus::Active);
    assert_eq!(stored.schema_version, latest_tenant_version());
    assert_eq!(
        tables_of(&app, &tenant).await,
        [
            "_sqlx_migrations",
            "locations",
            "plant_phase_history",
            "planting_run_entries",
            "planting_run_plants",
            "planting_runs",
            "plants",
            "sites",
            "slot_neighbours",
            "slot_placements",
            "slots",
            "substrate_batch_readings",
            "substrate_batches",
            "substrates"
        ]
    );
    assert_eq!(
        migration_log(&app, &tenant).await,
        [(0, latest_tenant_version(), "provision".to_owned())]
    );

    // Nothing of the tenant lands in public.
    let in_public: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'",
    )
    .fetch_one(app.state.platform_pool())
    .await
    .expect("count");
    assert_eq!(in_public, 0);
}

#[tokio::test]
async fn a_taken_slug_is_refused_and_changes_nothing() {
    let app = TestApp::spawn().await;
    let tenant = app.tenant("dup").await;
    let err = provision::create_tenant(
        &app.state,
        &tenant.slug,
        "Other",
        ProvisionOptions::default(),
    )
    .await
    .expect_err("taken");
    assert!(matches!(err, ProvisionError::SlugTaken(_)), "{err}");
    let rows: i64 = sqlx::query_scalar("SELECT count(*) FROM platform.tenants WHERE slug = $1")
        .bind(tenant.slug.as_str())
        .fetch_one(app.state.platform_pool())
        .await
        .expect("count");
    assert_eq!(rows, 1);
    let stored = registry::find_by_slug(app.state.platform_pool(), &tenant.slug)
        .await
        .expect("q")
        .expect("row");
    assert_eq!(stored.name, "Test garden");
}

#[tokio::test]
async fn unknown_placement_is_refused_before_anything_is_written() {
    let app = TestApp::spawn().await;
    let slug = TenantSlug::parse(&unique_slug("noplace")).expect("slug");
    let err = provision::create_tenant(
        &app.state,
        &slug,
        "X",
        ProvisionOptions {
            placement: Some("mars".into()),
            target_version: None,
            ..ProvisionOptions::default()
        },
    )
    .await
    .expect_err("refused");
    assert!(matches!(err, ProvisionError::UnknownPlacement(_)), "{err}");
    assert!(
        registry::find_by_slug(app.state.platform_pool(), &slug)
            .await
            .expect("q")
            .is_none()
    );
}

#[tokio::test]
async fn dropping_removes_schema_and_row() {
    let app = TestApp::spawn().await;
    let tenant = app.tenant("drop").await;
    app.create_site(&tenant, "Greenhouse").await;
    provision::drop_tenant(&app.state, &tenant.slug)
        .await
        .expect("dropped");
    assert!(
        registry::find_by_slug(app.state.platform_pool(), &tenant.slug)
            .await
            .expect("q")
            .is_none()
    );
    assert!(tables_of(&app, &tenant).await.is_empty());
    let res = app.get(&format!("/api/v1/t/{}/sites/", tenant.slug)).await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
}

#[tokio::test]
async fn a_tenant_migrations_behind_is_migrated_on_first_request() {
    let app = TestApp::spawn().await;
    let latest = latest_tenant_version();
    // Version 1 has sites only; locations came with version 2.
    let behind = 1;
    assert!(latest > behind);
    let tenant = app
        .tenant_with(
            "behind",
            ProvisionOptions {
                placement: None,
                target_version: Some(behind),
                ..ProvisionOptions::default()
            },
        )
        .await;
    assert_eq!(tenant.schema_version, behind);
    assert!(
        !tables_of(&app, &tenant)
            .await
            .contains(&"locations".to_owned())
    );

    let res = app.get(&format!("/api/v1/t/{}/sites/", tenant.slug)).await;
    assert_eq!(res.status().as_u16(), 200);

    let stored = registry::find_by_slug(app.state.platform_pool(), &tenant.slug)
        .await
        .expect("q")
        .expect("row");
    assert_eq!(stored.schema_version, latest);
    assert!(
        tables_of(&app, &tenant)
            .await
            .contains(&"locations".to_owned())
    );
    assert_eq!(
        migration_log(&app, &tenant).await,
        [
            (0, behind, "provision".to_owned()),
            (behind, latest, "on_demand".to_owned())
        ]
    );
}

#[tokio::test]
async fn twenty_concurrent_first_requests_migrate_exactly_once() {
    let app = TestApp::spawn().await;
    let tenant = app
        .tenant_with(
            "herd",
            ProvisionOptions {
                placement: None,
                target_version: Some(0),
                ..ProvisionOptions::default()
            },
        )
        .await;
    assert_eq!(tenant.schema_version, 0);
    let path = format!("/api/v1/t/{}/sites/", tenant.slug);
    let statuses: Vec<u16> = futures_util::future::join_all(
        (0..20).map(|_| async { app.get(&path).await.status().as_u16() }),
    )
    .await;
    assert_eq!(statuses, vec![200; 20]);
    let log = migration_log(&app, &tenant).await;
    // Registered at version 0 nothing ran at provisioning; the herd ran one migration.
    assert_eq!(log, [(0, latest_tenant_version(), "on_demand".to_owned())]);
    let applied: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "SELECT count(*) FROM {}._sqlx_migrations",
        tenant.schema_name.quoted()
    )))
    .fetch_one(app.state.platform_pool())
    .await
    .expect("count");
    assert_eq!(applied, latest_tenant_version());
}

#[tokio::test]
async fn two_connections_serve_two_tenants_without_crossing() {
    let app = TestApp::spawn_with(Options {
        max_connections: Some(2),
        ..Options::default()
    })
    .await;
    let a = app.tenant("iso-a").await;
    let b = app.tenant("iso-b").await;
    app.create_site(&a, "Only in A").await;
    app.create_site(&b, "Only in B").await;
    app.create_site(&b, "Also in B").await;

    let results: Vec<(bool, Vec<String>)> = futures_util::stream::iter(0..1000)
        .map(|i| {
            let tenant = if i % 2 == 0 { &a } else { &b };
            let app = &app;
            async move {
                let res = app.get(&format!("/api/v1/t/{}/sites/", tenant.slug)).await;
                assert_eq!(res.status().as_u16(), 200);
                let page: Value = res.json().await.expect("json");
                let names = page["items"]
                    .as_array()
                    .expect("items")
                    .iter()
                    .filter_map(|s| s["name"].as_str().map(str::to_owned))
                    .collect();
                (i % 2 == 0, names)
            }
        })
        .buffer_unordered(16)
        .collect()
        .await;
    assert_eq!(results.len(), 1000);
    for (is_a, names) in results {
        if is_a {
            assert_eq!(names, ["Only in A"]);
        } else {
            assert_eq!(names, ["Only in B", "Also in B"]);
        }
    }
    // A site key of tenant A is unknown in tenant B.
    let site_a: Value = app
        .get(&format!("/api/v1/t/{}/sites/", a.slug))
        .await
        .json()
        .await
        .expect("json");
    let key = site_a["items"][0]["key"].as_str().expect("key").to_owned();
    assert_eq!(
        app.get(&format!("/api/v1/t/{}/sites/{key}", a.slug))
            .await
            .status()
            .as_u16(),
        200
    );
    assert_error(
        app.get(&format!("/api/v1/t/{}/sites/{key}", b.slug)).await,
        404,
        "ENTITY_NOT_FOUND",
    )
    .await;
}

#[tokio::test]
async fn hostile_slugs_answer_404_and_create_nothing() {
    let app = TestApp::spawn().await;
    let long = "a".repeat(64);
    let hostile = [
        "public",
        "platform",
        "pg_catalog",
        "information_schema",
        "a;drop",
        "a%3Bdrop%20schema%20platform",
        "..%2Fx",
        "%2E%2E",
        "g%C3%A4rten",
        "%F0%9F%8C%B1",
        long.as_str(),
        "UPPER",
        "%22x%22",
        "t_00000000000000000000000000000000",
        "-x",
        "x%00y",
    ];
    for slug in hostile {
        let res = app.get(&format!("/api/v1/t/{slug}/sites/")).await;
        assert_error(res, 404, "ENTITY_NOT_FOUND").await;
        let res = app
            .post_json(
                &format!("/api/v1/t/{slug}/sites/"),
                &serde_json::json!({"name": "x", "kind": "garden"}),
            )
            .await;
        assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    }
    // Nothing was registered under any of those names, and no schema appeared for them.
    let registered: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM platform.tenants WHERE slug = ANY($1) OR slug ~ '[^a-z0-9-]'",
    )
    .bind(hostile.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>())
    .fetch_one(app.state.platform_pool())
    .await
    .expect("count");
    assert_eq!(registered, 0);
    let schemas: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM pg_namespace WHERE nspname ILIKE '%drop%' OR nspname ILIKE '%rten%' OR nspname = 'x'",
    )
    .fetch_one(app.state.platform_pool())
    .await
    .expect("count");
    assert_eq!(schemas, 0);
}

#[tokio::test]
async fn unknown_and_suspended_tenants_look_alike() {
    let app = TestApp::spawn().await;
    let tenant = app.tenant("susp").await;
    registry::set_status(
        app.state.platform_pool(),
        tenant.id,
        TenantStatus::Suspended,
    )
    .await
    .expect("suspend");
    let suspended = assert_error(
        app.get(&format!("/api/v1/t/{}/sites/", tenant.slug)).await,
        404,
        "ENTITY_NOT_FOUND",
    )
    .await;
    let unknown = assert_error(
        app.get(&format!("/api/v1/t/{}/sites/", unique_slug("ghost")))
            .await,
        404,
        "ENTITY_NOT_FOUND",
    )
    .await;
    assert_eq!(suspended["message"], unknown["message"]);
    assert_eq!(suspended["details"], unknown["details"]);
}
