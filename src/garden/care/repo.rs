//! SQL of care profiles, reminders and the care log.

use sqlx::Row;
use sqlx::postgres::PgRow;
use time::{Date, OffsetDateTime};
use uuid::Uuid;

use super::model::*;
use crate::tenancy::TenantTx;

/// Live plants without a profile: key, species key, current phase key.
pub async fn missing_profiles(
    tx: &mut TenantTx,
) -> Result<Vec<(Uuid, String, Option<String>)>, sqlx::Error> {
    let sql = tx.sql(
        "SELECT p.id, p.species_key, p.current_phase_key FROM tenant.plants p \
         WHERE p.archived_at IS NULL \
           AND NOT EXISTS (SELECT 1 FROM tenant.care_profiles c WHERE c.plant_id = p.id)",
    );
    let rows = sqlx::query(sql).fetch_all(tx.conn()).await?;
    rows.iter()
        .map(|r| {
            Ok((
                r.try_get("id")?,
                r.try_get("species_key")?,
                r.try_get("current_phase_key")?,
            ))
        })
        .collect()
}

/// The phase definition key a plant is in now (`None` without a phase).
pub async fn current_phase_key(
    tx: &mut TenantTx,
    plant: Uuid,
) -> Result<Option<String>, sqlx::Error> {
    let sql = tx.sql("SELECT current_phase_key FROM tenant.plants WHERE id = $1");
    Ok(sqlx::query_scalar::<_, Option<String>>(sql)
        .bind(plant)
        .fetch_optional(tx.conn())
        .await?
        .flatten())
}

/// A profile to store.
#[derive(Debug, Clone)]
pub struct NewProfile {
    pub plant_id: Uuid,
    pub style: &'static str,
    pub source: &'static str,
    pub watering: i32,
    pub multiplier: f64,
    pub fertilizing: i32,
    pub fert_from: i32,
    pub fert_to: i32,
    pub repot_months: i32,
    pub pruning: Option<i32>,
    pub pest_check: i32,
    pub winter_action: Option<String>,
    pub winter_month: Option<i32>,
    pub spring_action: Option<String>,
    pub spring_month: Option<i32>,
}

/// Stores profiles (one statement); a plant that got one meanwhile keeps it.
pub async fn insert_profiles(tx: &mut TenantTx, ps: &[NewProfile]) -> Result<(), sqlx::Error> {
    if ps.is_empty() {
        return Ok(());
    }
    let sql = tx.sql(
        "INSERT INTO tenant.care_profiles (plant_id, care_style, source, watering_interval_days, \
           winter_watering_multiplier, fertilizing_interval_days, fertilizing_month_from, \
           fertilizing_month_to, repotting_interval_months, pruning_interval_days, \
           pest_check_interval_days, winter_action, winter_action_month, spring_action, \
           spring_action_month) \
         SELECT * FROM UNNEST($1::uuid[], $2::text[], $3::text[], $4::int[], $5::float8[], \
           $6::int[], $7::int[], $8::int[], $9::int[], $10::int[], $11::int[], $12::text[], \
           $13::int[], $14::text[], $15::int[]) \
         ON CONFLICT (plant_id) DO NOTHING",
    );
    sqlx::query(sql)
        .bind(ps.iter().map(|p| p.plant_id).collect::<Vec<_>>())
        .bind(ps.iter().map(|p| p.style).collect::<Vec<_>>())
        .bind(ps.iter().map(|p| p.source).collect::<Vec<_>>())
        .bind(ps.iter().map(|p| p.watering).collect::<Vec<_>>())
        .bind(ps.iter().map(|p| p.multiplier).collect::<Vec<_>>())
        .bind(ps.iter().map(|p| p.fertilizing).collect::<Vec<_>>())
        .bind(ps.iter().map(|p| p.fert_from).collect::<Vec<_>>())
        .bind(ps.iter().map(|p| p.fert_to).collect::<Vec<_>>())
        .bind(ps.iter().map(|p| p.repot_months).collect::<Vec<_>>())
        .bind(ps.iter().map(|p| p.pruning).collect::<Vec<_>>())
        .bind(ps.iter().map(|p| p.pest_check).collect::<Vec<_>>())
        .bind(
            ps.iter()
                .map(|p| p.winter_action.clone())
                .collect::<Vec<_>>(),
        )
        .bind(ps.iter().map(|p| p.winter_month).collect::<Vec<_>>())
        .bind(
            ps.iter()
                .map(|p| p.spring_action.clone())
                .collect::<Vec<_>>(),
        )
        .bind(ps.iter().map(|p| p.spring_month).collect::<Vec<_>>())
        .execute(tx.conn())
        .await?;
    Ok(())
}

