//! The scheduled digest job of a serving process: every `DIGEST_INTERVAL_SECONDS` it sends the
//! digests whose local hour has come. Every replica runs it; the sent record (see the module
//! text) makes one of them queue each mail. Off with `DIGEST_SCHEDULE=false`.

use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::state::AppState;

pub struct DigestJob {
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

pub fn start(state: AppState) -> Option<DigestJob> {
    if !state.config().digest_schedule {
        return None;
    }
    let (stop, mut stopped) = watch::channel(false);
    let task = tokio::spawn(async move {
        let every = state.config().digest_interval;
        loop {
            match super::service::send_due(&state, false, None).await {
                Ok(s) if s.sent > 0 => tracing::info!(sent = s.sent, "digest mails queued"),
                Ok(_) => {}
                Err(err) => tracing::warn!(error = %err, "digest run failed"),
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
    Some(DigestJob { stop, task })
}

impl DigestJob {
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
