//! Use cases of pest and disease management, shared by the REST routes and the MCP tools.
//! Every write takes `commit`: false checks everything inside the transaction, then rolls it
//! back (a tool's dry run).

use serde_json::Value;
use time::OffsetDateTime;
use uuid::Uuid;

use super::model::*;
use super::repo::{self, PlantFacts};
use crate::catalog::engine::service as catalogue;
use crate::catalog::ipm::model::{self as treatment_model, DISEASE, PEST, TREATMENT};
use crate::catalog::species::model::SPECIES;
use crate::error::{AppError, ErrorCode, ErrorDetail};
use crate::rules::bbch;
use crate::rules::karenz;
use crate::rules::resistance::{self, Verdict};
use crate::state::AppState;
use crate::tenancy::{TenantRecord, TenantTx};
use crate::values::page::{Page, PageRequest};

pub const LIST_MAX_LIMIT: i64 = 100;

fn not_found_at(what: &str, field: String) -> AppError {
    AppError::not_found(what).with_details(vec![ErrorDetail::new(
        field,
        format!("no {what} with this key"),
        "not_found",
    )])
}

/// A key that is not a UUID cannot name a record: the same 404 as an unknown one.
pub fn parse_key(key: &str, what: &str) -> Result<Uuid, AppError> {
    Uuid::parse_str(key).map_err(|_| AppError::not_found(what))
}

/// Each plant of `ids` in this garden (404 naming `field[i]` for one that is not), locked when
/// `lock`, in the order of `ids`. An archived plant is 409 when `live` is asked.
pub(crate) async fn require_plants(
    tx: &mut TenantTx,
    ids: &[Uuid],
    field: &str,
    lock: bool,
    live: bool,
) -> Result<Vec<PlantFacts>, AppError> {
    let found = repo::plants(tx, ids, lock).await?;
    let mut out = Vec::with_capacity(ids.len());
    for (i, id) in ids.iter().enumerate() {
        let name = if ids.len() == 1 && !field.ends_with('s') {
            field.to_owned()
        } else {
            format!("{field}[{i}]")
        };
        let Some(p) = found.iter().find(|p| p.id == *id) else {
            return Err(not_found_at("plant", name));
        };
        if live && p.archived {
            return Err(AppError::new(
                ErrorCode::StateConflict,
                format!("the plant {} is archived", p.name),
            )
            .with_details(vec![ErrorDetail::new(
                name,
                "the plant is archived",
                "state_conflict",
            )]));
        }
        out.push(p.clone());
    }
    Ok(out)
}

