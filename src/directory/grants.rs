//! What an account handed out, and how it ends. Grants live no longer than the authority they
//! came from:
//!
//! - **taking an account back** (a password reset, the first confirmation of an address that
//!   could log in unconfirmed) ends everything the account set up, in every garden
//!   ([`take_back`]): whoever held the account before may have been a squatter. The one list:
//!   - its sessions (the token generation) and its own API keys: the caller's part
//!     (`auth::accounts::service::take_back_account`, which calls [`take_back`]);
//!   - the service accounts it made (deactivated, all their keys revoked);
//!   - its calendar feeds, and the invitations it sent that are still pending;
//!   - its federated identities (provider sign-ins: whoever linked them may not own the address);
//!   - its push subscriptions (browsers that get its digests);
//!   - the webhooks it created, in every garden: disabled, with a reason the garden's admins
//!     see in the webhook's record, their pending deliveries failed; the delivery worker also
//!     refuses any webhook made under an earlier take-back epoch (`users.grants_epoch`), so one
//!     that could not be reached at once never delivers again either;
//!   - the members admitted through its invitations, and through theirs in the same garden:
//!     removed from those gardens (they are mailed why), with their own grants there ending as on
//!     any removal; and the account is admin of its personal garden again;
//! - **deactivating or erasing** an account ends the service accounts, feeds, pending
//!   invitations and webhooks it made ([`end_all_made_by`]);
//! - **removing a member** ends what that member made in that garden (service accounts,
//!   pending invitations, webhooks, the member's feed); **demoting** one ends the service
//!   accounts, pending invitations and webhooks it made there ([`end_made_in`]). Nothing is
//!   reassigned: an admin who wants to keep such a grant makes a new one, or enables the
//!   webhook again and so becomes its maker (a grant never outlives the person who made it,
//!   and nobody inherits it silently).
//!
//! A service account taken out of a garden ([`detach`]) loses its keys the same way. Every
//! table of the platform and tenant schemas is classified in [`PLATFORM_TABLES`] and
//! [`TENANT_TABLES`] (a test reads the live catalogue against them), so a new kind of grant
//! cannot be forgotten here.
//!
//! Everything runs in the caller's transaction; [`Ended::settle`] then clears this replica's
//! caches (other replicas hear it from the database notifications) and disables the webhooks
//! in the gardens' schemas (which may be on other servers).

use sqlx::{PgConnection, PgExecutor};
use uuid::Uuid;

use crate::directory::memberships::repo as memberships;
use crate::error::AppError;
use crate::state::AppState;
use crate::tenancy::{TenantRecord, TenantStatus, TenantTx, registry};

/// Why webhooks ended: the reason their record shows the garden's admins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WebhookEnd {
    TakenBack,
    Removed,
    Demoted,
    Deactivated,
    MakerGone,
}

impl WebhookEnd {
    pub fn reason(self) -> &'static str {
        match self {
            Self::TakenBack => {
                "disabled: the account that created it was taken back by the owner of its \
                 e-mail address (a password reset or the first confirmation of the address); \
                 an admin who enables it again becomes its maker"
            }
            Self::Removed => {
                "disabled: the member who created it is no longer a member of the garden; an \
                 admin who enables it again becomes its maker"
            }
            Self::Demoted => {
                "disabled: the member who created it is no longer an admin of the garden; an \
                 admin who enables it again becomes its maker"
            }
            Self::Deactivated => {
                "disabled: the account that created it is deactivated; an admin who enables it \
                 again becomes its maker"
            }
            Self::MakerGone => {
                "disabled: the account that created it no longer exists; an admin who enables \
                 it again becomes its maker"
            }
        }
    }
}

/// The webhooks one maker created in one garden, to be disabled after the commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WebhookEnding {
    pub tenant: Uuid,
    pub maker: Uuid,
    pub why: WebhookEnd,
}

/// How many of the account's webhooks a take-back disables (counted before its commit, for
/// the mail).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct WebhookTally {
    pub enabled: u64,
    /// Gardens whose schema did not answer the count: their webhooks end when they do (or
    /// at the latest, the delivery worker refuses them).
    pub unreachable_gardens: u64,
}

/// A member taken out of a garden because it came in through the taken-back account's
/// invitations (directly or through another such member's).
#[derive(Debug, Clone)]
pub struct RemovedMember {
    pub tenant: Uuid,
    pub garden_name: String,
    pub user: Uuid,
    pub email: Option<String>,
}