/// Stores reminders (one statement); existing ones stay.
pub async fn insert_reminders(
    tx: &mut TenantTx,
    rs: &[(Uuid, &'static str, Date, i32)],
) -> Result<(), sqlx::Error> {
    if rs.is_empty() {
        return Ok(());
    }
    let sql = tx.sql(
        "INSERT INTO tenant.care_reminders (id, plant_id, reminder_type, due_on, interval_days) \
         SELECT * FROM UNNEST($1::uuid[], $2::uuid[], $3::text[], $4::date[], $5::int[]) \
         ON CONFLICT (plant_id, reminder_type) DO NOTHING",
    );
    sqlx::query(sql)
        .bind(rs.iter().map(|_| Uuid::now_v7()).collect::<Vec<_>>())
        .bind(rs.iter().map(|r| r.0).collect::<Vec<_>>())
        .bind(rs.iter().map(|r| r.1).collect::<Vec<_>>())
        .bind(rs.iter().map(|r| r.2).collect::<Vec<_>>())
        .bind(rs.iter().map(|r| r.3).collect::<Vec<_>>())
        .execute(tx.conn())
        .await?;
    Ok(())
}

const PROFILE_COLUMNS: &str = "plant_id, care_style, source, watering_interval_days, \
    winter_watering_multiplier, fertilizing_interval_days, fertilizing_month_from, \
    fertilizing_month_to, repotting_interval_months, pruning_interval_days, \
    pest_check_interval_days, winter_action, winter_action_month, spring_action, \
    spring_action_month, adaptive_learning_enabled, watering_interval_learned, \
    fertilizing_interval_learned, created_at";

fn decode_profile(r: &PgRow) -> Result<CareProfile, sqlx::Error> {
    Ok(CareProfile {
        plant_key: r.try_get("plant_id")?,
        care_style: r.try_get("care_style")?,
        source: r.try_get("source")?,
        watering_interval_days: r.try_get("watering_interval_days")?,
        winter_watering_multiplier: r.try_get("winter_watering_multiplier")?,
        fertilizing_interval_days: r.try_get("fertilizing_interval_days")?,
        fertilizing_months: [
            r.try_get("fertilizing_month_from")?,
            r.try_get("fertilizing_month_to")?,
        ],
        repotting_interval_months: r.try_get("repotting_interval_months")?,
        pruning_interval_days: r.try_get("pruning_interval_days")?,
        pest_check_interval_days: r.try_get("pest_check_interval_days")?,
        winter_action: r.try_get("winter_action")?,
        winter_action_month: r.try_get("winter_action_month")?,
        spring_action: r.try_get("spring_action")?,
        spring_action_month: r.try_get("spring_action_month")?,
        adaptive_learning_enabled: r.try_get("adaptive_learning_enabled")?,
        watering_interval_learned: r.try_get("watering_interval_learned")?,
        fertilizing_interval_learned: r.try_get("fertilizing_interval_learned")?,
        created_at: r.try_get("created_at")?,
    })
}

pub async fn profile(tx: &mut TenantTx, plant: Uuid) -> Result<Option<CareProfile>, sqlx::Error> {
    let sql = tx.sql(&format!(
        "SELECT {PROFILE_COLUMNS} FROM tenant.care_profiles WHERE plant_id = $1"
    ));
    let row = sqlx::query(sql)
        .bind(plant)
        .fetch_optional(tx.conn())
        .await?;
    row.as_ref().map(decode_profile).transpose()
}

pub async fn set_learned(
    tx: &mut TenantTx,
    plant: Uuid,
    reminder_type: &str,
    days: i32,
) -> Result<(), sqlx::Error> {
    let column = if reminder_type == "watering" {
        "watering_interval_learned"
    } else {
        "fertilizing_interval_learned"
    };
    let sql = tx.sql(&format!(
        "UPDATE tenant.care_profiles SET {column} = $2 WHERE plant_id = $1"
    ));
    sqlx::query(sql)
        .bind(plant)
        .bind(days)
        .execute(tx.conn())
        .await?;
    Ok(())
}

/// A reminder row with its plant.
#[derive(Debug, Clone)]
pub struct ReminderRow {
    pub id: Uuid,
    pub plant_id: Uuid,
    pub plant_name: String,
    pub species_key: String,
    pub reminder_type: String,
    pub due_on: Date,
    pub interval_days: i32,
    pub archived: bool,
}

fn decode_reminder(r: &PgRow) -> Result<ReminderRow, sqlx::Error> {
    Ok(ReminderRow {
        id: r.try_get("id")?,
        plant_id: r.try_get("plant_id")?,
        plant_name: r.try_get("plant_name")?,
        species_key: r.try_get("species_key")?,
        reminder_type: r.try_get("reminder_type")?,
        due_on: r.try_get("due_on")?,
        interval_days: r.try_get("interval_days")?,
        archived: r.try_get("archived")?,
    })
}

const REMINDER_SELECT: &str = "SELECT r.id, r.plant_id, p.name AS plant_name, p.species_key, \
    r.reminder_type, r.due_on, r.interval_days, p.archived_at IS NOT NULL AS archived \
    FROM tenant.care_reminders r JOIN tenant.plants p ON p.id = r.plant_id";

/// The guards applied on reading (domain 2.8): a resting plant only gets pest checks, and
/// watering, which stops only in the phases that withhold it (dry rest, leaf renewal,
/// dormancy: winter rest waters less, not never); fertilising only in the profile's months
/// (`$1` is today).
const GUARDS: &str = "p.archived_at IS NULL \
    AND (r.reminder_type = 'pest_check' \
      OR (r.reminder_type = 'watering' AND NOT (IN_PHASE(WITHHELD))) \
      OR (r.reminder_type <> 'watering' AND NOT (IN_PHASE(RESTING)))) \
    AND (r.reminder_type <> 'fertilizing' OR EXISTS ( \
          SELECT 1 FROM tenant.care_profiles c WHERE c.plant_id = p.id AND CASE \
            WHEN c.fertilizing_month_from <= c.fertilizing_month_to \
              THEN extract(month FROM $1::date) BETWEEN c.fertilizing_month_from AND c.fertilizing_month_to \
            ELSE extract(month FROM $1::date) >= c.fertilizing_month_from \
              OR extract(month FROM $1::date) <= c.fertilizing_month_to END))";

/// A phase name or key in the form the rules match (`rules::care::phase_token`: lower case,
/// spaces and hyphens as underscores) tested against `LIKE` patterns of the rules.
fn phase_like(column: &str, patterns: &[String]) -> String {
    // The patterns are the rules' own constants (phase names, `%` and `\_`), never input.
    let any = patterns
        .iter()
        .map(|p| format!("'{p}'"))
        .collect::<Vec<_>>()
        .join(", ");
    format!("translate(lower({column}), ' -', '__') LIKE ANY (ARRAY[{any}])")
}

/// Whether plant `p` is in a phase matching `patterns`: its open phase history row's name or
/// its current phase key.
fn in_phase(patterns: &[String]) -> String {
    format!(
        "EXISTS (SELECT 1 FROM tenant.plant_phase_history h WHERE h.plant_id = p.id \
           AND h.exited_at IS NULL AND {}) \
         OR {}",
        phase_like("h.phase_name", patterns),
        phase_like("coalesce(p.current_phase_key, '')", patterns)
    )
}

/// [`GUARDS`] with the rules' phases written in (the same text every time, so one prepared
/// statement per query serves every garden).
fn guards() -> &'static str {
    use crate::rules::care::{resting_like_patterns, watering_withheld_like_patterns};
    static GUARDS_SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        GUARDS
            .replace(
                "IN_PHASE(WITHHELD)",
                &in_phase(&watering_withheld_like_patterns()),
            )
            .replace("IN_PHASE(RESTING)", &in_phase(&resting_like_patterns()))
    });
    &GUARDS_SQL
}

