//! Harvest: readiness, observations, batches and yields; the wire shapes of `/harvest/...`.

use salvo::oapi::ToSchema;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::garden::ipm::input::{
    opt_choice, opt_instant, opt_line, opt_number, opt_past_day, text_list,
};
use crate::garden::plants::model::opt_uuid;
use crate::rules::harvest::{GRADES, STAGES};
use crate::values::json::{FromJson, JsonFields};

pub const NOTES_MAX: usize = 2000;
pub const WEIGHT_MAX: f64 = 1_000_000.0;
pub const DEFECTS_MAX: usize = 20;
pub const INDICATORS: &[&str] = &[
    "trichome",
    "color",
    "brix",
    "size",
    "days_since_flowering",
    "days_since_sowing",
    "aroma",
    "texture",
    "foliage",
];
pub const HARVEST_TYPES: &[&str] = &["partial", "final", "continuous"];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum IndicatorType {
    Trichome,
    Color,
    Brix,
    Size,
    DaysSinceFlowering,
    DaysSinceSowing,
    Aroma,
    Texture,
    Foliage,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Ripeness {
    Immature,
    Approaching,
    Peak,
    Overripe,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum HarvestType {
    Partial,
    Final,
    Continuous,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum QualityGrade {
    APlus,
    A,
    B,
    C,
    D,
}

fn req<T>(f: &mut JsonFields, name: &'static str, v: Option<Option<T>>) -> Option<T> {
    match v? {
        Some(x) => Some(x),
        None => {
            f.reject_field(name, "field required", "missing");
            None
        }
    }
}

/// Body of `POST /t/{slug}/harvest/observations`: one ripeness observation of a plant.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[salvo(schema(name = "HarvestObservationCreate"))]
#[serde(deny_unknown_fields)]
pub struct NewObservation {
    pub plant_key: Uuid,
    pub indicator_type: IndicatorType,
    pub ripeness_assessment: Ripeness,
    /// 0.0 to 1.0, default 0.5: the weight of this indicator in the readiness score.
    #[salvo(schema(minimum = 0.0, maximum = 1.0))]
    pub reliability_score: Option<f64>,
    /// 0 to 365.
    #[salvo(schema(minimum = 0, maximum = 365))]
    pub days_to_harvest_estimate: Option<i64>,
    /// RFC 3339, not in the future; default now.
    #[salvo(schema(value_type = Option<String>, format = "date-time"))]
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub observed_at: Option<OffsetDateTime>,
    #[salvo(schema(
        max_length = 2000,
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]*$"
    ))]
    pub notes: Option<String>,
}

impl FromJson for NewObservation {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let plant = opt_uuid(f, "plant_key");
        let plant = req(f, "plant_key", plant);
        let ind = opt_choice(f, "indicator_type", INDICATORS);
        let ind = req(f, "indicator_type", ind);
        let stage = opt_choice(f, "ripeness_assessment", STAGES);
        let stage = req(f, "ripeness_assessment", stage);
        let reliability = opt_number(f, "reliability_score", 0.0, 1.0, false);
        let days = f.opt_int("days_to_harvest_estimate", 0, 365);
        let observed_at = opt_instant(f, "observed_at");
        let notes = f.opt_long_text("notes", NOTES_MAX);
        Some(Self {
            plant_key: plant?,
            indicator_type: serde_json::from_value(ind?.into()).ok()?,
            ripeness_assessment: serde_json::from_value(stage?.into()).ok()?,
            reliability_score: reliability?,
            days_to_harvest_estimate: days?,
            observed_at: observed_at?,
            notes: notes?,
        })
    }
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Observation {
    pub key: Uuid,
    pub plant_key: Uuid,
    pub indicator_type: IndicatorType,
    pub ripeness_assessment: Ripeness,
    pub reliability_score: f64,
    pub days_to_harvest_estimate: Option<i64>,
    #[serde(with = "time::serde::rfc3339")]
    #[salvo(schema(value_type = String, format = "date-time"))]
    pub observed_at: OffsetDateTime,
    pub notes: Option<String>,
}

