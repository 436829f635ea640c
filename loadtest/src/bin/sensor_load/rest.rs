//! The service's REST API as the runs use it: a garden's sensors and their readings.

use serde_json::{Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::args::Args;

pub struct Api {
    pub client: reqwest::Client,
    pub base: String,
    pub token: String,
    pub slug: String,
    pub location: String,
}

impl Api {
    pub fn from_args(args: &Args) -> Result<Self, String> {
        Ok(Self {
            client: reqwest::Client::builder()
                .timeout(std::time::Duration::from_secs(120))
                .build()
                .map_err(|e| e.to_string())?,
            base: args.text("base")?,
            token: args.text("token")?,
            slug: args.text("slug")?,
            location: args.text("location")?,
        })
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}/api/v1/t/{}{path}", self.base, self.slug)
    }

    /// Sends a JSON body; the answer's JSON, or an error naming a non-2xx status.
    pub async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Vec<u8>,
    ) -> Result<Value, String> {
        let r = self
            .client
            .request(method.clone(), self.url(path))
            .bearer_auth(&self.token)
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .map_err(|e| format!("{method} {path}: {e}"))?;
        let status = r.status();
        let text = r
            .text()
            .await
            .map_err(|e| format!("{method} {path}: {e}"))?;
        if !status.is_success() {
            return Err(format!(
                "{method} {path}: {status} {}",
                text.chars().take(300).collect::<String>()
            ));
        }
        serde_json::from_str(&text).map_err(|e| format!("{method} {path}: {e}"))
    }

    /// Registers a sensor at the run's location; its key.
    pub async fn create_sensor(
        &self,
        name: &str,
        metric: &str,
        topic: Option<&str>,
    ) -> Result<String, String> {
        let mut body = json!({"name": name, "metric": metric, "location_key": self.location,
                              "source": "http"});
        if let Some(t) = topic {
            body["source"] = json!("mqtt");
            body["topic"] = json!(t);
        }
        let made = self
            .send(
                reqwest::Method::POST,
                "/sensors",
                body.to_string().into_bytes(),
            )
            .await?;
        made["key"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| format!("sensor without a key: {made}"))
    }
}

/// The instant of reading `j` of a series of `total` minute readings ending at `end`.
pub fn instant(end: OffsetDateTime, total: usize, j: usize) -> OffsetDateTime {
    end - time::Duration::minutes((total - j) as i64)
}

/// A temperature that moves through its day (deterministic, inside the metric's range).
pub fn value(j: usize, lane: usize) -> f64 {
    15.0 + ((j * 37 + lane * 11) % 1500) as f64 / 100.0
}

pub fn rfc3339(t: OffsetDateTime) -> String {
    t.format(&Rfc3339).unwrap_or_default()
}

/// The request body of readings `from..to` of a series (one lane's timeline).
pub fn readings_body(
    end: OffsetDateTime,
    total: usize,
    lane: usize,
    from: usize,
    to: usize,
) -> Vec<u8> {
    let mut out = String::with_capacity((to - from) * 56 + 16);
    out.push_str("{\"readings\":[");
    for j in from..to {
        if j > from {
            out.push(',');
        }
        out.push_str(&format!(
            "{{\"value\":{},\"measured_at\":\"{}\"}}",
            value(j, lane),
            rfc3339(instant(end, total, j))
        ));
    }
    out.push_str("]}");
    out.into_bytes()
}

/// The end of every series: the last whole minute, ten minutes back (clear of the 5 minutes
/// of future the service allows, and of the clock).
pub fn series_end() -> OffsetDateTime {
    let now = OffsetDateTime::now_utc() - time::Duration::minutes(10);
    now.replace_second(0)
        .and_then(|t| t.replace_nanosecond(0))
        .unwrap_or(now)
}
