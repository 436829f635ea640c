use salvo::oapi::ToSchema;
use serde::Serialize;
use serde_json::Value;
use time::{Date, OffsetDateTime};
use uuid::Uuid;

use crate::garden::fields::key;
use crate::values::json::{FromJson, JsonFields};

pub const NOTES_MAX: usize = 2000;
pub const SNOOZE_MAX: i64 = 30;

pub const REMINDER_TYPES: &[(&str, &str)] = &[
    ("watering", "watering"),
    ("fertilizing", "fertilizing"),
    ("repotting", "repotting"),
    ("pruning", "pruning"),
    ("pest_check", "pest_check"),
    ("overwintering", "overwintering"),
];

/// A plant's care profile.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CareProfile {
    pub plant_key: Uuid,
    /// tropical, succulent, orchid, calathea, herb_tropical, mediterranean, fern, cactus,
    /// outdoor_annual_veg, outdoor_perennial or custom.
    pub care_style: String,
    /// Where the values came from: species (its watering interval), family (its style) or
    /// default (tropical).
    pub source: String,
    pub watering_interval_days: i32,
    pub winter_watering_multiplier: f64,
    pub fertilizing_interval_days: i32,
    /// Fertilising months, inclusive: [from, to].
    pub fertilizing_months: [i32; 2],
    pub repotting_interval_months: i32,
    pub pruning_interval_days: Option<i32>,
    pub pest_check_interval_days: i32,
    /// From the species' overwintering profile.
    pub winter_action: Option<String>,
    pub winter_action_month: Option<i32>,
    pub spring_action: Option<String>,
    pub spring_action_month: Option<i32>,
    pub adaptive_learning_enabled: bool,
    pub watering_interval_learned: Option<i32>,
    pub fertilizing_interval_learned: Option<i32>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
}

/// A due reminder.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Reminder {
    pub reminder_key: Uuid,
    pub plant_key: Uuid,
    pub plant_name: String,
    pub species_key: String,
    /// watering, fertilizing, repotting, pruning, pest_check or overwintering.
    pub reminder_type: String,
    /// YYYY-MM-DD.
    pub due_on: String,
    /// Days from today to the due day (negative: overdue).
    pub days_until_due: i64,
    /// overdue, due_today, upcoming or not_due.
    pub urgency: String,
    pub interval_days: i32,
}

/// Due reminders grouped by urgency (only the asked groups are present), each group paged by
/// `skip` and `limit`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DueReminders {
    /// The day urgency is computed for (YYYY-MM-DD, UTC).
    pub today: String,
    /// The filter applied: actionable (overdue and due today), all, or one bucket.
    pub urgency: String,
    /// Reminders in the asked groups over all pages.
    pub total: i64,
    /// Skipped at the start of each group.
    pub skip: i64,
    /// Most reminders listed per group.
    pub limit: i64,
    /// How many each asked group holds over all pages.
    pub counts: DueCounts,
    pub overdue: Option<Vec<Reminder>>,
    pub due_today: Option<Vec<Reminder>>,
    pub upcoming: Option<Vec<Reminder>>,
    pub not_due: Option<Vec<Reminder>>,
    /// Plants whose watering is held back by their phase (dry rest, leaf renewal, dormancy),
    /// each with the reason; at most `limit`, by plant name. Winter rest is not among them:
    /// it waters less, at the plant's interval times its winter multiplier.
    pub watering_withheld: Vec<WateringWithheld>,
    /// How many plants' watering is held back in all.
    pub watering_withheld_total: i64,
}

/// A plant whose watering reminder its phase holds back, and why.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct WateringWithheld {
    pub plant_key: Uuid,
    pub plant_name: String,
    /// The phase the plant is in (its name, e.g. dry_rest).
    pub phase: String,
    /// Why no watering is due in this phase.
    pub reason: String,
}

/// Reminders per urgency group (only the asked groups are present).
#[derive(Debug, Clone, Default, Serialize, ToSchema)]
pub struct DueCounts {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overdue: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub due_today: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upcoming: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_due: Option<i64>,
}

/// A plant's profile with its reminders.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PlantCare {
    pub profile: CareProfile,
    pub reminders: Vec<Reminder>,
    /// Set when the plant's phase holds its watering back (dry rest, leaf renewal, dormancy):
    /// the watering reminder is then not among `reminders`.
    pub watering_withheld: Option<WateringWithheld>,
}

