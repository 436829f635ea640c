//! Plant instances: the wire shapes and the bodies of the plant routes.

use salvo::oapi::ToSchema;
use serde::Serialize;
use serde_json::Value;
use time::{Date, OffsetDateTime};
use uuid::Uuid;

use super::repo::{Archived, Filter};
use crate::error::{AppError, ErrorDetail};
use crate::values::json::{FromJson, JsonFields, Patch, is_blank};

pub const NAME_MAX: usize = 120;
pub const NOTES_MAX: usize = 2000;
pub const KEY_MAX: usize = 100;
/// The earliest planting date accepted.
pub const EARLIEST: Date = time::macros::date!(1900 - 01 - 01);

/// Why a plant left the garden (it is never hard-deleted).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ArchiveReason {
    Disposed,
    GivenAway,
    Died,
}

impl ArchiveReason {
    pub const ALL: &'static [(&'static str, ArchiveReason)] = &[
        ("disposed", Self::Disposed),
        ("given_away", Self::GivenAway),
        ("died", Self::Died),
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Disposed => "disposed",
            Self::GivenAway => "given_away",
            Self::Died => "died",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        Self::ALL.iter().find(|(n, _)| *n == raw).map(|(_, r)| *r)
    }
}

/// `status` filter of the plant list (the schema of the query parameter).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum PlantStatusFilter {
    Active,
    Disposed,
    GivenAway,
    Died,
}

impl PlantStatusFilter {
    pub const ALL: &'static [&'static str] = &["active", "disposed", "given_away", "died"];
}

/// `archived` filter of the plant list (the schema of the query parameter).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
pub enum ArchivedFilter {
    #[serde(rename = "false")]
    False,
    #[serde(rename = "true")]
    True,
    #[serde(rename = "any")]
    Any,
}

/// The specification's four phase states.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum PhaseState {
    /// No phase history exists: set a starting phase.
    NeverInitialised,
    /// An open history row points at no phase of the plant's own sequence: correct it.
    Unresolved,
    /// All phases closed, none open (normal for perennials).
    BetweenCycles,
    /// The plant is running.
    InPhase,
}

impl PhaseState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NeverInitialised => "never_initialised",
            Self::Unresolved => "unresolved",
            Self::BetweenCycles => "between_cycles",
            Self::InPhase => "in_phase",
        }
    }
}

/// A species as a plant names it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SpeciesRef {
    pub key: String,
    pub scientific_name: Option<String>,
    pub common_name: Option<String>,
}

/// The substrate a plant grows in, resolved from its batch or its own substrate key.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SubstrateRef {
    /// A catalogue key, or `tenant:<uuid>` for the garden's own substrates.
    pub key: String,
    pub name: Option<String>,
    #[serde(rename = "type")]
    pub substrate_type: Option<String>,
}

/// The phase a plant is in, resolved against the sequence its species runs on now.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PhaseNow {
    pub phase_key: String,
    pub name: String,
    pub display_name_en: Option<String>,
    pub sequence_key: String,
    pub sequence_name: String,
    pub sequence_order: i64,
    pub cycle_number: i32,
    #[serde(with = "time::serde::rfc3339")]
    pub started_at: OffsetDateTime,
    /// Whole days since the phase started.
    pub day_count: i64,
    /// The phase's effective duration.
    pub expected_duration_days: i64,
    /// Expected duration minus day count, never below 0.
    pub expected_remaining_days: i64,
    pub is_terminal: bool,
    pub allows_harvest: bool,
    /// The next phase of the sequence; null at the end (a repeating sequence restarts).
    pub next_phase_key: Option<String>,
}

