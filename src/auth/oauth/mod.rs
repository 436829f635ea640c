//! Federated login through OAuth 2.0 / OIDC identity providers. As the specification states, the
//! flow is a stub today: providers are listed, the authorization request is real (single-use
//! `state` bound to the browser by a cookie, PKCE S256), and the callback validates `state`,
//! but no authorization-code exchange is performed, so nobody is logged in by it yet.

pub mod model;
pub mod repo;
pub mod routes;
pub mod service;