/// What was ended, for the caller's mail and log.
#[derive(Debug, Default, Clone)]
pub struct Ended {
    /// The account's own API keys revoked (take-back only).
    pub api_keys: u64,
    /// Names of the service accounts deactivated or removed from the garden.
    pub service_accounts: Vec<String>,
    pub calendar_feeds: u64,
    pub invitations: u64,
    /// Providers whose sign-in to the account was removed (take-back only).
    pub federated_identities: Vec<String>,
    /// Push subscriptions deleted (take-back only).
    pub push_subscriptions: u64,
    /// The account's webhooks, counted before the commit (take-back only; see
    /// [`count_webhooks`]).
    pub webhooks: WebhookTally,
    /// Members removed because they came in through the account's invitations (take-back).
    pub members_removed: Vec<RemovedMember>,
    /// Whether the account was made admin of its personal garden again (it had been removed
    /// from it or demoted there).
    pub personal_garden_restored: bool,
    /// Accounts and memberships whose cached state changed, and keys revoked (caches).
    forget_accounts: Vec<Uuid>,
    forget_memberships: Vec<(Uuid, Uuid)>,
    revoked_keys: Vec<Uuid>,
    webhook_endings: Vec<WebhookEnding>,
}

impl Ended {
    /// Whether anything beyond sessions was ended.
    pub fn is_empty(&self) -> bool {
        self.api_keys == 0
            && self.service_accounts.is_empty()
            && self.calendar_feeds == 0
            && self.invitations == 0
            && self.federated_identities.is_empty()
            && self.push_subscriptions == 0
            && self.webhooks == WebhookTally::default()
            && self.members_removed.is_empty()
            && !self.personal_garden_restored
    }

    /// The gardens (and makers) whose webhooks end after the commit.
    pub fn webhook_endings(&self) -> &[WebhookEnding] {
        &self.webhook_endings
    }

    /// The lines a mail lists, one per kind of grant ended (none when nothing was). Each says
    /// only what was done.
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
        if !self.federated_identities.is_empty() {
            lines.push(format!(
                "- {} sign-in link(s) to an identity provider removed ({}); link your own \
                 provider account again in the settings if you use one",
                self.federated_identities.len(),
                self.federated_identities.join(", ")
            ));
        }
        if self.push_subscriptions > 0 {
            lines.push(format!(
                "- {} browser push subscription(s) deleted",
                self.push_subscriptions
            ));
        }
        if self.webhooks.enabled > 0 {
            lines.push(format!(
                "- {} webhook(s) created by your account disabled, their pending deliveries \
                 dropped (the gardens' admins see why in each webhook's record)",
                self.webhooks.enabled
            ));
        }
        if self.webhooks.unreachable_gardens > 0 {
            lines.push(format!(
                "- in {} garden(s) that did not answer just now, the webhooks your account \
                 created deliver nothing more and are disabled as soon as the garden answers",
                self.webhooks.unreachable_gardens
            ));
        }
        if !self.members_removed.is_empty() {
            lines.push(format!(
                "- {} member(s) who joined through invitations from your account removed from \
                 the garden they joined (they were told by mail); what they made there ended \
                 with them",
                self.members_removed.len()
            ));
        }
        if self.personal_garden_restored {
            lines.push("- you are the admin of your personal garden again".to_owned());
        }
        lines
    }

    /// Takes over what `other` leaves for after the commit (caches, webhooks), not its counts
    /// (those are another account's grants).
    fn absorb_effects(&mut self, other: Ended) {
        self.forget_accounts.extend(other.forget_accounts);
        self.forget_memberships.extend(other.forget_memberships);
        self.revoked_keys.extend(other.revoked_keys);
        self.webhook_endings.extend(other.webhook_endings);
    }

    /// After the commit: this replica forgets the changed accounts, memberships and keys, and
    /// the webhooks end in their gardens. A garden that does not answer keeps them until the
    /// delivery worker, which refuses them before any delivery ([`maker_verdict`]), disables
    /// them; that is logged, not an error of the request that already committed.
    pub async fn settle(&self, state: &AppState) {
        let caches = state.caches();
        for account in &self.forget_accounts {
            caches.forget_user(*account);
        }
        for (tenant, account) in &self.forget_memberships {
            caches.forget_membership(*tenant, *account);
        }
        for key in &self.revoked_keys {
            caches.forget_api_key(*key);
        }
        for ending in &self.webhook_endings {
            if let Err(err) = end_webhooks_now(state, ending).await {
                tracing::warn!(tenant = %ending.tenant, maker = %ending.maker, error = %err,
                    "webhooks not disabled yet; the delivery worker refuses them meanwhile");
            }
        }
    }
}

