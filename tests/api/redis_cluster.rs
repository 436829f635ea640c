//! Redis Cluster (`REDIS_URL=redis+cluster://…`): every key the service writes carries exactly
//! one hash tag, readiness checks the cluster's state, an unreachable or non-cluster target is
//! a 503 (never a 500), and a URL that says the wrong kind of server is refused at start.
//!
//! These tests need a cluster: `TEST_REDIS_CLUSTER_URL` (infra/test's cluster step sets it to
//! its private 3-node cluster, see README "Redis Cluster"). Without it they return at once
//! with a line on stderr saying so. The non-cluster server they compare with is
//! `TEST_REDIS_SINGLE_URL`, else `TEST_REDIS_URL` when that names one server.

use std::collections::BTreeSet;

use kultiva::mcp::idempotency::{self, Begin, Scope};
use serde_json::{Map, Value, json};
use uuid::Uuid;

use crate::support::{PASSWORD, TestApp, assert_error, unique_slug};

/// The cluster URL, or `None` (and a line saying why the test does nothing).
fn cluster_url(test: &str) -> Option<String> {
    match std::env::var("TEST_REDIS_CLUSTER_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            eprintln!(
                "{test}: SKIPPED: TEST_REDIS_CLUSTER_URL is unset (infra/test's cluster step \
                 sets it; see README \"Redis Cluster\")"
            );
            None
        }
    }
}

/// `host:port` of a single (non-cluster) Redis server, if the run names one.
fn single_server() -> Option<String> {
    let url = std::env::var("TEST_REDIS_SINGLE_URL")
        .ok()
        .filter(|u| !u.is_empty())
        .or_else(|| {
            std::env::var("TEST_REDIS_URL")
                .ok()
                .filter(|u| u.starts_with("redis://"))
        })?;
    let rest = url.strip_prefix("redis://")?;
    let rest = rest.rsplit_once('@').map_or(rest, |(_, r)| r);
    rest.split('/')
        .next()
        .filter(|h| !h.is_empty())
        .map(str::to_owned)
}

/// `host:port` of every node in a `redis+cluster://` URL.
fn nodes_of(url: &str) -> Vec<String> {
    let rest = url.trim_start_matches("redis+cluster://");
    let rest = rest.rsplit_once('@').map_or(rest, |(_, r)| r);
    rest.split('/')
        .next()
        .unwrap_or(rest)
        .split(',')
        .map(|h| h.trim().to_owned())
        .collect()
}

/// Every key under `prefix` on every node of the cluster (`SCAN` on each node: a node answers
/// for its own slots only).
async fn keys_on_every_node(cluster: &str, prefix: &str) -> BTreeSet<String> {
    let mut keys = BTreeSet::new();
    for node in nodes_of(cluster) {
        let client = redis::Client::open(format!("redis://{node}/")).expect("node url");
        let mut conn = client
            .get_multiplexed_async_connection()
            .await
            .expect("node connection");
        let mut cursor = 0u64;
        loop {
            let (next, batch): (u64, Vec<String>) = redis::cmd("SCAN")
                .arg(cursor)
                .arg("MATCH")
                .arg(format!("{prefix}:*"))
                .arg("COUNT")
                .arg(1000)
                .query_async(&mut conn)
                .await
                .expect("SCAN");
            keys.extend(batch);
            if next == 0 {
                break;
            }
            cursor = next;
        }
    }
    keys
}

/// The hash tag Redis Cluster places a key by: between the first `{` and the next `}`.
fn hash_tag(key: &str) -> Option<&str> {
    let open = key.find('{')?;
    let close = key[open + 1..].find('}')? + open + 1;
    (close > open + 1).then(|| &key[open + 1..close])
}

