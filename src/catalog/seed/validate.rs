//! Seed validation, before anything is written: every record must pass its kind's field table
//! and rules, every name it references must exist in the set (unknown family, unknown phase…),
//! natural keys must be unique after normalisation (`×` and `x` alike), and the set must hold
//! what the rules depend on (the sequences the selection rules name). No I/O: the same checks
//! run in unit tests and in `kultiva seed --check`.

use std::collections::HashMap;

use serde_json::{Map, Value};
use uuid::Uuid;

use super::{FILES, SeedFile, SeedSet, records};
use crate::catalog::engine::fields::{Kind, Mode, check_object};
use crate::catalog::engine::service::{natural_key, prune};
use crate::catalog::engine::spec::{KindSpec, NaturalKey};
use crate::rules::names::normalise;
use crate::rules::sequence_selection;

/// A record of the seed in its file's terms (references by name).
#[derive(Debug, Clone)]
pub struct SeedRecord {
    pub seed: Map<String, Value>,
    /// `species.json[3] Solanum lycopersicum`, for messages.
    pub label: String,
    /// The sequence a species is bound to explicitly (`phase_sequence`).
    pub binding: Option<String>,
}

/// A seed set that passed validation, in load order.
#[derive(Debug, Clone)]
pub struct ValidSeed {
    pub files: Vec<(&'static SeedFile, Vec<SeedRecord>)>,
}

/// Finds the key of a record by kind and normalised name.
pub type Resolve<'a> = dyn Fn(&str, &str) -> Option<Uuid> + 'a;

/// The name other files use to reference a record of this kind (none for scoped or computed
/// natural keys: nothing references cultivars, pairs or rules by name).
pub fn reference_name(spec: &KindSpec, seed: &Map<String, Value>) -> Option<String> {
    match spec.natural_key {
        NaturalKey::Field(f) => seed.get(f).and_then(Value::as_str).map(normalise),
        _ => None,
    }
}

fn resolve_value(
    target: &str,
    value: Value,
    resolve: &Resolve,
    missing: &mut Vec<String>,
) -> Value {
    let one = |v: &Value, missing: &mut Vec<String>| match v
        .as_str()
        .and_then(|n| resolve(target, &normalise(n)))
    {
        Some(id) => Value::String(id.to_string()),
        None => {
            // Reported once here; the nil key keeps the field checks from repeating it.
            missing.push(format!("unknown {target} {v}"));
            Value::String(Uuid::nil().to_string())
        }
    };
    match value {
        Value::Array(list) => Value::Array(list.iter().map(|v| one(v, missing)).collect()),
        other => one(&other, missing),
    }
}

/// Turns a seed record into a checked record of the kind (references as keys). Every problem
/// is one line in `errors`.
pub fn to_doc(
    spec: &KindSpec,
    record: &SeedRecord,
    resolve: &Resolve,
    errors: &mut Vec<String>,
) -> Option<Map<String, Value>> {
    let mut m = record.seed.clone();
    if spec.kind == "species" {
        m.remove("phase_sequence");
    }
    let mut missing = Vec::new();
    for f in spec.fields {
        match (f.kind, f.seed_name) {
            (Kind::Ref(target) | Kind::RefList(target, _), Some(seed_name)) => {
                if let Some(v) = m.remove(seed_name) {
                    m.insert(
                        f.name.to_owned(),
                        resolve_value(target, v, resolve, &mut missing),
                    );
                }
            }
            (Kind::ObjectList(inner, _), _) => {
                let Some(Value::Array(entries)) = m.get_mut(f.name) else {
                    continue;
                };
                for entry in entries.iter_mut().filter_map(Value::as_object_mut) {
                    for n in inner {
                        if let (Kind::Ref(target), Some(seed_name)) = (n.kind, n.seed_name)
                            && let Some(v) = entry.remove(seed_name)
                        {
                            entry.insert(
                                n.name.to_owned(),
                                resolve_value(target, v, resolve, &mut missing),
                            );
                        }
                    }
                }
            }
            _ => {}
        }
    }
    let mut details = Vec::new();
    let doc = check_object(spec.fields, m, Mode::Create, "", &mut details);
    if details.is_empty() && missing.is_empty() {
        (spec.rules)(&doc, &mut details);
    }
    let before = errors.len();
    errors.extend(
        missing
            .into_iter()
            .map(|m| format!("{}: {m}", record.label)),
    );
    for d in details {
        let field = d.field.strip_prefix("body.").unwrap_or(&d.field).to_owned();
        errors.push(format!("{}: {field}: {}", record.label, d.reason));
    }
    (errors.len() == before).then(|| prune(spec, doc))
}

/// Validates the whole set; every problem is one line.
pub fn validate(set: &SeedSet) -> Result<ValidSeed, Vec<String>> {
    let mut errors = Vec::new();
    let mut files = Vec::new();
    for file in FILES {
        let Some(text) = set.text(file.file) else {
            continue;
        };
        match records(file, text) {
            Ok(list) => {
                let recs: Vec<SeedRecord> = list
                    .into_iter()
                    .enumerate()
                    .map(|(i, mut seed)| {
                        let binding = if file.spec.kind == "species" {
                            seed.get("phase_sequence")
                                .and_then(Value::as_str)
                                .map(str::to_owned)
                        } else {
                            None
                        };
                        let name = reference_name(file.spec, &seed).unwrap_or_default();
                        if file.spec.kind == "species"
                            && seed.get("phase_sequence") == Some(&Value::Null)
                        {
                            seed.remove("phase_sequence");
                        }
                        SeedRecord {
                            seed,
                            label: format!("{}[{i}] {name}", file.file),
                            binding,
                        }
                    })
                    .collect();
                files.push((file, recs));
            }
            Err(e) => errors.push(e),
        }
    }
    // Placeholder keys for every referenceable name in the set.
    let mut index: HashMap<(&str, String), Uuid> = HashMap::new();
    for (file, recs) in &files {
        for r in recs {
            if let Some(name) = reference_name(file.spec, &r.seed) {
                let n = index.len() as u128 + 1;
                index
                    .entry((file.spec.kind, name))
                    .or_insert_with(|| Uuid::from_u128(n));
            }
        }
    }
    let resolve = |kind: &str, name: &str| index.get(&(kind, name.to_owned())).copied();
    for (file, recs) in &files {
        let mut seen: HashMap<String, String> = HashMap::new();
        for r in recs {
            let Some(doc) = to_doc(file.spec, r, &resolve, &mut errors) else {
                continue;
            };
            if let Ok((_, norm)) = natural_key(file.spec, &doc)
                && let Some(first) = seen.insert(norm, r.label.clone())
            {
                errors.push(format!(
                    "{}: duplicate of {first} (names compare lower-case, × = x)",
                    r.label
                ));
            }
        }
    }
    cross_checks(&files, &resolve, &mut errors);
    if errors.is_empty() {
        Ok(ValidSeed { files })
    } else {
        Err(errors)
    }
}

fn cross_checks(
    files: &[(&'static SeedFile, Vec<SeedRecord>)],
    resolve: &Resolve,
    errors: &mut Vec<String>,
) {
    let of = |kind: &str| {
        files
            .iter()
            .find(|(f, _)| f.spec.kind == kind)
            .map(|(_, r)| r.as_slice())
    };
    if let Some(sequences) = of("phase_sequence") {
        for name in sequence_selection::ALL {
            if !sequences
                .iter()
                .any(|r| r.seed.get("name").and_then(Value::as_str) == Some(*name))
            {
                errors.push(format!("phase_sequences.json: the sequence {name} that the selection rules name is missing"));
            }
        }
    }
    if let (Some(sequences), Some(phases)) = (of("phase_sequence"), of("phase_definition")) {
        yearly_sequences_add_up(sequences, phases, errors);
        if let Some(species) = of("species") {
            vegetables_run_without_a_flush(species, sequences, errors);
        }
    }
    fertilizer_label_sources(of("fertilizer").unwrap_or_default(), errors);
    for r in of("species").unwrap_or_default() {
        if let Some(b) = &r.binding
            && resolve("phase_sequence", &normalise(b)).is_none()
        {
            errors.push(format!("{}: unknown phase_sequence {b:?}", r.label));
        }
    }
    for r in of("starter_kit").unwrap_or_default() {
        if r.seed
            .get("species")
            .and_then(Value::as_array)
            .is_none_or(|l| l.len() < 2)
        {
            errors.push(format!(
                "{}: a starter kit holds at least 2 species",
                r.label
            ));
        }
    }
    for r in of("glossary_term").unwrap_or_default() {
        for slug in r
            .seed
            .get("related")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if slug
                .as_str()
                .and_then(|s| resolve("glossary_term", s))
                .is_none()
            {
                errors.push(format!("{}: related term {slug} does not exist", r.label));
            }
        }
    }
}

/// How far a yearly cycle may miss 365 days: a week, the resolution growers plan phases in.
pub const YEAR_TOLERANCE_DAYS: i64 = 7;

/// The days of each entry of a seed sequence (its override, else the phase's typical
/// duration; 0 for an unknown phase, which the reference check reports).
fn entry_days(sequence: &SeedRecord, phases: &[SeedRecord]) -> Vec<i64> {
    let typical = |name: &str| {
        phases
            .iter()
            .find(|p| p.seed.get("name").and_then(Value::as_str) == Some(name))
            .and_then(|p| p.seed.get("typical_duration_days"))
            .and_then(Value::as_i64)
            .unwrap_or(0)
    };
    sequence
        .seed
        .get("entries")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|e| {
            e.get("override_duration_days")
                .and_then(Value::as_i64)
                .unwrap_or_else(|| typical(e.get("phase").and_then(Value::as_str).unwrap_or("")))
        })
        .collect()
}

/// A repeating sequence says whether it follows the year (`repeats_yearly`); one that does
/// adds up to 365 ± [`YEAR_TOLERANCE_DAYS`] from its restart entry to the end (the phases a
/// plant runs through every year) and names where its durations come from. A tulip whose
/// cycle is 234 days would "flower" in December of its first winter.
pub fn yearly_sequences_add_up(
    sequences: &[SeedRecord],
    phases: &[SeedRecord],
    errors: &mut Vec<String>,
) {
    for r in sequences {
        let repeating = r.seed.get("is_repeating") == Some(&Value::Bool(true));
        let yearly = r.seed.get("repeats_yearly").and_then(Value::as_bool);
        match (repeating, yearly) {
            (true, None) => errors.push(format!(
                "{}: repeats_yearly: a repeating sequence says whether it follows the year",
                r.label
            )),
            (false, Some(true)) => errors.push(format!(
                "{}: repeats_yearly: only a repeating sequence repeats yearly",
                r.label
            )),
            _ => {}
        }
        if !(repeating && yearly == Some(true)) {
            continue;
        }
        let from = r
            .seed
            .get("cycle_restart_entry_order")
            .and_then(Value::as_u64)
            .unwrap_or(0) as usize;
        let days: i64 = entry_days(r, phases).iter().skip(from).sum();
        if (days - 365).abs() > YEAR_TOLERANCE_DAYS {
            errors.push(format!(
                "{}: entries: a yearly cycle adds up to 365 ± {YEAR_TOLERANCE_DAYS} days from \
                 its restart entry (order {from}), this one to {days}",
                r.label
            ));
        }
        if r.seed
            .get("duration_source")
            .and_then(Value::as_str)
            .is_none_or(|t| t.trim().is_empty())
        {
            errors.push(format!(
                "{}: duration_source: a yearly cycle names where its durations come from",
                r.label
            ));
        }
    }
}

/// Whether a seed species is grown for a harvest: a vegetable or herb, or harvestable.
fn is_crop(species: &SeedRecord) -> bool {
    let category = species.seed.get("plant_category").and_then(Value::as_str);
    matches!(category, Some("outdoor_vegetable" | "herb"))
        || species.seed.get("allows_harvest") == Some(&Value::Bool(true))
}

/// No crop runs on a cycle with a flush (two weeks of plain water before the harvest, a
/// hydroponic practice): neither the sequence it is bound to nor the one the selection rules
/// give it. A vegetable's annual cycle names where its durations come from.
pub fn vegetables_run_without_a_flush(
    species: &[SeedRecord],
    sequences: &[SeedRecord],
    errors: &mut Vec<String>,
) {
    let by_name = |name: &str| {
        sequences
            .iter()
            .find(|s| s.seed.get("name").and_then(Value::as_str) == Some(name))
    };
    for r in species.iter().filter(|r| is_crop(r)) {
        let doc = Value::Object(r.seed.clone());
        let name = match &r.binding {
            Some(b) => b.clone(),
            None => {
                sequence_selection::select(&crate::catalog::species::service::selection_input(&doc))
                    .1
                    .to_owned()
            }
        };
        let Some(seq) = by_name(&name) else {
            continue; // an unknown binding is reported by the reference check
        };
        let entries = seq.seed.get("entries").and_then(Value::as_array);
        if entries.into_iter().flatten().any(|e| {
            e.get("phase").and_then(Value::as_str) == Some(sequence_selection::FLUSH_PHASE)
        }) {
            errors.push(format!(
                "{}: runs on {name}, which has a {} phase: a crop is never given plain water \
                 for its last weeks; bind it to a vegetable cycle",
                r.label,
                sequence_selection::FLUSH_PHASE
            ));
        }
        let annual = seq.seed.get("is_repeating") != Some(&Value::Bool(true));
        let vegetable =
            r.seed.get("plant_category").and_then(Value::as_str) == Some("outdoor_vegetable");
        if vegetable
            && annual
            && seq
                .seed
                .get("duration_source")
                .and_then(Value::as_str)
                .is_none_or(|t| t.trim().is_empty())
        {
            errors.push(format!(
                "{}: runs on {name}, which names no duration_source: a vegetable's cycle says \
                 where its days to harvest come from",
                r.label
            ));
        }
    }
}

/// The sentences of the label template the seed once filled in for every product (no
/// document, no figures): a label source carrying one is refused.
pub const LABEL_SOURCE_TEMPLATES: &[&str] = &[
    "US guaranteed analysis: N-P2O5-K2O; Ca, Mg, S and micronutrients as elements",
    "EU declaration: N-P2O5-K2O; secondary nutrients converted to elements",
];

/// An analysis as a label prints it: 5-0-1, 0.01-0.3-0.7, 15.5-0-0.
fn analysis_text(npk: &Map<String, Value>) -> Option<String> {
    let part = |k: &str| {
        npk.get(k).and_then(Value::as_f64).map(|v| {
            if v.fract() == 0.0 {
                format!("{}", v as i64)
            } else {
                format!("{v}")
            }
        })
    };
    Some(format!("{}-{}-{}", part("n")?, part("p")?, part("k")?))
}

/// A seeded fertiliser names the document its analysis was read from: the maker's label or
/// data sheet stating the same N-P2O5-K2O figures as the record (so a grower can put the two
/// side by side), or, for a plain salt or acid, its chemistry ("chemistry of …"). Refused:
/// a source citing Kultiva or the garden, and the template sentences that named no document.
pub fn fertilizer_label_sources(fertilizers: &[SeedRecord], errors: &mut Vec<String>) {
    for r in fertilizers {
        let Some(source) = r.seed.get("label_source").and_then(Value::as_str) else {
            continue; // a missing one is the field check's
        };
        let lower = source.to_lowercase();
        if lower.contains("kultiva") || lower.contains("entered by the garden") {
            errors.push(format!(
                "{}: label_source: names this catalogue, not a label or data sheet",
                r.label
            ));
            continue;
        }
        if LABEL_SOURCE_TEMPLATES.iter().any(|t| source.contains(t)) {
            errors.push(format!(
                "{}: label_source: is the template sentence; name the label or data sheet and \
                 the analysis it states",
                r.label
            ));
            continue;
        }
        if lower.starts_with("chemistry of ") {
            continue;
        }
        let figures = r
            .seed
            .get("npk")
            .and_then(Value::as_object)
            .and_then(analysis_text);
        if let Some(f) = figures
            && !source.contains(&f)
        {
            errors.push(format!(
                "{}: label_source: does not state the analysis {f} the record holds (name the \
                 label or data sheet and the N-P2O5-K2O it prints, or \"chemistry of …\" for a \
                 plain salt)",
                r.label
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn set(files: &[(&'static str, Value)]) -> SeedSet {
        SeedSet {
            texts: files.iter().map(|(f, v)| (*f, v.to_string())).collect(),
        }
    }

    fn family(name: &str) -> Value {
        json!({"name": name, "rotation_category": "fruit"})
    }

    fn species(name: &str, family: &str) -> Value {
        json!({"scientific_name": name, "family": family})
    }

    fn problems(files: &[(&'static str, Value)]) -> Vec<String> {
        validate(&set(files)).err().unwrap_or_default()
    }

    #[test]
    fn a_good_set_passes() {
        let ok = validate(&set(&[
            ("families.json", json!([family("Solanaceae")])),
            (
                "species.json",
                json!([
                    species("Solanum lycopersicum", "Solanaceae"),
                    species("Fragaria × ananassa", "Solanaceae")
                ]),
            ),
            (
                "companions.json",
                json!({"compatible": [{"a": "Solanum lycopersicum", "b": "Fragaria x ananassa", "score": 0.5}]}),
            ),
        ]));
        let ok = ok.expect("valid");
        assert_eq!(ok.files.iter().map(|(_, r)| r.len()).sum::<usize>(), 4);
    }

    #[test]
    fn each_kind_of_bad_record_is_rejected() {
        let fam = || ("families.json", json!([family("Solanaceae")]));
        type Files = Vec<(&'static str, Value)>;
        let cases: Vec<(&str, Files, &str)> = vec![
            (
                "unknown family",
                vec![
                    fam(),
                    (
                        "species.json",
                        json!([species("Solanum nigrum", "Rosaceae")]),
                    ),
                ],
                "unknown botanical_family",
            ),
            (
                "× and x are one name",
                vec![
                    fam(),
                    (
                        "species.json",
                        json!([
                            species("Fragaria × ananassa", "Solanaceae"),
                            species("FRAGARIA x Ananassa", "Solanaceae")
                        ]),
                    ),
                ],
                "duplicate of species.json[0]",
            ),
            (
                "positive interval without a source",
                vec![(
                    "treatments.json",
                    json!([{"name": "Spray", "treatment_type": "chemical", "active_ingredient": "Deltamethrin", "safety_interval_days": 7}]),
                )],
                "safety_intervals: a pre-harvest interval above 0 days needs its source",
            ),
            (
                "interval as one free sentence, without its label fields",
                vec![(
                    "treatments.json",
                    json!([{"name": "Spray", "treatment_type": "chemical", "active_ingredient": "Spinosad", "safety_interval_days": 3,
                            "safety_intervals": [{"days": 3, "source": "a label"}]}]),
                )],
                "safety_intervals[0].product: ",
            ),
            (
                "default interval not the longest",
                vec![(
                    "treatments.json",
                    json!([{"name": "Spray", "treatment_type": "chemical", "active_ingredient": "Deltamethrin", "safety_interval_days": 7,
                            "safety_intervals": [{"days": 7, "product": "Teldor", "authority": "BVL", "label_crop": "Weinrebe"}, {"days": 28, "product": "Teldor", "authority": "BVL", "label_crop": "Weinrebe"}]}]),
                )],
                "safety_interval_days: must be the longest of safety_intervals (28 days)",
            ),
            (
                "interval product blank",
                vec![(
                    "treatments.json",
                    json!([{"name": "Spray", "treatment_type": "chemical", "active_ingredient": "Deltamethrin", "safety_interval_days": 7,
                            "safety_intervals": [{"days": 7, "product": " ", "authority": "BVL", "label_crop": "Weinrebe"}]}]),
                )],
                "safety_intervals[0].product",
            ),
            (
                "interval citing Kultiva in its authority",
                vec![(
                    "treatments.json",
                    json!([{"name": "Spray", "treatment_type": "chemical", "active_ingredient": "Deltamethrin", "safety_interval_days": 7,
                            "safety_intervals": [{"days": 7, "product": "Teldor", "authority": "Kultiva domain reference 2.1", "label_crop": "Weinrebe"}]}]),
                )],
                "safety_intervals[0].authority: cites Kultiva",
            ),
            (
                "interval citing Kultiva in its product",
                vec![(
                    "treatments.json",
                    json!([{"name": "Spray", "treatment_type": "chemical", "active_ingredient": "Deltamethrin", "safety_interval_days": 7,
                            "safety_intervals": [{"days": 7, "product": "Kultiva catalogue value", "authority": "BVL", "label_crop": "Weinrebe"}]}]),
                )],
                "safety_intervals[0].product: cites Kultiva",
            ),
            (
                "interval citing Kultiva in its label_crop",
                vec![(
                    "treatments.json",
                    json!([{"name": "Spray", "treatment_type": "chemical", "active_ingredient": "Deltamethrin", "safety_interval_days": 7,
                            "safety_intervals": [{"days": 7, "product": "Teldor", "authority": "BVL", "label_crop": "every crop (Kultiva conservative default)"}]}]),
                )],
                "safety_intervals[0].label_crop: cites Kultiva",
            ),
            (
                "interval citing Kultiva in its registration",
                vec![(
                    "treatments.json",
                    json!([{"name": "Spray", "treatment_type": "chemical", "active_ingredient": "Deltamethrin", "safety_interval_days": 7,
                            "safety_intervals": [{"days": 7, "product": "Teldor", "authority": "BVL", "label_crop": "Weinrebe", "registration": "KULTIVA-1"}]}]),
                )],
                "safety_intervals[0].registration: cites Kultiva",
            ),
            (
                "interval for an unknown crop",
                vec![(
                    "treatments.json",
                    json!([{"name": "Spray", "treatment_type": "chemical", "active_ingredient": "Deltamethrin", "safety_interval_days": 7,
                            "safety_intervals": [{"species": "Nonexista vulgaris", "days": 7, "product": "Teldor", "authority": "BVL", "label_crop": "Weinrebe"}]}]),
                )],
                "unknown species",
            ),
            (
                "resistance group of the wrong form",
                vec![(
                    "treatments.json",
                    json!([{"name": "Spray", "treatment_type": "chemical", "active_ingredient": "Deltamethrin", "safety_interval_days": 7,
                            "safety_intervals": [{"days": 7, "product": "Teldor", "authority": "BVL", "label_crop": "Weinrebe"}],
                            "resistance_groups": [{"code": "IRAC3A", "source": "IRAC"}]}]),
                )],
                "resistance_groups[0].code",
            ),
            (
                "month out of range",
                vec![
                    fam(),
                    (
                        "species.json",
                        json!([{"scientific_name": "Solanum nigrum", "family": "Solanaceae", "harvest_months": [7, 13]}]),
                    ),
                ],
                "harvest_months[1]: must be between 1 and 12",
            ),
            (
                "months repeated",
                vec![
                    fam(),
                    (
                        "species.json",
                        json!([{"scientific_name": "Solanum nigrum", "family": "Solanaceae", "bloom_months": [7, 7]}]),
                    ),
                ],
                "bloom_months: items must be distinct",
            ),
            (
                "family name form",
                vec![("families.json", json!([family("Solanales")]))],
                "name: has the wrong form",
            ),
            (
                "ph range reversed",
                vec![(
                    "families.json",
                    json!([{"name": "Solanaceae", "soil_ph_min": 7, "soil_ph_max": 6}]),
                )],
                "soil_ph_max: must not be below soil_ph_min",
            ),
            (
                "fraction above 1",
                vec![
                    fam(),
                    (
                        "species.json",
                        json!([
                            species("Solanum nigrum", "Solanaceae"),
                            species("Solanum dulcamara", "Solanaceae")
                        ]),
                    ),
                    (
                        "companions.json",
                        json!({"compatible": [{"a": "Solanum nigrum", "b": "Solanum dulcamara", "score": 1.5}]}),
                    ),
                ],
                "score: must be between 0 and 1",
            ),
            (
                "pair in both lists",
                vec![
                    fam(),
                    (
                        "species.json",
                        json!([
                            species("Solanum nigrum", "Solanaceae"),
                            species("Solanum dulcamara", "Solanaceae")
                        ]),
                    ),
                    (
                        "companions.json",
                        json!({"compatible": [{"a": "Solanum nigrum", "b": "Solanum dulcamara", "score": 0.5}],
                                                "incompatible": [{"a": "Solanum dulcamara", "b": "Solanum nigrum"}]}),
                    ),
                ],
                "duplicate of companions.json[0]",
            ),
            (
                "safety severity without toxicity",
                vec![
                    fam(),
                    (
                        "species.json",
                        json!([{"scientific_name": "Solanum nigrum", "family": "Solanaceae", "toxicity": null, "toxicity_severity": "high"}]),
                    ),
                ],
                "toxicity_severity: only a species recorded as toxic",
            ),
            (
                "unknown field",
                vec![(
                    "families.json",
                    json!([{"name": "Solanaceae", "colour": "green"}]),
                )],
                "colour: unknown field",
            ),
            (
                "sequence without its terminal entry, unknown phase",
                vec![
                    (
                        "phases.json",
                        json!([{"name": "grow", "display_name_en": "Grow", "typical_duration_days": 10}]),
                    ),
                    (
                        "phase_sequences.json",
                        json!([{"name": "indoor_default", "display_name_en": "x", "cycle_type": "annual", "is_repeating": false,
                        "entries": [{"phase": "grow", "order": 0, "terminal": false, "allows_harvest": false},
                                    {"phase": "bloom", "order": 1, "terminal": false, "allows_harvest": false}]}]),
                    ),
                ],
                "unknown phase_definition",
            ),
            (
                "the selection rules' sequences must exist",
                vec![
                    (
                        "phases.json",
                        json!([{"name": "grow", "display_name_en": "Grow", "typical_duration_days": 10}]),
                    ),
                    (
                        "phase_sequences.json",
                        json!([{"name": "indoor_default", "display_name_en": "x", "cycle_type": "annual", "is_repeating": false,
                        "entries": [{"phase": "grow", "order": 0, "terminal": true, "allows_harvest": true}]}]),
                    ),
                ],
                "the sequence fern_spore that the selection rules name is missing",
            ),
            (
                "bound to an unknown sequence",
                vec![
                    fam(),
                    (
                        "species.json",
                        json!([{"scientific_name": "Solanum nigrum", "family": "Solanaceae", "phase_sequence": "nope"}]),
                    ),
                ],
                "unknown phase_sequence \"nope\"",
            ),
            (
                "kit with one species",
                vec![
                    fam(),
                    (
                        "species.json",
                        json!([species("Solanum nigrum", "Solanaceae")]),
                    ),
                    (
                        "starter_kits.json",
                        json!([{"slug": "one", "name_en": "One", "difficulty": "beginner", "species": ["Solanum nigrum"]}]),
                    ),
                ],
                "at least 2 species",
            ),
            (
                "not JSON",
                vec![("families.json", json!("["))],
                "the file must be a list",
            ),
        ];
        for (what, files, want) in cases {
            let got = problems(&files);
            assert!(got.iter().any(|p| p.contains(want)), "{what}: {got:?}");
        }
        // The sequence case reports the missing terminal entry too.
        let got = problems(&[
            (
                "phases.json",
                json!([{"name": "grow", "display_name_en": "Grow", "typical_duration_days": 10}]),
            ),
            (
                "phase_sequences.json",
                json!([{"name": "annual_x", "display_name_en": "x", "cycle_type": "annual", "is_repeating": false,
                "entries": [{"phase": "grow", "order": 0, "terminal": false, "allows_harvest": false}]}]),
            ),
        ]);
        assert!(
            got.iter()
                .any(|p| p.contains("entries: needs exactly one terminal entry")),
            "{got:?}"
        );
    }

    /// An interval with its label (product, authority, crop; registration optional) passes, a
    /// 0-day label included; a product with no label interval at all passes too (it is then
    /// refused on every crop, not given a guessed value).
    #[test]
    fn a_labelled_interval_passes() {
        let ok = problems(&[(
            "treatments.json",
            json!([
                {"name": "Teldor spray", "treatment_type": "chemical", "active_ingredient": "Fenhexamid",
                 "safety_interval_days": 21, "safety_intervals": [
                    {"days": 21, "product": "Teldor", "authority": "BVL Pflanzenschutzmittel-Verzeichnis",
                     "label_crop": "Weinrebe"}]},
                {"name": "Bt spray", "treatment_type": "biological", "active_ingredient": "Bt",
                 "safety_interval_days": 0, "safety_intervals": [
                    {"days": 0, "product": "DiPel DF", "authority": "US EPA", "registration": "EPA Reg. No. 73049-39",
                     "label_crop": "the crops on the label"}]},
                {"name": "Unlabelled spray", "treatment_type": "chemical", "active_ingredient": "Isopropanol",
                 "safety_interval_days": 0}
            ]),
        )]);
        assert!(ok.is_empty(), "{ok:?}");
    }

    fn fertilizer(label_source: Option<&str>) -> Value {
        let mut f = json!({"name": "Test Grow", "brand": "Test", "fertilizer_type": "base",
            "form": "liquid", "npk": {"n": 3, "p": 1, "k": 3}, "ec_contribution_per_ml": 0.2,
            "recommended_dose_ml_per_liter": 2.0, "mixing_priority": 35});
        if let Some(s) = label_source {
            f["label_source"] = json!(s);
        }
        f
    }

    /// A fertiliser's doses are computed from its analysis, so the seed refuses one that does
    /// not say where the analysis was read; a blank source is no source.
    #[test]
    fn a_fertilizer_without_a_label_source_is_refused() {
        for missing in [None, Some("  ")] {
            let got = problems(&[("fertilizers.json", json!([fertilizer(missing)]))]);
            assert!(
                got.iter()
                    .any(|p| p.contains("test grow") && p.contains(": label_source: ")),
                "{missing:?}: {got:?}"
            );
        }
        let ok = problems(&[(
            "fertilizers.json",
            json!([fertilizer(Some(
                "Test Grow product label, guaranteed analysis 3-1-3"
            ))]),
        )]);
        assert!(ok.is_empty(), "{ok:?}");
    }

    /// A label source is a document with the figures it states: the old template sentence, a
    /// source citing this catalogue or the garden, and one that does not state the record's
    /// analysis are refused; a salt's chemistry passes.
    #[test]
    fn a_template_or_self_sourced_label_source_is_refused() {
        let cases = [
            (
                "Test Grow label, US guaranteed analysis: N-P2O5-K2O; Ca, Mg, S and micronutrients as elements",
                Some("template"),
            ),
            (
                "Test Grow label, EU declaration: N-P2O5-K2O; secondary nutrients converted to elements (MgO x 0.6030)",
                Some("template"),
            ),
            ("Kultiva catalogue value", Some("names this catalogue")),
            (
                "entered by the garden (not checked against a label)",
                Some("names this catalogue"),
            ),
            (
                "Test Grow product label",
                Some("does not state the analysis 3-1-3"),
            ),
            (
                "Test Grow product label, guaranteed analysis 3-1-2",
                Some("does not state"),
            ),
            ("Test Grow product label, guaranteed analysis 3-1-3", None),
            ("chemistry of KNO3 (IUPAC standard atomic weights)", None),
        ];
        for (source, refused) in cases {
            let got = problems(&[("fertilizers.json", json!([fertilizer(Some(source))]))]);
            match refused {
                Some(word) => assert!(
                    got.iter()
                        .any(|p| p.contains(": label_source: ") && p.contains(word)),
                    "{source}: {got:?}"
                ),
                None => assert!(got.is_empty(), "{source}: {got:?}"),
            }
        }
    }

    /// Every seeded fertiliser names its label source, and the labels corrected in issue 24
    /// hold the elements: Botanicare Cal-Mag Plus is Ca 3.2 / Mg 1.2 / Fe 0.1; Plagron Green
    /// Sensation's "2 % MgO" is 2 × 0.6030 = 1.2 % Mg. pH adjusters conduct (EC above 0).
    #[test]
    fn seeded_fertilizers_carry_their_label_source_and_elements() {
        let list: Vec<Value> =
            serde_json::from_str(include_str!("data/fertilizers.json")).expect("json");
        for f in &list {
            assert!(
                f["label_source"]
                    .as_str()
                    .is_some_and(|s| !s.trim().is_empty()),
                "{}",
                f["name"]
            );
        }
        let named = |n: &str| list.iter().find(|f| f["name"] == n).expect(n).clone();
        let cm = named("Botanicare Cal-Mag Plus");
        assert_eq!(
            (
                &cm["secondary"]["ca"],
                &cm["secondary"]["mg"],
                &cm["micro"]["fe"]
            ),
            (&json!(3.2), &json!(1.2), &json!(0.1))
        );
        let gs = named("Plagron Green Sensation");
        let mg = 2.0 * crate::catalog::fertilizers::model::MGO_TO_MG;
        assert_eq!(gs["secondary"]["mg"], json!((mg * 10.0).round() / 10.0));
        for n in ["Phosphoric acid 75 %", "Potassium hydroxide 45 %"] {
            assert!(
                named(n)["ec_contribution_per_ml"].as_f64() > Some(0.0),
                "{n}"
            );
        }
        assert!(validate(&SeedSet::embedded()).is_ok());
    }

    fn record(seed: Value, binding: Option<&str>) -> SeedRecord {
        SeedRecord {
            seed: seed.as_object().cloned().unwrap_or_default(),
            label: "x".to_owned(),
            binding: binding.map(str::to_owned),
        }
    }

    fn seq(
        name: &str,
        repeating: Option<bool>,
        restart: Option<u64>,
        days: &[(&str, i64)],
    ) -> SeedRecord {
        let entries: Vec<Value> = days
            .iter()
            .enumerate()
            .map(|(i, (p, d))| json!({"phase": p, "order": i, "override_duration_days": d}))
            .collect();
        let mut v = json!({"name": name, "is_repeating": repeating.is_some(),
            "cycle_restart_entry_order": restart, "entries": entries,
            "duration_source": "a guide"});
        if let Some(y) = repeating {
            v["repeats_yearly"] = json!(y);
        }
        record(v, None)
    }

    #[test]
    fn yearly_cycles_add_up_to_a_year() {
        // (sequence, problems expected)
        let cases = [
            // The old geophyte cycle: 234 days.
            (
                seq(
                    "g",
                    Some(true),
                    Some(0),
                    &[
                        ("dormancy", 90),
                        ("rooting", 60),
                        ("sprouting", 21),
                        ("flowering", 21),
                        ("foliage_dieback", 42),
                    ],
                ),
                1,
            ),
            (
                seq(
                    "g",
                    Some(true),
                    Some(0),
                    &[
                        ("rooting", 105),
                        ("sprouting", 21),
                        ("flowering", 21),
                        ("foliage_dieback", 42),
                        ("dormancy", 176),
                    ],
                ),
                0,
            ),
            // Counted from the restart entry: the first year's establishment is not.
            (
                seq(
                    "r",
                    Some(true),
                    Some(1),
                    &[("establishment", 45), ("sprouting", 30), ("dormancy", 335)],
                ),
                0,
            ),
            (
                seq(
                    "r",
                    Some(true),
                    Some(1),
                    &[("establishment", 45), ("sprouting", 30), ("dormancy", 255)],
                ),
                1,
            ),
            // The tolerance: 358 and 372 pass, 357 and 373 do not.
            (seq("t", Some(true), None, &[("a", 358)]), 0),
            (seq("t", Some(true), None, &[("a", 372)]), 0),
            (seq("t", Some(true), None, &[("a", 357)]), 1),
            (seq("t", Some(true), None, &[("a", 373)]), 1),
            // A rosette cycle of years says so; a repeating one must say either way.
            (seq("m", Some(false), None, &[("a", 665)]), 0),
            (
                record(
                    json!({"name": "m", "is_repeating": true, "entries": []}),
                    None,
                ),
                1,
            ),
            // Only a repeating sequence repeats yearly.
            (
                record(
                    json!({"name": "o", "is_repeating": false, "repeats_yearly": true, "entries": []}),
                    None,
                ),
                1,
            ),
        ];
        for (i, (s, want)) in cases.into_iter().enumerate() {
            let mut errors = Vec::new();
            yearly_sequences_add_up(&[s], &[], &mut errors);
            assert_eq!(errors.len(), want, "case {i}: {errors:?}");
        }
        // A yearly cycle without a source is refused.
        let mut bare = seq("b", Some(true), None, &[("a", 365)]);
        bare.seed.remove("duration_source");
        let mut errors = Vec::new();
        yearly_sequences_add_up(&[bare], &[], &mut errors);
        assert!(errors[0].contains("duration_source"), "{errors:?}");
    }

    #[test]
    fn no_crop_runs_on_a_cycle_with_a_flush() {
        let flush = seq(
            "indoor_default",
            None,
            None,
            &[("seedling", 14), ("flushing", 14), ("ripening", 14)],
        );
        let veg = seq(
            "annual_harvest",
            None,
            None,
            &[("germination", 7), ("harvest", 21)],
        );
        let seqs = [flush, veg];
        let radish = json!({"scientific_name": "Raphanus sativus", "plant_category": "outdoor_vegetable",
            "cycle_type": "annual", "allows_harvest": true});
        let flower = json!({"scientific_name": "Tagetes patula", "plant_category": "balcony_plant",
            "cycle_type": "annual"});
        // (species, binding, problems)
        let cases = [
            (radish.clone(), Some("indoor_default"), 1),
            // Unbound: rule 6 gives annual_harvest, no flush.
            (radish.clone(), None, 0),
            (radish, Some("annual_harvest"), 0),
            // Not a crop: the check leaves it alone.
            (flower, Some("indoor_default"), 0),
        ];
        for (i, (sp, binding, want)) in cases.into_iter().enumerate() {
            let mut errors = Vec::new();
            vegetables_run_without_a_flush(&[record(sp, binding)], &seqs, &mut errors);
            assert_eq!(errors.len(), want, "case {i}: {errors:?}");
        }
        // A vegetable's annual cycle names its source.
        let mut unsourced = seq("annual_harvest", None, None, &[("harvest", 21)]);
        unsourced.seed.remove("duration_source");
        let mut errors = Vec::new();
        let sp = json!({"scientific_name": "Zea mays", "plant_category": "outdoor_vegetable", "cycle_type": "annual"});
        vegetables_run_without_a_flush(&[record(sp, None)], &[unsourced], &mut errors);
        assert!(errors[0].contains("duration_source"), "{errors:?}");
    }

    #[test]
    fn the_seeded_cycles_pass_both_checks() {
        // Radish is harvestable within 45 days, on a cycle without a flush.
        let set = SeedSet::embedded();
        let seed = validate(&set).expect("valid seed");
        let of = |kind: &str| {
            seed.files
                .iter()
                .find(|(f, _)| f.spec.kind == kind)
                .map(|(_, r)| r.clone())
                .unwrap_or_default()
        };
        let sequences = of("phase_sequence");
        let phases = of("phase_definition");
        let radish = sequences
            .iter()
            .find(|s| s.seed.get("name").and_then(Value::as_str) == Some("root_vegetable_quick"))
            .expect("radish cycle");
        let days = entry_days(radish, &phases);
        let first_harvest: i64 = days.iter().take(3).sum();
        assert!(first_harvest <= 45, "{first_harvest}");
        let mut errors = Vec::new();
        yearly_sequences_add_up(&sequences, &phases, &mut errors);
        vegetables_run_without_a_flush(&of("species"), &sequences, &mut errors);
        assert!(errors.is_empty(), "{errors:?}");
    }
}
