//! `kultiva tenant move`: a garden's schema from the primary server to a second one
//! (`TEST_DATABASE_URL_2`, a second PostgreSQL cluster started by `infra/test`; see
//! `support::second_server_url` for the fallback when run by hand without it). Data equal on
//! the target, the source schema gone, every replica serving from the target; writes during the
//! switch wait or get 503 with `Retry-After`, none lost, reads never failing; a failure at any
//! step leaves the garden whole on the source; an interrupted move is finished or rolled back
//! by running it again.

use std::sync::Arc;
use std::time::Duration;

use kultiva::tenancy::registry;
use kultiva::tenancy::transfer::TransferError;
use kultiva::tenancy::transfer::moving::{self, MoveOptions, MoveStep, SwitchFault};
use kultiva::tenancy::{TenantRecord, TenantSlug, TenantTx};
use serde_json::Value;

use crate::support::{
    Options, TestApp, Traffic, header, post_site, second_server_url, site_total, unique_slug,
};
use crate::transfer::{digests, fill, site_names};

/// A service (light mode) whose `second` placement is the second server.
async fn two_server_app(extra: &[(&'static str, &str)], max_connections: Option<u32>) -> TestApp {
    let second = second_server_url().await;
    let mut env = vec![("TENANT_PLACEMENTS", format!("second={second}"))];
    for (k, v) in extra {
        env.retain(|(name, _)| name != k);
        env.push((k, (*v).to_owned()));
    }
    TestApp::spawn_with(Options {
        env,
        max_connections,
        ..Options::default()
    })
    .await
}

fn pool(app: &TestApp, placement: &str) -> sqlx::PgPool {
    app.state
        .placements()
        .get(placement)
        .expect("placement")
        .pool()
        .clone()
}

async fn schema_on(app: &TestApp, placement: &str, t: &TenantRecord) -> bool {
    sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)")
        .bind(t.schema_name.as_str())
        .fetch_one(&pool(app, placement))
        .await
        .expect("schema query")
}

async fn table_on(app: &TestApp, placement: &str, t: &TenantRecord, table: &str) -> bool {
    let name: Option<String> = sqlx::query_scalar("SELECT to_regclass($1)::text")
        .bind(format!("{}.{table}", t.schema_name.quoted()))
        .fetch_one(&pool(app, placement))
        .await
        .expect("regclass");
    name.is_some()
}

async fn record(app: &TestApp, slug: &TenantSlug) -> TenantRecord {
    registry::find_by_slug(app.state.platform_pool(), slug)
        .await
        .expect("registry")
        .expect("tenant row")
}

/// The garden is whole on the primary and takes writes: what every failed move must leave.
async fn assert_whole_on_source(
    app: &TestApp,
    t: &TenantRecord,
    before: &std::collections::BTreeMap<String, (i64, Option<String>)>,
    label: &str,
) {
    let now = record(app, &t.slug).await;
    assert_eq!(now.placement, "primary", "{label}: placement");
    assert_eq!(now.moving_to, None, "{label}: move record cleared");
    assert_eq!(now.moved_from, None, "{label}");
    assert!(
        !schema_on(app, "second", t).await,
        "{label}: no leftover on the target"
    );
    assert!(
        table_on(app, "primary", t, "_sqlx_migrations").await,
        "{label}: gate open"
    );
    assert_eq!(
        &digests(&pool(app, "primary"), t).await,
        before,
        "{label}: every row as before"
    );
    assert_eq!(
        site_total(app, t.slug.as_str()).await.0,
        200,
        "{label}: reads"
    );
    let res = post_site(app, t.slug.as_str(), &format!("after {label}")).await;
    assert_eq!(res.status().as_u16(), 201, "{label}: writes work again");
}

#[tokio::test]
async fn a_garden_moves_to_the_second_server_whole_and_every_replica_follows() {
    let app = two_server_app(&[], None).await;
    // Another replica of the same service: its caches learn of the move by the feed alone.
    let replica = two_server_app(&[], None).await;
    let t = app.tenant("mv").await;
    fill(&app, &t, 60).await;
    let before = digests(&pool(&app, "primary"), &t).await;
    let sites = site_names(&replica, t.slug.as_str()).await;
    assert_eq!(site_names(&app, t.slug.as_str()).await, sites);

    let report = moving::move_tenant(&app.state, &t.slug, "second", MoveOptions::default())
        .await
        .expect("moved");
    assert_eq!(
        (report.from.as_str(), report.to.as_str()),
        ("primary", "second")
    );
    assert!(report.source_dropped && !report.already_there);
    assert_eq!(report.tables, before.len());
    assert_eq!(
        report.rows,
        before.values().map(|(n, _)| *n as u64).sum::<u64>()
    );

    let moved = record(&app, &t.slug).await;
    assert_eq!(moved.placement, "second");
    assert_eq!((moved.moving_to, moved.moved_from), (None, None));
    assert_eq!(moved.id, t.id, "same garden, same id and schema name");
    assert_eq!(
        digests(&pool(&app, "second"), &t).await,
        before,
        "every row equal"
    );
    assert!(
        !schema_on(&app, "primary", &t).await,
        "the source schema is gone"
    );

    // Both replicas serve it from the second server (the source is gone: a read there fails).
    assert_eq!(site_names(&app, t.slug.as_str()).await, sites);
    assert_eq!(site_names(&replica, t.slug.as_str()).await, sites);
    let res = post_site(&replica, t.slug.as_str(), "Written after the move").await;
    assert_eq!(res.status().as_u16(), 201);
    let on_second: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "SELECT count(*) FROM {}.sites WHERE name = 'Written after the move'",
        t.schema_name.quoted()
    )))
    .fetch_one(&pool(&app, "second"))
    .await
    .expect("count");
    assert_eq!(on_second, 1);

    // And back again.
    moving::move_tenant(&app.state, &t.slug, "primary", MoveOptions::default())
        .await
        .expect("moved back");
    assert!(!schema_on(&app, "second", &t).await);
    assert_eq!(
        site_names(&replica, t.slug.as_str()).await.len(),
        sites.len() + 1
    );
}

