//! Account and limiter hardening (issue 11, item 1): each test here failed before its fix.
//! Sessions reach every live refresh family, the lockout holds under concurrent guesses, a
//! reset takes the account back (keys and sessions), reset confirmation checks the token
//! before it hashes, account mails are throttled, the tool server's batches count per
//! message, gardens are capped per account, registration is limited service-wide, scoped keys
//! stay in their garden, idempotency claims have owners, and the general limiter refuses an
//! over-limit client without a database lookup.

use reqwest::Method;
use serde_json::{Value, json};
use uuid::Uuid;

use kultiva::auth::accounts::email_tokens::{self, Purpose};

use crate::support::{PASSWORD, Session, TestApp, assert_error, session_of};

async fn refresh(app: &TestApp, session: &Session) -> reqwest::Response {
    app.client
        .post(app.url("/api/v1/auth/refresh"))
        .header("cookie", session.cookie_header())
        .header("x-csrf-token", session.csrf.clone().expect("csrf"))
        .send()
        .await
        .expect("sent")
}

async fn logout_all(app: &TestApp, session: &Session) -> reqwest::Response {
    app.client
        .post(app.url("/api/v1/auth/logout-all"))
        .header("authorization", format!("Bearer {}", session.access))
        .header("cookie", session.cookie_header())
        .header("x-csrf-token", session.csrf.clone().expect("csrf"))
        .send()
        .await
        .expect("sent")
}

async fn redis_conn(app: &TestApp) -> kultiva::store::redis::RedisConn {
    app.state.redis().get().await.expect("redis")
}

/// The per-user index of refresh families, as `auth::refresh` names it.
fn family_index(app: &TestApp, user: &str) -> String {
    app.state.redis_key("rtu", user, &[])
}

