//! Readings through Mosquitto: `clients` sensors of source `mqtt` on topics under the garden's
//! prefix (`kultiva/<slug>/load/<n>`), `messages` readings published to each by
//! `mosquitto_pub -l` (one payload a line, QoS 1), timed from the first publish until the
//! service has stored the last reading (polled in the database).

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::io::AsyncWriteExt;
use uuid::Uuid;

use crate::args::{Args, write_json};
use crate::db;
use crate::rest::{self, Api};

pub async fn run(args: &Args) -> Result<(), String> {
    let api = Api::from_args(args)?;
    let host = args.text_or("mqtt-host", "127.0.0.1");
    let port = args.text_or("mqtt-port", "1883");
    let clients = args.number("clients", 4)?;
    let messages = args.number("messages", 5000)?;
    let wait = args.number("wait-seconds", 120)?;
    let out = args.text("json")?;
    let pool = db::pool().await?;
    let schema = db::schema_of(&pool, &api.slug).await?;
    let mut sensors = Vec::new();
    for c in 0..clients {
        let topic = format!("kultiva/{}/load/{c}", api.slug);
        let key = api
            .create_sensor(&format!("mqtt {c}"), "temperature_c", Some(&topic))
            .await?;
        sensors.push((Uuid::parse_str(&key).map_err(|e| e.to_string())?, topic));
    }
    // The subscriber takes a new topic when the sensor is written (or at its next refresh).
    tokio::time::sleep(Duration::from_secs(3)).await;
    let end = rest::series_end();
    let payloads: Vec<Vec<u8>> = (0..clients)
        .map(|lane| {
            let mut text = String::with_capacity(messages * 64);
            for j in 0..messages {
                text.push_str(&format!(
                    "{{\"value\":{},\"measured_at\":\"{}\"}}\n",
                    rest::value(j, lane),
                    rest::rfc3339(rest::instant(end, messages, j))
                ));
            }
            text.into_bytes()
        })
        .collect();
    let expected = (clients * messages) as i64;
    let ids: Vec<Uuid> = sensors.iter().map(|(id, _)| *id).collect();
    let started = Instant::now();
    let mut publishers = Vec::new();
    for ((_, topic), payload) in sensors.iter().zip(payloads) {
        let mut child = tokio::process::Command::new("mosquitto_pub")
            .args(["-h", &host, "-p", &port, "-q", "1", "-t", topic, "-l"])
            .stdin(Stdio::piped())
            .spawn()
            .map_err(|e| format!("mosquitto_pub: {e}"))?;
        let mut stdin = child.stdin.take().ok_or("mosquitto_pub: no stdin")?;
        publishers.push(tokio::spawn(async move {
            stdin.write_all(&payload).await.map_err(|e| e.to_string())?;
            drop(stdin);
            let status = child.wait().await.map_err(|e| e.to_string())?;
            status
                .success()
                .then_some(())
                .ok_or_else(|| format!("mosquitto_pub exited with {status}"))
        }));
    }
    for p in publishers {
        p.await.map_err(|e| e.to_string())??;
    }
    let published = started.elapsed().as_secs_f64();
    let mut stored = 0;
    while started.elapsed() < Duration::from_secs(wait as u64) {
        stored = db::stored(&pool, &schema, &ids)
            .await?
            .iter()
            .map(|(_, raw, _)| raw)
            .sum();
        if stored >= expected {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let seconds = started.elapsed().as_secs_f64();
    let value = json!({
        "clients": clients, "messages_each": messages, "published": expected,
        "publish_seconds": published, "stored": stored, "seconds": seconds,
        "per_second": stored as f64 / seconds, "complete": stored == expected,
    });
    write_json(&out, &value)?;
    if stored != expected {
        return Err(format!(
            "{stored} of {expected} readings stored within {wait} s"
        ));
    }
    Ok(())
}
