//! Rate limiting with GCRA (the generic cell rate algorithm): one Lua script in Redis keeps a
//! single "theoretical arrival time" per bucket, so every replica sharing the Redis server and
//! key prefix shares each budget. While Redis is unreachable an in-process GCRA (`governor`)
//! with the same quota takes over, per replica: a limit never silently disappears.
//!
//! A quota of `n` per minute lets `n` requests through at once, then one every `60/n` seconds;
//! a key lives only until its bucket is full again (then it expires by itself).

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant};

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota};
use redis::Script;

use super::redis::SharedRedis;

/// Longest wait for Redis on a limit check before the in-process limiter decides.
const REDIS_DEADLINE: Duration = Duration::from_secs(1);
/// After a failure, checks skip Redis this long (so an outage costs no wait per request).
const REDIS_RETRY_AFTER: Duration = Duration::from_secs(5);
/// How often idle buckets are dropped from the in-process limiters.
const LOCAL_SWEEP_EVERY: Duration = Duration::from_secs(60);

/// GCRA over one key, on the Redis server's clock (one clock for all replicas), in
/// microseconds. KEYS[1]: the bucket. ARGV[1]: emission interval (µs per request);
/// ARGV[2]: burst (requests); ARGV[3]: cost (requests drawn at once, at most the burst).
/// Returns `{allowed (1|0), retry_after_µs}`.
/// The state is written with `%.0f` because Lua's default number format keeps only 14
/// significant digits, fewer than a microsecond timestamp has.
static GCRA: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local emission = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local tat = tonumber(redis.call('GET', KEYS[1]) or '') or now
if tat < now then tat = now end
local new_tat = tat + emission * cost
local allow_at = new_tat - burst * emission
if allow_at > now then
  return {0, allow_at - now}
end
redis.call('SET', KEYS[1], string.format('%.0f', new_tat), 'PX', math.ceil((new_tat - now) / 1000))
return {1, 0}
",
    )
});

/// Which budget a request draws on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// Login and registration, per client IP.
    Auth,
    /// Everything else under the API, per caller.
    General,
    /// Registrations, one bucket for the whole service.
    Registration,
    /// Registrations per client IP, drawn before the service-wide bucket: a tenth of it (at
    /// least one), so one client cannot drain it alone.
    RegistrationPerClient,
}

impl Limit {
    /// The limit's name in metrics and logs.
    pub fn label(self) -> &'static str {
        match self {
            Self::Auth => "auth",
            Self::General => "general",
            Self::Registration => "registration",
            Self::RegistrationPerClient => "registration_client",
        }
    }
}

/// Client addresses remembered as over their general budget (at most this many at once).
const MAX_BLOCKED: usize = 100_000;

/// The outcome of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Allow,
    /// Over the limit; the next request of this bucket is allowed after `retry_after`.
    Deny {
        retry_after: Duration,
    },
}

/// One quota: requests per minute, and the in-process limiter used while Redis is down.
struct Budget {
    per_minute: NonZeroU32,
    local: DefaultKeyedRateLimiter<String>,
}

impl Budget {
    fn new(per_minute: u32) -> Self {
        let per_minute = NonZeroU32::new(per_minute).unwrap_or(NonZeroU32::MIN);
        Self {
            per_minute,
            local: DefaultKeyedRateLimiter::hashmap(Quota::per_minute(per_minute)),
        }
    }

    /// Microseconds between two requests at the sustained rate.
    fn emission_micros(&self) -> u64 {
        (60_000_000 / u64::from(self.per_minute.get())).max(1)
    }

    fn check_local(&self, key: &str, cost: NonZeroU32) -> Decision {
        match self.local.check_key_n(&key.to_owned(), cost) {
            Ok(Ok(())) => Decision::Allow,
            Ok(Err(not_until)) => Decision::Deny {
                retry_after: not_until.wait_time_from(DefaultClock::default().now()),
            },
            Err(_) => Decision::Deny {
                retry_after: Duration::from_secs(60),
            },
        }
    }
}

