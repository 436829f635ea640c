//! Rendition workers: claim a job from `platform.photo_rendition_jobs` (`FOR UPDATE SKIP
//! LOCKED`, then a lease), read the original, make the 512 px and 1280 px WebP renditions on a
//! blocking thread, store them, record them, delete the job. A failed attempt frees the job
//! for a later retry (backing off); after `PHOTO_RENDITION_MAX_ATTEMPTS` the photo is marked
//! unavailable and the job is parked with its last error. Workers start and stop with the
//! server (`PHOTO_RENDITION_WORKERS`).

use std::time::Duration;

use tokio::sync::{Notify, watch};
use tokio::task::JoinHandle;
use uuid::Uuid;

use super::media::{self, Format, PixelLimits};
use super::repo::{self, Job};
use crate::state::AppState;
use crate::store::photos::{self as storage, PhotoStorage, StorageKey};
use crate::tenancy::TenantTx;

/// How long a claim holds a job; a worker that died frees it after this.
pub const LEASE_SECONDS: i64 = 300;
/// How often an idle worker looks for due jobs (a retry's `run_after`, another process's
/// uploads); this process's own uploads wake it at once.
const POLL: Duration = Duration::from_secs(2);

static SIGNAL: Notify = Notify::const_new();

/// Wakes the idle workers of this process (called after an upload queued its job).
pub fn wake() {
    SIGNAL.notify_waiters();
}

/// Seconds until the retry after the `attempts`-th failure: 10 s, 20 s, 40 s … at most 10 min.
pub fn backoff_seconds(attempts: i32) -> i64 {
    let exp = attempts.clamp(1, 7) - 1;
    (10i64 << exp).min(600)
}

/// What one claimed job came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Renditions stored and recorded.
    Rendered { photo: Uuid },
    /// The photo (or its garden) is gone: the job was dropped.
    Gone { photo: Uuid },
    /// This attempt failed; retried later, or given up (`retry: false`, photo unavailable).
    Failed {
        photo: Uuid,
        error: String,
        retry: bool,
    },
}

/// Claims one due job of this process's storage and works it. `None`: nothing was due.
pub async fn run_once(state: &AppState) -> Result<Option<Outcome>, sqlx::Error> {
    let store = storage::from_config(state.config());
    let Some(job) = repo::claim_job(state.platform_pool(), store.identity(), LEASE_SECONDS).await?
    else {
        return Ok(None);
    };
    let outcome = match work(state, &store, &job).await {
        Ok(true) => {
            repo::finish_job(state.platform_pool(), &job).await?;
            Outcome::Rendered {
                photo: job.photo_id,
            }
        }
        Ok(false) => {
            repo::finish_job(state.platform_pool(), &job).await?;
            Outcome::Gone {
                photo: job.photo_id,
            }
        }
        Err(error) => {
            let max = state.config().photo_rendition_max_attempts as i32;
            let retry = job.attempts < max;
            if !retry {
                give_up(state, &job).await;
            }
            repo::fail_job(
                state.platform_pool(),
                &job,
                &error,
                retry.then(|| backoff_seconds(job.attempts)),
            )
            .await?;
            tracing::warn!(photo = %job.photo_id, attempts = job.attempts, retry, error = %error,
                "photo rendition failed");
            Outcome::Failed {
                photo: job.photo_id,
                error,
                retry,
            }
        }
    };
    Ok(Some(outcome))
}

async fn give_up(state: &AppState, job: &Job) {
    let marked = async {
        let Some(tenant) =
            crate::tenancy::registry::find_by_id(state.platform_pool(), job.tenant_id).await?
        else {
            return Ok(());
        };
        let mut tx = TenantTx::begin(state, &tenant)
            .await
            .map_err(|e| sqlx::Error::Protocol(e.to_string()))?;
        repo::mark_unavailable(&mut tx, job.photo_id).await?;
        tx.commit().await
    }
    .await;
    if let Err(err) = marked {
        tracing::warn!(error = %err, photo = %job.photo_id, "could not mark a photo unavailable");
    }
}

