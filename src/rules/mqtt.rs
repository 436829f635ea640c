//! MQTT rules without I/O: the topic prefix each garden owns on a shared broker, and what a
//! message's payload says (a bare number, JSON `{"value", "measured_at"?}`, or a Home
//! Assistant statestream state).

/// Every MQTT topic of a garden lies under `kultiva/<slug>/`: topics are global on a broker,
/// and the broker's ACL gives each garden's devices (and its Home Assistant) only this
/// prefix, so a sensor can never read another garden's messages.
pub fn garden_prefix(slug: &str) -> String {
    format!("kultiva/{slug}/")
}

/// Whether `topic` lies under the garden's prefix with at least one level after it, and
/// holds no empty level (`kultiva/a//x`: a broker treats it as a distinct topic, a grower
/// would not).
pub fn topic_in_garden(slug: &str, topic: &str) -> bool {
    let Some(rest) = topic.strip_prefix(&garden_prefix(slug)) else {
        return false;
    };
    !rest.is_empty() && rest.split('/').all(|level| !level.is_empty())
}

/// The states of a Home Assistant entity that carry no value: counted and skipped.
pub const HA_NO_VALUE: [&str; 2] = ["unavailable", "unknown"];

/// What a payload says.
#[derive(Debug, Clone, PartialEq)]
pub enum Payload {
    /// A value, with its own time (RFC 3339 as sent) or none (the time of arrival).
    Value {
        value: f64,
        measured_at: Option<String>,
    },
    /// A Home Assistant entity that is `unavailable` or `unknown`.
    NoValue,
}

/// Why a payload is not a reading (logged with the topic, never the payload).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PayloadError {
    Empty,
    NotUtf8,
    NotANumber,
    /// JSON, but not `{"value": <number>, "measured_at"?: <string>}`.
    BadJson(&'static str),
}

impl std::fmt::Display for PayloadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Empty => f.write_str("empty payload"),
            Self::NotUtf8 => f.write_str("payload is not UTF-8 text"),
            Self::NotANumber => f.write_str("payload is neither a number nor JSON"),
            Self::BadJson(why) => write!(f, "JSON payload {why}"),
        }
    }
}

fn number(text: &str) -> Option<f64> {
    // `inf`, `NaN` and friends parse as f64 but are no reading.
    text.parse::<f64>().ok().filter(|n| n.is_finite())
}

/// A payload of an `mqtt` sensor: a bare number (`21.5`) or JSON `{"value": 21.5}` with an
/// optional `"measured_at"` (RFC 3339; checked later by the readings' own rules).
pub fn parse_plain(payload: &[u8]) -> Result<Payload, PayloadError> {
    let text = std::str::from_utf8(payload).map_err(|_| PayloadError::NotUtf8)?;
    let text = text.trim();
    if text.is_empty() {
        return Err(PayloadError::Empty);
    }
    if let Some(n) = number(text) {
        return Ok(Payload::Value {
            value: n,
            measured_at: None,
        });
    }
    let json: serde_json::Value =
        serde_json::from_str(text).map_err(|_| PayloadError::NotANumber)?;
    let serde_json::Value::Object(mut m) = json else {
        return Err(PayloadError::BadJson("is not an object"));
    };
    let value = match m.remove("value") {
        Some(v) => v
            .as_f64()
            .filter(|n| n.is_finite())
            .ok_or(PayloadError::BadJson("has a value that is not a number"))?,
        None => return Err(PayloadError::BadJson("has no value")),
    };
    let measured_at = match m.remove("measured_at") {
        None | Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::String(s)) => Some(s),
        Some(_) => return Err(PayloadError::BadJson("has a measured_at that is not text")),
    };
    if !m.is_empty() {
        return Err(PayloadError::BadJson(
            "has fields other than value and measured_at",
        ));
    }
    Ok(Payload::Value { value, measured_at })
}

