//! In-process caches of the hot path: slug → tenant record, (caller, tenant) → role, the
//! account record every authenticated request checks (active, token generation), API key →
//! owner, and rendered catalogue reads.
//!
//! # Invalidation (every replica, within [`BOUND`])
//! Triggers on `platform.users`, `platform.memberships`, `platform.tenants`,
//! `platform.api_keys` and the catalogue tables (migration 0008) send a PostgreSQL
//! notification on the channel [`CHANNEL`] for every change that matters. PostgreSQL delivers
//! notifications only when the writing transaction commits, so every writer triggers it (a
//! service, another helper's repository, the CLI, `psql`) and no replica can reload a row
//! before the change is visible. Each replica listens on a dedicated connection ([`feed`]).
//!
//! # Freshness and the failure mode
//! The listener cannot tell by itself that it still hears everything, so every replica sends
//! itself a ping through the same channel every [`PING_EVERY`]. PostgreSQL delivers
//! notifications to a listener in commit order, so when ping *n* (sent at *t*) comes back,
//! every change committed before *t* has been applied. An entry may be served while
//! - it was loaded less than [`BOUND`] ago (whatever the feed does), or
//! - it was loaded during the current, confirmed listening session and the last confirmed
//!   ping was sent less than [`BOUND`] ago.
//!
//! When the listener's connection drops, pings stop coming back: within [`BOUND`] every
//! entry stops being served and requests read the database, until a ping comes back on a new
//! session (entries of earlier sessions are never served again). Redis is not involved:
//! Redis being unreachable changes nothing here.
//!
//! A load that overlaps an invalidation is used for its request but not kept (a generation
//! counter checked under the map's lock), so a reload racing a change cannot pin old data.
//!
//! # Young-only entries (the tool server)
//! Two maps are served only while an entry is younger than [`BOUND`], whatever the feed says,
//! because some of their changes are never announced: an account's gardens (a new membership
//! sends no notification; removals and role changes do, and drop the entry at once) and
//! tool-server sessions (they live in Redis; an idle expiry or a `DELETE` on another replica
//! announces nothing). A busy caller reloads them at most once per [`BOUND`] per replica.

pub mod feed;

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use uuid::Uuid;

use crate::auth::Role;
use crate::directory::users::model::User;
use crate::tenancy::TenantRecord;

/// The PostgreSQL notification channel of cache invalidations (and of the replicas' pings).
pub const CHANNEL: &str = "kultiva_cache";

/// Longest time an entry is served after the database changed. Below one second, leaving
/// room for the delivery of the notification itself.
pub const BOUND: Duration = Duration::from_millis(900);

/// How often a replica checks that its listener still hears the channel.
pub const PING_EVERY: Duration = Duration::from_millis(200);

/// Entries per map; a full map is emptied (simple, and refilled by the next requests).
const TENANT_CAP: usize = 20_000;
const ROLE_CAP: usize = 100_000;
const ACCOUNT_CAP: usize = 100_000;
const KEY_CAP: usize = 50_000;
/// Catalogue answers can be large (a page of records): fewer of them.
const CATALOG_CAP: usize = 2_000;
const MEMBERSHIPS_CAP: usize = 100_000;
const MCP_SESSION_CAP: usize = 100_000;

/// The listener's state, shared with every lookup.
#[derive(Debug)]
pub struct Feed {
    origin: Instant,
    /// The current confirmed listening session; 0 while none is confirmed.
    session: AtomicU64,
    next_session: AtomicU64,
    /// When (µs after `origin`, +1) the last ping that came back was sent; 0: none.
    confirmed_us: AtomicU64,
    /// Bumped before every applied invalidation.
    generation: AtomicU64,
    /// The listener's backend process id (0: not connected); for operators and tests.
    backend_pid: AtomicU32,
    /// Pings sent and not yet back: (sequence, send time).
    pings: Mutex<Vec<(u64, Instant)>>,
    /// This replica's id in ping payloads.
    instance: u64,
}

/// Taken before a database load; the load is kept only if nothing changed meanwhile.
#[derive(Debug, Clone, Copy)]
pub struct Ticket {
    generation: u64,
    session: u64,
    /// Taken before the load: an entry's age counts from here, not from its insertion.
    at: Instant,
}

impl Feed {
    fn new() -> Self {
        Self {
            origin: Instant::now(),
            session: AtomicU64::new(0),
            next_session: AtomicU64::new(1),
            confirmed_us: AtomicU64::new(0),
            generation: AtomicU64::new(0),
            backend_pid: AtomicU32::new(0),
            pings: Mutex::new(Vec::new()),
            instance: rand::random::<u64>(),
        }
    }

