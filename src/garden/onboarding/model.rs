//! Shapes of onboarding.

use salvo::oapi::ToSchema;
use serde::Serialize;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::values::json::{FromJson, JsonFields};

/// One step of a garden's start.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[salvo(schema(name = "OnboardingStep"))]
pub struct Step {
    /// `hardiness_zone`, `starter_kit`, `site`, `plants`, `calendar_feed`.
    pub step: &'static str,
    pub done: bool,
}

/// The kit a garden was set up with.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[salvo(schema(name = "AppliedStarterKit"))]
pub struct AppliedKit {
    pub kit_key: String,
    pub kit_slug: String,
    /// Null once the site was deleted.
    pub site_key: Option<Uuid>,
    pub location_key: Option<Uuid>,
    pub plant_keys: Vec<Uuid>,
    #[serde(with = "time::serde::rfc3339")]
    pub applied_at: OffsetDateTime,
}

/// `GET /onboarding`.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[salvo(schema(name = "OnboardingStatus"))]
pub struct Status {
    /// The garden has a zone, a site and a plant (the calendar feed is optional).
    pub completed: bool,
    pub steps: Vec<Step>,
    pub kit: Option<AppliedKit>,
}

/// Body of `POST /onboarding/starter-kit`.
#[derive(Debug, Clone, serde::Deserialize, ToSchema)]
#[salvo(schema(name = "ApplyStarterKit"))]
#[serde(deny_unknown_fields)]
pub struct ApplyKitBody {
    /// The kit (key from `/starter-kits`).
    #[salvo(schema(format = "uuid"))]
    pub kit_key: String,
    /// The new site's name (default: the kit's English name).
    #[salvo(schema(
        nullable = false,
        min_length = 1,
        max_length = 120,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub site_name: Option<String>,
    /// Also set the garden's hardiness zone.
    #[salvo(schema(nullable = false, max_length = 3, pattern = r"^(1[0-3]|[1-9])[ab]$"))]
    pub hardiness_zone: Option<String>,
}

#[derive(Debug, Clone)]
pub struct ApplyKit {
    pub kit_key: Uuid,
    pub site_name: Option<String>,
    pub hardiness_zone: Option<String>,
}

impl FromJson for ApplyKit {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let key = f.text("kit_key", 36);
        let kit_key = key.and_then(|k| match Uuid::parse_str(&k) {
            Ok(u) => Some(u),
            Err(_) => {
                f.reject_field("kit_key", "must be a starter kit key (UUID)", "value_error");
                None
            }
        });
        let site_name = if f.has("site_name") {
            f.text("site_name", 120).map(Some)
        } else {
            Some(None)
        };
        let zone = match f.value("hardiness_zone") {
            None => Some(None),
            Some(serde_json::Value::String(z)) if crate::rules::zones::is_zone(&z) => Some(Some(z)),
            Some(_) => {
                f.reject_field(
                    "hardiness_zone",
                    "must be a hardiness zone 1a…13b",
                    "value_error",
                );
                None
            }
        };
        Some(Self {
            kit_key: kit_key?,
            site_name: site_name?,
            hardiness_zone: zone?,
        })
    }
}

/// A plant the kit created.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[salvo(schema(name = "StarterKitPlant"))]
pub struct KitPlant {
    pub plant_key: Uuid,
    pub name: String,
    pub species_key: String,
}

/// What applying a kit created.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[salvo(schema(name = "AppliedStarterKitResult"))]
pub struct Applied {
    pub kit_key: String,
    pub kit_slug: String,
    pub site_key: Uuid,
    pub site_name: String,
    pub location_key: Uuid,
    pub location_name: String,
    pub hardiness_zone: Option<String>,
    pub plants: Vec<KitPlant>,
}