#[tokio::test]
async fn a_family_kept_alive_by_rotation_dies_with_logout_all_even_without_its_index() {
    let app = TestApp::full().await;
    let user = app.user("longlived").await;
    let res = refresh(&app, &user.session).await;
    assert_eq!(res.status().as_u16(), 200);
    let rotated = session_of(res).await;

    // Rotation extends the index along with the family.
    let mut conn = redis_conn(&app).await;
    let index = family_index(&app, &user.key);
    let _: () = redis::cmd("EXPIRE")
        .arg(&index)
        .arg(5)
        .query_async(&mut conn)
        .await
        .expect("shorten");
    let res = refresh(&app, &rotated).await;
    assert_eq!(res.status().as_u16(), 200);
    let rotated = session_of(res).await;
    let ttl: i64 = redis::cmd("TTL")
        .arg(&index)
        .query_async(&mut conn)
        .await
        .expect("ttl");
    assert!(ttl > 29 * 86_400, "index extended on rotation: ttl {ttl}");

    // The index runs out while the family lives on (as it did after 30 days of rotations).
    let _: () = redis::cmd("DEL")
        .arg(&index)
        .query_async(&mut conn)
        .await
        .expect("drop index");
    let other = app.login(&user.email, PASSWORD).await;
    let res = logout_all(&app, &other).await;
    assert_eq!(res.status().as_u16(), 204);
    let res = refresh(&app, &rotated).await;
    assert_error(res, 401, "INVALID_TOKEN").await;

    // A password reset reaches such a family as well.
    let session = app.login(&user.email, PASSWORD).await;
    let _: () = redis::cmd("DEL")
        .arg(&index)
        .query_async(&mut conn)
        .await
        .expect("drop index");
    let id = user.id();
    let token = email_tokens::issue(app.state.platform_pool(), id, Purpose::PasswordReset)
        .await
        .expect("token");
    let res = app
        .post_json(
            "/api/v1/auth/password-reset/confirm",
            &json!({"token": token, "new_password": "a brand new password"}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let res = refresh(&app, &session).await;
    assert_error(res, 401, "INVALID_TOKEN").await;
}

#[tokio::test]
async fn concurrent_wrong_guesses_never_get_more_than_four_evaluations() {
    let app = TestApp::full().await;
    let user = app.user("race").await;
    let guesses = (0..12).map(|i| {
        let app = &app;
        let email = user.email.clone();
        async move {
            app.login_response(&email, &format!("wrong guess {i:02}"), false)
                .await
                .status()
                .as_u16()
        }
    });
    let statuses = futures_util::future::join_all(guesses).await;
    let evaluated = statuses.iter().filter(|s| **s == 401).count();
    let locked = statuses.iter().filter(|s| **s == 423).count();
    assert_eq!(evaluated + locked, 12, "{statuses:?}");
    assert!(
        evaluated <= 4,
        "at most four failures before the lock: {statuses:?}"
    );
    // The right password after the fifth failure is refused, and does not lift the lock.
    let res = app.login_response(&user.email, PASSWORD, false).await;
    assert_error(res, 423, "ACCOUNT_LOCKED").await;
    let until: Option<time::OffsetDateTime> =
        sqlx::query_scalar("SELECT locked_until FROM platform.users WHERE email = $1")
            .bind(&user.email)
            .fetch_one(app.state.platform_pool())
            .await
            .expect("lock");
    assert!(until.is_some_and(|u| u > time::OffsetDateTime::now_utc()));
}

#[tokio::test]
async fn a_correct_password_racing_the_fifth_failure_does_not_clear_the_lock() {
    let app = TestApp::full().await;
    let user = app.user("race2").await;
    // Four failures on record; then the fifth failure and the right password at once, many
    // times over: whichever comes second must see the lock.
    for _ in 0..4 {
        let res = app.login_response(&user.email, "wrong guess", false).await;
        assert_error(res, 401, "UNAUTHORIZED").await;
    }
    let wrong = app.login_response(&user.email, "wrong guess!", false);
    let right = app.login_response(&user.email, PASSWORD, false);
    let (wrong, right) = tokio::join!(wrong, right);
    let (wrong, right) = (wrong.status().as_u16(), right.status().as_u16());
    match right {
        // The right one came first: it cleared the four failures, the wrong one is number one.
        200 => assert_eq!(wrong, 401),
        // The lock came first: the right password is refused too.
        _ => assert_eq!((wrong, right), (423, 423)),
    }
    let locked: bool = sqlx::query_scalar(
        "SELECT coalesce(locked_until > now(), false) FROM platform.users WHERE email = $1",
    )
    .bind(&user.email)
    .fetch_one(app.state.platform_pool())
    .await
    .expect("lock");
    assert_eq!(locked, right != 200, "lock state follows the winner");
}

async fn api_key_works(app: &TestApp, key: &str) -> u16 {
    app.rest_key(key)
        .get("/api/v1/users/me")
        .await
        .status()
        .as_u16()
}

#[tokio::test]
async fn a_password_reset_revokes_every_api_key_and_session() {
    let app = TestApp::full().await;
    let squatter = app.user("squat").await;
    let key = app.api_key(&squatter, None).await;
    assert_eq!(api_key_works(&app, &key).await, 200);
    let id = squatter.id();
    let token = email_tokens::issue(app.state.platform_pool(), id, Purpose::PasswordReset)
        .await
        .expect("token");
    let res = app
        .post_json(
            "/api/v1/auth/password-reset/confirm",
            &json!({"token": token, "new_password": "the real owner's password"}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 200);
    assert_eq!(api_key_works(&app, &key).await, 401, "key revoked");
    let res = app.rest_as(&squatter).get("/api/v1/users/me").await;
    assert_error(res, 401, "INVALID_TOKEN").await;
    let res = refresh(&app, &squatter.session).await;
    assert_error(res, 401, "INVALID_TOKEN").await;
    let active: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM platform.api_keys WHERE user_id = $1 AND revoked_at IS NULL",
    )
    .bind(id)
    .fetch_one(app.state.platform_pool())
    .await
    .expect("count");
    assert_eq!(active, 0);
}

#[tokio::test]
async fn the_first_verification_takes_the_account_back_when_verification_is_optional() {
    let app = TestApp::full().await;
    let squatter = app.user("squatv").await;
    let key = app.api_key(&squatter, None).await;
    let id = squatter.id();
    let token = email_tokens::issue(app.state.platform_pool(), id, Purpose::VerifyEmail)
        .await
        .expect("token");
    let res = app
        .post_json("/api/v1/auth/verify-email", &json!({"token": token}))
        .await;
    assert_eq!(res.status().as_u16(), 200);
    assert_eq!(api_key_works(&app, &key).await, 401, "key revoked");
    let res = refresh(&app, &squatter.session).await;
    assert_error(res, 401, "INVALID_TOKEN").await;

    // A later verification (already verified) revokes nothing.
    let session = app.login(&squatter.email, PASSWORD).await;
    let user = crate::support::TestUser {
        key: squatter.key.clone(),
        email: squatter.email.clone(),
        session,
    };
    let key = app.api_key(&user, None).await;
    let token = email_tokens::issue(app.state.platform_pool(), id, Purpose::VerifyEmail)
        .await
        .expect("token");
    let res = app
        .post_json("/api/v1/auth/verify-email", &json!({"token": token}))
        .await;
    assert_eq!(res.status().as_u16(), 200);
    assert_eq!(api_key_works(&app, &key).await, 200, "key kept");
}

#[test]
fn the_reset_mail_says_keys_and_sessions_end() {
    let mail = kultiva::auth::accounts::mails::password_reset("https://app.test", "tok");
    assert!(mail.body.contains("API keys"), "{}", mail.body);
    assert!(mail.body.contains("signs out"), "{}", mail.body);
}

#[tokio::test]
async fn reset_confirmation_checks_the_token_before_it_hashes() {
    let app = TestApp::full().await;
    let before = app.state.passwords().hashes_computed();
    for _ in 0..3 {
        let res = app
            .post_json(
                "/api/v1/auth/password-reset/confirm",
                &json!({"token": "x".repeat(43), "new_password": "some new password"}),
            )
            .await;
        assert_error(res, 422, "VALIDATION_ERROR").await;
    }
    assert_eq!(
        app.state.passwords().hashes_computed(),
        before,
        "no hash for a token that does not work"
    );
}

#[tokio::test]
async fn reset_and_verification_routes_share_the_auth_limit() {
    let app = TestApp::full_env(&[("RATE_LIMIT_AUTH_PER_MINUTE", "3")]).await;
    let calls = [
        (
            "/api/v1/auth/password-reset/request",
            json!({"email": "a@example.test"}),
        ),
        (
            "/api/v1/auth/password-reset/confirm",
            json!({"token": "t", "new_password": "some new password"}),
        ),
        ("/api/v1/auth/verify-email", json!({"token": "t"})),
    ];
    for (path, body) in &calls {
        let res = app.post_json(path, body).await;
        assert_ne!(res.status().as_u16(), 429, "{path}");
    }
    for (path, body) in &calls {
        let res = app.post_json(path, body).await;
        assert_eq!(res.status().as_u16(), 429, "{path}");
        assert!(crate::support::header(&res, "retry-after").is_some());
        let body: Value = res.json().await.expect("json");
        assert!(body["error"].as_str().is_some(), "{body}");
    }
}

// ---------------------------------------------------------------------------------------------
// Mail throttle, batches, garden cap, registration limit
// ---------------------------------------------------------------------------------------------

async fn mails_to(app: &TestApp, recipient: &str) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM platform.mail_outbox WHERE recipient = $1")
        .bind(recipient)
        .fetch_one(app.state.platform_pool())
        .await
        .expect("count")
}

/// Waits (hang guard 30 s) until `n` mails to the recipient are queued, then a moment longer
/// for any that should not come.
async fn settle_mails(app: &TestApp, recipient: &str, n: i64) -> i64 {
    let start = std::time::Instant::now();
    while mails_to(app, recipient).await < n && start.elapsed().as_secs() < 30 {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    mails_to(app, recipient).await
}

#[tokio::test]
async fn reset_mails_are_throttled_per_address_with_the_same_answer() {
    let app = TestApp::full_env(&[("MAIL_PER_ADDRESS_PER_HOUR", "2")]).await;
    let user = app.user("throttle").await;
    // Registration sent the verification mail: one of the two this hour.
    assert_eq!(settle_mails(&app, &user.email, 1).await, 1);
    let mut answers = Vec::new();
    for _ in 0..4 {
        let res = app
            .post_json(
                "/api/v1/auth/password-reset/request",
                &json!({"email": user.email}),
            )
            .await;
        let status = res.status().as_u16();
        let body: Value = res.json().await.expect("json");
        answers.push((status, body["message"].clone()));
    }
    assert!(answers.iter().all(|a| *a == answers[0]), "{answers:?}");
    assert_eq!(answers[0].0, 202);
    assert_eq!(
        settle_mails(&app, &user.email, 2).await,
        2,
        "one reset mail"
    );
}

/// Opens a 2025-03-26 tool-server session (batches exist there): the session id.
async fn mcp_session(app: &TestApp, key: &str) -> String {
    let res = app
        .client
        .post(app.url("/api/v1/mcp"))
        .header("x-api-key", key)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-03-26", "capabilities": {},
                "clientInfo": {"name": "hardening", "version": "1"}}})
            .to_string(),
        )
        .send()
        .await
        .expect("sent");
    assert_eq!(res.status().as_u16(), 200);
    crate::support::header(&res, "mcp-session-id").expect("session")
}