/// Body of `POST /t/{slug}/harvest/batches`. Quality: either the three scores (all of them;
/// the score and grade are computed) or a `quality_grade` alone, or neither.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[salvo(schema(name = "HarvestBatchCreate"))]
#[serde(deny_unknown_fields)]
pub struct NewBatch {
    pub plant_key: Uuid,
    /// YYYY-MM-DD, the grower's local date, from 1900-01-01 up to the garden's today (its
    /// time zone; UTC when none is set); default today. Or an RFC 3339 date-time with its
    /// offset, which counts as its local day in the garden's zone (in a Los Angeles garden
    /// 2026-11-30T02:00:00Z is 29 November); a date-time without an offset is refused. The
    /// safety-interval gate checks this day.
    #[salvo(schema(value_type = Option<String>, pattern = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]+)?)?([Zz]|[+-][0-9]{2}:[0-9]{2}))?$"))]
    pub harvest_date: Option<crate::rules::karenz::DayOrInstant>,
    /// Default `final`.
    pub harvest_type: Option<HarvestType>,
    /// Up to 100 characters; default `H-<date>-<first 8 of the key>`.
    #[salvo(schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub label: Option<String>,
    /// Grams, above 0, at most 1000000.
    #[salvo(schema(exclusive_minimum = 0.0, maximum = 1000000.0))]
    pub wet_weight_g: f64,
    /// Grams, 0 to the wet weight.
    #[salvo(schema(minimum = 0.0, maximum = 1000000.0))]
    pub estimated_dry_weight_g: Option<f64>,
    /// Grams, 0 to the wet weight.
    #[salvo(schema(minimum = 0.0, maximum = 1000000.0))]
    pub actual_dry_weight_g: Option<f64>,
    /// 0 to 100.
    #[salvo(schema(minimum = 0.0, maximum = 100.0))]
    pub appearance_score: Option<f64>,
    /// 0 to 100.
    #[salvo(schema(minimum = 0.0, maximum = 100.0))]
    pub aroma_score: Option<f64>,
    /// 0 to 100.
    #[salvo(schema(minimum = 0.0, maximum = 100.0))]
    pub color_score: Option<f64>,
    /// Up to 20 (mold, hermaphrodite, pests, seeded, nutrient_burn, light_burn, foxtailing,
    /// discoloration, mechanical_damage; any other costs 5 points).
    #[salvo(schema(max_items = 20))]
    #[serde(default)]
    pub defects: Vec<String>,
    /// Only without scores (the scores compute it).
    pub quality_grade: Option<QualityGrade>,
    #[salvo(schema(
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub harvester: Option<String>,
    #[salvo(schema(
        max_length = 2000,
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]*$"
    ))]
    pub notes: Option<String>,
}

impl FromJson for NewBatch {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let plant = opt_uuid(f, "plant_key");
        let plant = req(f, "plant_key", plant);
        let date = opt_past_day(f, "harvest_date");
        let htype = opt_choice(f, "harvest_type", HARVEST_TYPES);
        let label = opt_line(f, "label", 100);
        let wet = opt_number(f, "wet_weight_g", 0.0, WEIGHT_MAX, true);
        let wet = req(f, "wet_weight_g", wet);
        let est = opt_number(f, "estimated_dry_weight_g", 0.0, WEIGHT_MAX, false);
        let dry = opt_number(f, "actual_dry_weight_g", 0.0, WEIGHT_MAX, false);
        let appearance = opt_number(f, "appearance_score", 0.0, 100.0, false);
        let aroma = opt_number(f, "aroma_score", 0.0, 100.0, false);
        let color = opt_number(f, "color_score", 0.0, 100.0, false);
        let defects = text_list(f, "defects", DEFECTS_MAX, 60);
        let grade = opt_choice(f, "quality_grade", GRADES);
        let harvester = opt_line(f, "harvester", 200);
        let notes = f.opt_long_text("notes", NOTES_MAX);
        let (wet, est, dry) = (wet?, est?, dry?);
        let mut ok = true;
        for (name, v) in [
            ("estimated_dry_weight_g", est),
            ("actual_dry_weight_g", dry),
        ] {
            if v.is_some_and(|d| d > wet) {
                f.reject_field(name, "must not exceed wet_weight_g", "value_error");
                ok = false;
            }
        }
        let (appearance, aroma, color, grade) = (appearance?, aroma?, color?, grade?);
        let scores = [appearance, aroma, color];
        let given = scores.iter().filter(|s| s.is_some()).count();
        if given != 0 && given != 3 {
            for (name, s) in [
                ("appearance_score", appearance),
                ("aroma_score", aroma),
                ("color_score", color),
            ] {
                if s.is_none() {
                    f.reject_field(name, "the three quality scores go together", "missing");
                }
            }
            ok = false;
        }
        if given > 0 && grade.is_some() {
            f.reject_field(
                "quality_grade",
                "computed from the scores; omit it when sending scores",
                "value_error",
            );
            ok = false;
        }
        let defects = defects?;
        if !ok {
            return None;
        }
        Some(Self {
            plant_key: plant?,
            harvest_date: date?,
            harvest_type: htype?.and_then(|s| serde_json::from_value(s.into()).ok()),
            label: label?,
            wet_weight_g: wet,
            estimated_dry_weight_g: est,
            actual_dry_weight_g: dry,
            appearance_score: appearance,
            aroma_score: aroma,
            color_score: color,
            defects,
            quality_grade: grade.and_then(|s| serde_json::from_value(s.into()).ok()),
            harvester: harvester?,
            notes: notes?,
        })
    }
}