    fn micros(&self, at: Instant) -> u64 {
        u64::try_from(at.saturating_duration_since(self.origin).as_micros()).unwrap_or(u64::MAX)
    }

    /// Whether a ping sent less than [`BOUND`] ago came back.
    pub fn is_confirmed(&self) -> bool {
        let confirmed = self.confirmed_us.load(Ordering::Acquire);
        if confirmed == 0 {
            return false;
        }
        let now = self.micros(Instant::now()) + 1;
        now.saturating_sub(confirmed) < BOUND.as_micros() as u64
    }

    /// The confirmed session entries may be tied to, or 0.
    fn live_session(&self) -> u64 {
        if self.is_confirmed() {
            self.session.load(Ordering::Acquire)
        } else {
            0
        }
    }

    pub fn ticket(&self) -> Ticket {
        Ticket {
            generation: self.generation.load(Ordering::Acquire),
            session: self.live_session(),
            at: Instant::now(),
        }
    }

    fn bump(&self) {
        self.generation.fetch_add(1, Ordering::AcqRel);
    }

    /// The listener's backend process id, 0 while it is not connected.
    pub fn backend_pid(&self) -> u32 {
        self.backend_pid.load(Ordering::Acquire)
    }

    fn set_backend_pid(&self, pid: u32) {
        self.backend_pid.store(pid, Ordering::Release);
    }

    /// The listener lost (or has not yet got) its connection: nothing is confirmed.
    fn lost(&self) {
        self.session.store(0, Ordering::Release);
        self.confirmed_us.store(0, Ordering::Release);
        self.bump();
        if let Ok(mut pings) = self.pings.lock() {
            pings.clear();
        }
    }

    /// A ping is about to be sent: its payload.
    fn ping_payload(&self, seq: u64) -> String {
        if let Ok(mut pings) = self.pings.lock() {
            // Bounded: pings that never come back (listener down) do not pile up.
            if pings.len() >= 64 {
                pings.remove(0);
            }
            pings.push((seq, Instant::now()));
        }
        format!("p:{:x}:{seq}", self.instance)
    }

    /// One of this replica's pings came back: everything committed before it was sent has
    /// been applied. Returns true when this started a new session.
    fn ping_returned(&self, seq: u64) -> bool {
        let sent = {
            let Ok(mut pings) = self.pings.lock() else {
                return false;
            };
            let Some(pos) = pings.iter().position(|(s, _)| *s == seq) else {
                return false;
            };
            let sent = pings[pos].1;
            pings.drain(..=pos);
            sent
        };
        let mut started = false;
        if self.session.load(Ordering::Acquire) == 0 {
            let id = self.next_session.fetch_add(1, Ordering::AcqRel);
            self.session.store(id, Ordering::Release);
            started = true;
        }
        self.confirmed_us
            .fetch_max(self.micros(sent) + 1, Ordering::AcqRel);
        started
    }
}

#[derive(Debug)]
struct Entry<V> {
    value: V,
    loaded: Instant,
    session: u64,
}

/// One cache map. Reads take a shared lock and clone the value (values are small or `Arc`s).
#[derive(Debug)]
pub struct Map<K, V> {
    inner: RwLock<HashMap<K, Entry<V>>>,
    cap: usize,
}

impl<K: Eq + Hash, V: Clone> Map<K, V> {
    fn new(cap: usize) -> Self {
        Self {
            inner: RwLock::new(HashMap::new()),
            cap,
        }
    }

    fn get(&self, key: &K, feed: &Feed) -> Option<V> {
        let map = self.inner.read().ok()?;
        let entry = map.get(key)?;
        let servable = entry.loaded.elapsed() < BOUND
            || (entry.session != 0
                && entry.session == feed.session.load(Ordering::Acquire)
                && feed.is_confirmed());
        servable.then(|| entry.value.clone())
    }

    /// Like [`Map::get`], but only while the entry is younger than [`BOUND`] (for data whose
    /// changes are not all announced on the feed).
    fn get_young(&self, key: &K) -> Option<V> {
        let map = self.inner.read().ok()?;
        let entry = map.get(key)?;
        (entry.loaded.elapsed() < BOUND).then(|| entry.value.clone())
    }

