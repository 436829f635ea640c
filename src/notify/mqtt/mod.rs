//! The MQTT side of a serving process (with `MQTT_URL` set): one connection to the broker,
//! one subscriber that takes every topic some `mqtt` or `home_assistant` sensor of an active
//! garden names, and, with `HOME_ASSISTANT_DISCOVERY=true`, the Home Assistant discovery
//! publisher (`discovery`).
//!
//! Three tasks share the connection:
//! - the event loop polls the broker; on an error it waits (1 s, doubling up to
//!   `MQTT_RECONNECT_MAX_SECONDS`) and connects again. The session is persistent (clean
//!   session off, `MQTT_CLIENT_ID`), so the broker keeps the subscriptions and the QoS 1
//!   messages of the time Kultiva was away and hands them over on reconnect;
//! - the worker stores each message (`ingest`) and only then acknowledges it, and keeps the
//!   subscriptions equal to the sensors' topics: it re-reads them every
//!   `MQTT_TOPIC_REFRESH_SECONDS`, at once after a sensor is written in this process, and
//!   subscribes everything again after a connection whose broker had no session;
//! - the discovery publisher (`discovery::run`).

pub mod connection;
pub mod discovery;
pub mod ingest;
pub mod topics;

use std::collections::BTreeSet;
use std::time::Duration;

use rumqttc::{AsyncClient, Event, EventLoop, Packet, Publish, QoS, SubscribeFilter};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use crate::state::AppState;
use topics::TopicMap;

/// Most topics in one SUBSCRIBE packet.
const SUBSCRIBE_BATCH: usize = 100;
/// The first wait before a reconnect; it doubles up to the configured cap.
const BACKOFF_START: Duration = Duration::from_secs(1);

/// What the event loop tells the worker.
enum Signal {
    Connected { session_present: bool },
    Message(Publish),
}

pub struct MqttJob {
    stop: watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
    client: AsyncClient,
    discovery: bool,
}

/// Starts the connection and its tasks; `None` without `MQTT_URL` (or when the options
/// cannot be built, which is logged).
pub fn start(state: AppState) -> Option<MqttJob> {
    let cfg = state.config().mqtt.clone()?;
    let opts = match connection::options(&cfg) {
        Ok(o) => o,
        Err(why) => {
            tracing::error!(broker = %cfg.broker(), error = %why, "MQTT not started");
            return None;
        }
    };
    let (client, eventloop) = AsyncClient::new(opts, connection::REQUEST_CAPACITY);
    let (stop, stopped) = watch::channel(false);
    let (signals, incoming) = mpsc::unbounded_channel();
    tracing::info!(
        broker = %cfg.broker(),
        client_id = %cfg.client_id,
        discovery = cfg.discovery,
        "MQTT started"
    );
    let mut tasks = vec![
        tokio::spawn(poll(
            eventloop,
            signals,
            stopped.clone(),
            cfg.reconnect_max,
            client.clone(),
            cfg.discovery,
        )),
        tokio::spawn(work(
            state.clone(),
            client.clone(),
            incoming,
            stopped.clone(),
        )),
    ];
    if cfg.discovery {
        tasks.push(tokio::spawn(discovery::run(state, client.clone(), stopped)));
    }
    Some(MqttJob {
        stop,
        tasks,
        client,
        discovery: cfg.discovery,
    })
}

impl MqttJob {
    /// Says `offline` (discovery), disconnects cleanly (the broker keeps the session) and
    /// waits a little for the tasks.
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        if self.discovery {
            let _ = self
                .client
                .publish(
                    connection::STATUS_TOPIC,
                    QoS::AtLeastOnce,
                    true,
                    connection::OFFLINE,
                )
                .await;
        }
        let _ = self.client.disconnect().await;
        for mut task in self.tasks {
            if tokio::time::timeout(Duration::from_secs(5), &mut task)
                .await
                .is_err()
            {
                task.abort();
            }
        }
    }
}

