//! Schema-per-tenant: provisioning, on-demand migration, isolation, hostile slugs.

use futures_util::StreamExt;
use kultiva::tenancy::migrate::latest_tenant_version;
use kultiva::tenancy::provision::{self, ProvisionError, ProvisionOptions};
use kultiva::tenancy::{TenantRecord, TenantSlug, TenantStatus, reaper, registry};
use serde_json::Value;

use crate::support::{Options, TestApp, assert_error, header, unique_slug};

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
            "alerts",
            "care_confirmations",
            "care_profiles",
            "care_reminders",
            "diary_entries",
            "diary_photos",
            "fertilizers",
            "garden_settings",
            "harvest_batches",
            "harvest_observations",
            "ipm_application_plants",
            "ipm_applications",
            "ipm_inspections",
            "locations",
            "nutrient_plan_assignments",
            "nutrient_plan_phases",
            "nutrient_plans",
            "onboarding_kits",
            "photo_file_outbox",
            "plant_phase_history",
            "planting_run_entries",
            "planting_run_plants",
            "planting_runs",
            "plants",
            "sensor_readings",
            "sensor_readings_default",
            "sensor_readings_hourly",
            "sensors",
            "sites",
            "slot_neighbours",
            "slot_placements",
            "slots",
            "substrate_batch_readings",
            "substrate_batches",
            "substrates",
            "tank_fills",
            "tank_maintenance",
            "tanks",
            "tasks",
            "watering_event_plants",
            "watering_events",
            "weather_readings",
            "webhook_attempts",
            "webhook_deliveries",
            "webhook_events",
            "webhooks",
        ]
    );
    assert_eq!(
        migration_log(&app, &tenant).await,
        [(0, latest_tenant_version(), "provision".to_owned())]
    );

    // Nothing of the tenant lands in public (where a Citus coordinator keeps its own views,
    // `citus_tables` and `citus_schemas`).
    let in_public: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public' \
         AND table_name NOT IN ('citus_tables', 'citus_schemas')",
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
async fn a_request_whose_migration_lock_is_held_answers_503_and_changes_nothing() {
    // Another process holds the schema's migration lock (a move copying the garden, or a
    // replica's long migration): a request that must first migrate the garden waits a bounded
    // time, then answers 503 with Retry-After instead of hanging; nothing is migrated. Once
    // the lock is free the next request migrates and answers.
    let app = TestApp::spawn().await;
    let latest = latest_tenant_version();
    let tenant = app
        .tenant_with(
            "locked",
            ProvisionOptions {
                placement: None,
                target_version: Some(latest - 1),
                ..ProvisionOptions::default()
            },
        )
        .await;
    let mut holder = app
        .state
        .platform_pool()
        .acquire()
        .await
        .expect("connection")
        .detach();
    sqlx::query("SELECT pg_advisory_lock(hashtextextended($1, 0))")
        .bind(format!("kultiva:tenant-migrate:{}", tenant.schema_name))
        .execute(&mut holder)
        .await
        .expect("lock held");

    let path = format!("/api/v1/t/{}/sites/", tenant.slug);
    let res = app.get(&path).await;
    assert_eq!(header(&res, "retry-after").as_deref(), Some("2"));
    assert_error(res, 503, "SERVICE_UNAVAILABLE").await;
    let stored = registry::find_by_id(app.state.platform_pool(), tenant.id)
        .await
        .expect("q")
        .expect("row");
    assert_eq!(stored.schema_version, latest - 1, "nothing migrated");
    assert_eq!(
        migration_log(&app, &tenant).await,
        [(0, latest - 1, "provision".to_owned())]
    );

    sqlx::Connection::close(holder)
        .await
        .expect("lock released");
    let res = app.get(&path).await;
    assert_eq!(res.status().as_u16(), 200);
    assert_eq!(
        migration_log(&app, &tenant).await,
        [
            (0, latest - 1, "provision".to_owned()),
            (latest - 1, latest, "on_demand".to_owned())
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

// ---------------------------------------------------------------- crash-safe creation

/// A tenant registered and built but never activated (what a creation killed before its
/// activation leaves), its last progress `age_seconds` ago.
async fn stuck_tenant(app: &TestApp, prefix: &str, age_seconds: i64) -> TenantRecord {
    let slug = TenantSlug::parse(&unique_slug(prefix)).expect("slug");
    let tenant = provision::prepare(
        &app.state,
        &slug,
        "Stuck garden",
        ProvisionOptions::default(),
    )
    .await
    .expect("prepared");
    assert_eq!(tenant.status, TenantStatus::Provisioning);
    backdate(app, &tenant, age_seconds).await;
    tenant
}

async fn backdate(app: &TestApp, tenant: &TenantRecord, age_seconds: i64) {
    sqlx::query(
        "UPDATE platform.tenants SET updated_at = now() - make_interval(secs => $2), \
         created_at = now() - make_interval(secs => $2) WHERE id = $1",
    )
    .bind(tenant.id)
    .bind(age_seconds as f64)
    .execute(app.state.platform_pool())
    .await
    .expect("backdated");
}

async fn schema_exists(app: &TestApp, tenant: &TenantRecord) -> bool {
    sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)")
        .bind(tenant.schema_name.as_str())
        .fetch_one(app.state.platform_pool())
        .await
        .expect("schema lookup")
}

/// One reaper pass with `bound`, waiting out another process's pass (every test server runs
/// one at start, under the same advisory lock, with the default bound of 600 s: the stuck
/// tenants here are younger than that, so only this test's passes remove them). Also used by
/// the transfer tests.
pub(crate) async fn reap(app: &TestApp, bound: std::time::Duration) {
    for _ in 0..200 {
        if reaper::reap_stale(&app.state, bound)
            .await
            .expect("reaper pass")
            .is_some()
        {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("the reaper's lock stayed taken for 10 s");
}

#[tokio::test]
async fn the_reaper_removes_a_tenant_stuck_in_provisioning_and_frees_its_slug() {
    let app = TestApp::spawn().await;
    let bound = std::time::Duration::from_secs(120);
    let stuck = stuck_tenant(&app, "reap-old", 300).await;
    let young = stuck_tenant(&app, "reap-young", 10).await;
    let active = app.tenant("reap-active").await;
    backdate(&app, &active, 3600).await;
    assert!(schema_exists(&app, &stuck).await);

    reap(&app, bound).await;

    // The stuck one: row and schema gone, slug free again.
    assert!(
        registry::find_by_id(app.state.platform_pool(), stuck.id)
            .await
            .expect("lookup")
            .is_none()
    );
    assert!(!schema_exists(&app, &stuck).await);
    let again = provision::create_tenant(
        &app.state,
        &stuck.slug,
        "Reused",
        ProvisionOptions::default(),
    )
    .await
    .expect("slug reusable");
    assert_eq!(again.status, TenantStatus::Active);
    assert_ne!(again.id, stuck.id);

    // Younger than the bound: left alone, schema and all.
    let still = registry::find_by_id(app.state.platform_pool(), young.id)
        .await
        .expect("lookup")
        .expect("young tenant kept");
    assert_eq!(still.status, TenantStatus::Provisioning);
    assert!(schema_exists(&app, &young).await);

    // Active, however old: never touched.
    let kept = registry::find_by_id(app.state.platform_pool(), active.id)
        .await
        .expect("lookup")
        .expect("active tenant kept");
    assert_eq!(kept.status, TenantStatus::Active);
    assert!(schema_exists(&app, &active).await);
    assert_eq!(
        tables_of(&app, &active).await,
        tables_of(&app, &again).await
    );

    // A second pass is a no-op (idempotent): the young one is still there.
    reap(&app, bound).await;
    assert!(
        registry::find_by_id(app.state.platform_pool(), young.id)
            .await
            .expect("lookup")
            .is_some()
    );
    provision::discard(&app.state, &young).await;
    assert!(!schema_exists(&app, &young).await);
}

#[tokio::test]
async fn a_reaped_tenant_cannot_be_activated_later() {
    let app = TestApp::spawn().await;
    let mut stuck = stuck_tenant(&app, "reap-late", 300).await;
    reap(&app, std::time::Duration::from_secs(120)).await;
    // The creation that was too slow finishes now: its tenant is gone, nothing is written.
    let err = provision::activate(app.state.platform_pool(), &mut stuck, None)
        .await
        .expect_err("expired");
    assert!(matches!(err, ProvisionError::Expired(_)), "{err:?}");
    assert!(
        registry::find_by_id(app.state.platform_pool(), stuck.id)
            .await
            .expect("lookup")
            .is_none()
    );
}

#[tokio::test]
async fn activation_and_the_owner_admin_membership_are_one_statement() {
    let app = TestApp::full().await;
    let owner = app.user("owner").await;
    let owner_id = owner.id();
    let role_of = |tenant: uuid::Uuid| {
        let pool = app.state.platform_pool().clone();
        async move {
            sqlx::query_scalar::<_, String>(
                "SELECT role FROM platform.memberships WHERE tenant_id = $1 AND user_id = $2",
            )
            .bind(tenant)
            .bind(owner_id)
            .fetch_optional(&pool)
            .await
            .expect("role")
        }
    };

    // Activation inside a transaction that is rolled back (a crash before the commit):
    // neither the status nor the membership is there.
    let mut tenant = stuck_tenant(&app, "act-tx", 0).await;
    let mut tx = app.state.platform_pool().begin().await.expect("tx");
    provision::activate(&mut *tx, &mut tenant, Some(owner_id))
        .await
        .expect("activated in tx");
    tx.rollback().await.expect("rollback");
    let row = registry::find_by_id(app.state.platform_pool(), tenant.id)
        .await
        .expect("lookup")
        .expect("row");
    assert_eq!(row.status, TenantStatus::Provisioning);
    assert_eq!(role_of(tenant.id).await, None);

    // An owner that cannot be made admin (no such account): the statement fails as a whole,
    // the tenant is not active without its admin.
    let err = provision::activate(
        app.state.platform_pool(),
        &mut tenant.clone(),
        Some(uuid::Uuid::now_v7()),
    )
    .await
    .expect_err("unknown owner");
    assert!(matches!(err, ProvisionError::Database(_)), "{err:?}");
    let row = registry::find_by_id(app.state.platform_pool(), tenant.id)
        .await
        .expect("lookup")
        .expect("row");
    assert_eq!(row.status, TenantStatus::Provisioning);

    // The real thing: active, created by the owner, the owner admin.
    provision::activate(app.state.platform_pool(), &mut tenant, Some(owner_id))
        .await
        .expect("activated");
    assert_eq!(tenant.status, TenantStatus::Active);
    assert_eq!(role_of(tenant.id).await.as_deref(), Some("admin"));
    let creator: Option<uuid::Uuid> =
        sqlx::query_scalar("SELECT created_by FROM platform.tenants WHERE id = $1")
            .bind(tenant.id)
            .fetch_one(app.state.platform_pool())
            .await
            .expect("creator");
    assert_eq!(creator, Some(owner_id));
    // Activating twice is refused (it is no longer provisioning).
    let err = provision::activate(app.state.platform_pool(), &mut tenant, Some(owner_id))
        .await
        .expect_err("already active");
    assert!(matches!(err, ProvisionError::Expired(_)), "{err:?}");

    // Through the API: the garden answers with the caller as admin right away.
    let slug = unique_slug("act-api");
    let res = app
        .rest_as(&owner)
        .post(
            "/api/v1/tenants/",
            &serde_json::json!({"slug": slug, "name": "Owned"}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 201);
    let made = registry::find_by_slug(
        app.state.platform_pool(),
        &TenantSlug::parse(&slug).expect("slug"),
    )
    .await
    .expect("lookup")
    .expect("row");
    assert_eq!(made.status, TenantStatus::Active);
    assert_eq!(role_of(made.id).await.as_deref(), Some("admin"));
}
