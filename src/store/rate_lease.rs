//! Leased draws on the shared rate-limit buckets: with a large quota, a replica draws a small
//! batch of requests from the caller's Redis bucket at once and lets the next ones of that batch
//! through from memory, so a busy caller costs one Redis round trip per batch instead of one per
//! request.
//!
//! What it keeps of the limiter's promise: nothing is let through that was not drawn from the
//! shared bucket first, so a caller never gets more than the quota across all replicas. What it
//! gives up: a batch not used within [`LEASE_LIFE`] lapses, and its rest stays drawn; so a
//! caller can be refused up to one batch per replica early. The batch is 1 % of the quota, at
//! most [`MAX_LEASE`]; below 200 per minute it is one request, and the limiter is exact.
//! When a batch is refused, the request draws one alone, so near the limit the decision is
//! Redis's, request by request, as without leases.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Longest time a drawn batch is kept for its caller.
pub const LEASE_LIFE: Duration = Duration::from_secs(1);
/// Largest batch drawn at once.
pub const MAX_LEASE: u32 = 16;
/// Buckets holding a batch at once (beyond it, expired ones are dropped; then no new batch is
/// kept, and requests draw one by one).
const MAX_LEASED: usize = 100_000;

/// Requests drawn at once for a quota of `per_minute`: 1 % of it, between 1 and [`MAX_LEASE`].
pub fn lease_size(per_minute: u32) -> u32 {
    (per_minute / 100).clamp(1, MAX_LEASE)
}

#[derive(Debug, Clone, Copy)]
struct Lease {
    left: u32,
    until: Instant,
}

/// The batches one replica holds, by bucket key.
#[derive(Debug, Default)]
pub struct RateLeases {
    held: Mutex<HashMap<String, Lease>>,
}

impl RateLeases {
    /// Takes one request from the batch held for `key`, if there is one still fresh.
    pub fn take(&self, key: &str) -> bool {
        self.take_at(key, Instant::now())
    }

    /// Keeps `count` more drawn requests for `key` (the rest of a batch just drawn).
    pub fn keep(&self, key: &str, count: u32) {
        self.keep_at(key, count, Instant::now());
    }

    fn take_at(&self, key: &str, now: Instant) -> bool {
        let Ok(mut held) = self.held.lock() else {
            return false;
        };
        let Some(lease) = held.get_mut(key) else {
            return false;
        };
        if lease.until <= now || lease.left == 0 {
            held.remove(key);
            return false;
        }
        lease.left -= 1;
        if lease.left == 0 {
            held.remove(key);
        }
        true
    }

    fn keep_at(&self, key: &str, count: u32, now: Instant) {
        if count == 0 {
            return;
        }
        let Ok(mut held) = self.held.lock() else {
            return;
        };
        if let Some(lease) = held.get_mut(key) {
            // Concurrent misses each drew a batch: keep them all (they are paid for), under
            // the newest deadline.
            lease.left = if lease.until > now {
                lease.left.saturating_add(count)
            } else {
                count
            };
            lease.until = now + LEASE_LIFE;
            return;
        }
        if held.len() >= MAX_LEASED {
            held.retain(|_, lease| lease.until > now);
            if held.len() >= MAX_LEASED {
                return;
            }
        }
        held.insert(
            key.to_owned(),
            Lease {
                left: count,
                until: now + LEASE_LIFE,
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_is_one_percent_of_the_quota_within_bounds() {
        assert_eq!(lease_size(1), 1);
        assert_eq!(lease_size(100), 1);
        assert_eq!(lease_size(199), 1);
        assert_eq!(lease_size(200), 2);
        assert_eq!(lease_size(1_000), 10);
        assert_eq!(lease_size(1_000_000), MAX_LEASE);
    }

    #[test]
    fn a_kept_batch_serves_exactly_its_count() {
        let leases = RateLeases::default();
        let now = Instant::now();
        assert!(!leases.take_at("a", now), "nothing held yet");
        leases.keep_at("a", 3, now);
        for _ in 0..3 {
            assert!(leases.take_at("a", now));
        }
        assert!(!leases.take_at("a", now), "the batch is used up");
        assert!(!leases.take_at("b", now), "another bucket holds nothing");
    }

    #[test]
    fn a_batch_lapses_after_its_life() {
        let leases = RateLeases::default();
        let now = Instant::now();
        leases.keep_at("a", 5, now);
        assert!(leases.take_at("a", now + LEASE_LIFE / 2));
        assert!(!leases.take_at("a", now + LEASE_LIFE));
        assert!(!leases.take_at("a", now), "the lapsed batch was dropped");
    }

    #[test]
    fn concurrent_batches_add_up_and_a_lapsed_one_does_not() {
        let leases = RateLeases::default();
        let now = Instant::now();
        leases.keep_at("a", 2, now);
        leases.keep_at("a", 2, now);
        let later = now + LEASE_LIFE + Duration::from_millis(1);
        leases.keep_at("b", 2, now);
        leases.keep_at("b", 1, later);
        let taken = (0..10).filter(|_| leases.take_at("a", now)).count();
        assert_eq!(taken, 4);
        let taken = (0..10).filter(|_| leases.take_at("b", later)).count();
        assert_eq!(taken, 1, "the lapsed rest is not revived");
    }
}
