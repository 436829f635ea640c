//! The MQTT part of the configuration: the broker (`MQTT_URL`), the subscriber's timings and
//! limits, and Home Assistant discovery. Read by [`super::Config::from_lookup`].

use std::time::Duration;

use super::{Reader, Secret};

/// Where and how the process talks to an MQTT broker. Present only with `MQTT_URL` set.
#[derive(Debug, Clone)]
pub struct MqttConfig {
    pub host: String,
    pub port: u16,
    /// `mqtts://`: TLS (rustls, the Mozilla roots).
    pub tls: bool,
    pub username: Option<String>,
    /// From the URL; never logged (`Secret`).
    pub password: Option<Secret>,
    /// `MQTT_CLIENT_ID`: the stable client id of the persistent session (`kultiva`); each
    /// replica needs its own.
    pub client_id: String,
    /// `MQTT_TOPIC_REFRESH_SECONDS`: how often the subscriber re-reads the sensors' topics
    /// (30); sensor writes in this process refresh at once besides.
    pub topic_refresh: Duration,
    /// `MQTT_RECONNECT_MAX_SECONDS`: the cap of the reconnect backoff (60); it starts at one
    /// second and doubles.
    pub reconnect_max: Duration,
    /// `MQTT_KEEP_ALIVE_SECONDS`: the MQTT keep-alive (30).
    pub keep_alive: Duration,
    /// `MQTT_MESSAGES_PER_GARDEN_PER_MINUTE`: messages one garden may send (600, a burst of
    /// as many); more are counted and dropped.
    pub per_garden_per_minute: u32,
    /// `HOME_ASSISTANT_DISCOVERY`: publish discovery configs and states (false).
    pub discovery: bool,
    /// `HOME_ASSISTANT_DISCOVERY_PREFIX`: Home Assistant's discovery prefix (`homeassistant`);
    /// `{slug}` in it becomes the garden's slug (e.g. `kultiva/{slug}/homeassistant`, so a
    /// garden's configs lie under its own prefix on a shared broker).
    pub discovery_prefix: String,
    /// `HOME_ASSISTANT_PUBLISH_SECONDS`: how often the states are compared and what changed is
    /// published (60).
    pub discovery_interval: Duration,
}

impl MqttConfig {
    /// `host:port` and the scheme, for log lines (no credentials).
    pub fn broker(&self) -> String {
        let scheme = if self.tls { "mqtts" } else { "mqtt" };
        format!("{scheme}://{}:{}", self.host, self.port)
    }
}

/// The parts of an `MQTT_URL`.
struct BrokerUrl {
    host: String,
    port: u16,
    tls: bool,
    username: Option<String>,
    password: Option<Secret>,
}

/// Checks an `MQTT_URL` without ever repeating it (it may hold a password).
fn parse_url(raw: &str) -> Result<BrokerUrl, String> {
    let url = url::Url::parse(raw)
        .map_err(|_| "MQTT_URL is not a URL like mqtt://user:pass@host:1883".to_owned())?;
    let tls = match url.scheme() {
        "mqtt" => false,
        "mqtts" => true,
        _ => return Err("MQTT_URL must start with mqtt:// or mqtts://".into()),
    };
    let host = match url.host() {
        Some(url::Host::Domain(d)) if !d.is_empty() => d.to_owned(),
        Some(url::Host::Ipv4(ip)) => ip.to_string(),
        Some(url::Host::Ipv6(ip)) => ip.to_string(),
        _ => return Err("MQTT_URL names no host".into()),
    };
    if !(url.path().is_empty() || url.path() == "/") || url.query().is_some() {
        return Err("MQTT_URL takes no path or query: mqtt://user:pass@host:port".into());
    }
    let port = url.port().unwrap_or(if tls { 8883 } else { 1883 });
    let decode = |s: &str| {
        url::form_urlencoded::parse(format!("x={s}").as_bytes())
            .next()
            .map(|(_, v)| v.into_owned())
            .unwrap_or_default()
    };
    let username = (!url.username().is_empty()).then(|| decode(url.username()));
    let password = url.password().map(|p| Secret::new(decode(p)));
    if password.is_some() && username.is_none() {
        return Err("MQTT_URL has a password without a user".into());
    }
    Ok(BrokerUrl {
        host,
        port,
        tls,
        username,
        password,
    })
}

