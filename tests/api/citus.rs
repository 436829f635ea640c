//! Kultiva on a Citus cluster (README "Citus"): run by `infra/test`'s Citus stage, where
//! `TEST_DATABASE_URL` names the coordinator of a coordinator + two workers. On plain
//! PostgreSQL each test says it was skipped and passes.

use std::sync::Arc;
use std::time::Duration;

use kultiva::tenancy::TenantRecord;
use kultiva::tenancy::citus::{self, Node};
use serde_json::Value;

use crate::support::{TestApp, Traffic, post_site};

/// The app, when its database is a Citus coordinator; `None` (and a line saying so) otherwise.
async fn citus_app() -> Option<TestApp> {
    let app = TestApp::spawn().await;
    let citus: bool =
        sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')")
            .fetch_one(app.state.platform_pool())
            .await
            .expect("ask for citus");
    if !citus {
        eprintln!(
            "SKIPPED: the test database is not a Citus coordinator (infra/test's Citus stage)"
        );
        return None;
    }
    Some(app)
}

async fn node_of(app: &TestApp, t: &TenantRecord) -> Node {
    let mut conn = app
        .state
        .placements()
        .primary()
        .dedicated()
        .await
        .expect("connect");
    citus::schema_node(&mut conn, &t.schema_name)
        .await
        .expect("node query")
        .expect("a distributed schema")
}

/// The active workers, in port order.
async fn workers(app: &TestApp) -> Vec<Node> {
    let rows: Vec<(String, i32)> = sqlx::query_as(
        "SELECT nodename::text, nodeport FROM pg_dist_node
          WHERE groupid <> 0 AND isactive AND shouldhaveshards ORDER BY nodeport",
    )
    .fetch_all(app.state.platform_pool())
    .await
    .expect("workers");
    rows.into_iter()
        .map(|(host, port)| Node { host, port })
        .collect()
}

#[tokio::test]
async fn gardens_are_distributed_schemas_and_the_platform_stays_on_the_coordinator() {
    let Some(app) = citus_app().await else { return };
    let pool = app.state.platform_pool();
    let t = app.tenant("citus-shape").await;

    // The garden: a distributed schema, every table of it (the ledger too) a single-shard
    // table of its colocation group, placed on a worker, not on the coordinator.
    let distributed: bool = sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM pg_dist_schema WHERE schemaid = $1::text::regnamespace)",
    )
    .bind(t.schema_name.as_str())
    .fetch_one(pool)
    .await
    .expect("pg_dist_schema");
    assert!(distributed, "{} is a distributed schema", t.schema_name);
    let (tables, in_citus): (i64, i64) = sqlx::query_as(
        "SELECT count(*), count(p.logicalrelid)
           FROM pg_class c LEFT JOIN pg_dist_partition p ON p.logicalrelid = c.oid
          WHERE c.relnamespace = $1::text::regnamespace AND c.relkind = 'r'",
    )
    .bind(t.schema_name.as_str())
    .fetch_one(pool)
    .await
    .expect("tables");
    assert!(tables > 30, "{tables} tables");
    assert_eq!(tables, in_citus, "every garden table is a Citus table");
    let node = node_of(&app, &t).await;
    assert!(workers(&app).await.contains(&node), "{node} is a worker");

    // The platform: an ordinary schema of the coordinator, none of its tables in Citus.
    let platform: (bool, i64) = sqlx::query_as(
        "SELECT EXISTS (SELECT 1 FROM pg_dist_schema WHERE schemaid = 'platform'::regnamespace),
                (SELECT count(*) FROM pg_dist_partition
                  WHERE logicalrelid::regclass::text LIKE 'platform.%')",
    )
    .fetch_one(pool)
    .await
    .expect("platform");
    assert_eq!(
        platform,
        (false, 0),
        "the platform schema is not distributed"
    );

    // The garden serves: a write, a read of one statement, a snapshot (count + page).
    let site = post_site(&app, t.slug.as_str(), "Nordbeet").await;
    assert_eq!(site.status().as_u16(), 201);
    let site: Value = site.json().await.expect("json");
    let key = site["key"].as_str().expect("key");
    let got: Value = app
        .get(&format!("/api/v1/t/{}/sites/{key}", t.slug))
        .await
        .json()
        .await
        .expect("json");
    assert_eq!(got, site);
    let page: Value = app
        .get(&format!("/api/v1/t/{}/sites/", t.slug))
        .await
        .json()
        .await
        .expect("json");
    assert_eq!(page["total"], 1);

    // Gardens spread over both workers (Citus places new schemas round robin).
    let mut nodes = std::collections::BTreeSet::new();
    for i in 0..4 {
        let t = app.tenant(&format!("citus-spread{i}")).await;
        nodes.insert(node_of(&app, &t).await.to_string());
    }
    assert_eq!(nodes.len(), 2, "gardens on both workers: {nodes:?}");
}

