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
use super::fertilizers::model::FERTILIZER;
use super::glossary::model::TERM;
use super::ipm::model::{DISEASE, PEST, TREATMENT};
use super::kits::model::KIT;
use super::overwintering::model::PROFILE;
use super::phases::model::{PHASE, SEQUENCE};
use super::rotation::model::RULE;
use super::species::model::{CULTIVAR, SPECIES};
use super::substrates::model::SUBSTRATE;
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
        file: "substrates.json",
        spec: &SUBSTRATE,
        layout: Layout::Array,
    },
    SeedFile {
        file: "fertilizers.json",
        spec: &FERTILIZER,
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
    ("phases.json", include_str!("data/phases.json")),
    (
        "phase_sequences.json",
        include_str!("data/phase_sequences.json"),
    ),
    ("species.json", include_str!("data/species.json")),
    ("cultivars.json", include_str!("data/cultivars.json")),
    ("pests.json", include_str!("data/pests.json")),
    ("diseases.json", include_str!("data/diseases.json")),
    ("treatments.json", include_str!("data/treatments.json")),
    ("starter_kits.json", include_str!("data/starter_kits.json")),
    ("glossary.json", include_str!("data/glossary.json")),
    (
        "overwintering.json",
        include_str!("data/overwintering.json"),
    ),
    (
        "hardiness_zones.json",
        include_str!("data/hardiness_zones.json"),
    ),
    ("substrates.json", include_str!("data/substrates.json")),
    ("fertilizers.json", include_str!("data/fertilizers.json")),
    ("companions.json", include_str!("data/companions.json")),
    ("rotation.json", include_str!("data/rotation.json")),
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

#[cfg(test)]
mod tests {
    use super::validate::validate;
    use super::*;

    /// The built-in seed is valid and at least as large as the reference data set it replaces
    /// (the anchor's base-version counts: 18 families, 66 core species, 8 cultivars, 33 pests,
    /// 34 diseases, 40 treatments, 11 phase definitions and kits, ≥ 30 glossary terms, the
    /// curated zones 5a–9a, 290 compatible companion pairs, 19 rotation
    /// edges; here also at least 60 incompatible pairs (the anchor has 78) and overwintering
    /// profiles for at least 50 species).
    #[test]
    fn the_real_seed_is_valid_and_meets_the_minimums() {
        let set = SeedSet::embedded();
        assert_eq!(set.texts.len(), FILES.len(), "every seed file is built in");
        let valid = match validate(&set) {
            Ok(v) => v,
            Err(problems) => panic!("the seed data is invalid: {problems:#?}"),
        };
        let count = |kind: &str| {
            valid
                .files
                .iter()
                .filter(|(f, _)| f.spec.kind == kind)
                .map(|(_, r)| r.len())
                .sum::<usize>()
        };
        let relation = |kind: &str, relation: &str| {
            valid
                .files
                .iter()
                .filter(|(f, _)| f.spec.kind == kind)
                .flat_map(|(_, r)| r.iter())
                .filter(|r| r.seed.get("relation").and_then(Value::as_str) == Some(relation))
                .count()
        };
        // The minimums for a fresh install's catalogue.
        for (kind, min) in [
            ("botanical_family", 40),
            ("species", 150),
            ("pest", 40),
            ("disease", 40),
            ("treatment", 40),
            ("starter_kit", 10),
            ("glossary_term", 30),
            ("hardiness_zone", 9),
            ("overwintering_profile", 50),
            ("fertilizer", 40),
        ] {
            assert!(count(kind) >= min, "{kind}: {} < {min}", count(kind));
        }
        let compatible = relation("companion_pair", "compatible");
        let incompatible = relation("companion_pair", "incompatible");
        assert!(
            compatible + incompatible >= 200,
            "{compatible} + {incompatible} companion pairs"
        );
        assert!(incompatible >= 40);
        assert!(relation("rotation_rule", "successor") >= 19);
        let species = || {
            valid
                .files
                .iter()
                .filter(|(f, _)| f.spec.kind == "species")
                .flat_map(|(_, r)| r.iter())
        };
        let distinct = |field: &str| {
            species()
                .filter_map(|r| r.seed.get(field).and_then(Value::as_str))
                .collect::<std::collections::BTreeSet<_>>()
        };
        assert!(
            distinct("family").len() >= 40,
            "species span {} families",
            distinct("family").len()
        );
        // Every group the issue names is there: vegetables, herbs, fruit (harvested outdoor
        // species), houseplants, succulents, orchids, ferns, bulbs, palms, outdoor perennials.
        let categories = distinct("plant_category");
        for category in [
            "outdoor_vegetable",
            "herb",
            "indoor_houseplant",
            "succulent_cactus",
            "orchid",
            "bulb_tuber",
            "outdoor_ornamental",
        ] {
            assert!(categories.contains(category), "no {category} species");
        }
        let habits = distinct("growth_habit");
        for habit in ["fern", "palm", "bulb_geophyte"] {
            assert!(habits.contains(habit), "no {habit} species");
        }
        // Treatments carry active ingredients and pre-harvest intervals.
        let with_ingredient = valid
            .files
            .iter()
            .filter(|(f, _)| f.spec.kind == "treatment")
            .flat_map(|(_, r)| r.iter())
            .filter(|r| {
                r.seed
                    .get("active_ingredient")
                    .and_then(Value::as_str)
                    .is_some()
            })
            .filter(|r| {
                r.seed
                    .get("safety_interval_days")
                    .and_then(Value::as_i64)
                    .is_some()
            })
            .count();
        assert!(
            with_ingredient >= 40,
            "{with_ingredient} treatments with active ingredient and interval"
        );
        // Every positive pre-harvest interval carries its labels and is the longest of its
        // per-crop intervals; every entry names an outside label (never Kultiva); chemical
        // treatments name a mode of action where one is classified.
        let treatments: Vec<_> = valid
            .files
            .iter()
            .filter(|(f, _)| f.spec.kind == "treatment")
            .flat_map(|(_, r)| r.iter())
            .collect();
        let mut grouped = 0;
        for r in &treatments {
            let days = r
                .seed
                .get("safety_interval_days")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            let intervals = crate::catalog::ipm::model::crop_intervals(&r.seed);
            if days > 0 {
                assert!(!intervals.is_empty(), "{}: no source", r.label);
            }
            for i in &intervals {
                assert!(i.source.is_complete(), "{}: source {:?}", r.label, i.source);
            }
            if !crate::catalog::ipm::model::resistance_groups(&r.seed).is_empty() {
                grouped += 1;
            }
        }
        assert!(
            grouped >= 15,
            "{grouped} treatments with a resistance group"
        );
        // The labels of issue 39 per crop: (treatment, crop species, days).
        let on_crop = |name: &str, species: &str| {
            treatments
                .iter()
                .find(|r| r.seed.get("name").and_then(Value::as_str) == Some(name))
                .and_then(|r| r.seed.get("safety_intervals").and_then(Value::as_array))
                .into_iter()
                .flatten()
                .filter(|e| e.get("species").and_then(Value::as_str) == Some(species))
                .filter_map(|e| e.get("days").and_then(Value::as_i64))
                .max()
        };
        for (name, species, days) in [
            ("Fenhexamid", "Vitis vinifera", 21),
            ("Cyprodinil with fludioxonil", "Vitis vinifera", 35),
            ("Azadirachtin (neem)", "Solanum tuberosum", 4),
        ] {
            assert_eq!(on_crop(name, species), Some(days), "{name} on {species}");
        }
        // Safety fields are recorded deliberately: every species states them (null allowed).
        for (_, records) in valid.files.iter().filter(|(f, _)| f.spec.kind == "species") {
            for r in records {
                for field in [
                    "toxicity",
                    "toxicity_severity",
                    "allergen_info",
                    "allows_harvest",
                ] {
                    assert!(
                        r.seed.contains_key(field),
                        "{}: {field} not stated",
                        r.label
                    );
                }
            }
        }
    }
}
