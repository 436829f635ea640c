//! REST face of the calendar under `/api/v1/t/{slug}/calendar`, and the unauthenticated feed
//! at `/api/v1/calendar/feeds/{token}.ics`.

use salvo::oapi::extract::PathParam;
use salvo::prelude::*;

use super::feeds;
use super::model::{
    EventsPage, FeedSecret, FeedStatus, GardenSettings, GardenSettingsBody, SowingCalendar, Window,
};
use super::service::{self, SowingQuery};
use crate::error::{AppError, ErrorBody, ErrorDetail};
use crate::http::depot::DepotExt;
use crate::http::json::read_json;
use crate::http::roles::{Admin, Requires};

pub fn router() -> Router {
    Router::with_path("calendar")
        .push(Router::with_path("events").get(list_events))
        .push(Router::with_path("sowing").get(sowing_calendar))
        .push(
            Router::with_path("settings")
                .get(get_settings)
                .put(put_settings),
        )
        .push(
            Router::with_path("feed")
                .get(feed_status)
                .post(create_feed)
                .delete(revoke_feed)
                .push(Router::with_path("rotate").post(rotate_feed)),
        )
}

/// The unauthenticated feed route (mounted under `/api/v1`).
pub fn feed_router() -> Router {
    Router::with_path("calendar/feeds/{token}").get(serve_feed)
}

/// The garden's calendar events in a window of at most 366 days: phase entries and expected
/// transitions, sowing windows of the garden's species, and the events of tasks, care
/// reminders and harvests.
///
/// A window of at most 366 days (422 naming `query.from`/`query.to` otherwise). Event ids:
/// `phase:<history key>`, `phase_expected:…`, `sowing:…` (inclusive `end_date`),
/// `task:<key>[:<date>]`, `care_reminder:<key>:<date>`, `harvest:<batch>`,
/// `treatment:<application>:<plant>`.
#[endpoint(tags("calendar"), security(["bearer" = []]), operation_id = "list_calendar_events",
    parameters(
        ("slug" = String, Path, description = "tenant slug"),
        ("from" = String, Query, format = "date", description = "first day (YYYY-MM-DD), required"),
        ("to" = String, Query, format = "date", description = "last day (YYYY-MM-DD), required; not before from, at most 366 days in all"),
    ),
    responses(
        (status_code = 200, description = "the events, by day", body = EventsPage),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: from or to missing, malformed, in the wrong order or too far apart", body = ErrorBody),
    ))]
pub async fn list_events(
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<EventsPage>, AppError> {
    let state = depot.app_state()?;
    let from = req.queries().get("from").cloned();
    let to = req.queries().get("to").cloned();
    let w = Window::parse(from.as_deref(), to.as_deref(), "query")?;
    let tenant = &depot.tenant_ctx()?.tenant;
    let events = service::events(&state, tenant, w).await?;
    Ok(Json(EventsPage::new(w, &events)))
}

/// The sowing calendar: for each species of the garden's live plants (or the one `species`),
/// bars of indoor sowing, outdoor planting, growth and harvest (or flowering) in `year`, moved
/// to the last frost used: the hardiness `zone` named here (an estimate), else the garden's own
/// `last_spring_frost` (calendar settings), else the estimate of the site's zone (with
/// `site_key`) or the garden's zone, else the reference (May 1; November 1 in the south). In the
/// southern hemisphere (calendar settings `hemisphere`, else the garden's time zone) the
/// catalogue's months move by six months. `frost` says which: `source` (`garden`, `zone`,
/// `default`), `estimated`, `hemisphere`, `basis`. `site_key` narrows the species to those
/// growing at the site's locations.
///
/// Parameters `zone`, `site_key` (also narrows to that site's species; another garden's site is
/// 404), `species`, `year`. The tool `get_sowing_calendar` requires `query` once more than `limit`
/// (≤ 25) species match.
#[endpoint(tags("calendar"), security(["bearer" = []]), operation_id = "get_sowing_calendar",
    parameters(
        ("slug" = String, Path, description = "tenant slug"),
        ("zone" = Option<String>, Query, pattern = r"^(1[0-3]|[1-9])[ab]$", description = "hardiness zone 1a…13b (default: the site's, else the garden's)"),
        ("site_key" = Option<String>, Query, format = Uuid, description = "only the species growing at this site, on its hardiness zone when it has one"),
        ("species" = Option<String>, Query, description = "only this species (key)"),
        ("year" = Option<i32>, Query, minimum = 2000, maximum = 2100, description = "the year (default: this year)"),
    ),
    responses(
        (status_code = 200, description = "the sowing calendar", body = SowingCalendar),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant, site or species", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: zone or year invalid", body = ErrorBody),
    ))]
