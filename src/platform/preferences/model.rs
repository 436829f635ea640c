//! The preferences record and its body (PUT: every field; PATCH: any of them).

use salvo::oapi::ToSchema;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::directory::users::model::{matches_locale, matches_timezone};
use crate::values::json::{FromJson, JsonFields};

pub const UNITS: &[(&str, &str)] = &[("metric", "metric"), ("imperial", "imperial")];
pub const EXPERIENCE: &[(&str, &str)] = &[
    ("beginner", "beginner"),
    ("intermediate", "intermediate"),
    ("advanced", "advanced"),
    ("expert", "expert"),
];
/// The digest's hour when none was chosen (07:00 local).
pub const DEFAULT_DIGEST_HOUR: i16 = 7;

pub const DIGEST: &[(&str, &str)] = &[("off", "off"), ("daily", "daily"), ("weekly", "weekly")];

/// A user's preferences.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[salvo(schema(name = "UserPreferences"))]
pub struct Preferences {
    /// `metric` or `imperial`.
    pub units: String,
    /// Language tag such as `de` or `en-GB`.
    pub locale: String,
    /// IANA time zone name such as `Europe/Berlin`.
    pub timezone: String,
    /// `beginner`, `intermediate`, `advanced` or `expert`.
    pub experience_level: String,
    /// E-mail notifications.
    pub notify_email: bool,
    /// Web Push: the digest also goes to your browsers (`/users/me/push-subscriptions`).
    pub notify_push: bool,
    /// Reminders of due care (watering, fertilising, …).
    pub notify_care_due: bool,
    /// Summary mail: `off`, `daily` or `weekly`.
    pub notify_digest: String,
    /// The local hour (0-23, in `timezone`) from which the digest mail is sent; default 7.
    pub digest_hour: i16,
}

impl Default for Preferences {
    fn default() -> Self {
        Self {
            units: "metric".into(),
            locale: "en".into(),
            timezone: "UTC".into(),
            experience_level: "beginner".into(),
            notify_email: true,
            notify_push: false,
            notify_care_due: true,
            notify_digest: "daily".into(),
            digest_hour: DEFAULT_DIGEST_HOUR,
        }
    }
}

impl Preferences {
    /// The record as a JSON object (a PATCH overlays the body on it and reads it as a PUT).
    pub fn to_map(&self) -> Map<String, Value> {
        match serde_json::to_value(self) {
            Ok(Value::Object(m)) => m,
            _ => Map::new(),
        }
    }
}

fn strict_flag(f: &mut JsonFields, name: &'static str) -> Option<bool> {
    match f.value(name) {
        Some(Value::Bool(b)) => Some(b),
        None => {
            f.reject_field(name, "field required", "missing");
            None
        }
        Some(_) => {
            f.reject_field(name, "must be true or false", "type_error");
            None
        }
    }
}

impl FromJson for Preferences {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let units = f.choice("units", UNITS);
        let locale = f.text("locale", 35);
        let timezone = f.text("timezone", 64);
        let experience_level = f.choice("experience_level", EXPERIENCE);
        let notify_email = strict_flag(f, "notify_email");
        let notify_push = strict_flag(f, "notify_push");
        let notify_care_due = strict_flag(f, "notify_care_due");
        let notify_digest = f.choice("notify_digest", DIGEST);
        if f.has("digest_hour") && !f.has_value("digest_hour") {
            f.reject_field("digest_hour", "must be a whole number", "type_error");
        }
        // Optional even in a PUT (clients written before it existed keep working): 07:00.
        let digest_hour = f
            .opt_int("digest_hour", 0, 23)
            .map(|h| h.map_or(DEFAULT_DIGEST_HOUR, |h| h as i16));
        if let Some(l) = &locale
            && !matches_locale(l)
        {
            f.reject_field(
                "locale",
                "must be a language tag such as de or en-GB",
                "value_error",
            );
        }
        if let Some(t) = &timezone
            && !matches_timezone(t)
        {
            f.reject_field(
                "timezone",
                "must be an IANA time zone name such as Europe/Berlin",
                "value_error",
            );
        }
        let locale = locale.filter(|l| matches_locale(l));
        let timezone = timezone.filter(|t| matches_timezone(t));
        Some(Self {
            units: units?.to_owned(),
            locale: locale?,
            timezone: timezone?,
            experience_level: experience_level?.to_owned(),
            notify_email: notify_email?,
            notify_push: notify_push?,
            notify_care_due: notify_care_due?,
            notify_digest: notify_digest?.to_owned(),
            digest_hour: digest_hour?,
        })
    }
}

/// Body of `PUT /user-preferences`: every field (the record as a whole).
#[derive(Debug, Clone, serde::Deserialize, ToSchema)]
#[salvo(schema(name = "UserPreferencesPut"))]
#[serde(deny_unknown_fields)]
pub struct PreferencesPut {
    #[salvo(schema(pattern = "^(metric|imperial)$"))]
    pub units: String,
    #[salvo(schema(max_length = 35, pattern = r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$"))]
    pub locale: String,
    #[salvo(schema(
        max_length = 64,
        pattern = r"^[A-Za-z][A-Za-z0-9_+\-]*(/[A-Za-z0-9_+\-]+){0,2}$"
    ))]
    pub timezone: String,
    #[salvo(schema(pattern = "^(beginner|intermediate|advanced|expert)$"))]
    pub experience_level: String,
    pub notify_email: bool,
    pub notify_push: bool,
    pub notify_care_due: bool,
    #[salvo(schema(pattern = "^(off|daily|weekly)$"))]
    pub notify_digest: String,
    /// Local hour of the digest (0-23); omitted: 7.
    #[salvo(schema(minimum = 0, maximum = 23))]
    pub digest_hour: Option<i16>,
}

/// Body of `PATCH /user-preferences`: any field; an omitted field stays.
#[derive(Debug, Clone, serde::Deserialize, ToSchema)]
#[salvo(schema(name = "UserPreferencesBody"))]
#[serde(deny_unknown_fields)]
pub struct PreferencesBody {
    #[salvo(schema(nullable = false, pattern = "^(metric|imperial)$"))]
    pub units: Option<String>,
    #[salvo(schema(
        nullable = false,
        max_length = 35,
        pattern = r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$"
    ))]
    pub locale: Option<String>,
    #[salvo(schema(
        nullable = false,
        max_length = 64,
        pattern = r"^[A-Za-z][A-Za-z0-9_+\-]*(/[A-Za-z0-9_+\-]+){0,2}$"
    ))]
    pub timezone: Option<String>,
    #[salvo(schema(
        nullable = false,
        pattern = "^(beginner|intermediate|advanced|expert)$"
    ))]
    pub experience_level: Option<String>,
    #[salvo(schema(nullable = false))]
    pub notify_email: Option<bool>,
    #[salvo(schema(nullable = false))]
    pub notify_push: Option<bool>,
    #[salvo(schema(nullable = false))]
    pub notify_care_due: Option<bool>,
    #[salvo(schema(nullable = false, pattern = "^(off|daily|weekly)$"))]
    pub notify_digest: Option<String>,
    #[salvo(schema(nullable = false, minimum = 0, maximum = 23))]
    pub digest_hour: Option<i16>,
}
