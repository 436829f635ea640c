//! Use cases of harvest, shared by the REST routes and the MCP tools: readiness, observations,
//! batches behind the safety-interval gate (Karenz), yields, and the calendar's harvest and
//! safety-interval events.
//!
//! Every day here is a local day in the garden's time zone, counted by `rules::karenz` (UTC
//! when no zone is set): "today", a batch's `harvest_date` (default today; a date-time counts
//! as its local day), an application's first blocked day and its first allowed day. The last
//! day of an interval is still blocked, the day after is allowed. No flag and no role passes
//! the gate.

use std::collections::HashMap;

use time::{Date, OffsetDateTime};
use uuid::Uuid;

use super::model::*;
use super::repo::{self, BatchFilter};
use crate::catalog::phases::model::ResolvedSequence;
use crate::error::{AppError, ErrorCode, ErrorDetail};
use crate::garden::calendar::service::garden_time_zone;
use crate::garden::contracts::CalendarEvent;
use crate::garden::ipm::repo::{self as ipm_repo, Interval, PlantFacts};
use crate::garden::ipm::service::{parse_key, require_plants};
use crate::garden::plants::catalog;
use crate::rules::{harvest as rules, karenz};
use crate::state::AppState;
use crate::tenancy::{TenantRecord, TenantTx};
use crate::values::page::{Page, PageRequest};

pub const LIST_MAX_LIMIT: i64 = 200;

async fn finish(tx: TenantTx, commit: bool) -> Result<(), AppError> {
    if commit {
        tx.commit().await?;
    } else {
        tx.rollback().await?;
    }
    Ok(())
}

fn interval_view(i: &Interval, day: Date) -> SafetyInterval {
    SafetyInterval {
        application_key: i.application_id,
        treatment_key: i.treatment_key.clone(),
        treatment_name: i.treatment_name.clone(),
        active_ingredient: i.active_ingredient.clone(),
        safety_interval_days: i.safety_interval_days,
        interval_source: i.interval_source.clone(),
        applied_on: i.applied_on.to_string(),
        last_blocked_day: i.days().last_blocked_day().unwrap_or(i.safe_on).to_string(),
        safe_on: i.safe_on.to_string(),
        days_remaining: (i.safe_on - day).whole_days().max(0),
    }
}

// ---------- the gate ----------

/// The intervals that block a harvest of `plant` on the local day `day` (none: allowed).
async fn blocking(
    tx: &mut TenantTx,
    plant: Uuid,
    day: Date,
    tz: &karenz::TimeZone,
) -> Result<Vec<Interval>, AppError> {
    let all = ipm_repo::intervals_after(tx, &[plant], day, tz).await?;
    Ok(all
        .into_iter()
        .filter(|i| i.days().blocks(day).is_some())
        .collect())
}

/// 422 `KARENZ_VIOLATION`, one detail per blocking application.
fn violation(blocking: &[Interval], day: Date) -> AppError {
    let longest = blocking
        .iter()
        .max_by_key(|i| i.safe_on)
        .map(|i| (i.safe_on - day).whole_days())
        .unwrap_or(0);
    let first = &blocking[0];
    let message = format!(
        "harvesting is blocked: the safety interval of {} has {} day(s) left (harvest allowed from {})",
        first
            .active_ingredient
            .as_deref()
            .unwrap_or(&first.treatment_name),
        longest,
        blocking
            .iter()
            .map(|i| i.safe_on)
            .max()
            .unwrap_or(first.safe_on)
    );
    let details = blocking
        .iter()
        .map(|i| {
            let last = i.days().last_blocked_day().unwrap_or(i.safe_on);
            ErrorDetail::new(
                "active_ingredient",
                format!(
                    "{} of treatment '{}' ({}), application {} on {}: {} day(s) for this crop \
                     ({}), blocked through {}, allowed from {}; {} day(s) remaining",
                    i.active_ingredient
                        .as_deref()
                        .unwrap_or("(no active ingredient)"),
                    i.treatment_name,
                    i.treatment_key,
                    i.application_id,
                    i.applied_on,
                    i.safety_interval_days,
                    i.interval_source.as_deref().unwrap_or("no source recorded"),
                    last,
                    i.safe_on,
                    (i.safe_on - day).whole_days()
                ),
                ErrorCode::KarenzViolation.as_str(),
            )
        })
        .collect();
    AppError::new(ErrorCode::KarenzViolation, message).with_details(details)
}

// ---------- batches ----------

