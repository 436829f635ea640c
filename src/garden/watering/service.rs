//! Use cases of watering and feeding events and of a plant's diagnostics, shared by the REST
//! routes and the MCP tools (`record_feeding_event`, `get_plant_diagnostics`).

use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use super::model::*;
use super::repo::{self, Filter};
use crate::error::{AppError, ErrorCode, ErrorDetail};
use crate::garden::contracts::PhaseTargets;
use crate::rules::calculations::round;
use crate::rules::feeding_diagnostics::{self, Sample};
use crate::rules::runoff::{self, RunoffAnalysis, RunoffInput};
use crate::state::AppState;
use crate::tenancy::{TenantRecord, TenantTx};
use crate::values::page::{Page, PageRequest};

pub const LIST_MAX_LIMIT: i64 = 200;
pub const WINDOW_DEFAULT_DAYS: i64 = 14;
pub const WINDOW_MAX_DAYS: i64 = 365;
/// Events of one plant a diagnosis reads at most (the newest of the window).
pub const WINDOW_MAX_EVENTS: i64 = 500;
pub const LAST_FEEDINGS: i64 = 10;

fn invalid(field: &str, reason: impl Into<String>) -> AppError {
    AppError::validation(vec![ErrorDetail::new(
        format!("body.{field}"),
        reason,
        "value_error",
    )])
}

/// The runoff analysis of an event: the runoff against what was fed (the mixed solution if
/// measured, else the water); pH only with both a fed and a runoff pH; volumes only with a
/// runoff volume. `None` without a runoff EC.
pub fn analyse(e: &NewWateringEvent) -> Option<RunoffAnalysis> {
    let runoff_ec = e.runoff_ec_ms?;
    let fed_ec = e.ec_after_ms.or(e.ec_before_ms)?;
    let fed_ph = e.ph_after.or(e.ph_before);
    let (input_ph, runoff_ph) = match (fed_ph, e.runoff_ph) {
        (Some(a), Some(b)) => (Some(a), Some(b)),
        _ => (None, None),
    };
    let (input_volume, runoff_volume) = match e.runoff_volume_liters {
        Some(r) => (Some(e.volume_liters), Some(r)),
        None => (None, None),
    };
    let input = RunoffInput::new(RunoffInput {
        input_ec_ms: fed_ec,
        runoff_ec_ms: runoff_ec,
        input_ph,
        runoff_ph,
        input_volume_liters: input_volume,
        runoff_volume_liters: runoff_volume,
    })
    .ok()?;
    Some(runoff::analyse(&input))
}

