//! One typed configuration, read from the environment and validated once at start. Every problem
//! is reported at once, one line per variable, so an operator fixes them in one round.

use std::collections::BTreeMap;
use std::fmt;
use std::net::SocketAddr;
use std::str::FromStr;
use std::time::Duration;

use crate::rules::client_ip::TrustedProxies;

mod mqtt;
pub use mqtt::MqttConfig;

/// The value `JWT_SECRET_KEY` has when nobody set it; `full` mode refuses to start with it.
pub const JWT_SECRET_PLACEHOLDER: &str = "change-me-in-production";
/// The sender of outgoing mail unless `MAIL_FROM` says otherwise.
pub const DEFAULT_MAIL_FROM: &str = "Kultiva <no-reply@localhost>";
/// The placement every tenant lives on unless told otherwise: the server of `DATABASE_URL`.
pub const PRIMARY_PLACEMENT: &str = "primary";
/// Highest accepted rate limit (requests per minute); the limiter works in whole microseconds,
/// and 10,000,000 a minute is one request every 6 µs exactly. (Benchmarks raise the limits to
/// this so the limiter stays in the path without refusing: one caller at 50,000 requests/s
/// spends a million in 20 s.)
pub const MAX_RATE_PER_MINUTE: u32 = 10_000_000;

/// A value that must never reach a log line.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServiceMode {
    Full,
    Light,
}

impl ServiceMode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Full => "full",
            Self::Light => "light",
        }
    }
}

impl FromStr for ServiceMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "full" => Ok(Self::Full),
            "light" => Ok(Self::Light),
            _ => Err("must be `full` or `light`".into()),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    Json,
    Pretty,
}

impl FromStr for LogFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "json" => Ok(Self::Json),
            "pretty" | "text" => Ok(Self::Pretty),
            _ => Err("must be `json` or `pretty`".into()),
        }
    }
}

/// A named PostgreSQL server that tenant schemas can be placed on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlacementConfig {
    pub name: String,
    pub url: Secret,
}

/// Where Redis is: one server, or a Redis Cluster (`REDIS_URL=redis+cluster://…`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RedisTarget {
    /// A `redis://`, `rediss://` or `unix://` URL, as given.
    Single(Secret),
    /// The seed nodes of a cluster, each a `redis://[user:pw@]host:port/` URL (credentials
    /// repeated per node; database 0, the only one a cluster has).
    Cluster { nodes: Vec<Secret> },
}

impl RedisTarget {
    pub fn is_cluster(&self) -> bool {
        matches!(self, Self::Cluster { .. })
    }
}

/// The scheme that names a cluster in `REDIS_URL`.
pub const REDIS_CLUSTER_SCHEME: &str = "redis+cluster://";

/// Reads `redis+cluster://[user:pw@]host:port[,host:port…][/0]`. Problems name the variable
/// and never repeat the credentials.
fn parse_redis_cluster(name: &str, url: &str) -> Result<RedisTarget, String> {
    let rest = url.strip_prefix(REDIS_CLUSTER_SCHEME).unwrap_or(url);
    if rest.contains('?') || rest.contains('#') {
        return Err(format!(
            "{name}: a redis+cluster:// URL takes no query or fragment"
        ));
    }
    // The credentials end at the last `@` (a password may contain `@` only percent-encoded,
    // but be lenient); hosts and the database follow.
    let (userinfo, hosts_db) = match rest.rsplit_once('@') {
        Some((user, hosts)) => (Some(user), hosts),
        None => (None, rest),
    };
    let (hosts, db) = match hosts_db.split_once('/') {
        Some((hosts, db)) => (hosts, db),
        None => (hosts_db, ""),
    };
    if !(db.is_empty() || db == "0") {
        return Err(format!(
            "{name}: a Redis Cluster has only database 0 (drop the /{} or use /0)",
            db.chars().take(8).collect::<String>()
        ));
    }
    let mut nodes = Vec::new();
    for entry in hosts.split(',').map(str::trim) {
        if entry.is_empty() {
            return Err(format!(
                "{name}: redis+cluster:// needs host:port entries separated by commas"
            ));
        }
        let (host, port) = match entry.rsplit_once(':') {
            Some((host, port)) if !port.contains(']') => (host, port),
            _ => (entry, "6379"),
        };
        let bracketed = host.starts_with('[') && host.ends_with(']') && host.len() > 2;
        let plain = host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'));
        let host_ok = !host.is_empty() && (bracketed || plain);
        let port_ok = port.parse::<u16>().is_ok_and(|p| p > 0);
        if !host_ok || !port_ok {
            return Err(format!("{name}: cluster node {entry:?} is not host:port"));
        }
        let auth = userinfo.map(|u| format!("{u}@")).unwrap_or_default();
        nodes.push(Secret::new(format!("redis://{auth}{host}:{port}/")));
    }
    Ok(RedisTarget::Cluster { nodes })
}

