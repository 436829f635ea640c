//! The hot path: in-process caches with invalidation across server instances (two services on
//! one PostgreSQL and Redis), their failure modes (listener lost, Redis down), and the tenant
//! doors (`TenantTx::read`, `snapshot`, `begin`: schema-qualified statements, no scope on a
//! connection) under interleaving, failed and cancelled requests, with the one-round-trip read.

use std::future::Future;
use std::task::Poll;
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use futures_util::future::join_all;
use kultiva::auth::Role;
use kultiva::cache::BOUND;
use kultiva::garden::statements;
use kultiva::tenancy::{TenantRecord, TenantTx};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::garden::{bed, get_json, key, plant, plants_path, species};
use crate::support::{Options, TestApp, TestUser};

/// Waits (at most 10 s) until the instance's invalidation listener is confirmed live.
async fn wait_confirmed(app: &TestApp) {
    let start = Instant::now();
    while !app.state.caches().feed().is_confirmed() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the cache feed never confirmed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Lets every cache entry outgrow its unconditional lifetime, so what follows is served only
/// because (and while) the invalidation feed vouches for it.
async fn outgrow_the_bound() {
    tokio::time::sleep(BOUND + Duration::from_millis(100)).await;
}

/// Repeats `request` until `is_new` holds for its answer. An old answer is allowed only for
/// a request that started within the bound after `changed`; a request started later must see
/// the change.
async fn seen_within_bound<F, Fut>(what: &str, changed: Instant, mut request: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    loop {
        let started = changed.elapsed();
        if request().await {
            return;
        }
        assert!(
            started < Duration::from_secs(1),
            "{what}: a request started {started:?} after the change still saw the old state"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn post_site(app: &TestApp, user: &TestUser, slug: &str, name: &str) -> u16 {
    app.rest_as(user)
        .post(
            &format!("/api/v1/t/{slug}/sites/"),
            &json!({"name": name, "kind": "garden"}),
        )
        .await
        .status()
        .as_u16()
}

async fn get_status(app: &TestApp, user: &TestUser, path: &str) -> u16 {
    app.rest_as(user).get(path).await.status().as_u16()
}

#[tokio::test]
async fn changes_on_one_instance_reach_the_other_within_a_second() {
    let a = TestApp::full().await;
    let b = TestApp::full().await;
    let tenant = a.tenant("hot").await;
    let slug = tenant.slug.to_string();
    let admin = a.member(&tenant, Role::Admin).await;
    // Sites are set up by admins: the member under test is a second admin.
    let member = a.member(&tenant, Role::Admin).await;
    wait_confirmed(&b).await;

    // B learns the member's role and keeps it past its unconditional lifetime.
    assert_eq!(post_site(&b, &member, &slug, "Before").await, 201);
    assert_eq!(
        b.state.caches().role(member.id(), tenant.id),
        Some(Role::Admin),
        "B caches the role"
    );
    outgrow_the_bound().await;
    assert_eq!(post_site(&b, &member, &slug, "Still member").await, 201);

    // Downgraded on A: B refuses the member's next writes within the bound.
    let res = a
        .rest_as(&admin)
        .patch(
            &format!("/api/v1/tenants/{slug}/members/{}", member.key),
            &json!({"role": "viewer"}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let changed = Instant::now();
    let mut n = 0;
    seen_within_bound("role downgrade", changed, || {
        n += 1;
        let name = format!("Attempt {n}");
        let (b, member, slug) = (&b, &member, &slug);
        async move { post_site(b, member, slug, &name).await == 403 }
    })
    .await;
    // A viewer still reads.
    let sites = format!("/api/v1/t/{slug}/sites/");
    assert_eq!(get_status(&b, &member, &sites).await, 200);

    // Removed on A: the whole garden is a 404 on B.
    outgrow_the_bound().await;
    let res = a
        .rest_as(&admin)
        .delete(&format!("/api/v1/tenants/{slug}/members/{}", member.key))
        .await;
    assert_eq!(res.status().as_u16(), 204);
    let changed = Instant::now();
    seen_within_bound("membership removal", changed, || async {
        get_status(&b, &member, &sites).await == 404
    })
    .await;

    // Logout-all on A: the old access token stops working on B.
    assert_eq!(get_status(&b, &admin, "/api/v1/users/me").await, 200);
    outgrow_the_bound().await;
    assert_eq!(get_status(&b, &admin, "/api/v1/users/me").await, 200);
    let res = a
        .client
        .post(a.url("/api/v1/auth/logout-all"))
        .header("authorization", admin.bearer())
        .header("cookie", admin.session.cookie_header())
        .header("x-csrf-token", admin.session.csrf.clone().expect("csrf"))
        .send()
        .await
        .expect("sent");
    assert_eq!(res.status().as_u16(), 204, "logout-all");
    let changed = Instant::now();
    seen_within_bound("logout-all", changed, || async {
        get_status(&b, &admin, "/api/v1/users/me").await == 401
    })
    .await;
}

#[tokio::test]
async fn suspension_and_deactivation_reach_the_other_instance() {
    let a = TestApp::full().await;
    let b = TestApp::full().await;
    let operator = a.platform_admin().await;
    let tenant = a.tenant("hotsusp").await;
    let slug = tenant.slug.to_string();
    let viewer = a.member(&tenant, Role::Viewer).await;
    let sites = format!("/api/v1/t/{slug}/sites/");
    wait_confirmed(&b).await;
    assert_eq!(get_status(&b, &viewer, &sites).await, 200);
    assert!(
        b.state.caches().tenant(&slug).is_some(),
        "B caches the tenant"
    );
    outgrow_the_bound().await;
    assert_eq!(get_status(&b, &viewer, &sites).await, 200);

    let res = a
        .rest_as(&operator)
        .post_empty(&format!("/api/v1/admin/tenants/{slug}/deactivate"))
        .await;
    assert_eq!(res.status().as_u16(), 200, "suspend");
    let changed = Instant::now();
    seen_within_bound("tenant suspension", changed, || async {
        get_status(&b, &viewer, &sites).await == 404
    })
    .await;

    assert_eq!(get_status(&b, &viewer, "/api/v1/users/me").await, 200);
    outgrow_the_bound().await;
    let res = a
        .rest_as(&operator)
        .post_empty(&format!("/api/v1/admin/users/{}/deactivate", viewer.key))
        .await;
    assert_eq!(res.status().as_u16(), 200, "deactivate");
    let changed = Instant::now();
    seen_within_bound("account deactivation", changed, || async {
        get_status(&b, &viewer, "/api/v1/users/me").await == 401
    })
    .await;
}

/// A role change written straight into the database, as another tool would.
async fn set_role_in_db(app: &TestApp, tenant: &TenantRecord, user: &TestUser, role: Role) {
    sqlx::query(
        "UPDATE platform.memberships SET role = $3, updated_at = now()
         WHERE tenant_id = $1 AND user_id = $2",
    )
    .bind(tenant.id)
    .bind(user.id())
    .bind(role.as_str())
    .execute(app.state.platform_pool())
    .await
    .expect("role changed");
}

#[tokio::test]
async fn a_lost_listener_bounds_staleness_then_reads_the_database() {
    let app = TestApp::full().await;
    let tenant = app.tenant("hotfeed").await;
    let slug = tenant.slug.to_string();
    let member = app.member(&tenant, Role::Admin).await;
    wait_confirmed(&app).await;
    assert_eq!(post_site(&app, &member, &slug, "One").await, 201);
    outgrow_the_bound().await;
    assert_eq!(post_site(&app, &member, &slug, "Two").await, 201);

    // The listener's connection dies and the downgrade is committed right away: the
    // notification may never reach this instance.
    let pid = app.state.caches().feed().backend_pid();
    assert_ne!(pid, 0, "the listener is connected");
    let killed: bool = sqlx::query_scalar("SELECT pg_terminate_backend($1)")
        .bind(i32::try_from(pid).expect("pid"))
        .fetch_one(app.state.platform_pool())
        .await
        .expect("terminate");
    assert!(killed);
    set_role_in_db(&app, &tenant, &member, Role::Viewer).await;
    let changed = Instant::now();
    let mut n = 0;
    seen_within_bound("downgrade while the listener is down", changed, || {
        n += 1;
        let name = format!("Try {n}");
        let (app, member, slug) = (&app, &member, &slug);
        async move { post_site(app, member, slug, &name).await == 403 }
    })
    .await;

    // The listener comes back on a new connection and caching resumes.
    let start = Instant::now();
    loop {
        let feed = app.state.caches().feed();
        if feed.is_confirmed() && feed.backend_pid() != 0 && feed.backend_pid() != pid {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(10), "no reconnect");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    set_role_in_db(&app, &tenant, &member, Role::Admin).await;
    let changed = Instant::now();
    let mut n = 0;
    seen_within_bound("upgrade after the reconnect", changed, || {
        n += 1;
        let name = format!("Again {n}");
        let (app, member, slug) = (&app, &member, &slug);
        async move { post_site(app, member, slug, &name).await == 201 }
    })
    .await;
    // Caching resumes: a request fills the cache again. On a loaded machine a late self-ping
    // may empty it once more in between, so the test asks again for a bounded time instead
    // of once.
    let start = Instant::now();
    let mut n = 0;
    while app.state.caches().role(member.id(), tenant.id) != Some(Role::Admin) {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the role is not cached again after the reconnect"
        );
        n += 1;
        assert_eq!(
            post_site(&app, &member, &slug, &format!("Cached {n}")).await,
            201
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn with_redis_unreachable_invalidation_still_holds() {
    let a = TestApp::full().await;
    // Nothing listens on port 1: every Redis command of B fails.
    let b = TestApp::full_env(&[("REDIS_URL", "redis://127.0.0.1:1/")]).await;
    let tenant = a.tenant("hotredis").await;
    let slug = tenant.slug.to_string();
    let member = a.member(&tenant, Role::Admin).await;
    wait_confirmed(&b).await;
    assert_eq!(post_site(&b, &member, &slug, "Up").await, 201);
    outgrow_the_bound().await;
    assert_eq!(post_site(&b, &member, &slug, "Still up").await, 201);
    set_role_in_db(&a, &tenant, &member, Role::Viewer).await;
    let changed = Instant::now();
    let mut n = 0;
    seen_within_bound("downgrade with Redis down", changed, || {
        n += 1;
        let name = format!("Down {n}");
        let (b, member, slug) = (&b, &member, &slug);
        async move { post_site(b, member, slug, &name).await == 403 }
    })
    .await;
}

/// The site names a handle reads, each with the schema its row came from (through the row's
/// `tableoid`, whatever the search path).
async fn sites_in(tx: &mut TenantTx) -> Result<Vec<(String, String)>, sqlx::Error> {
    sqlx::query_as(tx.sql(
        "SELECT name, (SELECT relnamespace::regnamespace::text FROM pg_class WHERE oid = s.tableoid) \
         FROM tenant.sites s ORDER BY name",
    ))
        .fetch_all(tx.conn())
        .await
}

/// Every row is of `tenant`: from its schema, named with its slug.
fn assert_own(tenant: &TenantRecord, rows: &[(String, String)]) {
    let table = tenant.schema_name.as_str();
    let prefix = format!("{}-", tenant.slug);
    for (name, from) in rows {
        assert_eq!(from, &table, "a row of another tenant: {name}");
        assert!(name.starts_with(&prefix), "a row of another tenant: {name}");
    }
}

/// The `name`s of a JSON page, each checked to be of `tenant`.
fn assert_own_items(tenant: &TenantRecord, page: &Value) -> usize {
    let items = page["items"].as_array().expect("items");
    let prefix = format!("{}-", tenant.slug);
    for item in items {
        let name = item["name"].as_str().expect("name");
        assert!(
            name.starts_with(&prefix),
            "{name} is not of {}",
            tenant.slug
        );
    }
    items.len()
}

/// A pooled connection carries no tenant scope, no open transaction, and reaches no tenant
/// table by an unqualified name: every connection of the shared pool and of the read pool
/// (single-statement reads, which go back without sqlx's release test).
async fn assert_clean(app: &TestApp) {
    let mut conns = Vec::new();
    // Every connection of the pool, each checked while held.
    for _ in 0..app.state.platform_pool().options().get_max_connections() {
        let Ok(Ok(conn)) =
            tokio::time::timeout(Duration::from_secs(5), app.state.platform_pool().acquire()).await
        else {
            break;
        };
        conns.push(conn);
    }
    assert!(!conns.is_empty());
    for conn in &mut conns {
        assert_clean_connection(conn).await;
    }
    let reads = app.state.placements().primary().reads();
    let mut held = Vec::new();
    for _ in 0..reads.status().max {
        let Ok(Ok(conn)) = tokio::time::timeout(Duration::from_secs(5), reads.acquire()).await
        else {
            break;
        };
        held.push(conn);
    }
    assert!(!held.is_empty());
    for conn in &mut held {
        assert_clean_connection(conn.conn()).await;
    }
}

async fn assert_clean_connection(conn: &mut sqlx::PgConnection) {
    let path: String = sqlx::query_scalar("SELECT current_setting('search_path')")
        .fetch_one(&mut *conn)
        .await
        .expect("search_path");
    assert_eq!(path, "platform", "a scope was left behind");
    let err = sqlx::query_scalar::<_, i64>("SELECT count(*) FROM sites")
        .fetch_one(&mut *conn)
        .await
        .expect_err("no tenant table is reachable unscoped");
    assert_eq!(sqlstate(&err).as_deref(), Some("42P01"), "{err}");
    // Outside a transaction block a savepoint is refused.
    let err = sqlx::query("SAVEPOINT probe")
        .execute(&mut *conn)
        .await
        .expect_err("a transaction was left open");
    assert_eq!(sqlstate(&err).as_deref(), Some("25P01"), "{err}");
}

fn sqlstate(err: &sqlx::Error) -> Option<String> {
    err.as_database_error()
        .and_then(|e| e.code().map(|c| c.into_owned()))
}

/// The three doors to tenant tables.
#[derive(Debug, Clone, Copy)]
enum Door {
    Read,
    Snapshot,
    Write,
}

async fn open(app: &TestApp, tenant: &TenantRecord, door: Door) -> TenantTx {
    match door {
        Door::Read => TenantTx::read(&app.state, tenant).await,
        Door::Snapshot => TenantTx::snapshot(&app.state, tenant).await,
        Door::Write => TenantTx::begin(&app.state, tenant).await,
    }
    .expect("tenant handle")
}

#[tokio::test]
async fn twenty_tenants_interleaved_on_two_connections_only_ever_see_their_own_rows() {
    let app = TestApp::spawn_with(Options {
        max_connections: Some(2),
        ..Options::default()
    })
    .await;
    let tomato = species(&app, "Fixtura tomatoides").await;
    let mut gardens = Vec::new();
    for i in 0..20 {
        let tenant = app.tenant(&format!("iso{i}")).await;
        let (_, location, _) = bed(&app, &tenant, &format!("{}-bed", tenant.slug), 0).await;
        let mut plants = Vec::new();
        for n in 0..2 {
            let p = plant(
                &app,
                &tenant,
                json!({"species_key": tomato, "location_key": location,
                       "name": format!("{}-p{n}", tenant.slug)}),
            )
            .await;
            plants.push(key(&p));
        }
        gardens.push((tenant, plants));
    }

    // 24 workers × 15 rounds = 360 requests, reads and writes of 20 gardens interleaved on
    // the two connections; every row any of them reads is checked for its garden.
    let workers = (0..24).map(|w| {
        let (app, gardens) = (&app, &gardens);
        async move {
            for round in 0..15 {
                let (tenant, plants) = &gardens[(w * 7 + round * 3) % gardens.len()];
                let (other, other_plants) = &gardens[(w * 7 + round * 3 + 1) % gardens.len()];
                let slug = &tenant.slug;
                match (w + round) % 10 {
                    0 => {
                        let (s, page) = get_json(app, &format!("/api/v1/t/{slug}/sites/")).await;
                        assert_eq!(s, 200, "{page}");
                        assert!(assert_own_items(tenant, &page) >= 1);
                    }
                    1 => {
                        let (s, page) = get_json(app, &plants_path(tenant)).await;
                        assert_eq!(s, 200, "{page}");
                        assert_eq!(assert_own_items(tenant, &page), 2);
                    }
                    2 => {
                        let path = format!("{}{}", plants_path(tenant), plants[round % 2]);
                        let (s, p) = get_json(app, &path).await;
                        assert_eq!(s, 200, "{p}");
                        assert_eq!(p["name"], format!("{slug}-p{}", round % 2));
                    }
                    // A plant of another garden is not found here.
                    3 => {
                        let path = format!("{}{}", plants_path(tenant), other_plants[0]);
                        let (s, _) = get_json(app, &path).await;
                        assert_eq!(s, 404, "{} read a plant of {}", slug, other.slug);
                    }
                    // A write through the API (a transaction).
                    4 => {
                        let res = app
                            .post_json(
                                &format!("/api/v1/t/{slug}/sites/"),
                                &json!({"name": format!("{slug}-w{w}-{round}"), "kind": "garden"}),
                            )
                            .await;
                        assert_eq!(res.status().as_u16(), 201);
                    }
                    // A plain read.
                    5 => {
                        let mut tx = open(app, tenant, Door::Read).await;
                        let rows = sites_in(&mut tx).await.expect("rows");
                        assert!(!rows.is_empty());
                        assert_own(tenant, &rows);
                        tx.commit().await.expect("end");
                    }
                    // A snapshot: two statements, one state.
                    6 => {
                        let mut tx = open(app, tenant, Door::Snapshot).await;
                        let first = sites_in(&mut tx).await.expect("rows");
                        assert_own(tenant, &first);
                        assert_eq!(sites_in(&mut tx).await.expect("rows"), first);
                        tx.commit().await.expect("end");
                    }
                    // A write transaction that reads its own write, kept or rolled back.
                    7 => {
                        let mut tx = open(app, tenant, Door::Write).await;
                        let name = format!("{slug}-tx{w}-{round}");
                        sqlx::query(tx.sql(
                            "INSERT INTO tenant.sites (id, name, kind) VALUES ($1, $2, 'garden')",
                        ))
                        .bind(Uuid::now_v7())
                        .bind(&name)
                        .execute(tx.conn())
                        .await
                        .expect("insert");
                        let rows = sites_in(&mut tx).await.expect("rows");
                        assert_own(tenant, &rows);
                        assert!(rows.iter().any(|(n, _)| n == &name));
                        if round % 2 == 0 {
                            tx.commit().await.expect("commit");
                        } else {
                            tx.rollback().await.expect("rollback");
                        }
                    }
                    // A failed statement, the handle dropped.
                    8 => {
                        let mut tx = open(app, tenant, Door::Read).await;
                        let failed = sqlx::query(tx.sql("SELECT no_such_column FROM tenant.sites"))
                            .execute(tx.conn())
                            .await;
                        assert!(failed.is_err());
                        drop(tx);
                    }
                    // Cancelled mid-statement.
                    _ => {
                        let door = [Door::Read, Door::Snapshot, Door::Write][round % 3];
                        let cancelled = tokio::time::timeout(Duration::from_millis(5), async {
                            let mut tx = open(app, tenant, door).await;
                            sqlx::query(
                                tx.sql("SELECT pg_sleep(0.02), count(*) FROM tenant.sites"),
                            )
                            .execute(tx.conn())
                            .await?;
                            sites_in(&mut tx).await
                        })
                        .await;
                        if let Ok(done) = cancelled {
                            assert_own(tenant, &done.expect("rows"));
                        }
                    }
                }
            }
        }
    });
    join_all(workers).await;
    assert_clean(&app).await;
}

#[tokio::test]
async fn failed_and_cancelled_requests_leave_nothing_on_the_connection() {
    // One connection: whatever a request leaves on it, the next one gets.
    let app = TestApp::spawn_with(Options {
        max_connections: Some(1),
        ..Options::default()
    })
    .await;
    let a = app.tenant("scope-a").await;
    let b = app.tenant("scope-b").await;
    app.create_site(&a, &format!("{}-only", a.slug)).await;
    app.create_site(&b, &format!("{}-only", b.slug)).await;
    // The next request, for B, on that same connection: B's rows only, through the API (the
    // read door) and through each door directly.
    let b_sees_its_own = || async {
        let (s, page) = get_json(&app, &format!("/api/v1/t/{}/sites/", b.slug)).await;
        assert_eq!(s, 200, "{page}");
        assert_eq!(assert_own_items(&b, &page), 1);
        for door in [Door::Read, Door::Snapshot, Door::Write] {
            let mut tx = open(&app, &b, door).await;
            let rows = sites_in(&mut tx).await.expect("rows");
            assert_eq!(rows.len(), 1, "{door:?}");
            assert_own(&b, &rows);
            tx.rollback().await.expect("end");
        }
    };

    for door in [Door::Read, Door::Snapshot, Door::Write] {
        // Cancelled while opening: polled a few times, then dropped (for the two that send
        // `BEGIN …`, some of these land between sending it and its answer).
        for polls in 1..=12 {
            let mut opening = open(&app, &a, door).boxed();
            for poll in 0..polls {
                if poll > 0 {
                    tokio::task::yield_now().await;
                }
                let polled =
                    std::future::poll_fn(|cx| Poll::Ready(opening.as_mut().poll(cx))).await;
                if let Poll::Ready(tx) = polled {
                    drop(tx);
                    break;
                }
            }
            drop(opening);
            assert_clean(&app).await;
        }

        // Cancelled while the statement runs on the one connection (the request's future is
        // dropped mid-query).
        let cancelled = tokio::time::timeout(Duration::from_millis(50), async {
            let mut tx = open(&app, &a, door).await;
            sqlx::query(tx.sql("SELECT pg_sleep(0.3), count(*) FROM tenant.sites"))
                .execute(tx.conn())
                .await
                .expect("sleep");
            tx
        })
        .await;
        assert!(cancelled.is_err(), "{door:?}: the statement was cancelled");
        b_sees_its_own().await;
        assert_clean(&app).await;

        // Failed: the statement errors and the handle is dropped unfinished.
        let mut tx = open(&app, &a, door).await;
        let err = sqlx::query(tx.sql("SELECT * FROM tenant.no_such_table"))
            .execute(tx.conn())
            .await
            .expect_err("no such table");
        assert_eq!(sqlstate(&err).as_deref(), Some("42P01"), "{err}");
        drop(tx);
        b_sees_its_own().await;
        assert_clean(&app).await;
    }

    // A statement that escaped the rendering reads nothing: loudly refused on every door.
    for door in [Door::Read, Door::Snapshot, Door::Write] {
        let mut tx = open(&app, &a, door).await;
        let err = sqlx::query("SELECT count(*) FROM tenant.sites")
            .execute(tx.conn())
            .await
            .expect_err("unrendered placeholder");
        assert_eq!(sqlstate(&err).as_deref(), Some("42P01"), "{door:?}: {err}");
        assert!(err.to_string().contains("\"tenant.sites\""), "{err}");
        drop(tx);
    }
    let mut tx = open(&app, &a, Door::Read).await;
    let err = sqlx::query("SELECT count(*) FROM sites")
        .execute(tx.conn())
        .await
        .expect_err("unqualified");
    assert_eq!(sqlstate(&err).as_deref(), Some("42P01"), "{err}");
    // A plain read is no transaction.
    let err = sqlx::query("SAVEPOINT probe")
        .execute(tx.conn())
        .await
        .expect_err("no transaction");
    assert_eq!(sqlstate(&err).as_deref(), Some("25P01"), "{err}");
    drop(tx);

    // A snapshot refuses writes.
    let mut tx = open(&app, &a, Door::Snapshot).await;
    let err =
        sqlx::query(tx.sql("INSERT INTO tenant.sites (id, name, kind) VALUES ($1, 'x', 'garden')"))
            .bind(Uuid::now_v7())
            .execute(tx.conn())
            .await
            .expect_err("read-only");
    assert_eq!(sqlstate(&err).as_deref(), Some("25006"));
    drop(tx);
    assert_eq!(app.site_count(&a).await, 1);
    assert_clean(&app).await;
}

#[tokio::test]
async fn a_plant_read_and_a_plant_page_are_one_statement_without_a_transaction() {
    let app = TestApp::spawn().await;
    let t = app.tenant("onetrip").await;
    let tomato = species(&app, "Fixtura tomatoides").await;
    let (_, location, _) = bed(&app, &t, "One trip", 0).await;
    // A write, for contrast: one transaction.
    statements::watch(t.id);
    let p = plant(
        &app,
        &t,
        json!({"species_key": tomato, "location_key": location, "name": "One"}),
    )
    .await;
    assert_eq!(
        statements::read(t.id).transactions,
        1,
        "a write is a transaction"
    );
    plant(
        &app,
        &t,
        json!({"species_key": tomato, "location_key": location, "name": "Two"}),
    )
    .await;

    let one = format!("{}{}", plants_path(&t), key(&p));
    for (what, path) in [
        ("plant", one.clone()),
        ("plant page", plants_path(&t)),
        (
            "plant page, filtered",
            format!("{}?name=tw&limit=1", plants_path(&t)),
        ),
        ("phase status", format!("{one}/phase")),
    ] {
        for _ in 0..2 {
            statements::watch(t.id);
            let (s, body) = get_json(&app, &path).await;
            assert_eq!(s, 200, "{what}: {body}");
            let c = statements::read(t.id);
            assert_eq!(
                (c.tenant, c.transactions),
                (1, 0),
                "{what}: one statement, no BEGIN/SET: {c:?}"
            );
        }
    }
}

#[tokio::test]
async fn a_catalogue_write_reaches_the_other_instance() {
    let a = TestApp::full().await;
    let b = TestApp::full().await;
    let operator = a.platform_admin().await;
    let reader = b.user("hotcat").await;
    wait_confirmed(&b).await;
    let res = a
        .rest_as(&operator)
        .post(
            "/api/v1/glossary/",
            &json!({
                "slug": format!("hot-{}", &Uuid::now_v7().simple().to_string()[20..]),
                "label_en": "Hot term",
                "category": "botany",
                "definition_en": "Before."
            }),
        )
        .await;
    let status = res.status().as_u16();
    let created: Value = res.json().await.expect("json");
    assert_eq!(status, 201, "{created}");
    let key = created["key"].as_str().expect("key").to_owned();
    let path = format!("/api/v1/glossary/{key}");
    let read = || async {
        let res = b.rest_as(&reader).get(&path).await;
        assert_eq!(res.status().as_u16(), 200);
        res.json::<Value>().await.expect("json")
    };
    assert_eq!(read().await["definition_en"], "Before.");
    outgrow_the_bound().await;
    assert_eq!(read().await["definition_en"], "Before.");

    let res = a
        .rest_as(&operator)
        .patch(&path, &json!({"definition_en": "After."}))
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let changed = Instant::now();
    seen_within_bound("catalogue write", changed, || async {
        read().await["definition_en"] == "After."
    })
    .await;

    let res = a.rest_as(&operator).delete(&path).await;
    assert_eq!(res.status().as_u16(), 204);
    let changed = Instant::now();
    seen_within_bound("catalogue delete", changed, || async {
        b.rest_as(&reader).get(&path).await.status().as_u16() == 404
    })
    .await;
}

/// Runs `sql` (a count over `pg_stat_activity`) for the read connections (`kultiva-reads`)
/// of the database `url`.
async fn over_read_connections(url: &str, select: &str) -> i64 {
    let admin = sqlx::PgPool::connect(url).await.expect("connect");
    let sql = format!(
        "SELECT {select} FROM pg_stat_activity \
         WHERE datname = current_database() AND application_name = 'kultiva-reads'"
    );
    let n: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
        .fetch_one(&admin)
        .await
        .expect("pg_stat_activity");
    admin.close().await;
    n
}

async fn open_read_connections(url: &str) -> i64 {
    over_read_connections(url, "count(*)").await
}

/// The read connections of the database `url`, and how many were cut.
async fn cut_read_connections(url: &str) -> (i64, i64) {
    let open = open_read_connections(url).await;
    let cut = over_read_connections(url, "count(*) FILTER (WHERE pg_terminate_backend(pid))").await;
    (open, cut)
}

/// A service on a database of its own (named `db`: what a test does to its read connections
/// touches no other test) with `env` added, a garden with one site, and a burst of reads
/// that opens read connections. Returns the app, the database URL, the garden and the path.
async fn read_pool_app(
    db: &str,
    env: Vec<(&'static str, String)>,
) -> (TestApp, String, TenantRecord, String) {
    let url = crate::support::sibling_database(db).await;
    let mut all = vec![("DATABASE_URL", url.clone())];
    all.extend(env);
    let app = TestApp::spawn_with(Options {
        env: all,
        ..Options::default()
    })
    .await;
    let t = app.tenant(db).await;
    app.create_site(&t, &format!("{}-bed", t.slug)).await;
    let path = format!("/api/v1/t/{}/sites/", t.slug);
    let reads = join_all((0..9).map(|_| get_json(&app, &path))).await;
    assert!(reads.iter().all(|(s, _)| *s == 200), "{reads:?}");
    (app, url, t, path)
}

#[tokio::test]
async fn garden_reads_get_past_cut_read_connections_without_a_500() {
    let (app, url, t, path) =
        read_pool_app("readpool", vec![("DB_READ_CONNECTIONS", "2".to_owned())]).await;

    let (open, cut) = cut_read_connections(&url).await;
    assert!(
        (1..=2).contains(&open),
        "{open} read connections, at most 2"
    );
    assert_eq!(cut, open);
    // Right after the cut a read may meet a dead connection: an outage answer (503 in the
    // error format), never a 500, and never a wrong body.
    for _ in 0..4 {
        let (s, body) = get_json(&app, &path).await;
        match s {
            200 => assert_eq!(assert_own_items(&t, &body), 1),
            503 => assert_eq!(body["error_code"], "SERVICE_UNAVAILABLE", "{body}"),
            other => panic!("a read after the cut answered {other}: {body}"),
        }
    }
    // Once the test interval has passed, each connection is tested before use: every dead one
    // is replaced, and reads answer again.
    tokio::time::sleep(Duration::from_millis(250)).await;
    for _ in 0..6 {
        let (s, body) = get_json(&app, &path).await;
        assert_eq!(s, 200, "{body}");
        assert_eq!(assert_own_items(&t, &body), 1);
    }
    let status = app.state.placements().primary().reads().status();
    assert!(status.open <= 2, "{status:?}");
}

#[tokio::test]
async fn a_quiet_read_pool_gives_its_connections_back() {
    // After a burst the service goes quiet: the reaper's pass closes read connections idle
    // past DB_IDLE_TIMEOUT_SECS, so PostgreSQL frees them and their catalogue caches without
    // waiting for another read.
    let (app, url, t, path) = read_pool_app(
        "readidle",
        vec![
            ("DB_READ_CONNECTIONS", "3".to_owned()),
            ("DB_IDLE_TIMEOUT_SECS", "1".to_owned()),
            // A pass every second (half the bound).
            ("TENANT_PROVISIONING_TIMEOUT_SECONDS", "2".to_owned()),
        ],
    )
    .await;
    let open = open_read_connections(&url).await;
    assert!(
        (1..=3).contains(&open),
        "{open} read connections after the burst"
    );

    let mut left = open;
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        left = open_read_connections(&url).await;
        if left == 0 {
            break;
        }
    }
    assert_eq!(left, 0, "idle read connections still open in PostgreSQL");
    assert_eq!(app.state.placements().primary().reads().status().open, 0);
    // The pool opens a fresh connection for the next read.
    let (s, body) = get_json(&app, &path).await;
    assert_eq!(s, 200, "{body}");
    assert_eq!(assert_own_items(&t, &body), 1);
}
