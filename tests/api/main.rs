//! The one integration-test binary: every module runs against the real service, PostgreSQL and
//! Redis.

mod support;

mod accounts;
mod admin;
mod api_keys;
mod auth;
mod catalog;
mod cli;
mod conventions;
mod health;
mod hotpath;
mod light;
mod mail;
mod mcp_idempotency;
mod mcp_tools;
mod mcp_transport;
mod oauth;
mod openapi;
mod placement;
mod rate_limits;
mod roles;
mod shutdown;
mod sites;
mod tenancy;
