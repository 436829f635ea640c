//! In-process caches of the hot path: slug → tenant record, (caller, tenant) → role, the
//! account record every authenticated request checks (active, token generation), API key →
//! owner, rendered catalogue reads, and garden reads of the pages (Today).
//!
//! # Invalidation (every replica, within [`BOUND`])
//! Triggers on `platform.users`, `platform.memberships`, `platform.tenants`,
//! `platform.api_keys` and the catalogue tables (migration 0008) send a PostgreSQL
//! notification on the channel [`CHANNEL`] for every change that matters. PostgreSQL delivers
//! notifications only when the writing transaction commits, so every writer triggers it (a
//! service, another helper's repository, the CLI, `psql`) and no replica can reload a row
//! before the change is visible. Each replica listens on a dedicated connection (`state::cache_feed`).
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
//! # Garden reads (the pages)
//! A garden's data changes through write transactions, and every one of them
//! ([`crate::tenancy::tx::TenantTx::begin`]) sends `g:<garden id>` on the same channel, delivered
//! when it commits (so a rolled-back write announces nothing); the writing replica also forgets
//! at once, so its own next page (the redirect after a form) never sees the old state. Only
//! gardens on the primary server are kept (the listener hears the primary alone). On top of the
//! feed's rules an entry is served for at most `GARDEN_READ_CACHE_SECONDS` (30): what changes with the
//! clock alone (an interval ending at an hour) and a change made outside the service (`psql`, a
//! migration's backfill) show within that age.
//!
//! # Young-only entries (the tool server)
//! Two maps are served only while an entry is younger than [`BOUND`], whatever the feed says,
//! because some of their changes are never announced: an account's gardens (a new membership
//! sends no notification; removals and role changes do, and drop the entry at once) and
//! tool-server sessions (they live in Redis; an idle expiry or a `DELETE` on another replica
//! announces nothing). A busy caller reloads them at most once per [`BOUND`] per replica.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use uuid::Uuid;

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
/// Garden reads are page-sized (Today of a big garden: tens of kB): fewer of them.
const GARDEN_READ_CAP: usize = 5_000;

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

    pub(crate) fn bump(&self) {
        self.generation.fetch_add(1, Ordering::AcqRel);
    }

    /// The listener's backend process id, 0 while it is not connected.
    pub fn backend_pid(&self) -> u32 {
        self.backend_pid.load(Ordering::Acquire)
    }

    pub(crate) fn set_backend_pid(&self, pid: u32) {
        self.backend_pid.store(pid, Ordering::Release);
    }

    /// The listener lost (or has not yet got) its connection: nothing is confirmed.
    pub(crate) fn lost(&self) {
        self.session.store(0, Ordering::Release);
        self.confirmed_us.store(0, Ordering::Release);
        self.bump();
        if let Ok(mut pings) = self.pings.lock() {
            pings.clear();
        }
    }

    /// A ping is about to be sent: its payload.
    pub(crate) fn ping_payload(&self, seq: u64) -> String {
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
    deps: Deps,
    loaded: Instant,
    session: u64,
}

/// What a kept value depends on: a change of any of these drops it (see [`Caches::apply`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Deps {
    /// The account it belongs to.
    pub user: Option<Uuid>,
    /// The gardens it names.
    pub tenants: Vec<Uuid>,
    /// The API key it is.
    pub key: Option<Uuid>,
}

/// A kept value. Its type is the owner's: each owner reads and keeps its values through its own
/// `impl Caches` block (`tenancy::cached`, `auth::cached`, `mcp::session`), so this module
/// names no type of the layers that use it. A value of another type than the one asked for is
/// a miss.
pub type Kept = Arc<dyn std::any::Any + Send + Sync>;