/// One plant with everything resolved (`GET /plant-instances/{key}`, `get_plant`).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Plant {
    pub key: Uuid,
    pub name: String,
    pub species: SpeciesRef,
    pub cultivar_key: Option<String>,
    pub site_key: Option<Uuid>,
    pub location_key: Option<Uuid>,
    pub location_name: Option<String>,
    pub slot_key: Option<Uuid>,
    pub slot_code: Option<String>,
    pub substrate_batch_key: Option<Uuid>,
    pub substrate: Option<SubstrateRef>,
    /// YYYY-MM-DD.
    pub planted_on: Option<String>,
    /// YYYY-MM-DD (UTC) when archived; null while the plant is in the garden.
    pub removed_on: Option<String>,
    pub archived: bool,
    pub archive_reason: Option<ArchiveReason>,
    /// Null when the plant has no phase.
    pub current_phase_key: Option<String>,
    pub phase_state: PhaseState,
    /// Present when `phase_state` is `in_phase`.
    pub phase: Option<PhaseNow>,
    pub run_key: Option<Uuid>,
    pub notes: Option<String>,
    /// Rotation and companion conflicts the grower acknowledged when placing the plant
    /// (`acknowledge_rotation`, `acknowledge_companions`), oldest first.
    pub placement_acknowledgements: Vec<PlacementAcknowledgement>,
    /// Advice of the placement this answer made (traditional companion conflicts, rotation
    /// notes); empty on reads.
    pub placement_warnings: Vec<String>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
}

/// A conflict the grower planted through, recorded on the plant.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, ToSchema)]
pub struct PlacementAcknowledgement {
    /// `ROTATION_VIOLATION` or `INCOMPATIBLE_COMPANION`.
    pub code: String,
    /// What the refusal would have said.
    pub message: String,
    /// The slot the plant was placed in.
    pub slot_key: Uuid,
    #[serde(with = "time::serde::rfc3339")]
    pub acknowledged_at: OffsetDateTime,
}

/// The acknowledgement flags of a create or move: a conflict that needs one is planted
/// through (and recorded) only when its flag is true.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Acknowledge {
    pub rotation: bool,
    pub companions: bool,
}

impl Acknowledge {
    pub fn read(f: &mut JsonFields) -> Option<Self> {
        let rotation = f.flag("acknowledge_rotation", false);
        let companions = f.flag("acknowledge_companions", false);
        Some(Self {
            rotation: rotation?,
            companions: companions?,
        })
    }
}