async fn mcp_post(app: &TestApp, key: &str, session: &str, body: &Value) -> reqwest::Response {
    app.client
        .post(app.url("/api/v1/mcp"))
        .header("x-api-key", key)
        .header("mcp-session-id", session)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_string())
        .send()
        .await
        .expect("sent")
}

#[tokio::test]
async fn each_message_of_a_batch_counts_against_the_general_limit() {
    let app = TestApp::full_env(&[
        ("MCP_SERVER_ENABLED", "true"),
        ("RATE_LIMIT_GENERAL_PER_MINUTE", "10"),
    ])
    .await;
    let user = app.user("batch").await;
    let key = app.api_key(&user, None).await; // request 1
    let session = mcp_session(&app, &key).await; // request 2
    let ping = |i: usize| json!({"jsonrpc": "2.0", "id": i, "method": "ping"});
    // A batch of 6: the request and five more messages, 8 of 10 used.
    let batch: Vec<Value> = (0..6).map(ping).collect();
    let res = mcp_post(&app, &key, &session, &json!(batch)).await;
    assert_eq!(res.status().as_u16(), 200);
    let replies: Value = res.json().await.expect("json");
    assert_eq!(replies.as_array().map(Vec::len), Some(6));
    // Three more messages do not fit in the two left: 429 and none of them runs.
    let batch: Vec<Value> = (0..3).map(ping).collect();
    let res = mcp_post(&app, &key, &session, &json!(batch)).await;
    assert_eq!(res.status().as_u16(), 429);
    assert!(crate::support::header(&res, "retry-after").is_some());
    let body: Value = res.json().await.expect("json");
    assert!(
        body["error"]
            .as_str()
            .is_some_and(|e| e.contains("10 API requests")),
        "{body}"
    );
    // A batch larger than the whole budget never fits.
    let batch: Vec<Value> = (0..11).map(ping).collect();
    let res = mcp_post(&app, &key, &session, &json!(batch)).await;
    assert_eq!(res.status().as_u16(), 429);
}