/// A payload of a `home_assistant` sensor: the entity's state as Home Assistant's
/// `mqtt_statestream` publishes it on `<base_topic>/<domain>/<entity>/state` (the bare state
/// text, e.g. `21.5`; `unavailable` and `unknown` carry no value). statestream sends strings
/// as JSON strings when asked to (`"21.5"`), which are read too.
pub fn parse_home_assistant(payload: &[u8]) -> Result<Payload, PayloadError> {
    let text = std::str::from_utf8(payload).map_err(|_| PayloadError::NotUtf8)?;
    let mut text = text.trim();
    if text.len() >= 2 && text.starts_with('"') && text.ends_with('"') {
        text = text[1..text.len() - 1].trim();
    }
    if text.is_empty() {
        return Err(PayloadError::Empty);
    }
    if HA_NO_VALUE.contains(&text) {
        return Ok(Payload::NoValue);
    }
    number(text)
        .map(|value| Payload::Value {
            value,
            measured_at: None,
        })
        .ok_or(PayloadError::NotANumber)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(v: f64) -> Result<Payload, PayloadError> {
        Ok(Payload::Value {
            value: v,
            measured_at: None,
        })
    }

    #[test]
    fn topics_stay_in_their_garden() {
        for (topic, ok) in [
            ("kultiva/g1/tent/temp", true),
            ("kultiva/g1/x", true),
            ("kultiva/g1/", false),
            ("kultiva/g1", false),
            ("kultiva/g10/tent", false),
            ("kultiva/g2/tent", false),
            ("tent/temp", false),
            ("Kultiva/g1/tent", false),
            ("kultiva/g1//tent", false),
            ("kultiva/g1/tent/", false),
            ("x/kultiva/g1/tent", false),
        ] {
            assert_eq!(topic_in_garden("g1", topic), ok, "{topic}");
        }
    }

    #[test]
    fn plain_payloads() {
        let cases: Vec<(&[u8], Result<Payload, PayloadError>)> = vec![
            (b"21.5", value(21.5)),
            (b" -3 \n", value(-3.0)),
            (b"1e2", value(100.0)),
            (br#"{"value": 6.1}"#, value(6.1)),
            (
                br#"{"value": 6.1, "measured_at": "2026-12-01T10:00:00Z"}"#,
                Ok(Payload::Value {
                    value: 6.1,
                    measured_at: Some("2026-12-01T10:00:00Z".into()),
                }),
            ),
            (br#"{"value": 6.1, "measured_at": null}"#, value(6.1)),
            (b"", Err(PayloadError::Empty)),
            (b"   ", Err(PayloadError::Empty)),
            (b"NaN", Err(PayloadError::NotANumber)),
            (b"inf", Err(PayloadError::NotANumber)),
            (b"warm", Err(PayloadError::NotANumber)),
            (b"\xff\xfe", Err(PayloadError::NotUtf8)),
            (b"[1]", Err(PayloadError::BadJson("is not an object"))),
            (b"{}", Err(PayloadError::BadJson("has no value"))),
            (
                br#"{"value": "6"}"#,
                Err(PayloadError::BadJson("has a value that is not a number")),
            ),
            (
                br#"{"value": 6, "measured_at": 5}"#,
                Err(PayloadError::BadJson("has a measured_at that is not text")),
            ),
            (
                br#"{"value": 6, "unit": "C"}"#,
                Err(PayloadError::BadJson(
                    "has fields other than value and measured_at",
                )),
            ),
        ];
        for (raw, want) in cases {
            assert_eq!(parse_plain(raw), want, "{}", String::from_utf8_lossy(raw));
        }
    }

    #[test]
    fn home_assistant_states() {
        let cases: Vec<(&[u8], Result<Payload, PayloadError>)> = vec![
            (b"21.5", value(21.5)),
            (b"\"21.5\"", value(21.5)),
            (b"unavailable", Ok(Payload::NoValue)),
            (b"unknown", Ok(Payload::NoValue)),
            (b"\"unknown\"", Ok(Payload::NoValue)),
            (b"on", Err(PayloadError::NotANumber)),
            (br#"{"value": 1}"#, Err(PayloadError::NotANumber)),
            (b"", Err(PayloadError::Empty)),
            (b"\"\"", Err(PayloadError::Empty)),
        ];
        for (raw, want) in cases {
            assert_eq!(
                parse_home_assistant(raw),
                want,
                "{}",
                String::from_utf8_lossy(raw)
            );
        }
    }
}
