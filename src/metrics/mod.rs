//! Prometheus metrics: what the process counts, and the scrape that renders it.
//!
//! The crate is `prometheus-client` (the Prometheus project's own Rust client): no default
//! features, four small dependencies, a Prometheus text (0.0.4) encoder, and label sets that
//! are plain Rust values, so a request records with `&'static str` labels and allocates
//! nothing. (`metrics` + `metrics-exporter-prometheus` would add a recorder layer, its own
//! registry and more dependencies for the same output.)
//!
//! The counters are process-wide (one service per process in production; tests that run
//! several services in one process see their sums). Pool gauges are sampled from the state at
//! scrape time. Every label value comes from a bounded set: route templates, never raw paths;
//! tool names from the registry, never a caller's text; fixed words otherwise.

pub mod labels;

use std::sync::LazyLock;
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::encoding::prometheus_text;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

pub use labels::RedisUse;

/// `Content-Type` of a scrape: the Prometheus text format, version 0.0.4.
pub const CONTENT_TYPE: &str = prometheus_text::CONTENT_TYPE;

/// Latency buckets in seconds: 1 ms to 10 s, about three per decade.
const LATENCY_BUCKETS: [f64; 13] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    method: &'static str,
    route: &'static str,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LatencyLabels {
    method: &'static str,
    route: &'static str,
    status_class: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RedisLabels {
    during: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LimitLabels {
    limit: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ToolLabels {
    tool: &'static str,
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct MigrationLabels {
    trigger: &'static str,
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct PlacementLabels {
    pub(crate) placement: String,
}

type LatencyFamily = Family<LatencyLabels, Histogram, fn() -> Histogram>;

struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    latency: LatencyFamily,
    redis_errors: Family<RedisLabels, Counter>,
    refusals: Family<LimitLabels, Counter>,
    tool_calls: Family<ToolLabels, Counter>,
    migrations: Family<MigrationLabels, Counter>,
    webhook_deliveries: Family<OutcomeLabels, Counter>,
    webhook_outbox: Gauge,
    digest_mails: Counter,
    push_messages: Family<OutcomeLabels, Counter>,
    weather_fetches: Family<OutcomeLabels, Counter>,
    mqtt_messages: Family<OutcomeLabels, Counter>,
}

fn latency_histogram() -> Histogram {
    Histogram::new(LATENCY_BUCKETS)
}

impl Metrics {
    fn new() -> Self {
        let mut registry = Registry::default();
        let requests = Family::<RequestLabels, Counter>::default();
        // Counter names carry no `_total`: the encoder appends it.
        registry.register(
            "kultiva_http_requests",
            "HTTP requests answered, by method, route template and status code",
            requests.clone(),
        );
        let latency: LatencyFamily = Family::new_with_constructor(latency_histogram);
        registry.register(
            "kultiva_http_request_duration_seconds",
            "Time from the request's arrival to its answer, by method, route template and \
             status class",
            latency.clone(),
        );
        let redis_errors = Family::<RedisLabels, Counter>::default();
        registry.register(
            "kultiva_redis_errors",
            "Redis commands or connections that failed, by what the service was doing",
            redis_errors.clone(),
        );
        let refusals = Family::<LimitLabels, Counter>::default();
        registry.register(
            "kultiva_rate_limit_refusals",
            "Requests refused with 429, by limit",
            refusals.clone(),
        );
        let tool_calls = Family::<ToolLabels, Counter>::default();
        registry.register(
            "kultiva_mcp_tool_calls",
            "Tool server calls, by tool and outcome (ok, dry_run, replay, or the tool error code)",
            tool_calls.clone(),
        );
        let migrations = Family::<MigrationLabels, Counter>::default();
        registry.register(
            "kultiva_tenant_migrations",
            "Tenant schema migrations run by this process, by trigger and outcome \
             (applied, failed)",
            migrations.clone(),
        );
        let webhook_deliveries = Family::<OutcomeLabels, Counter>::default();
        registry.register(
            "kultiva_webhook_deliveries",
            "Webhook delivery attempts made by this process, by outcome (delivered, retry, \
             failed: the last attempt failed and the endpoint was disabled)",
            webhook_deliveries.clone(),
        );
        let webhook_outbox = Gauge::default();
        registry.register(
            "kultiva_webhook_outbox_pending",
            "Pending webhook deliveries (the outbox's depth) over every garden with webhooks, \
             as this process's delivery worker counted them at the start of its last round",
            webhook_outbox.clone(),
        );
        let digest_mails = Counter::default();
        registry.register(
            "kultiva_digest_mails",
            "Digest mails queued by this process (the job or the CLI)",
            digest_mails.clone(),
        );
        let push_messages = Family::<OutcomeLabels, Counter>::default();
        registry.register(
            "kultiva_push_messages",
            "Web Push messages sent by this process, by outcome (delivered, gone: the push \
             service answered 404 or 410 and the subscription was deleted, failed)",
            push_messages.clone(),
        );
        let weather_fetches = Family::<OutcomeLabels, Counter>::default();
        registry.register(
            "kultiva_weather_fetches",
            "Forecast requests for a site made by this process, by outcome (ok, failed: \
             unreachable, timed out, an error status or a body that is no forecast)",
            weather_fetches.clone(),
        );
        let mqtt_messages = Family::<OutcomeLabels, Counter>::default();
        registry.register(
            "kultiva_mqtt_messages",
            "MQTT messages this process's subscriber received, by outcome (stored, \
             already_present, malformed, out_of_range, unavailable: a Home Assistant state \
             unavailable or unknown, stale: a retained value without its own time, \
             rate_limited, unknown_topic, failed)",
            mqtt_messages.clone(),
        );
        Self {
            registry,
            requests,
            latency,
            redis_errors,
            refusals,
            tool_calls,
            migrations,
            webhook_deliveries,
            webhook_outbox,
            digest_mails,
            push_messages,
            weather_fetches,
            mqtt_messages,
        }
    }
}

static METRICS: LazyLock<Metrics> = LazyLock::new(Metrics::new);

/// One answered HTTP request. `matched_path` is salvo's route template (empty when no route
/// matched).
pub fn http_request(method: &salvo::http::Method, matched_path: &str, status: u16, took: Duration) {
    let method = labels::method(method);
    let route = labels::route(matched_path);
    METRICS
        .requests
        .get_or_create(&RequestLabels {
            method,
            route,
            status,
        })
        .inc();
    METRICS
        .latency
        .get_or_create(&LatencyLabels {
            method,
            route,
            status_class: labels::status_class(status),
        })
        .observe(took.as_secs_f64());
}

/// A Redis command or connection failed while the service was doing `during`.
pub fn redis_error(during: RedisUse) {
    METRICS
        .redis_errors
        .get_or_create(&RedisLabels {
            during: during.as_str(),
        })
        .inc();
}

/// A request refused with 429 by the limit of that name (`auth`, `general`, …).
pub fn rate_limited(limit: &'static str) {
    METRICS.refusals.get_or_create(&LimitLabels { limit }).inc();
}

/// A finished tool call. `tool` is the registry's name (`None`: the caller named no known
/// tool); `outcome` is `ok`, `dry_run`, `replay` or the tool error code.
pub fn tool_call(tool: Option<&'static str>, outcome: &'static str) {
    METRICS
        .tool_calls
        .get_or_create(&ToolLabels {
            tool: tool.unwrap_or("unknown"),
            outcome,
        })
        .inc();
}

/// A tenant migration that changed a schema (`applied`) or failed; `trigger` is
/// `provision`, `on_demand` or `cli`.
pub fn tenant_migration(trigger: &'static str, applied: bool) {
    METRICS
        .migrations
        .get_or_create(&MigrationLabels {
            trigger,
            outcome: if applied { "applied" } else { "failed" },
        })
        .inc();
}

/// One webhook delivery attempt ended: `delivered`, `retry` or `failed`.
pub fn webhook_delivery(outcome: &'static str) {
    METRICS
        .webhook_deliveries
        .get_or_create(&OutcomeLabels { outcome })
        .inc();
}

/// The pending webhook deliveries the worker counted at the start of a round.
pub fn webhook_outbox_pending(n: i64) {
    METRICS.webhook_outbox.set(n);
}

/// A digest mail was queued.
pub fn digest_mail() {
    METRICS.digest_mails.inc();
}

/// A Web Push message ended: `delivered`, `gone` or `failed`.
pub fn push_message(outcome: &'static str) {
    METRICS
        .push_messages
        .get_or_create(&OutcomeLabels { outcome })
        .inc();
}

/// One forecast request for a site ended: `ok` or `failed`.
pub fn weather_fetch(outcome: &'static str) {
    METRICS
        .weather_fetches
        .get_or_create(&OutcomeLabels { outcome })
        .inc();
}

/// One MQTT message handled by the subscriber, with its outcome (a fixed word).
pub fn mqtt_message(outcome: &'static str) {
    METRICS
        .mqtt_messages
        .get_or_create(&OutcomeLabels { outcome })
        .inc();
}

/// The process's counters and histograms in the Prometheus text format (the scrape adds the
/// pool gauges it samples from the state: `http::metrics`).
pub fn encode_counters(out: &mut String) -> std::fmt::Result {
    prometheus_text::encode(out, &METRICS.registry)
}
