use salvo::oapi::ToSchema;
use serde::Serialize;
use serde_json::Value;
use time::{Date, OffsetDateTime};
use uuid::Uuid;

use crate::garden::fields::{opt_choice, opt_date, opt_key, patch_choice, patch_key};
use crate::rules::task_status::{TaskAction, TaskStatus};
use crate::values::json::{FromJson, JsonFields, Patch, is_blank};

pub const NAME_MAX: usize = 200;
pub const INSTRUCTION_MAX: usize = 5000;
pub const NOTES_MAX: usize = 2000;
pub const CHECKLIST_MAX: usize = 50;
pub const CHECK_TEXT_MAX: usize = 500;

pub const CATEGORIES: &[(&str, &str)] = &[
    ("training", "training"),
    ("pruning", "pruning"),
    ("ausgeizen", "ausgeizen"),
    ("transplant", "transplant"),
    ("feeding", "feeding"),
    ("ipm", "ipm"),
    ("harvest", "harvest"),
    ("observation", "observation"),
    ("maintenance", "maintenance"),
    ("care_reminder", "care_reminder"),
    ("seasonal", "seasonal"),
    ("phenological", "phenological"),
];

/// Categories whose tasks the training check (domain 2.3) looks at.
pub const TRAINING_CATEGORIES: &[&str] = &["training", "pruning", "ausgeizen", "transplant"];

pub const PRIORITIES: &[(&str, &str)] = &[
    ("low", "low"),
    ("medium", "medium"),
    ("high", "high"),
    ("critical", "critical"),
];

pub const RECURRENCE_KINDS: &[(&str, &str)] = &[
    ("daily", "daily"),
    ("weekly", "weekly"),
    ("every_n_days", "every_n_days"),
    ("phase_entry", "phase_entry"),
];

/// Task state as the API shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TaskState {
    Pending,
    InProgress,
    Completed,
    Skipped,
    Failed,
    Dormant,
}

impl From<TaskStatus> for TaskState {
    fn from(s: TaskStatus) -> Self {
        match s {
            TaskStatus::Pending => Self::Pending,
            TaskStatus::InProgress => Self::InProgress,
            TaskStatus::Completed => Self::Completed,
            TaskStatus::Skipped => Self::Skipped,
            TaskStatus::Failed => Self::Failed,
            TaskStatus::Dormant => Self::Dormant,
        }
    }
}

/// One checklist entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ChecklistItem {
    /// 1–500 characters.
    #[salvo(schema(
        min_length = 1,
        max_length = 500,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub text: String,
    #[serde(default)]
    pub done: bool,
}

/// How a task repeats: `daily`, `weekly`, `every_n_days` (with `every_days`) from its due date
/// until `end_on`, or `phase_entry` (each time its plant enters `phase`).
#[derive(serde::Deserialize, Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[salvo(schema(name = "TaskRecurrence"))]
#[serde(deny_unknown_fields)] // states `additionalProperties: false`: the handler refuses extras
pub struct Recurrence {
    /// daily, weekly, every_n_days or phase_entry.
    #[salvo(schema(pattern = r"^(daily|weekly|every_n_days|phase_entry)$"))]
    pub kind: String,
    /// Days between occurrences (every_n_days only), 1–365.
    #[salvo(schema(minimum = 1, maximum = 365))]
    pub every_days: Option<i32>,
    /// Last day an occurrence may fall on (YYYY-MM-DD), not before the due date.
    #[salvo(schema(pattern = r"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$"))]
    pub end_on: Option<String>,
    /// The phase (key or name) whose entry makes the task due (phase_entry only).
    #[salvo(schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub phase: Option<String>,
}

impl Recurrence {
    /// Days between occurrences of a dated recurrence.
    pub fn step_days(&self) -> Option<i64> {
        match self.kind.as_str() {
            "daily" => Some(1),
            "weekly" => Some(7),
            "every_n_days" => self.every_days.map(i64::from),
            _ => None,
        }
    }
}

/// A task.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Task {
    pub key: Uuid,
    pub name: String,
    pub instruction: Option<String>,
    pub category: String,
    pub priority: String,
    pub status: TaskState,
    pub plant_key: Option<Uuid>,
    /// YYYY-MM-DD.
    pub due_on: Option<String>,
    /// A member of the garden (user key).
    pub assigned_to: Option<Uuid>,
    pub checklist: Vec<ChecklistItem>,
    pub recurrence: Option<Recurrence>,
    /// The task this occurrence follows (a recurring task's previous occurrence).
    pub previous_key: Option<Uuid>,
    pub completion_notes: Option<String>,
    #[serde(with = "time::serde::rfc3339::option")]
    pub started_at: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339::option")]
    pub completed_at: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339::option")]
    pub reopened_at: Option<OffsetDateTime>,
    pub reopened_from_status: Option<String>,
    /// Actions allowed from the current state.
    pub allowed_actions: Vec<String>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
}