/// Checks catalogue keys of one kind (404 naming the field).
async fn require_catalogue(
    state: &AppState,
    spec: &'static crate::catalog::engine::spec::KindSpec,
    keys: &[(String, String)],
) -> Result<(), AppError> {
    for (key, field) in keys {
        match catalogue::get(state, spec, key).await {
            Ok(_) => {}
            Err(e) if e.code() == ErrorCode::EntityNotFound => {
                return Err(not_found_at(spec.label, format!("body.{field}")));
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

// ---------- inspections ----------

pub async fn create_inspection(
    state: &AppState,
    tenant: &TenantRecord,
    new: &NewInspection,
    actor: &str,
    commit: bool,
) -> Result<Inspection, AppError> {
    // Catalogue keys first (no tenant transaction is held while the catalogue answers).
    let mut pests: Vec<(String, String)> = Vec::new();
    let mut diseases: Vec<(String, String)> = Vec::new();
    for (i, k) in new.detected_pest_keys.iter().enumerate() {
        pests.push((k.clone(), format!("detected_pest_keys[{i}]")));
    }
    for (i, k) in new.detected_disease_keys.iter().enumerate() {
        diseases.push((k.clone(), format!("detected_disease_keys[{i}]")));
    }
    for (i, f) in new.findings.iter().enumerate() {
        if let Some(k) = &f.pest_key {
            pests.push((k.clone(), format!("findings[{i}].pest_key")));
        }
        if let Some(k) = &f.disease_key {
            diseases.push((k.clone(), format!("findings[{i}].disease_key")));
        }
    }
    require_catalogue(state, &PEST, &pests).await?;
    require_catalogue(state, &DISEASE, &diseases).await?;
    let mut pest_keys: Vec<String> = Vec::new();
    for (k, _) in pests {
        if !pest_keys.contains(&k) {
            pest_keys.push(k);
        }
    }
    let mut disease_keys: Vec<String> = Vec::new();
    for (k, _) in diseases {
        if !disease_keys.contains(&k) {
            disease_keys.push(k);
        }
    }

    let mut tx = TenantTx::begin(state, tenant).await?;
    if let Some(p) = new.plant_key {
        require_plants(&mut tx, &[p], "body.plant_key", true, true).await?;
    }
    if let Some(l) = new.location_key
        && !repo::location_exists(&mut tx, l).await?
    {
        return Err(not_found_at("location", "body.location_key".into()));
    }
    let now = OffsetDateTime::now_utc();
    let inspection = Inspection {
        key: Uuid::now_v7(),
        plant_key: new.plant_key,
        location_key: new.location_key,
        inspector: new.inspector.clone().unwrap_or_else(|| actor.to_owned()),
        inspected_at: new.inspected_at.unwrap_or(now),
        pressure_level: new.pressure_level.unwrap_or(PressureLevel::None),
        symptoms_observed: new.symptoms_observed.clone(),
        detected_pest_keys: pest_keys,
        detected_disease_keys: disease_keys,
        findings: new.findings.clone(),
        photo_refs: new.photo_refs.clone(),
        notes: new.notes.clone(),
        created_by: actor.to_owned(),
        created_at: now,
    };
    repo::insert_inspection(&mut tx, &inspection).await?;
    finish(tx, commit).await?;
    Ok(inspection)
}

async fn finish(tx: TenantTx, commit: bool) -> Result<(), AppError> {
    if commit {
        tx.commit().await?;
    } else {
        tx.rollback().await?;
    }
    Ok(())
}

/// Inspections newest first; `plant` includes those of the location the plant stands at.
pub async fn list_inspections(
    state: &AppState,
    tenant: &TenantRecord,
    plant: Option<Uuid>,
    location: Option<Uuid>,
    page: PageRequest,
) -> Result<Page<Inspection>, AppError> {
    let mut tx = TenantTx::snapshot(state, tenant).await?;
    if let Some(p) = plant {
        require_plants(&mut tx, &[p], "query.plant", false, false).await?;
    }
    if let Some(l) = location
        && !repo::location_exists(&mut tx, l).await?
    {
        return Err(not_found_at("location", "query.location".into()));
    }
    let (items, total) = repo::list_inspections(&mut tx, plant, location, page).await?;
    tx.commit().await?;
    Ok(Page::new(items, total, page))
}

pub async fn get_inspection(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
) -> Result<Inspection, AppError> {
    let id = parse_key(key, "inspection")?;
    let mut tx = TenantTx::read(state, tenant).await?;
    let found = repo::get_inspection(&mut tx, id).await?;
    tx.commit().await?;
    found.ok_or_else(|| AppError::not_found("inspection"))
}

// ---------- treatment applications ----------

/// The catalogue facts of a treatment an application copies.
struct TreatmentFacts {
    key: String,
    name: String,
    authorisation_number: Option<String>,
    treatment_type: String,
    active_ingredient: Option<String>,
    method: Option<String>,
    /// A mechanical or cultural measure or a release of beneficials: no label, no interval.
    applies_no_product: bool,
    intervals: Vec<karenz::CropInterval>,
    groups: Vec<String>,
    beneficial_organism: bool,
}

async fn treatment(state: &AppState, key: &str) -> Result<TreatmentFacts, AppError> {
    let v = match catalogue::get(state, &TREATMENT, key).await {
        Ok(v) => v,
        Err(e) if e.code() == ErrorCode::EntityNotFound => {
            return Err(not_found_at("treatment", "body.treatment_key".into()));
        }
        Err(e) => return Err(e),
    };
    let text = |f: &str| v.get(f).and_then(Value::as_str).map(str::to_owned);
    let empty = serde_json::Map::new();
    let doc = v.as_object().unwrap_or(&empty);
    Ok(TreatmentFacts {
        key: key.trim().to_owned(),
        name: text("name").unwrap_or_else(|| key.to_owned()),
        authorisation_number: text("authorisation_number"),
        treatment_type: text("treatment_type").unwrap_or_else(|| "chemical".to_owned()),
        active_ingredient: text("active_ingredient"),
        method: text("application_method"),
        applies_no_product: treatment_model::applies_no_product(doc),
        intervals: treatment_model::crop_intervals(doc),
        groups: treatment_model::resistance_groups(doc),
        beneficial_organism: v.get("beneficial_organism").and_then(Value::as_bool) == Some(true),
    })
}

/// The interval of a treatment for one plant: the longest label entry for the plant's species,
/// family or crop group, else the longest label entry for every crop; with its label. `Err`
/// with the refusal's detail when no label interval is recorded for the crop (a measure that
/// applies no product has none and needs none).
async fn interval_for_plant(
    state: &AppState,
    t: &TreatmentFacts,
    plant: &PlantFacts,
) -> Result<Result<PlantInterval, ErrorDetail>, AppError> {
    let species = match catalogue::get(state, &SPECIES, &plant.species_key).await {
        Ok(v) => Some(v),
        // A species gone from the catalogue: no crop is known, only an every-crop label holds.
        Err(e) if e.code() == ErrorCode::EntityNotFound => None,
        Err(e) => return Err(e),
    };
    let field = |f: &str| {
        species
            .as_ref()
            .and_then(|s| s.get(f))
            .and_then(Value::as_str)
    };
    let eppo_code = field("eppo_code").map(str::to_owned);
    if t.applies_no_product {
        return Ok(Ok(PlantInterval {
            days: 0,
            source: None,
            eppo_code,
        }));
    }
    let crop = karenz::Crop {
        species_key: Some(plant.species_key.as_str()),
        family_key: field("family_key"),
        crop_group: field("plant_category"),
    };
    let Some(i) = karenz::interval_for(&t.intervals, &crop) else {
        let species_name = field("scientific_name").unwrap_or(plant.species_key.as_str());
        return Ok(Err(ErrorDetail::new(
            "body.treatment_key",
            format!(
                "no label interval is recorded for {} on {species_name} (the plant {}, {}): \
                 the catalogue names no label for this crop, so it is not applied rather than \
                 given a guessed pre-harvest interval",
                t.name, plant.name, plant.id
            ),
            "no_label_interval",
        )));
    };
    Ok(Ok(PlantInterval {
        days: i32::try_from(i.days.clamp(0, 365)).unwrap_or(0),
        source: Some(i.source.line()),
        eppo_code,
    }))
}

/// The BBCH principal stage of the plant's phase, where the catalogue gives one.
async fn phase_stage(state: &AppState, plant: &PlantFacts) -> Result<Option<i16>, AppError> {
    let Some(phase) = &plant.current_phase_key else {
        return Ok(None);
    };
    let Some(seq) = crate::garden::plants::catalog::sequence_of(state, &plant.species_key).await?
    else {
        return Ok(None);
    };
    Ok(seq
        .entries
        .iter()
        .find(|e| &e.phase_key == phase)
        .and_then(|e| e.bbch_principal_stage)
        .and_then(|s| i16::try_from(s).ok()))
}

/// A plant's interval for a treatment, and the crop's EPPO code the record names.
struct PlantInterval {
    days: i32,
    source: Option<String>,
    eppo_code: Option<String>,
}

/// The plants whose resistance groups are at or one short of their limit today, most
/// applications first (rules::resistance: the same window, limit and source as the gate of
/// [`apply_treatment`]).
pub async fn resistance_pressure(
    state: &AppState,
    tenant: &TenantRecord,
) -> Result<Vec<ResistancePressure>, AppError> {
    let mut tx = TenantTx::snapshot(state, tenant).await?;
    let (_, tz) = crate::garden::calendar::service::garden_time_zone(&mut tx).await?;
    let today = karenz::today(&tz);
    let longest = resistance::GROUP_RULES
        .iter()
        .filter_map(|r| r.window_days)
        .max()
        .unwrap_or(resistance::WINDOW_DAYS);
    let since = resistance::window_start(today, longest);
    let earlier = repo::class_days(&mut tx, None, None, since, &tz).await?;
    // (plant, class) -> the local days of its applications.
    let mut days: std::collections::BTreeMap<(Uuid, &str), Vec<time::Date>> =
        std::collections::BTreeMap::new();
    for (plant, day, classes) in &earlier {
        for c in classes {
            days.entry((*plant, c.as_str())).or_default().push(*day);
        }
    }
    let mut found = Vec::new();
    for ((plant, class), d) in &days {
        let Some((window, limit)) = resistance::limit_of(class) else {
            continue;
        };
        let n = resistance::count_in_window(d, today, window);
        let verdict = match resistance::verdict(n, limit) {
            Verdict::Fine => continue,
            Verdict::Warn => "near",
            Verdict::Refuse => "reached",
        };
        found.push((*plant, (*class).to_owned(), n, limit, window, verdict));
    }
    let ids: Vec<Uuid> = found.iter().map(|f| f.0).collect();
    let names: std::collections::HashMap<Uuid, String> = repo::plants(&mut tx, &ids, false)
        .await?
        .into_iter()
        .map(|p| (p.id, p.name))
        .collect();
    tx.commit().await?;
    let mut out: Vec<ResistancePressure> = found
        .into_iter()
        .map(
            |(plant, group, n, limit, window, verdict)| ResistancePressure {
                plant_key: plant,
                plant_name: names.get(&plant).cloned().unwrap_or_default(),
                source: resistance::rule_of(&group).source.to_owned(),
                group: resistance::class_label(&group),
                applications: n,
                limit,
                window_days: window,
                state: verdict.to_owned(),
            },
        )
        .collect();
    out.sort_by(|a, b| {
        (b.applications, &a.plant_name, &a.group).cmp(&(a.applications, &b.plant_name, &b.group))
    });
    Ok(out)
}

/// How a resistance class reads in messages: the group as the catalogue spells it, else the
/// active ingredient.
fn class_label(t: &TreatmentFacts, class: &str) -> String {
    t.groups
        .iter()
        .find(|g| resistance::class_of(Some(g)).as_deref() == Some(class))
        .map(|g| {
            format!(
                "{g} (mode of action of {})",
                t.active_ingredient.as_deref().unwrap_or(&t.name)
            )
        })
        .or_else(|| t.active_ingredient.clone())
        .unwrap_or_else(|| class.to_owned())
}

/// Records a treatment application on plants (or every live plant at a location): checks the
/// resistance rule per plant and starts each plant's safety interval. Days are the garden's
/// local days (`rules::karenz`, its time zone; UTC when none is set): in a Los Angeles garden
/// an `applied_at` of 18:00 -08:00 on 29 November starts the interval on 29 November.
pub async fn apply_treatment(
    state: &AppState,
    tenant: &TenantRecord,
    new: &NewApplication,
    actor: &str,
    commit: bool,
) -> Result<Application, AppError> {
    let t = treatment(state, &new.treatment_key).await?;
    // The reason's catalogue keys (no tenant transaction is held while the catalogue answers).
    let named = |keys: &[String], field: &str| -> Vec<(String, String)> {
        keys.iter()
            .enumerate()
            .map(|(i, k)| (k.clone(), format!("{field}[{i}]")))
            .collect()
    };
    require_catalogue(
        state,
        &PEST,
        &named(&new.target_pest_keys, "target_pest_keys"),
    )
    .await?;
    require_catalogue(
        state,
        &DISEASE,
        &named(&new.target_disease_keys, "target_disease_keys"),
    )
    .await?;
    let mut tx = TenantTx::begin(state, tenant).await?;
    // The plants named, plus every live plant at the location (either or both).
    let mut plants = match &new.plant_keys {
        Some(keys) => require_plants(&mut tx, keys, "body.plant_keys", true, true).await?,
        None => Vec::new(),
    };
    if let Some(l) = new.location_key {
        if !repo::location_exists(&mut tx, l).await? {
            return Err(not_found_at("location", "body.location_key".into()));
        }
        let there = repo::live_plants_at(&mut tx, l).await?;
        if there.is_empty() && plants.is_empty() {
            return Err(AppError::validation(vec![ErrorDetail::new(
                "body.location_key",
                "no plant stands at this location",
                "value_error",
            )]));
        }
        for p in there {
            if !plants.iter().any(|q| q.id == p.id) {
                plants.push(p);
            }
        }
    }
    if plants.is_empty() {
        return Err(AppError::validation(vec![ErrorDetail::new(
            "body.plant_keys",
            "name plant_keys or location_key",
            "missing",
        )]));
    }
    let now = OffsetDateTime::now_utc();
    let applied_at = new.applied_at.unwrap_or(now);
    let (_, tz) = crate::garden::calendar::service::garden_time_zone(&mut tx).await?;
    let day = karenz::local_day(applied_at, &tz);
    let class = resistance::class_of(t.active_ingredient.as_deref());
    // Only the classes the rule counts (multi-site and BM groups are outside the count).
    let classes = resistance::counted_classes_of(
        &t.groups,
        t.active_ingredient.as_deref(),
        t.beneficial_organism,
    );
    let ids: Vec<Uuid> = plants.iter().map(|p| p.id).collect();

    let mut most = 0usize;
    let mut refused = Vec::new();
    let mut warnings = Vec::new();
    // The class that reached its limit first (for the error's message).
    let mut reached: Option<String> = None;
    if !classes.is_empty() {
        let longest = classes
            .iter()
            .filter_map(|c| resistance::limit_of(c))
            .map(|(w, _)| w)
            .max()
            .unwrap_or(resistance::WINDOW_DAYS);
        let since = resistance::window_start(day, longest);
        let earlier = repo::class_days(&mut tx, Some(&ids), Some(&classes), since, &tz).await?;
        for p in &plants {
            // The verdict of each class of this treatment on this plant; the worst one speaks.
            let mut worst: Option<(Verdict, &String, usize, i64, usize)> = None;
            for c in &classes {
                let Some((window, limit)) = resistance::limit_of(c) else {
                    continue;
                };
                let days: Vec<_> = earlier
                    .iter()
                    .filter(|(id, _, cs)| *id == p.id && cs.contains(c))
                    .map(|(_, d, _)| *d)
                    .collect();
                let n = resistance::count_in_window(&days, day, window);
                let v = resistance::verdict(n, limit);
                most = most.max(n);
                let rank = |v: Verdict| match v {
                    Verdict::Fine => 0,
                    Verdict::Warn => 1,
                    Verdict::Refuse => 2,
                };
                if worst.is_none_or(|(w, _, wn, _, _)| (rank(v), n) > (rank(w), wn)) {
                    worst = Some((v, c, n, window, limit));
                }
            }
            let Some((v, class, n, window, limit)) = worst else {
                continue;
            };
            let label = class_label(&t, class);
            let rule = resistance::rule_of(class);
            match v {
                Verdict::Refuse => {
                    reached.get_or_insert_with(|| class.clone());
                    refused.push(ErrorDetail::new(
                        "active_ingredient",
                        format!(
                            "{label} was applied {n} times to the plant {} ({}) within {window} \
                             days; the limit is {limit} in {window} days (source: {}); rotate \
                             to another mode of action or set acknowledge_resistance to apply \
                             it anyway",
                            p.name, p.id, rule.source
                        ),
                        ErrorCode::ResistanceWarning.as_str(),
                    ));
                }
                Verdict::Warn => warnings.push(format!(
                    "{label} was applied {n} times to the plant {} within {window} days: one \
                     more application reaches the resistance limit of {limit} in {window} days \
                     (source: {})",
                    p.name, rule.source
                )),
                Verdict::Fine => {}
            }
        }
    }
    if !refused.is_empty() && !new.acknowledge_resistance {
        let what = if t.groups.is_empty() {
            format!(
                "the active ingredient {}",
                t.active_ingredient.as_deref().unwrap_or_default()
            )
        } else {
            format!("the resistance group {}", t.groups.join(" + "))
        };
        let (window, limit) = reached
            .as_deref()
            .and_then(resistance::limit_of)
            .unwrap_or((resistance::WINDOW_DAYS, resistance::LIMIT));
        let source = reached
            .as_deref()
            .map(|c| resistance::rule_of(c).source)
            .unwrap_or(resistance::DEFAULT_SOURCE);
        return Err(AppError::new(
            ErrorCode::ResistanceWarning,
            format!(
                "{what} reached the resistance limit ({limit} applications in {window} days; \
                 source: {source})"
            ),
        )
        .with_details(refused));
    }
    let mut sorted = plants.clone();
    sorted.sort_by_key(|p| p.id);
    // The growth stage: the code given, else the principal stage the catalogue gives the
    // plant's phase (its species' sequence now).
    let given = new.bbch_code.as_deref().and_then(bbch::principal_of_code);
    let mut touched = Vec::with_capacity(sorted.len());
    let mut unlabelled = Vec::new();
    for p in &sorted {
        let i = match interval_for_plant(state, &t, p).await? {
            Ok(i) => i,
            Err(refused) => {
                unlabelled.push(refused);
                continue;
            }
        };
        let stage = match given {
            Some(stage) => Some(i16::from(stage)),
            None => phase_stage(state, p).await?,
        };
        touched.push(TouchedPlant::new(p.id, day, i.days, i.source).with_crop(i.eppo_code, stage));
    }
    if !unlabelled.is_empty() {
        return Err(AppError::new(
            ErrorCode::ValidationError,
            format!(
                "no label interval is recorded for {} on the crop of {} plant(s): it is not \
                 applied",
                t.name,
                unlabelled.len()
            ),
        )
        .with_details(unlabelled));
    }
    let longest = touched
        .iter()
        .map(|p| p.safety_interval_days)
        .max()
        .unwrap_or(0);
    let method = new
        .method
        .and_then(|m| serde_json::to_value(m).ok())
        .and_then(|v| v.as_str().map(str::to_owned))
        .or(t.method.clone())
        .unwrap_or_else(|| "spray".to_owned());
    let application = Application {
        key: Uuid::now_v7(),
        treatment_key: t.key,
        treatment_name: t.name,
        treatment_type: t.treatment_type,
        active_ingredient: t.active_ingredient,
        safety_interval_days: longest,
        resistance_groups: t.groups,
        location_key: new.location_key,
        applied_at,
        dose: new.dose,
        dose_unit: new
            .dose_unit
            .and_then(|u| serde_json::to_value(u).ok())
            .and_then(|v| v.as_str().map(str::to_owned)),
        water_volume_liters: new.water_volume_liters,
        method,
        applied_by: new.applied_by.clone().unwrap_or_else(|| actor.to_owned()),
        notes: new.notes.clone(),
        resistance_acknowledged: new.acknowledge_resistance && !refused.is_empty(),
        resistance_count: i32::try_from(most).unwrap_or(i32::MAX),
        authorisation_number: t.authorisation_number,
        bbch_code: new.bbch_code.clone(),
        treated_area_m2: new.treated_area_m2,
        target_pest_keys: new.target_pest_keys.clone(),
        target_disease_keys: new.target_disease_keys.clone(),
        plants: touched,
        created_by: actor.to_owned(),
        created_at: now,
        warnings,
    };
    repo::insert_application(&mut tx, &application, class.as_deref(), &classes).await?;
    crate::garden::webhooks::events::emit(
        &mut tx,
        tenant,
        "treatment.applied",
        serde_json::json!({
            "key": application.key,
            "treatment_key": application.treatment_key,
            "safety_interval_days": application.safety_interval_days,
            "location_key": application.location_key,
        }),
    )
    .await?;
    finish(tx, commit).await?;
    Ok(application)
}

pub async fn list_applications(
    state: &AppState,
    tenant: &TenantRecord,
    plant: Option<Uuid>,
    page: PageRequest,
) -> Result<Page<Application>, AppError> {
    let mut tx = TenantTx::snapshot(state, tenant).await?;
    if let Some(p) = plant {
        require_plants(&mut tx, &[p], "query.plant", false, false).await?;
    }
    let (_, tz) = crate::garden::calendar::service::garden_time_zone(&mut tx).await?;
    let (items, total) = repo::list_applications(&mut tx, plant, page, &tz).await?;
    tx.commit().await?;
    Ok(Page::new(items, total, page))
}

pub async fn get_application(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
) -> Result<Application, AppError> {
    let id = parse_key(key, "treatment application")?;
    let mut tx = TenantTx::read(state, tenant).await?;
    let (_, tz) = crate::garden::calendar::service::garden_time_zone(&mut tx).await?;
    let found = repo::get_application(&mut tx, id, &tz).await?;
    tx.commit().await?;
    found.ok_or_else(|| AppError::not_found("treatment application"))
}

// ---------- the plant-protection record ----------

/// The longest period one export covers (two years, as a record is kept per season).
pub const RECORD_MAX_DAYS: i64 = 731;

/// The days an export covers (inclusive, in the garden's time zone): default from the first
/// day of `to`'s year to today.
#[derive(Debug, Clone, Copy, Default)]
pub struct RecordQuery {
    pub from: Option<time::Date>,
    pub to: Option<time::Date>,
}

/// The plant-protection record of `[from, to]`: one row per application, oldest first, dates
/// in the garden's time zone.
pub async fn protection_record(
    state: &AppState,
    tenant: &TenantRecord,
    q: RecordQuery,
) -> Result<ProtectionRecord, AppError> {
    let mut tx = TenantTx::snapshot(state, tenant).await?;
    let (tz_name, tz) = crate::garden::calendar::service::garden_time_zone(&mut tx).await?;
    let today = karenz::today(&tz);
    let to = q.to.unwrap_or(today);
    let from = q
        .from
        .unwrap_or_else(|| to.replace_ordinal(1).unwrap_or(to));
    if from > to {
        return Err(AppError::validation(vec![ErrorDetail::new(
            "query.from",
            "must not be after to",
            "value_error",
        )]));
    }
    if (to - from).whole_days() >= RECORD_MAX_DAYS {
        return Err(AppError::validation(vec![ErrorDetail::new(
            "query.to",
            format!("one export covers at most {RECORD_MAX_DAYS} days"),
            "value_error",
        )]));
    }
    let start = local_midnight(from, &tz)?;
    let end = local_midnight(to.next_day().unwrap_or(to), &tz)?;
    // The application's date: its local day by the same rule as its safety interval.
    let rows = repo::record_rows(&mut tx, start, end).await?;
    tx.commit().await?;
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        let zoned = to_zoned(r.applied_at, &tz)?;
        let bbch_source = if r.bbch_code.is_some() {
            "given"
        } else if r.stages.is_empty() {
            "unknown"
        } else {
            "phase"
        };
        out.push(ProtectionRow {
            application_key: r.id,
            date: karenz::local_day(r.applied_at, &tz).to_string(),
            applied_at: zoned.strftime("%Y-%m-%dT%H:%M:%S%:z").to_string(),
            crop_eppo_codes: r.eppo_codes,
            crop_species: names(state, &SPECIES, &r.species_keys).await?,
            bbch_code: r.bbch_code,
            bbch_principal_stages: r.stages,
            bbch_source: bbch_source.to_owned(),
            product_name: r.treatment_name,
            authorisation_number: r.authorisation_number,
            active_ingredient: r.active_ingredient,
            dose: r.dose,
            dose_unit: r.dose_unit,
            water_volume_liters: r.water_volume_liters,
            treated_area_m2: r.treated_area_m2,
            plant_count: r.plant_count,
            places: r.places,
            operator: r.applied_by,
            target_pests: names(state, &PEST, &r.target_pest_keys).await?,
            target_diseases: names(state, &DISEASE, &r.target_disease_keys).await?,
            method: r.method,
            safety_interval_days: r.safety_interval_days,
            notes: r.notes,
        });
    }
    Ok(ProtectionRecord {
        garden: tenant.slug.as_str().to_owned(),
        timezone: tz_name,
        from: from.to_string(),
        to: to.to_string(),
        count: out.len(),
        rows: out,
    })
}

/// Catalogue records' scientific names (the key where a record is gone).
async fn names(
    state: &AppState,
    spec: &'static crate::catalog::engine::spec::KindSpec,
    keys: &[String],
) -> Result<Vec<String>, AppError> {
    let mut out = Vec::with_capacity(keys.len());
    for k in keys {
        let name = match catalogue::get(state, spec, k).await {
            Ok(v) => v
                .get("scientific_name")
                .and_then(Value::as_str)
                .map_or_else(|| k.clone(), str::to_owned),
            Err(e) if e.code() == ErrorCode::EntityNotFound => k.clone(),
            Err(e) => return Err(e),
        };
        out.push(name);
    }
    Ok(out)
}

/// The instant a local day starts in the zone (`rules::karenz::day_start`).
fn local_midnight(day: time::Date, tz: &jiff::tz::TimeZone) -> Result<OffsetDateTime, AppError> {
    karenz::day_start(day, tz).ok_or_else(|| AppError::internal("a date out of the zone's range"))
}

fn to_zoned(at: OffsetDateTime, tz: &jiff::tz::TimeZone) -> Result<jiff::Zoned, AppError> {
    let ts = jiff::Timestamp::new(at.unix_timestamp(), 0)
        .map_err(|_| AppError::internal("an instant out of range"))?;
    Ok(ts.to_zoned(tz.clone()))
}