#[tokio::test]
async fn writes_during_a_move_wait_or_get_503_none_is_lost_and_reads_never_fail() {
    let app = Arc::new(two_server_app(&[], None).await);
    let t = app.tenant("busy").await;
    fill(&app, &t, 20).await;
    let slug = t.slug.to_string();
    let traffic = Traffic::start(&app, &slug);
    tokio::time::sleep(Duration::from_millis(300)).await;

    // The copy holds the gate 1.5 s longer than it needs: writes meet it.
    let options = MoveOptions {
        hold_after_copy: Duration::from_millis(1500),
        ..MoveOptions::default()
    };
    let mover = {
        let (app, slug) = (app.clone(), t.slug.clone());
        tokio::spawn(async move { moving::move_tenant(&app.state, &slug, "second", options).await })
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    // One move of a garden at a time.
    let second = moving::move_tenant(&app.state, &t.slug, "second", MoveOptions::default()).await;
    assert!(matches!(second, Err(TransferError::Busy(_))), "{second:?}");
    let report = mover.await.expect("join").expect("moved");
    tokio::time::sleep(Duration::from_millis(500)).await;

    let (answered, reads) = traffic.stop().await;
    let created: std::collections::BTreeSet<&str> = answered
        .iter()
        .filter(|(_, s, _, _)| *s == 201)
        .map(|(n, _, _, _)| n.as_str())
        .collect();
    let refused: Vec<_> = answered.iter().filter(|(_, s, _, _)| *s == 503).collect();
    assert!(
        answered.iter().all(|(_, s, _, _)| *s == 201 || *s == 503),
        "only 201 or 503: {:?}",
        answered.iter().map(|a| a.1).collect::<Vec<_>>()
    );
    assert!(
        refused
            .iter()
            .all(|(_, _, retry, _)| retry.as_deref() == Some("2")),
        "every 503 says when to retry"
    );
    // Writes that waited at the gate while the copy held it met it closed, read the registry
    // again and went to the new server instead of answering 503.
    assert!(
        answered
            .iter()
            .any(|(_, s, _, took)| *s == 201 && *took >= Duration::from_secs(1)),
        "writes waited at the gate and then followed the garden: {:?}",
        answered
            .iter()
            .map(|a| (a.1, a.3.as_millis()))
            .collect::<Vec<_>>()
    );
    assert!(
        created.len() > refused.len(),
        "most writes went through: {} created, {} refused",
        created.len(),
        refused.len()
    );

    // No write lost, none half-done: the target holds exactly the acknowledged ones.
    let names: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "SELECT name FROM {}.sites WHERE name LIKE 'w%'",
        t.schema_name.quoted()
    )))
    .fetch_all(&pool(&app, "second"))
    .await
    .expect("names");
    let stored: std::collections::BTreeSet<&str> = names.iter().map(String::as_str).collect();
    assert_eq!(stored, created);

    // Reads never failed and never went back in time (source until the switch, then target).
    assert!(reads.iter().all(|(s, _)| *s == 200), "every read answered");
    assert!(
        reads.windows(2).all(|w| w[0].1 <= w[1].1),
        "no read saw fewer sites than before"
    );
    assert!(report.write_pause >= Duration::from_millis(1500));
    assert!(!schema_on(&app, "primary", &t).await);
}