/// What the rotation and companion checks say about planting a species in a slot
/// (`POST /plant-instances/validate-planting`, and the checks of create and move).
#[derive(Debug, Clone, Default, Serialize, ToSchema)]
pub struct PlantingReview {
    pub species_key: String,
    /// Null when no slot was named: nothing to check.
    pub slot_key: Option<Uuid>,
    /// True when nothing needs acknowledging (warnings may still be there).
    pub allowed: bool,
    /// The flags a create or move needs to plant anyway: `acknowledge_rotation`,
    /// `acknowledge_companions`.
    pub needs_acknowledgement: Vec<String>,
    pub rotation: RotationReview,
    pub companions: CompanionReview,
    /// Advice that never blocks (the same strings a create or move answers with).
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize, ToSchema)]
pub struct RotationReview {
    /// The window checked: 3 years, or the family's own longer break (brassicas 4).
    pub window_years: i32,
    /// Why rotation does not apply (a pot), if so.
    pub exempt: Option<String>,
    pub findings: Vec<RotationFinding>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RotationFinding {
    /// critical (needs acknowledging), warning, info or ok.
    pub level: String,
    pub message: String,
    /// The earlier planting's species.
    pub species_key: Option<String>,
    pub needs_acknowledgement: bool,
}

#[derive(Debug, Clone, Default, Serialize, ToSchema)]
pub struct CompanionReview {
    /// Established conflicts first.
    pub conflicts: Vec<CompanionConflict>,
    /// Best first.
    pub benefits: Vec<CompanionBenefit>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CompanionConflict {
    pub plant_key: String,
    pub species_key: String,
    pub species_name: String,
    pub reason: Option<String>,
    /// established (needs acknowledging) or traditional (advice).
    pub evidence: String,
    pub source: Option<String>,
    pub needs_acknowledgement: bool,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CompanionBenefit {
    pub plant_key: String,
    pub species_key: String,
    pub score: Option<f64>,
}

/// Body of `POST /t/{slug}/plant-instances/validate-planting`: what a create (or, with
/// `plant_key`, a move) into the slot would meet. Nothing is written.
#[derive(Debug, Clone, serde::Deserialize, ToSchema)]
#[salvo(schema(name = "PlantingCheck"))]
#[serde(deny_unknown_fields)]
pub struct PlantingCheck {
    /// Species key from the catalogue; with `plant_key` it may be omitted (the plant's).
    #[salvo(schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub species_key: Option<String>,
    pub location_key: Option<Uuid>,
    pub slot_key: Option<Uuid>,
    /// The plant to be moved (its own history and presence do not count).
    pub plant_key: Option<Uuid>,
}

impl FromJson for PlantingCheck {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let species_key = opt_key(f, "species_key");
        let location_key = opt_uuid(f, "location_key");
        let slot_key = opt_uuid(f, "slot_key");
        let plant_key = opt_uuid(f, "plant_key");
        let body = Self {
            species_key: species_key?,
            location_key: location_key?,
            slot_key: slot_key?,
            plant_key: plant_key?,
        };
        if body.species_key.is_none() && body.plant_key.is_none() {
            f.reject_field(
                "species_key",
                "name a species_key or a plant_key",
                "missing",
            );
            return None;
        }
        if body.location_key.is_none() && body.slot_key.is_none() {
            f.reject_field("slot_key", "name a slot_key or a location_key", "missing");
            return None;
        }
        Some(body)
    }
}

/// A plant in a list: what one query gives (the phase name is the one recorded on entry).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PlantSummary {
    pub key: Uuid,
    pub name: String,
    pub species_key: String,
    pub species_name: Option<String>,
    pub cultivar_key: Option<String>,
    pub site_key: Option<Uuid>,
    pub location_key: Option<Uuid>,
    pub slot_key: Option<Uuid>,
    pub substrate_batch_key: Option<Uuid>,
    pub planted_on: Option<String>,
    pub removed_on: Option<String>,
    pub archive_reason: Option<ArchiveReason>,
    pub current_phase_key: Option<String>,
    pub current_phase_name: Option<String>,
    pub run_key: Option<Uuid>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
}

/// One row of a plant's phase history.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PhaseHistoryEntry {
    pub key: Uuid,
    pub phase_key: String,
    /// The name when the phase was entered.
    pub phase_name: String,
    pub sequence_key: String,
    pub cycle_number: i32,
    #[serde(with = "time::serde::rfc3339")]
    pub entered_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option")]
    pub exited_at: Option<OffsetDateTime>,
    /// Whole days in the phase (until now while open).
    pub duration_days: i64,
    pub reason: String,
    /// `user:<key>` (REST) or `mcp:<key>` (tool server).
    pub actor: String,
    /// Set when the move was a forced backward one (`force: true`); null otherwise.
    pub warning: Option<String>,
}

/// What a placement check found besides refusals (companions, rotation notes).
#[derive(Debug, Clone, Default, Serialize, ToSchema)]
pub struct PlacementNotes {
    pub companions: Vec<Value>,
    pub rotation: Vec<Value>,
}

/// Parses a record key exactly as the schema's `format: uuid` states it: the hyphenated
/// 36-character form, nothing around it (the `uuid` crate alone would also take the simple,
/// braced and URN forms, which the document does not allow).
pub fn parse_key(raw: &str) -> Option<Uuid> {
    (raw.len() == 36)
        .then(|| Uuid::try_parse(raw).ok())
        .flatten()
}

