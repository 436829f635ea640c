use serde_json::Value;

use crate::support::{Options, TestApp};

#[tokio::test]
async fn live_ready_health_and_mode_answer() {
    let app = TestApp::spawn_env(&[("SERVICE_MODE", "full")]).await;

    let res = app.get("/api/v1/health/live").await;
    assert_eq!(res.status().as_u16(), 200);
    assert_eq!(
        res.json::<Value>().await.expect("json"),
        serde_json::json!({"status": "alive"})
    );

    let res = app.get("/api/v1/health/ready").await;
    assert_eq!(res.status().as_u16(), 200);
    assert_eq!(
        res.json::<Value>().await.expect("json"),
        serde_json::json!({"status": "ready", "database": true, "redis": true})
    );

    let body: Value = app.get("/api/health").await.json().await.expect("json");
    assert_eq!(body["status"], "healthy");
    assert_eq!(body["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(body["mode"], "full");

    let body: Value = app.get("/api/v1/mode").await.json().await.expect("json");
    assert_eq!(body["mode"], "full");
    assert_eq!(body["features"]["auth"], true);
    assert_eq!(body["features"]["mcp"], false);
}

#[tokio::test]
async fn light_mode_is_reported() {
    let app = TestApp::spawn_env(&[("SERVICE_MODE", "light")]).await;
    let body: Value = app.get("/api/v1/mode").await.json().await.expect("json");
    assert_eq!(body["mode"], "light");
    assert_eq!(body["features"]["auth"], false);
    let body: Value = app.get("/api/health").await.json().await.expect("json");
    assert_eq!(body["mode"], "light");
}

#[tokio::test]
async fn ready_is_503_when_the_database_does_not_answer() {
    // A real server that refuses: a closed loopback port (nothing listens on port 1).
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
    let res = app.get("/api/v1/health/ready").await;
    assert_eq!(res.status().as_u16(), 503);
    let body: Value = res.json().await.expect("json");
    assert_eq!(body["status"], "not_ready");
    assert_eq!(body["database"], false);
    assert_eq!(body["redis"], true);
    // Liveness does not depend on the database.
    assert_eq!(app.get("/api/v1/health/live").await.status().as_u16(), 200);
}

#[tokio::test]
async fn ready_is_503_when_redis_does_not_answer() {
    let app = TestApp::spawn_env(&[("REDIS_URL", "redis://127.0.0.1:1/")]).await;
    let res = app.get("/api/v1/health/ready").await;
    assert_eq!(res.status().as_u16(), 503);
    let body: Value = res.json().await.expect("json");
    assert_eq!(body["database"], true);
    assert_eq!(body["redis"], false);
}