#[tokio::test]
async fn a_move_that_fails_at_any_step_leaves_the_garden_whole_on_the_source() {
    let second = second_server_url().await;
    let placements = format!("second={second},nowhere=postgres://postgres@127.0.0.1:1/nothing");
    let app = two_server_app(&[("TENANT_PLACEMENTS", &placements)], None).await;
    let t = app.tenant("fail").await;
    fill(&app, &t, 10).await;

    for step in [MoveStep::TargetBuilt, MoveStep::Copied, MoveStep::Fenced] {
        let before = digests(&pool(&app, "primary"), &t).await;
        let options = MoveOptions {
            fail_after: Some(step),
            ..MoveOptions::default()
        };
        let err = moving::move_tenant(&app.state, &t.slug, "second", options)
            .await
            .expect_err("failed on purpose");
        assert!(matches!(err, TransferError::Injected(_)), "{err}");
        let label = format!("failure after {step:?}");
        assert_whole_on_source(&app, &t, &before, &label).await;
    }

    // The target placement does not answer: nothing is touched.
    let before = digests(&pool(&app, "primary"), &t).await;
    let err = moving::move_tenant(&app.state, &t.slug, "nowhere", MoveOptions::default())
        .await
        .expect_err("unreachable");
    assert!(matches!(err, TransferError::Unreachable(..)), "{err}");
    assert_whole_on_source(&app, &t, &before, "unreachable target").await;

    // The target already has a schema of this name: refused, and that schema is not ours to
    // drop or fill.
    let before = digests(&pool(&app, "primary"), &t).await;
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "CREATE SCHEMA {s}; CREATE TABLE {s}.marker (x int)",
        s = t.schema_name.quoted()
    )))
    .execute(&pool(&app, "second"))
    .await
    .expect("schema in the way");
    let err = moving::move_tenant(&app.state, &t.slug, "second", MoveOptions::default())
        .await
        .expect_err("schema exists");
    assert!(err.to_string().contains("already has a schema"), "{err}");
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
         WHERE n.nspname = $1 AND c.relkind = 'r'",
    )
    .bind(t.schema_name.as_str())
    .fetch_all(&pool(&app, "second"))
    .await
    .expect("tables");
    assert_eq!(
        tables,
        vec!["marker".to_owned()],
        "nothing of ours on the target"
    );
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "DROP SCHEMA {} CASCADE",
        t.schema_name.quoted()
    )))
    .execute(&pool(&app, "second"))
    .await
    .expect("drop the obstacle");
    assert_whole_on_source(&app, &t, &before, "schema in the way").await;

    // Unknown placements are refused before anything happens.
    let err = moving::move_tenant(&app.state, &t.slug, "mars", MoveOptions::default())
        .await
        .expect_err("unknown");
    assert!(matches!(err, TransferError::UnknownPlacement(_)), "{err}");
}

