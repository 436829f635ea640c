//! SQL of `platform.user_preferences`.

use sqlx::{PgExecutor, Row};
use uuid::Uuid;

use super::model::Preferences;

pub async fn get(db: impl PgExecutor<'_>, user: Uuid) -> Result<Option<Preferences>, sqlx::Error> {
    let row = sqlx::query(
        "SELECT units, locale, timezone, experience_level, notify_email, notify_push, \
         notify_care_due, notify_digest, digest_hour FROM platform.user_preferences WHERE user_id = $1",
    )
    .bind(user)
    .fetch_optional(db)
    .await?;
    row.map(|r| {
        Ok(Preferences {
            units: r.try_get("units")?,
            locale: r.try_get("locale")?,
            timezone: r.try_get("timezone")?,
            experience_level: r.try_get("experience_level")?,
            notify_email: r.try_get("notify_email")?,
            notify_push: r.try_get("notify_push")?,
            notify_care_due: r.try_get("notify_care_due")?,
            notify_digest: r.try_get("notify_digest")?,
            digest_hour: r.try_get("digest_hour")?,
        })
    })
    .transpose()
}

pub async fn put(db: impl PgExecutor<'_>, user: Uuid, p: &Preferences) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO platform.user_preferences (user_id, units, locale, timezone, \
         experience_level, notify_email, notify_push, notify_care_due, notify_digest, digest_hour) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) \
         ON CONFLICT (user_id) DO UPDATE SET units = $2, locale = $3, timezone = $4, \
         experience_level = $5, notify_email = $6, notify_push = $7, notify_care_due = $8, \
         notify_digest = $9, digest_hour = $10, updated_at = now()",
    )
    .bind(user)
    .bind(&p.units)
    .bind(&p.locale)
    .bind(&p.timezone)
    .bind(&p.experience_level)
    .bind(p.notify_email)
    .bind(p.notify_push)
    .bind(p.notify_care_due)
    .bind(&p.notify_digest)
    .bind(p.digest_hour)
    .execute(db)
    .await?;
    Ok(())
}
