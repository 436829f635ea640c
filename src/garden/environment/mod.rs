//! The environment a plant lives in, read from what measures it: the sensors of its location
//! and of that location's site, and the weather of the site. Used wherever a diary entry is
//! shown whole (`environment`, `environment_status`), by the diagnostics snapshot (`sensors`)
//! and by `get_environment`.

pub mod model;
pub mod repo;
pub mod service;
