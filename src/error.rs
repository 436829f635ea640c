//! One error type for the REST face: every variant knows its HTTP status and `error_code`, and
//! renders the specification's error record. Internal causes are logged with the `error_id`,
//! never sent to the client.

use std::borrow::Cow;
use std::fmt;

use salvo::http::StatusCode;
use salvo::oapi::{self, Components, EndpointOutRegister, Operation, ToSchema};
use salvo::prelude::*;
use serde::Serialize;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use uuid::Uuid;

/// The stable, machine-readable codes. The first block is the specification's table; the second
/// fills statuses the specification names without a code (documented in the README).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    EntityNotFound,
    DuplicateEntry,
    ValidationError,
    InternalError,
    Unauthorized,
    InvalidToken,
    Forbidden,
    EmailNotVerified,
    AccountLocked,
    PhaseTransitionInvalid,
    InvalidStatusTransition,
    InvalidRunState,
    KarenzViolation,
    ResistanceWarning,
    HstViolation,
    SubstrateExhausted,
    RotationViolation,
    IncompatibleCompanion,
    ExternalSourceError,
    AdapterNotFound,
    RateLimitExceeded,
    // Statuses the specification uses without naming a code.
    MalformedRequest,
    MethodNotAllowed,
    PayloadTooLarge,
    UnsupportedMediaType,
    ServiceUnavailable,
    /// 409: the request is valid but conflicts with the current state (the last admin of a
    /// tenant, a tenant kind that cannot be deleted).
    StateConflict,
    /// 422: a picture with far more pixels than its file size lets a photo have (a
    /// decompression bomb), refused before decoding.
    ImageTooCompressed,
    /// 413: the garden's photo storage would go over `PHOTO_QUOTA_MB_PER_GARDEN`.
    StorageQuotaExceeded,
}