/// Records a harvest batch; refused with `KARENZ_VIOLATION` while a safety interval of the
/// plant runs on the harvest day. The plant row is locked first, so an application recorded at
/// the same time either lands before the check or waits for the batch.
pub async fn create_batch(
    state: &AppState,
    tenant: &TenantRecord,
    new: &NewBatch,
    actor: &str,
    commit: bool,
) -> Result<HarvestBatch, AppError> {
    let mut tx = TenantTx::begin(state, tenant).await?;
    let (zone, tz) = garden_time_zone(&mut tx).await?;
    let today = karenz::today(&tz);
    let day = new.harvest_date.map_or(today, |d| d.local_day(&tz));
    if day > today {
        return Err(AppError::validation(vec![ErrorDetail::new(
            "body.harvest_date",
            format!(
                "must not be in the future: {day} is after today in the garden's time zone \
                 ({today}, {zone})"
            ),
            "value_error",
        )]));
    }
    let plant = require_plants(&mut tx, &[new.plant_key], "body.plant_key", true, true)
        .await?
        .remove(0);
    let blocked = blocking(&mut tx, plant.id, day, &tz).await?;
    if !blocked.is_empty() {
        return Err(violation(&blocked, day));
    }
    let warnings = harvest_readiness_warning(state, &plant).await?;
    let (quality_score, quality_grade) =
        match (new.appearance_score, new.aroma_score, new.color_score) {
            (Some(a), Some(r), Some(c)) => {
                let (score, grade) = rules::quality(a, r, c, &new.defects);
                (
                    Some(score),
                    serde_json::from_value(serde_json::Value::String(grade.to_owned())).ok(),
                )
            }
            _ => (None, new.quality_grade),
        };
    let key = Uuid::now_v7();
    let batch = HarvestBatch {
        key,
        plant_key: plant.id,
        run_key: plant.run_id,
        label: new
            .label
            .clone()
            .unwrap_or_else(|| format!("H-{day}-{}", &key.simple().to_string()[24..32])),
        harvest_date: day.to_string(),
        harvest_type: new.harvest_type.unwrap_or(HarvestType::Final),
        wet_weight_g: new.wet_weight_g,
        estimated_dry_weight_g: new.estimated_dry_weight_g,
        actual_dry_weight_g: new.actual_dry_weight_g,
        appearance_score: new.appearance_score,
        aroma_score: new.aroma_score,
        color_score: new.color_score,
        defects: new.defects.clone(),
        quality_score,
        quality_grade,
        harvester: new.harvester.clone().unwrap_or_else(|| actor.to_owned()),
        notes: new.notes.clone(),
        created_at: OffsetDateTime::now_utc(),
        warnings,
    };
    repo::insert_batch(&mut tx, &batch, day).await?;
    crate::garden::webhooks::events::emit(
        &mut tx,
        tenant,
        "harvest.recorded",
        serde_json::json!({
            "key": batch.key,
            "plant_key": batch.plant_key,
            "label": batch.label,
            "harvest_date": batch.harvest_date,
            "harvest_type": batch.harvest_type,
            "wet_weight_g": batch.wet_weight_g,
        }),
    )
    .await?;
    finish(tx, commit).await?;
    Ok(batch)
}

/// A harvest from a phase whose sequence entry does not allow one (a seedling, a vegetative
/// plant) is the grower's call: it is recorded, with this warning. No phase or no sequence
/// says nothing.
async fn harvest_readiness_warning(
    state: &AppState,
    plant: &PlantFacts,
) -> Result<Vec<String>, AppError> {
    let Some(phase) = plant.current_phase_key.as_deref() else {
        return Ok(Vec::new());
    };
    let seq = catalog::sequence_of(state, &plant.species_key).await?;
    let entry = seq
        .as_ref()
        .and_then(|s| s.entries.iter().find(|e| e.phase_key == phase));
    Ok(match entry {
        Some(e) if !e.allows_harvest => vec![format!(
            "harvest_readiness: the plant's current phase {} ({phase}) does not allow a \
             harvest; the batch is recorded as the grower's call",
            e.phase_name
        )],
        _ => Vec::new(),
    })
}

fn check_order(from: Option<Date>, to: Option<Date>) -> Result<(), AppError> {
    if let (Some(f), Some(t)) = (from, to)
        && f > t
    {
        return Err(AppError::validation(vec![ErrorDetail::new(
            "query.to",
            "must not be before from",
            "value_error",
        )]));
    }
    Ok(())
}

