//! TEMPORARY shim until the mail outbox lands (branch idinfra): logs instead of queueing.

use sqlx::PgConnection;
use uuid::Uuid;

pub struct OutgoingMail {
    pub recipient: String,
    pub subject: String,
    pub body_text: String,
    pub kind: String,
}

pub async fn enqueue(_conn: &mut PgConnection, mail: &OutgoingMail) -> Result<Uuid, sqlx::Error> {
    tracing::info!(kind = %mail.kind, "mail (shim)");
    Ok(Uuid::new_v4())
}
