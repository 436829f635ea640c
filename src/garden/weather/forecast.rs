//! The hourly forecast of one place from an Open-Meteo-compatible API (`WEATHER_URL`, no key):
//! `GET {base}/v1/forecast?latitude=…&longitude=…&hourly=temperature_2m,relative_humidity_2m
//! &timezone=UTC&forecast_days=3`. Every failure (unreachable, slow past `WEATHER_TIMEOUT_SECONDS`,
//! an error status, a body that is no forecast) is a [`ForecastError`] the caller logs and counts.

use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;
use time::format_description::FormatItem;
use time::macros::format_description;
use time::{OffsetDateTime, PrimitiveDateTime, UtcOffset};

/// Days of forecast asked for: today and the next two cover the 48-hour frost horizon.
pub const FORECAST_DAYS: u32 = 3;
/// A larger answer is no forecast of three days.
const BODY_MAX_BYTES: usize = 2 * 1024 * 1024;

/// One forecast hour; a value the API left null is `None`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HourlyValues {
    pub at: OffsetDateTime,
    pub temperature_c: Option<f64>,
    pub humidity_percent: Option<f64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ForecastError(pub String);

impl std::fmt::Display for ForecastError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The client the polls share: rustls (the process's ring provider) with the Mozilla roots, so
/// https needs no system store; `None` only if TLS could not be set up.
fn client() -> Option<&'static reqwest::Client> {
    static CLIENT: OnceLock<Option<reqwest::Client>> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
            let roots = rustls::RootCertStore {
                roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
            };
            let tls = rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .ok()?
                .with_root_certificates(roots)
                .with_no_client_auth();
            reqwest::Client::builder()
                .use_preconfigured_tls(tls)
                .build()
                .ok()
        })
        .as_ref()
}

/// The request URL for a place.
pub fn forecast_url(
    base: &str,
    latitude: f64,
    longitude: f64,
) -> Result<reqwest::Url, ForecastError> {
    reqwest::Url::parse_with_params(
        &format!("{}/v1/forecast", base.trim_end_matches('/')),
        [
            ("latitude", format!("{latitude}")),
            ("longitude", format!("{longitude}")),
            ("hourly", "temperature_2m,relative_humidity_2m".to_owned()),
            ("timezone", "UTC".to_owned()),
            ("forecast_days", FORECAST_DAYS.to_string()),
        ],
    )
    .map_err(|e| ForecastError(format!("bad WEATHER_URL: {e}")))
}

/// Fetches and reads the forecast of a place; the whole exchange is bounded by `timeout`.
pub async fn fetch(
    base: &str,
    latitude: f64,
    longitude: f64,
    timeout: Duration,
) -> Result<Vec<HourlyValues>, ForecastError> {
    let url = forecast_url(base, latitude, longitude)?;
    let client =
        client().ok_or_else(|| ForecastError("no HTTP client (TLS setup failed)".into()))?;
    let exchange = async {
        let res = client
            .get(url)
            .header("accept", "application/json")
            .send()
            .await
            .map_err(|e| ForecastError(format!("unreachable: {e}")))?;
        let status = res.status();
        if !status.is_success() {
            return Err(ForecastError(format!("answered {}", status.as_u16())));
        }
        let body = res
            .bytes()
            .await
            .map_err(|e| ForecastError(format!("body not read: {e}")))?;
        if body.len() > BODY_MAX_BYTES {
            return Err(ForecastError("answer too large".into()));
        }
        let doc: Value = serde_json::from_slice(&body)
            .map_err(|e| ForecastError(format!("answer is not JSON: {e}")))?;
        parse(&doc)
    };
    tokio::time::timeout(timeout, exchange)
        .await
        .map_err(|_| ForecastError(format!("no answer within {} s", timeout.as_secs())))?
}

