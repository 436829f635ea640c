//! Everything a request may need, built once at start and shared (cheap to clone).

use std::sync::Arc;

use crate::auth::jwt::JwtKeys;
use crate::auth::password::PasswordHasherPool;
use crate::config::Config;
use crate::store::pg::Placements;
use crate::store::rate_limit::RateLimits;
use crate::store::redis::{self, RedisPool, SharedRedis};
use crate::tenancy::migrate::TenantMigrations;

#[derive(Clone, Debug)]
pub struct AppState(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    config: Config,
    placements: Placements,
    redis: RedisPool,
    shared_redis: SharedRedis,
    tenant_migrations: TenantMigrations,
    passwords: PasswordHasherPool,
    jwt: JwtKeys,
    light_identity: tokio::sync::OnceCell<crate::auth::light::LightIdentity>,
    mail_signal: tokio::sync::Notify,
    rate_limits: RateLimits,
    rate_leases: crate::store::rate_lease::RateLeases,
    mcp_audit: crate::mcp::audit::AuditSink,
    caches: crate::cache::Caches,
}

#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("database configuration: {0}")]
    Database(#[from] sqlx::Error),
    #[error("redis configuration: {0}")]
    Redis(#[from] deadpool_redis::CreatePoolError),
    #[error("redis configuration: {0}")]
    RedisUrl(#[from] ::redis::RedisError),
    #[error("{0}")]
    Crypto(String),
}

impl AppState {
    /// Builds pools (connections open on first use).
    pub fn new(config: Config) -> Result<Self, StateError> {
        let placements = Placements::connect_lazy(&config)?;
        Self::with_placements(config, placements)
    }

    pub fn with_placements(config: Config, placements: Placements) -> Result<Self, StateError> {
        crate::tls::install_crypto_provider();
        let redis = redis::create_pool(config.redis_url.expose())?;
        let shared_redis = SharedRedis::new(config.redis_url.expose())?;
        let passwords = PasswordHasherPool::new(config.password_hash_concurrency as usize)
            .map_err(StateError::Crypto)?;
        let jwt = JwtKeys::new(
            config.jwt_secret_key.expose(),
            i64::from(config.access_token_expire_minutes) * 60,
        );
        let rate_limits = RateLimits::new(
            config.rate_limit_auth_per_minute,
            config.rate_limit_general_per_minute,
            config.rate_limit_registration_per_minute,
        );
        Ok(Self(Arc::new(Inner {
            config,
            placements,
            redis,
            shared_redis,
            tenant_migrations: TenantMigrations::default(),
            passwords,
            jwt,
            light_identity: tokio::sync::OnceCell::new(),
            mail_signal: tokio::sync::Notify::new(),
            rate_limits,
            rate_leases: crate::store::rate_lease::RateLeases::default(),
            mcp_audit: crate::mcp::audit::AuditSink::default(),
            caches: crate::cache::Caches::new(),
        })))
    }

    pub fn config(&self) -> &Config {
        &self.0.config
    }

    pub fn placements(&self) -> &Placements {
        &self.0.placements
    }

    /// The pool of the primary server, home of the `platform` schema.
    pub fn platform_pool(&self) -> &sqlx::PgPool {
        self.0.placements.primary().pool()
    }

    pub fn redis(&self) -> &RedisPool {
        &self.0.redis
    }

    /// The shared multiplexed connection for per-request paths (see `store::redis`).
    pub fn shared_redis(&self) -> &SharedRedis {
        &self.0.shared_redis
    }

    /// A Redis key under the configured prefix: `prefix:part:part…`.
    pub fn redis_key(&self, parts: &[&str]) -> String {
        let mut key = self.0.config.redis_key_prefix.clone();
        for part in parts {
            key.push(':');
            key.push_str(part);
        }
        key
    }

    pub fn rate_limits(&self) -> &RateLimits {
        &self.0.rate_limits
    }

    /// The batches of rate-limit draws this replica holds (see `store::rate_lease`).
    pub fn rate_leases(&self) -> &crate::store::rate_lease::RateLeases {
        &self.0.rate_leases
    }

    /// Where tool calls leave their audit rows.
    pub fn mcp_audit(&self) -> &crate::mcp::audit::AuditSink {
        &self.0.mcp_audit
    }

    pub fn passwords(&self) -> &PasswordHasherPool {
        &self.0.passwords
    }

    pub fn light_identity(&self) -> &tokio::sync::OnceCell<crate::auth::light::LightIdentity> {
        &self.0.light_identity
    }

    /// Tells this process's mail worker that something was queued (call after the commit).
    pub fn mail_wakeup(&self) {
        self.0.mail_signal.notify_one();
    }

    /// What the mail worker waits on.
    pub fn mail_signal(&self) -> &tokio::sync::Notify {
        &self.0.mail_signal
    }

    pub fn jwt(&self) -> &JwtKeys {
        &self.0.jwt
    }

    /// The hot-path caches (tenants, roles, accounts, API keys, catalogue reads).
    pub fn caches(&self) -> &crate::cache::Caches {
        &self.0.caches
    }

    pub fn tenant_migrations(&self) -> &TenantMigrations {
        &self.0.tenant_migrations
    }

    /// Closes every pool; called once the server has drained.
    pub async fn close(&self) {
        self.0.placements.close().await;
        self.0.redis.close();
    }
}
