//! Use cases of care reminders, shared by the REST routes, the MCP tools and the calendar.

use std::collections::HashMap;

use time::{Date, Duration, OffsetDateTime};
use uuid::Uuid;

use super::model::*;
use super::repo::{self, NewProfile, ReminderRow};
use crate::catalog::engine::repo::Conditions;
use crate::catalog::engine::service as catalogue;
use crate::catalog::families::model::FAMILY;
use crate::catalog::overwintering::model::PROFILE as OVERWINTERING;
use crate::catalog::phases::model::PHASE;
use crate::catalog::species::model::SPECIES;
use crate::error::{AppError, ErrorDetail};
use crate::garden::contracts::CalendarEvent;
use crate::garden::tasks::model::date_str;
use crate::rules::care::{self as rules, Hemisphere, Urgency};
use crate::state::AppState;
use crate::tenancy::{TenantRecord, TenantTx};
use crate::values::page::PageRequest;

pub const LOG_MAX_LIMIT: i64 = 200;
/// Projected occurrences of one reminder in a calendar window, at most.
const PROJECTION_MAX: usize = 400;

pub fn today() -> Date {
    OffsetDateTime::now_utc().date()
}

fn parse_key(key: &str, what: &str) -> Result<Uuid, AppError> {
    Uuid::parse_str(key.trim()).map_err(|_| AppError::not_found(what))
}

/// What a species gives a profile: its watering interval, its family's name and its
/// overwintering profile (winter action and month, spring action and month).
#[derive(Debug, Clone, Default)]
struct SpeciesCare {
    watering_days: Option<i32>,
    scientific_name: Option<String>,
    family_name: Option<String>,
    winter: Option<(String, i32)>,
    spring: Option<(String, i32)>,
}

fn text(v: &serde_json::Value, f: &str) -> Option<String> {
    v.get(f)
        .and_then(serde_json::Value::as_str)
        .map(str::to_owned)
}

fn int(v: &serde_json::Value, f: &str) -> Option<i32> {
    v.get(f)
        .and_then(serde_json::Value::as_i64)
        .and_then(|n| i32::try_from(n).ok())
}

async fn species_care(state: &AppState, species_key: &str) -> Result<SpeciesCare, AppError> {
    let Ok(id) = Uuid::parse_str(species_key) else {
        return Ok(SpeciesCare::default());
    };
    let mut db = state.platform_pool().acquire().await?;
    let species = match catalogue::get_by_id(&mut db, &SPECIES, id).await {
        Ok(v) => v,
        Err(e) if e.code() == crate::error::ErrorCode::EntityNotFound => {
            return Ok(SpeciesCare::default());
        }
        Err(e) => return Err(e),
    };
    let mut out = SpeciesCare {
        watering_days: int(&species, "watering_interval_days"),
        scientific_name: text(&species, "scientific_name"),
        ..SpeciesCare::default()
    };
    if let Some(fam) = text(&species, "family_key").and_then(|k| Uuid::parse_str(&k).ok()) {
        match catalogue::get_by_id(&mut db, &FAMILY, fam).await {
            Ok(f) => out.family_name = text(&f, "name"),
            Err(e) if e.code() == crate::error::ErrorCode::EntityNotFound => {}
            Err(e) => return Err(e),
        }
    }
    let mut c = Conditions::default();
    c.links_to("species_key", id);
    if let Some(p) = catalogue::all(&mut db, &OVERWINTERING, &c).await?.first() {
        out.winter = text(p, "winter_action")
            .filter(|a| a != "none")
            .zip(int(p, "winter_action_month"));
        out.spring = text(p, "spring_action")
            .filter(|a| a != "none")
            .zip(int(p, "spring_action_month"));
    }
    Ok(out)
}