pub(super) fn read(r: &mut Reader<'_>) -> Option<MqttConfig> {
    let discovery = r.flag("HOME_ASSISTANT_DISCOVERY", false);
    let client_id = r.string("MQTT_CLIENT_ID", "kultiva");
    if client_id.is_empty()
        || client_id.len() > 64
        || !client_id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    {
        r.problems
            .push("MQTT_CLIENT_ID must be 1-64 characters of letters, digits, - _ .".into());
    }
    let topic_refresh = Duration::from_secs(u64::from(r.bounded(
        "MQTT_TOPIC_REFRESH_SECONDS",
        30,
        1,
        3600,
    )));
    let reconnect_max = Duration::from_secs(u64::from(r.bounded(
        "MQTT_RECONNECT_MAX_SECONDS",
        60,
        1,
        3600,
    )));
    let keep_alive =
        Duration::from_secs(u64::from(r.bounded("MQTT_KEEP_ALIVE_SECONDS", 30, 5, 3600)));
    let per_garden_per_minute = r.bounded(
        "MQTT_MESSAGES_PER_GARDEN_PER_MINUTE",
        600,
        1,
        super::MAX_RATE_PER_MINUTE,
    );
    let discovery_prefix = r
        .string("HOME_ASSISTANT_DISCOVERY_PREFIX", "homeassistant")
        .trim_matches('/')
        .to_owned();
    if discovery_prefix.is_empty()
        || discovery_prefix.contains(['+', '#'])
        || discovery_prefix.split('/').any(str::is_empty)
    {
        r.problems.push(
            "HOME_ASSISTANT_DISCOVERY_PREFIX must be a topic without + or # or empty levels".into(),
        );
    }
    let discovery_interval = Duration::from_secs(u64::from(r.bounded(
        "HOME_ASSISTANT_PUBLISH_SECONDS",
        60,
        1,
        86_400,
    )));
    let Some(raw) = r.raw("MQTT_URL") else {
        if discovery {
            r.problems
                .push("HOME_ASSISTANT_DISCOVERY=true needs MQTT_URL".into());
        }
        return None;
    };
    match parse_url(&raw) {
        Ok(b) => Some(MqttConfig {
            host: b.host,
            port: b.port,
            tls: b.tls,
            username: b.username,
            password: b.password,
            client_id,
            topic_refresh,
            reconnect_max,
            keep_alive,
            per_garden_per_minute,
            discovery,
            discovery_prefix,
            discovery_interval,
        }),
        Err(why) => {
            r.problems.push(why);
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let b = parse_url("mqtt://dev%40x:p%3Ass@broker.example:1884").expect("valid");
        assert_eq!(
            (b.host.as_str(), b.port, b.tls),
            ("broker.example", 1884, false)
        );
        assert_eq!(b.username.as_deref(), Some("dev@x"));
        assert_eq!(b.password.as_ref().map(Secret::expose), Some("p:ss"));
        let b = parse_url("mqtts://10.0.0.1").expect("valid");
        assert_eq!(
            (b.port, b.tls, b.username, b.password.is_none()),
            (8883, true, None, true)
        );
        for bad in [
            "http://h:1883",
            "mqtt://",
            "mqtt://h:1883/topic",
            "mqtt://h?x=1",
            "mqtt://:secret@h",
            "not a url",
        ] {
            let err = parse_url(bad).err().unwrap_or_default();
            assert!(!err.is_empty(), "{bad}");
            assert!(!err.contains("secret"), "{err}");
        }
    }
}