/// Both budgets of a service, and whether Redis currently answers.
pub struct RateLimits {
    auth: Budget,
    general: Budget,
    registration: Budget,
    registration_per_client: Budget,
    /// Client identities whose general budget was found exhausted, with the time it refills
    /// enough for one request. Checked before a presented credential is authenticated, so a
    /// client over its budget (e.g. trying random API keys) costs no database lookup.
    blocked: Mutex<HashMap<String, Instant>>,
    started: Instant,
    /// Milliseconds since `started` before which checks go straight to the local limiter.
    skip_redis_until: AtomicU64,
    degraded: AtomicBool,
    last_sweep: AtomicU64,
}

impl std::fmt::Debug for RateLimits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RateLimits")
            .field("auth_per_minute", &self.auth.per_minute)
            .field("general_per_minute", &self.general.per_minute)
            .field("degraded", &self.degraded.load(Ordering::Relaxed))
            .finish()
    }
}

impl RateLimits {
    pub fn new(
        auth_per_minute: u32,
        general_per_minute: u32,
        registration_per_minute: u32,
    ) -> Self {
        Self {
            auth: Budget::new(auth_per_minute),
            general: Budget::new(general_per_minute),
            registration: Budget::new(registration_per_minute),
            registration_per_client: Budget::new((registration_per_minute / 10).max(1)),
            blocked: Mutex::new(HashMap::new()),
            started: Instant::now(),
            skip_redis_until: AtomicU64::new(0),
            degraded: AtomicBool::new(false),
            last_sweep: AtomicU64::new(0),
        }
    }

    fn budget(&self, limit: Limit) -> &Budget {
        match limit {
            Limit::Auth => &self.auth,
            Limit::General => &self.general,
            Limit::Registration => &self.registration,
            Limit::RegistrationPerClient => &self.registration_per_client,
        }
    }

    /// How long the client identity is still known to be over its general budget.
    pub fn blocked_for(&self, identity: &str) -> Option<Duration> {
        let now = Instant::now();
        let mut blocked = self.blocked.lock().ok()?;
        match blocked.get(identity) {
            Some(until) if *until > now => Some(*until - now),
            Some(_) => {
                blocked.remove(identity);
                None
            }
            None => None,
        }
    }

    /// Remembers that the client identity is over its general budget for `retry_after`.
    pub fn note_blocked(&self, identity: &str, retry_after: Duration) {
        let now = Instant::now();
        let Ok(mut blocked) = self.blocked.lock() else {
            return;
        };
        if blocked.len() >= MAX_BLOCKED {
            blocked.retain(|_, until| *until > now);
            if blocked.len() >= MAX_BLOCKED {
                return;
            }
        }
        blocked.insert(identity.to_owned(), now + retry_after);
    }

    /// Requests per minute of a limit.
    pub fn per_minute(&self, limit: Limit) -> u32 {
        self.budget(limit).per_minute.get()
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Draws one request from the bucket `key` (a full Redis key, its bucket identity in a
    /// `{hash tag}`). Redis decides; when it cannot, the in-process limiter does.
    pub async fn check(&self, redis: &SharedRedis, limit: Limit, key: &str) -> Decision {
        self.check_n(redis, limit, key, 1).await
    }

    /// Draws `cost` requests at once (a JSON-RPC batch counts each message). More than the
    /// whole budget is never allowed.
    pub async fn check_n(
        &self,
        redis: &SharedRedis,
        limit: Limit,
        key: &str,
        cost: u32,
    ) -> Decision {
        let budget = self.budget(limit);
        let Some(cost) = NonZeroU32::new(cost) else {
            return Decision::Allow;
        };
        if cost > budget.per_minute {
            return Decision::Deny {
                retry_after: Duration::from_secs(60),
            };
        }
        if self.now_ms() >= self.skip_redis_until.load(Ordering::Relaxed) {
            match tokio::time::timeout(REDIS_DEADLINE, check_redis(redis, budget, key, cost)).await
            {
                Ok(Ok(decision)) => {
                    if self.degraded.swap(false, Ordering::Relaxed) {
                        tracing::info!("rate limits: Redis answers again; limits are shared");
                    }
                    return decision;
                }
                Ok(Err(err)) => self.redis_failed(&err.to_string()),
                Err(_) => self.redis_failed("no answer within the deadline"),
            }
        }
        self.sweep_local();
        budget.check_local(key, cost)
    }

    fn redis_failed(&self, why: &str) {
        crate::metrics::redis_error(crate::metrics::RedisUse::RateLimit);
        let retry_at = self.now_ms() + REDIS_RETRY_AFTER.as_millis() as u64;
        self.skip_redis_until.store(retry_at, Ordering::Relaxed);
        if !self.degraded.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                error = why,
                "rate limits: Redis unreachable; each replica now limits on its own \
                 with the same quotas until Redis answers again"
            );
        }
    }

