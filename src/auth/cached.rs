//! What identity keeps in the caches of `crate::cache`: the caller's role in a garden, the
//! account every authenticated request checks, API keys, and an account's gardens. Each
//! value is kept with what it depends on, so the cache drops it when that changes.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use uuid::Uuid;

use crate::auth::Role;
use crate::cache::{Caches, Deps, Ticket, typed};
use crate::directory::users::model::User;
use crate::tenancy::TenantRecord;

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

impl Caches {
    pub fn role(&self, user: Uuid, tenant: Uuid) -> Option<Role> {
        typed(&self.roles.get(&(user, tenant), &self.feed)?)
    }

    pub fn keep_role(&self, user: Uuid, tenant: Uuid, role: Role, ticket: Ticket) {
        // The key names the garden: a garden's change drops it by key.
        let deps = Deps::default();
        self.roles
            .insert((user, tenant), Arc::new(role), deps, ticket, &self.feed);
    }

    pub fn account(&self, user: Uuid) -> Option<AccountEntry> {
        typed(&self.accounts.get(&user, &self.feed)?)
    }

    pub fn keep_account(&self, entry: AccountEntry, ticket: Ticket) {
        let deps = Deps {
            user: Some(entry.user.key),
            ..Deps::default()
        };
        self.accounts
            .insert(entry.user.key, Arc::new(entry), deps, ticket, &self.feed);
    }

    pub fn api_key(&self, hash: &[u8; 32]) -> Option<KeyEntry> {
        typed(&self.keys.get(hash, &self.feed)?)
    }

    pub fn keep_api_key(&self, hash: [u8; 32], entry: KeyEntry, ticket: Ticket) {
        let deps = Deps {
            user: Some(entry.user_id),
            tenants: entry.tenant_scope.into_iter().collect(),
            key: Some(entry.key_id),
        };
        self.keys
            .insert(hash, Arc::new(entry), deps, ticket, &self.feed);
    }

    /// The account's gardens, if loaded less than [`crate::cache::BOUND`] ago and not
    /// invalidated since.
    pub fn memberships(&self, user: Uuid) -> Option<Memberships> {
        typed(&self.memberships.get_young(&user)?)
    }

    pub fn keep_memberships(&self, user: Uuid, all: Memberships, ticket: Ticket) {
        let deps = Deps {
            user: Some(user),
            tenants: all.iter().map(|(t, _)| t.id).collect(),
            key: None,
        };
        self.memberships
            .insert(user, Arc::new(all), deps, ticket, &self.feed);
    }
}
