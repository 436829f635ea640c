//! Pieces shared by the goose load binaries.

use goose::prelude::*;
use serde_json::json;

/// Sends the request and reads the whole body, so the connection is kept alive and reused.
pub async fn send(
    user: &mut GooseUser,
    method: GooseMethod,
    path: &str,
    builder: impl FnOnce(reqwest::RequestBuilder) -> reqwest::RequestBuilder,
) -> TransactionResult {
    let request_builder = builder(user.get_request_builder(&method, path)?);
    let request = GooseRequest::builder()
        .method(method)
        .path(path)
        .expect_status_code(200)
        .set_request_builder(request_builder)
        .build();
    let mut goose = user.request(request).await?;
    if let Ok(response) = goose.response
        && let Err(err) = response.bytes().await
    {
        return user.set_failure(
            &format!("reading the body failed: {err}"),
            &mut goose.request,
            None,
            None,
        );
    }
    Ok(())
}

/// A one-object summary of a run: requests, failures, successful req/s and latency percentiles.
/// Requests whose name ends with one of `setup` (a session opened once per user) are left out.
pub fn summary(metrics: &GooseMetrics, setup: &[&str]) -> serde_json::Value {
    let ms = |us: u64| (us as f64 / 10.0).round() / 100.0;
    let seconds = metrics.duration.max(1) as f64;
    let mut requests = 0usize;
    let mut failures = 0usize;
    let mut rows = Vec::new();
    let mut statuses = std::collections::BTreeMap::new();
    for (name, agg) in &metrics.requests {
        if setup.iter().any(|s| name.ends_with(s)) {
            continue;
        }
        let data = &agg.raw_data;
        requests += data.counter;
        failures += agg.fail_count;
        for (code, count) in &agg.status_code_counts {
            *statuses.entry(code.to_string()).or_insert(0usize) += count;
        }
        // Only answered-as-expected requests count towards the rate.
        let ok = data.counter.saturating_sub(agg.fail_count);
        rows.push(json!({
            "name": name,
            "requests": data.counter,
            "failures": agg.fail_count,
            "per_second": (ok as f64 / seconds * 10.0).round() / 10.0,
            "p50_ms": ms(data.percentile_us(0.50)),
            "p95_ms": ms(data.percentile_us(0.95)),
            "p99_ms": ms(data.percentile_us(0.99)),
            "max_ms": ms(data.maximum_time_us),
        }));
    }
    // One measured request name per scenario, so the first row is the whole run.
    let first = rows.first().cloned().unwrap_or_else(|| json!({}));
    json!({
        "seconds": metrics.duration,
        "users": metrics.maximum_users,
        "requests": requests,
        "failures": failures,
        "per_second": first.get("per_second").cloned().unwrap_or(json!(0)),
        "p50_ms": first.get("p50_ms").cloned().unwrap_or(json!(0)),
        "p95_ms": first.get("p95_ms").cloned().unwrap_or(json!(0)),
        "p99_ms": first.get("p99_ms").cloned().unwrap_or(json!(0)),
        "max_ms": first.get("max_ms").cloned().unwrap_or(json!(0)),
        "status_codes": statuses,
        // Every measured request name (a scenario of several routes has one row each).
        "rows": rows,
    })
}
