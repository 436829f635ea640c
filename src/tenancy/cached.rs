//! The garden records `crate::cache` keeps by slug, each dropped when its garden changes.

use std::sync::Arc;

use crate::cache::{Caches, Deps, Ticket, typed};
use crate::tenancy::TenantRecord;

impl Caches {
    pub fn tenant(&self, slug: &str) -> Option<TenantRecord> {
        typed(&self.tenants.get(&slug.to_owned(), &self.feed)?)
    }

    pub fn keep_tenant(&self, tenant: &TenantRecord, ticket: Ticket) {
        let deps = Deps {
            tenants: vec![tenant.id],
            ..Deps::default()
        };
        self.tenants.insert(
            tenant.slug.to_string(),
            Arc::new(tenant.clone()),
            deps,
            ticket,
            &self.feed,
        );
    }
}