#[tokio::test]
async fn an_interrupted_move_is_rolled_back_or_finished_by_running_it_again() {
    // A pool of one connection: a write refused by the closed gate must leave it clean.
    let app = two_server_app(&[], Some(1)).await;
    let t = app.tenant("crash").await;
    let other = app.tenant("bystander").await;
    fill(&app, &t, 10).await;
    let before = digests(&pool(&app, "primary"), &t).await;

    // Killed with every row in the target's open transaction (the source's gate still open):
    // the copy never committed, so the next run rolls it back, then moves.
    let options = MoveOptions {
        abandon_after: Some(MoveStep::Copied),
        ..MoveOptions::default()
    };
    let err = moving::move_tenant(&app.state, &t.slug, "second", options)
        .await
        .expect_err("abandoned");
    assert!(matches!(err, TransferError::Injected(_)), "{err}");
    assert_eq!(
        record(&app, &t.slug).await.moving_to.as_deref(),
        Some("second")
    );
    let report = moving::move_tenant(&app.state, &t.slug, "second", MoveOptions::default())
        .await
        .expect("rolled back, then moved");
    assert!(
        report
            .recovered
            .as_deref()
            .is_some_and(|r| r.contains("rolled back")),
        "{report:?}"
    );
    assert!(!report.already_there);
    assert_eq!(record(&app, &t.slug).await.placement, "second");
    assert_eq!(digests(&pool(&app, "second"), &t).await, before);
    assert!(!schema_on(&app, "primary", &t).await);

    // Moving back, killed after the second server's gate closed, before the switch: reads go
    // on, writes get 503 (nothing may commit on the fenced copy) until it is finished.
    let options = MoveOptions {
        abandon_after: Some(MoveStep::Fenced),
        ..MoveOptions::default()
    };
    let err = moving::move_tenant(&app.state, &t.slug, "primary", options)
        .await
        .expect_err("abandoned");
    assert!(matches!(err, TransferError::Injected(_)), "{err}");
    assert_eq!(
        record(&app, &t.slug).await.moving_to.as_deref(),
        Some("primary")
    );
    assert_eq!(
        site_total(&app, t.slug.as_str()).await.0,
        200,
        "reads go on"
    );
    for _ in 0..2 {
        let res = post_site(&app, t.slug.as_str(), "refused").await;
        assert_eq!(
            res.status().as_u16(),
            503,
            "no write reaches the fenced copy"
        );
        assert_eq!(header(&res, "retry-after").as_deref(), Some("2"));
        // The one pooled connection is clean: the next garden's write goes through.
        let res = post_site(&app, other.slug.as_str(), &unique_slug("ok")).await;
        assert_eq!(res.status().as_u16(), 201);
    }
    // The copy on the primary committed before the gate closed: the rerun finishes the move.
    let report = moving::move_tenant(&app.state, &t.slug, "primary", MoveOptions::default())
        .await
        .expect("finished");
    assert!(
        report
            .recovered
            .as_deref()
            .is_some_and(|r| r.contains("finished")),
        "{report:?}"
    );
    assert!(report.already_there, "{report:?}");
    let now = record(&app, &t.slug).await;
    assert_eq!(now.placement, "primary");
    assert_eq!((now.moving_to, now.moved_from), (None, None));
    assert_eq!(digests(&pool(&app, "primary"), &t).await, before);
    assert!(!schema_on(&app, "second", &t).await, "old copy dropped");
    let res = post_site(&app, t.slug.as_str(), "after finishing").await;
    assert_eq!(res.status().as_u16(), 201, "writes work again");

    // Killed right after the switch: the garden serves from its new home, and the old copy
    // (gate closed) waits for the next run.
    let options = MoveOptions {
        abandon_after: Some(MoveStep::Switched),
        ..MoveOptions::default()
    };
    let err = moving::move_tenant(&app.state, &t.slug, "second", options)
        .await
        .expect_err("abandoned");
    assert!(matches!(err, TransferError::Injected(_)), "{err}");
    let now = record(&app, &t.slug).await;
    assert_eq!(now.placement, "second");
    assert_eq!(now.moved_from.as_deref(), Some("primary"));
    assert!(schema_on(&app, "primary", &t).await, "old copy still there");
    assert!(
        table_on(&app, "primary", &t, "_sqlx_migrations_moved").await,
        "its gate closed"
    );
    let res = post_site(&app, t.slug.as_str(), "after the switch").await;
    assert_eq!(res.status().as_u16(), 201, "served from the new home");
    let report = moving::move_tenant(&app.state, &t.slug, "second", MoveOptions::default())
        .await
        .expect("finished");
    assert!(report.already_there);
    assert!(
        report
            .recovered
            .as_deref()
            .is_some_and(|r| r.contains("old copy")),
        "{report:?}"
    );
    assert!(!schema_on(&app, "primary", &t).await, "old copy dropped");
    let now = record(&app, &t.slug).await;
    assert_eq!((now.moving_to, now.moved_from), (None, None));
}

/// Backdates a garden's registry row, as if its move record were `seconds` old.
async fn backdate(app: &TestApp, t: &TenantRecord, seconds: f64) {
    sqlx::query(
        "UPDATE platform.tenants SET updated_at = now() - make_interval(secs => $2) WHERE id = $1",
    )
    .bind(t.id)
    .bind(seconds)
    .execute(app.state.platform_pool())
    .await
    .expect("backdated");
}