/// Records a watering or feeding. The plants: the named ones (each of this garden, 404
/// otherwise; archived ones refused with 422) plus the run's live plants. A tank named is
/// drawn from: 409 `STATE_CONFLICT` when it holds less than the litres applied (or was never
/// filled), else its volume drops by them. `write: false` runs every check and writes nothing
/// (a tool's dry run).
pub async fn record_event(
    state: &AppState,
    tenant: &TenantRecord,
    new: &NewWateringEvent,
    actor: &str,
    write: bool,
) -> Result<WateringEvent, AppError> {
    let problems = cross_field_problems(new);
    if !problems.is_empty() {
        return Err(AppError::validation(
            problems
                .into_iter()
                .map(|(f, r)| ErrorDetail::new(format!("body.{f}"), r, "value_error"))
                .collect(),
        ));
    }
    let mut tx = TenantTx::begin(state, tenant).await?;
    let mut plants = new.plant_keys.clone();
    if !plants.is_empty() {
        let found = repo::plants(&mut tx, &plants).await?;
        if found.len() != plants.len() {
            return Err(AppError::not_found("plant"));
        }
        if let Some((id, _)) = found.iter().find(|(_, archived)| *archived) {
            return Err(invalid(
                "plant_keys",
                format!("plant {id} is archived; it is not watered any more"),
            ));
        }
    }
    if let Some(run) = new.run_key {
        if !repo::run_exists(&mut tx, run).await? {
            return Err(AppError::not_found("planting run"));
        }
        for p in repo::run_plants(&mut tx, run).await? {
            if !plants.contains(&p) {
                plants.push(p);
            }
        }
        if plants.is_empty() {
            return Err(invalid(
                "run_key",
                "the run has no live plants; name plant_keys",
            ));
        }
    }
    let mut tank_fill_key = new.tank_fill_key;
    // A named fill is one of this garden's (another garden's key names nothing here).
    if let Some(fill) = tank_fill_key
        && !repo::fill_exists(&mut tx, fill).await?
    {
        return Err(AppError::not_found("tank fill"));
    }
    if let Some(tank) = new.tank_key {
        let (held, last_fill) = repo::lock_tank(&mut tx, tank)
            .await?
            .ok_or_else(|| AppError::not_found("tank"))?;
        let held = held.unwrap_or(0.0);
        if held + 1e-9 < new.volume_liters {
            return Err(AppError::new(
                ErrorCode::StateConflict,
                format!(
                    "the tank holds {held} litres, less than the {} applied; fill it first",
                    new.volume_liters
                ),
            ));
        }
        repo::set_tank_volume(&mut tx, tank, round((held - new.volume_liters).max(0.0), 3)).await?;
        tank_fill_key = tank_fill_key.or(last_fill);
    }
    let now = crate::garden::tanks::model::micros(OffsetDateTime::now_utc());
    let event = WateringEvent {
        key: Uuid::now_v7(),
        kind: if new.fertilizers_used.is_empty() {
            "watering"
        } else {
            "feeding"
        }
        .to_owned(),
        occurred_at: new.occurred_at.unwrap_or(now),
        application_method: new.application_method.unwrap_or(ApplicationMethod::Drench),
        is_supplemental: new.is_supplemental,
        plant_keys: {
            plants.sort_unstable();
            plants
        },
        run_key: new.run_key,
        tank_key: new.tank_key,
        tank_fill_key,
        volume_liters: new.volume_liters,
        ec_before_ms: new.ec_before_ms,
        ec_after_ms: new.ec_after_ms,
        ph_before: new.ph_before,
        ph_after: new.ph_after,
        runoff_ec_ms: new.runoff_ec_ms,
        runoff_ph: new.runoff_ph,
        runoff_volume_liters: new.runoff_volume_liters,
        fertilizers_used: new.fertilizers_used.clone(),
        runoff_analysis: analyse(new),
        notes: new.notes.clone(),
        actor: actor.to_owned(),
        created_at: now,
    };
    repo::insert(&mut tx, &event).await?;
    crate::garden::webhooks::events::emit(
        &mut tx,
        tenant,
        "feeding.recorded",
        serde_json::json!({
            "key": event.key,
            "kind": event.kind,
            "plant_keys": event.plant_keys,
            "volume_liters": event.volume_liters,
            "fertilizers_used": event.fertilizers_used,
        }),
    )
    .await?;
    if write {
        tx.commit().await?;
    } else {
        tx.rollback().await?;
    }
    Ok(event)
}

pub fn parse_event_key(key: &str) -> Result<Uuid, AppError> {
    Uuid::parse_str(key).map_err(|_| AppError::not_found("watering event"))
}

pub async fn get_event(
    state: &AppState,
    tenant: &TenantRecord,
    key: &str,
) -> Result<WateringEvent, AppError> {
    let id = parse_event_key(key)?;
    let mut tx = TenantTx::read(state, tenant).await?;
    let e = repo::get(&mut tx, id).await?;
    tx.commit().await?;
    e.ok_or_else(|| AppError::not_found("watering event"))
}

pub async fn list_events(
    state: &AppState,
    tenant: &TenantRecord,
    filter: &Filter,
    page: PageRequest,
) -> Result<Page<WateringEvent>, AppError> {
    let mut tx = TenantTx::snapshot(state, tenant).await?;
    let (items, total) = repo::list(&mut tx, filter, page).await?;
    tx.commit().await?;
    Ok(Page::new(items, total, page))
}

/// A plant's diagnostics as ONE read (a snapshot): the plant and its phase, its events in the
/// window, its last feedings, and the plan targets for its phase now.
pub async fn plant_diagnostics(
    state: &AppState,
    tenant: &TenantRecord,
    plant_key: &str,
    days: i64,
    include_sensors: bool,
) -> Result<Diagnostics, AppError> {
    let id = crate::garden::plants::service::parse_plant_key(plant_key)?;
    if !(1..=WINDOW_MAX_DAYS).contains(&days) {
        return Err(AppError::validation(vec![ErrorDetail::new(
            "query.days",
            format!("must be between 1 and {WINDOW_MAX_DAYS}"),
            "value_error",
        )]));
    }
    let now = OffsetDateTime::now_utc();
    let from = now - Duration::days(days);
    let mut tx = TenantTx::snapshot(state, tenant).await?;
    let plant = repo::diagnosed_plant(&mut tx, id)
        .await?
        .ok_or_else(|| AppError::not_found("plant"))?;
    let window = repo::plant_events_since(&mut tx, id, from, WINDOW_MAX_EVENTS).await?;
    let last = repo::plant_last_events(&mut tx, id, LAST_FEEDINGS).await?;
    // PLAN-TARGETS: the one line where the plan's targets are read (nutrient plans' service).
    let targets: Option<PhaseTargets> =
        crate::garden::nutrient_plans::service::current_phase_targets(&mut tx, id).await?;
    tx.commit().await?;
    let mut d = build_diagnostics(plant, days, from, now, window, last, targets);
    // The rest of the snapshot comes from the capabilities that own it (their own reads).
    d.inspections = crate::garden::ipm::service::list_inspections(
        state,
        tenant,
        Some(id),
        None,
        PageRequest {
            skip: 0,
            limit: DIAGNOSTIC_INSPECTIONS,
        },
    )
    .await?
    .items;
    match crate::garden::harvest::service::plant_readiness(state, tenant, plant_key).await {
        Ok(r) => {
            d.safety_intervals = r.safety_intervals;
            d.harvest_allowed_from = Some(r.harvest_allowed_from);
        }
        // Readiness covers live plants; an archived one has no harvest ahead.
        Err(e) if e.code() == ErrorCode::EntityNotFound => {}
        Err(e) => return Err(e),
    }
    d.care_events =
        crate::garden::care::service::care_log(state, tenant, plant_key, None, DIAGNOSTIC_CARE)
            .await?;
    if include_sensors {
        let around = crate::garden::sensors::service::Around::Plant(id);
        let env =
            crate::garden::environment::service::now_around(state, tenant, around, now).await?;
        d.sensors = Some(SensorSnapshot::of(&env));
    }
    Ok(d)
}