#[tokio::test]
async fn a_garden_moved_by_citus_under_concurrent_writes_loses_nothing() {
    let Some(app) = citus_app().await else { return };
    let app = Arc::new(app);
    let t = app.tenant("citus-move").await;
    let slug = t.slug.to_string();
    for i in 0..20 {
        assert_eq!(
            post_site(&app, &slug, &format!("before-{i}"))
                .await
                .status(),
            201
        );
    }
    let from = node_of(&app, &t).await;
    let to = workers(&app)
        .await
        .into_iter()
        .find(|n| *n != from)
        .expect("a second worker");

    let traffic = Traffic::start(&app, &slug);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let moved = citus::move_garden(&app.state, &t.slug, &to)
        .await
        .expect("citus_schema_move");
    assert_eq!(
        (moved.moved.from.clone(), moved.moved.to.clone()),
        (from, to.clone())
    );
    tokio::time::sleep(Duration::from_millis(500)).await;

    let (answered, reads) = traffic.stop().await;
    let acked: std::collections::BTreeSet<String> = answered
        .iter()
        .filter(|(_, status, _, _)| *status == 201)
        .map(|(name, _, _, _)| name.clone())
        .collect();
    for (name, status, retry_after, _) in &answered {
        assert!(
            *status == 201 || (*status == 503 && retry_after.is_some()),
            "write {name}: {status} (only 201, or 503 with Retry-After)"
        );
    }
    let slowest = answered.iter().map(|a| a.3).max().unwrap_or_default();
    eprintln!(
        "citus move: {} in {:.2}s; {} writes acknowledged, {} refused; slowest write {} ms; \
         {} reads",
        moved.moved.to,
        moved.moved.elapsed.as_secs_f64(),
        acked.len(),
        answered.len() - acked.len(),
        slowest.as_millis(),
        reads.len()
    );
    assert!(acked.len() > 10, "writes went on during the move");
    // Every read answered, and none saw fewer rows than the one before.
    let mut last = 0;
    for (status, total) in &reads {
        assert_eq!(*status, 200, "every read answers during the move");
        assert!(*total >= last, "a read saw {total} rows after {last}");
        last = *total;
    }

    // On the new worker, holding exactly the acknowledged writes and the ones before.
    assert_eq!(node_of(&app, &t).await, to);
    let names: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "SELECT name FROM {}.sites WHERE name NOT LIKE 'before-%'",
        t.schema_name.quoted()
    )))
    .fetch_all(app.state.platform_pool())
    .await
    .expect("names");
    let stored: std::collections::BTreeSet<String> = names.into_iter().collect();
    assert_eq!(
        stored, acked,
        "the moved garden holds exactly the acknowledged writes"
    );
    assert_eq!(app.site_count(&t).await, 20 + acked.len() as i64);

    // It keeps answering reads and writes through the same service (its pools, prepared
    // statements and read pool included), and moves back.
    assert_eq!(post_site(&app, &slug, "after").await.status(), 201);
    let page: Value = app
        .get(&format!("/api/v1/t/{slug}/sites/?limit=1"))
        .await
        .json()
        .await
        .expect("json");
    assert_eq!(page["total"], 21 + acked.len() as i64);
    let back = citus::move_garden(&app.state, &t.slug, &moved.moved.from)
        .await
        .expect("moved back");
    assert_eq!(node_of(&app, &t).await, back.moved.to);
    assert_eq!(post_site(&app, &slug, "back").await.status(), 201);
    // Moving to where it is, or to a node that is no worker, is refused and changes nothing.
    let again = citus::move_garden(&app.state, &t.slug, &back.moved.to).await;
    assert!(again.is_err(), "{again:?}");
    let nowhere: Node = "127.0.0.1:1".parse().expect("node");
    assert!(
        citus::move_garden(&app.state, &t.slug, &nowhere)
            .await
            .is_err()
    );
    assert_eq!(app.site_count(&t).await, 22 + acked.len() as i64);
}

