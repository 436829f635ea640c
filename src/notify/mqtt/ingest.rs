//! One MQTT message to readings: the topic's sensors, the garden's rate limit, the payload
//! read by the sensor's source (`rules::mqtt`), then the same checks and the same write as a
//! REST batch (`Readings::from_json` for the time, `record_readings` for the range and the
//! idempotency per (sensor, `measured_at`)). Every message ends in one outcome word, counted
//! in `kultiva_mqtt_messages_total{outcome}`; none is fatal.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use governor::{DefaultKeyedRateLimiter, Quota};
use serde_json::{Map, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use uuid::Uuid;

use super::topics::{Target, TopicMap};
use crate::error::ErrorCode;
use crate::garden::sensors::model::{Readings, SensorSource};
use crate::garden::sensors::service::record_readings;
use crate::rules::mqtt::{Payload, parse_home_assistant, parse_plain};
use crate::state::AppState;
use crate::values::json::{FromJson, JsonFields};

/// How often a garden's rate-limit drops are logged at most (the count since in the line).
const DROP_LOG_EVERY: Duration = Duration::from_secs(60);

/// What became of a message (the metric's `outcome` label).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Stored,
    AlreadyPresent,
    Malformed,
    OutOfRange,
    Unavailable,
    Stale,
    RateLimited,
    UnknownTopic,
    Failed,
}

impl Outcome {
    pub fn label(self) -> &'static str {
        match self {
            Self::Stored => "stored",
            Self::AlreadyPresent => "already_present",
            Self::Malformed => "malformed",
            Self::OutOfRange => "out_of_range",
            Self::Unavailable => "unavailable",
            Self::Stale => "stale",
            Self::RateLimited => "rate_limited",
            Self::UnknownTopic => "unknown_topic",
            Self::Failed => "failed",
        }
    }
}

/// The per-garden limiter and its log throttle.
pub struct Limiter {
    limiter: DefaultKeyedRateLimiter<Uuid>,
    drops: HashMap<Uuid, (Instant, u64)>,
}

impl Limiter {
    pub fn new(per_minute: u32) -> Self {
        let per_minute = std::num::NonZeroU32::new(per_minute).unwrap_or(std::num::NonZeroU32::MIN);
        Self {
            limiter: DefaultKeyedRateLimiter::hashmap(Quota::per_minute(per_minute)),
            drops: HashMap::new(),
        }
    }

    /// Whether the garden may send one more message; a refusal is logged at most once a
    /// minute per garden, with how many were dropped since.
    fn allow(&mut self, garden: Uuid, slug: &str) -> bool {
        if self.limiter.check_key(&garden).is_ok() {
            return true;
        }
        let now = Instant::now();
        let entry = self
            .drops
            .entry(garden)
            .or_insert((now - DROP_LOG_EVERY, 0));
        entry.1 += 1;
        if now.duration_since(entry.0) >= DROP_LOG_EVERY {
            tracing::warn!(
                garden = %slug,
                dropped = entry.1,
                "MQTT messages over the garden's rate limit dropped"
            );
            *entry = (now, 0);
        }
        false
    }

    /// Forgets the state of quiet gardens (bounded memory over many gardens).
    pub fn shrink(&mut self) {
        self.limiter.retain_recent();
        self.drops
            .retain(|_, (at, n)| *n > 0 || at.elapsed() < DROP_LOG_EVERY);
    }
}

/// The outcomes of one message: one per sensor the topic feeds (usually one), or one
/// `unknown_topic`/`rate_limited`.
pub async fn handle(
    state: &AppState,
    map: &TopicMap,
    limiter: &mut Limiter,
    topic: &str,
    payload: &[u8],
    retained: bool,
) -> Vec<Outcome> {
    let Some(targets) = map.targets.get(topic) else {
        tracing::debug!(topic, "MQTT message on a topic no sensor reads");
        return vec![Outcome::UnknownTopic];
    };
    let Some(first) = targets.first() else {
        return vec![Outcome::UnknownTopic];
    };
    if !limiter.allow(first.tenant.id, first.tenant.slug.as_str()) {
        return vec![Outcome::RateLimited];
    }
    let mut out = Vec::with_capacity(targets.len());
    for target in targets {
        out.push(one(state, target, topic, payload, retained).await);
    }
    out
}

async fn one(
    state: &AppState,
    target: &Target,
    topic: &str,
    payload: &[u8],
    retained: bool,
) -> Outcome {
    let slug = target.tenant.slug.as_str();
    let parsed = match target.source {
        SensorSource::HomeAssistant => parse_home_assistant(payload),
        _ => parse_plain(payload),
    };
    let (value, measured_at) = match parsed {
        Ok(Payload::Value { value, measured_at }) => (value, measured_at),
        Ok(Payload::NoValue) => return Outcome::Unavailable,
        Err(why) => {
            tracing::warn!(garden = %slug, topic, reason = %why, "malformed MQTT message");
            return Outcome::Malformed;
        }
    };
    // A retained message is delivered again on every new subscription: without its own time
    // it would be stored as new at each one.
    if retained && measured_at.is_none() {
        return Outcome::Stale;
    }
    let at = match measured_at {
        Some(at) => at,
        None => match OffsetDateTime::now_utc().format(&Rfc3339) {
            Ok(now) => now,
            Err(_) => return Outcome::Failed,
        },
    };
    let mut body = Map::new();
    body.insert(
        "readings".to_owned(),
        json!([{"value": value, "measured_at": at}]),
    );
    let mut fields = JsonFields::new(body);
    let readings = Readings::from_json(&mut fields);
    let readings = match fields.finish(readings) {
        Ok(r) => r,
        Err(e) => {
            let reason = e
                .details()
                .first()
                .map(|d| d.reason.clone())
                .unwrap_or_default();
            tracing::warn!(garden = %slug, topic, reason = %reason, "malformed MQTT message");
            return Outcome::Malformed;
        }
    };
    let key = target.sensor.to_string();
    match record_readings(state, &target.tenant, &key, &readings, true).await {
        Ok(s) if s.stored > 0 => Outcome::Stored,
        Ok(_) => Outcome::AlreadyPresent,
        Err(e) if e.code() == ErrorCode::ValidationError => {
            let reason = e
                .details()
                .first()
                .map(|d| d.reason.clone())
                .unwrap_or_default();
            tracing::warn!(garden = %slug, topic, reason = %reason, "MQTT reading refused");
            Outcome::OutOfRange
        }
        // Deleted since the topics were read.
        Err(e) if e.code() == ErrorCode::EntityNotFound => Outcome::UnknownTopic,
        Err(e) => {
            tracing::warn!(garden = %slug, topic, error = %e, "MQTT reading not stored");
            Outcome::Failed
        }
    }
}
