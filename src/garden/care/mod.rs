//! Care reminders: a care profile per plant derived from its species and family, the reminders
//! it generates with their urgency, confirm and snooze, the interval that adapts to the
//! grower, and the care log (domain 1.17, 2.8).

pub mod model;
pub mod repo;
pub mod routes;
pub mod service;
