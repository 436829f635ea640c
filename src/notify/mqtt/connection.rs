//! The broker connection's options: a persistent session (clean session off, the stable
//! client id of `MQTT_CLIENT_ID`) so the broker keeps QoS 1 messages while Kultiva is away,
//! manual acknowledgements (a message is acknowledged after it is stored, so a crash between
//! the two gets it again), TLS over rustls for `mqtts://`, and the process's availability
//! topic as the last will.

use std::sync::Arc;

use rumqttc::{LastWill, MqttOptions, QoS, TlsConfiguration, Transport};

use crate::config::MqttConfig;

/// The process's availability for Home Assistant: `online` while connected (retained),
/// `offline` when it stops or, as the broker's last will, when the connection drops.
pub const STATUS_TOPIC: &str = "kultiva/status";
pub const ONLINE: &str = "online";
pub const OFFLINE: &str = "offline";

/// Packets the client may queue towards the event loop.
pub const REQUEST_CAPACITY: usize = 1024;

/// rustls with the ring provider and the Mozilla roots (as the forecast and enrichment
/// clients); `None` only if TLS could not be set up.
fn tls_config() -> Option<rustls::ClientConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    Some(
        rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .ok()?
            .with_root_certificates(roots)
            .with_no_client_auth(),
    )
}

/// The options of the process's one connection. `Err` names what failed (no secret in it).
pub fn options(cfg: &MqttConfig) -> Result<MqttOptions, String> {
    let mut opts = MqttOptions::new(cfg.client_id.clone(), cfg.host.clone(), cfg.port);
    opts.set_keep_alive(cfg.keep_alive);
    opts.set_clean_session(false);
    opts.set_manual_acks(true);
    opts.set_request_channel_capacity(REQUEST_CAPACITY);
    // Discovery configs and readings are small; a broker's larger packet is refused, not read.
    opts.set_max_packet_size(256 * 1024, 256 * 1024);
    if let Some(user) = &cfg.username {
        let password = cfg.password.as_ref().map(|p| p.expose()).unwrap_or("");
        opts.set_credentials(user.clone(), password);
    }
    if cfg.discovery {
        opts.set_last_will(LastWill::new(STATUS_TOPIC, OFFLINE, QoS::AtLeastOnce, true));
    }
    if cfg.tls {
        let tls = tls_config().ok_or("TLS could not be set up")?;
        opts.set_transport(Transport::tls_with_config(TlsConfiguration::Rustls(
            Arc::new(tls),
        )));
    }
    Ok(opts)
}