/// The garden's hemisphere (domain 2.8's winter and the feeding months follow it). A garden
/// records no place of its own, so the time zone of its first admin (their preferences, else
/// their account) tells; a zone not known to lie south of the equator, `UTC` included, reads
/// as the north (see the README).
pub async fn hemisphere(state: &AppState, tenant: &TenantRecord) -> Result<Hemisphere, AppError> {
    let tz: Option<String> = sqlx::query_scalar(
        "SELECT coalesce(p.timezone, u.timezone) FROM platform.memberships m \
         JOIN platform.users u ON u.id = m.user_id \
         LEFT JOIN platform.user_preferences p ON p.user_id = m.user_id \
         WHERE m.tenant_id = $1 AND m.role = 'admin' ORDER BY m.created_at, m.user_id LIMIT 1",
    )
    .bind(tenant.id)
    .fetch_optional(state.platform_pool())
    .await?;
    Ok(tz
        .as_deref()
        .and_then(Hemisphere::of_timezone)
        .unwrap_or(Hemisphere::North))
}

/// What a plant's phase says about watering: the phase definition's name and its watering
/// interval (both `None` without a phase or for an unknown one).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct PhaseWatering {
    name: Option<String>,
    days: Option<i32>,
}

/// The catalogue's phase definition a plant is in, as far as watering goes.
async fn phase_watering(
    state: &AppState,
    phase_key: Option<&str>,
) -> Result<PhaseWatering, AppError> {
    let Some(id) = phase_key.and_then(|k| Uuid::parse_str(k).ok()) else {
        return Ok(PhaseWatering::default());
    };
    let mut db = state.platform_pool().acquire().await?;
    match catalogue::get_by_id(&mut db, &PHASE, id).await {
        Ok(v) => Ok(PhaseWatering {
            name: text(&v, "name"),
            days: int(&v, "watering_interval_days"),
        }),
        Err(e) if e.code() == crate::error::ErrorCode::EntityNotFound => {
            Ok(PhaseWatering::default())
        }
        Err(e) => Err(e),
    }
}

fn profile_for(plant_id: Uuid, care: &SpeciesCare, hemisphere: Hemisphere) -> NewProfile {
    let d = rules::derive(
        care.watering_days,
        care.scientific_name.as_deref(),
        care.family_name.as_deref(),
    );
    // The presets' feeding months are the northern calendar's; the south feeds six months on.
    let (from, to) = d.preset.fertilizing_months;
    NewProfile {
        plant_id,
        style: d.preset.style,
        source: d.source.as_str(),
        watering: d.watering_days,
        multiplier: d.preset.winter_multiplier,
        fertilizing: d.preset.fertilizing_days,
        fert_from: i32::from(hemisphere.shift_month(from)),
        fert_to: i32::from(hemisphere.shift_month(to)),
        repot_months: d.preset.repotting_months,
        pruning: d.preset.pruning_days,
        pest_check: d.preset.pest_check_days,
        winter_action: care.winter.as_ref().map(|w| w.0.clone()),
        winter_month: care.winter.as_ref().map(|w| w.1),
        spring_action: care.spring.as_ref().map(|w| w.0.clone()),
        spring_month: care.spring.as_ref().map(|w| w.1),
    }
}

/// The first reminders of a new profile: watering, fertilising and pest check are due at
/// once (domain 2.8: without a confirmation, the profile's creation day); repotting and
/// pruning one interval later (a plant is potted and shaped when it is added); overwintering
/// on the first day of the next winter-action month.
fn first_reminders(
    p: &NewProfile,
    phase: &PhaseWatering,
    day: Date,
    hemisphere: Hemisphere,
) -> Vec<(Uuid, &'static str, Date, i32)> {
    let mut out = vec![
        (
            p.plant_id,
            "watering",
            day,
            rules::phase_watering_interval(
                phase.name.as_deref(),
                phase.days,
                p.watering,
                None,
                p.multiplier,
                day,
                hemisphere,
            ),
        ),
        (p.plant_id, "fertilizing", day, p.fertilizing),
        (p.plant_id, "pest_check", day, p.pest_check),
        (
            p.plant_id,
            "repotting",
            day + Duration::days(i64::from(p.repot_months) * 30),
            p.repot_months * 30,
        ),
    ];
    if let Some(d) = p.pruning {
        out.push((p.plant_id, "pruning", day + Duration::days(i64::from(d)), d));
    }
    if let Some(m) = p.winter_month.and_then(|m| u8::try_from(m).ok()) {
        out.push((
            p.plant_id,
            "overwintering",
            rules::next_month_start(m, day),
            365,
        ));
    }
    out
}