#[tokio::test]
async fn the_cli_moves_a_garden_to_a_node_and_refuses_on_plain_postgresql() {
    let app = TestApp::spawn().await;
    let t = app.tenant("citus-cli").await;
    let citus: bool =
        sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')")
            .fetch_one(app.state.platform_pool())
            .await
            .expect("ask for citus");
    let target = if citus {
        let from = node_of(&app, &t).await;
        workers(&app)
            .await
            .into_iter()
            .find(|n| *n != from)
            .expect("a second worker")
            .to_string()
    } else {
        "127.0.0.1:5432".to_owned()
    };
    let out = crate::cli::kultiva(
        &["tenant", "move", t.slug.as_str(), "--to-node", &target],
        &[],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if citus {
        assert!(out.status.success(), "{stdout}{stderr}");
        assert!(stdout.contains("with citus_schema_move"), "{stdout}");
        assert_eq!(node_of(&app, &t).await.to_string(), target);
        assert_eq!(
            post_site(&app, t.slug.as_str(), "moved").await.status(),
            201
        );
    } else {
        assert!(!out.status.success(), "{stdout}");
        assert!(stderr.contains("is not a Citus coordinator"), "{stderr}");
    }
}

/// Kultiva's own move (`tenant move --to`) relies on its write gate, which does not hold a
/// Citus garden's writes back (acknowledged writes were lost when it was tried): it refuses a
/// Citus database as source or target and changes nothing.
#[tokio::test]
async fn kultivas_own_move_refuses_a_citus_database_and_changes_nothing() {
    if citus_app().await.is_none() {
        return;
    }
    let second = crate::support::second_server_url().await;
    let app = TestApp::spawn_with(crate::support::Options {
        env: vec![("TENANT_PLACEMENTS", format!("second={second}"))],
        ..crate::support::Options::default()
    })
    .await;
    let t = app.tenant("citus-own-move").await;
    assert_eq!(
        post_site(&app, t.slug.as_str(), "before").await.status(),
        201
    );
    let sites = app.site_count(&t).await;
    let err = kultiva::tenancy::transfer::moving::move_tenant(
        &app.state,
        &t.slug,
        "second",
        kultiva::tenancy::transfer::moving::MoveOptions::default(),
    )
    .await
    .expect_err("a move off Citus is refused");
    let said = err.to_string();
    assert!(
        said.contains("is a Citus database") && said.contains("--to-node"),
        "{said}"
    );
    // Nothing changed: the garden is where it was, nothing was made on the other server,
    // and it serves reads and writes.
    let placement: String =
        sqlx::query_scalar("SELECT placement FROM platform.tenants WHERE id = $1")
            .bind(t.id)
            .fetch_one(app.state.platform_pool())
            .await
            .expect("registry");
    assert_eq!(placement, "primary");
    let on_second: bool =
        sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)")
            .bind(t.schema_name.as_str())
            .fetch_one(app.state.placements().get("second").expect("second").pool())
            .await
            .expect("second server");
    assert!(!on_second, "no schema was made on the other server");
    assert_eq!(
        post_site(&app, t.slug.as_str(), "after").await.status(),
        201
    );
    assert_eq!(app.site_count(&t).await, sites + 1);
}
