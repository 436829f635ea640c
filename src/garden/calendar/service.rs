//! Use cases of the calendar, shared by the REST routes, the iCal feed and the MCP tool.

use std::collections::HashMap;

use serde_json::Value;
use time::{Date, Duration};
use uuid::Uuid;

use super::model::{
    BarView, FrostBasis, FrostView, GardenSettings, SowingCalendar, SowingItem, Window,
};
use super::repo;
use crate::catalog::engine::service as catalog;
use crate::catalog::species::model::SPECIES;
use crate::error::{AppError, ErrorCode, ErrorDetail};
use crate::garden::contracts::CalendarEvent;
use crate::garden::plants::catalog::sequence_of;
use crate::rules::sowing::{self, Frost, Hemisphere, SowingInput};
use crate::state::AppState;
use crate::tenancy::{TenantRecord, TenantTx};

/// The events other capabilities offer through `service::calendar_events(tx, from, to)`
/// (`garden::contracts`). Adding a source is one line here.
async fn offered_events(
    tx: &mut TenantTx,
    from: Date,
    to: Date,
) -> Result<Vec<CalendarEvent>, AppError> {
    let mut all: Vec<CalendarEvent> = Vec::new();
    all.extend(crate::garden::tasks::service::calendar_events(tx, from, to).await?);
    all.extend(crate::garden::care::service::calendar_events(tx, from, to).await?);
    all.extend(crate::garden::harvest::service::calendar_events(tx, from, to).await?);
    Ok(all)
}

/// Every event of the garden that touches the window, ordered by day, kind and UID.
pub async fn events(
    state: &AppState,
    tenant: &TenantRecord,
    w: Window,
) -> Result<Vec<CalendarEvent>, AppError> {
    let mut tx = TenantTx::snapshot(state, tenant).await?;
    let entries = repo::phase_entries(&mut tx, w.from, w.to).await?;
    let live = repo::live_phases(&mut tx).await?;
    let species = repo::species_counts(&mut tx, None).await?;
    let repo::Settings {
        hardiness_zone: zone,
        timezone,
        frost: own_frost,
    } = repo::settings(&mut tx).await?;
    let mut all = offered_events(&mut tx, w.from, w.to).await?;
    tx.commit().await?;

    for e in entries {
        all.push(CalendarEvent {
            uid: format!("phase:{}", e.id),
            kind: "phase",
            date: e.entered_on,
            end_date: None,
            title: format!("{}: {}", e.plant_name, display(&e.phase_name, &e.phase_key)),
            plant_key: Some(e.plant_id),
            detail: Some(format!("entered phase {}", e.phase_key)),
        });
    }
    all.extend(expected_transitions(state, &live).await?);
    let plan = frost_plan(
        state,
        &own_frost,
        timezone.as_deref(),
        None,
        zone.as_deref(),
    )
    .await?;
    let frosts = plan.by_year(w.from.year()..=w.to.year());
    let detail = format!(
        "sowing window; frost dates: {}",
        plan.basis.text(plan.hemisphere)
    );
    for (key, _) in &species {
        let Some(doc) = species_doc(state, key).await? else {
            continue;
        };
        let input = sowing_input(&doc);
        let name = common_name(&doc).unwrap_or_else(|| key.clone());
        for (year, frost) in &frosts {
            for bar in sowing::bars(&input, *year, frost) {
                let title = match bar.phase {
                    "indoor_sowing" => format!("Sow {name} indoors"),
                    "outdoor_planting" => format!("Sow or plant out {name}"),
                    _ => continue,
                };
                all.push(CalendarEvent {
                    uid: format!("sowing:{key}:{}:{}", bar.phase, bar.start_date),
                    kind: "sowing",
                    date: bar.start_date,
                    end_date: Some(bar.end_date),
                    title,
                    plant_key: None,
                    detail: Some(detail.clone()),
                });
            }
        }
    }
    all.retain(|e| w.touches(e.date, e.end_date));
    all.sort_by(|a, b| (a.date, a.kind, &a.uid).cmp(&(b.date, b.kind, &b.uid)));
    all.dedup_by(|a, b| a.uid == b.uid);
    Ok(all)
}