pub async fn list_batches(
    state: &AppState,
    tenant: &TenantRecord,
    filter: BatchFilter,
    page: PageRequest,
) -> Result<Page<HarvestBatch>, AppError> {
    check_order(filter.from, filter.to)?;
    let mut tx = TenantTx::snapshot(state, tenant).await?;
    if let Some(p) = filter.plant {
        require_plants(&mut tx, &[p], "query.plant", false, false).await?;
    }
    let (items, total) = repo::list_batches(&mut tx, filter, page).await?;
    tx.commit().await?;
    Ok(Page::new(items, total, page))
}

pub async fn get_batch(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
) -> Result<HarvestBatch, AppError> {
    let id = parse_key(key, "harvest batch")?;
    let mut tx = TenantTx::read(state, tenant).await?;
    let found = repo::get_batch(&mut tx, id).await?;
    tx.commit().await?;
    found.ok_or_else(|| AppError::not_found("harvest batch"))
}

// ---------- yields ----------

fn per(total: f64, n: i64) -> f64 {
    if n > 0 {
        ((total / n as f64) * 10.0).round() / 10.0
    } else {
        0.0
    }
}

pub async fn plant_yield(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
    from: Option<Date>,
    to: Option<Date>,
) -> Result<Yield, AppError> {
    check_order(from, to)?;
    let id = parse_key(key, "plant")?;
    let mut tx = TenantTx::snapshot(state, tenant).await?;
    let plant = ipm_repo::plants(&mut tx, &[id], false)
        .await?
        .pop()
        .ok_or_else(|| AppError::not_found("plant"))?;
    let f = BatchFilter {
        plant: Some(id),
        from,
        to,
        ..BatchFilter::default()
    };
    let (n, wet, dry, first, last) = repo::sums(&mut tx, f).await?;
    tx.commit().await?;
    Ok(Yield {
        scope: "plant".into(),
        key: id,
        name: plant.name,
        batches: n,
        plants: 1,
        total_wet_weight_g: wet,
        total_dry_weight_g: dry,
        wet_weight_per_plant_g: per(wet, 1),
        dry_weight_per_plant_g: per(dry, 1),
        first_harvest: first.map(|d| d.to_string()),
        last_harvest: last.map(|d| d.to_string()),
    })
}

pub async fn run_yield(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
    from: Option<Date>,
    to: Option<Date>,
) -> Result<Yield, AppError> {
    check_order(from, to)?;
    let id = parse_key(key, "planting run")?;
    let mut tx = TenantTx::snapshot(state, tenant).await?;
    let (name, plants) = repo::run_facts(&mut tx, id)
        .await?
        .ok_or_else(|| AppError::not_found("planting run"))?;
    let f = BatchFilter {
        run: Some(id),
        from,
        to,
        ..BatchFilter::default()
    };
    let (n, wet, dry, first, last) = repo::sums(&mut tx, f).await?;
    tx.commit().await?;
    Ok(Yield {
        scope: "run".into(),
        key: id,
        name,
        batches: n,
        plants,
        total_wet_weight_g: wet,
        total_dry_weight_g: dry,
        wet_weight_per_plant_g: per(wet, plants),
        dry_weight_per_plant_g: per(dry, plants),
        first_harvest: first.map(|d| d.to_string()),
        last_harvest: last.map(|d| d.to_string()),
    })
}

// ---------- observations and readiness ----------

pub async fn record_observation(
    state: &AppState,
    tenant: &TenantRecord,
    new: &NewObservation,
    actor: &str,
    commit: bool,
) -> Result<Observation, AppError> {
    let mut tx = TenantTx::begin(state, tenant).await?;
    require_plants(&mut tx, &[new.plant_key], "body.plant_key", true, true).await?;
    let o = Observation {
        key: Uuid::now_v7(),
        plant_key: new.plant_key,
        indicator_type: new.indicator_type,
        ripeness_assessment: new.ripeness_assessment,
        reliability_score: new.reliability_score.unwrap_or(0.5),
        days_to_harvest_estimate: new.days_to_harvest_estimate,
        observed_at: new.observed_at.unwrap_or_else(OffsetDateTime::now_utc),
        notes: new.notes.clone(),
    };
    repo::insert_observation(&mut tx, &o, actor).await?;
    finish(tx, commit).await?;
    Ok(o)
}

fn stage_str(r: Ripeness) -> &'static str {
    match r {
        Ripeness::Immature => "immature",
        Ripeness::Approaching => "approaching",
        Ripeness::Peak => "peak",
        Ripeness::Overripe => "overripe",
    }
}