impl ErrorCode {
    pub fn status(self) -> StatusCode {
        use ErrorCode::*;
        match self {
            EntityNotFound | AdapterNotFound => StatusCode::NOT_FOUND,
            DuplicateEntry | InvalidRunState | StateConflict => StatusCode::CONFLICT,
            ValidationError
            | PhaseTransitionInvalid
            | InvalidStatusTransition
            | KarenzViolation
            | ResistanceWarning
            | HstViolation
            | SubstrateExhausted
            | RotationViolation
            | IncompatibleCompanion
            | ImageTooCompressed => StatusCode::UNPROCESSABLE_ENTITY,
            InternalError => StatusCode::INTERNAL_SERVER_ERROR,
            Unauthorized | InvalidToken => StatusCode::UNAUTHORIZED,
            Forbidden | EmailNotVerified => StatusCode::FORBIDDEN,
            AccountLocked => StatusCode::LOCKED,
            ExternalSourceError => StatusCode::BAD_GATEWAY,
            RateLimitExceeded => StatusCode::TOO_MANY_REQUESTS,
            MalformedRequest => StatusCode::BAD_REQUEST,
            MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            PayloadTooLarge | StorageQuotaExceeded => StatusCode::PAYLOAD_TOO_LARGE,
            UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ServiceUnavailable => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    /// The wire form, as in the error record (`ENTITY_NOT_FOUND`).
    pub fn as_str(self) -> &'static str {
        use ErrorCode::*;
        match self {
            EntityNotFound => "ENTITY_NOT_FOUND",
            DuplicateEntry => "DUPLICATE_ENTRY",
            ValidationError => "VALIDATION_ERROR",
            InternalError => "INTERNAL_ERROR",
            Unauthorized => "UNAUTHORIZED",
            InvalidToken => "INVALID_TOKEN",
            Forbidden => "FORBIDDEN",
            EmailNotVerified => "EMAIL_NOT_VERIFIED",
            AccountLocked => "ACCOUNT_LOCKED",
            PhaseTransitionInvalid => "PHASE_TRANSITION_INVALID",
            InvalidStatusTransition => "INVALID_STATUS_TRANSITION",
            InvalidRunState => "INVALID_RUN_STATE",
            KarenzViolation => "KARENZ_VIOLATION",
            ResistanceWarning => "RESISTANCE_WARNING",
            HstViolation => "HST_VIOLATION",
            SubstrateExhausted => "SUBSTRATE_EXHAUSTED",
            RotationViolation => "ROTATION_VIOLATION",
            IncompatibleCompanion => "INCOMPATIBLE_COMPANION",
            ExternalSourceError => "EXTERNAL_SOURCE_ERROR",
            AdapterNotFound => "ADAPTER_NOT_FOUND",
            RateLimitExceeded => "RATE_LIMIT_EXCEEDED",
            MalformedRequest => "MALFORMED_REQUEST",
            MethodNotAllowed => "METHOD_NOT_ALLOWED",
            PayloadTooLarge => "PAYLOAD_TOO_LARGE",
            UnsupportedMediaType => "UNSUPPORTED_MEDIA_TYPE",
            ServiceUnavailable => "SERVICE_UNAVAILABLE",
            StateConflict => "STATE_CONFLICT",
            ImageTooCompressed => "IMAGE_TOO_COMPRESSED",
            StorageQuotaExceeded => "STORAGE_QUOTA_EXCEEDED",
        }
    }

    /// The code for an error status produced outside a handler (unknown route, panic, size
    /// limit), where no `AppError` exists.
    pub fn for_status(status: StatusCode) -> Self {
        match status {
            StatusCode::BAD_REQUEST => Self::MalformedRequest,
            StatusCode::UNAUTHORIZED => Self::Unauthorized,
            StatusCode::FORBIDDEN => Self::Forbidden,
            StatusCode::NOT_FOUND => Self::EntityNotFound,
            StatusCode::METHOD_NOT_ALLOWED => Self::MethodNotAllowed,
            StatusCode::CONFLICT => Self::DuplicateEntry,
            StatusCode::PAYLOAD_TOO_LARGE => Self::PayloadTooLarge,
            StatusCode::UNSUPPORTED_MEDIA_TYPE => Self::UnsupportedMediaType,
            StatusCode::UNPROCESSABLE_ENTITY => Self::ValidationError,
            StatusCode::LOCKED => Self::AccountLocked,
            StatusCode::TOO_MANY_REQUESTS => Self::RateLimitExceeded,
            StatusCode::BAD_GATEWAY => Self::ExternalSourceError,
            StatusCode::SERVICE_UNAVAILABLE => Self::ServiceUnavailable,
            _ => Self::InternalError,
        }
    }
}

/// One entry of `details`: which field, why, and a detail code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct ErrorDetail {
    /// Field name or path; body fields are prefixed `body.`, query parameters `query.`.
    pub field: String,
    pub reason: String,
    /// Detail code such as `missing`, `string_too_long`, `type_error`, `value_error`.
    pub code: String,
}

impl ErrorDetail {
    pub fn new(field: impl Into<String>, reason: impl Into<String>, code: &str) -> Self {
        Self {
            field: field.into(),
            reason: reason.into(),
            code: code.to_owned(),
        }
    }
}

/// The specification's REST error record.
#[derive(Debug, Serialize, ToSchema)]
#[salvo(schema(name = "ErrorRecord"))]
pub struct ErrorBody {
    /// `err_` followed by a UUID; logged server-side with the cause.
    pub error_id: String,
    pub error_code: ErrorCode,
    pub message: String,
    pub details: Vec<ErrorDetail>,
    /// ISO 8601, UTC.
    pub timestamp: String,
    pub path: String,
    pub method: String,
}

type Cause = Box<dyn std::error::Error + Send + Sync>;

/// `Retry-After` of a 503: a lost database or Redis connection is usually back within this
/// (a restart, a failover, a reconnect).
pub const UNAVAILABLE_RETRY_AFTER_SECONDS: u64 = 2;

/// `Retry-After` of a 429 whose budget does not say when it refills.
pub const RATE_LIMIT_RETRY_AFTER_SECONDS: u64 = 60;

/// The 429 body: a single field, as the specification has it (every budget answers with it).
#[derive(Debug, Serialize, ToSchema)]
#[salvo(schema(name = "RateLimitError"))]
pub struct RateLimitBody {
    /// Which limit was exceeded, in words.
    pub error: String,
}

