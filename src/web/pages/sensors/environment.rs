//! The environment section of a plant's and a location's page: the latest reading of each
//! sensor there (a plant's: its location's and that location's site's, as `get_environment`
//! reads them) and a 7-day chart per sensor (hourly average over the min-max band, drawn by
//! [`crate::web::chart`]) with the window's and each day's minimum, average and maximum as a
//! table. Days and times are the garden's time zone's. No sensor: one line saying so, and for
//! an admin the way to the sensors page.

use maud::{Markup, html};
use time::OffsetDateTime;

use super::{metric_text, sensors_url, source_text, value_text};
use crate::error::AppError;
use crate::garden::calendar::model::time_zone;
use crate::garden::calendar::service as calendar;
use crate::garden::sensors::service::{
    self as sensors, Around, LatestReading, READINGS_DEFAULT_LIMIT, SeriesQuery,
};
use crate::state::AppState;
use crate::tenancy::TenantRecord;
use crate::web::chart::{self, Bucket, Chart};
use crate::web::i18n::Lang;
use crate::web::pages::scope::local_stamp;

/// The chart's window: the last seven days, in hourly buckets.
const WINDOW_HOURS: i64 = 7 * 24;
const STEP_SECONDS: i64 = 3600;

/// One sensor of the section: its latest reading and its last seven days.
pub struct Measured {
    pub reading: LatestReading,
    pub buckets: Vec<Bucket>,
}

/// What the section shows, read before the page is written.
pub struct Environment {
    pub sensors: Vec<Measured>,
    /// The garden's time zone (`UTC` when none is set).
    pub tz: String,
    /// The window, unix seconds.
    pub from: i64,
    pub to: i64,
}

/// The garden's time zone name: its calendar's, `UTC` when none is set or it is unknown.
pub async fn garden_zone(state: &AppState, tenant: &TenantRecord) -> Result<String, AppError> {
    let settings = calendar::settings(state, tenant).await?;
    Ok(settings
        .timezone
        .filter(|z| time_zone(z).is_some())
        .unwrap_or_else(|| "UTC".to_owned()))
}

/// The sensors around a plant or location with their latest readings and charts. A plant or
/// location of another garden is `not_found` (the service's guard).
pub async fn read(
    state: &AppState,
    tenant: &TenantRecord,
    around: Around,
    now: OffsetDateTime,
) -> Result<Environment, AppError> {
    let found = sensors::environment(state, tenant, around).await?.sensors;
    let to = now.unix_timestamp() - now.unix_timestamp().rem_euclid(STEP_SECONDS) + STEP_SECONDS;
    let from = to - WINDOW_HOURS * STEP_SECONDS;
    let window = SeriesQuery {
        from: OffsetDateTime::from_unix_timestamp(from)
            .map_err(|_| AppError::internal("a chart window out of range"))?,
        to: OffsetDateTime::from_unix_timestamp(to)
            .map_err(|_| AppError::internal("a chart window out of range"))?,
        step: Some(("1h".to_owned(), STEP_SECONDS)),
        limit: READINGS_DEFAULT_LIMIT,
    };
    let mut measured = Vec::with_capacity(found.len());
    // One after the other: a page holds one connection of the pool at a time.
    for reading in found {
        let key = reading.sensor.key.to_string();
        let series = sensors::read_series(state, tenant, &key, &window).await?;
        let buckets = series
            .buckets
            .iter()
            .map(|b| Bucket {
                start: b.start.unix_timestamp(),
                min: b.min,
                avg: b.avg,
                max: b.max,
                count: b.count,
            })
            .collect();
        measured.push(Measured { reading, buckets });
    }
    Ok(Environment {
        sensors: measured,
        tz: garden_zone(state, tenant).await?,
        from,
        to,
    })
}

/// The section. `admin`: the garden's admin, who gets the way to register a sensor.
pub fn section(lang: Lang, slug: &str, admin: bool, env: &Environment) -> Markup {
    html! {
        section.card aria-labelledby="sec-environment" id="environment" {
            h2 id="sec-environment" { (lang.t("env-title")) }
            @if env.sensors.is_empty() {
                p.empty { (lang.t("env-none")) }
                @if admin {
                    p { a href=(sensors_url(slug)) { (lang.t("env-register")) } }
                }
            } @else {
                ul.items {
                    @for m in &env.sensors {
                        (latest_item(lang, env, &m.reading))
                    }
                }
                @for m in &env.sensors {
                    (chart_figure(lang, env, m))
                }
                p.meta { (lang.t_with("sensor-times-in", &[("zone", env.tz.clone().into())])) }
            }
        }
    }
}

fn origin_text(lang: Lang, origin: &str) -> String {
    match origin {
        "site" => lang.t("env-origin-site"),
        _ => lang.t("env-origin-location"),
    }
}

fn latest_item(lang: Lang, env: &Environment, r: &LatestReading) -> Markup {
    let s = &r.sensor;
    html! {
        li {
            span.what {
                strong { (metric_text(lang, s.metric)) } " · " (s.name)
                br;
                span.meta { (origin_text(lang, r.origin)) " · " (source_text(lang, s.source)) }
            }
            span.latest {
                @match &r.latest {
                    Some(x) => {
                        strong { (value_text(lang, x.value, &s.unit)) }
                        br;
                        span.meta { (local_stamp(lang, &env.tz, x.measured_at)) }
                    }
                    None => { span.meta { (lang.t("sensor-no-reading")) } }
                }
            }
        }
    }
}

fn chart_figure(lang: Lang, env: &Environment, m: &Measured) -> Markup {
    let s = &m.reading.sensor;
    let id = format!("chart-{}", s.key);
    let title = lang.t_with(
        "env-chart-title",
        &[
            ("metric", metric_text(lang, s.metric).into()),
            ("sensor", s.name.clone().into()),
        ],
    );
    let drawn = chart::svg(&Chart {
        id: &id,
        title: &title,
        unit: &s.unit,
        from: env.from,
        to: env.to,
        step: STEP_SECONDS,
        buckets: &m.buckets,
        lang,
        tz: &env.tz,
    });
    let days = chart::daily(&m.buckets, &env.tz);
    let num = |x: f64| lang.decimal(x, 2);
    html! {
        figure.chart-box {
            figcaption { h3 { (title) } }
            @match (drawn, chart::summary(&m.buckets)) {
                (Some(svg), Some(sum)) => {
                    (svg)
                    p.meta {
                        (lang.t_with("env-summary", &[
                            ("min", num(sum.min).into()),
                            ("avg", num(sum.avg).into()),
                            ("max", num(sum.max).into()),
                            ("unit", s.unit.clone().into()),
                            ("count", sum.count.into()),
                        ]))
                    }
                    details {
                        summary { (lang.t("env-per-day")) }
                        table.daily {
                            caption.visually-hidden { (title) }
                            thead { tr {
                                th scope="col" { (lang.t("env-day")) }
                                th scope="col" { (lang.t("env-min")) }
                                th scope="col" { (lang.t("env-avg")) }
                                th scope="col" { (lang.t("env-max")) }
                            } }
                            tbody {
                                @for (day, d) in &days {
                                    tr {
                                        th scope="row" { (chart::day_label(lang, *day)) }
                                        td { (value_text(lang, d.min, &s.unit)) }
                                        td { (value_text(lang, d.avg, &s.unit)) }
                                        td { (value_text(lang, d.max, &s.unit)) }
                                    }
                                }
                            }
                        }
                    }
                }
                _ => { p.empty { (lang.t("env-no-week")) } }
            }
        }
    }
}
