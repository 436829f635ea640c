//! The weather poll of a serving process: with `WEATHER_URL` set, every `WEATHER_POLL_MINUTES`
//! it polls every garden (`notify::weather::poll_all`), the first time at start; off with 0.
//! Every replica runs it: the readings' key and the open-once index of alerts make a second
//! replica's poll store and open nothing twice.

use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::state::AppState;

pub struct WeatherJob {
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

pub fn start(state: AppState) -> Option<WeatherJob> {
    let every = state.config().weather_poll_interval;
    if state.config().weather_url.is_none() || every.is_zero() {
        return None;
    }
    let (stop, mut stopped) = watch::channel(false);
    let task = tokio::spawn(async move {
        tracing::info!(
            every_minutes = every.as_secs() / 60,
            "weather poll worker started"
        );
        loop {
            match super::poll_all(&state, time::OffsetDateTime::now_utc()).await {
                Ok((s, failed)) => {
                    tracing::info!(
                        sites = s.sites,
                        fetched = s.fetched,
                        fetch_failures = s.fetch_failures,
                        stored = s.stored,
                        opened = s.opened,
                        resolved = s.resolved,
                        "weather poll"
                    );
                    for (slug, reason) in failed {
                        tracing::warn!(garden = %slug, error = %reason, "weather poll failed");
                    }
                }
                Err(err) => tracing::warn!(error = %err, "weather poll failed"),
            }
            tokio::select! {
                () = tokio::time::sleep(every) => {}
                changed = stopped.changed() => {
                    if changed.is_err() || *stopped.borrow() {
                        break;
                    }
                }
            }
        }
    });
    Some(WeatherJob { stop, task })
}

impl WeatherJob {
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        let mut task = self.task;
        if tokio::time::timeout(std::time::Duration::from_secs(30), &mut task)
            .await
            .is_err()
        {
            task.abort();
        }
    }
}