#[tokio::test]
async fn every_key_the_service_writes_on_a_cluster_carries_exactly_one_hash_tag() {
    let Some(cluster) = cluster_url("every_key_…_carries_exactly_one_hash_tag") else {
        return;
    };
    let prefix = unique_slug("ktc");
    let app = TestApp::full_env(&[
        ("REDIS_URL", &cluster),
        ("REDIS_KEY_PREFIX", &prefix),
        ("MCP_SERVER_ENABLED", "true"),
        ("RATE_LIMIT_AUTH_PER_MINUTE", "6"),
    ])
    .await;
    assert!(app.state.redis().is_cluster());

    // Registration (mail throttle), login (refresh family + user index, auth limit).
    let user = app.user("cluster").await;
    // Refresh: rotation on the family, the index extended (two slots, one request).
    let res = app
        .client
        .post(app.url("/api/v1/auth/refresh"))
        .header("cookie", user.session.cookie_header())
        .header("x-csrf-token", user.session.csrf.clone().expect("csrf"))
        .send()
        .await
        .expect("refresh sent");
    assert_eq!(res.status().as_u16(), 200, "refresh on a cluster");
    let rotated = crate::support::session_of(res).await;
    assert_ne!(rotated.refresh, user.session.refresh, "a new token");

    // A tool-server session, used.
    let key = app.api_key(&user, None).await;
    let session = crate::mcp_cost::initialize(&app, &key).await;
    assert_eq!(
        crate::mcp_cost::use_session(&app, &key, &session).await,
        200
    );

    // An idempotency record: claimed, finished, replayed.
    let account = user.id();
    let idem = Uuid::new_v4().to_string();
    let scope = Scope {
        account,
        tenant: None,
        tool: "create_plant",
        key: &idem,
    };
    let Ok(Begin::Execute(claim)) = idempotency::begin(&app.state, &scope, "args").await else {
        panic!("the first call executes");
    };
    let envelope: Map<String, Value> = json!({"summary": "done"})
        .as_object()
        .cloned()
        .expect("object");
    claim.finish(&app.state, &envelope).await;
    match idempotency::begin(&app.state, &scope, "args").await {
        Ok(Begin::Replay(stored)) => assert_eq!(stored, envelope),
        _ => panic!("the second call replays"),
    }

    // The auth limit (6 a minute, shared by login and register): wrong passwords until 429.
    let mut refused = false;
    for _ in 0..6 {
        let res = app
            .login_response(&user.email, "wrong password", false)
            .await;
        if res.status().as_u16() == 429 {
            assert!(crate::support::header(&res, "retry-after").is_some());
            refused = true;
            break;
        }
        assert_eq!(res.status().as_u16(), 401);
    }
    assert!(refused, "the auth limit held on the cluster");

    // Logout-all reaches the family through the index on another slot.
    let res = app
        .client
        .post(app.url("/api/v1/auth/logout-all"))
        .header("authorization", format!("Bearer {}", rotated.access))
        .header("cookie", rotated.cookie_header())
        .header("x-csrf-token", rotated.csrf.clone().expect("csrf"))
        .send()
        .await
        .expect("logout-all sent");
    assert_eq!(res.status().as_u16(), 204, "logout-all");

    let keys = keys_on_every_node(&cluster, &prefix).await;
    let kinds: BTreeSet<&str> = keys
        .iter()
        .filter_map(|k| {
            let rest = k.strip_prefix(&format!("{prefix}:"))?;
            Some(&rest[..rest.find(":{")?])
        })
        .collect();
    for kind in ["mailq", "rt", "mcp:session", "mcp:idem", "rl"] {
        assert!(kinds.contains(kind), "a {kind} key was written: {keys:?}");
    }
    for key in &keys {
        assert_eq!(key.matches('{').count(), 1, "one tag opens: {key}");
        assert_eq!(key.matches('}').count(), 1, "one tag closes: {key}");
        assert!(hash_tag(key).is_some(), "a non-empty tag: {key}");
    }
    // Logout-all dropped the index; the family stays, revoked, until it expires.
    let mut conn = app.state.redis().get().await.expect("cluster connection");
    let family = app.state.redis_key(
        "rt",
        rotated
            .refresh
            .as_deref()
            .and_then(|r| r.split('.').next())
            .expect("family"),
        &[],
    );
    let revoked: Option<String> = redis::cmd("HGET")
        .arg(&family)
        .arg("revoked")
        .query_async(&mut conn)
        .await
        .expect("HGET");
    assert_eq!(revoked.as_deref(), Some("1"), "{family} revoked");
    assert!(!keys.contains(&app.state.redis_key("rtu", &user.key, &[])));
    let res = app
        .client
        .post(app.url("/api/v1/auth/refresh"))
        .header("cookie", rotated.cookie_header())
        .header("x-csrf-token", rotated.csrf.clone().expect("csrf"))
        .send()
        .await
        .expect("refresh sent");
    assert_error(res, 401, "INVALID_TOKEN").await;
}