/// Gives every live plant without a profile one (with its first reminders); a no-op, one
/// cheap statement, when all have one.
pub async fn ensure_profiles(state: &AppState, tenant: &TenantRecord) -> Result<(), AppError> {
    let mut tx = TenantTx::read(state, tenant).await?;
    let missing = repo::missing_profiles(&mut tx).await?;
    tx.commit().await?;
    if missing.is_empty() {
        return Ok(());
    }
    let mut by_species: HashMap<String, SpeciesCare> = HashMap::new();
    let mut by_phase: HashMap<String, PhaseWatering> = HashMap::new();
    for (_, s, phase) in &missing {
        if !by_species.contains_key(s) {
            let care = species_care(state, s).await?;
            by_species.insert(s.clone(), care);
        }
        if let Some(k) = phase
            && !by_phase.contains_key(k)
        {
            let water = phase_watering(state, Some(k)).await?;
            by_phase.insert(k.clone(), water);
        }
    }
    let day = today();
    let hemisphere = hemisphere(state, tenant).await?;
    let profiles: Vec<(NewProfile, PhaseWatering)> = missing
        .iter()
        .map(|(id, s, phase)| {
            let care = by_species.get(s).cloned().unwrap_or_default();
            let water = phase
                .as_ref()
                .and_then(|k| by_phase.get(k).cloned())
                .unwrap_or_default();
            (profile_for(*id, &care, hemisphere), water)
        })
        .collect();
    let reminders: Vec<_> = profiles
        .iter()
        .flat_map(|(p, water)| first_reminders(p, water, day, hemisphere))
        .collect();
    let profiles: Vec<NewProfile> = profiles.into_iter().map(|(p, _)| p).collect();
    let mut tx = TenantTx::begin(state, tenant).await?;
    repo::insert_profiles(&mut tx, &profiles).await?;
    // Only for plants whose profile this call stored (or that still lack reminders).
    repo::insert_reminders(&mut tx, &reminders).await?;
    tx.commit().await?;
    Ok(())
}

fn reminder_view(r: &ReminderRow, today: Date) -> Reminder {
    let u = Urgency::of(r.due_on, today);
    Reminder {
        reminder_key: r.id,
        plant_key: r.plant_id,
        plant_name: r.plant_name.clone(),
        species_key: r.species_key.clone(),
        reminder_type: r.reminder_type.clone(),
        due_on: date_str(r.due_on),
        days_until_due: (r.due_on - today).whole_days(),
        urgency: u.as_str().to_owned(),
        interval_days: r.interval_days,
    }
}

fn urgency_error(field: &str) -> AppError {
    AppError::validation(vec![ErrorDetail::new(
        field,
        format!("must be one of: {}", rules::URGENCY_FILTERS.join(", ")),
        "value_error",
    )])
}

/// Reminders per urgency group a page holds at most (`limit`), and its default.
pub const DUE_MAX_LIMIT: i64 = 500;

/// Due reminders of the garden's live plants grouped by urgency. `urgency`: actionable
/// (overdue and due today, the default), all, or one bucket; `field` names the argument in
/// errors. `page` applies within each group (the most overdue first); `counts` and `total`
/// tell how many each group and the whole answer hold over all pages.
pub async fn due_reminders(
    state: &AppState,
    tenant: &TenantRecord,
    urgency: &str,
    field: &str,
    page: PageRequest,
) -> Result<DueReminders, AppError> {
    due_on(
        state,
        tenant,
        urgency,
        field,
        page,
        today(),
        Withheld::Listed,
    )
    .await
}