async fn create_garden(app: &TestApp, auth: &str, slug: &str) -> reqwest::Response {
    app.rest_auth(Some(auth))
        .post(
            "/api/v1/tenants",
            &json!({"slug": slug, "name": "A garden"}),
        )
        .await
}

async fn tenants_named(app: &TestApp, slugs: &[String]) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM platform.tenants WHERE slug = ANY($1)")
        .bind(slugs)
        .fetch_one(app.state.platform_pool())
        .await
        .expect("count")
}

#[tokio::test]
async fn an_account_creates_at_most_its_cap_of_gardens_even_concurrently() {
    let app = TestApp::full_env(&[("MAX_GARDENS_PER_ACCOUNT", "3")]).await;
    let user = app.user("cap").await;
    let auth = user.bearer();
    // The personal garden is one of three; six concurrent creations leave room for two.
    let slugs: Vec<String> = (0..6).map(|_| crate::support::unique_slug("cap")).collect();
    let answers =
        futures_util::future::join_all(slugs.iter().map(|slug| create_garden(&app, &auth, slug)))
            .await;
    let mut created = 0;
    for res in answers {
        match res.status().as_u16() {
            201 => created += 1,
            _ => {
                let body = assert_error(res, 409, "STATE_CONFLICT").await;
                assert_eq!(body["details"][0]["code"], "garden_limit_reached", "{body}");
                assert!(
                    body["message"]
                        .as_str()
                        .is_some_and(|m| m.contains("at most 3 gardens")),
                    "{body}"
                );
            }
        }
    }
    assert_eq!(created, 2);
    assert_eq!(
        tenants_named(&app, &slugs).await,
        2,
        "no schema beyond the cap"
    );
    // Another account is not affected.
    let other = app.user("cap2").await;
    let slug = crate::support::unique_slug("cap");
    let res = create_garden(&app, &other.bearer(), &slug).await;
    assert_eq!(res.status().as_u16(), 201);
}