/// Reads an optional key (UUID) field; absent and null mean none.
pub fn opt_uuid(f: &mut JsonFields, name: &'static str) -> Option<Option<Uuid>> {
    match f.value(name) {
        None => Some(None),
        Some(Value::String(s)) => match parse_key(&s) {
            Some(id) => Some(Some(id)),
            None => {
                f.reject_field(name, "must be a key (UUID)", "value_error");
                None
            }
        },
        Some(_) => {
            f.reject_field(name, "must be a key (UUID) string", "type_error");
            None
        }
    }
}

/// Checks a catalogue key as the schema states it (at most [`KEY_MAX`] characters as sent, at
/// least one visible, no control characters: the single-line pattern of `http::json`) and
/// trims it.
fn checked_key(f: &mut JsonFields, name: &'static str, raw: &str) -> Option<String> {
    let trimmed = raw.trim_matches(is_blank);
    if raw.chars().count() > KEY_MAX || trimmed.is_empty() || raw.chars().any(char::is_control) {
        f.reject_field(
            name,
            format!("must have 1 to {KEY_MAX} characters, not blank, no control characters"),
            "value_error",
        );
        return None;
    }
    Some(trimmed.to_owned())
}

/// Reads an optional catalogue key (1–100 characters); absent and null mean none.
pub fn opt_key(f: &mut JsonFields, name: &'static str) -> Option<Option<String>> {
    match f.value(name) {
        None => Some(None),
        Some(Value::String(s)) => checked_key(f, name, &s).map(Some),
        Some(_) => {
            f.reject_field(name, "must be a string", "type_error");
            None
        }
    }
}

/// A required catalogue key.
pub fn req_key(f: &mut JsonFields, name: &'static str) -> Option<String> {
    let present = f.has(name);
    match opt_key(f, name)? {
        Some(k) => Some(k),
        None => {
            let _ = present;
            f.reject_field(name, "field required", "missing");
            None
        }
    }
}

pub fn today() -> Date {
    OffsetDateTime::now_utc().date()
}

/// Reads an optional date (YYYY-MM-DD) between 1900-01-01 and today.
pub fn opt_past_date(f: &mut JsonFields, name: &'static str) -> Option<Option<Date>> {
    let fmt = time::macros::format_description!("[year]-[month]-[day]");
    match f.value(name) {
        None => Some(None),
        Some(Value::String(s)) => match Date::parse(s.trim(), &fmt) {
            Ok(d) if d > today() => {
                f.reject_field(name, "must not be in the future", "value_error");
                None
            }
            Ok(d) if d < EARLIEST => {
                f.reject_field(name, "must not be before 1900-01-01", "value_error");
                None
            }
            Ok(d) => Some(Some(d)),
            Err(_) => {
                f.reject_field(name, "must be a date (YYYY-MM-DD)", "value_error");
                None
            }
        },
        Some(_) => {
            f.reject_field(name, "must be a date string (YYYY-MM-DD)", "type_error");
            None
        }
    }
}

/// Body of `POST /t/{slug}/plant-instances/`. Beyond the schema: `planted_on` not after
/// today; a `slot_key` of another location than `location_key` is refused (422).
#[derive(Debug, Clone, serde::Deserialize, ToSchema)]
#[salvo(schema(name = "PlantFields"))]
#[serde(deny_unknown_fields)]
pub struct NewPlant {
    /// Species key from the catalogue.
    #[salvo(schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub species_key: String,
    /// Defaults to the species' common (else scientific) name; null is refused (omit it).
    #[salvo(schema(
        nullable = false,
        min_length = 1,
        max_length = 120,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub name: Option<String>,
    /// A cultivar of that species.
    #[salvo(schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub cultivar_key: Option<String>,
    /// Where it stands; needed with a slot unless the slot alone names it.
    pub location_key: Option<Uuid>,
    pub slot_key: Option<Uuid>,
    pub substrate_batch_key: Option<Uuid>,
    /// YYYY-MM-DD, from 1900-01-01 up to today (a later date is refused with 422).
    #[salvo(schema(value_type = Option<String>, format = "date", pattern = r"^(19|20)[0-9]{2}-[0-9]{2}-[0-9]{2}$"))]
    pub planted_on: Option<Date>,
    /// The phase to start in (a phase key of the species' sequence). Omitted: the first phase
    /// of the sequence; null: no phase yet (`phase_state` `never_initialised`).
    #[salvo(schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub phase_key: Option<String>,
    /// Up to 2000 characters, several lines allowed; blank means none.
    #[salvo(schema(
        max_length = 2000,
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]*$"
    ))]
    pub notes: Option<String>,
    /// How the phase key was given (not part of the wire form).
    #[serde(skip)]
    pub start_phase: StartPhase,
}

