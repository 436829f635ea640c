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
mod light;
mod openapi;
mod placement;
mod roles;
mod shutdown;
mod sites;
mod tenancy;