/// A harvest batch as stored.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct HarvestBatch {
    pub key: Uuid,
    pub plant_key: Uuid,
    pub run_key: Option<Uuid>,
    pub label: String,
    /// YYYY-MM-DD.
    pub harvest_date: String,
    pub harvest_type: HarvestType,
    pub wet_weight_g: f64,
    pub estimated_dry_weight_g: Option<f64>,
    pub actual_dry_weight_g: Option<f64>,
    pub appearance_score: Option<f64>,
    pub aroma_score: Option<f64>,
    pub color_score: Option<f64>,
    pub defects: Vec<String>,
    /// 0 to 100, computed from the scores and defects.
    pub quality_score: Option<f64>,
    pub quality_grade: Option<QualityGrade>,
    pub harvester: String,
    pub notes: Option<String>,
    #[serde(with = "time::serde::rfc3339")]
    #[salvo(schema(value_type = String, format = "date-time"))]
    pub created_at: OffsetDateTime,
    /// Advice given when it was recorded (not stored): `harvest_readiness: …` when the
    /// plant's current phase does not allow a harvest. The batch is recorded all the same
    /// (the grower's call).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// A safety interval that still runs for a plant.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SafetyInterval {
    pub application_key: Uuid,
    pub treatment_key: String,
    pub treatment_name: String,
    pub active_ingredient: Option<String>,
    /// Days for this plant's crop (the treatment's longest when its crop is not listed).
    pub safety_interval_days: i32,
    /// Where those days come from: label, registration number or authority page.
    pub interval_source: Option<String>,
    /// YYYY-MM-DD: the first blocked day.
    pub applied_on: String,
    /// YYYY-MM-DD: the last blocked day.
    pub last_blocked_day: String,
    /// YYYY-MM-DD: the first day a harvest is allowed.
    pub safe_on: String,
    /// Whole days from today to `safe_on`.
    pub days_remaining: i64,
}

/// The latest observation of one indicator.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct IndicatorReading {
    pub indicator_type: IndicatorType,
    pub ripeness_assessment: Ripeness,
    pub reliability_score: f64,
    pub days_to_harvest_estimate: Option<i64>,
    #[serde(with = "time::serde::rfc3339")]
    #[salvo(schema(value_type = String, format = "date-time"))]
    pub observed_at: OffsetDateTime,
}

/// How close a plant is to harvest (domain 2.10) and whether a harvest is allowed today.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Readiness {
    pub plant_key: Uuid,
    pub plant_name: String,
    pub phase_key: Option<String>,
    /// Whether the plant's current phase allows harvest (null: no phase or unknown sequence).
    pub phase_allows_harvest: Option<bool>,
    pub days_in_phase: Option<i64>,
    pub expected_phase_days: Option<i64>,
    /// 0 to 100 from the latest observation per indicator.
    pub score: f64,
    /// `optimal`, `approaching`, `developing`, `immature`, or `overripe` when overripe
    /// readings carry more than half the weight.
    pub recommendation: String,
    pub estimated_days_to_harvest: Option<i64>,
    pub indicators: Vec<IndicatorReading>,
    /// Intervals still running today (empty: the safety gate is open).
    pub safety_intervals: Vec<SafetyInterval>,
    /// YYYY-MM-DD: the first day the safety gate is open (today when nothing runs).
    pub harvest_allowed_from: String,
    /// Phase allows harvest, recommendation `optimal`, and no interval running.
    pub ready: bool,
}

/// Yield of a plant or a run.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Yield {
    /// `plant` or `run`.
    pub scope: String,
    pub key: Uuid,
    pub name: String,
    pub batches: i64,
    /// Plants counted (1 for a plant; the run's plants for a run).
    pub plants: i64,
    pub total_wet_weight_g: f64,
    /// Actual dry weights, else the estimates, of the batches that give one.
    pub total_dry_weight_g: f64,
    /// Wet weight per plant.
    pub wet_weight_per_plant_g: f64,
    pub dry_weight_per_plant_g: f64,
    pub first_harvest: Option<String>,
    pub last_harvest: Option<String>,
}