#[derive(Debug, Clone)]
pub struct Config {
    pub database_url: Secret,
    /// `REDIS_URL`: one server or a cluster.
    pub redis: RedisTarget,
    pub bind_address: SocketAddr,
    pub debug: bool,
    pub service_mode: ServiceMode,
    pub mcp_server_enabled: bool,
    pub cors_origins: Vec<String>,
    pub jwt_secret_key: Secret,
    pub jwt_algorithm: String,
    pub access_token_expire_minutes: u32,
    pub refresh_token_expire_days: u32,
    pub require_email_verification: bool,
    pub fernet_key: Option<Secret>,
    pub mcp_max_image_payload_mb: u32,
    pub storage_strip_exif: bool,
    /// Where photo files live (`STORAGE_DIR`, default `.local/storage`).
    pub storage_dir: std::path::PathBuf,
    /// Largest photo upload in bytes (`PHOTO_MAX_UPLOAD_MB`, default 20).
    pub photo_max_upload_bytes: usize,
    /// Largest photo in megapixels, checked from the header before decoding
    /// (`PHOTO_MAX_MEGAPIXELS`, default 50).
    pub photo_max_megapixels: u32,
    /// Rendition workers of this process (`PHOTO_RENDITION_WORKERS`, default 1; 0: none).
    pub photo_rendition_workers: u32,
    /// Attempts at a photo's renditions before it is marked unavailable
    /// (`PHOTO_RENDITION_MAX_ATTEMPTS`, default 5).
    pub photo_rendition_max_attempts: u32,
    /// Photo decodes (upload checks and renditions) running at once in this process
    /// (`PHOTO_DECODE_CONCURRENCY`, default 2): each may hold a few hundred MB.
    pub photo_decode_concurrency: u32,
    /// Of those, at most this many for one garden (`PHOTO_DECODE_PER_GARDEN`, default 1).
    pub photo_decode_per_garden: u32,
    /// How long an upload waits for a decode slot before a 503 with `Retry-After`
    /// (`PHOTO_DECODE_WAIT_SECONDS`, default 10).
    pub photo_decode_wait_seconds: u32,
    /// Pixels per byte of compressed file above which a picture of more than 4 MP is refused
    /// before decoding (`PHOTO_MAX_PIXELS_PER_BYTE`, default 100): photos have 3 to 50,
    /// decompression bombs hundreds.
    pub photo_max_pixels_per_byte: u32,
    /// Photo storage of one garden, originals and renditions, in bytes
    /// (`PHOTO_QUOTA_MB_PER_GARDEN`, default 2048 MB).
    pub photo_quota_bytes_per_garden: u64,
    /// Age after which a photo folder no row names is removed by the sweep
    /// (`PHOTO_ORPHAN_GRACE_MINUTES`, default 60).
    pub photo_orphan_grace_minutes: u32,
    /// Minutes between two sweeps of the photo storage (`PHOTO_SWEEP_INTERVAL_MINUTES`,
    /// default 60; 0: no periodic sweep).
    pub photo_sweep_interval_minutes: u32,
    /// Bytes of one JSON-RPC batch's answers (`MCP_MAX_BATCH_RESPONSE_MB`, default 8); calls
    /// past it answer `payload.too_large`.
    pub mcp_max_batch_response_bytes: usize,
    /// Every placement, `primary` (the `DATABASE_URL` server) first.
    pub placements: Vec<PlacementConfig>,
    /// Where newly created tenants go.
    pub default_placement: String,
    pub db_max_connections: u32,
    /// Connections per placement for single-statement garden reads (`DB_READ_CONNECTIONS`,
    /// default 10), beside the `db_max_connections` of the shared pool (`store::read_pool`).
    pub db_read_connections: u32,
    pub db_acquire_timeout: Duration,
    /// A pooled connection is closed at its next release after this age
    /// (`DB_MAX_LIFETIME_SECS`, default 600): each backend's catalogue caches grow with every
    /// garden schema it touched, and only a new connection starts them empty.
    pub db_max_lifetime: Duration,
    /// A pooled connection idle this long is closed (`DB_IDLE_TIMEOUT_SECS`, default 300).
    pub db_idle_timeout: Duration,
    pub max_body_bytes: usize,
    pub shutdown_grace: Duration,
    /// A tenant still `provisioning` this long after its last progress is abandoned: the
    /// reaper drops its schema and row (`TENANT_PROVISIONING_TIMEOUT_SECONDS`).
    pub provisioning_timeout: Duration,
    pub log_format: LogFormat,
    /// Prefix of every Redis key, so several deployments (or test runs) can share one server.
    pub redis_key_prefix: String,
    /// Where the browser front end lives: links in e-mails and the OAuth callback point there.
    pub frontend_url: String,
    /// The service's own public base URL (OAuth redirect URIs point there).
    pub public_url: String,
    /// Password hashes computed at once (each takes ~19 MiB); the default is the core count.
    pub password_hash_concurrency: u32,
    /// SMTP server for outgoing mail; without it mails are written to the log.
    pub smtp_url: Option<Secret>,
    /// Sender of outgoing mail (`Name <address>`).
    pub mail_from: String,
    /// Login and registration requests per minute per client IP.
    pub rate_limit_auth_per_minute: u32,
    /// Requests per minute per caller (account, or client IP when anonymous) on the API.
    pub rate_limit_general_per_minute: u32,
    /// Registrations per minute across the whole service (every client IP together): each
    /// one creates a garden schema.
    pub rate_limit_registration_per_minute: u32,
    /// Password-reset, verification and invitation mails per address per hour.
    pub mail_per_address_per_hour: u32,
    /// Gardens one account may create (its personal garden included).
    pub max_gardens_per_account: u32,
    /// How long an invitation to a garden can be accepted.
    pub invitation_expire_days: u32,
    /// `INVITATIONS_PER_INVITER_PER_HOUR`: invitations one account may send in an hour (all
    /// gardens together); beyond it 429 `RATE_LIMIT_EXCEEDED`.
    pub invitations_per_inviter_per_hour: u32,
    /// `INVITATIONS_PER_GARDEN_PER_HOUR`: invitations one garden may send in an hour (all its
    /// admins together).
    pub invitations_per_garden_per_hour: u32,
    /// `GARDEN_TRANSFERS_PER_ACCOUNT_PER_HOUR`: garden exports and imports over HTTP one account
    /// may start in an hour (each reads or writes a whole garden); beyond it 429.
    pub garden_transfers_per_account_per_hour: u32,
    /// Largest export file `POST /tenants/import` takes, in bytes (`GARDEN_IMPORT_MAX_MB`,
    /// default 1024); beyond it 413.
    pub garden_import_max_bytes: u64,
    /// `MCP_SESSIONS_PER_ACCOUNT`: open tool-server sessions of one account; a new session
    /// beyond it ends the account's oldest.
    pub mcp_sessions_per_account: u32,
    /// Peers whose `X-Forwarded-For` names the client.
    pub trusted_proxies: TrustedProxies,
    /// Base URL of the GBIF species API (catalogue enrichment).
    pub enrichment_gbif_url: String,
    /// How long one call to an enrichment source may take.
    pub enrichment_timeout: Duration,
    /// A second listener serving only `GET /metrics`, without a credential
    /// (`METRICS_BIND_ADDRESS`; none when unset).
    pub metrics_bind_address: Option<SocketAddr>,
    /// With it, `GET /metrics` on the main listener answers a caller showing
    /// `Authorization: Bearer <token>` (`METRICS_TOKEN`; at least 32 characters).
    pub metrics_token: Option<Secret>,
    /// `WEBHOOK_ALLOW_PRIVATE_TARGETS`: webhooks may target loopback addresses (and use
    /// `http://` for them); for local set-ups and tests. Off by default.
    pub webhook_allow_private_targets: bool,
    /// `WEBHOOK_RETRY_SCHEDULE`: seconds before each retry of a failed webhook delivery
    /// (comma-separated, jittered ±20 %); after the last the delivery fails and the endpoint is
    /// disabled. Default `5,300,1800,7200,18000,36000,36000` (about 27 hours, 8 attempts).
    pub webhook_retry_schedule: Vec<f64>,
    /// `WEBHOOK_POLL_MILLIS`: how often the delivery worker looks for due deliveries (1000).
    pub webhook_poll: Duration,
    /// `WEBHOOK_TIMEOUT_SECONDS`: longest one delivery attempt may take (10).
    pub webhook_timeout: Duration,
    /// `DIGEST_SCHEDULE`: whether this process sends the due digest mails (`true`); the sent
    /// record makes one replica send each, whatever the number.
    pub digest_schedule: bool,
    /// `DIGEST_INTERVAL_SECONDS`: how often the digest job looks for users whose hour came (60).
    pub digest_interval: Duration,
    /// `ALERT_SCAN_SECONDS`: how often the alert scan runs across all gardens (60); 0: this
    /// process does not scan (`kultiva alerts scan` still does).
    pub alert_scan_interval: Duration,
    /// `ALERT_AFTER_MINUTES`: how long readings must stay out of range before an
    /// `out_of_range` alert opens (15).
    pub alert_after_minutes: u32,
    /// `WEATHER_URL`: base URL of an Open-Meteo-compatible forecast API (no key), e.g.
    /// `https://api.open-meteo.com`; unset: no weather is fetched.
    pub weather_url: Option<String>,
    /// `WEATHER_POLL_MINUTES`: how often a serving process fetches the forecast of every site
    /// with coordinates (60); 0: never on a timer (`kultiva weather poll` still does).
    pub weather_poll_interval: Duration,
    /// `WEATHER_TIMEOUT_SECONDS`: longest one forecast request may take (10).
    pub weather_timeout: Duration,
    /// `VAPID_PRIVATE_KEY`: the Web Push application server key, a P-256 private key as 32
    /// bytes in base64url (what `npx web-push generate-vapid-keys` prints as the private key).
    /// Unset: a key derived from `JWT_SECRET_KEY` (stable across restarts and replicas that
    /// share the secret; for development and tests, see `notify::push::vapid`).
    pub vapid_private_key: Option<Secret>,
    /// `VAPID_SUBJECT`: the contact the push services see in the VAPID token (`mailto:` or
    /// `https:`); default `mailto:` and the address of `MAIL_FROM`.
    pub vapid_subject: String,
    /// `MQTT_URL` and the rest of the MQTT and Home Assistant settings; none without
    /// `MQTT_URL` (no subscriber, no discovery).
    pub mqtt: Option<MqttConfig>,
}