/// How many inspections and care log entries the diagnostics show.
const DIAGNOSTIC_INSPECTIONS: i64 = 5;
const DIAGNOSTIC_CARE: i64 = 10;

fn samples(events: &[WateringEvent], pick: impl Fn(&WateringEvent) -> Option<f64>) -> Vec<Sample> {
    events
        .iter()
        .filter_map(|e| {
            pick(e).map(|value| Sample {
                at: e
                    .occurred_at
                    .format(&time::format_description::well_known::Rfc3339)
                    .unwrap_or_default(),
                value,
            })
        })
        .collect()
}

/// Assembles the diagnosis from what one snapshot read (`window` oldest first, `last` newest
/// first) and the plan's targets.
pub fn build_diagnostics(
    plant: DiagnosedPlant,
    days: i64,
    from: OffsetDateTime,
    to: OffsetDateTime,
    window: Vec<WateringEvent>,
    last: Vec<WateringEvent>,
    targets: Option<PhaseTargets>,
) -> Diagnostics {
    use feeding_diagnostics::series;
    let ec = TripleSeries {
        input: series(samples(&window, |e| e.ec_before_ms)),
        post_feed: series(samples(&window, |e| e.ec_after_ms)),
        runoff: series(samples(&window, |e| e.runoff_ec_ms)),
    };
    let ph = TripleSeries {
        input: series(samples(&window, |e| e.ph_before)),
        post_feed: series(samples(&window, |e| e.ph_after)),
        runoff: series(samples(&window, |e| e.runoff_ph)),
    };
    let points: Vec<RunoffPoint> = window
        .iter()
        .filter_map(|e| {
            e.runoff_analysis.as_ref().map(|a| RunoffPoint {
                at: e.occurred_at,
                event_key: e.key,
                ec_delta_ms: a.ec_delta_ms,
                ec_status: a.ec_status.clone(),
                overall: a.overall.clone(),
            })
        })
        .collect();
    let latest = window.iter().rev().find_map(|e| e.runoff_analysis.clone());
    let runoff_trend = RunoffTrend {
        ec_delta: series(samples(&window, |e| {
            e.runoff_analysis.as_ref().map(|a| a.ec_delta_ms)
        })),
        points,
        latest: latest.clone(),
    };
    let measured_ec = window.iter().rev().find_map(WateringEvent::fed_ec);
    let measured_ph = window.iter().rev().find_map(WateringEvent::fed_ph);
    let comparison =
        feeding_diagnostics::compare_targets(targets.as_ref(), measured_ec, measured_ph);
    let mut warnings = Vec::new();
    if plant.archived {
        warnings.push(DiagnosticWarning {
            source: "plant".into(),
            message: "The plant is archived.".into(),
        });
    }
    if let Some(a) = &latest
        && a.overall != "good"
    {
        for r in &a.recommendations {
            warnings.push(DiagnosticWarning {
                source: "runoff".into(),
                message: r.clone(),
            });
        }
    }
    for w in comparison.warnings() {
        warnings.push(DiagnosticWarning {
            source: "plan".into(),
            message: w,
        });
    }
    Diagnostics {
        plant,
        window: Window {
            days,
            from,
            to,
            event_count: window.len(),
        },
        last_feedings: last,
        ec,
        ph,
        runoff_trend,
        plan_targets: targets.map(PlanTargets::from),
        targets_vs_measured: comparison,
        warnings,
        inspections: Vec::new(),
        safety_intervals: Vec::new(),
        harvest_allowed_from: None,
        care_events: Vec::new(),
        sensors: None,
    }
}