#[tokio::test]
async fn registrations_are_limited_for_the_whole_service() {
    let app = TestApp::full_env(&[
        ("RATE_LIMIT_REGISTRATION_PER_MINUTE", "2"),
        ("TRUSTED_PROXIES", "127.0.0.1"),
    ])
    .await;
    let mut statuses = Vec::new();
    let mut last = None;
    for i in 0..3 {
        let email = format!("{}@example.test", crate::support::unique_slug("reg"));
        // Each from another client address: the per-IP limit is not what refuses.
        let res = app
            .client
            .post(app.url("/api/v1/auth/register"))
            .header("x-forwarded-for", format!("203.0.113.{}", i + 1))
            .json(&json!({"email": email, "password": PASSWORD, "display_name": "R"}))
            .send()
            .await
            .expect("sent");
        statuses.push(res.status().as_u16());
        last = Some((email, res));
    }
    assert_eq!(statuses, [201, 201, 429]);
    let (email, res) = last.expect("third");
    assert!(crate::support::header(&res, "retry-after").is_some());
    let body: Value = res.json().await.expect("json");
    assert!(
        body["error"]
            .as_str()
            .is_some_and(|e| e.contains("2 registrations per minute")),
        "{body}"
    );
    let written: i64 = sqlx::query_scalar("SELECT count(*) FROM platform.users WHERE email = $1")
        .bind(&email)
        .fetch_one(app.state.platform_pool())
        .await
        .expect("count");
    assert_eq!(written, 0, "the refused registration wrote nothing");
}