/// The stored row with its typed parts.
#[derive(Debug, Clone)]
pub struct TaskRow {
    pub task: Task,
    pub status: TaskStatus,
    pub due_on: Option<Date>,
    pub end_on: Option<Date>,
}

pub fn date_str(d: Date) -> String {
    let fmt = time::macros::format_description!("[year]-[month]-[day]");
    d.format(&fmt).unwrap_or_default()
}

/// Body of `POST /t/{slug}/tasks`.
#[derive(serde::Deserialize, Debug, Clone, ToSchema)]
#[salvo(schema(name = "TaskCreate"))]
#[serde(deny_unknown_fields)] // states `additionalProperties: false`: the handler refuses extras
pub struct NewTaskBody {
    #[salvo(schema(
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub name: String,
    #[salvo(schema(
        max_length = 5000,
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]*$"
    ))]
    pub instruction: Option<String>,
    /// training, pruning, ausgeizen, transplant, feeding, ipm, harvest, observation,
    /// maintenance (default), care_reminder, seasonal or phenological.
    #[salvo(schema(
        nullable = false,
        pattern = r"^(training|pruning|ausgeizen|transplant|feeding|ipm|harvest|observation|maintenance|care_reminder|seasonal|phenological)$"
    ))]
    pub category: Option<String>,
    /// low, medium (default), high or critical.
    #[salvo(schema(nullable = false, pattern = r"^(low|medium|high|critical)$"))]
    pub priority: Option<String>,
    /// The plant the task is about (a live plant of the garden).
    pub plant_key: Option<Uuid>,
    /// YYYY-MM-DD; required for a dated recurrence.
    #[salvo(schema(pattern = r"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$"))]
    pub due_on: Option<String>,
    /// A member of the garden (user key).
    pub assigned_to: Option<Uuid>,
    /// Up to 50 entries.
    #[salvo(schema(max_items = 50))]
    pub checklist: Option<Vec<ChecklistItem>>,
    pub recurrence: Option<Recurrence>,
}

/// A parsed recurrence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecurrenceIn {
    pub kind: &'static str,
    pub every_days: Option<i32>,
    pub end_on: Option<Date>,
    pub phase: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewTask {
    pub name: String,
    pub instruction: Option<String>,
    pub category: &'static str,
    pub priority: &'static str,
    pub plant_key: Option<Uuid>,
    pub due_on: Option<Date>,
    pub assigned_to: Option<Uuid>,
    pub checklist: Vec<ChecklistItem>,
    pub recurrence: Option<RecurrenceIn>,
}

fn checklist(f: &mut JsonFields, name: &'static str) -> Option<Option<Vec<ChecklistItem>>> {
    match f.raw(name) {
        None | Some(Value::Null) => Some(None),
        Some(v) => checklist_value(f, name, v).map(Some),
    }
}

fn checklist_value(f: &mut JsonFields, name: &'static str, v: Value) -> Option<Vec<ChecklistItem>> {
    let Value::Array(items) = v else {
        f.reject_field(name, "must be a list of {text, done}", "type_error");
        return None;
    };
    if items.len() > CHECKLIST_MAX {
        f.reject_field(
            name,
            format!("must have at most {CHECKLIST_MAX} entries"),
            "value_error",
        );
        return None;
    }
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        let parsed: Result<ChecklistItem, _> = serde_json::from_value(item);
        match parsed {
            Ok(mut c) => {
                c.text = c.text.trim().to_owned();
                let n = c.text.chars().count();
                if n == 0 || n > CHECK_TEXT_MAX || c.text.chars().any(char::is_control) {
                    f.reject_field(
                        &format!("{name}[{i}].text"),
                        format!("must have 1 to {CHECK_TEXT_MAX} visible characters"),
                        "value_error",
                    );
                    return None;
                }
                out.push(c);
            }
            Err(e) => {
                f.reject_field(&format!("{name}[{i}]"), e.to_string(), "value_error");
                return None;
            }
        }
    }
    Some(out)
}

fn parse_date(v: &Value) -> Option<Date> {
    v.as_str().and_then(|s| {
        Date::parse(
            s.trim(),
            time::macros::format_description!("[year]-[month]-[day]"),
        )
        .ok()
    })
}

