//! Everything a request may need, built once at start and shared (cheap to clone).

pub mod audit;
pub mod cache_feed;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::config::Config;
use crate::crypto::jwt::JwtKeys;
use crate::crypto::password::PasswordHasherPool;
use crate::store::pg::Placements;
use crate::store::rate_limit::RateLimits;
use crate::store::redis::{self, RedisPool, SharedRedis};

#[derive(Clone, Debug)]
pub struct AppState(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    config: Config,
    placements: Placements,
    redis: RedisPool,
    shared_redis: SharedRedis,
    tenant_migrations: KeyedLocks,
    passwords: PasswordHasherPool,
    jwt: JwtKeys,
    light_identity: tokio::sync::OnceCell<LightIdentity>,
    mail_signal: tokio::sync::Notify,
    rate_limits: RateLimits,
    rate_leases: crate::store::rate_lease::RateLeases,
    mcp_audit: crate::state::audit::AuditSink,
    caches: crate::cache::Caches,
}

#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("database configuration: {0}")]
    Database(#[from] sqlx::Error),
    #[error("REDIS_URL: {0}")]
    Redis(#[from] redis::SetupError),
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
        let (redis, shared_redis) = redis::connect_lazy(&config.redis)?;
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
            tenant_migrations: KeyedLocks::default(),
            passwords,
            jwt,
            light_identity: tokio::sync::OnceCell::new(),
            mail_signal: tokio::sync::Notify::new(),
            rate_limits,
            rate_leases: crate::store::rate_lease::RateLeases::default(),
            mcp_audit: crate::state::audit::AuditSink::default(),
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

    /// A Redis key under the configured prefix: `prefix:kind:{tag}:rest…`, with exactly one
    /// hash tag. A Redis Cluster places a key by its tag alone, so keys of one tag share a
    /// slot: a script, pipeline or multi-key command may only touch keys of one tag. `kind` is
    /// a constant of the caller (`rt`, `mcp:session`, …); the tag is the owner (account,
    /// family, bucket identity, …), any text: braces (and `%`) in it are percent-encoded, so
    /// no value can open or close a second tag.
    pub fn redis_key(&self, kind: &str, tag: &str, rest: &[&str]) -> String {
        redis_key(&self.0.config.redis_key_prefix, kind, tag, rest)
    }

    pub fn rate_limits(&self) -> &RateLimits {
        &self.0.rate_limits
    }

    /// The batches of rate-limit draws this replica holds (see `store::rate_lease`).
    pub fn rate_leases(&self) -> &crate::store::rate_lease::RateLeases {
        &self.0.rate_leases
    }

    /// Where tool calls leave their audit rows.
    pub fn mcp_audit(&self) -> &crate::state::audit::AuditSink {
        &self.0.mcp_audit
    }

    pub fn passwords(&self) -> &PasswordHasherPool {
        &self.0.passwords
    }

    pub fn light_identity(&self) -> &tokio::sync::OnceCell<LightIdentity> {
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

    pub fn tenant_migrations(&self) -> &KeyedLocks {
        &self.0.tenant_migrations
    }

    /// Closes every pool; called once the server has drained.
    pub async fn close(&self) {
        self.0.placements.close().await;
        self.0.redis.close();
    }
}

/// See [`AppState::redis_key`].
pub fn redis_key(prefix: &str, kind: &str, tag: &str, rest: &[&str]) -> String {
    debug_assert!(!kind.contains(['{', '}']), "a key kind has no braces");
    let mut key = String::with_capacity(prefix.len() + kind.len() + tag.len() + 8);
    key.push_str(prefix);
    key.push(':');
    key.push_str(kind);
    key.push_str(":{");
    if tag.is_empty() {
        // `{}` would be no tag at all (the whole key would be hashed); a lone `%` is never
        // the encoding of anything else.
        key.push('%');
    }
    for c in tag.chars() {
        match c {
            '{' => key.push_str("%7B"),
            '}' => key.push_str("%7D"),
            '%' => key.push_str("%25"),
            c => key.push(c),
        }
    }
    key.push('}');
    for part in rest {
        key.push(':');
        key.push_str(part);
    }
    key
}

/// In-process single flight by key: concurrent callers of one key wait on one mutex (tenant
/// migrations: the first requests of a garden, instead of each opening a dedicated connection
/// to wait on the advisory lock). `release` drops a key nobody holds or waits on.
#[derive(Debug, Default)]
pub struct KeyedLocks {
    locks: Mutex<HashMap<uuid::Uuid, Arc<tokio::sync::Mutex<()>>>>,
}

impl KeyedLocks {
    pub fn lock_for(&self, tenant: uuid::Uuid) -> Arc<tokio::sync::Mutex<()>> {
        let mut locks = self
            .locks
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        locks.entry(tenant).or_default().clone()
    }

    pub fn release(&self, tenant: uuid::Uuid) {
        let mut locks = self
            .locks
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // Drop the entry when nobody else holds or waits on it, so the map stays small.
        if locks
            .get(&tenant)
            .is_some_and(|l| Arc::strong_count(l) == 1)
        {
            locks.remove(&tenant);
        }
    }
}

/// Light mode's caller: the system user and the default garden it acts in (made on first use
/// by `auth::light`, then kept for the process).
#[derive(Debug, Clone, Copy)]
pub struct LightIdentity {
    pub system_user: uuid::Uuid,
    pub default_tenant: uuid::Uuid,
}

#[cfg(test)]
mod tests {
    use super::redis_key;

    /// The tag Redis Cluster hashes: between the first `{` and the first `}` after it.
    fn hash_tag(key: &str) -> Option<&str> {
        let open = key.find('{')?;
        let close = key[open + 1..].find('}')? + open + 1;
        (close > open + 1).then(|| &key[open + 1..close])
    }

    #[test]
    fn every_key_has_exactly_one_tag_whatever_the_tag_holds() {
        assert_eq!(
            redis_key("kultiva", "rt", "0190-ab", &[]),
            "kultiva:rt:{0190-ab}"
        );
        assert_eq!(
            redis_key("p", "rl", "ip:10.0.0.1", &["auth"]),
            "p:rl:{ip:10.0.0.1}:auth"
        );
        for tag in ["", "%", "{", "}", "a}b{c", "}{", "%7B", "{x}"] {
            let key = redis_key("p", "mcp:session", tag, &["rest"]);
            assert_eq!(key.matches('{').count(), 1, "{key}");
            assert_eq!(key.matches('}').count(), 1, "{key}");
            assert!(hash_tag(&key).is_some_and(|t| !t.is_empty()), "{key}");
        }
        // Distinct tags stay distinct keys.
        let keys: std::collections::BTreeSet<_> = ["", "%", "{", "%7B", "}", "%7D", "%25"]
            .iter()
            .map(|t| redis_key("p", "k", t, &[]))
            .collect();
        assert_eq!(keys.len(), 7, "{keys:?}");
    }
}
