//! Kultiva: a multi-tenant plant-cultivation backend. `main.rs` is a thin CLI over this library;
//! tests build the same service through [`app::build_service`].
//!
//! Data flows one way: a face (`http` routes, `mcp` tools, `web` pages) calls a service, a
//! service calls its repository and the pure rules, a repository talks to the store. REST, MCP
//! and the pages are three faces over one service layer: a tool or a page never writes SQL,
//! and a service never touches salvo's request types.
//!
//! ## Layers
//! Bottom to top. A module uses only modules of the layers below it, and within a line only
//! the modules named before it; `tests/api/layers.rs` reads every `crate::` path of `src/` and
//! fails on one that points the wrong way. A `routes.rs` of a capability is part of the REST
//! face (`http`). No capability uses another capability's REST face or tool module: helpers
//! that several of them need live in `http` (routes) and `mcp::tools::shared` (tools).
//!
//! 1. the error type, shared values, pure rules: `error`, `values`, `rules`, `progress`
//! 2. configuration and credential primitives: `config`, `telemetry`, `tls`, `crypto`
//! 3. stores, in-process caches and process counters: `metrics`, `store`, `cache`
//! 4. shared state: `state`
//! 5. tenancy, mail: `tenancy`, `mail`
//! 6. identity: `directory`, `auth`, `platform`
//! 7. services (and their repositories): `catalog`, `garden`, `calculations`, `notify`
//! 8. faces: `http`, `mcp`, `web`
//! 9. the service assembled, and its start: `app`, `serve`, `main`, `lib`
//!
//! ## Where things go
//! Where a lower layer needs something of a higher one, the higher one provides it: a
//! conversion into [`error::AppError`] lives beside the error it converts, and shared state
//! holds lower-layer types only. Identity is three modules: `directory` holds the records of
//! who is who (users, memberships, roles, the grants an account handed out), which both `auth`
//! (how a caller proves who it is) and `platform` (the account and garden services) read; the
//! REST hoops over `auth` (`require_caller`, `require_platform_admin`) are `http::caller`.
//! The caches are generic maps with each entry's dependencies; each owner reads and keeps its
//! own values (`tenancy::cached`, `auth::cached`, `mcp::session`). A caller's access to a
//! garden is `platform::access`; tenancy resolves gardens by slug only. Export and import of
//! a whole garden are `garden::transfer`, over tenancy's file format and connections.

pub mod app;
pub mod auth;
pub mod cache;
pub mod calculations;
pub mod catalog;
pub mod config;
pub mod crypto;
pub mod directory;
pub mod error;
pub mod garden;
pub mod http;
pub mod mail;
pub mod mcp;
pub mod metrics;
pub mod notify;
pub mod platform;
pub mod progress;
pub mod rules;
pub mod serve;
pub mod state;
pub mod store;
pub mod telemetry;
pub mod tenancy;
pub mod tls;
pub mod values;
pub mod web;

pub use app::build_service;
pub use config::Config;
pub use state::AppState;
