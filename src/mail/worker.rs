//! The delivery worker: one background task per serving process. It drains the due mails of the
//! outbox, then sleeps until [`AppState::mail_wakeup`] is called in this process or the poll
//! interval passes (mails queued by other replicas, retries coming due). It stops when the server
//! stops, after the mail in hand.

use std::time::{Duration, Instant};

use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::outbox::{self, Claimed};
use super::transport::{SMTP_TIMEOUT, Transport};
use crate::rules::mail::{AfterFailure, MAX_ATTEMPTS, after_failure, redacted_recipient};
use crate::state::AppState;

/// How often the outbox is looked at without a wake-up.
pub const POLL_INTERVAL: Duration = Duration::from_secs(3);
/// Mails claimed at once.
const BATCH: i64 = 5;
/// How long a claim holds a mail; longer than sending a whole batch can take, so no other
/// worker picks it up meanwhile. A crashed worker's mails are due again after it.
const LEASE: Duration = Duration::from_secs(300);
/// Finished mails are deleted after this long.
const KEEP_FINISHED: Duration = Duration::from_secs(30 * 24 * 3600);
const PURGE_EVERY: Duration = Duration::from_secs(3600);
/// Pause after a database error before the next look.
const ERROR_PAUSE: Duration = Duration::from_secs(5);

/// A running worker; [`MailWorker::stop`] ends it.
pub struct MailWorker {
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

/// Starts the worker of this process. `None` (logged) when the transport cannot be built, which
/// configuration validation makes unreachable in practice.
pub fn start(state: AppState) -> Option<MailWorker> {
    let transport = match Transport::from_config(state.config()) {
        Ok(transport) => transport,
        Err(err) => {
            tracing::error!(error = %err, "mail delivery is off");
            return None;
        }
    };
    let smtp = matches!(transport, Transport::Smtp { .. });
    tracing::info!(smtp, "mail delivery worker started");
    let (stop, stopped) = watch::channel(false);
    let task = tokio::spawn(run(state, transport, stopped));
    Some(MailWorker { stop, task })
}

impl MailWorker {
    /// Asks the worker to stop and waits until it has (at most one SMTP conversation).
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        let mut task = self.task;
        let wait = SMTP_TIMEOUT + Duration::from_secs(5);
        if tokio::time::timeout(wait, &mut task).await.is_err() {
            tracing::warn!(
                "mail worker did not stop in time; its claimed mails return after the lease"
            );
            task.abort();
        }
    }
}

async fn run(state: AppState, transport: Transport, mut stopped: watch::Receiver<bool>) {
    let mut last_purge: Option<Instant> = None;
    loop {
        if *stopped.borrow() {
            break;
        }
        let pause = match drain(&state, &transport, &stopped).await {
            Ok(()) => POLL_INTERVAL,
            Err(err) => {
                tracing::warn!(error = %err, "mail outbox unavailable");
                ERROR_PAUSE
            }
        };
        if last_purge.is_none_or(|at| at.elapsed() >= PURGE_EVERY) {
            last_purge = Some(Instant::now());
            match outbox::purge_finished(state.platform_pool(), KEEP_FINISHED).await {
                Ok(0) => {}
                Ok(n) => tracing::info!(deleted = n, "old finished mails deleted"),
                Err(err) => tracing::warn!(error = %err, "mail outbox clean-up failed"),
            }
        }
        tokio::select! {
            () = state.mail_signal().notified() => {}
            () = tokio::time::sleep(pause) => {}
            changed = stopped.changed() => {
                // The sender is gone: nobody can stop this worker any more, so it stops now.
                if changed.is_err() {
                    break;
                }
            }
        }
    }
    tracing::info!("mail delivery worker stopped");
}

/// Sends every due mail now, in this task (the CLI's way to deliver what it queued when no
/// service runs).
pub async fn drain_once(state: &AppState) -> Result<(), String> {
    let transport = Transport::from_config(state.config())?;
    let (_stop, stopped) = watch::channel(false);
    drain(state, &transport, &stopped)
        .await
        .map_err(|e| format!("mail outbox: {e}"))
}

/// Sends due mails until none is left (or the worker is asked to stop).
async fn drain(
    state: &AppState,
    transport: &Transport,
    stopped: &watch::Receiver<bool>,
) -> Result<(), sqlx::Error> {
    let db = state.platform_pool();
    let exhausted = outbox::give_up_exhausted(db, MAX_ATTEMPTS).await?;
    if exhausted > 0 {
        tracing::warn!(
            mails = exhausted,
            "interrupted mails out of attempts marked failed"
        );
    }
    loop {
        let batch = outbox::claim_due(db, BATCH, LEASE, MAX_ATTEMPTS).await?;
        let full = batch.len() as i64 == BATCH;
        let mut pending = batch.into_iter();
        while let Some(mail) = pending.next() {
            if *stopped.borrow() {
                let rest: Vec<Claimed> = std::iter::once(mail).chain(pending).collect();
                return outbox::release(db, &rest).await;
            }
            deliver(state, transport, &mail).await?;
        }
        if !full {
            return Ok(());
        }
    }
}

async fn deliver(
    state: &AppState,
    transport: &Transport,
    mail: &Claimed,
) -> Result<(), sqlx::Error> {
    let db = state.platform_pool();
    let to = redacted_recipient(&mail.recipient);
    match transport.deliver(mail).await {
        Ok(how) => {
            outbox::mark_delivered(db, mail, how).await?;
            if matches!(how, outbox::Delivered::Sent) {
                tracing::info!(kind = %mail.kind, to = %to, attempt = mail.attempts, "mail sent");
            }
        }
        Err(err) => match after_failure(mail.attempts, err.permanent) {
            AfterFailure::RetryIn(delay) => {
                tracing::warn!(kind = %mail.kind, to = %to, attempt = mail.attempts,
                    retry_in_seconds = delay.as_secs(), error = %err.message, "mail not sent; will retry");
                outbox::retry_later(db, mail, delay, &err.message).await?;
            }
            AfterFailure::GiveUp => {
                tracing::error!(kind = %mail.kind, to = %to, attempt = mail.attempts,
                    permanent = err.permanent, error = %err.message, "mail not sent; giving up");
                outbox::mark_failed(db, mail, &err.message).await?;
            }
        },
    }
    Ok(())
}