/// A live plant whose watering reminder the guards hold back, with the phase it is in.
#[derive(Debug, Clone)]
pub struct WithheldRow {
    pub plant_id: Uuid,
    pub plant_name: String,
    pub phase_name: String,
}

/// Live plants (one plant when `plant` is given) with a watering reminder that their open
/// phase withholds (rules::care::WATERING_WITHHELD), by name; at most `limit`, and how many
/// there are.
pub async fn watering_withheld(
    tx: &mut TenantTx,
    plant: Option<Uuid>,
    limit: i64,
) -> Result<(Vec<WithheldRow>, i64), sqlx::Error> {
    let sql = tx.sql(&format!(
        "SELECT p.id, p.name, h.phase_name, count(*) OVER () AS total \
         FROM tenant.plants p \
         JOIN tenant.plant_phase_history h ON h.plant_id = p.id AND h.exited_at IS NULL \
         WHERE p.archived_at IS NULL AND ($1::uuid IS NULL OR p.id = $1) \
           AND {} \
           AND EXISTS (SELECT 1 FROM tenant.care_reminders r \
                        WHERE r.plant_id = p.id AND r.reminder_type = 'watering') \
         ORDER BY p.name, p.id LIMIT $2",
        phase_like(
            "h.phase_name",
            &crate::rules::care::watering_withheld_like_patterns()
        )
    ));
    let rows = sqlx::query(sql)
        .bind(plant)
        .bind(limit)
        .fetch_all(tx.conn())
        .await?;
    let mut total = 0;
    let mut out = Vec::with_capacity(rows.len());
    for r in &rows {
        total = r.try_get("total")?;
        out.push(WithheldRow {
            plant_id: r.try_get("id")?,
            plant_name: r.try_get("name")?,
            phase_name: r.try_get("phase_name")?,
        });
    }
    Ok((out, total))
}

