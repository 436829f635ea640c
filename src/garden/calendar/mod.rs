//! The garden calendar (`/t/{slug}/calendar`): events merged from phases, sowing windows and
//! every capability that offers `service::calendar_events` (see `garden::contracts`), the
//! sowing calendar of the garden's hardiness zone, the garden settings it needs, and per-member
//! iCal feeds (`feeds`).

pub mod feeds;
pub mod model;
pub mod repo;
pub mod routes;
pub mod service;