/// A kept value as its owner's type (`None`, a miss, for any other type).
pub fn typed<T: Clone + 'static>(kept: &Kept) -> Option<T> {
    kept.downcast_ref::<T>().cloned()
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

    pub(crate) fn get(&self, key: &K, feed: &Feed) -> Option<V> {
        let map = self.inner.read().ok()?;
        let entry = map.get(key)?;
        let servable = entry.loaded.elapsed() < BOUND
            || (entry.session != 0
                && entry.session == feed.session.load(Ordering::Acquire)
                && feed.is_confirmed());
        servable.then(|| entry.value.clone())
    }

    /// Like [`Map::get`], and only while the entry is younger than `max_age`.
    fn get_within(&self, key: &K, feed: &Feed, max_age: Duration) -> Option<V> {
        {
            let map = self.inner.read().ok()?;
            if map.get(key)?.loaded.elapsed() >= max_age {
                return None;
            }
        }
        self.get(key, feed)
    }

    /// Like [`Map::get`], but only while the entry is younger than [`BOUND`] (for data whose
    /// changes are not all announced on the feed).
    pub(crate) fn get_young(&self, key: &K) -> Option<V> {
        let map = self.inner.read().ok()?;
        let entry = map.get(key)?;
        (entry.loaded.elapsed() < BOUND).then(|| entry.value.clone())
    }

    pub(crate) fn insert(&self, key: K, value: V, deps: Deps, ticket: Ticket, feed: &Feed) {
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
                deps,
                loaded: ticket.at,
                session: ticket.session,
            },
        );
    }

    pub(crate) fn remove(&self, key: &K) {
        if let Ok(mut map) = self.inner.write() {
            map.remove(key);
        }
    }

    fn retain(&self, keep: impl Fn(&K, &Deps) -> bool) {
        if let Ok(mut map) = self.inner.write() {
            map.retain(|k, e| keep(k, &e.deps));
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

/// Every cache of the process, with their feed.
#[derive(Debug)]
pub struct Caches {
    pub(crate) feed: Feed,
    /// Slug → garden record.
    pub(crate) tenants: Map<String, Kept>,
    /// (account, garden) → role.
    pub(crate) roles: Map<(Uuid, Uuid), Kept>,
    /// Account → what every authenticated request checks about it.
    pub(crate) accounts: Map<Uuid, Kept>,
    /// API key hash → the key's owner and scope.
    pub(crate) keys: Map<[u8; 32], Kept>,
    catalog: Map<String, Kept>,
    /// Account → its gardens with its role in each; young-only (see the module comment).
    pub(crate) memberships: Map<Uuid, Kept>,
    /// Tool-server session id → session; young-only (see the module comment).
    pub(crate) mcp_sessions: Map<String, Kept>,
    /// (garden, what) → a page's garden read (see the module comment).
    garden_reads: Map<(Uuid, String), Kept>,
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
            garden_reads: Map::new(GARDEN_READ_CAP),
        }
    }

    pub fn feed(&self) -> &Feed {
        &self.feed
    }

    pub fn ticket(&self) -> Ticket {
        self.feed.ticket()
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
        self.catalog.insert(
            key,
            Arc::new(loaded.clone()),
            Deps::default(),
            ticket,
            &self.feed,
        );
        Ok(loaded)
    }

    /// A garden read from memory: the value kept under (`garden`, `key`) since the garden's
    /// last write and for at most `max_age`, else `load`'s (kept for the next caller; errors
    /// are not kept). The caller keeps only gardens on the primary server.
    pub async fn garden_read<T, F>(
        &self,
        garden: Uuid,
        key: String,
        max_age: Duration,
        load: F,
    ) -> Result<Arc<T>, crate::error::AppError>
    where
        T: Send + Sync + 'static,
        F: std::future::Future<Output = Result<T, crate::error::AppError>>,
    {
        let key = (garden, key);
        if let Some(hit) = self
            .garden_reads
            .get_within(&key, &self.feed, max_age)
            .and_then(|any| any.downcast::<T>().ok())
        {
            return Ok(hit);
        }
        let ticket = self.ticket();
        let loaded = Arc::new(load.await?);
        let deps = Deps {
            tenants: vec![garden],
            ..Deps::default()
        };
        self.garden_reads
            .insert(key, loaded.clone(), deps, ticket, &self.feed);
        Ok(loaded)
    }

    /// Garden reads kept now (for tests and figures).
    pub fn garden_read_count(&self) -> usize {
        self.garden_reads.len()
    }

    /// This process committed a write to `garden`: its reads go now (the notification follows).
    pub fn forget_garden_data(&self, garden: Uuid) {
        self.apply(&Invalidation::GardenData(garden));
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
    pub(crate) fn apply(&self, what: &Invalidation) {
        self.feed.bump();
        match *what {
            Invalidation::User(user) => {
                self.accounts.remove(&user);
                self.memberships.remove(&user);
                self.keys.retain(|_, d| d.user != Some(user));
            }
            Invalidation::Membership { tenant, user } => {
                self.roles.remove(&(user, tenant));
                self.memberships.remove(&user);
            }
            Invalidation::Tenant(tenant) => {
                let free = |d: &Deps| !d.tenants.contains(&tenant);
                self.tenants.retain(|_, d| free(d));
                self.roles.retain(|(_, t), _| *t != tenant);
                self.keys.retain(|_, d| free(d));
                self.memberships.retain(|_, d| free(d));
                self.garden_reads.retain(|(t, _), _| *t != tenant);
            }
            Invalidation::GardenData(garden) => {
                self.garden_reads.retain(|(t, _), _| *t != garden);
            }
            Invalidation::ApiKey(key) => self.keys.retain(|_, d| d.key != Some(key)),
            // Garden reads name catalogue records (species, treatments) too.
            Invalidation::Catalog => {
                self.catalog.clear();
                self.garden_reads.clear();
            }
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
        self.garden_reads.clear();
    }
}

/// The payload that says a garden's data changed (`g:<garden id>`, read by [`Message::parse`]):
/// sent by every garden write transaction (`TenantTx::begin`) and by the erasure's name scrub.
pub fn garden_changed(garden: Uuid) -> String {
    format!("g:{garden}")
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
    /// A write transaction of the garden committed (`g:`, sent by `TenantTx::begin`).
    GardenData(Uuid),
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
    /// Payloads written by the triggers of migration 0008 (`u:`, `m:`, `t:`, `k:`, `c`), by a
    /// garden's write transactions (`g:`) and by [`Feed::ping_payload`] (`p:`).
    pub fn parse(payload: &str) -> Self {
        let uuid = |s: &str| Uuid::parse_str(s).ok();
        let parsed = match payload.split(':').collect::<Vec<_>>().as_slice() {
            ["u", id] => uuid(id).map(Invalidation::User),
            ["t", id] => uuid(id).map(Invalidation::Tenant),
            ["k", id] => uuid(id).map(Invalidation::ApiKey),
            ["g", id] => uuid(id).map(Invalidation::GardenData),
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
    pub(crate) fn receive(&self, payload: &str) {
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
    use crate::auth::Role;
    use crate::auth::cached::KeyEntry;

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
            Message::parse(&format!("g:{a}")),
            Message::Invalidate(Invalidation::GardenData(a))
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
        for odd in ["", "u:nope", "x:1", "m:1", "p:zz:1", "c:1", "g:nope"] {
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

    #[test]
    fn a_change_drops_what_depends_on_it_and_nothing_else() {
        let caches = Caches::new();
        let (user, other, garden, key_id) = (
            Uuid::now_v7(),
            Uuid::now_v7(),
            Uuid::now_v7(),
            Uuid::now_v7(),
        );
        let key = |user_id, tenant_scope, key_id| KeyEntry {
            key_id,
            stored_hash: crate::crypto::secrets::SecretHash::of("x"),
            user_id,
            tenant_scope,
            last_used: Arc::default(),
        };
        let keep_all = || {
            caches.keep_api_key([1; 32], key(user, Some(garden), key_id), caches.ticket());
            caches.keep_api_key([2; 32], key(other, None, Uuid::now_v7()), caches.ticket());
        };
        keep_all();
        assert!(caches.api_key(&[1; 32]).is_some());
        // A value asked for as another type is a miss, not a panic.
        assert!(typed::<String>(&caches.keys.get(&[1; 32], &caches.feed).expect("kept")).is_none());

        caches.forget_tenant(garden);
        assert!(
            caches.api_key(&[1; 32]).is_none(),
            "scoped to the changed garden"
        );
        assert!(
            caches.api_key(&[2; 32]).is_some(),
            "another account's unscoped key stays"
        );

        keep_all();
        caches.forget_user(user);
        assert!(caches.api_key(&[1; 32]).is_none());
        assert!(caches.api_key(&[2; 32]).is_some());

        keep_all();
        caches.forget_api_key(key_id);
        assert!(caches.api_key(&[1; 32]).is_none());
        assert!(caches.api_key(&[2; 32]).is_some());
    }

    #[test]
    fn garden_reads_go_with_their_gardens_writes_and_their_age() {
        let caches = Caches::new();
        let (a, b) = (Uuid::now_v7(), Uuid::now_v7());
        let age = Duration::from_secs(30);
        let read = |caches: &Caches, garden: Uuid, value: u32, max_age: Duration| {
            let key = "today:2026-12-07".to_owned();
            let load = async move { Ok::<u32, crate::error::AppError>(value) };
            futures_util::FutureExt::now_or_never(caches.garden_read(garden, key, max_age, load))
                .and_then(Result::ok)
                .map(|v| *v)
        };
        assert_eq!(read(&caches, a, 1, age), Some(1));
        assert_eq!(read(&caches, b, 1, age), Some(1));
        // Kept: a second load is not asked.
        assert_eq!(read(&caches, a, 2, age), Some(1));
        // A write to a: only a's reads go.
        caches.forget_garden_data(a);
        assert_eq!(read(&caches, a, 3, age), Some(3));
        assert_eq!(read(&caches, b, 3, age), Some(1));
        // The garden record changed (status, placement): its reads go too.
        caches.apply(&Invalidation::Tenant(b));
        assert_eq!(read(&caches, b, 4, age), Some(4));
        // Past the caller's age an entry is not served, even young to the feed.
        assert_eq!(read(&caches, b, 5, Duration::ZERO), Some(5));
        // A load that overlapped a write is used but not kept.
        let ticket_gen = caches.feed.generation.load(Ordering::Acquire);
        let overlapping = async {
            caches.forget_garden_data(a);
            Ok::<u32, crate::error::AppError>(6)
        };
        caches.forget_garden_data(a);
        let got = futures_util::FutureExt::now_or_never(caches.garden_read(
            a,
            "today:2026-12-07".to_owned(),
            age,
            overlapping,
        ));
        assert_eq!(got.and_then(Result::ok).map(|v| *v), Some(6));
        assert!(caches.feed.generation.load(Ordering::Acquire) > ticket_gen);
        assert_eq!(read(&caches, a, 7, age), Some(7));
    }
}