/// One entry of the care log.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CareLogEntry {
    pub entry_key: Uuid,
    pub plant_key: Uuid,
    pub reminder_type: String,
    /// confirmed or snoozed.
    pub action: String,
    #[serde(with = "time::serde::rfc3339")]
    pub confirmed_at: OffsetDateTime,
    /// YYYY-MM-DD: the day the care was given.
    pub confirmed_on: String,
    pub snooze_days: Option<i32>,
    pub interval_at_time_days: i32,
    pub notes: Option<String>,
    pub actor: String,
}

/// The answer to a confirmation or snooze.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CareOutcome {
    pub reminder: Reminder,
    pub entry: CareLogEntry,
    /// The learned interval after this confirmation (watering and fertilising).
    pub learned_interval_days: Option<i32>,
    /// Pending care tasks of the plant this confirmation completed.
    pub completed_task_keys: Vec<Uuid>,
}

/// Body of `POST /t/{slug}/care-reminders/{reminder_key}/confirm`.
#[derive(serde::Deserialize, Debug, Clone, ToSchema)]
#[salvo(schema(name = "CareConfirm"))]
#[serde(deny_unknown_fields)] // states `additionalProperties: false`: the handler refuses extras
pub struct ConfirmBody {
    /// The plant the reminder belongs to (checked: a reminder of another plant is refused).
    pub plant_key: Uuid,
    /// The day the care was given (YYYY-MM-DD, not in the future, at most 30 days back);
    /// default today.
    #[salvo(schema(format = "date", pattern = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"))]
    pub confirmed_on: Option<String>,
    #[salvo(schema(
        max_length = 2000,
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]*$"
    ))]
    pub notes: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confirm {
    pub plant_key: Uuid,
    pub confirmed_on: Option<Date>,
    pub notes: Option<String>,
}

fn parse_day(f: &mut JsonFields, name: &'static str) -> Option<Option<Date>> {
    match f.raw(name) {
        None | Some(Value::Null) => Some(None),
        Some(v) => {
            let d = v.as_str().and_then(|s| {
                Date::parse(s, time::macros::format_description!("[year]-[month]-[day]")).ok()
            });
            if d.is_none() {
                f.reject_field(name, "must be a date YYYY-MM-DD", "value_error");
            }
            d.map(Some)
        }
    }
}

impl FromJson for Confirm {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let plant_key = key(f, "plant_key");
        let confirmed_on = parse_day(f, "confirmed_on");
        let notes = f.opt_long_text("notes", NOTES_MAX);
        let confirmed_on = confirmed_on?;
        if let Some(d) = confirmed_on {
            let today = OffsetDateTime::now_utc().date();
            if d > today {
                f.reject_field("confirmed_on", "must not lie in the future", "value_error");
                return None;
            }
            if (today - d).whole_days() > 30 {
                f.reject_field(
                    "confirmed_on",
                    "must lie at most 30 days back",
                    "value_error",
                );
                return None;
            }
        }
        Some(Self {
            plant_key: plant_key?,
            confirmed_on,
            notes: notes?,
        })
    }
}

/// Body of `POST /t/{slug}/care-reminders/{reminder_key}/snooze`.
#[derive(serde::Deserialize, Debug, Clone, ToSchema)]
#[salvo(schema(name = "CareSnooze"))]
#[serde(deny_unknown_fields)] // states `additionalProperties: false`: the handler refuses extras
pub struct SnoozeBody {
    /// The plant the reminder belongs to.
    pub plant_key: Uuid,
    /// Days to push the reminder from today, 1–30 (default 1).
    #[salvo(schema(minimum = 1, maximum = 30))]
    pub days: Option<i64>,
    #[salvo(schema(
        max_length = 2000,
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]*$"
    ))]
    pub notes: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snooze {
    pub plant_key: Uuid,
    pub days: i32,
    pub notes: Option<String>,
}

impl FromJson for Snooze {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let plant_key = key(f, "plant_key");
        let days = f.opt_int("days", 1, SNOOZE_MAX);
        let notes = f.opt_long_text("notes", NOTES_MAX);
        Some(Self {
            plant_key: plant_key?,
            days: days?.unwrap_or(1) as i32,
            notes: notes?,
        })
    }
}
