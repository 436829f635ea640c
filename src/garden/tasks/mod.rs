//! Tasks: due dates, recurrence, checklists, assignment to a member, the states of domain 2.7
//! and the training check of domain 2.3.

pub mod model;
pub mod repo;
pub mod routes;
pub mod service;
