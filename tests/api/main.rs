//! The one integration-test binary: every module runs against the real service, PostgreSQL and
//! Redis.

mod support;

mod auth;
mod cli;
mod conventions;
mod health;
mod openapi;
mod placement;
mod shutdown;
mod sites;
mod tenancy;