/// The garden by id when it is active (a suspended one delivers nothing either; the delivery
/// worker ends its webhooks once it is active again), migrated if behind.
async fn active_garden(state: &AppState, id: Uuid) -> Result<Option<TenantRecord>, AppError> {
    match registry::find_by_id(state.platform_pool(), id).await? {
        Some(t) if t.status == TenantStatus::Active => Ok(Some(
            crate::tenancy::context::migrate_if_behind(state, t).await?,
        )),
        _ => Ok(None),
    }
}

/// Disables one maker's webhooks in one garden (its own transaction there).
async fn end_webhooks_now(state: &AppState, ending: &WebhookEnding) -> Result<u64, AppError> {
    let Some(tenant) = active_garden(state, ending.tenant).await? else {
        return Ok(0);
    };
    let mut tx = TenantTx::begin(state, &tenant).await?;
    let n = end_webhooks_in(&mut tx, Some(ending.maker), ending.why).await?;
    tx.commit().await?;
    if n > 0 {
        tracing::info!(tenant = %tenant.slug, maker = %ending.maker, webhooks = n,
            reason = ?ending.why, "webhooks disabled with their maker's authority");
    }
    Ok(n)
}

/// In a garden's transaction: the maker's webhooks (`None`: those without a maker on record)
/// are disabled with the reason (one disabled earlier gets this reason instead of its old one)
/// and their pending deliveries fail, so enabling one again sends none of the backlog.
/// Returns how many were enabled.
pub async fn end_webhooks_in(
    tx: &mut TenantTx,
    maker: Option<Uuid>,
    why: WebhookEnd,
) -> Result<u64, sqlx::Error> {
    let sql = tx.sql(
        "SELECT count(*) FROM tenant.webhooks WHERE created_by IS NOT DISTINCT FROM $1 AND enabled",
    );
    let enabled: i64 = sqlx::query_scalar(sql)
        .bind(maker)
        .fetch_one(tx.conn())
        .await?;
    let sql = tx.sql(
        "UPDATE tenant.webhooks SET enabled = false, disabled_reason = $2, updated_at = now()
         WHERE created_by IS NOT DISTINCT FROM $1
           AND (enabled OR disabled_reason IS DISTINCT FROM $2)",
    );
    sqlx::query(sql)
        .bind(maker)
        .bind(why.reason())
        .execute(tx.conn())
        .await?;
    let sql = tx.sql(
        "UPDATE tenant.webhook_deliveries d
         SET status = 'failed', last_error = $2, locked_until = NULL, finished_at = now()
         FROM tenant.webhooks w
         WHERE w.id = d.webhook_id AND w.created_by IS NOT DISTINCT FROM $1
           AND d.status = 'pending'",
    );
    sqlx::query(sql)
        .bind(maker)
        .bind(why.reason())
        .execute(tx.conn())
        .await?;
    Ok(u64::try_from(enabled).unwrap_or(0))
}

/// What the delivery worker knows of a webhook's maker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MakerStanding {
    pub is_active: bool,
    /// System accounts (light mode's) stand for the operator and always may.
    pub is_system: bool,
    pub grants_epoch: i32,
    /// Its role in the webhook's garden (`None`: not a member).
    pub role: Option<crate::directory::Role>,
}

/// Whether a webhook may still deliver: `None` when its maker still has the authority it was
/// made with, otherwise why not. `standing` is `None` for a maker that no longer exists (or a
/// webhook without one).
pub fn maker_verdict(standing: Option<MakerStanding>, webhook_epoch: i32) -> Option<WebhookEnd> {
    let Some(s) = standing else {
        return Some(WebhookEnd::MakerGone);
    };
    if s.is_system {
        return None;
    }
    if !s.is_active {
        return Some(WebhookEnd::Deactivated);
    }
    if webhook_epoch < s.grants_epoch {
        return Some(WebhookEnd::TakenBack);
    }
    match s.role {
        None => Some(WebhookEnd::Removed),
        Some(crate::directory::Role::Admin) => None,
        Some(_) => Some(WebhookEnd::Demoted),
    }
}

