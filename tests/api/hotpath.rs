//! The hot path: in-process caches with invalidation across server instances (two services on
//! one PostgreSQL and Redis), their failure modes (listener lost, Redis down), and the tenant
//! scope of `TenantTx` under interleaving, failed and cancelled requests.

use std::future::Future;
use std::task::Poll;
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use futures_util::future::join_all;
use kultiva::auth::Role;
use kultiva::cache::BOUND;
use kultiva::tenancy::{TenantRecord, TenantTx};
use reqwest::Method;
use serde_json::{Value, json};
use uuid::Uuid;

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

fn id_of(user: &TestUser) -> Uuid {
    Uuid::parse_str(&user.key).expect("user key")
}

async fn post_site(app: &TestApp, user: &TestUser, slug: &str, name: &str) -> u16 {
    app.call(
        Method::POST,
        &format!("/api/v1/t/{slug}/sites/"),
        Some(&user.bearer()),
        Some(&json!({"name": name, "kind": "garden"})),
    )
    .await
    .status()
    .as_u16()
}

async fn get_status(app: &TestApp, user: &TestUser, path: &str) -> u16 {
    app.call(Method::GET, path, Some(&user.bearer()), None)
        .await
        .status()
        .as_u16()
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
        b.state.caches().role(id_of(&member), tenant.id),
        Some(Role::Admin),
        "B caches the role"
    );
    outgrow_the_bound().await;
    assert_eq!(post_site(&b, &member, &slug, "Still member").await, 201);

    // Downgraded on A: B refuses the member's next writes within the bound.
    let res = a
        .call(
            Method::PATCH,
            &format!("/api/v1/tenants/{slug}/members/{}", member.key),
            Some(&admin.bearer()),
            Some(&json!({"role": "viewer"})),
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
        .call(
            Method::DELETE,
            &format!("/api/v1/tenants/{slug}/members/{}", member.key),
            Some(&admin.bearer()),
            None,
        )
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
        .call(
            Method::POST,
            &format!("/api/v1/admin/tenants/{slug}/deactivate"),
            Some(&operator.bearer()),
            None,
        )
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
        .call(
            Method::POST,
            &format!("/api/v1/admin/users/{}/deactivate", viewer.key),
            Some(&operator.bearer()),
            None,
        )
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
    .bind(id_of(user))
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
    assert_eq!(
        app.state.caches().role(id_of(&member), tenant.id),
        Some(Role::Admin)
    );
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

/// `SELECT name, current_schema()` through a `TenantTx`: every row must be the tenant's own.
async fn names_in(tx: &mut TenantTx) -> Result<Vec<(String, String)>, sqlx::Error> {
    sqlx::query_as("SELECT name, current_schema()::text FROM sites ORDER BY name")
        .fetch_all(tx.conn())
        .await
}

/// A pooled connection carries no tenant scope and no open transaction.
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
        let path: String = sqlx::query_scalar("SELECT current_setting('search_path')")
            .fetch_one(&mut **conn)
            .await
            .expect("search_path");
        assert_eq!(path, "platform", "a scope was left behind");
        let err = sqlx::query_scalar::<_, i64>("SELECT count(*) FROM sites")
            .fetch_one(&mut **conn)
            .await
            .expect_err("no tenant table is reachable unscoped");
        let code = err
            .as_database_error()
            .and_then(|e| e.code().map(|c| c.into_owned()));
        assert_eq!(code.as_deref(), Some("42P01"), "{err}");
        // Outside a transaction block a savepoint is refused.
        let err = sqlx::query("SAVEPOINT probe")
            .execute(&mut **conn)
            .await
            .expect_err("a transaction was left open");
        let code = err
            .as_database_error()
            .and_then(|e| e.code().map(|c| c.into_owned()));
        assert_eq!(code.as_deref(), Some("25P01"), "{err}");
    }
}

