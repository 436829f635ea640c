//! Shapes of the calendar routes and tools.

use salvo::oapi::ToSchema;
use serde::Serialize;
use time::Date;

use crate::error::{AppError, ErrorDetail};
use crate::garden::contracts::CalendarEvent;
use crate::rules::sowing::{Bar, Frost, Hemisphere};

/// The longest window `/calendar/events` answers: one year, leap day included.
pub const MAX_WINDOW_DAYS: i64 = 366;

fn iso_text(d: Date) -> String {
    format!("{:04}-{:02}-{:02}", d.year(), u8::from(d.month()), d.day())
}

/// Parses `YYYY-MM-DD` (4-digit year 1900–2200).
pub fn parse_date(raw: &str) -> Option<Date> {
    let fmt = time::macros::format_description!("[year]-[month]-[day]");
    Date::parse(raw, &fmt)
        .ok()
        .filter(|d| (1900..=2200).contains(&d.year()))
}

/// A checked `from`..`to` window (inclusive).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub from: Date,
    pub to: Date,
}

impl Window {
    /// Both required; `from` ≤ `to`; at most [`MAX_WINDOW_DAYS`] days. `prefix` is `query` or
    /// `arguments` (the field path of the details).
    pub fn parse(from: Option<&str>, to: Option<&str>, prefix: &str) -> Result<Self, AppError> {
        let mut errors = Vec::new();
        let mut one = |name: &str, raw: Option<&str>| match raw {
            None => {
                errors.push(ErrorDetail::new(
                    format!("{prefix}.{name}"),
                    "field required",
                    "missing",
                ));
                None
            }
            Some(r) => {
                let d = parse_date(r);
                if d.is_none() {
                    errors.push(ErrorDetail::new(
                        format!("{prefix}.{name}"),
                        "must be a date YYYY-MM-DD (years 1900–2200)",
                        "value_error",
                    ));
                }
                d
            }
        };
        let from = one("from", from);
        let to = one("to", to);
        if let (Some(f), Some(t)) = (from, to) {
            if f > t {
                errors.push(ErrorDetail::new(
                    format!("{prefix}.to"),
                    "must not be before from",
                    "value_error",
                ));
            } else if (t - f).whole_days() + 1 > MAX_WINDOW_DAYS {
                errors.push(ErrorDetail::new(
                    format!("{prefix}.to"),
                    format!("the window may span at most {MAX_WINDOW_DAYS} days"),
                    "value_error",
                ));
            }
        }
        match (from, to, errors.is_empty()) {
            (Some(from), Some(to), true) => Ok(Self { from, to }),
            _ => Err(AppError::validation(errors)),
        }
    }

    /// Whether an event (first day, optional inclusive last day) touches the window.
    pub fn touches(&self, start: Date, end: Option<Date>) -> bool {
        start <= self.to && end.unwrap_or(start) >= self.from
    }
}

/// One calendar entry (all-day; `end_date` inclusive, present for a span).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[salvo(schema(name = "CalendarEvent"))]
pub struct EventView {
    /// Stable across reads: the iCal UID.
    pub uid: String,
    /// `phase`, `sowing`, `task`, `care_reminder`, `harvest`, `treatment`, …
    pub kind: String,
    /// `YYYY-MM-DD`.
    pub date: String,
    pub end_date: Option<String>,
    pub title: String,
    pub plant_key: Option<uuid::Uuid>,
    pub detail: Option<String>,
}

impl From<&CalendarEvent> for EventView {
    fn from(e: &CalendarEvent) -> Self {
        Self {
            uid: e.uid.clone(),
            kind: e.kind.to_owned(),
            date: iso_text(e.date),
            end_date: e.end_date.map(iso_text),
            title: e.title.clone(),
            plant_key: e.plant_key,
            detail: e.detail.clone(),
        }
    }
}

/// `GET /calendar/events`.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[salvo(schema(name = "CalendarEvents"))]
pub struct EventsPage {
    pub from: String,
    pub to: String,
    pub count: usize,
    pub items: Vec<EventView>,
}

impl EventsPage {
    pub fn new(w: Window, events: &[CalendarEvent]) -> Self {
        Self {
            from: iso_text(w.from),
            to: iso_text(w.to),
            count: events.len(),
            items: events.iter().map(EventView::from).collect(),
        }
    }
}

/// One bar of a species' sowing calendar.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[salvo(schema(name = "SowingBar"))]
pub struct BarView {
    /// `indoor_sowing`, `outdoor_planting`, `growth`, `harvest` or `flowering`.
    pub phase: String,
    /// Display colour (`#RRGGBB`).
    pub color: String,
    pub start_date: String,
    pub end_date: String,
}

impl From<&Bar> for BarView {
    fn from(b: &Bar) -> Self {
        Self {
            phase: b.phase.to_owned(),
            color: b.color.to_owned(),
            start_date: iso_text(b.start_date),
            end_date: iso_text(b.end_date),
        }
    }
}

