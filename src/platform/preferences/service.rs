//! Reading a user's preferences: the stored row, else the defaults (REST and the web pages).

use serde_json::{Map, Value};
use uuid::Uuid;

use super::model::Preferences;
use super::repo;
use crate::error::AppError;
use crate::state::AppState;

/// The user's preferences (the defaults until they first save them).
pub async fn current(state: &AppState, user: Uuid) -> Result<Preferences, AppError> {
    Ok(stored(state, user).await?.unwrap_or_default())
}

/// The preferences the user saved, if they ever did (the web pages take the language of a
/// person who never chose one from the browser).
pub async fn stored(state: &AppState, user: Uuid) -> Result<Option<Preferences>, AppError> {
    Ok(repo::get(state.platform_pool(), user).await?)
}

/// Replaces the user's preferences with a whole, checked record (`PUT /user-preferences`).
pub async fn put(state: &AppState, user: Uuid, prefs: &Preferences) -> Result<(), AppError> {
    repo::put(state.platform_pool(), user, prefs).await?;
    Ok(())
}

/// Changes some of the user's preferences (`PATCH /user-preferences` and the settings page):
/// the given fields laid over the stored record, then read as a whole record, so the checks are
/// those of a PUT and a field sent as null is refused like a missing one.
pub async fn patch(
    state: &AppState,
    user: Uuid,
    changes: Map<String, Value>,
) -> Result<Preferences, AppError> {
    let mut merged = current(state, user).await?.to_map();
    for (k, v) in changes {
        merged.insert(k, v);
    }
    let bytes = serde_json::to_vec(&Value::Object(merged))
        .map_err(|e| AppError::internal(format!("preferences: {e}")))?;
    let prefs: Preferences = crate::values::json::parse_json(&bytes)?;
    put(state, user, &prefs).await?;
    Ok(prefs)
}

/// Sets the user's language (the web pages' language switch); the rest stays as it was.
pub async fn set_locale(state: &AppState, user: Uuid, locale: &str) -> Result<(), AppError> {
    let mut prefs = current(state, user).await?;
    locale.clone_into(&mut prefs.locale);
    repo::put(state.platform_pool(), user, &prefs).await?;
    Ok(())
}

/// Now in a person's time zone (their `timezone` preference; an unknown zone is UTC).
pub fn local_now(zone: &str) -> jiff::Zoned {
    local_at(zone, jiff::Timestamp::now())
}

/// A moment in a person's time zone (an unknown zone is UTC).
pub fn local_at(zone: &str, at: jiff::Timestamp) -> jiff::Zoned {
    let tz = jiff::tz::TimeZone::get(zone).unwrap_or(jiff::tz::TimeZone::UTC);
    at.to_zoned(tz)
}

/// The calendar day of a local time, as the rest of the service counts days.
pub fn day_of(now: &jiff::Zoned) -> time::Date {
    time::Date::from_calendar_date(
        i32::from(now.year()),
        time::Month::try_from(u8::try_from(now.month()).unwrap_or(1))
            .unwrap_or(time::Month::January),
        u8::try_from(now.day()).unwrap_or(1),
    )
    .unwrap_or_else(|_| time::OffsetDateTime::now_utc().date())
}