// ---------------------------------------------------------------------------------------------
// Scoped keys
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_scoped_key_never_acts_for_the_whole_account() {
    let app = TestApp::full_env(&[("MCP_SERVER_ENABLED", "true")]).await;
    let user = app.user("scoped").await;
    let slug = crate::support::unique_slug("scoped");
    assert_eq!(
        create_garden(&app, &user.bearer(), &slug)
            .await
            .status()
            .as_u16(),
        201
    );
    let scoped = format!("Bearer {}", app.api_key(&user, Some(&slug)).await);
    let forbidden = |body: &Value| {
        body["message"]
            .as_str()
            .is_some_and(|m| m.contains("limited to one garden"))
    };
    // logout-all (with the CSRF pair a script could set itself).
    let res = app
        .client
        .post(app.url("/api/v1/auth/logout-all"))
        .header("authorization", &scoped)
        .header("cookie", "svc_csrf=abc")
        .header("x-csrf-token", "abc")
        .send()
        .await
        .expect("sent");
    let body = assert_error(res, 403, "FORBIDDEN").await;
    assert!(forbidden(&body), "{body}");
    // The owner's session still works.
    let res = app.rest_as(&user).get("/api/v1/users/me").await;
    assert_eq!(res.status().as_u16(), 200);
    // Password change.
    let res = app
        .rest_auth(Some(&scoped))
        .post(
            "/api/v1/users/me/password",
            &json!({"current_password": PASSWORD, "new_password": "taken over by a key"}),
        )
        .await;
    let body = assert_error(res, 403, "FORBIDDEN").await;
    assert!(forbidden(&body), "{body}");
    app.login(&user.email, PASSWORD).await; // unchanged
    // Profile change, new gardens, key management.
    let res = app
        .rest_auth(Some(&scoped))
        .patch("/api/v1/users/me", &json!({"display_name": "Key"}))
        .await;
    assert_error(res, 403, "FORBIDDEN").await;
    let res = create_garden(&app, &scoped, &crate::support::unique_slug("scoped")).await;
    assert_error(res, 403, "FORBIDDEN").await;
    for (method, path) in [
        (Method::GET, "/api/v1/auth/api-keys"),
        (Method::POST, "/api/v1/auth/api-keys"),
    ] {
        let res = app
            .rest_auth(Some(&scoped))
            .send(method, path, Some(&json!({"label": "more"})))
            .await;
        assert_error(res, 403, "FORBIDDEN").await;
    }
    // Its own garden's data is fine.
    let res = app
        .rest_auth(Some(&scoped))
        .get(&format!("/api/v1/tenants/{slug}"))
        .await;
    assert_eq!(res.status().as_u16(), 200);
}

