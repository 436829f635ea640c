//! Prometheus metrics as an operator scrapes them: on the private listener without a
//! credential, on the main listener only with `METRICS_TOKEN`; requests counted per route
//! template and status with their latency, tool calls per tool and outcome, rate-limit
//! refusals, Redis errors, tenant migrations and pool gauges; raw slugs, ids and paths never
//! become labels.
//!
//! The counters are process-wide and tests may share a process, so checks are "at least" and
//! before/after differences, never exact totals.

use serde_json::{Value, json};

use crate::support::{TestApp, assert_error, header, unique_slug};

const TOKEN: &str = "scrape-token-0123456789abcdef-0123456789";

/// The value of the sample `name` whose labels include every pair of `labels`, if any.
fn sample(body: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    body.lines()
        .filter(|line| !line.starts_with('#'))
        .find_map(|line| {
            let (series, value) = line.rsplit_once(' ')?;
            let (series_name, series_labels) = match series.split_once('{') {
                Some((n, rest)) => (n, rest.strip_suffix('}')?),
                None => (series, ""),
            };
            let all = labels
                .iter()
                .all(|(k, v)| series_labels.contains(&format!("{k}=\"{v}\"")));
            (series_name == name && all).then(|| value.parse().ok())?
        })
}

/// `sample`, 0 when the series does not exist yet.
fn count(body: &str, name: &str, labels: &[(&str, &str)]) -> f64 {
    sample(body, name, labels).unwrap_or(0.0)
}

/// The main listener's scrape with the token.
async fn scrape(app: &TestApp) -> String {
    let res = app
        .get_with("/metrics", &[("authorization", &format!("Bearer {TOKEN}"))])
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let ctype = header(&res, "content-type").unwrap_or_default();
    assert!(
        ctype.starts_with("text/plain; version=0.0.4"),
        "content type {ctype}"
    );
    res.text().await.expect("scrape body")
}

#[tokio::test]
async fn requests_are_counted_per_route_template_and_status_with_latency_buckets() {
    let app = TestApp::spawn_env(&[("METRICS_TOKEN", TOKEN)]).await;
    let tenant = app.tenant("metrics").await;
    let site = app.create_site(&tenant, "Metered bed").await;
    let site_key = site["key"].as_str().expect("site key").to_owned();
    let route = "/api/v1/t/{slug}/sites/{site_key}";
    let before = scrape(&app).await;
    let ok = [("method", "GET"), ("route", route), ("status", "200")];
    let missing = [("method", "GET"), ("route", route), ("status", "404")];
    let ok_before = count(&before, "kultiva_http_requests_total", &ok);
    let missing_before = count(&before, "kultiva_http_requests_total", &missing);
    let unmatched = [("route", "unmatched"), ("status", "404")];
    let unmatched_before = count(&before, "kultiva_http_requests_total", &unmatched);

    let path = format!("/api/v1/t/{}/sites/{site_key}", tenant.slug);
    for _ in 0..2 {
        assert_eq!(app.get(&path).await.status().as_u16(), 200);
    }
    let unknown_key = uuid::Uuid::new_v4().to_string();
    let res = app
        .get(&format!("/api/v1/t/{}/sites/{unknown_key}", tenant.slug))
        .await;
    assert_eq!(res.status().as_u16(), 404);
    let probe = unique_slug("probe");
    assert_eq!(
        app.get(&format!("/api/v1/{probe}/x"))
            .await
            .status()
            .as_u16(),
        404
    );

    let body = scrape(&app).await;
    assert!(
        count(&body, "kultiva_http_requests_total", &ok) >= ok_before + 2.0,
        "two 200s of the route template:\n{body}"
    );
    assert!(count(&body, "kultiva_http_requests_total", &missing) >= missing_before + 1.0);
    assert!(count(&body, "kultiva_http_requests_total", &unmatched) >= unmatched_before + 1.0);
    // The histogram: cumulative buckets up to +Inf, a sum and a count, by status class.
    let latency = [("method", "GET"), ("route", route), ("status_class", "2xx")];
    let all = [latency.as_slice(), &[("le", "+Inf")]].concat();
    let inf = count(&body, "kultiva_http_request_duration_seconds_bucket", &all);
    assert!(inf >= 2.0, "+Inf bucket holds both requests:\n{body}");
    let within_10s = [latency.as_slice(), &[("le", "10")]].concat();
    let slow_bound = count(
        &body,
        "kultiva_http_request_duration_seconds_bucket",
        &within_10s,
    );
    assert!(
        slow_bound <= inf && slow_bound >= 2.0,
        "buckets are cumulative:\n{body}"
    );
    assert_eq!(
        sample(
            &body,
            "kultiva_http_request_duration_seconds_count",
            &latency
        ),
        Some(inf)
    );
    assert!(sample(&body, "kultiva_http_request_duration_seconds_sum", &latency).is_some());
    assert!(body.contains("# TYPE kultiva_http_request_duration_seconds histogram"));
    // Provisioning the garden migrated its schema in this process.
    let provisioned = [("trigger", "provision"), ("outcome", "applied")];
    assert!(count(&body, "kultiva_tenant_migrations_total", &provisioned) >= 1.0);
    // Pool gauges of this service's placement, sampled at the scrape.
    let primary = [("placement", "primary")];
    assert_eq!(
        sample(&body, "kultiva_db_pool_max_connections", &primary),
        Some(10.0)
    );
    let open = sample(&body, "kultiva_db_pool_open_connections", &primary).expect("open");
    let idle = sample(&body, "kultiva_db_pool_idle_connections", &primary).expect("idle");
    let in_use = sample(&body, "kultiva_db_pool_in_use_connections", &primary).expect("in use");
    assert!(
        open >= 1.0 && idle + in_use == open,
        "{open} {idle} {in_use}"
    );
    // The read pool: the site read above ran on it, and its connection went back.
    assert_eq!(
        sample(&body, "kultiva_db_read_pool_max_connections", &primary),
        Some(10.0)
    );
    let read_open =
        sample(&body, "kultiva_db_read_pool_open_connections", &primary).expect("read open");
    let read_in_use =
        sample(&body, "kultiva_db_read_pool_in_use_connections", &primary).expect("read in use");
    assert!(
        read_open >= 1.0 && read_in_use == 0.0,
        "{read_open} {read_in_use}"
    );

    // What did not happen: no raw value became a label.
    for raw in [tenant.slug.as_str(), &site_key, &unknown_key, &probe] {
        assert!(!body.contains(raw), "{raw} appears in the scrape");
    }
}

