//! Rate limits: the per-IP login/registration budget, the general per-caller budget, both
//! shared through Redis by every replica with the same key prefix, client IPs behind trusted
//! proxies, and the in-process fallback while Redis is unreachable.
//!
//! Budgets here are small (2–6 per minute, so one request refills only after 10 s or more) and
//! every test's service has its own key prefix, so nothing else draws on them.

use serde_json::{Value, json};

use crate::support::{PASSWORD, TestApp, header, unique_slug};

/// A login that fails (unknown address): 401 while the budget lasts, then 429.
async fn login_from(app: &TestApp, forwarded_for: Option<&str>) -> reqwest::Response {
    let mut req = app.client.post(app.url("/api/v1/auth/login")).json(&json!({
        "email": "nobody-at-all@example.test",
        "password": "not the password",
        "remember_me": false,
    }));
    if let Some(xff) = forwarded_for {
        req = req.header("x-forwarded-for", xff);
    }
    req.send().await.expect("request sent")
}

async fn status_of(res: reqwest::Response) -> u16 {
    res.status().as_u16()
}

/// Asserts the 429 shape: `{error}` alone, naming the limit, and `Retry-After` ≥ 1 second
/// (at most one emission interval of the budget: 60 s / `per_minute`). Returns the text.
async fn assert_limited(res: reqwest::Response, per_minute: u64) -> String {
    assert_eq!(res.status().as_u16(), 429, "status");
    let retry: u64 = header(&res, "retry-after")
        .expect("Retry-After header")
        .parse()
        .expect("Retry-After in whole seconds");
    assert!(
        (1..=60 / per_minute).contains(&retry),
        "Retry-After {retry} for {per_minute}/min"
    );
    let ctype = header(&res, "content-type").unwrap_or_default();
    assert!(ctype.starts_with("application/json"), "{ctype}");
    // The security headers are on the 429 like on every answer.
    assert_eq!(
        header(&res, "x-content-type-options").as_deref(),
        Some("nosniff")
    );
    let body: Value = res.json().await.expect("429 body is JSON");
    let fields: Vec<&String> = body.as_object().expect("object").keys().collect::<Vec<_>>();
    assert_eq!(fields, ["error"], "a single field: {body}");
    let text = body["error"].as_str().expect("error text").to_owned();
    assert!(
        text.contains(&format!("{per_minute} ")) && text.contains("per minute"),
        "names the limit: {text}"
    );
    text
}