    /// Drops full (idle) buckets from the in-process limiters, at most once a minute.
    fn sweep_local(&self) {
        let now = self.now_ms();
        let last = self.last_sweep.load(Ordering::Relaxed);
        if now.saturating_sub(last) < LOCAL_SWEEP_EVERY.as_millis() as u64 {
            return;
        }
        if self
            .last_sweep
            .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
        {
            for budget in [&self.auth, &self.general, &self.registration] {
                budget.local.retain_recent();
                budget.local.shrink_to_fit();
            }
        }
    }
}

async fn check_redis(
    redis: &SharedRedis,
    budget: &Budget,
    key: &str,
    cost: NonZeroU32,
) -> Result<Decision, redis::RedisError> {
    let mut conn = redis.connection().await?;
    let (allowed, retry_micros): (i64, i64) = GCRA
        .key(key)
        .arg(budget.emission_micros())
        .arg(budget.per_minute.get())
        .arg(cost.get())
        .invoke_async(&mut conn)
        .await?;
    Ok(if allowed == 1 {
        Decision::Allow
    } else {
        Decision::Deny {
            retry_after: Duration::from_micros(u64::try_from(retry_micros).unwrap_or(0)),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocked_clients_are_remembered_until_their_budget_refills() {
        let limits = RateLimits::new(1, 1, 1);
        assert_eq!(limits.blocked_for("ip:1.2.3.4"), None);
        limits.note_blocked("ip:1.2.3.4", Duration::from_secs(30));
        let left = limits.blocked_for("ip:1.2.3.4").expect("blocked");
        assert!(left > Duration::from_secs(29) && left <= Duration::from_secs(30));
        assert_eq!(limits.blocked_for("ip:5.6.7.8"), None);
        limits.note_blocked("ip:5.6.7.8", Duration::ZERO);
        assert_eq!(limits.blocked_for("ip:5.6.7.8"), None, "expired");
    }

    #[test]
    fn emission_interval_follows_the_quota() {
        for (per_minute, micros) in [
            (1, 60_000_000),
            (20, 3_000_000),
            (100, 600_000),
            (1_000_000, 60),
        ] {
            assert_eq!(Budget::new(per_minute).emission_micros(), micros);
        }
        // Zero is refused by the configuration; here it would mean one.
        assert_eq!(Budget::new(0).per_minute.get(), 1);
    }

    #[test]
    fn local_limiter_allows_the_burst_then_denies() {
        let budget = Budget::new(3);
        let one = NonZeroU32::MIN;
        for _ in 0..3 {
            assert_eq!(budget.check_local("a", one), Decision::Allow);
        }
        match budget.check_local("a", one) {
            Decision::Deny { retry_after } => {
                assert!(retry_after > Duration::ZERO && retry_after <= Duration::from_secs(20));
            }
            Decision::Allow => panic!("fourth request allowed"),
        }
        assert_eq!(
            budget.check_local("b", one),
            Decision::Allow,
            "other bucket"
        );
        let three = NonZeroU32::new(3).expect("3");
        assert_eq!(
            budget.check_local("c", three),
            Decision::Allow,
            "a batch of three"
        );
        assert!(matches!(
            budget.check_local("c", one),
            Decision::Deny { .. }
        ));
    }
}
