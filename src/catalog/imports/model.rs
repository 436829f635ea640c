//! An import job: the uploaded file, its preview and, once confirmed, what it did.

use salvo::oapi::ToSchema;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::values::json::{FromJson, JsonFields};

/// The kinds a CSV can fill (the seed files' kinds).
pub const KINDS: &[(&str, &str)] = &[
    ("botanical_family", "families.json"),
    ("species", "species.json"),
    ("cultivar", "cultivars.json"),
    ("pest", "pests.json"),
    ("disease", "diseases.json"),
    ("treatment", "treatments.json"),
    ("phase_definition", "phases.json"),
    ("phase_sequence", "phase_sequences.json"),
    ("starter_kit", "starter_kits.json"),
    ("glossary_term", "glossary.json"),
    ("overwintering_profile", "overwintering.json"),
    ("hardiness_zone", "hardiness_zones.json"),
];

/// Largest number of data rows in one file.
pub const MAX_ROWS: usize = 2000;
/// Longest CSV text in characters (a longer one cannot fit the request size limit anyway once
/// JSON-escaped; split bigger files).
pub const MAX_CSV_CHARS: usize = 100_000;

/// Body of `POST /imports`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[salvo(schema(name = "ImportUpload"))]
#[serde(deny_unknown_fields)]
pub struct Upload {
    /// What the rows are.
    #[salvo(schema(value_type = ImportKind))]
    pub kind: String,
    /// The CSV text: a header row of the seed file's field names (references by name, lists
    /// separated by `;`, objects as JSON), then one row per record.
    #[salvo(schema(
        min_length = 1,
        max_length = 100000,
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]*$"
    ))]
    pub csv: String,
}

/// The importable kinds (documents `kind`).
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ImportKind {
    BotanicalFamily,
    Species,
    Cultivar,
    Pest,
    Disease,
    Treatment,
    PhaseDefinition,
    PhaseSequence,
    StarterKit,
    GlossaryTerm,
    OverwinteringProfile,
    HardinessZone,
}

impl FromJson for Upload {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let kinds: Vec<(&str, &str)> = KINDS.iter().map(|(k, _)| (*k, *k)).collect();
        let kind = f.choice("kind", &kinds);
        let csv = f.opt_long_text("csv", MAX_CSV_CHARS);
        let csv = match csv? {
            Some(c) => Some(c),
            None => {
                f.reject_field("csv", "field required", "missing");
                None
            }
        };
        Some(Self {
            kind: kind?.to_owned(),
            csv: csv?,
        })
    }
}

/// A problem with one row (row 1 is the header).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct RowError {
    pub row: usize,
    pub message: String,
}

/// What confirming would do with one row.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct RowPlan {
    pub row: usize,
    pub name: String,
    /// `create`, `update` or `unchanged`.
    pub action: String,
}

/// What a confirmed import did.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ImportSummary {
    pub created: usize,
    pub updated: usize,
    pub unchanged: usize,
}

/// `previewed` (uploaded, not applied) or `confirmed` (applied).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ImportStatus {
    Previewed,
    Confirmed,
}

/// An import job.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ImportJob {
    pub key: Uuid,
    pub kind: String,
    pub status: ImportStatus,
    /// Data rows in the file.
    pub rows: usize,
    /// True when no row has an error (only then can it be confirmed).
    pub valid: bool,
    pub errors: Vec<RowError>,
    pub preview: Vec<RowPlan>,
    pub summary: Option<ImportSummary>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option")]
    pub confirmed_at: Option<OffsetDateTime>,
}