/// Whether `raw` is a P-256 private key as 32 bytes in base64url (padding tolerated).
fn vapid_key_is_valid(raw: &str) -> bool {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(raw.trim().trim_end_matches('='))
        .ok()
        .filter(|b| b.len() == 32)
        .is_some_and(|b| p256::SecretKey::from_slice(&b).is_ok())
}

/// `mailto:` and the bare address of `MAIL_FROM` (`Name <a@b>` or `a@b`).
fn default_vapid_subject(mail_from: &str) -> String {
    let address = match (mail_from.find('<'), mail_from.rfind('>')) {
        (Some(open), Some(close)) if open < close => &mail_from[open + 1..close],
        _ => mail_from.trim(),
    };
    format!("mailto:{address}")
}

/// All problems found while reading the environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError(pub Vec<String>);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid configuration: {}", self.0.join("; "))
    }
}

impl std::error::Error for ConfigError {}

/// Reads variables through a lookup function and collects every problem.
struct Reader<'a> {
    lookup: &'a dyn Fn(&str) -> Option<String>,
    problems: Vec<String>,
}

impl Reader<'_> {
    fn raw(&self, name: &str) -> Option<String> {
        (self.lookup)(name)
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    }

    fn string(&self, name: &str, default: &str) -> String {
        self.raw(name).unwrap_or_else(|| default.to_owned())
    }

    fn parse<T: FromStr>(&mut self, name: &str, default: T, what: &str) -> T {
        match self.raw(name) {
            None => default,
            Some(v) => match v.parse::<T>() {
                Ok(parsed) => parsed,
                Err(_) => {
                    self.problems.push(format!("{name}={v:?} is not {what}"));
                    default
                }
            },
        }
    }

    fn bounded(&mut self, name: &str, default: u32, min: u32, max: u32) -> u32 {
        let value = self.parse(name, default, "a whole number");
        if !(min..=max).contains(&value) {
            self.problems
                .push(format!("{name}={value} must be between {min} and {max}"));
            return default;
        }
        value
    }

    fn flag(&mut self, name: &str, default: bool) -> bool {
        match self.raw(name).map(|v| v.to_ascii_lowercase()) {
            None => default,
            Some(v) => match v.as_str() {
                "1" | "true" | "yes" | "on" => true,
                "0" | "false" | "no" | "off" => false,
                _ => {
                    self.problems
                        .push(format!("{name}={v:?} must be true or false"));
                    default
                }
            },
        }
    }

    fn required_url(&mut self, name: &str, schemes: &[&str]) -> Secret {
        match self.raw(name) {
            None => {
                self.problems.push(format!("{name} is required"));
                Secret::new("")
            }
            Some(v) if !schemes.iter().any(|s| v.starts_with(&format!("{s}://"))) => {
                self.problems.push(format!(
                    "{name} must start with {}://",
                    schemes.join(":// or ")
                ));
                Secret::new(v)
            }
            Some(v) => Secret::new(v),
        }
    }
}

