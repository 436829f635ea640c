//! SQL of `platform.push_subscriptions`.

use sqlx::{PgExecutor, Row};
use uuid::Uuid;

use super::model::PushSubscription;

/// A subscription with what sending needs.
#[derive(Debug, Clone)]
pub struct Stored {
    pub id: Uuid,
    pub endpoint: String,
    pub p256dh: String,
    pub auth: String,
}

fn view(r: &sqlx::postgres::PgRow) -> Result<PushSubscription, sqlx::Error> {
    Ok(PushSubscription {
        key: r.try_get("id")?,
        endpoint_host: r.try_get("endpoint_host")?,
        created_at: r.try_get("created_at")?,
        last_sent_at: r.try_get("last_sent_at")?,
    })
}

/// Adds a subscription, or renews the keys of the user's subscription to the same endpoint
/// (a browser re-subscribing hands out new keys for the same endpoint).
pub async fn upsert(
    db: impl PgExecutor<'_>,
    user: Uuid,
    endpoint: &str,
    endpoint_host: &str,
    p256dh: &str,
    auth: &str,
) -> Result<PushSubscription, sqlx::Error> {
    let row = sqlx::query(
        "INSERT INTO platform.push_subscriptions (id, user_id, endpoint, endpoint_host, p256dh, auth)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (user_id, endpoint) DO UPDATE SET p256dh = $5, auth = $6
         RETURNING id, endpoint_host, created_at, last_sent_at",
    )
    .bind(Uuid::now_v7())
    .bind(user)
    .bind(endpoint)
    .bind(endpoint_host)
    .bind(p256dh)
    .bind(auth)
    .fetch_one(db)
    .await?;
    view(&row)
}

/// Whether the user may add one more (an endpoint they have already is always allowed).
pub async fn count_other(
    db: impl PgExecutor<'_>,
    user: Uuid,
    endpoint: &str,
) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT count(*) FROM platform.push_subscriptions WHERE user_id = $1 AND endpoint <> $2",
    )
    .bind(user)
    .bind(endpoint)
    .fetch_one(db)
    .await
}

pub async fn list(
    db: impl PgExecutor<'_>,
    user: Uuid,
) -> Result<Vec<PushSubscription>, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT id, endpoint_host, created_at, last_sent_at FROM platform.push_subscriptions
         WHERE user_id = $1 ORDER BY created_at, id",
    )
    .bind(user)
    .fetch_all(db)
    .await?;
    rows.iter().map(view).collect()
}

pub async fn for_sending(db: impl PgExecutor<'_>, user: Uuid) -> Result<Vec<Stored>, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT id, endpoint, p256dh, auth FROM platform.push_subscriptions
         WHERE user_id = $1 ORDER BY created_at, id",
    )
    .bind(user)
    .fetch_all(db)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(Stored {
                id: r.try_get("id")?,
                endpoint: r.try_get("endpoint")?,
                p256dh: r.try_get("p256dh")?,
                auth: r.try_get("auth")?,
            })
        })
        .collect()
}

/// Deletes one of the user's subscriptions; `false` when they have none with that key.
pub async fn delete(db: impl PgExecutor<'_>, user: Uuid, id: Uuid) -> Result<bool, sqlx::Error> {
    let done =
        sqlx::query("DELETE FROM platform.push_subscriptions WHERE id = $1 AND user_id = $2")
            .bind(id)
            .bind(user)
            .execute(db)
            .await?;
    Ok(done.rows_affected() == 1)
}

/// The push service said the subscription is gone (404 or 410).
pub async fn delete_gone(db: impl PgExecutor<'_>, id: Uuid) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM platform.push_subscriptions WHERE id = $1")
        .bind(id)
        .execute(db)
        .await?;
    Ok(())
}

pub async fn mark_sent(db: impl PgExecutor<'_>, id: Uuid) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE platform.push_subscriptions SET last_sent_at = now() WHERE id = $1")
        .bind(id)
        .execute(db)
        .await?;
    Ok(())
}