/// Reminders of live plants due on or before `until` (every one when `None`), guards applied,
/// in due order: one statement over the due-date index.
pub async fn due(
    tx: &mut TenantTx,
    today: Date,
    until: Option<Date>,
    plant: Option<Uuid>,
) -> Result<Vec<ReminderRow>, sqlx::Error> {
    let sql = tx.sql(&format!(
        "{REMINDER_SELECT} WHERE ($2::date IS NULL OR r.due_on <= $2) \
           AND ($3::uuid IS NULL OR r.plant_id = $3) AND {} \
         ORDER BY r.due_on, p.name, r.reminder_type",
        guards()
    ));
    let rows = sqlx::query(sql)
        .bind(today)
        .bind(until)
        .bind(plant)
        .fetch_all(tx.conn())
        .await?;
    rows.iter().map(decode_reminder).collect()
}

/// One page of the due list: per urgency bucket (0 overdue, 1 due today, 2 upcoming, 3 not
/// due) the rows `skip+1..=skip+limit` in due order, and how many the bucket holds.
pub struct DuePage {
    /// (bucket, row), buckets ascending, rows in due order within each.
    pub rows: Vec<(i16, ReminderRow)>,
    /// (bucket, how many reminders it holds), for every asked bucket that holds any.
    pub counts: Vec<(i16, i64)>,
}

