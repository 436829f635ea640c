//! Shapes that cross garden capabilities, fixed before those capabilities were built side by
//! side, so that each could be written against them without the others:
//! - every capability that owns dated things (tasks, care reminders, harvests, …) offers
//!   `service::calendar_events(tx, from, to) -> Result<Vec<CalendarEvent>, AppError>`, and the
//!   calendar merges them;
//! - nutrient plans offer `service::current_phase_targets(tx, plant_id) ->
//!   Result<Option<PhaseTargets>, AppError>`, which a plant's diagnostics compares with what
//!   was measured.

use serde::Serialize;
use time::Date;

/// One entry of the garden calendar (and of its iCal feed).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CalendarEvent {
    /// Stable across reads (`<kind>:<key>` or `<kind>:<key>:<date>` for a recurring one): the
    /// iCal UID.
    pub uid: String,
    /// `task`, `care_reminder`, `phase`, `sowing`, `harvest`, `treatment`, …
    pub kind: &'static str,
    /// The day it falls on (all-day events; the garden's days).
    #[serde(with = "crate::values::dates::iso_date")]
    pub date: Date,
    /// Present for an event that spans days (a sowing window, a safety interval): inclusive.
    #[serde(with = "crate::values::dates::iso_date::option")]
    pub end_date: Option<Date>,
    pub title: String,
    pub plant_key: Option<uuid::Uuid>,
    pub detail: Option<String>,
}

pub use crate::rules::feeding_diagnostics::PhaseTargets;