/// An error on its way to the client.
pub struct AppError {
    code: ErrorCode,
    message: Cow<'static, str>,
    details: Vec<ErrorDetail>,
    cause: Option<Cause>,
    /// Seconds until a refused request may succeed: the `Retry-After` of a 429.
    retry_after: Option<u64>,
}

impl fmt::Debug for AppError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AppError")
            .field("code", &self.code)
            .field("message", &self.message)
            .field("details", &self.details)
            .field("cause", &self.cause.as_ref().map(ToString::to_string))
            .finish()
    }
}

impl fmt::Display for AppError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}: {}", self.code, self.message)?;
        if let Some(cause) = &self.cause {
            write!(f, " ({cause})")?;
        }
        Ok(())
    }
}

impl std::error::Error for AppError {}

impl AppError {
    pub fn new(code: ErrorCode, message: impl Into<Cow<'static, str>>) -> Self {
        Self {
            code,
            message: message.into(),
            details: Vec::new(),
            cause: None,
            retry_after: None,
        }
    }

    /// A budget is spent (429): on REST the specification's rate-limit answer, `{error}`
    /// naming the limit and `Retry-After` in whole seconds (at least 1).
    pub fn rate_limited(message: impl Into<Cow<'static, str>>, retry_after_seconds: u64) -> Self {
        let mut err = Self::new(ErrorCode::RateLimitExceeded, message);
        err.retry_after = Some(retry_after_seconds.max(1));
        err
    }

    /// Seconds until a refused request may succeed, when the error knows.
    pub fn retry_after(&self) -> Option<u64> {
        self.retry_after
    }

    pub fn with_details(mut self, details: Vec<ErrorDetail>) -> Self {
        self.details = details;
        self
    }

    pub fn not_found(what: &str) -> Self {
        Self::new(ErrorCode::EntityNotFound, format!("{what} not found"))
    }

    pub fn duplicate(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorCode::DuplicateEntry, message)
    }

    pub fn validation(details: Vec<ErrorDetail>) -> Self {
        let message = match details.len() {
            1 => "1 field is invalid".to_owned(),
            n => format!("{n} fields are invalid"),
        };
        Self::new(ErrorCode::ValidationError, message).with_details(details)
    }

    pub fn malformed(reason: impl Into<String>) -> Self {
        Self::new(
            ErrorCode::MalformedRequest,
            "request body is not valid JSON",
        )
        .with_details(vec![ErrorDetail::new("body", reason, "json_invalid")])
    }

    /// An unexpected failure: the cause is logged, the client sees only the error id.
    pub fn internal(cause: impl Into<Cause>) -> Self {
        Self {
            code: ErrorCode::InternalError,
            message: Cow::Borrowed("internal error"),
            details: Vec::new(),
            cause: Some(cause.into()),
            retry_after: None,
        }
    }

    pub fn unavailable(what: &'static str, cause: impl Into<Cause>) -> Self {
        Self {
            code: ErrorCode::ServiceUnavailable,
            message: Cow::Owned(format!("{what} is unavailable")),
            details: Vec::new(),
            cause: Some(cause.into()),
            retry_after: None,
        }
    }

    pub fn code(&self) -> ErrorCode {
        self.code
    }

    pub fn details(&self) -> &[ErrorDetail] {
        &self.details
    }

    /// Builds the body and logs the error under its id. A 500 logs its cause at error level;
    /// a 503 (an outage or a garden being moved: the client retries after `Retry-After`) at
    /// warn level, so alerts on errors mean a defect; client errors at info level (they are
    /// the client's to fix, not ours).
    pub fn into_body(self, path: &str, method: &str) -> (StatusCode, ErrorBody) {
        let status = self.code.status();
        let error_id = format!("err_{}", Uuid::new_v4());
        if status == StatusCode::SERVICE_UNAVAILABLE {
            let cause = self.cause.as_ref().map(ToString::to_string);
            tracing::warn!(%error_id, error_code = self.code.as_str(), cause = cause.as_deref(),
                message = %self.message, "request refused for now");
        } else if status.is_server_error() {
            let cause = self.cause.as_ref().map(ToString::to_string);
            tracing::error!(%error_id, error_code = self.code.as_str(), cause = cause.as_deref(),
                message = %self.message, "request failed");
        } else {
            tracing::info!(%error_id, error_code = self.code.as_str(), message = %self.message,
                "request rejected");
        }
        // A 500 never shows its cause: the message is generic by construction.
        let body = ErrorBody {
            error_id,
            error_code: self.code,
            message: self.message.into_owned(),
            details: self.details,
            timestamp: now_rfc3339(),
            path: path.to_owned(),
            method: method.to_owned(),
        };
        (status, body)
    }

    /// For hoops: writes the error record and stops the chain.
    pub fn halt(self, req: &Request, res: &mut Response, ctrl: &mut FlowCtrl) {
        self.render_into(req, res);
        ctrl.skip_rest();
    }

    /// Writes the error record into `res`. A 503 carries `Retry-After`; a 429 is the
    /// specification's rate-limit answer (`{error}` and `Retry-After`), whatever budget it is.
    pub fn render_into(self, req: &Request, res: &mut Response) {
        if self.code.status() == StatusCode::TOO_MANY_REQUESTS {
            let seconds = self.retry_after.unwrap_or(RATE_LIMIT_RETRY_AFTER_SECONDS);
            tracing::info!(error_code = self.code.as_str(), message = %self.message,
                "request over a budget");
            res.status_code(StatusCode::TOO_MANY_REQUESTS);
            res.headers_mut().insert(
                salvo::http::header::RETRY_AFTER,
                salvo::http::HeaderValue::from(seconds),
            );
            res.render(Json(RateLimitBody {
                error: self.message.into_owned(),
            }));
            return;
        }
        let (status, body) = self.into_body(req.uri().path(), req.method().as_str());
        res.status_code(status);
        if status == StatusCode::SERVICE_UNAVAILABLE {
            res.headers_mut().insert(
                salvo::http::header::RETRY_AFTER,
                salvo::http::HeaderValue::from(UNAVAILABLE_RETRY_AFTER_SECONDS),
            );
        }
        res.render(Json(body));
    }
}