/// The standing of each of `makers` towards the garden (absent: the account is gone).
pub async fn maker_standings(
    db: impl PgExecutor<'_>,
    tenant: Uuid,
    makers: &[Uuid],
) -> Result<Vec<(Uuid, MakerStanding)>, sqlx::Error> {
    let rows: Vec<(Uuid, bool, String, i32, Option<String>)> = sqlx::query_as(
        "SELECT u.id, u.is_active, u.account_type, u.grants_epoch, m.role
         FROM platform.users u
         LEFT JOIN platform.memberships m ON m.user_id = u.id AND m.tenant_id = $1
         WHERE u.id = ANY($2)",
    )
    .bind(tenant)
    .bind(makers)
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(id, is_active, kind, grants_epoch, role)| {
            (
                id,
                MakerStanding {
                    is_active,
                    is_system: kind == "system",
                    grants_epoch,
                    role: role.as_deref().and_then(crate::directory::Role::parse),
                },
            )
        })
        .collect())
}

/// The maker's take-back epoch now: what a webhook it makes records.
pub async fn grants_epoch(db: impl PgExecutor<'_>, user: Uuid) -> Result<i32, sqlx::Error> {
    Ok(
        sqlx::query_scalar("SELECT grants_epoch FROM platform.users WHERE id = $1")
            .bind(user)
            .fetch_optional(db)
            .await?
            .unwrap_or(0),
    )
}

/// Before a take-back's commit: counts the enabled webhooks the account made in the gardens
/// whose webhooks end, for the mail (a read; the disabling is [`Ended::settle`]'s).
pub async fn count_webhooks(state: &AppState, ended: &mut Ended, user: Uuid) {
    let mut tally = WebhookTally::default();
    for ending in ended.webhook_endings.iter().filter(|e| e.maker == user) {
        match count_in(state, ending).await {
            Ok(n) => tally.enabled += n,
            Err(err) => {
                tracing::warn!(tenant = %ending.tenant, error = %err, "webhooks not counted");
                tally.unreachable_gardens += 1;
            }
        }
    }
    ended.webhooks = tally;
}

async fn count_in(state: &AppState, ending: &WebhookEnding) -> Result<u64, AppError> {
    let Some(tenant) = active_garden(state, ending.tenant).await? else {
        return Ok(0);
    };
    let mut tx = TenantTx::read(state, &tenant).await?;
    let sql = tx.sql("SELECT count(*) FROM tenant.webhooks WHERE created_by = $1 AND enabled");
    let n: i64 = sqlx::query_scalar(sql)
        .bind(ending.maker)
        .fetch_one(tx.conn())
        .await?;
    tx.commit().await?;
    Ok(u64::try_from(n).unwrap_or(0))
}

/// The gardens with webhooks (`platform.webhook_gardens`) where the user is a member, or only
/// `tenant`: where its webhooks are to end.
async fn webhook_gardens_of(
    conn: &mut PgConnection,
    user: Uuid,
    tenant: Option<Uuid>,
) -> Result<Vec<Uuid>, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT g.tenant_id FROM platform.webhook_gardens g
         JOIN platform.memberships m ON m.tenant_id = g.tenant_id AND m.user_id = $1
         WHERE $2::uuid IS NULL OR g.tenant_id = $2
         ORDER BY g.tenant_id",
    )
    .bind(user)
    .bind(tenant)
    .fetch_all(&mut *conn)
    .await
}

/// Why [`end_all_made_by`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccountEnd {
    TakenBack,
    Deactivated,
    Erased,
}

/// Deactivates every service account the user made (and revokes all their keys), deletes the
/// user's calendar feeds, withdraws the invitations it sent that are still pending, and marks
/// its webhooks in the gardens it belongs to for ending after the commit. The user's own
/// sessions and keys are the caller's part.
pub async fn end_all_made_by(
    conn: &mut PgConnection,
    user: Uuid,
    why: AccountEnd,
) -> Result<Ended, sqlx::Error> {
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
    ended.forget_accounts = made.iter().map(|(id, _)| *id).collect();
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
    let webhook_end = match why {
        AccountEnd::TakenBack => WebhookEnd::TakenBack,
        AccountEnd::Deactivated => WebhookEnd::Deactivated,
        AccountEnd::Erased => WebhookEnd::MakerGone,
    };
    ended.webhook_endings = webhook_gardens_of(&mut *conn, user, None)
        .await?
        .into_iter()
        .map(|tenant| WebhookEnding {
            tenant,
            maker: user,
            why: webhook_end,
        })
        .collect();
    Ok(ended)
}

