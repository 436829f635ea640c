//! REST batches against COPY of the same rows, and the sensor of the chart read.

use std::time::Instant;

use futures_util::future::join_all;
use serde_json::{Value, json};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::args::{Args, median, percentile_ms, write_json};
use crate::db;
use crate::rest::{self, Api};

/// One lane: a sensor fed by one connection, its readings a timeline of minute readings.
struct Lane {
    sensor: String,
}

/// Posts every batch of each lane over its own connection (lanes in parallel); readings/s
/// over the wall time, each batch's time, and the failures.
async fn rest_round(
    api: &Api,
    lanes: &[Lane],
    batches: usize,
    batch: usize,
    end: OffsetDateTime,
) -> Result<Value, String> {
    let total = batches * batch;
    // Bodies made before the clock starts: the client's JSON writing is not the service's.
    let bodies: Vec<Vec<Vec<u8>>> = (0..lanes.len())
        .map(|lane| {
            (0..batches)
                .map(|b| rest::readings_body(end, total, lane, b * batch, (b + 1) * batch))
                .collect()
        })
        .collect();
    let bytes: usize = bodies.iter().flatten().map(Vec::len).sum();
    let started = Instant::now();
    let results = join_all(lanes.iter().zip(bodies).map(|(lane, bodies)| async move {
        let mut times = Vec::new();
        let mut failures = Vec::new();
        let mut stored = 0i64;
        let path = format!("/sensors/{}/readings", lane.sensor);
        for body in bodies {
            let t0 = Instant::now();
            match api.send(reqwest::Method::POST, &path, body).await {
                Ok(v) => stored += v["stored"].as_i64().unwrap_or(0),
                Err(e) => failures.push(e),
            }
            times.push(t0.elapsed().as_secs_f64());
        }
        (times, failures, stored)
    }))
    .await;
    let wall = started.elapsed().as_secs_f64();
    let mut times: Vec<f64> = results.iter().flat_map(|r| r.0.clone()).collect();
    times.sort_by(f64::total_cmp);
    let failures: Vec<String> = results.iter().flat_map(|r| r.1.clone()).collect();
    let stored: i64 = results.iter().map(|r| r.2).sum();
    let readings = lanes.len() * total;
    Ok(json!({
        "readings": readings,
        "requests": times.len(),
        "request_bytes": bytes,
        "stored": stored,
        "seconds": wall,
        "per_second": readings as f64 / wall,
        "batch_p50_ms": percentile_ms(&times, 50.0),
        "batch_p99_ms": percentile_ms(&times, 99.0),
        "failures": failures.len(),
        "first_failure": failures.first(),
    }))
}

/// COPY of the same rows (one lane's timeline each, onto its own sensor) on one connection per
/// lane, in parallel: rows/s over the wall time.
async fn copy_round(
    schema: &str,
    lanes: &[Lane],
    batches: usize,
    batch: usize,
    end: OffsetDateTime,
) -> Result<Value, String> {
    let total = batches * batch;
    let data: Vec<Vec<u8>> = lanes
        .iter()
        .enumerate()
        .map(|(lane, l)| {
            let mut out = String::with_capacity(total * 64);
            for j in 0..total {
                out.push_str(&format!(
                    "{}\t{}\t{}\n",
                    l.sensor,
                    rest::rfc3339(rest::instant(end, total, j)),
                    rest::value(j, lane)
                ));
            }
            out.into_bytes()
        })
        .collect();
    let started = Instant::now();
    let done = join_all(data.iter().map(|rows| db::copy_readings(schema, rows))).await;
    let wall = started.elapsed().as_secs_f64();
    let copied = done.into_iter().collect::<Result<Vec<u64>, String>>()?;
    let rows: u64 = copied.iter().sum();
    Ok(json!({"readings": rows, "seconds": wall, "per_second": rows as f64 / wall}))
}