#[tokio::test]
async fn login_is_limited_per_ip_at_the_budget_plus_one() {
    let app = TestApp::full_env(&[("RATE_LIMIT_AUTH_PER_MINUTE", "3")]).await;
    // Registration draws on the same budget: 1 of 3.
    let email = format!("{}@example.test", unique_slug("rl-login"));
    assert_eq!(status_of(app.register(&email, PASSWORD).await).await, 201);
    // Two wrong passwords: 2 and 3 of 3.
    for _ in 0..2 {
        let res = app.login_response(&email, "wrong password!", false).await;
        assert_eq!(res.status().as_u16(), 401);
    }
    // The fourth auth request is refused before the handler runs, right password or not.
    let res = app.login_response(&email, PASSWORD, false).await;
    assert!(header(&res, "set-cookie").is_none(), "no session cookie");
    let text = assert_limited(res, 3).await;
    assert!(
        text.contains("login and registration") && text.contains("client IP"),
        "{text}"
    );
    // The refused attempt reached neither the password check nor the lockout counter.
    let (failed, last_login): (i32, Option<time::OffsetDateTime>) =
        sqlx::query_as("SELECT failed_logins, last_login_at FROM platform.users WHERE email = $1")
            .bind(&email)
            .fetch_one(app.state.platform_pool())
            .await
            .expect("user row");
    assert_eq!(failed, 2);
    assert_eq!(last_login, None);
    // Other routes are not on the auth budget (e-mail verification and password reset are).
    assert_eq!(app.get("/api/v1/health/live").await.status().as_u16(), 200);
    let res = app.get("/api/v1/auth/oauth/providers").await;
    assert_eq!(res.status().as_u16(), 200);
    let res = app
        .post_json(
            "/api/v1/auth/password-reset/request",
            &json!({"email": email}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 429);
}

#[tokio::test]
async fn a_refused_registration_writes_no_user() {
    let app = TestApp::full_env(&[("RATE_LIMIT_AUTH_PER_MINUTE", "2")]).await;
    let first = format!("{}@example.test", unique_slug("rl-reg"));
    let second = format!("{}@example.test", unique_slug("rl-reg"));
    assert_eq!(status_of(app.register(&first, PASSWORD).await).await, 201);
    assert_eq!(status_of(login_from(&app, None).await).await, 401);
    // Register and login share one budget: the third request of either is refused.
    let text = assert_limited(app.register(&second, PASSWORD).await, 2).await;
    assert!(text.contains("registration"), "{text}");
    for email in [&first, &second] {
        let rows: i64 = sqlx::query_scalar("SELECT count(*) FROM platform.users WHERE email = $1")
            .bind(email.as_str())
            .fetch_one(app.state.platform_pool())
            .await
            .expect("count");
        assert_eq!(rows, i64::from(email == &first), "{email}");
    }
}

#[tokio::test]
async fn two_replicas_with_one_prefix_share_the_budget() {
    let prefix = unique_slug("kt-replicas");
    let env = [
        ("SERVICE_MODE", "full"),
        ("REDIS_KEY_PREFIX", prefix.as_str()),
        ("RATE_LIMIT_AUTH_PER_MINUTE", "3"),
    ];
    let one = TestApp::spawn_env(&env).await;
    let two = TestApp::spawn_env(&env).await;
    assert_eq!(status_of(login_from(&one, None).await).await, 401);
    assert_eq!(status_of(login_from(&two, None).await).await, 401);
    assert_eq!(status_of(login_from(&one, None).await).await, 401);
    assert_limited(login_from(&two, None).await, 3).await;
    assert_limited(login_from(&one, None).await, 3).await;

    // A deployment with another prefix has budgets of its own.
    let other = TestApp::full_env(&[("RATE_LIMIT_AUTH_PER_MINUTE", "3")]).await;
    assert_eq!(status_of(login_from(&other, None).await).await, 401);
}

#[tokio::test]
async fn behind_a_trusted_proxy_each_forwarded_client_has_its_own_budget() {
    let app = TestApp::full_env(&[
        ("RATE_LIMIT_AUTH_PER_MINUTE", "2"),
        // The test client connects from loopback: it plays the proxy.
        ("TRUSTED_PROXIES", "127.0.0.1, ::1"),
    ])
    .await;
    let client = Some("203.0.113.7");
    assert_eq!(status_of(login_from(&app, client).await).await, 401);
    assert_eq!(status_of(login_from(&app, client).await).await, 401);
    assert_limited(login_from(&app, client).await, 2).await;
    // The same client with a made-up hop in front is still the same client.
    assert_limited(login_from(&app, Some("192.0.2.1, 203.0.113.7")).await, 2).await;
    // Another client behind the proxy is unaffected, and so is the proxy itself.
    assert_eq!(
        status_of(login_from(&app, Some("203.0.113.8")).await).await,
        401
    );
    assert_eq!(status_of(login_from(&app, None).await).await, 401);
    // Through two trusted hops the right-most untrusted address counts.
    assert_limited(login_from(&app, Some("203.0.113.7, 127.0.0.1")).await, 2).await;
}

#[tokio::test]
async fn an_untrusted_peer_cannot_choose_its_address() {
    let app = TestApp::full_env(&[
        ("RATE_LIMIT_AUTH_PER_MINUTE", "2"),
        // Only some other network is trusted; the loopback test client is not.
        ("TRUSTED_PROXIES", "10.0.0.0/8"),
    ])
    .await;
    for (n, xff) in ["198.51.100.1", "198.51.100.2"].into_iter().enumerate() {
        assert_eq!(
            status_of(login_from(&app, Some(xff)).await).await,
            401,
            "request {n}"
        );
    }
    // A third "client" is the same peer: refused.
    assert_limited(login_from(&app, Some("198.51.100.3")).await, 2).await;
}

async fn me(app: &TestApp, authorization: Option<&str>) -> reqwest::Response {
    app.rest_auth(authorization).get("/api/v1/users/me").await
}

async fn me_with_key(app: &TestApp, key: &str) -> reqwest::Response {
    app.get_with("/api/v1/users/me", &[("x-api-key", key)])
        .await
}

#[tokio::test]
async fn the_general_limit_counts_per_account_across_its_keys_and_tokens() {
    const BUDGET: u64 = 6;
    let app = TestApp::full_env(&[
        ("RATE_LIMIT_GENERAL_PER_MINUTE", "6"),
        ("RATE_LIMIT_AUTH_PER_MINUTE", "100"),
    ])
    .await;
    // Registering and logging in two users: 4 anonymous requests from this IP.
    let a = app.user("rl-a").await;
    let b = app.user("rl-b").await;
    // Two keys of A: 2 of A's budget.
    let key_one = app.api_key(&a, None).await;
    let key_two = app.api_key(&a, None).await;
    let mut allowed = 0;
    loop {
        let res = me_with_key(&app, &key_one).await;
        if res.status().as_u16() == 429 {
            let text = assert_limited(res, BUDGET).await;
            assert!(text.contains("per account"), "{text}");
            break;
        }
        assert_eq!(res.status().as_u16(), 200);
        allowed += 1;
        assert!(allowed <= BUDGET, "never limited");
    }
    assert_eq!(allowed, BUDGET - 2, "key creation drew on the same budget");
    // A's other key and A's access token share the exhausted budget.
    assert_limited(me_with_key(&app, &key_two).await, BUDGET).await;
    assert_limited(me(&app, Some(&a.bearer())).await, BUDGET).await;
    // A refused write does nothing: no garden under the asked slug (other tests create gardens
    // in the same registry at the same time, so the check names this one).
    let slug = unique_slug("rl-t");
    let res = app
        .rest_key(&key_one)
        .post(
            "/api/v1/tenants/",
            &json!({"slug": slug, "name": "Limited"}),
        )
        .await;
    assert_limited(res, BUDGET).await;
    let made: i64 = sqlx::query_scalar("SELECT count(*) FROM platform.tenants WHERE slug = $1")
        .bind(&slug)
        .fetch_one(app.state.platform_pool())
        .await
        .expect("count");
    assert_eq!(made, 0, "a refused request made no garden");
    // B is a caller of its own.
    assert_eq!(me(&app, Some(&b.bearer())).await.status().as_u16(), 200);
    // Anonymous requests (and failing credentials) count per client IP: 4 used by the setup.
    assert_eq!(me(&app, None).await.status().as_u16(), 401);
    assert_eq!(
        me_with_key(&app, "svc_not-a-real-key")
            .await
            .status()
            .as_u16(),
        401
    );
    let text = assert_limited(me(&app, None).await, BUDGET).await;
    assert!(text.contains("per client IP"), "{text}");
}

#[tokio::test]
async fn health_mode_and_docs_are_not_limited() {
    let app = TestApp::full_env(&[("RATE_LIMIT_GENERAL_PER_MINUTE", "2")]).await;
    for _ in 0..4 {
        for path in [
            "/api/v1/health/live",
            "/api/v1/health/ready",
            "/api/health",
            "/api/v1/mode",
            "/api/v1/openapi.json",
        ] {
            assert_eq!(app.get(path).await.status().as_u16(), 200, "{path}");
        }
        // Unknown routes match no limited router.
        let res = app.get("/api/v1/no-such-route").await;
        assert_eq!(res.status().as_u16(), 404);
    }
    // The limit itself is on.
    assert_eq!(me(&app, None).await.status().as_u16(), 401);
    assert_eq!(me(&app, None).await.status().as_u16(), 401);
    assert_limited(me(&app, None).await, 2).await;
}

#[tokio::test]
async fn light_mode_has_no_limits() {
    let app = TestApp::spawn_env(&[("RATE_LIMIT_GENERAL_PER_MINUTE", "1")]).await;
    for _ in 0..3 {
        let res = app.get("/api/v1/auth/api-keys").await;
        assert_eq!(res.status().as_u16(), 200);
    }
}

#[tokio::test]
async fn without_redis_login_stays_limited_per_replica() {
    // Nothing listens on port 1: every Redis call fails at once.
    let app = TestApp::full_env(&[
        ("REDIS_URL", "redis://127.0.0.1:1/"),
        ("RATE_LIMIT_AUTH_PER_MINUTE", "2"),
    ])
    .await;
    assert_eq!(status_of(login_from(&app, None).await).await, 401);
    assert_eq!(status_of(login_from(&app, None).await).await, 401);
    assert_limited(login_from(&app, None).await, 2).await;
    let email = format!("{}@example.test", unique_slug("rl-down"));
    assert_limited(app.register(&email, PASSWORD).await, 2).await;
    assert_eq!(
        app.platform_count("SELECT count(*) FROM platform.users WHERE email LIKE 'rl-down-%'")
            .await,
        0
    );
}

#[tokio::test]
async fn without_redis_the_general_limit_holds_per_replica() {
    let app = TestApp::full_env(&[
        ("REDIS_URL", "redis://127.0.0.1:1/"),
        ("RATE_LIMIT_GENERAL_PER_MINUTE", "2"),
    ])
    .await;
    assert_eq!(me(&app, None).await.status().as_u16(), 401);
    assert_eq!(me(&app, None).await.status().as_u16(), 401);
    assert_limited(me(&app, None).await, 2).await;
    // Unlimited routes still answer (readiness reports Redis down).
    assert_eq!(app.get("/api/v1/health/ready").await.status().as_u16(), 503);
}

#[tokio::test]
async fn the_openapi_document_lists_429_on_limited_operations() {
    let app = TestApp::full().await;
    let doc: Value = app
        .get("/api/v1/openapi.json")
        .await
        .json()
        .await
        .expect("json");
    let paths = doc["paths"].as_object().expect("paths");
    let mut limited = 0;
    for (path, item) in paths {
        for (method, operation) in item.as_object().expect("path item") {
            let answer = &operation["responses"]["429"];
            let exempt = path.starts_with("/api/v1/health/")
                || path == "/api/v1/mode"
                || path == "/api/health";
            if exempt {
                assert!(answer.is_null(), "{method} {path} lists 429");
                continue;
            }
            limited += 1;
            assert!(
                answer["headers"]["Retry-After"]["required"] == true,
                "{method} {path}: {answer}"
            );
            let schema = &answer["content"]["application/json"]["schema"]["$ref"];
            assert_eq!(
                schema, "#/components/schemas/RateLimitError",
                "{method} {path}"
            );
        }
    }
    assert!(limited > 10, "{limited} limited operations");
    let body = &doc["components"]["schemas"]["RateLimitError"];
    assert_eq!(body["required"], json!(["error"]), "{body}");
    assert_eq!(body["properties"]["error"]["type"], "string");
    let login = doc["paths"]["/api/v1/auth/login"]["post"]["responses"]["429"]["description"]
        .as_str()
        .expect("login 429");
    assert!(
        login.contains("RATE_LIMIT_AUTH_PER_MINUTE") && login.contains("GENERAL"),
        "{login}"
    );

    // Light mode limits nothing, so it documents no 429.
    let light = TestApp::spawn().await;
    let text = light
        .get("/api/v1/openapi.json")
        .await
        .text()
        .await
        .expect("text");
    assert!(!text.contains("RateLimitError"));
}

/// With a quota of 400 a minute each replica draws batches of 4 from the shared bucket
/// (`store::rate_lease`): across two replicas the caller still gets at most the quota, and at
/// most one batch per replica less.
#[tokio::test]
async fn leased_batches_never_let_more_than_the_quota_through_two_replicas() {
    let prefix = unique_slug("kt-lease");
    let env = [
        ("SERVICE_MODE", "full"),
        ("REDIS_KEY_PREFIX", prefix.as_str()),
        ("RATE_LIMIT_GENERAL_PER_MINUTE", "400"),
    ];
    let one = TestApp::spawn_env(&env).await;
    let two = TestApp::spawn_env(&env).await;
    let (mut allowed, mut refused) = (0u32, 0u32);
    let started = std::time::Instant::now();
    for n in 0..460 {
        let app = if n % 2 == 0 { &one } else { &two };
        // Anonymous: counted against the client address, answered 401 when let through.
        match status_of(me(app, None).await).await {
            401 => allowed += 1,
            429 => refused += 1,
            other => panic!("request {n}: unexpected status {other}"),
        }
    }
    // The budget refills by one every 150 ms while the loop runs.
    let refilled = u32::try_from(started.elapsed().as_millis() / 150).unwrap_or(u32::MAX);
    assert!(
        allowed <= 400 + refilled + 1,
        "{allowed} let through, over the quota (400 + {refilled} refilled)"
    );
    // The whole burst is served; each replica may hold the rest of one batch (3) unused.
    assert!(allowed + 2 * 3 >= 400, "only {allowed} let through");
    assert_eq!(allowed + refused, 460);
}

/// A registration from `forwarded_for` (the service trusts loopback as its proxy).
async fn register_from(app: &TestApp, forwarded_for: &str, body: &Value) -> reqwest::Response {
    app.client
        .post(app.url("/api/v1/auth/register"))
        .header("x-forwarded-for", forwarded_for)
        .json(body)
        .send()
        .await
        .expect("request sent")
}

fn registration(label: &str) -> Value {
    json!({
        "email": format!("{}@example.test", unique_slug(label)),
        "password": PASSWORD,
        "display_name": "Tess Grower",
    })
}

#[tokio::test]
async fn malformed_registrations_spend_no_registration_budget() {
    // The service-wide budget is 1 a minute (and so is each client's).
    let app = TestApp::full_env(&[("RATE_LIMIT_REGISTRATION_PER_MINUTE", "1")]).await;
    let malformed = [
        json!({"email": "not-an-address", "password": PASSWORD, "display_name": "X"}),
        json!({"email": "a@example.test", "password": "short", "display_name": "X"}),
        json!({"email": "a@example.test"}),
    ];
    for body in &malformed {
        let res = app.post_json("/api/v1/auth/register", body).await;
        assert_eq!(res.status().as_u16(), 422, "{body}");
    }
    let res = app
        .post_json("/api/v1/auth/register", &registration("rl-wellformed"))
        .await;
    assert_eq!(
        res.status().as_u16(),
        201,
        "the first well-formed one passes"
    );
    let text = assert_limited(
        app.post_json("/api/v1/auth/register", &registration("rl-second"))
            .await,
        1,
    )
    .await;
    assert!(text.contains("registrations"), "{text}");
}

#[tokio::test]
async fn one_client_cannot_spend_the_service_wide_registration_budget() {
    // 20 a minute for the service, 2 for each client address.
    let app = TestApp::full_env(&[
        ("RATE_LIMIT_REGISTRATION_PER_MINUTE", "20"),
        ("TRUSTED_PROXIES", "127.0.0.1, ::1"),
    ])
    .await;
    for _ in 0..2 {
        let res = register_from(&app, "203.0.113.7", &registration("rl-greedy")).await;
        assert_eq!(res.status().as_u16(), 201);
    }
    for _ in 0..5 {
        let res = register_from(&app, "203.0.113.7", &registration("rl-greedy")).await;
        let text = assert_limited(res, 2).await;
        assert!(text.contains("client IP"), "{text}");
    }
    // Another client still registers: the refused attempts drew nothing service-wide.
    for _ in 0..2 {
        let res = register_from(&app, "198.51.100.9", &registration("rl-other")).await;
        assert_eq!(res.status().as_u16(), 201);
    }
}