/// Renders one job's photo. `Ok(false)`: the photo or its garden no longer exists.
async fn work(state: &AppState, store: &dyn PhotoStorage, job: &Job) -> Result<bool, String> {
    let Some(tenant) = crate::tenancy::registry::find_by_id(state.platform_pool(), job.tenant_id)
        .await
        .map_err(|e| e.to_string())?
    else {
        return Ok(false);
    };
    let tenant = crate::tenancy::context::migrate_if_behind(state, tenant)
        .await
        .map_err(|e| format!("{:?}", e.code()))?;
    let row = {
        let mut tx = TenantTx::read(state, &tenant)
            .await
            .map_err(|e| e.to_string())?;
        let row = repo::photo(&mut tx, job.photo_id)
            .await
            .map_err(|e| e.to_string())?;
        tx.commit().await.map_err(|e| e.to_string())?;
        row
    };
    let Some(row) = row else {
        return Ok(false);
    };
    let key = StorageKey::parse(&row.original_key)
        .ok_or_else(|| format!("stored original key {:?} is malformed", row.original_key))?;
    let format = Format::from_content_type(&row.content_type)
        .ok_or_else(|| format!("stored content type {:?} is unknown", row.content_type))?;
    let original = store
        .get(&key)
        .await
        .map_err(|e| format!("reading the original: {e}"))?;
    // The same limits as an upload (an imported garden's originals never passed this
    // process's upload check), and one of the same decode slots, waited for as long as it takes.
    let limits = PixelLimits::from_config(state.config());
    let permit = super::gate::of(state.config())
        .acquire(job.tenant_id, None)
        .await
        .map_err(|_| "the decode slots are closed".to_owned())?;
    let renditions = tokio::task::spawn_blocking(move || {
        let _permit = permit;
        media::admit(&original, format, limits)
            .map_err(|r| format!("the original is refused: {r:?}"))?;
        let image = media::decode(&original, format, limits)?;
        drop(original);
        media::render(image)
    })
    .await
    .map_err(|e| format!("rendering stopped: {e}"))??;
    let mut stored: Vec<(String, i64)> = Vec::with_capacity(renditions.len());
    for (size, bytes) in renditions {
        let key = StorageKey::rendition(job.tenant_id, job.photo_id, size);
        let n = bytes.len() as i64;
        store
            .put(&key, bytes)
            .await
            .map_err(|e| format!("storing the {size} px rendition: {e}"))?;
        stored.push((key.as_str().to_owned(), n));
    }
    let [(k512, n512), (k1280, n1280)] = <[(String, i64); 2]>::try_from(stored)
        .map_err(|_| "the renditions are incomplete".to_owned())?;
    let mut tx = TenantTx::begin(state, &tenant)
        .await
        .map_err(|e| e.to_string())?;
    let recorded = repo::set_renditions(&mut tx, job.photo_id, (&k512, n512), (&k1280, n1280))
        .await
        .map_err(|e| e.to_string())?;
    tx.commit().await.map_err(|e| e.to_string())?;
    if !recorded {
        // Deleted while it was rendered: what was just written goes too.
        let _ = store.delete_photo(job.tenant_id, job.photo_id).await;
    }
    Ok(recorded)
}

/// The rendition workers of one `serve` process; stopped with the server.
pub struct RenditionWorkers {
    stop: watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
}

// The periodic storage sweep (`super::cleanup`) runs beside the workers and stops with them.

impl RenditionWorkers {
    /// Asks every worker to stop and waits for the job each has in hand (a claimed job that
    /// is not finished in time is freed by its lease).
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        for task in self.tasks {
            let mut task = task;
            if tokio::time::timeout(Duration::from_secs(30), &mut task)
                .await
                .is_err()
            {
                tracing::warn!(
                    "a rendition worker did not stop in time; its job returns after the lease"
                );
                task.abort();
            }
        }
    }
}

/// Starts `PHOTO_RENDITION_WORKERS` workers and the periodic storage sweep.
pub fn start(state: AppState) -> RenditionWorkers {
    let (stop, stopped) = watch::channel(false);
    let n = state.config().photo_rendition_workers;
    let mut tasks: Vec<JoinHandle<()>> = (0..n)
        .map(|_| tokio::spawn(run(state.clone(), stopped.clone())))
        .collect();
    tasks.extend(super::cleanup::start(state.clone(), stopped.clone()));
    if n > 0 {
        tracing::info!(workers = n, "photo rendition workers started");
    }
    RenditionWorkers { stop, tasks }
}

async fn run(state: AppState, mut stopped: watch::Receiver<bool>) {
    loop {
        if *stopped.borrow() {
            break;
        }
        // Registered before looking, so a wake between the look and the wait is not lost.
        let woken = SIGNAL.notified();
        let idle = match run_once(&state).await {
            Ok(Some(_)) => false,
            Ok(None) => true,
            Err(err) => {
                tracing::warn!(error = %err, "photo rendition queue unreachable; retrying later");
                true
            }
        };
        if idle {
            tokio::select! {
                _ = stopped.changed() => {}
                () = woken => {}
                () = tokio::time::sleep(POLL) => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_back_off() {
        assert_eq!(backoff_seconds(1), 10);
        assert_eq!(backoff_seconds(2), 20);
        assert_eq!(backoff_seconds(6), 320);
        assert_eq!(backoff_seconds(50), 600);
    }
}
