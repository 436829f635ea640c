//! What the tool server itself costs per call, measured where it is spent: PostgreSQL
//! statements (every statement sqlx runs, from its statement events) and Redis commands (Redis
//! `MONITOR`, narrowed to the service's own key prefix), on a database of its own so that no
//! other test's catalogue writes empty this service's caches mid-measurement. And what the
//! savings must not cost: sessions ended or expired elsewhere, new and removed memberships,
//! audit rows through a full channel and a graceful shutdown.

use std::fmt::Debug;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kultiva::auth::Role;
use kultiva::state::audit::{self, AuditEntry};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tracing::field::{Field, Visit};
use tracing::span;
use tracing::subscriber::Interest;
use uuid::Uuid;

use crate::mcp_tools::{Rpc, bearer, species_key};
use crate::support::{Options, TestApp, base_env, database_url, redis_nodes, unique_slug};

// ---------------------------------------------------------------------------------------------
// Counting PostgreSQL statements and Redis commands
// ---------------------------------------------------------------------------------------------

/// Every statement sqlx finished in this process (nextest runs each test in a process of its
/// own, so these are this test's service's statements).
static STATEMENTS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// A global subscriber that keeps sqlx's statement events (target `sqlx::query`, level debug)
/// and nothing else.
struct StatementLog;

#[derive(Default)]
struct Sql {
    summary: String,
    statement: String,
}

impl Visit for Sql {
    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "summary" => value.clone_into(&mut self.summary),
            "db.statement" => value.clone_into(&mut self.statement),
            _ => {}
        }
    }

    fn record_debug(&mut self, _: &Field, _: &dyn Debug) {}
}

impl tracing::Subscriber for StatementLog {
    fn register_callsite(&self, meta: &'static tracing::Metadata<'static>) -> Interest {
        if meta.target() == "sqlx::query" {
            Interest::always()
        } else {
            Interest::never()
        }
    }

    fn enabled(&self, meta: &tracing::Metadata<'_>) -> bool {
        meta.target() == "sqlx::query"
    }

    fn new_span(&self, _: &span::Attributes<'_>) -> span::Id {
        span::Id::from_u64(1)
    }

    fn record(&self, _: &span::Id, _: &span::Record<'_>) {}

    fn record_follows_from(&self, _: &span::Id, _: &span::Id) {}

    fn event(&self, event: &tracing::Event<'_>) {
        let mut sql = Sql::default();
        event.record(&mut sql);
        let text = if sql.statement.trim().is_empty() {
            sql.summary
        } else {
            sql.statement
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        };
        if let Ok(mut all) = STATEMENTS.lock() {
            all.push(text);
        }
    }

    fn enter(&self, _: &span::Id) {}

    fn exit(&self, _: &span::Id) {}
}

fn take_statements() -> Vec<String> {
    STATEMENTS
        .lock()
        .map(|mut all| std::mem::take(&mut *all))
        .unwrap_or_default()
}

/// The commands clients sent Redis that name `prefix` (every key of one service carries its
/// prefix); the commands a Lua script runs inside its one `EVALSHA` (`MONITOR` shows them as
/// `[0 lua]`) are not round trips and are left out. With a Redis Cluster every node is
/// monitored (each runs the commands of its slots); the lines are in the order each node ran
/// them, node after node.
struct Monitor {
    prefix: String,
    nodes: Vec<Monitored>,
}

/// One node's `MONITOR`: its address, the lines kept so far, the reading task.
type Monitored = (String, Arc<Mutex<Vec<String>>>, tokio::task::JoinHandle<()>);

impl Monitor {
    async fn start(prefix: &str) -> Self {
        let mut nodes = Vec::new();
        for node in redis_nodes() {
            let mut stream = tokio::net::TcpStream::connect(&node)
                .await
                .expect("connect to Redis");
            stream
                .write_all(b"MONITOR\r\n")
                .await
                .expect("send MONITOR");
            let mut reader = BufReader::new(stream);
            let mut ok = String::new();
            reader.read_line(&mut ok).await.expect("MONITOR answer");
            assert!(ok.starts_with("+OK"), "MONITOR refused: {ok}");
            let lines = Arc::new(Mutex::new(Vec::new()));
            let kept = Arc::clone(&lines);
            let wanted = prefix.to_owned();
            let task = tokio::spawn(async move {
                let mut line = String::new();
                loop {
                    line.clear();
                    match reader.read_line(&mut line).await {
                        Ok(0) | Err(_) => return,
                        Ok(_) if line.contains(&wanted) && !line.contains(" lua]") => {
                            if let Ok(mut all) = kept.lock() {
                                all.push(line.trim().to_owned());
                            }
                        }
                        Ok(_) => {}
                    }
                }
            });
            nodes.push((node, lines, task));
        }
        Self {
            prefix: prefix.to_owned(),
            nodes,
        }
    }

