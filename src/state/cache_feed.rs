//! The invalidation listener of one replica: a dedicated connection that `LISTEN`s on
//! [`CHANNEL`], and a pinger that proves, every [`PING_EVERY`], that it still hears it.

use std::time::Duration;

use sqlx::postgres::{PgListener, PgPoolOptions};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::cache::{CHANNEL, PING_EVERY};
use crate::state::AppState;

/// Wait before reconnecting a listener that failed.
const RETRY: Duration = Duration::from_millis(250);

/// The running listener and pinger; stopped with the server.
pub struct FeedWorker {
    stop: watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
}

impl FeedWorker {
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        for task in self.tasks {
            task.abort();
            let _ = task.await;
        }
    }
}

/// Starts listening (the caches serve only young entries until the first ping comes back).
pub fn start(state: AppState) -> FeedWorker {
    let (stop, stopped) = watch::channel(false);
    let listener = tokio::spawn(listen(state.clone(), stopped.clone()));
    let pinger = tokio::spawn(ping(state, stopped));
    FeedWorker {
        stop,
        tasks: vec![listener, pinger],
    }
}

async fn listen(state: AppState, mut stopped: watch::Receiver<bool>) {
    // A pool of one, outside the request pools, so the listener never takes a request's
    // connection; it reconnects through this pool.
    let options = state
        .placements()
        .primary()
        .connect_options()
        .clone()
        .application_name("kultiva-cache-feed");
    let pool = PgPoolOptions::new()
        .max_connections(1)
        .min_connections(0)
        .acquire_timeout(Duration::from_secs(5))
        .connect_lazy_with(options);
    let caches = state.caches();
    while !*stopped.borrow() {
        caches.feed().lost();
        let connected = async {
            let mut listener = PgListener::connect_with(&pool).await?;
            listener.listen(CHANNEL).await?;
            let pid: i32 = sqlx::query_scalar("SELECT pg_backend_pid()")
                .fetch_one(&mut listener)
                .await?;
            Ok::<_, sqlx::Error>((listener, pid))
        };
        let (mut listener, pid) = tokio::select! {
            _ = stopped.changed() => break,
            made = connected => match made {
                Ok(l) => l,
                Err(err) => {
                    tracing::warn!(error = %err, "cache feed: cannot listen; caches serve young entries only");
                    tokio::time::sleep(RETRY).await;
                    continue;
                }
            },
        };
        // Reconnections are ours: a lost connection must end the session first.
        listener.eager_reconnect(false);
        caches
            .feed()
            .set_backend_pid(u32::try_from(pid).unwrap_or(0));
        loop {
            let next = tokio::select! {
                _ = stopped.changed() => return,
                next = listener.try_recv() => next,
            };
            match next {
                Ok(Some(notification)) => caches.receive(notification.payload()),
                Ok(None) => {
                    tracing::warn!("cache feed: listener connection lost; reconnecting");
                    break;
                }
                Err(err) => {
                    tracing::warn!(error = %err, "cache feed: listener failed; reconnecting");
                    break;
                }
            }
        }
        caches.feed().set_backend_pid(0);
        caches.feed().lost();
        drop(listener);
        tokio::time::sleep(RETRY).await;
    }
    caches.feed().lost();
    pool.close().await;
}

async fn ping(state: AppState, mut stopped: watch::Receiver<bool>) {
    let mut tick = tokio::time::interval(PING_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut seq: u64 = 0;
    loop {
        tokio::select! {
            _ = stopped.changed() => return,
            _ = tick.tick() => {}
        }
        seq += 1;
        let payload = state.caches().feed().ping_payload(seq);
        let sent = sqlx::query("SELECT pg_notify($1, $2)")
            .bind(CHANNEL)
            .bind(&payload)
            .execute(state.platform_pool());
        match tokio::time::timeout(PING_EVERY * 5, sent).await {
            Ok(Ok(_)) => {}
            Ok(Err(err)) => tracing::debug!(error = %err, "cache feed: ping failed"),
            Err(_) => tracing::debug!("cache feed: ping timed out"),
        }
    }
}
