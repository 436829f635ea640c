//! The digest mail: per user, in their language (`de` or English) and time zone, at the local
//! hour they chose (`digest_hour`, default 7): care due (overdue first), tasks due, across all
//! their gardens, with links; nothing when there is nothing to say, or when `notify_email`,
//! `notify_care_due` or `notify_digest` says no (`weekly`: Mondays only).
//!
//! One per user and local day: the sender inserts `platform.digest_sent (user, local day)` with
//! `ON CONFLICT DO NOTHING` in the transaction that queues the mail, so of several replicas (or
//! a CLI run beside the service) exactly one queues it. An empty digest records its row as well
//! (no mail), so the gardens are not read again that day.

pub mod compose;
pub mod job;
pub mod routes;
pub mod service;
pub mod token;