/// [`due_reminders`] as seen on `day`, the lists alone (`watering_withheld` left empty): the
/// digest and Today ask with the reader's local day (their time zone), which is not the UTC
/// day for several hours of every day, and show no withheld waterings.
pub async fn due_reminders_on(
    state: &AppState,
    tenant: &TenantRecord,
    urgency: &str,
    field: &str,
    page: PageRequest,
    day: Date,
) -> Result<DueReminders, AppError> {
    due_on(state, tenant, urgency, field, page, day, Withheld::Left).await
}

/// Whether a due read also lists the waterings that the plants' phases withhold.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Withheld {
    Listed,
    Left,
}

async fn due_on(
    state: &AppState,
    tenant: &TenantRecord,
    urgency: &str,
    field: &str,
    page: PageRequest,
    day: Date,
    withheld: Withheld,
) -> Result<DueReminders, AppError> {
    let buckets = rules::urgency_filter(urgency).ok_or_else(|| urgency_error(field))?;
    ensure_profiles(state, tenant).await?;
    // The latest day a requested bucket reaches: due today, upcoming (+2), or all.
    let until = if buckets.contains(&Urgency::NotDue) {
        None
    } else if buckets.contains(&Urgency::Upcoming) {
        Some(day + Duration::days(2))
    } else {
        Some(day)
    };
    let ranks: Vec<i16> = buckets.iter().map(|u| u.rank()).collect();
    let mut tx = TenantTx::read(state, tenant).await?;
    let found = repo::due_page(&mut tx, day, until, &ranks, page.skip, page.limit).await?;
    let (withheld, withheld_total) = match withheld {
        Withheld::Listed => repo::watering_withheld(&mut tx, None, page.limit).await?,
        Withheld::Left => (Vec::new(), 0),
    };
    tx.commit().await?;
    let mut groups: HashMap<Urgency, Vec<Reminder>> = HashMap::new();
    for (_, r) in &found.rows {
        groups
            .entry(Urgency::of(r.due_on, day))
            .or_default()
            .push(reminder_view(r, day));
    }
    let count_of = |u: Urgency| {
        found
            .counts
            .iter()
            .find(|(rank, _)| *rank == u.rank())
            .map_or(0, |(_, n)| *n)
    };
    let mut take = |u: Urgency| {
        buckets
            .contains(&u)
            .then(|| groups.remove(&u).unwrap_or_default())
    };
    let counted = |u: Urgency| buckets.contains(&u).then(|| count_of(u));
    Ok(DueReminders {
        today: date_str(day),
        urgency: urgency.to_owned(),
        total: found.counts.iter().map(|(_, n)| n).sum(),
        skip: page.skip,
        limit: page.limit,
        counts: DueCounts {
            overdue: counted(Urgency::Overdue),
            due_today: counted(Urgency::DueToday),
            upcoming: counted(Urgency::Upcoming),
            not_due: counted(Urgency::NotDue),
        },
        overdue: take(Urgency::Overdue),
        due_today: take(Urgency::DueToday),
        upcoming: take(Urgency::Upcoming),
        not_due: take(Urgency::NotDue),
        watering_withheld: withheld.iter().filter_map(withheld_view).collect(),
        watering_withheld_total: withheld_total,
    })
}

/// A held-back watering with its reason (rules::care::WATERING_WITHHELD).
fn withheld_view(r: &repo::WithheldRow) -> Option<WateringWithheld> {
    let reason = rules::watering_withheld(Some(&r.phase_name))?;
    Some(WateringWithheld {
        plant_key: r.plant_id,
        plant_name: r.plant_name.clone(),
        phase: r.phase_name.clone(),
        reason: reason.to_owned(),
    })
}