/// The frost dates the calendar used.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[salvo(schema(name = "FrostDates"))]
pub struct FrostView {
    pub last: String,
    /// The last frost + 14 days: frost-sensitive plants go out after it.
    pub eisheilige: String,
    pub first: Option<String>,
    /// `garden` (the garden's own frost dates), `zone` (estimated from the hardiness zone's
    /// typical dates) or `default` (the reference: May 1 north, November 1 south).
    pub source: String,
    /// `north` or `south`: in the south the catalogue months are moved by six months.
    pub hemisphere: String,
    /// False only for the garden's own frost dates.
    pub estimated: bool,
    /// Where the dates come from, in words.
    pub basis: String,
}

/// Where the calendar's frost dates come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrostBasis {
    /// The garden's own last spring frost.
    Garden,
    /// The typical dates of this hardiness zone (an estimate).
    Zone(String),
    /// The reference last frost of the hemisphere.
    Default,
}

impl FrostBasis {
    pub fn key(&self) -> &'static str {
        match self {
            Self::Garden => "garden",
            Self::Zone(_) => "zone",
            Self::Default => "default",
        }
    }

    /// The sentence shown with the dates (response and calendar event detail).
    pub fn text(&self, hemisphere: Hemisphere) -> String {
        let set_own = "set the garden's own last_spring_frost in the calendar settings";
        match (self, hemisphere) {
            (Self::Garden, _) => "the garden's own average frost dates (calendar settings)".into(),
            (Self::Zone(z), _) => format!(
                "estimated from the typical last frost of hardiness zone {z}; a USDA zone \
                 is the average coldest winter night, not a frost date: {set_own}"
            ),
            (Self::Default, Hemisphere::North) => format!(
                "estimated: the reference last frost May 1 the catalogue months are written \
                 for (northern hemisphere); {set_own}"
            ),
            (Self::Default, Hemisphere::South) => format!(
                "estimated: the catalogue months moved by six months (southern hemisphere), \
                 reference last frost November 1; {set_own}"
            ),
        }
    }
}

impl FrostView {
    pub fn new(f: &Frost, basis: &FrostBasis) -> Self {
        Self {
            last: iso_text(f.last),
            eisheilige: iso_text(f.eisheilige),
            first: f.first.map(iso_text),
            source: basis.key().to_owned(),
            hemisphere: f.hemisphere.as_str().to_owned(),
            estimated: *basis != FrostBasis::Garden,
            basis: basis.text(f.hemisphere),
        }
    }
}

/// One species of the sowing calendar.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[salvo(schema(name = "SowingCalendarItem"))]
pub struct SowingItem {
    pub species_key: String,
    pub species_name: Option<String>,
    pub common_name: Option<String>,
    /// Live plants of the species in the garden.
    pub plant_count: i64,
    pub bars: Vec<BarView>,
}

/// `GET /calendar/sowing`.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[salvo(schema(name = "SowingCalendar"))]
pub struct SowingCalendar {
    pub year: i32,
    /// The zone used: the request's, else the garden's; null when neither is set.
    pub zone: Option<String>,
    pub frost: FrostView,
    pub count: usize,
    pub items: Vec<SowingItem>,
}

/// Garden settings the calendar uses.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[salvo(schema(name = "GardenSettings"))]
pub struct GardenSettings {
    /// USDA hardiness zone `1a`…`13b`; null when not set.
    pub hardiness_zone: Option<String>,
    /// The garden's time zone (IANA name such as `Europe/Berlin`); null: UTC. Dated records
    /// such as the plant-protection record are written in it.
    pub timezone: Option<String>,
    /// `north` or `south`: the southern hemisphere moves the catalogue's (northern) sowing
    /// months by six months. Null (unset): the hemisphere of `timezone` (`Australia/…`,
    /// `Pacific/Auckland`, … are south), else north.
    pub hemisphere: Option<String>,
    /// The garden's own average last spring frost, `MM-DD`; the sowing calendar prefers it to a
    /// hardiness zone's estimate. Null: not set.
    pub last_spring_frost: Option<String>,
    /// The garden's own average first autumn frost, `MM-DD`; null: not set.
    pub first_autumn_frost: Option<String>,
}

/// Body of `PUT /calendar/settings`.
#[derive(Debug, Clone, serde::Deserialize, ToSchema)]
#[salvo(schema(name = "GardenSettingsBody"))]
#[serde(deny_unknown_fields)]
pub struct GardenSettingsBody {
    /// `1a`…`13b`, or null to clear; required (a PUT states the whole setting).
    #[salvo(schema(required = true, max_length = 3, pattern = r"^(1[0-3]|[1-9])[ab]$"))]
    pub hardiness_zone: Option<String>,
    /// An IANA time zone name known to the server's zone database (`Europe/Berlin`, `UTC`);
    /// absent or null: UTC.
    #[salvo(schema(
        min_length = 1,
        max_length = 64,
        pattern = r"^[A-Za-z][A-Za-z0-9_+\-]*(/[A-Za-z0-9_+\-]+){0,2}$"
    ))]
    pub timezone: Option<String>,
    /// `north` or `south`; absent or null: the hemisphere of `timezone`, else north.
    #[salvo(schema(pattern = r"^(north|south)$"))]
    pub hemisphere: Option<String>,
    /// Your average last spring frost `MM-DD` (a day of every year: not 02-29); absent or null:
    /// not set (the calendar then estimates it from the hardiness zone, or uses the reference).
    #[salvo(schema(pattern = r"^(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$"))]
    pub last_spring_frost: Option<String>,
    /// Your average first autumn frost `MM-DD`; absent or null: not set. In the north it comes
    /// after the last spring frost in the calendar year, in the south before it.
    #[salvo(schema(pattern = r"^(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$"))]
    pub first_autumn_frost: Option<String>,
}

