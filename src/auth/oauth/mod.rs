//! Sign-in with OpenID Connect providers: the authorization-code flow with a single-use
//! `state` bound to the browser by a cookie, PKCE S256 and a `nonce`; the code exchange and
//! the ID token's validation through the `openidconnect` crate (`oidc`); federated identities
//! `(provider, sub)` that sign in to, link to or open an account.

pub mod model;
pub mod oidc;
pub mod repo;
pub mod routes;
pub mod service;