    /// Every command up to now: a marker sent to each node afterwards comes out of its
    /// `MONITOR` after them.
    async fn finish(self) -> Vec<String> {
        let marker = format!("{}:marker:{}", self.prefix, Uuid::new_v4().simple());
        let mut commands = Vec::new();
        for (node, lines, task) in self.nodes {
            let client = redis::Client::open(format!("redis://{node}/")).expect("redis url");
            let mut conn = client
                .get_multiplexed_async_connection()
                .await
                .expect("redis connection");
            let _: String = redis::cmd("ECHO")
                .arg(&marker)
                .query_async(&mut conn)
                .await
                .expect("ECHO");
            let deadline = Instant::now() + Duration::from_secs(5);
            loop {
                let seen = lines.lock().map(|all| all.clone()).unwrap_or_default();
                if let Some(pos) = seen.iter().position(|l| l.contains(&marker)) {
                    task.abort();
                    commands.extend_from_slice(&seen[..pos]);
                    break;
                }
                assert!(
                    Instant::now() < deadline,
                    "MONITOR of {node} did not show the marker"
                );
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
        commands
    }
}

/// A statement or command sorted by what it is for.
fn kinds<'a>(items: &'a [String], rules: &[(&'static str, &str)]) -> Vec<(&'static str, &'a str)> {
    items
        .iter()
        .map(|item| {
            let kind = rules
                .iter()
                .find(|(_, needle)| item.contains(needle))
                .map_or("other", |(kind, _)| *kind);
            (kind, item.as_str())
        })
        .collect()
}

fn count(kinds: &[(&'static str, &str)], kind: &str) -> usize {
    kinds.iter().filter(|(k, _)| *k == kind).count()
}

fn of_kind<'a>(kinds: &[(&'static str, &'a str)], kind: &str) -> Vec<&'a str> {
    kinds
        .iter()
        .filter(|(k, _)| *k == kind)
        .map(|(_, s)| *s)
        .collect()
}

/// Statements: the cache feed's pings (every 200 ms, not a call's), the audit writer's batched
/// INSERTs and the photo rendition worker's job claim (every 2 s; both off the call's path),
/// everything else is on a call's path.
const STATEMENT_KINDS: &[(&str, &str)] = &[
    ("ping", "pg_notify"),
    ("audit", "platform.mcp_audit_log"),
    ("renditions", "platform.photo_rendition_jobs"),
];

/// Redis commands by key: the general rate limit, sessions, idempotency records.
const COMMAND_KINDS: &[(&str, &str)] = &[
    ("rate_limit", ":rl:"),
    ("session", ":mcp:session:"),
    ("idempotency", ":mcp:idem"),
];

/// Waits (bounded) until the service's cache feed has confirmed its listener: from then on,
/// entries loaded stay in memory (otherwise every entry lives 0.9 s only).
async fn feed_confirmed(app: &TestApp) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !app.state.caches().feed().is_confirmed() {
        assert!(
            Instant::now() < deadline,
            "cache feed not confirmed in 10 s"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn audit_rows(pool: &sqlx::PgPool, account: Uuid) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM platform.mcp_audit_log WHERE account_id = $1")
        .bind(account)
        .fetch_one(pool)
        .await
        .expect("count audit rows")
}

/// Waits (bounded, 5 s) until the account has exactly `n` audit rows.
async fn audit_rows_become(pool: &sqlx::PgPool, account: Uuid, n: i64) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let got = audit_rows(pool, account).await;
        if got >= n {
            assert_eq!(got, n, "exactly {n} audit rows");
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{got} of {n} audit rows after 5 s"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

const CALLS: usize = 20;

/// The rate-limit draws of CALLS requests at a quota of 1,000,000/min: batches of 16
/// (`store::rate_lease`), one more per second a batch may lapse, and never one per request.
fn assert_batched_draws(draws: usize, elapsed: std::time::Duration, commands: &[String]) {
    let lapses = elapsed.as_secs() as usize + 1;
    assert!(
        draws <= CALLS.div_ceil(16) + lapses && draws < CALLS,
        "{draws} rate-limit draws for {CALLS} calls in {elapsed:?}: {commands:?}"
    );
}

/// A warm read `tools/call` (`get_species_phase_sequence`, answered from the catalogue in
/// memory): on its path no PostgreSQL statement at all, and at most one Redis command, the
/// general rate limit that every API request draws (REST too), drawn in batches of up to 16 at
/// this test's quota (`store::rate_lease`); the session is read from Redis at most once
/// per 0.9 s. Before this change each call also ran `GETEX` on its session and one query for
/// the caller's gardens (2 Redis commands and 1 statement per call). Each call leaves its audit
/// row, written off the path in batches.
#[tokio::test]
async fn a_warm_read_call_runs_no_statement_and_at_most_one_redis_command_on_its_path() {
    tracing::subscriber::set_global_default(StatementLog)
        .expect("the statement log is this process's only subscriber (run under nextest)");
    let database = crate::support::sibling_database("mcpcost").await;
    let app = TestApp::spawn_with(Options {
        env: vec![
            ("SERVICE_MODE", "full".to_owned()),
            ("MCP_SERVER_ENABLED", "true".to_owned()),
            ("DATABASE_URL", database),
        ],
        ..Options::default()
    })
    .await;
    crate::catalog::seeded(&app).await;
    feed_confirmed(&app).await;
    let user = app.user("cost").await;
    let account = user.id();
    let key = app.api_key(&user, None).await;
    let species = species_key(&app, &key, "tomatoides").await;
    let args = json!({"species_key": species});
    let mut rpc = Rpc::open(&app, &key).await;
    for _ in 0..3 {
        let result = rpc.call("get_species_phase_sequence", args.clone()).await;
        assert_eq!(result["isError"], false, "{result}");
    }
    // The warm-up calls' audit rows are written before the window opens, so the window's
    // audit INSERTs are its own calls' (a batch flushed late would count one more).
    audit_rows_become(app.state.platform_pool(), account, 3).await;
    let prefix = app.state.config().redis_key_prefix.clone();

    // JSON-RPC face.
    let monitor = Monitor::start(&prefix).await;
    take_statements();
    let started = Instant::now();
    for _ in 0..CALLS {
        let result = rpc.call("get_species_phase_sequence", args.clone()).await;
        assert_eq!(result["isError"], false, "{result}");
        assert_eq!(result["structuredContent"]["data"]["source"], "bound");
    }
    let elapsed = started.elapsed();
    let statements = take_statements();
    let commands = monitor.finish().await;
    let sql = kinds(&statements, STATEMENT_KINDS);
    let redis = kinds(&commands, COMMAND_KINDS);
    eprintln!(
        "{CALLS} tools/call in {elapsed:?}: statements on the path {}, audit INSERTs {}, \
         feed pings {}; Redis: rate limit {}, session {}, other {}",
        count(&sql, "other"),
        count(&sql, "audit"),
        count(&sql, "ping"),
        count(&redis, "rate_limit"),
        count(&redis, "session"),
        count(&redis, "other") + count(&redis, "idempotency"),
    );
    assert_eq!(
        of_kind(&sql, "other"),
        Vec::<&str>::new(),
        "statements on the path of a warm read call"
    );
    assert!(count(&sql, "audit") <= CALLS, "{statements:?}");
    assert_batched_draws(count(&redis, "rate_limit"), elapsed, &commands);
    // One session read per 0.9 s of calls at most (the entry may also expire mid-run).
    let session_reads = count(&redis, "session");
    let allowed = 1 + (elapsed.as_millis() / 900) as usize;
    assert!(
        session_reads <= allowed && session_reads < CALLS,
        "{session_reads} session reads in {elapsed:?}: {commands:?}"
    );
    assert_eq!(
        count(&redis, "other") + count(&redis, "idempotency"),
        0,
        "{commands:?}"
    );

    // The REST face: the same call, no session at all.
    let monitor = Monitor::start(&prefix).await;
    take_statements();
    let started = Instant::now();
    for _ in 0..CALLS {
        let res = app
            .rest_auth(Some(&bearer(&key)))
            .post("/api/v1/mcp/tools/get_species_phase_sequence", &args)
            .await;
        assert_eq!(res.status().as_u16(), 200);
        assert_eq!(
            header_of(&res, "content-type").as_deref(),
            Some("application/json; charset=utf-8")
        );
        let body: Value = res.json().await.expect("json");
        assert_eq!(body["data"]["source"], "bound", "{body}");
    }
    let statements = take_statements();
    let commands = monitor.finish().await;
    let sql = kinds(&statements, STATEMENT_KINDS);
    let redis = kinds(&commands, COMMAND_KINDS);
    assert_eq!(of_kind(&sql, "other"), Vec::<&str>::new(), "REST face");
    let draws = count(&redis, "rate_limit");
    assert_batched_draws(draws, started.elapsed(), &commands);
    assert_eq!(redis.len(), draws, "{commands:?}");

    // Every call is audited: 3 warm-up calls and two rounds.
    audit_rows_become(app.state.platform_pool(), account, 3 + 2 * CALLS as i64).await;
    let (_, activity) = crate::mcp_tools::call(&app, &key, "get_mcp_activity", json!({})).await;
    assert_eq!(activity["data"]["total"], 3 + 2 * CALLS, "{activity}");
}

fn header_of(res: &reqwest::Response, name: &str) -> Option<String> {
    crate::support::header(res, name)
}

// ---------------------------------------------------------------------------------------------
// Sessions in memory: an ended or expired session stops working within the bound
// ---------------------------------------------------------------------------------------------

/// The bound the README states: 0.9 s, "within one second".
const BOUND: Duration = Duration::from_secs(1);

pub(crate) async fn initialize(app: &TestApp, key: &str) -> String {
    let res = app
        .client
        .post(app.url("/api/v1/mcp"))
        .header("authorization", bearer(key))
        .json(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "tests", "version": "1"}}}),
        )
        .send()
        .await
        .expect("initialize sent");
    assert_eq!(res.status().as_u16(), 200);
    crate::support::header(&res, "mcp-session-id").expect("Mcp-Session-Id")
}

/// A `tools/call` of `list_tenants` in the session: the HTTP status.
pub(crate) async fn use_session(app: &TestApp, key: &str, session: &str) -> u16 {
    app.client
        .post(app.url("/api/v1/mcp"))
        .header("authorization", bearer(key))
        .header("mcp-session-id", session)
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "list_tenants", "arguments": {}}}))
        .send()
        .await
        .expect("call sent")
        .status()
        .as_u16()
}