/// Runs the reaper's recovery of abandoned moves until the garden has no move record (another
/// test server's reaper may be recovering it at the same moment, under the move's lock).
async fn recover_until_settled(app: &TestApp, t: &TenantRecord) -> Vec<String> {
    let mut notes = Vec::new();
    for _ in 0..100 {
        notes.extend(
            moving::recover_abandoned(&app.state, Duration::from_secs(120))
                .await
                .expect("recovery pass"),
        );
        let now = record(app, &t.slug).await;
        if now.moving_to.is_none() && now.moved_from.is_none() {
            return notes;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the move of {} was never recovered", t.slug);
}

#[tokio::test]
async fn the_reaper_finishes_or_rolls_back_a_move_whose_mover_is_gone() {
    let app = two_server_app(&[], None).await;
    let fenced = app.tenant("reap-fenced").await;
    let copied = app.tenant("reap-copied").await;
    fill(&app, &fenced, 10).await;
    fill(&app, &copied, 10).await;
    let fenced_rows = digests(&pool(&app, "primary"), &fenced).await;
    let copied_rows = digests(&pool(&app, "primary"), &copied).await;

    for (t, step) in [(&fenced, MoveStep::Fenced), (&copied, MoveStep::Copied)] {
        let options = MoveOptions {
            abandon_after: Some(step),
            ..MoveOptions::default()
        };
        let err = moving::move_tenant(&app.state, &t.slug, "second", options)
            .await
            .expect_err("abandoned");
        assert!(matches!(err, TransferError::Injected(_)), "{err}");
    }
    // A mover that still holds the move's lock is alive: its move is left alone, however old
    // its record. (Taken before the records age: every test server's reaper recovers moves.)
    let mut holder = app
        .state
        .placements()
        .primary()
        .dedicated()
        .await
        .expect("session");
    let held: bool = sqlx::query_scalar("SELECT pg_try_advisory_lock(hashtextextended($1, 0))")
        .bind(format!("kultiva:tenant-move:{}", fenced.id))
        .fetch_one(&mut holder)
        .await
        .expect("lock");
    assert!(held);
    backdate(&app, &fenced, 300.0).await;
    backdate(&app, &copied, 300.0).await;
    let res = post_site(&app, fenced.slug.as_str(), "refused").await;
    assert_eq!(
        res.status().as_u16(),
        503,
        "the fenced garden refuses writes"
    );
    moving::recover_abandoned(&app.state, Duration::from_secs(120))
        .await
        .expect("recovery pass");
    let now = record(&app, &fenced.slug).await;
    assert_eq!(
        (now.placement.as_str(), now.moving_to.as_deref()),
        ("primary", Some("second")),
        "a live mover's move is not touched"
    );
    sqlx::Connection::close(holder).await.expect("released");

    recover_until_settled(&app, &fenced).await;
    recover_until_settled(&app, &copied).await;

    // Killed after the gate closed: finished on the second server, the old copy dropped.
    let now = record(&app, &fenced.slug).await;
    assert_eq!(now.placement, "second");
    assert_eq!(digests(&pool(&app, "second"), &fenced).await, fenced_rows);
    assert!(
        !schema_on(&app, "primary", &fenced).await,
        "old copy dropped"
    );
    let res = post_site(&app, fenced.slug.as_str(), "after the reaper").await;
    assert_eq!(
        res.status().as_u16(),
        201,
        "writes work again, on the new server"
    );

    // Killed before: rolled back, whole on the source.
    assert_whole_on_source(&app, &copied, &copied_rows, "reaped before the fence").await;
}

/// Writes a site named `name` through a write transaction begun with `record` (which may be
/// stale: the write follows the garden).
async fn write_site_with(app: &TestApp, record: &TenantRecord, name: &str) {
    let mut tx = TenantTx::begin(&app.state, record)
        .await
        .expect("the write follows the garden");
    sqlx::query(
        tx.sql(
            "INSERT INTO tenant.sites (id, name, kind) VALUES (gen_random_uuid(), $1, 'garden')",
        ),
    )
    .bind(name)
    .execute(tx.conn())
    .await
    .expect("insert");
    tx.commit().await.expect("commit");
}

/// Sites named `name` in the garden's schema on `placement`.
async fn sites_named(app: &TestApp, placement: &str, t: &TenantRecord, name: &str) -> i64 {
    sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "SELECT count(*) FROM {}.sites WHERE name = $1",
        t.schema_name.quoted()
    )))
    .bind(name)
    .fetch_one(&pool(app, placement))
    .await
    .expect("count")
}

async fn site_count(tx: &mut TenantTx) -> Result<i64, sqlx::Error> {
    let sql = tx.sql("SELECT count(*) FROM tenant.sites");
    sqlx::query_scalar(sql).fetch_one(tx.conn()).await
}

