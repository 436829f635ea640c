//! A database that goes away answers 503 with `Retry-After` (the client may retry), never 500.
//! The fault runs (tests/faults/run) drive the same under load against a restarting server.

use kultiva::error::{AppError, ErrorCode, UNAVAILABLE_RETRY_AFTER_SECONDS};

use crate::support::{Options, TestApp, assert_error};

#[tokio::test]
async fn a_request_whose_database_is_gone_is_503_with_retry_after() {
    // A real server that refuses: nothing listens on port 1.
    let app = TestApp::spawn_with(Options {
        env: vec![
            (
                "DATABASE_URL",
                "postgres://postgres@127.0.0.1:1/nothing".into(),
            ),
            ("DB_ACQUIRE_TIMEOUT_SECONDS", "1".into()),
        ],
        skip_platform_migrations: true,
        ..Options::default()
    })
    .await;
    let res = app.get("/api/v1/t/home/sites/").await;
    let retry_after = res
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    assert_error(res, 503, "SERVICE_UNAVAILABLE").await;
    assert_eq!(
        retry_after,
        Some(UNAVAILABLE_RETRY_AFTER_SECONDS.to_string())
    );
}

#[tokio::test]
async fn a_connection_the_database_terminated_is_503() {
    let app = TestApp::spawn().await;
    let pool = app.state.platform_pool();
    let mut victim = pool.acquire().await.expect("connection");
    let pid: i32 = sqlx::query_scalar("SELECT pg_backend_pid()")
        .fetch_one(&mut *victim)
        .await
        .expect("pid");
    // What a server restart does to every open session (only this test's own session here).
    let terminated: bool = sqlx::query_scalar("SELECT pg_terminate_backend($1)")
        .bind(pid)
        .fetch_one(pool)
        .await
        .expect("terminate");
    assert!(terminated);
    let err = sqlx::query("SELECT 1")
        .execute(&mut *victim)
        .await
        .expect_err("the session is gone");
    let shown = err.to_string();
    assert_eq!(
        AppError::from(err).code(),
        ErrorCode::ServiceUnavailable,
        "{shown}"
    );
    // A statement that is wrong stays a 500: only a lost server is "unavailable".
    let err = sqlx::query("SELECT no_such_column FROM platform.tenants")
        .execute(pool)
        .await
        .expect_err("bad statement");
    assert_eq!(AppError::from(err).code(), ErrorCode::InternalError);
}
