//! The personal export (`GET /users/me/export`): one JSON document of everything Kultiva holds
//! about a person, written piece by piece into a bounded channel that the response streams.
//!
//! Nothing waits on the client while holding a database connection: every piece is one short
//! query whose result is handed over before the next starts, and the records of the gardens
//! are read in pages of [`PAGE`] rows by primary key. The document is therefore not one
//! snapshot: a record written while it downloads may or may not be in it (the README says so).
//!
//! Never in it: a password hash, a token or key digest, a one-time link, a provider secret.
//! Other people's addresses are left out too (the invitee of an invitation the person sent,
//! the inviter of one they received): they are not the person's data.

use sqlx::{PgPool, Row};
use tokio::sync::mpsc;
use uuid::Uuid;

use super::authored::{AUTHORED, AuthoredTable, actor_texts};
use crate::directory::users::model::User;
use crate::error::AppError;
use crate::state::AppState;
use crate::tenancy::TenantRecord;
use crate::tenancy::context::migrate_if_behind;

/// Rows of one garden table per query.
pub const PAGE: i64 = 500;
/// The document's `format` and `version`.
pub const FORMAT: &str = "kultiva.personal_export";
pub const VERSION: u32 = 1;

/// Where the document goes: a bounded channel the response streams from, counting bytes.
pub struct Sink {
    tx: mpsc::Sender<Result<Vec<u8>, std::io::Error>>,
    bytes: u64,
}

/// The client went away: nothing more is written.
#[derive(Debug)]
pub struct Gone;

impl Sink {
    pub fn new(tx: mpsc::Sender<Result<Vec<u8>, std::io::Error>>) -> Self {
        Self { tx, bytes: 0 }
    }

    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    async fn put(&mut self, chunk: impl Into<Vec<u8>>) -> Result<(), ExportError> {
        let chunk = chunk.into();
        self.bytes += chunk.len() as u64;
        self.tx
            .send(Ok(chunk))
            .await
            .map_err(|_| ExportError::Gone(Gone))
    }

    /// Ends the stream with an error: the client sees a broken download, never a document
    /// that looks whole but is not.
    pub async fn fail(&self, message: &str) {
        let _ = self
            .tx
            .send(Err(std::io::Error::other(message.to_owned())))
            .await;
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("the client closed the download")]
    Gone(Gone),
    #[error(transparent)]
    App(#[from] AppError),
}

impl From<sqlx::Error> for ExportError {
    fn from(err: sqlx::Error) -> Self {
        Self::App(err.into())
    }
}

impl From<serde_json::Error> for ExportError {
    fn from(err: serde_json::Error) -> Self {
        Self::App(AppError::internal(err))
    }
}

/// One platform section as a JSON text, aggregated by PostgreSQL (small: lists of the
/// person's own keys, accounts, invitations, mails).
async fn section(db: &PgPool, sql: &'static str, user: Uuid) -> Result<String, sqlx::Error> {
    sqlx::query_scalar::<_, String>(sql)
        .bind(user)
        .fetch_one(db)
        .await
}

const PREFERENCES: &str = "SELECT coalesce((SELECT to_jsonb(p) - 'user_id' \
     FROM platform.user_preferences p WHERE p.user_id = $1), 'null'::jsonb)::text";

const MEMBERSHIPS: &str = "SELECT coalesce(jsonb_agg(jsonb_build_object(
        'tenant_key', t.id, 'slug', t.slug, 'name', t.name, 'kind', t.kind, 'role', m.role,
        'member_since', m.created_at) ORDER BY t.slug), '[]'::jsonb)::text
     FROM platform.memberships m JOIN platform.tenants t ON t.id = m.tenant_id
     WHERE m.user_id = $1";

const API_KEYS: &str = "SELECT coalesce(jsonb_agg(jsonb_build_object(
        'key', k.id, 'label', k.label, 'key_prefix', k.key_prefix, 'tenant_scope', t.slug,
        'created_at', k.created_at, 'last_used_at', k.last_used_at, 'revoked_at', k.revoked_at)
        ORDER BY k.created_at, k.id), '[]'::jsonb)::text
     FROM platform.api_keys k LEFT JOIN platform.tenants t ON t.id = k.tenant_scope_id
     WHERE k.user_id = $1";

/// The sign-ins at identity providers linked to the account (no provider token is kept).
const IDENTITIES: &str = "SELECT coalesce(jsonb_agg(jsonb_build_object(
        'key', f.id, 'provider', f.provider, 'subject', f.subject, 'email', f.email,
        'created_at', f.created_at, 'last_login_at', f.last_login_at)
        ORDER BY f.created_at, f.id), '[]'::jsonb)::text
     FROM platform.federated_identities f WHERE f.user_id = $1";