fn readiness_of(
    p: &PlantFacts,
    seq: Option<&ResolvedSequence>,
    observations: &[Observation],
    intervals: &[Interval],
    now: OffsetDateTime,
    day: Date,
) -> Readiness {
    let entry = p
        .current_phase_key
        .as_deref()
        .and_then(|k| seq.and_then(|s| s.entries.iter().find(|e| e.phase_key == k)));
    let days_in_phase = p
        .current_phase_started_at
        .map(|s| rules::utc_days_between(s, now));
    let mine: Vec<&Observation> = observations
        .iter()
        .filter(|o| o.plant_key == p.id)
        .collect();
    let obs: Vec<rules::Observation<'_>> = mine
        .iter()
        .map(|o| rules::Observation {
            stage: stage_str(o.ripeness_assessment),
            reliability: o.reliability_score,
            days_estimate: o.days_to_harvest_estimate,
        })
        .collect();
    let r = rules::readiness(&obs);
    let running: Vec<SafetyInterval> = intervals
        .iter()
        .filter(|i| i.plant_id == p.id && i.safe_on > day)
        .map(|i| interval_view(i, day))
        .collect();
    let allowed_from = intervals
        .iter()
        .filter(|i| i.plant_id == p.id && i.safe_on > day)
        .map(|i| i.safe_on)
        .max()
        .unwrap_or(day);
    let phase_allows = entry.map(|e| e.allows_harvest);
    Readiness {
        plant_key: p.id,
        plant_name: p.name.clone(),
        phase_key: p.current_phase_key.clone(),
        phase_allows_harvest: phase_allows,
        days_in_phase,
        expected_phase_days: entry.map(|e| e.effective_duration_days),
        score: r.score,
        recommendation: r.recommendation.to_owned(),
        estimated_days_to_harvest: r.estimated_days,
        indicators: mine
            .iter()
            .map(|o| IndicatorReading {
                indicator_type: o.indicator_type,
                ripeness_assessment: o.ripeness_assessment,
                reliability_score: o.reliability_score,
                days_to_harvest_estimate: o.days_to_harvest_estimate,
                observed_at: o.observed_at,
            })
            .collect(),
        ready: phase_allows == Some(true) && r.recommendation == "optimal" && running.is_empty(),
        safety_intervals: running,
        harvest_allowed_from: allowed_from.to_string(),
    }
}

async fn readiness_for(
    state: &AppState,
    tx: &mut TenantTx,
    plants: &[PlantFacts],
) -> Result<Vec<Readiness>, AppError> {
    let ids: Vec<Uuid> = plants.iter().map(|p| p.id).collect();
    let now = OffsetDateTime::now_utc();
    let (_, tz) = garden_time_zone(tx).await?;
    let day = karenz::today_at(now, &tz);
    let observations = repo::latest_observations(tx, &ids).await?;
    let intervals = ipm_repo::intervals_after(tx, &ids, day, &tz).await?;
    let mut sequences: HashMap<String, Option<ResolvedSequence>> = HashMap::new();
    for p in plants {
        if !sequences.contains_key(&p.species_key) {
            let s = catalog::sequence_of(state, &p.species_key).await?;
            sequences.insert(p.species_key.clone(), s);
        }
    }
    Ok(plants
        .iter()
        .map(|p| {
            let seq = sequences.get(&p.species_key).and_then(Option::as_ref);
            readiness_of(p, seq, &observations, &intervals, now, day)
        })
        .collect())
}

/// Readiness of the garden's live plants (oldest first, one page).
pub async fn readiness(
    state: &AppState,
    tenant: &TenantRecord,
    page: PageRequest,
) -> Result<Page<Readiness>, AppError> {
    let mut tx = TenantTx::snapshot(state, tenant).await?;
    let (plants, total) = ipm_repo::live_plants_page(&mut tx, page).await?;
    let items = readiness_for(state, &mut tx, &plants).await?;
    tx.commit().await?;
    Ok(Page::new(items, total, page))
}

/// Readiness of one plant.
pub async fn plant_readiness(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
) -> Result<Readiness, AppError> {
    let id = parse_key(key, "plant")?;
    let mut tx = TenantTx::snapshot(state, tenant).await?;
    let plants = ipm_repo::plants(&mut tx, &[id], false).await?;
    if plants.is_empty() {
        return Err(AppError::not_found("plant"));
    }
    let mut items = readiness_for(state, &mut tx, &plants).await?;
    tx.commit().await?;
    items.pop().ok_or_else(|| AppError::not_found("plant"))
}