impl Config {
    /// Reads the process environment.
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(&|name| std::env::var(name).ok())
    }

    /// Reads from any source of variables (tests pass a map).
    pub fn from_map(vars: &BTreeMap<String, String>) -> Result<Self, ConfigError> {
        Self::from_lookup(&|name| vars.get(name).cloned())
    }

    pub fn from_lookup(lookup: &dyn Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let mut r = Reader {
            lookup,
            problems: Vec::new(),
        };

        let database_url = r.required_url("DATABASE_URL", &["postgres", "postgresql"]);
        let redis_url = r.required_url("REDIS_URL", &["redis", "rediss", "unix", "redis+cluster"]);
        let redis = if redis_url.expose().starts_with(REDIS_CLUSTER_SCHEME) {
            parse_redis_cluster("REDIS_URL", redis_url.expose()).unwrap_or_else(|why| {
                r.problems.push(why);
                RedisTarget::Single(Secret::new(""))
            })
        } else {
            RedisTarget::Single(redis_url)
        };
        let bind_address = r.parse(
            "BIND_ADDRESS",
            SocketAddr::from(([127, 0, 0, 1], 8080)),
            "a host:port address such as 127.0.0.1:8080",
        );
        let debug = r.flag("DEBUG", false);
        let service_mode = match r.raw("SERVICE_MODE") {
            None => ServiceMode::Full,
            Some(v) => v.parse().unwrap_or_else(|why| {
                r.problems.push(format!("SERVICE_MODE={v:?} {why}"));
                ServiceMode::Full
            }),
        };
        let mcp_server_enabled = r.flag("MCP_SERVER_ENABLED", false);

        let cors_origins = parse_origins(
            &r.string(
                "CORS_ORIGINS",
                "http://localhost:3000,http://localhost:5173",
            ),
            &mut r.problems,
        );

        let jwt_secret_key = Secret::new(r.string("JWT_SECRET_KEY", JWT_SECRET_PLACEHOLDER));
        if service_mode == ServiceMode::Full {
            if jwt_secret_key.expose() == JWT_SECRET_PLACEHOLDER {
                r.problems.push(
                    "JWT_SECRET_KEY is the placeholder value; full mode needs a random secret \
                     (for example 32 random bytes as hex)"
                        .into(),
                );
            } else if jwt_secret_key.expose().len() < 32 {
                r.problems
                    .push("JWT_SECRET_KEY must be at least 32 characters long".into());
            }
        }
        let jwt_algorithm = r.string("JWT_ALGORITHM", "HS256");
        if jwt_algorithm != "HS256" {
            r.problems.push(format!(
                "JWT_ALGORITHM={jwt_algorithm:?}: only HS256 is supported"
            ));
        }
        let access_token_expire_minutes = r.bounded("ACCESS_TOKEN_EXPIRE_MINUTES", 15, 1, 1440);
        let refresh_token_expire_days = r.bounded("REFRESH_TOKEN_EXPIRE_DAYS", 30, 1, 365);
        let require_email_verification = r.flag("REQUIRE_EMAIL_VERIFICATION", false);
        let fernet_key = r.raw("FERNET_KEY").map(Secret::new);
        if let Some(key) = &fernet_key
            && !is_fernet_key(key.expose())
        {
            r.problems
                .push("FERNET_KEY must be 32 bytes in URL-safe base64 (44 characters)".into());
        }
        let mcp_max_image_payload_mb = r.bounded("MCP_MAX_IMAGE_PAYLOAD_MB", 4, 1, 64);
        let storage_strip_exif = r.flag("STORAGE_STRIP_EXIF", true);
        let storage_dir = std::path::PathBuf::from(r.string("STORAGE_DIR", ".local/storage"));
        let photo_max_upload_bytes =
            r.bounded("PHOTO_MAX_UPLOAD_MB", 20, 1, 200) as usize * 1024 * 1024;
        let photo_max_megapixels = r.bounded("PHOTO_MAX_MEGAPIXELS", 50, 1, 200);
        let photo_rendition_workers = r.bounded("PHOTO_RENDITION_WORKERS", 1, 0, 64);
        let photo_rendition_max_attempts = r.bounded("PHOTO_RENDITION_MAX_ATTEMPTS", 5, 1, 100);
        let photo_decode_concurrency = r.bounded("PHOTO_DECODE_CONCURRENCY", 2, 1, 64);
        let photo_decode_per_garden = r.bounded("PHOTO_DECODE_PER_GARDEN", 1, 1, 64);
        let photo_decode_wait_seconds = r.bounded("PHOTO_DECODE_WAIT_SECONDS", 10, 0, 300);
        let photo_max_pixels_per_byte = r.bounded("PHOTO_MAX_PIXELS_PER_BYTE", 100, 1, 100_000);
        let photo_quota_bytes_per_garden =
            u64::from(r.bounded("PHOTO_QUOTA_MB_PER_GARDEN", 2048, 1, 10_000_000)) * 1024 * 1024;
        let photo_orphan_grace_minutes = r.bounded("PHOTO_ORPHAN_GRACE_MINUTES", 60, 0, 100_000);
        let photo_sweep_interval_minutes =
            r.bounded("PHOTO_SWEEP_INTERVAL_MINUTES", 60, 0, 100_000);
        let mcp_max_batch_response_bytes =
            r.bounded("MCP_MAX_BATCH_RESPONSE_MB", 8, 1, 1024) as usize * 1024 * 1024;

        let mut placements = vec![PlacementConfig {
            name: PRIMARY_PLACEMENT.into(),
            url: database_url.clone(),
        }];
        if let Some(extra) = r.raw("TENANT_PLACEMENTS") {
            parse_placements(&extra, &mut placements, &mut r.problems);
        }
        let default_placement = r.string("DEFAULT_PLACEMENT", PRIMARY_PLACEMENT);
        if !placements.iter().any(|p| p.name == default_placement) {
            r.problems.push(format!(
                "DEFAULT_PLACEMENT={default_placement:?} names no placement (known: {})",
                placements
                    .iter()
                    .map(|p| p.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }

        let db_max_connections = r.bounded("DB_MAX_CONNECTIONS", 10, 1, 500);
        let db_read_connections = r.bounded("DB_READ_CONNECTIONS", 10, 1, 500);
        let db_acquire_timeout = Duration::from_secs(u64::from(r.bounded(
            "DB_ACQUIRE_TIMEOUT_SECONDS",
            5,
            1,
            120,
        )));
        let db_max_lifetime = Duration::from_secs(u64::from(r.bounded(
            "DB_MAX_LIFETIME_SECS",
            600,
            10,
            86_400,
        )));
        let db_idle_timeout =
            Duration::from_secs(u64::from(r.bounded("DB_IDLE_TIMEOUT_SECS", 300, 1, 86_400)));
        let max_body_bytes =
            r.bounded("MAX_BODY_BYTES", 1024 * 1024, 1024, 64 * 1024 * 1024) as usize;
        let shutdown_grace =
            Duration::from_secs(u64::from(r.bounded("SHUTDOWN_GRACE_SECONDS", 25, 1, 600)));
        // Provisioning takes well under a second; the default leaves room for a slow server
        // and long migrations, and the fault runs set a few seconds.
        let provisioning_timeout = Duration::from_secs(u64::from(r.bounded(
            "TENANT_PROVISIONING_TIMEOUT_SECONDS",
            600,
            1,
            86_400,
        )));
        let log_format = r.parse("LOG_FORMAT", LogFormat::Json, "`json` or `pretty`");
        let redis_key_prefix = r.string("REDIS_KEY_PREFIX", "kultiva");
        if redis_key_prefix.is_empty()
            || redis_key_prefix.len() > 64
            || !redis_key_prefix
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'))
        {
            r.problems.push(
                "REDIS_KEY_PREFIX must be 1-64 characters of letters, digits, - _ : .".into(),
            );
        }
        let frontend_url = r
            .string("FRONTEND_URL", "http://localhost:5173")
            .trim_end_matches('/')
            .to_owned();
        if !(frontend_url.starts_with("http://") || frontend_url.starts_with("https://")) {
            r.problems
                .push("FRONTEND_URL must be an http:// or https:// URL".into());
        }
        let public_url = r
            .raw("PUBLIC_URL")
            .unwrap_or_else(|| format!("http://{}", bind_address))
            .trim_end_matches('/')
            .to_owned();
        if !(public_url.starts_with("http://") || public_url.starts_with("https://")) {
            r.problems
                .push("PUBLIC_URL must be an http:// or https:// URL".into());
        }
        let enrichment_gbif_url = r
            .string("ENRICHMENT_GBIF_URL", "https://api.gbif.org/v1")
            .trim_end_matches('/')
            .to_owned();
        if !(enrichment_gbif_url.starts_with("http://")
            || enrichment_gbif_url.starts_with("https://"))
        {
            r.problems
                .push("ENRICHMENT_GBIF_URL must be an http:// or https:// URL".into());
        }
        let enrichment_timeout = Duration::from_secs(u64::from(r.bounded(
            "ENRICHMENT_TIMEOUT_SECONDS",
            10,
            1,
            120,
        )));
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get() as u32);
        let password_hash_concurrency = r.bounded("PASSWORD_HASH_CONCURRENCY", cores, 1, 256);
        let smtp_url = r.raw("SMTP_URL").map(Secret::new);
        if let Some(Err(why)) = smtp_url.as_ref().map(|url| check_smtp_url(url.expose())) {
            r.problems.push(why);
        }
        let mail_from = r.string("MAIL_FROM", DEFAULT_MAIL_FROM);
        if let Err(why) = check_mail_from(&mail_from) {
            r.problems.push(why);
        }
        let rate_limit_auth_per_minute =
            r.bounded("RATE_LIMIT_AUTH_PER_MINUTE", 20, 1, MAX_RATE_PER_MINUTE);
        let rate_limit_general_per_minute =
            r.bounded("RATE_LIMIT_GENERAL_PER_MINUTE", 100, 1, MAX_RATE_PER_MINUTE);
        let rate_limit_registration_per_minute = r.bounded(
            "RATE_LIMIT_REGISTRATION_PER_MINUTE",
            30,
            1,
            MAX_RATE_PER_MINUTE,
        );
        let mail_per_address_per_hour = r.bounded("MAIL_PER_ADDRESS_PER_HOUR", 3, 1, 1000);
        let max_gardens_per_account = r.bounded("MAX_GARDENS_PER_ACCOUNT", 10, 1, 100_000);
        let invitation_expire_days = r.bounded("INVITATION_EXPIRE_DAYS", 7, 1, 90);
        let invitations_per_inviter_per_hour =
            r.bounded("INVITATIONS_PER_INVITER_PER_HOUR", 20, 1, 10_000);
        let invitations_per_garden_per_hour =
            r.bounded("INVITATIONS_PER_GARDEN_PER_HOUR", 50, 1, 10_000);
        let garden_transfers_per_account_per_hour =
            r.bounded("GARDEN_TRANSFERS_PER_ACCOUNT_PER_HOUR", 4, 1, 1000);
        let garden_import_max_bytes =
            u64::from(r.bounded("GARDEN_IMPORT_MAX_MB", 1024, 1, 100_000)) * 1024 * 1024;
        let mcp_sessions_per_account = r.bounded("MCP_SESSIONS_PER_ACCOUNT", 20, 1, 1000);
        let trusted_proxies = TrustedProxies::parse(&r.string("TRUSTED_PROXIES", ""))
            .unwrap_or_else(|problems| {
                r.problems.extend(problems);
                TrustedProxies::default()
            });

        let metrics_bind_address = r.raw("METRICS_BIND_ADDRESS").and_then(|v| {
            let parsed = v.parse::<SocketAddr>().ok();
            if parsed.is_none() {
                r.problems.push(format!(
                    "METRICS_BIND_ADDRESS={v:?} is not a host:port address such as 0.0.0.0:9464"
                ));
            }
            parsed
        });
        if let Some(addr) = metrics_bind_address
            && addr.port() != 0
            && addr == bind_address
        {
            r.problems
                .push("METRICS_BIND_ADDRESS must differ from BIND_ADDRESS".into());
        }
        let metrics_token = r.raw("METRICS_TOKEN").map(Secret::new);
        if metrics_token
            .as_ref()
            .is_some_and(|t| t.expose().chars().count() < 32)
        {
            r.problems
                .push("METRICS_TOKEN must be at least 32 characters long".into());
        }

        let webhook_allow_private_targets = r.flag("WEBHOOK_ALLOW_PRIVATE_TARGETS", false);
        let schedule_text = r.string(
            "WEBHOOK_RETRY_SCHEDULE",
            "5,300,1800,7200,18000,36000,36000",
        );
        let webhook_retry_schedule: Vec<f64> = schedule_text
            .split(',')
            .map(|s| s.trim().parse::<f64>())
            .collect::<Result<Vec<f64>, _>>()
            .ok()
            .filter(|v| {
                !v.is_empty() && v.len() <= 30 && v.iter().all(|s| s.is_finite() && *s >= 0.0 && *s <= 172_800.0)
            })
            .unwrap_or_else(|| {
                r.problems.push(format!(
                    "WEBHOOK_RETRY_SCHEDULE={schedule_text:?} is not 1-30 comma-separated seconds (0-172800)"
                ));
                Vec::new()
            });
        let webhook_poll = Duration::from_millis(u64::from(r.bounded(
            "WEBHOOK_POLL_MILLIS",
            1000,
            50,
            60_000,
        )));
        let webhook_timeout =
            Duration::from_secs(u64::from(r.bounded("WEBHOOK_TIMEOUT_SECONDS", 10, 1, 30)));
        let digest_schedule = r.flag("DIGEST_SCHEDULE", true);
        let digest_interval =
            Duration::from_secs(u64::from(r.bounded("DIGEST_INTERVAL_SECONDS", 60, 1, 3600)));
        let alert_scan_interval =
            Duration::from_secs(u64::from(r.bounded("ALERT_SCAN_SECONDS", 60, 0, 86_400)));
        let alert_after_minutes = r.bounded(
            "ALERT_AFTER_MINUTES",
            crate::rules::alerts::ALERT_AFTER_MINUTES_DEFAULT,
            0,
            1440,
        );
        let weather_url = r
            .raw("WEATHER_URL")
            .map(|u| u.trim_end_matches('/').to_owned());
        if weather_url
            .as_ref()
            .is_some_and(|u| !(u.starts_with("http://") || u.starts_with("https://")))
        {
            r.problems
                .push("WEATHER_URL must be an http:// or https:// URL".into());
        }
        let weather_poll_interval =
            Duration::from_secs(60 * u64::from(r.bounded("WEATHER_POLL_MINUTES", 60, 0, 10_080)));
        let weather_timeout =
            Duration::from_secs(u64::from(r.bounded("WEATHER_TIMEOUT_SECONDS", 10, 1, 120)));
        let vapid_private_key = r.raw("VAPID_PRIVATE_KEY").map(Secret::new);
        if let Some(key) = &vapid_private_key
            && !vapid_key_is_valid(key.expose())
        {
            // The value itself stays out of the message: it is a private key.
            r.problems.push(
                "VAPID_PRIVATE_KEY must be a P-256 private key: 32 bytes in base64url".into(),
            );
        }
        let vapid_subject = r.string("VAPID_SUBJECT", &default_vapid_subject(&mail_from));
        if !(vapid_subject.starts_with("mailto:") || vapid_subject.starts_with("https://")) {
            r.problems.push(format!(
                "VAPID_SUBJECT={vapid_subject:?} must start with mailto: or https://"
            ));
        }
        let mqtt = mqtt::read(&mut r);

        if !r.problems.is_empty() {
            return Err(ConfigError(r.problems));
        }
        Ok(Self {
            mqtt,
            webhook_allow_private_targets,
            webhook_retry_schedule,
            webhook_poll,
            webhook_timeout,
            digest_schedule,
            digest_interval,
            alert_scan_interval,
            alert_after_minutes,
            weather_url,
            weather_poll_interval,
            weather_timeout,
            vapid_private_key,
            vapid_subject,
            database_url,
            redis,
            bind_address,
            debug,
            service_mode,
            mcp_server_enabled,
            cors_origins,
            jwt_secret_key,
            jwt_algorithm,
            access_token_expire_minutes,
            refresh_token_expire_days,
            require_email_verification,
            fernet_key,
            mcp_max_image_payload_mb,
            storage_strip_exif,
            storage_dir,
            photo_max_upload_bytes,
            photo_max_megapixels,
            photo_rendition_workers,
            photo_rendition_max_attempts,
            photo_decode_concurrency,
            photo_decode_per_garden,
            photo_decode_wait_seconds,
            photo_max_pixels_per_byte,
            photo_quota_bytes_per_garden,
            photo_orphan_grace_minutes,
            photo_sweep_interval_minutes,
            mcp_max_batch_response_bytes,
            placements,
            default_placement,
            db_max_connections,
            db_read_connections,
            db_acquire_timeout,
            db_max_lifetime,
            db_idle_timeout,
            max_body_bytes,
            shutdown_grace,
            provisioning_timeout,
            log_format,
            redis_key_prefix,
            frontend_url,
            public_url,
            password_hash_concurrency,
            smtp_url,
            mail_from,
            rate_limit_auth_per_minute,
            rate_limit_general_per_minute,
            rate_limit_registration_per_minute,
            mail_per_address_per_hour,
            max_gardens_per_account,
            invitation_expire_days,
            invitations_per_inviter_per_hour,
            invitations_per_garden_per_hour,
            garden_transfers_per_account_per_hour,
            garden_import_max_bytes,
            mcp_sessions_per_account,
            trusted_proxies,
            enrichment_gbif_url,
            enrichment_timeout,
            metrics_bind_address,
            metrics_token,
        })
    }
}

/// Origins are compared exactly, so each must be a bare `scheme://host[:port]`.
fn parse_origins(raw: &str, problems: &mut Vec<String>) -> Vec<String> {
    let mut origins = Vec::new();
    for origin in raw.split(',').map(str::trim).filter(|o| !o.is_empty()) {
        let valid = (origin.starts_with("http://") || origin.starts_with("https://"))
            && !origin.ends_with('/')
            && origin
                .split("://")
                .nth(1)
                .is_some_and(|rest| !rest.is_empty() && !rest.contains('/'));
        if origin == "*" {
            problems.push("CORS_ORIGINS may not be `*`: credentials are allowed, so origins are listed exactly".into());
        } else if !valid {
            problems.push(format!(
                "CORS_ORIGINS entry {origin:?} is not an origin like https://app.example.com"
            ));
        } else {
            origins.push(origin.to_owned());
        }
    }
    origins
}

/// `TENANT_PLACEMENTS=eu2=postgres://…,eu3=postgres://…` adds servers beside `primary`.
fn parse_placements(raw: &str, placements: &mut Vec<PlacementConfig>, problems: &mut Vec<String>) {
    for entry in raw.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let Some((name, url)) = entry.split_once('=') else {
            problems.push("TENANT_PLACEMENTS entries must look like name=postgres://…".into());
            continue;
        };
        let name = name.trim();
        let name_ok = !name.is_empty()
            && name.len() <= 32
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if !name_ok {
            problems.push(format!(
                "TENANT_PLACEMENTS name {name:?} must be 1-32 of [a-z0-9-]"
            ));
        } else if placements.iter().any(|p| p.name == name) {
            problems.push(format!("TENANT_PLACEMENTS names {name:?} twice"));
        } else if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
            problems.push(format!(
                "TENANT_PLACEMENTS {name:?} must be a postgres:// URL"
            ));
        } else {
            placements.push(PlacementConfig {
                name: name.to_owned(),
                url: Secret::new(url.trim()),
            });
        }
    }
}