pub fn now_rfc3339() -> String {
    OffsetDateTime::now_utc()
        .format(&Rfc3339)
        .unwrap_or_else(|_| String::from("1970-01-01T00:00:00Z"))
}

#[async_trait]
impl Writer for AppError {
    async fn write(self, req: &mut Request, _depot: &mut Depot, res: &mut Response) {
        self.render_into(req, res);
    }
}

impl EndpointOutRegister for AppError {
    /// Every endpoint can fail unexpectedly; its specific errors are declared on the endpoint.
    fn register(components: &mut Components, operation: &mut Operation) {
        let schema = <ErrorBody as ToSchema>::to_schema(components);
        operation.responses.insert(
            "500",
            oapi::Response::new(
                "INTERNAL_ERROR: unexpected failure; only `error_id` identifies it",
            )
            .add_content("application/json", oapi::Content::new(schema)),
        );
    }
}

/// SQLSTATEs that say the server or the connection went away, not that the statement was
/// wrong: class 08 (connection exception), 57P01-57P03 (admin/crash shutdown, cannot connect
/// now: a restart or a recovery in progress) and 53300 (too many connections).
fn is_unavailable_sqlstate(code: &str) -> bool {
    code.starts_with("08") || matches!(code, "57P01" | "57P02" | "57P03" | "53300")
}

/// True when a database error means "the database is not reachable right now" (a 503 the
/// client may retry) rather than a fault of the request or of the code (a 500).
pub fn db_unavailable(err: &sqlx::Error) -> bool {
    match err {
        sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::Io(_)
        | sqlx::Error::Tls(_) => true,
        sqlx::Error::Database(db) => {
            db.code().is_some_and(|c| is_unavailable_sqlstate(&c)) || citus_node_lost(db.message())
        }
        _ => false,
    }
}

/// Citus's answer when the part of a transaction on a worker failed: the worker went away, or
/// the garden's tables left it (moved off this cluster, or dropped) while the transaction ran.
/// Citus reports it as `XX000` with this text, so the text is what tells it from a fault of the
/// statement; either way a retry finds the garden where it is now.
pub fn citus_node_lost(message: &str) -> bool {
    message.starts_with("failure on connection marked as essential")
}