const LOCAL_TIME: &[FormatItem<'static>] =
    format_description!("[year]-[month]-[day]T[hour]:[minute]");

/// Reads an Open-Meteo answer: `hourly.time` (ISO 8601 local times of `utc_offset_seconds`,
/// or unix seconds with `timeformat=unixtime`) beside `hourly.temperature_2m` and
/// `hourly.relative_humidity_2m` of the same length. An API error body (`{"error": true,
/// "reason": …}`) or a missing series is an error; a null value is a gap.
pub fn parse(doc: &Value) -> Result<Vec<HourlyValues>, ForecastError> {
    if doc.get("error").and_then(Value::as_bool) == Some(true) {
        let reason = doc.get("reason").and_then(Value::as_str).unwrap_or("-");
        return Err(ForecastError(format!("API error: {reason}")));
    }
    let offset_seconds = doc
        .get("utc_offset_seconds")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let offset = i32::try_from(offset_seconds)
        .ok()
        .and_then(|s| UtcOffset::from_whole_seconds(s).ok())
        .ok_or_else(|| ForecastError("utc_offset_seconds out of range".into()))?;
    let hourly = doc
        .get("hourly")
        .ok_or_else(|| ForecastError("no hourly forecast in the answer".into()))?;
    let series = |name: &str| -> Result<&Vec<Value>, ForecastError> {
        hourly
            .get(name)
            .and_then(Value::as_array)
            .ok_or_else(|| ForecastError(format!("no hourly.{name} in the answer")))
    };
    let times = series("time")?;
    let temperatures = series("temperature_2m")?;
    let humidities = series("relative_humidity_2m")?;
    if temperatures.len() != times.len() || humidities.len() != times.len() {
        return Err(ForecastError("hourly series of different lengths".into()));
    }
    let number = |v: &Value, min: f64, max: f64| {
        v.as_f64()
            .filter(|n| n.is_finite() && (min..=max).contains(n))
    };
    let mut out = Vec::with_capacity(times.len());
    for (i, t) in times.iter().enumerate() {
        let at = match t {
            Value::String(s) => PrimitiveDateTime::parse(s, LOCAL_TIME)
                .map(|p| p.assume_offset(offset).to_offset(UtcOffset::UTC))
                .map_err(|_| ForecastError(format!("hourly.time[{i}] is not a time: {s:?}")))?,
            Value::Number(n) => n
                .as_i64()
                .and_then(|s| OffsetDateTime::from_unix_timestamp(s).ok())
                .ok_or_else(|| ForecastError(format!("hourly.time[{i}] is not a time")))?,
            _ => return Err(ForecastError(format!("hourly.time[{i}] is not a time"))),
        };
        // A value outside the physical range of its metric (`rules::sensors`) is a gap.
        out.push(HourlyValues {
            at,
            temperature_c: number(&temperatures[i], -50.0, 70.0),
            humidity_percent: number(&humidities[i], 0.0, 100.0),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use time::macros::datetime;

    #[test]
    fn reads_the_open_meteo_shape() {
        let doc = json!({
            "latitude": 52.52, "longitude": 13.42, "utc_offset_seconds": 3600,
            "hourly_units": {"time": "iso8601", "temperature_2m": "°C"},
            "hourly": {
                "time": ["2026-12-07T00:00", "2026-12-07T01:00"],
                "temperature_2m": [-1.5, null],
                "relative_humidity_2m": [93, 250]
            }
        });
        let hours = parse(&doc).expect("forecast");
        assert_eq!(hours.len(), 2);
        assert_eq!(hours[0].at, datetime!(2026-12-06 23:00 UTC));
        assert_eq!(hours[0].temperature_c, Some(-1.5));
        assert_eq!(hours[0].humidity_percent, Some(93.0));
        assert_eq!(hours[1].temperature_c, None);
        assert_eq!(hours[1].humidity_percent, None, "out of range is a gap");
    }

    #[test]
    fn refuses_what_is_no_forecast() {
        for doc in [
            json!({"error": true, "reason": "Latitude must be in range of -90 to 90°."}),
            json!({"hourly": {"time": ["2026-12-07T00:00"]}}),
            json!({"hourly": {"time": ["x"], "temperature_2m": [1], "relative_humidity_2m": [1]}}),
            json!({"hourly": {"time": ["2026-12-07T00:00"], "temperature_2m": [], "relative_humidity_2m": [1]}}),
            json!([1, 2]),
        ] {
            assert!(parse(&doc).is_err(), "{doc}");
        }
    }

    #[test]
    fn asks_for_hourly_temperature_and_humidity_in_utc() {
        let url = forecast_url("http://127.0.0.1:9/", 52.5, -13.25).expect("url");
        assert_eq!(
            url.as_str(),
            "http://127.0.0.1:9/v1/forecast?latitude=52.5&longitude=-13.25&hourly=temperature_2m%2Crelative_humidity_2m&timezone=UTC&forecast_days=3"
        );
    }
}