/// The garden's live plants that are ready to harvest now (the `ready` of [`readiness`]), at
/// most `max`: for the digest, which lists them rather than pages through them.
pub async fn ready_plants(
    state: &AppState,
    tenant: &TenantRecord,
    max: usize,
) -> Result<Vec<Readiness>, AppError> {
    watched_readiness(state, tenant, max, |r| r.ready).await
}

/// The readiness of the garden's watched plants that `keep` keeps, at most `max`, read in one
/// snapshot (the digest's ripe plants; Today's ripe plants and running intervals; the
/// harvest and protection pages). Watched: live plants with a ripeness observation or a
/// safety interval that may still run (`ipm::repo::watched_plants_page`). Only those can be
/// ready or near it (readiness needs observations) or protected, so a garden of 200 plants
/// with ten treated reads ten, not 200.
pub async fn watched_readiness(
    state: &AppState,
    tenant: &TenantRecord,
    max: usize,
    keep: impl Fn(&Readiness) -> bool,
) -> Result<Vec<Readiness>, AppError> {
    let mut tx = TenantTx::snapshot(state, tenant).await?;
    let mut out = Vec::new();
    let mut skip = 0;
    loop {
        let page = PageRequest {
            skip,
            limit: LIST_MAX_LIMIT,
        };
        let plants = ipm_repo::watched_plants_page(&mut tx, page).await?;
        let last_page = plants.len() < LIST_MAX_LIMIT as usize;
        if !plants.is_empty() {
            out.extend(
                readiness_for(state, &mut tx, &plants)
                    .await?
                    .into_iter()
                    .filter(|r| keep(r)),
            );
        }
        skip += LIST_MAX_LIMIT;
        if last_page || out.len() >= max {
            break;
        }
    }
    tx.commit().await?;
    out.truncate(max);
    Ok(out)
}

/// The safety intervals whose last blocked day (in the garden's calendar) is `day` (harvest
/// allowed from the next day), with the plant's name: the digest's "safety intervals that end
/// today".
pub async fn intervals_ending_on(
    state: &AppState,
    tenant: &TenantRecord,
    day: Date,
) -> Result<Vec<(String, SafetyInterval)>, AppError> {
    let mut tx = TenantTx::read(state, tenant).await?;
    let (_, tz) = garden_time_zone(&mut tx).await?;
    let running = ipm_repo::intervals_overlapping(&mut tx, day, day, &tz).await?;
    tx.commit().await?;
    Ok(running
        .iter()
        .filter(|i| i.days().last_blocked_day() == Some(day))
        .map(|i| (i.plant_name.clone(), interval_view(i, day)))
        .collect())
}

// ---------- calendar ----------

/// The garden calendar's share of harvest: harvests done within `from..=to` (kind `harvest`)
/// and safety intervals that overlap the window (kind `treatment`, one per plant and
/// application, `date` the first blocked day, `end_date` the last blocked day: local days in
/// the garden's time zone).
pub async fn calendar_events(
    tx: &mut TenantTx,
    from: Date,
    to: Date,
) -> Result<Vec<CalendarEvent>, AppError> {
    let mut out = Vec::new();
    if from > to {
        return Ok(out);
    }
    for (b, plant_name) in repo::batches_between(tx, from, to).await? {
        let date = time::Date::parse(
            &b.harvest_date,
            time::macros::format_description!("[year]-[month]-[day]"),
        )
        .unwrap_or(from);
        out.push(CalendarEvent {
            uid: format!("harvest:{}", b.key),
            kind: "harvest",
            date,
            end_date: None,
            title: format!("Harvest of {plant_name}: {} g", b.wet_weight_g),
            plant_key: Some(b.plant_key),
            detail: Some(format!("batch {}", b.label)),
        });
    }
    let (_, tz) = garden_time_zone(tx).await?;
    for i in ipm_repo::intervals_overlapping(tx, from, to, &tz).await? {
        let last = i.days().last_blocked_day().unwrap_or(i.safe_on);
        out.push(CalendarEvent {
            uid: format!("treatment:{}:{}", i.application_id, i.plant_id),
            kind: "treatment",
            date: i.applied_on,
            end_date: Some(last),
            title: format!(
                "Safety interval: {} on {}",
                i.active_ingredient.as_deref().unwrap_or(&i.treatment_name),
                i.plant_name
            ),
            plant_key: Some(i.plant_id),
            detail: Some(format!(
                "{} applied {}; no harvest through {}, allowed from {}",
                i.treatment_name, i.applied_on, last, i.safe_on
            )),
        });
    }
    out.sort_by(|a, b| a.date.cmp(&b.date).then_with(|| a.uid.cmp(&b.uid)));
    Ok(out)
}