/// Schema of `POST /t/{slug}/plant-instances/` (read as [`PlantCreate`]): the fields of
/// [`NewPlant`] and the two acknowledgement flags.
#[derive(Debug, Clone, serde::Deserialize, ToSchema)]
#[salvo(schema(name = "PlantCreate"))]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // a schema only: the handler reads the body as `PlantCreate`
pub struct PlantCreateBody {
    /// Species key from the catalogue.
    #[salvo(schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub species_key: String,
    /// Defaults to the species' common (else scientific) name; null is refused (omit it).
    #[salvo(schema(
        nullable = false,
        min_length = 1,
        max_length = 120,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub name: Option<String>,
    /// A cultivar of that species.
    #[salvo(schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub cultivar_key: Option<String>,
    /// Where it stands; needed with a slot unless the slot alone names it.
    pub location_key: Option<Uuid>,
    pub slot_key: Option<Uuid>,
    pub substrate_batch_key: Option<Uuid>,
    /// YYYY-MM-DD, from 1900-01-01 up to today (a later date is refused with 422).
    #[salvo(schema(value_type = Option<String>, format = "date", pattern = r"^(19|20)[0-9]{2}-[0-9]{2}-[0-9]{2}$"))]
    pub planted_on: Option<Date>,
    /// The phase to start in (a phase key of the species' sequence). Omitted: the first phase
    /// of the sequence; null: no phase yet (`phase_state` `never_initialised`).
    #[salvo(schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub phase_key: Option<String>,
    /// Up to 2000 characters, several lines allowed; blank means none.
    #[salvo(schema(
        max_length = 2000,
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]*$"
    ))]
    pub notes: Option<String>,
    /// Plant even though the slot held the same botanical family within its rotation window
    /// (else 422 `ROTATION_VIOLATION`); recorded in `placement_acknowledgements`. Default false.
    pub acknowledge_rotation: Option<bool>,
    /// Plant even though an established incompatible companion stands next to it (else 422
    /// `INCOMPATIBLE_COMPANION`; traditional conflicts only warn, in `placement_warnings`);
    /// recorded in `placement_acknowledgements`. Default false.
    pub acknowledge_companions: Option<bool>,
}

/// `POST /t/{slug}/plant-instances/` as read (schema: [`PlantCreateBody`]).
#[derive(Debug, Clone)]
pub struct PlantCreate {
    pub plant: NewPlant,
    pub acknowledge: Acknowledge,
}

impl FromJson for PlantCreate {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let plant = NewPlant::from_json(f);
        let acknowledge = Acknowledge::read(f);
        Some(Self {
            plant: plant?,
            acknowledge: acknowledge?,
        })
    }
}

/// Where a new plant starts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum StartPhase {
    /// The first phase of its sequence.
    #[default]
    First,
    /// No phase.
    None,
    Phase(String),
}

