//! Notifications that reach growers outside the app: the daily (or weekly) digest mail. It
//! reads several gardens' capabilities and the platform's preferences, so it sits above both.
//! (Webhooks belong to one garden: `garden::webhooks`.) Web Push (`push`) carries the digest
//! to a person's browsers. `alerts` scans every garden for environment alerts and pushes
//! their openings.

pub mod alerts;
pub mod digest;
pub mod mqtt;
pub mod push;
pub mod weather;