/// The take-back (see the module's list): bumps the account's grants epoch, ends what
/// [`end_all_made_by`] ends, deletes its federated identities and push subscriptions, makes
/// it admin of its personal garden again, and removes the members admitted through its
/// invitations. The caller ends the account's sessions and own keys, mails the removed
/// members and the owner, and settles the result after the commit.
pub async fn take_back(conn: &mut PgConnection, user: Uuid) -> Result<Ended, sqlx::Error> {
    sqlx::query(
        "UPDATE platform.users SET grants_epoch = grants_epoch + 1, updated_at = now()
         WHERE id = $1",
    )
    .bind(user)
    .execute(&mut *conn)
    .await?;
    let mut ended = end_all_made_by(&mut *conn, user, AccountEnd::TakenBack).await?;
    ended.federated_identities = sqlx::query_scalar(
        "DELETE FROM platform.federated_identities WHERE user_id = $1 RETURNING provider",
    )
    .bind(user)
    .fetch_all(&mut *conn)
    .await?;
    ended.federated_identities.sort();
    ended.federated_identities.dedup();
    ended.push_subscriptions =
        sqlx::query("DELETE FROM platform.push_subscriptions WHERE user_id = $1")
            .bind(user)
            .execute(&mut *conn)
            .await?
            .rows_affected();
    ended.personal_garden_restored = restore_personal_garden(&mut *conn, user, &mut ended).await?;
    remove_admitted(&mut *conn, user, &mut ended).await?;
    Ok(ended)
}

/// The account is admin of the personal garden it opened with, again, if someone removed or
/// demoted it there. Whether it changed anything.
async fn restore_personal_garden(
    conn: &mut PgConnection,
    user: Uuid,
    ended: &mut Ended,
) -> Result<bool, sqlx::Error> {
    let restored: Vec<Uuid> = sqlx::query_scalar(
        "INSERT INTO platform.memberships (tenant_id, user_id, role)
         SELECT t.id, $1, 'admin' FROM platform.tenants t
         WHERE t.created_by = $1 AND t.kind = 'personal' AND t.status = 'active'
         ON CONFLICT (tenant_id, user_id) DO UPDATE SET role = 'admin', updated_at = now()
             WHERE platform.memberships.role <> 'admin'
         RETURNING tenant_id",
    )
    .bind(user)
    .fetch_all(&mut *conn)
    .await?;
    ended
        .forget_memberships
        .extend(restored.iter().map(|t| (*t, user)));
    Ok(!restored.is_empty())
}

/// Most rounds of "admitted by someone admitted": far beyond any real chain, a guard against a
/// cycle the `seen` set would not already stop.
const ADMISSION_DEPTH: usize = 16;

