//! Kultiva: a multi-tenant plant-cultivation backend. `main.rs` is a thin CLI over this library;
//! tests build the same service through [`http::build_service`].

pub mod auth;
pub mod cache;
pub mod calculations;
pub mod catalog;
pub mod config;
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
pub mod web;

pub use config::Config;
pub use http::build_service;
pub use state::AppState;
