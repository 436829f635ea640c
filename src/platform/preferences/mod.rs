//! `/api/v1/user-preferences`: units, locale, time zone, notification choices and experience
//! level of the calling user, one row per user (defaults until the first write).

pub mod model;
pub mod repo;
pub mod routes;
pub mod service;
