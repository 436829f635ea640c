//! The alert scan of a serving process: every `ALERT_SCAN_SECONDS` it scans every garden
//! (`notify::alerts::scan_all`); off with 0. Every replica runs it; the open-once index and the conditional resolve
//! make a second replica's scan find nothing left to do.

use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::state::AppState;

pub struct AlertJob {
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

pub fn start(state: AppState) -> Option<AlertJob> {
    if state.config().alert_scan_interval.is_zero() {
        return None;
    }
    let (stop, mut stopped) = watch::channel(false);
    let task = tokio::spawn(async move {
        let every = state.config().alert_scan_interval;
        tracing::info!(every_seconds = every.as_secs(), "alert scan worker started");
        loop {
            match super::scan_all(&state, time::OffsetDateTime::now_utc()).await {
                Ok((s, failed)) => {
                    if s.opened + s.resolved > 0 {
                        tracing::info!(opened = s.opened, resolved = s.resolved, "alert scan");
                    }
                    for (slug, reason) in failed {
                        tracing::warn!(garden = %slug, error = %reason, "alert scan failed");
                    }
                }
                Err(err) => tracing::warn!(error = %err, "alert scan failed"),
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
    Some(AlertJob { stop, task })
}

impl AlertJob {
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
