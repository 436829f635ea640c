//! The digest mail: per user, in their language (`de` or English) and time zone, at the local
//! hour they chose (`digest_hour`, default 7): care due (overdue first), tasks due, safety
//! intervals whose last day is today, plants ready to harvest, across all their gardens, with
//! links; "today" is the user's local day. Nothing when there is nothing to say, or when
//! `notify_care_due` or `notify_digest` says no (`weekly`: Mondays only). `notify_email` sends
//! it as a mail, `notify_push` as a push message to the user's browsers (`notify::push`);
//! with both off, nothing.
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