fn recurrence(f: &mut JsonFields) -> Option<Option<RecurrenceIn>> {
    let v = match f.raw("recurrence") {
        None | Some(Value::Null) => return Some(None),
        Some(v) => v,
    };
    let Value::Object(mut map) = v else {
        f.reject_field("recurrence", "must be an object", "type_error");
        return None;
    };
    let mut ok = true;
    let kind = match map.remove("kind") {
        Some(Value::String(k)) => match RECURRENCE_KINDS.iter().find(|(n, _)| *n == k) {
            Some((_, v)) => Some(*v),
            None => {
                f.reject_field(
                    "recurrence.kind",
                    "must be one of: daily, weekly, every_n_days, phase_entry",
                    "value_error",
                );
                None
            }
        },
        None | Some(Value::Null) => {
            f.reject_field("recurrence.kind", "field required", "missing");
            None
        }
        Some(_) => {
            f.reject_field("recurrence.kind", "must be a string", "type_error");
            None
        }
    };
    let every_days = match map.remove("every_days") {
        None | Some(Value::Null) => None,
        Some(v) => match crate::values::json::whole_number(&v) {
            Some(n) if (1..=365).contains(&n) => Some(n as i32),
            _ => {
                f.reject_field(
                    "recurrence.every_days",
                    "must be a whole number between 1 and 365",
                    "value_error",
                );
                ok = false;
                None
            }
        },
    };
    let end_on = match map.remove("end_on") {
        None | Some(Value::Null) => None,
        Some(v) => {
            let d = parse_date(&v);
            if d.is_none() {
                f.reject_field(
                    "recurrence.end_on",
                    "must be a date YYYY-MM-DD",
                    "value_error",
                );
                ok = false;
            }
            d
        }
    };
    let phase = match map.remove("phase") {
        None | Some(Value::Null) => None,
        // As the schema states it: at most 100 characters as sent, one of them visible, no
        // control characters.
        Some(Value::String(p))
            if !p.trim_matches(is_blank).is_empty()
                && p.chars().count() <= 100
                && !p.chars().any(char::is_control) =>
        {
            Some(p.trim_matches(is_blank).to_owned())
        }
        Some(_) => {
            f.reject_field(
                "recurrence.phase",
                "must be a phase key or name of 1 to 100 characters",
                "value_error",
            );
            ok = false;
            None
        }
    };
    let mut extra: Vec<String> = map.keys().cloned().collect();
    extra.sort();
    for k in extra {
        f.reject_field(
            &format!("recurrence.{k}"),
            "unknown field",
            "extra_forbidden",
        );
        ok = false;
    }
    let kind = kind?;
    // Shape rules: every_days only with every_n_days (and required there); phase only with
    // phase_entry (and required there); a phase-entry recurrence has no end date.
    if kind == "every_n_days" && every_days.is_none() && ok {
        f.reject_field(
            "recurrence.every_days",
            "required for every_n_days",
            "missing",
        );
        ok = false;
    }
    if kind != "every_n_days" && every_days.is_some() {
        f.reject_field(
            "recurrence.every_days",
            "only for kind every_n_days",
            "value_error",
        );
        ok = false;
    }
    if kind == "phase_entry" && phase.is_none() && ok {
        f.reject_field("recurrence.phase", "required for phase_entry", "missing");
        ok = false;
    }
    if kind != "phase_entry" && phase.is_some() {
        f.reject_field(
            "recurrence.phase",
            "only for kind phase_entry",
            "value_error",
        );
        ok = false;
    }
    if kind == "phase_entry" && end_on.is_some() {
        f.reject_field(
            "recurrence.end_on",
            "a phase-entry recurrence has no end date",
            "value_error",
        );
        ok = false;
    }
    ok.then_some(Some(RecurrenceIn {
        kind,
        every_days,
        end_on,
        phase,
    }))
}

impl FromJson for NewTask {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let name = f.text("name", NAME_MAX);
        let instruction = f.opt_long_text("instruction", INSTRUCTION_MAX);
        let category = opt_choice(f, "category", CATEGORIES);
        let priority = opt_choice(f, "priority", PRIORITIES);
        let plant_key = opt_key(f, "plant_key");
        let due_on = opt_date(f, "due_on");
        let assigned_to = opt_key(f, "assigned_to");
        let checklist = checklist(f, "checklist");
        let recurrence = recurrence(f);
        let new = Self {
            name: name?,
            instruction: instruction?,
            category: category?.unwrap_or("maintenance"),
            priority: priority?.unwrap_or("medium"),
            plant_key: plant_key?,
            due_on: due_on?,
            assigned_to: assigned_to?,
            checklist: checklist?.unwrap_or_default(),
            recurrence: recurrence?,
        };
        // A recurrence that never fires: a dated one without a due date, or one whose end
        // lies before its first day; a phase entry without a plant.
        if let Some(r) = &new.recurrence {
            if r.kind == "phase_entry" {
                if new.plant_key.is_none() {
                    f.reject_field(
                        "recurrence.phase",
                        "a phase-entry recurrence needs plant_key: without a plant it never fires",
                        "value_error",
                    );
                    return None;
                }
            } else {
                match (new.due_on, r.end_on) {
                    (None, _) => {
                        f.reject_field(
                            "due_on",
                            "a dated recurrence needs a due date to count from; it would never fire",
                            "missing",
                        );
                        return None;
                    }
                    (Some(due), Some(end)) if end < due => {
                        f.reject_field(
                            "recurrence.end_on",
                            "ends before the due date: the recurrence would never fire",
                            "value_error",
                        );
                        return None;
                    }
                    _ => {}
                }
            }
        }
        Some(new)
    }
}

