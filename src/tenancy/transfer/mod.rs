//! Copying a garden whole: to a file and back (`kultiva tenant export` / `import`), and from
//! one placement (PostgreSQL server) to another (`kultiva tenant move`).
//!
//! All three copy rows with PostgreSQL's own `COPY … TEXT` format, table by table in foreign-key
//! order ([`catalog`]), so every value comes back exactly as it was stored (the same text
//! PostgreSQL itself reads and writes) and ids are kept. Nothing shells out to `pg_dump`.

pub mod catalog;
pub mod file;
pub mod moving;

use std::time::Duration;

use sqlx::{ConnectOptions, Connection, PgConnection};

use super::migrate::MigrationError;
use super::provision::ProvisionError;
use crate::error::{AppError, ErrorCode, ErrorDetail};
use crate::store::pg::Placement;

#[derive(Debug, thiserror::Error)]
pub enum TransferError {
    #[error("no tenant with slug {0}")]
    NotFound(String),
    #[error("placement {0:?} is not configured (TENANT_PLACEMENTS)")]
    UnknownPlacement(String),
    #[error("tenant {0} is {1}, not active")]
    NotActive(String, &'static str),
    #[error("{0}")]
    Refused(String),
    #[error("another move of tenant {0} is running")]
    Busy(String),
    #[error("cannot reach placement {0:?}: {1}")]
    Unreachable(String, String),
    #[error("{0}")]
    BadFile(String),
    /// Past a bound of the reader (a line, a photo file, the unpacked stream).
    #[error("{0}")]
    TooLarge(String),
    /// The file's photo files do not fit the garden's photo quota.
    #[error("{0}")]
    OverQuota(String),
    #[error("file {0}: {1}")]
    Io(String, std::io::Error),
    #[error(transparent)]
    Provision(#[from] ProvisionError),
    #[error(transparent)]
    Migration(#[from] MigrationError),
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    /// A test stopped the operation here on purpose (see `moving::MoveOptions`).
    #[error("stopped on purpose at {0}")]
    Injected(&'static str),
}

impl TransferError {
    pub fn bad_file(what: impl Into<String>) -> Self {
        Self::BadFile(what.into())
    }
}

/// A name from the catalogue (or a file) as a quoted SQL identifier.
pub fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// How long connecting to a placement may take: an unreachable server fails the command
/// instead of hanging it.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A session of its own on a placement (never one of the request pools): transfers hold
/// transactions and locks for the whole copy.
pub async fn connect(
    placement: &Placement,
    application: &str,
) -> Result<PgConnection, TransferError> {
    let options = placement
        .connect_options()
        .clone()
        .application_name(application);
    match tokio::time::timeout(CONNECT_TIMEOUT, options.connect()).await {
        Ok(Ok(conn)) => Ok(conn),
        Ok(Err(err)) => Err(TransferError::Unreachable(
            placement.name().to_owned(),
            err.to_string(),
        )),
        Err(_) => Err(TransferError::Unreachable(
            placement.name().to_owned(),
            format!("no answer within {} s", CONNECT_TIMEOUT.as_secs()),
        )),
    }
}

/// Closes a session, ignoring a failure (a session that is gone is closed too).
pub async fn close(conn: PgConnection) {
    if let Err(err) = conn.close().await {
        tracing::debug!(error = %err, "closing a transfer session failed");
    }
}

/// Whether a schema of this name exists on the session's database.
pub(crate) async fn schema_exists(
    conn: &mut PgConnection,
    schema: &super::SchemaName,
) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)")
        .bind(schema.as_str())
        .fetch_one(conn)
        .await
}

/// Whether two sessions reach the same database (two placement names for one server and
/// database): a lock one takes is then refused to the other. Advisory locks are per database,
/// so two databases of one server count as different, as they are.
pub(crate) async fn same_database(
    a: &mut PgConnection,
    b: &mut PgConnection,
) -> Result<bool, sqlx::Error> {
    let key: i64 = rand::random();
    let held: bool = sqlx::query_scalar("SELECT pg_try_advisory_lock($1)")
        .bind(key)
        .fetch_one(&mut *a)
        .await?;
    let also: bool = sqlx::query_scalar("SELECT pg_try_advisory_lock($1)")
        .bind(key)
        .fetch_one(&mut *b)
        .await?;
    for (conn, locked) in [(a, held), (b, also)] {
        if locked {
            sqlx::query("SELECT pg_advisory_unlock($1)")
                .bind(key)
                .execute(conn)
                .await?;
        }
    }
    Ok(held && !also)
}

/// Counts the rows of a chunk of `COPY … TEXT` data: every row ends with a newline (a newline
/// inside a value is written as `\n`).
pub fn count_rows(chunk: &[u8]) -> u64 {
    chunk.iter().filter(|b| **b == b'\n').count() as u64
}

/// A garden export or import over HTTP: a damaged file is the client's (422), a file past a
/// bound of the reader or the photo quota too large (413), a garden being moved or a slug in
/// use a conflict (409); what the service itself failed at stays a 500 (whose message names
/// nothing, paths included).
impl From<crate::tenancy::transfer::TransferError> for AppError {
    fn from(err: crate::tenancy::transfer::TransferError) -> AppError {
        use crate::tenancy::provision::ProvisionError;
        use crate::tenancy::transfer::TransferError;
        match err {
            TransferError::NotFound(_) => AppError::not_found("tenant"),
            TransferError::BadFile(reason) => AppError::new(
                ErrorCode::ValidationError,
                "the file is not a readable garden export",
            )
            .with_details(vec![ErrorDetail::new(
                "body",
                reason,
                "export_file_invalid",
            )]),
            TransferError::TooLarge(reason) => AppError::new(ErrorCode::PayloadTooLarge, reason),
            TransferError::OverQuota(reason) => {
                AppError::new(ErrorCode::StorageQuotaExceeded, reason)
            }
            err @ (TransferError::NotActive(..)
            | TransferError::Refused(_)
            | TransferError::Busy(_)) => AppError::new(ErrorCode::StateConflict, err.to_string()),
            TransferError::Provision(ProvisionError::SlugTaken(slug)) => {
                AppError::duplicate(format!("a tenant with slug {slug} exists"))
            }
            TransferError::Provision(err) => err.into_app_error(),
            TransferError::Migration(err) => err.into(),
            TransferError::Database(err) => err.into(),
            err @ TransferError::Unreachable(..) => {
                AppError::unavailable("the garden's database", err)
            }
            other => AppError::internal(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_quoted_whatever_they_hold() {
        assert_eq!(quote_ident("plants"), "\"plants\"");
        assert_eq!(quote_ident("a\"b"), "\"a\"\"b\"");
        assert_eq!(quote_ident("x; DROP"), "\"x; DROP\"");
    }

    #[test]
    fn rows_are_counted_by_line_ends() {
        assert_eq!(count_rows(b""), 0);
        assert_eq!(count_rows(b"1\ta\\nb\n2\t\\N\n"), 2);
    }
}