    fn insert(&self, key: K, value: V, ticket: Ticket, feed: &Feed) {
        let Ok(mut map) = self.inner.write() else {
            return;
        };
        // Checked under the lock: an invalidation bumps the generation before it takes the
        // lock to remove, so either this sees the bump or the removal comes after.
        if feed.generation.load(Ordering::Acquire) != ticket.generation {
            return;
        }
        if map.len() >= self.cap {
            map.clear();
        }
        map.insert(
            key,
            Entry {
                value,
                loaded: ticket.at,
                session: ticket.session,
            },
        );
    }

    fn remove(&self, key: &K) {
        if let Ok(mut map) = self.inner.write() {
            map.remove(key);
        }
    }

    fn retain(&self, keep: impl Fn(&K, &V) -> bool) {
        if let Ok(mut map) = self.inner.write() {
            map.retain(|k, e| keep(k, &e.value));
        }
    }

    fn clear(&self) {
        if let Ok(mut map) = self.inner.write() {
            map.clear();
        }
    }

    pub fn len(&self) -> usize {
        self.inner.read().map(|m| m.len()).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What every authenticated request checks about its account, and the record `/users/me`
/// answers with.
#[derive(Debug, Clone)]
pub struct AccountEntry {
    pub user: Arc<User>,
    pub token_generation: i32,
}

/// What API-key authentication learns from a (usable) key, besides the owner's account.
#[derive(Debug, Clone)]
pub struct KeyEntry {
    pub key_id: Uuid,
    pub stored_hash: crate::auth::secrets::SecretHash,
    pub user_id: Uuid,
    pub tenant_scope: Option<Uuid>,
    /// When the key's use was last recorded (Unix seconds, 0: never), shared by the clones,
    /// so a busy key records its use once a minute, not once per request.
    pub last_used: Arc<std::sync::atomic::AtomicI64>,
}

impl KeyEntry {
    /// True once a minute at most: the caller records the use.
    pub fn claim_use_stamp(&self, now: i64) -> bool {
        let last = self.last_used.load(Ordering::Acquire);
        now - last > 60
            && self
                .last_used
                .compare_exchange(last, now, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
    }
}

/// An account's gardens with its role in each (every membership, any tenant status): what the
/// tool server binds calls against.
pub type Memberships = Arc<Vec<(TenantRecord, Role)>>;

/// Every cache of the process, with their feed.
#[derive(Debug)]
pub struct Caches {
    feed: Feed,
    tenants: Map<String, TenantRecord>,
    roles: Map<(Uuid, Uuid), Role>,
    accounts: Map<Uuid, AccountEntry>,
    keys: Map<[u8; 32], KeyEntry>,
    catalog: Map<String, Arc<dyn std::any::Any + Send + Sync>>,
    /// Young-only (see the module comment).
    memberships: Map<Uuid, Memberships>,
    /// Tool-server session id → session; young-only (see the module comment).
    mcp_sessions: Map<String, crate::mcp::session::Session>,
}

impl Default for Caches {
    fn default() -> Self {
        Self::new()
    }
}

impl Caches {
    pub fn new() -> Self {
        Self {
            feed: Feed::new(),
            tenants: Map::new(TENANT_CAP),
            roles: Map::new(ROLE_CAP),
            accounts: Map::new(ACCOUNT_CAP),
            keys: Map::new(KEY_CAP),
            catalog: Map::new(CATALOG_CAP),
            memberships: Map::new(MEMBERSHIPS_CAP),
            mcp_sessions: Map::new(MCP_SESSION_CAP),
        }
    }

    pub fn feed(&self) -> &Feed {
        &self.feed
    }

    pub fn ticket(&self) -> Ticket {
        self.feed.ticket()
    }

    pub fn tenant(&self, slug: &str) -> Option<TenantRecord> {
        self.tenants.get(&slug.to_owned(), &self.feed)
    }

    pub fn keep_tenant(&self, tenant: &TenantRecord, ticket: Ticket) {
        self.tenants
            .insert(tenant.slug.to_string(), tenant.clone(), ticket, &self.feed);
    }

    pub fn role(&self, user: Uuid, tenant: Uuid) -> Option<Role> {
        self.roles.get(&(user, tenant), &self.feed)
    }

    pub fn keep_role(&self, user: Uuid, tenant: Uuid, role: Role, ticket: Ticket) {
        self.roles.insert((user, tenant), role, ticket, &self.feed);
    }

    pub fn account(&self, user: Uuid) -> Option<AccountEntry> {
        self.accounts.get(&user, &self.feed)
    }

    pub fn keep_account(&self, entry: AccountEntry, ticket: Ticket) {
        self.accounts
            .insert(entry.user.key, entry, ticket, &self.feed);
    }

    pub fn api_key(&self, hash: &[u8; 32]) -> Option<KeyEntry> {
        self.keys.get(hash, &self.feed)
    }

    pub fn keep_api_key(&self, hash: [u8; 32], entry: KeyEntry, ticket: Ticket) {
        self.keys.insert(hash, entry, ticket, &self.feed);
    }

    /// A catalogue read from memory: the answer kept under `key` since the last catalogue
    /// change, else `load`'s (kept for the next caller; errors are not kept).
    pub async fn catalog_read<T, F>(
        &self,
        key: String,
        load: F,
    ) -> Result<T, crate::error::AppError>
    where
        T: Clone + Send + Sync + 'static,
        F: std::future::Future<Output = Result<T, crate::error::AppError>>,
    {
        if let Some(hit) = self
            .catalog
            .get(&key, &self.feed)
            .and_then(|any| any.downcast::<T>().ok())
        {
            return Ok(T::clone(&hit));
        }
        let ticket = self.ticket();
        let loaded = load.await?;
        self.catalog
            .insert(key, Arc::new(loaded.clone()), ticket, &self.feed);
        Ok(loaded)
    }

    /// The account's gardens, if loaded less than [`BOUND`] ago and not invalidated since.
    pub fn memberships(&self, user: Uuid) -> Option<Memberships> {
        self.memberships.get_young(&user)
    }

    pub fn keep_memberships(&self, user: Uuid, all: Memberships, ticket: Ticket) {
        self.memberships.insert(user, all, ticket, &self.feed);
    }

    /// A tool-server session confirmed in Redis less than [`BOUND`] ago.
    pub fn mcp_session(&self, id: &str) -> Option<crate::mcp::session::Session> {
        self.mcp_sessions.get_young(&id.to_owned())
    }

    pub fn keep_mcp_session(
        &self,
        id: &str,
        session: crate::mcp::session::Session,
        ticket: Ticket,
    ) {
        self.mcp_sessions
            .insert(id.to_owned(), session, ticket, &self.feed);
    }

    /// This process ended the session (call it after the session is gone from Redis): refused
    /// here at once, other replicas within [`BOUND`]. The generation is bumped first, so a
    /// read of the session that overlapped its deletion is not kept.
    pub fn forget_mcp_session(&self, id: &str) {
        self.feed.bump();
        self.mcp_sessions.remove(&id.to_owned());
    }

    /// Cached tenants (for the memory figures).
    pub fn tenant_count(&self) -> usize {
        self.tenants.len()
    }

    /// This process made a change: forget it now, without waiting for the notification (which
    /// reaches the other replicas, and this one again).
    pub fn forget_user(&self, user: Uuid) {
        self.apply(&Invalidation::User(user));
    }

    pub fn forget_membership(&self, tenant: Uuid, user: Uuid) {
        self.apply(&Invalidation::Membership { tenant, user });
    }

    pub fn forget_tenant(&self, tenant: Uuid) {
        self.apply(&Invalidation::Tenant(tenant));
    }

    pub fn forget_api_key(&self, key: Uuid) {
        self.apply(&Invalidation::ApiKey(key));
    }

    pub fn forget_catalog(&self) {
        self.apply(&Invalidation::Catalog);
    }

    /// Applies one invalidation. The generation is bumped first (see [`Map::insert`]).
    fn apply(&self, what: &Invalidation) {
        self.feed.bump();
        match *what {
            Invalidation::User(user) => {
                self.accounts.remove(&user);
                self.memberships.remove(&user);
                self.keys.retain(|_, k| k.user_id != user);
            }
            Invalidation::Membership { tenant, user } => {
                self.roles.remove(&(user, tenant));
                self.memberships.remove(&user);
            }
            Invalidation::Tenant(tenant) => {
                self.tenants.retain(|_, t| t.id != tenant);
                self.roles.retain(|(_, t), _| *t != tenant);
                self.keys.retain(|_, k| k.tenant_scope != Some(tenant));
                self.memberships
                    .retain(|_, all| all.iter().all(|(t, _)| t.id != tenant));
            }
            Invalidation::ApiKey(key) => self.keys.retain(|_, k| k.key_id != key),
            Invalidation::Catalog => self.catalog.clear(),
            Invalidation::Everything => self.clear(),
        }
    }

    fn clear(&self) {
        self.tenants.clear();
        self.roles.clear();
        self.accounts.clear();
        self.keys.clear();
        self.catalog.clear();
        self.memberships.clear();
        self.mcp_sessions.clear();
    }
}

/// What a notification says changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invalidation {
    User(Uuid),
    Membership {
        tenant: Uuid,
        user: Uuid,
    },
    Tenant(Uuid),
    ApiKey(Uuid),
    Catalog,
    /// A payload this build does not understand: forget everything (safe).
    Everything,
}

/// A notification payload: an invalidation, or a replica's ping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    Invalidate(Invalidation),
    Ping { instance: u64, seq: u64 },
}

impl Message {
    /// Payloads written by the triggers of migration 0008 (`u:`, `m:`, `t:`, `k:`, `c`) and
    /// by [`Feed::ping_payload`] (`p:`).
    pub fn parse(payload: &str) -> Self {
        let uuid = |s: &str| Uuid::parse_str(s).ok();
        let parsed = match payload.split(':').collect::<Vec<_>>().as_slice() {
            ["u", id] => uuid(id).map(Invalidation::User),
            ["t", id] => uuid(id).map(Invalidation::Tenant),
            ["k", id] => uuid(id).map(Invalidation::ApiKey),
            ["m", tenant, user] => match (uuid(tenant), uuid(user)) {
                (Some(tenant), Some(user)) => Some(Invalidation::Membership { tenant, user }),
                _ => None,
            },
            ["c"] => Some(Invalidation::Catalog),
            ["p", instance, seq] => {
                if let (Ok(instance), Ok(seq)) =
                    (u64::from_str_radix(instance, 16), seq.parse::<u64>())
                {
                    return Self::Ping { instance, seq };
                }
                None
            }
            _ => None,
        };
        Self::Invalidate(parsed.unwrap_or(Invalidation::Everything))
    }
}

impl Caches {
    /// Handles one notification payload from the listener.
    fn receive(&self, payload: &str) {
        match Message::parse(payload) {
            Message::Invalidate(what) => self.apply(&what),
            Message::Ping { instance, seq } => {
                if instance == self.feed.instance && self.feed.ping_returned(seq) {
                    // A new session: nothing of an earlier one is trusted again.
                    self.clear();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_parse_and_unknown_ones_forget_everything() {
        let a = Uuid::now_v7();
        let b = Uuid::now_v7();
        assert_eq!(
            Message::parse(&format!("u:{a}")),
            Message::Invalidate(Invalidation::User(a))
        );
        assert_eq!(
            Message::parse(&format!("m:{a}:{b}")),
            Message::Invalidate(Invalidation::Membership { tenant: a, user: b })
        );
        assert_eq!(
            Message::parse(&format!("t:{a}")),
            Message::Invalidate(Invalidation::Tenant(a))
        );
        assert_eq!(
            Message::parse(&format!("k:{a}")),
            Message::Invalidate(Invalidation::ApiKey(a))
        );
        assert_eq!(
            Message::parse("c"),
            Message::Invalidate(Invalidation::Catalog)
        );
        assert_eq!(
            Message::parse("p:ff:7"),
            Message::Ping {
                instance: 255,
                seq: 7
            }
        );
        for odd in ["", "u:nope", "x:1", "m:1", "p:zz:1", "c:1"] {
            assert_eq!(
                Message::parse(odd),
                Message::Invalidate(Invalidation::Everything),
                "{odd}"
            );
        }
    }

    #[test]
    fn entries_outlive_the_bound_only_on_a_confirmed_feed() {
        let caches = Caches::new();
        let user = Uuid::now_v7();
        let tenant = Uuid::now_v7();
        // No feed: served while young.
        caches.keep_role(user, tenant, Role::Admin, caches.ticket());
        assert_eq!(caches.role(user, tenant), Some(Role::Admin));
        // A load that overlapped an invalidation is not kept.
        let stale = caches.ticket();
        caches.forget_membership(tenant, user);
        caches.keep_role(user, tenant, Role::Admin, stale);
        assert_eq!(caches.role(user, tenant), None);

        // A confirmed feed: entries of its session stay servable past the bound.
        let payload = caches.feed.ping_payload(1);
        caches.receive(&payload);
        assert!(caches.feed.is_confirmed());
        let ticket = caches.ticket();
        assert_ne!(ticket.session, 0);
        caches.keep_role(user, tenant, Role::Viewer, ticket);
        if let Ok(mut map) = caches.roles.inner.write() {
            for e in map.values_mut() {
                e.loaded = Instant::now() - BOUND * 2;
            }
        }
        assert_eq!(caches.role(user, tenant), Some(Role::Viewer));
        // The listener is lost: old entries are not served any more.
        caches.feed.lost();
        assert_eq!(caches.role(user, tenant), None);
        // Another replica's ping confirms nothing here.
        caches.receive("p:1:1");
        assert!(!caches.feed.is_confirmed());
    }
}
