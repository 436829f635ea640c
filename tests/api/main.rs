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
mod db_faults;
mod garden;
mod hardening;
mod health;
mod hotpath;
mod invitations;
mod isolation_guard;
mod light;
mod mail;
mod mcp_cost;
mod mcp_idempotency;
mod mcp_tools;
mod mcp_transport;
mod oauth;
mod openapi;
mod phases;
mod placement;
mod places;
mod plants;
mod rate_limits;
mod roles;
mod runs;
mod shutdown;
mod sites;
mod substrates;
mod tenancy;