#[tokio::test]
async fn interleaved_tenants_on_two_connections_only_ever_see_their_own_rows() {
    let app = TestApp::spawn_with(Options {
        max_connections: Some(2),
        ..Options::default()
    })
    .await;
    let mut tenants = Vec::new();
    for i in 0..6 {
        let tenant = app.tenant(&format!("iso{i}")).await;
        for n in 0..3 {
            app.create_site(&tenant, &format!("{}-{n}", tenant.slug))
                .await;
        }
        tenants.push(tenant);
    }
    let expected = |t: &TenantRecord| {
        (0..3)
            .map(|n| (format!("{}-{n}", t.slug), t.schema_name.as_str().to_owned()))
            .collect::<Vec<_>>()
    };

    let workers = (0..24).map(|w| {
        let (app, tenants) = (&app, &tenants);
        async move {
            for round in 0..12 {
                let tenant = &tenants[(w * 7 + round * 5) % tenants.len()];
                match (w + round) % 5 {
                    // Through the API (tenant hoop, caches, TenantTx::begin).
                    0 => {
                        let res = app.get(&format!("/api/v1/t/{}/sites/", tenant.slug)).await;
                        assert_eq!(res.status().as_u16(), 200);
                        let body: Value = res.json().await.expect("json");
                        let names: Vec<String> = body["items"]
                            .as_array()
                            .expect("items")
                            .iter()
                            .map(|s| s["name"].as_str().expect("name").to_owned())
                            .collect();
                        let want: Vec<String> =
                            expected(tenant).into_iter().map(|(n, _)| n).collect();
                        assert_eq!(names, want, "rows of another tenant");
                    }
                    // A read transaction.
                    1 => {
                        let mut tx = TenantTx::read(&app.state, tenant).await.expect("read");
                        assert_eq!(names_in(&mut tx).await.expect("rows"), expected(tenant));
                        tx.commit().await.expect("end");
                    }
                    // A write transaction that reads.
                    2 => {
                        let mut tx = TenantTx::begin(&app.state, tenant).await.expect("begin");
                        assert_eq!(names_in(&mut tx).await.expect("rows"), expected(tenant));
                        tx.commit().await.expect("commit");
                    }
                    // A failed statement, then the transaction is dropped.
                    3 => {
                        let mut tx = TenantTx::read(&app.state, tenant).await.expect("read");
                        let failed = sqlx::query("SELECT no_such_column FROM sites")
                            .execute(tx.conn())
                            .await;
                        assert!(failed.is_err());
                        drop(tx);
                    }
                    // Cancelled mid-statement.
                    _ => {
                        let cancelled = tokio::time::timeout(Duration::from_millis(5), async {
                            let mut tx = TenantTx::begin(&app.state, tenant).await.expect("begin");
                            sqlx::query("SELECT pg_sleep(0.02)")
                                .execute(tx.conn())
                                .await?;
                            names_in(&mut tx).await
                        })
                        .await;
                        if let Ok(done) = cancelled {
                            assert_eq!(done.expect("rows"), expected(tenant));
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
async fn failed_and_cancelled_transactions_leave_no_scope_behind() {
    let app = TestApp::spawn_with(Options {
        max_connections: Some(1),
        ..Options::default()
    })
    .await;
    let a = app.tenant("scope-a").await;
    let b = app.tenant("scope-b").await;
    app.create_site(&a, "only-a").await;

    for read in [false, true] {
        // Cancelled while `BEGIN …; SET LOCAL …` is on its way: polled a few times, then
        // dropped (some of these land between sending BEGIN and its answer).
        for polls in 1..=12 {
            let mut begin = if read {
                TenantTx::read(&app.state, &a).boxed()
            } else {
                TenantTx::begin(&app.state, &a).boxed()
            };
            for poll in 0..polls {
                if poll > 0 {
                    tokio::task::yield_now().await;
                }
                let polled = std::future::poll_fn(|cx| Poll::Ready(begin.as_mut().poll(cx))).await;
                if let Poll::Ready(done) = polled {
                    drop(done.expect("begin"));
                    break;
                }
            }
            drop(begin);
            assert_clean(&app).await;
        }

        // Cancelled while the statement runs on the one connection.
        let cancelled = tokio::time::timeout(Duration::from_millis(50), async {
            let mut tx = if read {
                TenantTx::read(&app.state, &a).await
            } else {
                TenantTx::begin(&app.state, &a).await
            }
            .expect("begin");
            sqlx::query("SELECT pg_sleep(0.3)")
                .execute(tx.conn())
                .await
                .expect("sleep");
            tx
        })
        .await;
        assert!(cancelled.is_err(), "the statement was cancelled");
        assert_clean(&app).await;

        // Failed: the statement errors and the transaction is dropped unfinished.
        let mut tx = if read {
            TenantTx::read(&app.state, &a).await
        } else {
            TenantTx::begin(&app.state, &a).await
        }
        .expect("begin");
        assert!(
            sqlx::query("SELECT * FROM no_such_table")
                .execute(tx.conn())
                .await
                .is_err()
        );
        drop(tx);
        assert_clean(&app).await;

        // The same connection now serves B with B's rows only.
        let mut tx = TenantTx::read(&app.state, &b).await.expect("read b");
        assert_eq!(names_in(&mut tx).await.expect("rows"), Vec::new());
        tx.commit().await.expect("end");
    }

    // A read transaction refuses writes.
    let mut tx = TenantTx::read(&app.state, &a).await.expect("read");
    let err = sqlx::query("INSERT INTO sites (id, name, kind) VALUES ($1, 'x', 'garden')")
        .bind(Uuid::now_v7())
        .execute(tx.conn())
        .await
        .expect_err("read-only");
    assert_eq!(
        err.as_database_error()
            .and_then(|e| e.code().map(|c| c.into_owned()))
            .as_deref(),
        Some("25006")
    );
    drop(tx);
    assert_eq!(app.site_count(&a).await, 1);
    assert_clean(&app).await;
}

#[tokio::test]
async fn a_catalogue_write_reaches_the_other_instance() {
    let a = TestApp::full().await;
    let b = TestApp::full().await;
    let operator = a.platform_admin().await;
    let reader = b.user("hotcat").await;
    wait_confirmed(&b).await;
    let res = a
        .call(
            Method::POST,
            "/api/v1/glossary/",
            Some(&operator.bearer()),
            Some(&json!({
                "slug": format!("hot-{}", &Uuid::now_v7().simple().to_string()[20..]),
                "label_en": "Hot term",
                "category": "botany",
                "definition_en": "Before."
            })),
        )
        .await;
    let status = res.status().as_u16();
    let created: Value = res.json().await.expect("json");
    assert_eq!(status, 201, "{created}");
    let key = created["key"].as_str().expect("key").to_owned();
    let path = format!("/api/v1/glossary/{key}");
    let read = || async {
        let res = b
            .call(Method::GET, &path, Some(&reader.bearer()), None)
            .await;
        assert_eq!(res.status().as_u16(), 200);
        res.json::<Value>().await.expect("json")
    };
    assert_eq!(read().await["definition_en"], "Before.");
    outgrow_the_bound().await;
    assert_eq!(read().await["definition_en"], "Before.");

    let res = a
        .call(
            Method::PATCH,
            &path,
            Some(&operator.bearer()),
            Some(&json!({"definition_en": "After."})),
        )
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let changed = Instant::now();
    seen_within_bound("catalogue write", changed, || async {
        read().await["definition_en"] == "After."
    })
    .await;

    let res = a
        .call(Method::DELETE, &path, Some(&operator.bearer()), None)
        .await;
    assert_eq!(res.status().as_u16(), 204);
    let changed = Instant::now();
    seen_within_bound("catalogue delete", changed, || async {
        b.call(Method::GET, &path, Some(&reader.bearer()), None)
            .await
            .status()
            .as_u16()
            == 404
    })
    .await;
}