pub async fn run(args: &Args) -> Result<(), String> {
    let api = Api::from_args(args)?;
    let clients = args.number("clients", 4)?;
    let batches = args.number("batches", 40)?;
    let batch = args.number("batch", 5000)?;
    let rounds = args.number("rounds", 2)?;
    let out = args.text("json")?;
    let pool = db::pool().await?;
    let schema = db::schema_of(&pool, &api.slug).await?;
    let mut report = Vec::new();
    let mut all_rest = Vec::new();
    let mut all_copy = Vec::new();
    for round in 1..=rounds {
        let mut rest_lanes = Vec::new();
        let mut copy_lanes = Vec::new();
        for c in 0..clients {
            let sensor = api
                .create_sensor(&format!("rest {round}-{c}"), "temperature_c", None)
                .await?;
            rest_lanes.push(Lane { sensor });
            let sensor = api
                .create_sensor(&format!("copy {round}-{c}"), "temperature_c", None)
                .await?;
            copy_lanes.push(Lane { sensor });
        }
        // The first round posts first (its batches create the month partitions, as a new
        // garden's would); later rounds alternate, so neither side always meets the larger
        // table.
        let rest_first = round % 2 == 1;
        let end = rest::series_end();
        eprintln!(
            "[sensor_load] round {round}/{rounds}: {clients} lanes x {batches} batches of {batch}, {} first",
            if rest_first { "REST" } else { "COPY" }
        );
        let (r, c) = if rest_first {
            let r = rest_round(&api, &rest_lanes, batches, batch, end).await?;
            (
                r,
                copy_round(&schema, &copy_lanes, batches, batch, end).await?,
            )
        } else {
            let c = copy_round(&schema, &copy_lanes, batches, batch, end).await?;
            (rest_round(&api, &rest_lanes, batches, batch, end).await?, c)
        };
        let ratio =
            r["per_second"].as_f64().unwrap_or(0.0) / c["per_second"].as_f64().unwrap_or(1.0);
        eprintln!(
            "[sensor_load]   REST {:.0} readings/s, COPY {:.0} rows/s, ratio {ratio:.3}",
            r["per_second"].as_f64().unwrap_or(0.0),
            c["per_second"].as_f64().unwrap_or(0.0)
        );
        all_rest.extend(rest_lanes.iter().map(|l| l.sensor.clone()));
        all_copy.extend(copy_lanes.iter().map(|l| l.sensor.clone()));
        report.push(
            json!({"round": round, "rest_first": rest_first, "rest": r, "copy": c, "ratio": ratio}),
        );
    }
    // What the database holds: every reading of every lane, and (REST) counted in its roll-ups.
    let ids = |keys: &[String]| -> Result<Vec<Uuid>, String> {
        keys.iter()
            .map(|k| Uuid::parse_str(k).map_err(|e| e.to_string()))
            .collect()
    };
    let expected = (batches * batch) as i64;
    let rest_rows = db::stored(&pool, &schema, &ids(&all_rest)?).await?;
    let copy_rows = db::stored(&pool, &schema, &ids(&all_copy)?).await?;
    let rest_ok = rest_rows
        .iter()
        .all(|(_, raw, hourly)| *raw == expected && *hourly == expected);
    let copy_ok = copy_rows.iter().all(|(_, raw, _)| *raw == expected);
    let failures: i64 = report
        .iter()
        .map(|r| r["rest"]["failures"].as_i64().unwrap_or(0))
        .sum();
    let ratios: Vec<f64> = report
        .iter()
        .map(|r| r["ratio"].as_f64().unwrap_or(0.0))
        .collect();
    let value = json!({
        "clients": clients, "batches": batches, "batch": batch, "rounds": report,
        "ratio_median": median(ratios.clone()),
        "ratio_min": ratios.iter().copied().fold(f64::INFINITY, f64::min),
        "rest_median": median(report.iter().map(|r| r["rest"]["per_second"].as_f64().unwrap_or(0.0)).collect()),
        "copy_median": median(report.iter().map(|r| r["copy"]["per_second"].as_f64().unwrap_or(0.0)).collect()),
        "checked": {"rest_sensors": rest_rows.len(), "copy_sensors": copy_rows.len(),
                    "readings_each": expected, "rest_ok": rest_ok, "copy_ok": copy_ok},
        "failures": failures,
    });
    write_json(&out, &value)?;
    if failures > 0 || !rest_ok || !copy_ok {
        return Err(format!(
            "{failures} failed batches; stored as expected: REST {rest_ok}, COPY {copy_ok}"
        ));
    }
    Ok(())
}

/// One sensor with `days` days of minute readings ending now, posted in batches of 5000.
pub async fn chart(args: &Args) -> Result<(), String> {
    let api = Api::from_args(args)?;
    let days = args.number("days", 30)?;
    let out = args.text("out")?;
    let sensor = api.create_sensor("chart", "temperature_c", None).await?;
    let total = days * 24 * 60;
    let end = rest::series_end();
    let path = format!("/sensors/{sensor}/readings");
    let mut from = 0;
    while from < total {
        let to = (from + 5000).min(total);
        api.send(
            reqwest::Method::POST,
            &path,
            rest::readings_body(end, total, 0, from, to),
        )
        .await?;
        from = to;
    }
    let first = rest::instant(end, total, 0);
    let window = format!(
        "{}/readings?from={}&to={}&step=1h",
        sensor,
        rest::rfc3339(first),
        rest::rfc3339(end)
    );
    std::fs::write(&out, format!("{sensor}\n{window}\n")).map_err(|e| format!("{out}: {e}"))?;
    eprintln!("[sensor_load] chart sensor {sensor}: {total} readings over {days} days");
    Ok(())
}