/// True when a statement failed because a garden's schema, or a table of it, is not on the
/// server it ran on (`42P01` undefined table or `3F000` invalid schema name, naming a
/// `t_<tenant id>` schema): the garden was moved to another server, or dropped, after the
/// request resolved it. Transactions follow a move (`TenantTx`), so this is left for a
/// statement that started after the old copy was dropped; retrying finds the garden where it
/// is now. A template that escaped the schema rendering names `tenant.`, not a garden's
/// schema, and stays a 500.
pub fn garden_schema_gone(err: &sqlx::Error) -> bool {
    let sqlx::Error::Database(db) = err else {
        return false;
    };
    db.code()
        .is_some_and(|c| matches!(c.as_ref(), "42P01" | "3F000"))
        && names_a_tenant_schema(db.message())
}

/// Whether a database message names a garden's schema (`tenancy::names::SchemaName`) (`"t_<32 hex digits>…"`), as
/// PostgreSQL's "relation … does not exist" and "schema … does not exist" do. A statement
/// template that escaped the rendering names `tenant.`, not such a schema.
pub fn names_a_tenant_schema(message: &str) -> bool {
    message.match_indices("\"t_").any(|(at, _)| {
        let hex = &message.as_bytes()[at + 3..];
        hex.len() >= 33
            && hex[..32]
                .iter()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
            && matches!(hex[32], b'.' | b'"')
    })
}

impl From<sqlx::Error> for AppError {
    fn from(err: sqlx::Error) -> Self {
        if db_unavailable(&err) {
            Self::unavailable("database", err)
        } else if garden_schema_gone(&err) {
            Self {
                code: ErrorCode::ServiceUnavailable,
                message: Cow::Borrowed("this garden is being moved; retry in a moment"),
                details: Vec::new(),
                cause: Some(err.into()),
                retry_after: None,
            }
        } else {
            Self::internal(err)
        }
    }
}

/// True when a Redis error means the server cannot be reached (refused, dropped, timed out),
/// or a Redis Cluster cannot serve right now: no node reachable, `CLUSTERDOWN`, a master down,
/// slots moving (`MOVED`/`ASK`/`TRYAGAIN` left after the client's own retries), a replica
/// promoted under us (`READONLY`), a node still loading. All are outages, retried later: 503.
pub fn redis_unavailable(err: &redis::RedisError) -> bool {
    use redis::{ErrorKind, ServerErrorKind};
    err.is_io_error()
        || err.is_connection_refusal()
        || err.is_connection_dropped()
        || err.is_timeout()
        || matches!(
            err.kind(),
            ErrorKind::ClusterConnectionNotFound
                | ErrorKind::Server(
                    ServerErrorKind::ClusterDown
                        | ServerErrorKind::MasterDown
                        | ServerErrorKind::Moved
                        | ServerErrorKind::Ask
                        | ServerErrorKind::TryAgain
                        | ServerErrorKind::ReadOnly
                        | ServerErrorKind::BusyLoading
                )
        )
}