pub async fn sowing_calendar(
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<SowingCalendar>, AppError> {
    let state = depot.app_state()?;
    let q = req.queries();
    let year = match q.get("year") {
        None => None,
        Some(y) => Some(y.parse::<i32>().map_err(|_| {
            AppError::validation(vec![ErrorDetail::new(
                "query.year",
                "must be a whole number between 2000 and 2100",
                "type_error",
            )])
        })?),
    };
    let query = SowingQuery {
        zone: q.get("zone").cloned(),
        site_key: q.get("site_key").cloned(),
        species_key: q.get("species").cloned(),
        year,
    };
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(
        service::sowing_calendar(&state, tenant, &query, "query").await?,
    ))
}

/// The garden settings the calendar uses (hardiness zone, time zone, hemisphere, own frost dates).
#[endpoint(tags("calendar"), security(["bearer" = []]), operation_id = "get_garden_settings",
    parameters(("slug" = String, Path, description = "tenant slug")),
    responses(
        (status_code = 200, description = "the settings", body = GardenSettings),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant", body = ErrorBody),
    ))]
pub async fn get_settings(depot: &mut Depot) -> Result<Json<GardenSettings>, AppError> {
    let state = depot.app_state()?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(service::settings(&state, tenant).await?))
}

/// Set (or clear with null) the garden's hardiness zone (admin: the garden's setup).
///
/// `{"hardiness_zone": "7a", "timezone": "Europe/Berlin", "hemisphere": "north",
/// "last_spring_frost": "04-20", "first_autumn_frost": "10-20"}`: admin; null clears; `timezone`
/// absent or null means UTC; `hemisphere` absent or null: the time zone's, else north; the frost
/// dates are `MM-DD` days of every year (not 02-29), absent or null unset, the autumn frost after
/// the spring frost in the north and before it in the south. A 422 saves nothing.
#[endpoint(tags("calendar"), security(["bearer" = []]), operation_id = "put_garden_settings",
    status_codes(200, 400, 401, 403, 404, 413, 415, 422),
    parameters(("slug" = String, Path, description = "tenant slug")),
    request_body = GardenSettingsBody,
    responses(
        (status_code = 200, description = "the stored settings", body = GardenSettings),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: admin role needed", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: not a zone, time zone or hemisphere, or a frost date that does not exist or runs the wrong way", body = ErrorBody),
    ))]
pub async fn put_settings(
    _role: Requires<Admin>,
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<GardenSettings>, AppError> {
    let state = depot.app_state()?;
    let body: GardenSettings = read_json(req, state.config().max_body_bytes).await?;
    let tenant = &depot.tenant_ctx()?.tenant;
    Ok(Json(service::put_settings(&state, tenant, &body).await?))
}

/// Whether you have an iCal feed of this garden (the token is never shown again).
#[endpoint(tags("calendar"), security(["bearer" = []]), operation_id = "get_calendar_feed",
    parameters(("slug" = String, Path, description = "tenant slug")),
    responses(
        (status_code = 200, description = "your feed's state", body = FeedStatus),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant", body = ErrorBody),
    ))]
pub async fn feed_status(depot: &mut Depot) -> Result<Json<FeedStatus>, AppError> {
    let state = depot.app_state()?;
    let user = depot.principal()?.user_id;
    let tenant = depot.tenant_ctx()?.tenant.id;
    Ok(Json(feeds::status(&state, tenant, user).await?))
}