async fn poll(
    mut eventloop: EventLoop,
    signals: mpsc::UnboundedSender<Signal>,
    mut stopped: watch::Receiver<bool>,
    backoff_max: Duration,
    client: AsyncClient,
    discovery: bool,
) {
    let mut backoff = BACKOFF_START;
    let mut stopping = false;
    loop {
        let event = tokio::select! {
            e = eventloop.poll() => e,
            changed = stopped.changed(), if !stopping => {
                // Keep polling so the disconnect (sent by `stop`) goes out.
                stopping = changed.is_err() || *stopped.borrow();
                continue;
            }
        };
        match event {
            Ok(Event::Incoming(Packet::ConnAck(ack))) => {
                backoff = BACKOFF_START;
                tracing::info!(session_present = ack.session_present, "MQTT connected");
                if discovery {
                    let _ = client.try_publish(
                        connection::STATUS_TOPIC,
                        QoS::AtLeastOnce,
                        true,
                        connection::ONLINE,
                    );
                }
                let _ = signals.send(Signal::Connected {
                    session_present: ack.session_present,
                });
            }
            Ok(Event::Incoming(Packet::Publish(p))) => {
                let _ = signals.send(Signal::Message(p));
            }
            Ok(Event::Outgoing(rumqttc::Outgoing::Disconnect)) if stopping => break,
            Ok(_) => {}
            Err(err) => {
                if stopping {
                    break;
                }
                tracing::warn!(
                    error = %err,
                    retry_in_seconds = backoff.as_secs(),
                    "MQTT connection lost"
                );
                tokio::select! {
                    () = tokio::time::sleep(backoff) => {}
                    _ = stopped.changed() => break,
                }
                backoff = (backoff * 2).min(backoff_max);
            }
        }
    }
}

/// Subscribes `topics` in batches; `false` when the request could not be queued.
async fn subscribe(client: &AsyncClient, topics: &[String]) -> bool {
    for batch in topics.chunks(SUBSCRIBE_BATCH) {
        let filters = batch
            .iter()
            .map(|t| SubscribeFilter::new(t.clone(), QoS::AtLeastOnce));
        if client.subscribe_many(filters).await.is_err() {
            return false;
        }
    }
    true
}

/// Re-reads the topics and subscribes or unsubscribes what changed (`all`: subscribe every
/// topic, for a broker that lost the session).
async fn refresh(
    state: &AppState,
    client: &AsyncClient,
    map: &mut TopicMap,
    subscribed: &mut BTreeSet<String>,
    all: bool,
) {
    match topics::read(state, map).await {
        Ok((fresh, failed)) => {
            for (slug, reason) in failed {
                tracing::warn!(garden = %slug, error = %reason, "MQTT topics not read");
            }
            *map = fresh;
        }
        Err(e) => {
            tracing::warn!(error = %e, "MQTT topics not read");
            if !all {
                return;
            }
        }
    }
    let wanted = map.topics();
    let base = if all {
        BTreeSet::new()
    } else {
        subscribed.clone()
    };
    let (add, gone) = topics::diff(&base, &wanted);
    let mut ok = subscribe(client, &add).await;
    for topic in &gone {
        ok &= client.unsubscribe(topic.clone()).await.is_ok();
    }
    if ok {
        if !add.is_empty() || !gone.is_empty() {
            tracing::info!(
                subscribed = add.len(),
                unsubscribed = gone.len(),
                topics = wanted.len(),
                "MQTT topics changed"
            );
        }
        *subscribed = wanted;
    }
}

async fn work(
    state: AppState,
    client: AsyncClient,
    mut incoming: mpsc::UnboundedReceiver<Signal>,
    mut stopped: watch::Receiver<bool>,
) {
    let Some(cfg) = state.config().mqtt.clone() else {
        return;
    };
    let mut limiter = ingest::Limiter::new(cfg.per_garden_per_minute);
    let mut map = TopicMap::default();
    let mut subscribed = BTreeSet::new();
    let changed = crate::garden::sensors::service::sensors_changed();
    let mut tick = tokio::time::interval(cfg.topic_refresh);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            signal = incoming.recv() => match signal {
                None => break,
                Some(Signal::Connected { session_present }) => {
                    refresh(&state, &client, &mut map, &mut subscribed, !session_present).await;
                }
                Some(Signal::Message(p)) => {
                    let outcomes =
                        ingest::handle(&state, &map, &mut limiter, &p.topic, &p.payload, p.retain)
                            .await;
                    for o in outcomes {
                        crate::metrics::mqtt_message(o.label());
                    }
                    // Acknowledged once stored: a crash before gets the message again.
                    let _ = client.ack(&p).await;
                }
            },
            _ = tick.tick() => {
                refresh(&state, &client, &mut map, &mut subscribed, false).await;
                limiter.shrink();
            }
            () = changed.notified() => {
                refresh(&state, &client, &mut map, &mut subscribed, false).await;
            }
            _ = stopped.changed() => break,
        }
    }
}
