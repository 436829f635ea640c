//! Webhooks of a garden (issue 28): endpoints an admin registers, the event outbox every garden
//! change writes in its own transaction ([`events::emit`]), and the worker that delivers the
//! events as the Standard Webhooks specification has it (signed, retried, at least once, in
//! order per endpoint).

pub mod events;
pub mod model;
pub mod repo;
pub mod routes;
pub mod service;
pub mod signing;
pub mod target;
pub mod worker;