/// Catcher goal: statuses raised outside handlers (unknown route, wrong method, body limit,
/// panic) get the same error record as everything else.
#[handler]
pub async fn catch_error(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
    ctrl: &mut FlowCtrl,
) {
    // The catcher runs after the request span closed; re-enter it so the error line carries
    // the request id like every other line of the request.
    let span = depot
        .get_typed::<tracing::Span>()
        .cloned()
        .unwrap_or_else(|_| tracing::Span::none());
    let _entered = span.enter();
    let status = res.status_code.unwrap_or(StatusCode::NOT_FOUND);
    let code = ErrorCode::for_status(status);
    let message: Cow<'static, str> = match status {
        StatusCode::NOT_FOUND => "no such resource".into(),
        StatusCode::METHOD_NOT_ALLOWED => {
            format!("method {} is not allowed on this resource", req.method()).into()
        }
        StatusCode::PAYLOAD_TOO_LARGE => "request body is too large".into(),
        _ if status.is_server_error() => "internal error".into(),
        _ => status.canonical_reason().unwrap_or("request failed").into(),
    };
    let mut err = AppError::new(code, message);
    if status == StatusCode::INTERNAL_SERVER_ERROR {
        err.cause = Some("unhandled failure (panic or empty 500) outside a handler".into());
    }
    let (_, body) = err.into_body(req.uri().path(), req.method().as_str());
    // Keep the original status (e.g. 405 with its Allow header, 413, 504).
    res.status_code(status);
    res.render(Json(body));
    ctrl.skip_rest();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_has_an_error_status() {
        for code in [
            ErrorCode::EntityNotFound,
            ErrorCode::ValidationError,
            ErrorCode::MalformedRequest,
            ErrorCode::RateLimitExceeded,
            ErrorCode::AccountLocked,
        ] {
            let status = code.status();
            assert!(
                status.is_client_error() || status.is_server_error(),
                "{code:?}"
            );
            assert_eq!(ErrorCode::for_status(status).status(), status);
        }
    }

    #[test]
    fn wire_names_match_serialisation() {
        for code in [
            ErrorCode::EntityNotFound,
            ErrorCode::HstViolation,
            ErrorCode::MalformedRequest,
            ErrorCode::ServiceUnavailable,
            ErrorCode::KarenzViolation,
        ] {
            let json = serde_json::to_string(&code).expect("serialise");
            assert_eq!(json, format!("\"{}\"", code.as_str()));
        }
    }

    /// Collects what the fmt layer writes, for the log-level test.
    #[derive(Clone, Default)]
    struct Captured(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

    impl std::io::Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().expect("log buffer").extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn logged(error: AppError) -> String {
        let captured = Captured::default();
        let writer = captured.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_ansi(false)
            .with_max_level(tracing::Level::INFO)
            .with_writer(move || writer.clone())
            .finish();
        tracing::subscriber::with_default(subscriber, || {
            let _ = error.into_body("/p", "GET");
        });
        let bytes = captured.0.lock().expect("log buffer").clone();
        String::from_utf8(bytes).expect("utf-8 log")
    }

    #[test]
    fn a_500_logs_an_error_a_503_a_warning_a_4xx_an_info() {
        let failed = logged(AppError::internal("disk on fire"));
        assert!(
            failed.contains("ERROR") && failed.contains("disk on fire"),
            "{failed}"
        );
        let refused = logged(AppError::unavailable("the garden", "moving"));
        assert!(
            refused.contains("WARN") && refused.contains("moving"),
            "{refused}"
        );
        assert!(!refused.contains("ERROR"), "{refused}");
        let rejected = logged(AppError::new(ErrorCode::EntityNotFound, "no such plant"));
        assert!(
            rejected.contains("INFO") && !rejected.contains("WARN"),
            "{rejected}"
        );
    }

    #[test]
    fn codes_serialise_as_specified() {
        let json = serde_json::to_string(&ErrorCode::EntityNotFound).expect("serialise");
        assert_eq!(json, "\"ENTITY_NOT_FOUND\"");
        let json = serde_json::to_string(&ErrorCode::KarenzViolation).expect("serialise");
        assert_eq!(json, "\"KARENZ_VIOLATION\"");
    }

    #[test]
    fn a_lost_database_is_503_not_500() {
        use std::io::{Error as IoError, ErrorKind as Io};
        for err in [
            sqlx::Error::PoolTimedOut,
            sqlx::Error::PoolClosed,
            sqlx::Error::Io(IoError::new(Io::ConnectionRefused, "refused")),
            sqlx::Error::Io(IoError::new(Io::ConnectionReset, "reset")),
            sqlx::Error::Io(IoError::new(Io::UnexpectedEof, "eof")),
        ] {
            let shown = err.to_string();
            assert_eq!(
                AppError::from(err).code(),
                ErrorCode::ServiceUnavailable,
                "{shown}"
            );
        }
        for err in [
            sqlx::Error::RowNotFound,
            sqlx::Error::Protocol("unexpected message".into()),
            sqlx::Error::ColumnNotFound("x".into()),
        ] {
            let shown = err.to_string();
            assert_eq!(
                AppError::from(err).code(),
                ErrorCode::InternalError,
                "{shown}"
            );
        }
        for code in ["08006", "08001", "57P01", "57P02", "57P03", "53300"] {
            assert!(is_unavailable_sqlstate(code), "{code}");
        }
        for code in ["23505", "42P01", "40001", "57014", "XX000"] {
            assert!(!is_unavailable_sqlstate(code), "{code}");
        }
        assert!(citus_node_lost(
            "failure on connection marked as essential: 127.0.0.1:25632"
        ));
        assert!(!citus_node_lost("relation \"t_x.sites\" does not exist"));
    }

    #[test]
    fn a_lost_database_while_provisioning_is_503() {
        use crate::tenancy::migrate::MigrationError;
        use crate::tenancy::provision::ProvisionError;
        let io = || sqlx::Error::Io(std::io::Error::new(std::io::ErrorKind::BrokenPipe, "gone"));
        for err in [
            ProvisionError::Database(io()),
            ProvisionError::Migration(MigrationError::Database(io())),
            ProvisionError::Migration(MigrationError::Migrate(
                sqlx::migrate::MigrateError::ExecuteMigration(io(), 3),
            )),
            ProvisionError::Migration(MigrationError::Migrate(
                sqlx::migrate::MigrateError::Execute(io()),
            )),
            // A garden being moved: a drop or a migration waits for the move.
            ProvisionError::Moving("g".into()),
            ProvisionError::Migration(MigrationError::Moving("g".into())),
        ] {
            assert_eq!(AppError::from(err).code(), ErrorCode::ServiceUnavailable);
        }
        for err in [
            MigrationError::Moving("g".into()),
            MigrationError::Busy("g".into()),
        ] {
            assert_eq!(AppError::from(err).code(), ErrorCode::ServiceUnavailable);
        }
        for err in [
            ProvisionError::Database(sqlx::Error::RowNotFound),
            ProvisionError::InvalidName,
        ] {
            assert_eq!(AppError::from(err).code(), ErrorCode::InternalError);
        }
    }

    #[test]
    fn a_lost_redis_is_503_not_500() {
        use std::io::{Error as IoError, ErrorKind as Io};
        for kind in [Io::ConnectionRefused, Io::BrokenPipe, Io::TimedOut] {
            let err = redis::RedisError::from(IoError::new(kind, "gone"));
            assert_eq!(
                AppError::from(err).code(),
                ErrorCode::ServiceUnavailable,
                "{kind:?}"
            );
        }
        for kind in [
            redis::ErrorKind::ClusterConnectionNotFound,
            redis::ErrorKind::Server(redis::ServerErrorKind::ClusterDown),
            redis::ErrorKind::Server(redis::ServerErrorKind::Moved),
            redis::ErrorKind::Server(redis::ServerErrorKind::TryAgain),
            redis::ErrorKind::Server(redis::ServerErrorKind::MasterDown),
        ] {
            let err = redis::RedisError::from((kind, "cluster trouble"));
            assert_eq!(
                AppError::from(err).code(),
                ErrorCode::ServiceUnavailable,
                "{kind:?}"
            );
        }
        let err = redis::RedisError::from((redis::ErrorKind::UnexpectedReturnType, "bad type"));
        assert_eq!(AppError::from(err).code(), ErrorCode::InternalError);
    }

    #[test]
    fn a_503_tells_when_to_retry() {
        let req = Request::new();
        let mut res = Response::new();
        AppError::unavailable("database", "connection refused").render_into(&req, &mut res);
        assert_eq!(res.status_code, Some(StatusCode::SERVICE_UNAVAILABLE));
        assert_eq!(
            res.headers()
                .get(salvo::http::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok()),
            Some(UNAVAILABLE_RETRY_AFTER_SECONDS.to_string().as_str())
        );
        let mut res = Response::new();
        AppError::internal("boom").render_into(&req, &mut res);
        assert!(
            res.headers()
                .get(salvo::http::header::RETRY_AFTER)
                .is_none()
        );
    }

    #[test]
    fn internal_error_hides_its_cause() {
        let err = AppError::internal("password=hunter2 leaked in a driver message");
        let (status, body) = err.into_body("/x", "GET");
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(body.message, "internal error");
        assert!(body.details.is_empty());
        assert!(body.error_id.starts_with("err_"));
        assert!(Uuid::parse_str(&body.error_id[4..]).is_ok());
    }
}