fn display(name: &str, key: &str) -> String {
    if name.is_empty() {
        key.to_owned()
    } else {
        name.to_owned()
    }
}

/// The day each live plant is expected to leave its phase (entered + the phase's effective
/// duration in its sequence), for phases that are not terminal.
async fn expected_transitions(
    state: &AppState,
    live: &[repo::LivePhase],
) -> Result<Vec<CalendarEvent>, AppError> {
    let mut sequences = HashMap::new();
    let mut out = Vec::new();
    for p in live {
        if !sequences.contains_key(&p.species_key) {
            let s = sequence_of(state, &p.species_key).await?;
            sequences.insert(p.species_key.clone(), s);
        }
        let Some(Some(seq)) = sequences.get(&p.species_key) else {
            continue;
        };
        let mut entries: Vec<_> = seq.entries.iter().collect();
        entries.sort_by_key(|e| e.order);
        let Some(i) = entries.iter().position(|e| e.phase_key == p.phase_key) else {
            continue;
        };
        let current = entries[i];
        let Some(next) = entries.get(i + 1) else {
            continue;
        };
        if current.terminal || current.effective_duration_days <= 0 {
            continue;
        }
        let Some(day) = p
            .started_on
            .checked_add(Duration::days(current.effective_duration_days))
        else {
            continue;
        };
        out.push(CalendarEvent {
            uid: format!("phase_expected:{}:{}:{}", p.plant_id, p.cycle, p.phase_key),
            kind: "phase",
            date: day,
            end_date: None,
            title: format!(
                "{}: {} expected",
                p.plant_name,
                display(&next.phase_name, &next.phase_key)
            ),
            plant_key: Some(p.plant_id),
            detail: Some(format!(
                "{} days of {} end",
                current.effective_duration_days,
                display(&current.phase_name, &current.phase_key)
            )),
        });
    }
    Ok(out)
}

async fn species_doc(state: &AppState, key: &str) -> Result<Option<Value>, AppError> {
    match catalog::get(state, &SPECIES, key).await {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.code() == ErrorCode::EntityNotFound => Ok(None),
        Err(e) => Err(e),
    }
}

fn months(doc: &Value, field: &str) -> Vec<u8> {
    doc.get(field)
        .and_then(Value::as_array)
        .map(|l| {
            l.iter()
                .filter_map(Value::as_u64)
                .filter_map(|m| u8::try_from(m).ok())
                .collect()
        })
        .unwrap_or_default()
}

fn common_name(doc: &Value) -> Option<String> {
    doc.get("common_names_en")
        .and_then(|l| l.get(0))
        .and_then(Value::as_str)
        .map(str::to_owned)
}

fn sowing_input(doc: &Value) -> SowingInput {
    SowingInput {
        indoor_months: months(doc, "sowing_indoor_months"),
        direct_sow_months: months(doc, "direct_sow_months"),
        bloom_months: months(doc, "bloom_months"),
        harvest_months: months(doc, "harvest_months"),
        frost_sensitive: doc.get("frost_sensitivity").and_then(Value::as_str) == Some("sensitive"),
        ornamental: doc.get("allows_harvest").and_then(Value::as_bool) == Some(false),
    }
}

/// The frost dates a calendar uses and where they come from.
struct FrostPlan {
    hemisphere: Hemisphere,
    last: Option<String>,
    first: Option<String>,
    basis: FrostBasis,
}

impl FrostPlan {
    /// The frost dates of each year.
    fn by_year(&self, years: std::ops::RangeInclusive<i32>) -> Vec<(i32, Frost)> {
        years
            .filter_map(|y| {
                let f = sowing::frost_in(
                    y,
                    self.hemisphere,
                    self.last.as_deref(),
                    self.first.as_deref(),
                )?;
                Some((y, f))
            })
            .collect()
    }
}