/// Body of `PATCH /t/{slug}/tasks/{task_key}`: omitted fields stay; `due_on`, `assigned_to`,
/// `instruction` clear with null.
#[derive(serde::Deserialize, Debug, Clone, ToSchema)]
#[salvo(schema(name = "TaskPatch"))]
#[serde(deny_unknown_fields)] // states `additionalProperties: false`: the handler refuses extras
pub struct TaskPatchBody {
    #[salvo(schema(
        nullable = false,
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub name: Option<String>,
    #[salvo(schema(
        max_length = 5000,
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]*$"
    ))]
    pub instruction: Option<String>,
    #[salvo(schema(nullable = false, pattern = r"^(low|medium|high|critical)$"))]
    pub priority: Option<String>,
    #[salvo(schema(pattern = r"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$"))]
    pub due_on: Option<String>,
    pub assigned_to: Option<Uuid>,
    /// `[]` empties it (up to 50 entries); null is refused.
    #[salvo(schema(nullable = false, max_items = 50))]
    pub checklist: Option<Vec<ChecklistItem>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TaskPatch {
    pub name: Option<String>,
    pub instruction: Patch<String>,
    pub priority: Option<&'static str>,
    pub due_on: Patch<Date>,
    pub assigned_to: Patch<Uuid>,
    pub checklist: Option<Vec<ChecklistItem>>,
}

impl FromJson for TaskPatch {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let name = f.patch_text("name", NAME_MAX);
        let instruction = crate::garden::fields::patch_long_text(f, "instruction", INSTRUCTION_MAX);
        let priority = match patch_choice(f, "priority", PRIORITIES) {
            Some(Patch::Keep) => Some(None),
            Some(Patch::Set(p)) => Some(Some(p)),
            Some(Patch::Clear) => {
                f.reject_field(
                    "priority",
                    "cannot be null; omit it to keep the value",
                    "type_error",
                );
                None
            }
            None => None,
        };
        let due_on = match f.raw("due_on") {
            None => Some(Patch::Keep),
            Some(Value::Null) => Some(Patch::Clear),
            Some(v) => {
                let d = parse_date(&v);
                if d.is_none() {
                    f.reject_field("due_on", "must be a date YYYY-MM-DD", "value_error");
                }
                d.map(Patch::Set)
            }
        };
        let assigned_to = patch_key(f, "assigned_to");
        let checklist = match f.raw("checklist") {
            None => Some(None),
            Some(Value::Null) => {
                f.reject_field(
                    "checklist",
                    "cannot be null; send [] to empty it",
                    "type_error",
                );
                None
            }
            Some(v) => checklist_value(f, "checklist", v).map(Some),
        };
        Some(Self {
            name: name?,
            instruction: instruction?,
            priority: priority?,
            due_on: due_on?,
            assigned_to: assigned_to?,
            checklist: checklist?,
        })
    }
}

/// Body of `POST /t/{slug}/tasks/{task_key}/status`.
#[derive(serde::Deserialize, Debug, Clone, ToSchema)]
#[salvo(schema(name = "TaskStatusChange"))]
#[serde(deny_unknown_fields)] // states `additionalProperties: false`: the handler refuses extras
pub struct StatusBody {
    /// start, complete, skip, fail or reopen.
    #[salvo(schema(pattern = r"^(start|complete|skip|fail|reopen)$"))]
    pub action: String,
    /// Notes on completing (up to 2000 characters).
    #[salvo(schema(
        max_length = 2000,
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]*$"
    ))]
    pub notes: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusChange {
    pub action: TaskAction,
    pub notes: Option<String>,
}

impl FromJson for StatusChange {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let action = f.choice("action", TaskAction::ALL);
        let notes = f.opt_long_text("notes", NOTES_MAX);
        Some(Self {
            action: action?,
            notes: notes?,
        })
    }
}

/// Filters of the task list.
#[derive(Debug, Clone, Default)]
pub struct TaskFilter {
    pub status: Option<TaskStatus>,
    pub plant: Option<Uuid>,
    pub due_from: Option<Date>,
    pub due_to: Option<Date>,
}