#[tokio::test]
async fn the_main_listener_serves_metrics_only_with_the_token() {
    let plain = TestApp::spawn().await;
    assert_error(plain.get("/metrics").await, 404, "ENTITY_NOT_FOUND").await;
    let res = plain
        .get_with("/metrics", &[("authorization", &format!("Bearer {TOKEN}"))])
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;

    let guarded = TestApp::spawn_env(&[("METRICS_TOKEN", TOKEN)]).await;
    for authorization in [
        None,
        Some("Bearer wrong-token-0123456789abcdef-0123456789".to_owned()),
        Some(format!("Bearer {TOKEN}x")),
        Some(format!("Basic {TOKEN}")),
        Some(TOKEN.to_owned()),
    ] {
        let headers: Vec<(&str, &str)> = authorization
            .as_deref()
            .map(|a| vec![("authorization", a)])
            .unwrap_or_default();
        let res = guarded.get_with("/metrics", &headers).await;
        assert_eq!(
            res.headers()
                .get("www-authenticate")
                .and_then(|v| v.to_str().ok()),
            Some("Bearer")
        );
        let body = assert_error(res, 401, "UNAUTHORIZED").await;
        assert!(!body.to_string().contains("kultiva_http"), "{body}");
    }
    let body = scrape(&guarded).await;
    assert!(body.contains("kultiva_http_requests_total{"), "{body}");
    // The route is outside the API: not in the OpenAPI document.
    let doc: Value = guarded
        .get("/api/v1/openapi.json")
        .await
        .json()
        .await
        .expect("openapi");
    assert!(doc["paths"].get("/metrics").is_none());
}