fn is_fernet_key(key: &str) -> bool {
    key.len() == 44
        && key.ends_with('=')
        && key[..43]
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Checks an `SMTP_URL` without ever repeating it (it may hold a password).
pub fn check_smtp_url(raw: &str) -> Result<(), String> {
    let url = url::Url::parse(raw)
        .map_err(|_| "SMTP_URL is not a URL like smtp://user:pass@host:port".to_owned())?;
    let scheme = url.scheme();
    if scheme != "smtp" && scheme != "smtps" {
        return Err("SMTP_URL must start with smtp:// or smtps://".into());
    }
    let host = url
        .host()
        .ok_or_else(|| "SMTP_URL names no host".to_owned())?;
    let mut tls = None;
    for (key, value) in url.query_pairs() {
        if key != "tls" || tls.is_some() {
            return Err(
                "SMTP_URL accepts one query parameter: tls=required or tls=opportunistic".into(),
            );
        }
        tls = Some(value.into_owned());
    }
    match (scheme, tls.as_deref()) {
        (_, None) | ("smtp", Some("required" | "opportunistic")) => {}
        ("smtps", Some(_)) => {
            return Err("SMTP_URL: smtps:// is always TLS; drop the tls parameter".into());
        }
        _ => return Err("SMTP_URL: tls must be `required` or `opportunistic`".into()),
    }
    let loopback = match host {
        // smtp is no "special" scheme to the URL parser: an IPv4 address arrives as a name.
        url::Host::Domain(name) => {
            name.eq_ignore_ascii_case("localhost")
                || name
                    .parse::<std::net::IpAddr>()
                    .is_ok_and(|ip| ip.is_loopback())
        }
        url::Host::Ipv4(ip) => ip.is_loopback(),
        url::Host::Ipv6(ip) => ip.is_loopback(),
    };
    let plain = scheme == "smtp" && tls.as_deref() != Some("required");
    let credentials = !url.username().is_empty() || url.password().is_some();
    if plain && credentials && !loopback {
        return Err(
            "SMTP_URL sends credentials in clear text to a remote host; use smtps:// or \
             smtp://…?tls=required"
                .into(),
        );
    }
    if credentials && (url.username().is_empty() || url.password().is_none()) {
        return Err("SMTP_URL needs both user and password, or neither".into());
    }
    lettre::AsyncSmtpTransport::<lettre::Tokio1Executor>::from_url(raw)
        .map(|_| ())
        .map_err(|_| "SMTP_URL is not usable as an SMTP server address".to_owned())
}

/// Checks `MAIL_FROM` (`Name <address>` or a bare address).
pub fn check_mail_from(raw: &str) -> Result<(), String> {
    <lettre::message::Mailbox as std::str::FromStr>::from_str(raw)
        .map(|_| ())
        .map_err(|e| {
            format!("MAIL_FROM={raw:?} is not a mailbox like `Kultiva <no-reply@example.org>`: {e}")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "0123456789abcdef0123456789abcdef0123456789abcdef";

    fn base() -> BTreeMap<String, String> {
        [
            ("DATABASE_URL", "postgres://u@127.0.0.1:5432/db"),
            ("REDIS_URL", "redis://127.0.0.1:6379/"),
            ("JWT_SECRET_KEY", SECRET),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
    }

    fn with(pairs: &[(&str, &str)]) -> Result<Config, ConfigError> {
        let mut vars = base();
        for (k, v) in pairs {
            vars.insert((*k).to_owned(), (*v).to_owned());
        }
        Config::from_map(&vars)
    }

    #[test]
    fn defaults_follow_the_specification() {
        let cfg = with(&[]).expect("valid");
        assert_eq!(cfg.service_mode, ServiceMode::Full);
        assert!(!cfg.mcp_server_enabled);
        assert_eq!(
            cfg.cors_origins,
            vec!["http://localhost:3000", "http://localhost:5173"]
        );
        assert_eq!(cfg.access_token_expire_minutes, 15);
        assert_eq!(cfg.refresh_token_expire_days, 30);
        assert_eq!(cfg.mcp_max_image_payload_mb, 4);
        assert_eq!(cfg.bind_address.to_string(), "127.0.0.1:8080");
        assert!(!cfg.debug);
        assert_eq!(cfg.placements.len(), 1);
        assert_eq!(cfg.default_placement, PRIMARY_PLACEMENT);
    }

    #[test]
    fn connection_recycling_is_configurable_within_bounds() {
        let cfg = with(&[]).expect("valid");
        assert_eq!(cfg.db_max_lifetime, Duration::from_secs(600));
        assert_eq!(cfg.db_idle_timeout, Duration::from_secs(300));
        let cfg = with(&[
            ("DB_MAX_LIFETIME_SECS", "120"),
            ("DB_IDLE_TIMEOUT_SECS", "30"),
        ])
        .expect("valid");
        assert_eq!(cfg.db_max_lifetime, Duration::from_secs(120));
        assert_eq!(cfg.db_idle_timeout, Duration::from_secs(30));
        let err = with(&[("DB_MAX_LIFETIME_SECS", "5"), ("DB_IDLE_TIMEOUT_SECS", "0")])
            .expect_err("out of bounds");
        assert!(
            err.0.iter().any(|p| p.contains("DB_MAX_LIFETIME_SECS")),
            "{err}"
        );
        assert!(
            err.0.iter().any(|p| p.contains("DB_IDLE_TIMEOUT_SECS")),
            "{err}"
        );
    }

    #[test]
    fn full_mode_refuses_the_placeholder_secret() {
        let mut vars = base();
        vars.remove("JWT_SECRET_KEY");
        let err = Config::from_map(&vars).expect_err("placeholder refused");
        assert!(
            err.to_string()
                .contains("JWT_SECRET_KEY is the placeholder"),
            "{err}"
        );
        let err = with(&[("JWT_SECRET_KEY", JWT_SECRET_PLACEHOLDER)]).expect_err("refused");
        assert!(err.0.iter().any(|p| p.contains("placeholder")));
    }

    #[test]
    fn light_mode_accepts_the_placeholder_secret() {
        let cfg = with(&[
            ("SERVICE_MODE", "light"),
            ("JWT_SECRET_KEY", JWT_SECRET_PLACEHOLDER),
        ])
        .expect("light mode needs no secret");
        assert_eq!(cfg.service_mode, ServiceMode::Light);
    }

    #[test]
    fn every_problem_is_reported_at_once() {
        let err = with(&[
            ("SERVICE_MODE", "heavy"),
            ("ACCESS_TOKEN_EXPIRE_MINUTES", "0"),
            ("BIND_ADDRESS", "nowhere"),
            ("DEBUG", "maybe"),
            ("JWT_ALGORITHM", "none"),
            ("CORS_ORIGINS", "*"),
        ])
        .expect_err("invalid");
        assert_eq!(err.0.len(), 6, "{err}");
    }

    #[test]
    fn missing_urls_are_named() {
        let err = Config::from_map(&BTreeMap::new()).expect_err("invalid");
        let text = err.to_string();
        assert!(text.contains("DATABASE_URL is required"), "{text}");
        assert!(text.contains("REDIS_URL is required"), "{text}");
    }

    #[test]
    fn cors_origins_are_exact_origins() {
        let cfg =
            with(&[("CORS_ORIGINS", " https://a.example.com ,http://b.test:8080")]).expect("valid");
        assert_eq!(
            cfg.cors_origins,
            vec!["https://a.example.com", "http://b.test:8080"]
        );
        assert!(with(&[("CORS_ORIGINS", "https://a.example.com/path")]).is_err());
        assert!(with(&[("CORS_ORIGINS", "a.example.com")]).is_err());
    }

    #[test]
    fn placements_are_parsed_and_checked() {
        let cfg = with(&[
            (
                "TENANT_PLACEMENTS",
                "eu2=postgres://x@h2/db, eu3=postgresql://x@h3/db",
            ),
            ("DEFAULT_PLACEMENT", "eu2"),
        ])
        .expect("valid");
        let names: Vec<_> = cfg.placements.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["primary", "eu2", "eu3"]);
        assert_eq!(cfg.default_placement, "eu2");
        assert!(with(&[("TENANT_PLACEMENTS", "primary=postgres://x@h/db")]).is_err());
        assert!(with(&[("TENANT_PLACEMENTS", "Bad Name=postgres://x@h/db")]).is_err());
        assert!(with(&[("DEFAULT_PLACEMENT", "nowhere")]).is_err());
    }

    #[test]
    fn secrets_do_not_print() {
        let cfg = with(&[]).expect("valid");
        let debug = format!("{cfg:?}");
        assert!(!debug.contains(SECRET));
        assert!(!debug.contains("postgres://u@"));
    }

    #[test]
    fn mail_settings_are_checked_without_printing_the_password() {
        let cfg = with(&[]).expect("valid");
        assert!(cfg.smtp_url.is_none());
        assert_eq!(cfg.mail_from, DEFAULT_MAIL_FROM);
        let cfg = with(&[
            ("SMTP_URL", "smtp://mailer:hunter2-smtp@127.0.0.1:2525"),
            ("MAIL_FROM", "Garden <garden@example.org>"),
        ])
        .expect("valid");
        assert!(!format!("{cfg:?}").contains("hunter2-smtp"));
        let err = with(&[
            ("SMTP_URL", "smtp://mailer:hunter2-smtp@mail.example.org:25"),
            ("MAIL_FROM", "not a mailbox"),
        ])
        .expect_err("refused");
        assert_eq!(err.0.len(), 2, "{err}");
        assert!(!err.to_string().contains("hunter2-smtp"), "{err}");
        assert!(with(&[("SMTP_URL", "imap://mail.example.org")]).is_err());
    }

    #[test]
    fn rate_limits_default_to_the_specification_and_are_bounded() {
        let cfg = with(&[]).expect("valid");
        assert_eq!(cfg.rate_limit_auth_per_minute, 20);
        assert_eq!(cfg.rate_limit_general_per_minute, 100);
        assert!(cfg.trusted_proxies.is_empty());
        let cfg = with(&[
            ("RATE_LIMIT_AUTH_PER_MINUTE", "5"),
            ("RATE_LIMIT_GENERAL_PER_MINUTE", "1000000"),
        ])
        .expect("valid");
        assert_eq!(cfg.rate_limit_auth_per_minute, 5);
        assert_eq!(cfg.rate_limit_general_per_minute, 1_000_000);
        for (name, value) in [
            ("RATE_LIMIT_AUTH_PER_MINUTE", "0"),
            ("RATE_LIMIT_AUTH_PER_MINUTE", "many"),
            ("RATE_LIMIT_GENERAL_PER_MINUTE", "-1"),
            ("RATE_LIMIT_GENERAL_PER_MINUTE", "10000001"),
        ] {
            let err = with(&[(name, value)]).expect_err(value);
            assert!(err.to_string().contains(name), "{err}");
        }
    }

    #[test]
    fn account_safety_limits_have_defaults_and_bounds() {
        let cfg = with(&[]).expect("valid");
        assert_eq!(cfg.rate_limit_registration_per_minute, 30);
        assert_eq!(cfg.mail_per_address_per_hour, 3);
        assert_eq!(cfg.max_gardens_per_account, 10);
        assert_eq!(cfg.invitation_expire_days, 7);
        assert_eq!(cfg.invitations_per_inviter_per_hour, 20);
        assert_eq!(cfg.invitations_per_garden_per_hour, 50);
        assert_eq!(cfg.garden_transfers_per_account_per_hour, 4);
        assert_eq!(cfg.garden_import_max_bytes, 1024 * 1024 * 1024);
        assert_eq!(cfg.mcp_sessions_per_account, 20);
        for (name, value) in [
            ("RATE_LIMIT_REGISTRATION_PER_MINUTE", "0"),
            ("MAIL_PER_ADDRESS_PER_HOUR", "0"),
            ("MAIL_PER_ADDRESS_PER_HOUR", "1001"),
            ("MAX_GARDENS_PER_ACCOUNT", "0"),
            ("INVITATION_EXPIRE_DAYS", "91"),
            ("INVITATION_EXPIRE_DAYS", "soon"),
        ] {
            let err = with(&[(name, value)]).expect_err(value);
            assert!(err.to_string().contains(name), "{err}");
        }
    }

    #[test]
    fn trusted_proxies_are_validated_with_the_rest() {
        let cfg = with(&[("TRUSTED_PROXIES", "10.0.0.0/8, 127.0.0.1, fd00::/8")]).expect("valid");
        assert!(
            cfg.trusted_proxies
                .contains("10.20.30.40".parse().expect("ip"))
        );
        assert!(!cfg.trusted_proxies.contains("8.8.8.8".parse().expect("ip")));
        let err = with(&[
            ("TRUSTED_PROXIES", "10.0.0.1/8,proxy.local"),
            ("DEBUG", "maybe"),
        ])
        .expect_err("invalid");
        assert_eq!(err.0.len(), 3, "{err}");
        assert!(
            err.to_string().contains("did you mean 10.0.0.0/8?"),
            "{err}"
        );
        assert!(err.to_string().contains("\"proxy.local\""), "{err}");
    }

    #[test]
    fn metrics_settings_are_optional_and_checked() {
        let cfg = with(&[]).expect("valid");
        assert!(cfg.metrics_bind_address.is_none());
        assert!(cfg.metrics_token.is_none());
        let token = "m3tr1cs-t0ken-0123456789abcdef0123";
        let cfg = with(&[
            ("METRICS_BIND_ADDRESS", "0.0.0.0:9464"),
            ("METRICS_TOKEN", token),
        ])
        .expect("valid");
        assert_eq!(
            cfg.metrics_bind_address.map(|a| a.to_string()).as_deref(),
            Some("0.0.0.0:9464")
        );
        assert!(
            !format!("{cfg:?}").contains(token),
            "the token never prints"
        );
        let err = with(&[("METRICS_TOKEN", "short-token")]).expect_err("too short");
        assert!(err.to_string().contains("METRICS_TOKEN"), "{err}");
        assert!(!err.to_string().contains("short-token"), "{err}");
        assert!(with(&[("METRICS_BIND_ADDRESS", "nowhere")]).is_err());
        let err = with(&[
            ("BIND_ADDRESS", "127.0.0.1:8080"),
            ("METRICS_BIND_ADDRESS", "127.0.0.1:8080"),
        ])
        .expect_err("same address");
        assert!(err.to_string().contains("METRICS_BIND_ADDRESS"), "{err}");
    }

    #[test]
    fn redis_url_names_one_server_or_a_cluster() {
        let cfg = with(&[]).expect("valid");
        assert_eq!(
            cfg.redis,
            RedisTarget::Single(Secret::new("redis://127.0.0.1:6379/"))
        );
        assert!(!cfg.redis.is_cluster());
        let cfg = with(&[("REDIS_URL", "rediss://h.example:6380/2")]).expect("valid");
        assert!(!cfg.redis.is_cluster(), "rediss:// stays one server");

        let cfg = with(&[(
            "REDIS_URL",
            "redis+cluster://127.0.0.1:57001, 127.0.0.1:57002,node-3.example:57003",
        )])
        .expect("valid");
        let RedisTarget::Cluster { nodes } = &cfg.redis else {
            panic!("a cluster: {:?}", cfg.redis);
        };
        let nodes: Vec<_> = nodes.iter().map(Secret::expose).collect();
        assert_eq!(
            nodes,
            [
                "redis://127.0.0.1:57001/",
                "redis://127.0.0.1:57002/",
                "redis://node-3.example:57003/"
            ]
        );
        // Credentials go to every node; /0 is allowed; a missing port is Redis's 6379.
        let cfg = with(&[(
            "REDIS_URL",
            "redis+cluster://app:hunter2-redis@10.0.0.1:7000,[::1]:7001,10.0.0.3/0",
        )])
        .expect("valid");
        let RedisTarget::Cluster { nodes } = &cfg.redis else {
            panic!("a cluster");
        };
        let nodes: Vec<_> = nodes.iter().map(Secret::expose).collect();
        assert_eq!(
            nodes,
            [
                "redis://app:hunter2-redis@10.0.0.1:7000/",
                "redis://app:hunter2-redis@[::1]:7001/",
                "redis://app:hunter2-redis@10.0.0.3:6379/"
            ]
        );
        assert!(!format!("{cfg:?}").contains("hunter2-redis"));
    }

    #[test]
    fn a_cluster_url_is_checked_without_printing_the_password() {
        for (url, says) in [
            (
                "redis+cluster://:hunter2-redis@h1:7000/3",
                "only database 0",
            ),
            (
                "redis+cluster://:hunter2-redis@h1:7000,,h2:7001",
                "host:port",
            ),
            ("redis+cluster://:hunter2-redis@h1:notaport", "h1:notaport"),
            ("redis+cluster://:hunter2-redis@h1:0", "h1:0"),
            ("redis+cluster://:hunter2-redis@", "host:port"),
            (
                "redis+cluster://:hunter2-redis@h1:7000?timeout=1",
                "no query",
            ),
            (
                "redis+cluster://:hunter2-redis@bad host:7000",
                "bad host:7000",
            ),
        ] {
            let err = with(&[("REDIS_URL", url)]).expect_err(url);
            let text = err.to_string();
            assert!(text.contains("REDIS_URL"), "{url}: {text}");
            assert!(text.contains(says), "{url}: {text}");
            assert!(!text.contains("hunter2-redis"), "{url}: {text}");
        }
        let err = with(&[("REDIS_URL", "memcached://h1:11211")]).expect_err("scheme");
        assert!(err.to_string().contains("redis+cluster://"), "{err}");
    }

    #[test]
    fn fernet_key_shape_is_checked() {
        assert!(with(&[("FERNET_KEY", "short")]).is_err());
        let key = "ZmVybmV0LWtleS1mb3ItdGVzdHMtMzItYnl0ZXMtISE=";
        assert!(with(&[("FERNET_KEY", key)]).is_ok());
    }
}