/// Uses the session on `app` until it is refused (404); the refused request must have been
/// sent less than [`BOUND`] after `since`.
async fn refused_within_bound(app: &TestApp, key: &str, session: &str, since: Instant, what: &str) {
    loop {
        let sent = Instant::now();
        match use_session(app, key, session).await {
            404 => {
                assert!(
                    sent.duration_since(since) < BOUND,
                    "{what}: first refused {:?} after the change",
                    sent.duration_since(since)
                );
                return;
            }
            200 => assert!(
                since.elapsed() < BOUND * 3,
                "{what}: still served {:?} after the change",
                since.elapsed()
            ),
            other => panic!("{what}: status {other}"),
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Two replicas on one Redis: a session `DELETE`d on one is refused by that one at once and by
/// the other (which holds it in memory) within the bound; a session that vanishes from Redis
/// (what the idle expiry does) is refused by both within the bound; a session in use is renewed
/// in Redis although calls read it from memory.
#[tokio::test]
async fn an_ended_or_expired_session_is_refused_by_every_replica_within_the_bound() {
    let prefix = unique_slug("kt");
    let env = [
        ("MCP_SERVER_ENABLED", "true"),
        ("REDIS_KEY_PREFIX", prefix.as_str()),
    ];
    let a = TestApp::full_env(&env).await;
    let b = TestApp::full_env(&env).await;
    let user = a.user("sess").await;
    let key = a.api_key(&user, None).await;

    let session = initialize(&a, &key).await;
    assert_eq!(use_session(&a, &key, &session).await, 200);
    assert_eq!(use_session(&b, &key, &session).await, 200);
    assert!(
        b.state.caches().mcp_session(&session).is_some(),
        "b holds it"
    );
    let res = a
        .client
        .delete(a.url("/api/v1/mcp"))
        .header("authorization", bearer(&key))
        .header("mcp-session-id", &session)
        .send()
        .await
        .expect("delete sent");
    assert_eq!(res.status().as_u16(), 204);
    let ended = Instant::now();
    assert_eq!(
        use_session(&a, &key, &session).await,
        404,
        "at once where ended"
    );
    refused_within_bound(&b, &key, &session, ended, "DELETE on the other replica").await;

    // Expiry: the key disappears from Redis behind both replicas' backs.
    let session = initialize(&a, &key).await;
    let redis_key = kultiva::mcp::session::redis_key(&a.state, &session);
    let mut conn = a.state.shared_redis().connection().await.expect("redis");
    // Used for a while on both (from memory mostly): still renewed to the full idle time.
    let _: () = redis::cmd("EXPIRE")
        .arg(&redis_key)
        .arg(600)
        .query_async(&mut conn)
        .await
        .expect("EXPIRE");
    let until = Instant::now() + Duration::from_millis(1200);
    while Instant::now() < until {
        assert_eq!(use_session(&a, &key, &session).await, 200);
        assert_eq!(use_session(&b, &key, &session).await, 200);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let ttl: i64 = redis::cmd("TTL")
        .arg(&redis_key)
        .query_async(&mut conn)
        .await
        .expect("TTL");
    assert!(ttl > 12 * 3600 - 60, "renewed by use: ttl {ttl}");
    let _: i64 = redis::cmd("DEL")
        .arg(&redis_key)
        .query_async(&mut conn)
        .await
        .expect("DEL");
    let gone = Instant::now();
    refused_within_bound(&a, &key, &session, gone, "expired (replica a)").await;
    refused_within_bound(&b, &key, &session, gone, "expired (replica b)").await;
}

// ---------------------------------------------------------------------------------------------
// The caller's gardens in memory: new and removed memberships within the bound
// ---------------------------------------------------------------------------------------------

async fn listed_slugs(app: &TestApp, key: &str) -> Vec<String> {
    let (status, body) = crate::mcp_tools::call(app, key, "list_tenants", json!({})).await;
    assert_eq!(status, 200, "{body}");
    body["data"]["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|t| t["slug"].as_str().map(str::to_owned))
        .collect()
}

/// Polls until `listed_slugs` contains (or lacks) `slug`; the answer must come from a request
/// sent less than [`BOUND`] after `since`.
async fn listing_follows(app: &TestApp, key: &str, slug: &str, present: bool, since: Instant) {
    loop {
        let sent = Instant::now();
        if listed_slugs(app, key).await.iter().any(|s| s == slug) == present {
            assert!(
                sent.duration_since(since) < BOUND,
                "{slug} present={present} only {:?} after the change",
                sent.duration_since(since)
            );
            return;
        }
        assert!(
            since.elapsed() < BOUND * 3,
            "{slug} present={present} not seen"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The gardens a key may address are read from memory, yet a membership added behind the
/// service (SQL, no notification) appears, and a removed one or a suspended garden disappears,
/// within the bound.
#[tokio::test]
async fn new_and_removed_memberships_reach_the_tool_server_within_the_bound() {
    let app = TestApp::full_env(&[("MCP_SERVER_ENABLED", "true")]).await;
    feed_confirmed(&app).await;
    let user = app.user("gardens").await;
    let account = user.id();
    let key = app.api_key(&user, None).await;
    let tenant = app.tenant("mcpmem").await;
    let slug = tenant.slug.to_string();
    assert!(!listed_slugs(&app, &key).await.contains(&slug));

    app.add_member(&tenant, account, Role::Viewer).await;
    let added = Instant::now();
    listing_follows(&app, &key, &slug, true, added).await;

    kultiva::directory::memberships::repo::remove(app.state.platform_pool(), tenant.id, account)
        .await
        .expect("remove membership");
    let removed = Instant::now();
    listing_follows(&app, &key, &slug, false, removed).await;
}

// ---------------------------------------------------------------------------------------------
// Audit delivery: a full channel and a graceful shutdown lose no row
// ---------------------------------------------------------------------------------------------

fn entry(account: Uuid) -> AuditEntry {
    AuditEntry {
        account_id: account,
        api_key_id: None,
        tenant_id: None,
        tool_name: "list_tenants".into(),
        input_hash: "0".repeat(64),
        response_bytes: 2,
        duration_ms: 0,
        status: "ok",
        error_class: None,
        created_at: time::OffsetDateTime::now_utc(),
    }
}

/// With no worker reading (the service not yet serving), the channel fills: the calls after
/// it wait [`audit::FULL_WAIT`], then write their own rows (counted). Then the service serves
/// (its worker drains the channel), more rows are queued and the server is stopped gracefully
/// at once: when it has stopped and closed its pools, every row is in the table.
#[tokio::test]
async fn audit_rows_survive_a_full_channel_and_a_graceful_shutdown() {
    let mut env = base_env();
    env.insert("SERVICE_MODE".into(), "full".into());
    env.insert("MCP_SERVER_ENABLED".into(), "true".into());
    let config = kultiva::config::Config::from_map(&env).expect("config");
    kultiva::telemetry::init(config.log_format);
    let placements = kultiva::store::pg::Placements::connect_lazy(&config).expect("pools");
    let state = kultiva::state::AppState::with_placements(config, placements).expect("state");
    kultiva::tenancy::migrate::migrate_platform(state.platform_pool())
        .await
        .expect("migrations");
    let check = sqlx::PgPool::connect(&database_url()).await.expect("pool");
    let account = Uuid::new_v4();

    let over = 3;
    let started = Instant::now();
    for _ in 0..audit::CHANNEL_CAPACITY + over {
        audit::record(&state, entry(account)).await;
    }
    assert!(started.elapsed() >= audit::FULL_WAIT * over as u32);
    assert_eq!(state.mcp_audit().overflowed(), over as u64);
    assert_eq!(
        audit_rows(&check, account).await,
        over as i64,
        "written by the calls"
    );

    let bound = kultiva::serve::bind(state.config().bind_address)
        .await
        .expect("bind");
    let handle = bound.handle();
    let serving = tokio::spawn(bound.serve(state.clone()));
    let late = 1000;
    for _ in 0..late {
        audit::record(&state, entry(account)).await;
    }
    handle.stop_graceful(Duration::from_secs(5));
    tokio::time::timeout(Duration::from_secs(30), serving)
        .await
        .expect("server stopped in time")
        .expect("serve task");
    assert_eq!(
        audit_rows(&check, account).await,
        (audit::CHANNEL_CAPACITY + over + late) as i64,
        "every row written before the pools closed"
    );
    assert_eq!(state.mcp_audit().lost(), 0);
    sqlx::query("DELETE FROM platform.mcp_audit_log WHERE account_id = $1")
        .bind(account)
        .execute(&check)
        .await
        .expect("clean up");
}