#[tokio::test]
async fn readiness_needs_a_cluster_in_state_ok_and_an_outage_is_503_not_500() {
    let Some(cluster) = cluster_url("readiness_needs_a_cluster_in_state_ok") else {
        return;
    };
    let app = TestApp::full_env(&[("REDIS_URL", &cluster)]).await;
    let res = app.get("/api/v1/health/ready").await;
    assert_eq!(res.status().as_u16(), 200);
    let body: Value = res.json().await.expect("json");
    assert_eq!(
        body,
        json!({"status": "ready", "database": true, "redis": true})
    );
    let user = app.user("ready").await;

    // Nothing listens on port 1: no node answers.
    let dead = TestApp::full_env(&[("REDIS_URL", "redis+cluster://127.0.0.1:1,127.0.0.1:2")]).await;
    let res = dead.get("/api/v1/health/ready").await;
    assert_eq!(res.status().as_u16(), 503);
    let body: Value = res.json().await.expect("json");
    assert_eq!(body["redis"], false, "{body}");
    assert_eq!(body["database"], true, "{body}");
    // A login needs the refresh-token store: 503 with Retry-After, not 500, and no session.
    let res = dead.login_response(&user.email, PASSWORD, false).await;
    assert!(crate::support::header(&res, "retry-after").is_some());
    assert!(!crate::support::set_cookies(&res).contains_key("svc_refresh"));
    assert_error(res, 503, "SERVICE_UNAVAILABLE").await;

    // A server that is not in cluster mode, named as a cluster (the start-up check is the
    // binary's; a service built without it must still not call this ready).
    match single_server() {
        Some(single) => {
            let wrong =
                TestApp::full_env(&[("REDIS_URL", &format!("redis+cluster://{single}"))]).await;
            let res = wrong.get("/api/v1/health/ready").await;
            assert_eq!(res.status().as_u16(), 503);
            let body: Value = res.json().await.expect("json");
            assert_eq!(body["redis"], false, "{body}");
            let res = wrong.login_response(&user.email, PASSWORD, false).await;
            assert_error(res, 503, "SERVICE_UNAVAILABLE").await;
        }
        None => eprintln!(
            "no single Redis server named (TEST_REDIS_SINGLE_URL): the non-cluster case is not run"
        ),
    }
}

#[tokio::test]
async fn a_url_that_names_the_wrong_kind_of_server_is_refused_at_start() {
    let Some(cluster) = cluster_url("a_url_that_names_the_wrong_kind_of_server") else {
        return;
    };
    let serve = |redis_url: &str| {
        crate::cli::kultiva(
            &["serve"],
            &[("REDIS_URL", redis_url), ("BIND_ADDRESS", "127.0.0.1:0")],
        )
    };
    // A cluster node named as one server.
    let node = nodes_of(&cluster).remove(0);
    let out = serve(&format!("redis://{node}/"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "refused: {stderr}");
    assert!(
        stderr.contains("runs in cluster mode") && stderr.contains("redis+cluster://"),
        "{stderr}"
    );
    // Only database 0 in a cluster: a configuration error naming the variable.
    let out = serve(&format!("{cluster}/2"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("REDIS_URL") && stderr.contains("only database 0"),
        "{stderr}"
    );
    match single_server() {
        Some(single) => {
            let out = serve(&format!("redis+cluster://{single}"));
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(!out.status.success(), "refused: {stderr}");
            assert!(
                stderr.contains("not in cluster mode") && stderr.contains(&single),
                "{stderr}"
            );
        }
        None => eprintln!(
            "no single Redis server named (TEST_REDIS_SINGLE_URL): redis+cluster:// for one \
             server is not tried"
        ),
    }
}
