//! The seed: the real master-data set, versioned as JSON files in `seed/data/` (format:
//! `seed/data/FORMAT.md`) and compiled into the binary with `include_str!`, so a binary always
//! seeds exactly the data it was built and tested with and needs no files at run time.
//! `kultiva seed` validates the whole set first ([`validate`]), then loads it in one
//! transaction as idempotent upserts by natural key ([`load`]): a second run changes nothing.

pub mod load;
pub mod validate;

use std::path::Path;

use serde_json::{Map, Value};

use super::companions::model::PAIR;
use super::engine::spec::KindSpec;
use super::families::model::FAMILY;
use super::glossary::model::TERM;
use super::ipm::model::{DISEASE, PEST, TREATMENT};
use super::kits::model::KIT;
use super::overwintering::model::PROFILE;
use super::phases::model::{PHASE, SEQUENCE};
use super::rotation::model::RULE;
use super::species::model::{CULTIVAR, SPECIES};
use super::zones::model::ZONE_TEXT;

/// How a file holds its records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// A JSON array of records.
    Array,
    /// `{compatible: [{a, b, score, reason}], incompatible: [{a, b, reason}]}`.
    Companions,
    /// `{successors: [{from, to, …}], family_incompatible: [{a, b, severity, reason}]}`.
    Rotation,
}

/// One seed file: which kind it fills and how.
#[derive(Debug)]
pub struct SeedFile {
    pub file: &'static str,
    pub spec: &'static KindSpec,
    pub layout: Layout,
}

/// The files in load order: every kind after the kinds it references.
pub const FILES: &[SeedFile] = &[
    SeedFile {
        file: "families.json",
        spec: &FAMILY,
        layout: Layout::Array,
    },
    SeedFile {
        file: "phases.json",
        spec: &PHASE,
        layout: Layout::Array,
    },
    SeedFile {
        file: "phase_sequences.json",
        spec: &SEQUENCE,
        layout: Layout::Array,
    },
    SeedFile {
        file: "species.json",
        spec: &SPECIES,
        layout: Layout::Array,
    },
    SeedFile {
        file: "cultivars.json",
        spec: &CULTIVAR,
        layout: Layout::Array,
    },
    SeedFile {
        file: "pests.json",
        spec: &PEST,
        layout: Layout::Array,
    },
    SeedFile {
        file: "diseases.json",
        spec: &DISEASE,
        layout: Layout::Array,
    },
    SeedFile {
        file: "treatments.json",
        spec: &TREATMENT,
        layout: Layout::Array,
    },
    SeedFile {
        file: "starter_kits.json",
        spec: &KIT,
        layout: Layout::Array,
    },
    SeedFile {
        file: "glossary.json",
        spec: &TERM,
        layout: Layout::Array,
    },
    SeedFile {
        file: "overwintering.json",
        spec: &PROFILE,
        layout: Layout::Array,
    },
    SeedFile {
        file: "hardiness_zones.json",
        spec: &ZONE_TEXT,
        layout: Layout::Array,
    },
    SeedFile {
        file: "companions.json",
        spec: &PAIR,
        layout: Layout::Companions,
    },
    SeedFile {
        file: "rotation.json",
        spec: &RULE,
        layout: Layout::Rotation,
    },
];

/// The raw texts of a seed set by file name (a missing file is an empty kind).
#[derive(Debug, Clone, Default)]
pub struct SeedSet {
    pub texts: Vec<(&'static str, String)>,
}

/// The files compiled into this binary.
const EMBEDDED: &[(&str, &str)] = &[
    ("families.json", include_str!("data/families.json")),
    ("species.json", include_str!("data/species.json")),
];

impl SeedSet {
    pub fn embedded() -> Self {
        Self {
            texts: EMBEDDED
                .iter()
                .filter_map(|(name, text)| {
                    FILES
                        .iter()
                        .find(|f| f.file == *name)
                        .map(|f| (f.file, (*text).to_owned()))
                })
                .collect(),
        }
    }

    /// The files of a directory (tests and `kultiva seed --dir`).
    pub fn from_dir(dir: &Path) -> std::io::Result<Self> {
        let mut texts = Vec::new();
        for f in FILES {
            match std::fs::read_to_string(dir.join(f.file)) {
                Ok(text) => texts.push((f.file, text)),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        Ok(Self { texts })
    }

    pub fn text(&self, file: &str) -> Option<&str> {
        self.texts
            .iter()
            .find(|(f, _)| *f == file)
            .map(|(_, t)| t.as_str())
    }
}

/// The records of one file as objects in the kind's own field names (relations flattened).
pub fn records(file: &SeedFile, text: &str) -> Result<Vec<Map<String, Value>>, String> {
    let value: Value =
        serde_json::from_str(text).map_err(|e| format!("{}: not JSON: {e}", file.file))?;
    let objects = |v: Option<&Value>, what: &str| -> Result<Vec<Map<String, Value>>, String> {
        let Some(v) = v else { return Ok(Vec::new()) };
        let list = v
            .as_array()
            .ok_or_else(|| format!("{}: {what} must be a list", file.file))?;
        list.iter()
            .enumerate()
            .map(|(i, r)| {
                r.as_object()
                    .cloned()
                    .ok_or_else(|| format!("{}: {what}[{i}] must be an object", file.file))
            })
            .collect()
    };
    let with = |mut m: Map<String, Value>, pairs: &[(&str, &str)], relation: &str| {
        for (from, to) in pairs {
            if let Some(v) = m.remove(*from) {
                m.insert((*to).to_owned(), v);
            }
        }
        m.insert("relation".into(), Value::from(relation));
        m
    };
    match file.layout {
        Layout::Array => objects(Some(&value), "the file"),
        Layout::Companions => {
            let mut out: Vec<_> = objects(value.get("compatible"), "compatible")?
                .into_iter()
                .map(|m| with(m, &[], "compatible"))
                .collect();
            out.extend(
                objects(value.get("incompatible"), "incompatible")?
                    .into_iter()
                    .map(|m| with(m, &[], "incompatible")),
            );
            Ok(out)
        }
        Layout::Rotation => {
            let mut out: Vec<_> = objects(value.get("successors"), "successors")?
                .into_iter()
                .map(|m| with(m, &[], "successor"))
                .collect();
            out.extend(
                objects(value.get("family_incompatible"), "family_incompatible")?
                    .into_iter()
                    .map(|m| with(m, &[("a", "from"), ("b", "to")], "incompatible")),
            );
            Ok(out)
        }
    }
}