/// The due list paged within each asked bucket, in one statement: the guards run once over
/// the reminders due on or before `until`, a window numbers each bucket's rows and counts
/// them, and only the page (plus each bucket's first row, which carries its count) leaves the
/// database.
pub async fn due_page(
    tx: &mut TenantTx,
    today: Date,
    until: Option<Date>,
    buckets: &[i16],
    skip: i64,
    limit: i64,
) -> Result<DuePage, sqlx::Error> {
    let sql = tx.sql(&format!(
        "WITH d AS ( \
           SELECT r.id, r.plant_id, p.name AS plant_name, p.species_key, r.reminder_type, \
                  r.due_on, r.interval_days, p.archived_at IS NOT NULL AS archived, \
                  (CASE WHEN r.due_on < $1 THEN 0 WHEN r.due_on = $1 THEN 1 \
                        WHEN r.due_on <= $1 + 2 THEN 2 ELSE 3 END)::int2 AS bucket \
           FROM tenant.care_reminders r JOIN tenant.plants p ON p.id = r.plant_id \
           WHERE ($2::date IS NULL OR r.due_on <= $2) AND {} \
         ), n AS ( \
           SELECT d.id, d.plant_id, d.plant_name, d.species_key, d.reminder_type, d.due_on, \
                  d.interval_days, d.archived, d.bucket, \
                  row_number() OVER w AS rn, count(*) OVER (PARTITION BY bucket) AS bucket_total \
           FROM d WHERE bucket = ANY($3) \
           WINDOW w AS (PARTITION BY bucket ORDER BY due_on, plant_name, reminder_type, id) \
         ) \
         SELECT id, plant_id, plant_name, species_key, reminder_type, due_on, interval_days, \
                archived, bucket, rn, bucket_total \
         FROM n WHERE rn = 1 OR (rn > $4 AND rn <= $4 + $5) ORDER BY bucket, rn",
        guards()
    ));
    let rows = sqlx::query(sql)
        .bind(today)
        .bind(until)
        .bind(buckets)
        .bind(skip)
        .bind(limit)
        .fetch_all(tx.conn())
        .await?;
    let mut page = DuePage {
        rows: Vec::with_capacity(rows.len()),
        counts: Vec::new(),
    };
    for r in &rows {
        let bucket: i16 = r.try_get("bucket")?;
        let rn: i64 = r.try_get("rn")?;
        if rn == 1 {
            page.counts.push((bucket, r.try_get("bucket_total")?));
        }
        if rn > skip {
            page.rows.push((bucket, decode_reminder(r)?));
        }
    }
    Ok(page)
}

/// Reminders of live plants due on or before `to`, for the calendar (guards as of `from`).
pub async fn calendar(
    tx: &mut TenantTx,
    from: Date,
    to: Date,
) -> Result<Vec<ReminderRow>, sqlx::Error> {
    let sql = tx.sql(&format!(
        "{REMINDER_SELECT} WHERE r.due_on <= $2 AND {} ORDER BY r.due_on, r.id LIMIT 20000",
        guards()
    ));
    let rows = sqlx::query(sql)
        .bind(from)
        .bind(to)
        .fetch_all(tx.conn())
        .await?;
    rows.iter().map(decode_reminder).collect()
}

pub async fn reminder_by_key(
    tx: &mut TenantTx,
    id: Uuid,
) -> Result<Option<ReminderRow>, sqlx::Error> {
    let sql = tx.sql(&format!(
        "{REMINDER_SELECT} WHERE r.id = $1 FOR UPDATE OF r"
    ));
    let row = sqlx::query(sql).bind(id).fetch_optional(tx.conn()).await?;
    row.as_ref().map(decode_reminder).transpose()
}

pub async fn reminder_of(
    tx: &mut TenantTx,
    plant: Uuid,
    reminder_type: &str,
) -> Result<Option<ReminderRow>, sqlx::Error> {
    let sql = tx.sql(&format!(
        "{REMINDER_SELECT} WHERE r.plant_id = $1 AND r.reminder_type = $2 FOR UPDATE OF r"
    ));
    let row = sqlx::query(sql)
        .bind(plant)
        .bind(reminder_type)
        .fetch_optional(tx.conn())
        .await?;
    row.as_ref().map(decode_reminder).transpose()
}

pub async fn set_due(
    tx: &mut TenantTx,
    id: Uuid,
    due_on: Date,
    interval_days: i32,
) -> Result<(), sqlx::Error> {
    let sql = tx.sql(
        "UPDATE tenant.care_reminders SET due_on = $2, interval_days = $3, updated_at = now() \
         WHERE id = $1",
    );
    sqlx::query(sql)
        .bind(id)
        .bind(due_on)
        .bind(interval_days)
        .execute(tx.conn())
        .await?;
    Ok(())
}

/// The days of the latest `confirmed` confirmations of a plant and type, oldest first.
pub async fn confirmed_days(
    tx: &mut TenantTx,
    plant: Uuid,
    reminder_type: &str,
    limit: i64,
) -> Result<Vec<Date>, sqlx::Error> {
    let sql = tx.sql(
        "SELECT confirmed_on FROM tenant.care_confirmations \
         WHERE plant_id = $1 AND reminder_type = $2 AND action = 'confirmed' \
         ORDER BY confirmed_at DESC, id DESC LIMIT $3",
    );
    let mut days: Vec<Date> = sqlx::query_scalar(sql)
        .bind(plant)
        .bind(reminder_type)
        .bind(limit)
        .fetch_all(tx.conn())
        .await?;
    days.reverse();
    Ok(days)
}