impl FromJson for NewPlant {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let species_key = req_key(f, "species_key");
        let name = f.patch_text("name", NAME_MAX);
        let cultivar_key = opt_key(f, "cultivar_key");
        let location_key = opt_uuid(f, "location_key");
        let slot_key = opt_uuid(f, "slot_key");
        let substrate_batch_key = opt_uuid(f, "substrate_batch_key");
        let planted_on = opt_past_date(f, "planted_on");
        let phase_given = f.has("phase_key");
        let phase_key = opt_key(f, "phase_key");
        let notes = f.opt_long_text("notes", NOTES_MAX);
        let phase_key = phase_key?;
        let start_phase = match (&phase_key, phase_given) {
            (Some(k), _) => StartPhase::Phase(k.clone()),
            (None, true) => StartPhase::None,
            (None, false) => StartPhase::First,
        };
        Some(Self {
            species_key: species_key?,
            name: name?,
            cultivar_key: cultivar_key?,
            location_key: location_key?,
            slot_key: slot_key?,
            substrate_batch_key: substrate_batch_key?,
            planted_on: planted_on?,
            phase_key,
            notes: notes?,
            start_phase,
        })
    }
}

/// Schema of `PATCH /t/{slug}/plant-instances/{key}` (read as [`PlantPatch`]): omitted fields
/// stay; `name` cannot be null, the others clear with null (`notes` also with blank); place,
/// substrate, phase and archive have their own operations. `planted_on` not after today.
#[derive(Debug, Clone, serde::Deserialize, ToSchema)]
#[salvo(schema(name = "PlantUpdate"))]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // a schema only: the handler reads the body as `PlantPatch`
pub struct PlantPatchBody {
    #[salvo(schema(
        nullable = false,
        min_length = 1,
        max_length = 120,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub name: Option<String>,
    /// A cultivar of the plant's species; null clears it.
    #[salvo(schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub cultivar_key: Option<String>,
    /// YYYY-MM-DD, from 1900-01-01 up to today; null clears it.
    #[salvo(schema(value_type = Option<String>, format = "date", pattern = r"^(19|20)[0-9]{2}-[0-9]{2}-[0-9]{2}$"))]
    pub planted_on: Option<String>,
    /// Up to 2000 characters, several lines allowed; null or blank clears them.
    #[salvo(schema(
        max_length = 2000,
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]*$"
    ))]
    pub notes: Option<String>,
}

/// `PATCH /t/{slug}/plant-instances/{key}` as read (schema: [`PlantPatchBody`]).
#[derive(Debug, Clone)]
pub struct PlantPatch {
    pub name: Option<String>,
    pub cultivar_key: Patch<String>,
    pub planted_on: Patch<Date>,
    pub notes: Patch<String>,
}

fn patch_of<T>(given: bool, value: Option<T>) -> Patch<T> {
    match (given, value) {
        (_, Some(v)) => Patch::Set(v),
        (true, None) => Patch::Clear,
        (false, None) => Patch::Keep,
    }
}

impl FromJson for PlantPatch {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let name = f.patch_text("name", NAME_MAX);
        let cultivar_given = f.has("cultivar_key");
        let cultivar = opt_key(f, "cultivar_key");
        let planted_given = f.has("planted_on");
        let planted = opt_past_date(f, "planted_on");
        let notes_given = f.has("notes");
        let notes = f.opt_long_text("notes", NOTES_MAX);
        Some(Self {
            name: name?,
            cultivar_key: patch_of(cultivar_given, cultivar?),
            planted_on: patch_of(planted_given, planted?),
            notes: patch_of(notes_given, notes?),
        })
    }
}

/// Body of `POST /t/{slug}/plant-instances/{key}/archive`.
#[derive(Debug, Clone, serde::Deserialize, ToSchema)]
#[salvo(schema(name = "PlantArchive"))]
#[serde(deny_unknown_fields)]
pub struct ArchiveBody {
    /// disposed, given_away or died.
    pub reason: ArchiveReason,
}

impl FromJson for ArchiveBody {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        Some(Self {
            reason: f.choice("reason", ArchiveReason::ALL)?,
        })
    }
}