/// Removes, garden by garden, the members admitted through the account's invitations and,
/// transitively, through the invitations of those members in the same garden. A garden that
/// would be left without an admin keeps them unless the account is a member there (it is
/// then made admin); each removal ends the member's grants in that garden as any removal does.
async fn remove_admitted(
    conn: &mut PgConnection,
    user: Uuid,
    ended: &mut Ended,
) -> Result<(), sqlx::Error> {
    // (garden, member) pairs to remove, found round by round.
    let mut found: Vec<(Uuid, Uuid)> = sqlx::query_as(
        "SELECT m.tenant_id, m.user_id FROM platform.memberships m
         JOIN platform.invitations i ON i.id = m.invitation_id
         WHERE i.invited_by = $1 AND m.user_id <> $1
         ORDER BY m.tenant_id, m.user_id",
    )
    .bind(user)
    .fetch_all(&mut *conn)
    .await?;
    let mut frontier = found.clone();
    for _ in 0..ADMISSION_DEPTH {
        if frontier.is_empty() {
            break;
        }
        let (gardens, inviters): (Vec<Uuid>, Vec<Uuid>) = frontier.iter().copied().unzip();
        let next: Vec<(Uuid, Uuid)> = sqlx::query_as(
            "SELECT m.tenant_id, m.user_id FROM platform.memberships m
             JOIN platform.invitations i ON i.id = m.invitation_id
             JOIN unnest($1::uuid[], $2::uuid[]) AS f (tenant_id, inviter)
               ON f.tenant_id = m.tenant_id AND f.inviter = i.invited_by
             WHERE m.user_id <> $3
             ORDER BY m.tenant_id, m.user_id",
        )
        .bind(&gardens)
        .bind(&inviters)
        .bind(user)
        .fetch_all(&mut *conn)
        .await?;
        frontier = next.into_iter().filter(|p| !found.contains(p)).collect();
        frontier.dedup();
        found.extend(frontier.iter().copied());
    }
    found.sort();
    found.dedup();
    let mut gardens: Vec<Uuid> = found.iter().map(|(t, _)| *t).collect();
    gardens.dedup();
    for tenant in gardens {
        let leaving: Vec<Uuid> = found
            .iter()
            .filter(|(t, _)| *t == tenant)
            .map(|(_, u)| *u)
            .collect();
        memberships::lock_admins(&mut *conn, tenant).await?;
        let staying_admins: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM platform.memberships
             WHERE tenant_id = $1 AND role = 'admin' AND NOT (user_id = ANY($2))",
        )
        .bind(tenant)
        .bind(&leaving)
        .fetch_one(&mut *conn)
        .await?;
        if staying_admins == 0 {
            let member = memberships::role_in(&mut *conn, tenant, user).await?;
            if member.is_none() {
                tracing::warn!(%tenant, %user, kept = leaving.len(),
                    "take-back: members admitted by the account kept, the garden has no other admin");
                continue;
            }
            memberships::set_role(&mut *conn, tenant, user, crate::directory::Role::Admin).await?;
            ended.forget_memberships.push((tenant, user));
        }
        let garden_name: String =
            sqlx::query_scalar("SELECT name FROM platform.tenants WHERE id = $1")
                .bind(tenant)
                .fetch_one(&mut *conn)
                .await?;
        for member in leaving {
            let email: Option<String> =
                sqlx::query_scalar("SELECT email FROM platform.users WHERE id = $1")
                    .bind(member)
                    .fetch_one(&mut *conn)
                    .await?;
            if !memberships::remove(&mut *conn, tenant, member).await? {
                continue;
            }
            let theirs = end_made_in(&mut *conn, tenant, member, MemberChange::Removed).await?;
            ended.absorb_effects(theirs);
            ended.forget_memberships.push((tenant, member));
            ended.members_removed.push(RemovedMember {
                tenant,
                garden_name: garden_name.clone(),
                user: member,
                email,
            });
        }
    }
    Ok(())
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
/// the garden are withdrawn, its webhooks there end after the commit, and on removal its feed
/// of the garden is deleted.
pub async fn end_made_in(
    conn: &mut PgConnection,
    tenant: Uuid,
    user: Uuid,
    change: MemberChange,
) -> Result<Ended, sqlx::Error> {
    let mut ended = Ended::default();
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
        ended.forget_accounts.push(account);
        ended.forget_memberships.push((tenant, account));
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
    let has_webhooks: bool = sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM platform.webhook_gardens WHERE tenant_id = $1)",
    )
    .bind(tenant)
    .fetch_one(&mut *conn)
    .await?;
    if has_webhooks {
        ended.webhook_endings.push(WebhookEnding {
            tenant,
            maker: user,
            why: match change {
                MemberChange::Removed => WebhookEnd::Removed,
                MemberChange::Demoted => WebhookEnd::Demoted,
            },
        });
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

/// How a table of the platform or tenant schema stands towards the take-back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grant {
    /// Something an account hands out or sets up: what the take-back does with it.
    Ended(&'static str),
    /// Not a grant: why not.
    NotAGrant(&'static str),
}

/// Every table of the `platform` schema (a test compares this with the live catalogue: a new
/// table must be classified here, so no new kind of grant is forgotten by the take-back).
pub const PLATFORM_TABLES: &[(&str, Grant)] = &[
    (
        "_sqlx_migrations",
        Grant::NotAGrant("the platform's migration ledger"),
    ),
    (
        "api_keys",
        Grant::Ended("the account's keys and its service accounts' keys revoked"),
    ),
    (
        "calendar_feeds",
        Grant::Ended("the account's feeds deleted"),
    ),
    (
        "catalog_imports",
        Grant::NotAGrant("operator imports of the shared catalogue"),
    ),
    ("catalog_links", Grant::NotAGrant("shared catalogue data")),
    ("catalog_records", Grant::NotAGrant("shared catalogue data")),
    (
        "digest_sent",
        Grant::NotAGrant("a record of digests already sent; sends nothing"),
    ),
    (
        "email_tokens",
        Grant::NotAGrant(
            "one-time links mailed to the address, i.e. to the owner; the take-back consumes one",
        ),
    ),
    (
        "federated_identities",
        Grant::Ended("the account's provider sign-ins deleted"),
    ),
    (
        "identity_providers",
        Grant::NotAGrant("operator configuration"),
    ),
    (
        "invitations",
        Grant::Ended("pending ones withdrawn; members admitted through accepted ones removed"),
    ),
    (
        "knowledge_documents",
        Grant::NotAGrant("shared reference texts"),
    ),
    (
        "mail_outbox",
        Grant::NotAGrant("mails already addressed; carries no access"),
    ),
    (
        "mcp_audit_log",
        Grant::NotAGrant("a log of tool calls; carries no access"),
    ),
    (
        "memberships",
        Grant::Ended(
            "members admitted through the account's invitations removed; the account admin \
             of its personal garden again",
        ),
    ),
    (
        "photo_rendition_jobs",
        Grant::NotAGrant("a work queue of the service"),
    ),
    (
        "photo_storage_deletions",
        Grant::NotAGrant("a work queue of the service"),
    ),
    (
        "push_subscriptions",
        Grant::Ended("the account's subscriptions deleted"),
    ),
    (
        "tenant_migrations",
        Grant::NotAGrant("the gardens' migration log"),
    ),
    (
        "tenants",
        Grant::NotAGrant("gardens are data, not access; access is the memberships'"),
    ),
    (
        "user_preferences",
        Grant::NotAGrant("the account's own settings; they reach only the account's address"),
    ),
    (
        "users",
        Grant::Ended(
            "sessions (token generation) and grants epoch bumped; service accounts it made \
             deactivated",
        ),
    ),
    (
        "webhook_gardens",
        Grant::NotAGrant("which gardens the delivery worker looks into"),
    ),
];

/// Every table of a garden's schema (compared with the live catalogue like
/// [`PLATFORM_TABLES`]).
pub const TENANT_TABLES: &[(&str, Grant)] = &[
    (
        "_sqlx_migrations",
        Grant::NotAGrant("the garden's migration ledger"),
    ),
    ("alerts", Grant::NotAGrant("garden data")),
    (
        "webhooks",
        Grant::Ended(
            "disabled with a reason, pending deliveries failed; the worker refuses a webhook \
             whose maker was taken back, removed, demoted or deactivated",
        ),
    ),
    (
        "webhook_deliveries",
        Grant::Ended("pending deliveries of an ended webhook failed"),
    ),
    (
        "webhook_events",
        Grant::NotAGrant("the event outbox; sent only through webhooks"),
    ),
    (
        "webhook_attempts",
        Grant::NotAGrant("a log of delivery attempts"),
    ),
    ("care_confirmations", Grant::NotAGrant("garden data")),
    ("care_profiles", Grant::NotAGrant("garden data")),
    ("care_reminders", Grant::NotAGrant("garden data")),
    ("diary_entries", Grant::NotAGrant("garden data")),
    ("diary_photos", Grant::NotAGrant("garden data")),
    ("fertilizers", Grant::NotAGrant("garden data")),
    ("garden_settings", Grant::NotAGrant("garden data")),
    ("harvest_batches", Grant::NotAGrant("garden data")),
    ("harvest_observations", Grant::NotAGrant("garden data")),
    ("ipm_application_plants", Grant::NotAGrant("garden data")),
    ("ipm_applications", Grant::NotAGrant("garden data")),
    ("ipm_inspections", Grant::NotAGrant("garden data")),
    ("locations", Grant::NotAGrant("garden data")),
    ("nutrient_plan_assignments", Grant::NotAGrant("garden data")),
    ("nutrient_plan_phases", Grant::NotAGrant("garden data")),
    ("nutrient_plans", Grant::NotAGrant("garden data")),
    ("onboarding_kits", Grant::NotAGrant("garden data")),
    (
        "photo_file_outbox",
        Grant::NotAGrant("a work queue of the service"),
    ),
    ("plant_phase_history", Grant::NotAGrant("garden data")),
    ("planting_run_entries", Grant::NotAGrant("garden data")),
    ("planting_run_plants", Grant::NotAGrant("garden data")),
    ("planting_runs", Grant::NotAGrant("garden data")),
    ("plants", Grant::NotAGrant("garden data")),
    ("sites", Grant::NotAGrant("garden data")),
    ("slot_neighbours", Grant::NotAGrant("garden data")),
    ("slot_placements", Grant::NotAGrant("garden data")),
    ("slots", Grant::NotAGrant("garden data")),
    ("substrate_batch_readings", Grant::NotAGrant("garden data")),
    ("substrate_batches", Grant::NotAGrant("garden data")),
    ("substrates", Grant::NotAGrant("garden data")),
    ("sensor_readings", Grant::NotAGrant("garden data")),
    ("sensor_readings_default", Grant::NotAGrant("garden data")),
    ("sensor_readings_hourly", Grant::NotAGrant("garden data")),
    ("sensors", Grant::NotAGrant("garden data")),
    ("tank_fills", Grant::NotAGrant("garden data")),
    ("tank_maintenance", Grant::NotAGrant("garden data")),
    ("tanks", Grant::NotAGrant("garden data")),
    ("tasks", Grant::NotAGrant("garden data")),
    ("watering_event_plants", Grant::NotAGrant("garden data")),
    ("watering_events", Grant::NotAGrant("garden data")),
    ("weather_readings", Grant::NotAGrant("garden data")),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::directory::Role;

    fn standing(active: bool, epoch: i32, role: Option<Role>) -> Option<MakerStanding> {
        Some(MakerStanding {
            is_active: active,
            is_system: false,
            grants_epoch: epoch,
            role,
        })
    }

    #[test]
    fn a_webhook_delivers_only_while_its_maker_has_the_authority_it_was_made_with() {
        let system = Some(MakerStanding {
            is_active: true,
            is_system: true,
            grants_epoch: 3,
            role: None,
        });
        let cases: &[(Option<MakerStanding>, i32, Option<WebhookEnd>)] = &[
            (standing(true, 0, Some(Role::Admin)), 0, None),
            (standing(true, 2, Some(Role::Admin)), 2, None),
            (
                standing(true, 1, Some(Role::Admin)),
                0,
                Some(WebhookEnd::TakenBack),
            ),
            (
                standing(true, 0, Some(Role::Grower)),
                0,
                Some(WebhookEnd::Demoted),
            ),
            (
                standing(true, 0, Some(Role::Viewer)),
                0,
                Some(WebhookEnd::Demoted),
            ),
            (standing(true, 0, None), 0, Some(WebhookEnd::Removed)),
            (
                standing(false, 0, Some(Role::Admin)),
                0,
                Some(WebhookEnd::Deactivated),
            ),
            // Taken back and demoted: the take-back is what the admins need to know.
            (
                standing(true, 1, Some(Role::Grower)),
                0,
                Some(WebhookEnd::TakenBack),
            ),
            (None, 0, Some(WebhookEnd::MakerGone)),
            (system, 0, None),
        ];
        for (s, epoch, want) in cases {
            assert_eq!(maker_verdict(*s, *epoch), *want, "{s:?} epoch {epoch}");
        }
    }

    #[test]
    fn every_reason_says_it_was_disabled_and_how_to_revive_it() {
        for why in [
            WebhookEnd::TakenBack,
            WebhookEnd::Removed,
            WebhookEnd::Demoted,
            WebhookEnd::Deactivated,
            WebhookEnd::MakerGone,
        ] {
            let r = why.reason();
            assert!(r.starts_with("disabled: "), "{r}");
            assert!(r.ends_with("becomes its maker"), "{r}");
            assert!(r.len() <= 500, "{r}");
        }
    }

    #[test]
    fn the_mail_lines_say_only_what_was_ended() {
        assert!(Ended::default().lines().is_empty());
        assert!(Ended::default().is_empty());
        let ended = Ended {
            federated_identities: vec!["acme".into()],
            push_subscriptions: 2,
            webhooks: WebhookTally {
                enabled: 1,
                unreachable_gardens: 0,
            },
            ..Ended::default()
        };
        let lines = ended.lines();
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert!(lines[0].contains("1 sign-in link(s)") && lines[0].contains("(acme)"));
        assert!(lines[1].contains("2 browser push subscription(s) deleted"));
        assert!(lines[2].contains("1 webhook(s) created by your account disabled"));
        assert!(!ended.is_empty());
    }
}