const SERVICE_ACCOUNTS: &str = "SELECT coalesce(jsonb_agg(jsonb_build_object(
        'key', u.id, 'display_name', u.display_name, 'is_active', u.is_active,
        'created_at', u.created_at,
        'memberships', (SELECT coalesce(jsonb_agg(jsonb_build_object('slug', t.slug, 'role', m.role)
                            ORDER BY t.slug), '[]'::jsonb)
                        FROM platform.memberships m JOIN platform.tenants t ON t.id = m.tenant_id
                        WHERE m.user_id = u.id),
        'api_keys', (SELECT coalesce(jsonb_agg(jsonb_build_object(
                            'key', k.id, 'label', k.label, 'key_prefix', k.key_prefix,
                            'created_at', k.created_at, 'last_used_at', k.last_used_at,
                            'revoked_at', k.revoked_at) ORDER BY k.created_at, k.id), '[]'::jsonb)
                     FROM platform.api_keys k WHERE k.user_id = u.id))
        ORDER BY u.created_at, u.id), '[]'::jsonb)::text
     FROM platform.users u WHERE u.created_by = $1 AND u.account_type = 'service'";

const CALENDAR_FEEDS: &str = "SELECT coalesce(jsonb_agg(jsonb_build_object(
        'tenant_slug', t.slug, 'created_at', f.created_at, 'rotated_at', f.rotated_at)
        ORDER BY t.slug), '[]'::jsonb)::text
     FROM platform.calendar_feeds f JOIN platform.tenants t ON t.id = f.tenant_id
     WHERE f.user_id = $1";

const INVITATIONS_SENT: &str = "SELECT coalesce(jsonb_agg(jsonb_build_object(
        'key', i.id, 'tenant_slug', t.slug, 'role', i.role, 'status', i.status,
        'created_at', i.created_at, 'expires_at', i.expires_at, 'answered_at', i.answered_at)
        ORDER BY i.created_at, i.id), '[]'::jsonb)::text
     FROM platform.invitations i JOIN platform.tenants t ON t.id = i.tenant_id
     WHERE i.invited_by = $1";

const INVITATIONS_RECEIVED: &str = "SELECT coalesce(jsonb_agg(jsonb_build_object(
        'key', i.id, 'tenant_slug', t.slug, 'tenant_name', t.name, 'role', i.role,
        'status', i.status, 'created_at', i.created_at, 'expires_at', i.expires_at,
        'answered_at', i.answered_at) ORDER BY i.created_at, i.id), '[]'::jsonb)::text
     FROM platform.invitations i JOIN platform.tenants t ON t.id = i.tenant_id
     WHERE i.email = (SELECT email FROM platform.users WHERE id = $1)";

/// The mails sent to the person (never their bodies: those held one-time links and are wiped
/// once a mail is out).
const NOTIFICATIONS: &str = "SELECT coalesce(jsonb_agg(jsonb_build_object(
        'kind', o.kind, 'subject', o.subject, 'status', o.status, 'created_at', o.created_at,
        'sent_at', o.sent_at) ORDER BY o.created_at, o.id), '[]'::jsonb)::text
     FROM platform.mail_outbox o
     WHERE o.recipient = (SELECT email FROM platform.users WHERE id = $1)";

/// The days a digest mail was considered for the person (sent or with nothing to say).
const DIGESTS: &str = "SELECT coalesce(jsonb_agg(jsonb_build_object(
        'local_date', d.local_date, 'items', d.items, 'mailed', d.mail_id IS NOT NULL,
        'sent_at', d.sent_at) ORDER BY d.local_date), '[]'::jsonb)::text
     FROM platform.digest_sent d WHERE d.user_id = $1";

/// The person's Web Push subscriptions: the push service's host only (the endpoint's path is
/// a capability of the push service, and the browser's keys stay with the service).
const PUSH_SUBSCRIPTIONS: &str = "SELECT coalesce(jsonb_agg(jsonb_build_object(
        'key', s.id, 'endpoint_host', s.endpoint_host, 'created_at', s.created_at,
        'last_sent_at', s.last_sent_at) ORDER BY s.created_at, s.id), '[]'::jsonb)::text
     FROM platform.push_subscriptions s WHERE s.user_id = $1";

/// The audit log of the person's calls, one page (keyset on the row id).
const AUDIT_PAGE: &str = "SELECT a.id, jsonb_build_object(
        'action', a.tool_name, 'tenant_slug', t.slug, 'api_key', a.api_key_id,
        'status', a.status, 'error_class', a.error_class, 'duration_ms', a.duration_ms,
        'response_bytes', a.response_bytes, 'created_at', a.created_at)::text AS row
     FROM platform.mcp_audit_log a LEFT JOIN platform.tenants t ON t.id = a.tenant_id
     WHERE a.account_id = $1 AND a.id > $2 ORDER BY a.id LIMIT $3";