#[tokio::test]
async fn a_request_that_resolved_the_garden_before_a_move_follows_it() {
    let app = two_server_app(&[], None).await;
    let t = app.tenant("follow").await;
    fill(&app, &t, 5).await;
    // What a request resolved before the switch: the garden on the primary.
    let old = record(&app, &t.slug).await;
    assert_eq!(old.placement, "primary");

    // Switched, the old copy (gate closed) not dropped yet.
    let options = MoveOptions {
        abandon_after: Some(MoveStep::Switched),
        ..MoveOptions::default()
    };
    moving::move_tenant(&app.state, &t.slug, "second", options)
        .await
        .expect_err("abandoned after the switch");
    // A write with the old record meets the closed gate and goes to the new server.
    write_site_with(&app, &old, "followed").await;
    assert_eq!(
        sites_named(&app, "second", &t, "followed").await,
        1,
        "written on the new server"
    );

    // The old copy dropped (by the rerun): reads and snapshots with the old record answer
    // from the new server.
    moving::move_tenant(&app.state, &t.slug, "second", MoveOptions::default())
        .await
        .expect("old copy dropped");
    assert!(!schema_on(&app, "primary", &t).await);
    let mut tx = TenantTx::read(&app.state, &old).await.expect("read");
    assert_eq!(
        site_count(&mut tx)
            .await
            .expect("a read follows the garden"),
        3
    );
    tx.commit().await.expect("end");
    let mut tx = TenantTx::snapshot(&app.state, &old)
        .await
        .expect("snapshot");
    assert_eq!(
        site_count(&mut tx)
            .await
            .expect("a snapshot follows the garden"),
        3
    );
    tx.commit().await.expect("end");
    let mut tx = TenantTx::begin(&app.state, &old).await.expect("write");
    assert_eq!(
        site_count(&mut tx)
            .await
            .expect("a write follows the garden"),
        3
    );
    tx.rollback().await.expect("end");
}

#[tokio::test]
async fn a_statement_that_finds_its_gardens_schema_gone_answers_503_not_500() {
    let app = two_server_app(&[], None).await;
    let t = app.tenant("gone").await;
    fill(&app, &t, 2).await;
    assert_eq!(site_total(&app, t.slug.as_str()).await.0, 200);
    // The schema vanishes under a garden the registry still names (what a read that started
    // after a move dropped the old copy, or during `kultiva tenant drop`, meets).
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "DROP SCHEMA {} CASCADE",
        t.schema_name.quoted()
    )))
    .execute(&pool(&app, "primary"))
    .await
    .expect("dropped");
    let res = app.get(&format!("/api/v1/t/{}/sites/", t.slug)).await;
    assert_eq!(res.status().as_u16(), 503);
    assert_eq!(header(&res, "retry-after").as_deref(), Some("2"));
    let body: Value = res.json().await.expect("json");
    assert_eq!(body["error_code"], "SERVICE_UNAVAILABLE");
    let res = post_site(&app, t.slug.as_str(), "nowhere").await;
    assert_eq!(res.status().as_u16(), 503, "a write too");
    assert_eq!(header(&res, "retry-after").as_deref(), Some("2"));
    // A statement that names no garden's schema (a template that escaped the rendering) stays
    // an internal error.
    let err = sqlx::query("SELECT * FROM tenant.sites")
        .execute(&pool(&app, "primary"))
        .await
        .expect_err("no such relation");
    assert_eq!(
        kultiva::error::AppError::from(err).code(),
        kultiva::error::ErrorCode::InternalError
    );
}

#[tokio::test]
async fn a_switch_without_a_clear_answer_is_settled_by_the_registry_not_rolled_back() {
    // Past the fence the copy is complete, so a move must finish, never roll back on a guess
    // (a roll-back drops the target's copy, the only one the registry may name):
    // - the switch commits and its answer is lost: the row names the target, done;
    // - the switch never reached the server: the row still records the move, the switch is
    //   issued again;
    // - a reaper switched first, so ours matches no row: the row names the target, done.
    let app = two_server_app(&[], None).await;
    for (name, fault) in [
        ("answer-lost", SwitchFault::AnswerLost),
        ("request-lost", SwitchFault::RequestLost),
        ("switched-by-another", SwitchFault::SwitchedByAnother),
    ] {
        let t = app.tenant(name).await;
        fill(&app, &t, 5).await;
        let before = digests(&pool(&app, "primary"), &t).await;
        let options = MoveOptions {
            switch_fault: Some(fault),
            settle: Some(Duration::from_millis(50)),
            ..MoveOptions::default()
        };
        let report = moving::move_tenant(&app.state, &t.slug, "second", options)
            .await
            .unwrap_or_else(|err| panic!("{fault:?}: moved despite it: {err}"));
        assert!(report.source_dropped, "{fault:?}: {report:?}");
        let now = record(&app, &t.slug).await;
        assert_eq!(now.placement, "second", "{fault:?}");
        assert_eq!((now.moving_to, now.moved_from), (None, None), "{fault:?}");
        assert_eq!(
            digests(&pool(&app, "second"), &t).await,
            before,
            "{fault:?}"
        );
        assert!(!schema_on(&app, "primary", &t).await, "{fault:?}");
        let res = post_site(&app, t.slug.as_str(), "after the switch").await;
        assert_eq!(res.status().as_u16(), 201, "{fault:?}");
    }
}