pub struct NewEntry<'a> {
    pub plant_id: Uuid,
    pub reminder_type: &'a str,
    pub action: &'a str,
    pub confirmed_on: Date,
    pub snooze_days: Option<i32>,
    pub interval: i32,
    pub notes: Option<&'a str>,
    pub actor: &'a str,
}

const LOG_COLUMNS: &str = "id, plant_id, reminder_type, action, confirmed_at, confirmed_on, \
    snooze_days, interval_at_time_days, notes, actor";

fn decode_entry(r: &PgRow) -> Result<CareLogEntry, sqlx::Error> {
    let on: Date = r.try_get("confirmed_on")?;
    Ok(CareLogEntry {
        entry_key: r.try_get("id")?,
        plant_key: r.try_get("plant_id")?,
        reminder_type: r.try_get("reminder_type")?,
        action: r.try_get("action")?,
        confirmed_at: r.try_get("confirmed_at")?,
        confirmed_on: crate::garden::tasks::model::date_str(on),
        snooze_days: r.try_get("snooze_days")?,
        interval_at_time_days: r.try_get("interval_at_time_days")?,
        notes: r.try_get("notes")?,
        actor: r.try_get("actor")?,
    })
}

pub async fn insert_entry(
    tx: &mut TenantTx,
    e: &NewEntry<'_>,
) -> Result<CareLogEntry, sqlx::Error> {
    let sql = tx.sql(&format!(
        "INSERT INTO tenant.care_confirmations (id, plant_id, reminder_type, action, \
           confirmed_on, snooze_days, interval_at_time_days, notes, actor) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING {LOG_COLUMNS}"
    ));
    let row = sqlx::query(sql)
        .bind(Uuid::now_v7())
        .bind(e.plant_id)
        .bind(e.reminder_type)
        .bind(e.action)
        .bind(e.confirmed_on)
        .bind(e.snooze_days)
        .bind(e.interval)
        .bind(e.notes)
        .bind(e.actor)
        .fetch_one(tx.conn())
        .await?;
    decode_entry(&row)
}

/// The care log of a plant, newest first.
pub async fn log(
    tx: &mut TenantTx,
    plant: Uuid,
    reminder_type: Option<&str>,
    limit: i64,
) -> Result<Vec<CareLogEntry>, sqlx::Error> {
    let sql = tx.sql(&format!(
        "SELECT {LOG_COLUMNS} FROM tenant.care_confirmations \
         WHERE plant_id = $1 AND ($2::text IS NULL OR reminder_type = $2) \
         ORDER BY confirmed_at DESC, id DESC LIMIT $3"
    ));
    let rows = sqlx::query(sql)
        .bind(plant)
        .bind(reminder_type)
        .bind(limit)
        .fetch_all(tx.conn())
        .await?;
    rows.iter().map(decode_entry).collect()
}

/// Whether the plant exists (archived included).
pub async fn plant_exists(tx: &mut TenantTx, plant: Uuid) -> Result<Option<bool>, sqlx::Error> {
    let sql = tx.sql("SELECT archived_at IS NOT NULL FROM tenant.plants WHERE id = $1");
    sqlx::query_scalar(sql)
        .bind(plant)
        .fetch_optional(tx.conn())
        .await
}

/// Completes the plant's open care tasks for the reminder type (named "… — {type}" or
/// ending with the type); their keys.
pub async fn complete_care_tasks(
    tx: &mut TenantTx,
    plant: Uuid,
    reminder_type: &str,
) -> Result<Vec<Uuid>, sqlx::Error> {
    let sql = tx.sql(
        "UPDATE tenant.tasks SET status = 'completed', completed_at = now(), updated_at = now(), \
           completion_notes = coalesce(completion_notes, 'confirmed as care reminder') \
         WHERE plant_id = $1 AND category = 'care_reminder' \
           AND status IN ('pending', 'in_progress') \
           AND lower(name) LIKE '%' || $2 RETURNING id",
    );
    sqlx::query_scalar(sql)
        .bind(plant)
        .bind(reminder_type)
        .fetch_all(tx.conn())
        .await
}

pub fn now() -> OffsetDateTime {
    OffsetDateTime::now_utc()
}