/// The garden's frost plan: the zone the request names explicitly wins (an estimate); else the
/// garden's own last spring frost; else the estimate of the fallback zone (the site's or the
/// garden's); else the hemisphere's reference. Zone estimates are northern dates and are not
/// used in the southern hemisphere.
async fn frost_plan(
    state: &AppState,
    own: &repo::FrostSettings,
    timezone: Option<&str>,
    explicit_zone: Option<&str>,
    fallback_zone: Option<&str>,
) -> Result<FrostPlan, AppError> {
    let hemisphere = Hemisphere::of_garden(own.hemisphere.as_deref(), timezone);
    let own_first = if explicit_zone.is_none() {
        own.first_autumn_frost.clone()
    } else {
        None
    };
    if explicit_zone.is_none()
        && let Some(last) = &own.last_spring_frost
    {
        return Ok(FrostPlan {
            hemisphere,
            last: Some(last.clone()),
            first: own_first,
            basis: FrostBasis::Garden,
        });
    }
    let zone = explicit_zone.or(fallback_zone);
    if let (Some(z), Hemisphere::North) = (zone, hemisphere) {
        let zones = crate::catalog::zones::service::zones(state).await?;
        if let Some(h) = zones.into_iter().find(|h| h.zone == z)
            && let Some(last) = h.typical_last_frost
        {
            return Ok(FrostPlan {
                hemisphere,
                last: Some(last),
                first: own_first.or(h.typical_first_frost),
                basis: FrostBasis::Zone(z.to_owned()),
            });
        }
    }
    Ok(FrostPlan {
        hemisphere,
        last: None,
        first: own_first,
        basis: FrostBasis::Default,
    })
}

/// What the sowing calendar is asked for.
#[derive(Debug, Clone, Default)]
pub struct SowingQuery {
    /// A zone `1a`…`13b`; else the site's (with `site_key`), else the garden's.
    pub zone: Option<String>,
    /// Only the species growing at this site (plants at its locations), on the site's zone
    /// when it has one.
    pub site_key: Option<String>,
    /// Only this species (key); it need not grow in the garden.
    pub species_key: Option<String>,
    /// 2000–2100; else the current year.
    pub year: Option<i32>,
}