#[tokio::test]
async fn a_garden_with_a_move_recorded_is_neither_dropped_nor_migrated() {
    use kultiva::tenancy::migrate::{self, MigrationError, latest_tenant_version};
    use kultiva::tenancy::provision::{self, ProvisionError, ProvisionOptions};
    let app = two_server_app(&[], None).await;
    let latest = latest_tenant_version();
    let t = app
        .tenant_with(
            "held",
            ProvisionOptions {
                target_version: Some(latest - 1),
                ..ProvisionOptions::default()
            },
        )
        .await;
    let platform = app.state.platform_pool();
    // What a mover records before it copies (its process may be copying right now).
    assert!(
        registry::claim_move(platform, t.id, "primary", "second")
            .await
            .expect("claim")
    );

    // A drop would leave the target's copy without a row: refused, nothing changed.
    let err = provision::drop_tenant(&app.state, &t.slug)
        .await
        .expect_err("refused");
    assert!(matches!(err, ProvisionError::Moving(_)), "{err}");
    let now = record(&app, &t.slug).await;
    assert_eq!(now.status.as_str(), "active");
    assert!(schema_on(&app, "primary", &t).await);

    // A migration would change the source under the copy: refused, the ledger as it was;
    // the request that would have migrated on demand answers 503 with Retry-After.
    let err = migrate::migrate_tenant(&app.state, &t, None, registry::MigrationTrigger::Cli)
        .await
        .expect_err("refused");
    assert!(matches!(err, MigrationError::Moving(_)), "{err}");
    assert_eq!(record(&app, &t.slug).await.schema_version, latest - 1);
    let res = app.get(&format!("/api/v1/t/{}/sites/", t.slug)).await;
    assert_eq!(res.status().as_u16(), 503);
    assert!(res.headers().get("retry-after").is_some());
    let body: Value = res.json().await.expect("json");
    assert_eq!(body["error_code"], "SERVICE_UNAVAILABLE", "{body}");
    assert_eq!(record(&app, &t.slug).await.schema_version, latest - 1);

    // A garden already at the version asked for needs nothing, move or not.
    let unchanged = migrate::migrate_tenant(
        &app.state,
        &t,
        Some(latest - 1),
        registry::MigrationTrigger::Cli,
    )
    .await
    .expect("nothing to do");
    assert!(!unchanged.applied());

    // Once the move is settled both work.
    registry::clear_move(platform, t.id).await.expect("cleared");
    let (status, _) = site_total(&app, t.slug.as_str()).await;
    assert_eq!(status, 200);
    assert_eq!(record(&app, &t.slug).await.schema_version, latest);
    provision::drop_tenant(&app.state, &t.slug)
        .await
        .expect("dropped");
    assert!(!schema_on(&app, "primary", &t).await);
}

#[tokio::test]
async fn a_move_waits_out_a_long_reader_of_the_gate_without_refusing_writes() {
    // A long transaction that read the garden's ledger (an export does) holds the gate
    // shared for 6 s. The move asks for it 2 s at a time: writes queued behind its request go
    // on when an attempt gives up, instead of waiting past their 5 s and answering 503.
    let app = Arc::new(two_server_app(&[], None).await);
    let t = app.tenant("reader").await;
    let primary = pool(&app, "primary");
    let mut reader = primary.begin().await.expect("begin");
    let _: Option<i64> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "SELECT max(version) FROM {}._sqlx_migrations",
        t.schema_name.quoted()
    )))
    .fetch_one(&mut *reader)
    .await
    .expect("ledger read");

    let mover = {
        let app = Arc::clone(&app);
        let slug = t.slug.clone();
        tokio::spawn(async move {
            let options = MoveOptions {
                settle: Some(Duration::from_millis(50)),
                ..MoveOptions::default()
            };
            moving::move_tenant(&app.state, &slug, "second", options).await
        })
    };
    // The move has built its target and asks for the gate well within this. The reader
    // holds on for 8 s in all: a write queued behind one long request for the gate would
    // wait out its 5 s and answer 503.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let answers: Vec<u16> = futures_util::future::join_all((0..3).map(|i| {
        let (app, slug) = (Arc::clone(&app), t.slug.to_string());
        async move {
            post_site(&app, &slug, &format!("while read {i}"))
                .await
                .status()
                .as_u16()
        }
    }))
    .await;
    tokio::time::sleep(Duration::from_millis(6500)).await;
    assert!(!mover.is_finished(), "the move waited for the reader");
    reader.rollback().await.expect("reader done");
    let report = mover
        .await
        .expect("joined")
        .expect("moved once the reader ended");
    assert!(!report.already_there);
    assert_eq!(answers, vec![201, 201, 201], "writes during the wait");
    assert_eq!(record(&app, &t.slug).await.placement, "second");
    assert_eq!(site_total(&app, t.slug.as_str()).await, (200, 3));
}

