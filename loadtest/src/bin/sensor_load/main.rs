//! Sensor figures of issue 40 for `loadtest/sensors` (see that script for the whole run).
//!
//! ```text
//! sensor_load ingest --base URL --token T --slug S --location KEY [--clients 4]
//!                    [--batches 40] [--batch 5000] [--rounds 2] --json FILE
//! sensor_load chart  --base URL --token T --slug S --location KEY [--days 30] --out FILE
//! sensor_load mqtt   --base URL --token T --slug S --location KEY --mqtt-host H --mqtt-port P
//!                    [--clients 4] [--messages 5000] --json FILE
//! sensor_load scale  --gardens N [--jobs 4] [--prefix P] --json FILE
//! ```
//!
//! - `ingest`: readings over `POST /t/{slug}/sensors/{key}/readings` in batches, against `COPY`
//!   of the same rows into the same table (the garden's `sensor_readings`), rounds alternating
//!   which goes first; every stored row checked at the end (DATABASE_URL).
//! - `chart`: one sensor with DAYS days of minute readings (through the REST route, so the
//!   hourly roll-ups are the service's own); its key and the window go to FILE for wrk.
//! - `mqtt`: readings published to Mosquitto on the sensors' topics, timed until the service
//!   has stored the last of them.
//! - `scale`: N gardens (provisioned JOBS at a time), each with a site, a location, a plant and
//!   10 sensors reporting every minute for the last hour; then the alert scan of every garden
//!   twice (the first opens an alert per garden, the second finds nothing new), each timed with
//!   PostgreSQL's work during it. Uses the service's environment (DATABASE_URL, …).
//!
//! Every HTTP answer that is not 2xx counts as a failure and fails the run (exit 1).

mod args;
mod db;
mod ingest;
mod mqtt;
mod rest;
mod scale;

use args::Args;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let mut raw = std::env::args().skip(1);
    let command = raw.next().unwrap_or_default();
    let args = match Args::parse(raw) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("sensor_load: {e}");
            std::process::exit(2);
        }
    };
    let result = match command.as_str() {
        "ingest" => ingest::run(&args).await,
        "chart" => ingest::chart(&args).await,
        "mqtt" => mqtt::run(&args).await,
        "scale" => scale::run(&args).await,
        other => Err(format!(
            "unknown command {other:?} (ingest, chart, mqtt, scale)"
        )),
    };
    if let Err(e) = result {
        eprintln!("sensor_load {command}: {e}");
        std::process::exit(1);
    }
}
