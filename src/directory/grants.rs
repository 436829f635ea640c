//! What an account handed out: the service accounts it made, its calendar feeds and the
//! invitations it sent. Grants live no longer than the authority they came from:
//!
//! - **taking an account back** (a password reset, the first confirmation of an address that
//!   could log in unconfirmed) ends everything the account made, in every garden
//!   ([`end_all_made_by`]): whoever held the account before may have been a squatter;
//! - **removing a member** ends what that member made in that garden (service accounts,
//!   pending invitations, the member's feed); **demoting** one ends the service accounts and
//!   pending invitations it made there ([`end_made_in`]). Nothing is reassigned: an admin who
//!   wants to keep such a service account creates a new one (the chosen rule: a grant never
//!   outlives the person who made it, and nobody inherits it silently).
//!
//! A service account taken out of a garden ([`detach`]) loses its keys the same way.
//!
//! Everything runs in the caller's transaction; [`Ended::forget`] clears this replica's caches
//! after the commit (other replicas hear it from the database notifications).

use sqlx::{PgConnection, PgExecutor};
use uuid::Uuid;

use crate::directory::memberships::repo as memberships;
use crate::state::AppState;

/// What was ended, for the caller's mail and log.
#[derive(Debug, Default, Clone)]
pub struct Ended {
    /// The account's own API keys revoked (take-back only).
    pub api_keys: u64,
    /// Names of the service accounts deactivated or removed from the garden.
    pub service_accounts: Vec<String>,
    pub calendar_feeds: u64,
    pub invitations: u64,
    /// Service-account ids whose membership or state changed, and keys revoked (caches).
    touched_accounts: Vec<Uuid>,
    revoked_keys: Vec<Uuid>,
    tenant: Option<Uuid>,
}

impl Ended {
    /// Whether anything beyond sessions was ended.
    pub fn is_empty(&self) -> bool {
        self.api_keys == 0
            && self.service_accounts.is_empty()
            && self.calendar_feeds == 0
            && self.invitations == 0
    }

    /// The lines a mail lists, one per kind of grant ended (none when nothing was).
    pub fn lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        if self.api_keys > 0 {
            lines.push(format!(
                "- {} API key(s) of your account revoked",
                self.api_keys
            ));
        }
        if !self.service_accounts.is_empty() {
            lines.push(format!(
                "- {} service account(s) made by your account deactivated, with all their keys",
                self.service_accounts.len()
            ));
        }
        if self.calendar_feeds > 0 {
            lines.push(format!(
                "- {} calendar feed link(s) revoked",
                self.calendar_feeds
            ));
        }
        if self.invitations > 0 {
            lines.push(format!(
                "- {} pending invitation(s) sent from your account withdrawn",
                self.invitations
            ));
        }
        lines
    }

    /// After the commit: this replica forgets the changed accounts, memberships and keys.
    pub fn forget(&self, state: &AppState) {
        let caches = state.caches();
        for account in &self.touched_accounts {
            caches.forget_user(*account);
            if let Some(tenant) = self.tenant {
                caches.forget_membership(tenant, *account);
            }
        }
        for key in &self.revoked_keys {
            caches.forget_api_key(*key);
        }
    }
}

/// Take-back: deactivates every service account the user made (and revokes all their keys),
/// deletes the user's calendar feeds and withdraws the invitations it sent. The user's own
/// sessions and keys are the caller's part.
pub async fn end_all_made_by(conn: &mut PgConnection, user: Uuid) -> Result<Ended, sqlx::Error> {
    let mut ended = Ended::default();
    let made: Vec<(Uuid, String)> = sqlx::query_as(
        "UPDATE platform.users SET is_active = false, updated_at = now()
         WHERE created_by = $1 AND account_type = 'service' AND is_active
         RETURNING id, display_name",
    )
    .bind(user)
    .fetch_all(&mut *conn)
    .await?;
    // Keys of service accounts deactivated earlier are revoked too (nothing of them works).
    ended.revoked_keys = sqlx::query_scalar(
        "UPDATE platform.api_keys SET revoked_at = now()
         WHERE revoked_at IS NULL AND user_id IN
               (SELECT id FROM platform.users WHERE created_by = $1 AND account_type = 'service')
         RETURNING id",
    )
    .bind(user)
    .fetch_all(&mut *conn)
    .await?;
    ended.touched_accounts = made.iter().map(|(id, _)| *id).collect();
    ended.service_accounts = made.into_iter().map(|(_, name)| name).collect();
    ended.calendar_feeds = sqlx::query("DELETE FROM platform.calendar_feeds WHERE user_id = $1")
        .bind(user)
        .execute(&mut *conn)
        .await?
        .rows_affected();
    ended.invitations = sqlx::query(
        "UPDATE platform.invitations SET status = 'revoked', answered_at = now()
         WHERE invited_by = $1 AND status = 'pending'",
    )
    .bind(user)
    .execute(&mut *conn)
    .await?
    .rows_affected();
    Ok(ended)
}