#[tokio::test]
async fn a_write_with_a_stale_record_never_lands_in_a_copy_still_loading() {
    // The target's copy is built, nothing copied yet (a mover stopped there). A write holding
    // a record that names the target (a request older than an earlier move away from it)
    // meets the target's closed gate, follows the registry and commits on the source, where
    // the copy will read it; nothing lands in the half-loaded copy.
    let app = two_server_app(&[], None).await;
    let t = app.tenant("stale").await;
    let options = MoveOptions {
        abandon_after: Some(MoveStep::TargetBuilt),
        ..MoveOptions::default()
    };
    moving::move_tenant(&app.state, &t.slug, "second", options)
        .await
        .expect_err("stopped after building the target");
    assert!(table_on(&app, "second", &t, "_sqlx_migrations_moved").await);
    assert!(!table_on(&app, "second", &t, "_sqlx_migrations").await);

    let mut stale = record(&app, &t.slug).await;
    stale.placement = "second".to_owned();
    write_site_with(&app, &stale, "stale").await;
    assert_eq!(
        sites_named(&app, "primary", &t, "stale").await,
        1,
        "on the source"
    );
    assert_eq!(
        sites_named(&app, "second", &t, "stale").await,
        0,
        "not in the copy being loaded"
    );

    // The rerun rolls the stopped move back and moves: the write comes along.
    moving::move_tenant(&app.state, &t.slug, "second", MoveOptions::default())
        .await
        .expect("moved");
    assert_eq!(
        sites_named(&app, "second", &t, "stale").await,
        1,
        "moved with the garden"
    );
}

#[tokio::test]
async fn a_move_that_loses_its_lock_stops_before_the_point_of_no_return() {
    // The session holding the move's advisory lock dies mid-copy (the primary cut it): the
    // lock is free for a reaper to take, so the mover must not go on to fence and switch. It
    // stops and rolls back; the garden is whole on the source.
    let app = Arc::new(two_server_app(&[], None).await);
    let t = app.tenant("lock").await;
    fill(&app, &t, 5).await;
    let before = digests(&pool(&app, "primary"), &t).await;
    let mover = {
        let app = Arc::clone(&app);
        let slug = t.slug.clone();
        tokio::spawn(async move {
            let options = MoveOptions {
                hold_after_copy: Duration::from_millis(2000),
                ..MoveOptions::default()
            };
            moving::move_tenant(&app.state, &slug, "second", options).await
        })
    };
    // Every row is copied well within this; the mover holds before committing the target.
    tokio::time::sleep(Duration::from_millis(1000)).await;
    // This garden's lock only (other tests move gardens on the same server meanwhile): the
    // session of the move's application name that holds the garden's advisory lock.
    let cut: i64 = sqlx::query_scalar(
        "SELECT count(*) FILTER (WHERE pg_terminate_backend(a.pid)) \
         FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid \
         WHERE l.locktype = 'advisory' AND l.granted AND a.application_name = $1 \
           AND ((l.classid::bigint << 32) | l.objid::bigint) = hashtextextended($2, 0)",
    )
    .bind(moving::LOCK_APPLICATION)
    .bind(format!("kultiva:tenant-move:{}", t.id))
    .fetch_one(&pool(&app, "primary"))
    .await
    .expect("terminate");
    assert_eq!(cut, 1, "the garden's lock session");
    let err = mover.await.expect("joined").expect_err("stopped");
    assert!(err.to_string().contains("lock"), "{err}");
    assert_whole_on_source(&app, &t, &before, "lost lock").await;
}
