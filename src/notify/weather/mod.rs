//! The weather poll of every garden (each garden's poll is `garden::weather::service`, which
//! writes the frost alerts and their webhook events in its transaction), then the Web Push of
//! each frost alert opened, as the alert scan pushes its openings; `job` runs it on a timer.

pub mod job;

use time::OffsetDateTime;

use crate::error::AppError;
use crate::garden::weather::service::poll_garden;
use crate::state::AppState;
use crate::tenancy::registry::{self, TenantStatus};

/// What a poll of every garden did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WeatherSummary {
    pub gardens: usize,
    pub sites: usize,
    pub fetched: usize,
    /// Forecast requests that failed (each logged and counted in `kultiva_weather_fetches`).
    pub fetch_failures: usize,
    pub stored: i64,
    pub updated: i64,
    pub opened: usize,
    pub resolved: usize,
}

/// [`poll_garden`] for every active garden; a garden failing (its database, not its
/// forecast) does not stop the others and is named in the second value.
pub async fn poll_all(
    state: &AppState,
    now: OffsetDateTime,
) -> Result<(WeatherSummary, Vec<(String, String)>), AppError> {
    let mut summary = WeatherSummary::default();
    let mut failed = Vec::new();
    for tenant in registry::list(state.platform_pool()).await? {
        if tenant.status != TenantStatus::Active {
            continue;
        }
        summary.gardens += 1;
        match poll_garden(state, &tenant, now).await {
            Ok(p) => {
                summary.sites += p.sites;
                summary.fetched += p.fetched;
                summary.fetch_failures += p.failed.len();
                summary.stored += p.stored;
                summary.updated += p.updated;
                summary.opened += p.opened.len();
                summary.resolved += p.resolved.len();
                if !p.opened.is_empty() {
                    crate::notify::alerts::push_openings(state, &tenant, &p.opened).await;
                }
            }
            Err(e) => failed.push((tenant.slug.as_str().to_owned(), e.to_string())),
        }
    }
    Ok((summary, failed))
}