/// Writes the whole document for `user` into `sink`.
pub async fn write(state: &AppState, user: &User, sink: &mut Sink) -> Result<(), ExportError> {
    let db = state.platform_pool();
    let head = serde_json::json!({
        "format": FORMAT,
        "version": VERSION,
        "generated_at": time::OffsetDateTime::now_utc()
            .format(&time::format_description::well_known::Rfc3339)
            .map_err(AppError::internal)?,
        "account": user,
    })
    .to_string();
    // The head object without its closing brace: the sections follow as further members.
    sink.put(&head[..head.len() - 1]).await?;
    for (name, sql) in [
        ("preferences", PREFERENCES),
        ("memberships", MEMBERSHIPS),
        ("identities", IDENTITIES),
        ("api_keys", API_KEYS),
        ("service_accounts", SERVICE_ACCOUNTS),
        ("calendar_feeds", CALENDAR_FEEDS),
        ("invitations_sent", INVITATIONS_SENT),
        ("invitations_received", INVITATIONS_RECEIVED),
        ("notifications", NOTIFICATIONS),
        ("digests", DIGESTS),
        ("push_subscriptions", PUSH_SUBSCRIPTIONS),
    ] {
        let json = section(db, sql, user.key).await?;
        sink.put(format!(",\"{name}\":{json}")).await?;
    }
    let sessions = crate::auth::refresh::sessions_of(state, user.key).await?;
    sink.put(format!(
        ",\"sessions\":{}",
        serde_json::to_string(&sessions)?
    ))
    .await?;
    write_audit(db, user.key, sink).await?;
    write_gardens(state, user.key, sink).await?;
    sink.put("}").await
}

async fn write_audit(db: &PgPool, user: Uuid, sink: &mut Sink) -> Result<(), ExportError> {
    sink.put(",\"audit\":[").await?;
    let mut after = 0i64;
    let mut first = true;
    loop {
        let rows = sqlx::query(AUDIT_PAGE)
            .bind(user)
            .bind(after)
            .bind(PAGE)
            .fetch_all(db)
            .await?;
        let Some(last) = rows.last() else { break };
        after = last.try_get("id")?;
        let mut chunk = String::new();
        for row in &rows {
            if !first {
                chunk.push(',');
            }
            first = false;
            chunk.push_str(row.try_get::<&str, _>("row")?);
        }
        sink.put(chunk).await?;
        if (rows.len() as i64) < PAGE {
            break;
        }
    }
    sink.put("]").await
}

/// The gardens the person belongs to, each with the records they wrote there, table by table.
async fn write_gardens(state: &AppState, user: Uuid, sink: &mut Sink) -> Result<(), ExportError> {
    let memberships =
        crate::directory::memberships::repo::tenants_of(state.platform_pool(), user).await?;
    sink.put(",\"gardens\":[").await?;
    for (i, (tenant, role)) in memberships.into_iter().enumerate() {
        let head = serde_json::json!({
            "tenant_key": tenant.id,
            "slug": tenant.slug.as_str(),
            "name": tenant.name,
            "role": role.as_str(),
        })
        .to_string();
        let comma = if i == 0 { "" } else { "," };
        sink.put(format!("{comma}{},\"records\":{{", &head[..head.len() - 1]))
            .await?;
        // The tables are read as the current migrations have them.
        let tenant = migrate_if_behind(state, tenant).await?;
        for (j, table) in AUTHORED.iter().enumerate() {
            let comma = if j == 0 { "" } else { "," };
            sink.put(format!("{comma}\"{}\":[", table.table)).await?;
            write_rows(state, &tenant, table, user, sink).await?;
            sink.put("]").await?;
        }
        sink.put("}}").await?;
    }
    sink.put("]").await
}

/// The person's rows of one table: their ids first (one scan), then the rows by primary key in
/// pages, each handed over before the next is read.
async fn write_rows(
    state: &AppState,
    tenant: &TenantRecord,
    table: &AuthoredTable,
    user: Uuid,
    sink: &mut Sink,
) -> Result<(), ExportError> {
    let placement = state
        .placements()
        .get(&tenant.placement)
        .ok_or_else(|| AppError::internal(format!("unknown placement {}", tenant.placement)))?;
    let db = placement.pool();
    let qualified = format!("{}.{}", tenant.schema_name.quoted(), table.table);
    let ids_sql = format!(
        "SELECT id::text FROM {qualified} WHERE {} ORDER BY id",
        table.condition()
    );
    let ids: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(ids_sql))
        .bind(actor_texts(user))
        .bind(user)
        .fetch_all(db)
        .await?;
    let rows_sql = format!(
        "SELECT {} FROM {qualified} r WHERE id = ANY($1::text[]::{}[]) ORDER BY id",
        table.row_json(),
        table.id_type
    );
    let mut first = true;
    for page in ids.chunks(PAGE as usize) {
        let rows: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(rows_sql.clone()))
            .bind(page)
            .fetch_all(db)
            .await?;
        let mut chunk = String::new();
        for row in rows {
            if !first {
                chunk.push(',');
            }
            first = false;
            chunk.push_str(&row);
        }
        sink.put(chunk).await?;
    }
    Ok(())
}