/// The sowing calendar of the garden's species (or one species) for the zone and year.
pub async fn sowing_calendar(
    state: &AppState,
    tenant: &TenantRecord,
    q: &SowingQuery,
    prefix: &str,
) -> Result<SowingCalendar, AppError> {
    let field = |n: &str| {
        if prefix.is_empty() {
            n.to_owned()
        } else {
            format!("{prefix}.{n}")
        }
    };
    let mut errors = Vec::new();
    if let Some(z) = &q.zone
        && !crate::rules::zones::is_zone(z)
    {
        errors.push(ErrorDetail::new(
            field("zone"),
            "must be a hardiness zone 1a…13b",
            "value_error",
        ));
    }
    if let Some(y) = q.year
        && !(2000..=2100).contains(&y)
    {
        errors.push(ErrorDetail::new(
            field("year"),
            "must be between 2000 and 2100",
            "value_error",
        ));
    }
    if !errors.is_empty() {
        return Err(AppError::validation(errors));
    }
    // A key that is not a UUID names no site: the same 404 as one of another garden.
    let site = match &q.site_key {
        None => None,
        Some(k) => Some(Uuid::parse_str(k.trim()).map_err(|_| AppError::not_found("site"))?),
    };
    let year = q
        .year
        .unwrap_or_else(|| time::OffsetDateTime::now_utc().year());
    let mut tx = TenantTx::snapshot(state, tenant).await?;
    let site_zone = match site {
        None => None,
        Some(id) => repo::site_zone(&mut tx, id)
            .await?
            .ok_or_else(|| AppError::not_found("site"))?,
    };
    let repo::Settings {
        hardiness_zone: garden_zone,
        timezone,
        frost: own_frost,
    } = repo::settings(&mut tx).await?;
    let counts = repo::species_counts(&mut tx, site).await?;
    tx.commit().await?;
    let zone = q.zone.clone().or(site_zone).or(garden_zone);
    let plan = frost_plan(
        state,
        &own_frost,
        timezone.as_deref(),
        q.zone.as_deref(),
        zone.as_deref(),
    )
    .await?;
    let frosts = plan.by_year(year..=year);
    let Some((_, frost)) = frosts.first().copied() else {
        return Err(AppError::internal("no frost dates for a valid year"));
    };
    let species: Vec<(String, i64)> = match &q.species_key {
        Some(k) => {
            let n = counts.iter().find(|(s, _)| s == k).map_or(0, |(_, n)| *n);
            vec![(k.clone(), n)]
        }
        None => counts,
    };
    let mut items = Vec::new();
    for (key, n) in species {
        let doc = match species_doc(state, &key).await? {
            Some(d) => d,
            // An unknown species asked for by name is a 404; one of the garden's plants
            // whose species left the catalogue is skipped.
            None if q.species_key.is_some() => return Err(AppError::not_found("species")),
            None => continue,
        };
        let bars = sowing::bars(&sowing_input(&doc), year, &frost);
        items.push(SowingItem {
            species_key: key,
            species_name: doc
                .get("scientific_name")
                .and_then(Value::as_str)
                .map(str::to_owned),
            common_name: common_name(&doc),
            plant_count: n,
            bars: bars.iter().map(BarView::from).collect(),
        });
    }
    items.sort_by(|a, b| {
        let first = |i: &SowingItem| i.bars.first().map(|b| b.start_date.clone());
        (first(a), &a.species_key).cmp(&(first(b), &b.species_key))
    });
    Ok(SowingCalendar {
        year,
        zone,
        frost: FrostView::new(&frost, &plan.basis),
        count: items.len(),
        items,
    })
}

pub async fn settings(state: &AppState, tenant: &TenantRecord) -> Result<GardenSettings, AppError> {
    let mut tx = TenantTx::read(state, tenant).await?;
    let repo::Settings {
        hardiness_zone: zone,
        timezone,
        frost,
    } = repo::settings(&mut tx).await?;
    tx.commit().await?;
    Ok(GardenSettings {
        hardiness_zone: zone,
        timezone,
        hemisphere: frost.hemisphere,
        last_spring_frost: frost.last_spring_frost,
        first_autumn_frost: frost.first_autumn_frost,
    })
}

/// The garden's time zone (UTC when none is set, or when the stored name is no longer known).
pub async fn garden_time_zone(tx: &mut TenantTx) -> Result<(String, jiff::tz::TimeZone), AppError> {
    let name = repo::timezone(tx).await?;
    Ok(name
        .and_then(|n| super::model::time_zone(&n).map(|tz| (n, tz)))
        .unwrap_or_else(|| ("UTC".to_owned(), jiff::tz::TimeZone::UTC)))
}

pub async fn put_settings(
    state: &AppState,
    tenant: &TenantRecord,
    s: &GardenSettings,
) -> Result<GardenSettings, AppError> {
    let mut tx = TenantTx::begin(state, tenant).await?;
    repo::set_zone(&mut tx, s.hardiness_zone.as_deref()).await?;
    repo::set_timezone(&mut tx, s.timezone.as_deref()).await?;
    repo::set_frost_settings(
        &mut tx,
        &repo::FrostSettings {
            hemisphere: s.hemisphere.clone(),
            last_spring_frost: s.last_spring_frost.clone(),
            first_autumn_frost: s.first_autumn_frost.clone(),
        },
    )
    .await?;
    tx.commit().await?;
    Ok(s.clone())
}
