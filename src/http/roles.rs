//! The minimum role of every operation under `/api/v1/t/{slug}/`, enforced and documented from
//! one declaration so the two cannot drift:
//!
//! - the **floor** by method ([`floor`]): reads need `viewer` (any member), every write
//!   (POST/PUT/PATCH/DELETE) at least `grower`, except the few listed in [`COMPUTE_ONLY`] and
//!   [`OWN_GRANT_ENDS`]. The hoop [`role_floor`] enforces it for the
//!   whole tenant tree, right after the slug resolved, so no garden write is open to a viewer
//!   even when its handler forgets to check, and the refusal comes before any body is read;
//! - a **stronger need** of one operation is declared as a handler argument,
//!   `_role: Requires<Admin>` (or `Requires<Grower>` on a read): the extractor refuses with 403
//!   `FORBIDDEN` before later arguments (put it first: before the body is read), and registers
//!   the same role in the operation's OpenAPI entry.
//!
//! The OpenAPI document states the result as `x-min-role` on every tenant operation (see
//! `openapi::document_min_roles`); the isolation guard (`tests/api/isolation_guard.rs`) reads it
//! and proves each route against it: the role below is refused, the role itself is not.

use std::marker::PhantomData;

use salvo::extract::{Extractible, Metadata};
use salvo::http::Method;
use salvo::oapi::{self, Components, EndpointArgRegister, Operation, ToSchema};
use salvo::prelude::*;

use crate::auth::Role;
use crate::error::ErrorBody;
use crate::http::depot::DepotExt;

/// The OpenAPI extension that names an operation's minimum role in the garden.
pub const MIN_ROLE_EXTENSION: &str = "x-min-role";

/// Garden operations that use a write method but persist nothing (a calculation, a preview):
/// open to viewers like a read. `(method, path below /api/v1/t/{slug}/)`, for example
/// `("POST", "substrate-mixes/preview")`.
pub const COMPUTE_ONLY: &[(&str, &str)] = &[
    ("POST", "substrate-mixes/preview"),
    ("POST", "mixing-protocol"),
];

/// Garden writes that end something of the caller's own (a grant it holds): open to every
/// member like a read, so a member demoted to viewer can still end what it holds.
pub const OWN_GRANT_ENDS: &[(&str, &str)] = &[("DELETE", "calendar/feed")];

/// The role every tenant operation needs at least: reads (and `COMPUTE_ONLY` operations)
/// `viewer`, writes `grower` (the specification: viewers read all tenant resources, growers
/// write). `path` is the route's template, `/api/v1/t/{slug}/…` (leading and trailing slashes
/// do not matter).
pub fn floor(method: &Method, path: &str) -> Role {
    let below_slug = path.trim_matches('/').strip_prefix("api/v1/t/{slug}/");
    let open_to_viewers = below_slug.is_some_and(|rest| {
        COMPUTE_ONLY
            .iter()
            .chain(OWN_GRANT_ENDS)
            .any(|(m, p)| *m == method.as_str() && p.trim_matches('/') == rest.trim_matches('/'))
    });
    match *method {
        Method::GET | Method::HEAD | Method::OPTIONS => Role::Viewer,
        _ if open_to_viewers => Role::Viewer,
        _ => Role::Grower,
    }
}

/// Hoop for the tenant sub-tree, after `tenant_hoop`: 403 `FORBIDDEN` below the floor of the
/// matched route.
#[handler]
pub async fn role_floor(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
    ctrl: &mut FlowCtrl,
) {
    let needed = floor(req.method(), req.matched_path());
    if let Err(err) = depot.tenant_ctx().and_then(|ctx| ctx.require(needed)) {
        err.halt(req, res, ctrl);
    }
}

/// A role stronger than the floor, as a type (`Requires<Admin>`).
pub trait MinRole: Send + Sync + 'static {
    const ROLE: Role;
}

/// `grower`: for a read only growers may see (writes have it as their floor already).
pub struct Grower;
/// `admin`: the garden's setup (sites), member management, settings, deletes of places.
pub struct Admin;

impl MinRole for Grower {
    const ROLE: Role = Role::Grower;
}
impl MinRole for Admin {
    const ROLE: Role = Role::Admin;
}

/// Handler argument that requires the caller's role in the addressed garden to be at least
/// `R`: 403 `FORBIDDEN` otherwise, before any later argument is extracted. Documents itself as
/// `x-min-role` and a 403 answer.
pub struct Requires<R: MinRole>(PhantomData<R>);

impl<R: MinRole> std::fmt::Debug for Requires<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Requires<{}>", R::ROLE.as_str())
    }
}

static METADATA: Metadata = Metadata::new("Requires");

impl<'ex, R: MinRole> Extractible<'ex> for Requires<R> {
    fn metadata() -> &'static Metadata {
        &METADATA
    }

    async fn extract(
        _req: &'ex mut Request,
        depot: &'ex mut Depot,
    ) -> Result<Self, impl Writer + Send + std::fmt::Debug + 'static> {
        depot
            .tenant_ctx()
            .and_then(|ctx| ctx.require(R::ROLE))
            .map(|()| Self(PhantomData))
    }
}

impl<R: MinRole> EndpointArgRegister for Requires<R> {
    fn register(components: &mut Components, operation: &mut Operation, _arg: &str) {
        operation
            .extensions
            .insert(MIN_ROLE_EXTENSION.to_owned(), R::ROLE.as_str().into());
        if operation.responses.get("403").is_none() {
            let schema = <ErrorBody as ToSchema>::to_schema(components);
            operation.responses.insert(
                "403",
                oapi::Response::new(format!("FORBIDDEN: {} role needed", R::ROLE.as_str()))
                    .add_content("application/json", oapi::Content::new(schema)),
            );
        }
    }
}

/// The role an operation's `x-min-role` names.
pub fn declared(operation: &Operation) -> Option<Role> {
    operation
        .extensions
        .get(MIN_ROLE_EXTENSION)
        .and_then(|v| v.as_str())
        .and_then(Role::parse)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_need_viewer_and_writes_grower() {
        let path = "api/v1/t/{slug}/sites/{site_key}";
        for m in [Method::GET, Method::HEAD, Method::OPTIONS] {
            assert_eq!(floor(&m, path), Role::Viewer, "{m}");
        }
        for m in [Method::POST, Method::PUT, Method::PATCH, Method::DELETE] {
            assert_eq!(floor(&m, path), Role::Grower, "{m}");
            assert_eq!(floor(&m, &format!("/{path}/")), Role::Grower, "{m}");
        }
    }

    #[test]
    fn ending_your_own_feed_is_open_to_viewers_creating_one_is_not() {
        let feed = "/api/v1/t/{slug}/calendar/feed";
        assert_eq!(floor(&Method::DELETE, feed), Role::Viewer);
        assert_eq!(floor(&Method::POST, feed), Role::Grower);
        assert_eq!(
            floor(&Method::POST, &format!("{feed}/rotate")),
            Role::Grower
        );
    }

    #[test]
    fn compute_only_writes_are_open_to_viewers() {
        for (method, path) in COMPUTE_ONLY {
            let method = Method::from_bytes(method.as_bytes()).expect("method");
            let template = format!("/api/v1/t/{{slug}}/{path}");
            assert_eq!(floor(&method, &template), Role::Viewer, "{template}");
        }
    }
}
