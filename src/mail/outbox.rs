//! The outbox table (`platform.mail_outbox`). A claim leases rows: it sets them `sending`, counts
//! the attempt and moves `next_attempt_at` to the end of the lease, all in one statement that
//! skips rows another worker holds (`FOR UPDATE SKIP LOCKED`). Every later update names the
//! attempt it belongs to, so a worker whose lease ran out cannot overwrite a newer attempt.

use std::time::Duration;

use sqlx::{PgConnection, PgExecutor, Row};
use uuid::Uuid;

use super::OutgoingMail;

/// A claimed mail, ready to send.
#[derive(Debug, Clone)]
pub struct Claimed {
    pub id: Uuid,
    pub recipient: String,
    pub subject: String,
    pub body_text: String,
    pub kind: String,
    /// This attempt's number (1 for the first).
    pub attempts: i32,
}

/// How a delivered mail went out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivered {
    /// Accepted by the SMTP server.
    Sent,
    /// Written to the log (no `SMTP_URL`).
    Logged,
}

impl Delivered {
    fn status(self) -> &'static str {
        match self {
            Self::Sent => "sent",
            Self::Logged => "logged",
        }
    }
}

const ERROR_LIMIT: usize = 1000;

fn clip(error: &str) -> String {
    error.chars().take(ERROR_LIMIT).collect()
}

/// Queues a mail in the caller's transaction; it becomes visible to the worker on commit.
pub async fn enqueue(conn: &mut PgConnection, mail: &OutgoingMail) -> Result<Uuid, sqlx::Error> {
    let id = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO platform.mail_outbox (id, recipient, subject, body_text, kind)
         VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(id)
    .bind(&mail.recipient)
    .bind(&mail.subject)
    .bind(&mail.body_text)
    .bind(&mail.kind)
    .execute(conn)
    .await?;
    Ok(id)
}

/// Removes a mail nobody has started to send (its cause was undone after the commit).
pub async fn withdraw(db: impl PgExecutor<'_>, id: Uuid) -> Result<bool, sqlx::Error> {
    let done = sqlx::query("DELETE FROM platform.mail_outbox WHERE id = $1 AND status = 'queued'")
        .bind(id)
        .execute(db)
        .await?;
    Ok(done.rows_affected() == 1)
}

/// Leases up to `limit` due mails for `lease` and counts the attempt. Mails that already had
/// `max_attempts` are left to [`give_up_exhausted`].
pub async fn claim_due(
    db: impl PgExecutor<'_>,
    limit: i64,
    lease: Duration,
    max_attempts: i32,
) -> Result<Vec<Claimed>, sqlx::Error> {
    let rows = sqlx::query(
        "WITH due AS (
             SELECT id FROM platform.mail_outbox
             WHERE status IN ('queued', 'sending') AND next_attempt_at <= now()
               AND attempts < $3
             ORDER BY next_attempt_at
             LIMIT $1
             FOR UPDATE SKIP LOCKED
         )
         UPDATE platform.mail_outbox AS o
         SET status = 'sending', attempts = o.attempts + 1,
             next_attempt_at = now() + make_interval(secs => $2)
         FROM due WHERE o.id = due.id
         RETURNING o.id, o.recipient, o.subject, o.body_text, o.kind, o.attempts",
    )
    .bind(limit)
    .bind(lease.as_secs_f64())
    .bind(max_attempts)
    .fetch_all(db)
    .await?;
    rows.into_iter()
        .map(|r| {
            Ok(Claimed {
                id: r.try_get("id")?,
                recipient: r.try_get("recipient")?,
                subject: r.try_get("subject")?,
                body_text: r
                    .try_get::<Option<String>, _>("body_text")?
                    .unwrap_or_default(),
                kind: r.try_get("kind")?,
                attempts: r.try_get("attempts")?,
            })
        })
        .collect()
}

/// Due mails whose attempts are used up (their last worker died with the lease) become `failed`.
pub async fn give_up_exhausted(
    db: impl PgExecutor<'_>,
    max_attempts: i32,
) -> Result<u64, sqlx::Error> {
    let done = sqlx::query(
        "UPDATE platform.mail_outbox
         SET status = 'failed', body_text = NULL,
             last_error = coalesce(last_error, 'delivery was interrupted too often')
         WHERE status IN ('queued', 'sending') AND next_attempt_at <= now() AND attempts >= $1",
    )
    .bind(max_attempts)
    .execute(db)
    .await?;
    Ok(done.rows_affected())
}

/// Records a delivery; the body (it holds one-time links) is wiped.
pub async fn mark_delivered(
    db: impl PgExecutor<'_>,
    mail: &Claimed,
    how: Delivered,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE platform.mail_outbox
         SET status = $3, sent_at = now(), body_text = NULL
         WHERE id = $1 AND attempts = $2 AND status = 'sending'",
    )
    .bind(mail.id)
    .bind(mail.attempts)
    .bind(how.status())
    .execute(db)
    .await?;
    Ok(())
}

/// Puts a mail back in the queue after a failed attempt.
pub async fn retry_later(
    db: impl PgExecutor<'_>,
    mail: &Claimed,
    delay: Duration,
    error: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE platform.mail_outbox
         SET status = 'queued', next_attempt_at = now() + make_interval(secs => $3),
             last_error = $4
         WHERE id = $1 AND attempts = $2 AND status = 'sending'",
    )
    .bind(mail.id)
    .bind(mail.attempts)
    .bind(delay.as_secs_f64())
    .bind(clip(error))
    .execute(db)
    .await?;
    Ok(())
}

/// Gives a mail up; the body is wiped.
pub async fn mark_failed(
    db: impl PgExecutor<'_>,
    mail: &Claimed,
    error: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE platform.mail_outbox
         SET status = 'failed', body_text = NULL, last_error = $3
         WHERE id = $1 AND attempts = $2 AND status = 'sending'",
    )
    .bind(mail.id)
    .bind(mail.attempts)
    .bind(clip(error))
    .execute(db)
    .await?;
    Ok(())
}

/// Hands claimed mails back untried (the worker is stopping): due at once, the attempt uncounted.
pub async fn release(db: impl PgExecutor<'_>, mails: &[Claimed]) -> Result<(), sqlx::Error> {
    if mails.is_empty() {
        return Ok(());
    }
    let ids: Vec<Uuid> = mails.iter().map(|m| m.id).collect();
    let attempts: Vec<i32> = mails.iter().map(|m| m.attempts).collect();
    sqlx::query(
        "UPDATE platform.mail_outbox AS o
         SET status = 'queued', attempts = o.attempts - 1, next_attempt_at = now()
         FROM unnest($1::uuid[], $2::int[]) AS c(id, attempts)
         WHERE o.id = c.id AND o.attempts = c.attempts AND o.status = 'sending'",
    )
    .bind(ids)
    .bind(attempts)
    .execute(db)
    .await?;
    Ok(())
}

/// Deletes finished mails (sent, logged or failed) created more than `age` ago.
pub async fn purge_finished(db: impl PgExecutor<'_>, age: Duration) -> Result<u64, sqlx::Error> {
    let done = sqlx::query(
        "DELETE FROM platform.mail_outbox
         WHERE status IN ('sent', 'logged', 'failed')
           AND created_at < now() - make_interval(secs => $1)",
    )
    .bind(age.as_secs_f64())
    .execute(db)
    .await?;
    Ok(done.rows_affected())
}