impl<'de> serde::Deserialize<'de> for ArchiveReason {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(d)?;
        Self::parse(&raw).ok_or_else(|| serde::de::Error::custom("unknown archive reason"))
    }
}

/// Body of `POST /t/{slug}/plant-instances/{key}/location`: a non-null `location_key` or
/// `slot_key` (or both) is required (the document states it as `anyOf`).
#[derive(Debug, Clone, Default, serde::Deserialize, ToSchema)]
#[salvo(schema(name = "PlantLocation"))]
#[serde(deny_unknown_fields)]
pub struct LocationBody {
    /// Only a check: the location must be in this site.
    pub site_key: Option<Uuid>,
    pub location_key: Option<Uuid>,
    /// A slot of the location (or, alone, names the location too).
    pub slot_key: Option<Uuid>,
    /// Move even though the slot held the same botanical family within its rotation window
    /// (else 422 `ROTATION_VIOLATION`); recorded on the plant. Default false.
    #[serde(default)]
    pub acknowledge_rotation: bool,
    /// Move even though an established incompatible companion stands next to the slot (else
    /// 422 `INCOMPATIBLE_COMPANION`); recorded on the plant. Default false.
    #[serde(default)]
    pub acknowledge_companions: bool,
}

impl LocationBody {
    pub fn acknowledge(&self) -> Acknowledge {
        Acknowledge {
            rotation: self.acknowledge_rotation,
            companions: self.acknowledge_companions,
        }
    }
}

impl FromJson for LocationBody {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let site_key = opt_uuid(f, "site_key");
        let location_key = opt_uuid(f, "location_key");
        let slot_key = opt_uuid(f, "slot_key");
        let ack = Acknowledge::read(f);
        let ack = ack?;
        let body = Self {
            site_key: site_key?,
            location_key: location_key?,
            slot_key: slot_key?,
            acknowledge_rotation: ack.rotation,
            acknowledge_companions: ack.companions,
        };
        if body.location_key.is_none() && body.slot_key.is_none() {
            f.reject_field(
                "location_key",
                "name a location_key or a slot_key",
                "missing",
            );
            return None;
        }
        Some(body)
    }
}

/// Body of `POST /t/{slug}/plant-instances/{key}/substrate`: a non-null
/// `substrate_batch_key` or `substrate_key` is required (the document states it as `anyOf`).
#[derive(Debug, Clone, Default, serde::Deserialize, ToSchema)]
#[salvo(schema(name = "PlantSubstrate"))]
#[serde(deny_unknown_fields)]
pub struct SubstrateBody {
    /// A substrate batch of this garden.
    pub substrate_batch_key: Option<Uuid>,
    /// A substrate (catalogue key or `tenant:<uuid>`), when no batch is tracked.
    #[salvo(schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub substrate_key: Option<String>,
}

impl FromJson for SubstrateBody {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let batch = opt_uuid(f, "substrate_batch_key");
        let key = opt_key(f, "substrate_key");
        let body = Self {
            substrate_batch_key: batch?,
            substrate_key: key?,
        };
        if body.substrate_batch_key.is_none() && body.substrate_key.is_none() {
            f.reject_field(
                "substrate_batch_key",
                "name a substrate_batch_key or a substrate_key",
                "missing",
            );
            return None;
        }
        Some(body)
    }
}

/// Body of `POST /t/{slug}/plant-instances/{key}/phase-transitions`.
#[derive(Debug, Clone, serde::Deserialize, ToSchema)]
#[salvo(schema(name = "PhaseTransition"))]
#[serde(deny_unknown_fields)]
pub struct TransitionBody {
    /// A phase key of the sequence the plant's species runs on.
    #[salvo(schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub target_phase_key: String,
    /// Why (default `manual`), up to 200 characters; null is refused (omit it).
    #[salvo(schema(
        nullable = false,
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub reason: Option<String>,
    /// `true` lets a backward move through that is otherwise refused (domain 2.11 (b)); the
    /// history row keeps a warning. The same phase and a phase outside the sequence stay
    /// refused. Default false.
    #[serde(default)]
    pub force: bool,
}