/// A plant's profile and every reminder it has now (404 for an unknown plant; an archived
/// plant keeps its profile but has no reminders).
pub async fn plant_care(
    state: &AppState,
    tenant: &TenantRecord,
    plant_key: &str,
) -> Result<PlantCare, AppError> {
    let plant = parse_key(plant_key, "plant")?;
    // An unknown plant is refused before anything is written.
    require_plant(state, tenant, plant).await?;
    ensure_profiles(state, tenant).await?;
    let mut tx = TenantTx::snapshot(state, tenant).await?;
    let profile = repo::profile(&mut tx, plant)
        .await?
        .ok_or_else(|| AppError::not_found("care profile"))?;
    let day = today();
    let reminders = repo::due(&mut tx, day, None, Some(plant)).await?;
    let (withheld, _) = repo::watering_withheld(&mut tx, Some(plant), 1).await?;
    tx.commit().await?;
    Ok(PlantCare {
        profile,
        reminders: reminders.iter().map(|r| reminder_view(r, day)).collect(),
        watering_withheld: withheld.first().and_then(withheld_view),
    })
}

/// 404 unless the plant exists (archived included).
async fn require_plant(
    state: &AppState,
    tenant: &TenantRecord,
    plant: Uuid,
) -> Result<(), AppError> {
    let mut tx = TenantTx::read(state, tenant).await?;
    let found = repo::plant_exists(&mut tx, plant).await?;
    tx.commit().await?;
    found
        .map(|_| ())
        .ok_or_else(|| AppError::not_found("plant"))
}

/// The interval of the next reminder of a type, counted from `day` (`phase`: the plant's
/// current phase, whose watering interval comes first; winter rest waters at the plant's own
/// interval times the winter multiplier).
fn interval_for(
    p: &CareProfile,
    reminder_type: &str,
    day: Date,
    phase: &PhaseWatering,
    hemisphere: Hemisphere,
) -> i32 {
    match reminder_type {
        "watering" => rules::phase_watering_interval(
            phase.name.as_deref(),
            phase.days,
            p.watering_interval_days,
            p.watering_interval_learned,
            p.winter_watering_multiplier,
            day,
            hemisphere,
        ),
        "fertilizing" => p
            .fertilizing_interval_learned
            .unwrap_or(p.fertilizing_interval_days),
        "repotting" => p.repotting_interval_months * 30,
        "pruning" => p.pruning_interval_days.unwrap_or(90),
        "pest_check" => p.pest_check_interval_days,
        "overwintering" => {
            // The same month next year.
            let next = p
                .winter_action_month
                .and_then(|m| u8::try_from(m).ok())
                .map(|m| rules::next_month_start(m, day + Duration::days(32)));
            next.map_or(365, |n| (n - day).whole_days().clamp(1, 1830) as i32)
        }
        _ => 7,
    }
}

/// What to do to a reminder.
#[derive(Debug, Clone)]
pub enum CareAction {
    Confirm { confirmed_on: Option<Date> },
    Snooze { days: i32 },
}

/// Which reminder: by its key with the plant it must belong to (REST), or by plant and type
/// (tools).
#[derive(Debug, Clone)]
pub enum Target<'a> {
    Key {
        reminder_key: &'a str,
        plant_key: Uuid,
    },
    PlantType {
        plant_key: &'a str,
        reminder_type: &'a str,
    },
}