#[tokio::test]
async fn the_private_listener_serves_metrics_without_a_credential() {
    let app = TestApp::spawn_env(&[("METRICS_BIND_ADDRESS", "127.0.0.1:0")]).await;
    let at = app.metrics_addr.expect("metrics listener bound");
    assert_ne!(at, app.addr);
    assert_eq!(app.get("/api/health").await.status().as_u16(), 200);
    let res = app
        .client
        .get(format!("http://{at}/metrics"))
        .send()
        .await
        .expect("scrape");
    assert_eq!(res.status().as_u16(), 200);
    assert!(
        header(&res, "content-type").is_some_and(|c| c.starts_with("text/plain; version=0.0.4"))
    );
    let body = res.text().await.expect("body");
    assert!(
        count(
            &body,
            "kultiva_http_requests_total",
            &[("route", "/api/health"), ("status", "200")]
        ) >= 1.0,
        "{body}"
    );
    // Only /metrics lives there; the API does not.
    let res = app
        .client
        .get(format!("http://{at}/api/health"))
        .send()
        .await
        .expect("sent");
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    // Without METRICS_TOKEN the main listener does not serve them.
    assert_error(app.get("/metrics").await, 404, "ENTITY_NOT_FOUND").await;

    // The private listener stops with the service.
    drop(app);
    let mut closed = false;
    for _ in 0..50 {
        if tokio::net::TcpStream::connect(at).await.is_err() {
            closed = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(closed, "the metrics port closed after the service stopped");
}

#[tokio::test]
async fn tool_calls_are_counted_by_tool_and_outcome() {
    let app = TestApp::full_env(&[("MCP_SERVER_ENABLED", "true"), ("METRICS_TOKEN", TOKEN)]).await;
    let user = app.user("metrics-tools").await;
    let key = app.api_key(&user, None).await;
    let bearer = format!("Bearer {key}");
    let ok = [("tool", "list_tenants"), ("outcome", "ok")];
    let invalid = [
        ("tool", "get_species_info"),
        ("outcome", "validation.error"),
    ];
    let unknown = [("tool", "unknown"), ("outcome", "not_found")];
    let before = scrape(&app).await;
    let counts = |body: &str| {
        [ok.as_slice(), &invalid, &unknown]
            .map(|labels| count(body, "kultiva_mcp_tool_calls_total", labels))
    };
    let was = counts(&before);

    let call = |tool: String, args: Value| {
        let bearer = bearer.clone();
        let app = &app;
        async move {
            app.rest_auth(Some(&bearer))
                .post(&format!("/api/v1/mcp/tools/{tool}"), &args)
                .await
                .status()
                .as_u16()
        }
    };
    assert_eq!(call("list_tenants".into(), json!({})).await, 200);
    assert_eq!(call("get_species_info".into(), json!({})).await, 422);
    let made_up = unique_slug("no_such_tool").replace('-', "_");
    assert_eq!(call(made_up.clone(), json!({})).await, 404);

    let body = scrape(&app).await;
    let now = counts(&body);
    for (i, labels) in ["ok", "validation.error", "not_found"].iter().enumerate() {
        assert!(now[i] >= was[i] + 1.0, "{labels}: {} -> {}", was[i], now[i]);
    }
    assert!(
        !body.contains(&made_up),
        "a caller's tool name is never a label"
    );
}

#[tokio::test]
async fn rate_limit_refusals_and_redis_errors_are_counted() {
    let limited = TestApp::full_env(&[
        ("RATE_LIMIT_GENERAL_PER_MINUTE", "2"),
        ("METRICS_TOKEN", TOKEN),
    ])
    .await;
    let refusals = [("limit", "general")];
    let before = count(
        &scrape(&limited).await,
        "kultiva_rate_limit_refusals_total",
        &refusals,
    );
    let mut statuses = Vec::new();
    for _ in 0..3 {
        statuses.push(limited.get("/api/v1/users/me").await.status().as_u16());
    }
    assert_eq!(statuses, [401, 401, 429]);
    // The scrape is not an API request: it is not limited, even now.
    let body = scrape(&limited).await;
    assert!(count(&body, "kultiva_rate_limit_refusals_total", &refusals) >= before + 1.0);
    let limited_route = [("route", "/api/v1/users/me"), ("status", "429")];
    assert!(count(&body, "kultiva_http_requests_total", &limited_route) >= 1.0);

    // Nothing listens on port 1: readiness finds Redis down, and says so in the metrics.
    let no_redis = TestApp::full_env(&[
        ("REDIS_URL", "redis://127.0.0.1:1/"),
        ("METRICS_TOKEN", TOKEN),
    ])
    .await;
    let readiness = [("during", "readiness")];
    let before = count(
        &scrape(&no_redis).await,
        "kultiva_redis_errors_total",
        &readiness,
    );
    assert_eq!(
        no_redis.get("/api/v1/health/ready").await.status().as_u16(),
        503
    );
    let body = scrape(&no_redis).await;
    assert!(count(&body, "kultiva_redis_errors_total", &readiness) >= before + 1.0);

    // An API request's rate-limit draw fails too; the in-process limiter decides (the request
    // is answered, not refused for want of Redis) and the failure is counted under its use.
    let drawing = [("during", "rate_limit")];
    let before = count(&body, "kultiva_redis_errors_total", &drawing);
    assert_eq!(
        no_redis.get("/api/v1/users/me").await.status().as_u16(),
        401
    );
    let body = scrape(&no_redis).await;
    assert!(count(&body, "kultiva_redis_errors_total", &drawing) >= before + 1.0);
}