impl FromJson for TransitionBody {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let target = req_key(f, "target_phase_key");
        let reason = f.patch_text("reason", 200);
        let force = f.flag("force", false);
        Some(Self {
            target_phase_key: target?,
            reason: reason?,
            force: force?,
        })
    }
}

/// `GET /plant-instances/{key}/phase` and `get_plant_phase_status`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PhaseStatus {
    pub plant_key: Uuid,
    pub phase_state: PhaseState,
    /// The open phase (null when none is open).
    pub phase_key: Option<String>,
    pub phase: Option<PhaseNow>,
    /// The sequence the species runs on now (null when the species left the catalogue).
    pub sequence_key: Option<String>,
    pub sequence_name: Option<String>,
    pub cycle_type: Option<String>,
    pub is_repeating: Option<bool>,
    pub cycle_number: Option<i32>,
    pub has_harvest_phase: Option<bool>,
    /// Phase changes so far (history rows after the first).
    pub transition_count: i64,
    /// The phase keys the plant may move to now.
    pub allowed_targets: Vec<String>,
}

/// Longest text filter (name part, species key, phase key).
const FILTER_TEXT_MAX: usize = 100;

fn query_error(name: &str, reason: &str) -> ErrorDetail {
    ErrorDetail::new(format!("query.{name}"), reason, "value_error")
}

/// Reads the list filters (`q` answers a query parameter by name) exactly as the document states them; every bad one is its own
/// detail. A filter sent empty (`slot=`) is malformed like any other bad value: it is refused,
/// not read as "no filter".
pub fn filter_from(q: impl Fn(&str) -> Option<String>) -> Result<Filter, AppError> {
    let mut errors = Vec::new();
    let mut uuid = |n: &str| -> Option<Uuid> {
        let raw = q(n)?;
        let key = parse_key(&raw);
        if key.is_none() {
            errors.push(query_error(n, "must be a key (UUID)"));
        }
        key
    };
    let site_id = uuid("site");
    let location_id = uuid("location");
    let slot_id = uuid("slot");
    let run_id = uuid("run");
    // Checked as sent (the schema's maxLength and pattern), then trimmed; blank means none.
    let mut text = |n: &str, max: usize| -> Option<String> {
        let raw = q(n)?;
        if raw.chars().count() > max || raw.chars().any(char::is_control) {
            errors.push(query_error(
                n,
                &format!("at most {max} characters, no control characters"),
            ));
            return None;
        }
        let trimmed = raw.trim_matches(is_blank);
        (!trimmed.is_empty()).then(|| trimmed.to_owned())
    };
    let name = text("name", FILTER_TEXT_MAX);
    let species_key = text("species", FILTER_TEXT_MAX);
    let phase_key = text("phase", FILTER_TEXT_MAX);
    let status = match q("status") {
        None => None,
        Some(s) if PlantStatusFilter::ALL.contains(&s.as_str()) => Some(s),
        Some(_) => {
            errors.push(query_error(
                "status",
                "must be one of: active, disposed, given_away, died",
            ));
            None
        }
    };
    let archived = match q("archived").as_deref() {
        // An archive status names archived plants: they are not hidden then.
        None if status.as_deref().is_some_and(|s| s != "active") => Archived::Include,
        None | Some("false") => Archived::Exclude,
        Some("true") => Archived::Only,
        Some("any") => Archived::Include,
        Some(_) => {
            errors.push(query_error("archived", "must be false, true or any"));
            Archived::Exclude
        }
    };
    if !errors.is_empty() {
        return Err(AppError::validation(errors));
    }
    Ok(Filter {
        name,
        species_key,
        site_id,
        location_id,
        slot_id,
        phase_key,
        status,
        archived,
        run_id,
    })
}