/// Confirms or snoozes a reminder; `write: false` checks everything and writes nothing.
/// Confirming moves the due day to the care day plus the interval (learned for watering and
/// fertilising after three confirmations, domain 2.8), logs it, and completes the plant's open
/// care tasks of that type; snoozing moves it to today plus the days.
pub async fn act(
    state: &AppState,
    tenant: &TenantRecord,
    target: Target<'_>,
    action: &CareAction,
    notes: Option<&str>,
    actor: &str,
    write: bool,
) -> Result<CareOutcome, AppError> {
    // A reminder key came from a listing (which made the profiles); a plant named by key may
    // still lack its profile: it gets one, but only once the plant is known to exist.
    if let Target::PlantType { plant_key, .. } = &target {
        require_plant(state, tenant, parse_key(plant_key, "plant")?).await?;
        ensure_profiles(state, tenant).await?;
    }
    let mut tx = TenantTx::begin(state, tenant).await?;
    let row = match target {
        Target::Key {
            reminder_key,
            plant_key,
        } => {
            let id = parse_key(reminder_key, "care reminder")?;
            let row = repo::reminder_by_key(&mut tx, id)
                .await?
                .ok_or_else(|| AppError::not_found("care reminder"))?;
            if row.plant_id != plant_key {
                return Err(AppError::validation(vec![ErrorDetail::new(
                    "body.plant_key",
                    "the reminder belongs to another plant",
                    "value_error",
                )]));
            }
            row
        }
        Target::PlantType {
            plant_key,
            reminder_type,
        } => {
            let plant = parse_key(plant_key, "plant")?;
            if repo::plant_exists(&mut tx, plant).await?.is_none() {
                return Err(AppError::not_found("plant"));
            }
            repo::reminder_of(&mut tx, plant, reminder_type)
                .await?
                .ok_or_else(|| {
                    AppError::validation(vec![ErrorDetail::new(
                        "body.reminder_type",
                        format!("the plant has no {reminder_type} reminder"),
                        "value_error",
                    )])
                })?
        }
    };
    if row.archived {
        return Err(AppError::validation(vec![ErrorDetail::new(
            "body.plant_key",
            "the plant is archived",
            "value_error",
        )]));
    }
    let profile = repo::profile(&mut tx, row.plant_id)
        .await?
        .ok_or_else(|| AppError::not_found("care profile"))?;
    let day = today();
    let (entry, due_on, interval, learned) = match action {
        CareAction::Confirm { confirmed_on } => {
            let on = confirmed_on.unwrap_or(day);
            let mut profile = profile;
            let mut learned = None;
            let adaptive = matches!(row.reminder_type.as_str(), "watering" | "fertilizing");
            if adaptive && profile.adaptive_learning_enabled {
                let mut days =
                    repo::confirmed_days(&mut tx, row.plant_id, &row.reminder_type, 4).await?;
                days.push(on);
                let (base, current) = if row.reminder_type == "watering" {
                    (
                        profile.watering_interval_days,
                        profile.watering_interval_learned,
                    )
                } else {
                    (
                        profile.fertilizing_interval_days,
                        profile.fertilizing_interval_learned,
                    )
                };
                if let Some(n) = rules::adapted_interval(base, current, &days) {
                    repo::set_learned(&mut tx, row.plant_id, &row.reminder_type, n).await?;
                    if row.reminder_type == "watering" {
                        profile.watering_interval_learned = Some(n);
                    } else {
                        profile.fertilizing_interval_learned = Some(n);
                    }
                    learned = Some(n);
                } else {
                    learned = current;
                }
            }
            let (phase, hemisphere) = if row.reminder_type == "watering" {
                let phase = repo::current_phase_key(&mut tx, row.plant_id).await?;
                (
                    phase_watering(state, phase.as_deref()).await?,
                    hemisphere(state, tenant).await?,
                )
            } else {
                (PhaseWatering::default(), Hemisphere::North)
            };
            let interval = interval_for(&profile, &row.reminder_type, on, &phase, hemisphere);
            let entry = repo::insert_entry(
                &mut tx,
                &repo::NewEntry {
                    plant_id: row.plant_id,
                    reminder_type: &row.reminder_type,
                    action: "confirmed",
                    confirmed_on: on,
                    snooze_days: None,
                    interval,
                    notes,
                    actor,
                },
            )
            .await?;
            (
                entry,
                on + Duration::days(i64::from(interval)),
                interval,
                learned,
            )
        }
        CareAction::Snooze { days } => {
            let entry = repo::insert_entry(
                &mut tx,
                &repo::NewEntry {
                    plant_id: row.plant_id,
                    reminder_type: &row.reminder_type,
                    action: "snoozed",
                    confirmed_on: day,
                    snooze_days: Some(*days),
                    interval: row.interval_days,
                    notes,
                    actor,
                },
            )
            .await?;
            (
                entry,
                day + Duration::days(i64::from(*days)),
                row.interval_days,
                None,
            )
        }
    };
    repo::set_due(&mut tx, row.id, due_on, interval).await?;
    let completed_task_keys = if matches!(action, CareAction::Confirm { .. }) {
        repo::complete_care_tasks(&mut tx, row.plant_id, &row.reminder_type).await?
    } else {
        Vec::new()
    };
    if let CareAction::Confirm { confirmed_on } = action {
        crate::garden::webhooks::events::emit(
            &mut tx,
            tenant,
            "care.confirmed",
            serde_json::json!({
                "key": row.id,
                "plant_key": row.plant_id,
                "reminder_type": row.reminder_type,
                "confirmed_on": confirmed_on.map(|d| d.to_string()),
                "next_due_on": due_on.to_string(),
                "completed_task_keys": completed_task_keys,
            }),
        )
        .await?;
    }
    if write {
        tx.commit().await?;
    } else {
        tx.rollback().await?;
    }
    let updated = ReminderRow {
        due_on,
        interval_days: interval,
        ..row
    };
    Ok(CareOutcome {
        reminder: reminder_view(&updated, day),
        entry,
        learned_interval_days: learned,
        completed_task_keys,
    })
}