#[tokio::test]
async fn a_scoped_key_sees_only_its_gardens_tool_activity() {
    let app = TestApp::full_env(&[("MCP_SERVER_ENABLED", "true")]).await;
    let user = app.user("activity").await;
    let slug = crate::support::unique_slug("act");
    assert_eq!(
        create_garden(&app, &user.bearer(), &slug)
            .await
            .status()
            .as_u16(),
        201
    );
    let unscoped = app.api_key(&user, None).await;
    let scoped = app.api_key(&user, Some(&slug)).await;
    // A call in the personal garden (unscoped key) and one in the scoped garden.
    let personal: Value = app
        .rest_as(&user)
        .get("/api/v1/tenants")
        .await
        .json()
        .await
        .expect("json");
    let personal_slug = personal["items"]
        .as_array()
        .and_then(|items| items.iter().find(|t| t["kind"] == "personal"))
        .and_then(|t| t["slug"].as_str())
        .expect("personal garden")
        .to_owned();
    for (key, garden) in [(&unscoped, &personal_slug), (&scoped, &slug)] {
        let res = app
            .client
            .post(app.url("/api/v1/mcp/tools/list_tenants"))
            .header("x-api-key", key.as_str())
            .json(&json!({"tenant": garden}))
            .send()
            .await
            .expect("sent");
        assert_eq!(res.status().as_u16(), 200, "{garden}");
    }
    let account = user.id();
    let start = std::time::Instant::now();
    loop {
        let n: i64 =
            sqlx::query_scalar("SELECT count(*) FROM platform.mcp_audit_log WHERE account_id = $1")
                .bind(account)
                .fetch_one(app.state.platform_pool())
                .await
                .expect("audit");
        if n >= 2 || start.elapsed().as_secs() > 30 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let all: Value = app
        .rest_as(&user)
        .get("/api/v1/users/me/mcp-activity")
        .await
        .json()
        .await
        .expect("json");
    assert_eq!(all["total"], 2, "{all}");
    let mine: Value = app
        .rest_key(&scoped)
        .get("/api/v1/users/me/mcp-activity")
        .await
        .json()
        .await
        .expect("json");
    assert_eq!(mine["total"], 1, "{mine}");
    assert_eq!(mine["items"][0]["tenant_slug"], slug.as_str(), "{mine}");
}

// ---------------------------------------------------------------------------------------------
// The general limiter looks at the client address before the credential
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn an_over_limit_client_with_random_keys_is_refused_without_a_database_lookup() {
    let app = TestApp::full_env(&[("RATE_LIMIT_GENERAL_PER_MINUTE", "5")]).await;
    // Registration and login are anonymous: 2 of the address's 5.
    let user = app.user("limited").await;
    // A real key of the account, never used yet (created with the access token, which counts
    // against the account, not the address).
    let key = app.api_key(&user, None).await;
    // Well-formed keys (43 characters after the prefix) that exist nowhere: 3 more, then over.
    let random_key = || {
        let body = format!("{}{}", Uuid::new_v4().simple(), Uuid::new_v4().simple());
        format!("Bearer svc_{}", &body[..43])
    };
    for _ in 0..3 {
        let res = app
            .rest_auth(Some(&random_key()))
            .get("/api/v1/users/me")
            .await;
        assert_eq!(res.status().as_u16(), 401);
    }
    let res = app
        .rest_auth(Some(&random_key()))
        .get("/api/v1/users/me")
        .await;
    assert_eq!(res.status().as_u16(), 429);
    // From now on the address is refused before any credential is looked up: random keys, and
    // even the real key, whose lookup would have let it through on the account's own budget
    // and stamped its last use.
    for auth in [random_key(), random_key(), format!("Bearer {key}")] {
        let res = app.rest_auth(Some(&auth)).get("/api/v1/users/me").await;
        assert_eq!(res.status().as_u16(), 429);
        assert!(crate::support::header(&res, "retry-after").is_some());
        let body: Value = res.json().await.expect("json");
        assert!(
            body["error"]
                .as_str()
                .is_some_and(|e| e.contains("per client IP")),
            "{body}"
        );
    }
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let used: Option<time::OffsetDateTime> =
        sqlx::query_scalar("SELECT last_used_at FROM platform.api_keys WHERE user_id = $1")
            .bind(user.id())
            .fetch_one(app.state.platform_pool())
            .await
            .expect("key row");
    assert_eq!(used, None, "the key was never looked up");
}

// ---------------------------------------------------------------------------------------------
// Idempotency claims have owners and live as long as their call
// ---------------------------------------------------------------------------------------------

mod claims {
    use std::time::Duration;

    use kultiva::mcp::idempotency::{self, Begin, Claim, Scope};
    use serde_json::{Map, Value, json};
    use sha2::{Digest, Sha256};
    use uuid::Uuid;

    use crate::support::TestApp;

    /// The Redis key of a record, as `mcp::idempotency` names it.
    fn record_key(app: &TestApp, scope: &Scope<'_>) -> String {
        let key_hash = hex::encode(Sha256::digest(scope.key.as_bytes()));
        app.state.redis_key(
            "mcp:idem",
            &scope.account.to_string(),
            &["-", scope.tool, &key_hash],
        )
    }

    async fn get(app: &TestApp, key: &str) -> Option<String> {
        let mut conn = app.state.redis().get().await.expect("redis");
        redis::cmd("GET")
            .arg(key)
            .query_async(&mut conn)
            .await
            .expect("get")
    }

    async fn del(app: &TestApp, key: &str) {
        let mut conn = app.state.redis().get().await.expect("redis");
        let _: () = redis::cmd("DEL")
            .arg(key)
            .query_async(&mut conn)
            .await
            .expect("del");
    }

    fn executes(begun: Result<Begin, kultiva::mcp::envelope::ToolError>) -> Claim {
        match begun {
            Ok(Begin::Execute(claim)) => claim,
            Ok(Begin::Replay(env)) => panic!("replayed {env:?}"),
            Err(err) => panic!("refused: {}", err.message),
        }
    }

    fn envelope(summary: &str) -> Map<String, Value> {
        json!({"summary": summary})
            .as_object()
            .cloned()
            .expect("object")
    }

    #[tokio::test]
    async fn only_the_owner_finishes_or_frees_a_claim() {
        let app = TestApp::full().await;
        let account = Uuid::new_v4();
        let key = Uuid::new_v4().to_string();
        let scope = Scope {
            account,
            tenant: None,
            tool: "create_plant",
            key: &key,
        };
        let redis_key = record_key(&app, &scope);
        let first = executes(idempotency::begin(&app.state, &scope, "args").await);
        // The first call's claim is lost (it ran out); a second call claims the key.
        del(&app, &redis_key).await;
        let second = executes(idempotency::begin(&app.state, &scope, "args").await);
        let claimed = get(&app, &redis_key).await.expect("second claim");

        // The first call ends late: it may neither free nor fill the second call's claim.
        first.release(&app.state).await;
        assert_eq!(
            get(&app, &redis_key).await.as_deref(),
            Some(claimed.as_str()),
            "not freed"
        );
        let first = executes_again(&app, &scope, &redis_key, &claimed).await;
        first.finish(&app.state, &envelope("first")).await;
        assert_eq!(
            get(&app, &redis_key).await.as_deref(),
            Some(claimed.as_str()),
            "not filled"
        );

        // The owner's result is stored and replayed.
        second.finish(&app.state, &envelope("second")).await;
        match idempotency::begin(&app.state, &scope, "args").await {
            Ok(Begin::Replay(env)) => assert_eq!(env["summary"], "second"),
            _ => panic!("no replay of the owner's result"),
        }
    }

    /// A claim whose record was taken over: made by claiming a free key, then putting the
    /// other call's record back.
    async fn executes_again(
        app: &TestApp,
        scope: &Scope<'_>,
        redis_key: &str,
        other: &str,
    ) -> Claim {
        del(app, redis_key).await;
        let claim = executes(idempotency::begin(&app.state, scope, "args").await);
        let mut conn = app.state.redis().get().await.expect("redis");
        let _: () = redis::cmd("SET")
            .arg(redis_key)
            .arg(other)
            .query_async(&mut conn)
            .await
            .expect("set");
        claim
    }

    #[tokio::test]
    async fn a_claim_lives_as_long_as_its_call_runs() {
        let app = TestApp::full().await;
        let key = Uuid::new_v4().to_string();
        let scope = Scope {
            account: Uuid::new_v4(),
            tenant: None,
            tool: "create_plant",
            key: &key,
        };
        let redis_key = record_key(&app, &scope);
        let claim = executes(
            idempotency::begin_with(&app.state, &scope, "args", Duration::from_millis(300)).await,
        );
        // Four claim lifetimes later the call still holds its key.
        tokio::time::sleep(Duration::from_millis(1200)).await;
        let record = get(&app, &redis_key).await.expect("claim kept alive");
        assert!(record.contains("pending"), "{record}");
        claim.release(&app.state).await;
        assert_eq!(get(&app, &redis_key).await, None, "freed by its owner");
        // A dropped claim (a call that panicked) stops being extended and runs out.
        let claim = executes(
            idempotency::begin_with(&app.state, &scope, "args", Duration::from_millis(300)).await,
        );
        drop(claim);
        tokio::time::sleep(Duration::from_millis(900)).await;
        assert_eq!(get(&app, &redis_key).await, None, "ran out");
    }
}