/// An optional `MM-DD` field: absent or null is `Some(None)`; a day that does not exist is
/// refused (422).
fn month_day_field(
    f: &mut crate::values::json::JsonFields,
    name: &'static str,
) -> Option<Option<String>> {
    match f.raw(name) {
        None | Some(serde_json::Value::Null) => Some(None),
        Some(serde_json::Value::String(v)) => match crate::rules::sowing::check_month_day(&v) {
            Ok(_) => Some(Some(v)),
            Err(why) => {
                f.reject_field(name, why, "value_error");
                None
            }
        },
        Some(_) => {
            f.reject_field(name, "must be a month and day MM-DD, or null", "type_error");
            None
        }
    }
}

impl crate::values::json::FromJson for GardenSettings {
    fn from_json(f: &mut crate::values::json::JsonFields) -> Option<Self> {
        let zone = match f.raw("hardiness_zone") {
            None => {
                f.reject_field(
                    "hardiness_zone",
                    "field required (null clears it)",
                    "missing",
                );
                None
            }
            Some(serde_json::Value::Null) => Some(None),
            Some(serde_json::Value::String(z)) if crate::rules::zones::is_zone(&z) => Some(Some(z)),
            Some(_) => {
                f.reject_field(
                    "hardiness_zone",
                    "must be a hardiness zone 1a…13b, or null",
                    "value_error",
                );
                None
            }
        };
        let timezone = match f.raw("timezone") {
            None | Some(serde_json::Value::Null) => Some(None),
            Some(serde_json::Value::String(z)) if time_zone(&z).is_some() => Some(Some(z)),
            Some(_) => {
                f.reject_field(
                    "timezone",
                    "must be an IANA time zone name such as Europe/Berlin, or null (UTC)",
                    "value_error",
                );
                None
            }
        };
        let hemisphere = match f.raw("hemisphere") {
            None | Some(serde_json::Value::Null) => Some(None),
            Some(serde_json::Value::String(h)) if Hemisphere::parse(&h).is_some() => Some(Some(h)),
            Some(_) => {
                f.reject_field(
                    "hemisphere",
                    "must be north or south, or null (north)",
                    "value_error",
                );
                None
            }
        };
        let last = month_day_field(f, "last_spring_frost");
        let first = month_day_field(f, "first_autumn_frost");
        // The frost-free season runs from the last spring frost to the first autumn frost:
        // within the calendar year in the north, across the new year in the south.
        if let (Some(Some(l)), Some(Some(fi)), Some(h)) = (&last, &first, &hemisphere) {
            let south = h.as_deref() == Some("south");
            let in_order = fi > l;
            if l == fi || in_order == south {
                f.reject_field(
                    "first_autumn_frost",
                    if south {
                        "must come before last_spring_frost in the calendar year in the southern \
                         hemisphere (autumn is March to May)"
                    } else {
                        "must come after last_spring_frost in the calendar year in the northern \
                         hemisphere"
                    },
                    "value_error",
                );
                return None;
            }
        }
        Some(Self {
            hardiness_zone: zone?,
            timezone: timezone?,
            hemisphere: hemisphere?,
            last_spring_frost: last?,
            first_autumn_frost: first?,
        })
    }
}

/// The zone of an IANA name the zone database knows (bundled with the binary).
pub fn time_zone(name: &str) -> Option<jiff::tz::TimeZone> {
    if name.is_empty() || name.len() > 64 {
        return None;
    }
    jiff::tz::db().get(name).ok()
}

/// The state of the caller's iCal feed in this garden (never the token).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[salvo(schema(name = "CalendarFeedStatus"))]
pub struct FeedStatus {
    pub active: bool,
    #[serde(with = "time::serde::rfc3339::option")]
    pub created_at: Option<time::OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339::option")]
    pub rotated_at: Option<time::OffsetDateTime>,
}

/// A new feed secret: shown once, never again (only its digest is stored).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[salvo(schema(name = "CalendarFeedSecret"))]
pub struct FeedSecret {
    pub token: String,
    /// The path to subscribe to (below the service's origin).
    pub path: String,
    #[serde(with = "time::serde::rfc3339")]
    pub rotated_at: time::OffsetDateTime,
}