/// Create your iCal feed of this garden: the answer holds the secret token, once. Needs a
/// logged-in person (an access token): an API key is refused with 403 `FORBIDDEN`
/// (`person_required`). The feed ends when you leave the garden or your account is
/// deactivated, erased or taken back by a password reset.
#[endpoint(tags("calendar"), security(["bearer" = []]), operation_id = "create_calendar_feed",
    status_codes(201, 401, 403, 404, 409),
    parameters(("slug" = String, Path, description = "tenant slug")),
    responses(
        (status_code = 201, description = "the feed's token and path (shown once)", body = FeedSecret),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed, or an API key (person_required)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant", body = ErrorBody),
        (status_code = 409, description = "DUPLICATE_ENTRY: you have a feed; rotate it", body = ErrorBody),
    ))]
pub async fn create_feed(
    depot: &mut Depot,
    res: &mut Response,
) -> Result<Json<FeedSecret>, AppError> {
    let state = depot.app_state()?;
    let tenant = depot.tenant_ctx()?.tenant.id;
    let secret = feeds::create(&state, depot.principal()?, tenant).await?;
    res.status_code(StatusCode::CREATED);
    Ok(Json(secret))
}

/// A new token for your feed (created when you have none); the old link stops working at once.
/// Needs a logged-in person, like creating one.
#[endpoint(tags("calendar"), security(["bearer" = []]), operation_id = "rotate_calendar_feed",
    status_codes(200, 401, 403, 404),
    parameters(("slug" = String, Path, description = "tenant slug")),
    responses(
        (status_code = 200, description = "the new token and path (shown once)", body = FeedSecret),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: grower role needed, or an API key (person_required)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant", body = ErrorBody),
    ))]
pub async fn rotate_feed(depot: &mut Depot) -> Result<Json<FeedSecret>, AppError> {
    let state = depot.app_state()?;
    let tenant = depot.tenant_ctx()?.tenant.id;
    Ok(Json(
        feeds::rotate(&state, depot.principal()?, tenant).await?,
    ))
}

/// Revoke your feed: its link answers 404 from now on (no feed: the same 204). Open to every
/// member, viewers included, and to API keys: ending a grant is never refused.
///
/// 204, also when there was none; open to every member for their own feed, also with an API key.
#[endpoint(tags("calendar"), security(["bearer" = []]), operation_id = "revoke_calendar_feed",
    status_codes(204, 401, 404),
    parameters(("slug" = String, Path, description = "tenant slug")),
    responses(
        (status_code = 204, description = "feed revoked"),
        (status_code = 401, description = "UNAUTHORIZED: no valid credential (full mode)", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown tenant", body = ErrorBody),
    ))]
pub async fn revoke_feed(depot: &mut Depot, res: &mut Response) -> Result<(), AppError> {
    let state = depot.app_state()?;
    let user = depot.principal()?.user_id;
    let tenant = depot.tenant_ctx()?.tenant.id;
    feeds::revoke(&state, tenant, user).await?;
    res.status_code(StatusCode::NO_CONTENT);
    Ok(())
}

/// A member's iCal feed of a garden (RFC 5545, `text/calendar`): no credential but the secret
/// token in the path. An unknown, rotated-away or revoked token, or one of a member who left
/// the garden, is 404.
///
/// RFC 5545: CRLF, lines folded at 75 octets without splitting a character, TEXT escaping, DTSTAMP,
/// UID, all-day `VALUE=DATE` with an exclusive DTEND; from 30 days back to a year ahead.
#[endpoint(tags("calendar"), operation_id = "get_calendar_feed_ics",
    parameters(("token" = String, Path, description = "the feed's secret token, optionally with .ics")),
    responses(
        (status_code = 200, description = "the calendar", content_type = "text/calendar", body = String),
        (status_code = 404, description = "ENTITY_NOT_FOUND: no such feed", body = ErrorBody),
    ))]
pub async fn serve_feed(
    token: PathParam<String>,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<(), AppError> {
    let state = depot.app_state()?;
    let text = feeds::serve(&state, &token).await?;
    res.add_header("content-type", "text/calendar; charset=utf-8", true)
        .map_err(AppError::internal)?;
    res.add_header("cache-control", "private, max-age=300", true)
        .map_err(AppError::internal)?;
    res.write_body(text).map_err(AppError::internal)?;
    Ok(())
}