/// Why a member's grants in one garden end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemberChange {
    Removed,
    Demoted,
}

/// A member left (or was removed from) the garden, or lost rank in it: the service accounts
/// it made leave the garden (an account left without any garden is deactivated and all its
/// keys revoked; otherwise its keys limited to this garden are), its pending invitations to
/// the garden are withdrawn, and on removal its feed of the garden is deleted.
pub async fn end_made_in(
    conn: &mut PgConnection,
    tenant: Uuid,
    user: Uuid,
    change: MemberChange,
) -> Result<Ended, sqlx::Error> {
    let mut ended = Ended {
        tenant: Some(tenant),
        ..Ended::default()
    };
    let made: Vec<(Uuid, String)> = sqlx::query_as(
        "SELECT u.id, u.display_name FROM platform.users u
         JOIN platform.memberships m ON m.user_id = u.id AND m.tenant_id = $1
         WHERE u.created_by = $2 AND u.account_type = 'service'
         ORDER BY u.id FOR UPDATE OF u",
    )
    .bind(tenant)
    .bind(user)
    .fetch_all(&mut *conn)
    .await?;
    for (account, name) in made {
        let revoked = detach(&mut *conn, tenant, account).await?;
        ended.revoked_keys.extend(revoked);
        ended.touched_accounts.push(account);
        ended.service_accounts.push(name);
    }
    ended.invitations = sqlx::query(
        "UPDATE platform.invitations SET status = 'revoked', answered_at = now()
         WHERE tenant_id = $1 AND invited_by = $2 AND status = 'pending'",
    )
    .bind(tenant)
    .bind(user)
    .execute(&mut *conn)
    .await?
    .rows_affected();
    if change == MemberChange::Removed {
        ended.calendar_feeds = sqlx::query(
            "DELETE FROM platform.calendar_feeds WHERE tenant_id = $1 AND user_id = $2",
        )
        .bind(tenant)
        .bind(user)
        .execute(&mut *conn)
        .await?
        .rows_affected();
    }
    Ok(ended)
}

/// Revokes the account's keys limited to one garden; the revoked key ids.
async fn revoke_scoped_keys(
    db: impl PgExecutor<'_>,
    account: Uuid,
    tenant: Uuid,
) -> Result<Vec<Uuid>, sqlx::Error> {
    sqlx::query_scalar(
        "UPDATE platform.api_keys SET revoked_at = now()
         WHERE user_id = $1 AND tenant_scope_id = $2 AND revoked_at IS NULL RETURNING id",
    )
    .bind(account)
    .bind(tenant)
    .fetch_all(db)
    .await
}

/// Revokes every key of the account; the revoked key ids.
pub async fn revoke_keys(db: impl PgExecutor<'_>, account: Uuid) -> Result<Vec<Uuid>, sqlx::Error> {
    sqlx::query_scalar(
        "UPDATE platform.api_keys SET revoked_at = now()
         WHERE user_id = $1 AND revoked_at IS NULL RETURNING id",
    )
    .bind(account)
    .fetch_all(db)
    .await
}

/// Takes the service account out of the garden: its membership there ends; an account left
/// without any garden is deactivated and all its keys revoked, otherwise its keys limited to
/// this garden are. The revoked key ids (empty when it was no member).
pub async fn detach(
    conn: &mut sqlx::PgConnection,
    tenant: Uuid,
    account: Uuid,
) -> Result<Vec<Uuid>, sqlx::Error> {
    if !memberships::remove(&mut *conn, tenant, account).await? {
        return Ok(Vec::new());
    }
    if memberships::membership_count(&mut *conn, account).await? == 0 {
        sqlx::query(
            "UPDATE platform.users SET is_active = false, updated_at = now() WHERE id = $1",
        )
        .bind(account)
        .execute(&mut *conn)
        .await?;
        revoke_keys(&mut *conn, account).await
    } else {
        revoke_scoped_keys(&mut *conn, account, tenant).await
    }
}