/// The care log of a plant, newest first (404 for an unknown plant).
pub async fn care_log(
    state: &AppState,
    tenant: &TenantRecord,
    plant_key: &str,
    reminder_type: Option<&str>,
    limit: i64,
) -> Result<Vec<CareLogEntry>, AppError> {
    let plant = parse_key(plant_key, "plant")?;
    let mut tx = TenantTx::snapshot(state, tenant).await?;
    if repo::plant_exists(&mut tx, plant).await?.is_none() {
        return Err(AppError::not_found("plant"));
    }
    let items = repo::log(&mut tx, plant, reminder_type, limit).await?;
    tx.commit().await?;
    Ok(items)
}

/// The calendar's care events in `[from, to]`: each reminder of a live plant on its due day
/// and its later occurrences one interval apart (`care_reminder:<reminder key>:<date>`), the
/// same guards as the due list (resting plants only pest checks; fertilising in its months).
pub async fn calendar_events(
    tx: &mut TenantTx,
    from: Date,
    to: Date,
) -> Result<Vec<CalendarEvent>, AppError> {
    if from > to {
        return Ok(Vec::new());
    }
    let rows = repo::calendar(tx, from, to).await?;
    let mut out = Vec::new();
    for r in rows {
        let step = i64::from(r.interval_days.max(1));
        let mut day = r.due_on;
        if day < from {
            // Jump to the first occurrence in the window.
            let behind = (from - day).whole_days();
            day += Duration::days(behind.div_euclid(step) * step);
            if day < from {
                day += Duration::days(step);
            }
        }
        let mut n = 0;
        while day <= to && n < PROJECTION_MAX {
            out.push(CalendarEvent {
                uid: format!("care_reminder:{}:{}", r.id, date_str(day)),
                kind: "care_reminder",
                date: day,
                end_date: None,
                title: format!("{}: {}", r.plant_name, r.reminder_type.replace('_', " ")),
                plant_key: Some(r.plant_id),
                detail: Some(format!(
                    "{} every {} day(s)",
                    r.reminder_type, r.interval_days
                )),
            });
            n += 1;
            day += Duration::days(step);
        }
    }
    out.sort_by(|a, b| a.date.cmp(&b.date).then_with(|| a.uid.cmp(&b.uid)));
    Ok(out)
}
